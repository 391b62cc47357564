"""What every agent scaffold shares: the result of an episode and chat-format message builders.

Messages use the chat format TRL and transformers chat templates accept (and SFT can train on directly): assistant
turns carry ``tool_calls`` (``{"type": "function", "function": {"name", "arguments": dict}}``), tool results are
``{"role": "tool", "name", "content"}`` messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from sandmle.env.environment import SandMLEEnvironment


Message = dict[str, Any]


@dataclass
class AgentResult:
    """What an agent did in one episode (the environment keeps the step log and grades)."""

    messages: list[Message] = field(default_factory=list)
    final_answer: str | None = None
    error: str | None = None
    model_calls: int = 0


class Agent(Protocol):
    """An agent plays one episode on an environment that has already been reset with a task."""

    name: str
    scaffold: Literal["tools", "code"]

    def run(self, env: SandMLEEnvironment, prompt: str) -> AgentResult: ...


def user_message(content: str) -> Message:
    return {"role": "user", "content": content}


def assistant_message(content: str, tool_calls: list[dict[str, Any]] | None = None) -> Message:
    msg: Message = {"role": "assistant", "content": content}
    if tool_calls:
        msg["tool_calls"] = tool_calls
    return msg


def tool_call(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def tool_message(name: str, content: str, call_id: str) -> Message:
    return {"role": "tool", "name": name, "tool_call_id": call_id, "content": content}


class ToolTranscript:
    """Calls an environment tool and records the assistant turn and tool result as chat messages."""

    def __init__(self, env: SandMLEEnvironment, prompt: str):
        self.env = env
        self.messages: list[Message] = [user_message(prompt)]

    def call(self, thought: str, name: str, **arguments: Any) -> str:
        call_id = f"call_{len(self.messages)}"
        self.messages.append(assistant_message(thought, [tool_call(name, arguments, call_id)]))
        result = getattr(self.env, name)(**arguments)
        self.messages.append(tool_message(name, result, call_id))
        return result

    def say(self, content: str) -> None:
        self.messages.append(assistant_message(content))
