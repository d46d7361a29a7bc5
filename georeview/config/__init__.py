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
import functools
import os
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from georeview.errors import ConfigError, DataSourceError, LimitError

NonNeg = Annotated[float, Field(ge=0)]
NonNegInt = Annotated[int, Field(ge=0)]
Positive = Annotated[float, Field(gt=0)]

# Sanity bounds on what a submission may declare. They are far beyond any construction
# site the two ordinances regulate, so only a typo or a units mix-up (square feet typed
# where acres belong, cents for dollars) reaches them; such a value is refused with the
# field named rather than carried into fees, deadlines and classification.
#: 100 million cubic yards (the largest US earth-fill dams hold about 100 million).
MAX_FILL_CUBIC_YARDS = 1e8
#: 1,000,000 ft (about 189 miles) of pipe, cable or utility line in one permit.
MAX_PIPE_LENGTH_FT = 1e6
#: 100,000 lots from one land division.
MAX_LOTS = 100_000
#: 64,000 acres = 100 square miles (areas in acres of one submission).
MAX_ACRES = 64_000.0
#: 10 billion dollars of erosion-control measures.
MAX_COST_USD = 1e10
#: 10 years of building permit.
MAX_PERMIT_DAYS = 3_650
#: A site map at 1 in = 10,000 ft (1:120,000) shows nothing of a construction site.
MAX_SCALE_FT_PER_INCH = 10_000.0
#: A 1,000 ft contour interval.
MAX_CONTOUR_INTERVAL_FT = 1_000.0

#: Dates a submission may give: a construction permit from 1900 to 2200. Python's date
#: runs from year 1 to 9999, and a deadline added to 9999-12-31 overflows.
MIN_DATE = dt.date(1900, 1, 1)
MAX_DATE = dt.date(2200, 12, 31)

Date = Annotated[dt.date, Field(ge=MIN_DATE, le=MAX_DATE)]
Cubic = Annotated[float, Field(ge=0, le=MAX_FILL_CUBIC_YARDS)]
Feet = Annotated[float, Field(ge=0, le=MAX_PIPE_LENGTH_FT)]
Lots = Annotated[int, Field(ge=0, le=MAX_LOTS)]
Acres = Annotated[float, Field(ge=0, le=MAX_ACRES)]
SquareFeet = Annotated[float, Field(ge=0, le=MAX_ACRES * 43_560.0)]
Dollars = Annotated[float, Field(ge=0, le=MAX_COST_USD)]
Days = Annotated[int, Field(ge=0, le=MAX_PERMIT_DAYS)]

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


