"""LLM generation back-end with a deterministic stand-in model: valid answers become verified tasks; invalid JSON,
schema violations and unsafe expressions are retried with their error and then rejected; nothing unsafe runs."""

from __future__ import annotations

import json
import os
import pickle
import threading
import time

import numpy as np
import pytest

from _generate_llm_helpers import (
    SEED_ID,
    TOUCH_FILE,
    UNSAFE_EXPRESSIONS,
    CannedModel,
    answers_for,
    architect_answer,
    mutagens_answer,
    strategist_answer,
    valid_answers,
    writer_answer,
)
from sandmle.generate.llm import (
    LLMClient,
    LLMRejected,
    LLMReviewer,
    LLMStrategist,
    TaskGenerator,
    extract_json,
    generate_tasks,
    make_roles,
    read_failures,
    render_prompt,
    uses_llm,
)
from sandmle.generate.llm.answers import ArchitectAnswer
from sandmle.generate.pipeline import Roles, build_task, generate_one
from sandmle.hidden_rule import ALLOWED_FUNCTIONS
from sandmle.metrics import METRICS
from sandmle.seeds import get_dna
from sandmle.task import bundle_hash


def _roles(answers: dict, tmp_path, backend: str = "llm", **kw) -> tuple[Roles, CannedModel]:
    model = CannedModel(answers)
    return make_roles(backend, model, failure_log=tmp_path / "failures.jsonl", **kw), model


def _with(role: str, texts: list[str]) -> dict:
    answers = valid_answers()
    answers[role] = texts
    return answers


@pytest.fixture(autouse=True)
def _no_touch_file():
    if os.path.exists(TOUCH_FILE):
        os.remove(TOUCH_FILE)
    yield
    assert not os.path.exists(TOUCH_FILE), "an unsafe expression was executed"


# ------------------------------------------------------------------------------------------------ valid answers
@pytest.mark.slow
def test_valid_answers_become_a_verified_task_in_a_corpus_build(tmp_path):
    """Canned answers -> LLM roles -> compile -> simulate -> ladder -> verify, through the corpus builder."""
    from sandmle.corpus import build_corpus
    from sandmle.task import iter_tasks

    generator = TaskGenerator("llm", llm=_canned_factory, seed_ids=(SEED_ID,), failure_log=tmp_path / "f.jsonl")
    summary = build_corpus(tmp_path / "corpus", num_train=1, num_test=0, workers=1, generate=generator, progress=False)
    assert summary.kept == {"train": 1, "test": 0} and summary.rejected == 0, summary.rejected_by_reason
    (task,) = iter_tasks(tmp_path / "corpus" / "train")
    assert task.spec.generator.backend == "llm" and task.spec.generator.model == "canned-model"
    assert {"overheating", "resonance_band", "wear_gate", "site_effect"} == set(task.spec.hidden_rule.latents)
    assert task.spec.verification["kept"] is True
    ladder = task.spec.ladder
    assert ladder["dummy"] < ladder["simple"] < ladder["strong"] < ladder["oracle"]  # roc_auc: higher is better
    assert "wind farm operator" in task.description
    assert not (tmp_path / "f.jsonl").exists()
    build = json.loads(next((tmp_path / "corpus").rglob("build.json")).read_text())
    assert build["generator"] == generator.build_id  # a resume with another model is refused


def test_valid_answers_compile_deterministically_and_the_cache_replays(tmp_path):
    cache = tmp_path / "cache"
    first = make_roles("llm", CannedModel(valid_answers()), cache_dir=cache)
    a = generate_one(SEED_ID, 0, 7, tmp_path / "a", roles=first)
    replay_model = CannedModel({})  # would raise on any call: everything must come from the cache
    b = generate_one(SEED_ID, 0, 7, tmp_path / "b", roles=make_roles("llm", replay_model, cache_dir=cache))
    assert a.task_id == b.task_id and bundle_hash(a.root) == bundle_hash(b.root)
    assert replay_model.calls == []
    c = generate_one(SEED_ID, 0, 8, tmp_path / "c", roles=first)
    assert c.task_id != a.task_id  # another task seed: other data


def test_llm_task_has_renamed_features_sizes_in_range_and_description(tmp_path):
    roles, _ = _roles(_with("architect", [architect_answer(n_total=5000)]), tmp_path)
    draft = build_task(SEED_ID, 0, 3, roles=roles, n_range=(60, 120))
    spec = draft.spec
    assert spec.n_total == 120  # clamped to the configured range
    names = {f.name for f in spec.features}
    assert {"gearbox_temp_c", "site_type", "record_number"} <= names  # decoy_features mutagen adds decoys
    assert {f.name: f.role for f in spec.features}["ambient_humidity_pct"] == "noise"  # unused by the rule
    description = draft.public["description.md"].decode()
    assert "wind farm operator" in description and "## Submission format" in description
    for latent in spec.hidden_rule.latents:
        assert latent not in description


