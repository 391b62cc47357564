"""The hidden-rule language: evaluation semantics and rejection of everything outside the whitelist."""

from __future__ import annotations

import numpy as np
import pytest

from sandmle.hidden_rule import HiddenRuleError, compile_hidden_rule, parse, referenced_names
from sandmle.task import HiddenRule


ENV = {
    "a": np.array([1.0, -1.0, 2.0, 0.0]),
    "b": np.array([0.5, 2.0, 3.0, -1.0]),
    "region": np.array(["north", "south", "east", "north"], dtype=object),
}
VARS = list(ENV)


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("a + 2 * b - 1", [1.0, 2.0, 7.0, -3.0]),
        ("a / 0", [0.0, 0.0, 0.0, 0.0]),  # protected division
        ("a ** 2", [1.0, 1.0, 4.0, 0.0]),
        ("where(a > 0, b, -b)", [0.5, -2.0, 3.0, 1.0]),
        ("b if a > 0 else 0", [0.5, 0.0, 3.0, 0.0]),
        ("(a > 0) and (b < 1)", [1.0, 0.0, 0.0, 0.0]),
        ("not (a > 0) or b > 2", [0.0, 1.0, 1.0, 1.0]),
        ("0 <= a < 2", [1.0, 0.0, 0.0, 1.0]),
        ("lookup(region, {'north': 1.5, 'south': -2})", [1.5, -2.0, 0.0, 1.5]),
        ("lookup(region, {'north': 1}, 7)", [1.0, 7.0, 7.0, 1.0]),
        ("region == 'north'", [1.0, 0.0, 0.0, 1.0]),
        ("step(a, 0.5) + threshold(b)", [2.0, 1.0, 2.0, 0.0]),
        ("clip(a, -0.5, 1.5) + minimum(a, b) * 0 + maximum(a, 0)", [2.0, -0.5, 3.5, 0.0]),
        ("abs(a) + sqrt(-1) + log(0) * 0", [1.0, 1.0, 2.0, 0.0]),
        ("sigmoid(0 * a)", [0.5, 0.5, 0.5, 0.5]),
        ("3", [3.0, 3.0, 3.0, 3.0]),
    ],
)
def test_evaluates_like_numpy(expr: str, expected: list[float]) -> None:
    out = parse(expr, VARS).evaluate(ENV)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, expected, atol=1e-9)


def test_functions_and_finiteness() -> None:
    out = parse("exp(1000 * a) + log1p(b) + tanh(a) + sin(a) + cos(b)", VARS).evaluate(ENV)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(parse("exp(a)", VARS).evaluate(ENV), np.exp(ENV["a"]))


def test_referenced_names() -> None:
    assert referenced_names("a * 2 + lookup(region, {'x': 1})", VARS) == {"a", "region"}
    assert parse("1 + 2", VARS).referenced_names == frozenset()


MALICIOUS = [
    "__import__('os')",
    "__import__('os').system('echo hi')",
    "().__class__",
    "().__class__.__bases__[0].__subclasses__()",
    "open('/etc/passwd')",
    "eval('1')",
    "exec('x = 1')",
    "compile('1', 'f', 'eval')",
    "getattr(a, 'shape')",
    "globals()",
    "lambda x: x",
    "(lambda: 1)()",
    "10**10**10",
    "a ** b",
    "2 ** 100",
    "9" * 400,
    "1e308 * 10",
    "a.real",
    "a[0]",
    "[x for x in a]",
    "{x: 1 for x in a}",
    "(x for x in a)",
    "{1, 2}",
    "[1, 2]",
    "(1, 2)",
    "f'{a}'",
    "b'bytes'",
    "__builtins__",
    "_private",
    "unknown_name + 1",
    "foo(a)",
    "np.exp(a)",
    "where(a, b)",
    "clip(a, lo=0, hi=1)",
    "abs(*[a])",
    "lookup(region, {'x': a})",
    "lookup('north', {'x': 1})",
    "lookup(region, {**{}})",
    "a if True else b",
    "a < 'x'",
    "a @ b",
    "a << 2",
    "~a",
    "a | b",
    "(y := 3)",
    "import os",
    "a; b",
    "",
    "   ",
    "a +",
    "+".join(["a"] * 700),
    "(" * 60 + "a" + ")" * 60 + " + " + "-" * 60 + "a",
    "sin(" * 50 + "a" + ")" * 50,
    "await a",
    "yield a",
    "...",
    "None",
]


@pytest.mark.parametrize("expr", MALICIOUS)
def test_rejects_everything_outside_the_language(expr: str) -> None:
    with pytest.raises(HiddenRuleError):
        parse(expr, VARS)


@pytest.mark.parametrize(
    ("expr", "needle"),
    [
        ("__import__('os')", "__import__"),
        ("().__class__", "Attribute"),
        ("lambda x: x", "Lambda"),
        ("10**10**10", "exponent"),
        ("a[0]", "Subscript"),
        ("open('x')", "'open' is not allowed"),
        ("zzz + 1", "unknown variable 'zzz'"),
        ("1e300", "numeric literal"),
    ],
)
def test_error_names_the_offending_construct(expr: str, needle: str) -> None:
    with pytest.raises(HiddenRuleError, match=None) as info:
        parse(expr, VARS)
    assert needle in str(info.value)


def test_non_string_and_missing_values() -> None:
    with pytest.raises(HiddenRuleError):
        parse(123, VARS)  # type: ignore[arg-type]
    rule = parse("a + b", VARS)
    with pytest.raises(HiddenRuleError, match="no values given"):
        rule.evaluate({"a": ENV["a"]})
    with pytest.raises(HiddenRuleError, match="different lengths"):
        rule.evaluate({"a": ENV["a"], "b": np.ones(3)})


def test_compile_hidden_rule_orders_latents_and_reports_which_expression_failed() -> None:
    hr = HiddenRule(latents={"z1": "a * b", "z2": "step(z1, 0)"}, outputs={"y": "z1 + z2"})
    latents, outputs = compile_hidden_rule(hr, VARS).evaluate(ENV)
    np.testing.assert_allclose(latents["z1"], ENV["a"] * ENV["b"])
    np.testing.assert_allclose(outputs["y"], latents["z1"] + latents["z2"])
    with pytest.raises(HiddenRuleError, match="latent 'z1'"):
        compile_hidden_rule(HiddenRule(latents={"z1": "z2 + 1", "z2": "a"}, outputs={"y": "z1"}), VARS)
    with pytest.raises(HiddenRuleError, match="output 'y'"):
        compile_hidden_rule(HiddenRule(outputs={"y": "__import__('os')"}), VARS)
    with pytest.raises(HiddenRuleError, match="shadows"):
        compile_hidden_rule(HiddenRule(latents={"a": "b"}, outputs={"y": "a"}), VARS)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab()[]{}.,:'\"_*+-/<>=! 0123456789eliwhrsoupmt")), max_size=60))
def test_arbitrary_text_parses_or_raises_hidden_rule_error(text: str) -> None:
    """Whatever the text, the parser either accepts it (and evaluation is finite) or raises HiddenRuleError."""
    try:
        rule = parse(text, VARS)
    except HiddenRuleError:
        return
    assert np.isfinite(rule.evaluate(ENV)).all()
