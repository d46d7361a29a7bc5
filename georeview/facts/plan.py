"""Plan completeness: what the erosion control plan must contain, as facts.

The ``[plan]`` table of ``submission.toml`` says what the applicant's plan contains
(Somers § 17.10(A), (B)(3), (B)(5), (B)(6); Deerfield § 31.09(1)(C)-(D), 31.09(2)).
:class:`Plan` validates it strictly (unknown keys refused, no coercion) and
:func:`plan_facts` turns it into flat ``plan.has.<item>`` facts that the rules in
``georeview/ordinances/<municipality>.plan.toml`` read.

Meaning of a fact
-----------------
``plan.has.<item>`` is

* ``True`` when the item is given: in the table (a description, a reference to the
  sheet or page, a ``{ not_applicable = "reason" }`` where the ordinance says
  "when appropriate", or a file under ``[plan.documents]``), or elsewhere in
  submission.toml (``[activity]`` start and end dates; ``applicant`` and
  ``applicant_address`` for the owner or developer; ``description`` for the site);
* ``None`` (unknown, the finding says needs_info) when it is not given and the
  submission has no ``[plan]`` table: nothing is known about the plan's content;
* ``False`` when the table is there but the item is not: a plan that is described
  and lacks the item is incomplete (the finding fails with the citation).

The same ``[plan.bmps]`` table carries the practices the performance standards (Somers
§ 17.07, § 17.08) and minimum standards (Deerfield § 31.06(2)-(3)) require on the site
(``sediment_to_waters``, ``dewatering``, ``stockpiles``, ``building_materials``,
``wash_water``, ``vegetation_preservation``, ``topsoil_compaction``, ``spill_response``,
``treatment_before_waters``, ``bmp_removal``, ``tracking_pad``, ``street_cleaning``,
``perimeter_barriers``, ``channel_barriers``): each the sheet or page that shows it, or
``{ not_applicable = "reason" }``. :func:`schedule_facts` computes from the dated schedule
whether the controls precede clearing and the longest pause between ``plan.stages``.

Deerfield § 31.09(1)(D) ("such other information as the Village Engineer deems
necessary") is discretionary: it is ``True`` when control-sizing calculations are
given and ``None`` (needs_info, never fail) otherwise.

Example
-------
.. code-block:: toml

    [plan]
    owner_name = "Prairie Homes LLC"
    owner_address = "100 Main St, Deerfield WI"
    consultant = { firm = "Ace Engineering", address = "1 Oak St", contact = "J. Doe" }
    site_description = "5.2-acre field, 12 single-family lots"
    usgs_topo_map = "Sheet C-1 inset (Deerfield 7.5' quadrangle)"
    site_area_estimate_acres = 5.2
    disturbed_area_estimate_acres = 4.1
    soils_description = "Plano silt loam over glacial till (SSURGO PnB)"
    groundwater_depth_ft = 6.0
    receiving_water = "Koshkonong Creek"
    schedule = "Clearing May 1; grading May; houses June-Oct; seeding Oct 15"
    maintenance = "Weekly and after 0.5 in rain; silt fence cleaned at 1/3 height"
    uses_infiltration = false
    steep_slope_minimization = "No grading on the 25 % bank (area C3)"
    velocity_dissipation = "Riprap apron at the basin outfall"
    [plan.sequence]
    stripping_clearing = "..."
    ...
    design_standards = "WDNR Technical Standards 1056, 1057, 1060"
    stages = [
      { name = "Clearing and grading", start_date = 2025-05-05, end_date = 2025-05-30 },
      { name = "Building", start_date = 2025-06-02, end_date = 2025-09-30 },
    ]
    [plan.sequence]
    controls_install_date = 2025-05-01
    ...
    [plan.bmps]
    stabilization = "Seed and mulch within 7 days ..."
    inlet_protection = { not_applicable = "no downslope inlets" }
    tracking_pad = "Sheet C-3: graveled pad 50 x 20 ft"
    spill_response = "Sheet C-6 note 4"
    [plan.documents]
    control_calculations = "calcs/sizing.pdf"
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, StringConstraints, ValidationError, model_validator

from georeview.config import NonNeg, NonNegInt, StrictModel, validation_message
from georeview.errors import ConfigError
from georeview.load.submission import submission_file

if TYPE_CHECKING:
    from georeview.load import LoadedSubmission

log = logging.getLogger(__name__)

__all__ = [
    "BMP_ITEMS",
    "DOCUMENT_ITEMS",
    "SEQUENCE_DATES",
    "SEQUENCE_PHASES",
    "Bmps",
    "Consultant",
    "NotApplicable",
    "Plan",
    "Sequence",
    "Stage",
    "parse_plan",
    "plan_facts",
    "schedule_facts",
    "sheet_of",
]

#: A non-blank text: a description, or where in the plan set the item is (sheet, page).
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class NotApplicable(StrictModel):
    """An item the ordinance asks for "when appropriate", declared not appropriate."""

    #: Why the item does not apply to this site (quoted in the finding).
    not_applicable: Text


#: A BMP item: its description (or sheet reference), or why it is not appropriate here.
Item = Annotated[Text | NotApplicable, Field(union_mode="left_to_right")]


class Consultant(StrictModel):
    """Somers § 17.10(B)(3)(a): the consulting firm and the principal contact there."""

    firm: Text | None = None
    address: Text | None = None
    contact: Text | None = None


class Sequence(StrictModel):
    """Somers § 17.10(B)(3)(c): sequence of major land disturbing activities.

    The first four are the phases the ordinance names; the last five are what
    "sequencing shall identify".
    """

    stripping_clearing: Text | None = None
    rough_grading: Text | None = None
    utilities_infrastructure_buildings: Text | None = None
    final_grading_landscaping: Text | None = None
    #: Expected date on which clearing will begin.
    clearing_start_date: dt.date | None = None
    #: Estimated duration of exposure of cleared areas, days.
    exposure_days: NonNegInt | None = None
    #: Areas of clearing, acres.
    clearing_area_acres: NonNeg | None = None
    #: Installation of temporary erosion and sediment control measures (date).
    controls_install_date: dt.date | None = None
    #: Establishment of permanent vegetation (date).
    permanent_vegetation_date: dt.date | None = None


#: Somers § 17.10(B)(3)(c) phases and sequencing items (field names of :class:`Sequence`).
SEQUENCE_PHASES = (
    "stripping_clearing",
    "rough_grading",
    "utilities_infrastructure_buildings",
    "final_grading_landscaping",
)
SEQUENCE_DATES = (
    "clearing_start_date",
    "exposure_days",
    "clearing_area_acres",
    "controls_install_date",
    "permanent_vegetation_date",
)


class Stage(StrictModel):
    """One dated stage of land disturbing activity in the schedule."""

    name: Text
    start_date: dt.date
    end_date: dt.date

    @model_validator(mode="after")
    def _in_order(self) -> Stage:
        if self.end_date < self.start_date:
            raise ValueError(f"end_date {self.end_date} is before start_date {self.start_date}")
        return self


class Bmps(StrictModel):
    """Somers § 17.10(B)(5)(a)-(l): control BMPs, each a description or not_applicable."""

    stabilization: Item | None = None  # (a) interim and permanent stabilization, schedule
    diversion: Item | None = None  # (b) structural practices to divert, store, limit runoff
    overland_flow: Item | None = None  # (c) management of overland flow
    channel_sediment_trapping: Item | None = None  # (d) trapping sediment in channelized flow
    staging: Item | None = None  # (e) staging to limit exposed soil
    inlet_protection: Item | None = None  # (f) protection of downslope drainage inlets
    tracking: Item | None = None  # (g) minimization of tracking at entries and exits
    offsite_cleanup: Item | None = None  # (h) clean up of off-site sediment deposits
    waste_disposal: Item | None = None  # (i) disposal of building and waste material
    drainage_way_stabilization: Item | None = None  # (j) stabilization of drainage ways
    permanent_stabilization: Item | None = None  # (k) permanent stabilization after grading
    dust: Item | None = None  # (l) minimization of dust
    # Practices the performance standards (Somers 17.07, 17.08) and the minimum standards
    # (Deerfield 31.06(2)-(3)) require on the site; the plan says where it shows each one.
    sediment_to_waters: Item | None = None  # sediment from disturbed areas kept from waters
    dewatering: Item | None = None  # treatment of sediment discharged by dewatering
    stockpiles: Item | None = None  # sediment control of soil stockpiles
    building_materials: Item | None = None  # chemicals, cement, building compounds kept from runoff
    wash_water: Item | None = None  # untreated vehicle and wheel wash water kept from waters
    vegetation_preservation: Item | None = None  # existing vegetation kept, near waters above all
    topsoil_compaction: Item | None = None  # soil compaction minimised, topsoil preserved
    spill_response: Item | None = None  # spill prevention and response procedures
    treatment_before_waters: Item | None = None  # BMPs located to treat runoff before waters
    bmp_removal: Item | None = None  # BMPs removed once no longer necessary
    tracking_pad: Item | None = None  # graveled entrance pad of sufficient width and length
    street_cleaning: Item | None = None  # road sediment removed by street cleaning each workday
    perimeter_barriers: Item | None = None  # filter barriers along side- and downslope sides
    channel_barriers: Item | None = None  # filter barriers along channel edges through the site


#: The BMP items, in declaration order: Somers § 17.10(B)(5)(a)-(l) first, then the practices
#: of the performance and minimum standards. Each is a ``plan.has.bmp.<item>`` fact.
BMP_ITEMS = tuple(Bmps.model_fields)

#: Every ``plan.has.<item>`` fact :func:`plan_items` gives (the fact registry's list).
PLAN_ITEMS = (
    "owner",
    "consultant",
    "dates",
    "site_description",
    "usgs_topo_map",
    "sequence_phases",
    "sequencing",
    "area_estimates",
    "soils_description",
    "groundwater_depth",
    "receiving_water",
    "velocity_dissipation",
    "maintenance",
    "control_calculations",
    "design_standards",
    *(f"bmp.{name}" for name in BMP_ITEMS),
    "bmp_summary",
    "schedule",
)

#: Plan items that a file under ``[plan.documents]`` may provide.
DOCUMENT_ITEMS = (
    "plan",
    "site_map",
    "final_site_plan",
    "usgs_topo_map",
    "sequence",
    "schedule",
    "control_calculations",
    "soils_description",
    "maintenance",
    "bmps",
    "velocity_dissipation",
)
DocumentItem = Annotated[str, Field(pattern="^(" + "|".join(DOCUMENT_ITEMS) + ")$")]


class Plan(StrictModel):
    """The ``[plan]`` table of submission.toml: what the erosion control plan contains."""

    # Somers 17.10(B)(3)(a); start and end dates are [activity] start_date / end_date.
    owner_name: Text | None = None
    owner_address: Text | None = None
    #: The applicant (submission.toml ``applicant``, ``applicant_address``) is the owner or
    #: developer: only then do the applicant's name and address stand for theirs.
    applicant_is_owner: bool | None = None
    consultant: Consultant | NotApplicable | None = Field(default=None, union_mode="left_to_right")
    # 17.10(A), 17.10(B)(3)(b), 31.09(2)
    site_description: Text | None = None
    #: Limits of disturbance on a USGS 7.5-minute topographic map: where (sheet) it is.
    usgs_topo_map: Text | None = None
    # 17.10(B)(3)(c)
    sequence: Sequence | None = None
    #: Development schedule (17.10(A), 31.09(2)); start and completion of each activity
    #: including installation of control measures (31.09(1)(C)3).
    schedule: Text | None = None
    # 17.10(B)(3)(d)
    site_area_estimate_acres: NonNeg | None = None
    disturbed_area_estimate_acres: NonNeg | None = None
    #: 17.10(B)(3)(f): surface soil and subsoils.
    soils_description: Text | None = None
    #: 17.10(B)(3)(g): depth to groundwater (NRCS soil information where available).
    groundwater_depth_ft: NonNeg | None = None
    #: 17.10(B)(3)(h): immediate named receiving water (USGS 7.5-minute map).
    receiving_water: Text | None = None
    #: Distance the plan gives from the site to that water along the runoff's path, feet
    #: (compared with the downstream trace's).
    receiving_water_distance_ft: NonNeg | None = None
    #: 17.10(B)(5)(a)-(l).
    bmps: Bmps | None = None
    #: Brief BMP / erosion control description of a plan statement (17.10(A), 31.09(2)).
    bmp_summary: Text | None = None
    #: 17.10(B)(6): velocity dissipation at discharge locations and outfall channels.
    velocity_dissipation: Item | None = None
    #: 31.09(1)(C)4: maintenance of control measures during and after disturbance
    #: (also Somers 17.07(D)(2), 17.08(D)(2): maintained until final stabilization).
    maintenance: Text | None = None
    #: 31.09(1)(D): support calculations for sizing control measures.
    control_calculations: Text | None = None
    #: Post-construction runoff is infiltrated (then 17.10(B)(4)(i) asks the map to show where).
    uses_infiltration: bool | None = None
    #: 17.08(C)(3)(c): how disturbance on slopes of 20 % or more is minimized (read by review).
    steep_slope_minimization: bool | Text | None = Field(default=None, union_mode="left_to_right")
    #: Area of the disturbance on slopes of 20 % or more as the plan shows it, sq ft
    #: (compared with the DEM's).
    steep_slope_area_sqft: NonNeg | None = None
    #: Design criteria, standards and guidance the BMPs follow (e.g. "WDNR Technical
    #: Standards 1057, 1060, 1068"; Somers 17.06, Deerfield 31.04).
    design_standards: Text | None = None
    #: Dated stages of land disturbing activity; the pauses between them are computed.
    stages: tuple[Stage, ...] | None = Field(default=None, strict=False)
    #: Files in the submission folder that provide an item (item -> relative path).
    documents: dict[DocumentItem, Text] = Field(default_factory=dict)


def parse_plan(data: dict[str, Any], path: Path) -> Plan:
    """Validate a raw ``[plan]`` table.

    Parameters
    ----------
    data : dict
        The table as read from TOML.
    path : Path
        The submission.toml, for messages.

    Raises
    ------
    ConfigError
        Naming ``plan.<key>`` for an unknown key or a wrong type.
    """
    try:
        return Plan.model_validate(dict(data))
    except ValidationError as exc:
        field, msg = _most_specific(exc)
        raise ConfigError(msg, path=path, field=field) from None


def _most_specific(exc: ValidationError) -> tuple[str, str]:
    """Pick the error that says most: the deepest key, an unknown key before the others.

    A union (text or ``{ not_applicable = ... }``) reports one error per member; the
    member the input was meant for has the deepest location.
    """
    errors = exc.errors()

    def keys(err: Any) -> list[str]:
        return [str(p) for p in err["loc"] if str(p) not in _UNION_TAGS]

    best = max(
        range(len(errors)),
        key=lambda i: (len(keys(errors[i])), errors[i]["type"] == "extra_forbidden", -i),
    )
    err = errors[best]
    path_keys = keys(err)
    if err["loc"] and err["loc"][-1] == "[key]" and path_keys[:1] == ["documents"]:
        msg = f"unknown document item; use one of: {', '.join(DOCUMENT_ITEMS)}"
    else:
        one = ValidationError.from_exception_data(exc.title, [_line_error(err)])
        _, msg = validation_message(one)
    return ".".join(["plan", *path_keys]), msg


def _line_error(err: Any) -> Any:
    """Rebuild one error as the InitErrorDetails pydantic's constructor takes."""
    out = {"type": err["type"], "loc": err["loc"], "input": err.get("input")}
    if err.get("ctx"):
        out["ctx"] = err["ctx"]
    return out


