"""The generation back-end options shared by `sandmle generate` and `sandmle build-corpus`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from sandmle.generate.llm.backend import BACKENDS


if TYPE_CHECKING:
    from sandmle.generate.llm import TaskGenerator


def add_backend_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default="procedural",
        help="generation back-end: procedural (offline default), llm, or mixed (per task, by seed)",
    )
    parser.add_argument(
        "--llm",
        metavar="SPEC",
        help="model for --backend llm/mixed: openai:<base_url>:<model>, transformers:<path>, hf:<model>, litellm:<model>",
    )
    parser.add_argument("--llm-share", type=float, default=0.5, help="mixed: share of LLM-made tasks (by task seed)")


def llm_generator(args: argparse.Namespace, out: Path, **kwargs) -> TaskGenerator:
    """The LLM/mixed `TaskGenerator` the options ask for, its failure log in ``out`` and its answer cache in
    ``out/.llm_cache`` unless ``cache_dir`` is given. Raises ValueError (`ModelSpecError` for a bad spec) with a
    message for the user."""
    from sandmle.agents.models import ModelSpec
    from sandmle.generate.llm import TaskGenerator

    if not args.llm:
        raise ValueError(f"--backend {args.backend} needs --llm SPEC")
    ModelSpec.parse(args.llm)
    kwargs["cache_dir"] = kwargs.get("cache_dir") or out / ".llm_cache"
    return TaskGenerator(
        args.backend,
        llm=args.llm,
        failure_log=out / "llm_failures.jsonl",
        llm_share=args.llm_share,
        modalities=tuple(args.modalities) if args.modalities else None,
        **kwargs,
    )
