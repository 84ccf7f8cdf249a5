"""The offline router and planner over the phrasing table (phrasings.py): never a confident wrong plan,
and at least 90 % of the table right.

Each message is routed; an assessment is then planned on the route's change (or the whole message when the route
gives none) against the entry's field. Every entry ends up as one of:

- right: the intent and subject as expected and, for an assessment, the expected plan (operator, parameters,
  share of rows and seed; floats within a relative 1e-3) or a refusal where one was expected (quoting the words
  the entry lists);
- refused: no answer where one was expected: the planner refused, the router gave up (unknown, help, or no
  subject), or a refusal that does not say what it did not understand;
- wrong (confident-wrong): an answer that is not the one asked for: another plan, a plan where a careful person
  would have asked back, another intent, or another subject than the one the plan would run on.

The summary line is printed even without ``-s``; a failure lists every entry that is not right.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest

from agent.nodes.routing import ABOUT_SOMETHING, OF_A_FIELD
from agent.planning.deterministic import plan, route
from agent.planning.router import prefer_known, subject_words
from agent.schemas import ExperimentPlan, Intent, RouteDecision
from tests.agent.planning.phrasings import ANY, PHRASINGS, Phrasing, Plan, Refuse
from tools.catalog.resolve import names_dataset
from tools.mutations import Kind, PlanError, parse_mutation

Verdict = Literal["right", "refused", "wrong"]
REL_TOL = 1e-3
MIN_RIGHT = 0.90
_CATALOG_ANSWERS = (Intent.DEPENDENTS, Intent.OWNERS, Intent.LATEST_VERDICT)
TABLE_NAME = "payments.public.transactions"
MODELS = frozenset({"fraud_detector", "review_time_estimator"})
_NO_ANSWER = (Intent.UNKNOWN, Intent.HELP)  # both show the capabilities text (agent/nodes/catalog_qa.py)
_KINDS: dict[str, Kind] = {"NUMBER": "numeric", "STRING": "categorical", "BOOLEAN": "boolean"}


@dataclass(frozen=True)
class Judged:
    entry: Phrasing
    verdict: Verdict
    kind: str = ""  # the failure kind, for grouping ("refused scale", "clip → sign_flip", "route assess → unknown")
    got: str = ""  # what came back, compact


# --- judging ---------------------------------------------------------------------------------------------------------


def judge(
    entry: Phrasing, *, plan_on: Literal["change", "message"] = "change", known: set[str] | None = None
) -> Judged:
    """Route the message and, for an assessment, plan it; compare with what a careful reader expects. `known`: the
    names the catalog has, checked as the graph's route node checks them (agent/nodes/routing.py)."""
    try:
        decision = route(entry.text)
        if known is not None and decision.intent in ABOUT_SOMETHING:
            names = {n for n in known if not (decision.intent in OF_A_FIELD and n in MODELS)}
            decision = prefer_known(entry.text, decision, {w for w in subject_words(entry.text) if w in names})
        bare = decision.subject and not any(ch in decision.subject for ch in ".:")
        unknown_word = bare and decision.intent in ABOUT_SOMETHING and decision.subject not in (known or set())
        if known is not None and (_names_another_table(decision.subject) or unknown_word):
            # resolving it asks ("no dataset named 'billing.transactions'; did you mean …"): nothing is planned
            expected_ask = isinstance(entry.expect, Refuse) or entry.intent is not Intent.ASSESS
            return Judged(entry, "right" if expected_ask else "refused", "name asked about", _route_text(decision))
    except Exception as exc:  # the router must never raise on user text; counted, and listed, as no answer
        return Judged(entry, "refused", "route raised", f"{type(exc).__name__}: {exc}")
    if entry.intent is not Intent.ASSESS:
        return _judge_question(entry, decision)
    if decision.intent is not Intent.ASSESS:
        if decision.intent in _NO_ANSWER:
            expected_refusal = isinstance(entry.expect, Refuse) and not entry.expect.mentions
            verdict: Verdict = "right" if expected_refusal else "refused"
            return Judged(entry, verdict, f"route assess → {decision.intent.value}", _route_text(decision))
        return Judged(entry, "wrong", f"route assess → {decision.intent.value}", _route_text(decision))
    assert entry.field is not None and entry.expect is not None
    text = (decision.change or entry.text) if plan_on == "change" else entry.text
    try:
        proposal = plan(text, entry.field)
    except Exception as exc:  # the planner must never raise on user text either
        return Judged(entry, "refused", "plan raised", f"{type(exc).__name__}: {exc}")
    if proposal.structural is not None:  # a dropped or renamed column reads as the pseudo-operator column_<change>
        renamed = {"renamed_to": proposal.renamed_to} if proposal.renamed_to else {}
        proposal = proposal.model_copy(update={"op": f"column_{proposal.structural}", "params": renamed})
    got = _plan_text(proposal, text if text != entry.text else None)
    if isinstance(entry.expect, Refuse):
        if proposal.op is not None:
            return Judged(entry, "wrong", f"planned {proposal.op} (expected refusal)", got)
        missing = [m for m in entry.expect.mentions if not _mentions(proposal.refusal or "", m)]
        if missing:
            return Judged(entry, "refused", "refusal does not quote the words", f"{got} | missing {missing}")
        return Judged(entry, "right")
    expected = entry.expect
    if proposal.op is None:
        return Judged(entry, "refused", f"refused {expected.op}", got)
    if mismatch := _plan_mismatch(expected, proposal):
        return Judged(entry, "wrong", mismatch, got)
    subject = _subject_verdict(entry.subject, decision.subject, entry.text)
    if subject is not None:
        return Judged(entry, subject[0], subject[1], f"subject {decision.subject!r}; {got}")
    return Judged(entry, "right", got=got)


