"""Validate and grade a submission: MLE-bench CompetitionReport fields + MLE-Dojo HumanRank.

This module and `sandmle.metrics` depend only on numpy/pandas/scipy/scikit-learn and the standard library, because
`render_grade_script` concatenates their source into each bundle's standalone ``private/grade.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sandmle.metrics import get_metric  # standalone: strip


@dataclass
class Thresholds:
    """Score thresholds in metric units. Medal tests are inclusive, above-median is strict (MLE-bench)."""

    gold: float
    silver: float
    bronze: float
    median: float


@dataclass
class GradingConfig:
    """Everything needed to validate and score a submission (embedded in task.json and in grade.py).

    submission_kind: ``label`` (values must be in ``classes``), ``probability`` (floats in [0, 1]), ``real``
    (finite floats), ``integer``, ``ranking`` (space-separated item ids), ``rle`` (run-length encoded mask).
    """

    competition_id: str
    metric: str
    answer_columns: list[str]
    submission_columns: list[str]
    submission_kind: str = "real"
    id_column: str = "id"
    classes: list[str] | None = None
    metric_kwargs: dict[str, Any] = field(default_factory=dict)
    thresholds: Thresholds | None = None
    leaderboard: list[float] = field(default_factory=list)


@dataclass
class GradeReport:
    """MLE-bench's CompetitionReport fields plus ``human_rank`` and ``error``."""

    competition_id: str
    score: float | None
    gold_threshold: float | None
    silver_threshold: float | None
    bronze_threshold: float | None
    median_threshold: float | None
    any_medal: bool
    gold_medal: bool
    silver_medal: bool
    bronze_medal: bool
    above_median: bool
    submission_exists: bool
    valid_submission: bool
    is_lower_better: bool
    human_rank: float | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)


def grade_submission(submission: Any, answers: Any, config: GradingConfig) -> GradeReport:  # placeholder, replaced
    raise NotImplementedError


def render_grade_script(config: GradingConfig) -> str:  # placeholder, replaced
    return "# grade.py placeholder\n"
