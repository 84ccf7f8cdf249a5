"""Resolving a query's output columns to expressions over base-table columns: CTEs and subqueries are inlined,
`SELECT *` expands through them (and through a base table when a schema lists its columns), every column reference
becomes an `exp.Column` qualified with the base table it reads. What cannot be followed exactly (aggregates, window
functions, set operations, lateral joins, ambiguous or unknown columns) is an `Unreadable` with the reason."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sqlglot import exp

from tools.transforms.joins import NOTES, RowNote, join_notes, notes_of, tables_of
from tools.transforms.nodes import column_key, dotted, literal, normalise
from tools.transforms.sources import BaseTable, Env, Opaque, Relation, Resolved, Source, Unreadable
from tools.transforms.unions import union_node


def _all(relation: Relation, reason: str) -> Relation:
    return Relation(tuple((name, Unreadable(reason)) for name, _ in relation.columns))


def resolve_query(query: exp.Expr, env: Env) -> Relation:
    env = _with_ctes(query, env)
    if isinstance(query, exp.Subquery):
        return resolve_query(query.this, env)
    if isinstance(query, exp.Union) and not query.args.get("distinct"):
        return _union_all(query, env)
    if isinstance(query, exp.SetOperation):
        left = resolve_query(query.left, env)
        kind = type(query).__name__.upper()
        return _all(left, f"a set operation ({kind}) combines the rows of several queries")
    if isinstance(query, exp.Select):
        return _resolve_select(query, env)
    return Relation((), (Opaque(f"a {type(query).__name__} query"),))


def _union_all(query: exp.Union, env: Env) -> Relation:
    """Each output column: one expression per branch (unions.py), with the SQL that counts the branch's rows."""
    parts: list[exp.Expr] = []
    node: exp.Expr = query
    while (
        isinstance(node, exp.Union) and not node.args.get("distinct") and (node is query or not node.args.get("with_"))
    ):
        parts.insert(0, node.right)
        node = node.left
    parts.insert(0, node)
    relations = [resolve_query(part, env) for part in parts]
    if any(r.open for r in relations) or len({len(r.columns) for r in relations}) != 1:
        return _all(relations[0], "a UNION ALL whose branches' columns are not all known")
    context = _cte_prefix(env)
    counts = [f"{context}SELECT count(*) FROM ({part.sql(dialect=env.dialect)}) AS branch" for part in parts]
    columns: list[tuple[str, Resolved]] = []
    for index, (name, _) in enumerate(relations[0].columns):
        values = [r.columns[index][1] for r in relations]
        unreadable = next((v for v in values if isinstance(v, Unreadable)), None)
        if unreadable is not None:
            columns.append((name, unreadable))
        else:
            columns.append((name, union_node([(c, v) for c, v in zip(counts, values, strict=True)])))  # type: ignore[misc]
    notes = frozenset(n for r in relations for n in r.row_notes)
    rows = frozenset(c for r in relations for c in r.row_columns)
    return Relation(tuple(columns), (), rows, notes)


def _cte_prefix(env: Env) -> str:
    if not env.cte_sql:
        return ""
    return "WITH " + ", ".join(cte.sql(dialect=env.dialect) for cte in env.cte_sql.values()) + " "


def _with_ctes(query: exp.Expr, env: Env) -> Env:
    with_ = query.args.get("with_")
    if not isinstance(with_, exp.With):
        return env
    ctes = dict(env.ctes)
    cte_sql = dict(env.cte_sql)
    for cte in with_.expressions:
        name = normalise(cte.args["alias"].this)
        inner = replace(env, ctes=ctes)
        relation = resolve_query(cte.this, inner)
        if with_.args.get("recursive"):
            relation = _all(relation, "a recursive CTE")
        ctes[name] = _renamed(relation, cte.args["alias"])
        cte_sql[name] = cte
        env = replace(env, cte_sql=dict(cte_sql))
    return replace(env, ctes=ctes, cte_sql=cte_sql)


def _renamed(source: Source, alias: exp.Expr | None) -> Source:
    """Apply `alias(a, b, ...)` column names to a source, by position."""
    names = [normalise(i) for i in alias.args.get("columns") or []] if isinstance(alias, exp.TableAlias) else []
    if not names:
        return source
    if not isinstance(source, Relation) or source.open:
        return Opaque("a source renamed by a column alias list whose columns are unknown")
    columns = list(source.columns)
    renamed = [(new, value) for new, (_, value) in zip(names, columns, strict=False)]
    return Relation(tuple(renamed + columns[len(names) :]))