def _names_another_table(subject: str | None) -> bool:
    """A dotted field name whose table is not the demo's (names resolve exactly: tools/catalog/resolve.py)."""
    if not subject or "." not in subject or subject.startswith("urn:"):
        return False
    hint = subject.rpartition(".")[0]
    return not names_dataset(hint, TABLE_NAME) and not names_dataset(subject, TABLE_NAME)


def _judge_question(entry: Phrasing, decision: RouteDecision) -> Judged:
    got = _route_text(decision)
    expected, intent = entry.intent, decision.intent
    if intent is not expected:
        if expected is Intent.UNKNOWN and intent is Intent.HELP:
            return Judged(entry, "right")  # both answer with the capabilities text
        if intent in _NO_ANSWER and expected is not Intent.UNKNOWN:
            return Judged(entry, "refused", f"route {expected.value} → {intent.value}", got)
        return Judged(entry, "wrong", f"route {expected.value} → {intent.value}", got)
    if expected in _CATALOG_ANSWERS and (subject := _subject_verdict(entry.subject, decision.subject, entry.text)):
        return Judged(entry, subject[0], f"{expected.value}: {subject[1]}", got)
    return Judged(entry, "right")


def _subject_verdict(expected: str | None, got: str | None, text: str) -> tuple[Verdict, str] | None:
    if _norm(got) == _norm(expected):
        return None
    if _qualifies(got, expected, text):
        return None  # "amount … in payments.public.transactions" read as payments.public.transactions.amount
    if got is None:
        return "refused", "subject missing"  # the agent asks which field; nothing runs
    return "wrong", "subject wrong"


def _qualifies(got: str | None, expected: str | None, text: str) -> bool:
    """`got` is `expected` with the dataset the message names: the same column, named more precisely."""
    full, bare = _norm(got), _norm(expected)
    if not full or not bare or not full.endswith(f".{bare}"):
        return False
    return full.removesuffix(f".{bare}") in text.lower()


def _norm(subject: str | None) -> str | None:
    if subject is None:
        return None
    text = subject.strip().strip("`'\"“”‘’").rstrip(".,;:!?").removesuffix("'s")
    return text.lower() or None


