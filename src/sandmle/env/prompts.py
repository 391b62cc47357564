"""Prompt templates for an episode. One place states what an agent is told, for every scaffold.

The text follows the paper's ReAct template (Appendix D.1) in spirit: inspect the files, respect the turn and time
limits, keep output short, and write a correctly formatted ``submission.csv`` in the working directory.
"""

from __future__ import annotations

from collections.abc import Iterable

from sandmle.task import Task


SUBMISSION_FILE = "submission.csv"

SYSTEM_PROMPT = """\
You are an expert machine learning engineer solving a Kaggle-style competition inside a sandboxed Python \
environment. Work step by step: inspect the data files, build and validate a model, and write your predictions \
for the test set to `submission.csv` in the current working directory, in exactly the format of \
`sample_submission.csv`. The Python state persists between executions. numpy, pandas, scipy, scikit-learn and \
Pillow are installed; there is no internet access and you cannot install packages. Keep printed output short \
(no progress bars, no full dataframes). Ignore any dates or timelines in the description."""

TOOLS_HINT = {
    "tools": (
        "Use the `execute_python` tool to run code, `list_files` to see the workspace, and `validate_submission` "
        "to check the format of submission.csv before you finish. When the submission is valid, reply with a short "
        "summary and no tool call."
    ),
    "code": (
        "Write Python code to act. Call `validate_submission()` inside your code to check the format of "
        "submission.csv (its report is printed), and call `final_answer(...)` with a short summary once the "
        "submission is valid."
    ),
}

TASK_TEMPLATE = """\
{system}

# Task: {title}

{description}

# Workspace

Files in the current working directory:
{files}

# Limits

- At most {max_steps} tool calls; each code execution may run for at most {timeout_s:.0f} seconds.
- Output longer than {max_output_chars} characters is truncated.

{tools_hint}"""


def format_file_list(paths: Iterable[str], limit: int = 30) -> str:
    """A short listing: top-level files, and folders summarised by their file count."""
    top: dict[str, int] = {}
    for rel in sorted(paths):
        head, sep, _ = rel.partition("/")
        key = f"{head}/" if sep else head
        top[key] = top.get(key, 0) + 1
    lines = [f"- {name} ({n} files)" if name.endswith("/") else f"- {name}" for name, n in top.items()]
    if len(lines) > limit:
        lines = lines[:limit] + [f"- ... and {len(lines) - limit} more"]
    return "\n".join(lines)


def build_task_prompt(
    task: Task,
    *,
    max_steps: int,
    timeout_s: float,
    max_output_chars: int,
    scaffold: str = "tools",
    include_system: bool = True,
) -> str:
    """The user-facing task prompt: instructions, the task's description.md, the workspace listing and limits.

    ``scaffold`` is ``tools`` (TRL / ToolCallingAgent: named tools) or ``code`` (CodeAgent: functions in code).
    """
    if scaffold not in TOOLS_HINT:
        raise ValueError(f"unknown scaffold {scaffold!r}; expected one of {sorted(TOOLS_HINT)}")
    return TASK_TEMPLATE.format(
        system=SYSTEM_PROMPT if include_system else "",
        title=task.spec.title,
        description=task.description.strip(),
        files=format_file_list(
            p.relative_to(task.public_dir).as_posix() for p in task.public_dir.rglob("*") if p.is_file()
        ),
        max_steps=max_steps,
        timeout_s=timeout_s,
        max_output_chars=max_output_chars,
        tools_hint=TOOLS_HINT[scaffold],
    ).strip()
