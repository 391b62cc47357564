"""`sandmle generate`: write N task bundles from the seed catalog (procedural, LLM or mixed back-end; unverified)."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from sandmle.commands._backend import add_backend_arguments, llm_generator


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--num-tasks", type=int, default=10, help="number of task bundles to write")
    parser.add_argument("--seed", type=int, default=0, help="corpus seed (same seed -> identical bundles)")
    parser.add_argument("--out", type=Path, required=True, help="output folder (one sub-folder per task)")
    parser.add_argument("--min-rows", type=int, default=50, help="smallest total rows (train + test) per task")
    parser.add_argument("--max-rows", type=int, default=200, help="largest total rows (train + test) per task")
    parser.add_argument(
        "--modalities",
        nargs="+",
        choices=["tabular", "image", "text", "timeseries"],
        help="restrict to these modalities (default: all)",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    add_backend_arguments(parser)
    parser.add_argument("--llm-concurrency", type=int, default=4, help="parallel LLM calls")
    parser.add_argument("--llm-cache", type=Path, help="answer cache folder (default: <out>/.llm_cache)")


def run(args: argparse.Namespace) -> int:
    from sandmle.generate.pipeline import generate_tasks

    if args.num_tasks < 1:
        print("error: --num-tasks must be >= 1")
        return 2
    if not 20 <= args.min_rows <= args.max_rows:
        print(f"error: need 20 <= --min-rows <= --max-rows, got {args.min_rows} and {args.max_rows}")
        return 2
    if args.backend != "procedural":
        tasks = _generate_with_llm(args)
        if tasks is None:
            return 2
    else:
        tasks = generate_tasks(
            args.num_tasks,
            args.seed,
            args.out,
            n_range=(args.min_rows, args.max_rows),
            modalities=args.modalities,
            progress=not args.no_progress,
        )
    print(f"wrote {len(tasks)} task bundles to {args.out}")
    for title, counter in (
        ("modality", Counter(t.spec.modality for t in tasks)),
        ("formulation", Counter(t.spec.formulation for t in tasks)),
        ("modality/formulation", Counter(f"{t.spec.modality}/{t.spec.formulation}" for t in tasks)),
        ("metric", Counter(t.spec.grading.metric for t in tasks)),
    ):
        print(f"\nby {title}:")
        for key, n in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"  {key:<32} {n}")
    pairs = {(t.spec.seed_id, t.spec.scenario) for t in tasks}
    print(f"\ndistinct (seed, scenario) pairs: {len(pairs)}")
    print(
        f"distinct seeds: {len({t.spec.seed_id for t in tasks})}, distinct task ids: {len({t.task_id for t in tasks})}"
    )
    return 0


def _generate_with_llm(args: argparse.Namespace) -> list | None:
    """LLM / mixed back-end: tasks whose answers are rejected are reported (every attempt is in the failure log)."""
    from sandmle.generate.llm import generate_tasks as generate_llm_tasks

    try:
        generator = llm_generator(args, args.out, cache_dir=args.llm_cache, max_concurrency=args.llm_concurrency)
    except ValueError as exc:  # a missing --llm or a bad model spec
        print(f"error: {exc}")
        return None
    log = generator.failure_log
    tasks, failures = generate_llm_tasks(
        generator,
        args.num_tasks,
        args.seed,
        args.out,
        n_range=(args.min_rows, args.max_rows),
        workers=args.llm_concurrency,
        progress=not args.no_progress,
    )
    if failures:
        print(f"{len(failures)} task(s) rejected (every attempt is in {log}):")
        for index, reason in sorted(failures.items()):
            print(f"  task {index}: {reason[:300]}")
    by_backend = Counter(t.spec.generator.backend for t in tasks)
    print("by generator (architect): " + ", ".join(f"{k}={v}" for k, v in sorted(by_backend.items())))
    return tasks
