"""The public functions of georeview (re-exported by :mod:`georeview`).

Each imports its stage when called, so ``import georeview`` stays cheap.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import geopandas as gpd

    from georeview.load import Layers
    from georeview.pipeline.result import Review
    from georeview.rules import Ordinance

__all__ = ["load_layers", "load_ordinance", "municipalities", "review", "screen"]


def review(
    submission_dir: Path | str,
    layers_dir: Path | str | None = None,
    *,
    with_terrain: bool = True,
) -> Review:
    """Review one submission folder against its municipality's ordinance.

    Parameters
    ----------
    submission_dir : path
        Folder with ``submission.toml`` and the geometry files it names.
    layers_dir : path, optional
        The municipality's layers folder (found from ``submission.toml`` when omitted).
    with_terrain : bool
        Measure slopes and the downstream trace from the DEM.

    Returns
    -------
    georeview.pipeline.result.Review
        ``.to_dict()`` is report.json; :func:`georeview.report.write_reports` writes it.
    """
    from georeview.pipeline.review import review as _review

    return _review(
        Path(submission_dir),
        Path(layers_dir) if layers_dir is not None else None,
        with_terrain=with_terrain,
    )


def screen(
    parcels: gpd.GeoDataFrame,
    layers: Layers | Path | str,
    *,
    assume: str = "disturb=whole",
    columns: Mapping[str, str] | None = None,
) -> gpd.GeoDataFrame:
    """Screen parcels in memory: the same facts and judge as ``georeview screen``.

    Parameters
    ----------
    parcels : geopandas.GeoDataFrame
        Parcel polygons with a CRS.
    layers : Layers or path
        From :func:`load_layers`, or a layers folder.
    assume : str
        The assumed activity (``"disturb=whole"``, ``"disturb_acres=1.5,kinds=subdivision"``).
    columns : mapping, optional
        Role -> field map of the parcels (default: Wisconsin statewide schema).

    Returns
    -------
    geopandas.GeoDataFrame
        The parcels in their order with the screening columns added.
    """
    from georeview.pipeline.assume import parse_assume
    from georeview.pipeline.context import build_context
    from georeview.pipeline.screen import screen_frame

    loaded = layers if not isinstance(layers, (str, Path)) else load_layers(layers)
    ctx = build_context(loaded, parse_assume(assume), columns)
    return screen_frame(parcels, ctx)


def load_layers(folder: Path | str) -> Layers:
    """Read a municipality's layers folder (``layers.toml`` and the files it names)."""
    from georeview.load import load_layers as _load

    return _load(Path(folder))


def load_ordinance(municipality: str) -> Ordinance:
    """Load a municipality's ordinance (rules, parameters) from its folder."""
    from georeview.rules import load_ordinance as _load

    return _load(municipality)


def municipalities() -> dict[str, Any]:
    """Every municipality georeview can review: name -> its data folder."""
    from georeview.ordinances import municipalities as _m

    return _m()
