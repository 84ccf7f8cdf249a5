"""Detectors for the deterministic planner: each reads the change text and proposes one mutation, refuses with a
reason, or returns None when it does not recognise the phrasing. ``deterministic.plan`` tries them in order."""

from __future__ import annotations

import math
import re
from typing import Any, NamedTuple

from agent.planning import change_phrases as c
from agent.planning import phrases as p
from agent.planning.change_phrases import CAN_TEST, STRUCTURAL_REFUSAL
from agent.schemas import FieldContext

UNSEEN = "__unseen__"


class Proposal(NamedTuple):
    op: str
    params: dict[str, Any]
    rationale: str  # one clause; plan() appends the share of rows and the full stop
    fraction: float | None = None  # set when the phrase itself names the share ("5% nulls")
    assumed: tuple[str, ...] = ()  # each default taken because the text did not say ("no size given: ±5%")


Outcome = Proposal | str | None  # str: a refusal; None: this detector does not recognise the text


def kind(field: FieldContext) -> str:
    types = {"NUMBER": "numeric", "STRING": "categorical", "ENUM": "categorical", "BOOLEAN": "boolean"}
    return types.get(field.field_type.strip().upper(), "other")  # other (DATE, TIME, …): the runner decides


def n(value: float) -> int | float:
    """Twelve significant digits (1/60 / (1/3600) is 60, not 60.00000000000001); integral values as int."""
    value = float(f"{value:.12g}")
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def num(raw: str | None) -> float | None:
    return p.to_number(raw) if raw else None


def imputation(text: str, field: FieldContext) -> Outcome:
    if m := c.ABSOLUTE.search(text):
        return (
            f'"{m.group()}" changes only the negative rows, and an experiment cannot pick those out; a sign flip of '
            f"every row or a share of rows can be tested instead. {CAN_TEST}"
        )
    if c.IMPUTE.search(text):
        return (
            "Provenance cannot change only the rows that are already missing (imputation); it can set a share of "
            f'rows to a constant instead, e.g. "set 5% of {field.field} to 0". {CAN_TEST}'
        )
    return None


def nulls(text: str, field: FieldContext) -> Outcome:
    if m := c.NULL_PCT.search(text):
        value = num(m.group(1))
        return Proposal("null_inject", {}, f"sets {field.field} to null", None if value is None else value / 100)
    if c.NULL_ALL.search(text):
        return Proposal("null_inject", {}, f"sets {field.field} to null on every row", 1.0)
    return Proposal("null_inject", {}, f"sets {field.field} to null") if c.NULL_ANY.search(text) else None


def structural(text: str, field: FieldContext) -> Outcome:
    return STRUCTURAL_REFUSAL + CAN_TEST if c.STRUCTURAL.search(text) else None


def rounding(text: str, field: FieldContext) -> Outcome:
    if not c.ROUND_KW.search(text):
        return None
    if up_down := c.ROUND_UP_DOWN.search(text):
        return (
            f'Rounding always up or always down ("{up_down.group()}") is not an operator here: Provenance rounds to '
            f'the nearest value, e.g. "rounded to whole dollars". {CAN_TEST}'
        )
    decimals: float | None = 0.0
    if m := c.ROUND_DECIMALS.search(text):
        decimals = num(m.group(1))
    elif m := c.ROUND_NEAREST.search(text):
        decimals = _nearest(m.group(1))
    if decimals is None or not decimals.is_integer():
        return f'Say how far {field.field} is rounded, e.g. "to 2 decimals" or "to the nearest 100". {CAN_TEST}'
    d = int(decimals)
    target = (
        "whole numbers" if d == 0 else f"{d} decimal place{'s' * (d > 1)}" if d > 0 else f"the nearest {10.0**-d:g}"
    )
    how = "truncates (approximated by rounding)" if c.TRUNCATE.search(text) else "rounds"
    return Proposal("round", {"decimals": d}, f"{how} {field.field} to {target}")


def _nearest(word: str) -> float | None:
    word = " ".join(word.lower().split())
    for name in (word, word.removesuffix("s")):  # "nearest hundreds"
        if name in c.NEAREST:
            return float(c.NEAREST[name])
    value = p.to_number(word)
    if value is None or value <= 0:
        return None
    decimals = -math.log10(value)  # "nearest 100" is -2 decimals; "nearest 5" is not a power of ten
    return float(round(decimals)) if abs(decimals - round(decimals)) < 1e-9 else None


