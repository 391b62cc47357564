"""A synthetic human leaderboard anchored on the milestones, so MLE-bench's medal-by-rank rule and MLE-Dojo's
HumanRank both apply to synthetic tasks.

Construction (best-first, N teams, deterministic from the task seed): the scores at the positions MLE-bench reads
for N teams are set exactly to the gold / silver / bronze thresholds, the middle entry (both middle entries for even
N) exactly to the median threshold, and the teams in between are drawn uniformly between their two anchors. Teams
above gold lie between gold and the oracle score; teams below the median between the median and the dummy score.
Hence ``thresholds_from_leaderboard(board)`` reproduces the milestones exactly.

The positions are not restated here: `rank_positions` reads them off `sandmle.grading.thresholds_from_leaderboard`
by probing it with a strictly ordered board, so the rule lives in one place.
"""

from __future__ import annotations

import zlib

import numpy as np

from sandmle.grading import Thresholds, thresholds_from_leaderboard
from sandmle.metrics import get_metric
from sandmle.task import Task


MIN_TEAMS = 100
MAX_TEAMS = 1000


def rank_positions(n: int) -> tuple[int, int, int]:
    """1-based (gold, silver, bronze) positions that MLE-bench's rule reads in a best-first board of ``n`` teams."""
    if n < 1:
        raise ValueError("a leaderboard needs at least one team")
    probe = [float(n - i) for i in range(n)]  # position p holds n - p + 1
    th = thresholds_from_leaderboard(probe, lower_is_better=False)
    return n - int(th.gold) + 1, n - int(th.silver) + 1, n - int(th.bronze) + 1


def median_positions(n: int) -> tuple[int, ...]:
    """1-based positions whose scores define the median (one for odd N, two for even N)."""
    return ((n + 1) // 2,) if n % 2 else (n // 2, n // 2 + 1)


def synthesize_leaderboard(
    thresholds: Thresholds,
    ladder: dict[str, float],
    lower_is_better: bool,
    seed: int | list[int],
    n_teams: int | None = None,
) -> list[float]:
    """Best-first scores of ``n_teams`` synthetic teams (drawn in [100, 1000] when None) reproducing ``thresholds``.

    ``ladder`` needs the ``dummy`` and ``oracle`` scores (the bottom and top of the board). Raises ValueError when the
    thresholds are not strictly ordered (a task that verification rejects anyway) or N is out of range.
    """
    rng = np.random.default_rng(seed)
    n = int(rng.integers(MIN_TEAMS, MAX_TEAMS + 1)) if n_teams is None else int(n_teams)
    if not n >= MIN_TEAMS:
        raise ValueError(f"n_teams must be >= {MIN_TEAMS} so every medal position is distinct, got {n}")
    sign = -1.0 if lower_is_better else 1.0
    gold, silver, bronze, median = (
        sign * v for v in (thresholds.gold, thresholds.silver, thresholds.bronze, thresholds.median)
    )
    if not gold > silver > bronze > median:
        raise ValueError(f"thresholds must be strictly ordered best to worst, got {thresholds}")
    top = max(sign * float(ladder["oracle"]), gold)
    bottom = min(sign * float(ladder["dummy"]), median)
    gp, sp, bp = rank_positions(n)
    mids = median_positions(n)
    anchors = [
        (1, top, False),
        (gp, gold, True),
        (sp, silver, True),
        (bp, bronze, True),
        (mids[0], median, True),
        (n, bottom, False),
    ]
    goodness = np.empty(n)
    for (p0, v0, _), (p1, v1, _) in zip(anchors[:-1], anchors[1:], strict=True):
        goodness[p0 - 1 : p1] = np.sort(rng.uniform(v1, v0, size=p1 - p0 + 1))[::-1]
    for p, v, exact in anchors:
        if exact:
            goodness[p - 1] = v
    for p in mids:
        goodness[p - 1] = median
    board = [float(sign * g) for g in goodness]
    return board


def leaderboard_seed(task: Task) -> list[int]:
    """The task's seed plus a checksum of its id: reproducible per task, distinct across tasks with one seed."""
    return [int(task.spec.seed), zlib.crc32(task.task_id.encode())]


def apply_leaderboard(task: Task, n_teams: int | None = None) -> list[float]:
    """Synthesize the board from ``spec.grading.thresholds`` and ``spec.ladder`` into ``spec.grading.leaderboard``."""
    thresholds = task.spec.grading.thresholds
    if thresholds is None:
        raise ValueError(f"{task.task_id}: place milestones before synthesizing a leaderboard")
    lower = get_metric(task.spec.grading.metric).lower_is_better
    board = synthesize_leaderboard(thresholds, task.spec.ladder, lower, leaderboard_seed(task), n_teams)
    task.spec.grading.leaderboard = board
    return board
