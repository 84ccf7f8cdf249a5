"""Carrying a scale (×k) or a shift (+e) of the source column through an expression, node by node: what each
sub-expression undergoes is `Scaled(f)` (multiplied by f), `Shifted(s)` (s added), or `Fixed` (unchanged: it does
not read the source; `value` is its number when it is a constant). A sign flip is `Scaled(-1)`. Every rule is an
identity of real arithmetic, kept only where it holds for every row (NULLs stay NULL under each of them):

    x -> the change       -a, a*c, a/c, c*a, CAST(a AS DOUBLE/NUMERIC) -> what a undergoes (shift: s*c, s/c)
    a*b, a/b              -> Scaled(fa*fb), Scaled(fa/fb) (a Fixed factor counts 1)
    a+b, a-b              -> Scaled(f) if both Scaled(f); Shifted(sa±sb) if each is Shifted or Fixed
    ABS(a) -> Scaled(|f|)      SQRT(a) -> Scaled(√f), f > 0      POWER(a, n) -> Scaled(f^n), n an integer
    LN(a), LOG10(a), LOG(b, a) -> Shifted(log f) in that base, f > 0      EXP(a) -> Scaled(e^s) of Shifted(s)
    COALESCE(a, 0, ...)        -> Scaled(f) if every argument is Scaled(f) or the constant 0
    CASE WHEN p THEN a ELSE 0  -> what a undergoes, when no condition p reads the column (0 or NULL: a scale only)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from tools.errors import BadRequest
from tools.transforms.evaluate import evaluate
from tools.transforms.nodes import (
    INTEGER_TYPES,
    column_key,
    decimal_scale,
    is_source,
    lossless_cast,
    mentions,
    number,
    peel,
    places,
    shown,
    unparen,
)
from tools.transforms.values import NotEvaluable


@dataclass(frozen=True)
class Scaled:
    factor: float


@dataclass(frozen=True)
class Shifted:
    offset: float


@dataclass(frozen=True)
class Fixed:
    value: float | None = None


Carried = Scaled | Shifted | Fixed


class NotCarried(BadRequest, ValueError):
    """The change does not pass through this expression exactly; the message names the sub-expression."""


def _tidy(carried: Carried) -> Carried:
    if isinstance(carried, Scaled) and math.isclose(carried.factor, 1.0, rel_tol=1e-12, abs_tol=0.0):
        return Fixed()
    if isinstance(carried, Shifted) and abs(carried.offset) <= 1e-12:
        return Fixed()
    return carried


def _factor(carried: Carried) -> float | None:
    """The multiplier of a Scaled or Fixed part (1 for Fixed); None for a Shifted one."""
    return carried.factor if isinstance(carried, Scaled) else 1.0 if isinstance(carried, Fixed) else None


def _offset(carried: Carried) -> float | None:
    return carried.offset if isinstance(carried, Shifted) else 0.0 if isinstance(carried, Fixed) else None


class Carrier:
    def __init__(
        self, source: tuple[str, str], change: Scaled | Shifted, integers: frozenset[tuple[str, str]] = frozenset()
    ) -> None:
        self.source, self.change, self.integers = source, change, integers

    def places(self, node: exp.Expr, changed: bool) -> int | None:
        """Decimal places of the expression's values, before or after the change; None when not known."""
        node = unparen(node)
        if isinstance(node, exp.Column):
            if column_key(node) not in self.integers:
                return None
            if not changed or not is_source(node, self.source):
                return 0
            step = self.change.factor if isinstance(self.change, Scaled) else self.change.offset
            return places(step)
        if isinstance(node, exp.Neg):
            return self.places(node.this, changed)
        value = number(node)
        if value is not None:
            return places(value)
        if isinstance(node, exp.Cast):
            inner = self.places(node.this, changed)
            scale = decimal_scale(node.to)
            if node.to.is_type(*INTEGER_TYPES):
                return 0
            if scale is not None:
                return inner if inner is not None and inner <= scale else scale
            return inner if lossless_cast(node, "numeric") else None
        if isinstance(node, exp.Round):
            digits = number(node.args["decimals"]) if node.args.get("decimals") is not None else 0
            if digits is None or not float(digits).is_integer() or digits < 0:
                return None
            inner = self.places(node.this, changed)
            return int(digits) if inner is None else min(inner, int(digits))
        if isinstance(node, exp.Mul | exp.Add | exp.Sub):
            a, b = self.places(node.this, changed), self.places(node.expression, changed)
            if a is None or b is None:
                return None
            return a + b if isinstance(node, exp.Mul) else max(a, b)
        if isinstance(node, exp.Div):
            a, divisor = self.places(node.this, changed), number(peel(node.expression, "numeric"))
            if a is None or divisor is None or divisor <= 0:
                return None
            power = math.log10(divisor)
            return a + int(power) if power.is_integer() else None
        return None

    def carry(self, node: exp.Expr) -> Carried:
        if not mentions(node, self.source):
            try:
                value = evaluate(node, self.source, None)
            except NotEvaluable:
                value = None
            number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
            return Fixed(None if number is None else float(number))
        if is_source(node, self.source):
            return self.change
        rule = _RULES.get(type(node))
        if rule is None:
            raise NotCarried(f"{shown(node)} is not a product, quotient, sum or function this carries it through")
        return _tidy(rule(self, node))


