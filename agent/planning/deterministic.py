"""The offline planner (docs/design.md §8), used when no chat model is configured.

``plan`` maps a described change to one allowlisted mutation (docs/design.md §5), and ``route`` (``router.py``)
classifies a request. Both are pure functions of their input and never raise on user text: when a change cannot be
modelled, or the text says more than an experiment can honour (a share of rows not understood, rows picked by
content, two changes, two readings), ``plan`` returns ``op=None`` and says why and how to ask instead. A plan lists
in ``assumptions`` every default it took. The phrasings live in ``phrases.py`` and ``change_phrases.py``; the
readers in ``detectors.py``, ``shifts.py`` and ``shares.py``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Final

from agent.planning import change_phrases as c
from agent.planning import detectors as d
from agent.planning import phrases as p
from agent.planning import shares, typos
from agent.planning.categories import remap, unseen
from agent.planning.column_changes import column_change
from agent.planning.router import route
from agent.planning.said import unread
from agent.planning.shifts import shift, time_shift
from agent.schemas import ExperimentPlan, FieldContext
from tools.mutations import PlanError, parse_mutation

__all__ = ["CAN_TEST", "plan", "route"]

CAN_TEST = c.CAN_TEST
_Detector = Callable[[str, FieldContext], d.Outcome]
# Specific phrasings before generic ones: "negative values set to 0" is a clip, not a sign flip or a constant;
# "5% nulls" is never noise; schema changes are refused before any value operator reads them. remap() accepts an
# unquoted "a to b" only with a rename keyword or on a category field, so "dollars to cents" reaches scale().
_DETECTORS: tuple[_Detector, ...] = (
    d.imputation, d.nulls, remap, unseen, d.structural, time_shift, d.rounding, d.scale, d.clip, d.noise, shift,
    d.sign_flip, d.shuffle, d.constant, d.between, d.conversion_hint,
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
    # Dataset names and URNs are masked first: "payments.cents.amount" must not read as a unit change; so is the
    # field's own name, which people put anywhere ("negative values of amount get zeroed out").
    change = _change_part(typos.corrected(" ".join(str(text).split())))
    base = c.URN_OR_DOTTED.sub(lambda m: m.group(1) or " ", change)
    masked = _without_field_name(base, field, " ")
    if (schema_change := column_change(masked, change, field)) is not None:
        return schema_change  # "amount is dropped": judged by the structural rule, like `provenance check`
    outcome = _detect(masked, field)
    if isinstance(outcome, str):
        return ExperimentPlan(refusal=outcome)
    if isinstance(outcome, d.Proposal) and (other := _other_field(base, field)):
        return ExperimentPlan(
            refusal=f"This reads as a change that {outcome.rationale}, but it also names {other}, another field of "
            f"the dataset: a condition on it or a second change, which an experiment on {field.field} alone cannot "
            f"honour. Ask about {field.field} on every row or a share of rows, or about {other} on its own."
        )
    if outcome is not None:
        # Which rows: read where the field stood, as "values" ("half of amount is in cents": half of the values).
        rows_text = _without_field_name(base, field, " values ")
        return _two_changes(outcome, masked, field) or _finish(outcome, rows_text, field)
    return ExperimentPlan(refusal=f"I could not map this to a change to the values of {field.field}. {CAN_TEST}")


def detected(text: str, field: FieldContext) -> d.Proposal | None:
    """The change the words describe, before any check of rows, sizes or other fields (what a refusal says it
    read, "This reads as a change that …"); None when no operator reads them."""
    change = _change_part(typos.corrected(" ".join(str(text).split())))
    outcome = _detect(_without_field_name(c.URN_OR_DOTTED.sub(lambda m: m.group(1) or " ", change), field, " "), field)
    return outcome if isinstance(outcome, d.Proposal) else None


def _detect(text: str, field: FieldContext) -> d.Outcome:
    for detect in _DETECTORS:
        if (outcome := detect(text, field)) is not None:
            return outcome
    return None


def _two_changes(found: d.Proposal, text: str, field: FieldContext) -> ExperimentPlan | None:
    """ "in cents and capped at 100": each clause read alone; a second, different change is not tested silently."""
    clauses = [part for part in c.CONJUNCTION.split(text) if part and part.strip()]
    readings = [r for part in clauses if isinstance(r := _detect(part, field), d.Proposal)]
    others = [r for r in readings if (r.op, r.params) != (found.op, found.params) and r.op != found.op]
    if len(clauses) < 2 or not others:
        return None
    return ExperimentPlan(
        refusal=f"This describes two changes: one that {found.rationale} and one that {others[0].rationale}. "
        "Provenance tests one change at a time: ask about each separately, e.g. first the one, then the other."
    )


def _finish(found: d.Proposal, text: str, field: FieldContext) -> ExperimentPlan:
    converted = _in_field_unit(found, text, field)
    if isinstance(converted, str):
        return ExperimentPlan(refusal=converted)
    found = converted
    share = _not_the_size(shares.read_share(text), found, text)
    fraction = found.fraction if found.fraction is not None else share.fraction if share else 1.0
    seed_match = c.SEED.search(text)
    seed = int(seed_match.group(1)) if seed_match else 0
    problem = (
        _type_problem(found.op, field)
        or _whole_number_problem(found, field)
        or _noop_problem(found, field)
        or _unsure_problem(found, text, field)
        or _direction_problem(found, text)
        or _rows_problem(found, text, share)
    )
    if problem:
        return ExperimentPlan(refusal=problem)
    try:  # the check the graph applies later; failing here lets the refusal explain it in the user's terms
        parse_mutation(found.op, found.params, fraction=fraction, seed=seed)
    except PlanError as exc:
        return ExperimentPlan(refusal=f"This reads as {found.op}, but it cannot run as described: {exc}\n{CAN_TEST}")
    rationale = found.rationale
    if fraction != 1:  # "multiplies every amount by 100 on 5% of rows" would contradict itself
        rationale = f"{rationale.replace('every ', '')} on {fraction * 100:.3g}% of rows"
    assumed = list(found.assumed)
    if found.fraction is None and share is None:
        assumed.append("no share of rows given: 100% of rows")
    elif fraction != 1 and not seed_match:
        assumed.append("rows picked at random with seed 0")
    plan = ExperimentPlan(op=found.op, params=found.params, fraction=fraction, seed=seed, rationale=f"{rationale}.")
    if left := unread(plan, text):  # a number or quoted value the plan does not account for: never dropped silently
        return ExperimentPlan(
            refusal=f"This reads as a change that {found.rationale}, but I did not read {', '.join(left)} in it "
            "(a condition, a second change, or a share in a form I do not read): I test nothing I did not read. "
            'Say the change without it, or the share of rows it reaches, e.g. "amount in cents on 20% of rows".'
        )
    return plan.model_copy(update={"assumptions": assumed})


def _not_the_size(share: shares.Share | None, found: d.Proposal, text: str) -> shares.Share | None:
    """A number said once is one parameter: in "noise of 2% to amount" the 2% is the noise, not 2% of rows."""
    numbers = [m.group() for m in c.ANY_NUMBER.finditer(text)]
    first = c.ANY_NUMBER.search(share.said) if share and share.said else None
    said = first.group() if first else ""
    value = p.to_number(said) if said else None
    sizes = [v for v in found.params.values() if isinstance(v, int | float) and not isinstance(v, bool)]
    if value is None or numbers.count(said) != 1 or not any(math.isclose(v * 100, value) for v in sizes):
        return share
    return None


def _unsure_problem(found: d.Proposal, text: str, field: FieldContext) -> str | None:
    """Two readings offered ("cents or maybe thousands"): testing either would answer a question not asked."""
    hedge = c.HEDGE.search(text)
    units = {u for m in c.UNIT_ANY.finditer(text) if len(m.group()) > 1 and (u := d.unit_name(m.group()))}
    if found.op == "scale" and (conversion := d.conversion_units(text, field)):
        units -= set(conversion)  # "in USD cents": the two units of the conversion read
    explicit = _converts(text)  # "from dollars to cents" names both
    if hedge is None and not (found.op == "scale" and (len(units) > 2 or (len(units) == 2 and not explicit))):
        return None
    why = ", ".join(filter(None, [f'"{hedge.group()}"' if hedge else "", f"units {', '.join(sorted(units))}"]))
    return (
        f"This could read as a change that {found.rationale}, but the request is not sure ({why}). Say the one "
        f'change to test, e.g. "sent in cents instead of dollars"; ask again for the other.'
    )


def _quoted(m: re.Match[str]) -> str:
    return m.group(2) or m.group(4) or ""


_TIME_UNITS = {"minute": 1, "hour": 60, "day": 1440, "week": 10080}
_TIME_SAID = re.compile(
    r"(?<![\w.])([0-9]+(?:\.[0-9]+)?)\s*(minutes?|mins?|hours?|hrs?|days?|weeks?|wks?|months?|years?|yrs?)\b", re.I
)


def _unit_of(word: str) -> str | None:
    stem = word.lower().rstrip("s")
    return {"min": "minute", "hr": "hour", "wk": "week", "yr": "year"}.get(stem, stem)


def _in_field_unit(found: d.Proposal, text: str, field: FieldContext) -> d.Proposal | str:
    """ "account_age_days is off by 2 weeks" shifts by 14 days, not 2: a shift's size said in another time unit is
    converted to the field's (exact units only), or refused; months and years have no exact length."""
    offset = found.params.get("offset")
    if found.op != "shift" or not isinstance(offset, int | float):
        return found
    said = next((m for m in _TIME_SAID.finditer(text) if abs(float(m.group(1)) - abs(offset)) < 1e-9), None)
    if said is None:
        return found
    unit = _unit_of(said.group(2))
    where = f"{field.field} {field.description or ''}".lower()
    own = next((u for u in ("minute", "hour", "day", "week") if u in where), None)
    if unit == own:
        return found
    if own is None or unit not in _TIME_UNITS:
        return (
            f"This reads as a shift of {field.field} by {offset:g}, but the request gives it in {said.group(2)} "
            f'("{said.group()}") and I do not know {field.field}\'s unit in those terms: say the shift in '
            f'{field.field}\'s own unit, e.g. "{field.field} shifted by 14".'
        )
    value = d.n(offset * _TIME_UNITS[unit] / _TIME_UNITS[own])
    rationale = f"{found.rationale.replace(f'{offset:g}', f'{value:g}')} ({said.group()} in {own}s)"
    return found._replace(params={**found.params, "offset": value}, rationale=rationale)


