"""Carrying a `category_remap` {k: v} through a CASE over the source column, or through UPPER/LOWER/TRIM of it.

A CASE is read as a table: each listed input value -> its output (first WHEN wins), and what every other value
gives (the ELSE constant, NULL, or the value itself for `ELSE x`). The rows that held k now give f(v) instead of
f(k); a remap {f(k): f(v)} on the same rows says exactly that only when no other input value can give f(k): f(k)
must come from the one listed value k (not from the ELSE, which every unlisted value reaches)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from tools.errors import BadRequest
from tools.transforms.evaluate import evaluate
from tools.transforms.nodes import Scalar, is_source, literal, mentions, peel, shown, unparen
from tools.transforms.values import NotEvaluable


class NotRemappable(BadRequest, ValueError):
    """The remap cannot be carried through exactly; the message says why."""


class _Keep:
    def __repr__(self) -> str:
        return "the value itself"


KEEP = _Keep()
Output = str | None | _Keep


@dataclass(frozen=True)
class CaseTable:
    outputs: dict[str, str | None]
    """Listed input value -> output, first match wins, as SQL evaluates the WHEN branches."""
    default: Output

    def apply(self, value: str) -> str | None:
        if value in self.outputs:
            return self.outputs[value]
        return value if isinstance(self.default, _Keep) else self.default

    def inputs_of(self, output: str) -> list[str]:
        """The input values that give `output`; `*` stands for every unlisted value (a constant ELSE)."""
        found = [value for value, out in self.outputs.items() if out == output]
        if self.default == output:
            found.append("*")
        elif isinstance(self.default, _Keep) and output not in self.outputs:
            found.append(output)
        return found


def _is_subject(node: exp.Expr, source: tuple[str, str]) -> bool:
    return is_source(peel(node, "string"), source)


def _listed(condition: exp.Expr, source: tuple[str, str]) -> list[str]:
    """The string values a WHEN condition matches: `x = 'a'`, `x IN ('a', 'b')`, or an OR of them."""
    condition = unparen(condition)
    if isinstance(condition, exp.Or):
        return _listed(condition.this, source) + _listed(condition.expression, source)
    if isinstance(condition, exp.EQ):
        for side, other in ((condition.this, condition.expression), (condition.expression, condition.this)):
            value = literal(peel(other, "string"))
            if _is_subject(side, source) and isinstance(value, str):
                return [value]
    if isinstance(condition, exp.In) and _is_subject(condition.this, source) and condition.expressions:
        values = [literal(peel(item, "string")) for item in condition.expressions]
        if all(isinstance(value, str) for value in values):
            return [str(value) for value in values]
    raise NotRemappable(f"WHEN {shown(condition)} is not `column = 'value'` or `column IN ('value', ...)`")


def _output(node: exp.Expr | None, source: tuple[str, str]) -> Output:
    if node is None or isinstance(unparen(node), exp.Null):
        return None
    if _is_subject(node, source):
        return KEEP
    value = literal(node)
    if not isinstance(value, str):
        raise NotRemappable(f"the CASE yields {shown(node)}, not a string constant")
    return value


def case_table(node: exp.Expr, source: tuple[str, str]) -> CaseTable:
    case = peel(node, "string")
    if not isinstance(case, exp.Case):
        raise NotRemappable("it is not a CASE over the column, nor UPPER/LOWER/TRIM of it")
    outputs: dict[str, str | None] = {}
    subject = case.this
    if subject is not None and not _is_subject(subject, source):
        raise NotRemappable(f"the CASE tests {shown(subject)}, not the column itself")
    for branch in case.args.get("ifs") or []:
        if subject is not None:
            value = literal(branch.this)
            if not isinstance(value, str):
                raise NotRemappable(f"WHEN {shown(branch.this)} is not a string constant")
            values = [value]
        else:
            values = _listed(branch.this, source)
        then = _output(branch.args["true"], source)
        for value in values:
            outputs.setdefault(value, value if isinstance(then, _Keep) else then)
    return CaseTable(outputs, _output(case.args.get("default"), source))


def _explain_inputs(key: str, after: str, output: str, inputs: list[str]) -> str:
    named = [repr(i) for i in inputs if i not in ("*", key)]
    if "*" in inputs:
        others = "every unlisted input value (it is the ELSE value)" + (
            f", and from {', '.join(named)}" if named else ""
        )
    else:
        others = " and ".join(named)
    return (
        f"only the rows holding {key!r} turn {output!r} into {after!r}, but {output!r} also comes from {others}: "
        "a remap of the output column cannot change those rows alone"
    )


def remap_through_case(mapping: dict[str, str], table: CaseTable) -> dict[str, str]:
    derived: dict[str, str] = {}
    for key, value in mapping.items():
        before, after = table.apply(key), table.apply(value)
        if before == after:
            continue
        if before is None or after is None:
            raise NotRemappable(f"{key!r} -> {value!r} turns {before!r} into {after!r}; a remap cannot set NULL")
        inputs = table.inputs_of(before)
        if inputs != [key]:
            raise NotRemappable(_explain_inputs(key, after, before, inputs))
        derived[before] = after
    return derived


_TEXT_FUNCTIONS = (exp.Upper, exp.Lower, exp.Trim)


def text_function_chain(node: exp.Expr, source: tuple[str, str]) -> bool:
    """Whether the expression is UPPER/LOWER/TRIM (nested, with lossless text casts) of the column alone."""
    node = peel(node, "string")
    while isinstance(node, _TEXT_FUNCTIONS) and node.args.get("expression") is None:
        node = peel(node.this, "string")
    return _is_subject(node, source)


def remap_through_text(mapping: dict[str, str], node: exp.Expr, source: tuple[str, str]) -> dict[str, str]:
    """The remap of the transformed literals, when the function keeps the listed keys apart."""

    def f(value: str) -> str:
        try:
            result = evaluate(node, source, value)
        except NotEvaluable as exc:
            raise NotRemappable(str(exc)) from exc
        if not isinstance(result, str):
            raise NotRemappable(f"{shown(node)} of {value!r} is not a text value")
        return result

    images: dict[str, str] = {}
    for key in mapping:
        image = f(key)
        if image in images.values():
            other = next(k for k, v in images.items() if v == image)
            raise NotRemappable(f"{other!r} and {key!r} both become {image!r}: the keys are not kept apart")
        images[key] = image
    return {images[key]: f(value) for key, value in mapping.items() if images[key] != f(value)}


_AGGREGATES = (exp.Sum, exp.Min, exp.Max, exp.Avg)


def _branch_value(node: exp.Expr | None, source: tuple[str, str]) -> Scalar | None | _Keep:
    """A branch's value when it is a constant (None: NULL); KEEP for anything else (another column, an expression)."""
    if node is None or isinstance(unparen(node), exp.Null):
        return None
    if mentions(node, source) or any(True for _ in node.find_all(exp.Column)):
        return KEEP
    try:
        value = evaluate(node, source, None)
    except NotEvaluable:
        return KEEP
    return value if isinstance(value, str | int | float | bool) else KEEP


