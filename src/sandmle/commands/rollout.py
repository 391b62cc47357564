"""`sandmle rollout --tasks DIR --agent scripted|codeagent|toolcalling [--model SPEC] --out runs/X`.

Runs one sandboxed episode per task (in parallel), writes ``trajectories.jsonl`` + ``summary.json`` under ``--out``
and prints the summary table. Exit 0 when every episode ran (invalid submissions are results, not failures), 1 when
some episodes could not start or the agent crashed, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from sandmle.agents import AGENTS
    from sandmle.env.rewards import REWARDS

    parser.add_argument(
        "--tasks",
        type=Path,
        required=True,
        help="a corpus folder (bundles, or split folders of bundles) or a single task bundle",
    )
    parser.add_argument("--agent", choices=AGENTS, default="scripted", help="agent scaffold (default: scripted)")
    parser.add_argument(
        "--model",
        default=None,
        help="model spec for LLM agents: openai:<base_url>:<model_id> | transformers:<path> | "
        "hf:<model_id> | litellm:<model_id>",
    )
    parser.add_argument("--out", type=Path, required=True, help="output folder (trajectories.jsonl, summary.json)")
    parser.add_argument("--workers", type=int, default=2, help="episodes run at once (default: 2)")
    parser.add_argument("--max-steps", type=int, default=None, help="tool calls per episode (default: env config)")
    parser.add_argument("--seed", type=int, default=0, help="seed for the kernel RNGs (default: 0)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N tasks (sorted by id)")
    parser.add_argument("--reward", choices=sorted(REWARDS), default="dense", help="reward (default: dense)")
    parser.add_argument("--timeout", type=float, default=None, help="seconds per code execution (default: 90)")
    parser.add_argument(
        "--isolation",
        choices=("auto", "bwrap", "none"),
        default="auto",
        help="sandbox isolation (default: auto = bwrap when usable)",
    )
    parser.add_argument("--pool-size", type=int, default=None, help="warm kernels kept ready (default: --workers)")


def _task_dirs(root: Path) -> list[Path]:
    from sandmle.task import TASK_JSON, iter_tasks

    if (root / TASK_JSON).is_file():
        return [root]
    return [t.root for t in iter_tasks(root)]


def run(args: argparse.Namespace) -> int:
    import dataclasses

    from sandmle.env.environment import EnvironmentConfig
    from sandmle.env.sandbox import SandboxLimits
    from sandmle.rollout import run_rollouts
    from sandmle.task import TaskError

    if args.workers < 1:
        print("error: --workers must be >= 1", file=sys.stderr)
        return 2
    if not args.tasks.is_dir():
        print(f"error: --tasks {args.tasks} is not a folder", file=sys.stderr)
        return 2
    try:
        dirs = _task_dirs(args.tasks)
    except TaskError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.limit is not None:
        dirs = dirs[: args.limit]
    if not dirs:
        print(f"error: no task bundles under {args.tasks}", file=sys.stderr)
        return 2
    limits = SandboxLimits() if args.timeout is None else SandboxLimits(timeout_s=args.timeout)
    config = EnvironmentConfig(
        reward=args.reward,
        limits=limits,
        isolation=args.isolation,
        pool_size=args.workers if args.pool_size is None else args.pool_size,
    )
    if args.max_steps is not None:
        config = dataclasses.replace(config, max_steps=args.max_steps)
    try:
        summary = run_rollouts(
            dirs,
            agent=args.agent,
            model=args.model,
            out_dir=args.out,
            workers=args.workers,
            seed=args.seed,
            config=config,
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rows = [
        ("episodes", f"{summary.n_episodes} ({summary.n_errors} errors)"),
        ("valid submission", f"{summary.valid_rate:.1%}"),
        ("above median", f"{summary.above_median_rate:.1%}"),
        ("bronze / silver / gold", f"{summary.bronze_rate:.1%} / {summary.silver_rate:.1%} / {summary.gold_rate:.1%}"),
        ("any medal", f"{summary.any_medal_rate:.1%}"),
        ("mean reward", f"{summary.mean_reward:.3f} ({summary.reward_name})"),
        ("mean HumanRank", "n/a" if summary.mean_human_rank is None else f"{summary.mean_human_rank:.3f}"),
        ("mean episode / step", f"{summary.mean_episode_s:.1f} s / {summary.mean_step_s:.2f} s"),
        ("isolation", ", ".join(f"{k}: {v}" for k, v in summary.isolation.items())),
        ("trajectories", summary.trajectories_path),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    return 1 if summary.n_errors else 0
