"""The MLOps stage for one generated task: ladder -> milestones -> leaderboard -> verification -> task.json."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from sandmle.mlops.baselines import DEFAULT_TIMEOUT_S, RUNGS, Ladder, run_ladder
from sandmle.mlops.leaderboard import apply_leaderboard
from sandmle.mlops.milestones import apply_milestones
from sandmle.task import Task
from sandmle.verify import GradeFn, VerificationResult, record_verification, verify_task


logger = logging.getLogger(__name__)


@dataclass
class MlopsOutcome:
    ladder: Ladder
    verification: VerificationResult

    @property
    def kept(self) -> bool:
        return self.verification.kept


def run_mlops(
    task: Task,
    *,
    artifacts_dir: Path | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    grade: GradeFn | None = None,
    save: bool = True,
) -> MlopsOutcome:
    """Run the ladder, place milestones, synthesize the leaderboard, verify, and (``save``) rewrite the bundle's
    task.json + grade.py. A rejected task keeps its rung scores and the reasons in ``spec.verification``."""
    ladder = run_ladder(task, artifacts_dir=artifacts_dir, timeout_s=timeout_s)
    scores = ladder.scores
    task.spec.ladder = {r: scores[r] for r in RUNGS if r in scores}
    task.spec.grading.thresholds = None
    task.spec.grading.leaderboard = []
    if all(r in scores for r in RUNGS):
        apply_milestones(task, scores)
        try:
            apply_leaderboard(task)
        except ValueError as exc:  # disordered thresholds: verification names the broken rung
            logger.debug("%s: no leaderboard (%s)", task.task_id, exc)
    result = verify_task(task, grade=grade, rung_failures=ladder.failures, rung_submissions=ladder.submissions)
    record_verification(task, result)
    if save:
        task.save_spec()
    return MlopsOutcome(ladder, result)
