"""Public datasets as downloaded, mapped onto the fields layers.toml names.

FEMA NFHL (``FLD_ZONE`` or ``fld_zone``), NHD (``FType`` as a code or as text), SSURGO,
the Wisconsin Wetland Inventory, LTSB municipal boundaries and TIGER roads: a layer's
mapped fields get the names layers.toml uses whatever their case, NHD feature types
become codes, and a statewide boundary file without a filter is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd

from georeview.errors import ConfigError

__all__ = [
    "FIELD_KEYS",
    "NHD_FTYPE_CODES",
    "NHD_FTYPE_FIELD",
    "check_boundary",
    "map_fields",
    "nhd_ftype_codes",
]

#: NHD ``FType`` domain, text form -> code (USGS NHD data dictionary; NHDPlus HR ships
#: the code, some state extracts and conversions the text).
NHD_FTYPE_CODES: dict[str, int] = {
    "artificialpath": 558,
    "canalditch": 336,
    "coastline": 566,
    "connector": 334,
    "pipeline": 428,
    "streamriver": 460,
    "underground conduit": 420,
    "undergroundconduit": 420,
    "drainageway": 468,
    "estuary": 493,
    "icemass": 378,
    "ice mass": 378,
    "lakepond": 390,
    "playa": 361,
    "reservoir": 436,
    "swampmarsh": 466,
    "foreshore": 364,
    "inundationarea": 403,
    "spillway": 455,
    "wash": 484,
}

#: The column a hydrography layer's feature type is read from once loaded.
NHD_FTYPE_FIELD = "FType"

#: Field keys of each layers.toml table, and whether the rules cannot do without them
#: (a required field missing is refused even when layers.toml leaves it at its default).
FIELD_KEYS: dict[str, dict[str, bool]] = {
    "boundary": {"name_field": False, "id_field": False},
    "neighbors": {"kind_field": True, "name_field": False, "id_field": False},
    "floodplain": dict.fromkeys(("zone_field", "subtype_field", "sfha_field", "id_field"), False),
    "wetlands": {"name_field": False, "id_field": False},
    "hydrography": {"ftype_field": False, "name_field": False, "id_field": False},
    "soils": dict.fromkeys(("musym_field", "hsg_field", "kfactor_field", "id_field"), False),
    "roads": {"name_field": False, "id_field": False},
}


def _columns_text(lower: dict[str, Any]) -> str:
    return ", ".join(map(str, lower.values())) or "(none)"


def _match_fields(
    gdf: gpd.GeoDataFrame, name: str, spec: Any, toml_path: Path | str
) -> tuple[dict[str, str], list[str]]:
    """The renames (found column -> mapped name) and the field keys the data lacks.

    Raises
    ------
    ConfigError
        A field layers.toml names (or one the rules need) that the data lacks.
    """
    given: set[str] = getattr(spec, "model_fields_set", set())
    lower = {str(c).lower(): c for c in gdf.columns if c != gdf.geometry.name}
    renames: dict[str, str] = {}
    missing: list[str] = []
    for key, required in FIELD_KEYS.get(name, {}).items():
        field = getattr(spec, key, None)
        if not field:
            continue
        found = field if field in gdf.columns else lower.get(field.lower())
        if found is None:
            if key in given or required:
                raise ConfigError(
                    f"field {field!r} is not in {Path(str(spec.path)).name}; its columns are"
                    f" {_columns_text(lower)}",
                    path=toml_path,
                    field=f"{name}.{key}",
                )
            missing.append(key)
        elif found != field:
            renames[found] = field
    return renames, missing


def map_fields(
    gdf: gpd.GeoDataFrame, name: str, spec: Any, toml_path: Path | str
) -> gpd.GeoDataFrame:
    """Give a layer's mapped fields the names layers.toml uses, whatever their case.

    NFHL fields come as ``FLD_ZONE`` or ``fld_zone``, NHD's as ``FType`` or ``FTYPE``:
    a column matching a mapped field without regard to case is renamed to the mapped
    name, and an NHD ``FType`` in text form (``StreamRiver``) becomes its code (460).

    Raises
    ------
    ConfigError
        A field named in layers.toml (or one the rules need) that the data lacks,
        naming the key, the field and the columns present; a floodplain with neither
        its zone nor its SFHA field.
    """
    renames, missing = _match_fields(gdf, name, spec, toml_path)
    if name == "floodplain" and {"zone_field", "sfha_field"} <= set(missing) and len(gdf):
        lower = {str(c).lower(): c for c in gdf.columns if c != gdf.geometry.name}
        raise ConfigError(
            f"neither {spec.zone_field!r} nor {spec.sfha_field!r} is in"
            f" {Path(str(spec.path)).name} (an NFHL S_FLD_HAZ_AR layer has FLD_ZONE and"
            f" SFHA_TF); its columns are {_columns_text(lower)}",
            path=toml_path,
            field="floodplain.zone_field",
        )
    if renames:
        gdf = gdf.rename(columns=renames)
    if name == "hydrography" and spec.ftype_field in gdf.columns:
        # the site-map rules read NHD's own name, FType, as integer codes
        codes = nhd_ftype_codes(gdf[spec.ftype_field])
        gdf = gdf.drop(columns=[spec.ftype_field]).assign(**{NHD_FTYPE_FIELD: codes})
    return gdf


def nhd_ftype_codes(values: pd.Series) -> pd.Series:
    """NHD ``FType`` values as integer codes (text names mapped; unknown -> -1)."""
    numeric = pd.to_numeric(values.astype(object), errors="coerce").astype(float)
    text = values.astype("string").str.strip().str.lower().astype(object)
    named = pd.to_numeric(pd.Series(text, index=values.index).map(NHD_FTYPE_CODES)).astype(float)
    return numeric.fillna(named).fillna(-1).astype(np.int64)


def check_boundary(
    gdf: gpd.GeoDataFrame, spec: Any, toml_path: Path | str, kind_field: str = "CTV"
) -> None:
    """Refuse a boundary layer that holds more than one municipality and no ``where``.

    The statewide (or county) LTSB file used as the boundary would make every
    municipality in it "the village".

    Raises
    ------
    ConfigError
        Naming ``boundary.where`` and a few of the municipalities found.
    """
    if spec.where is not None or len(gdf) < 2:
        return
    cols = [
        c
        for c in (spec.name_field or "MCD_NAME", kind_field, "GEOID", "MCD_FIPS")
        if c in gdf.columns
    ]
    if not cols:
        return  # several pieces of one limit, nothing says otherwise
    distinct = gdf[cols].astype("string").drop_duplicates()
    if len(distinct) > 1:
        sample = ", ".join(" ".join(map(str, r)) for r in distinct.head(4).itertuples(index=False))
        raise ConfigError(
            f"{Path(str(spec.path)).name} holds {len(distinct)} municipalities ({sample}, ...)"
            " and no filter: add where = \"MCD_NAME = '<name>' AND CTV = '<C|V|T>'\"",
            path=toml_path,
            field="boundary.where",
        )
