"""Evaluating an expression with the source column bound to one value (a constant, an unseen category, or NULL)
while every other column stays unknown: `x * y` with x NULL is NULL whatever y holds; `COALESCE(x, 0)` is 0; a
`CASE` takes the branch the value falls in, with SQL's three-valued logic. `Depends` is a value that other columns
decide; `NotEvaluable` is raised where this reader cannot say exactly what the engine computes."""

from __future__ import annotations

import math
from collections.abc import Callable

from sqlglot import exp

from tools.transforms import conditions as cond
from tools.transforms.nodes import INTEGER_TYPES, Scalar, decimal_scale, literal, mentions, places, shown
from tools.transforms.values import AND, OR, TRUTH, Depends, F, N, NotEvaluable, NotTrue, T, Value, is_number

_FLOATING = (exp.DataType.Type.DOUBLE, exp.DataType.Type.FLOAT)
_DECIMAL = (exp.DataType.Type.DECIMAL, exp.DataType.Type.BIGDECIMAL)
_TEXT = (exp.DataType.Type.TEXT, exp.DataType.Type.VARCHAR, exp.DataType.Type.NVARCHAR)


def _finite(value: float | int, node: exp.Expr) -> float | int:
    if isinstance(value, float) and not math.isfinite(value):
        raise NotEvaluable(f"{shown(node)} is not a finite number")
    return value


class Evaluator:
    def __init__(self, source: tuple[str, str], binding: Scalar | None) -> None:
        self.source, self.binding = source, binding

    def value(self, node: exp.Expr | None) -> Value:
        if node is None:
            return None
        if not mentions(node, self.source):
            columns = sorted({shown(c) for c in node.find_all(exp.Column)})
            if columns:
                return Depends(f"it depends on {', '.join(columns)}")
            try:
                return self._dispatch(node)
            except NotEvaluable as exc:
                return Depends(str(exc))
        return self._dispatch(node)

    def _dispatch(self, node: exp.Expr) -> Value:
        handler = _HANDLERS.get(type(node))  # the exact class: a subclass (CONCAT_WS of CONCAT) may differ
        if handler is None:
            raise NotEvaluable(f"{shown(node)} is not an expression this reads exactly")
        return handler(self, node)

    def strict(self, nodes: list[exp.Expr | None]) -> list[Scalar] | Value:
        """The argument values, or NULL if any is NULL (a NULL-propagating operator), or Depends."""
        values = [self.value(node) for node in nodes if node is not None]
        if any(v is None for v in values):
            return None
        unknown = [v for v in values if isinstance(v, Depends | NotTrue)]
        if unknown:
            return unknown[0] if isinstance(unknown[0], Depends) else Depends("a condition's outcome")
        return [v for v in values if not isinstance(v, Depends | NotTrue) and v is not None]

    def truth(self, node: exp.Expr) -> frozenset[str]:
        value = self.value(node)
        if isinstance(value, NotTrue):
            return frozenset(F + N)
        if isinstance(value, Depends):
            return frozenset(T + F + N)
        if value is not None and not isinstance(value, bool):
            raise NotEvaluable(f"{shown(node)} is not a condition")
        return TRUTH[value]


def _arith(op: Callable[[float, float], float]) -> Callable[[Evaluator, exp.Expr], Value]:
    def handler(ev: Evaluator, node: exp.Expr) -> Value:
        values = ev.strict([node.this, node.expression])
        if not isinstance(values, list):
            return values
        if not all(is_number(v) for v in values):
            raise NotEvaluable(f"{shown(node)}: arithmetic on a value that is not a number")
        return _finite(op(float(values[0]), float(values[1])) if any(isinstance(v, float) for v in values)
                       else int(op(values[0], values[1])), node)  # type: ignore[arg-type]  # fmt: skip

    return handler


def _div(ev: Evaluator, node: exp.Expr) -> Value:
    values = ev.strict([node.this, node.expression])
    if not isinstance(values, list):
        return values
    a, b = values
    if not (is_number(a) and is_number(b)):
        raise NotEvaluable(f"{shown(node)}: division of a value that is not a number")
    if b == 0:
        raise NotEvaluable(f"{shown(node)} divides by zero (an error or NULL or infinity, by engine)")
    if isinstance(a, int) and isinstance(b, int) and node.args.get("typed"):
        if a % b:
            raise NotEvaluable(f"{shown(node)}: integer division in this dialect, whether it applies depends on types")
        return a // b
    return _finite(float(a) / float(b), node)