def _source(node: exp.Expr, env: Env) -> tuple[str, Source]:
    alias = node.args.get("alias")
    alias_name = normalise(alias.this) if isinstance(alias, exp.TableAlias) and alias.this else None
    if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
        parts = [part for part in node.parts if isinstance(part, exp.Identifier)]
        name = dotted(parts)
        cte = env.ctes.get(name) if len(parts) == 1 else None
        source: Source = cte if cte is not None else BaseTable(tuple(parts), env.table_columns(name))
        return alias_name or normalise(parts[-1]), _renamed(source, alias)
    if isinstance(node, exp.Subquery):
        return alias_name or "", _renamed(resolve_query(node.this, env), alias)
    what: dict[type[exp.Expr], str] = {exp.Lateral: "a lateral join", exp.Unnest: "UNNEST", exp.Values: "VALUES",
                                       exp.Table: "a table function"}  # fmt: skip
    return alias_name or "", Opaque(what.get(type(node), f"a {type(node).__name__} in FROM"))


@dataclass
class FromClause:
    sources: list[tuple[str, Source]] = field(default_factory=list)
    merged: dict[str, Resolved] = field(default_factory=dict)
    """Columns a JOIN ... USING merges, by name: the left side's for INNER/LEFT joins."""
    joins: list[exp.Join] = field(default_factory=list)


def _flat_from(select: exp.Select) -> tuple[exp.Expr | None, list[exp.Join]]:
    """The first FROM item and every join, with PostgreSQL's parenthesised join text (`FROM (a d LEFT JOIN b c ON
    …)`, as `pg_get_viewdef` writes views) taken out of its parentheses."""
    from_ = select.args.get("from_")
    first = from_.this if isinstance(from_, exp.From) else None
    joins = list(select.args.get("joins") or [])
    while isinstance(first, exp.Subquery) and not first.alias and isinstance(first.this, exp.Table | exp.Subquery):
        inner = first.this
        if not inner.args.get("joins") and isinstance(inner, exp.Table):
            break
        nested = list(inner.args.get("joins") or [])
        first = inner.copy()
        first.set("joins", None)
        joins = nested + joins
    return first, joins


def _from_clause(select: exp.Select, env: Env) -> FromClause:
    clause = FromClause()
    first, joins = _flat_from(select)
    clause.joins = joins
    if first is not None:
        clause.sources.append(_source(first, env))
    for join in joins:
        alias, source = _source(join.this, env)
        if join.method == "NATURAL":
            source = Opaque("a NATURAL JOIN (columns matched by name)")
        for identifier in join.args.get("using") or []:
            name = normalise(identifier) if isinstance(identifier, exp.Identifier) else identifier.name.lower()
            if join.side in ("RIGHT", "FULL"):
                clause.merged[name] = Unreadable(f"{join.side} JOIN USING ({name}) merges both sides' {name}")
            else:
                clause.merged[name] = _resolve_column(exp.column(name), FromClause(list(clause.sources)))
        clause.sources.append((alias, source))
    return clause


def _select_reason(select: exp.Select) -> str | None:
    """Why no output column can be followed. A GROUP BY or an aggregate can: `SUM(x)` is resolved like any
    expression, its group keys decide the rows (`_row_columns`), and derive.py carries a change through an
    aggregate only when it reaches every row of the group (a share of rows would change part of a group)."""
    if select.args.get("distinct"):
        return "SELECT DISTINCT merges rows"
    return None