def _own_bound(said: re.Match[str], found: d.Proposal) -> str:
    """ "values above 5000 set to 5000" restates the clip's bound (removed, it is the clip); "capped at 10k for
    transactions over $1000" limits the clip to other rows (kept, it is a condition)."""
    number = re.search(r"[0-9][0-9,.]*\s*[kKmM]?\b", said.group())
    if number is None:
        return " "
    value = p.to_number(number.group().strip())
    bounds = [b for b in (found.params.get("lower"), found.params.get("upper")) if isinstance(b, int | float)]
    return " " if value is not None and any(abs(value - b) < 1e-9 for b in bounds) else said.group()


_SIZE_RANGE: Final = p.rx(
    rf"\bby\s+(?:about\s+|around\s+|roughly\s+|anywhere\s+from\s+)?{p.NUM}\s*(?:%|x|[a-z]+)?\s*(?:-|–|to)\s*{p.NUM}"
    rf"|{p.NUM}\s*%?\s*(?:-|–)\s*{p.NUM}\s*%"
)
_OFF_BY: Final = p.rx(r"\boff\s+by\b")  # "off by a factor of 100": ×100 or ÷100


def _converts(text: str) -> bool:
    return any(regex.search(text) for regex, _ in c.CONVERSIONS)  # "from dollars to cents" says which way


