"""A changed `CASE` value mapping as a `category_remap`: which old output value each row now gets instead.

Both versions must map one subject (`CASE region WHEN 'US' THEN ...`, or `CASE WHEN region = 'US' / region IN
(...) THEN ...`) to string constants; `ELSE region` keeps the other values as they are, and a plain `region` is a
CASE that keeps every value (so `region` -> `CASE WHEN region = 'US' THEN 'USA' ELSE region END` is a remap).
Each old output value must turn into exactly one new value for every input that produced it; when it splits (some
`'OTHER'` rows become `'NA'`, the rest stay), renaming whole categories cannot express it: not mappable.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from tools.changes.sqlmodel import canonical, literal
from tools.errors import BadRequest

OTHER_INPUTS = object()
"""Stands for every subject value neither version lists (they get the ELSE value)."""


class _Keep:
    def __repr__(self) -> str:
        return "(the value itself)"


KEEP = _Keep()
"""The output of `ELSE subject`: each value stays as it is."""


class CaseNotMappable(BadRequest, ValueError):
    """The CASE change cannot be a remap of whole categories; the message says why."""


@dataclass(frozen=True)
class CaseTable:
    subject: str
    outputs: dict[str, str | None | _Keep]
    """Subject value -> output value, first match wins (as SQL evaluates WHEN branches)."""
    default: str | None | _Keep


def _output(expression: exp.Expr | None, subject: str | None = None) -> str | None | _Keep:
    if expression is None or isinstance(expression, exp.Null):
        return None
    if subject is not None and canonical(expression) == subject:
        return KEEP
    value = literal(expression)
    if not isinstance(value, str):
        raise CaseNotMappable(f"the CASE yields {expression.sql()}, not a string constant")
    return value


def _inputs(condition: exp.Expr, subject: str | None) -> tuple[str, list[str]]:
    """(subject, the string values a searched WHEN condition matches)."""
    if isinstance(condition, exp.Or):
        left_subject, left = _inputs(condition.this, subject)
        right_subject, right = _inputs(condition.expression, left_subject)
        return right_subject, left + right
    if isinstance(condition, exp.EQ):
        sides = [condition.this, condition.expression]
        constants = [literal(side) for side in sides]
        if isinstance(constants[1], str) and constants[0] is None:
            return _same(subject, canonical(sides[0])), [constants[1]]
        if isinstance(constants[0], str) and constants[1] is None:
            return _same(subject, canonical(sides[1])), [constants[0]]
    if isinstance(condition, exp.In) and condition.expressions:
        values = [literal(value) for value in condition.expressions]
        if all(isinstance(value, str) for value in values):
            return _same(subject, canonical(condition.this)), [str(value) for value in values]
    raise CaseNotMappable(f"WHEN {condition.sql()} is not `column = 'value'` or `column IN (...)`")


def _same(known: str | None, subject: str) -> str:
    if known is not None and known != subject:
        raise CaseNotMappable(f"the WHEN branches test different expressions ({known}, {subject})")
    return subject


def case_table(case: exp.Expr) -> CaseTable:
    """The CASE as a table; any other expression is a CASE on itself that keeps every value."""
    if not isinstance(case, exp.Case):
        return CaseTable(subject=canonical(case), outputs={}, default=KEEP)
    subject: str | None = canonical(case.this) if case.this is not None else None
    outputs: dict[str, str | None | _Keep] = {}
    for branch in case.args.get("ifs") or []:
        if subject is not None and case.this is not None:
            value = literal(branch.this)
            if not isinstance(value, str):
                raise CaseNotMappable(f"WHEN {branch.this.sql()} is not a string constant")
            values = [value]
        else:
            subject, values = _inputs(branch.this, subject)
        for value in values:
            outputs.setdefault(value, _output(branch.args.get("true"), subject))
    if subject is None:
        raise CaseNotMappable("the CASE has no WHEN branch")
    return CaseTable(subject=subject, outputs=outputs, default=_output(case.args.get("default"), subject))


def keeps_other_values(expression: exp.Expr) -> bool:
    """True for `ELSE subject` (and a plain column): its mapped outputs could collide with values kept as they
    are, which a remap of whole categories would then also rename."""
    try:
        return isinstance(case_table(expression).default, _Keep)
    except CaseNotMappable:
        return False


def _value(table: CaseTable, value: str) -> str | None:
    output = table.outputs.get(value, table.default)
    return value if isinstance(output, _Keep) else output


def case_remap(base: exp.Expr, head: exp.Expr) -> dict[str, str]:
    """{old output value: new output value} for the categories that change ({} when every row keeps its value);
    raise CaseNotMappable when no remap of whole categories expresses the change."""
    old, new = case_table(base), case_table(head)
    if old.subject != new.subject:
        raise CaseNotMappable(f"the CASE now tests {new.subject} instead of {old.subject}")
    pairs: list[tuple[object, str | None, str | None]] = [
        (value, _value(old, value), _value(new, value)) for value in dict.fromkeys([*old.outputs, *new.outputs])
    ]
    if isinstance(old.default, _Keep) != isinstance(new.default, _Keep):
        raise CaseNotMappable(
            f"values no WHEN lists were {old.default!r} and now are {new.default!r}; "
            "category_remap renames listed categories only"
        )
    if not isinstance(old.default, _Keep) and not isinstance(new.default, _Keep):
        pairs.append((OTHER_INPUTS, old.default, new.default))
    targets: dict[str | None, dict[str | None, list[object]]] = {}
    for value, before, after in pairs:
        targets.setdefault(before, {}).setdefault(after, []).append(value)
    mapping: dict[str, str] = {}
    for before, after_values in targets.items():
        if len(after_values) > 1:
            shown = "; ".join(
                f"{after!r} for {old.subject} in {_listed(inputs)}" for after, inputs in after_values.items()
            )
            raise CaseNotMappable(
                f"rows that were {before!r} now split ({shown}); category_remap renames whole categories only"
            )
        (after,) = after_values
        if after == before:
            continue
        if before is None or after is None:
            raise CaseNotMappable(f"the output {before!r} becomes {after!r}; a remap cannot involve NULL")
        mapping[before] = after
    return mapping  # empty: restated or reordered, every row keeps its value


def _listed(inputs: list[object]) -> str:
    return ", ".join("(any other value)" if value is OTHER_INPUTS else repr(value) for value in inputs)
