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
            hoist_nested_ctes(query),
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


def unfollowed_ctes(query: exp.Query, select: exp.Select) -> set[str]:
    """The CTEs the output columns of `select` (the flattened outer SELECT) still reference."""
    ctes = {cte.alias_or_name.lower() for cte in query.ctes}
    if not ctes:
        return set()
    sources = _sources(select)
    found = set()
    for projection in select.expressions:
        for column in projection.find_all(exp.Column):
            table = sources.get(column.table.lower(), column.table.lower()) if column.table else ""
            if table in ctes:
                found.add(table)
    from_ = select.args.get("from_")
    if not found and from_ is not None and isinstance(from_.this, exp.Table) and from_.this.name.lower() in ctes:
        body = next(c.this for c in query.ctes if c.alias_or_name.lower() == from_.this.name.lower())
        if not isinstance(body, exp.Select) or any(isinstance(p, exp.Star) for p in body.expressions):
            found.add(from_.this.name.lower())
    return found


def hoist_nested_ctes(query: exp.Query) -> exp.Query:
    """A copy with each CTE's own WITH moved up beside it (renamed `<cte>__<name>` where a name is taken), as dbt's
    ephemeral models nest them: `with __dbt__cte__x as (with a as (…) select * from a), …`."""
    out = query.copy()
    with_ = out.args.get("with_")
    if not isinstance(with_, exp.With):
        return out
    for _ in range(MAX_DEPTH):
        nested = next((c for c in with_.expressions if isinstance(c.this.args.get("with_"), exp.With)), None)
        if nested is None:
            break
        taken = {c.alias_or_name.lower() for c in with_.expressions}
        inner = nested.this.args["with_"]
        nested.this.set("with_", None)
        renames: dict[str, str] = {}
        for cte in inner.expressions:
            name = cte.alias_or_name.lower()
            renames[name] = f"{nested.alias_or_name.lower()}__{name}" if name in taken else name
        hoisted = []
        for cte in inner.expressions:
            _rename_tables(cte.this, renames)
            cte.set("alias", exp.TableAlias(this=exp.to_identifier(renames[cte.alias_or_name.lower()])))
            hoisted.append(cte)
        _rename_tables(nested.this, renames)
        position = with_.expressions.index(nested)
        with_.set("expressions", with_.expressions[:position] + hoisted + with_.expressions[position:])
    return out


def _rename_tables(node: exp.Expr, renames: dict[str, str]) -> None:
    for table in node.find_all(exp.Table):
        name = table.name.lower()
        if not table.args.get("db") and name in renames and renames[name] != name:
            table.set("this", exp.to_identifier(renames[name]))
            if not table.alias:
                table.set("alias", exp.TableAlias(this=exp.to_identifier(name)))
