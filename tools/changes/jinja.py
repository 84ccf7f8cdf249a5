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

_BLOCK = re.compile(r"\{\{-?(?P<expr>.*?)-?\}\}|\{%-?(?P<stmt>.*?)-?%\}|\{#(?P<comment>.*?)#\}", re.DOTALL)
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
    """`text` with its Jinja blocks replaced as the module docstring says; line numbers are kept."""
    counter = [0]
    alias: str | None = None

    def replace(match: re.Match[str]) -> str:
        nonlocal alias
        whole = match.group(0)
        expr = match.group("expr")
        if expr is None:
            return _newlines(whole)
        if _CONFIG.match(expr) and (found := _ALIAS.search(expr)):
            alias = _quoted(found, 1)
        return _replace_expression(expr, counter) + _newlines(whole)

    stripped, count = _BLOCK.subn(replace, text)
    return StrippedSql(sql=stripped, alias=alias, had_jinja=count > 0)
