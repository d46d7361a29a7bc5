"""Judge stage: the ordinance as data turns facts into cited findings.

:mod:`.model` holds the schemas of rule files, :mod:`.evaluate` the one evaluator of
conditions over columns of facts (three-valued logic: an unknown fact gives
needs_info, never a guess), :mod:`.judge` the one judge (a review is a frame of one
row, a screening a frame of many) and :mod:`.load` the loading and checking of a
municipality's folder.
"""

from georeview.rules.evaluate import compare, evaluate, evaluate_frame, frame_of
from georeview.rules.judge import Finding, FrameJudgement, Judgement, judge, judge_frame
from georeview.rules.load import load_ordinance, load_ordinance_folder
from georeview.rules.model import Condition, Ordinance, Parameter, Reach, Rule, RulePart

__all__ = [
    "Condition",
    "Finding",
    "FrameJudgement",
    "Judgement",
    "Ordinance",
    "Parameter",
    "Reach",
    "Rule",
    "RulePart",
    "compare",
    "evaluate",
    "evaluate_frame",
    "frame_of",
    "judge",
    "judge_frame",
    "load_ordinance",
    "load_ordinance_folder",
]