class StrictModel(BaseModel):
    """Base for every schema: unknown keys refused, values frozen, no type coercion.

    Strict mode refuses ``"4000"`` for a number and ``"yes"`` or ``1`` for a boolean,
    while still taking the integer ``4000`` where a float is expected. TOML's ``inf``
    and ``nan`` are refused in every float field (``allow_inf_nan=False``): no
    measure, fee or deadline can be computed from them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class Activity(StrictModel):
    """What the applicant will do (DESIGN §2.2 ``[activity]``)."""

    fill_cubic_yards: Cubic | None = None
    pipe_length_ft: Feet | None = None
    lots_created: Lots | None = None
    #: ``None`` when not given: the rules that read kinds then say needs_info.
    kinds: Annotated[tuple[ActivityKind, ...] | None, Field(strict=False)] = None
    #: Building or improvements on a lot of an approved CSM or plat (Deerfield 31.06(1)(B)).
    on_platted_lot: bool | None = None
    #: Area of the land division or plat, acres (Deerfield 31.06(3)).
    land_division_acres: Acres | None = None
    #: Area the activity disturbs, square feet, as the site map shows it: the disturbed
    #: area when no disturbance file is given (a disturbance file is measured instead).
    disturbed_area_sqft: SquareFeet | None = None
    #: Largest area disturbed at one time, acres (Deerfield 31.06(3) "at a time").
    max_disturbed_at_once_acres: Acres | None = None
    #: Maintenance keeps the original line and grade, capacity or purpose (Somers 17.04(A)(2)(e)).
    maintains_original_grade: bool | None = None
    #: Transportation facility that is part of a larger common plan (Somers 17.04(A)(2)(a)).
    part_of_common_plan: bool | None = None
    #: A channel originates in the disturbed area (Deerfield 31.06(3)(B): basins on any site).
    channel_originates_in_disturbed_area: bool | None = None
    start_date: Date | None = None
    end_date: Date | None = None
    #: Length of the building permit, days (Somers 17.09(G): the longer term wins).
    building_permit_days: Days | None = None
    #: Work continuing past the permit's term will be reapplied for (Deerfield 31.12(1)).
    reapplication_planned: bool | None = None
    #: Estimated cost of all required control measures, dollars (Deerfield 31.12(2)(A)).
    control_cost_usd: Dollars | None = None
    #: Plat or CSM review fees already paid (Deerfield 31.11(1) waiver).
    plat_fee_paid: bool | None = None
    #: Building permit fee paid for the same activity (Deerfield 31.11(2) waiver).
    building_permit_fee_paid: bool | None = None

    @model_validator(mode="after")
    def _dates_in_order(self) -> Activity:
        if self.start_date and self.end_date and self.end_date < self.start_date:
            raise ValueError(f"end_date {self.end_date} is before start_date {self.start_date}")
        return self


class SiteMap(StrictModel):
    """What the applicant's site map is and shows (DESIGN §2.2 ``[site_map]``)."""

    scale_ft_per_inch: Annotated[float, Field(gt=0, le=MAX_SCALE_FT_PER_INCH)] | None = None
    contour_interval_ft: Annotated[float, Field(gt=0, le=MAX_CONTOUR_INTERVAL_FT)] | None = None
    grid: bool | None = None
    #: Features the map shows; compared with the features found near the site.
    shows: Annotated[tuple[SiteMapFeature, ...] | None, Field(strict=False)] = None
    #: A submitted contour layer (path relative to the submission), measured for its interval.
    contours: str | None = None
    #: Elevation attribute of the contour layer.
    contour_field: str | None = None
    #: A submitted grid layer (path relative to the submission).
    grid_layer: str | None = None


class Submission(StrictModel):
    """The whole ``submission.toml``."""

    municipality: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]
    site: str
    disturbance: str | None = None
    name: str | None = None
    applicant: str | None = None
    applicant_address: str | None = None
    description: str | None = None
    #: Date the complete application was received (starts the review clock).
    application_date: Date | None = None
    activity: Activity = Activity()
    site_map: SiteMap = SiteMap()
    #: Sections filled by later stages (engineering, plan completeness); kept as
    #: typed tables by the modules that read them.
    plan: dict[str, Any] = Field(default_factory=dict)
    soil_loss: dict[str, Any] = Field(default_factory=dict)
    hydrology: dict[str, Any] = Field(default_factory=dict)
    basins: Annotated[tuple[dict[str, Any], ...], Field(strict=False)] = ()
    dewatering: dict[str, Any] = Field(default_factory=dict)


class LayerSpec(StrictModel):
    """One reference layer in ``layers.toml``: a file and what its fields mean."""

    path: str
    #: A layer of a multi-layer file, or several (NHD: ["NHDFlowline", "NHDWaterbody"]);
    #: omitted = every layer of the file.
    layer: str | Annotated[tuple[str, ...], Field(strict=False)] | None = None
    source: str | None = None
    #: Date or edition of the data (``"2025-01"``, ``"FIRM 2009-01-02"``), listed in report.json.
    vintage: str | None = None
    #: Attribute filter, an OGR SQL WHERE clause (``"MCD_NAME = 'Deerfield' AND CTV = 'V'"``).
    where: str | None = None
    #: CRS of a CSV layer (a CSV states none); other formats state their own.
    crs: str | None = None
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


class HydrographySpec(LayerSpec):
    """NHD or NHDPlus HR flowlines and waterbodies."""

    #: NHD feature type (``FType`` / ``FTYPE``, code 460 or text ``StreamRiver``).
    ftype_field: str = "FType"