# ---------------------------------------------------------------------------------------------- bad answers
def _rejected(tmp_path, role: str, texts: list[str]) -> tuple[LLMRejected, CannedModel]:
    roles, model = _roles(_with(role, texts), tmp_path)
    with pytest.raises(LLMRejected) as info:
        build_task(SEED_ID, 0, 3, roles=roles)
    assert info.value.role == role
    return info.value, model


def _assert_fed_back(model: CannedModel, role: str, reasons: list[str]) -> None:
    convs = model.calls_for(role)
    assert len(convs) == len(reasons) == 3
    for attempt, conv in enumerate(convs[1:], start=1):
        assert reasons[attempt - 1] in conv[-1]  # the previous error is in the retry prompt
        assert "rejected" in conv[-1]


def test_invalid_json_is_retried_with_the_error_then_rejected(tmp_path):
    bad = ["Sure! Here is the design: {title: 'no quotes'", '```json\n{"title": "x",\n```', "I cannot help."]
    exc, model = _rejected(tmp_path, "architect", bad)
    assert all("not valid JSON" in r or "no '{'" in r for r in exc.reasons), exc.reasons
    _assert_fed_back(model, "architect", exc.reasons)
    records = read_failures(tmp_path / "failures.jsonl")
    assert [(r.role, r.attempt) for r in records] == [("architect", 1), ("architect", 2), ("architect", 3)]
    assert records[0].excerpt.startswith("Sure! Here is the design")
    assert "after 3 attempt(s)" in str(exc)


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ({"metric": "rmse"}, "does not fit formulation"),
        ({"metric": "made_up_metric"}, "does not fit formulation"),
        ({"noise_fraction": 5.0}, "noise_fraction"),
        ({"features": [{"name": "bad name!", "kind": "numeric"}] * 3}, "features.0.name"),
        ({"components": [{"name": "c", "expression": "gearbox_temp_c", "weight": 0.0}] * 2}, "weight"),
        ({"surprise_field": 1}, "surprise_field"),
    ],
)
def test_schema_violations_are_retried_with_the_error_then_rejected(tmp_path, override, expected):
    exc, model = _rejected(tmp_path, "architect", [architect_answer(**override)])
    assert all(expected in r for r in exc.reasons), exc.reasons
    _assert_fed_back(model, "architect", exc.reasons)


def _component(expression: str) -> list[dict]:
    return [
        {"name": "evil", "expression": expression, "weight": 1.0},
        {"name": "fine", "expression": "tanh(gearbox_temp_c - 60) + rotor_speed_rpm", "weight": 1.0},
    ]


@pytest.mark.parametrize("expression", UNSAFE_EXPRESSIONS)
def test_unsafe_expressions_are_rejected_and_never_executed(tmp_path, expression):
    exc, model = _rejected(tmp_path, "architect", [architect_answer(components=_component(expression))])
    assert all("allowed" in r or "private/dunder" in r for r in exc.reasons), exc.reasons
    assert all("latent 'evil'" in r for r in exc.reasons)
    _assert_fed_back(model, "architect", exc.reasons)
    assert not os.path.exists(TOUCH_FILE)


def test_unsafe_names_in_features_and_scenarios_are_rejected(tmp_path):
    evil = json.loads(architect_answer())
    evil["features"][0]["name"] = "__import__('os').system('touch /tmp/sandmle_llm_pwned')"
    exc, _ = _rejected(tmp_path, "architect", [json.dumps(evil)])
    assert all("features.0.name" in r for r in exc.reasons)
    scen = json.loads(strategist_answer())
    scen["scenarios"][0]["targets"] = ["().__class__"]
    exc, _ = _rejected(tmp_path, "strategist", [json.dumps(scen)])
    assert all("must be identifiers" in r for r in exc.reasons)


def test_rule_must_use_declared_features_and_carry_signal(tmp_path):
    unknown = _component("secret_column * 2")
    exc, _ = _rejected(tmp_path, "architect", [architect_answer(components=unknown)])
    assert "unknown variable 'secret_column'" in exc.reasons[0] and "allowed variables:" in exc.reasons[0]
    constant = _component("where(gearbox_temp_c > 5000, 1.0, 0.0)")
    exc, _ = _rejected(tmp_path, "architect", [architect_answer(components=constant)])
    assert "constant over the declared feature distributions" in exc.reasons[0]


