"""Milestone thresholds placed between the baseline-ladder rungs.

The rule, in "goodness" space (the score itself when higher is better, its negation when lower is better), with rung
scores ``d`` (dummy), ``s`` (simple), ``t`` (strong), ``o`` (oracle), ``b = max(s, t)`` (best learned baseline) and
``r`` the reference baseline: ``s`` when the linear model beats the sample submission, else ``t``::

    median = d + 1/2 (r - d)        half way from the sample submission to the reference baseline
    gold   = b + 1/2 (o - b)        beyond every baseline, half way to the hidden-rule oracle (so gold <= oracle)
    bronze = r + 1/3 (gold - r)     the reference -> gold stretch cut in thirds: a tuned model (t) typically lands
    silver = r + 2/3 (gold - r)     between bronze and silver or above

Every threshold is a convex combination of rungs, so the chain ``d < median < bronze < silver < gold <= o`` holds
strictly exactly when ``d < r`` and ``b < o``: some learned baseline must beat the sample submission (the task is
learnable from the public data) and the oracle must beat every baseline (the hidden rule is what makes a task
solvable). A tie or an inversion between simple and strong, common on 20-60 test rows, does not by itself discard a
task, nor does a linear model that loses to the prior when gradient boosting does not (e.g. overconfident
multi-class probabilities). A broken ladder yields a disordered chain that `sandmle.verify` rejects with the link
that broke. The fractions are `MilestoneRule` fields, not constants scattered in code.
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

    median: float = 0.5  # dummy -> reference baseline
    gold: float = 0.5  # best baseline -> oracle
    bronze: float = 1 / 3  # reference baseline -> gold
    silver: float = 2 / 3  # reference baseline -> gold

    def __post_init__(self) -> None:
        for name in ("median", "bronze", "silver", "gold"):
            value = getattr(self, name)
            if not 0.0 < value <= 1.0:
                raise ValueError(f"MilestoneRule.{name} must be in (0, 1], got {value}")
        if not self.bronze < self.silver < 1.0:
            raise ValueError("MilestoneRule needs 0 < bronze < silver < 1 (both cut the reference -> gold stretch)")


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

    ref = s if s > d else max(s, t)  # neither beating d leaves ref <= d: a disordered chain, rejected by verify
    gold = lerp(max(s, t), o, rule.gold)
    return Thresholds(
        gold=sign * gold,
        silver=sign * lerp(ref, gold, rule.silver),
        bronze=sign * lerp(ref, gold, rule.bronze),
        median=sign * lerp(d, ref, rule.median),
    )


def apply_milestones(task: Task, ladder: dict[str, float], rule: MilestoneRule = DEFAULT_RULE) -> Thresholds:
    """Record rung scores in ``spec.ladder`` and the thresholds in ``spec.grading.thresholds`` (not saved: the
    caller saves once after the leaderboard is in, via `Task.save_spec`)."""
    lower = get_metric(task.spec.grading.metric).lower_is_better
    thresholds = place_thresholds(ladder, lower, rule)
    task.spec.ladder = {r: float(ladder[r]) for r in REQUIRED_RUNGS}
    task.spec.grading.thresholds = thresholds
    return thresholds