def scale(text: str, field: FieldContext) -> Outcome:
    if conversion := _conversion(text, field):
        src, dst, factor = conversion
        if src == dst:
            return f"{field.field} is already in {dst}, so this change leaves its values as they are. {CAN_TEST}"
        rationale = f"{src} → {dst} multiplies every {field.field} by {n(factor):g}"
        said = any(regex.search(text) for regex, _ in c.CONVERSIONS)
        source = "its name or description" if _described_unit(field, c.UNITS[dst][1]) == src else "not stated: assumed"
        assumed = () if said else (f"{field.field} is in {src} today ({source})",)
        return Proposal("scale", {"factor": n(factor)}, rationale, assumed=assumed)
    for regex, how in c.SCALE:
        if (m := regex.search(text)) and (a := num(m.group(1) or (m.group(2) if how != "ratio" else None))) is not None:
            b = num(m.group(2)) if how == "ratio" else 1.0
            if b is None or (a == 0 and how in {"inverse", "ratio"}):
                return f"A scale factor needs a non-zero number. {CAN_TEST}"
            factors = {"n": a, "inverse": 1 / a if a else 0.0, "up": 1 + a / 100, "down": 1 - a / 100}
            factor = factors.get(how, b / a if a else 0.0)
            return Proposal("scale", {"factor": n(factor)}, f"multiplies every {field.field} by {n(factor):g}")
    if m := c.SCALE_PART.search(text):  # "shrinks to a tenth of its value"
        factor = c.PART_OF[m.group(1).lower()]
        return Proposal("scale", {"factor": n(factor)}, f"multiplies every {field.field} by {n(factor):g}")
    for regex, fixed in c.SCALE_WORDS:
        if regex.search(text):
            return Proposal("scale", {"factor": n(fixed)}, f"multiplies every {field.field} by {fixed:g}")
    return None


def _conversion(text: str, field: FieldContext) -> tuple[str, str, float] | None:
    for regex, reverse in c.CONVERSIONS:
        for m in regex.finditer(text):
            src, dst = unit_name(m.group(1)), unit_name(m.group(2))
            src, dst = (dst, src) if reverse else (src, dst)
            if src and dst and c.UNITS[src][1] == c.UNITS[dst][1]:
                return src, dst, c.UNITS[dst][2] / c.UNITS[src][2]
    target = c.UNIT_TARGET.search(text)
    if target and (dst := unit_name(target.group(1))):
        src = _described_unit(field, c.UNITS[dst][1]) or c.DEFAULT_SOURCE.get(dst)
        if src:
            return src, dst, c.UNITS[dst][2] / c.UNITS[src][2]
    return None


def conversion_units(text: str, field: FieldContext) -> tuple[str, str] | None:
    found = _conversion(text, field)
    return None if found is None else (found[0], found[1])


def unit_name(token: str) -> str | None:
    token = " ".join(token.lower().split())
    return next((name for name, (pattern, _, _) in c.UNITS.items() if re.fullmatch(pattern, token, re.I)), None)


def _described_unit(field: FieldContext, dimension: str) -> str | None:
    """The current unit when the field says ("amount in USD", "age_days"); one-letter symbols are too ambiguous."""
    name = field.field.replace("_", " ")  # account_age_days is in days
    for m in c.UNIT_ANY.finditer(f"{field.description or ''} {field.native_type or ''} {name}"):
        unit = unit_name(m.group()) if len(m.group()) > 1 else None
        if unit and c.UNITS[unit][1] == dimension:
            return unit
    return None


def clip(text: str, field: FieldContext) -> Outcome:
    lower = upper = None
    text = re.sub(r"(?<=[0-9])\.\.(?=[0-9])", " to ", text)  # "clip hour to 6..22"
    for regex, side in ((c.THRESHOLD_UPPER, "upper"), (c.THRESHOLD_LOWER, "lower")):
        if m := regex.search(text):
            bound, value = num(m.group(1)), num(m.group(2))
            if bound is None or value is None or bound != value:
                return (
                    f"Only the rows past {m.group(1)} change, and they get another value ({m.group(2)}): that is "
                    f'not a clip, and an experiment cannot pick those rows. A clip sets them to the bound: "values '
                    f'above 2000 are set to 2000". {CAN_TEST}'
                )
            return _clip(value if side == "lower" else None, value if side == "upper" else None, field)
    if m := c.CLIP_BOTH.search(text):
        lower, upper = num(m.group(1)), num(m.group(2))
    else:
        # "clipped at zero" means no negatives: nobody caps a quantity at 0 from above.
        floored = c.NEGATIVES_ZEROED.search(text) or c.ZERO_FLOOR.search(text)
        rest = c.ZERO_FLOOR.sub(" ", text)
        for m in c.CLIP_UPPER.finditer(rest):
            upper = num(m.group(1) or m.group(2))
        for m in c.CLIP_LOWER.finditer(rest):
            lower = num(m.group(1) or m.group(2))
        lower = 0.0 if floored else lower
    if lower is None and upper is None and c.CLIP_KW.search(text):
        return f'Say where {field.field} is clipped, e.g. "capped at 1000" or "floored at 0". {CAN_TEST}'
    return _clip(lower, upper, field)


def between(text: str, field: FieldContext) -> Outcome:
    m = c.BETWEEN.search(text)
    return _clip(num(m.group(1)), num(m.group(2)), field) if m else None


