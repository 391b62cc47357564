"""The tiny locally built Qwen3: a tokenizer TRL recognises as Qwen3 (tool-call parsing, training template) and a
model that saves and reloads with `from_pretrained`. Nothing is downloaded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandmle.train.tiny import CONTROL_TOKENS, MARKUP_TOKENS, TinyQwen3Config, build_tiny_qwen3, qwen3_chat_template


CALL = {"type": "function", "function": {"name": "execute_python", "arguments": {"code": 'print("héllo")\nx = 1'}}}


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_qwen3(tmp_path_factory.mktemp("tiny") / "model", corpus=["import pandas as pd\n"] * 4)


@pytest.fixture(scope="module")
def tokenizer(tiny_dir: Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_dir)


def test_tokenizer_is_qwen3_shaped(tokenizer):
    assert tokenizer.eos_token == "<|im_end|>"
    assert tokenizer.pad_token == "<|endoftext|>"
    assert tokenizer.bos_token is None
    assert tokenizer.padding_side == "left"
    ids = {tokenizer.convert_tokens_to_ids(t) for t in CONTROL_TOKENS + MARKUP_TOKENS}
    assert len(ids) == len(CONTROL_TOKENS) + len(MARKUP_TOKENS)
    # Byte-level: any text round-trips exactly, markup tokens survive skip_special_tokens, control tokens do not.
    text = '<|im_start|>assistant\n<tool_call>\n{"a": "ü → 😀\\n"}\n</tool_call><|im_end|>'
    ids = tokenizer(text)["input_ids"]
    assert tokenizer.decode(ids) == text
    assert tokenizer.convert_tokens_to_ids("<tool_call>") in ids
    assert "<tool_call>" in tokenizer.decode(ids, skip_special_tokens=True)
    assert "<|im_end|>" not in tokenizer.decode(ids, skip_special_tokens=True)


def test_trl_recognises_the_qwen3_template(tokenizer):
    from trl.chat_template_utils import (
        add_response_schema,
        get_training_chat_template,
        is_chat_template_prefix_preserving,
        parse_response,
        qwen3_training_chat_template,
        supports_tool_calling,
    )

    assert tokenizer.chat_template == qwen3_chat_template()
    assert supports_tool_calling(tokenizer)
    # GRPO's tool loop needs a prefix-preserving template: TRL swaps in its Qwen3 training template.
    assert not is_chat_template_prefix_preserving(tokenizer)
    assert get_training_chat_template(tokenizer) == qwen3_training_chat_template
    add_response_schema(tokenizer)
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "hi"}], add_generation_prompt=True, chat_template=qwen3_training_chat_template
    )
    prompt_ids = prompt["input_ids"] if hasattr(prompt, "keys") else prompt
    completion = (
        "<think>\n\n</think>\n\n<tool_call>\n"
        + json.dumps(CALL["function"], ensure_ascii=False)
        + "\n</tool_call><|im_end|>"
    )
    parsed = parse_response(tokenizer, tokenizer(completion)["input_ids"], prefix=prompt_ids)
    assert parsed["tool_calls"] == [CALL]


def test_assistant_mask_covers_tool_calls_not_tool_results(tokenizer):
    from trl.chat_template_utils import qwen3_training_chat_template

    messages = [
        {"role": "user", "content": "Solve the task."},
        {"role": "assistant", "content": "", "tool_calls": [CALL]},
        {"role": "tool", "name": "execute_python", "content": "RESULT-TEXT"},
        {"role": "assistant", "content": "Done."},
    ]
    out = tokenizer.apply_chat_template(
        messages,
        chat_template=qwen3_training_chat_template,
        return_dict=True,
        return_assistant_tokens_mask=True,
    )
    ids, mask = out["input_ids"], out["assistant_masks"]
    trained = tokenizer.decode([i for i, m in zip(ids, mask, strict=True) if m])
    context = tokenizer.decode([i for i, m in zip(ids, mask, strict=True) if not m])
    assert "<tool_call>" in trained and "execute_python" in trained and "Done." in trained
    assert trained.count("<|im_end|>") == 2  # each assistant turn learns to stop
    assert "RESULT-TEXT" in context and "RESULT-TEXT" not in trained
    assert "Solve the task." not in trained


def test_model_reloads_and_generates(tiny_dir: Path, tokenizer):
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_dir)
    cfg = TinyQwen3Config()
    assert model.config.model_type == "qwen3"
    assert model.config.num_hidden_layers == cfg.num_hidden_layers and model.config.hidden_size == cfg.hidden_size
    assert model.config.vocab_size == len(tokenizer)
    assert model.config.eos_token_id == tokenizer.eos_token_id
    assert sum(p.numel() for p in model.parameters()) < 1_000_000
    prompt = tokenizer("import pandas", return_tensors="pt")
    torch.manual_seed(0)
    out = model.generate(**prompt, max_new_tokens=5, do_sample=True)
    assert out.shape[1] <= prompt["input_ids"].shape[1] + 5


def test_bad_vocab_size_is_a_clear_error(tmp_path: Path):
    with pytest.raises(ValueError, match="vocab_size must be at least"):
        build_tiny_qwen3(tmp_path, config=TinyQwen3Config(vocab_size=100))
