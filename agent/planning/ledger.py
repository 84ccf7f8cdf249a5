"""What a chat model's plan must account for (the reading ledger's chat-model half).

The offline planner refuses, quoting the words, when its reading leaves a meaningful word unread. A chat model's
reading cannot be inspected the same way, so it cites instead: the plan carries the exact words of the request each
part came from (`cited`), and the words it read and judged not to be part of the change (`context`: a ticket number,
a date). Provenance then finds the request's meaningful spans itself, with the offline planner's phrasings, and every
one must overlap a citation:

- a number, a quoted value, a unit, a time zone;
- another field of the dataset;
- a condition on rows ("only for mobile", "on weekends", "for accounts younger than 30 days");
- a range, a direction ("too small", "lower"), a vague share ("some rows", "occasionally");
- a clause that describes a change (a second verb of change).

Words cited as context may cover numbers and units only: a condition, a range or a second change is never context.
A citation the request does not contain is refused too: the model cannot account for words nobody wrote.
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

from agent.planning import change_phrases as c
from agent.planning import phrases as p
from agent.planning import shares
from agent.schemas import FieldContext

_TIME_UNITS: Final = p.rx(r"\b(?:hours?|hrs?|minutes?|mins?|seconds?|days?|weeks?|months?|years?)\b")
# Identifiers are names, not sizes: "txn_count_1h" holds no number, "fraud_detector_v2" no version to test.
_IDENTIFIER: Final = re.compile(r"urn:li:\S+|" + p.DOTTED + r"|\b\w*_\w*\b", re.IGNORECASE)
_NOT_SIZES: Final = frozenset({"one", "a", "an"})  # "one of the models": a count a condition or share would carry
_CONTEXT_MAY_COVER: Final = frozenset({"number", "unit"})


class Span(NamedTuple):
    start: int
    end: int
    kind: str  # number, value, unit, field, condition, range, direction, share, change


class Unaccounted(NamedTuple):
    not_said: list[str]  # citations the request does not contain
    unread: list[str]  # meaningful words no citation covers


def unaccounted(text: str, field: FieldContext, cited: list[str], context: list[str]) -> Unaccounted:
    """What the chat model's citations leave out of `text`, and what they cite that `text` does not say."""
    not_said = [words for words in [*cited, *context] if words.strip() and _locate(words, text) is None]
    plan_spans = _located(cited, text)
    context_spans = _located(context, text)
    unread: list[str] = []
    for span in meaningful(text, field):
        covering = plan_spans + (context_spans if span.kind in _CONTEXT_MAY_COVER else [])
        if not any(start < span.end and span.start < end for start, end in covering):
            words = " ".join(text[span.start : span.end].split())
            if words not in unread:
                unread.append(words)
    return Unaccounted(not_said, unread)


def meaningful(text: str, field: FieldContext) -> list[Span]:
    """The spans of `text` that carry meaning for a plan, found with the offline planner's phrasings. The field's
    own name and other identifiers are blanked first (offsets kept), so their digits and words read as nothing."""
    others = [name for name in field.other_fields if name.lower() != field.field.lower()]
    spans = [Span(m.start(), m.end(), "field") for name in others for m in _word(name).finditer(text)]
    masked = _blank(text, field)
    spans += [
        Span(m.start(), m.end(), "number")
        for m in c.ANY_NUMBER.finditer(masked)
        if m.group().strip().lower() not in _NOT_SIZES
    ]
    spans += [Span(m.start(), m.end(), "value") for m in p.QUOTED_RX.finditer(masked)]
    for regex in (c.UNIT_ANY, c.CURRENCY, c.TEMPERATURE, _TIME_UNITS):
        spans += [Span(m.start(), m.end(), "unit") for m in regex.finditer(masked) if len(m.group().strip()) > 1]
    spans += [Span(m.start(), m.end(), "unit") for m in c.TZ_ANY.finditer(masked)]
    spans += [Span(m.start(), _clause_end(masked, m.end()), "condition") for m in _conditions(masked)]
    spans += [Span(m.start(), m.end(), "range") for m in (*shares.RANGE.finditer(masked), *c.BETWEEN.finditer(masked))]
    spans += [Span(m.start(), m.end(), "direction") for r in (c.DOWNWARD, c.UPWARD) for m in r.finditer(masked)]
    spans += [Span(m.start(), m.end(), "share") for m in shares.VAGUE.finditer(masked) if m.group().strip() != "%"]
    spans += _change_clauses(masked, field)
    return sorted(set(spans))


def _conditions(text: str) -> list[re.Match[str]]:
    return [m for regex in shares.SUBSET for m in regex.finditer(text)]


def _clause_end(text: str, start: int) -> int:
    """Where the clause of a condition ends, so the refusal quotes the rows it names ("only for mobile users")."""
    end = shares.CLAUSE_END.search(text, start)
    return min(end.start() if end else len(text), start + 60)


def _change_clauses(text: str, field: FieldContext) -> list[Span]:
    """Each clause the offline planner reads a change in: a second one nobody cited is a second change."""
    from agent.planning.deterministic import detected  # deterministic plans with this module's neighbours

    spans: list[Span] = []
    start = 0
    for separator in [*c.CONJUNCTION.finditer(text), None]:
        end = separator.start() if separator else len(text)
        clause = text[start:end]
        if clause.strip() and detected(clause, field) is not None:
            spans.append(Span(start, end, "change"))
        start = separator.end() if separator else end
    return spans


def _blank(text: str, field: FieldContext) -> str:
    """`text` with the field's name and identifiers replaced by spaces of the same length."""
    blanked = _IDENTIFIER.sub(lambda m: " " * len(m.group()), text)
    return _word(field.field.rsplit(".", 1)[-1]).sub(lambda m: " " * len(m.group()), blanked)


def _word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w.]){re.escape(name)}(?![\w])", re.IGNORECASE)


def _located(spans: list[str], text: str) -> list[tuple[int, int]]:
    return [found for words in spans if words.strip() and (found := _locate(words, text)) is not None]


def _locate(words: str, text: str) -> tuple[int, int] | None:
    """Where `words` occur in `text`, case and spacing aside (a model may copy "5 %" as "5%")."""
    parts = [re.escape(part) for part in words.split()]
    m = re.compile(r"\s*".join(parts), re.IGNORECASE).search(text)
    return (m.start(), m.end()) if m else None
