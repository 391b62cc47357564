"""SFT baselines on agent trajectories with TRL's ``SFTTrainer``: Seed-SFT (teacher trajectories on seed-like tasks)
and SFT-SandMLE (successful trajectories on SandMLE tasks), both collected by ``sandmle rollout``.

The data is conversational with tool calls (`sandmle.train.data.trajectories_to_sft_dataset`) and carries the same
tool schemas GRPO renders, so an SFT checkpoint starts GRPO in-distribution. With ``assistant_only_loss`` (the
recipes' default) TRL swaps in the generation-tagged training chat template and only assistant turns (reasoning,
text and tool calls, up to ``<|im_end|>``) are trained; user prompts and tool results are context.

Run: ``accelerate launch --config_file accelerate_configs/zero3.yaml recipes/sft_sandmle_qwen3_8b.py --config
recipes/sft_sandmle_qwen3_8b.yaml`` (see recipes/README.md), or ``python -m sandmle.train.sft --help``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from sandmle.train.configs import SandMLEScriptArguments
from sandmle.train.data import trajectories_to_sft_dataset
from sandmle.train.runtime import (
    add_hub_callbacks,
    apply_model_init_kwargs,
    require_model,
    save_and_push,
    setup_logging,
    with_config,
)


logger = logging.getLogger(__name__)


def make_parser():
    """``TrlParser((SandMLEScriptArguments, SFTConfig, ModelConfig))``; ``--config recipe.yaml`` sets defaults."""
    from trl import ModelConfig, SFTConfig, TrlParser

    return TrlParser((SandMLEScriptArguments, SFTConfig, ModelConfig))


def build_trainer(
    script_args: SandMLEScriptArguments,
    training_args: Any,
    model_args: Any,
    callbacks: Iterable[Any] = (),
):
    """The configured `SFTTrainer` on the filtered trajectories (optionally LoRA), with Hub callbacks."""
    from trl import SFTTrainer, get_peft_config, get_quantization_config

    model = require_model(model_args)
    if not script_args.trajectories:
        raise ValueError("set --trajectories (rollout folders or JSONL files written by `sandmle rollout`)")
    dataset = trajectories_to_sft_dataset(
        script_args.trajectories,
        min_reward=script_args.min_reward,
        require_valid_submission=script_args.require_valid_submission,
    )
    apply_model_init_kwargs(training_args, model_args)
    trainer = SFTTrainer(
        model=model,
        args=training_args,
        train_dataset=dataset,
        peft_config=get_peft_config(model_args),
        quantization_config=get_quantization_config(model_args),  # QLoRA with --load_in_4bit
        callbacks=list(callbacks) or None,
    )
    add_hub_callbacks(trainer, script_args, training_args)
    return trainer


def main(argv: Sequence[str] | None = None, default_config: str | Path | None = None) -> None:
    """Parse ``argv`` (default: the command line), train, save and push.

    ``default_config`` is the recipe YAML used when ``argv`` has no ``--config`` (recipes pass their own YAML).
    """
    script_args, training_args, model_args = make_parser().parse_args_and_config(with_config(argv, default_config))
    setup_logging(training_args)
    trainer = build_trainer(script_args, training_args, model_args)
    trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    save_and_push(trainer, script_args, training_args)


if __name__ == "__main__":
    main()
