"""What the GRPO and SFT entry points share: logging, model loading kwargs, Hub callbacks, save and push."""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sandmle.train.configs import SandMLEScriptArguments


logger = logging.getLogger(__name__)

_REPO_ID_RE = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


def with_config(argv: Sequence[str] | None, default_config: str | Path | None) -> list[str]:
    """The arguments, with ``--config default_config`` prepended when none was given (command line wins over it)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if default_config is not None and "--config" not in args:
        if not Path(default_config).is_file():
            raise FileNotFoundError(f"recipe config {default_config} not found")
        args = ["--config", str(default_config), *args]
    return args


def setup_logging(training_args: Any) -> None:
    """Library logs at the trainer's per-process level (info on the main process, warnings on the others)."""
    import datasets
    import transformers

    level = training_args.get_process_log_level()
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr, level=level)
    logging.getLogger("sandmle").setLevel(level)
    datasets.utils.logging.set_verbosity(level)
    transformers.utils.logging.set_verbosity(level)


def apply_model_init_kwargs(training_args: Any, model_args: Any) -> None:
    """Load the policy as `ModelConfig` says (dtype, attention, revision), like TRL's own scripts do."""
    kwargs: dict[str, Any] = {
        "revision": model_args.model_revision,
        "trust_remote_code": training_args.trust_remote_code,
        "attn_implementation": model_args.attn_implementation,
        "dtype": model_args.dtype,
    }
    kwargs.update(training_args.model_init_kwargs or {})
    training_args.model_init_kwargs = kwargs


def require_model(model_args: Any) -> str:
    if not model_args.model_name_or_path:
        raise ValueError("set --model_name_or_path (a Hub model id or a local folder saved with save_pretrained)")
    return model_args.model_name_or_path


def add_hub_callbacks(trainer: Any, script_args: SandMLEScriptArguments, training_args: Any) -> None:
    """``push_checkpoints``: push each saved checkpoint to branch ``step-<N>`` besides the Trainer's own pushes."""
    if not script_args.push_checkpoints:
        return
    from sandmle.train.hub import PushCheckpointCallback

    trainer.add_callback(PushCheckpointCallback.from_args(training_args))


def save_and_push(trainer: Any, script_args: SandMLEScriptArguments, training_args: Any) -> None:
    """Save the final policy to ``output_dir`` and, with ``push_to_hub``, upload it with a model card."""
    trainer.save_model(training_args.output_dir)
    logger.info("model saved to %s", training_args.output_dir)
    if training_args.push_to_hub:
        name = script_args.dataset_name
        trainer.push_to_hub(dataset_name=name if name and _REPO_ID_RE.fullmatch(name) else None)
        logger.info("model pushed to https://huggingface.co/%s", trainer.hub_model_id)
    if hasattr(trainer, "end"):  # transformers >= 5.18: finish trackers, destroy the process group
        trainer.end()
