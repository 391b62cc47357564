"""The embedded default agent: no LLM, the same tools and sandbox an LLM agent uses.

It lists the files, inspects the data, runs the solution program (`scripted_solver.py`, sent as code to the
sandbox), validates the submission and, if it is invalid, falls back to a copy of ``sample_submission.csv`` (valid
by construction of every verified task) and validates again. Its transcripts are well-formed tool-calling chats,
so they double as SFT data and as a reference for what the tools return.
"""

from __future__ import annotations

import logging
from importlib import resources
from typing import Literal

from sandmle.agents.base import AgentResult, ToolTranscript
from sandmle.env.environment import SandMLEEnvironment


logger = logging.getLogger(__name__)

INSPECT_CODE = """\
import os
import pandas as pd
for name in ("train.csv", "test.csv", "sample_submission.csv"):
    frame = pd.read_csv(name)
    print(f"== {name}: {frame.shape[0]} rows x {frame.shape[1]} columns")
    print(frame.head(3).to_string(max_colwidth=30))
folders = [d for d in sorted(os.listdir(".")) if os.path.isdir(d)]
for d in folders:
    print(f"== {d}/: {len(os.listdir(d))} files, e.g. {sorted(os.listdir(d))[:3]}")
"""

FALLBACK_CODE = """\
import shutil
shutil.copyfile("sample_submission.csv", "submission.csv")
print("submission.csv reset to a copy of sample_submission.csv")
"""


def solver_source() -> str:
    """The solution program's source plus the call that runs it."""
    text = resources.files("sandmle.agents").joinpath("scripted_solver.py").read_text(encoding="utf-8")
    return text + "\n\nsubmission = solve()\n"


class ScriptedAgent:
    """Inspect -> fit (model chosen per column kind by cross-validation) -> write -> validate -> fall back."""

    name = "scripted"
    scaffold: Literal["tools", "code"] = "tools"

    def run(self, env: SandMLEEnvironment, prompt: str) -> AgentResult:
        t = ToolTranscript(env, prompt)
        t.call("Let me see which files the task provides.", "list_files")
        t.call("I will inspect the tables and the submission format.", "execute_python", code=INSPECT_CODE)
        t.call(
            "I will build features from the test columns (numbers, categories, text, images, series), pick a model "
            "per target by cross-validation and write submission.csv in the sample's format.",
            "execute_python",
            code=solver_source(),
        )
        verdict = t.call("Let me check the submission format.", "validate_submission")
        if not verdict.startswith("Submission is valid"):
            t.call(
                "The submission is not valid; I fall back to the sample submission's format and values.",
                "execute_python",
                code=FALLBACK_CODE,
            )
            verdict = t.call("Checking the fallback submission.", "validate_submission")
        final = (
            "Done: submission.csv is valid."
            if verdict.startswith("Submission is valid")
            else f"I could not produce a valid submission: {verdict}"
        )
        t.say(final)
        return AgentResult(messages=t.messages, final_answer=final)
