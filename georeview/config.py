"""Configuration and submission schemas: ``submission.toml`` and ``layers.toml``.

Both files are validated strictly: unknown keys and wrong types are refused with
the dotted name of the field (``activity.fill_cubic_yards``), so a typo never
silently becomes "not given". The models are frozen: a review never mutates its
inputs, and batches can share them across processes.

A fact the submission leaves out is ``None`` here, never a guessed default: the
rules turn a missing fact into a ``needs_info`` finding.
"""

from __future__ import annotations

import datetime as dt
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from georeview.errors import ConfigError, DataSourceError

NonNeg = Annotated[float, Field(ge=0)]
NonNegInt = Annotated[int, Field(ge=0)]
Positive = Annotated[float, Field(gt=0)]

#: Activity kinds a submission may declare (DESIGN §2.2). Each one is read by a rule.
ACTIVITY_KINDS = (
    "building",
    "road",
    "utility",
    "subdivision",
    "land_division",
    "certified_survey_map",
    "watercourse",
    "agricultural",
    "silviculture",
    "transportation",
    "state_agency",
    "state_funded",
    "maintenance",
    "federal_exempt",
    "quarry",
    "minor_landscaping",
    "grading",
    "demolition",
    "dewatering",
)
ActivityKind = Literal[ACTIVITY_KINDS]  # type: ignore[valid-type]

#: Features a site map can show (Somers 17.10(B)(4)(a)-(j), Deerfield 31.09(1)(A)-(C)).
SITE_MAP_FEATURES = (
    "site_boundary",
    "adjacent_lands",
    "topography",
    "vegetative_cover",
    "drainage",
    "roads",
    "surface_waters",
    "streams",
    "lakes",
    "wetlands",
    "watercourses",
    "floodplain",
    "floodway",
    "soils",
    "utilities",
    "structures",
    "disturbance",
    "post_grading_drainage",
    "controls",
    "stabilization_areas",
    "vegetated_areas",
    "downstream_discharge",
    "infiltration_areas",
    "grid",
    "final_conditions",
)
SiteMapFeature = Literal[SITE_MAP_FEATURES]  # type: ignore[valid-type]


class _Strict(BaseModel):
    """Base for every schema: unknown keys refused, values frozen, no type coercion.

    Strict mode refuses ``"4000"`` for a number and ``"yes"`` or ``1`` for a boolean,
    while still taking the integer ``4000`` where a float is expected.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class Activity(_Strict):
    """What the applicant will do (DESIGN §2.2 ``[activity]``)."""

    fill_cubic_yards: NonNeg | None = None
    pipe_length_ft: NonNeg | None = None
    lots_created: NonNegInt | None = None
    #: ``None`` when not given: the rules that read kinds then say needs_info.
    kinds: Annotated[tuple[ActivityKind, ...] | None, Field(strict=False)] = None
    #: Building or improvements on a lot of an approved CSM or plat (Deerfield 31.06(1)(B)).
    on_platted_lot: bool | None = None
    #: Area of the land division or plat, acres (Deerfield 31.06(3)).
    land_division_acres: NonNeg | None = None
    #: Largest area disturbed at one time, acres (Deerfield 31.06(3) "at a time").
    max_disturbed_at_once_acres: NonNeg | None = None
    #: Maintenance keeps the original line and grade, capacity or purpose (Somers 17.04(A)(2)(e)).
    maintains_original_grade: bool | None = None
    #: Transportation facility that is part of a larger common plan (Somers 17.04(A)(2)(a)).
    part_of_common_plan: bool | None = None
    start_date: dt.date | None = None
    end_date: dt.date | None = None
    #: Length of the building permit, days (Somers 17.09(G): the longer term wins).
    building_permit_days: NonNegInt | None = None
    #: Estimated cost of all required control measures, dollars (Deerfield 31.12(2)(A)).
    control_cost_usd: NonNeg | None = None
    #: Plat or CSM review fees already paid (Deerfield 31.11(1) waiver).
    plat_fee_paid: bool | None = None
    #: Building permit fee paid for the same activity (Deerfield 31.11(2) waiver).
    building_permit_fee_paid: bool | None = None

    @model_validator(mode="after")
    def _dates_in_order(self) -> Activity:
        if self.start_date and self.end_date and self.end_date < self.start_date:
            raise ValueError(f"end_date {self.end_date} is before start_date {self.start_date}")
        return self


class SiteMap(_Strict):
    """What the applicant's site map is and shows (DESIGN §2.2 ``[site_map]``)."""

    scale_ft_per_inch: Positive | None = None
    contour_interval_ft: Positive | None = None
    grid: bool | None = None
    #: Features the map shows; compared with the features found near the site.
    shows: Annotated[tuple[SiteMapFeature, ...] | None, Field(strict=False)] = None
    #: A submitted contour layer (path relative to the submission), measured for its interval.
    contours: str | None = None
    #: Elevation attribute of the contour layer.
    contour_field: str | None = None
    #: A submitted grid layer (path relative to the submission).
    grid_layer: str | None = None


