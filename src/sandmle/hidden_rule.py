"""The safe expression language of hidden rules (``label = f(z) + eps``).

Rules may come from untrusted text (an LLM back-end), so they are never passed to ``eval``/``exec``: the text is
parsed with :mod:`ast`, every node is checked against a whitelist, and the tree is evaluated by walking it over numpy
arrays. Allowed:

* numbers (``|x| <= 1e6``), string literals (only as categories in ``==``/``!=`` and ``lookup`` keys);
* declared variable names (never dunder names);
* ``+ - * / // % **`` (exponent: a numeric literal with ``|p| <= 8``), unary ``- + not``;
* comparisons (chains allowed), ``and``/``or``/``not`` (elementwise), ``a if cond else b``;
* calls of whitelisted functions with positional arguments only (see ``FUNCTIONS``).

Operators are *protected* so untrusted rules cannot produce NaN/inf: ``x / 0 -> 0``, ``log`` and ``sqrt`` clamp their
argument to the valid domain, ``exp`` clamps to ``[-50, 50]``; every result is finite float64.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np


MAX_CHARS = 4000
MAX_DEPTH = 40
MAX_NODES = 600
MAX_LITERAL = 1e6
MAX_EXPONENT = 8.0
_EPS = 1e-12


class HiddenRuleError(ValueError):
    """A hidden-rule expression is not in the safe language; the message names the offending construct."""


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -50.0, 50.0)))


def _step(x: np.ndarray, t: np.ndarray | float = 0.0) -> np.ndarray:
    return (np.asarray(x) > t).astype(float)


# name -> (implementation, min positional args, max positional args). ``lookup`` is handled separately.
FUNCTIONS: dict[str, tuple[Callable[..., np.ndarray], int, int]] = {
    "where": (lambda c, a, b: np.where(np.asarray(c).astype(bool), a, b), 3, 3),
    "clip": (lambda x, lo, hi: np.clip(x, lo, hi), 3, 3),
    "log": (lambda x: np.log(np.maximum(x, _EPS)), 1, 1),
    "log1p": (lambda x: np.log1p(np.maximum(x, -1.0 + _EPS)), 1, 1),
    "exp": (lambda x: np.exp(np.clip(x, -50.0, 50.0)), 1, 1),
    "sin": (np.sin, 1, 1),
    "cos": (np.cos, 1, 1),
    "tanh": (np.tanh, 1, 1),
    "sqrt": (lambda x: np.sqrt(np.maximum(x, 0.0)), 1, 1),
    "abs": (np.abs, 1, 1),
    "minimum": (np.minimum, 2, 2),
    "maximum": (np.maximum, 2, 2),
    "sigmoid": (_sigmoid, 1, 1),
    "step": (_step, 1, 2),
    "threshold": (_step, 1, 2),
}
LOOKUP = "lookup"
ALLOWED_FUNCTIONS = frozenset(FUNCTIONS) | {LOOKUP}


def _protected_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    b = np.asarray(b, dtype=float)
    safe = np.where(np.abs(b) < _EPS, 1.0, b)
    return np.where(np.abs(b) < _EPS, 0.0, np.asarray(a, dtype=float) / safe)


def _protected_floordiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.floor(_protected_div(a, b))


def _protected_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    b = np.asarray(b, dtype=float)
    safe = np.where(np.abs(b) < _EPS, 1.0, b)
    return np.where(np.abs(b) < _EPS, 0.0, np.mod(a, safe))


def _protected_pow(a: np.ndarray, p: float) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    if float(p) != int(p):  # fractional powers only of non-negative bases
        a = np.maximum(a, 0.0)
    elif p < 0:
        a = np.where(np.abs(a) < _EPS, _EPS, a)
    return np.power(np.clip(a, -1e6, 1e6), p)


_BINOPS: dict[type, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    ast.Add: np.add,
    ast.Sub: np.subtract,
    ast.Mult: np.multiply,
    ast.Div: _protected_div,
    ast.FloorDiv: _protected_floordiv,
    ast.Mod: _protected_mod,
}
_CMPOPS: dict[type, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    ast.Lt: np.less,
    ast.LtE: np.less_equal,
    ast.Gt: np.greater,
    ast.GtE: np.greater_equal,
    ast.Eq: np.equal,
    ast.NotEq: np.not_equal,
}


@dataclass(frozen=True)
class Rule:
    """A validated expression. ``evaluate`` walks the checked tree; nothing is ever compiled or executed."""

    expr: str
    variables: frozenset[str]
    tree: ast.Expression = field(repr=False, compare=False)
    referenced_names: frozenset[str] = frozenset()

    def evaluate(self, env: Mapping[str, np.ndarray]) -> np.ndarray:
        """Evaluate over equally long 1-D arrays (categorical columns as string arrays); returns finite float64."""
        missing = sorted(self.referenced_names - set(env))
        if missing:
            raise HiddenRuleError(f"rule {self.expr!r}: no values given for {missing}")
        lengths = {len(np.asarray(env[n])) for n in self.referenced_names}
        if len(lengths) > 1:
            raise HiddenRuleError(f"rule {self.expr!r}: variables have different lengths {sorted(lengths)}")
        if not lengths:  # a constant rule: as long as the environment's columns
            lengths = {len(np.asarray(v)) for v in env.values()} or {1}
        n = max(lengths)
        with np.errstate(all="ignore"):
            out = _Evaluator(env).visit(self.tree.body)
            out = np.asarray(out, dtype=float)
        if out.ndim == 0 or out.shape != (n,):
            out = np.broadcast_to(out.reshape(-1)[:1] if out.size == 1 else out, (n,)).astype(float)
        return np.nan_to_num(out, nan=0.0, posinf=1e12, neginf=-1e12)


def parse(expr: str, variables: Iterable[str]) -> Rule:
    """Parse and validate ``expr``; every name must be one of ``variables``. Raises `HiddenRuleError`."""
    if not isinstance(expr, str):
        raise HiddenRuleError(f"a rule must be a string, got {type(expr).__name__}")
    if len(expr) > MAX_CHARS:
        raise HiddenRuleError(f"rule is {len(expr)} characters long (max {MAX_CHARS})")
    if not expr.strip():
        raise HiddenRuleError("rule is empty")
    variables = frozenset(variables)
    try:
        with warnings.catch_warnings():  # e.g. SyntaxWarning for "1if": the text is rejected or checked anyway
            warnings.simplefilter("ignore")
            tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as exc:
        raise HiddenRuleError(f"rule {expr!r} is not a valid expression: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:  # e.g. absurd nesting or digit counts
        raise HiddenRuleError(f"rule could not be parsed safely: {type(exc).__name__}") from None
    checker = _Checker(variables)
    checker.visit(tree.body, depth=0)
    return Rule(expr=expr, variables=variables, tree=tree, referenced_names=frozenset(checker.names))


def referenced_names(expr: str, variables: Iterable[str]) -> frozenset[str]:
    """Names used by a valid expression (raises `HiddenRuleError` for an invalid one)."""
    return parse(expr, variables).referenced_names


def _describe(node: ast.AST) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # pragma: no cover - unparse handles every parsed node
        text = type(node).__name__
    return text if len(text) <= 60 else text[:57] + "..."


class _Checker:
    """Whitelist walk: raises on the first construct outside the language."""

    def __init__(self, variables: frozenset[str]):
        self.variables = variables
        self.names: set[str] = set()
        self.count = 0

    def fail(self, node: ast.AST, why: str) -> None:
        raise HiddenRuleError(f"{why}: `{_describe(node)}` ({type(node).__name__})")

    def visit(self, node: ast.AST, depth: int) -> None:
        self.count += 1
        if self.count > MAX_NODES:
            raise HiddenRuleError(f"rule has more than {MAX_NODES} syntax nodes")
        if depth > MAX_DEPTH:
            raise HiddenRuleError(f"rule is nested deeper than {MAX_DEPTH} levels")
        d = depth + 1
        if isinstance(node, ast.Constant):
            self._constant(node)
        elif isinstance(node, ast.Name):
            self._name(node)
        elif isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Pow):
                self._exponent(node)
            elif type(node.op) not in _BINOPS:
                self.fail(node, f"operator {type(node.op).__name__} is not allowed")
            self.visit(node.left, d)
            if not isinstance(node.op, ast.Pow):
                self.visit(node.right, d)
        elif isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, (ast.USub, ast.UAdd, ast.Not)):
                self.fail(node, f"unary operator {type(node.op).__name__} is not allowed")
            self.visit(node.operand, d)
        elif isinstance(node, ast.BoolOp):
            for v in node.values:
                self.visit(v, d)
        elif isinstance(node, ast.Compare):
            for op in node.ops:
                if type(op) not in _CMPOPS:
                    self.fail(node, f"comparison {type(op).__name__} is not allowed")
            for operand in (node.left, *node.comparators):
                if isinstance(operand, ast.Constant) and isinstance(operand.value, str):
                    if not all(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops):
                        self.fail(node, "strings can only be compared with == or !=")
                    continue
                self.visit(operand, d)
        elif isinstance(node, ast.IfExp):
            for sub in (node.test, node.body, node.orelse):
                self.visit(sub, d)
        elif isinstance(node, ast.Call):
            self._call(node, d)
        else:
            self.fail(node, "construct not allowed in a hidden rule")

    def _constant(self, node: ast.Constant) -> None:
        v = node.value
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            self.fail(node, "only numeric literals are allowed here")
        if abs(v) > MAX_LITERAL or not np.isfinite(float(v)):  # abs() first: huge ints overflow float()
            self.fail(node, f"numeric literal outside [-{MAX_LITERAL:g}, {MAX_LITERAL:g}]")

    def _name(self, node: ast.Name) -> None:
        if node.id.startswith("__") or node.id.startswith("_"):
            self.fail(node, "private/dunder names are not allowed")
        if node.id not in self.variables:
            known = ", ".join(sorted(self.variables)) or "none"
            self.fail(node, f"unknown variable {node.id!r} (declared: {known})")
        self.names.add(node.id)

    def _exponent(self, node: ast.BinOp) -> None:
        p = node.right
        if isinstance(p, ast.UnaryOp) and isinstance(p.op, ast.USub) and isinstance(p.operand, ast.Constant):
            value = p.operand.value
            sign = -1.0
        elif isinstance(p, ast.Constant):
            value, sign = p.value, 1.0
        else:
            self.fail(node, "the exponent of ** must be a numeric literal")
            return
        if isinstance(value, bool) or not isinstance(value, (int, float)) or abs(value) > MAX_EXPONENT:
            self.fail(node, f"the exponent of ** must be a number with |p| <= {MAX_EXPONENT:g}")
        node.right = ast.copy_location(ast.Constant(sign * float(value)), p)  # normalise for evaluation

    def _call(self, node: ast.Call, depth: int) -> None:
        if not isinstance(node.func, ast.Name):
            self.fail(node, "only direct calls of whitelisted functions are allowed")
            return
        name = node.func.id
        if name not in ALLOWED_FUNCTIONS:
            self.fail(node, f"function {name!r} is not allowed (allowed: {', '.join(sorted(ALLOWED_FUNCTIONS))})")
        if node.keywords:
            self.fail(node, f"{name}() takes positional arguments only")
        if any(isinstance(a, ast.Starred) for a in node.args):
            self.fail(node, f"{name}() does not accept *args")
        if name == LOOKUP:
            self._lookup(node, depth)
            return
        _, lo, hi = FUNCTIONS[name]
        if not lo <= len(node.args) <= hi:
            want = str(lo) if lo == hi else f"{lo}-{hi}"
            self.fail(node, f"{name}() takes {want} arguments, got {len(node.args)}")
        for a in node.args:
            self.visit(a, depth)

    def _lookup(self, node: ast.Call, depth: int) -> None:
        if len(node.args) not in (2, 3):
            self.fail(node, "lookup() takes (column, {category: value, ...}[, default])")
        col, table = node.args[0], node.args[1]
        if not isinstance(col, ast.Name):
            self.fail(node, "lookup()'s first argument must be a variable name")
        self._name(col)  # type: ignore[arg-type]
        if not isinstance(table, ast.Dict) or not table.keys:
            self.fail(node, "lookup()'s second argument must be a non-empty {category: number} literal")
        for k, v in zip(table.keys, table.values, strict=True):  # type: ignore[union-attr]
            if not (isinstance(k, ast.Constant) and isinstance(k.value, (str, int)) and not isinstance(k.value, bool)):
                self.fail(node, "lookup() keys must be string or integer literals")
            if isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.USub):
                v = v.operand
            if not isinstance(v, ast.Constant):
                self.fail(node, "lookup() values must be numeric literals")
            self._constant(v)  # type: ignore[arg-type]
        if len(node.args) == 3:
            self.visit(node.args[2], depth + 1)


def _literal(node: ast.AST) -> float | str:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -float(_literal(node.operand))
    assert isinstance(node, ast.Constant)
    return node.value


class _Evaluator:
    """Evaluates a tree that `_Checker` accepted."""

    def __init__(self, env: Mapping[str, np.ndarray]):
        self.env = env

    def visit(self, node: ast.AST) -> np.ndarray:
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, str) else np.float64(node.value)
        if isinstance(node, ast.Name):
            return np.asarray(self.env[node.id])
        if isinstance(node, ast.BinOp):
            left = np.asarray(self.visit(node.left), dtype=float)
            if isinstance(node.op, ast.Pow):
                return _protected_pow(left, float(_literal(node.right)))
            return _BINOPS[type(node.op)](left, np.asarray(self.visit(node.right), dtype=float))
        if isinstance(node, ast.UnaryOp):
            v = self.visit(node.operand)
            if isinstance(node.op, ast.Not):
                return np.logical_not(np.asarray(v).astype(bool)).astype(float)
            return -np.asarray(v, dtype=float) if isinstance(node.op, ast.USub) else np.asarray(v, dtype=float)
        if isinstance(node, ast.BoolOp):
            fn = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
            out = np.asarray(self.visit(node.values[0])).astype(bool)
            for v in node.values[1:]:
                out = fn(out, np.asarray(self.visit(v)).astype(bool))
            return out.astype(float)
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if isinstance(node, ast.IfExp):
            cond = np.asarray(self.visit(node.test)).astype(bool)
            return np.where(cond, self.visit(node.body), self.visit(node.orelse))
        if isinstance(node, ast.Call):
            name = node.func.id  # type: ignore[attr-defined]
            if name == LOOKUP:
                return self._lookup(node)
            fn = FUNCTIONS[name][0]
            return fn(*[np.asarray(self.visit(a), dtype=float) for a in node.args])
        raise HiddenRuleError(f"cannot evaluate {type(node).__name__}")  # unreachable after checking

    def _operand(self, node: ast.AST) -> np.ndarray | str:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        v = self.visit(node)
        return v if np.asarray(v).dtype.kind in "OUS" else np.asarray(v, dtype=float)

    def _compare(self, node: ast.Compare) -> np.ndarray:
        out: np.ndarray | None = None
        left = self._operand(node.left)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self._operand(right_node)
            if isinstance(left, str) or isinstance(right, str) or np.asarray(left).dtype.kind in "OUS":
                res = _CMPOPS[type(op)](np.asarray(left).astype(str), np.asarray(right).astype(str))
            else:
                res = _CMPOPS[type(op)](left, right)
            out = res if out is None else np.logical_and(out, res)
            left = right
        return np.asarray(out).astype(float)

    def _lookup(self, node: ast.Call) -> np.ndarray:
        column = np.asarray(self.env[node.args[0].id]).astype(str)  # type: ignore[attr-defined]
        table = node.args[1]
        default = np.asarray(self.visit(node.args[2]), dtype=float) if len(node.args) == 3 else 0.0
        out = np.broadcast_to(np.asarray(default, dtype=float), column.shape).copy()
        for k, v in zip(table.keys, table.values, strict=True):  # type: ignore[attr-defined]
            out = np.where(column == str(_literal(k)), float(_literal(v)), out)
        return out


@dataclass(frozen=True)
class CompiledHiddenRule:
    """A `sandmle.task.HiddenRule` with every latent and output expression parsed.

    Latents are evaluated in order (each may use the variables and earlier latents), then outputs.
    """

    latents: tuple[tuple[str, Rule], ...]
    outputs: tuple[tuple[str, Rule], ...]

    def evaluate(self, env: Mapping[str, np.ndarray]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """-> (latent values, noise-free output values)."""
        scope = dict(env)
        latents: dict[str, np.ndarray] = {}
        for name, rule in self.latents:
            latents[name] = scope[name] = rule.evaluate(scope)
        return latents, {name: rule.evaluate(scope) for name, rule in self.outputs}


def compile_hidden_rule(rule: HiddenRuleLike, variables: Iterable[str]) -> CompiledHiddenRule:
    """Parse every expression of a hidden rule against the declared variables (feature and hidden-feature names).

    Raises `HiddenRuleError` naming the expression that failed, so an LLM back-end can feed the message back.
    """
    scope = set(variables)
    latents = []
    for name, expr in rule.latents.items():
        if name in scope:
            raise HiddenRuleError(f"latent {name!r} shadows a variable of the same name")
        latents.append((name, _parse_named(f"latent {name!r}", expr, scope)))
        scope.add(name)
    if not rule.outputs:
        raise HiddenRuleError("a hidden rule needs at least one output expression")
    outputs = tuple((name, _parse_named(f"output {name!r}", expr, scope)) for name, expr in rule.outputs.items())
    return CompiledHiddenRule(tuple(latents), outputs)


class HiddenRuleLike(Protocol):
    latents: dict[str, str]
    outputs: dict[str, str]


def _parse_named(what: str, expr: str, scope: set[str]) -> Rule:
    try:
        return parse(expr, scope)
    except HiddenRuleError as exc:
        raise HiddenRuleError(f"{what}: {exc}") from None
