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
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from tools.errors import BadRequest
from tools.transforms.evaluate import evaluate
from tools.transforms.nodes import is_source, lossless_cast, mentions, shown
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
    def __init__(self, source: tuple[str, str], change: Scaled | Shifted) -> None:
        self.source, self.change = source, change

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
    if not lossless_cast(node, "numeric"):
        raise _whole("is not a lossless cast (only to a floating type or unparameterised NUMERIC/DECIMAL)", node)
    return c.carry(node.this)


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


_RULES: dict[type, Callable[[Carrier, exp.Expr], Carried]] = {
    exp.Paren: lambda c, node: c.carry(node.this), exp.Neg: _neg, exp.Cast: _cast, exp.TryCast: _cast,
    exp.Add: _sum(1.0), exp.Sub: _sum(-1.0), exp.Mul: _mul, exp.Div: _div, exp.Abs: _abs, exp.Sqrt: _sqrt,
    exp.Ln: _ln, exp.Log: _log, exp.Exp: _exp, exp.Pow: _pow, exp.Coalesce: _coalesce,
}  # fmt: skip


def carry(node: exp.Expr, source: tuple[str, str], change: Scaled | Shifted) -> Carried:
    """What the expression undergoes when the source column does `change`; raises NotCarried."""
    return Carrier(source, change).carry(node)