def _math(fn: Callable[[float], float], valid: Callable[[float], bool]) -> Callable[[Evaluator, exp.Expr], Value]:
    def handler(ev: Evaluator, node: exp.Expr) -> Value:
        values = ev.strict([node.this])
        if not isinstance(values, list):
            return values
        (v,) = values
        if not is_number(v) or not valid(float(v)):
            raise NotEvaluable(f"{shown(node)} is undefined for {v!r}")
        return _finite(fn(float(v)), node)

    return handler


def _abs(ev: Evaluator, node: exp.Expr) -> Value:
    values = ev.strict([node.this])
    if not isinstance(values, list):
        return values
    (v,) = values
    if not isinstance(v, int | float) or isinstance(v, bool):
        raise NotEvaluable(f"{shown(node)} of a value that is not a number")
    return abs(v)  # an integer stays one


def _between(ev: Evaluator, node: exp.Expr) -> Value:
    values = ev.strict([node.this, node.args.get("low"), node.args.get("high")])
    if not isinstance(values, list):
        return values
    if not all(is_number(v) for v in values) or node.args.get("symmetric"):
        raise NotEvaluable(f"{shown(node)} is read for numbers only")
    value, low, high = values
    return low <= value <= high  # type: ignore[operator]


def _log(ev: Evaluator, node: exp.Expr) -> Value:
    if node.expression is None:  # one argument: base 10 (LOG_DEFAULTS_TO_LN dialects parse LOG(x) as LN)
        return _math(math.log10, lambda v: v > 0)(ev, node)
    values = ev.strict([node.this, node.expression])
    if not isinstance(values, list):
        return values
    base, v = values
    if not (is_number(base) and is_number(v)) or base <= 0 or base == 1 or v <= 0:  # type: ignore[operator]
        raise NotEvaluable(f"{shown(node)} is undefined for base {base!r} and {v!r}")
    return math.log(float(v)) / math.log(float(base))


def _text(fn: Callable[[str], str]) -> Callable[[Evaluator, exp.Expr], Value]:
    def handler(ev: Evaluator, node: exp.Expr) -> Value:
        if isinstance(node, exp.Trim) and node.args.get("expression") is not None:
            raise NotEvaluable(f"{shown(node)} trims given characters")
        values = ev.strict([node.this])
        if not isinstance(values, list):
            return values
        (v,) = values
        if not isinstance(v, str) or not v.isascii():
            raise NotEvaluable(f"{shown(node)} of {v!r}: only ASCII text is read (case rules differ by locale)")
        position = str(node.args.get("position") or "").upper() if isinstance(node, exp.Trim) else ""
        return {"LEADING": v.lstrip(" "), "TRAILING": v.rstrip(" ")}.get(position, fn(v))

    return handler


def _concat(ev: Evaluator, node: exp.Expr) -> Value:
    args = [node.this, node.expression] if isinstance(node, exp.DPipe) else list(node.expressions)
    if isinstance(node, exp.Concat) and node.args.get("coalesce"):  # CONCAT() skips NULLs in this dialect
        values = [ev.value(a) for a in args]
        values = [v for v in values if v is not None]
        if any(isinstance(v, Depends | NotTrue) for v in values):
            return Depends(f"{shown(node)} depends on other columns")
    else:
        strict = ev.strict(list(args))
        if not isinstance(strict, list):
            return strict
        values = list(strict)
    if not all(isinstance(v, str) for v in values):
        raise NotEvaluable(f"{shown(node)} concatenates a value that is not text")
    return "".join(str(v) for v in values)


def _strict_only(ev: Evaluator, node: exp.Expr) -> Value:
    """Functions that return NULL for a NULL argument, evaluated for nothing else."""
    values = ev.strict(list(node.iter_expressions()))
    if not isinstance(values, list):
        return values
    raise NotEvaluable(f"{shown(node)} is not evaluated here (only its NULL propagation is known)")


