"""One reader per operator: what the output column undergoes, on the same rows, when the source column undergoes
the mutation and the expression is not the column itself (derive.py handles identities). A reader returns an
`Outcome` (the derived mutation, or None when the output provably cannot change) or raises `Refused`.

    scale, shift, sign_flip   carried through products, quotients, sums and a few functions (affine.py)
    null_inject               the expression evaluated with the column NULL: NULL -> null_inject, v -> constant v
    constant v                the expression evaluated with the column v: -> constant f(v) (NULL -> null_inject)
    unseen_category u         the expression evaluated with the column u: the branch u falls in, as a constant
    category_remap            through a CASE over the column, or UPPER/LOWER/TRIM of it (categories.py)
    round, clip, noise, shuffle, cyclic_shift: only through an identity: refused here
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError
from sqlglot import exp

from tools.errors import BadRequest
from tools.mutations.operators import Mutation
from tools.transforms.affine import Fixed, NotCarried, Scaled, Shifted, carry
from tools.transforms.categories import (
    NotRemappable,
    case_table,
    remap_through_case,
    remap_through_text,
    remap_to_constant,
    text_function_chain,
)
from tools.transforms.evaluate import evaluate
from tools.transforms.nodes import Scalar, is_source, literal, mentions, peel, shown, unparen
from tools.transforms.values import Depends, NotEvaluable, NotTrue

_MUTATION: TypeAdapter[Mutation] = TypeAdapter(Mutation)


class Refused(BadRequest, ValueError):
    """The mutation cannot be carried through exactly; the message says why."""


@dataclass(frozen=True)
class Outcome:
    mutation: Mutation | None
    """None: the output column provably does not change."""
    note: str = ""


Integers = frozenset[tuple[str, str]]
"""Base columns of an integer type (from the catalog's schemas): a NUMERIC(p, s) cast of one keeps every value."""
Reader = Callable[[Mutation, exp.Expr, tuple[str, str], Integers], Outcome]

_DESCRIBE: dict[str, Callable[[dict[str, Any]], str]] = {
    "scale": lambda p: f"scale ×{p['factor']:g}",
    "shift": lambda p: f"shift {p['offset']:+g}",
    "sign_flip": lambda p: "sign_flip",
    "null_inject": lambda p: "null_inject",
    "constant": lambda p: f"constant {p['value']!r}",
    "category_remap": lambda p: f"category_remap {p['mapping']!r}",
    "unseen_category": lambda p: f"unseen_category {p['value']!r}",
    "round": lambda p: f"round to {p['decimals']} decimals",
    "clip": lambda p: f"clip to [{p['lower']}, {p['upper']}]",
    "noise": lambda p: f"noise (relative std {p['relative_std']:g})",
    "shuffle": lambda p: "shuffle",
    "cyclic_shift": lambda p: f"cyclic_shift {p['offset']:+g} mod {p['period']:g}",
}


def describe(mutation: Mutation) -> str:
    return _DESCRIBE[mutation.op](mutation.model_dump())


def same_rows(original: Mutation, op: str, **params: object) -> Mutation:
    """A mutation of the given operator on the rows the original selects (its fraction and seed)."""
    try:
        return _MUTATION.validate_python({"op": op, **params, "fraction": original.fraction, "seed": original.seed})
    except ValidationError as exc:
        message = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
        raise Refused(f"the derived {op} {params} is outside the operator's bounds: {message}") from None


def _tidy(value: float) -> float:
    """15 significant digits: 1 / 0.01 is 100, not 99.99999999999999."""
    return float(f"{value:.15g}")


_COMPARISONS = (exp.GT, exp.GTE, exp.LT, exp.LTE, exp.EQ, exp.NEQ)


def _keeps_comparison(node: exp.Expr, source: tuple[str, str], start: Scaled | Shifted, integers: Integers) -> bool:
    """`a > 0` (or >=, <, <=, =, <>) keeps every row's outcome when a is scaled by a positive factor: the sign of
    each value is kept (= and <> with 0 keep it under any non-zero factor)."""
    node = unparen(node)
    if not isinstance(node, _COMPARISONS):
        return False
    sides = [node.this, node.expression]
    changed = [side for side in sides if mentions(side, source)]
    if len(changed) != 1:
        return False
    (side,) = changed
    try:
        zero = evaluate(next(s for s in sides if s is not side), source, None)
        carried = carry(side, source, start, integers)
    except (NotEvaluable, NotCarried):
        return False
    if isinstance(zero, bool) or zero != 0 or not isinstance(carried, Scaled):
        return False
    return carried.factor > 0 or (isinstance(node, exp.EQ | exp.NEQ) and carried.factor != 0)


def _affine(mutation: Mutation, node: exp.Expr, source: tuple[str, str], integers: Integers = frozenset()) -> Outcome:
    params = mutation.model_dump()
    start: Scaled | Shifted = (
        Shifted(params["offset"]) if mutation.op == "shift" else Scaled(params.get("factor", -1.0))
    )
    if _keeps_comparison(node, source, start, integers):
        return Outcome(None, "compared with 0, whose side the change keeps every value on")
    try:
        carried = carry(node, source, start, integers)
    except NotCarried as exc:
        raise Refused(str(exc)) from None
    if isinstance(carried, Fixed):
        return Outcome(None, "the change cancels out in it")
    if mutation.op == "sign_flip":
        if isinstance(carried, Scaled) and carried.factor == -1.0:
            return Outcome(same_rows(mutation, "sign_flip"))
        raise Refused("a sign flip becomes something other than a sign flip")
    if isinstance(carried, Scaled):
        return Outcome(same_rows(mutation, "scale", factor=_tidy(carried.factor)))
    return Outcome(same_rows(mutation, "shift", offset=_tidy(carried.offset)))


def _evaluated(node: exp.Expr, source: tuple[str, str], binding: Scalar | None, what: str) -> Scalar | None:
    try:
        value = evaluate(node, source, binding)
    except NotEvaluable as exc:
        raise Refused(f"with the column {what}: {exc}") from None
    if isinstance(value, Depends):
        raise Refused(f"with the column {what}, {value.reason}")
    if isinstance(value, NotTrue):
        raise Refused(f"with the column {what}, it is FALSE or NULL depending on other columns")
    if isinstance(value, float) and not math.isfinite(value):
        raise Refused(f"with the column {what}, it is not a finite number")
    return value


def _as_constant(mutation: Mutation, value: Scalar | None, what: str) -> Outcome:
    if value is None:
        return Outcome(same_rows(mutation, "null_inject"), f"with the column {what} it is NULL")
    return Outcome(same_rows(mutation, "constant", value=value), f"with the column {what} it is {value!r}")


def _null_inject(
    mutation: Mutation, node: exp.Expr, source: tuple[str, str], integers: Integers = frozenset()
) -> Outcome:
    return _as_constant(mutation, _evaluated(node, source, None, "NULL"), "NULL")


def _value_of(mutation: Mutation, node: exp.Expr, source: tuple[str, str], integers: Integers = frozenset()) -> Outcome:
    value = mutation.model_dump()["value"]
    return _as_constant(mutation, _evaluated(node, source, value, repr(value)), repr(value))


def _category_remap(
    mutation: Mutation, node: exp.Expr, source: tuple[str, str], integers: Integers = frozenset()
) -> Outcome:
    mapping: dict[str, str] = mutation.model_dump()["mapping"]
    note = ""
    fallback = _text_fallback(node)
    if fallback is not None:  # COALESCE(x, 'none'): the NULL rows keep 'none'; the others are remapped as x is
        inner = peel(node, "string")
        subject = peel(inner.this, "string")
        outcome = (
            Outcome(mutation) if is_source(subject, source) else _category_remap(mutation, subject, source, integers)
        )
        derived_mapping = outcome.mutation.model_dump()["mapping"] if outcome.mutation is not None else {}
        if fallback in derived_mapping:
            raise Refused(f"the remap renames {fallback!r}, which {shown(inner)} also gives to NULL rows")
        return outcome
    try:
        if text_function_chain(node, source):
            derived = remap_through_text(mapping, node, source)
            note = "exact if no other spelling of a key, which the function would merge with it, occurs in the data"
        else:
            derived = remap_through_case(mapping, case_table(node, source))
    except NotRemappable as exc:
        try:
            value = remap_to_constant(mapping, node, source)
        except NotRemappable:
            raise Refused(str(exc)) from None
        return Outcome(same_rows(mutation, "constant", value=value), "every other row already gives that value")
    if not derived:
        return Outcome(None, "every remapped value gives the same output as before")
    return Outcome(same_rows(mutation, "category_remap", mapping=derived), note)


def _text_fallback(node: exp.Expr) -> str | None:
    """'none' of COALESCE(expr, 'none'); None for any other expression."""
    inner = peel(node, "string")
    if isinstance(inner, exp.Coalesce) and len(inner.expressions) == 1:
        value = literal(peel(inner.expressions[0], "string"))
        return value if isinstance(value, str) else None
    return None


def _identity_only(
    mutation: Mutation, node: exp.Expr, source: tuple[str, str], integers: Integers = frozenset()
) -> Outcome:
    raise Refused(f"{mutation.op} passes only through the column itself, a rename or a lossless cast")


READERS: dict[str, Reader] = {
    "scale": _affine,
    "shift": _affine,
    "sign_flip": _affine,
    "null_inject": _null_inject,
    "constant": _value_of,
    "unseen_category": _value_of,
    "category_remap": _category_remap,
    "round": _identity_only,
    "clip": _identity_only,
    "noise": _identity_only,
    "shuffle": _identity_only,
    "cyclic_shift": _identity_only,
}
