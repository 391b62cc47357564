"""The environment inside TRL's real GRPOTrainer (environment_factory) with a tiny local Qwen3 on CPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import make_tabular_task
from sandmle.env.environment import EnvironmentConfig, make_environment_factory
from sandmle.env.sandbox import SandboxLimits


@pytest.mark.slow
def test_grpo_trainer_drives_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("trl")
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from sandmle.train.tiny import build_tiny_qwen3

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    task = make_tabular_task(tmp_path / "tasks")
    model_dir = build_tiny_qwen3(tmp_path / "model")
    rows = [{"prompt": [{"role": "user", "content": ""}], "task_dir": str(task.root)}] * 2
    args = GRPOConfig(
        output_dir=str(tmp_path / "out"),
        max_steps=1,
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=16,
        logging_steps=1,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
        bf16=False,
    )
    factory = make_environment_factory(EnvironmentConfig(limits=SandboxLimits(timeout_s=30.0), max_steps=4))
    trainer = GRPOTrainer(
        model=str(model_dir), args=args, train_dataset=Dataset.from_list(rows), environment_factory=factory
    )
    assert sorted(t.__name__ for t in trainer.tools) == ["execute_python", "list_files", "validate_submission"]
    assert trainer.reward_func_names == ["SandMLEEnvironment"]
    trainer.train()
    logged = trainer.state.log_history[0]
    # A random policy writes no submission: the environment's reward is 0, logged under the class name.
    assert float(logged["rewards/SandMLEEnvironment/mean"]) == 0.0
    envs = trainer.environments
    assert len(envs) == 2 and all(e.task is not None and e.task.task_id == task.task_id for e in envs)