def _cast(ev: Evaluator, node: exp.Expr) -> Value:
    assert isinstance(node, exp.Cast)
    values = ev.strict([node.this])
    if not isinstance(values, list):
        return values
    (v,) = values
    to = node.to
    if not to.expressions and to.is_type(*_FLOATING, *_DECIMAL) and is_number(v):
        return float(v) if to.is_type(*_FLOATING) else v
    if to.is_type(*INTEGER_TYPES) and is_number(v) and float(v).is_integer():
        return int(v)
    if not to.expressions and to.is_type(*_TEXT) and isinstance(v, str | int) and not isinstance(v, bool):
        return str(v)
    if to.is_type(exp.DataType.Type.BOOLEAN) and isinstance(v, bool):
        return v
    scale = decimal_scale(to)
    if scale is not None and is_number(v) and places(v) <= scale:  # NUMERIC(p, s) keeps a value of <= s places
        return v
    raise NotEvaluable(f"{shown(node)} of {v!r}: engines differ on this cast")


def _round(ev: Evaluator, node: exp.Expr) -> Value:
    """ROUND(v, n) of a value with at most n decimal places is the value, on every engine; else not evaluated."""
    values = ev.strict([node.this])
    if not isinstance(values, list):
        return values
    digits = literal(node.args["decimals"]) if node.args.get("decimals") is not None else 0
    (v,) = values
    if is_number(v) and isinstance(digits, int) and not isinstance(digits, bool) and places(v) <= digits:
        return v
    raise NotEvaluable(f"{shown(node)} of {v!r} rounds it (engines round halves differently)")


def _neg(ev: Evaluator, node: exp.Expr) -> Value:
    values = ev.strict([node.this])
    if not isinstance(values, list):
        return values
    if not is_number(values[0]):
        raise NotEvaluable(f"{shown(node)}: negating a value that is not a number")
    return -values[0]  # type: ignore[operator]


def _constant(ev: Evaluator, node: exp.Expr) -> Value:
    if isinstance(node, exp.Null):
        return None
    value = literal(node)
    if value is None:
        raise NotEvaluable(f"{shown(node)} is not a constant this reads")
    return value


def _column(ev: Evaluator, node: exp.Expr) -> Value:
    return ev.binding  # value() sends every other column to Depends


_STRICT_ONLY = (exp.Floor, exp.Ceil, exp.Substring, exp.Length, exp.Left, exp.Right, exp.Sign, exp.Pow,
                exp.Mod, exp.StrPosition, exp.Pad, exp.Extract, exp.DateTrunc, exp.TimestampTrunc, exp.DateDiff,
                exp.TimestampDiff)  # fmt: skip
_HANDLERS: dict[type, Callable[[Evaluator, exp.Expr], Value]] = {
    exp.Column: _column, exp.Literal: _constant, exp.Boolean: _constant, exp.Null: _constant,
    exp.Paren: lambda ev, node: ev.value(node.this), exp.Neg: _neg, exp.Cast: _cast, exp.TryCast: _cast,
    exp.Add: _arith(lambda a, b: a + b), exp.Sub: _arith(lambda a, b: a - b), exp.Mul: _arith(lambda a, b: a * b),
    exp.Div: _div, exp.Abs: _abs, exp.Between: _between, exp.Sqrt: _math(math.sqrt, lambda v: v >= 0),
    exp.Ln: _math(math.log, lambda v: v > 0), exp.Exp: _math(math.exp, lambda v: v < 700), exp.Log: _log,
    exp.Upper: _text(str.upper), exp.Lower: _text(str.lower), exp.Trim: _text(lambda v: v.strip(" ")),
    exp.DPipe: _concat, exp.Concat: _concat, exp.Coalesce: cond.coalesce, exp.Nullif: cond.nullif,
    exp.Case: cond.case, exp.If: cond.if_, exp.In: cond.in_, exp.Is: cond.is_, exp.Not: cond.not_,
    exp.And: cond.logic(AND), exp.Or: cond.logic(OR), exp.Round: _round,
    exp.EQ: cond.comparison(lambda o: o == 0), exp.NEQ: cond.comparison(lambda o: o != 0),
    exp.GT: cond.comparison(lambda o: o > 0), exp.GTE: cond.comparison(lambda o: o >= 0),
    exp.LT: cond.comparison(lambda o: o < 0), exp.LTE: cond.comparison(lambda o: o <= 0),
    **{kind: _strict_only for kind in _STRICT_ONLY},
}  # fmt: skip


def evaluate(node: exp.Expr, source: tuple[str, str], binding: Scalar | None) -> Value:
    """The expression's value when the source column holds `binding` (None: NULL); raises NotEvaluable."""
    return Evaluator(source, binding).value(node)
