"""`sandmle evaluate --suite synthetic-test|mlebench-lite|mledojo --data-dir DIR --agent A [--model M] --seeds 3
--out DIR [--compare RUN_DIR ...]`.

Runs the agent on every task of the suite once per seed (sandboxed rollouts under ``--out/seed-<k>/``), saves every
episode's grade report in ``--out/results.json`` and writes ``report.json``, ``report.md`` and ``charts/*.png``:
the MLE-bench tiers with mean ± standard error over seeds, mean HumanRank, and pairwise win rates against the
``--compare`` runs. ``--report-only`` rebuilds the report from an existing ``results.json``.
Exit 0 on success, 1 when some episodes could not run, 2 for bad arguments or data.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING


if TYPE_CHECKING:
    from sandmle.evaluate.report import RunResults


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from sandmle.agents import AGENTS
    from sandmle.env.rewards import REWARDS
    from sandmle.evaluate.suites import SUITES

    suites = ", ".join(f"{k}: {v.help}" for k, v in SUITES.items())
    parser.add_argument("--suite", choices=sorted(SUITES), default="synthetic-test", help=f"what to run ({suites})")
    parser.add_argument("--data-dir", type=Path, help="corpus folder (synthetic-test) or competitions folder")
    parser.add_argument(
        "--competitions",
        nargs="+",
        default=None,
        metavar="ID",
        help="only these competitions (default: the 22 MLE-bench-lite ids / every MLE-Dojo folder)",
    )
    parser.add_argument(
        "--leaderboard-dir",
        type=Path,
        default=None,
        help="mlebench-lite: folder of <id>/leaderboard.csv (default: --data-dir; e.g. "
        "mle-bench/mlebench/competitions)",
    )
    parser.add_argument("--agent", choices=AGENTS, default="scripted", help="agent scaffold (default: scripted)")
    parser.add_argument("--model", default=None, help="model spec for LLM agents (see `sandmle rollout --help`)")
    parser.add_argument("--seeds", type=int, default=3, help="episodes per task, seeds 0..N-1 (default: 3)")
    parser.add_argument("--out", type=Path, required=True, help="run folder (results, report, charts, rollouts)")
    parser.add_argument("--name", default=None, help="run name in reports (default: the --out folder name)")
    parser.add_argument(
        "--compare",
        nargs="+",
        type=Path,
        default=[],
        metavar="RUN_DIR",
        help="other evaluation runs (folders with results.json) for win rates and the joint table",
    )
    parser.add_argument("--report-only", action="store_true", help="skip the rollouts; report --out/results.json")
    parser.add_argument("--workers", type=int, default=2, help="episodes run at once (default: 2)")
    parser.add_argument("--max-steps", type=int, default=None, help="tool calls per episode (default: env config)")
    parser.add_argument("--timeout", type=float, default=None, help="seconds per code execution (default: env)")
    parser.add_argument("--reward", choices=sorted(REWARDS), default="dense", help="reward recorded per episode")
    parser.add_argument("--isolation", choices=("auto", "bwrap", "none"), default="auto", help="sandbox isolation")


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    from sandmle.evaluate.report import ReportError, RunResults, render_markdown, write_report

    if args.seeds < 1:
        return _error("--seeds must be >= 1")
    if args.workers < 1:
        return _error("--workers must be >= 1")
    if args.report_only:
        try:
            results = RunResults.load(args.out)
        except ReportError as exc:
            return _error(str(exc))
        n_failed = 0
    else:
        if args.data_dir is None:
            return _error("--data-dir is required unless --report-only")
        outcome = _run_suite(args)
        if isinstance(outcome, int):
            return outcome
        results = outcome
        n_failed = sum(ep.report is None for ep in results.episodes)
    try:
        others = [RunResults.load(d) for d in args.compare]
        report, files = write_report([results, *others], args.out)
    except ReportError as exc:
        return _error(str(exc))
    print(render_markdown(report).split("\n## Per task")[0].strip())  # the per-task table stays in the file
    print(f"\nreport: {files.markdown}\njson:   {files.json}\ncharts: {', '.join(str(p) for p in files.charts)}")
    if n_failed:
        print(f"warning: {n_failed} episode(s) produced no grade report; see {args.out}/seed-*/", file=sys.stderr)
    return 1 if n_failed else 0


def _run_suite(args: argparse.Namespace) -> RunResults | int:
    """Load the suite and roll the agent out; an int is the exit code of a user error."""
    import dataclasses

    from sandmle.env.environment import EnvironmentConfig
    from sandmle.env.sandbox import SandboxLimits
    from sandmle.evaluate.mlebench_lite import CompetitionGradingError
    from sandmle.evaluate.runner import run_suite
    from sandmle.evaluate.suites import SuiteError, load_suite
    from sandmle.task import TaskError

    try:
        tasks = load_suite(args.suite, args.data_dir, competition_ids=args.competitions,
                           leaderboard_dir=args.leaderboard_dir)  # fmt: skip
    except (SuiteError, CompetitionGradingError, TaskError) as exc:
        return _error(str(exc))
    limits = SandboxLimits() if args.timeout is None else SandboxLimits(timeout_s=args.timeout)
    config = EnvironmentConfig(reward=args.reward, limits=limits, isolation=args.isolation, pool_size=args.workers)
    if args.max_steps is not None:
        config = dataclasses.replace(config, max_steps=args.max_steps)
    try:
        return run_suite(tasks, suite=args.suite, out_dir=args.out, agent=args.agent, model=args.model,
                         seeds=range(args.seeds), workers=args.workers, config=config, name=args.name)  # fmt: skip
    except ValueError as exc:
        return _error(str(exc))