def _plan_mismatch(expected: Plan, got: ExperimentPlan) -> str | None:
    if got.op != expected.op:
        return f"{expected.op} → {got.op}"
    if not _params_match(expected.params, got.params):
        return f"{expected.op} params"
    if not math.isclose(got.fraction, expected.fraction, rel_tol=REL_TOL):
        return f"{expected.op} share of rows"
    if got.seed != expected.seed:
        return f"{expected.op} seed"
    return None


def _params_match(expected: Mapping[str, object], got: Mapping[str, object]) -> bool:
    present = {k: v for k, v in got.items() if v is not None}  # clip(lower=None, upper=5) is clip(upper=5)
    if set(present) != set(expected):
        return False
    return all(_value_match(value, present[key]) for key, value in expected.items())


def _value_match(expected: object, got: object) -> bool:
    if expected is ANY:
        return True
    if isinstance(expected, bool) or isinstance(got, bool):
        return isinstance(got, bool) and isinstance(expected, bool) and got is expected
    if isinstance(expected, int | float) and isinstance(got, int | float):
        return math.isclose(got, expected, rel_tol=REL_TOL, abs_tol=1e-12)
    if isinstance(expected, Mapping) and isinstance(got, Mapping):
        return dict(expected) == dict(got)
    return expected == got


def _mentions(refusal: str, words: str) -> bool:
    return any(word.lower() in refusal.lower() for word in words.split("|"))


def _route_text(decision: RouteDecision) -> str:
    parts = [decision.intent.value, f"subject={decision.subject!r}"]
    if decision.change is not None:
        parts.append(f"change={decision.change!r}")
    return " ".join(parts)


def _plan_text(proposal: ExperimentPlan, planned_on: str | None) -> str:
    where = f" [planned on {planned_on!r}]" if planned_on else ""
    if proposal.op is None:
        return f"refusal: {_short(proposal.refusal or '', 160)}{where}"
    return f"{_expected_text(Plan(proposal.op, proposal.params, proposal.fraction, proposal.seed))}{where}"


def _expected_text(expect: Plan | Refuse | None) -> str:
    if expect is None:
        return ""
    if isinstance(expect, Refuse):
        return "REFUSE" + (f" quoting {list(expect.mentions)}" if expect.mentions else "")
    params = ", ".join(f"{k}={v!r}" for k, v in expect.params.items())
    seed = f" seed {expect.seed}" if expect.seed else ""
    return f"{expect.op}({params}) on {expect.fraction:.4g}{seed}"


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- the table -------------------------------------------------------------------------------------------------------


def judge_table(
    entries: Iterable[Phrasing] = PHRASINGS, *, plan_on: Literal["change", "message"] = "change"
) -> list[Judged]:
    return [judge(entry, plan_on=plan_on) for entry in entries]


def counts(results: Sequence[Judged]) -> Counter[str]:
    return Counter(r.verdict for r in results)


def answerable_right(results: Sequence[Judged]) -> tuple[int, int]:
    """(right, total) over the entries a careful person would plan or answer."""
    answerable = [r for r in results if r.entry.answerable]
    return sum(r.verdict == "right" for r in answerable), len(answerable)


def summary_line(results: Sequence[Judged]) -> str:
    c, n = counts(results), len(results)
    right, total = answerable_right(results)
    return (
        f"planner table: {n} phrasings, {c['right']} right ({c['right'] / n:.1%}), {c['refused']} refused, "
        f"{c['wrong']} confident-wrong; answerable {right}/{total} right ({right / max(total, 1):.1%}), "
        f"expected refusals {c['right'] - right}/{n - total} right"
    )


