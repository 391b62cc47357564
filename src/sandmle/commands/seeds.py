"""`sandmle seeds`: list the seed Task DNA catalog (or print one DNA as JSON)."""

from __future__ import annotations

import argparse
from collections import Counter


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("seed_id", nargs="?", help="print this DNA as JSON instead of the table")
    parser.add_argument("--modality", choices=["tabular", "image", "text", "timeseries"], help="filter the table")
    parser.add_argument("--lite", action="store_true", help="only MLE-bench-lite competitions")


def run(args: argparse.Namespace) -> int:
    from sandmle.seeds import catalog, get_dna

    if args.seed_id:
        try:
            print(get_dna(args.seed_id).model_dump_json(indent=2))
        except KeyError as exc:
            print(f"error: {exc.args[0]}")
            return 2
        return 0
    rows = [
        d
        for d in catalog()
        if (not args.modality or d.modality == args.modality) and (not args.lite or d.mle_bench_lite)
    ]
    print(f"{'seed_id':<24} {'modality':<11} {'formulation':<15} {'metric':<24} {'lite':<5} competition")
    for d in rows:
        print(
            f"{d.seed_id:<24} {d.modality:<11} {d.formulation:<15} {d.metric:<24} {'yes' if d.mle_bench_lite else '':<5}"
            f" {d.competition_id}"
        )
    by_mod = Counter(d.modality for d in rows)
    print(f"\n{len(rows)} seeds: " + ", ".join(f"{k} {v}" for k, v in sorted(by_mod.items())))
    return 0
