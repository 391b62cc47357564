"""smolagents scaffolds over a `SandMLEEnvironment`: a CodeAgent whose Python runs in our sandbox, and a
ToolCallingAgent whose tools are the environment's tools.

`SandboxExecutor` implements smolagents' `PythonExecutor` (``send_tools``, ``send_variables``, ``__call__`` ->
`CodeOutput`) by sending each code action to ``env.execute_python``, so every step is isolated, logged, budgeted
and graded exactly like a TRL rollout. Inside the kernel two functions are defined (re-defined before each action,
so a kernel restart after a timeout keeps them):

* ``final_answer(answer)`` prints a marker line and stops the cell; the executor turns it into ``is_final_answer``.
* ``validate_submission()`` prints a marker; after the cell the executor replaces it with the environment's
  (host-side) format check of submission.csv, which needs the private answers the sandbox cannot see.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Literal

from smolagents import CodeAgent, Model, Tool, ToolCallingAgent
from smolagents.local_python_executor import CodeOutput, PythonExecutor

from sandmle.agents.base import AgentResult, Message, assistant_message, tool_call, tool_message, user_message
from sandmle.env.environment import SandMLEEnvironment


logger = logging.getLogger(__name__)

FINAL_MARKER = "<<<SANDMLE_FINAL_ANSWER>>>"
VALIDATE_MARKER = "<<<SANDMLE_VALIDATE_SUBMISSION>>>"
AUTHORIZED_IMPORTS = ["numpy", "pandas", "scipy", "sklearn", "PIL", "os", "json", "math", "re", "collections"]

PRELUDE = f"""
class _SandmleFinalAnswer(Exception):
    pass

def final_answer(answer=None):
    import json as _json
    print({FINAL_MARKER!r} + _json.dumps(str(answer)), flush=True)
    raise _SandmleFinalAnswer("final answer given")

def validate_submission():
    print({VALIDATE_MARKER!r}, flush=True)
"""


class SandboxExecutor(PythonExecutor):
    """Runs CodeAgent actions in the environment's sandboxed kernel."""

    def __init__(self, env: SandMLEEnvironment):
        self.env = env
        self.state: dict[str, Any] = {}

    def send_tools(self, tools: dict[str, Tool]) -> None:
        foreign = sorted(set(tools) - {"final_answer"})
        if foreign:
            logger.warning("tools %s cannot run inside the sandbox and are not available to the code", foreign)

    def send_variables(self, variables: dict[str, Any]) -> None:
        safe = {}
        for key, value in variables.items():
            try:
                json.dumps(value)
            except (TypeError, ValueError):
                logger.warning("variable %r is not JSON-serialisable; not sent to the sandbox", key)
                continue
            safe[key] = value
        if safe:
            self._sandbox().run(f"import json as _json\nglobals().update(_json.loads({json.dumps(safe)!r}))")

    def __call__(self, code_action: str) -> CodeOutput:
        self._sandbox().run(PRELUDE)
        observation = self.env.execute_python(code_action)
        status = self.env.steps[-1].status
        logs, final = _split_final(observation)
        if VALIDATE_MARKER in logs:
            logs = logs.replace(VALIDATE_MARKER, self.env.validate_submission())
        if final is not None:
            # final_answer() stops the cell by raising; the step itself succeeded, so log it as such.
            step = self.env.steps[-1]
            step.status, step.observation = "ok", logs
            return CodeOutput(output=final, logs=logs, is_final_answer=True)
        if status != "ok":
            raise RuntimeError(logs)
        return CodeOutput(output=None, logs=logs, is_final_answer=False)

    def cleanup(self) -> None:
        """The environment owns the kernel; nothing to release here."""

    def _sandbox(self):
        sandbox = self.env.sandbox
        if sandbox is None:
            raise RuntimeError("the environment has no running episode: call env.reset(...) first")
        return sandbox


def _split_final(observation: str) -> tuple[str, str | None]:
    """-> (logs before the final-answer marker, the answer) or (observation, None)."""
    head, sep, tail = observation.partition(FINAL_MARKER)
    if not sep:
        return observation, None
    line = tail.splitlines()[0] if tail else '""'
    try:
        answer = json.loads(line)
    except json.JSONDecodeError:
        answer = line
    return head.rstrip(), str(answer)


class _EnvTool(Tool):
    """A smolagents Tool calling one of the environment's tool methods."""

    output_type = "string"

    def __init__(self, env: SandMLEEnvironment):
        self.env = env
        super().__init__()


class ExecutePythonTool(_EnvTool):
    name = "execute_python"
    description = (
        "Run Python code in this task's persistent, sandboxed Python kernel. The working directory holds the task "
        "files; variables persist between calls. Write predictions to submission.csv. Returns stdout/stderr."
    )
    inputs = {"code": {"type": "string", "description": "Python source code to execute."}}

    def forward(self, code: str) -> str:
        return self.env.execute_python(code)