def _resolve_select(select: exp.Select, env: Env) -> Relation:
    clause = _from_clause(select, env)
    reason = _select_reason(select)
    by_side = _join_notes(clause, env)
    columns: list[tuple[str, Resolved]] = []
    open_: list[Source] = []
    for projection in select.expressions:
        star: exp.Expr | None = projection if isinstance(projection, exp.Star) else None
        if isinstance(projection, exp.Column) and projection.is_star:
            star = projection
        if star is None:
            name = _output_name(projection)
            value = Unreadable(reason) if reason else _resolve_expr(projection.unalias(), clause)
            columns.append((name, _noted(value, by_side, _sides_read(projection, clause))))
            continue
        expanded, opened = _star_columns(star, clause, by_side, env)
        columns.extend(expanded)
        open_.extend(opened)
    notes = frozenset(n for _, v in columns if not isinstance(v, Unreadable) for n in notes_of(v))
    notes |= {n for _, source in clause.sources if isinstance(source, Relation) for n in source.row_notes}
    first_repeats = any(note.kind in ("repeats", "spreads") for note in by_side.get(0, ()))
    unique = _unique_keys(select, clause, columns, first_repeats, env)
    if reason:
        unreadable = tuple((name, Unreadable(reason)) for name, _ in columns)
        return Relation(unreadable, (Opaque(reason),) if open_ else (), _row_columns(select, clause), notes, unique)
    origin = _origin(select, clause)
    return Relation(tuple(columns), tuple(open_), _row_columns(select, clause), notes, unique, origin)


def _star_columns(
    star: exp.Expr, clause: FromClause, by_side: dict[int, set[RowNote]], env: Env
) -> tuple[list[tuple[str, Resolved]], list[Source]]:
    """The columns a `*` or `alias.*` stands for, and the sources whose columns are unknown. Over JOIN … USING each
    merged column comes once — first, as the SQL standard and PostgreSQL order them, or where the left side has it,
    as DuckDB does — then every side's other columns."""
    columns: list[tuple[str, Resolved]] = []
    open_: list[Source] = []
    merged = clause.merged if isinstance(star, exp.Star) else {}
    using = {name: _noted(v, by_side, _sides_read(exp.column(name), clause)) for name, v in merged.items()}
    in_place = env.dialect == "duckdb"
    if not in_place:
        columns.extend(using.items())
    placed: set[str] = set()
    for source in _star_sources(star, clause):
        sides = {i for i, (_, s) in enumerate(clause.sources) if s is source}
        if isinstance(source, Relation):
            found = list(source.columns)
            open_.extend(source.open)
        elif isinstance(source, BaseTable) and source.columns is not None:
            found = [(normalise(c), _lookup(source, c)) for c in source.columns]
        else:
            open_.append(source)
            continue
        for name, value in found:
            if name not in merged:
                columns.append((name, _noted(value, by_side, sides)))
            elif in_place and name not in placed:
                placed.add(name)
                columns.append((name, using[name]))
    return columns, open_


def _origin(select: exp.Select, clause: FromClause) -> str | None:
    keeps_rows = not any(select.args.get(k) for k in ("where", "group", "having", "qualify", "limit", "offset"))
    if not keeps_rows or len(clause.sources) != 1 or clause.joins or select.args.get("distinct"):
        return None
    source = clause.sources[0][1]
    if any(agg.find_ancestor(exp.Window, exp.Select) is select for agg in select.find_all(exp.AggFunc)):
        return None
    return source.name if isinstance(source, BaseTable) else source.origin if isinstance(source, Relation) else None


def _sides_read(projection: exp.Expr, clause: FromClause) -> set[int]:
    """The FROM/JOIN sources (by position) a projection's columns come from; every source when one is unclear."""
    sides: set[int] = set()
    for column in projection.find_all(exp.Column):
        qualifier = normalise(column.args["table"]) if column.args.get("table") else None
        name = normalise(column.this) if isinstance(column.this, exp.Identifier) else column.name
        found = [
            i
            for i, (alias, source) in enumerate(clause.sources)
            if (alias == qualifier if qualifier else _has(source, name) is not False)
        ]
        sides |= set(found) if found else set(range(len(clause.sources)))
    return sides


def _noted(value: Resolved, by_side: dict[int, set[RowNote]], sides: set[int]) -> Resolved:
    """The value with the notes of the join sides it came through recorded on it (joins.NOTES)."""
    added = {n for i in sides for n in by_side.get(i, ())}
    if isinstance(value, Unreadable) or not added:
        return value
    copy = value.copy()
    copy.meta[NOTES] = frozenset(copy.meta.get(NOTES, frozenset()) | added)
    return copy


def _tables(source: Source) -> set[str]:
    if isinstance(source, BaseTable):
        return {source.name}
    if isinstance(source, Relation):
        found = {t for _, value in source.columns if not isinstance(value, Unreadable) for t in tables_of(value)}
        return found | {note.table for note in source.row_notes}
    return set()


