"""Shared pieces of the training tests: a short tool-calling agent and a tiny-model builder.

The short agent plays a real episode with real tools in the sandbox (copy the sample submission, then answer), so
its trajectories are short enough for a 2-layer model to learn on CPU in ~100 steps, and valid by construction.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from sandmle.agents.base import AgentResult, ToolTranscript
from sandmle.env.environment import EnvironmentConfig, SandMLEEnvironment


COPY_SAMPLE_CODE = 'import shutil\nshutil.copyfile("sample_submission.csv", "submission.csv")'
FINAL_ANSWER = "Done."


class CopySampleAgent:
    """One `execute_python` call that writes a valid (dummy) submission, then a final answer."""

    name = "copy-sample"
    scaffold: Literal["tools", "code"] = "tools"

    def run(self, env: SandMLEEnvironment, prompt: str) -> AgentResult:
        t = ToolTranscript(env, prompt)
        t.call("", "execute_python", code=COPY_SAMPLE_CODE)
        t.say(FINAL_ANSWER)
        return AgentResult(messages=t.messages, final_answer=FINAL_ANSWER)


def rollout_copy_sample(task_dirs: list[Path], out_dir: Path, config: EnvironmentConfig) -> Path:
    """Roll the short agent out with `sandmle.rollout` (the real trajectory writer); returns trajectories.jsonl."""
    from sandmle.rollout import TRAJECTORIES, run_rollouts

    run_rollouts(task_dirs, agent=CopySampleAgent(), out_dir=out_dir, workers=1, config=config, progress=False)
    return out_dir / TRAJECTORIES


def rendered_conversations(trajectories: Path) -> list[str]:
    """The trajectories as the chat template renders them (tools included): the tiny tokenizer's corpus."""
    import json

    from transformers.utils.chat_template_utils import render_jinja_template
    from trl.chat_template_utils import qwen3_training_chat_template

    from sandmle.train.data import environment_tool_schemas

    conversations = [json.loads(line)["messages"] for line in trajectories.read_text(encoding="utf-8").splitlines()]
    rendered, _ = render_jinja_template(
        conversations, tools=environment_tool_schemas(), chat_template=qwen3_training_chat_template
    )
    return rendered
