"""`UNION ALL`: each output column is one expression per branch, and a change reaches the rows of the branches that
read the changed column only.

A union column is written `__UNION_ALL__(rows_1, expr_1, rows_2, expr_2, …)`, an ordinary SQL function call, so it
survives being stored as text with a lineage step and parsed again. `rows_i` is what tells the branch's share of
the rows: at first a string, the SQL that counts the branch's rows (`WITH … SELECT count(*) FROM (branch)`), which
the catalog side replaces by the count when a warehouse is configured (tools/catalog/branch_counts.py); a number
is a count. Derivation (derive.py) carries the change through the branch that reads it and multiplies the
fraction of rows by the branch's share; with no counts it refuses, saying what supplies them.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from tools.transforms.nodes import mentions, number

UNION_ALL = "__UNION_ALL__"


@dataclass(frozen=True)
class Branch:
    rows: str | float  # the counting SQL, or the number of rows
    expression: exp.Expr


def union_node(branches: list[tuple[str, exp.Expr]]) -> exp.Expr:
    args: list[exp.Expr] = []
    for count_sql, expression in branches:
        args += [exp.Literal.string(count_sql), expression]
    return exp.Anonymous(this=UNION_ALL, expressions=args)


def is_union(node: exp.Expr) -> bool:
    return isinstance(node, exp.Anonymous) and str(node.this).upper() == UNION_ALL


def branches(node: exp.Expr) -> list[Branch]:
    args = list(node.expressions)
    out: list[Branch] = []
    for rows, expression in zip(args[::2], args[1::2], strict=True):
        count = number(rows)
        out.append(Branch(float(count) if count is not None else str(rows.name), expression))
    return out


def with_counts(node: exp.Expr, counts: dict[str, float]) -> exp.Expr:
    """The expression with each union's counting SQL replaced by its count where `counts` has it."""
    out = node.copy()
    for union in [n for n in out.find_all(exp.Anonymous) if is_union(n)]:
        for literal in union.expressions[::2]:
            if literal.is_string and literal.name in counts:
                literal.replace(exp.Literal.number(counts[literal.name]))
    return out


def counting_sql(node: exp.Expr) -> list[str]:
    """The counting statements of the unions in an expression, for the warehouse."""
    return [b.rows for u in node.find_all(exp.Anonymous) if is_union(u) for b in branches(u) if isinstance(b.rows, str)]


@dataclass(frozen=True)
class OneBranch:
    expression: exp.Expr
    """The whole expression as the rows of the branches reading the column see it."""
    share: float | None
    """Their share of the union's rows; None when a branch's row count is not known."""
    described: str


def through_union(node: exp.Expr, source: tuple[str, str]) -> OneBranch | None:
    """For an expression with one union reading `source` in some of its branches: the expression those branches'
    rows see, and their share of the rows. None when no union is in the way."""
    unions = [n for n in node.find_all(exp.Anonymous) if is_union(n) and mentions(n, source)]
    if not unions:
        return None
    if len(unions) > 1:
        raise ValueError("several UNION ALLs read the column: their rows overlap in ways not followed")
    union = unions[0]
    parts = branches(union)
    reading = [i for i, b in enumerate(parts) if mentions(b.expression, source)]
    others = [b.expression for i, b in enumerate(parts) if i not in reading]
    shapes = {b.expression.sql() for i, b in enumerate(parts) if i in reading}
    if len(shapes) > 1:
        raise ValueError("the branches reading the column compute it differently")
    if any(mentions(e, source) for e in others):
        raise ValueError("the column is read by some branches only in part")
    chosen = parts[reading[0]].expression
    whole = node.copy()
    target = next(n for n in whole.find_all(exp.Anonymous) if is_union(n) and n.sql() == union.sql())
    if target is whole:
        whole = chosen.copy()
    else:
        target.replace(chosen.copy())
    counts = [b.rows for b in parts]
    described = f"UNION ALL: the change reaches the rows of {len(reading)} of its {len(parts)} branches"
    if not all(isinstance(c, float) for c in counts):
        return OneBranch(whole, None, described)
    total = sum(float(c) for c in counts)
    share = sum(float(counts[i]) for i in reading) / total if total else 0.0
    return OneBranch(whole, share, f"{described}, {share:.3f} of its rows by the warehouse's count")
