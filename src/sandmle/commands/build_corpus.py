"""`sandmle build-corpus`: generate, run the baseline ladder, place milestones, verify; resumable."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from sandmle.commands._backend import add_backend_arguments, llm_generator
from sandmle.corpus import PAPER_NUM_TEST, PAPER_NUM_TRAIN, CorpusError, build_corpus


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, help="corpus folder (rerun with the same arguments to resume)")
    parser.add_argument("--num-train", type=int, default=PAPER_NUM_TRAIN, help="kept training tasks (paper: 848)")
    parser.add_argument("--num-test", type=int, default=PAPER_NUM_TEST, help="kept held-out tasks (paper: 64)")
    parser.add_argument("--seed", type=int, default=0, help="build seed (same seed -> same corpus)")
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="parallel candidates (default: all cores)"
    )
    parser.add_argument("--min-rows", type=int, default=50, help="smallest task (train + test rows)")
    parser.add_argument("--max-rows", type=int, default=200, help="largest task (train + test rows)")
    parser.add_argument("--rung-timeout", type=float, default=120.0, help="seconds before a baseline script is killed")
    parser.add_argument(
        "--modalities", nargs="+", choices=("tabular", "image", "text", "timeseries"), help="restrict the seed plan"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_backend_arguments(parser)


def _print_summary(summary: dict) -> None:
    kept = summary["kept"]
    print(f"corpus: {summary['out_dir']}")
    print(
        f"  kept: train {kept['train']}/{summary['requested']['train']}, test {kept['test']}/{summary['requested']['test']}"
    )
    print(
        f"  candidates considered: {summary['considered']}, rejected: {summary['rejected']}, "
        f"keep rate: {summary['keep_rate']:.1%}"
    )
    if summary["rejected_by_reason"]:
        print("  rejected by reason: " + ", ".join(f"{k}={v}" for k, v in summary["rejected_by_reason"].items()))
    for key in ("modality", "formulation", "metric"):
        print(f"  {key}: " + ", ".join(f"{k}={v}" for k, v in summary[key].items()))
    print(f"  domains: {len(summary['domain'])}, seeds: {len(summary['seed_id'])}")
    print(f"  samples: {json.dumps(summary['samples'])}")
    rung = {r: s.get("mean") for r, s in summary["rung_wall_s"].items()}
    print(f"  mean rung wall time (s): {json.dumps(rung)}; per task: {summary['task_wall_s'].get('mean')}")
    print(
        f"  processed this run: {summary['processed_this_run']}, reused: {summary['reused']}, "
        f"wall: {summary['build_wall_s']:.1f} s"
    )
    print(f"  files: summary.json, rejected.jsonl, corpus_mix.png, train/, test/ in {summary['out_dir']}")


def run(args: argparse.Namespace) -> int:
    try:  # None: the procedural default; otherwise a picklable LLM/mixed generator (answers cached under --out)
        generate = None if args.backend == "procedural" else llm_generator(args, Path(args.out))
    except ValueError as exc:  # a missing --llm or a bad model spec
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        summary = build_corpus(
            args.out,
            num_train=args.num_train,
            num_test=args.num_test,
            seed=args.seed,
            workers=args.workers,
            n_range=(args.min_rows, args.max_rows),
            rung_timeout_s=args.rung_timeout,
            modalities=args.modalities,
            generate=generate,
            progress=not args.no_progress,
        )
    except CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    _print_summary(summary.to_dict())
    complete = all(summary.kept[s] >= summary.requested[s] for s in summary.requested)
    return 0 if complete else 1
