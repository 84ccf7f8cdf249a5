"""The offline router and planner (DESIGN §8), used when no chat model is configured.

``route`` classifies a request and extracts its subject as the user wrote it; ``plan`` maps a described change
to one allowlisted mutation (DESIGN §5). Both are pure functions of their input and never raise on user text:
when a change cannot be modelled, ``plan`` returns ``op=None`` and says why and what can be tested instead.
The phrasings live in ``phrases.py`` and ``change_phrases.py``; the per-operator readers in ``detectors.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from agent.planning import change_phrases as c
from agent.planning import detectors as d
from agent.planning import phrases as p
from agent.planning.shifts import shift, time_shift
from agent.schemas import ExperimentPlan, FieldContext, Intent, RouteDecision
from tools.mutations import PlanError, parse_mutation

__all__ = ["CAN_TEST", "plan", "route"]

CAN_TEST = c.CAN_TEST
_TRAILING = ".,;:!?'\"`"


class _Found(NamedTuple):
    text: str
    start: int
    end: int


def route(text: str) -> RouteDecision:
    """Classify a request and pull out its subject (a URN, a dotted name or a bare identifier) as written."""
    clean = " ".join(str(text).split())
    found = _subject(clean)
    rest = clean if found is None else f"{clean[: found.start]} {clean[found.end :]}"
    intent = _intent(clean, rest)
    if intent in (Intent.HELP, Intent.UNKNOWN):
        return RouteDecision(intent=intent)
    change = _change(rest, peel=found is not None) if intent is Intent.ASSESS else None
    return RouteDecision(intent=intent, subject=found.text if found else None, change=change)


def _intent(text: str, rest: str) -> Intent:
    # Order matters: an explicit "what if …" wins over words like "verdict"; owner and verdict questions win over
    # the change vocabulary; dependents catch the remaining lineage questions. ``rest`` has the subject removed,
    # so a field called "amount_cents" does not make a question about it an assessment.
    if not text:
        return Intent.UNKNOWN
    checks = (
        (p.HELP_ONLY.fullmatch(text), Intent.HELP),
        (p.ASSESS_STRONG.search(text), Intent.ASSESS),
        (p.VERDICT.search(text), Intent.LATEST_VERDICT),
        (p.OWNERS.search(text), Intent.OWNERS),
        (p.CHANGE_HINT.search(rest), Intent.ASSESS),
        (p.DEPENDENTS.search(rest), Intent.DEPENDENTS),
        (p.HELP_LOOSE.search(text), Intent.HELP),
    )
    return next((intent for matched, intent in checks if matched), Intent.UNKNOWN)


def _subject(text: str) -> _Found | None:
    # In "what happens to fraud_detector if amount is …" the subject is what changes: look after "if" first.
    clause = p.IF_CLAUSE.search(text)
    if clause and (found := _subject_in(text[clause.start() :])):
        return _Found(found.text, found.start + clause.start(), found.end + clause.start())
    return _subject_in(text)


def _subject_in(text: str) -> _Found | None:
    # Quoted strings are category values ("'grocery' renamed to …"), never the subject; backticks mark code.
    masked = p.QUOTED_RX.sub(lambda m: m.group() if m.group().startswith("`") else " " * len(m.group()), text)
    return (
        _urn(text)
        or _field_in_dataset(masked)
        or _dotted(masked)
        or _backticked(text)
        or _first_match(p.SNAKE, masked)
        or _after_keyword(masked)
    )


def _urn(text: str) -> _Found | None:
    """A DataHub URN up to the first space or unbalanced ")"; URNs nest parentheses and contain commas."""
    start = text.find("urn:li:")
    if start < 0:
        return None
    depth, end = 0, start
    while end < len(text) and not text[end].isspace():
        if text[end] == ")" and depth == 0:
            break
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        end += 1
    urn = text[start:end].rstrip(_TRAILING)
    return _Found(urn, start, start + len(urn)) if len(urn) > len("urn:li:") else None


def _field_in_dataset(text: str) -> _Found | None:
    """ "amount in payments.public.transactions" names the field payments.public.transactions.amount."""
    for m in p.FIELD_IN_DATASET.finditer(text):
        field, dataset = m.group(1), m.group(2)
        if field.lower() not in p.STOPWORDS:
            name = dataset if dataset.rsplit(".", 1)[-1] == field else f"{dataset}.{field}"
            return _Found(name, m.start(1), m.end(2))
    return None


def _dotted(text: str) -> _Found | None:
    for m in p.DOTTED_RX.finditer(text):
        if any(len(part) > 1 for part in m.group().split(".")):  # not "e.g" or "i.e"
            return _Found(m.group(), m.start(), m.end())
    return None


def _backticked(text: str) -> _Found | None:
    for m in p.BACKTICKED.finditer(text):
        inner = m.group(1).strip()
        if inner and all(ch.isalnum() or ch in "_.:(),-" for ch in inner):
            return _Found(inner, m.start(), m.end())
    return None


def _first_match(regex: re.Pattern[str], text: str) -> _Found | None:
    m = regex.search(text)
    return _Found(m.group(), m.start(), m.end()) if m else None


def _after_keyword(text: str) -> _Found | None:
    for m in p.AFTER_KEYWORD.finditer(text):
        if m.group(1).lower() not in p.STOPWORDS:
            return _Found(m.group(1), m.start(1), m.end(1))
    return None


def _change(rest: str, *, peel: bool) -> str | None:
    """The change in the user's words: what follows "if", or the request without its trigger ("simulate")."""
    clause = p.IF_CLAUSE.search(rest)
    change = rest[clause.end() :] if clause else p.TRIGGER_PREFIX.sub("", rest, count=1)
    change = " ".join(p.EMPTY_QUOTES.sub(" ", change).split())  # a quoted subject leaves its quotes behind
    for _ in range(4):  # where the subject was cut out, peel "the", "field", "is" and a dangling "in"
        change = p.LEAD_RESIDUE.sub("", change, count=1) if peel else change
        change = p.TRAIL_RESIDUE.sub("", change, count=1)
    return change or None