class ValidateSubmissionTool(_EnvTool):
    name = "validate_submission"
    description = "Check that submission.csv has the right ids, columns and value types (never reveals a score)."
    inputs: dict[str, Any] = {}

    def forward(self) -> str:
        return self.env.validate_submission()


class ListFilesTool(_EnvTool):
    name = "list_files"
    description = "List the files in the working directory with their sizes."
    inputs: dict[str, Any] = {}

    def forward(self) -> str:
        return self.env.list_files()


def environment_tools(env: SandMLEEnvironment) -> list[Tool]:
    return [ExecutePythonTool(env), ValidateSubmissionTool(env), ListFilesTool(env)]


def build_code_agent(model: Model, env: SandMLEEnvironment, max_steps: int | None = None, **kwargs: Any) -> CodeAgent:
    """A smolagents CodeAgent whose code runs in ``env``'s sandbox (smolagents' default prompts and code tags)."""
    return CodeAgent(
        tools=[],
        model=model,
        executor=SandboxExecutor(env),
        additional_authorized_imports=AUTHORIZED_IMPORTS,
        max_steps=max_steps or env.config.max_steps,
        verbosity_level=kwargs.pop("verbosity_level", 0),
        **kwargs,
    )


def build_tool_calling_agent(
    model: Model, env: SandMLEEnvironment, max_steps: int | None = None, **kwargs: Any
) -> ToolCallingAgent:
    """A smolagents ToolCallingAgent over the environment's tools."""
    return ToolCallingAgent(
        tools=environment_tools(env),
        model=model,
        max_steps=max_steps or env.config.max_steps,
        verbosity_level=kwargs.pop("verbosity_level", 0),
        **kwargs,
    )


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def code_agent_messages(agent: CodeAgent) -> list[Message]:
    """The chat the CodeAgent's model saw and produced (smolagents' own rendering: observations as user turns)."""
    out: list[Message] = []
    for msg in agent.write_memory_to_messages():
        role = msg.role.value if hasattr(msg.role, "value") else str(msg.role)
        role = {"tool-call": "assistant", "tool-response": "user"}.get(role, role)
        out.append({"role": role, "content": _text(msg.content)})
    return out


def tool_agent_messages(agent: ToolCallingAgent, prompt: str) -> list[Message]:
    """The ToolCallingAgent episode as a standard tool-calling chat (assistant tool_calls + tool results)."""
    from smolagents.memory import ActionStep

    out: list[Message] = [{"role": "system", "content": agent.system_prompt}, user_message(prompt)]
    for step in agent.memory.steps:
        if not isinstance(step, ActionStep):
            continue
        text = _text(step.model_output_message.content) if step.model_output_message else ""
        calls = [
            tool_call(tc.name, tc.arguments if isinstance(tc.arguments, dict) else {"input": tc.arguments}, tc.id)
            for tc in (step.tool_calls or [])
        ]
        out.append(assistant_message(text, calls))
        result = step.observations if step.observations is not None else (str(step.error) if step.error else "")
        for call in calls:
            out.append(tool_message(call["function"]["name"], result, call["id"]))
    return out


class SmolAgent:
    """Plays an episode with a smolagents scaffold (``codeagent`` or ``toolcalling``) and a smolagents Model."""

    def __init__(
        self,
        name: Literal["codeagent", "toolcalling"],
        model: Model,
        max_steps: int | None = None,
        **agent_kwargs: Any,
    ):
        if name not in ("codeagent", "toolcalling"):
            raise ValueError(f"unknown smolagents scaffold {name!r}")
        self.name = name
        self.scaffold: Literal["tools", "code"] = "code" if name == "codeagent" else "tools"
        self.model = model
        self.max_steps = max_steps
        self.agent_kwargs = agent_kwargs

    def run(self, env: SandMLEEnvironment, prompt: str) -> AgentResult:
        if self.name == "codeagent":
            agent: CodeAgent | ToolCallingAgent = build_code_agent(
                self.model, env, self.max_steps, **self.agent_kwargs
            )
        else:
            agent = build_tool_calling_agent(self.model, env, self.max_steps, **self.agent_kwargs)
        error = None
        final = None
        try:
            answer = agent.run(prompt, reset=True)
            final = None if answer is None else str(answer)
        except Exception as exc:  # noqa: BLE001 - a model/back-end failure ends the episode, it is still graded
            error = f"{type(exc).__name__}: {exc}"
            logger.warning("%s episode failed: %s", self.name, error)
        messages = code_agent_messages(agent) if self.name == "codeagent" else tool_agent_messages(agent, prompt)
        calls = sum(1 for s in agent.memory.steps if getattr(s, "model_output_message", None) is not None)
        return AgentResult(messages=messages, final_answer=final, error=error, model_calls=calls)