def _whole(kind: str, node: exp.Expr) -> NotCarried:
    return NotCarried(f"{shown(node)} {kind}")


def _neg(c: Carrier, node: exp.Expr) -> Carried:
    inner = c.carry(node.this)
    return Shifted(-inner.offset) if isinstance(inner, Shifted) else inner


def _cast(c: Carrier, node: exp.Expr) -> Carried:
    if lossless_cast(node, "numeric"):
        return c.carry(node.this)
    scale = decimal_scale(node.to) if isinstance(node, exp.Cast) else None
    if scale is not None:
        before, after = c.places(node.this, False), c.places(node.this, True)
        if before is not None and after is not None and max(before, after) <= scale:
            return c.carry(node.this)  # NUMERIC(p, s) of values with at most s places keeps them
    raise _whole(
        "is not a lossless cast (only to a floating type, unparameterised NUMERIC/DECIMAL, or NUMERIC(p, s) of "
        "values the catalog types as integers, divided by a power of ten)",
        node,
    )


def _sum(sign: float) -> Callable[[Carrier, exp.Expr], Carried]:
    def rule(c: Carrier, node: exp.Expr) -> Carried:
        a, b = c.carry(node.this), c.carry(node.expression)
        if isinstance(a, Scaled) and isinstance(b, Scaled) and a.factor == b.factor:
            return a
        oa, ob = _offset(a), _offset(b)
        if oa is not None and ob is not None:
            return Shifted(oa + sign * ob)
        raise _whole("adds a term the change does not scale in step (a scale only passes through products)", node)

    return rule


def _mul(c: Carrier, node: exp.Expr) -> Carried:
    a, b = c.carry(node.this), c.carry(node.expression)
    fa, fb = _factor(a), _factor(b)
    if fa is not None and fb is not None:
        return Scaled(fa * fb)
    shifted, other = (a, b) if isinstance(a, Shifted) else (b, a)
    if isinstance(shifted, Shifted) and isinstance(other, Fixed) and other.value is not None:
        return Shifted(shifted.offset * other.value)
    raise _whole("multiplies a shifted value by something other than a constant", node)


def _div(c: Carrier, node: exp.Expr) -> Carried:
    a, b = c.carry(node.this), c.carry(node.expression)
    fa, fb = _factor(a), _factor(b)
    if fa is not None and fb is not None:
        return Scaled(fa / fb)
    if isinstance(a, Shifted) and isinstance(b, Fixed) and b.value:
        return Shifted(a.offset / b.value)
    raise _whole("divides a shifted value by something other than a non-zero constant", node)


def _scaled(node: exp.Expr, inner: Carried, positive: bool = False) -> Scaled:
    if not isinstance(inner, Scaled) or (positive and inner.factor <= 0):
        need = "a positive scale" if positive else "a scale"
        raise _whole(f"is carried only for {need} of its argument", node)
    return inner


def _abs(c: Carrier, node: exp.Expr) -> Carried:
    return Scaled(abs(_scaled(node, c.carry(node.this)).factor))


def _sqrt(c: Carrier, node: exp.Expr) -> Carried:
    return Scaled(math.sqrt(_scaled(node, c.carry(node.this), positive=True).factor))


def _ln(c: Carrier, node: exp.Expr) -> Carried:
    return Shifted(math.log(_scaled(node, c.carry(node.this), positive=True).factor))


def _log(c: Carrier, node: exp.Expr) -> Carried:
    if node.expression is None:  # LOG(x): base 10 (dialects where it is natural parse it as LN)
        return Shifted(math.log10(_scaled(node, c.carry(node.this), positive=True).factor))
    base = c.carry(node.this)
    if not isinstance(base, Fixed) or base.value is None or base.value <= 0 or base.value == 1:
        raise _whole("has a base that is not a constant", node)
    factor = _scaled(node, c.carry(node.expression), positive=True).factor
    return Shifted(math.log(factor) / math.log(base.value))


def _exp(c: Carrier, node: exp.Expr) -> Carried:
    inner = c.carry(node.this)
    if not isinstance(inner, Shifted):
        raise _whole("is carried only for a shift of its argument", node)
    return Scaled(math.exp(inner.offset))


def _pow(c: Carrier, node: exp.Expr) -> Carried:
    power = c.carry(node.expression)
    if not isinstance(power, Fixed) or power.value is None or not power.value.is_integer():
        raise _whole("has an exponent that is not a constant integer", node)
    return Scaled(_scaled(node, c.carry(node.this)).factor ** int(power.value))