# --- plan -----------------------------------------------------------------------------------------------------

_Detector = Callable[[str, FieldContext], d.Outcome]
# Specific phrasings before generic ones: "negative values set to 0" is a clip, not a sign flip or a constant;
# "5% nulls" is never noise; schema changes are refused before any value operator reads them. remap() accepts an
# unquoted "a to b" only with a rename keyword or on a category field, so "dollars to cents" reaches scale().
_DETECTORS: tuple[_Detector, ...] = (
    d.imputation, d.nulls, d.remap, d.unseen, d.structural, time_shift, d.rounding, d.scale, d.clip, shift,
    d.noise, d.sign_flip, d.shuffle, d.constant, d.between, d.conversion_hint,
)  # fmt: skip
_NUMERIC_OPS = frozenset({"scale", "shift", "round", "clip", "noise", "sign_flip", "cyclic_shift"})
_CATEGORY_OPS = frozenset({"category_remap", "unseen_category"})
_FITS = {
    "numeric": "unit/scale changes, nulls, shifts and time-zone shifts, rounding, clipping, noise, sign flips, "
    "shuffling and a constant number",
    "categorical": "nulls, renamed categories, a new (unseen) category, shuffling and a constant value",
    "boolean": "nulls, shuffling and a constant true/false",
}


def plan(text: str, field: FieldContext) -> ExperimentPlan:
    """Map the described change to one allowlisted operator for ``field``; op None with a refusal if it cannot."""
    # Dataset names and URNs are masked first: "payments.cents.amount" must not read as a unit change.
    masked = c.URN_OR_DOTTED.sub(lambda m: m.group(1) or " ", " ".join(str(text).split()))
    for detect in _DETECTORS:
        outcome = detect(masked, field)
        if isinstance(outcome, str):
            return ExperimentPlan(refusal=outcome)
        if outcome is not None:
            return _finish(outcome, masked, field)
    return ExperimentPlan(refusal=f"I could not map this to a change to the values of {field.field}. {CAN_TEST}")


def _finish(found: d.Proposal, text: str, field: FieldContext) -> ExperimentPlan:
    fraction = found.fraction if found.fraction is not None else _fraction(text)
    seed_match = c.SEED.search(text)
    seed = int(seed_match.group(1)) if seed_match else 0
    problem = _type_problem(found.op, field) or _noop_problem(found, field)
    if problem:
        return ExperimentPlan(refusal=problem)
    try:  # the check the graph applies later; failing here lets the refusal explain it in the user's terms
        parse_mutation(found.op, found.params, fraction=fraction, seed=seed)
    except PlanError as exc:
        return ExperimentPlan(refusal=f"This reads as {found.op}, but it cannot run as described: {exc}\n{CAN_TEST}")
    rationale = found.rationale
    if fraction != 1:  # "multiplies every amount by 100 on 5% of rows" would contradict itself
        rationale = f"{rationale.replace('every ', '')} on {fraction * 100:.3g}% of rows"
    return ExperimentPlan(op=found.op, params=found.params, fraction=fraction, seed=seed, rationale=f"{rationale}.")


def _type_problem(op: str, field: FieldContext) -> str | None:
    kind = d.kind(field)
    needs = "numeric" if op in _NUMERIC_OPS else "categorical" if op in _CATEGORY_OPS else None
    if needs is None or kind in (needs, "other"):
        return None
    what = "numbers" if needs == "numeric" else "string or category values"
    return (
        f"This change reads as {op}, which applies to {what}, but {field.field} is a {field.field_type} field. "
        f"Changes that fit a {field.field_type} field: {_FITS[kind]}."
    )


def _noop_problem(found: d.Proposal, field: FieldContext) -> str | None:
    neutral = {"scale": ("factor", 1), "shift": ("offset", 0), "cyclic_shift": ("offset", 0)}.get(found.op)
    if neutral and found.params.get(neutral[0]) == neutral[1]:
        return f"As read ({found.rationale}), this leaves every value of {field.field} unchanged. {CAN_TEST}"
    return None


def _fraction(text: str) -> float:
    """The share of rows: "on 10% of rows", "for half of the records", "one in ten"; all rows otherwise."""
    for m in c.FRACTION_PCT.finditer(text):
        value = d.num(m.group(1) or m.group(2))
        if value is not None and not c.BY_BEFORE.search(text, 0, m.start()):  # "increase by 10% of" is a size
            return value / 100
    if words := c.FRACTION_WORDS.search(text):
        return c.FRACTION_WORD_VALUES[(words.group(1) or words.group(2)).lower()]
    if (one_in := c.FRACTION_ONE_IN.search(text)) and (count := d.num(one_in.group(1))) and count >= 1:
        return 1 / count
    return 0.5 if c.FRACTION_EVERY_OTHER.search(text) else 1.0
