"""Script arguments shared by the GRPO and SFT entry points (the third dataclass next to TRL's config and
`ModelConfig` in ``TrlParser((SandMLEScriptArguments, GRPOConfig | SFTConfig, ModelConfig))``).

Sandbox and reward defaults are not restated here: a field left at ``None`` means "the environment's default"
(`sandmle.env.sandbox.SandboxLimits`, `sandmle.env.environment.EnvironmentConfig`), so each number lives in one place.
The paper's 90 s per execution is `SandboxLimits.timeout_s`; recipes set it explicitly for readability.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class SandMLEScriptArguments:
    """What to train on and how episodes run. Every field is settable from a recipe YAML or the command line."""

    # -- tasks (GRPO) --------------------------------------------------------------------------------------------
    dataset_name: str | None = field(
        default=None,
        metadata={
            "help": "The task corpus: a Hub dataset repo id (org/sandmle-tasks), a local Hub-layout folder (README.md + "
            "data/), or a corpus folder of task bundles (<corpus>/<split>/<task_id>/task.json or <dir>/<task_id>/)."
        },
    )
    dataset_config: str = field(
        default="default", metadata={"help": "Hub dataset config (default, tabular, image...)."}
    )
    dataset_split: str = field(default="train", metadata={"help": "Split of the corpus to train on."})
    dataset_revision: str | None = field(default=None, metadata={"help": "Hub revision of the dataset."})
    max_tasks: int | None = field(default=None, metadata={"help": "Use only the first N tasks (smoke runs)."})
    task_cache_dir: str | None = field(
        default=None,
        metadata={"help": "Where Hub rows are rebuilt into task bundles (default: <output_dir>/tasks)."},
    )
    # -- reward ------------------------------------------------------------------------------------------------------
    reward: str = field(default="dense", metadata={"help": "Reward from sandmle.env.rewards: dense | sparse."})
    reward_kwargs: dict[str, float] | str | None = field(
        default=None,
        metadata={
            "help": 'Override reward weights, e.g. \'{"gold": 0.8, "format": 0.1}\' (JSON on the command line).'
        },
    )
    # -- sandbox / episode -----------------------------------------------------------------------------------------
    execution_timeout_s: float | None = field(
        default=None, metadata={"help": "Wall-clock limit per code execution (SandboxLimits.timeout_s; paper: 90)."}
    )
    max_output_chars: int | None = field(
        default=None, metadata={"help": "Tool output the model sees, longer output is truncated in the middle."}
    )
    memory_mb: int | None = field(default=None, metadata={"help": "Address-space limit of each sandboxed kernel."})
    kernel_threads: int | None = field(default=None, metadata={"help": "BLAS/OpenMP threads per kernel."})
    isolation: str = field(default="auto", metadata={"help": "Sandbox isolation: auto | bwrap | none."})
    pool_size: int = field(
        default=0, metadata={"help": "Warm kernels shared by the rollouts (0: a fresh kernel per episode)."}
    )
    max_episode_steps: int | None = field(
        default=None,
        metadata={
            "help": "Tool-call budget per episode stated in the prompt and enforced by the environment "
            "(default: the trainer's max_tool_calling_iterations, else the environment's default)."
        },
    )
    # -- SFT -------------------------------------------------------------------------------------------------------
    trajectories: list[str] | None = field(
        default=None,
        metadata={"help": "SFT data: rollout folders or trajectory JSONL files written by `sandmle rollout`."},
    )
    min_reward: float | None = field(
        default=None,
        metadata={"help": "Keep only trajectories whose reward is at least this (SFT-SandMLE: successes)."},
    )
    require_valid_submission: bool = field(
        default=True, metadata={"help": "Keep only trajectories that ended with a valid submission."}
    )
    # -- Hub -------------------------------------------------------------------------------------------------------
    push_checkpoints: bool = field(
        default=False,
        metadata={"help": "Also push every saved checkpoint to revision branch step-<N> of hub_model_id."},
    )

    def __post_init__(self) -> None:
        if isinstance(self.reward_kwargs, str):
            try:
                self.reward_kwargs = json.loads(self.reward_kwargs)
            except json.JSONDecodeError as exc:
                raise ValueError(f"reward_kwargs must be a JSON object, got {self.reward_kwargs!r} ({exc})") from None
        if self.reward_kwargs is not None and not isinstance(self.reward_kwargs, dict):
            raise ValueError(f"reward_kwargs must be a mapping of weight name -> number, got {self.reward_kwargs!r}")
        if self.isolation not in ("auto", "bwrap", "none"):
            raise ValueError(f"isolation must be auto, bwrap or none, got {self.isolation!r}")
        if self.max_tasks is not None and self.max_tasks < 1:
            raise ValueError(f"max_tasks must be >= 1, got {self.max_tasks}")

    def environment_config(self, max_tool_calling_iterations: int | None = None) -> Any:
        """The `EnvironmentConfig` these arguments describe (unset fields keep the environment's defaults)."""
        from sandmle.env.environment import EnvironmentConfig
        from sandmle.env.sandbox import SandboxLimits

        limit_overrides = {
            name: value
            for name, value in (
                ("timeout_s", self.execution_timeout_s),
                ("max_output_chars", self.max_output_chars),
                ("memory_mb", self.memory_mb),
                ("threads", self.kernel_threads),
            )
            if value is not None
        }
        overrides: dict[str, Any] = {
            "reward": self.reward,
            "reward_weights": dict(self.reward_kwargs or {}),
            "limits": dataclasses.replace(SandboxLimits(), **limit_overrides),
            "isolation": self.isolation,
            "pool_size": self.pool_size,
        }
        max_steps = self.max_episode_steps or max_tool_calling_iterations
        if max_steps is not None:
            overrides["max_steps"] = max_steps
        return EnvironmentConfig(**overrides)