def test_strategist_and_mutagen_answers_are_checked_against_the_dna(tmp_path):
    one_scenario = json.dumps({"scenarios": json.loads(strategist_answer())["scenarios"][:1]})
    exc, _ = _rejected(tmp_path, "strategist", [one_scenario])
    assert "expected 5 scenarios" in exc.reasons[0]
    wrong_modality = json.dumps({"modality": "image", "mutagens": json.loads(mutagens_answer())["mutagens"]})
    exc, _ = _rejected(tmp_path, "mutagens", [wrong_modality])
    assert "modality detected as 'image'" in exc.reasons[0]
    blur = json.dumps({"modality": "tabular", "mutagens": [{"name": "blur", "strength": 0.5}] * 3})
    exc, _ = _rejected(tmp_path, "mutagens", [blur])
    assert "inapplicable mutagens" in exc.reasons[0]


def test_writer_may_not_leak_the_hidden_rule(tmp_path):
    leak = json.dumps({"overview": "Predict failure_next_week. " + "The resonance_band of the rotor matters. " * 3})
    exc, _ = _rejected(tmp_path, "writer", [leak])
    assert "reveals generation internals" in exc.reasons[0] and "resonance_band" in exc.reasons[0]


def test_a_bad_answer_then_a_good_one_is_accepted(tmp_path):
    roles, model = _roles(_with("architect", ["{not json", architect_answer()]), tmp_path)
    draft = build_task(SEED_ID, 0, 3, roles=roles)
    assert draft.spec.generator.backend == "llm"
    assert len(model.calls_for("architect")) == 2
    assert [r.attempt for r in read_failures(tmp_path / "failures.jsonl")] == [1]
    # the data does not depend on how many answers were rejected first
    clean, _ = _roles(valid_answers(), tmp_path)
    assert build_task(SEED_ID, 0, 3, roles=clean).spec == draft.spec


def test_model_errors_are_rejections_not_crashes(tmp_path):
    class Broken(CannedModel):
        def generate(self, messages, **kwargs):
            raise ConnectionError("server unreachable")

    roles = make_roles("llm", Broken({}), failure_log=tmp_path / "f.jsonl", max_attempts=2)
    with pytest.raises(LLMRejected, match="model call failed: ConnectionError: server unreachable"):
        build_task(SEED_ID, 0, 3, roles=roles)
    assert len(read_failures(tmp_path / "f.jsonl")) == 2


# ------------------------------------------------------------------------------------------ mixed back-end
def test_mixed_backend_falls_back_to_procedural_roles_on_rejection(tmp_path):
    roles, _ = _roles(_with("architect", ["nonsense"]), tmp_path, backend="mixed")
    draft = build_task(SEED_ID, 0, 3, roles=roles)
    assert draft.spec.generator.backend == "procedural"  # the procedural architect designed it
    assert draft.spec.scenario == "wind-energy-failure"  # from the LLM strategist
    assert len(read_failures(tmp_path / "failures.jsonl")) == 3


def test_task_generator_alternates_backends_by_task_seed_and_pickles(tmp_path):
    shares = [uses_llm(s, 0.5) for s in range(400)]
    assert 150 < sum(shares) < 250 and shares == [uses_llm(s, 0.5) for s in range(400)]
    gen = TaskGenerator("mixed", llm=_canned_factory, llm_share=0.5, modalities=("tabular",))
    clone = pickle.loads(pickle.dumps(gen))
    backends = {"llm": 0, "procedural": 0}
    for seed in range(12):
        roles = clone.roles_for(seed)
        backends["llm" if uses_llm(seed, 0.5) else "procedural"] += 1
        assert (type(roles.architect).__name__ == "WithFallback") == uses_llm(seed, 0.5)
    assert all(backends.values())
    with pytest.raises(ValueError, match="needs llm="):
        TaskGenerator("llm")
    with pytest.raises(ValueError, match="unknown backend"):
        make_roles("gpt")
    with pytest.raises(ValueError, match="needs an LLM"):
        make_roles("llm")


def _canned_factory() -> CannedModel:
    return CannedModel(valid_answers())


