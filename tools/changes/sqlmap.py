"""How one output column's expression changed between two versions of a SQL model, as an allowlisted operator.

`map_change(base, head)` reads the head expression as a function of the base one: `x` -> `x * 100` is `scale`
(factor 100), `x + 5` is `shift`, `ROUND(x, 2)` or `CAST(x AS INT)` is `round`, `COALESCE(x, 0)` added is a
`constant` fill and removed is `null_inject`, `LEAST`/`GREATEST` is `clip`, a changed `CASE` mapping is
`category_remap` (casemap.py). Anything else raises NotMappable with the reason: a person reviews it by hand.
`diff_models` applies it to every output column and adds the structural findings (dropped, renamed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sqlglot import exp

from tools.changes.casemap import CaseNotMappable, case_remap, keeps_other_values
from tools.changes.schema import ParamValue
from tools.changes.sqlmodel import SqlModel, canonical, literal, number
from tools.errors import BadRequest

Confidence = Literal["high", "medium", "low"]
DEFAULT_NULL_SHARE = 0.05
"""The share of rows whose nulls a COALESCE added or removed is assumed to touch when nothing better is known."""


class NotMappable(BadRequest, ValueError):
    """No operator expresses the change; the message says why."""


@dataclass(frozen=True)
class NullShare:
    value: float = DEFAULT_NULL_SHARE
    source: str = "the stated default (--null-share), not an observed null share"


@dataclass(frozen=True)
class Mapping:
    op: str
    params: dict[str, ParamValue]
    confidence: Confidence
    note: str
    fraction: float = 1.0


@dataclass(frozen=True)
class Finding:
    """One output column that changed: mapped to an operator, dropped, renamed, or for a person to review."""

    kind: Literal["change", "dropped", "renamed", "unmapped"]
    column: str
    line: int
    mapping: Mapping | None = None
    renamed_to: str | None = None
    reason: str = ""


def _tidy(value: float) -> int | float:
    """12 significant digits (1 / 0.01 is 100, not 99.99999999999999); an integral value as an int."""
    rounded = float(f"{value:.12g}")
    return int(rounded) if rounded.is_integer() else rounded


def _unparen(expression: exp.Expr) -> exp.Expr:
    while isinstance(expression, exp.Paren):
        expression = expression.this
    return expression


def _linear(expression: exp.Expr) -> tuple[exp.Expr, float, float]:
    """(core, a, b) with expression = a * core + b, peeling constant factors, divisors and offsets."""
    e = _unparen(expression)
    if isinstance(e, exp.Neg) and number(e) is None:
        core, a, b = _linear(e.this)
        return core, -a, -b
    if isinstance(e, exp.Mul | exp.Add):
        for constant, other in ((e.expression, e.this), (e.this, e.expression)):
            c = number(constant)
            if c is not None:
                core, a, b = _linear(other)
                return (core, a * c, b * c) if isinstance(e, exp.Mul) else (core, a, b + c)
    if isinstance(e, exp.Div) and (c := number(e.expression)):
        core, a, b = _linear(e.this)
        return core, a / c, b / c
    if isinstance(e, exp.Sub):
        if (c := number(e.expression)) is not None:
            core, a, b = _linear(e.this)
            return core, a, b - c
        if (c := number(e.this)) is not None:
            core, a, b = _linear(e.expression)
            return core, -a, c - b
    return e, 1.0, 0.0


def _map_linear(base: exp.Expr, head: exp.Expr) -> Mapping | None:
    core_b, a1, b1 = _linear(base)
    core_h, a2, b2 = _linear(head)
    if canonical(core_b) != canonical(core_h) or (a1, b1) == (a2, b2) or a1 == 0:
        return None
    factor = a2 / a1
    offset = b2 - factor * b1
    if abs(offset) < 1e-12:
        return Mapping("scale", {"factor": _tidy(factor)}, "high", f"values multiplied by {_tidy(factor)}")
    if abs(factor - 1) < 1e-12:
        return Mapping("shift", {"offset": _tidy(offset)}, "high", f"values shifted by {_tidy(offset):+}")
    raise NotMappable(
        f"values are both scaled (x{_tidy(factor)}) and shifted ({_tidy(offset):+}); one operator cannot express "
        "both: assess `scale` and `shift` as two entries by hand"
    )


_INTEGER_TYPES = tuple(exp.DataType.INTEGER_TYPES)
_DECIMAL_TYPES = (exp.DataType.Type.DECIMAL, exp.DataType.Type.BIGDECIMAL)


def _rounding(expression: exp.Expr) -> tuple[exp.Expr, int | None, bool]:
    """(core, decimals kept, is a CAST) for ROUND(core, n) and CAST(core AS INT / DECIMAL(p, s)); else None."""
    e = _unparen(expression)
    if isinstance(e, exp.Round):
        decimals = number(e.args["decimals"]) if e.args.get("decimals") is not None else 0
        if isinstance(decimals, int):
            return e.this, decimals, False
    if isinstance(e, exp.Cast):  # TryCast is a Cast
        if e.to.is_type(*_INTEGER_TYPES):
            return e.this, 0, True
        params = e.to.expressions
        if e.to.is_type(*_DECIMAL_TYPES) and len(params) == 2 and isinstance(scale := number(params[1].this), int):
            return e.this, scale, True
    return e, None, False


def _map_rounding(base: exp.Expr, head: exp.Expr) -> Mapping | None:
    core_b, kept_b, _ = _rounding(base)
    core_h, kept_h, cast = _rounding(head)
    if canonical(core_b) != canonical(core_h) or kept_b == kept_h:
        return None
    if kept_h is None or (kept_b is not None and kept_h > kept_b):
        raise NotMappable("values keep more decimals than before; no operator restores precision")
    if cast:
        note = f"CAST keeps {kept_h} decimals; engines differ (most round half away from zero, some truncate)"
        return Mapping("round", {"decimals": kept_h}, "medium", note)
    return Mapping("round", {"decimals": kept_h}, "high", f"values rounded to {kept_h} decimals")


def _map_coalesce(base: exp.Expr, head: exp.Expr, null_share: NullShare) -> Mapping | None:
    h, b = _unparen(head), _unparen(base)
    if isinstance(h, exp.Coalesce) and len(h.expressions) == 1 and canonical(h.this) == canonical(b):
        fill = literal(h.expressions[0])
        if fill is None:
            raise NotMappable("COALESCE fills nulls with a non-constant expression")
        note = f"nulls now filled with {fill!r}; fraction {null_share.value:g} is {null_share.source}"
        return Mapping("constant", {"value": fill}, "medium", note, fraction=null_share.value)
    if isinstance(b, exp.Coalesce) and len(b.expressions) == 1 and canonical(b.this) == canonical(h):
        fill_sql = b.expressions[0].sql()
        note = f"nulls no longer filled with {fill_sql}; fraction {null_share.value:g} is {null_share.source}"
        return Mapping("null_inject", {}, "low", note, fraction=null_share.value)
    return None


def _clip(expression: exp.Expr) -> tuple[exp.Expr, float | None, float | None]:
    """(core, lower, upper) of nested GREATEST(x, lo) / LEAST(x, hi) with constant bounds."""
    e = _unparen(expression)
    if isinstance(e, exp.Least | exp.Greatest) and len(e.expressions) == 1:
        for bound, other in ((e.expressions[0], e.this), (e.this, e.expressions[0])):
            c = number(bound)
            if c is not None:
                core, lower, upper = _clip(other)
                if isinstance(e, exp.Least):
                    return core, lower, c if upper is None else min(upper, c)
                return core, c if lower is None else max(lower, c), upper
    return e, None, None


def _map_clip(base: exp.Expr, head: exp.Expr) -> Mapping | None:
    core_b, lower_b, upper_b = _clip(base)
    core_h, lower_h, upper_h = _clip(head)
    if canonical(core_b) != canonical(core_h) or (lower_b, upper_b) == (lower_h, upper_h):
        return None
    looser_low = lower_b is not None and (lower_h is None or lower_h < lower_b)
    looser_high = upper_b is not None and (upper_h is None or upper_h > upper_b)
    if looser_low or looser_high:
        raise NotMappable("the bounds are loosened: values the old SQL clipped come back; no operator restores them")
    params: dict[str, ParamValue] = {}
    if lower_h is not None:
        params["lower"] = lower_h
    if upper_h is not None:
        params["upper"] = upper_h
    return Mapping("clip", params, "high", f"values clipped to [{lower_h}, {upper_h}]")


def map_change(base: exp.Expr, head: exp.Expr, null_share: NullShare | None = None) -> Mapping | None:
    """The operator that turns the base column's values into the head's; None when the values cannot differ
    (equivalent SQL); NotMappable when no operator fits."""
    if canonical(base) == canonical(head):
        return None
    b, h = _unparen(base), _unparen(head)
    if exp.Case in (type(b), type(h)) and all(isinstance(e, exp.Case | exp.Column) for e in (b, h)):
        try:
            remap = case_remap(b, h)
        except CaseNotMappable as exc:
            raise NotMappable(str(exc)) from exc
        note = f"CASE mapping changed: {', '.join(f'{k!r} -> {v!r}' for k, v in remap.items())}"
        if keeps_other_values(b) or keeps_other_values(h):
            note += "; assumes no unlisted value already equals a mapped one (ELSE keeps them as they are)"
            return Mapping("category_remap", {"mapping": remap}, "medium", note) if remap else None
        return Mapping("category_remap", {"mapping": remap}, "high", note) if remap else None
    for rule in (_map_linear, _map_rounding, _map_clip):
        mapping = rule(base, head)
        if mapping is not None:
            return mapping
    mapping = _map_coalesce(base, head, null_share or NullShare())
    if mapping is not None:
        return mapping
    raise NotMappable("no operator fits")


def _checked(mapping: Mapping) -> Mapping:
    """The mapping, once tools.mutations accepts its parameters exactly as `assess` would."""
    from tools.mutations import PlanError, parse_mutation  # pandas: only once some column changed

    try:
        parse_mutation(mapping.op, dict(mapping.params), fraction=mapping.fraction, seed=0)
    except PlanError as exc:
        raise NotMappable(f"{mapping.op} {mapping.params} is outside the operator's bounds: {exc}") from exc
    return mapping


def _column_finding(column: str, line: int, base: exp.Expr, head: exp.Expr, share: NullShare) -> Finding:
    try:
        mapping = map_change(base, head, share)
    except NotMappable as exc:
        return Finding("unmapped", column, line, reason=f"`{base.sql()}` became `{head.sql()}`: {exc}")
    if mapping is None:
        return Finding("change", column, line)  # equivalent SQL: filtered out by diff_models
    try:
        return Finding("change", column, line, mapping=_checked(mapping))
    except NotMappable as exc:
        return Finding("unmapped", column, line, reason=f"`{base.sql()}` became `{head.sql()}`: {exc}")


def diff_models(base: SqlModel | None, head: SqlModel | None, null_share: NullShare | None = None) -> list[Finding]:
    """Every changed output column of a model (None: the version does not exist). Columns only in head are new and
    change nothing downstream; a column only in base is dropped, or renamed when head has its expression under a
    new name."""
    if base is None:
        return []
    share = null_share or NullShare()
    findings: list[Finding] = []
    new_columns = {} if head is None else {k: c for k, c in head.columns.items() if k not in base.columns}
    for key, old in base.columns.items():
        current = None if head is None else head.columns.get(key)
        if current is not None:
            finding = _column_finding(current.name, current.line, old.expression, current.expression, share)
            if finding.mapping is not None or finding.kind == "unmapped":
                findings.append(finding)
            continue
        same = [c for c in new_columns.values() if canonical(c.expression) == canonical(old.expression)]
        if same and literal(old.expression) is None:  # a constant column "moving" is a coincidence, not a rename
            findings.append(Finding("renamed", old.name, same[0].line, renamed_to=same[0].name))
        elif head is not None and head.has_star:
            reason = f"no longer listed; the new SELECT * may or may not still provide it (was line {old.line})"
            findings.append(Finding("unmapped", old.name, old.line, reason=reason))
        else:
            findings.append(Finding("dropped", old.name, old.line))
    return findings
