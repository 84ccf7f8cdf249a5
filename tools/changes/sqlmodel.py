"""One version of a SQL model, parsed with sqlglot: the table it builds (when the SQL says so) and the output
columns of its final SELECT by name, each with its expression and the line it starts on."""

from __future__ import annotations

from dataclasses import dataclass, field

import sqlglot
from sqlglot import Token, TokenType, exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError

from tools.changes.flatten import flatten, hoist_nested_ctes, skeleton, unfollowed_ctes
from tools.errors import BadRequest


class SqlParseError(BadRequest, ValueError):
    """sqlglot cannot read the SQL, or it has no SELECT; `line` is where the problem is (1 when unknown)."""

    def __init__(self, message: str, line: int = 1) -> None:
        super().__init__(message)
        self.line = max(line, 1)


class UnknownDialectError(BadRequest, ValueError):
    """sqlglot has no dialect of that name (exit 2); the message suggests the closest."""


def check_dialect(dialect: str | None) -> None:
    """Refuse an unknown --dialect before any file is read."""
    if dialect is None:
        return
    try:
        Dialect.get_or_raise(dialect)
    except ValueError as exc:
        raise UnknownDialectError(f"--dialect: {exc} (sqlglot's dialect names: postgres, snowflake, ...)") from exc


@dataclass(frozen=True)
class OutputColumn:
    name: str
    expression: exp.Expr
    """The column's expression without its alias."""
    line: int


@dataclass(frozen=True)
class SqlModel:
    table: str | None
    """The table a CREATE TABLE/VIEW ... AS or INSERT INTO names (qualified as written); None for a bare SELECT."""
    columns: dict[str, OutputColumn]
    """By lower-cased name, in SELECT order (unquoted SQL identifiers are case-insensitive)."""
    has_star: bool
    """The SELECT has a `*` no CTE expands: columns not listed may still come through it."""
    opaque: list[str] = field(default_factory=list)
    """CTEs the output columns still read after flattening (an aggregate, a window, a union, a nested WITH): a
    change inside one shows in no column expression and, when only in their column lists, not in the skeleton."""
    cte_sql: dict[str, str] = field(default_factory=dict)
    """Each CTE's body (nested WITHs hoisted), comments dropped and identifiers normalised."""
    skeleton: str = ""
    """The query with its column lists blanked (flatten.py): what the output columns' expressions do not carry."""
    sql: str = ""
    """The whole query, comments dropped and identifiers normalised: equal means the same model."""


def _closure(names: set[str], bodies: dict[str, exp.Expr]) -> set[str]:
    """The CTEs named and every CTE they read, transitively."""
    found, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name in found or name not in bodies:
            continue
        found.add(name)
        todo += [t.name.lower() for t in bodies[name].find_all(exp.Table) if t.name.lower() in bodies]
    return found


def canonical(expression: exp.Expr, dialect: str | None = None) -> str:
    """The expression's SQL with comments dropped and identifiers lower-cased: equal means unchanged."""
    return expression.sql(dialect=dialect, comments=False, normalize=True)


def first_line(expression: exp.Expr) -> int:
    """The first source line of any token under `expression` (sqlglot records lines on identifiers)."""
    lines = [int(node.meta["line"]) for node in expression.walk() if node.meta.get("line") is not None]
    return min(lines, default=1)


def _parse_error(exc: ParseError | TokenError) -> SqlParseError:
    if isinstance(exc, ParseError) and exc.errors:
        first = exc.errors[0]
        where = f"line {first.get('line')}, col {first.get('col')}"
        # sqlglot's description may embed a token's repr ("... but got <Token token_type: ...>"): cut it
        description = str(first.get("description") or "syntax error").split(" <Token")[0].removesuffix(" but got")
        detail = f"{description} near {first.get('highlight')!r}"
        return SqlParseError(f"{where}: {detail}", int(first.get("line") or 1))
    return SqlParseError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)


def _table_name(node: exp.Expr | None) -> str | None:
    table = node if isinstance(node, exp.Table) else (node.find(exp.Table) if node is not None else None)
    if table is None:
        return None
    return ".".join(part.name for part in table.parts)


def _final_query(statements: list[exp.Expr]) -> tuple[exp.Query, str | None]:
    """The last statement that yields rows, and the table it is written into."""
    for statement in reversed(statements):
        if isinstance(statement, exp.Create | exp.Insert) and isinstance(statement.expression, exp.Query):
            return statement.expression, _table_name(statement.this)
        if isinstance(statement, exp.Query):
            return statement, None
    raise SqlParseError("no SELECT found (a model's SQL must end in a SELECT, or CREATE ... AS SELECT)")


def _select(query: exp.Query) -> exp.Select:
    """The SELECT whose column list names the output: the left-most branch of a UNION."""
    node: exp.Expr = query
    while not isinstance(node, exp.Select):
        if isinstance(node, exp.SetOperation):
            node = node.left
        elif isinstance(node, exp.Subquery):
            node = node.unnest()
        else:
            raise SqlParseError(f"cannot find the output columns of a {type(node).__name__} query", first_line(node))
    return node


