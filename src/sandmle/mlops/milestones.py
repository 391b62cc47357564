"""Milestone thresholds placed between the baseline-ladder rungs.

The rule, in "goodness" space (the score itself when higher is better, its negation when lower is better), with rung
scores ``d`` (dummy), ``s`` (simple), ``t`` (strong), ``o`` (oracle) and ``b = max(s, t)`` (best learned baseline)::

    median = d + 1/2 (s - d)        half way from the sample submission to a linear model
    gold   = b + 1/2 (o - b)        beyond every baseline, half way to the hidden-rule oracle (so gold <= oracle)
    bronze = s + 1/3 (gold - s)     the simple -> gold stretch cut in thirds: a tuned model (t) typically lands
    silver = s + 2/3 (gold - s)     between bronze and silver or above

Every threshold is a convex combination of rungs, so the chain ``d < median < bronze < silver < gold <= o`` holds
strictly exactly when ``d < s < o`` and ``t <= o``: the linear model must beat the sample submission (the task is
learnable) and the oracle must not lose to any baseline (the hidden rule is what makes a task solvable). A tie or an
inversion between simple and strong, common on 20-60 test rows, does not by itself discard a task. A broken ladder
yields a disordered chain that `sandmle.verify` rejects with the link that broke. The fractions are `MilestoneRule`
fields, not constants scattered in code.
"""

from __future__ import annotations

from dataclasses import dataclass

from sandmle.grading import Thresholds
from sandmle.metrics import get_metric
from sandmle.task import Task


REQUIRED_RUNGS = ("dummy", "simple", "strong", "oracle")


@dataclass(frozen=True)
class MilestoneRule:
    """Interpolation fractions (see the module docstring)."""

    median: float = 0.5  # dummy -> simple
    gold: float = 0.5  # best baseline -> oracle
    bronze: float = 1 / 3  # simple -> gold
    silver: float = 2 / 3  # simple -> gold

    def __post_init__(self) -> None:
        for name in ("median", "bronze", "silver", "gold"):
            value = getattr(self, name)
            if not 0.0 < value <= 1.0:
                raise ValueError(f"MilestoneRule.{name} must be in (0, 1], got {value}")
        if not self.bronze < self.silver < 1.0:
            raise ValueError("MilestoneRule needs 0 < bronze < silver < 1 (both cut the simple -> gold stretch)")


DEFAULT_RULE = MilestoneRule()


def place_thresholds(
    ladder: dict[str, float], lower_is_better: bool, rule: MilestoneRule = DEFAULT_RULE
) -> Thresholds:
    """Thresholds in metric units from the rung scores (see the module docstring for the rule)."""
    missing = [r for r in REQUIRED_RUNGS if r not in ladder]
    if missing:
        raise ValueError(f"cannot place milestones: ladder lacks rung score(s) {missing}")
    sign = -1.0 if lower_is_better else 1.0
    d, s, t, o = (sign * float(ladder[r]) for r in REQUIRED_RUNGS)

    def lerp(a: float, b: float, frac: float) -> float:
        return a + frac * (b - a)

    gold = lerp(max(s, t), o, rule.gold)
    return Thresholds(
        gold=sign * gold,
        silver=sign * lerp(s, gold, rule.silver),
        bronze=sign * lerp(s, gold, rule.bronze),
        median=sign * lerp(d, s, rule.median),
    )


def apply_milestones(task: Task, ladder: dict[str, float], rule: MilestoneRule = DEFAULT_RULE) -> Thresholds:
    """Record rung scores in ``spec.ladder`` and the thresholds in ``spec.grading.thresholds`` (not saved: the
    caller saves once after the leaderboard is in, via `Task.save_spec`)."""
    lower = get_metric(task.spec.grading.metric).lower_is_better
    thresholds = place_thresholds(ladder, lower, rule)
    task.spec.ladder = {r: float(ladder[r]) for r in REQUIRED_RUNGS}
    task.spec.grading.thresholds = thresholds
    return thresholds