#: Location parts pydantic adds for union members and dict keys (not submission keys).
_UNION_TAGS = frozenset(
    {
        "Consultant",
        "NotApplicable",
        "Sequence",
        "Bmps",
        "Stage",
        "constrained-str",
        "str",
        "bool",
        "[key]",
    }
)


def _document_paths(plan: Plan, folder: Path, toml: Path) -> dict[str, Path]:
    """Resolve ``[plan.documents]``; every file must exist inside the submission folder."""
    return {
        item: submission_file(folder, name, f"plan.documents.{item}")
        for item, name in plan.documents.items()
    }


def _given(v: Any) -> bool:
    return v is not None


def _all_given(model: Any, names: tuple[str, ...]) -> bool:
    return model is not None and all(getattr(model, n) is not None for n in names)


def plan_items(
    plan: Plan, documents: dict[str, Any], activity: Any, submission_cfg: Any = None
) -> dict[str, bool | None]:
    """Return which plan items are given (before the unknown/absent distinction).

    Parameters
    ----------
    plan : Plan
        The validated ``[plan]`` table.
    documents : dict
        Items provided by a document (keys of ``[plan.documents]``).
    activity : georeview.config.Activity
        For the start and end dates (Somers 17.10(B)(3)(a)).
    submission_cfg : georeview.config.Submission, optional
        Its ``applicant`` and ``applicant_address`` stand for the owner or developer when
        the plan says the applicant is one (``applicant_is_owner``; unknown while it does
        not say), and its ``description`` for the site description, when the plan gives none.

    Returns
    -------
    dict of str to bool
        One entry per ``plan.has.<item>`` fact.
    """
    doc = set(documents)
    cfg_owner = (
        submission_cfg is not None
        and _given(submission_cfg.applicant)
        and _given(submission_cfg.applicant_address)
    )
    cfg_description = submission_cfg is not None and _given(submission_cfg.description)
    c = plan.consultant
    seq = plan.sequence
    bmps = plan.bmps
    owner: bool | None = _given(plan.owner_name) and _given(plan.owner_address)
    if not owner and cfg_owner:
        owner = plan.applicant_is_owner  # None (unknown) until the plan says
    items: dict[str, bool | None] = {
        "owner": owner,
        "consultant": isinstance(c, NotApplicable)
        or (isinstance(c, Consultant) and _all_given(c, ("firm", "address", "contact"))),
        "dates": activity.start_date is not None and activity.end_date is not None,
        "site_description": _given(plan.site_description) or cfg_description,
        "usgs_topo_map": _given(plan.usgs_topo_map) or "usgs_topo_map" in doc,
        "sequence_phases": _all_given(seq, SEQUENCE_PHASES) or "sequence" in doc,
        "sequencing": _all_given(seq, SEQUENCE_DATES) or "sequence" in doc,
        "area_estimates": _given(plan.site_area_estimate_acres)
        and _given(plan.disturbed_area_estimate_acres),
        "soils_description": _given(plan.soils_description) or "soils_description" in doc,
        "groundwater_depth": _given(plan.groundwater_depth_ft),
        "receiving_water": _given(plan.receiving_water),
        "velocity_dissipation": _given(plan.velocity_dissipation) or "velocity_dissipation" in doc,
        "maintenance": _given(plan.maintenance) or "maintenance" in doc,
        "control_calculations": _given(plan.control_calculations) or "control_calculations" in doc,
        "design_standards": _given(plan.design_standards),
    }
    for name in BMP_ITEMS:
        items[f"bmp.{name}"] = (bmps is not None and getattr(bmps, name) is not None) or (
            "bmps" in doc
        )
    any_bmp = any(items[f"bmp.{n}"] for n in BMP_ITEMS)
    items["bmp_summary"] = _given(plan.bmp_summary) or any_bmp
    # A development schedule: stated, a document, or a fully dated sequence.
    items["schedule"] = (
        _given(plan.schedule) or "schedule" in doc or (items["sequencing"] and items["dates"])
    )
    return items


