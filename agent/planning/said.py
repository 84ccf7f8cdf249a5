"""A chat model's plan may only use what the person said (issue 35 item 7, the first part of issue 37's reading
ledger): every number of the plan (a factor, an offset, a share of rows, a seed…) must be one the question states,
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
from agent.planning.deterministic import plan as offline_plan
from agent.schemas import ExperimentPlan, FieldContext
from tools.mutations import Mutation, PlanError

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


def own_words(proposal: ExperimentPlan, mutation: Mutation, question: str, field: FieldContext) -> ExperimentPlan:
    """A chat model's plan as Provenance runs it (`mutation`: the plan validated): refused (PlanError) when it uses
    a number or value the question does not state; its rationale and assumptions replaced by Provenance's own (the
    offline reading's where it reads the same change), since the model's text may carry catalog text."""
    reading = offline_plan(question, field)
    params = {k: v for k, v in mutation.model_dump().items() if k not in ("op", "fraction", "seed") and v is not None}
    checked = ExperimentPlan(op=mutation.op, params=params, fraction=mutation.fraction, seed=mutation.seed)
    missing = unsaid(checked, question, reading)
    if missing:
        raise PlanError(
            f"the chat model's plan uses {', '.join(missing)}, which your message does not say: a plan's numbers and "
            "values come from your words, never from catalog text. Say the change with its numbers, e.g. "
            "'amount sent in cents on 5% of rows'."
        )
    same = (reading.op, reading.params, reading.fraction, reading.seed) == (
        checked.op, checked.params, checked.fraction, checked.seed,
    )  # fmt: skip
    if same:
        return proposal.model_copy(update={"rationale": reading.rationale, "assumptions": reading.assumptions})
    return proposal.model_copy(update={"rationale": "the chat model's reading of your words.", "assumptions": []})
