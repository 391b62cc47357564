"""End to end on CPU: tiny Qwen3 -> SFT on rollout trajectories -> GRPO with SandMLEEnvironment -> reload.

Everything is real except the model's size: the trajectories are recorded by `sandmle.rollout` in the sandbox, the
SFT and GRPO runs go through `sandmle.train.sft` / `sandmle.train.grpo` (the recipes' code path), GRPO's tool calls
are parsed by TRL from the model's own tokens and executed in the sandbox, and rewards come from the task's grader.
This is also the issue-5 acceptance test (GRPOTrainer, 2 steps, environment_factory=SandMLEEnvironment, tiny
locally built Qwen3, CPU).

Measured on the shared 2-core dev machine (torch on 1 thread, other jobs running): 80-125 s per run (2 rollout
episodes, tiny model build, 100 SFT steps, 2 GRPO steps with 2 generations each), hence `slow`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from _train_helpers import COPY_SAMPLE_CODE, rendered_conversations, rollout_copy_sample
from conftest import make_tabular_task
from sandmle.env.environment import EnvironmentConfig


pytestmark = pytest.mark.slow

MAX_EPISODE_STEPS = 4  # the prompt states it: SFT data and GRPO episodes must use the same value


@pytest.fixture
def one_thread():
    """The tiny model is 10-30x faster on one thread than on two contended ones (measured)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _common_args(out: Path) -> list[str]:
    return [
        "--output_dir",
        str(out),
        "--use_cpu",
        "true",
        "--report_to",
        "none",
        "--seed",
        "0",
        "--dataloader_num_workers",
        "0",
        "--logging_steps",
        "1",
        "--bf16",
        "false",
    ]


def test_sft_then_grpo_on_tiny_qwen3(tmp_path: Path, one_thread):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from sandmle.train import grpo, sft
    from sandmle.train.tiny import build_tiny_qwen3

    corpus = tmp_path / "corpus"
    tasks = [make_tabular_task(corpus / "train", seed=s) for s in (0, 1)]

    # 1. Trajectories from real episodes, written by the rollout module.
    env_config = EnvironmentConfig(max_steps=MAX_EPISODE_STEPS)
    trajectories = rollout_copy_sample([t.root for t in tasks], tmp_path / "runs", env_config)
    records = [json.loads(line) for line in trajectories.read_text().splitlines()]
    assert all(r["report"]["valid_submission"] for r in records)

    # 2. A tiny Qwen3 whose tokenizer favours the texts it will see.
    tiny = build_tiny_qwen3(tmp_path / "tiny", corpus=rendered_conversations(trajectories))

    # 3. SFT until it emits the tool call (assistant-only loss, TRL's Qwen3 training template).
    sft_out = tmp_path / "sft"
    sft.main(
        [
            "--model_name_or_path",
            str(tiny),
            "--trajectories",
            str(trajectories.parent),
            "--assistant_only_loss",
            "true",
            "--max_steps",
            "100",
            "--learning_rate",
            "1e-2",
            "--lr_scheduler_type",
            "constant",
            "--per_device_train_batch_size",
            "2",
            "--max_length",
            "1024",
            "--save_strategy",
            "no",
            "--gradient_checkpointing",
            "false",
            *_common_args(sft_out),
        ]
    )
    assert (sft_out / "model.safetensors").is_file()

    # 4. GRPO, 2 steps, real sandbox episodes; capture what TRL hands to the loss.
    grpo_out = tmp_path / "grpo"
    parser = grpo.make_parser()
    script_args, training_args, model_args = parser.parse_args_and_config(
        [
            "--model_name_or_path",
            str(sft_out),
            "--dataset_name",
            str(corpus),
            "--dataset_split",
            "train",
            "--max_episode_steps",
            str(MAX_EPISODE_STEPS),
            "--max_steps",
            "2",
            "--learning_rate",
            "1e-3",
            "--num_generations",
            "2",
            "--per_device_train_batch_size",
            "2",
            "--max_completion_length",
            "128",
            "--max_tool_calling_iterations",
            "2",
            "--mask_truncated_completions",
            "true",
            "--beta",
            "0.0",
            "--save_strategy",
            "steps",
            "--save_steps",
            "2",
            *_common_args(grpo_out),
        ]
    )
    trainer = grpo.build_trainer(script_args, training_args, model_args)
    batches = []
    generate_and_score = trainer._generate_and_score_completions

    def capture(inputs):
        out = generate_and_score(inputs)
        batches.append(
            {
                "tool_mask": out.get("tool_mask"),
                "completion_mask": out["completion_mask"],
                "completion_ids": out["completion_ids"],
                "steps": [[s.to_dict() for s in env.steps] for env in trainer.environments],
                "rewards": [env.get_reward() for env in trainer.environments],
            }
        )
        return out

    trainer._generate_and_score_completions = capture
    trainer.train()
    trainer.save_model(training_args.output_dir)

    assert len(batches) == 2
    steps = [s for b in batches for episode in b["steps"] for s in episode]
    executed = [s for s in steps if s["tool"] == "execute_python"]
    # Tool calls parsed from the model's own tokens ran in the sandbox and wrote a submission.
    assert executed, "the SFT'd tiny model emitted no tool call"
    assert all(s["status"] == "ok" for s in executed)
    assert {s["code"] for s in executed} == {COPY_SAMPLE_CODE}
    assert {s["isolation"] for s in steps} <= {"bwrap", "none"}
    # Rewards from the grader: valid submission (0.2) + well-formed calls (0.1).
    rewards = [r for b in batches for r in b["rewards"]]
    assert max(rewards) == pytest.approx(0.3)
    logged = [
        h["rewards/SandMLEEnvironment/mean"]
        for h in trainer.state.log_history
        if "rewards/SandMLEEnvironment/mean" in h
    ]
    assert len(logged) == 2 and max(logged) > 0
    assert any(h.get("episode/valid_submission", 0) > 0 for h in trainer.state.log_history)
    # Tool results are in the completion but masked out of the loss; model tokens around them are not.
    tokenizer = AutoTokenizer.from_pretrained(sft_out)
    masked_any = False
    for b in batches:
        assert b["tool_mask"] is not None
        for ids, tool_mask, completion_mask in zip(
            b["completion_ids"], b["tool_mask"], b["completion_mask"], strict=True
        ):
            in_loss = (tool_mask * completion_mask).bool()
            tool_tokens = ids[(tool_mask == 0) & completion_mask.bool()]
            if len(tool_tokens):
                masked_any = True
                assert "<tool_response>" in tokenizer.decode(tool_tokens)
                assert "<tool_call>" in tokenizer.decode(ids[in_loss])
            assert "<tool_response>" not in tokenizer.decode(ids[in_loss])
    assert masked_any, "no tool result reached the loss mask"

    # 5. The checkpoint and the final model reload.
    assert (grpo_out / "checkpoint-2" / "model.safetensors").is_file()
    for folder in (grpo_out, grpo_out / "checkpoint-2"):
        model = AutoModelForCausalLM.from_pretrained(folder)
        assert model.config.model_type == "qwen3"
    assert AutoTokenizer.from_pretrained(grpo_out).chat_template == tokenizer.chat_template
