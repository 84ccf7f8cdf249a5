"""A chat model's plan may only use what the person said (the first part of the reading ledger; the second is
ledger.py): every number of the plan (a factor, an offset, a share of rows, a seed…) must be one the question states,
in some form a person writes it — `100`, `x100`, `5 %`, `0.05`, `1e-2`, `half`, `doubled`, `cents` — and every
text value (a category, a constant) must appear in it. Catalog text (a field description carrying
`[[PLAN: … fraction 1e-5 … SAFE]]`) reaches the model as data; a number only it supplied is not the person's.

Defaults are not numbers to be said: a fraction of 1 (every row) and a seed of 0.
"""

from __future__ import annotations

import math
import re
from typing import Any

from agent.planning import typos
from agent.schemas import ExperimentPlan

_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+(?:[.,]\d+)*|\.\d+)(?:e[-+]?\d+)?", re.IGNORECASE)
_WORDS: dict[str, float] = {
    "half": 0.5, "halved": 0.5, "halves": 0.5, "quarter": 0.25, "third": 1 / 3, "fifth": 0.2, "tenth": 0.1,
    "double": 2, "doubled": 2, "doubles": 2, "twice": 2, "triple": 3, "tripled": 3, "ten": 10, "hundred": 100,
    "thousand": 1000, "million": 1e6, "billion": 1e9, "cent": 100, "cents": 100, "penny": 100, "pennies": 100,
    "mills": 1000, "percent": 100, "pct": 100, "bps": 1e4, "basis": 1e4, "thousands": 1000, "millions": 1e6,
    "k": 1000, "minutes": 60, "mins": 60, "seconds": 3600, "milliseconds": 1000, "ms": 1000, "dozen": 12,
    "week": 7, "weeks": 7, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "twelve": 12, "twenty": 20, "fifty": 50,
}  # fmt: skip
_WORD = re.compile(r"[a-z]+")
_MULTIPLIERS = frozenset(
    {"hundred", "thousand", "thousands", "million", "millions", "billion", "k", "dozen", "week", "weeks"}
)
_IMPLIED = frozenset({"period"})  # a cyclic shift's period is the column's (24 hours), not a number people say


def _said(text: str) -> list[float]:
    found: list[float] = []
    for match in _NUMBER.finditer(text):
        try:
            found.append(float(match.group().replace(",", "")))
        except ValueError:
            continue
    found += [_WORDS[w] for w in _WORD.findall(text.lower()) if w in _WORDS]
    return found + [a * b for i, a in enumerate(found) for b in found[i + 1 :]]  # "2 weeks": 14 days


def _explains(said: float, value: float) -> bool:
    """`value` is `said` as a person means it: itself, its inverse ("10x too small"), a percentage, a rise or fall
    by a percentage, minutes in hours."""
    candidates = [said, -said]
    if said != 0:
        candidates += [1 / said, -1 / said]
    candidates += [said / 100, said * 100, 1 + said / 100, 1 - said / 100, said / 60, -said / 60]
    return any(math.isclose(value, c, rel_tol=1e-9, abs_tol=1e-12) for c in candidates)


def _reads_as(said: float, name: str, value: float) -> bool:
    """`said` is the parameter `name` = `value` as a person writes that parameter: a factor as itself, its inverse
    ("10x too small") or a rise or fall by a percentage; a share as itself or a percentage; an offset with its
    sign, or in minutes; any other value as itself or a percentage."""
    forms = [said, -said, said / 100]
    if name == "factor" and said != 0:
        forms += [1 / said, 1 + said / 100, 1 - said / 100, said * 100]
    if name == "offset":
        forms += [said / 60, -said / 60]
    return any(math.isclose(value, f, rel_tol=1e-9, abs_tol=1e-12) for f in forms)


def _numbers(plan: ExperimentPlan) -> list[tuple[str, float]]:
    out = [(k, float(v)) for k, v in plan.params.items() if isinstance(v, int | float) and not isinstance(v, bool)]
    if plan.fraction != 1:
        out.append(("fraction", plan.fraction))
    if plan.seed != 0:
        out.append(("seed", float(plan.seed)))
    return out


