"""Agent scaffolds that play SandMLE episodes: ``scripted`` (no LLM, the embedded default), ``codeagent`` (smolagents
CodeAgent whose executor is our sandbox) and ``toolcalling`` (smolagents ToolCallingAgent over our tools).

smolagents is imported only when an LLM scaffold is built, so the scripted agent needs nothing beyond the core.
"""

from __future__ import annotations

from typing import Any

from sandmle.agents.base import Agent, AgentResult
from sandmle.agents.scripted import ScriptedAgent


AGENTS = ("scripted", "codeagent", "toolcalling")


def build_agent(name: str, model: Any = None, **kwargs: Any) -> Agent:
    """An agent by name. ``model`` is a smolagents `Model` or a spec string (`sandmle.agents.models.build_model`)."""
    if name == "scripted":
        if model is not None:
            raise ValueError("the scripted agent uses no model; drop --model or pick codeagent/toolcalling")
        return ScriptedAgent()
    if name in ("codeagent", "toolcalling"):
        if model is None:
            raise ValueError(
                f"agent {name!r} needs a model (e.g. --model openai:http://localhost:8000/v1:Qwen/Qwen3-8B)"
            )
        from sandmle.agents.models import build_model
        from sandmle.agents.smol import SmolAgent

        return SmolAgent(name, build_model(model) if isinstance(model, str) else model, **kwargs)
    raise ValueError(f"unknown agent {name!r}; expected one of {AGENTS}")


__all__ = ["AGENTS", "Agent", "AgentResult", "ScriptedAgent", "build_agent"]
