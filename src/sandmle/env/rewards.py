"""Trajectory-level rewards, registered by name (open-r1 style): ``get_reward_fn("dense", gold=0.8)``.

A reward turns a graded episode (a `GradeReport` from the task's grader) plus a format score in [0, 1] (the share of
the agent's turns that were well-formed) into one float. Each reward declares its weights as a frozen dataclass, so
the numbers live in exactly one place and any of them can be overridden from a config file or the command line.

``dense`` (the default, matching the released SandMLE code) = ``valid * 0.2 + tier + format * 0.1`` where the tier is
the highest milestone reached: gold 0.7 | silver 0.6 | bronze 0.5 | above-median 0.1 | else 0. Its maximum is 1.0.
``sparse`` = ``format * 0.1 + gold * 0.9`` (the ablation of the paper's Section 6.2).
"""

from __future__ import annotations

import ast
import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sandmle.grading import GradeReport


@dataclass(frozen=True)
class DenseRewardWeights:
    """Milestone weights of the dense reward; only the highest tier reached counts."""

    valid: float = 0.2
    gold: float = 0.7
    silver: float = 0.6
    bronze: float = 0.5
    above_median: float = 0.1
    format: float = 0.1


@dataclass(frozen=True)
class SparseRewardWeights:
    """The sparse ablation: a gold medal or nothing (plus the format term)."""

    gold: float = 0.9
    format: float = 0.1


# A reward body: (report, format score, weights) -> named components; the reward is their sum.
RewardBody = Callable[[GradeReport, float, Any], dict[str, float]]


@dataclass(frozen=True)
class RewardSpec:
    name: str
    body: RewardBody
    weights_cls: type


REWARDS: dict[str, RewardSpec] = {}


def register_reward(name: str, weights_cls: type) -> Callable[[RewardBody], RewardBody]:
    """Register a reward body under ``name`` with its weights dataclass (the defaults live there)."""

    def deco(body: RewardBody) -> RewardBody:
        if name in REWARDS:
            raise ValueError(f"reward {name!r} is already registered")
        REWARDS[name] = RewardSpec(name, body, weights_cls)
        return body

    return deco


@dataclass(frozen=True)
class RewardFn:
    """A configured reward: call it with a report and a format score; `components` explains the number."""

    name: str
    weights: Any
    body: RewardBody

    def components(self, report: GradeReport, format_score: float) -> dict[str, float]:
        if not 0.0 <= format_score <= 1.0:
            raise ValueError(f"format_score must be in [0, 1], got {format_score}")
        return self.body(report, format_score, self.weights)

    def __call__(self, report: GradeReport, format_score: float) -> float:
        # Rounded so 0.2 + 0.7 + 0.1 is exactly 1.0 (float sums drift in the last bit).
        return round(float(sum(self.components(report, format_score).values())), 12)


def get_reward_fn(name: str = "dense", **weights: float) -> RewardFn:
    """The reward ``name`` with its default weights, any of them overridden by keyword (unknown keys raise)."""
    try:
        spec = REWARDS[name]
    except KeyError:
        raise KeyError(f"unknown reward {name!r}; known: {sorted(REWARDS)}") from None
    known = {f.name for f in dataclasses.fields(spec.weights_cls)}
    unknown = sorted(set(weights) - known)
    if unknown:
        raise ValueError(f"reward {name!r} has no weight(s) {unknown}; its weights are {sorted(known)}")
    return RewardFn(name, spec.weights_cls(**{k: float(v) for k, v in weights.items()}), spec.body)


def medal_tier(report: GradeReport) -> str:
    """The highest milestone a (valid) report reached: gold | silver | bronze | above_median | none."""
    if not report.valid_submission:
        return "none"
    for tier, hit in (
        ("gold", report.gold_medal),
        ("silver", report.silver_medal),
        ("bronze", report.bronze_medal),
        ("above_median", report.above_median),
    ):
        if hit:
            return tier
    return "none"


@register_reward("dense", DenseRewardWeights)
def dense_reward(report: GradeReport, format_score: float, w: DenseRewardWeights) -> dict[str, float]:
    tier = medal_tier(report)
    return {
        "valid": w.valid * float(report.valid_submission),
        "tier": 0.0 if tier == "none" else float(getattr(w, tier)),
        "format": w.format * format_score,
    }


@register_reward("sparse", SparseRewardWeights)
def sparse_reward(report: GradeReport, format_score: float, w: SparseRewardWeights) -> dict[str, float]:
    return {
        "gold": w.gold * float(report.valid_submission and report.gold_medal),
        "format": w.format * format_score,
    }


# ---------------------------------------------------------------------------------------------------------------
# Format: the share of assistant turns that are well-formed.


def code_is_well_formed(code: object) -> bool:
    """Non-empty Python source that parses. An action that does not even parse is a malformed turn."""
    if not isinstance(code, str) or not code.strip():
        return False
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def _tool_call_ok(call: Mapping[str, Any], tool_names: set[str] | None) -> bool:
    fn = call.get("function", call)
    name = fn.get("name")
    args = fn.get("arguments", {})
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            return False
    if not isinstance(args, dict) or not isinstance(name, str):
        return False
    if tool_names is not None and name not in tool_names:
        return False
    if name == "execute_python":
        return code_is_well_formed(args.get("code"))
    return True


def turn_is_well_formed(message: Mapping[str, Any], tool_names: Iterable[str] | None = None) -> bool:
    """An assistant chat message is well-formed when each tool call names a known tool with JSON-object arguments
    (code that parses, for ``execute_python``), or, without tool calls, when it has content and no stray
    tool-call markup (a tool call the parser could not read)."""
    names = set(tool_names) if tool_names is not None else None
    calls = message.get("tool_calls") or []
    if calls:
        return all(_tool_call_ok(c, names) for c in calls)
    content = message.get("content") or ""
    if isinstance(content, list):
        content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return bool(content.strip()) and "<tool_call>" not in content


def format_score(messages: Iterable[Mapping[str, Any]], tool_names: Iterable[str] | None = None) -> float:
    """Share of assistant turns in a chat that are well-formed (0.0 when there is no assistant turn)."""
    names = list(tool_names) if tool_names is not None else None
    turns = [m for m in messages if m.get("role") == "assistant"]
    if not turns:
        return 0.0
    return sum(turn_is_well_formed(m, names) for m in turns) / len(turns)
