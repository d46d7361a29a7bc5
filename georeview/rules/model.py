"""The ordinance as data: conditions, rules, reach, parameters (strict pydantic schemas).

A *rule kind* is code (:mod:`georeview.rules.judge`); a *rule instance* (threshold,
citation, wording) is data in ``georeview/ordinances/<municipality>/``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from georeview.config import StrictModel
from georeview.errors import ConfigError

__all__ = [
    "RULE_KINDS",
    "Caveat",
    "Condition",
    "Interpretation",
    "Ordinance",
    "Parameter",
    "Reach",
    "Rule",
    "RulePart",
]

#: Every rule kind the judge knows (see :mod:`georeview.rules.judge`).
RULE_KINDS = ("reach", "exemption", "trigger", "classify", "limit", "required", "info")
#: The reviewer's outcomes an ordinance words in ``[outcomes]`` (georeview.pipeline.owes).
Outcome = Literal[
    "not_regulated",
    "return_to_applicant",
    "disapprove",
    "awaiting_village",
    "approve_with_conditions",
    "approve",
]
#: Kinds whose finding is a determination (applicability, classification), not compliance.
DETERMINATION_KINDS = ("reach", "exemption", "trigger", "classify")

Op = Literal[">=", ">", "<=", "<", "==", "!="]


class Condition(StrictModel):
    """A test on facts: ``{fact, op, value}`` or a combination with all/any/not.

    ``param`` instead of ``value`` takes the value from the ordinance's
    ``[parameters]`` (resolved when the ordinance is loaded).
    """

    fact: str | None = None
    op: (
        Literal[
            ">=",
            ">",
            "<=",
            "<",
            "==",
            "!=",
            "contains",
            "contains_any",
            "is_true",
            "is_false",
            "present",
        ]
        | None
    ) = None
    value: Any = None
    param: str | None = None
    all: tuple[Condition, ...] | None = Field(default=None, strict=False)
    any: tuple[Condition, ...] | None = Field(default=None, strict=False)
    not_: Condition | None = Field(default=None, alias="not")

    def facts(self) -> set[str]:
        """Every fact name the condition reads."""
        out = {self.fact} if self.fact else set()
        for c in (*(self.all or ()), *(self.any or ()), *((self.not_,) if self.not_ else ())):
            out |= c.facts()
        return out


class Caveat(StrictModel):
    """Words a finding carries when ``when`` holds (what its verdict rests on)."""

    when: Condition
    text: str


class Escape(StrictModel):
    """A standard's own way out, in the text's words ("or to the maximum extent practicable").

    A limit or requirement not met still passes when ``when`` holds, and is needs_info
    (for whoever decides ``when``) while that is unknown. A way out that is a measure of
    its own ("basins or other appropriate control measures") has ``stands_alone``: when it
    holds, the standard passes even while its own measure is unknown.
    """

    #: The ordinance's words that give the way out (quoted in the finding).
    text: str
    when: Condition
    #: The way out meets the standard by itself, whatever the standard's own measure.
    stands_alone: bool = False
    message_pass: str
    message_unknown: str


class Allowance(StrictModel):
    """What an applicant's ``not_applicable`` for a plan item is worth, in the text's words.

    ``allows``:

    * ``none``: the text allows no exception ("Each site shall have a graveled entrance
      pad"): not_applicable is a fail, with the applicant's reason quoted;
    * ``village``: the text leaves it to the Village ("if practical, as determined by the
      Village Engineer"): a request the Village settles with ``decided_by`` (true: not
      applicable; false: fail), needs_info until it does;
    * ``conditional``: the item is conditional by nature (dewatering when there is none):
      not_applicable stands, with its reason, unless ``contradicted_when`` holds (the
      project declares dewatering; the maps show adjacent waters), which is a fail.
    """

    #: The fact holding the applicant's reason (``plan.bmp.not_applicable.<item>``).
    fact: str
    allows: Literal["none", "village", "conditional"]
    #: The ordinance's words that decide it (quoted in the finding).
    words: str
    decided_by: str | None = None
    contradicted_when: Condition | None = None

    @model_validator(mode="after")
    def _complete(self) -> Allowance:
        if self.allows == "village" and not self.decided_by:
            raise ValueError("an allowance the Village settles needs decided_by")
        if self.allows != "village" and self.decided_by:
            raise ValueError("decided_by is only for allows = 'village'")
        if self.allows != "conditional" and self.contradicted_when is not None:
            raise ValueError("contradicted_when is only for allows = 'conditional'")
        return self

    def facts(self) -> set[str]:
        """Every fact name the allowance reads."""
        out = {self.fact, *((self.decided_by,) if self.decided_by else ())}
        if self.contradicted_when is not None:
            out |= self.contradicted_when.facts()
        return out


class Rule(StrictModel):
    """One rule instance of an ordinance file."""

    id: str
    kind: Literal["reach", "exemption", "trigger", "classify", "limit", "required", "info"]
    citation: str
    title: str
    #: The ordinance's own words (quoted in reports).
    text: str = ""
    #: Condition for reach/exemption/trigger/classify; for limit/required the
    #: rule is not_applicable unless ``applies_when`` holds.
    when: Condition | None = None
    applies_when: Condition | None = None
    #: For classify: the classification key the rule sets.
    sets: str | None = None
    #: For limit: fact measured, comparison and limit (or ``limit_param``).
    measure: str | None = None
    op: Op | None = None
    limit: Any = None
    limit_param: str | None = None
    units: str | None = None
    #: For required: the fact that says the item is there.
    fact: str | None = None
    #: For limit/required: a text fact that says why the verdict's fact is unknown (the
    #: engine's own reason); it fills ``{reason}`` in the messages.
    reason: str | None = None
    #: Facts the finding also waits on (the Village's estimate an amount rests on): read
    #: for "who supplies it" and the evidence, not for the verdict.
    waits_on: tuple[str, ...] = Field(default=(), strict=False)
    #: For required plan items: what the applicant's not_applicable is worth.
    allowance: Allowance | None = None
    #: For declared items: the text fact holding the applicant's own words (quoted in the
    #: finding with the sheet or document it names, for the reviewer to verify).
    declared: str | None = None
    #: Messages; ``{measured}``, ``{limit}``, ``{units}`` and ``{reason}`` are filled in.
    message_pass: str = ""
    message_fail: str = ""
    message_unknown: str = ""
    message_na: str = ""
    #: Caveats added to the message when their condition holds (an assumption the
    #: verdict rests on, shown next to it).
    caveats: tuple[Caveat, ...] = Field(default=(), strict=False)
    #: For limit/required: the text's own alternative to meeting the standard.
    escape: Escape | None = None
    #: What the Village must do before it decides, when the finding holds (a referral to
    #: the Board); listed in report.json ``summary.owes.village``.
    action: str = ""
    #: A condition of approval the finding sets when it holds (security before the permit
    #: issues); ``{measured}`` is filled in. Listed in ``summary.outcome.conditions``.
    condition: str = ""

    def facts(self) -> set[str]:
        """Every fact name the rule reads."""
        named = (self.measure, self.fact, self.reason, self.declared, *self.waits_on)
        out = {n for n in named if n}
        if self.allowance is not None:
            out |= self.allowance.facts()
        conds = (self.when, self.applies_when, *(k.when for k in self.caveats))
        for c in (*conds, self.escape.when if self.escape else None):
            if c is not None:
                out |= c.facts()
        return out

    @property
    def verdict_fact(self) -> str | None:
        """The fact a standard's verdict reads (``fact`` for required, ``measure`` for limit)."""
        if self.kind == "required":
            return self.fact or self.measure
        return self.measure or self.fact


class Reach(StrictModel):
    """How far the ordinance reaches by jurisdiction status."""

    village: Literal["all", "subdivision", "none"] = "all"
    extraterritorial: Literal["all", "subdivision", "none"] = "none"
    outside: Literal["all", "subdivision", "none"] = "none"
    citation_village: str = ""
    citation_extraterritorial: str = ""
    #: What makes an activity reached where the reach is ``subdivision`` (default: it
    #: creates one, ``activity.kinds`` contains ``subdivision``).
    subdivision_when: Condition | None = None
    #: What the reach finding asks while that condition is unknown.
    subdivision_question: str = ""


class Parameter(StrictModel):
    """A value a rule or a measure uses, with the citation it comes from."""

    value: Any
    units: str | None = None
    citation: str
    note: str = ""


class Interpretation(StrictModel):
    """A local reading of the ordinance the program applies until the Village decides.

    Every finding of a rule in ``rules`` carries ``label``, and every one reading one of
    ``reads`` its ``short`` form, while the Village's determination ``determined_by`` is not
    given.
    """

    label: str
    #: The words the findings that follow it carry; ``label`` is said once, in the finding
    #: of the rules in ``rules`` (and the report's caveats).
    short: str | None = None
    citation: str
    determined_by: str
    reads: tuple[str, ...] = Field(default=(), strict=False)
    rules: tuple[str, ...] = Field(default=(), strict=False)
    note: str = ""


class Ordinance(StrictModel):
    """A municipality's whole ordinance: ``ordinance.toml`` plus its rule files."""

    municipality: str
    title: str
    short_name: str
    source: str
    notes: str = ""
    reach: Reach
    category_labels: dict[str, str] = Field(default_factory=dict, strict=False)
    parameters: dict[str, Parameter] = Field(default_factory=dict, strict=False)
    interpretations: dict[str, Interpretation] = Field(default_factory=dict, strict=False)
    #: The reviewer's outcomes in the ordinance's own words (``summary.outcome``): keys
    #: not_regulated, return_to_applicant, disapprove, awaiting_village,
    #: approve_with_conditions, approve.
    outcomes: dict[Outcome, str] = Field(default_factory=dict, strict=False)
    #: Further rule files of the folder, in the order they are appended.
    rule_files: tuple[str, ...] = Field(default=(), strict=False)
    rules: tuple[Rule, ...] = Field(strict=False)

    def param(self, name: str) -> Any:
        """The value of parameter ``name``.

        Raises
        ------
        georeview.errors.ConfigError
            The ordinance does not set it (its file and the parameter are named).
        """
        p = self.parameters.get(name)
        if p is None:
            raise ConfigError(
                f"the ordinance of {self.municipality!r} sets no parameter {name!r}",
                path=f"{self.municipality}/ordinance.toml",
                field=f"parameters.{name}",
            )
        return p.value

    def citation_of(self, name: str) -> str:
        """The citation of parameter ``name`` (``""`` when it is not set)."""
        p = self.parameters.get(name)
        return p.citation if p else ""

    def rule(self, rule_id: str) -> Rule | None:
        """The rule of that id, or ``None``."""
        return next((r for r in self.rules if r.id == rule_id), None)


class RulePart(StrictModel):
    """A further rule file of a municipality (plan content, site map, engineering)."""

    municipality: str
    part: str
    rules: tuple[Rule, ...] = Field(strict=False)
