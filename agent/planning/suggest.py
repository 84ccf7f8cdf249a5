"""Runnable readings of a change the offline planner refused: instead of a dead end, up to three
requests it can run, each in words the planner reads back to exactly the plan it names (checked here, so a
suggestion never runs something other than what it says). The person picks one; nothing runs on its own."""

from __future__ import annotations

import math
import re

from agent.planning import change_phrases as c
from agent.planning import deterministic, shares
from agent.planning.phrases import NUM, rx, to_number
from agent.schemas import ExperimentPlan, FieldContext

MAX_SUGGESTIONS = 3
_PERCENT = rx(rf"({NUM})\s*(?:%|percent\b|pct\b)")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")


def suggestions(text: str, field: FieldContext) -> list[str]:
    """Requests the planner runs, closest to `text` first: the change it read, on the shares of rows the text
    names (each end of a range) and on every row; for a size stated against its direction, both directions."""
    found = deterministic.detected(text, field)
    if found is None:
        return []
    variants = [found.params]
    factor = found.params.get("factor")
    said_direction = c.DOWNWARD.search(text) or c.UPWARD.search(text)
    if found.op == "scale" and isinstance(factor, int | float) and factor and said_direction:
        variants.append({"factor": _tidy(1 / factor)})  # "10x too small": ×0.1 as well as ×10
    out: list[str] = []
    for params in variants:
        for fraction in _fractions(text, found.fraction):
            sentence = _sentence(found.op, params, fraction, field.field)
            if sentence and sentence not in out and _reads_back(sentence, field, found.op, params, fraction):
                out.append(sentence)
    return out[:MAX_SUGGESTIONS]


def _fractions(text: str, own: float | None) -> list[float]:
    said = [own] if own is not None else []
    share = shares.read_share(text)
    said += [share.fraction] if share else []
    ranges = [n for m in shares.RANGE.finditer(text) for n in _NUMBER.findall(m.group())]
    said += [v / 100 for raw in ranges if (v := to_number(raw)) is not None]
    said += [v / 100 for m in _PERCENT.finditer(text) if (v := to_number(m.group(1))) is not None]
    return list(dict.fromkeys([*(f for f in said if 0 < f < 1), 1.0]))


def _tidy(value: float) -> float:
    return float(f"{value:.12g}")


def _number(value: object) -> str:
    return f"{value:.12g}" if isinstance(value, float) else str(value)


def _sentence(op: str, params: dict[str, object], fraction: float, name: str) -> str | None:
    what = {
        "scale": lambda: f"{name} multiplied by {_number(params['factor'])}",
        "shift": lambda: f"{name} shifted by {_number(params['offset'])}",
        "null_inject": lambda: f"{name} set to null",
        "constant": lambda: (
            f"{name} set to {params['value']!r}"
            if isinstance(params["value"], str)
            else f"{name} set to {str(params['value']).lower()}"
        ),
        "round": lambda: f"{name} rounded to {params['decimals']} decimals",
        "sign_flip": lambda: f"the sign of {name} flipped",
        "shuffle": lambda: f"{name} shuffled across rows",
        "noise": lambda: f"jitter {name} ±{_number(_tidy(float(str(params['relative_std'])) * 100))}%",
        "unseen_category": lambda: f"a new category {params['value']!r} in {name}",
        "category_remap": lambda: ", ".join(f"{k!r} → {v!r}" for k, v in _mapping(params).items()) + f" in {name}",
        "clip": lambda: _clip(params, name),
        "cyclic_shift": lambda: f"{name} shifted by {_number(params['offset'])} hours",
    }.get(op)
    if what is None:
        return None
    rows = "" if fraction == 1 else f" on {_number(_tidy(fraction * 100))}% of rows"
    return f"{what()}{rows}"


def _mapping(params: dict[str, object]) -> dict[str, str]:
    mapping = params.get("mapping")
    return {str(k): str(v) for k, v in mapping.items()} if isinstance(mapping, dict) else {}


def _clip(params: dict[str, object], name: str) -> str:
    lower, upper = params.get("lower"), params.get("upper")
    if lower is not None and upper is not None:
        return f"{name} clipped between {_number(lower)} and {_number(upper)}"
    return f"{name} capped at {_number(upper)}" if upper is not None else f"{name} floored at {_number(lower)}"


def _reads_back(sentence: str, field: FieldContext, op: str, params: dict[str, object], fraction: float) -> bool:
    planned: ExperimentPlan = deterministic.plan(sentence, field)
    if planned.op != op or not math.isclose(planned.fraction, fraction, rel_tol=1e-6):
        return False
    got = {k: v for k, v in planned.params.items() if v is not None}
    want = {k: v for k, v in params.items() if v is not None}
    return set(got) == set(want) and all(_same(got[k], want[k]) for k in want)


def _same(a: object, b: object) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-12)
    return a == b