def test_generate_tasks_with_threads_respects_the_concurrency_limit(tmp_path):
    class Slow(CannedModel):
        active = peak = 0
        guard = threading.Lock()

        def generate(self, messages, **kwargs):
            with self.guard:
                Slow.active += 1
                Slow.peak = max(Slow.peak, Slow.active)
            time.sleep(0.02)
            try:
                return super().generate(messages, **kwargs)
            finally:
                with self.guard:
                    Slow.active -= 1

    gen = TaskGenerator("llm", llm=lambda: Slow(valid_answers()), max_concurrency=1, seed_ids=(SEED_ID,))
    tasks, failures = generate_tasks(gen, 3, seed=5, out_dir=tmp_path / "out", workers=3, progress=False)
    assert Slow.peak == 1 and not failures
    assert len({t.task_id for t in tasks}) == 3 and all(t.spec.generator.backend == "llm" for t in tasks)
    # a DNA the canned answers do not fit: each task fails with the rejection reasons, the batch goes on
    gen = TaskGenerator("llm", llm=lambda: CannedModel(valid_answers()), seed_ids=("aerial-cactus",))
    tasks, failures = generate_tasks(gen, 2, seed=5, out_dir=tmp_path / "img", workers=2, progress=False)
    assert tasks == [] and set(failures) == {0, 1}
    assert all("an image scenario needs subject" in reason for reason in failures.values())


# ---------------------------------------------------------------------------------------- client and prompts
def test_extract_json_strips_fences_and_thinking():
    assert extract_json('<think>maybe {"a": 0}</think>\n```json\n{"a": 1}\n```') == {"a": 1}
    assert extract_json('Here you go: {"a": [1, 2]} hope it helps') == {"a": [1, 2]}
    with pytest.raises(ValueError, match="not valid JSON"):
        extract_json("{'a': 1}")
    with pytest.raises(ValueError, match="empty"):
        extract_json("   ")


def test_prompts_carry_schema_and_allowed_vocabulary(tmp_path):
    roles, model = _roles(valid_answers(), tmp_path)
    build_task(SEED_ID, 0, 3, roles=roles)
    system, user = model.calls_for("architect")[0][:2]
    assert "Synthetic Data Architect" in system
    for fn in ALLOWED_FUNCTIONS:
        assert fn in system
    assert json.dumps(ArchitectAnswer.model_json_schema(), indent=1) in user
    assert "roc_auc, log_loss, accuracy, macro_f1" in user
    mut_user = model.calls_for("mutagens")[0][1]
    assert "missing_values, outliers, label_noise, class_imbalance, covariate_shift, decoy_features" in mut_user
    for metric in ("roc_auc",):
        assert metric in METRICS
    with pytest.raises(KeyError):
        render_prompt("writer", title="only one value")


@pytest.mark.parametrize(
    "refusal",
    [
        ValueError("Transformers does not support structured outputs"),
        RuntimeError("Error code: 400 - 'response_format' of type 'json_schema' is not supported"),
    ],
)
def test_structured_output_is_requested_where_supported_and_dropped_where_refused(refusal):
    seen: list = []

    class Refuses(CannedModel):
        def generate(self, messages, response_format=None, **kwargs):
            seen.append(response_format)
            if response_format is not None:
                raise refusal
            return super().generate(messages, **kwargs)

    client = LLMClient(Refuses(valid_answers()), structured=True)
    dna = get_dna(SEED_ID)
    scenarios = LLMStrategist(client).propose(dna, 5, np.random.default_rng(0))
    assert len(scenarios) == 5 and client.structured is False
    assert seen[0]["json_schema"]["schema"]["title"] == "StrategistAnswer" and seen[1] is None


def test_llm_strategist_extracts_dna_from_a_description():
    dna_json = get_dna(SEED_ID).model_dump(mode="json")
    bad = {**dna_json, "metric": "rmse"}
    model = CannedModel({"dna": [json.dumps(bad), json.dumps(dna_json)]})
    dna = LLMStrategist(LLMClient(model)).extract_dna("# Predict machine state\nScored with AUC.", "tps")
    assert dna == get_dna(SEED_ID)
    assert "does not fit formulation" in model.calls_for("dna")[1][-1]