def _source_unique(source: Source, env: Env) -> list[frozenset[str]]:
    if isinstance(source, BaseTable):
        return env.table_unique(source.name)
    return list(source.unique) if isinstance(source, Relation) else []


def _group_keys(select: exp.Select) -> list[exp.Expr]:
    """The GROUP BY expressions, a position (`group by 1`) read as the output column it names."""
    group = select.args.get("group")
    keys: list[exp.Expr] = []
    for key in group.expressions if isinstance(group, exp.Group) else []:
        position = literal(key)
        if isinstance(position, int) and not isinstance(position, bool) and 0 < position <= len(select.expressions):
            keys.append(select.expressions[position - 1].unalias())
        else:
            keys.append(key)
    return keys


def _join_notes(clause: FromClause, env: Env) -> dict[int, set[RowNote]]:
    if not clause.joins:
        return {}
    sides = [(alias, _tables(source)) for alias, source in clause.sources]
    unique = [_source_unique(source, env) for _, source in clause.sources]
    origins = [
        s.name if isinstance(s, BaseTable) else s.origin if isinstance(s, Relation) else None for _, s in clause.sources
    ]

    def same_column(left: int, right: int, name: str) -> bool:
        """Both sides' `name` is the same base column (not two columns that happen to share a name)."""
        a, b = (_lookup(clause.sources[i][1], name) for i in (left, right))
        return not isinstance(a, Unreadable) and not isinstance(b, Unreadable) and a.sql() == b.sql()

    return join_notes(clause.joins, sides, unique, origins, same_column)


def _unique_keys(
    select: exp.Select, clause: FromClause, columns: list[tuple[str, Resolved]], first_repeats: bool, env: Env
) -> tuple[frozenset[str], ...]:
    """Output column sets that identify a row: the GROUP BY keys, all columns of a DISTINCT, or the FROM source's
    unique keys passed through as bare columns when no join repeats its rows."""
    names = [name for name, _ in columns]
    if select.args.get("distinct"):
        return (frozenset(names),)
    group = select.args.get("group")
    if isinstance(group, exp.Group):
        wanted = {g.sql() for g in _group_keys(select)}
        keys = {
            _output_name(p)
            for p in select.expressions
            if p.unalias().sql() in wanted or (isinstance(p, exp.Alias) and p.alias in wanted)
        }
        return (frozenset(keys),) if len(keys) == len(wanted) else ()
    if not clause.sources:
        return ()
    alias, first = clause.sources[0]
    if first_repeats:
        return ()
    passed: dict[str, str] = {}  # source column -> output name
    for projection in select.expressions:
        node = projection.unalias()
        if isinstance(node, exp.Column) and not node.is_star and node.table in ("", alias):
            passed.setdefault(normalise(node.this) if isinstance(node.this, exp.Identifier) else node.name,
                              _output_name(projection))  # fmt: skip
        elif isinstance(node, exp.Star) or (isinstance(node, exp.Column) and node.is_star and node.table == alias):
            passed.update({n: n for n, _ in (first.columns if isinstance(first, Relation) else ())})
            if isinstance(first, BaseTable) and first.columns:
                passed.update({c.lower(): c.lower() for c in first.columns})
    return tuple(frozenset(passed[c] for c in key) for key in _source_unique(first, env) if key <= set(passed))


def _row_columns(select: exp.Select, clause: FromClause) -> frozenset[tuple[str, str]]:
    """The base columns this SELECT (or a source it reads) picks, matches, groups or orders rows by (WHERE, JOIN,
    QUALIFY, HAVING, GROUP BY, a window's PARTITION BY / ORDER BY, ORDER BY with LIMIT)."""
    found = {key for _, source in clause.sources if isinstance(source, Relation) for key in source.row_columns}
    conditions = [select.args.get(key) for key in ("where", "qualify", "having")]
    conditions += [join.args.get("on") for join in select.args.get("joins") or []]
    if select.args.get("limit") or select.args.get("offset"):
        conditions.append(select.args.get("order"))
    conditions += _group_keys(select)
    for window in select.find_all(exp.Window):  # what a window partitions and orders by decides its value
        if window.find_ancestor(exp.Select) is select:
            conditions += [*(window.args.get("partition_by") or []), window.args.get("order")]
    columns = [c for node in conditions if node is not None for c in node.find_all(exp.Column)]
    columns += [exp.column(name, table=alias) for alias, _ in clause.sources for name in clause.merged if alias]
    for column in columns:
        if column.find_ancestor(exp.Select) in (select, None):  # not a subquery's own columns
            resolved = _resolve_column(column, clause)
            if not isinstance(resolved, Unreadable):
                found |= {column_key(c) for c in resolved.find_all(exp.Column)}
    return frozenset(found)


