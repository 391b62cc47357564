"""Run an agent over a suite's tasks for several seeds with the rollout machinery and collect `RunResults`.

Each seed is one `sandmle.rollout.run_rollouts` call writing ``<out>/seed-<k>/trajectories.jsonl`` and
``summary.json``; the final `GradeReport` of every episode is gathered into ``<out>/results.json``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sandmle.evaluate.report import EpisodeResult, RunResults
from sandmle.grading import GradeReport
from sandmle.task import Task


logger = logging.getLogger(__name__)


def seed_dir(out_dir: Path | str, seed: int) -> Path:
    return Path(out_dir) / f"seed-{seed}"


def run_suite(
    tasks: Sequence[Task],
    *,
    suite: str,
    out_dir: Path | str,
    agent: str = "scripted",
    model: Any = None,
    seeds: Sequence[int] = (0, 1, 2),
    workers: int = 2,
    config: Any = None,
    name: str | None = None,
    progress: bool = True,
) -> RunResults:
    """Roll ``agent`` out once per task and seed; returns (and saves to ``out_dir``) every episode's report."""
    from sandmle.agents import build_agent
    from sandmle.rollout import load_trajectories, run_rollouts

    if not tasks:
        raise ValueError("no tasks to evaluate")
    if not seeds:
        raise ValueError("at least one seed is needed")
    out = Path(out_dir)
    agent_obj = build_agent(agent, model)  # built once: an LLM back-end is not reloaded per seed
    model_name = model if isinstance(model, str) or model is None else getattr(model, "model_id", repr(model))
    episodes: list[EpisodeResult] = []
    for seed in seeds:
        logger.info("evaluating %s on %d %s task(s), seed %d", agent, len(tasks), suite, seed)
        folder = seed_dir(out, seed)
        summary = run_rollouts(
            list(tasks), agent=agent_obj, model=model_name, out_dir=folder, workers=workers, seed=seed, config=config,
            progress=progress,
        )  # fmt: skip
        for traj in load_trajectories(summary.trajectories_path):
            episodes.append(
                EpisodeResult(
                    task_id=traj.task_id,
                    seed=seed,
                    report=GradeReport.from_dict(traj.report) if traj.report else None,
                    trajectory=(folder / Path(summary.trajectories_path).name).relative_to(out).as_posix(),
                    wall_s=traj.wall_s,
                    error=traj.error,
                )
            )
    results = RunResults(
        name=name or out.resolve().name,
        suite=suite,
        agent=agent,
        model=model_name,
        seeds=list(seeds),
        task_ids=[t.task_id for t in tasks],
        episodes=sorted(episodes, key=lambda e: (e.task_id, e.seed)),
    )
    results.save(out)
    return results