def _clip(lower: float | None, upper: float | None, field: FieldContext) -> Outcome:
    if lower is not None and upper is not None and lower > upper:
        lower, upper = upper, lower
    if lower is None and upper is None:
        return None
    params = {key: n(value) for key, value in (("lower", lower), ("upper", upper)) if value is not None}
    bounds = f"[{'-inf' if lower is None else f'{lower:g}'}, {'inf' if upper is None else f'{upper:g}'}]"
    return Proposal("clip", params, f"clips {field.field} to {bounds}")


def noise(text: str, field: FieldContext) -> Outcome:
    if not c.NOISE_KW.search(text):
        return None
    std: float | None = 0.05
    assumed: tuple[str, ...] = ("no size given: ±5% relative noise",)
    if m := c.NOISE_PCT.search(text):
        std, assumed = times(num(m.group(1) or m.group(2) or m.group(3)), 0.01), ()
    elif m := c.NOISE_STD.search(text):
        if not m.group(2) and not m.group().lower().startswith("relative"):  # "a std of $5": the column's own unit
            return (
                f'"{m.group().strip()}" reads as a noise size in {field.field}\'s own unit; noise here is relative to '
                f'each value: give it as a percentage, e.g. "jitter ±5%". {CAN_TEST}'
            )
        std, assumed = times(num(m.group(1)), 0.01 if m.group(2) else 1.0), ()
    elif c.NOISE_ABS.search(text):
        return f'Noise is relative to each value: give it as a percentage, e.g. "jitter ±5%". {CAN_TEST}'
    elif m := c.NOISE_PART.search(text):  # "noisy by about a tenth"
        std, assumed = c.PART_VALUES[m.group(1).lower()], ()
    elif c.ANY_NUMBER.search(text) or c.PART_WORD.search(text):  # a size not read: never run the default instead
        return f'Say the size of the noise as a percentage of each value, e.g. "jitter ±5%". {CAN_TEST}'
    if std is None:
        return None
    rationale = f"adds about ±{std * 100:g}% relative noise to {field.field}"
    return Proposal("noise", {"relative_std": n(std)}, rationale, assumed=assumed)


def times(value: float | None, factor: float) -> float | None:
    return None if value is None else value * factor


def sign_flip(text: str, field: FieldContext) -> Outcome:
    return Proposal("sign_flip", {}, f"flips the sign of every {field.field}") if c.SIGN_FLIP.search(text) else None


def shuffle(text: str, field: FieldContext) -> Outcome:
    if c.SHUFFLE.search(text):
        return Proposal("shuffle", {}, f"permutes {field.field} across rows, as a misaligned join would")
    return None


def constant(text: str, field: FieldContext) -> Outcome:
    for m in c.CONSTANT_VALUE.finditer(text):
        raw = m.group(1)
        if (
            not p.is_quoted(raw)
            and raw.lower() in p.STOPWORDS
            and (p.to_number(raw) is None or raw.lower() in ("a", "an"))
        ):
            continue  # "becomes a full timestamp": an article, not the number one
        value = _typed(raw, kind(field))
        if value is None:
            wanted = "true or false" if kind(field) == "boolean" else "a number"
            typed = f"{field.field} is a {field.field_type} field, so a constant must be {wanted}"
            return f"{typed}, not {p.unquote(raw)!r}. {CAN_TEST}"
        return Proposal("constant", {"value": value}, f"sets every {field.field} to the constant {value!r}")
    if is_value := c.CONSTANT_IS.search(text):  # "amount is zero"
        return constant(f"set to {is_value.group(1)}", field)
    if c.CONSTANT_KW.search(text):
        return f'Say which value {field.field} would be stuck at, e.g. "all values set to 0". {CAN_TEST}'
    return None


def _typed(raw: str, field_kind: str) -> bool | int | float | str | None:
    """The constant in the field's type: a number for NUMBER, true/false for BOOLEAN, the text for strings."""
    text = p.unquote(raw)
    if field_kind == "boolean":
        return c.BOOLEANS.get(text.lower())
    number = p.to_number(text)
    if field_kind == "categorical" or (field_kind == "other" and number is None):
        return text
    return None if number is None else n(number)


def conversion_hint(text: str, field: FieldContext) -> Outcome:
    if c.TEMPERATURE.search(text):
        return (
            "A temperature unit change is affine (e.g. °F = 1.8 × °C + 32), which one operator cannot express; "
            f'Celsius ↔ Kelvin is a shift: say "{field.field} shifted by 273.15". {CAN_TEST}'
        )
    if c.CURRENCY.search(text):
        return (
            "A currency conversion needs an exchange rate, which Provenance does not look up; describe it as a "
            f'scale instead, e.g. "{field.field} multiplied by 0.92". {CAN_TEST}'
        )
    return None