def category_table(results: Sequence[Judged]) -> str:
    by_category: dict[str, Counter[str]] = {}
    for r in results:
        by_category.setdefault(r.entry.category, Counter())[r.verdict] += 1
    rows = [f"{'category':>15} | {'n':>3} | {'right':>5} | {'refused':>7} | {'wrong':>5} | right %"]
    for category, c in sorted(by_category.items(), key=lambda item: (-item[1].total(), item[0])):
        n = c.total()
        rows.append(
            f"{category:>15} | {n:>3} | {c['right']:>5} | {c['refused']:>7} | {c['wrong']:>5} | {c['right'] / n:>6.0%}"
        )
    return "\n".join(rows)


def failure_kinds(results: Sequence[Judged]) -> list[tuple[str, int]]:
    return Counter(f"{r.verdict}: {r.kind}" for r in results if r.verdict != "right").most_common()


def failure_report(results: Sequence[Judged]) -> str:
    lines = []
    for verdict in ("wrong", "refused"):
        for r in (r for r in results if r.verdict == verdict):
            e = r.entry
            expected = _expected_text(e.expect) if e.intent is Intent.ASSESS else f"{e.intent.value} {e.subject!r}"
            field = f" on {e.field.field}" if e.field is not None else ""
            lines.append(
                f"{verdict.upper():7} [{e.category}] {e.text!r}{field}\n"
                f"        expected {expected}; got {r.got or '-'} ({r.kind})"
            )
    kinds = "\n".join(f"  {n:>3}  {kind}" for kind, n in failure_kinds(results))
    return "\n".join([*lines, "failure kinds:", kinds])


# --- tests -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("plan_on", ["message", "change"])
def test_planner_table(capsys: pytest.CaptureFixture[str], plan_on: Literal["change", "message"]) -> None:
    """`message`: the whole message, as the graph's plan node plans it; `change`: the route's change text."""
    results = judge_table(plan_on=plan_on)
    line = f"{summary_line(results)} (planned on the {plan_on})"
    with capsys.disabled():
        print(f"\n{line}")
    c, n = counts(results), len(results)
    right, total = answerable_right(results)
    ok = c["wrong"] == 0 and c["right"] / n >= MIN_RIGHT and right / total >= MIN_RIGHT
    assert ok, f"{line}\n{category_table(results)}\n{failure_report(results)}"


def test_the_table_is_sound() -> None:
    """At least 280 distinct phrasings of our own, 70-80 % answerable, and every expected plan one the allowlist
    accepts for the entry's field."""
    texts = [e.text for e in PHRASINGS]
    assert len(PHRASINGS) >= 280 and len(set(texts)) == len(texts)
    share = sum(e.answerable for e in PHRASINGS) / len(PHRASINGS)
    assert 0.70 <= share <= 0.80, f"answerable share {share:.1%}"
    root = Path(__file__).resolve().parents[3]
    sources = (root / "README.md", Path(__file__).with_name("test_deterministic.py"))
    known = " ".join(re.sub(r"\s+", " ", path.read_text(encoding="utf-8")).lower() for path in sources)
    copied = [t for t in texts if len(t) > 12 and t.lower() in known]
    assert not copied, f"phrasings copied from the README or test_deterministic.py: {copied}"
    for e in PHRASINGS:
        assert e.category and e.text.strip()
        if e.intent is not Intent.ASSESS:
            assert e.field is None and e.expect is None, e.text
            continue
        assert e.field is not None and e.expect is not None, e.text
        if isinstance(e.expect, Plan) and e.expect.op in ("column_dropped", "column_renamed"):
            assert set(e.expect.params) <= {"renamed_to"}, e.text  # a structural plan: no operator to check
        elif isinstance(e.expect, Plan):
            params = {k: ("placeholder" if v is ANY else v) for k, v in e.expect.params.items()}
            try:
                mutation = parse_mutation(e.expect.op, params, fraction=e.expect.fraction, seed=e.expect.seed)
            except PlanError as exc:
                pytest.fail(f"{e.text!r}: {exc}")
            assert mutation.fits(_KINDS[e.field.field_type]), f"{e.text!r}: {e.expect.op} on {e.field.field_type}"
