"""`SandMLEEnvironment`: one MLE episode in a sandboxed kernel, shaped for TRL's ``GRPOTrainer(environment_factory=)``.

The TRL 1.16 contract (read from ``trl/trainer/grpo_trainer.py``) that this class implements:

* TRL calls the factory with **no arguments** (``factory()``), once at init to discover the tools and then once per
  concurrent rollout; instances are pooled and reused, ``reset`` is called before every rollout. So configuration is
  class-level (`SandMLEEnvironment.configure(...)`) or bound by `make_environment_factory(config)`.
* Tools are the **public functions of the class** (``inspect.getmembers(type(env), inspect.isfunction)``) other than
  ``reset`` and ``get_reward``; their schemas come from the type hints and Google-style docstrings. This class
  therefore has exactly three public functions besides those two: `execute_python`, `validate_submission`,
  `list_files`. Everything else is private, a property or a classmethod (classmethods are not functions on the class).
* ``reset(**row)`` receives the whole dataset row (``prompt`` included). Its string return value is appended to the
  last user message of ``prompt``. If the row's prompt already has content (the dataset states the task), ``reset``
  returns only a short workspace note; otherwise it returns the full task prompt (`prompts.build_task_prompt`).
* ``get_reward()`` (no arguments) is called once per finished rollout; TRL adds it as a reward source with weight 1
  named ``SandMLEEnvironment``. It grades ``submission.csv`` with the task's grader and the configured reward.
  The format score it uses is the share of this episode's tool calls that were well-formed (the environment only sees
  tool calls; a turn TRL could not parse ends the rollout without a call). Reward functions passed to the trainer can
  also read ``environments=`` (the per-rollout instances) and use `last_report` / `steps`.

The same episode logic backs the Gym-style API (`SandMLEGymEnv`) and the smolagents scaffolds.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import logging
import os
import shutil
import stat
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, Literal

from sandmle.env.pool import KernelPool
from sandmle.env.prompts import SUBMISSION_FILE, build_task_prompt, format_file_list
from sandmle.env.rewards import RewardFn, code_is_well_formed, get_reward_fn
from sandmle.env.sandbox import ExecResult, Sandbox, SandboxLimits
from sandmle.grading import GradeReport
from sandmle.task import Task, TaskError


logger = logging.getLogger(__name__)

# Largest submission.csv the host will read (bytes); the sandbox's file-size rlimit normally stops it far earlier.
MAX_SUBMISSION_BYTES = 256 * 1024 * 1024
TOOL_NAMES = ("execute_python", "validate_submission", "list_files")


@dataclass(frozen=True)
class EnvironmentConfig:
    """How episodes run. One object, passed to the factory or set class-wide with `SandMLEEnvironment.configure`.

    pool_size: >0 shares a warm `KernelPool` of that size (kernels with numpy/pandas/sklearn pre-imported) between
    all instances with the same limits and isolation; 0 starts a fresh kernel per episode.
    corpus_dir: where ``task_id``-only rows are looked up (``<corpus_dir>/<task_id>`` or ``<corpus_dir>/*/<task_id>``).
    materialize_dir: where Hub rows (``spec_json`` + ``public_files`` + ``private_files``) are rebuilt as bundles
    (default: a per-user cache folder under the system temp dir; an existing identical bundle is reused).
    """

    reward: str = "dense"
    reward_weights: Mapping[str, float] = field(default_factory=dict)
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    isolation: Literal["auto", "bwrap", "none"] = "auto"
    max_steps: int = 30
    pool_size: int = 0
    corpus_dir: str | None = None
    materialize_dir: str | None = None
    scaffold: Literal["tools", "code"] = "tools"

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {self.max_steps}")
        if self.pool_size < 0:
            raise ValueError(f"pool_size must be >= 0, got {self.pool_size}")
        get_reward_fn(self.reward, **dict(self.reward_weights))  # fail fast on an unknown reward or weight

    def reward_fn(self) -> RewardFn:
        return get_reward_fn(self.reward, **dict(self.reward_weights))

    @property
    def timeout_s(self) -> float:
        return self.limits.timeout_s

    @property
    def max_output_chars(self) -> int:
        return self.limits.max_output_chars


@dataclass
class StepRecord:
    """One tool call of an episode: what was asked, what came back, how long it took."""

    index: int
    tool: str
    code: str | None
    observation: str
    status: str  # ok | error | timeout | crashed | invalid | budget_exhausted
    wall_time: float
    well_formed: bool
    isolation: str
    truncated: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class EpisodeError(RuntimeError):
    """A tool or reward was requested outside an episode (call reset first)."""


# ---------------------------------------------------------------------------------------------------------------
# Warm pools are shared per (size, limits, isolation); all are closed at exit.

_POOLS: dict[str, KernelPool] = {}
_POOLS_LOCK = threading.Lock()
_LIVE: weakref.WeakSet[SandMLEEnvironment] = weakref.WeakSet()


def _pool_key(config: EnvironmentConfig) -> str:
    return repr((config.pool_size, config.limits, config.isolation))


def _shared_pool(config: EnvironmentConfig) -> KernelPool:
    key = _pool_key(config)
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None:
            pool = KernelPool(size=config.pool_size, limits=config.limits, isolation=config.isolation)
            _POOLS[key] = pool
        return pool


def close_pool(config: EnvironmentConfig) -> None:
    """Close the shared warm pool of ``config`` (if any) now, e.g. at the end of a batch of rollouts, so no kernel is
    left warming when the interpreter exits. Episodes still holding one of its kernels lose it."""
    with _POOLS_LOCK:
        pool = _POOLS.pop(_pool_key(config), None)
    if pool is not None:
        pool.close()


def close_all() -> None:
    """End every live episode and close the shared kernel pools (registered with atexit)."""
    for env in list(_LIVE):
        env._end_episode()
    with _POOLS_LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
    for pool in pools:
        try:
            pool.close()
        except Exception:  # noqa: BLE001 - best effort at interpreter exit
            logger.debug("closing kernel pool failed", exc_info=True)


atexit.register(close_all)


# ---------------------------------------------------------------------------------------------------------------
# Task resolution from a dataset row.


def _prompt_has_content(prompt: Any) -> bool:
    if isinstance(prompt, str):
        return bool(prompt.strip())
    if isinstance(prompt, list) and prompt and isinstance(prompt[-1], Mapping):
        content = prompt[-1].get("content")
        return bool(content.strip()) if isinstance(content, str) else bool(content)
    return False


def default_materialize_dir() -> Path:
    return Path(tempfile.gettempdir()) / f"sandmle-tasks-{os.getuid() if hasattr(os, 'getuid') else 'user'}"


def resolve_task(row: Mapping[str, Any], corpus_dir: str | None = None, materialize_dir: str | None = None) -> Task:
    """The task a dataset row names: ``task`` (a `Task`), ``task_dir`` (a bundle path), a Hub row (materialised
    with `sandmle.hub.materialize`, reused when already on disk) or ``task_id`` + ``corpus_dir``."""
    if isinstance(row.get("task"), Task):
        return row["task"]
    if row.get("task_dir"):
        return Task.load(row["task_dir"])
    if row.get("spec_json") and row.get("public_files") is not None and row.get("private_files") is not None:
        from sandmle.hub import materialize

        return materialize(row, Path(materialize_dir) if materialize_dir else default_materialize_dir())
    if row.get("task_id") and corpus_dir:
        root = Path(corpus_dir)
        candidates = [root / row["task_id"], *root.glob(f"*/{row['task_id']}")]
        for cand in candidates:
            if (cand / "task.json").is_file():
                return Task.load(cand)
        raise TaskError(f"task {row['task_id']!r} not found under {corpus_dir}")
    raise TaskError(
        "cannot tell which task this row is: expected a 'task_dir' column (a bundle path), a Hub row (spec_json, "
        "public_files, private_files, bundle_hash), a 'task' object, or 'task_id' with EnvironmentConfig.corpus_dir "
        f"set; got columns {sorted(row)}"
    )


def _read_regular_file(path: Path, limit: int) -> bytes | None:
    """Read a file the agent controls without following symlinks (a link to the answers would otherwise be graded
    host-side). None when missing; raises ValueError for a link, a non-regular file or an oversized file."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:  # ELOOP: a symlink
        raise ValueError(f"{path.name} must be a regular file, not a link ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{path.name} must be a regular file")
        if st.st_size > limit:
            raise ValueError(f"{path.name} is {st.st_size} bytes, over the {limit}-byte limit")
        return fh.read()


# ---------------------------------------------------------------------------------------------------------------


class SandMLEEnvironment:
    """One MLE task per episode: public files in a sandboxed workspace, Python tools, a graded reward."""

    _default_config: ClassVar[EnvironmentConfig] = EnvironmentConfig()

    def __init__(self, config: EnvironmentConfig | None = None):
        self.config = config or type(self)._default_config
        self._reward_fn = self.config.reward_fn()
        self.task: Task | None = None
        self.sandbox: Sandbox | None = None
        self.steps: list[StepRecord] = []
        self.prompt: str = ""
        self._pool: KernelPool | None = None
        self._own_workspace: Path | None = None
        self._report: GradeReport | None = None
        self._lock = threading.Lock()
        _LIVE.add(self)

    # -- configuration (classmethods: not tools) -------------------------------------------------------------

    @classmethod
    def configure(cls, config: EnvironmentConfig | None = None, **overrides: Any) -> type[SandMLEEnvironment]:
        """Set the class-wide config used by no-argument construction (TRL's ``environment_factory=cls``)."""
        base = config or cls._default_config
        cls._default_config = dataclasses.replace(base, **overrides) if overrides else base
        return cls

    # -- episode lifecycle ----------------------------------------------------------------------------------

    def reset(self, **row: Any) -> str:
        """Start an episode on the row's task; returns the prompt text TRL appends to the row's user message."""
        self._end_episode()
        self.task = None  # a row that cannot be resolved must not leave the previous task gradeable
        task = resolve_task(row, self.config.corpus_dir, self.config.materialize_dir)
        self.task = task
        self.sandbox = self._acquire_sandbox()
        shutil.copytree(task.public_dir, self.sandbox.workspace, dirs_exist_ok=True, symlinks=False)
        limits = self.config.limits
        self.prompt = build_task_prompt(
            task,
            max_steps=self.config.max_steps,
            timeout_s=limits.timeout_s,
            max_output_chars=limits.max_output_chars,
            scaffold=self.config.scaffold,
        )
        logger.debug("episode %s started in %s (isolation=%s)", task.task_id, self.sandbox.workspace, self.isolation)
        if _prompt_has_content(row.get("prompt")):
            return "\n\n" + self._workspace_note()
        return self.prompt

    def _workspace_note(self) -> str:
        return (
            f"The task files are in the current working directory:\n{self._listing()}\n"
            f"You have at most {self.config.max_steps} tool calls. Write submission.csv in the working directory."
        )

    def _acquire_sandbox(self) -> Sandbox:
        if self.config.pool_size > 0:
            self._pool = _shared_pool(self.config)
            return self._pool.acquire()
        self._pool = None
        # The sandbox creates the workspace itself (it sets owner and mode for the sandbox uid); we own its parent.
        self._own_workspace = Path(tempfile.mkdtemp(prefix="sandmle-episode-"))
        sandbox = Sandbox(
            self._own_workspace / "workspace", limits=self.config.limits, isolation=self.config.isolation
        )
        sandbox.start()
        return sandbox

    def _end_episode(self) -> None:
        """Give the kernel back (or close it) and delete a workspace we created. Safe to call repeatedly."""
        with self._lock:
            sandbox, pool, workspace = self.sandbox, self._pool, self._own_workspace
            self.sandbox, self._pool, self._own_workspace = None, None, None
            self.steps = []
            self._report = None
        if sandbox is not None:
            try:
                if pool is not None:
                    pool.release(sandbox)
                else:
                    sandbox.close()
            except Exception:  # noqa: BLE001 - cleanup must not mask the caller's error
                logger.warning("could not close the sandbox of the previous episode", exc_info=True)
        if workspace is not None:
            shutil.rmtree(workspace, ignore_errors=True)

    def _close(self) -> None:
        self._end_episode()
        self.task = None

    def __enter__(self) -> SandMLEEnvironment:
        return self

    def __exit__(self, *exc: object) -> None:
        self._close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # never raise from a finalizer
            self._end_episode()

    # -- state (properties: not tools) ----------------------------------------------------------------------

    @property
    def isolation(self) -> str:
        return self.sandbox.isolation if self.sandbox is not None else "none"

    @property
    def workspace(self) -> Path:
        return self._require_sandbox().workspace

    @property
    def steps_left(self) -> int:
        return max(0, self.config.max_steps - len(self.steps))

    @property
    def format_score(self) -> float:
        """Share of this episode's tool calls that were well-formed (0.0 before any call)."""
        if not self.steps:
            return 0.0
        return sum(s.well_formed for s in self.steps) / len(self.steps)

    @property
    def last_report(self) -> GradeReport | None:
        """The report of the latest `get_reward` / `_grade` call in this episode, if any."""
        return self._report

    # -- tools (the only public functions besides reset/get_reward) ------------------------------------------

    def execute_python(self, code: str) -> str:
        """Run Python code in this task's persistent, sandboxed Python kernel.

        The working directory holds the task files (description.md, train.csv, test.csv, sample_submission.csv, ...).
        Variables and imports persist between calls. Write your predictions to submission.csv in the working directory.

        Args:
            code: Python source code to execute. Print what you need to see; output is truncated when long.

        Returns:
            The captured stdout and stderr of the execution, followed by its status and wall time.
        """
        sandbox = self._require_sandbox()
        well_formed = code_is_well_formed(code)
        if not self.steps_left:
            return self._record("execute_python", code, _budget_message(), "budget_exhausted", 0.0, well_formed)
        if not isinstance(code, str) or not code.strip():
            return self._record(
                "execute_python",
                str(code or ""),
                "Error: `code` must be non-empty Python source.",
                "invalid",
                0.0,
                False,
            )
        self._report = None
        result: ExecResult = sandbox.run(code)
        return self._record(
            "execute_python",
            code,
            result.to_observation(),
            result.status,
            result.wall_time,
            well_formed,
            truncated=result.truncated,
        )

    def validate_submission(self) -> str:
        """Check that submission.csv in the working directory has the right format for this task.

        Checks the file exists and has the expected ids, columns and value types. It never reveals a score.

        Returns:
            "Submission is valid." with the row count, or the list of format problems to fix.
        """
        self._require_sandbox()
        if not self.steps_left:
            return self._record("validate_submission", None, _budget_message(), "budget_exhausted", 0.0, True)
        t0 = time.perf_counter()
        report = self._grade()
        if report.valid_submission:
            text = f"Submission is valid ({SUBMISSION_FILE} has the expected ids, columns and value types)."
        elif not report.submission_exists:
            text = f"No {SUBMISSION_FILE} in the working directory yet."
        else:
            text = f"Submission is invalid: {report.error}"
        return self._record("validate_submission", None, text, "ok", time.perf_counter() - t0, True)

    def list_files(self) -> str:
        """List the files in the working directory (recursively, folders summarised) with their sizes.

        Returns:
            One line per top-level file or folder.
        """
        self._require_sandbox()
        if not self.steps_left:
            return self._record("list_files", None, _budget_message(), "budget_exhausted", 0.0, True)
        return self._record("list_files", None, self._listing(with_sizes=True), "ok", 0.0, True)

    # -- reward --------------------------------------------------------------------------------------------

    def get_reward(self) -> float:
        """Grade submission.csv against the private answers and apply the configured reward."""
        report = self._grade()
        reward = self._reward_fn(report, self.format_score)
        logger.debug(
            "episode %s: reward %.3f (%s)",
            report.competition_id,
            reward,
            self._reward_fn.components(report, self.format_score),
        )
        return reward

    def _reward_components(self) -> dict[str, float]:
        return self._reward_fn.components(self._grade(), self.format_score)

    def _grade(self) -> GradeReport:
        """Grade the workspace's submission.csv (host side, never following links); cached until the next code run."""
        task = self._require_task()
        if self._report is not None:
            return self._report
        path = self._require_sandbox().workspace / SUBMISSION_FILE
        try:
            data = _read_regular_file(path, MAX_SUBMISSION_BYTES)
        except ValueError as exc:
            report = task.grade(b"")
            report = dataclasses.replace(report, submission_exists=True, valid_submission=False, error=str(exc))
        else:
            report = task.grade(path if data is None else data)
        self._report = report
        return report

    # -- helpers -------------------------------------------------------------------------------------------

    def _record(
        self,
        tool: str,
        code: str | None,
        observation: str,
        status: str,
        wall: float,
        well_formed: bool,
        truncated: bool = False,
    ) -> str:
        self.steps.append(
            StepRecord(
                len(self.steps),
                tool,
                code,
                observation,
                status,
                round(wall, 4),
                well_formed,
                self.isolation,
                truncated,
            )
        )
        return observation

    def _record_invalid_action(self, description: str) -> str:
        """Log a malformed action (used by the Gym API); it counts against the step budget and the format score."""
        self._require_sandbox()
        return self._record("invalid_action", None, f"Invalid action: {description}", "invalid", 0.0, False)

    def _listing(self, with_sizes: bool = False) -> str:
        root = self._require_sandbox().workspace
        paths = [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()]
        if not with_sizes:
            return format_file_list(p.relative_to(root).as_posix() for p in paths)
        lines = []
        for p in sorted(paths)[:200]:
            lines.append(f"{p.relative_to(root).as_posix()}  {p.stat().st_size} bytes")
        if len(paths) > 200:
            lines.append(f"... and {len(paths) - 200} more files")
        return "\n".join(lines) or "(empty)"

    def _require_sandbox(self) -> Sandbox:
        if self.sandbox is None:
            raise EpisodeError("no episode is running: call reset(task_dir=...) first")
        return self.sandbox

    def _require_task(self) -> Task:
        if self.task is None:
            raise EpisodeError("no episode is running: call reset(task_dir=...) first")
        return self.task


def _budget_message() -> str:
    return "Error: the tool-call budget of this episode is exhausted; nothing was run. Finish now."


def make_environment_factory(config: EnvironmentConfig | None = None, **overrides: Any) -> Callable[[], Any]:
    """A no-argument factory for ``GRPOTrainer(environment_factory=...)`` bound to one config (no global state)."""
    config = config or EnvironmentConfig()
    if overrides:
        config = dataclasses.replace(config, **overrides)
    return partial(SandMLEEnvironment, config)