#: Where a plan set shows something: a sheet ("Sheet C-3", "Sheets C-2 and C-3"), a page or
#: a note of a sheet, or a document file.
_WHERE = re.compile(
    r"\b(?:sheets?\s+[A-Z]{0,3}-?\d+(?:\.\d+)?(?:\s*(?:,|and|&)\s*[A-Z]{0,3}-?\d+(?:\.\d+)?)*"
    r"(?:\s+note\s+\d+)?|pages?\s+\d+(?:\s*-\s*\d+)?|[\w./-]+\.(?:pdf|docx?|xlsx?|dwg))",
    re.IGNORECASE,
)


def sheet_of(text: str) -> str | None:
    """Where in the plan set ``text`` says its item is shown (None when it names no place).

    Examples
    --------
    >>> sheet_of("Silt fence along the side- and downslope edges (Sheet C-3)")
    'Sheet C-3'
    >>> sheet_of("Spill kit at the fuel area (Sheet C-6 note 4)")
    'Sheet C-6 note 4'
    >>> sheet_of("Water truck on dry, windy days") is None
    True
    """
    found = _WHERE.search(text)
    return found.group(0) if found else None


def plan_facts(submission: LoadedSubmission) -> dict[str, Any]:
    """Turn the submission's ``[plan]`` table into flat facts for the rules.

    Parameters
    ----------
    submission : georeview.load.LoadedSubmission
        The loaded submission (its ``config.plan`` is the raw ``[plan]`` table).

    Returns
    -------
    dict
        ``plan.given`` (bool: the table is there), ``plan.has.<item>`` (bool or
        None, see the module docstring), ``plan.bmp.not_applicable.<item>`` (the
        stated reason, or None), ``plan.documents.<item>`` (file name) and
        ``plan.<key>`` for every scalar key of the table.

    Raises
    ------
    ConfigError
        For an unknown key or a wrong type, naming ``plan.<key>`` in submission.toml.
    DataSourceError
        When a file named under ``[plan.documents]`` is missing or outside the folder.
    """
    toml = submission.folder / "submission.toml"
    raw = submission.config.plan
    plan = parse_plan(raw, toml)
    docs = _document_paths(plan, submission.folder, toml)
    given = bool(raw)
    items = plan_items(plan, docs, submission.config.activity, submission.config)
    facts: dict[str, Any] = {"plan.given": given}
    for name, ok in items.items():
        if ok:
            value: bool | None = True
        elif ok is None or not given or name == "control_calculations":
            # None: the plan has not said (the applicant as owner, 17.10(B)(3)(a));
            # Unknown without a [plan] table; Deerfield 31.09(1)(D) is at the Village
            # Engineer's discretion: never a fail.
            value = None
        else:
            value = False
        facts[f"plan.has.{name}"] = value
    bmps = plan.bmps
    for name in BMP_ITEMS:
        v = getattr(bmps, name) if bmps is not None else None
        facts[f"plan.bmp.not_applicable.{name}"] = (
            v.not_applicable if isinstance(v, NotApplicable) else None
        )
        # the applicant's own words, quoted beside the finding that rests on them
        facts[f"plan.bmp.text.{name}"] = v if isinstance(v, str) else None
    for item, p in docs.items():
        facts[f"plan.documents.{item}"] = p.name
    for key, value in plan.model_dump().items():
        if value is None or isinstance(value, (str, bool, int, float, dt.date)):
            facts[f"plan.{key}"] = value
    facts.update(schedule_facts(plan, submission.config.activity))
    log.debug("plan facts: %d items, given=%s", len(items), given)
    return facts


