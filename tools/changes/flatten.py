"""A dbt-style model read through its CTEs: `with … final as (…) select * from final` has output columns whose
expressions live in the CTEs. sqlglot's qualifier expands each `*` whose source's columns are known (a CTE that
lists them) and qualifies every column; then each output column's reference to a CTE is replaced by that CTE's
expression for it, down to the tables the model reads. A ×100 inside `joined` then shows as `o.amount * 100` on
the output column, as if the model were written flat.

What the output columns do not carry — a filter, a join condition, a grouping, a source table, a `union` branch —
is compared as the query's *skeleton* (every SELECT's column list blanked, except in set operations, whose branches
are compared whole): a change there cannot be expressed as a column change, and is never passed as "no change".
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import OptimizeError, SqlglotError
from sqlglot.optimizer.qualify import qualify

MAX_DEPTH = 32  # CTE chains deeper than this stay as references (and a `*` they hide stays a `*`)


def flatten(query: exp.Query, dialect: str | None) -> exp.Query:
    """`query` with stars expanded and output columns inlined through its CTEs; the query unchanged when it has no
    CTE or sqlglot cannot qualify it (its `*`, if any, then stays: the caller says the columns are unknown)."""
    if not query.ctes:
        return query
    try:
        qualified = qualify(
            query.copy(),
            dialect=dialect,
            validate_qualify_columns=False,
            quote_identifiers=False,
            identify=False,
        )
    except (OptimizeError, SqlglotError, KeyError, ValueError):
        return query
    if not isinstance(qualified, exp.Query):
        return query
    ctes = {cte.alias_or_name.lower(): cte.this for cte in qualified.ctes}
    outer = qualified
    while isinstance(outer, exp.SetOperation):
        outer = outer.left
    if isinstance(outer, exp.Select):
        outer.set("expressions", [_inline(p, outer, ctes, 0) for p in outer.expressions])
    return qualified


def _sources(select: exp.Select) -> dict[str, str]:
    """Alias -> table name for the FROM and JOIN tables of `select` (lower-cased)."""
    found: dict[str, str] = {}
    from_ = select.args.get("from_") or select.args.get("from")  # sqlglot 30 names it from_
    nodes = [from_.this] if from_ is not None else []
    nodes += [join.this for join in select.args.get("joins") or []]
    for node in nodes:
        if isinstance(node, exp.Table):
            found[node.alias_or_name.lower()] = node.name.lower()
    return found


def _inline(projection: exp.Expr, scope: exp.Select, ctes: dict[str, exp.Expr], depth: int) -> exp.Expr:
    if depth >= MAX_DEPTH:
        return projection
    sources = _sources(scope)

    def replace(node: exp.Expr) -> exp.Expr:
        if not isinstance(node, exp.Column) or not node.table:
            return node
        body = ctes.get(sources.get(node.table.lower(), ""))
        if not isinstance(body, exp.Select):  # a table, or a set operation: a reference it stays
            return node
        for candidate in body.expressions:
            if candidate.alias_or_name.lower() == node.name.lower() and not isinstance(candidate, exp.Star):
                inner = _inline(candidate.unalias().copy(), body, ctes, depth + 1)
                nested = node.parent is not None and not isinstance(node.parent, exp.Alias)
                return exp.Paren(this=inner) if nested and isinstance(inner, exp.Binary) else inner
        return node

    return projection.transform(replace, copy=True)


def skeleton(query: exp.Query, dialect: str | None) -> str:
    """The query's SQL with every column list blanked but the branches of set operations: equal skeletons mean
    the versions differ at most in what their output columns compute."""
    copy = query.copy()
    for select in list(copy.find_all(exp.Select)):
        if select.find_ancestor(exp.SetOperation) is None and not isinstance(select.parent, exp.SetOperation):
            select.set("expressions", [exp.Star()])
    return copy.sql(dialect=dialect, comments=False, normalize=True)