class Submission(_Strict):
    """The whole ``submission.toml``."""

    municipality: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]
    site: str
    disturbance: str | None = None
    name: str | None = None
    applicant: str | None = None
    applicant_address: str | None = None
    description: str | None = None
    #: Date the complete application was received (starts the review clock).
    application_date: dt.date | None = None
    activity: Activity = Activity()
    site_map: SiteMap = SiteMap()
    #: Sections filled by later stages (engineering, plan completeness); kept as
    #: typed tables by the modules that read them.
    plan: dict[str, Any] = Field(default_factory=dict)
    soil_loss: dict[str, Any] = Field(default_factory=dict)
    hydrology: dict[str, Any] = Field(default_factory=dict)
    basins: Annotated[tuple[dict[str, Any], ...], Field(strict=False)] = ()
    dewatering: dict[str, Any] = Field(default_factory=dict)


class LayerSpec(_Strict):
    """One reference layer in ``layers.toml``: a file and what its fields mean."""

    path: str
    #: A layer of a multi-layer file, or several (NHD: ["NHDFlowline", "NHDWaterbody"]);
    #: omitted = every layer of the file.
    layer: str | Annotated[tuple[str, ...], Field(strict=False)] | None = None
    source: str | None = None
    synthetic: bool = False
    name_field: str | None = None
    id_field: str | None = None


class NeighborsSpec(LayerSpec):
    """Other municipalities, with the field that says city, village or town."""

    kind_field: str = "CTV"
    name_field: str | None = "MCD_NAME"
    #: Class of cities by name (Wis. Stat. § 62.05); a city not listed is fourth class.
    city_class: dict[str, int] = Field(default_factory=dict)


class DemSpec(LayerSpec):
    """The DEM: its vertical units are stated, never guessed."""

    vertical_units: Literal["m", "ft", "us_ft"]


class FloodplainSpec(LayerSpec):
    """FEMA NFHL ``S_FLD_HAZ_AR`` polygons."""

    zone_field: str = "FLD_ZONE"
    subtype_field: str = "ZONE_SUBTY"
    sfha_field: str = "SFHA_TF"


class SoilsSpec(LayerSpec):
    """SSURGO map units with hydrologic group and K factor."""

    musym_field: str = "MUSYM"
    hsg_field: str = "hydgrpdcd"
    kfactor_field: str = "kffact"


class LayersConfig(_Strict):
    """The whole ``layers.toml`` of one municipality (DESIGN §2.3)."""

    municipality: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]
    village_name: str | None = None
    working_crs: str = "EPSG:3071"
    boundary: LayerSpec | None = None
    neighbors: NeighborsSpec | None = None
    dem: DemSpec | None = None
    wetlands: LayerSpec | None = None
    floodplain: FloodplainSpec | None = None
    hydrography: LayerSpec | None = None
    soils: SoilsSpec | None = None
    roads: LayerSpec | None = None
    notes: str | None = None


def read_toml(path: Path) -> dict[str, Any]:
    """Read a TOML file into a dict.

    Raises
    ------
    DataSourceError
        When the file is missing or not UTF-8.
    ConfigError
        When the TOML syntax is wrong (the parser's line and column are kept).
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DataSourceError("file not found", path=path) from None
    except OSError as exc:
        raise DataSourceError(f"cannot read file ({exc.strerror})", path=path) from None
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML: {exc}", path=path) from None


def validation_message(exc: ValidationError) -> tuple[str, str]:
    """Turn pydantic's first error into ``(dotted_field, message)``."""
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"])
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        msg = "unknown key (check the spelling; see README 'Submission format')"
    elif err["type"] == "missing":
        msg = "required key is missing"
    elif "input" in err and err["type"] != "value_error":
        msg = f"{msg} (got {err['input']!r})"
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    return loc, msg


def parse_model(model: type[BaseModel], data: dict[str, Any], path: Path) -> Any:
    """Validate ``data`` against ``model``, raising :class:`ConfigError` naming the field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        field, msg = validation_message(exc)
        raise ConfigError(msg, path=path, field=field or None) from None


def load_submission_config(path: Path) -> Submission:
    """Read and validate a ``submission.toml``."""
    return parse_model(Submission, read_toml(path), path)


def load_layers_config(path: Path) -> LayersConfig:
    """Read and validate a ``layers.toml``."""
    return parse_model(LayersConfig, read_toml(path), path)
