"""The derivation table shared by test_derive.py (what is derived) and test_derive_duckdb.py (that it is exact):
one SQL expression over table t (x, y numeric; s text), a mutation of t.x or t.s, and what the output undergoes.

The expressions are read in DuckDB's dialect (the property test runs them there); `domain` says which data it draws
for the source column: `lower_text` holds no two spellings of one word, the assumption a remap through UPPER makes."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from tools.mutations import Mutation, parse_mutation

FRACTION, SEED = 0.5, 7
Domain = Literal["real", "positive", "small", "text", "lower_text"]


def m(op: str, **params: object) -> Mutation:
    return parse_mutation(op, params, fraction=FRACTION, seed=SEED)


@dataclass(frozen=True)
class Same:
    """An identity: the mutation passes as it is."""


@dataclass(frozen=True)
class Unchanged:
    """The output provably cannot change."""


@dataclass(frozen=True)
class Refused:
    fragment: str
    """A piece of the reason the refusal must give."""


Expected = Mutation | Same | Unchanged | Refused


@dataclass(frozen=True)
class Case:
    sql: str
    mutation: Mutation
    expected: Expected
    domain: Domain = "real"

    @property
    def source(self) -> str:
        return "s" if self.domain in ("text", "lower_text") else "x"

    @property
    def id(self) -> str:
        return f"{self.mutation.op}:{self.sql}"


CASE_ABC = "CASE WHEN s = 'a' THEN 'A' WHEN s IN ('b', 'c') THEN 'B' ELSE 'other' END"
CASE_NO_ELSE = "CASE WHEN s = 'a' THEN 'A' END"
CASE_KEEP = "CASE WHEN s = 'a' THEN 'A' ELSE s END"
SIMPLE_CASE = "CASE s WHEN 'a' THEN 'A' WHEN 'b' THEN 'B' END"

CASES: list[Case] = [
    # identities
    Case("x", m("scale", factor=100), Same()),
    Case("CAST(x AS DOUBLE)", m("scale", factor=100), Same()),
    Case("x::DECIMAL", m("scale", factor=100), Refused("DECIMAL(18, 3)")),  # DuckDB's default: sqlglot spells it out
    Case("CAST(x AS INTEGER)", m("scale", factor=100), Refused("not a lossless cast")),
    Case("CAST(x AS DECIMAL(10, 2))", m("scale", factor=100), Refused("not a lossless cast")),
    # scale through products and quotients
    Case("x / y", m("scale", factor=100), m("scale", factor=100)),
    Case("y / x", m("scale", factor=100), m("scale", factor=0.01)),
    Case("x * x", m("scale", factor=10), m("scale", factor=100)),
    Case("-x", m("scale", factor=3), m("scale", factor=3)),
    Case("2.5 * x", m("scale", factor=3), m("scale", factor=3)),
    Case("x / 4", m("scale", factor=-3), m("scale", factor=-3)),
    Case("x * y / (y + 1)", m("scale", factor=2), m("scale", factor=2)),
    Case("CAST(x AS DOUBLE) / y", m("scale", factor=100), m("scale", factor=100)),
    Case("ABS(x)", m("scale", factor=-2), m("scale", factor=2)),
    Case("SQRT(x)", m("scale", factor=4), m("scale", factor=2), domain="positive"),
    Case("SQRT(x)", m("scale", factor=-4), Refused("positive scale")),
    Case("LN(x)", m("scale", factor=100), m("shift", offset=math.log(100)), domain="positive"),
    Case("LOG10(x)", m("scale", factor=100), m("shift", offset=2), domain="positive"),
    Case("LOG(x)", m("scale", factor=1000), m("shift", offset=3), domain="positive"),
    Case("LOG(2, x)", m("scale", factor=8), m("shift", offset=3), domain="positive"),
    Case("LN(x) * 2", m("scale", factor=10), m("shift", offset=2 * math.log(10)), domain="positive"),
    Case("LN(x)", m("scale", factor=-1), Refused("positive scale")),
    Case("POWER(x, 3)", m("scale", factor=2), m("scale", factor=8)),
    Case("COALESCE(x, 0) * 100", m("scale", factor=3), m("scale", factor=3)),
    Case("COALESCE(x, 1)", m("scale", factor=3), Refused("falls back")),
    Case("x / x", m("scale", factor=10), Unchanged()),
    Case("x * x * x", m("scale", factor=1000), Refused("outside the operator's bounds")),
    Case("x + 1", m("scale", factor=100), Refused("adds a term")),
    Case("x + y", m("scale", factor=100), Refused("adds a term")),
    Case("ROUND(x, -2)", m("scale", factor=100), Refused("ROUND(x, -2)")),
    Case("CASE WHEN x > 0 THEN x ELSE 0 END", m("scale", factor=2), Refused("CASE")),
    Case("CASE WHEN y > 0 THEN x * 2 ELSE 0 END", m("scale", factor=3), m("scale", factor=3)),
    Case("CASE WHEN y > 0 THEN x END", m("scale", factor=3), m("scale", factor=3)),
    Case("CASE WHEN y > 0 THEN x ELSE y END", m("scale", factor=3), Refused("branches")),
    Case("CASE WHEN y > 0 THEN x ELSE 0 END", m("shift", offset=2), Refused("branches")),
    # comparisons with 0 keep their outcome under a positive scale (= and <> under any non-zero one)
    Case("x * y > 0", m("scale", factor=3), Unchanged()),
    Case("COALESCE(x, 0) >= 0", m("scale", factor=0.5), Unchanged()),
    Case("x = 0", m("scale", factor=-2), Unchanged()),
    Case("x > 0", m("scale", factor=-2), Refused("x > 0")),
    Case("x > 1", m("scale", factor=2), Refused("x > 1")),
    Case("x > 0", m("shift", offset=1), Refused("x > 0")),
    # shift through affine expressions
    Case("x + y", m("shift", offset=5), m("shift", offset=5)),
    Case("x - y", m("shift", offset=5), m("shift", offset=5)),
    Case("y - x", m("shift", offset=5), m("shift", offset=-5)),
    Case("3 * x + 1", m("shift", offset=2), m("shift", offset=6)),
    Case("(x - 10) / 4", m("shift", offset=2), m("shift", offset=0.5)),
    Case("x + x - y", m("shift", offset=2), m("shift", offset=4)),
    Case("x - x", m("shift", offset=4), Unchanged()),
    Case("EXP(x)", m("shift", offset=1), m("scale", factor=math.e), domain="small"),
    Case("x * y", m("shift", offset=5), Refused("other than a constant")),
    Case("x / y", m("shift", offset=5), Refused("non-zero constant")),
    Case("ABS(x)", m("shift", offset=5), Refused("ABS(x)")),
    # sign flip through products
    Case("x * y", m("sign_flip"), m("sign_flip")),
    Case("x / y", m("sign_flip"), m("sign_flip")),
    Case("-2 * x", m("sign_flip"), m("sign_flip")),
    Case("x * x", m("sign_flip"), Unchanged()),
    Case("ABS(x)", m("sign_flip"), Unchanged()),
    Case("x + 1", m("sign_flip"), Refused("adds a term")),
    # null_inject through NULL-propagating expressions, COALESCE and CASE
    Case("x * y + 1", m("null_inject"), m("null_inject")),
    Case("ROUND(x, 2)", m("null_inject"), m("null_inject")),
    Case("CAST(x AS INTEGER) * 2", m("null_inject"), m("null_inject")),
    Case("x > 3", m("null_inject"), m("null_inject")),
    Case("UPPER(TRIM(s))", m("null_inject"), m("null_inject"), domain="text"),
    Case("s || '-x'", m("null_inject"), m("null_inject"), domain="text"),
    Case("CONCAT(s, '-x')", m("null_inject"), m("constant", value="-x"), domain="text"),
    Case("COALESCE(x, 0)", m("null_inject"), m("constant", value=0)),
    Case("COALESCE(x, 0) + 1", m("null_inject"), m("constant", value=1)),
    Case("COALESCE(x, y)", m("null_inject"), Refused("falls back to y")),
    Case("x IS NULL", m("null_inject"), m("constant", value=True)),
    Case(CASE_ABC, m("null_inject"), m("constant", value="other"), domain="text"),
    Case(CASE_NO_ELSE, m("null_inject"), m("null_inject"), domain="text"),
    Case("CASE WHEN s IS NULL THEN 'missing' ELSE s END", m("null_inject"), m("constant", value="missing"), "text"),
    Case("CASE WHEN y > 0 THEN x ELSE 0 END", m("null_inject"), Refused("y > 0")),
    Case("GREATEST(x, 0)", m("null_inject"), Refused("GREATEST")),
    # constant through an expression of the column alone
    Case("x / 4 + 1", m("constant", value=8), m("constant", value=3.0)),
    Case("CAST(x AS DOUBLE)", m("constant", value=8), Same()),
    Case("UPPER(s)", m("constant", value="abc"), m("constant", value="ABC"), domain="text"),
    Case(CASE_ABC, m("constant", value="c"), m("constant", value="B"), domain="text"),
    Case("NULLIF(x, 0)", m("constant", value=0), m("null_inject")),
    Case("x + y", m("constant", value=1), Refused("depends on y")),
    Case("ROUND(x, 1)", m("constant", value=2.25), Refused("ROUND")),
    # category_remap through CASE and UPPER/LOWER/TRIM
    Case("s", m("category_remap", mapping={"a": "b"}), Same(), domain="text"),
    Case("CAST(s AS VARCHAR)", m("category_remap", mapping={"a": "b"}), Same(), domain="text"),
    Case(CASE_ABC, m("category_remap", mapping={"a": "d"}), m("category_remap", mapping={"A": "other"}), "text"),
    Case(CASE_ABC, m("category_remap", mapping={"b": "a"}), Refused("'B' also comes from 'c'"), domain="text"),
    Case(CASE_ABC, m("category_remap", mapping={"b": "c"}), Unchanged(), domain="text"),
    Case(CASE_ABC, m("category_remap", mapping={"d": "a"}), Refused("ELSE value"), domain="text"),
    Case(SIMPLE_CASE, m("category_remap", mapping={"a": "b"}), m("category_remap", mapping={"A": "B"}), "text"),
    Case(CASE_KEEP, m("category_remap", mapping={"e": "f"}), m("category_remap", mapping={"e": "f"}), "text"),
    Case(CASE_KEEP, m("category_remap", mapping={"a": "z"}), Refused("'A' also comes from 'A'"), "text"),
    Case("UPPER(s)", m("category_remap", mapping={"a": "b"}), m("category_remap", mapping={"A": "B"}), "lower_text"),
    Case("UPPER(s)", m("category_remap", mapping={"a": "b", "A": "c"}), Refused("not kept apart"), "text"),
    Case("LOWER(s)", m("category_remap", mapping={"a": "A"}), Unchanged(), domain="text"),
    Case("s || '-x'", m("category_remap", mapping={"a": "b"}), Refused("not a CASE"), domain="text"),
    # a pivot column: the remapped rows fall to the ELSE constant every other row already gives
    Case(
        "CASE WHEN s = 'a' THEN x ELSE 0 END",
        m("category_remap", mapping={"a": "b"}),
        m("constant", value=0),
        domain="text",
    ),  # fmt: skip
    Case(
        "CASE WHEN s = 'a' THEN x ELSE 0 END", m("category_remap", mapping={"b": "a"}), Refused("CASE"), domain="text"
    ),  # fmt: skip
    Case(
        "CASE WHEN s = 'a' THEN x WHEN s = 'b' THEN y ELSE 0 END",
        m("category_remap", mapping={"a": "c"}),
        Refused("CASE"),
        domain="text",
    ),  # fmt: skip
    # unseen_category: the branch the new value falls in
    Case("s", m("unseen_category", value="zz"), Same(), domain="text"),
    Case(CASE_ABC, m("unseen_category", value="zz"), m("constant", value="other"), domain="text"),
    Case(CASE_NO_ELSE, m("unseen_category", value="zz"), m("null_inject"), domain="text"),
    Case("UPPER(s)", m("unseen_category", value="zz"), m("constant", value="ZZ"), domain="text"),
    # round, clip, noise, shuffle, cyclic_shift: identities only
    Case("x", m("round", decimals=1), Same()),
    Case("x * 2", m("round", decimals=1), Refused("passes only through")),
    Case("CAST(x AS DOUBLE)", m("clip", lower=-10, upper=10), Same()),
    Case("x + 1", m("clip", lower=-10, upper=10), Refused("passes only through")),
    Case("x", m("noise", relative_std=0.1), Same()),
    Case("x * y", m("noise", relative_std=0.1), Refused("passes only through")),
    Case("x", m("shuffle"), Same()),
    Case("UPPER(s)", m("shuffle"), Refused("passes only through"), domain="text"),
    Case("x", m("cyclic_shift", offset=3, period=24), Same()),
    Case("x + 1", m("cyclic_shift", offset=3, period=24), Refused("passes only through")),
]
