"""`sandmle demo`: the main job on the embedded offline default, end to end.

build a verified corpus (procedural back-end) -> write it in Hub dataset layout -> `load_dataset` it back ->
materialise the held-out rows -> roll the agent out in the sandbox -> MLE-bench-style table.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=Path("outputs/demo"), help="output folder")
    parser.add_argument("--num-train", type=int, default=8, help="kept training tasks")
    parser.add_argument("--num-test", type=int, default=6, help="kept held-out tasks")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--agent", default="scripted", help="scripted | codeagent | toolcalling")
    parser.add_argument(
        "--model", default=None, help="model spec for LLM agents, e.g. openai:http://localhost:8000/v1:Qwen/Qwen3-8B"
    )


def run(args: argparse.Namespace) -> int:
    from datasets import load_dataset

    from sandmle.corpus import build_corpus
    from sandmle.evaluate.report import render_markdown, write_report
    from sandmle.evaluate.runner import run_suite
    from sandmle.hub import materialize, publish

    out: Path = args.out
    t0 = time.perf_counter()

    print(f"[1/4] building a verified corpus ({args.num_train} train + {args.num_test} held-out tasks)")
    summary = build_corpus(
        out / "corpus", num_train=args.num_train, num_test=args.num_test, seed=args.seed, workers=args.workers
    )
    kept = sum(summary.kept.values())
    print(f"      keep rate {summary.keep_rate:.0%} ({kept} kept of {summary.considered} candidates)")

    print("[2/4] writing the corpus as a Hub dataset and loading it back with datasets.load_dataset")
    published = publish(out / "corpus", repo_id="local/sandmle-tasks", local_dir=out / "hub", push=False)
    dataset = load_dataset(str(published.layout.root))
    print("      " + ", ".join(f"{split}: {len(ds)} rows" for split, ds in dataset.items()))

    print("[3/4] materialising the held-out split and rolling out the agent in the sandbox")
    heldout = out / "heldout"
    tasks = [materialize(row, heldout, overwrite=True) for row in dataset["test"]]
    results = run_suite(
        tasks,
        suite="synthetic-test",
        out_dir=out / "runs" / args.agent,
        agent=args.agent,
        model=args.model,
        seeds=[args.seed],
        workers=args.workers,
        name=args.agent,
    )

    print("[4/4] report")
    report, files = write_report([results], out / "report")
    print()
    print(render_markdown(report))
    print(f"done in {time.perf_counter() - t0:.0f} s. Files:")
    print(f"  corpus        {out / 'corpus'}  (summary.json, corpus_mix.png, train/, test/)")
    print(f"  hub dataset   {published.layout.root}  (README.md card, data/*.parquet)")
    print(f"  trajectories  {out / 'runs' / args.agent}")
    print(f"  report        {files.json}  {files.markdown}")
    return 0
