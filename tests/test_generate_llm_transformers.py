"""The LLM back-end on a real smolagents `TransformersModel` (a tiny random Qwen3 built locally, no download): its
answers are garbage, and the failure path must be clean: rejected with reasons, logged, no other exception."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from sandmle.generate.llm import (
    ArchitectAnswer,
    LLMRejected,
    MutagenAnswer,
    StrategistAnswer,
    make_roles,
    read_failures,
)
from sandmle.generate.pipeline import build_task


SEED_ID = "tps-may-2022"


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    pytest.importorskip("torch")
    from smolagents import TransformersModel

    from sandmle.train.tiny import TinyQwen3Config, build_tiny_qwen3

    # the prompt templates and answer schemas join the tokenizer corpus so prompts stay short on CPU
    prompts = [p.read_text() for p in resources.files("sandmle.generate.llm").joinpath("prompts").iterdir()]
    schemas = [json.dumps(m.model_json_schema(), indent=1) for m in (StrategistAnswer, MutagenAnswer, ArchitectAnswer)]
    path = build_tiny_qwen3(
        tmp_path_factory.mktemp("tiny-qwen3"), corpus=[*prompts, *schemas], config=TinyQwen3Config(vocab_size=2048)
    )
    return TransformersModel(model_id=str(path), device_map="cpu", max_new_tokens=24, do_sample=False)


def test_garbage_answers_are_rejected_cleanly(tiny_model, tmp_path):
    log = tmp_path / "failures.jsonl"
    roles = make_roles("llm", tiny_model, failure_log=log, cache_dir=tmp_path / "cache", max_attempts=2)
    with pytest.raises(LLMRejected) as info:
        build_task(SEED_ID, 0, 3, roles=roles)
    exc = info.value
    assert exc.role == "strategist" and len(exc.reasons) == 2
    assert all(r for r in exc.reasons) and "after 2 attempt(s)" in str(exc)
    records = read_failures(log)
    assert [(r.role, r.attempt) for r in records] == [("strategist", 1), ("strategist", 2)]
    assert all(not r.cached for r in records)
    # the second run replays the cached garbage: same rejection, no model call
    roles = make_roles("llm", tiny_model, failure_log=log, cache_dir=tmp_path / "cache", max_attempts=2)
    with pytest.raises(LLMRejected) as again:
        build_task(SEED_ID, 0, 3, roles=roles)
    assert again.value.reasons == exc.reasons
    assert all(r.cached for r in read_failures(log)[2:])


def test_mixed_backend_still_produces_a_task_from_garbage(tiny_model, tmp_path):
    roles = make_roles("mixed", tiny_model, failure_log=tmp_path / "f.jsonl", max_attempts=1)
    draft = build_task(SEED_ID, 0, 3, roles=roles)
    assert draft.spec.generator.backend == "procedural"
    assert {r.role for r in read_failures(tmp_path / "f.jsonl")} == {"strategist", "mutagens", "architect", "writer"}