def _direction_problem(found: d.Proposal, text: str) -> str | None:
    """ "10x too small" read as ×10: a plan that moves values the other way than the words say is never run."""
    size = {"scale": ("factor", 1.0), "shift": ("offset", 0.0)}.get(found.op)
    if size is None or not isinstance(value := found.params.get(size[0]), int | float):
        return None
    down, up = c.DOWNWARD.search(text), c.UPWARD.search(text)
    against = down if value > size[1] else up if value < size[1] else None
    if down and up:
        said = f'both "{up.group()}" and "{down.group()}"'
    elif against:
        said = f'"{against.group()}", the other way'
    elif found.op == "scale" and not up and (off := _OFF_BY.search(text)) and not _converts(text):
        said = f'"{off.group()}" without which way'
    else:
        return None
    return (
        f"This reads as a change that {found.rationale}, but the request says {said}: I test nothing against its "
        'own words. Say the size with its direction, e.g. "10x too small (×0.1)".'
    )


def _rows_problem(found: d.Proposal, text: str, share: shares.Share | None) -> str | None:
    """A change limited to rows an experiment cannot select, or a share mentioned but not understood."""
    said = share.said if share else None
    if found.op != "clip" and (size := _SIZE_RANGE.search(text)):
        return (
            f'This reads as a change that {found.rationale}, but with a range of sizes ("{size.group()}"): either end '
            "would be a guess. Say one size; ask again for the other."
        )
    if found.op not in ("clip", "noise") and (span := shares.RANGE.search(text)):
        return (
            f'This reads as a change that {found.rationale}, but on a range of rows ("{span.group()}"): either end '
            f"would be a guess. Say one share: {shares.SELECTABLE}."
        )
    condition = text if found.op != "clip" else c.CLIP_CONDITION.sub(lambda m: _own_bound(m, found), text)
    chosen = said if said and share and share.fraction < 1 else None  # "for all transactions in the EU" is a subset
    if found.op == "category_remap":  # "'grocery' → 'groceries' for 'grocery'": those are the rows it changes
        keys = {str(k).lower() for k in found.params.get("mapping", {})}
        condition = shares.QUOTED_SUBSET.sub(lambda m: " " if keys <= {_quoted(m).lower()} else m.group(), condition)
    if limit := shares.subset(condition.replace(chosen, " ") if chosen else condition, found.op):
        return (
            f'This reads as a change that {found.rationale}, but only for some rows ("{limit}"), which an '
            f"experiment cannot pick out: {shares.SELECTABLE}. Ask about every row or a share of rows instead."
        )
    inherent = c.RANDOM_WORDS.sub(" ", text) if found.op in ("shuffle", "noise") else text  # randomness is the change
    if found.fraction is None and (vague := shares.unread_share(inherent, said)):
        return (
            f'This reads as a change that {found.rationale}, but I did not understand which rows ("{vague}"). '
            f"Say how many: {shares.SELECTABLE}."
        )
    return None


