"""Rollout throughput: scripted-agent episodes per minute with 1 and N parallel workers on the same task set.

Each run is a real `sandmle.rollout.run_rollouts` call (sandboxed kernels from a warm pool of ``workers`` kernels,
grading, trajectories written), started from a cold pool so the pool's warm-up is part of the measured time.
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass
from pathlib import Path

from sandmle.bench.generation import GenerationConfig, build_bench_corpus
from sandmle.bench.schema import RolloutResult, RolloutRun, Timing, ratio
from sandmle.task import Task, iter_tasks


logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RolloutBenchConfig:
    episodes: int = 4
    workers: tuple[int, ...] = (1, 2)
    repeats: int = 1
    seed: int = 0


def episode_set(tasks: list[Task], episodes: int) -> list[Task]:
    """``episodes`` tasks, cycling through ``tasks`` (each episode gets its own workspace, so repeats are fine)."""
    if not tasks:
        raise ValueError("the rollout benchmark needs at least one task")
    return list(itertools.islice(itertools.cycle(tasks), episodes))


def verified_tasks(corpus_dir: Path, gen: GenerationConfig, progress: bool) -> list[Task]:
    """The kept tasks of ``corpus_dir``, built there first with the generation bench's settings if it holds none
    (so the corpus the generation benchmark built is reused as is)."""
    train = corpus_dir / "train"
    tasks = iter_tasks(train) if train.is_dir() else []
    if not tasks:
        build_bench_corpus(corpus_dir, gen, progress)
        tasks = iter_tasks(train)
    return tasks


def run_rollout(config: RolloutBenchConfig, tasks: list[Task], work_dir: Path, progress: bool = True) -> RolloutResult:
    from sandmle.env.environment import EnvironmentConfig, close_all
    from sandmle.rollout import load_trajectories, run_rollouts

    if config.episodes < 1 or config.repeats < 1 or not config.workers or min(config.workers) < 1:
        raise ValueError(f"episodes, repeats and workers must be >= 1, got {config}")
    episodes = episode_set(tasks, config.episodes)
    runs: list[RolloutRun] = []
    isolation: set[str] = set()
    for workers in sorted(set(config.workers)):
        walls: list[float] = []
        episode_walls: list[float] = []
        valid: list[float] = []
        for i in range(config.repeats):
            out = work_dir / f"workers-{workers}-run-{i}"
            summary = run_rollouts(
                episodes,
                "scripted",
                out_dir=out,
                workers=workers,
                seed=config.seed,
                config=EnvironmentConfig(pool_size=workers),
                progress=progress,
            )
            close_all()  # the next run starts from a cold pool too
            walls.append(summary.total_wall_s)
            valid.append(summary.valid_rate)
            isolation.update(summary.isolation)
            episode_walls.extend(t.wall_s for t in load_trajectories(out / "trajectories.jsonl"))
        wall = Timing.of(walls)
        runs.append(
            RolloutRun(
                workers=workers,
                episodes=len(episodes),
                wall=wall,
                episode_wall=Timing.of(episode_walls),
                episodes_per_min=len(episodes) / (wall.median / 60.0),
                valid_rate=sum(valid) / len(valid),
            )
        )
    return RolloutResult(
        agent="scripted",
        tasks=len({t.task_id for t in episodes}),
        episodes=len(episodes),
        repeats=config.repeats,
        isolation=",".join(sorted(isolation)),
        runs=runs,
        parallel_speedup=ratio(runs[-1].episodes_per_min, runs[0].episodes_per_min) if len(runs) > 1 else None,
    )
