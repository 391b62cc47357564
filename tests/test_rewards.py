"""The reward registry: every dense tier, the sparse ablation, weights as config, and the format score."""

from __future__ import annotations

import pytest

from sandmle.env.rewards import (
    REWARDS,
    DenseRewardWeights,
    format_score,
    get_reward_fn,
    medal_tier,
    register_reward,
    turn_is_well_formed,
)
from sandmle.grading import GradeReport


def report(tier: str = "none", valid: bool = True) -> GradeReport:
    """A report that reaches ``tier`` (medal flags are cumulative, like real grading)."""
    order = ["above_median", "bronze", "silver", "gold"]
    reached = set(order[: order.index(tier) + 1]) if tier in order else set()
    return GradeReport(
        competition_id="t",
        score=0.5 if valid else None,
        gold_threshold=0.9,
        silver_threshold=0.8,
        bronze_threshold=0.7,
        median_threshold=0.6,
        any_medal=bool(reached & {"bronze", "silver", "gold"}),
        gold_medal="gold" in reached,
        silver_medal="silver" in reached,
        bronze_medal="bronze" in reached,
        above_median="above_median" in reached,
        submission_exists=True,
        valid_submission=valid,
        is_lower_better=False,
        error=None if valid else "bad",
    )


@pytest.mark.parametrize(
    ("tier", "valid", "fmt", "expected"),
    [
        ("gold", True, 1.0, 1.0),
        ("silver", True, 1.0, 0.9),
        ("bronze", True, 1.0, 0.8),
        ("above_median", True, 1.0, 0.4),
        ("none", True, 1.0, 0.3),
        ("none", True, 0.5, 0.25),
        ("none", False, 1.0, 0.1),
        ("gold", False, 0.0, 0.0),  # medal flags of an invalid submission never count
        ("gold", True, 0.0, 0.9),
    ],
)
def test_dense_reward_table(tier: str, valid: bool, fmt: float, expected: float) -> None:
    assert get_reward_fn("dense")(report(tier, valid), fmt) == pytest.approx(expected)


def test_dense_counts_only_the_highest_tier_and_tops_out_at_one() -> None:
    fn = get_reward_fn()  # dense is the default
    parts = fn.components(report("gold"), 1.0)
    assert parts == pytest.approx({"valid": 0.2, "tier": 0.7, "format": 0.1})
    assert fn(report("gold"), 1.0) == 1.0


@pytest.mark.parametrize(("tier", "fmt", "expected"), [("gold", 1.0, 1.0), ("silver", 1.0, 0.1), ("none", 0.0, 0.0)])
def test_sparse_reward(tier: str, fmt: float, expected: float) -> None:
    assert get_reward_fn("sparse")(report(tier), fmt) == pytest.approx(expected)


def test_weights_are_config() -> None:
    fn = get_reward_fn("dense", gold=0.5, format=0.0)
    assert fn.weights == DenseRewardWeights(gold=0.5, format=0.0)
    assert fn(report("gold"), 1.0) == pytest.approx(0.7)
    with pytest.raises(ValueError, match="no weight"):
        get_reward_fn("dense", platinum=1.0)
    with pytest.raises(KeyError, match="unknown reward"):
        get_reward_fn("nope")
    with pytest.raises(ValueError, match="format_score"):
        get_reward_fn()(report(), 1.5)


def test_registry_is_extensible_and_rejects_duplicates() -> None:
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class W:
        bonus: float = 1.0

    @register_reward("test-valid-only", W)
    def valid_only(rep: GradeReport, fmt: float, w: W) -> dict[str, float]:
        return {"valid": w.bonus * rep.valid_submission}

    try:
        assert get_reward_fn("test-valid-only", bonus=2.0)(report(valid=True), 0.0) == 2.0
        with pytest.raises(ValueError, match="already registered"):
            register_reward("test-valid-only", W)(valid_only)
    finally:
        REWARDS.pop("test-valid-only")


def test_medal_tier() -> None:
    assert [medal_tier(report(t)) for t in ("gold", "silver", "bronze", "above_median", "none")] == [
        "gold",
        "silver",
        "bronze",
        "above_median",
        "none",
    ]
    assert medal_tier(report("gold", valid=False)) == "none"


def call(name: str, arguments: object) -> dict:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def test_format_score_counts_well_formed_assistant_turns() -> None:
    tools = ["execute_python", "validate_submission"]
    messages = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "", "tool_calls": [call("execute_python", {"code": "print(1)"})]},
        {"role": "tool", "name": "execute_python", "content": "1"},
        {"role": "assistant", "content": "", "tool_calls": [call("execute_python", {"code": "def f(:"})]},
        {"role": "assistant", "content": "", "tool_calls": [call("rm_rf", {})]},
        {"role": "assistant", "content": "", "tool_calls": [call("validate_submission", "{}")]},
        {"role": "assistant", "content": "<tool_call>{broken"},
        {"role": "assistant", "content": "Done."},
    ]
    assert format_score(messages, tools) == pytest.approx(3 / 6)
    assert format_score([{"role": "user", "content": "x"}]) == 0.0
    assert turn_is_well_formed(
        {"role": "assistant", "content": "", "tool_calls": [call("execute_python", '{"code": "x = 1"}')]}
    )
    assert not turn_is_well_formed(
        {"role": "assistant", "content": "", "tool_calls": [call("execute_python", "{not json")]}
    )
