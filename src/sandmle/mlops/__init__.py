"""MLOps stage: the baseline ladder, milestone thresholds and a synthetic human leaderboard for each task.

`run_mlops` chains them with `sandmle.verify` for one task; `sandmle.corpus.build_corpus` runs it over a corpus.
"""

from sandmle.mlops.baselines import RUNGS, Ladder, RungResult, render_solution, run_ladder, run_rung
from sandmle.mlops.leaderboard import apply_leaderboard, rank_positions, synthesize_leaderboard
from sandmle.mlops.milestones import DEFAULT_RULE, MilestoneRule, apply_milestones, place_thresholds
from sandmle.mlops.stage import MlopsOutcome, run_mlops


__all__ = [
    "DEFAULT_RULE",
    "RUNGS",
    "Ladder",
    "MilestoneRule",
    "MlopsOutcome",
    "RungResult",
    "apply_leaderboard",
    "apply_milestones",
    "place_thresholds",
    "rank_positions",
    "render_solution",
    "run_ladder",
    "run_mlops",
    "run_rung",
    "synthesize_leaderboard",
]
