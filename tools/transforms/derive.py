"""What a downstream column undergoes when an upstream column it is computed from undergoes a mutation: the same
rows (the original's fraction and seed), a mutation derived exactly through the column's SQL expression, or a
refusal that quotes the expression. `compose` follows a lineage path hop by hop.

Identities pass every mutation unchanged: the bare column, a rename, and a lossless cast (to a floating type or
unparameterised NUMERIC/DECIMAL for numeric operators; to TEXT or VARCHAR without a length for string ones). A cast
to an integer type rounds, so it is no identity. Everything else is one reader per operator (readers.py)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlglot import exp

from tools.mutations.operators import Mutation
from tools.transforms.expressions import ColumnExpression
from tools.transforms.nodes import CastKind, is_source, mentions, peel, short_sql
from tools.transforms.readers import READERS, Refused, describe
from tools.transforms.unions import OneBranch, through_union

NON_IDENTITY = "non_identity_transform"
"""The `code` of a refusal: the expression is not one the mutation can be carried through exactly."""

NULL_PRESERVING = frozenset(
    {"scale", "shift", "sign_flip", "null_inject", "category_remap", "round", "clip", "noise", "cyclic_shift"}
)
"""Operators that leave a NULL as NULL: carried to the rows a LEFT JOIN fills with NULL, which they leave alone."""

_CAST_KIND: dict[str, CastKind] = {
    "scale": "numeric", "shift": "numeric", "sign_flip": "numeric", "round": "numeric", "clip": "numeric",
    "noise": "numeric", "cyclic_shift": "numeric", "category_remap": "string", "unseen_category": "string",
    "null_inject": "any", "shuffle": "any",
}  # fmt: skip


@dataclass(frozen=True)
class Derivation:
    mutation: Mutation | None
    """What the output column undergoes on the same rows; None when refused or unchanged."""
    identity: bool
    """The mutation passes as it is (every hop a bare column, a rename or a lossless cast)."""
    unchanged: bool
    """The mutation provably cannot alter the output column."""
    explanation: str
    code: str | None = None
    """NON_IDENTITY for a refusal; None otherwise."""

    @property
    def refused(self) -> bool:
        return self.mutation is None and not self.unchanged


def _cast_kind(mutation: Mutation) -> CastKind:
    if mutation.op != "constant":
        return _CAST_KIND[mutation.op]
    value = mutation.model_dump()["value"]
    return "none" if isinstance(value, bool) else "string" if isinstance(value, str) else "numeric"


def _refused(what: str, where: str, reason: str) -> Derivation:
    return Derivation(None, False, False, f"cannot carry {what} through {where}: {reason}", NON_IDENTITY)


def derive(mutation: Mutation, expression: ColumnExpression, source: tuple[str, str]) -> Derivation:
    """The mutation the output column `expression.output` undergoes when `source` (one of `expression.upstream`,
    or of `expression.row_columns`) undergoes `mutation`; raises ValueError when the statement does not read it.
    A source that also picks or matches rows (WHERE, JOIN, ...) is refused: the change alters which rows exist."""
    if source not in expression.upstream | expression.row_columns:
        raise ValueError(f"{expression.output} = {expression.sql} does not read {source[0]}.{source[1]}")
    output, what = expression.output, describe(mutation)
    where = f"{output} = {short_sql(expression.expression, expression.dialect)}"
    if source in expression.row_columns:
        rows = f"the SQL also picks or matches rows by {source[1]} (WHERE, JOIN, QUALIFY or LIMIT)"
        return _refused(what, where, f"{rows}: the change alters which rows exist")
    grouped = [a for a in expression.expression.find_all(exp.AggFunc) if mentions(a, source)]
    if grouped and mutation.fraction < 1.0:
        share = f"the change picks {mutation.fraction:g} of the rows at random"
        return _refused(what, where, f"{share}, but {grouped[0].sql()} combines rows: part of each group changes")
    spread, matched = False, None
    for row_note in expression.notes_for(source[0]):
        if row_note.kind == "repeats" and mutation.fraction < 1.0:
            share = f"the change picks {mutation.fraction:g} of the rows of {source[0]} at random"
            unknown = f"{share}, but {row_note.reason}: the share of output rows it reaches is unknown"
            return _refused(what, where, unknown)
        if row_note.kind == "matched" and mutation.op not in NULL_PRESERVING:
            if row_note.share is None:
                count = "set PROVENANCE_WAREHOUSE_URL so the warehouse counts the matched rows"
                return _refused(what, where, f"{row_note.reason}, so {mutation.op} does not reach them ({count})")
            matched = row_note.share
        spread = spread or (row_note.kind == "spreads" and mutation.fraction < 1.0)
    found = _through_rows(mutation, expression, source, where)
    if matched is not None and found.mutation is not None:
        # The experiment spreads the change over every row; the matched share keeps how many rows it reaches.
        fraction = float(f"{found.mutation.fraction * matched:.6g}")
        note = (
            f"; it reaches only the rows whose LEFT JOIN found a match, {matched:.3f} of them by the warehouse's "
            f"count: carried on that share of the rows, {fraction:g}"
        )
        found = replace(
            found, mutation=found.mutation.model_copy(update={"fraction": fraction}), identity=False,
            explanation=found.explanation + note,
        )  # fmt: skip
    if spread and found.mutation is not None:
        # The experiment picks rows one by one; here the rows sharing a dimension row change together.
        note = (
            f"; each output row reads at most one row of {source[0]} (its join key is unique), so each is reached "
            f"with the change's own probability {mutation.fraction:g}, the rows that share one of its rows together"
        )
        return replace(found, identity=False, explanation=found.explanation + note)
    return found


def _through_rows(mutation: Mutation, expression: ColumnExpression, source: tuple[str, str], where: str) -> Derivation:
    """`derive` once the rows are known to be kept: through a UNION ALL branch, an identity or an operator reader."""
    output, what = expression.output, describe(mutation)
    try:
        branch = through_union(expression.expression, source)
    except ValueError as exc:
        return _refused(what, where, f"UNION ALL: {exc}")
    if branch is not None:
        return _through_branch(mutation, expression, source, branch)
    if is_source(peel(expression.expression, _cast_kind(mutation)), source):
        return Derivation(mutation, True, False, f"{output}: {what} (identity) because {where}")
    try:
        outcome = READERS[mutation.op](mutation, expression.expression, source, expression.integers)
    except Refused as exc:
        return _refused(what, where, str(exc))
    if outcome.mutation is None:
        return Derivation(None, False, True, f"{output}: unchanged by {what} because {where}: {outcome.note}")
    note = f" ({outcome.note})" if outcome.note else ""
    return Derivation(outcome.mutation, False, False, f"{output}: {describe(outcome.mutation)} because {where}{note}")


def _through_branch(
    mutation: Mutation, expression: ColumnExpression, source: tuple[str, str], branch: OneBranch
) -> Derivation:
    """The change on the rows of the branches that read the column, then spread over the union's rows."""
    what = describe(mutation)
    where = f"{expression.output} = {short_sql(expression.expression, expression.dialect)}"
    if branch.share is None:
        fix = "set PROVENANCE_WAREHOUSE_URL so the warehouse counts each branch's rows"
        return _refused(what, where, f"{branch.described}; their share of the rows is unknown ({fix})")
    seen = replace(
        ColumnExpression.of(
            expression.output, branch.expression, expression.dialect, expression.row_columns, expression.row_notes
        ),
        integers=expression.integers,
    )
    if source not in seen.upstream:
        return Derivation(None, False, True, f"{expression.output}: unchanged: {branch.described}")
    inner = derive(mutation, seen, source)
    if inner.mutation is None:
        return replace(inner, explanation=f"{inner.explanation} ({branch.described})")
    if branch.share <= 0:
        return Derivation(None, False, True, f"{expression.output}: unchanged: {branch.described}")
    spread = inner.mutation.model_copy(update={"fraction": float(f"{inner.mutation.fraction * branch.share:.6g}")})
    return Derivation(spread, False, False, f"{inner.explanation}; {branch.described}")


def compose(mutation: Mutation, steps: list[tuple[ColumnExpression, tuple[str, str]]]) -> Derivation:
    """Derive hop by hop along a lineage path (each step: the next column's expression and which of its upstream
    columns the previous hop's column is); stops at the first refusal or unchanged column."""
    current, identity = mutation, True
    explanations: list[str] = []
    copies: list[str] = []
    for expression, source in steps:
        step = derive(current, expression, source)
        # A column copied under its own name says nothing a reader needs; a rename or a cast does.
        (copies if step.identity and expression.output == source[1] else explanations).append(step.explanation)
        if step.mutation is None:
            return replace(step, identity=False, explanation="; then ".join(explanations))
        current, identity = step.mutation, identity and step.identity
    told = explanations or copies[-1:]
    return Derivation(current, identity, False, "; then ".join(told) or f"{describe(mutation)} (no step)")
