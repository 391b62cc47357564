"""Trajectory-level GRPO on SandMLE tasks with TRL's ``GRPOTrainer(environment_factory=...)``.

Each rollout is a multi-turn episode: TRL renders the task prompt (returned by ``SandMLEEnvironment.reset``) with the
environment's tools, the policy emits ``<tool_call>`` blocks, TRL runs them as environment methods in the sandbox and
appends the results until the policy stops calling tools (or ``max_tool_calling_iterations`` /
``max_completion_length`` is reached). The environment owns the reward (``get_reward``: the named reward of
`sandmle.env.rewards`, ``dense`` by default). Tool-result tokens are masked out of the loss by TRL's ``tool_mask``;
``mask_truncated_completions`` drops episodes cut off by the length budget. Generation uses vLLM when ``use_vllm``
is set (``vllm_mode: colocate`` on one GPU, ``server`` with ``trl vllm-serve`` on more), transformers otherwise.

Run: ``accelerate launch --config_file accelerate_configs/zero3.yaml recipes/grpo_qwen3_14b.py --config
recipes/grpo_qwen3_14b.yaml`` (see recipes/README.md), or ``python -m sandmle.train.grpo --help``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from sandmle.train.configs import SandMLEScriptArguments
from sandmle.train.data import load_tasks, tasks_to_prompt_dataset
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
    """``TrlParser((SandMLEScriptArguments, GRPOConfig, ModelConfig))``; ``--config recipe.yaml`` sets defaults."""
    from trl import GRPOConfig, ModelConfig, TrlParser

    return TrlParser((SandMLEScriptArguments, GRPOConfig, ModelConfig))


def episode_stats(environments: Sequence[Any] | None = None, log_metric: Any = None, **_: Any) -> list[float]:
    """A zero-weight reward function that only logs episode metrics next to TRL's own: valid-submission and medal
    rates (the paper's training-dynamics curves), tool calls per episode and mean sandbox time per call.

    It grades through the environment's public `get_reward` (the grade is cached, so TRL's own call is free).
    """
    from sandmle.env.environment import SandMLEEnvironment

    envs = [e for e in environments or () if isinstance(e, SandMLEEnvironment) and e.task is not None]
    if envs and log_metric is not None:
        for env in envs:
            env.get_reward()
        reports = [env.last_report for env in envs]
        steps = [step for env in envs for step in env.steps]
        log_metric("episode/valid_submission", sum(r.valid_submission for r in reports) / len(reports))
        log_metric("episode/any_medal", sum(r.any_medal for r in reports) / len(reports))
        log_metric("episode/above_median", sum(r.above_median for r in reports) / len(reports))
        log_metric("episode/tool_calls", len(steps) / len(envs))
        if steps:
            log_metric("episode/tool_seconds", sum(s.wall_time for s in steps) / len(steps))
    return [0.0] * len(environments or ())


def build_trainer(
    script_args: SandMLEScriptArguments,
    training_args: Any,
    model_args: Any,
    callbacks: Iterable[Any] = (),
):
    """The configured `GRPOTrainer`: task dataset, environment factory, policy (optionally LoRA) and Hub callbacks."""
    from trl import GRPOTrainer, get_peft_config, get_quantization_config

    from sandmle.env.environment import make_environment_factory

    model = require_model(model_args)
    if not script_args.dataset_name:
        raise ValueError("set --dataset_name (a Hub dataset id, a Hub-layout folder or a corpus folder of tasks)")
    if training_args.reward_weights is not None:
        raise ValueError(
            "GRPOConfig.reward_weights is managed by SandMLE (the environment owns the reward); set the reward with "
            "--reward dense|sparse and its weights with --reward_kwargs '{\"gold\": 0.8}'"
        )
    # Hub rows are rebuilt on disk once per node; the other processes then reuse the identical bundles.
    with training_args.main_process_first(desc="rebuilding task bundles"):
        tasks = load_tasks(
            script_args.dataset_name,
            script_args.dataset_split,
            config=script_args.dataset_config,
            revision=script_args.dataset_revision,
            cache_dir=script_args.task_cache_dir or Path(training_args.output_dir) / "tasks",
            max_tasks=script_args.max_tasks,
        )
    env_config = script_args.environment_config(training_args.max_tool_calling_iterations)
    logger.info("environment: %s", env_config)
    apply_model_init_kwargs(training_args, model_args)
    training_args.reward_weights = [0.0]  # episode_stats only logs; SandMLEEnvironment.get_reward is the reward
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[episode_stats],
        args=training_args,
        train_dataset=tasks_to_prompt_dataset(tasks),
        peft_config=get_peft_config(model_args),
        quantization_config=get_quantization_config(model_args),  # QLoRA with --load_in_4bit
        environment_factory=make_environment_factory(env_config),
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
