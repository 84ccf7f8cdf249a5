"""The planned change carried along lineage paths: copies pass it, expressions derive it, unknowns refuse it."""

from __future__ import annotations

from tools.catalog.discovery import AffectedFeature, LineageStep
from tools.experiment.carry import carry
from tools.mutations import parse_mutation

RAW = "urn:li:dataset:(urn:li:dataPlatform:postgres,claims.raw.claims,PROD)"
STG = "urn:li:dataset:(urn:li:dataPlatform:postgres,claims.analytics.stg_claims,PROD)"
FEATURES = "urn:li:dataset:(urn:li:dataPlatform:postgres,claims.analytics.claim_features,PROD)"


def _link(column: str, *steps: LineageStep) -> AffectedFeature:
    path = [LineageStep(dataset_urn=RAW, column="amount"), *steps]
    return AffectedFeature(urn=f"urn:li:mlFeature:(f,{column})", name=column, dataset_urn=FEATURES, column=column,
                           path=path, precision="column")  # fmt: skip


def _computed(dataset: str, column: str, sql: str, table: str, upstream: str) -> LineageStep:
    return LineageStep(dataset_urn=dataset, column=column, expression=sql, expression_input=(table, upstream),
                       dialect="postgres", expression_from="viewProperties of x")  # fmt: skip


RENAMED = _computed(STG, "claim_amount", '"claims"."raw"."claims".amount', "claims.raw.claims", "amount")
RATIO = _computed(
    FEATURES,
    "amount_ratio",
    '"claims"."analytics"."stg_claims".claim_amount / "claims"."analytics"."stg_claims".insured_value',
    "claims.analytics.stg_claims",
    "claim_amount",
)
ROUNDED = _computed(
    FEATURES,
    "amount_rounded",
    'ROUND("claims"."analytics"."stg_claims".claim_amount, -2)',
    "claims.analytics.stg_claims",
    "claim_amount",
)
COPY = LineageStep(dataset_urn=FEATURES, column="claim_amount", transform='COPY: "s"."claim_amount" AS "c"')


def test_a_ratio_gets_the_derived_scale_and_a_copy_the_same_one() -> None:
    scale = parse_mutation("scale", {"factor": 100}, fraction=0.5, seed=3)
    carried = carry(scale, [_link("amount_ratio", RENAMED, RATIO), _link("claim_amount", RENAMED, COPY)])
    assert carried.refusal is None and carried.unchanged == []
    assert carried.mutations["amount_ratio"] == scale  # numerator x100: the ratio x100, same rows
    assert carried.mutations["claim_amount"] == scale
    assert any("amount_ratio: scale" in e and "claim_amount / " in e for e in carried.explanations)


def test_a_divisor_gets_the_inverse_factor() -> None:
    step = _computed(FEATURES, "inverse", '1 / "claims"."raw"."claims".amount', "claims.raw.claims", "amount")
    carried = carry(parse_mutation("scale", {"factor": 100}), [_link("inverse", step)])
    assert carried.mutations["inverse"].model_dump()["factor"] == 0.01


def test_an_expression_it_cannot_carry_exactly_refuses_quoting_it() -> None:
    carried = carry(parse_mutation("scale", {"factor": 100}), [_link("amount_rounded", RENAMED, ROUNDED)])
    assert carried.refusal is not None and "ROUND(" in carried.refusal and carried.mutations == {}


def test_an_unknown_transform_refuses_and_names_it() -> None:
    link = _link("claim_amount", LineageStep(dataset_urn=FEATURES, column="claim_amount"))
    link = link.model_copy(update={"non_identity_transforms": ["transform of claim_amount unknown: no SQL found"]})
    carried = carry(parse_mutation("scale", {"factor": 100}), [link])
    assert carried.refusal is not None and "no SQL found" in carried.refusal