_LIST_END = frozenset(
    {
        TokenType.FROM,
        TokenType.INTO,
        TokenType.WHERE,
        TokenType.GROUP_BY,
        TokenType.HAVING,
        TokenType.WINDOW,
        TokenType.QUALIFY,
        TokenType.ORDER_BY,
        TokenType.LIMIT,
        TokenType.UNION,
        TokenType.EXCEPT,
        TokenType.INTERSECT,
        TokenType.SEMICOLON,
    }
)


def _projection_lines(tokens: list[Token], anchor: int, count: int) -> list[int] | None:
    """The line each of the `count` output columns starts on, from the tokens: sqlglot records positions on
    identifiers only, so `CASE` / `CAST(` / `COALESCE(` on the line above the first column name would otherwise
    be missed. The SELECT is the outermost (then first) one of the statement holding offset `anchor` -- the one
    _select() picks. None when the token walk does not find exactly `count` columns (then first_line decides)."""
    depths: list[int] = []
    depth = 0
    for token in tokens:
        depth -= token.token_type == TokenType.R_PAREN
        depths.append(depth)
        depth += token.token_type == TokenType.L_PAREN
    bounds = [0] + [i + 1 for i, t in enumerate(tokens) if t.token_type == TokenType.SEMICOLON and depths[i] == 0]
    begin = max(b for b in bounds if b == 0 or tokens[b - 1].start < anchor)
    end = min([b for b in bounds if b > begin] + [len(tokens)])
    selects = [i for i in range(begin, end) if tokens[i].token_type == TokenType.SELECT]
    if not selects:
        return None
    start = min(selects, key=lambda i: (depths[i], i))
    level, lines, expecting = depths[start], [], True
    for i in range(start + 1, end):
        kind = tokens[i].token_type
        if depths[i] < level or (depths[i] == level and kind in _LIST_END):
            break
        if expecting and not (depths[i] == level and kind in (TokenType.DISTINCT, TokenType.ALL)):
            lines.append(tokens[i].line)
            expecting = False
        expecting = expecting or (depths[i] == level and kind == TokenType.COMMA)
    return lines if len(lines) == count else None


def _anchor(select: exp.Select) -> int | None:
    starts = [int(n.meta["start"]) for n in select.expressions[0].walk() if n.meta.get("start") is not None]
    return min(starts, default=None) if select.expressions else None


MAX_SQL_CHARACTERS = 1_000_000
"""A model longer than this is not read (reported to review by hand): parsing is bounded by size."""


def parse_model(sql: str, dialect: str | None = None) -> SqlModel:
    """Parse one version of a model; raise SqlParseError naming the line when sqlglot cannot."""
    if len(sql) > MAX_SQL_CHARACTERS:
        raise SqlParseError(f"the model is {len(sql):,} characters long, more than the {MAX_SQL_CHARACTERS:,} read")
    try:
        return _parse_model(sql, dialect)
    except RecursionError as exc:  # sqlglot and the qualifier recurse over the tree
        raise SqlParseError("the SQL is nested too deeply to read (Python's recursion limit)") from exc


def _parse_model(sql: str, dialect: str | None) -> SqlModel:
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except (ParseError, TokenError) as exc:
        raise _parse_error(exc) from exc
    original, table = _final_query(statements)
    query = flatten(original, dialect)  # through the CTEs: each output column's expression over the tables read
    bodies = {cte.alias_or_name.lower(): cte.this for cte in hoist_nested_ctes(original).ctes}
    select = _select(query)
    anchor = _anchor(select)
    lines = (
        None
        if anchor is None
        else _projection_lines(sqlglot.tokenize(sql, read=dialect), anchor, len(select.expressions))
    )
    columns: dict[str, OutputColumn] = {}
    has_star = False
    for index, projection in enumerate(select.expressions):
        if isinstance(projection, exp.Star) or (isinstance(projection, exp.Column) and projection.is_star):
            has_star = True
            continue
        expression = projection.unalias()
        # An unnamed expression's name is engine-specific (`?column?`); its SQL is the stable key.
        name = projection.alias_or_name or canonical(expression, dialect)
        line = lines[index] if lines is not None else first_line(projection)
        columns.setdefault(name.lower(), OutputColumn(name, expression, line))
    return SqlModel(
        table=table,
        columns=columns,
        has_star=has_star,
        opaque=sorted(_closure(unfollowed_ctes(query, select), bodies)),
        cte_sql={name: body.sql(dialect=dialect, comments=False, normalize=True) for name, body in bodies.items()},
        skeleton=skeleton(original, dialect),
        sql=original.sql(dialect=dialect, comments=False, normalize=True),
    )


Scalar = bool | int | float | str


def literal(expression: exp.Expr) -> Scalar | None:
    """The Python value of a constant (`100`, `-1`, `2.5`, `'US'`, `TRUE`, `(5)`), or None when it is not one
    (NULL included: no operator takes a null parameter)."""
    while isinstance(expression, exp.Paren):
        expression = expression.this
    if isinstance(expression, exp.Neg):
        inner = literal(expression.this)
        return -inner if isinstance(inner, int | float) and not isinstance(inner, bool) else None
    if not isinstance(expression, exp.Literal | exp.Boolean):
        return None
    value = expression.to_py()
    if isinstance(value, bool | str):
        return value
    # `100` stays an int (a factor an integer column keeps its dtype under), `0.0` stays a float
    return int(value) if expression.is_int else float(value)


def number(expression: exp.Expr) -> int | float | None:
    value = literal(expression)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None
