"""Shifts for the deterministic planner. A time-zone or clock shift is cyclic on hour-of-day (period 24) and
day-of-week (period 7) fields and additive on timestamps, and refused on other fields; "shifted by +5" on any
other number is a plain additive shift."""

from __future__ import annotations

import math
import re

from agent.planning import change_phrases as c
from agent.planning import phrases as p
from agent.planning.change_phrases import CAN_TEST
from agent.planning.detectors import Outcome, Proposal, n, num, times
from agent.schemas import FieldContext


def shift_amount(text: str) -> float | None:
    """An additive offset: "shifted by +5", "off by 10", "increase by 3", "reduced by 2", "+5 offset"."""
    if m := c.SHIFT_INSTEAD.search(text):
        new, old = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(5))
        a, b = num(new), num(old)
        if a is not None and b is not None:
            return a - b
    for regex, sign in (
        (c.SHIFT_DOWN, -1), (c.SHIFT_LESS, -1), (c.SHIFT_FEE, 1), (c.SHIFT_UP, 1), (c.SHIFT_MORE, 1),
        (c.SHIFT_SIGNED, 1), (c.SHIFT_PLUS, 1), (c.SHIFT_MINUS, -1),
    ):  # fmt: skip
        if (m := regex.search(text)) and (value := num(m.group(1) or m.group(m.lastindex or 1))) is not None:
            return sign * value
    return None


def shift(text: str, field: FieldContext) -> Outcome:
    amount = shift_amount(text)
    if amount is None:
        return None
    return Proposal("shift", {"offset": n(amount)}, f"adds {amount:+g} to every {field.field}")


def time_shift(text: str, field: FieldContext) -> Outcome:
    name = field.field.rsplit(".", 1)[-1]
    described = field.description or ""
    tz = _tz_offset(text, described)
    tz_words = tz is not None or c.TZ_WORDS.search(text) is not None
    shifting = tz_words or c.TIME_SHIFT_KW.search(text) is not None
    minutes = _signed(c.MINUTES, text)
    days = _signed(c.DAYS, text)
    hours = _first(tz, _signed(c.HOURS, text), times(minutes, 1 / 60), times(days, 24))
    if c.HOUR_FIELD.search(name) or "hour of day" in described.lower():
        offset = _first(hours, shift_amount(text)) if shifting else None
        if shifting and offset is None:
            local = '"local time" does not say which zone. ' if "local" in text.lower() else ""
            return f'{local}Say how many hours {name} moves, e.g. "+3 hour time-zone shift" or "UTC → CET". {CAN_TEST}'
        return None if offset is None else _cyclic(offset, 24, "hour", f"hour-of-day {name}")
    if c.DOW_FIELD.search(name) or "day of week" in described.lower():
        if days is None and shifting and not tz_words:
            days = shift_amount(text)
        if days is not None:
            return _cyclic(days, 7, "day", f"day-of-week {name}")
        if tz_words:  # only rows near midnight change day; a whole-field shift would overstate it
            return (
                f"A time-zone shift moves only rows near midnight to another day; test it on an hour field. {CAN_TEST}"
            )
        return None
    if c.TIMESTAMP_FIELD.search(name) or field.field_type.strip().upper() in {"DATE", "TIME"}:
        if hours is None or not shifting:
            return None
        millis = c.MILLIS_FIELD.search(f"{name} {field.native_type or ''} {described}") is not None
        offset = hours * (3_600_000 if millis else 3600)  # epoch seconds unless the field says milliseconds
        unit = "milliseconds" if millis else "seconds"
        return Proposal("shift", {"offset": n(offset)}, f"a {hours:+g} hour shift adds {offset:+g} {unit} to {name}")
    if tz_words:
        return f"A time-zone shift changes hour-of-day, day-of-week or timestamp fields; {name} is none. {CAN_TEST}"
    return None


def _cyclic(offset: float, period: int, unit: str, what: str) -> Proposal:
    offset = math.fmod(offset, period)  # a 27-hour shift reads 3 hours later on the clock
    rationale = f"a {offset:+g} {unit} shift moves {what} by {offset:+g} modulo {period}"
    return Proposal("cyclic_shift", {"offset": n(offset), "period": period}, rationale)


def _first(*values: float | None) -> float | None:
    return next((v for v in values if v is not None), None)


def _signed(regex: re.Pattern[str], text: str) -> float | None:
    """The first "N hours"/"N days" (or "an hour"/"a day"), negative when the text says back/earlier/behind."""
    m = regex.search(text)
    if m is None:
        return None
    raw = m.group(1) or ""
    value = 1.0 if m.lastindex and m.lastindex >= 2 and m.group(2) else p.to_number(raw)
    if value is not None and not raw.startswith(("+", "-", "−")) and c.BACKWARDS.search(text):
        return -value
    return value


def _tz_offset(text: str, described: str) -> float | None:
    if m := c.TZ_PAIR.search(text):
        return _zone(m.group(2)) - _zone(m.group(1))
    if m := c.TZ_INSTEAD.search(text):
        return _zone(m.group(1)) - _zone(m.group(2))
    if m := c.TZ_SINGLE.search(text) or c.TZ_EXPLICIT.search(text):  # "sent in CET", "Pacific time (UTC-8)"
        home = c.TZ_ANY.search(described)
        return _zone(m.group(1)) - (_zone(home.group()) if home else 0.0)
    return None


def _zone(token: str) -> float:
    m = c.TZ_TOKEN.match(token.strip())
    if m is None:
        return 0.0
    hours = float(c.TZ_HOURS.get(m.group(1).upper(), 0.0))
    if m.group(3):
        sign = -1 if m.group(2) in "-−" else 1
        hours += sign * (int(m.group(3)) + int(m.group(4) or 0) / 60)
    return hours
