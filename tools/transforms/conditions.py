"""Conditions and the expressions that choose between values (CASE, IF, COALESCE, NULLIF), evaluated with SQL's
three-valued logic: a WHEN whose condition other columns decide makes the CASE depend on them; one known to be
FALSE or NULL is skipped."""

from __future__ import annotations

import itertools
from collections.abc import Callable

from sqlglot import exp

from tools.transforms.nodes import Scalar, literal, shown
from tools.transforms.values import FROM_TRUTH, NOT, Depends, NotEvaluable, NotTrue, Reads, T, Value, is_number


def logic(table: dict[tuple[str, str], str]) -> Callable[[Reads, exp.Expr], Value]:
    def handler(ev: Reads, node: exp.Expr) -> Value:
        left, right = ev.truth(node.this), ev.truth(node.expression)
        outcome = frozenset(table[pair] for pair in itertools.product(left, right))
        return FROM_TRUTH.get(outcome, Depends(f"{shown(node)} depends on other columns"))

    return handler


def not_(ev: Reads, node: exp.Expr) -> Value:
    outcome = frozenset(NOT[v] for v in ev.truth(node.this))
    return FROM_TRUTH.get(outcome, Depends(f"{shown(node)} depends on other columns"))


def compare(a: Scalar, b: Scalar, node: exp.Expr) -> int:
    if is_number(a) and is_number(b):
        return (a > b) - (a < b)  # type: ignore[operator]
    if type(a) is type(b) and isinstance(node, exp.EQ | exp.NEQ | exp.In | exp.If | exp.Case):
        return 0 if a == b else 1
    raise NotEvaluable(f"{shown(node)} compares {a!r} with {b!r} (ordering or types differ by engine)")


def comparison(test: Callable[[int], bool]) -> Callable[[Reads, exp.Expr], Value]:
    def handler(ev: Reads, node: exp.Expr) -> Value:
        values = ev.strict([node.this, node.expression])
        return test(compare(values[0], values[1], node)) if isinstance(values, list) else values

    return handler


def in_(ev: Reads, node: exp.Expr) -> Value:
    if node.args.get("query") or node.args.get("unnest") or not node.expressions:
        raise NotEvaluable(f"{shown(node)} is not IN a list of values")
    subject = ev.value(node.this)
    items = [ev.value(item) for item in node.expressions]
    if subject is None:
        return None
    known = [item for item in items if not isinstance(item, Depends | NotTrue)]
    if isinstance(subject, Depends | NotTrue) or len(known) < len(items):
        return Depends(f"{shown(node)} depends on other columns")
    if any(item is not None and compare(subject, item, node) == 0 for item in known):
        return True
    return None if None in known else False


def is_(ev: Reads, node: exp.Expr) -> Value:
    value = ev.value(node.this)
    if isinstance(value, Depends | NotTrue):
        return Depends(f"{shown(node)} depends on other columns")
    if isinstance(node.expression, exp.Null):
        return value is None
    wanted = literal(node.expression)
    if isinstance(wanted, bool) and (value is None or isinstance(value, bool)):
        return value is wanted
    raise NotEvaluable(f"{shown(node)} is not IS [NOT] NULL/TRUE/FALSE")


def branches(ev: Reads, branches: list[tuple[exp.Expr, exp.Expr]], default: exp.Expr | None) -> Value:
    for condition, then in branches:
        truth = ev.truth(condition)
        if truth == frozenset(T):
            return ev.value(then)
        if T in truth:
            return Depends(f"whether {shown(condition)} holds depends on other columns")
    return ev.value(default)


def case(ev: Reads, node: exp.Expr) -> Value:
    subject = node.this
    ifs = node.args.get("ifs") or []
    conditions = [exp.EQ(this=subject, expression=i.this) if subject else i.this for i in ifs]
    return branches(ev, [(c, i.args["true"]) for c, i in zip(conditions, ifs, strict=True)], node.args.get("default"))


def if_(ev: Reads, node: exp.Expr) -> Value:
    return branches(ev, [(node.this, node.args["true"])], node.args.get("false"))


def coalesce(ev: Reads, node: exp.Expr) -> Value:
    for arg in [node.this, *node.expressions]:
        value = ev.value(arg)
        if isinstance(value, Depends | NotTrue):
            return Depends(f"{shown(node)} falls back to {shown(arg)}, which other columns decide")
        if value is not None:
            return value
    return None


def nullif(ev: Reads, node: exp.Expr) -> Value:
    a, b = ev.value(node.this), ev.value(node.expression)
    if a is None or b is None:
        return a
    if isinstance(a, Depends | NotTrue) or isinstance(b, Depends | NotTrue):
        return Depends(f"{shown(node)} depends on other columns")
    return None if compare(a, b, exp.EQ()) == 0 else a
