"""The offline planner's own phrasing table: free-form questions as users type them, each with what a careful reader of
the demo catalog would do with it. Data only; `test_phrasings.py` runs the offline router and planner over it and
`benchmarks/bench_planner.py` prints the same counts per category.

Every entry is one user message with its expected intent and subject (as the user wrote it; a field named "in" a
dataset is the dotted field, as `route` has always returned it). Assessments also name the field the planner is given
(the demo fields below, with their DataHub facts) and either the plan — operator, parameters, share of rows and seed
— or REFUSE, when a careful person would ask back instead of running an experiment: the share, size or rows are
mentioned but not quantified, two readings or two operators are offered, the change is limited to rows selected by
their content (an experiment can only pick a random share), or no allowlisted operator models it. `Refuse(...)` lists
words (from the user's message) that the refusal must quote; "a|b" accepts either.

Defaults that are legitimately taken are part of the expected plan: no share given → every row (fraction 1.0), no
seed → 0, an unseen category named by nobody → any placeholder (ANY)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from agent.schemas import FieldContext, Intent

TABLE: Final = "urn:li:dataset:(urn:li:dataPlatform:postgres,payments.public.transactions,PROD)"
_FIELD_URN: Final = f"urn:li:schemaField:({TABLE},amount)"

# The demo's payments.public.transactions columns (seed/catalog.py) as gather_context reads them: DataHub type,
# native type and description; no sample values (the graph does not gather any). card_present is the BOOLEAN
# field of tests/agent/planning/test_deterministic.py: the demo table's only boolean is the label is_fraud.
_AMOUNT = FieldContext(
    dataset_urn=TABLE,
    field="amount",
    field_type="NUMBER",
    native_type="numeric(12,2)",
    description="Transaction amount in US dollars",
)
_CATEGORY = FieldContext(dataset_urn=TABLE, field="merchant_category", field_type="STRING", native_type="varchar(32)")
_COUNTRY = FieldContext(
    dataset_urn=TABLE,
    field="country",
    field_type="STRING",
    native_type="char(2)",
    description="ISO 3166-1 alpha-2 country code",
)
_HOUR = FieldContext(
    dataset_urn=TABLE, field="hour", field_type="NUMBER", native_type="smallint", description="Hour of day (0-23, UTC)"
)
_AGE = FieldContext(dataset_urn=TABLE, field="account_age_days", field_type="NUMBER", native_type="integer")
_COUNT = FieldContext(
    dataset_urn=TABLE,
    field="txn_count_1h",
    field_type="NUMBER",
    native_type="integer",
    description="Transactions on the account in the previous hour",
)
_CARD = FieldContext(dataset_urn=TABLE, field="card_present", field_type="BOOLEAN", native_type="boolean")
_ALL = (_AMOUNT, _CATEGORY, _COUNTRY, _HOUR, _AGE, _COUNT, _CARD)


def _with_others(field: FieldContext) -> FieldContext:
    """As gather_context reads it: with the names of the dataset's other fields."""
    return field.model_copy(update={"other_fields": [f.field for f in _ALL if f is not field]})


AMOUNT: Final = _with_others(_AMOUNT)
CATEGORY: Final = _with_others(_CATEGORY)
COUNTRY: Final = _with_others(_COUNTRY)
HOUR: Final = _with_others(_HOUR)
AGE: Final = _with_others(_AGE)
COUNT: Final = _with_others(_COUNT)
CARD: Final = _with_others(_CARD)
FIELDS: Final = (AMOUNT, CATEGORY, COUNTRY, HOUR, AGE, COUNT, CARD)


class _Any:
    """A parameter whose value is the planner's free choice (the name of an unseen category nobody named)."""

    def __repr__(self) -> str:
        return "ANY"


ANY: Final = _Any()


@dataclass(frozen=True)
class Plan:
    op: str
    params: Mapping[str, object] = field(default_factory=dict)
    fraction: float = 1.0
    seed: int = 0


@dataclass(frozen=True)
class Refuse:
    mentions: tuple[str, ...] = ()  # each must occur in the refusal (case-insensitive); "a|b" accepts either


REFUSE: Final = Refuse()


@dataclass(frozen=True)
class Phrasing:
    text: str
    category: str
    intent: Intent
    subject: str | None
    field: FieldContext | None = None  # assessments: the field the planner is given
    expect: Plan | Refuse | None = None  # assessments: the plan, or REFUSE
    note: str = ""  # why, where the reading is not obvious

    @property
    def answerable(self) -> bool:
        """A careful person would plan or answer this (rather than refuse or ask back)."""
        if self.intent is Intent.ASSESS:
            return isinstance(self.expect, Plan)
        return self.intent is not Intent.UNKNOWN


def P(op: str, fraction: float = 1.0, seed: int = 0, **params: object) -> Plan:
    return Plan(op, params, fraction, seed)


def R(*mentions: str) -> Refuse:
    return Refuse(mentions)


def A(
    text: str, subject: str | None, fc: FieldContext, expect: Plan | Refuse, category: str, note: str = ""
) -> Phrasing:
    return Phrasing(text, category, Intent.ASSESS, subject, fc, expect, note)


def Q(text: str, intent: Intent, subject: str | None, category: str, note: str = "") -> Phrasing:
    return Phrasing(text, category, intent, subject, note=note)


D, W, V, H, U = Intent.DEPENDENTS, Intent.OWNERS, Intent.LATEST_VERDICT, Intent.HELP, Intent.UNKNOWN
PTP: Final = "payments.public.transactions"
TOPIC: Final = "payments.transactions.events"
FEAST: Final = "fraud_features.transaction_features"


def _scale(factor: float, fraction: float = 1.0) -> Plan:
    return P("scale", fraction, factor=factor)


def _nulls(fraction: float = 1.0, seed: int = 0) -> Plan:
    return P("null_inject", fraction, seed)


def _clip(lower: float | None = None, upper: float | None = None) -> Plan:
    return Plan("clip", {k: v for k, v in (("lower", lower), ("upper", upper)) if v is not None})


def _tz(offset: float, fraction: float = 1.0) -> Plan:
    return P("cyclic_shift", fraction, offset=offset, period=24)


def _remap(fraction: float = 1.0, **mapping: str) -> Plan:
    return P("category_remap", fraction, mapping=mapping)


