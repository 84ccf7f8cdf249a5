"""The offline router and planner: the common phrasings map exactly, the rest is refused with a reason, and no
text makes either function raise or return a plan the mutation allowlist would reject."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.planning.deterministic import plan, route
from agent.schemas import ExperimentPlan, FieldContext, Intent
from tools.mutations import parse_mutation

_TABLE = "urn:li:dataset:(urn:li:dataPlatform:postgres,payments.public.transactions,PROD)"
_FIELD_URN = f"urn:li:schemaField:({_TABLE},amount)"
AMOUNT = FieldContext(dataset_urn=_TABLE, field="amount", field_type="NUMBER", native_type="numeric(12,2)")
CATEGORY = FieldContext(dataset_urn=_TABLE, field="merchant_category", field_type="STRING")
HOUR = FieldContext(dataset_urn=_TABLE, field="hour", field_type="NUMBER", description="Hour of day (0-23, UTC)")
AGE = FieldContext(dataset_urn=_TABLE, field="account_age_days", field_type="NUMBER")
DAY = FieldContext(dataset_urn=_TABLE, field="day_of_week", field_type="NUMBER")
FLAG = FieldContext(dataset_urn=_TABLE, field="card_present", field_type="BOOLEAN")
FIELDS = [AMOUNT, CATEGORY, HOUR, AGE, DAY, FLAG]

A, D, W, V = Intent.ASSESS, Intent.DEPENDENTS, Intent.OWNERS, Intent.LATEST_VERDICT
H, U = Intent.HELP, Intent.UNKNOWN

# fmt: off
ROUTES: list[tuple[str, Intent, str | None, str | None]] = [
    ("What happens if payments.transactions.amount is sent in cents instead of dollars?", A,
     "payments.transactions.amount", "sent in cents instead of dollars"),
    ("what breaks if amount switches from dollars to cents", A, "amount", "switches from dollars to cents"),
    ("test 5% nulls in payments.public.transactions.account_age_days", A,
     "payments.public.transactions.account_age_days", "5% nulls"),
    ("what if merchant_category 'grocery' is renamed to 'groceries'", A,
     "merchant_category", "'grocery' is renamed to 'groceries'"),
    ("simulate a +3 hour time-zone shift on hour", A, "hour", "a +3 hour time-zone shift"),
    ("assess rounding amount to whole dollars", A, "amount", "rounding to whole dollars"),
    ("what happens to fraud_detector if amount is sent in cents?", A, "amount", "sent in cents"),
    ("what if the amount in payments.public.transactions is doubled", A,
     "payments.public.transactions.amount", "doubled"),
    ("What if the table is dropped?", A, None, "the table is dropped"),
    ("what depends on payments.transactions.amount?", D, "payments.transactions.amount", None),
    ("which models use amount in payments.public.transactions?", D, "payments.public.transactions.amount", None),
    ("what is downstream of payments.public.transactions?", D, "payments.public.transactions", None),
    (f"impact of {_FIELD_URN}?", D, _FIELD_URN, None),
    ("who consumes amount?", D, "amount", None),
    ("which models use the hour field?", D, "hour", None),
    ("who owns payments.public.transactions?", W, "payments.public.transactions", None),
    ("owner of fraud_detector", W, "fraud_detector", None),
    ("Who owns `fraud_detector`?", W, "fraud_detector", None),
    (f"who owns {_TABLE}", W, _TABLE, None),
    ("what is the latest verdict for fraud_detector?", V, "fraud_detector", None),
    ("latest provenance status of merchant_risk_scorer", V, "merchant_risk_scorer", None),
    ("last impact document for fraud_detector", V, "fraud_detector", None),
    ("did fraud_detector pass?", V, "fraud_detector", None),
    ("hi", H, None, None),
    ("help", H, None, None),
    ("what can you do?", H, None, None),
    ("write me a poem", U, None, None),
    ("", U, None, None),
]
# fmt: on


@pytest.mark.parametrize(("text", "intent", "subject", "change"), ROUTES, ids=[r[0][:60] for r in ROUTES])
def test_route(text: str, intent: Intent, subject: str | None, change: str | None) -> None:
    decision = route(text)
    assert (decision.intent, decision.subject, decision.change) == (intent, subject, change)


# fmt: off
PLANS: list[tuple[FieldContext, str, str, dict[str, Any], float]] = [
    (AMOUNT, "What happens if payments.transactions.amount is sent in cents instead of dollars?",
     "scale", {"factor": 100}, 1.0),
    (AMOUNT, "what breaks if amount switches from dollars to cents", "scale", {"factor": 100}, 1.0),
    (AMOUNT, "cents to dollars", "scale", {"factor": 0.01}, 1.0),
    (AMOUNT, "amounts reported in thousands", "scale", {"factor": 0.001}, 1.0),
    (AMOUNT, "grams to kilograms", "scale", {"factor": 0.001}, 1.0),
    (AMOUNT, "seconds → milliseconds", "scale", {"factor": 1000}, 1.0),
    (AMOUNT, "as a percentage instead of a fraction (0.5 → 50%)", "scale", {"factor": 100}, 1.0),
    (AMOUNT, "multiplied by 3 on 10% of rows", "scale", {"factor": 3}, 0.1),
    (AMOUNT, "increase by 10%", "scale", {"factor": 1.1}, 1.0),
    (AGE, "test 5% nulls in payments.public.transactions.account_age_days", "null_inject", {}, 0.05),
    (AGE, "5 percent of values are missing", "null_inject", {}, 0.05),
    (AGE, "what if account_age_days is all null", "null_inject", {}, 1.0),
    (CATEGORY, "what if merchant_category 'grocery' is renamed to 'groceries'",
     "category_remap", {"mapping": {"grocery": "groceries"}}, 1.0),
    (CATEGORY, "grocery becomes groceries", "category_remap", {"mapping": {"grocery": "groceries"}}, 1.0),
    (CATEGORY, "'grocery'→'groceries', 'travel'→'trips'",
     "category_remap", {"mapping": {"grocery": "groceries", "travel": "trips"}}, 1.0),
    (CATEGORY, "a new category 'crypto' on 10% of rows", "unseen_category", {"value": "crypto"}, 0.1),
    (CATEGORY, "an unseen category", "unseen_category", {"value": "__unseen__"}, 1.0),
    (HOUR, "simulate a +3 hour time-zone shift on hour", "cyclic_shift", {"offset": 3, "period": 24}, 1.0),
    (HOUR, "hour sent in CET instead of UTC", "cyclic_shift", {"offset": 1, "period": 24}, 1.0),
    (DAY, "day_of_week shifted by one day", "cyclic_shift", {"offset": 1, "period": 7}, 1.0),
    (AMOUNT, "shifted by +5 for half of the records", "shift", {"offset": 5}, 0.5),
    (AMOUNT, "off by 10", "shift", {"offset": 10}, 1.0),
    (AMOUNT, "assess rounding amount to whole dollars", "round", {"decimals": 0}, 1.0),
    (AMOUNT, "rounded to 2 decimals", "round", {"decimals": 2}, 1.0),
    (AMOUNT, "rounded to the nearest hundred", "round", {"decimals": -2}, 1.0),
    (AMOUNT, "capped at 1,000", "clip", {"upper": 1000}, 1.0),
    (AMOUNT, "floored at 0", "clip", {"lower": 0}, 1.0),
    (AMOUNT, "clipped between 10 and 500", "clip", {"lower": 10, "upper": 500}, 1.0),
    (AMOUNT, "jitter ±5%", "noise", {"relative_std": 0.05}, 1.0),
    (AMOUNT, "refunds sent as negative amounts on 3% of rows", "sign_flip", {}, 0.03),
    (AMOUNT, "what if the join is misaligned", "shuffle", {}, 1.0),
    (AMOUNT, "all values set to 0", "constant", {"value": 0}, 1.0),
    (CATEGORY, "defaults to 'other'", "constant", {"value": "other"}, 1.0),
    (FLAG, "always true", "constant", {"value": True}, 1.0),
    (AMOUNT, "what if amounts are 10% higher", "scale", {"factor": 1.1}, 1.0),
    (AGE, "what if account_age_days is reported in weeks", "scale", {"factor": 0.142857142857}, 1.0),
    (AMOUNT, "what if amount is clipped at zero", "clip", {"lower": 0}, 1.0),
    (CATEGORY, "what if merchant_category switches from grocery to groceries",
     "category_remap", {"mapping": {"grocery": "groceries"}}, 1.0),
]
# fmt: on


@pytest.mark.parametrize(("field", "text", "op", "params", "fraction"), PLANS, ids=[p[1][:60] for p in PLANS])
def test_plan(field: FieldContext, text: str, op: str, params: dict[str, Any], fraction: float) -> None:
    proposal = plan(text, field)
    assert proposal.refusal is None
    assert (proposal.op, proposal.params, proposal.fraction, proposal.seed) == (op, params, fraction, 0)
    assert proposal.rationale.endswith(".") and field.field in proposal.rationale


def test_seed_and_share_are_read_from_the_text() -> None:
    proposal = plan("what if amount is reported in thousands for one in four rows, seed 42", AMOUNT)
    assert (proposal.op, proposal.params, proposal.fraction, proposal.seed) == ("scale", {"factor": 0.001}, 0.25, 42)
    assert proposal.rationale == "dollars → thousands multiplies amount by 0.001 on 25% of rows."


def test_rationale_reads_as_the_change() -> None:
    proposal = plan("sent in cents instead of dollars", AMOUNT)
    assert proposal.rationale == "dollars → cents multiplies every amount by 100."


STRUCTURAL_PLANS = [
    ("what if the column is renamed", "renamed", None),
    ("what if amount is renamed to amount_usd", "renamed", "amount_usd"),
    ("what if we rename the amount column to `amount_usd`", "renamed", "amount_usd"),
    ("what happens if payments.public.transactions.amount is dropped?", "dropped", None),
    ("what if amount gets deleted from the transactions table", "dropped", None),
]


@pytest.mark.parametrize(("text", "change", "renamed_to"), STRUCTURAL_PLANS, ids=[s[0] for s in STRUCTURAL_PLANS])
def test_a_dropped_or_renamed_column_is_a_structural_plan(text: str, change: str, renamed_to: str | None) -> None:
    proposal = plan(text, AMOUNT)
    assert (proposal.structural, proposal.renamed_to, proposal.op, proposal.refusal) == (change, renamed_to, None, None)
    assert "structural rule" in proposal.rationale
    assert proposal.assumptions == ([] if renamed_to or change == "dropped" else ["no new name given"])


@pytest.mark.parametrize(
    "text",
    [
        "what if 'grocery' is renamed to 'groceries'",  # a category: quoted values
        "what if 5% of rows are dropped",  # rows, not the column
        "what if the table is dropped",  # every column of it: not one field's change
        "what if amount is dropped for refunds",  # rows picked by content
    ],
)
def test_what_is_not_the_column_itself_is_never_a_structural_plan(text: str) -> None:
    proposal = plan(text, CATEGORY if "grocery" in text else AMOUNT)
    assert proposal.structural is None


# fmt: off
REFUSALS: list[tuple[FieldContext, str, str]] = [
    (AMOUNT, "what if the column is split in two", "schema change"),
    (AMOUNT, "what if the table is dropped", "schema change"),
    (AMOUNT, "if it is encrypted", "schema change"),
    (AMOUNT, "make it better", "could not map"),
    (AMOUNT, "write me a poem", "could not map"),
    (AMOUNT, "sent in euros instead of dollars", "exchange rate"),
    (CATEGORY, "multiplied by 100", "STRING field"),
    (AMOUNT, "'grocery' renamed to 'groceries'", "NUMBER field"),
    (AMOUNT, "150% nulls", "fraction must be in (0, 1]"),
    (AMOUNT, "shifted by 0", "unchanged"),
    (AMOUNT, "missing values filled with 0", "imputation"),
    (AMOUNT, "set to 'abc'", "must be a number"),
    (AMOUNT, "UTC → CET", "time-zone shift"),
    # the fourth separate table's confident-wrong plans, scored untouched (held_out_table_3.yaml)
    (AMOUNT, "amount is off by a factor of 100 in the replica", '"off by" without which way'),
    (AMOUNT, "amount will be shifted by 5 to 10 dollars", "a range of sizes"),
    (AMOUNT, "add 1-3% noise to amount", "a range of sizes"),
    (CATEGORY, "merchant_category null on 20% of US transactions", "US transactions"),
    (AMOUNT, "amount will become a full ISO timestamp string in the new events table", "could not map"),
]
# fmt: on


@pytest.mark.parametrize(("field", "text", "reason"), REFUSALS, ids=[r[1][:60] for r in REFUSALS])
def test_refusal(field: FieldContext, text: str, reason: str) -> None:
    proposal = plan(text, field)
    assert proposal.op is None and proposal.params == {}
    assert proposal.refusal is not None and reason in proposal.refusal


def test_unmappable_refusal_lists_what_can_be_tested() -> None:
    refusal = plan("what if the column is encrypted", AMOUNT).refusal or ""
    assert "value-level changes to one field" in refusal
    for kind in ("dollars → cents", "nulls", "renamed or new categories", "time-zone", "rounding", "clipping",
                 "noise", "sign flips", "shuffling", "constant", "For example"):  # fmt: skip
        assert kind in refusal


def test_type_refusal_lists_what_fits_the_field() -> None:
    refusal = plan("rounded to 2 decimals", CATEGORY).refusal or ""
    assert "merchant_category is a STRING field" in refusal and "renamed categories" in refusal


def _check(proposal: ExperimentPlan) -> None:
    assert isinstance(proposal, ExperimentPlan)
    if proposal.structural is not None:  # a dropped or renamed column: no operator, no refusal
        assert proposal.op is None and proposal.refusal is None
    elif proposal.op is None:
        assert proposal.refusal
    else:
        assert proposal.refusal is None
        parse_mutation(proposal.op, proposal.params, fraction=proposal.fraction, seed=proposal.seed)


_WORDS = (
    "what if amount is sent in cents instead of dollars to from 5% 0 -3 +3 1e9 1,000 10k half of the rows nulls "
    "missing 'grocery' 'groceries' renamed → -> becomes new category unseen shifted by hours UTC CET PST time-zone "
    "rounded to decimals nearest hundred capped at floored between and jitter ± noise negated sign flipped shuffled "
    "set to constant default true seed 7 merged into column table dropped x × times divided doubled percent fraction"
).split()


@settings(max_examples=300, deadline=None)
@given(text=st.text(), field=st.sampled_from(FIELDS))
@pytest.mark.slow
def test_never_raises_on_arbitrary_text(text: str, field: FieldContext) -> None:
    assert route(text).intent in Intent
    _check(plan(text, field))


@settings(max_examples=500, deadline=None)
@given(words=st.lists(st.sampled_from(_WORDS), max_size=12), field=st.sampled_from(FIELDS))
@pytest.mark.slow
def test_never_raises_on_change_vocabulary(words: list[str], field: FieldContext) -> None:
    text = " ".join(words)
    assert route(text).intent in Intent
    _check(plan(text, field))


def test_a_number_said_once_is_one_parameter() -> None:
    """ "noise of 2% to amount": the 2% is the noise, not 2% of rows; a share said as well is read as the share."""
    once = plan("add relative noise of 2% to amount, how bad is it", AMOUNT)
    assert (once.op, once.params, once.fraction) == ("noise", {"relative_std": 0.02}, 1.0)
    twice = plan("add 3% noise to 3% of rows of amount", AMOUNT)
    assert (twice.params, twice.fraction) == ({"relative_std": 0.03}, 0.03)
