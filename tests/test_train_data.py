"""Training data and script arguments: corpus/Hub tasks -> GRPO prompt rows, rollout trajectories -> SFT rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _train_helpers import COPY_SAMPLE_CODE, rollout_copy_sample
from conftest import make_tabular_task
from sandmle.env.environment import EnvironmentConfig, SandMLEEnvironment
from sandmle.task import bundle_hash
from sandmle.train.configs import SandMLEScriptArguments
from sandmle.train.data import (
    TrainingDataError,
    environment_tool_schemas,
    load_tasks,
    normalize_messages,
    tasks_to_prompt_dataset,
    trajectories_to_sft_dataset,
)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    for seed in (0, 1):
        make_tabular_task(root / "train", seed=seed)
    make_tabular_task(root / "test", seed=2)
    return root


@pytest.fixture(scope="module")
def trajectories(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tasks = sorted((corpus / "train").iterdir())
    return rollout_copy_sample(tasks, tmp_path_factory.mktemp("runs"), EnvironmentConfig(max_steps=3))


# -- GRPO prompt dataset ------------------------------------------------------------------------------------------


def test_corpus_folder_splits_and_prompt_rows(corpus: Path):
    train = load_tasks(str(corpus), "train")
    assert len(train) == 2 and len(load_tasks(str(corpus), "test")) == 1
    assert len(load_tasks(str(corpus), "train", max_tasks=1)) == 1
    assert len(load_tasks(str(corpus / "train"))) == 2  # a flat folder of bundles
    ds = tasks_to_prompt_dataset(train)
    assert ds.column_names == ["prompt", "task_dir", "task_id"]
    row = ds[0]
    assert row["prompt"] == [{"role": "user", "content": ""}]
    # The row is exactly what SandMLEEnvironment.reset needs; an empty prompt gets the full task prompt.
    with SandMLEEnvironment(EnvironmentConfig(max_steps=7)) as env:
        text = env.reset(**row)
        assert env.task.task_id == row["task_id"]
    assert "Crop blight risk" in text and "At most 7 tool calls" in text
    with pytest.raises(TrainingDataError, match="no split 'validation'"):
        load_tasks(str(corpus), "validation")


def test_hub_layout_rows_are_rebuilt_into_bundles(corpus: Path, tmp_path: Path):
    from sandmle.hub import write_hub_layout

    layout = tmp_path / "layout"
    write_hub_layout(corpus, layout)
    with pytest.raises(TrainingDataError, match="cache_dir"):
        load_tasks(str(layout), "train")
    tasks = load_tasks(str(layout), "train", cache_dir=tmp_path / "cache")
    originals = {t.task_id: t for t in load_tasks(str(corpus), "train")}
    assert sorted(t.task_id for t in tasks) == sorted(originals)
    for task in tasks:
        assert task.root.parent == tmp_path / "cache" / "train"
        assert bundle_hash(task.root) == bundle_hash(originals[task.task_id].root)
    again = load_tasks(str(layout), "train", cache_dir=tmp_path / "cache")  # idempotent
    assert [t.root for t in again] == [t.root for t in tasks]


# -- SFT dataset ----------------------------------------------------------------------------------------------------


def test_rollout_trajectories_become_sft_rows(trajectories: Path):
    ds = trajectories_to_sft_dataset([trajectories.parent])
    assert len(ds) == 2 and ds.column_names == ["messages", "tools"]
    messages = ds[0]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    call = messages[1]["tool_calls"][0]["function"]
    assert call["name"] == "execute_python" and json.loads(call["arguments"]) == {"code": COPY_SAMPLE_CODE}
    assert "status: ok" in messages[2]["content"]
    assert json.loads(ds[0]["tools"]) == environment_tool_schemas()


def test_sft_filters_say_why(trajectories: Path, tmp_path: Path):
    from sandmle.rollout import Trajectory

    good = Trajectory.model_validate_json(trajectories.read_text().splitlines()[0])
    variants = [
        good.model_copy(update={"status": "agent_error"}),
        good.model_copy(update={"report": {**good.report, "valid_submission": False}}),
        good.model_copy(update={"messages": [m for m in good.messages if not m.get("tool_calls")]}),
        good,
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(v.model_dump_json() + "\n" for v in variants))
    assert len(trajectories_to_sft_dataset([path])) == 1
    assert len(trajectories_to_sft_dataset([path], require_valid_submission=False)) == 2
    with pytest.raises(TrainingDataError, match="none of the 4 trajectories passed"):
        trajectories_to_sft_dataset([path], min_reward=good.reward + 0.1)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"messages": []}\n')
    with pytest.raises(TrainingDataError, match="bad.jsonl:1: not a rollout trajectory"):
        trajectories_to_sft_dataset([bad])
    with pytest.raises(TrainingDataError, match="no such trajectory file"):
        trajectories_to_sft_dataset([tmp_path / "missing"])


def test_normalized_messages_render_like_the_original():
    """Arguments stored as a JSON string render exactly like the dict (no null-filled Arrow structs)."""
    from transformers.utils.chat_template_utils import render_jinja_template
    from trl.chat_template_utils import qwen3_training_chat_template

    original = [
        {"role": "user", "content": "task"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "execute_python", "arguments": {"code": "x = 'é'"}},
                }
            ],
        },
        {"role": "tool", "name": "execute_python", "tool_call_id": "c1", "content": "ok"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"type": "function", "function": {"name": "validate_submission", "arguments": {}}}],
        },
    ]

    def render(messages):
        return render_jinja_template([messages], chat_template=qwen3_training_chat_template)[0][0]

    assert render(normalize_messages(original)) == render(original)
    with pytest.raises(TrainingDataError, match="unknown role"):
        normalize_messages([{"role": "robot", "content": "x"}])
    with pytest.raises(TrainingDataError, match="not JSON"):
        bad_call = {"function": {"name": "f", "arguments": "{"}}
        normalize_messages([{"role": "assistant", "content": "", "tool_calls": [bad_call]}])


def test_sft_tool_schemas_render_like_trl_renders_environment_methods():
    """SFT rows carry schemas; GRPO passes the bound methods: the system prompt must be byte-identical."""
    import inspect

    from transformers.utils.chat_template_utils import render_jinja_template
    from trl.chat_template_utils import qwen3_training_chat_template

    env = SandMLEEnvironment()
    methods = [
        getattr(env, name)
        for name, _ in inspect.getmembers(SandMLEEnvironment, inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    ]
    chat = [{"role": "user", "content": "task"}]
    via_methods = render_jinja_template([chat], tools=methods, chat_template=qwen3_training_chat_template)[0][0]
    via_schemas = render_jinja_template(
        [chat], tools=environment_tool_schemas(), chat_template=qwen3_training_chat_template
    )[0][0]
    assert via_methods == via_schemas and "execute_python" in via_schemas


# -- script arguments -------------------------------------------------------------------------------------------


def test_script_arguments_map_onto_the_environment_config():
    args = SandMLEScriptArguments(
        dataset_name="x", reward="sparse", reward_kwargs='{"gold": 0.8}', execution_timeout_s=30, memory_mb=2048
    )
    cfg = args.environment_config(max_tool_calling_iterations=12)
    assert cfg.reward == "sparse" and dict(cfg.reward_weights) == {"gold": 0.8}
    assert cfg.limits.timeout_s == 30 and cfg.limits.memory_mb == 2048
    assert cfg.max_steps == 12
    assert SandMLEScriptArguments(max_episode_steps=5).environment_config(12).max_steps == 5
    default = SandMLEScriptArguments().environment_config()
    assert default.limits.timeout_s == 90 and default.max_steps == EnvironmentConfig().max_steps
    with pytest.raises(ValueError, match="reward_kwargs must be a JSON object"):
        SandMLEScriptArguments(reward_kwargs="{gold")
    with pytest.raises(ValueError, match="isolation"):
        SandMLEScriptArguments(isolation="docker")
    with pytest.raises(ValueError, match="no weight"):
        SandMLEScriptArguments(reward_kwargs={"platinum": 1.0}).environment_config()


def test_push_checkpoints_adds_the_hub_callback(tmp_path: Path):
    from transformers import TrainingArguments

    from sandmle.train.hub import PushCheckpointCallback
    from sandmle.train.runtime import add_hub_callbacks

    class Trainer:
        def __init__(self):
            self.callbacks = []

        def add_callback(self, callback):
            self.callbacks.append(callback)

    args = TrainingArguments(output_dir=str(tmp_path), hub_model_id="org/policy", use_cpu=True, report_to="none")
    trainer = Trainer()
    add_hub_callbacks(trainer, SandMLEScriptArguments(), args)
    assert trainer.callbacks == []
    add_hub_callbacks(trainer, SandMLEScriptArguments(push_checkpoints=True), args)
    assert isinstance(trainer.callbacks[0], PushCheckpointCallback) and trainer.callbacks[0].repo_id == "org/policy"


def test_recipe_default_config_and_overrides(tmp_path: Path):
    from sandmle.train.runtime import with_config

    recipe = tmp_path / "r.yaml"
    recipe.write_text("learning_rate: 1.0e-6\n")
    assert with_config(["--max_steps", "3"], recipe) == ["--config", str(recipe), "--max_steps", "3"]
    assert with_config(["--config", "other.yaml"], recipe) == ["--config", "other.yaml"]
    assert with_config(["--max_steps", "3"], None) == ["--max_steps", "3"]
    with pytest.raises(FileNotFoundError, match="recipe config"):
        with_config([], tmp_path / "missing.yaml")