def _change_part(text: str) -> str:
    """The change without the question around it: the graph plans the whole message ("what happens to
    fraud_detector if amount is …"), and a later "if"/"when" is then a condition on rows, not the question."""
    clause = p.IF_CLAUSE.search(text)
    return text[clause.end() :] if clause else p.TRIGGER_PREFIX.sub("", text, count=1)


def _without_field_name(text: str, field: FieldContext, instead: str) -> str:
    name = field.field.rsplit(".", 1)[-1]
    if not name or name.lower() in p.STOPWORDS:
        return text
    # Not after a number or an article: in "a 3 hour shift" on a field named hour, "hour" is the unit.
    mention = re.compile(
        rf"(?<![0-9]\s)(?<![0-9])(?<!\ban\s)(?<!\ba\s)\b(?:(of|in|for|on|from|to)\s+(?:the\s+)?)?"
        rf"{re.escape(name)}(?:'s)?(?:\s+(?:field|column))?\b(?:\s+values?\b)?",
        re.IGNORECASE,
    )
    # "for merchant_category 'grocery'" picks rows: the rows reading keeps its "for"
    keep = instead.strip() == "values"
    masked = mention.sub(lambda m: f" for{instead}" if keep and (m.group(1) or "").lower() == "for" else instead, text)
    return " ".join(c.DANGLING.sub(" ", masked).split())


def _other_field(text: str, field: FieldContext) -> str | None:
    """The first other field of the dataset the text names (names that are common words aside: "value", "id")."""
    for name in field.other_fields:
        if len(name) < 3 or name.lower() in p.STOPWORDS:
            continue
        if re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", text, re.IGNORECASE):
            return name
    return None


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


_WHOLE_NUMBER_TYPES = re.compile(r"^(?:small|big|tiny|medium)?int(?:eger|[248])?\b|^(?:long|short)\b", re.IGNORECASE)


def _whole_number_problem(found: d.Proposal, field: FieldContext) -> str | None:
    """ "hour shifted by 90 mins" on a smallint column: 1.5 is not a value the column can hold."""
    offset = found.params.get("offset")
    if found.op not in ("shift", "cyclic_shift") or not isinstance(offset, float) or offset.is_integer():
        return None
    if not _WHOLE_NUMBER_TYPES.match((field.native_type or "").strip()):
        return None
    return (
        f"This reads as a change that {found.rationale}, but {field.field} is a {field.native_type} column: it holds "
        f"whole numbers, and a shift of {offset:g} is not one it can hold. Say a whole-number shift, e.g. "
        f'"{field.field} shifted by {round(offset) or 1}".'
    )


def _noop_problem(found: d.Proposal, field: FieldContext) -> str | None:
    neutral = {"scale": ("factor", 1), "shift": ("offset", 0), "cyclic_shift": ("offset", 0)}.get(found.op)
    if neutral and found.params.get(neutral[0]) == neutral[1]:
        return f"As read ({found.rationale}), this leaves every value of {field.field} unchanged. {CAN_TEST}"
    return None