def _coalesce(c: Carrier, node: exp.Expr) -> Carried:
    parts = [c.carry(arg) for arg in [node.this, *node.expressions]]
    changed = {part for part in parts if not isinstance(part, Fixed)}
    if len(changed) == 1:
        (only,) = changed
        if all(p == only or (isinstance(only, Scaled) and isinstance(p, Fixed) and p.value == 0) for p in parts):
            return only
    raise _whole("falls back to a value the change does not carry in step (only 0 under a scale)", node)


def _zero_or_null(part: Carried | None) -> bool:
    return part is None or (isinstance(part, Fixed) and part.value == 0)


def _case(c: Carrier, node: exp.Expr) -> Carried:
    """CASE WHEN p THEN a … ELSE b END whose conditions do not read the column: each row keeps its branch, so the
    CASE undergoes what every branch does in step (a branch that is 0 or NULL stays so under a scale)."""
    ifs = node.args.get("ifs") or []
    conditions = [i.this for i in ifs]
    if any(mentions(condition, c.source) for condition in conditions):
        raise _whole("chooses its branch by the changed column", node)
    branches = [i.args.get("true") for i in ifs] + [node.args.get("default")]
    parts = [None if b is None or isinstance(unparen(b), exp.Null) else c.carry(b) for b in branches]
    changed = {part for part in parts if part is not None and not isinstance(part, Fixed)}
    if len(changed) == 1:
        (only,) = changed
        if all(p == only or (isinstance(only, Scaled) and _zero_or_null(p)) for p in parts):
            return only
    raise _whole("has branches the change does not reach in step (only 0 or NULL beside it, under a scale)", node)


def _round(c: Carrier, node: exp.Expr) -> Carried:
    """ROUND(a, n): a sign flip passes (rounding is symmetric); so does any change when the values have at most n
    decimal places before and after it (the rounding then changes nothing), and a shift by a number of <= n
    places of values that have at most n."""
    inner = c.carry(node.this)
    digits = number(node.args["decimals"]) if node.args.get("decimals") is not None else 0
    if isinstance(inner, Fixed) or (isinstance(inner, Scaled) and inner.factor == -1.0):
        return inner
    if digits is not None and float(digits).is_integer():
        before, after = c.places(node.this, False), c.places(node.this, True)
        if before is not None and after is not None and max(before, after) <= digits:
            return inner
    raise _whole("rounds the changed values (carried only for a sign flip, or values it leaves as they are)", node)


def _nullif(c: Carrier, node: exp.Expr) -> Carried:
    """NULLIF(a, 0) under a non-zero scale: a is 0 exactly when the scaled a is."""
    inner, other = c.carry(node.this), c.carry(node.expression)
    if isinstance(inner, Fixed):
        return inner
    if isinstance(inner, Scaled) and inner.factor != 0 and isinstance(other, Fixed) and other.value == 0:
        return inner
    raise _whole("compares the changed value with something other than 0 under a scale", node)


def _aggregate(shifts: bool, positive: bool) -> Callable[[Carrier, exp.Expr], Carried]:
    """SUM/AVG/MIN/MAX over rows that all undergo the change (derive.py refuses a share of rows): a scale passes
    each (MIN/MAX only a positive one), a shift passes AVG, MIN and MAX."""

    def rule(c: Carrier, node: exp.Expr) -> Carried:
        if node.args.get("distinct") or isinstance(node.this, exp.Distinct):
            raise _whole("aggregates distinct values", node)
        inner = c.carry(node.this)
        if isinstance(inner, Fixed):
            return inner
        if isinstance(inner, Scaled) and (inner.factor > 0 or not positive):
            return inner
        if isinstance(inner, Shifted) and shifts:
            return inner
        raise _whole("aggregates the changed values in a way the change does not pass", node)

    return rule


_RULES: dict[type, Callable[[Carrier, exp.Expr], Carried]] = {
    exp.Paren: lambda c, node: c.carry(node.this), exp.Neg: _neg, exp.Cast: _cast, exp.TryCast: _cast,
    exp.Add: _sum(1.0), exp.Sub: _sum(-1.0), exp.Mul: _mul, exp.Div: _div, exp.Abs: _abs, exp.Sqrt: _sqrt,
    exp.Ln: _ln, exp.Log: _log, exp.Exp: _exp, exp.Pow: _pow, exp.Coalesce: _coalesce, exp.Round: _round,
    exp.Nullif: _nullif, exp.Sum: _aggregate(shifts=False, positive=False), exp.Avg: _aggregate(True, False),
    exp.Min: _aggregate(True, True), exp.Max: _aggregate(True, True), exp.Case: _case,
}  # fmt: skip


def carry(
    node: exp.Expr,
    source: tuple[str, str],
    change: Scaled | Shifted,
    integers: frozenset[tuple[str, str]] = frozenset(),
) -> Carried:
    """What the expression undergoes when the source column does `change`; raises NotCarried."""
    return Carrier(source, change, integers).carry(node)
