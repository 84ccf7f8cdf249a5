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


def remap(text: str, field: FieldContext) -> Outcome:
    renaming = c.RENAME_KW.search(text) is not None
    categorical = kind(field) == "categorical"
    name = field.field.rsplit(".", 1)[-1].lower()
    mapping: dict[str, str] = {}
    for m in c.MERGE.finditer(text):
        for key in c.VAL_RX.findall(m.group(1)):
            if key.lower() != "and" and any(ch.isalnum() for ch in key):
                mapping.setdefault(p.unquote(key), p.unquote(m.group(2)))
    for m in c.PAIR.finditer(text):
        key, value = p.unquote(m.group(1)), p.unquote(m.group(3))
        if key.lower() == name:  # "amount renamed to amount_usd" renames the column, not its values
            if renaming:
                return STRUCTURAL_REFUSAL + CAN_TEST
            continue
        quoted = p.is_quoted(m.group(1)) and p.is_quoted(m.group(3))
        plain = key.lower() not in p.STOPWORDS and value.lower() not in p.STOPWORDS
        # Unquoted "a → b" is a rename only on a category field: on a number field it is a unit or a ratio.
        arrow = c.ARROW.fullmatch(m.group(2)) is not None
        if key != value and (quoted or (plain and (renaming or (categorical and arrow)))):
            mapping.setdefault(key, value)
    for m in c.FROM_TO.finditer(text) if categorical else ():
        key, value = p.unquote(m.group(1)), p.unquote(m.group(2))
        if key != value and key.lower() not in p.STOPWORDS and value.lower() not in p.STOPWORDS:
            mapping.setdefault(key, value)
    quoted_values = [p.unquote(q) for q in p.QUOTED_RX.findall(text)]
    if not mapping and renaming and len(quoted_values) == 2 and quoted_values[0] != quoted_values[1]:
        mapping[quoted_values[0]] = quoted_values[1]  # "'a' in the … field is renamed to 'b'"
    if not mapping:
        if renaming and not c.STRUCTURAL.search(text):  # a column rename is refused by structural() instead
            return f"Say which category is renamed to what, e.g. \"'grocery' renamed to 'groceries'\". {CAN_TEST}"
        return None
    pairs = ", ".join(f"{k!r} → {v!r}" for k, v in list(mapping.items())[:3]) + (", …" if len(mapping) > 3 else "")
    return Proposal("category_remap", {"mapping": mapping}, f"renames {pairs} in {field.field}")


def unseen(text: str, field: FieldContext) -> Outcome:
    if m := c.UNSEEN_BEFORE.search(text):
        value = p.unquote(m.group(1))
    elif m := c.UNSEEN.search(text):
        raw = m.group(1) or ""
        value = p.unquote(raw) if p.is_quoted(raw) or raw.lower() not in p.STOPWORDS else UNSEEN
    else:
        return None
    value = value or UNSEEN
    return Proposal("unseen_category", {"value": value}, f"replaces {field.field} with the unseen category {value!r}")


def structural(text: str, field: FieldContext) -> Outcome:
    return STRUCTURAL_REFUSAL + CAN_TEST if c.STRUCTURAL.search(text) else None


def rounding(text: str, field: FieldContext) -> Outcome:
    if not c.ROUND_KW.search(text):
        return None
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
        return Proposal("scale", {"factor": n(factor)}, rationale)
    for regex, how in c.SCALE:
        if (m := regex.search(text)) and (a := num(m.group(1))) is not None:
            b = num(m.group(2)) if how == "ratio" else 1.0
            if b is None or (a == 0 and how in {"inverse", "ratio"}):
                return f"A scale factor needs a non-zero number. {CAN_TEST}"
            factors = {"n": a, "inverse": 1 / a if a else 0.0, "up": 1 + a / 100, "down": 1 - a / 100}
            factor = factors.get(how, b / a if a else 0.0)
            return Proposal("scale", {"factor": n(factor)}, f"multiplies every {field.field} by {n(factor):g}")
    for regex, fixed in c.SCALE_WORDS:
        if regex.search(text):
            return Proposal("scale", {"factor": n(fixed)}, f"multiplies every {field.field} by {fixed:g}")
    return None


def _conversion(text: str, field: FieldContext) -> tuple[str, str, float] | None:
    for regex, reverse in c.CONVERSIONS:
        for m in regex.finditer(text):
            src, dst = _unit(m.group(1)), _unit(m.group(2))
            src, dst = (dst, src) if reverse else (src, dst)
            if src and dst and c.UNITS[src][1] == c.UNITS[dst][1]:
                return src, dst, c.UNITS[dst][2] / c.UNITS[src][2]
    target = c.UNIT_TARGET.search(text)
    if target and (dst := _unit(target.group(1))) in c.DEFAULT_SOURCE:
        src = _described_unit(field, c.UNITS[dst][1]) or c.DEFAULT_SOURCE[dst]
        return src, dst, c.UNITS[dst][2] / c.UNITS[src][2]
    return None


def _unit(token: str) -> str | None:
    token = " ".join(token.lower().split())
    return next((name for name, (pattern, _, _) in c.UNITS.items() if re.fullmatch(pattern, token, re.I)), None)


def _described_unit(field: FieldContext, dimension: str) -> str | None:
    """The current unit when the field says ("amount in USD", "age_days"); one-letter symbols are too ambiguous."""
    name = field.field.replace("_", " ")  # account_age_days is in days
    for m in c.UNIT_ANY.finditer(f"{field.description or ''} {field.native_type or ''} {name}"):
        unit = _unit(m.group()) if len(m.group()) > 1 else None
        if unit and c.UNITS[unit][1] == dimension:
            return unit
    return None


def clip(text: str, field: FieldContext) -> Outcome:
    lower = upper = None
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
    assumed = " (no size given, so 5% is assumed)"
    if m := c.NOISE_PCT.search(text):
        std, assumed = times(num(m.group(1) or m.group(2)), 0.01), ""
    elif m := c.NOISE_STD.search(text):
        std, assumed = times(num(m.group(1)), 0.01 if m.group(2) else 1.0), ""
    elif c.NOISE_ABS.search(text):
        return f'Noise is relative to each value: give it as a percentage, e.g. "jitter ±5%". {CAN_TEST}'
    if std is None:
        return None
    rationale = f"adds about ±{std * 100:g}% relative noise to {field.field}{assumed}"
    return Proposal("noise", {"relative_std": n(std)}, rationale)


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
        if not p.is_quoted(raw) and raw.lower() in p.STOPWORDS:
            continue
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
