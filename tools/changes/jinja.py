"""Strip dbt's Jinja from a SQL model so sqlglot can parse it, the way dbt-aware SQL tooling does without a dbt
project: `{{ ref('x') }}` -> `x`, `{{ source('s', 't') }}` -> `s.t`, `{{ config(...) }}`, `{% ... %}` and
`{# ... #}` removed, any other `{{ expr }}` -> a placeholder identifier.

Every removed or replaced block keeps its newlines, so a line number in the stripped SQL is the same line in the
file a person reads. Control blocks (`{% if %}`) are removed, not evaluated: both branches stay, which usually
still parses; when it does not, the file is reported as unparseable rather than guessed at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PLACEHOLDER_PREFIX = "__jinja_expr_"
"""Replaces an expression we cannot evaluate (`{{ var('x') }}`): an identifier no real column is named, so a
changed placeholder shows up as "not mappable" instead of as something it is not."""

_OPENER = re.compile(r"\{[{%#]")
_CLOSERS = {"{{": "}}", "{%": "%}", "{#": "#}"}
_STRING = r"""\s*(?:'([^']*)'|"([^"]*)")\s*"""
_REF = re.compile(rf"^\s*ref\s*\({_STRING}(?:,{_STRING})?(?:,\s*\w+\s*=.*)?\)\s*$", re.DOTALL)
_SOURCE = re.compile(rf"^\s*source\s*\({_STRING},{_STRING}\)\s*$", re.DOTALL)
_CONFIG = re.compile(r"^\s*config\s*\(", re.DOTALL)
_ALIAS = re.compile(r"""\balias\s*=\s*(?:'([^']*)'|"([^"]*)")""")


@dataclass(frozen=True)
class StrippedSql:
    sql: str
    alias: str | None
    """The table name a `{{ config(alias='...') }}` gives the model, which then replaces the file's stem."""
    had_jinja: bool


def _quoted(match: re.Match[str], first: int) -> str:
    """The value of the quoted string whose two alternatives are groups `first` and `first + 1`."""
    return match.group(first) if match.group(first) is not None else match.group(first + 1)


def _newlines(text: str) -> str:
    return "\n" * text.count("\n")


def _replace_expression(expr: str, counter: list[int]) -> str:
    ref = _REF.match(expr)
    if ref:
        # ref('package', 'model') names the model second; ref('model') first
        return _quoted(ref, 3) if (ref.group(3) or ref.group(4)) is not None else _quoted(ref, 1)
    source = _SOURCE.match(expr)
    if source:
        return f"{_quoted(source, 1)}.{_quoted(source, 3)}"
    if _CONFIG.match(expr):
        return ""
    counter[0] += 1
    return f"{PLACEHOLDER_PREFIX}{counter[0]}"


def strip_jinja(text: str) -> StrippedSql:
    """`text` with its Jinja blocks replaced as the module docstring says; line numbers are kept.

    One pass, linear in the text: each opener's closer is searched once, and an opener without a closer ends the
    scan (the rest is left as written, for sqlglot to report) — a regex's lazy match from every opener would be
    quadratic on a file of unclosed `{{`."""
    counter = [0]
    alias: str | None = None
    out: list[str] = []
    count = 0
    position = 0
    while (opener := _OPENER.search(text, position)) is not None:
        start = opener.start()
        kind = text[start : start + 2]
        end = text.find(_CLOSERS[kind], start + 2)
        if end == -1:
            break
        whole = text[start : end + 2]
        out.append(text[position:start])
        count += 1
        if kind == "{{":
            expr = whole[2:-2].removeprefix("-").removesuffix("-")
            if _CONFIG.match(expr) and (found := _ALIAS.search(expr)):
                alias = _quoted(found, 1)
            out.append(_replace_expression(expr, counter) + _newlines(whole))
        else:
            out.append(_newlines(whole))
        position = end + 2
    out.append(text[position:])
    return StrippedSql(sql="".join(out), alias=alias, had_jinja=count > 0)
