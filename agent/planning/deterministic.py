"""The offline planner (docs/design.md §8), used when no chat model is configured.

``plan`` maps a described change to one allowlisted mutation (docs/design.md §5), and ``route`` (``router.py``)
classifies a request. Both are pure functions of their input and never raise on user text: when a change cannot be
modelled, or the text says more than an experiment can honour (a share of rows not understood, rows picked by
content, two changes, two readings), ``plan`` returns ``op=None`` and says why and how to ask instead. A plan lists
in ``assumptions`` every default it took. The phrasings live in ``phrases.py`` and ``change_phrases.py``; the
readers in ``detectors.py``, ``shifts.py`` and ``shares.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

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
    d.imputation, d.nulls, remap, unseen, d.structural, time_shift, d.rounding, d.scale, d.clip, shift,
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
    if outcome is not None:
        # Which rows: read where the field stood, as "values" ("half of amount is in cents": half of the values).
        rows_text = _without_field_name(base, field, " values ")
        return _two_changes(outcome, masked, field) or _finish(outcome, rows_text, field)
    return ExperimentPlan(refusal=f"I could not map this to a change to the values of {field.field}. {CAN_TEST}")


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
    share = shares.read_share(text)
    fraction = found.fraction if found.fraction is not None else share.fraction if share else 1.0
    seed_match = c.SEED.search(text)
    seed = int(seed_match.group(1)) if seed_match else 0
    problem = (
        _type_problem(found.op, field)
        or _noop_problem(found, field)
        or _unsure_problem(found, text, field)
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


def _unsure_problem(found: d.Proposal, text: str, field: FieldContext) -> str | None:
    """Two readings offered ("cents or maybe thousands"): testing either would answer a question not asked."""
    hedge = c.HEDGE.search(text)
    units = {u for m in c.UNIT_ANY.finditer(text) if len(m.group()) > 1 and (u := d.unit_name(m.group()))}
    if found.op == "scale" and (conversion := d.conversion_units(text, field)):
        units -= set(conversion)  # "in USD cents": the two units of the conversion read
    explicit = any(regex.search(text) for regex, _ in c.CONVERSIONS)  # "from dollars to cents" names both
    if hedge is None and not (found.op == "scale" and (len(units) > 2 or (len(units) == 2 and not explicit))):
        return None
    why = ", ".join(filter(None, [f'"{hedge.group()}"' if hedge else "", f"units {', '.join(sorted(units))}"]))
    return (
        f"This could read as a change that {found.rationale}, but the request is not sure ({why}). Say the one "
        f'change to test, e.g. "sent in cents instead of dollars"; ask again for the other.'
    )


def _rows_problem(found: d.Proposal, text: str, share: shares.Share | None) -> str | None:
    """A change limited to rows an experiment cannot select, or a share mentioned but not understood."""
    said = share.said if share else None
    condition = text if found.op != "clip" else c.CLIP_CONDITION.sub(" ", text)
    chosen = said if said and share and share.fraction < 1 else None  # "for all transactions in the EU" is a subset
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
        rf"(?<![0-9]\s)(?<![0-9])(?<!\ban\s)(?<!\ba\s)\b(?:(?:of|in|for|on|from|to)\s+(?:the\s+)?)?"
        rf"{re.escape(name)}(?:'s)?(?:\s+(?:field|column))?\b(?:\s+values?\b)?",
        re.IGNORECASE,
    )
    return " ".join(c.DANGLING.sub(" ", mention.sub(instead, text)).split())


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