def _star_sources(star: exp.Expr, clause: FromClause) -> list[Source]:
    inner = star.find(exp.Star)
    if inner is not None and any(inner.args.get(key) for key in ("except_", "replace", "rename", "ilike")):
        return [Opaque("SELECT * with EXCEPT/REPLACE/RENAME")]
    if isinstance(star, exp.Column):
        qualifier = normalise(star.args["table"]) if star.args.get("table") else ""
        found = [source for alias, source in clause.sources if alias == qualifier]
        return found[:1] or [Opaque(f"unknown table {qualifier}")]
    return [source for _, source in clause.sources]


def _output_name(projection: exp.Expr) -> str:
    if isinstance(projection, exp.Alias):
        return normalise(projection.args["alias"])
    node = projection
    while isinstance(node, exp.Cast):
        node = node.this
    if isinstance(node, exp.Column) and isinstance(node.this, exp.Identifier):
        return normalise(node.this)
    return projection.sql()


def _lookup(source: Source, name: str) -> Resolved:
    found = source.lookup(name)
    return Unreadable(f"no column {name}") if found is None else found


def _has(source: Source, name: str) -> bool | None:
    """Whether the source has the column: True, False, or None when its columns are not (all) known."""
    if isinstance(source, Relation):
        return True if any(key == name for key, _ in source.columns) else (None if source.open else False)
    if isinstance(source, BaseTable) and source.columns is not None:
        return name.lower() in (column.lower() for column in source.columns)
    return None


def _resolve_column(column: exp.Column, clause: FromClause) -> Resolved:
    name = normalise(column.this) if isinstance(column.this, exp.Identifier) else column.name
    qualifier = [normalise(p) for p in column.parts[:-1] if isinstance(p, exp.Identifier)]
    if qualifier:
        named = [s for alias, s in clause.sources if len(qualifier) == 1 and alias == qualifier[0]]
        named += [
            s
            for _, s in clause.sources
            if isinstance(s, BaseTable) and s.name.split(".")[-len(qualifier) :] == qualifier
        ]
        if not named:
            return Unreadable(f"no table {'.'.join(qualifier)} in FROM")
        return _lookup(named[0], name)
    if name in clause.merged:
        return clause.merged[name]
    known = [source for _, source in clause.sources if _has(source, name)]
    maybe = [source for _, source in clause.sources if _has(source, name) is None]
    if len(known) == 1:
        return _lookup(known[0], name)
    if len(known) > 1 or len(maybe) > 1:
        return Unreadable(
            f"column {name} is ambiguous: several tables in FROM may hold it (qualify it or pass a schema)"
        )
    if maybe:
        return _lookup(maybe[0], name)
    return Unreadable(f"no column {name} in FROM")


def _resolve_expr(node: exp.Expr, clause: FromClause) -> Resolved:
    # A window function resolves like any expression: its PARTITION BY and ORDER BY columns are row columns
    # (_row_columns), and no derivation rule reads a window (its value comes from other rows), so a change to a
    # column it reads is refused quoting it — while its lineage, and a change to another column beside it, is kept.
    if node.find(exp.Subquery, exp.Select, exp.Exists) is not None:
        return Unreadable("a subquery in the expression")
    result = node.copy()
    for column in list(result.find_all(exp.Column)):
        if column.is_star:
            return Unreadable(f"{column.sql()} inside an expression")
        resolved = _resolve_column(column, clause)
        if isinstance(resolved, Unreadable):
            return Unreadable(f"{column.sql()}: {resolved.reason}")
        replacement = resolved.copy()
        if _needs_parentheses(column, replacement):
            replacement = exp.Paren(this=replacement)
        if column is result:
            return replacement
        column.replace(replacement)
    return result


def _needs_parentheses(column: exp.Column, replacement: exp.Expr) -> bool:
    operator = (exp.Binary, exp.Neg, exp.Not)
    return isinstance(column.parent, operator) and isinstance(replacement, operator)