# fmt: off
PHRASINGS: Final[tuple[Phrasing, ...]] = (
    # --- units: the field's own unit (dollars, days, UTC hours) against the unit the text names --------------------
    A("What happens if payments.public.transactions.amount arrives in cents instead of dollars?",
      f"{PTP}.amount", AMOUNT, _scale(100), "units"),
    A("what if amount starts being sent in cents", "amount", AMOUNT, _scale(100), "units",
      "the field is in US dollars (its description), so cents is ×100"),
    A("what breaks if amount gets reported in thousands of dollars", "amount", AMOUNT, _scale(0.001), "units"),
    A("is it safe to ship amount in millions instead of dollars?", "amount", AMOUNT, _scale(1e-6), "units"),
    A("what if amount is in thousands (so 1500 becomes 1.5)", "amount", AMOUNT, _scale(0.001), "units"),
    A("what if amount came through as pennies", "amount", AMOUNT, _scale(100), "units", "pennies are cents"),
    A("what if amount were in USD cents", "amount", AMOUNT, _scale(100), "units"),
    A("what if amount arrives as an integer number of cents", "amount", AMOUNT, _scale(100), "units"),
    A("what if the source system switches amount from dollars to cents", "amount", AMOUNT, _scale(100), "units"),
    A("what if amount is sent in thousands of USD instead of USD", "amount", AMOUNT, _scale(0.001), "units"),
    A("what if amount is sent in dollars instead of cents", "amount", AMOUNT, _scale(0.01), "units",
      "the user's own 'from' unit wins over the description: cents → dollars is ×0.01"),
    A("what if account_age_days is sent in weeks", "account_age_days", AGE, _scale(1 / 7), "units"),
    A("what if account_age_days comes in hours instead of days", "account_age_days", AGE, _scale(24), "units"),
    A("what if account_age_days is reported in years", "account_age_days", AGE, _scale(1 / 365.25), "units",
      "1/365 or 1/365.25: both within the table's tolerance"),
    A("what if account_age_days is given in seconds", "account_age_days", AGE, _scale(86400), "units"),
    A("what if account_age_days is measured in minutes rather than days", "account_age_days", AGE, _scale(1440),
      "units"),
    A("what if hour is sent as minutes since midnight", "hour", HOUR, _scale(60), "units",
      "hour of day 5 becomes 300"),
    A("what if hour is reported in seconds since midnight", "hour", HOUR, _scale(3600), "units"),
    A("what if account_age_days loses a week", "account_age_days", AGE, P("shift", offset=-7), "units",
      "a week of a field counted in days is 7"),
    A("what if account_age_days is 30 days higher", "account_age_days", AGE, P("shift", offset=30), "units"),

    # --- scale ----------------------------------------------------------------------------------------------------
    A("what if amount is 10x too big", "amount", AMOUNT, _scale(10), "scale"),
    A("what if amount is inflated by 3%", "amount", AMOUNT, _scale(1.03), "scale"),
    A("what if amount drops by 20 percent", "amount", AMOUNT, _scale(0.8), "scale"),
    A("what if amount is tripled", "amount", AMOUNT, _scale(3), "scale"),
    A("what if amount halves", "amount", AMOUNT, _scale(0.5), "scale", "halving the values, not half the rows"),
    A("what if amount is scaled by a factor of 1,000", "amount", AMOUNT, _scale(1000), "scale"),
    A("what if amount is scaled by 0.9", "amount", AMOUNT, _scale(0.9), "scale"),
    A("what if every amount is 25% larger", "amount", AMOUNT, _scale(1.25), "scale"),
    A("what if amount is divided by 100 by mistake", "amount", AMOUNT, _scale(0.01), "scale"),
    A("what if txn_count_1h is 10% higher", "txn_count_1h", COUNT, _scale(1.1), "scale"),
    A("what if txn_count_1h is doubled", "txn_count_1h", COUNT, _scale(2), "scale"),
    A("what if account_age_days doubles", "account_age_days", AGE, _scale(2), "scale"),
    A("what if amount goes up 50%", "amount", AMOUNT, _scale(1.5), "scale"),
    A("what if amount is cut in half", "amount", AMOUNT, _scale(0.5), "scale"),
    A("what if amount is 3 times what it should be", "amount", AMOUNT, _scale(3), "scale"),
    A("what if amount shrinks to a tenth of its value", "amount", AMOUNT, _scale(0.1), "scale",
      "'a tenth of its value' is the size, not a tenth of the rows"),

    # --- shift (absolute offsets) ---------------------------------------------------------------------------------
    A("what if a $5 fee gets added to every amount", "amount", AMOUNT, P("shift", offset=5), "shift"),
    A("what if amount starts including a 2 dollar surcharge", "amount", AMOUNT, P("shift", offset=2), "shift"),
    A("what if amount is reduced by $1.50", "amount", AMOUNT, P("shift", offset=-1.5), "shift"),
    A("what if amount is 3 dollars lower", "amount", AMOUNT, P("shift", offset=-3), "shift"),
    A("what if account_age_days starts counting at 1 instead of 0", "account_age_days", AGE, P("shift", offset=1),
      "shift"),
    A("what if txn_count_1h starts including the current transaction, so it is one higher", "txn_count_1h", COUNT,
      P("shift", offset=1), "shift"),
    A("what if hour uses 1-24 instead of 0-23", "hour", HOUR, P("shift", offset=1), "shift",
      "hour 23 becomes 24, not 0: a plain shift, not a cyclic one"),

    # --- clip (a bound that values past it are set to) -------------------------------------------------------------
    A("what if negative values of amount get clipped to zero", "amount", AMOUNT, _clip(lower=0), "field-inside"),
    A("what if amount can never be negative anymore, negatives become 0", "amount", AMOUNT, _clip(lower=0), "clip"),
    A("what if values of amount above $5,000 are set to 5000", "amount", AMOUNT, _clip(upper=5000), "field-inside"),
    A("what if amount maxes out at 10k", "amount", AMOUNT, _clip(upper=10000), "clip"),
    A("what if txn_count_1h saturates at 50", "txn_count_1h", COUNT, _clip(upper=50), "clip"),
    A("what if account_age_days can't go below 1", "account_age_days", AGE, _clip(lower=1), "clip"),
    A("what if account_age_days is capped at 3650 (ten years)", "account_age_days", AGE, _clip(upper=3650), "clip",
      "'ten years' explains the bound; it is not a unit change"),
    A("what if amount is clamped to the range 1 to 10,000", "amount", AMOUNT, _clip(1, 10000), "clip"),
    A("what if txn_count_1h is limited to at most 20", "txn_count_1h", COUNT, _clip(upper=20), "clip"),
    A("what if account_age_days has a floor of 7", "account_age_days", AGE, _clip(lower=7), "clip"),
    A("what if the negative values of amount are set to zero", "amount", AMOUNT, _clip(lower=0), "field-inside"),
    A("what if all values of txn_count_1h above 30 become 30", "txn_count_1h", COUNT, _clip(upper=30),
      "field-inside"),
    A("what if txn_count_1h is capped at 10", "txn_count_1h", COUNT, _clip(upper=10), "clip"),
    A("can we safely cap txn_count_1h at 100?", "txn_count_1h", COUNT, _clip(upper=100), "clip"),
    A("what happens when negative values of amount get zeroed out?", "amount", AMOUNT, _clip(lower=0),
      "field-inside"),
    A("if amount values above $2,000 are set to 2000, do the models degrade?", "amount", AMOUNT, _clip(upper=2000),
      "field-inside"),

    # --- round ----------------------------------------------------------------------------------------------------
    A("what if amount loses its cents (rounded to the dollar)", "amount", AMOUNT, P("round", decimals=0), "round",
      "'cents' here is what is rounded away, not a unit change"),
    A("what if amount is rounded to one decimal place", "amount", AMOUNT, P("round", decimals=1), "round"),
    A("what if amount gets rounded to the nearest 10 dollars", "amount", AMOUNT, P("round", decimals=-1), "round"),
    A("what if amount is rounded to the nearest thousand", "amount", AMOUNT, P("round", decimals=-3), "round"),
    A("what if amount is rounded to 2 dp", "amount", AMOUNT, P("round", decimals=2), "round"),
    A("what if account_age_days is rounded to the nearest hundred days", "account_age_days", AGE,
      P("round", decimals=-2), "round"),
    A("what if amount is stored with no decimal places", "amount", AMOUNT, P("round", decimals=0), "round"),
    A("does review_time_estimator break if amount gets rounded to the nearest dollar?", "amount", AMOUNT,
      P("round", decimals=0), "field-inside"),

    # --- noise (relative) -----------------------------------------------------------------------------------------
    A("what if amount gets about 10% jitter", "amount", AMOUNT, P("noise", relative_std=0.1), "noise"),
    A("what if amount picks up random noise of ±2%", "amount", AMOUNT, P("noise", relative_std=0.02), "noise"),
    A("what if amount is measured with a random error of 1 percent", "amount", AMOUNT,
      P("noise", relative_std=0.01), "noise"),
    A("what if amount gets Gaussian noise with a relative std of 0.05", "amount", AMOUNT,
      P("noise", relative_std=0.05), "noise"),
    A("what if noise of 5% is added to amount on 20% of rows", "amount", AMOUNT, P("noise", 0.2, relative_std=0.05),
      "noise"),
    A("what if amount is noisy by about a tenth", "amount", AMOUNT, P("noise", relative_std=0.1), "noise",
      "'a tenth' is the size of the noise, not a share of rows"),
    A("what if txn_count_1h gets 20 percent noise", "txn_count_1h", COUNT, P("noise", relative_std=0.2), "noise"),

    # --- nulls ----------------------------------------------------------------------------------------------------
    A("what if amount is null for 5% of rows", "amount", AMOUNT, _nulls(0.05), "nulls"),
    A("what if country is missing entirely", "country", COUNTRY, _nulls(1.0), "nulls"),
    A("what if amount becomes NULL in 0.5% of transactions", "amount", AMOUNT, _nulls(0.005), "nulls"),
    A("what if txn_count_1h stops being populated", "txn_count_1h", COUNT, _nulls(1.0), "nulls"),
    A("what if amount has nulls in 5% of rows, seed 7", "amount", AMOUNT, _nulls(0.05, seed=7), "nulls"),
    A("what if the merchant_category field is null in one in four rows", "merchant_category", CATEGORY, _nulls(0.25),
      "nulls"),
    A("what if 5 % of hour values are missing", "hour", HOUR, _nulls(0.05), "nulls"),
    A("would fraud_detector degrade if merchant_category had 5% nulls?", "merchant_category", CATEGORY,
      _nulls(0.05), "field-inside"),
    A("what if country has no value at all for 12% of transactions", "country", COUNTRY, _nulls(0.12), "nulls"),
    A("what if amount has nulls in 100% of rows", "amount", AMOUNT, _nulls(1.0), "nulls"),
    A("what if merchant_category arrives as an empty string '' on 5% of rows", "merchant_category", CATEGORY,
      P("constant", 0.05, value=""), "nulls", "an explicit empty string is a value, not a null"),

    # --- categories: renamed ----------------------------------------------------------------------------------------
    A("what if merchant_category writes 'restaurant' instead of 'restaurants'", "merchant_category", CATEGORY,
      _remap(restaurants="restaurant"), "remap", "the new value comes first"),
    A("what if 'grocery' becomes 'supermarket' in merchant_category", "merchant_category", CATEGORY,
      _remap(grocery="supermarket"), "remap"),
    A("what if merchant_category renames fuel to gas", "merchant_category", CATEGORY, _remap(fuel="gas"), "remap"),
    A("what if the merchant_category value digital_goods is renamed digital", "merchant_category", CATEGORY,
      _remap(digital_goods="digital"), "remap", "digital_goods is a value, not the subject"),
    A("what if travel and jewelry are merged into 'luxury' in merchant_category", "merchant_category", CATEGORY,
      _remap(travel="luxury", jewelry="luxury"), "remap"),
    A("what if merchant_category sends 'Electronics' instead of 'electronics'", "merchant_category", CATEGORY,
      _remap(electronics="Electronics"), "remap"),
    A("what if country GB is sent as UK", "country", COUNTRY, _remap(GB="UK"), "remap"),
    A("what if the country 'DE' is written as 'GER'", "country", COUNTRY, _remap(DE="GER"), "remap"),
    A("what if merchant_category 'gaming' is renamed to 'games' on 10% of rows", "merchant_category", CATEGORY,
      _remap(0.1, gaming="games"), "remap"),
    A("what if merchant_category switches from 'restaurants' to 'dining' and from 'fuel' to 'gas'",
      "merchant_category", CATEGORY, _remap(restaurants="dining", fuel="gas"), "remap"),
    A("what if grocery and restaurants are both renamed to food in merchant_category", "merchant_category", CATEGORY,
      _remap(grocery="food", restaurants="food"), "remap"),
    A("what if merchant_category now says jewellery instead of jewelry", "merchant_category", CATEGORY,
      _remap(jewelry="jewellery"), "remap"),
    A("what if country sends 'USA' rather than 'US'", "country", COUNTRY, _remap(US="USA"), "remap"),

    # --- categories: unseen ---------------------------------------------------------------------------------------
    A("what if a new merchant_category 'crypto' shows up", "merchant_category", CATEGORY,
      P("unseen_category", value="crypto"), "unseen"),
    A("what if 'bnpl' shows up in payments.public.transactions.merchant_category on 5% of rows",
      f"{PTP}.merchant_category", CATEGORY, P("unseen_category", 0.05, value="bnpl"), "field-inside"),
    A("what if merchant_category gets a brand-new value nobody has seen", "merchant_category", CATEGORY,
      P("unseen_category", value=ANY), "unseen"),
    A("what if country starts containing 'XK', which the models never saw", "country", COUNTRY,
      P("unseen_category", value="XK"), "unseen"),
    A("what if an unseen category appears in merchant_category for one in ten rows", "merchant_category", CATEGORY,
      P("unseen_category", 0.1, value=ANY), "unseen"),
    A("what if merchant_category has a new value pet_supplies", "merchant_category", CATEGORY,
      P("unseen_category", value="pet_supplies"), "unseen", "pet_supplies is the value, not the subject"),
    A("what if country gets a new code 'ZZ' in 1% of transactions", "country", COUNTRY,
      P("unseen_category", 0.01, value="ZZ"), "unseen"),

    # --- constant -------------------------------------------------------------------------------------------------
    A("what if amount is always 0", "amount", AMOUNT, P("constant", value=0), "constant"),
    A("what if every amount is set to 1", "amount", AMOUNT, P("constant", value=1), "constant"),
    A("what if merchant_category always says 'other'", "merchant_category", CATEGORY, P("constant", value="other"),
      "constant"),
    A("what if country is hard-coded to 'US'", "country", COUNTRY, P("constant", value="US"), "constant"),
    A("what if hour is always zero because the timestamp lost its time part", "hour", HOUR, P("constant", value=0),
      "constant"),
    A("what if txn_count_1h is hardcoded to 0", "txn_count_1h", COUNT, P("constant", value=0), "constant"),
    A("what if account_age_days is set to -1 for every row", "account_age_days", AGE, P("constant", value=-1),
      "constant"),

    # --- sign and shuffle -------------------------------------------------------------------------------------------
    A("what if amount comes in as negative numbers", "amount", AMOUNT, P("sign_flip"), "sign"),
    A("what if the sign of amount flips on 2% of rows", "amount", AMOUNT, P("sign_flip", 0.02), "sign"),
    A("what if amount is negated", "amount", AMOUNT, P("sign_flip"), "sign"),
    A("what if amount is sent with the opposite sign", "amount", AMOUNT, P("sign_flip"), "sign"),
    A("what if amount gets shuffled across rows", "amount", AMOUNT, P("shuffle"), "shuffle"),
    A("what if a bad join attaches amount values to the wrong transactions", "amount", AMOUNT, P("shuffle"),
      "shuffle"),
    A("what if merchant_category values get scrambled between rows on 10% of rows", "merchant_category", CATEGORY,
      P("shuffle", 0.1), "shuffle"),
    A("what if the hour column is randomly permuted", "hour", HOUR, P("shuffle"), "shuffle",
      "'randomly' says how the values move, not which rows"),

    # --- time zones on hour (UTC hour of day: a cyclic shift modulo 24) -------------------------------------------
    A("what if hour switches from UTC to CET", "hour", HOUR, _tz(1), "timezone"),
    A("what if hour comes in Pacific time (UTC-8)", "hour", HOUR, _tz(-8), "timezone"),
    A("what if hour gets reported in JST rather than UTC", "hour", HOUR, _tz(9), "timezone"),
    A("what if hour is shifted by 3 hours", "hour", HOUR, _tz(3), "timezone", "hour of day wraps at 24"),
    A("what if hour moves two hours back", "hour", HOUR, _tz(-2), "timezone"),
    A("what if hour is in local time (UTC-5) rather than UTC", "hour", HOUR, _tz(-5), "timezone"),
    A("what if hour is sent in EST", "hour", HOUR, _tz(-5), "timezone"),
    A("what if hour moves to CEST", "hour", HOUR, _tz(2), "timezone"),
    A("what if hour is sent in UTC+2 instead of UTC", "hour", HOUR, _tz(2), "timezone"),
    A("what happens to fraud_detector if payments.public.transactions.hour is in CET", f"{PTP}.hour", HOUR, _tz(1),
      "field-inside"),
    A("is it safe to start sending hour in UTC+1?", "hour", HOUR, _tz(1), "timezone"),
    A("Could you check what happens to the models if the hour field shifts to UTC+2?", "hour", HOUR, _tz(2),
      "timezone"),

    # --- boolean --------------------------------------------------------------------------------------------------
    A("what if card_present is always false", "card_present", CARD, P("constant", value=False), "boolean"),
    A("what if card_present is stuck at true for 20% of rows", "card_present", CARD, P("constant", 0.2, value=True),
      "boolean"),
    A("what if card_present always reads true", "card_present", CARD, P("constant", value=True), "boolean"),
    A("what if card_present is unknown (null) on 30% of rows", "card_present", CARD, _nulls(0.3), "boolean"),
    A("what if card_present becomes null for half the transactions", "card_present", CARD, _nulls(0.5), "boolean",
      "'half the transactions' is a share, not a subset"),
    A("what if card_present is shuffled", "card_present", CARD, P("shuffle"), "boolean"),
    A("what if card_present is misaligned with the rows", "card_present", CARD, P("shuffle"), "boolean"),

    # --- shares of rows: fractions, ratios, words -------------------------------------------------------------------
    A("what if amount is halved for half of the rows", "amount", AMOUNT, _scale(0.5, 0.5), "share"),
    A("what if amount is doubled on 5% of rows", "amount", AMOUNT, _scale(2, 0.05), "share"),
    A("what if 10 dollars is added to amount for 10% of rows", "amount", AMOUNT, P("shift", 0.1, offset=10), "share"),
    A("what if half the rows of account_age_days come in null", "account_age_days", AGE, _nulls(0.5), "share"),
    A("what if hour is NaN for a third of the rows", "hour", HOUR, _nulls(1 / 3), "share"),
    A("what if 2 out of 5 rows have no merchant_category", "merchant_category", CATEGORY, _nulls(0.4), "share"),
    A("what if hour has nulls in every other row", "hour", HOUR, _nulls(0.5), "share"),
    A("what if account_age_days is null on 3 in 1000 rows", "account_age_days", AGE, _nulls(0.003), "share"),
    A("what if 150 in 1000 rows of amount are null", "amount", AMOUNT, _nulls(0.15), "share"),
    A("what if amount is in cents on three quarters of the rows", "amount", AMOUNT, _scale(100, 0.75), "share"),
    A("what if account_age_days is null in two-thirds of records", "account_age_days", AGE, _nulls(2 / 3), "share"),
    A("what if merchant_category is null for 7.5% of rows", "merchant_category", CATEGORY, _nulls(0.075), "share"),
    A("what if amount is in thousands for 1 row in 50", "amount", AMOUNT, _scale(0.001, 0.02), "share"),
    A("what if hour is null for one row out of every hundred", "hour", HOUR, _nulls(0.01), "share"),
    A("what if amount is multiplied by 100 in 1% of cases", "amount", AMOUNT, _scale(100, 0.01), "share"),
    A("what if card_present is null on a fifth of rows", "card_present", CARD, _nulls(0.2), "share"),
    A("what if 50 percent of amount values are doubled", "amount", AMOUNT, _scale(2, 0.5), "share"),
    A("what if amount is tripled on every tenth row", "amount", AMOUNT, _scale(3, 0.1), "share"),
    A("what if amount is in cents rather than dollars for 1/2 of rows", "amount", AMOUNT, _scale(100, 0.5), "share"),
    A("what if cents instead of dollars show up in one in twenty transactions", None, AMOUNT, _scale(100, 0.05),
      "share", "no field named: the subject is not 'up'"),
    A("test amount sent in cents for a quarter of the records", "amount", AMOUNT, _scale(100, 0.25), "share"),
    A("what if half of amount is in cents", "amount", AMOUNT, _scale(100, 0.5), "share"),
    A("what if amount is null in 1 out of 3 records", "amount", AMOUNT, _nulls(1 / 3), "share"),
    A("what if the sign of amount flips for 1/8 of transactions", "amount", AMOUNT, P("sign_flip", 0.125), "share"),
    A("what if hour is in PST for a quarter of the rows", "hour", HOUR, _tz(-8, 0.25), "share"),
    A("what if one in twenty values of hour is shifted by 2 hours", "hour", HOUR, _tz(2, 0.05), "share"),

    # --- numbers in words -----------------------------------------------------------------------------------------
    A("what if amount ends up multiplied by a hundred", "amount", AMOUNT, _scale(100), "numwords"),
    A("what if amount is multiplied by ten thousand", "amount", AMOUNT, _scale(10000), "numwords"),
    A("what if amount has ten dollars subtracted", "amount", AMOUNT, P("shift", offset=-10), "numwords"),
    A("what if amount is shifted up by twenty-five dollars", "amount", AMOUNT, P("shift", offset=25), "numwords"),
    A("what if account_age_days drops by fifteen", "account_age_days", AGE, P("shift", offset=-15), "numwords"),
    A("what if amount is capped at a thousand dollars", "amount", AMOUNT, _clip(upper=1000), "numwords"),
    A("what if amount is capped at two hundred and fifty", "amount", AMOUNT, _clip(upper=250), "numwords"),
    A("what if merchant_category goes empty for about ten percent of the records", "merchant_category", CATEGORY,
      _nulls(0.1), "numwords"),
    A("what if country is missing in twenty percent of the transactions", "country", COUNTRY, _nulls(0.2),
      "numwords"),
    A("what if hour is shifted by five hours on a tenth of the rows", "hour", HOUR, _tz(5, 0.1), "numwords"),
    A("what if amount is multiplied by one thousand", "amount", AMOUNT, _scale(1000), "numwords"),
    A("what if amount is null for one in a hundred rows", "amount", AMOUNT, _nulls(0.01), "numwords"),

    # --- typos ----------------------------------------------------------------------------------------------------
    A("what if ammount is sent in cents", "ammount", AMOUNT, _scale(100), "typo", "the subject as written"),
    A("what if amount is multipled by 100", "amount", AMOUNT, _scale(100), "typo"),
    A("what if amount has 5% nul values", "amount", AMOUNT, _nulls(0.05), "typo"),
    A("what if amount is sent in cnets instead of dollars", "amount", AMOUNT, _scale(100), "typo"),
    A("what if amount is rounded to 2 decimels", "amount", AMOUNT, P("round", decimals=2), "typo"),
    A("what if merchant_category gets shufled", "merchant_category", CATEGORY, P("shuffle"), "typo"),
    A("what if amount is multiplied by a milion", "amount", AMOUNT, _scale(1e6), "typo"),
    A("what if amount is capped at 1 milion", "amount", AMOUNT, _clip(upper=1e6), "typo"),
    A("what if amount is in thousnads", "amount", AMOUNT, _scale(0.001), "typo"),
    A("what if account_age_days has nulls in 10 precent of rows", "account_age_days", AGE, _nulls(0.1), "typo"),
    A("what if amount is dobled", "amount", AMOUNT, _scale(2), "typo"),
    A("wat if amount is sent in cents", "amount", AMOUNT, _scale(100), "typo"),
    A("what if amount is sent in cents insted of dollars", "amount", AMOUNT, _scale(100), "typo"),
    A("what if hour is in UTC+1 instaed of UTC", "hour", HOUR, _tz(1), "typo"),
    A("what if account_age_days has nul values in 1 of every 20 rows", "account_age_days", AGE, _nulls(0.05), "typo"),
    A("what if amount gets rouned to 0 decimals", "amount", AMOUNT, P("round", decimals=0), "typo"),
    A("what if merchant_category gets renmed from 'fuel' to 'petrol'", "merchant_category", CATEGORY,
      _remap(fuel="petrol"), "typo"),
    A("what if hour is shfited by 2 hours", "hour", HOUR, _tz(2), "typo"),

    # --- terse and conversational ----------------------------------------------------------------------------------
    A("amount in cents", "amount", AMOUNT, _scale(100), "terse"),
    A("5% nulls on country", "country", COUNTRY, _nulls(0.05), "terse"),
    A("Simulate: account_age_days null in 1/4 of rows", "account_age_days", AGE, _nulls(0.25), "terse"),
    A("try amount * 100", "amount", AMOUNT, _scale(100), "terse"),
    A("evaluate amount / 1000", "amount", AMOUNT, _scale(0.001), "terse"),
    A("test amount + 5", "amount", AMOUNT, P("shift", offset=5), "terse"),
    A("test amount ×2 on half the rows", "amount", AMOUNT, _scale(2, 0.5), "terse"),
    A("assess payments.public.transactions.amount x100", f"{PTP}.amount", AMOUNT, _scale(100), "terse"),
    A("merchant_category: 'grocery' → 'groceries'", "merchant_category", CATEGORY, _remap(grocery="groceries"),
      "terse"),
    A("hour in CET", "hour", HOUR, _tz(1), "terse"),
    A("with amount in cents instead of dollars, does fraud_detector still work?", "amount", AMOUNT, _scale(100),
      "conversational", "the subject is the field that changes, not the model"),
    A("we're planning to send account_age_days in weeks next sprint — impact?", "account_age_days", AGE,
      _scale(1 / 7), "conversational", "a change is described: an assessment, not a lineage question"),
    A("impact of amount being sent in cents", "amount", AMOUNT, _scale(100), "conversational",
      "a change is described: an assessment, not a lineage question"),
    A("Heads up: the payments team will start sending amount in cents. Which models would be affected?", "amount",
      AMOUNT, _scale(100), "conversational", "the change is named, so the answer is the assessment"),
    A("I'd like to know whether amount arriving in cents would hurt anything", "amount", AMOUNT, _scale(100),
      "conversational"),

    # --- the field named inside a dataset ---------------------------------------------------------------------------
    A("what if the values of amount in payments.public.transactions are divided by 1000", f"{PTP}.amount", AMOUNT,
      _scale(0.001), "field-inside"),
    A("what would break if the account_age_days field of payments.public.transactions is in weeks",
      f"{PTP}.account_age_days", AGE, _scale(1 / 7), "field-inside"),
    A("what if the kafka topic payments.transactions.events sends amount in cents", f"{TOPIC}.amount", AMOUNT,
      _scale(100), "field-inside", "the field of the topic the sentence names"),

    # === refusals: what a careful person asks back about ============================================================
    # --- two readings or two operators ---------------------------------------------------------------------------
    A("what if amount could come in cents, or possibly in thousands — we don't know yet", "amount", AMOUNT,
      R("cents", "thousands"), "ambiguous"),
    A("what if amount is doubled or tripled", "amount", AMOUNT, REFUSE, "ambiguous"),
    A("what if amount is either rounded or capped, we haven't decided", "amount", AMOUNT, REFUSE, "ambiguous"),
    A("what if amount gets 5% nulls and is also sent in cents", "amount", AMOUNT, REFUSE, "ambiguous",
      "two operators"),
    A("what if hour is shifted by 1 or 2 hours", "hour", HOUR, REFUSE, "ambiguous"),
    A("what if amount is in cents and capped at 100", "amount", AMOUNT, REFUSE, "ambiguous", "two operators"),
    A("what if amount is capped at 500 and rounded to whole dollars", "amount", AMOUNT, REFUSE, "ambiguous",
      "two operators"),
    A("what if account_age_days is in weeks or months, not sure which", "account_age_days", AGE, REFUSE,
      "ambiguous"),
    A("what if amount gets ±5% noise, or maybe 10%", "amount", AMOUNT, REFUSE, "ambiguous"),
    A("what if hour is in local time rather than UTC", "hour", HOUR, R("local"), "ambiguous",
      "which time zone? the offset is not given"),
    A("what if hour switches from UTC to New York time", "hour", HOUR, REFUSE, "ambiguous",
      "-5 or -4 hours depending on daylight saving time"),
    A("what if hour is in UTC+3 or UTC+4 depending on DST", "hour", HOUR, REFUSE, "ambiguous"),
    A("what if amount is scaled somehow", "amount", AMOUNT, REFUSE, "ambiguous", "no factor given"),
    A("what if amount changes", "amount", AMOUNT, REFUSE, "ambiguous", "no change described"),
    A("what if amount gets weird", "amount", AMOUNT, REFUSE, "ambiguous"),
    A("what if merchant_category 'travel' gets renamed", "merchant_category", CATEGORY, REFUSE, "ambiguous",
      "renamed to what?"),

    # --- a share mentioned but not quantified --------------------------------------------------------------------
    A("what if some rows of amount are null", "amount", AMOUNT, R("some"), "vague-share"),
    A("what if amount is occasionally missing", "amount", AMOUNT, R("occasionally"), "vague-share"),
    A("what if a lot of country values are blank", "country", COUNTRY, R("a lot"), "vague-share"),
    A("what if a few rows of amount are in cents", "amount", AMOUNT, R("few"), "vague-share"),
    A("what if most of merchant_category is null", "merchant_category", CATEGORY, R("most"), "vague-share"),
    A("what if amount is sometimes sent in cents", "amount", AMOUNT, R("sometimes"), "vague-share"),
    A("what if a portion of hour values are shifted by 2 hours", "hour", HOUR, R("portion"), "vague-share"),
    A("what if a big chunk of country is missing", "country", COUNTRY, R("chunk"), "vague-share"),
    A("what if amount is in cents for a handful of rows", "amount", AMOUNT, R("handful"), "vague-share"),
    A("what if many values of account_age_days are null", "account_age_days", AGE, R("many"), "vague-share"),
    A("what if amount is partially in cents", "amount", AMOUNT, R("partial"), "vague-share"),
    A("what if 10,000 rows of amount are null", "amount", AMOUNT, R("10,000|10000"), "vague-share",
      "a count of rows, not a share: the evaluation data's size is not known here"),

    # --- limited to rows chosen by what they hold -----------------------------------------------------------------
    A("what if amount is sent in cents — but only for transactions from Brazil", "amount", AMOUNT, R("Brazil"),
      "subset"),
    A("what if account_age_days is null for accounts older than 5 years", "account_age_days", AGE, R("older"),
      "subset"),
    A("what if merchant_category becomes 'other' where country is NG", "merchant_category", CATEGORY, R("NG"),
      "subset"),
    A("what if amount is doubled on Black Friday", "amount", AMOUNT, R("Black Friday"), "subset"),
    A("what if hour shifts by one hour during summer", "hour", HOUR, R("summer"), "subset"),
    A("what if amount is in cents for card-not-present transactions", "amount", AMOUNT, R("card-not-present"),
      "subset"),
    A("what if amount for online orders is reported in thousands", "amount", AMOUNT, R("online"), "subset"),
    A("what if country is null for all transactions in the EU", "country", COUNTRY, R("EU"), "subset"),
    A("what if values of amount under $1 are rounded to 0", "amount", AMOUNT, REFUSE, "subset"),
    A("what if merchant_category is shuffled among grocery transactions only", "merchant_category", CATEGORY,
      R("grocery"), "subset"),
    A("what if amount has a $5 fee added only on international transactions", "amount", AMOUNT, R("international"),
      "subset"),
    A("what if the amount of refunds is sent as negative numbers", "amount", AMOUNT, R("refunds"), "subset"),
    A("what if hour is in CET for European transactions", "hour", HOUR, R("European"), "subset"),
    A("what if account_age_days is null for new accounts", "account_age_days", AGE, R("new accounts"), "subset"),
    A("what if amount is null on weekends", "amount", AMOUNT, R("weekend"), "subset"),
    A("what if hour is shifted by 3 hours, but only at night", "hour", HOUR, R("night"), "subset"),
    A("what if amount becomes 0 for transactions from Nigeria", "amount", AMOUNT, R("Nigeria"), "subset"),
    A("what if 'grocery' is renamed to 'groceries' only for merchants in Brazil", "merchant_category", CATEGORY,
      R("Brazil"), "subset"),
    A("what if values of amount above 2000 are set to 0", "amount", AMOUNT, REFUSE, "subset",
      "not a clip: the rows past the bound get another value"),
    A("what if values of amount above 2000 are doubled", "amount", AMOUNT, R("2000|2,000"), "subset"),
    A("what if amount over 1000 becomes null", "amount", AMOUNT, REFUSE, "subset"),
    A("what if values of amount below 1 are dropped", "amount", AMOUNT, REFUSE, "subset"),
    A("what if negative values of amount are replaced by their absolute value", "amount", AMOUNT, REFUSE, "subset"),
    A("what if the first 1000 rows of amount are null", "amount", AMOUNT, REFUSE, "subset",
      "rows picked by position, not at random"),

    # --- no allowlisted operator models it --------------------------------------------------------------------------
    A("what if nulls in account_age_days get filled with the mean", "account_age_days", AGE, REFUSE, "unsupported",
      "imputation changes only the rows already missing"),
    A("what if missing values in amount are replaced with 0", "amount", AMOUNT, REFUSE, "unsupported",
      "imputation"),
    A("what if missing values in merchant_category are replaced with 'unknown'", "merchant_category", CATEGORY,
      REFUSE, "unsupported", "imputation"),
    A("what if amount is rounded to the nearest $5", "amount", AMOUNT, REFUSE, "unsupported",
      "round takes decimal places; 5 is not a power of ten"),
    A("what if amount is rounded up to the next dollar", "amount", AMOUNT, REFUSE, "unsupported",
      "a ceiling, not a rounding"),
    A("what if account_age_days gets jittered by ±3 days", "account_age_days", AGE, REFUSE, "unsupported",
      "noise is relative to each value; an absolute ±3 days is not"),
    A("what if merchant_category labels are translated to French", "merchant_category", CATEGORY, REFUSE,
      "unsupported", "the mapping is not given"),
    A("what if all merchant_category values are upper-cased", "merchant_category", CATEGORY, REFUSE, "unsupported",
      "the planner is not given the categories, so it cannot write the mapping"),
    A("what if card_present is inverted", "card_present", CARD, REFUSE, "unsupported",
      "no operator negates a boolean"),
    A("what if the amount column is dropped", "amount", AMOUNT, P("column_dropped"), "schema",
      "judged by the policy's structural rule, as `check` judges it"),
    A("what if amount gets renamed to amount_usd", "amount", AMOUNT, P("column_renamed", renamed_to="amount_usd"),
      "schema"),
    A("what happens to the models if payments.public.transactions.amount is dropped", f"{PTP}.amount", AMOUNT,
      P("column_dropped"), "schema"),
    A("what if we drop the amount column from payments.public.transactions", f"{PTP}.amount", AMOUNT,
      P("column_dropped"), "schema"),
    A("what if payments.public.transactions.amount is renamed to payments.public.transactions.amount_usd",
      f"{PTP}.amount", AMOUNT, P("column_renamed", renamed_to="amount_usd"), "schema"),
    A("what if merchant_category is renamed to category", "merchant_category", CATEGORY,
      P("column_renamed", renamed_to="category"), "schema", "the column, not a category: no quoted values"),
    A("what if 5% of amount rows are dropped", "amount", AMOUNT, REFUSE, "unsupported", "rows, not the column"),
    A("what if amount is dropped and account_age_days is renamed", "amount", AMOUNT, REFUSE, "unsupported",
      "two changes"),
    A("what if payments.public.transactions is split into two tables", PTP, AMOUNT, REFUSE, "unsupported"),
    A("what if amount changes type from numeric to text", "amount", AMOUNT, REFUSE, "unsupported"),
    A("what if country is hashed for privacy", "country", COUNTRY, REFUSE, "unsupported"),
    A("what if duplicate rows show up in payments.public.transactions", PTP, AMOUNT, REFUSE, "unsupported"),
    A("what if the transactions table arrives a day late", None, AGE, REFUSE, "unsupported",
      "latency, not a change of values (nor a shift of account_age_days by a day)"),
    A("what if amount is in euros instead of dollars", "amount", AMOUNT, REFUSE, "unsupported", "exchange rate"),
    A("what if amount is converted to GBP", "amount", AMOUNT, REFUSE, "unsupported", "exchange rate"),
    A("what if amount is log-transformed upstream", "amount", AMOUNT, REFUSE, "unsupported"),
    A("what if amount is squared", "amount", AMOUNT, REFUSE, "unsupported"),
    A("what if amount is sent as a string like '$12.50'", "amount", AMOUNT, REFUSE, "unsupported"),
    A("what if txn_count_1h counts the previous 24 hours instead of one", "txn_count_1h", COUNT, REFUSE,
      "unsupported", "another quantity, not a unit change: a 24-hour count is not 24 × the 1-hour count"),
    A("what if amount is sent as a percentage of the account limit", "amount", AMOUNT, REFUSE, "unsupported"),

    # --- the operator does not fit the field's type -----------------------------------------------------------------
    A("what if merchant_category is rounded to 2 decimals", "merchant_category", CATEGORY, REFUSE, "type"),
    A("what if country is sent in cents", "country", COUNTRY, REFUSE, "type"),
    A("what if hour is renamed from 'night' to 'late'", "hour", HOUR, REFUSE, "type"),
    A("what if merchant_category is capped at 100", "merchant_category", CATEGORY, REFUSE, "type"),
    A("what if card_present is multiplied by 2", "card_present", CARD, REFUSE, "type"),
    A("what if a new category 'crypto' appears in amount", "amount", AMOUNT, REFUSE, "type"),

    # === catalog questions ===========================================================================================
    Q("who reads from payments.public.transactions?", D, PTP, "dependents"),
    Q("which models consume payments.public.transactions.amount?", D, f"{PTP}.amount", "dependents"),
    Q("what depends on merchant_category in payments.public.transactions?", D, f"{PTP}.merchant_category",
      "dependents"),
    Q("list everything downstream of payments.transactions.events", D, TOPIC, "dependents"),
    Q("which production models use account_age_days?", D, "account_age_days", "dependents"),
    Q("where is hour used?", D, "hour", "dependents"),
    Q("does anything depend on txn_count_1h?", D, "txn_count_1h", "dependents"),
    Q("show me the lineage of payments.public.transactions.country", D, f"{PTP}.country", "dependents"),
    Q("what's the blast radius of payments.public.transactions.amount", D, f"{PTP}.amount", "dependents"),
    Q("which features come from payments.public.transactions?", D, PTP, "dependents"),
    Q("what models would be affected by a change to amount?", D, "amount", "dependents",
      "no particular change: the question is who depends on it"),
    Q("models using merchant_category?", D, "merchant_category", "dependents"),
    Q("who uses the country column?", D, "country", "dependents"),
    Q(f"downstream consumers of {TABLE}", D, TABLE, "dependents"),
    Q("what reads amount from the kafka topic payments.transactions.events?", D, f"{TOPIC}.amount", "dependents"),
    Q("Which ML models rely on merchant_category?", D, "merchant_category", "dependents"),
    Q("what's impacted if I touch payments.public.transactions.hour?", D, f"{PTP}.hour", "dependents",
      "'touch' names no change to test"),
    Q("any consumers of txn_count_1h?", D, "txn_count_1h", "dependents"),
    Q("is txn_count_1h used by any production model?", D, "txn_count_1h", "dependents"),
    Q("which dashboards or models read hour?", D, "hour", "dependents"),
    Q("what sits downstream of fraud_features.transaction_features?", D, FEAST, "dependents"),
    Q("which models are fed by payments.public.transactions.account_age_days?", D, f"{PTP}.account_age_days",
      "dependents"),
    Q(f"what uses {_FIELD_URN}?", D, _FIELD_URN, "dependents"),
    Q("If I change merchant_category, which models should I worry about?", D, "merchant_category", "dependents",
      "no particular change: a lineage question"),
    Q("who reads merchant_category?", D, "merchant_category", "dependents"),
    Q("which team maintains merchant_risk_scorer?", W, "merchant_risk_scorer", "owners"),
    Q("who owns payments.transactions.events?", W, TOPIC, "owners"),
    Q("who is responsible for review_time_estimator?", W, "review_time_estimator", "owners"),
    Q("who should I talk to before changing payments.public.transactions.amount?", W, f"{PTP}.amount", "owners",
      "asks for a person, not an assessment"),
    Q("owner of payments.public.transactions?", W, PTP, "owners"),
    Q("who's the owner of fraud_detector_challenger", W, "fraud_detector_challenger", "owners"),
    Q("which group owns fraud_features.transaction_features?", W, FEAST, "owners"),
    Q("who do I contact about payments.public.transactions?", W, PTP, "owners"),
    Q("who looks after fraud_detector?", W, "fraud_detector", "owners"),
    Q("point of contact for review_time_estimator?", W, "review_time_estimator", "owners"),
    Q("whose table is payments.public.transactions?", W, PTP, "owners"),
    Q("ownership of merchant_risk_scorer", W, "merchant_risk_scorer", "owners"),
    Q("who manages the payments.transactions.events topic?", W, TOPIC, "owners"),
    Q("which team is accountable for fraud_detector?", W, "fraud_detector", "owners"),
    Q("Who are the owners of `review_time_estimator`?", W, "review_time_estimator", "owners"),
    Q("did fraud_detector get blocked the last time we checked?", V, "fraud_detector", "verdict"),
    Q("is merchant_risk_scorer tagged provenance:BLOCK right now?", V, "merchant_risk_scorer", "verdict"),
    Q("what was the last verdict for review_time_estimator?", V, "review_time_estimator", "verdict"),
    Q("latest assessment result for fraud_detector", V, "fraud_detector", "verdict"),
    Q("did review_time_estimator pass last time?", V, "review_time_estimator", "verdict"),
    Q("what's fraud_detector's current provenance status?", V, "fraud_detector", "verdict"),
    Q("show the most recent impact report for fraud_detector", V, "fraud_detector", "verdict"),
    Q("is fraud_detector PASS or BLOCK at the moment?", V, "fraud_detector", "verdict"),
    Q("what did provenance say about review_time_estimator last time?", V, "review_time_estimator", "verdict"),
    Q("any warnings on merchant_risk_scorer from the last run?", V, "merchant_risk_scorer", "verdict"),
    Q("which verdict tag does fraud_detector carry now?", V, "fraud_detector", "verdict"),
    Q("last check on fraud_detector_challenger?", V, "fraud_detector_challenger", "verdict"),
    Q("was fraud_detector blocked?", V, "fraud_detector", "verdict"),
    Q("current verdict of review_time_estimator", V, "review_time_estimator", "verdict"),
    Q("has review_time_estimator been marked WARNING?", V, "review_time_estimator", "verdict"),
    Q("hello!", H, None, "help"),
    Q("hey there", H, None, "help"),
    Q("what can you do for me?", H, None, "help"),
    Q("how do I use this thing?", H, None, "help"),
    Q("what kinds of changes can you test?", H, None, "help"),
    Q("help please", H, None, "help"),
    Q("good morning", H, None, "help"),
    Q("thank you!", H, None, "help"),
    Q("what questions can I ask you?", H, None, "help"),
    Q("write a haiku about databases", U, None, "off-topic"),
    Q("what's the weather in Lisbon?", U, None, "off-topic"),
    Q("tell me a joke", U, None, "off-topic"),
    Q("asdfjkl", U, None, "off-topic"),
    Q("what's 17 times 23?", U, None, "off-topic"),
    Q("book me a flight to Paris", U, None, "off-topic"),
    Q("translate 'hello' to French", U, None, "off-topic"),
    Q("who won the world cup in 2018?", U, None, "off-topic"),
)
# fmt: on