def remap_to_constant(mapping: dict[str, str], node: exp.Expr, source: tuple[str, str]) -> Scalar:
    """`CASE WHEN x = 'gift_card' THEN amount ELSE 0 END` under {'gift_card': 'store_credit'}: every row that held
    a remapped key now takes a branch that is the constant c, and every other row already gives c (each other
    branch is c), so the output becomes c on the remapped rows and stays c elsewhere: `constant c`. Under SUM, MIN,
    MAX or AVG (every row changed) the group's value is then c (SUM only for c = 0). Raises NotRemappable."""
    inner = peel(node, "numeric")
    aggregate = isinstance(inner, _AGGREGATES)
    case = peel(inner.this, "numeric") if aggregate else peel(node, "string")
    if not isinstance(case, exp.Case) or case.this is not None:
        raise NotRemappable("it is not a CASE over the column, nor UPPER/LOWER/TRIM of it")
    listed: dict[str, exp.Expr | None] = {}
    for branch in case.args.get("ifs") or []:
        for value in _listed(branch.this, source):
            listed.setdefault(value, branch.args["true"])
    default = case.args.get("default")
    reached = [default] + [then for value, then in listed.items() if value not in mapping]
    values = {repr(_branch_value(then, source)) for then in reached}
    after = {repr(_branch_value(listed.get(v, default), source)) for v in mapping.values()}
    constant = _branch_value(default, source)  # every reached branch gives the same value (checked below)
    if len(values | after) != 1 or constant is None or isinstance(constant, _Keep):
        raise NotRemappable(f"{shown(case)} gives the remapped rows a value that other rows do not all share")
    if aggregate and isinstance(inner, exp.Sum) and constant != 0:
        raise NotRemappable(f"{shown(inner)} of the constant {constant!r} depends on the group's size")
    return constant
