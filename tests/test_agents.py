"""Agents on the hand-built tabular task: the scripted baseline, and the smolagents CodeAgent / ToolCallingAgent driven
by scripted stand-in models that emit real code, all running in the sandbox and graded."""

from __future__ import annotations

import pytest

from conftest import make_tabular_task
from sandmle.agents import ScriptedAgent, build_agent
from sandmle.agents.models import ModelSpec, ModelSpecError, build_model
from sandmle.env.environment import EnvironmentConfig, SandMLEEnvironment
from sandmle.env.rewards import format_score
from sandmle.env.sandbox import SandboxLimits
from sandmle.task import Task


smolagents = pytest.importorskip("smolagents")
from smolagents.models import (  # noqa: E402
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
)

from sandmle.agents.smol import SandboxExecutor, SmolAgent, _split_final  # noqa: E402


FAST = SandboxLimits(timeout_s=60.0)
FIT_AND_WRITE = """\
import pandas as pd
from sklearn.linear_model import LogisticRegression
train, test = pd.read_csv("train.csv"), pd.read_csv("test.csv")
cols = ["soil_moisture", "canopy_temp", "leaf_nitrogen"]
train["inter"] = train.soil_moisture * train.canopy_temp
test["inter"] = test.soil_moisture * test.canopy_temp
model = LogisticRegression().fit(train[cols + ["inter"]], train.blight)
pred = model.predict_proba(test[cols + ["inter"]])[:, 1]
pd.DataFrame({"id": test.id, "blight": pred}).to_csv("submission.csv", index=False)
print("wrote", len(pred), "rows")
"""


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> Task:
    return make_tabular_task(tmp_path_factory.mktemp("agents") / "tasks")


def new_env(task: Task, scaffold: str = "tools") -> tuple[SandMLEEnvironment, str]:
    env = SandMLEEnvironment(EnvironmentConfig(limits=FAST, max_steps=10, scaffold=scaffold))
    return env, env.reset(task_dir=str(task.root))


class CannedModel(Model):
    """A smolagents Model that replays canned assistant messages (the stand-in for an LLM)."""

    def __init__(self, replies: list[ChatMessage]):
        super().__init__(model_id="canned")
        self.replies = list(replies)
        self.seen: list[list[ChatMessage]] = []

    def generate(self, messages, stop_sequences=None, response_format=None, tools_to_call_from=None, **kwargs):
        self.seen.append(messages)
        if not self.replies:
            raise RuntimeError("canned model ran out of replies")
        return self.replies.pop(0)


def assistant(text: str = "", calls: list[tuple[str, dict]] | None = None) -> ChatMessage:
    tool_calls = [
        ChatMessageToolCall(function=ChatMessageToolCallFunction(name=n, arguments=a), id=f"c{i}", type="function")
        for i, (n, a) in enumerate(calls or [])
    ]
    return ChatMessage(role=MessageRole.ASSISTANT, content=text, tool_calls=tool_calls or None)


def test_scripted_agent_writes_a_valid_submission(task: Task) -> None:
    env, prompt = new_env(task)
    with env:
        result = ScriptedAgent().run(env, prompt)
        report = env.last_report or env._grade()
        assert report.valid_submission, report.error
        assert report.score > 0.8  # the interaction is learnable: well above AUC 0.5
        assert env.get_reward() >= 0.8
        tools = [s.tool for s in env.steps]
        assert tools[:3] == ["list_files", "execute_python", "execute_python"] and "validate_submission" in tools
        assert all(s.status == "ok" for s in env.steps)
        assert format_score(result.messages, ["execute_python", "validate_submission", "list_files"]) == 1.0
        assert result.messages[0]["role"] == "user" and result.messages[-1]["role"] == "assistant"
        assert not (env.workspace / "answers.csv").exists()


def test_code_agent_runs_an_episode_in_the_sandbox(task: Task) -> None:
    model = CannedModel(
        [
            assistant(
                f"Thought: fit a model and write the submission.\n<code>\n{FIT_AND_WRITE}validate_submission()\n"
                "</code>"
            ),
            assistant('Thought: the submission is valid.\n<code>\nfinal_answer("submission written")\n</code>'),
        ]
    )
    env, prompt = new_env(task, scaffold="code")
    with env:
        assert "final_answer" in prompt
        result = SmolAgent("codeagent", model).run(env, prompt)
        assert result.error is None and result.final_answer == "submission written"
        assert [s.tool for s in env.steps] == ["execute_python", "validate_submission", "execute_python"]
        assert env.get_reward() >= 0.8 and env.last_report.valid_submission
        # The model saw the sandbox's output and the host-side validation in its observation.
        observation = str(model.seen[1][-1].content)
        assert "wrote 60 rows" in observation and "Submission is valid" in observation
        assert any(m["role"] == "assistant" and "<code>" in m["content"] for m in result.messages)


