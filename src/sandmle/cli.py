"""The single `sandmle` console script.

Each subcommand lives in `sandmle.commands.<name>` with `add_arguments(parser)` and `run(args) -> int`.
They are imported lazily so `sandmle grade` never pays for torch or transformers.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys


# name -> (module under sandmle.commands, one-line help). One place lists every command.
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("demo", "Offline end-to-end run: build a small corpus, publish it locally, roll out, report."),
    "seeds": ("seeds", "List the seed Task DNA catalog."),
    "generate": ("generate", "Generate task bundles from seed DNA (no verification)."),
    "build-corpus": ("build_corpus", "Generate, run the baseline ladder, place milestones and verify a corpus."),
    "grade": ("grade", "Grade a submission.csv against a task bundle."),
    "publish": ("publish", "Write a corpus as a Hub dataset and optionally push it."),
    "rollout": ("rollout", "Run agents on tasks in the sandbox and record trajectories."),
    "evaluate": ("evaluate", "Evaluate an agent on synthetic, MLE-bench-lite or MLE-Dojo suites."),
    "bench": ("bench", "Benchmarks: execution efficiency, sandbox overhead, throughput (JSON + Markdown)."),
}


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    from sandmle import __version__

    parser = argparse.ArgumentParser(prog="sandmle", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"sandmle {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # Only import the module of the command actually named (cheap --help for everything else).
    chosen = next((a for a in argv if a in COMMANDS), None)
    for name, (module, help_text) in COMMANDS.items():
        sp = sub.add_parser(name, help=help_text, description=help_text)
        if name == chosen:
            importlib.import_module(f"sandmle.commands.{module}").add_arguments(sp)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
    )
    if not args.command:
        parser.print_help()
        return 2
    module = importlib.import_module(f"sandmle.commands.{COMMANDS[args.command][0]}")
    return int(module.run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
