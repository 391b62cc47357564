"""A Gym-style ``reset/step`` API over `SandMLEEnvironment`, with MLE-Dojo-like observations.

Actions are dicts: ``{"type": "execute_code", "code": "..."}``, ``{"type": "validate"}``, ``{"type": "submit"}``.
Every action counts against ``max_steps``; ``submit`` grades ``submission.csv`` and ends the episode
(``terminated``), running out of steps grades whatever is there and ends it too (``truncated``). The reward is
trajectory-level: 0 on intermediate steps, the configured reward (`sandmle.env.rewards`) on the last one.
``current_score`` is the test score of a graded submission (only known at the end, so agents cannot hill-climb the
hidden test set mid-episode); ``best_score`` is the best such score seen in this episode.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, TypedDict

from sandmle.env.environment import EnvironmentConfig, SandMLEEnvironment, StepRecord
from sandmle.task import Task


ActionType = Literal["execute_code", "validate", "submit"]


class Observation(TypedDict):
    action_status: str  # reset | ok | error | timeout | crashed | invalid | budget_exhausted | submitted
    feedback: str
    current_score: float | None
    best_score: float | None
    steps_left: int
    isolation: str


StepResult = tuple[Observation, float, bool, bool, dict[str, Any]]


class SandMLEGymEnv:
    """``env.reset(task)`` then ``env.step(action)`` until ``terminated or truncated``."""

    def __init__(self, config: EnvironmentConfig | None = None):
        self.env = SandMLEEnvironment(config)
        self._best: float | None = None
        self._done = True

    @property
    def config(self) -> EnvironmentConfig:
        return self.env.config

    @property
    def steps(self) -> list[StepRecord]:
        return self.env.steps

    def reset(self, task: Task | str | Path | dict[str, Any]) -> Observation:
        """Start an episode; ``task`` is a `Task`, a bundle path, or a dataset row."""
        if isinstance(task, Task):
            row: dict[str, Any] = {"task": task}
        elif isinstance(task, (str, Path)):
            row = {"task_dir": str(task)}
        else:
            row = dict(task)
            row.pop("prompt", None)  # the Gym observation always carries the full task prompt
        prompt = self.env.reset(**row)
        self._best, self._done = None, False
        return self._obs("reset", prompt, None)

    def step(self, action: dict[str, Any]) -> StepResult:
        if self._done:
            raise RuntimeError("episode is over: call reset() before step()")
        kind = action.get("type") if isinstance(action, dict) else None
        if kind == "execute_code" and isinstance(action.get("code"), str):
            feedback = self.env.execute_python(action["code"])
            status = self.env.steps[-1].status
        elif kind == "validate":
            feedback = self.env.validate_submission()
            status = self.env.steps[-1].status
        elif kind == "submit":
            return self._finish(terminated=True)
        else:
            feedback = self.env._record_invalid_action(
                f"{action!r}; expected {{'type': 'execute_code', 'code': str}}, {{'type': 'validate'}} "
                "or {'type': 'submit'}"
            )
            status = "invalid"
        if not self.env.steps_left:
            obs, reward, terminated, _, info = self._finish(terminated=False)
            obs["feedback"] = feedback + "\n\n" + obs["feedback"]
            return obs, reward, terminated, True, info
        return self._obs(status, feedback, None), 0.0, False, False, {"step": self.env.steps[-1].to_dict()}

    def _finish(self, terminated: bool) -> StepResult:
        report = self.env._grade()
        reward = self.env.get_reward()
        score = report.score if report.valid_submission else None
        if score is not None and (self._best is None or _better(score, self._best, report.is_lower_better)):
            self._best = score
        self._done = True
        if report.valid_submission:
            feedback = f"Submission graded: score {score:.6g}."
        else:
            feedback = f"Submission is not valid: {report.error or 'submission.csv missing'}."
        info = {
            "report": report.to_dict(),
            "reward_components": self.env._reward_components(),
            "format_score": self.env.format_score,
        }
        return self._obs("submitted", feedback, score), reward, terminated, not terminated, info

    def _obs(self, status: str, feedback: str, current: float | None) -> Observation:
        return Observation(
            action_status=status,
            feedback=feedback,
            current_score=current,
            best_score=self._best,
            steps_left=self.env.steps_left,
            isolation=self.env.isolation,
        )

    def close(self) -> None:
        self._done = True
        self.env._close()

    def __enter__(self) -> SandMLEGymEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _better(a: float, b: float, lower_is_better: bool) -> bool:
    return a < b if lower_is_better else a > b


__all__ = ["ActionType", "Observation", "SandMLEGymEnv", "StepResult"]
