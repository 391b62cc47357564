"""Training data: the task corpus as a GRPO prompt dataset, and rollout trajectories as an SFT chat dataset.

GRPO rows are ``{"prompt": [{"role": "user", "content": ""}], "task_dir": ..., "task_id": ...}``. The user message
is left empty on purpose: TRL appends what ``SandMLEEnvironment.reset(**row)`` returns, and for an empty prompt that
is the full task prompt built with the *configured* limits (steps, timeout), so the prompt never disagrees with the
environment. Hub rows are first rebuilt into bundles on local disk (`sandmle.hub.materialize`), because the sandbox
copies ``public/`` from a bundle and the grader reads ``private/``.

SFT rows are ``{"messages": [...], "tools": "<JSON list of tool schemas>"}``: the episode's chat (user prompt,
assistant turns with ``tool_calls``, tool results) in the shape TRL's chat templates render, with the same tool
schemas GRPO puts in the system prompt, so an SFT'd model sees at GRPO time exactly the context it was trained on.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from sandmle.task import TASK_JSON, Task, iter_tasks


logger = logging.getLogger(__name__)

TRAJECTORY_GLOB = "*.jsonl"  # `sandmle rollout` writes <out>/trajectories.jsonl
ENVIRONMENT_METHODS = ("reset", "get_reward")  # TRL's environment contract; every other public function is a tool


class TrainingDataError(ValueError):
    """The corpus or the trajectories cannot be turned into a training set; the message says which file and why."""


# ---------------------------------------------------------------------------------------------------------------
# GRPO: tasks -> prompt rows


def _bundle_tasks(folder: Path, split: str) -> list[Task] | None:
    """Tasks of a local corpus folder (``<dir>/<split>/<id>/`` or ``<dir>/<id>/``); None if it holds no bundles."""
    if (folder / split).is_dir() and any((folder / split).glob(f"*/{TASK_JSON}")):
        return iter_tasks(folder / split)
    if any(folder.glob(f"*/{TASK_JSON}")):
        return iter_tasks(folder)
    if any(folder.glob(f"*/*/{TASK_JSON}")):
        raise TrainingDataError(f"{folder}: no split {split!r}; found {sorted(p.name for p in folder.iterdir())}")
    return None


def load_tasks(
    dataset_name: str,
    split: str = "train",
    *,
    config: str = "default",
    revision: str | None = None,
    cache_dir: Path | str | None = None,
    max_tasks: int | None = None,
) -> list[Task]:
    """The tasks of one split, as bundles on local disk.

    ``dataset_name`` is a corpus folder of bundles (used in place), a local Hub-layout folder or a Hub repo id (rows
    are rebuilt under ``cache_dir``, idempotently: an identical bundle already there is reused).
    """
    from sandmle.hub import load_corpus, materialize

    folder = Path(dataset_name)
    tasks = _bundle_tasks(folder, split) if folder.is_dir() else None
    if tasks is None:
        if cache_dir is None:
            raise TrainingDataError(f"{dataset_name}: Hub rows need a cache_dir to be rebuilt into task bundles")
        rows = load_corpus(dataset_name, split, config=config, revision=revision)
        if max_tasks is not None:
            rows = rows.select(range(min(max_tasks, len(rows))))
        out = Path(cache_dir) / split
        tasks = [materialize(row, out) for row in rows]
    if max_tasks is not None:
        tasks = tasks[:max_tasks]
    if not tasks:
        raise TrainingDataError(f"{dataset_name}: split {split!r} has no tasks")
    logger.info("loaded %d %s tasks from %s", len(tasks), split, dataset_name)
    return tasks


def tasks_to_prompt_dataset(tasks: Iterable[Task]):
    """A GRPO train dataset: one row per task with an empty user prompt and the bundle path for ``reset``."""
    from datasets import Dataset

    rows = [
        {"prompt": [{"role": "user", "content": ""}], "task_dir": str(task.root.resolve()), "task_id": task.task_id}
        for task in tasks
    ]
    if not rows:
        raise TrainingDataError("no tasks to build a prompt dataset from")
    return Dataset.from_list(rows)


# ---------------------------------------------------------------------------------------------------------------
# SFT: trajectories -> chat rows


def environment_tool_schemas(environment_cls: type | None = None) -> list[dict[str, Any]]:
    """JSON schemas of the environment's tools, discovered exactly as TRL does (public functions of the class other
    than ``reset``/``get_reward``, in `inspect.getmembers` order), so SFT and GRPO render the same system prompt."""
    from transformers.utils import get_json_schema

    if environment_cls is None:
        from sandmle.env.environment import SandMLEEnvironment

        environment_cls = SandMLEEnvironment
    return [
        get_json_schema(fn)
        for name, fn in inspect.getmembers(environment_cls, predicate=inspect.isfunction)
        if name not in ENVIRONMENT_METHODS and not name.startswith("_")
    ]


def _normalize_tool_call(call: Mapping[str, Any], where: str) -> dict[str, Any]:
    fn = call.get("function", call)
    name, arguments = fn.get("name"), fn.get("arguments", {})
    if not isinstance(name, str) or not name:
        raise TrainingDataError(f"{where}: tool call without a name: {call!r:.200}")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            raise TrainingDataError(f"{where}: tool call arguments are not JSON ({exc})") from None
    if not isinstance(arguments, dict):
        raise TrainingDataError(f"{where}: tool call arguments must be an object, got {type(arguments).__name__}")
    # Arguments travel as a JSON string: Arrow would otherwise merge every call's keys into one struct and render
    # absent keys as null. The Qwen3 template emits a string argument verbatim, exactly as `tojson` renders a dict.
    return {"type": "function", "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}


def normalize_messages(messages: Iterable[Mapping[str, Any]], where: str = "trajectory") -> list[dict[str, Any]]:
    """Chat messages in one fixed schema (role, content, tool_calls, name) that Arrow stores without surprises."""
    out = []
    for i, msg in enumerate(messages):
        role, content = msg.get("role"), msg.get("content")
        if role not in ("system", "user", "assistant", "tool"):
            raise TrainingDataError(f"{where}: message {i} has unknown role {role!r}")
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise TrainingDataError(f"{where}: message {i} content must be text, got {type(content).__name__}")
        calls = [_normalize_tool_call(c, f"{where}: message {i}") for c in msg.get("tool_calls") or []]
        out.append({"role": role, "content": content, "tool_calls": calls or None, "name": msg.get("name")})
    roles = [m["role"] for m in out]
    if "user" not in roles or "assistant" not in roles:
        raise TrainingDataError(f"{where}: needs a user and an assistant message, got roles {roles}")
    return out


def _trajectory_files(paths: Iterable[str | Path]) -> list[Path]:
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(p.rglob(TRAJECTORY_GLOB))
            if not found:
                raise TrainingDataError(f"{p}: no {TRAJECTORY_GLOB} trajectory files in this folder")
            files.extend(found)
        elif p.is_file():
            files.append(p)
        else:
            raise TrainingDataError(f"{p}: no such trajectory file or folder")
    return files


def iter_trajectories(paths: Iterable[str | Path]) -> Iterator[tuple[str, Any]]:
    """(where, `sandmle.rollout.Trajectory`) for every line of the trajectory files (folders: ``**/*.jsonl``)."""
    from pydantic import ValidationError

    from sandmle.rollout import Trajectory

    for path in _trajectory_files(paths):
        with path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                where = f"{path}:{lineno}"
                try:
                    yield where, Trajectory.model_validate_json(line)
                except ValidationError as exc:
                    raise TrainingDataError(f"{where}: not a rollout trajectory:\n{exc}") from None


def _has_tool_calls(messages: Iterable[Mapping[str, Any]]) -> bool:
    return any(m.get("role") == "assistant" and m.get("tool_calls") for m in messages)


def keep_trajectory(traj: Any, min_reward: float | None = None, require_valid: bool = True) -> str | None:
    """The SFT filter; returns why a trajectory is dropped, or None to keep it.

    Kept: completed episodes of a tool-calling scaffold (the chat has tool calls: what GRPO's tool loop emits; a
    CodeAgent's code-in-text chat is a different format), with a valid submission and at least ``min_reward``.
    """
    if traj.status != "completed":
        return f"status {traj.status}"
    if not _has_tool_calls(traj.messages):
        return "no tool calls"
    if require_valid and not traj.valid:
        return "invalid submission"
    if min_reward is not None and traj.reward < min_reward:
        return f"reward {traj.reward:.3f} < {min_reward}"
    return None


def trajectories_to_sft_dataset(
    paths: Iterable[str | Path],
    *,
    min_reward: float | None = None,
    require_valid_submission: bool = True,
    tools: list[dict[str, Any]] | None = None,
):
    """An SFT dataset (``messages`` + ``tools``) from ``sandmle rollout`` trajectories that pass `keep_trajectory`."""
    from datasets import Dataset

    tools_json = json.dumps(environment_tool_schemas() if tools is None else tools, ensure_ascii=False)
    rows, dropped = [], Counter()
    for where, traj in iter_trajectories(paths):
        reason = keep_trajectory(traj, min_reward, require_valid_submission)
        if reason is not None:
            dropped[reason.split(" ")[0] if reason.startswith("reward") else reason] += 1
            continue
        rows.append({"messages": normalize_messages(traj.messages, where), "tools": tools_json})
    if dropped:
        logger.info("SFT dataset: dropped %s", dict(dropped))
    if not rows:
        raise TrainingDataError(
            f"none of the {sum(dropped.values())} trajectories passed the filter (min_reward={min_reward}, "
            f"require_valid_submission={require_valid_submission}); dropped: {dict(dropped)}"
        )
    logger.info("SFT dataset: kept %d of %d trajectories", len(rows), len(rows) + sum(dropped.values()))
    return Dataset.from_list(rows)