def test_code_agent_sees_errors_and_recovers(task: Task) -> None:
    model = CannedModel(
        [
            assistant("<code>\nimport pandas as pd\npd.read_csv('nope.csv')\n</code>"),
            assistant(f"<code>\n{FIT_AND_WRITE}final_answer('ok')\n</code>"),
        ]
    )
    env, prompt = new_env(task, scaffold="code")
    with env:
        result = SmolAgent("codeagent", model).run(env, prompt)
        assert result.final_answer == "ok"
        assert "FileNotFoundError" in str(model.seen[1][-1].content)
        assert [s.status for s in env.steps] == ["error", "ok"]
        assert env.last_report is None and env._grade().valid_submission


def test_tool_calling_agent_uses_the_environment_tools(task: Task) -> None:
    model = CannedModel(
        [
            assistant(calls=[("list_files", {})]),
            assistant(calls=[("execute_python", {"code": FIT_AND_WRITE})]),
            assistant(calls=[("validate_submission", {})]),
            assistant(calls=[("final_answer", {"answer": "done"})]),
        ]
    )
    env, prompt = new_env(task)
    with env:
        result = build_agent("toolcalling", model).run(env, prompt)
        assert result.error is None and result.final_answer == "done"
        assert [s.tool for s in env.steps] == ["list_files", "execute_python", "validate_submission"]
        assert env._grade().valid_submission
        calls = [m for m in result.messages if m.get("tool_calls")]
        assert calls[1]["tool_calls"][0]["function"] == {
            "name": "execute_python",
            "arguments": {"code": FIT_AND_WRITE},
        }
        tool_results = [m for m in result.messages if m["role"] == "tool"]
        assert "wrote 60 rows" in tool_results[1]["content"]


def test_executor_contract_and_final_answer_parsing(task: Task) -> None:
    env, _ = new_env(task, scaffold="code")
    with env:
        ex = SandboxExecutor(env)
        ex.send_tools({})
        ex.send_variables({"threshold": 0.5, "bad": object()})
        out = ex("print(threshold * 2)")
        assert not out.is_final_answer and "1.0" in out.logs
        out = ex("x = 3\nfinal_answer({'k': x})\nprint('never')")
        assert out.is_final_answer and out.output == "{'k': 3}" and "never" not in out.logs
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            ex("1 / 0")
    assert _split_final("plain") == ("plain", None)


def test_model_specs() -> None:
    assert ModelSpec.parse("openai:http://localhost:8000/v1:Qwen/Qwen3-8B") == ModelSpec(
        "openai", "Qwen/Qwen3-8B", "http://localhost:8000/v1"
    )
    assert ModelSpec.parse("transformers:/ckpt/policy") == ModelSpec("transformers", "/ckpt/policy")
    assert ModelSpec.parse("hf:Qwen/Qwen3-8B").kind == "hf"
    for bad in ("gpt4", "openai:Qwen3", "openai:localhost:8000:m", "nope:x", "hf:"):
        with pytest.raises(ModelSpecError):
            ModelSpec.parse(bad)
    model = build_model("openai:http://127.0.0.1:9/v1:tiny")  # no request is made at construction
    assert model.model_id == "tiny"
    with pytest.raises(ValueError, match="needs a model"):
        build_agent("codeagent")
    with pytest.raises(ValueError, match="unknown agent"):
        build_agent("gpt")


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param("text", marks=pytest.mark.slow),
        pytest.param("classification", marks=pytest.mark.slow),
        "segmentation",
        "reconstruction",
    ],
)
def test_scripted_agent_on_other_modalities(kind: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Text (TF-IDF), image classification (pixel features), segmentation (threshold -> RLE) and reconstruction
    (per-pixel rows): a valid submission that beats the sample submission."""
    from _agents_helpers import make_image_task, make_text_task

    root = tmp_path_factory.mktemp(kind)
    task = make_text_task(root) if kind == "text" else make_image_task(root, kind)
    dummy = task.grade(task.public_dir / "sample_submission.csv").score
    env = SandMLEEnvironment(EnvironmentConfig(limits=FAST, max_steps=10))
    with env:
        ScriptedAgent().run(env, env.reset(task=task))
        report = env._grade()
    assert report.valid_submission, report.error
    assert report.score < dummy if report.is_lower_better else report.score > dummy