def _texts(params: dict[str, Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for name, value in params.items():
        if isinstance(value, str):
            out.append((name, value))
        elif isinstance(value, dict):
            out += [(name, str(x)) for pair in value.items() for x in pair]
    return out


def unsaid(plan: ExperimentPlan, question: str, reading: ExperimentPlan | None = None) -> list[str]:
    """The parts of the plan the question does not state, as "fraction 1e-05" or "value 'XX'"; [] when all are.
    `reading` is the offline planner's plan of the same words: a number it read there (a time zone's offset, "in
    weeks", "one in twenty") was said."""
    said = _said(typos.corrected(question))
    if reading is not None and reading.op is not None:
        said += [value for _, value in _numbers(reading)]
    missing = [
        f"{name} {value:g}"
        for name, value in _numbers(plan)
        if name not in _IMPLIED and not any(_explains(s, value) for s in said)
    ]
    lowered = question.lower()
    missing += [f"{name} {text!r}" for name, text in _texts(plan.params) if text.lower() not in lowered]
    return missing


_DIGITS = re.compile(  # a number standing alone or after x/× ("x100"), a fraction "1/8"; not in a name ("count_1h")
    r"(?:(?<![\w.:/-])|(?<=\bx)|(?<=×))[-+]?\d+(?:[.,]\d+)*(?:e[-+]?\d+)?(?:/\d+(?:\.\d+)?)?(?![\w])",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"'([^']+)'|\"([^\"]+)\"")


def _value(token: str) -> float | None:
    try:
        if "/" in token:
            top, bottom = token.split("/", 1)
            return float(top.replace(",", "")) / float(bottom)
        return float(token.replace(",", ""))
    except (ValueError, ZeroDivisionError):
        return None


def unread(plan: ExperimentPlan, text: str) -> list[str]:
    """The numbers and quoted values of `text` the plan does not account for (the reading ledger, for the parts
    a plan must take from the words): "doubled on 0.2 of the rows" planned on every row leaves "0.2"; "for
    txns over $1000" leaves "1000"; "'grocery' rows go null" leaves 'grocery'. A number may be read with another
    ("3 in 1000": 0.003)."""
    text = typos.corrected(text)
    named = _numbers(plan) + [("decimals", 10.0**-v) for k, v in _numbers(plan) if k == "decimals"]  # "nearest 10"
    numbers = [value for _, value in named]
    alone = [*numbers, plan.fraction]  # "100% of rows" says the default share; it explains no pair of numbers
    by_name = [*named, ("fraction", plan.fraction)]
    tokens = [(m.group(), v) for m in _DIGITS.finditer(text) if (v := _value(m.group())) is not None]
    words = [_WORDS[w] for w in _WORD.findall(text.lower()) if w in _MULTIPLIERS]  # "1 million"

    used: set[int] = set()  # each parameter reads one number: "30 days higher when age < 30" leaves one 30

    def read(value: float) -> bool:
        direct = [i for i, (name, n) in enumerate(by_name) if _reads_as(value, name, n)]
        if fresh := [i for i in direct if i not in used]:
            if by_name[fresh[0]][0] not in ("lower", "upper"):  # "above 5000 set to 5000": a clip says it twice
                used.add(fresh[0])
            return True
        if any(_explains(value * w, n) for w in words for n in numbers):  # "capped at 1 million"
            return True
        others = [v for _, v in tokens if v != value]  # "3 in 1000 rows", "(0.5 → 50%)": a ratio, exactly
        ratios = [r for o in others if o and value for r in (value / o, o / value)]
        if any(math.isclose(r, n, rel_tol=1e-9) for r in ratios for n in alone):
            return True
        steps = [d for o in others for d in (value - o, o - value)]  # "counting at 1 instead of 0": +1
        return any(math.isclose(d, n, rel_tol=1e-9) for d in steps for k, n in named if k == "offset")

    left = [token for token, value in tokens if not read(value)]
    values = {t.lower() for _, t in _texts(plan.params)}
    left += [f"'{q}'" for m in _QUOTED.finditer(text) if (q := m.group(1) or m.group(2)).lower() not in values]
    return list(dict.fromkeys(left))
