"""`sandmle bench --out DIR [--quick] [--only efficiency,sandbox,generation,rollout] [--repeats K] [--scales 100]`.

Writes ``DIR/bench.json`` and ``DIR/bench.md`` and prints the Markdown. Exit 0 when every selected section ran,
1 when a section failed (its error is in both files), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _int_list(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from exc
    if not values:
        raise argparse.ArgumentTypeError("expected at least one integer")
    return values


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from sandmle.bench import SECTIONS

    parser.add_argument("--out", type=Path, required=True, help="output folder (bench.json, bench.md)")
    parser.add_argument("--quick", action="store_true", help="smoke-test sizes: one tiny task, one repeat (< 1 min)")
    parser.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help=f"comma-separated sections to run (default: all of {','.join(SECTIONS)})",
    )
    parser.add_argument("--repeats", type=int, default=None, help="repeats per measurement (default: 3; quick: 1)")
    parser.add_argument(
        "--scales",
        type=_int_list,
        default=None,
        help="full-scale row multiples for the efficiency section, e.g. 100,1000 (default: 100; quick: 10)",
    )
    parser.add_argument("--seed", type=int, default=0, help="generator seed of the benchmark tasks (default: 0)")
    parser.add_argument("--work-dir", type=Path, default=None, help="keep the generated tasks and runs here")


def run(args: argparse.Namespace) -> int:
    from sandmle.bench import BENCH_JSON, BENCH_MD, BenchConfig, run_bench

    only = tuple(s.strip() for s in args.only.split(",") if s.strip())
    try:
        config = BenchConfig(
            out_dir=args.out,
            quick=args.quick,
            only=only,
            repeats=args.repeats,
            scales=args.scales,
            seed=args.seed,
            work_dir=args.work_dir,
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report = run_bench(config)
    print((args.out / BENCH_MD).read_text(encoding="utf-8"))
    print(f"wrote {args.out / BENCH_JSON} and {args.out / BENCH_MD} in {report.wall_s:.0f} s")
    return 1 if report.errors else 0
