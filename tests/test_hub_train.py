"""Checkpoint pushes during training: TrainingArguments settings and the per-step branch callback (HTTP stubbed)."""

from __future__ import annotations

import pytest
import torch
from datasets import Dataset
from transformers import Trainer, TrainerControl, TrainerState, TrainingArguments

from _hub_helpers import fake_hub
from sandmle.train.hub import (
    STAGING_DIR,
    PushCheckpointCallback,
    checkpoint_branch,
    push_checkpoint,
    push_to_hub_settings,
)


MODEL_REPO = "org/sandmle-tiny-grpo"


class TinyRegressor(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 1)

    def forward(self, x, labels=None):
        pred = self.linear(x).squeeze(-1)
        return {"loss": torch.nn.functional.mse_loss(pred, labels), "logits": pred}


def test_push_to_hub_settings_are_training_arguments(tmp_path):
    settings = push_to_hub_settings(MODEL_REPO, private=True, token="hf_test")
    args = TrainingArguments(output_dir=str(tmp_path), report_to=[], **{**settings, "push_to_hub": False})
    assert (args.hub_model_id, args.hub_strategy, args.hub_private_repo, args.hub_token) == (
        MODEL_REPO,
        "every_save",
        True,
        "hf_test",
    )
    assert settings["push_to_hub"] is True
    with pytest.raises(ValueError, match="hub_strategy"):
        push_to_hub_settings(MODEL_REPO, strategy="sometimes")
    with pytest.raises(ValueError, match="org/name"):
        push_to_hub_settings("no-namespace")
    assert checkpoint_branch(40) == "step-40"


def test_trainer_pushes_each_checkpoint_to_a_step_branch(tmp_path):
    data = Dataset.from_dict({"x": torch.randn(8, 4).tolist(), "labels": torch.randn(8).tolist()})
    args = TrainingArguments(
        output_dir=str(tmp_path / "run"),
        max_steps=2,
        save_steps=1,
        save_total_limit=1,  # rotation deletes checkpoint-1 while its upload may still be queued
        per_device_train_batch_size=4,
        report_to=[],
        use_cpu=True,
        **push_to_hub_settings(MODEL_REPO, private=True, token="hf_test"),  # the Trainer's own push to main too
    )
    callback = PushCheckpointCallback.from_args(args)
    with fake_hub() as fake:
        trainer = Trainer(model=TinyRegressor(), args=args, train_dataset=data, callbacks=[callback])
        trainer.train()
    repo = fake.repos[("model", MODEL_REPO)]
    assert repo.private
    assert sorted(callback.pushed) == [1, 2]
    for step in (1, 2):
        files = repo.branches[f"step-{step}"]
        assert "model.safetensors" in files and "trainer_state.json" in files
        assert f'"global_step": {step}' in files["trainer_state.json"].decode()
        assert not any(name.startswith(("optimizer", "scheduler", "rng_state")) for name in files)
        # Branch content is the checkpoint folder's bytes (checkpoint-2 is still on disk).
    final = tmp_path / "run" / "checkpoint-2" / "model.safetensors"
    assert repo.branches["step-2"]["model.safetensors"] == final.read_bytes()
    assert [c["revision"] for c in repo.commits if c["revision"] != "main"] == ["step-1", "step-2"]
    assert [p for p in fake.paths("POST") if "/branch/" in p] == [
        f"/api/models/{MODEL_REPO}/branch/step-1",
        f"/api/models/{MODEL_REPO}/branch/step-2",
    ]
    # main holds the Trainer's every_save push of the model, never our staging snapshots.
    assert "model.safetensors" in repo.branches["main"]
    assert not any(STAGING_DIR in path for path in repo.branches["main"])
    assert [p for p in fake.paths("POST") if p.endswith("/commit/main")]
    assert not (tmp_path / "run" / STAGING_DIR).exists()


def test_failed_background_push_is_raised_at_train_end(tmp_path):
    ckpt = tmp_path / "checkpoint-3"
    ckpt.mkdir()
    (ckpt / "config.json").write_text("{}")
    args = TrainingArguments(output_dir=str(tmp_path), report_to=[])
    state, control = TrainerState(global_step=3), TrainerControl()
    callback = PushCheckpointCallback(MODEL_REPO, token="hf_test")
    with fake_hub() as fake:
        fake.fail["/branch/"] = 400
        callback.on_save(args, state, control)  # queued, training would go on
        with pytest.raises(Exception, match="injected 400"):
            callback.on_train_end(args, state, control)
    assert callback.pushed == {} and ckpt.is_dir() and not (tmp_path / STAGING_DIR).exists()
    callback.on_save(args, TrainerState(global_step=7), control)  # no checkpoint-7 folder: warns, pushes nothing
    assert callback._futures == []


def test_push_checkpoint_blocking_and_missing_folder(tmp_path):
    ckpt = tmp_path / "checkpoint-5"
    ckpt.mkdir()
    (ckpt / "config.json").write_text('{"a": 1}')
    (ckpt / "optimizer.pt").write_bytes(b"big")
    with fake_hub() as fake:
        url = push_checkpoint(ckpt, MODEL_REPO, 5, token="hf_test", include_optimizer=True)
        assert url.startswith(f"https://huggingface.co/{MODEL_REPO}/commit/")
        assert set(fake.files("model", MODEL_REPO, "step-5")) >= {"config.json", "optimizer.pt"}
        # Re-pushing the same step reuses the branch (409 from create_branch is accepted).
        push_checkpoint(ckpt, MODEL_REPO, 5, token="hf_test", create_repo=False)
    with pytest.raises(FileNotFoundError, match="checkpoint-9"):
        push_checkpoint(tmp_path / "checkpoint-9", MODEL_REPO, 9)
