"""Run an agent on many tasks in parallel, one sandboxed episode each, and record everything.

Outputs under ``out_dir``:

* ``trajectories.jsonl``: one `Trajectory` per line (one episode): the chat ``messages`` (tool calls and tool
  results, ready for SFT), every step (code, observation, status, wall time, isolation), the final `GradeReport`,
  the reward and its components. Lines are appended as episodes finish, so a partial run is still readable.
* ``summary.json``: a `RolloutSummary` (valid / above-median / medal rates, mean reward, HumanRank, wall times).

Episodes run on a thread pool: each has its own kernel process, so threads only wait on pipes.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field
from tqdm.auto import tqdm

from sandmle.agents import Agent, build_agent
from sandmle.env.environment import EnvironmentConfig, SandMLEEnvironment, close_pool
from sandmle.task import Task


logger = logging.getLogger(__name__)

TRAJECTORIES = "trajectories.jsonl"
SUMMARY = "summary.json"
TRAJECTORY_SCHEMA_VERSION = 1


class StepLog(BaseModel):
    """One tool call (mirrors `sandmle.env.environment.StepRecord`)."""

    index: int
    tool: str
    code: str | None = None
    observation: str
    status: str
    wall_time: float
    well_formed: bool
    isolation: str
    truncated: bool = False


class Trajectory(BaseModel):
    """One episode. ``status``: completed | agent_error (the agent raised; still graded) | env_error (no episode)."""

    schema_version: int = TRAJECTORY_SCHEMA_VERSION
    task_id: str
    task_dir: str
    agent: str
    model: str | None = None
    seed: int
    modality: str | None = None
    formulation: str | None = None
    metric: str | None = None
    isolation: str
    status: Literal["completed", "agent_error", "env_error"]
    error: str | None = None
    messages: list[dict[str, Any]] = Field(default_factory=list)
    steps: list[StepLog] = Field(default_factory=list)
    final_answer: str | None = None
    report: dict[str, Any] | None = None
    reward_name: str
    reward: float
    reward_components: dict[str, float] = Field(default_factory=dict)
    format_score: float = 0.0
    reset_s: float = 0.0
    wall_s: float = 0.0
    started_at: str

    @property
    def valid(self) -> bool:
        return bool(self.report and self.report.get("valid_submission"))


class RolloutSummary(BaseModel):
    """Aggregate over the episodes of one run (rates are fractions of all episodes, MLE-bench style)."""

    agent: str
    model: str | None
    reward_name: str
    n_episodes: int
    n_errors: int
    valid_rate: float
    above_median_rate: float
    bronze_rate: float
    silver_rate: float
    gold_rate: float
    any_medal_rate: float
    mean_reward: float
    mean_human_rank: float | None
    mean_episode_s: float
    mean_step_s: float
    total_wall_s: float
    isolation: dict[str, int]
    trajectories_path: str


def _report_flag(t: Trajectory, key: str) -> bool:
    return bool(t.report and t.report.get("valid_submission") and t.report.get(key))


def summarize(
    trajectories: Sequence[Trajectory],
    agent: str,
    model: str | None,
    reward_name: str,
    total_wall_s: float,
    path: Path,
) -> RolloutSummary:
    n = len(trajectories)

    def rate(key: str) -> float:
        return sum(_report_flag(t, key) for t in trajectories) / n if n else 0.0

    ranks = [t.report["human_rank"] for t in trajectories if t.valid and t.report.get("human_rank") is not None]
    steps = [s.wall_time for t in trajectories for s in t.steps if s.tool == "execute_python"]
    return RolloutSummary(
        agent=agent,
        model=model,
        reward_name=reward_name,
        n_episodes=n,
        n_errors=sum(t.status != "completed" for t in trajectories),
        valid_rate=sum(t.valid for t in trajectories) / n if n else 0.0,
        above_median_rate=rate("above_median"),
        bronze_rate=rate("bronze_medal"),
        silver_rate=rate("silver_medal"),
        gold_rate=rate("gold_medal"),
        any_medal_rate=rate("any_medal"),
        mean_reward=sum(t.reward for t in trajectories) / n if n else 0.0,
        mean_human_rank=sum(ranks) / len(ranks) if ranks else None,
        mean_episode_s=sum(t.wall_s for t in trajectories) / n if n else 0.0,
        mean_step_s=sum(steps) / len(steps) if steps else 0.0,
        total_wall_s=total_wall_s,
        isolation=dict(Counter(t.isolation for t in trajectories)),
        trajectories_path=str(path),
    )


def run_episode(
    task: Task | str | Path, agent: Agent, config: EnvironmentConfig, seed: int = 0, model_name: str | None = None
) -> Trajectory:
    """One episode on a bundle folder or a `Task` object (e.g. a real competition): reset, seed the kernel's RNGs,
    let the agent act, grade. Never raises for agent or task failures; they are recorded in the trajectory."""
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")  # noqa: UP017 - Python 3.10 has no UTC
    t0 = time.perf_counter()
    row: dict[str, Any] = {"task": task} if isinstance(task, Task) else {"task_dir": str(task)}
    task_dir = task.root if isinstance(task, Task) else task
    base = {
        "task_dir": str(task_dir),
        "agent": agent.name,
        "model": model_name,
        "seed": seed,
        "started_at": started,
        "reward_name": config.reward,
    }
    with SandMLEEnvironment(config) as env:
        try:
            prompt = env.reset(**row)
        except Exception as exc:  # noqa: BLE001 - a broken bundle or kernel is recorded, the run goes on
            logger.warning("episode on %s could not start: %s", task_dir, exc)
            return Trajectory(
                **base,
                task_id=Path(task_dir).name,
                isolation="none",
                status="env_error",
                error=f"{type(exc).__name__}: {exc}",
                reward=0.0,
                wall_s=time.perf_counter() - t0,
            )
        reset_s = time.perf_counter() - t0
        env.sandbox.run(f"import random as _r, numpy as _np\n_r.seed({seed}); _np.random.seed({seed})\ndel _r, _np")
        task = env.task
        status: Literal["completed", "agent_error"] = "completed"
        try:
            result = agent.run(env, prompt)
            error = result.error
            if error:
                status = "agent_error"
        except Exception as exc:  # noqa: BLE001 - the episode is still graded on what the agent left behind
            logger.warning("agent %s failed on %s: %s", agent.name, task.task_id, exc)
            result, error, status = None, f"{type(exc).__name__}: {exc}", "agent_error"
        reward = env.get_reward()
        report = env.last_report
        return Trajectory(
            **base,
            task_id=task.task_id,
            modality=task.spec.modality,
            formulation=task.spec.formulation,
            metric=task.spec.grading.metric,
            isolation=env.isolation,
            status=status,
            error=error,
            messages=result.messages if result else [],
            steps=[StepLog(**s.to_dict()) for s in env.steps],
            final_answer=result.final_answer if result else None,
            report=report.to_dict() if report else None,
            reward=reward,
            reward_components=env._reward_components(),
            format_score=env.format_score,
            reset_s=reset_s,
            wall_s=time.perf_counter() - t0,
        )


def run_rollouts(
    task_dirs: Sequence[Task | str | Path],
    agent: str | Agent = "scripted",
    model: Any = None,
    out_dir: str | Path = "runs/rollout",
    workers: int = 1,
    seed: int = 0,
    max_steps: int | None = None,
    config: EnvironmentConfig | None = None,
    progress: bool = True,
) -> RolloutSummary:
    """Run ``agent`` once on every task (bundle folders or `Task` objects), ``workers`` episodes at a time, and
    write trajectories + summary. ``model`` is a spec string or a smolagents Model (LLM agents only)."""
    if not task_dirs:
        raise ValueError("no tasks to roll out")
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    agent_obj = build_agent(agent, model) if isinstance(agent, str) else agent
    model_name = model if isinstance(model, str) else getattr(model, "model_id", None)
    config = config or EnvironmentConfig()
    config = dataclasses.replace(
        config, scaffold=agent_obj.scaffold, **({"max_steps": max_steps} if max_steps is not None else {})
    )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / TRAJECTORIES
    path.write_text("", encoding="utf-8")
    lock = threading.Lock()
    done: list[Trajectory] = []
    t0 = time.perf_counter()
    bar = tqdm(total=len(task_dirs), desc=f"rollout {agent_obj.name}", unit="task", disable=not progress)
    try:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sandmle-rollout") as pool:
            futures = [pool.submit(run_episode, d, agent_obj, config, seed, model_name) for d in task_dirs]
            for fut in as_completed(futures):
                traj = fut.result()
                with lock:
                    with path.open("a", encoding="utf-8") as fh:
                        fh.write(traj.model_dump_json() + "\n")
                    done.append(traj)
                bar.update(1)
                bar.set_postfix(
                    valid=f"{sum(t.valid for t in done)}/{len(done)}",
                    reward=f"{sum(t.reward for t in done) / len(done):.3f}",
                )
    finally:
        bar.close()
        close_pool(config)  # no kernel left warming after the run
    summary = summarize(
        sorted(done, key=lambda t: t.task_id),
        agent_obj.name,
        model_name,
        config.reward,
        time.perf_counter() - t0,
        path,
    )
    (out / SUMMARY).write_text(summary.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return summary


def load_trajectories(path: str | Path) -> list[Trajectory]:
    """Read a trajectories.jsonl back (e.g. to build SFT data from the successful episodes)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [Trajectory.model_validate_json(line) for line in lines if line.strip()]