class SoilsSpec(LayerSpec):
    """SSURGO map units with hydrologic group and K factor."""

    musym_field: str = "MUSYM"
    hsg_field: str = "hydgrpdcd"
    kfactor_field: str = "kffact"


class LayersConfig(StrictModel):
    """The whole ``layers.toml`` of one municipality (DESIGN §2.3)."""

    municipality: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]
    village_name: str | None = None
    working_crs: str = "EPSG:3071"
    boundary: LayerSpec | None = None
    neighbors: NeighborsSpec | None = None
    dem: DemSpec | None = None
    wetlands: LayerSpec | None = None
    floodplain: FloodplainSpec | None = None
    hydrography: HydrographySpec | None = None
    soils: SoilsSpec | None = None
    roads: LayerSpec | None = None
    notes: str | None = None
    #: Allow layer paths outside the layers folder (absolute, ``../``). Off by default:
    #: a layers folder is self-contained unless the Village says otherwise.
    trusted: bool = False


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
    return parse_toml_bytes(raw, path)


def parse_toml_bytes(raw: bytes, path: Path) -> dict[str, Any]:
    """Parse TOML bytes read from ``path`` (errors name the file).

    Raises
    ------
    ConfigError
        Not UTF-8, invalid TOML, or nested so deeply the parser runs out of stack.
    """
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML: {exc}", path=path) from None
    except RecursionError:
        raise ConfigError("invalid TOML: arrays or tables nested too deeply", path=path) from None