def test_reviewer_proposes_a_bounded_fix(tmp_path):
    roles, _ = _roles(valid_answers(), tmp_path)
    spec = build_task(SEED_ID, 0, 3, roles=roles).spec
    spec = spec.model_copy(
        update={
            "ladder": {"dummy": 0.5, "simple": 0.9, "strong": 0.88, "oracle": 0.95},
            "verification": {"reasons": ["non_monotonic_ladder: strong <= simple"]},
        }
    )
    answer = {"diagnosis": "strong ties simple: too little noise", "action": "rescale_noise", "noise_scale": 1.5}
    model = CannedModel({"reviewer": [json.dumps({**answer, "noise_scale": 40}), json.dumps(answer)]})
    fixed = LLMReviewer(LLMClient(model)).review(spec)
    assert fixed is not None and fixed.hidden_rule.noise_std == pytest.approx(spec.hidden_rule.noise_std * 1.5, 1e-3)
    assert fixed.ladder == {} and fixed.compute_task_id() != spec.compute_task_id()
    assert "non_monotonic_ladder" in model.calls_for("reviewer")[0][1]
    drop = CannedModel({"reviewer": [json.dumps({"diagnosis": "grader is broken", "action": "drop"})]})
    assert LLMReviewer(LLMClient(drop)).review(spec) is None


def test_writer_answer_is_used_with_exact_evaluation_sections(tmp_path):
    roles, _ = _roles(valid_answers(), tmp_path)
    draft = build_task(SEED_ID, 0, 3, roles=roles)
    text = draft.public["description.md"].decode()
    assert json.loads(writer_answer())["overview"].split("\n")[0] in text
    assert "ROC-AUC" in text and "sample_submission.csv" in text


@pytest.mark.parametrize(
    "seed_id",
    [
        "spaceship-titanic",
        "forest-cover",
        "otto-products",
        "wine-quality",
        "ps-s3e18",
        "taxi-fare",
        "house-prices",
        "transparent-conductors",
    ],
)
def test_every_compiled_formulation_and_metric_simulates(tmp_path, seed_id):
    import io

    import pandas as pd

    dna = get_dna(seed_id)
    roles, _ = _roles(answers_for(dna), tmp_path)
    draft = build_task(dna, 0, 11, roles=roles)
    spec = draft.spec
    assert spec.generator.backend == "llm" and spec.grading.metric == dna.metric
    train = pd.read_csv(io.BytesIO(draft.public["train.csv"]))
    answers = pd.read_csv(io.BytesIO(draft.private["answers.csv"]))
    for col in spec.grading.answer_columns:
        assert col in train.columns and col in answers.columns
        if dna.formulation in ("binary", "multilabel", "multiclass"):
            assert train[col].nunique() >= 2  # every class is present, the calibration worked
        else:
            assert train[col].std() > 0 and (
                dna.metric not in ("rmsle", "mean_columnwise_rmsle") or train[col].min() > 0
            )
    sample = pd.read_csv(io.BytesIO(draft.public["sample_submission.csv"]))
    assert list(sample.columns) == [spec.grading.id_column, *spec.grading.submission_columns]


def test_unsupported_dnas_go_to_the_fallback_architect(tmp_path):
    dna = get_dna("hm-fashion")  # ranking with map_at_k: not compiled from LLM answers
    model = CannedModel({})
    from sandmle.generate.llm import LLMArchitect, LLMClient
    from sandmle.generate.pipeline import scenarios_for

    scenario = scenarios_for(dna)[0]
    spec = LLMArchitect(LLMClient(model)).design(dna, scenario, [], np.random.default_rng(0))
    assert spec.generator.backend == "procedural" and model.calls == []


def test_cli_options_build_the_generator_both_commands_use(tmp_path):
    """`sandmle generate` and `sandmle build-corpus` share the back-end options and the generator they describe."""
    import argparse

    from sandmle.agents.models import ModelSpecError
    from sandmle.commands._backend import add_backend_arguments, llm_generator

    parser = argparse.ArgumentParser()
    add_backend_arguments(parser)
    parser.add_argument("--modalities", nargs="+")
    spec = "openai:http://localhost:8000/v1:Qwen/Qwen3-8B"
    args = parser.parse_args(["--backend", "mixed", "--llm", spec, "--llm-share", "0.25", "--modalities", "tabular"])
    gen = llm_generator(args, tmp_path)
    assert (gen.backend, gen.llm, gen.llm_share, gen.modalities) == ("mixed", spec, 0.25, ("tabular",))
    assert (gen.cache_dir, gen.failure_log) == (tmp_path / ".llm_cache", tmp_path / "llm_failures.jsonl")
    custom = llm_generator(args, tmp_path, cache_dir=tmp_path / "c", max_concurrency=2)
    assert (custom.cache_dir, custom.max_concurrency) == (tmp_path / "c", 2)
    with pytest.raises(ValueError, match="needs --llm"):
        llm_generator(parser.parse_args(["--backend", "llm"]), tmp_path)
    with pytest.raises(ModelSpecError):
        llm_generator(parser.parse_args(["--backend", "llm", "--llm", "nonsense"]), tmp_path)
