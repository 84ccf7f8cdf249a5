"""The offline router (docs/design.md §8): what kind of request this is and what it is about, as the user wrote it.

Pure and total on user text; the phrasings live in ``phrases.py``.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from agent.planning import phrases as p
from agent.schemas import Intent, RouteDecision

_TRAILING = ".,;:!?'\"`"


class _Found(NamedTuple):
    text: str
    start: int
    end: int


def route(text: str, subject: str | None = None) -> RouteDecision:
    """Classify a request and pull out its subject (a URN, a dotted name or a bare identifier) as written.
    `subject`, a word of the text the catalog knows (see `subject_words`), is taken as the subject instead."""
    clean = " ".join(str(text).split())
    found = _forced(clean, subject) if subject else _subject(clean)
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
        (p.TOLERANCE.search(text), Intent.TOLERANCE),
        # "amount nulls on 0.5% of rows — PASS or BLOCK?": a change asked about by its verdict, not a past verdict
        (_verdict_of_a_change(text, rest), Intent.ASSESS),
        (p.VERDICT.search(text) or p.VERDICT_WORDS.search(text), Intent.LATEST_VERDICT),
        (p.HOW_TO.search(text) and rest == text, Intent.HELP),  # "new here — how do I ask for an impact check?"
        (p.OWNERS.search(text), Intent.OWNERS),
        (p.CHANGE_HINT.search(rest), Intent.ASSESS),
        (p.DEPENDENTS.search(rest), Intent.DEPENDENTS),
        (p.HELP_LOOSE.search(text), Intent.HELP),
    )
    return next((intent for matched, intent in checks if matched), Intent.UNKNOWN)


def subject_words(text: str) -> list[str]:
    """Every word of the text that could name a field, dataset or model, in order, once each (quoted values and
    common words aside). The router's subject is its best guess at which; a caller that can ask the catalog keeps
    the guess only if the catalog knows it (agent/nodes/routing.py), and otherwise takes the one word it knows."""
    clean = " ".join(str(text).split())
    masked = p.QUOTED_RX.sub(lambda m: m.group() if m.group().startswith("`") else " " * len(m.group()), clean)
    words = [m.group().strip("`").rstrip(_TRAILING) for m in re.finditer(rf"`?{p.DOTTED}`?|`?[A-Za-z_]\w*`?", masked)]
    return list(dict.fromkeys(w for w in words if w and w.lower() not in p.STOPWORDS and not w[0].isdigit()))


def prefer_known(question: str, decision: RouteDecision, known: set[str]) -> RouteDecision:
    """The route with a subject the catalog knows (`known`: the words of the question it names). A dotted name or
    URN is kept as written (resolving it asks, never substitutes). A bare word it does not know is replaced by the
    one word of the question it does ("amount is gonna land in cents": 'land' → 'amount'); none or several: the
    guess stays, and resolving it asks the person which they meant."""
    subject = decision.subject
    if subject and ("." in subject or ":" in subject or subject in known):
        return decision
    named = [w for w in subject_words(question) if w != subject and w in known]
    return route(question, subject=named[0]) if len(named) == 1 else decision


def _forced(text: str, subject: str) -> _Found | None:
    m = re.search(rf"(?<![\w.]){re.escape(subject)}(?![\w])", text)
    return _Found(subject, m.start(), m.end()) if m else None


def _verdict_of_a_change(text: str, rest: str) -> bool:
    """A change asked about by its verdict ("amount x100 on new accounts — verdict?", "… PASS or BLOCK?"), not a
    verdict found before ("last verdict was PASS")."""
    asks_verdict = p.VERDICT_WORDS.search(text) or re.search(r"\bverdicts?\b", text, re.IGNORECASE)
    return bool(asks_verdict and p.CHANGE_HINT.search(rest) and not p.PAST.search(text))


def _subject(text: str) -> _Found | None:
    # In "what happens to fraud_detector if amount is …" the subject is what changes: look after "if" first.
    clause = p.IF_CLAUSE.search(text)
    if clause and (found := _subject_in(text[clause.start() :])):
        return _Found(found.text, found.start + clause.start(), found.end + clause.start())
    return _subject_in(text)


def _subject_in(text: str) -> _Found | None:
    # Quoted strings are category values ("'grocery' renamed to …"), never the subject; backticks mark code. A new
    # name ("amount is renamed to amount_usd") is not the subject either.
    masked = p.QUOTED_RX.sub(lambda m: m.group() if m.group().startswith("`") else " " * len(m.group()), text)
    masked = p.RENAME_TARGET.sub(lambda m: m.group()[: m.start(1) - m.start()] + " " * len(m.group(1)), masked)
    masked = p.TOLERANCE_OF.sub(lambda m: " " * len(m.group()), masked)  # "tolerance map of X": X is the subject
    return (
        _urn(text)
        or _read_by_model(masked)
        or _field_in_dataset(masked)
        or _dotted(masked)
        or _backticked(text)
        or _snake(masked)
        or _after_keyword(masked)
        or _before_change(masked)
    )


def _read_by_model(text: str) -> _Found | None:
    m = p.DOES_USE.search(text)
    if m is None or m.group(2).lower() in p.STOPWORDS:
        return None
    if not p.MODELISH.search(m.group(1)) and "_" not in m.group(1):  # "does amount use …": no model named first
        return None
    return _Found(m.group(2), m.start(2), m.end(2))


def _before_change(text: str) -> _Found | None:
    """The word the change is said of: "every amount is in cents", "amount arriving in cents"."""
    for hint in p.CHANGE_HINT.finditer(text):
        for m in reversed(list(p.WORD_BEFORE.finditer(text, 0, hint.start()))):
            word = m.group(1)
            if word.lower() in p.LINKING:
                continue
            if word.lower() not in p.STOPWORDS and not word[0].isdigit():
                return _Found(word, m.start(1), m.end(1))
            break
    return None


def _snake(text: str) -> _Found | None:
    """The first snake_case name, unless it looks like a model's and another name in the text could be the field."""
    found = [_Found(m.group(), m.start(), m.end()) for m in p.SNAKE.finditer(text)]
    fields = [f for f in found if not p.MODELISH.search(f.text)]
    if found and not fields:
        for word in (_after_keyword(text), _before_change(text)):
            if word and not p.MODELISH.search(word.text):
                return word
    return (fields or found)[0] if found else None


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
    """ "amount in payments.public.transactions" names the field payments.public.transactions.amount (and so does
    "payments.public.transactions sends amount")."""
    for m in p.DATASET_SENDS_FIELD.finditer(text):
        if m.group(2).lower() not in p.STOPWORDS:
            return _Found(f"{m.group(1)}.{m.group(2)}", m.start(1), m.end(2))
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