@functools.cache
def package_data(name: str) -> dict[str, Any]:
    """Read ``georeview/data/<name>`` (a TOML table shipped with the package) once.

    The result is cached and shared: callers must not mutate it.

    Raises
    ------
    ConfigError
        When the file is not valid TOML (a packaging error, named).
    """
    from importlib import resources

    resource = resources.files("georeview").joinpath("data", name)
    try:
        return tomllib.loads(resource.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML: {exc}", path=f"georeview/data/{name}") from None


def validation_message(exc: ValidationError) -> tuple[str, str]:
    """Turn pydantic's first error into ``(dotted_field, message)``."""
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"])
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        msg = "unknown key (check the spelling; see README 'Submission format')"
    elif err["type"] == "missing":
        msg = "required key is missing"
    elif err["type"] in ("less_than_equal", "less_than"):
        msg = (
            f"{msg} (got {err['input']!r}); the bound is a sanity limit on the magnitude,"
            " check the value and its units"
        )
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


def load_submission_config(path: Path, *, folder: Path | None = None) -> Submission:
    """Read and validate a ``submission.toml`` (refused above ``Limits.max_toml_bytes``).

    The file is opened once, without blocking and without following a final link
    out of ``folder`` (default: the file's own folder); it must be a regular file,
    and its size is taken from the open file, so what is checked is what is read
    (:func:`read_bounded_toml`).
    """
    path = Path(path)
    folder = path.parent if folder is None else Path(folder)
    real = Path(os.path.realpath(path))
    if not real.is_relative_to(Path(os.path.realpath(folder))):
        raise DataSourceError("is a link that points outside the submission folder", path=path)
    return parse_model(Submission, read_bounded_toml(real, shown=path), path)


def read_bounded_toml(
    path: Path, *, shown: Path | None = None, follow_links: bool = True
) -> dict[str, Any]:
    """Read a TOML file as a bounded regular file: opened once, never blocking.

    Parameters
    ----------
    path : Path
        The file.
    shown : Path, optional
        The path to name in errors (default ``path``).
    follow_links : bool
        With False, a file that is a symbolic link is refused (``O_NOFOLLOW``).

    Raises
    ------
    DataSourceError
        Missing, unreadable, a link (when refused), or not a regular file (a FIFO
        would block for ever, a device never ends).
    LimitError
        Larger than ``Limits.max_toml_bytes`` (``GEOREVIEW_MAX_TOML_BYTES``).
    ConfigError
        Not UTF-8 or not TOML.
    """
    import errno
    import stat

    shown = Path(path) if shown is None else shown
    limit = limits().max_toml_bytes
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise DataSourceError("file not found", path=shown) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_links:
            raise DataSourceError("is a symbolic link; name the file itself", path=shown) from None
        raise DataSourceError(f"cannot read file ({exc.strerror})", path=shown) from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise DataSourceError("is not a regular file", path=shown)
        if st.st_size > limit:
            raise LimitError(
                f"{st.st_size:,} bytes exceed the limit of {limit:,} bytes for a TOML file"
                " (GEOREVIEW_MAX_TOML_BYTES)",
                path=shown,
            )
        raw = fh.read(limit + 1)
    if len(raw) > limit:  # grew while being read
        raise LimitError(
            f"more than {limit:,} bytes for a TOML file (GEOREVIEW_MAX_TOML_BYTES)", path=shown
        )
    return parse_toml_bytes(raw, shown)


def load_layers_config(path: Path) -> LayersConfig:
    """Read and validate a ``layers.toml``."""
    return parse_model(LayersConfig, read_toml(path), path)


# --------------------------------------------------------------------------- limits


@dataclass(frozen=True)
class Limits:
    """Sizes georeview refuses to go beyond.

    Hostile or mistaken input ends in a clear :class:`~georeview.errors.LimitError`
    instead of memory exhaustion. Every limit can be changed with the environment
    variable in its comment (read each time :func:`limits` is called; no module-level
    state). The defaults fit a machine with 4 GB of memory.
    """

    #: Cells of one DEM window read at once (``GEOREVIEW_MAX_RASTER_CELLS``). 50 million
    #: cells are 200 MB as float32, a 70 km x 70 km window of a 10 m DEM.
    max_raster_cells: int = 50_000_000
    #: Features of one reference layer (``GEOREVIEW_MAX_LAYER_FEATURES``).
    max_layer_features: int = 2_000_000
    #: Features of one submission geometry file (``GEOREVIEW_MAX_SUBMISSION_FEATURES``).
    max_submission_features: int = 10_000
    #: Vertices of one site or disturbance file (``GEOREVIEW_MAX_SUBMISSION_VERTICES``).
    #: A surveyed boundary has hundreds or thousands; overlays grow faster than the
    #: vertex count (300,000 took 43 s, 1,000,000 minutes and 18 GB), so more is refused.
    max_submission_vertices: int = 100_000
    #: Bytes of one submission geometry file, with a shapefile's .shx/.dbf, a zipped
    #: shapefile or KMZ counted uncompressed (``GEOREVIEW_MAX_UPLOAD_BYTES``; 100 MB).
    max_upload_bytes: int = 100 * 1024 * 1024
    #: Bytes of a TOML file (``GEOREVIEW_MAX_TOML_BYTES``; 1 MB).
    max_toml_bytes: int = 1024 * 1024
    #: Uncompressed bytes of one zip submission (``GEOREVIEW_MAX_ZIP_BYTES``; 512 MB).
    max_zip_bytes: int = 512 * 1024 * 1024
    #: Entries of one zip submission (``GEOREVIEW_MAX_ZIP_MEMBERS``).
    max_zip_members: int = 10_000
    #: Area of a site, square miles (``GEOREVIEW_MAX_SITE_SQMI``): 100 square miles is
    #: no construction site; such a file is a mistake (wrong units or CRS, a county).
    max_site_sqmi: float = 100.0


#: Environment variable of each limit.
LIMIT_ENV = {f.name: "GEOREVIEW_" + f.name.upper() for f in fields(Limits)}


def limits(environ: dict[str, str] | None = None) -> Limits:
    """Return the limits in force: the defaults, changed by ``GEOREVIEW_MAX_*`` variables.

    Raises
    ------
    ConfigError
        When a variable is not a positive number.
    """
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    for f in fields(Limits):
        var = LIMIT_ENV[f.name]
        text = env.get(var)
        if text is None or not text.strip():
            continue
        kind = float if f.type in (float, "float") else int
        try:
            value = kind(float(text)) if kind is int else kind(text)
        except ValueError:
            raise ConfigError(f"not a number: {text!r}", field=var) from None
        if not value > 0:
            raise ConfigError(f"must be positive, got {text!r}", field=var)
        values[f.name] = value
    return Limits(**values)
