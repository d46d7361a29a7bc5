"""GeoPackage files as georeview writes them: one version, one writer.

Every GeoPackage georeview writes (a review's ``layers.gpkg``, a screening's ``.gpkg``
output, a batch's ``sites.gpkg``, the layers ``layers build`` keeps) goes through
:func:`write_layer`, so all of them are GeoPackage :data:`GPKG_VERSION`. The version
is what a GIS reads first: SQLite's ``application_id`` is ``0x47504B47`` ("GPKG") and
``user_version`` is 10300 for 1.3. ArcGIS Pro 3.0-3.4 lists GeoPackage 1.0-1.3 only, and
GDAL 3.12 writes 1.4 unless told otherwise.

Non-spatial tables (a review's QGIS ``layer_styles``) go through :func:`write_table`:
GDAL registers them in ``gpkg_contents`` with ``data_type = 'attributes'``, as QGIS
does when it saves a style in a GeoPackage.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["GPKG_USER_VERSION", "GPKG_VERSION", "write_layer", "write_table"]

#: GeoPackage version written (GDAL's ``VERSION`` dataset creation option).
GPKG_VERSION = "1.3"
#: SQLite ``PRAGMA user_version`` of a GeoPackage :data:`GPKG_VERSION` (1.3.0 -> 10300).
GPKG_USER_VERSION = 10300


def _options(append: bool) -> dict[str, str] | None:
    """The dataset creation options of a new file (an appended layer takes the file's)."""
    return None if append else {"VERSION": GPKG_VERSION}


def write_layer(frame: Any, path: Path, layer: str, *, append: bool = False, **kw: Any) -> None:
    """Write ``frame`` as ``layer`` of the GeoPackage ``path`` (a new file is version 1.3).

    Parameters
    ----------
    frame : geopandas.GeoDataFrame
        The features.
    path : Path
        The GeoPackage (created, or appended to with ``append``).
    layer : str
        Layer name.
    append : bool
        Add the layer (or its rows) to an existing file, which keeps its version.
    **kw
        Passed to :func:`pyogrio.write_dataframe` (``geometry_type``, ``promote_to_multi``,
        ``use_arrow``, ``layer_options`` ...).

    Raises
    ------
    Whatever :func:`pyogrio.write_dataframe` raises: the callers turn it into an
    :class:`georeview.errors.OutputError` naming their file.
    """
    import pyogrio

    pyogrio.write_dataframe(
        frame,
        path,
        layer=layer,
        driver="GPKG",
        append=append,
        dataset_options=_options(append),
        **kw,
    )


def write_table(
    table: Any, path: Path, layer: str, *, append: bool = True, fid: str | None = None
) -> None:
    """Write a table without geometry as ``layer`` (``data_type = 'attributes'``).

    Parameters
    ----------
    table : pandas.DataFrame
        The rows (no geometry column).
    path : Path
        The GeoPackage, usually written already by :func:`write_layer`.
    layer : str
        Table name.
    append : bool
        Add to an existing file (the default).
    fid : str, optional
        Name of the integer primary key (GDAL's ``fid`` unless given).
    """
    import pyogrio

    pyogrio.write_dataframe(
        table,
        path,
        layer=layer,
        driver="GPKG",
        append=append,
        dataset_options=_options(append),
        layer_options={"FID": fid} if fid else None,
    )
