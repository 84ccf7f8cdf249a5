"""Common typos of the planner's vocabulary ("cnets", "insted", "shfited"), corrected before the phrase tables read
the text. Only a word of five letters or more, unknown to the vocabulary and one edit (or one swap of neighbours)
away from exactly one vocabulary word, is replaced: "sent" is never read as "cent"."""

from __future__ import annotations

import re
from typing import Final

VOCABULARY: Final = frozenset(
    """cents dollars thousands millions pennies percent percentage doubled tripled halved quadrupled multiplied
    divided instead rather shuffled shuffle shifted shifting rounded rounding capped clipped clamped floored renamed
    negative negatives missing nulls noise jitter decimals decimal hours minutes seconds milliseconds weeks days
    years category categories replaced constant timezone scaled increased decreased reduced subtracted added
    percent records values transactions sometimes occasionally thousand million hundred twenty thirty forty fifty
    sixty seventy eighty ninety eleven twelve fifteen twenty unseen mapped merged combined inverted
    flipped reversed swapped truncated limited maximum minimum between always defaulted populated
    pounds grams meters kilometers centimeters miles bounded mapped third quarter fifth sixth eighth tenth twentieth
    hundredth thousandth fifths tenths thirds quarters""".split()
)
_WORD: Final = re.compile(r"(?<![\w'.-])[a-z]{5,}(?![\w'-])", re.IGNORECASE)


def corrected(text: str) -> str:
    return _WORD.sub(lambda m: _fix(m.group()), text)


def _fix(word: str) -> str:
    lower = word.lower()
    if lower in VOCABULARY:
        return word
    near = [v for v in VOCABULARY if _one_edit(lower, v)]
    return near[0] if len(near) == 1 else word


def _one_edit(a: str, b: str) -> bool:
    """Damerau distance exactly one: a substitution, an insertion, a deletion or a swap of two neighbours."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (
            len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
        )
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))