def schedule_facts(plan: Plan, activity: Any) -> dict[str, Any]:
    """Facts computed from the dated schedule (the rules hold the day limits).

    Returns
    -------
    dict
        ``plan.controls_install_date`` (date or None); ``plan.controls_lead_days`` (int: days
        from installing the temporary controls to the start of clearing, negative when the
        controls come after; None unless both dates are given, the start of clearing being
        ``plan.sequence.clearing_start_date`` or else ``activity.start_date``);
        ``plan.longest_pause_days`` (int: the longest run of whole calendar days with no
        land disturbing stage between the first and the last stage of ``plan.stages``, 0 when
        they follow on or overlap; None without stages).
    """
    seq = plan.sequence
    install = seq.controls_install_date if seq is not None else None
    clearing = (seq.clearing_start_date if seq is not None else None) or activity.start_date
    lead = None if install is None or clearing is None else (clearing - install).days
    pause: int | None = None
    if plan.stages:
        spans = sorted((s.start_date, s.end_date) for s in plan.stages)
        pause, covered_to = 0, spans[0][1]
        for start, end in spans[1:]:
            # Days strictly between the end of what came before and this stage's start.
            pause = max(pause, (start - covered_to).days - 1)
            covered_to = max(covered_to, end)
    return {
        "plan.controls_install_date": install,
        "plan.controls_lead_days": lead,
        "plan.longest_pause_days": pause,
    }
