"""The demo catalog: Kafka topic → Postgres table → Feast features → four MLflow models, as UPSERT MCPs.

Declarative and idempotent: `demo_catalog_mcps` returns the same list on every call (no clocks, no random
ids), so emitting it again — to a real DataHub through the REST emitter or into a DataHub Lite file with
`write_to_lite` — changes nothing. The URN constants below are the names the rest of Provenance, the tests and
the README use for the demo entities.

The graph is built so that a change to `payments.public.transactions.amount` reaches exactly two production
models through the renamed feature `txn_amount`, of two tasks: `fraud_detector` (a binary classifier) and
`review_time_estimator` (a regressor of the manual review time); `merchant_risk_scorer` is a production control
that never uses the amount, and `fraud_detector_challenger` uses it but is not in production.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Final

import datahub.metadata.schema_classes as m
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.lite.lite_util import get_datahub_lite
from datahub.metadata.urns import (
    CorpGroupUrn,
    CorpUserUrn,
    DatasetUrn,
    MlFeatureTableUrn,
    MlFeatureUrn,
    MlModelGroupUrn,
    MlModelUrn,
    TagUrn,
)

from seed.binding import ModelBinding
from seed.catalog_builders import (
    Column,
    ColumnKind,
    corp_group_mcps,
    corp_user_mcps,
    feature_table_mcps,
    mcps_for,
    ml_model_group_mcps,
    ml_model_mcps,
    ownership,
    schema_metadata,
    tag_mcps,
    upstream_lineage,
)
from tools.tolerance.publish import definition_mcp

KAFKA_TOPIC_URN: Final = str(DatasetUrn("kafka", "payments.transactions.events", "PROD"))
POSTGRES_TABLE_URN: Final = str(DatasetUrn("postgres", "payments.public.transactions", "PROD"))
FEATURE_TABLE_DATASET_URN: Final = str(DatasetUrn("feast", "fraud_features.transaction_features", "PROD"))
FEATURE_TABLE_URN: Final = str(MlFeatureTableUrn("feast", "transaction_features"))
FEATURE_NAMESPACE: Final = "fraud_features.transaction_features"

# The transaction schema as it lands in Kafka and Postgres:
# (column, kind, Kafka Avro type, Postgres type, Postgres description).
_SOURCE_COLUMNS: Final[tuple[tuple[str, ColumnKind, str, str, str | None], ...]] = (
    ("transaction_id", "string", "string", "varchar", None),
    ("amount", "number", "double", "numeric(12,2)", "Transaction amount in US dollars"),
    ("merchant_category", "string", "string", "varchar(32)", None),
    ("country", "string", "string", "char(2)", "ISO 3166-1 alpha-2 country code"),
    ("hour", "number", "int", "smallint", "Hour of day (0-23, UTC)"),
    ("account_age_days", "number", "int", "integer", None),
    ("txn_count_1h", "number", "int", "integer", "Transactions on the account in the previous hour"),
    ("is_fraud", "boolean", "boolean", "boolean", "Confirmed fraud label"),
)
_T = m.MLFeatureDataTypeClass
# The Feast feature view: (feature = column name, Postgres source column, kind, Feast type, feature type,
# description). The feature name is also the evaluation data column (docs/design.md §4).
_FEATURES: Final[tuple[tuple[str, str, ColumnKind, str, str, str], ...]] = (
    ("txn_amount", "amount", "number", "FLOAT64", _T.CONTINUOUS, "Transaction amount in US dollars"),
    ("merchant_category", "merchant_category", "string", "STRING", _T.NOMINAL, "Merchant category"),
    ("country", "country", "string", "STRING", _T.NOMINAL, "Country the card was used in"),
    ("hour", "hour", "number", "INT64", _T.ORDINAL, "Hour of day of the transaction (UTC)"),
    ("account_age_days", "account_age_days", "number", "INT64", _T.CONTINUOUS, "Days since account opening"),
    ("txn_count_1h", "txn_count_1h", "number", "INT64", _T.COUNT, "Account transactions, previous hour"),
)
FEATURE_NAMES: Final = tuple(feature[0] for feature in _FEATURES)

MODEL_GROUP_URN: Final = str(MlModelGroupUrn("mlflow", "fraud_detector", "PROD"))
CONTROL_MODEL_GROUP_URN: Final = str(MlModelGroupUrn("mlflow", "merchant_risk", "PROD"))
REVIEW_MODEL_GROUP_URN: Final = str(MlModelGroupUrn("mlflow", "review_time", "PROD"))
FRAUD_MODEL_URN: Final = str(MlModelUrn("mlflow", "fraud_detector", "PROD"))
CONTROL_MODEL_URN: Final = str(MlModelUrn("mlflow", "merchant_risk_scorer", "PROD"))
CHALLENGER_MODEL_URN: Final = str(MlModelUrn("mlflow", "fraud_detector_challenger", "PROD"))
REVIEW_MODEL_URN: Final = str(MlModelUrn("mlflow", "review_time_estimator", "PROD"))

# Read-only so no caller can change the verdict → tag mapping for everyone else at run time.
STATUS_TAG_URNS: Final[Mapping[str, str]] = MappingProxyType(
    {verdict: str(TagUrn(f"provenance:{verdict}")) for verdict in ("PASS", "WARNING", "BLOCK", "INCOMPLETE")}
)
TIER1_TAG_URN: Final = str(TagUrn("tier1"))
PII_TAG_URN: Final = str(TagUrn("pii"))
PRODUCTION_TAG_URN: Final = str(TagUrn("production"))

PAYMENTS_DATA_ENG_URN: Final = str(CorpUserUrn("payments-data-eng"))
ALICE_URN: Final = str(CorpUserUrn("alice.ml"))
BOB_URN: Final = str(CorpUserUrn("bob.risk"))
PAYMENTS_PLATFORM_GROUP_URN: Final = str(CorpGroupUrn("payments-platform"))
FRAUD_ML_GROUP_URN: Final = str(CorpGroupUrn("fraud-ml"))

_TECH, _DATA = m.OwnershipTypeClass.TECHNICAL_OWNER, m.OwnershipTypeClass.DATAOWNER


def feature_urn(name: str) -> str:
    """URN of a demo MLFeature; its name is also the feature dataset column and the evaluation data column."""
    return str(MlFeatureUrn(FEATURE_NAMESPACE, name))


def _tags_and_people() -> list[MetadataChangeProposalWrapper]:
    statuses = {
        "PASS": ("the tested upstream change does not degrade this model", "#2E7D32"),
        "WARNING": ("the tested upstream change degrades this model; review before shipping", "#F9A825"),
        "BLOCK": ("the tested upstream change breaks this model; do not ship it", "#C62828"),
        "INCOMPLETE": ("this model could not be tested; the evidence report says why", "#757575"),
    }
    return [
        *(
            mcp
            for verdict, (meaning, color) in statuses.items()
            for mcp in tag_mcps(STATUS_TAG_URNS[verdict], f"Provenance verdict: {meaning}", color)
        ),
        *tag_mcps(TIER1_TAG_URN, "Business-critical data; changes need owner sign-off", "#1565C0"),
        *tag_mcps(PII_TAG_URN, "Contains personal data", "#6A1B9A"),
        *tag_mcps(PRODUCTION_TAG_URN, "Serves live traffic", "#00838F"),
        *corp_user_mcps(PAYMENTS_DATA_ENG_URN, "Payments Data Engineering", "Team account"),
        *corp_user_mcps(ALICE_URN, "Alice Martin", "ML Engineer, Fraud"),
        *corp_user_mcps(BOB_URN, "Bob Chen", "Risk Analyst"),
        *corp_group_mcps(PAYMENTS_PLATFORM_GROUP_URN, "Payments Platform", "Runs payments Kafka and Postgres"),
        *corp_group_mcps(FRAUD_ML_GROUP_URN, "Fraud ML", "Builds and operates the fraud and risk models"),
    ]


def _datasets() -> list[MetadataChangeProposalWrapper]:
    kafka_columns = [Column(name, kind, avro) for name, kind, avro, _, _ in _SOURCE_COLUMNS]
    pg_columns = [Column(name, kind, pg, description) for name, kind, _, pg, description in _SOURCE_COLUMNS]
    feast_columns = [Column(name, kind, native, desc) for name, _, kind, native, _, desc in _FEATURES]
    # amount → txn_amount is a rename in the feature view, not a value change, hence IDENTITY (the default).
    to_features = [(source, name) for name, source, *_ in _FEATURES]
    return [
        *mcps_for(
            KAFKA_TOPIC_URN,
            m.DatasetPropertiesClass(name="payments.transactions.events", description="Card transaction events"),
            schema_metadata("kafka", "payments.transactions.events", kafka_columns),
            ownership((PAYMENTS_PLATFORM_GROUP_URN, _TECH)),
            m.SubTypesClass(typeNames=["Topic"]),
        ),
        *mcps_for(
            POSTGRES_TABLE_URN,
            m.DatasetPropertiesClass(
                name="transactions",
                qualifiedName="payments.public.transactions",
                description="One row per card transaction; `amount` is in US dollars.",
            ),
            schema_metadata("postgres", "payments.public.transactions", pg_columns, ["transaction_id"]),
            ownership((PAYMENTS_DATA_ENG_URN, _DATA), (PAYMENTS_PLATFORM_GROUP_URN, _TECH)),
            m.GlobalTagsClass(tags=[m.TagAssociationClass(tag=urn) for urn in (TIER1_TAG_URN, PII_TAG_URN)]),
            m.SubTypesClass(typeNames=["Table"]),
            # A Kafka Connect sink copies the topic into the table, column for column.
            upstream_lineage(
                KAFKA_TOPIC_URN,
                POSTGRES_TABLE_URN,
                [(column.name, column.name) for column in kafka_columns],
                lineage_type=m.DatasetLineageTypeClass.COPY,
            ),
        ),
        *mcps_for(
            FEATURE_TABLE_DATASET_URN,
            m.DatasetPropertiesClass(
                name="transaction_features",
                qualifiedName="fraud_features.transaction_features",
                description="Feast feature view over payments.public.transactions",
            ),
            schema_metadata("feast", "fraud_features.transaction_features", feast_columns),
            ownership((FRAUD_ML_GROUP_URN, _TECH)),
            m.SubTypesClass(typeNames=["Feature Table"]),
            upstream_lineage(POSTGRES_TABLE_URN, FEATURE_TABLE_DATASET_URN, to_features),
        ),
    ]


def _features() -> list[MetadataChangeProposalWrapper]:
    return feature_table_mcps(
        FEATURE_TABLE_URN,
        FEATURE_TABLE_DATASET_URN,
        [(feature_urn(name), data_type, description) for name, _, _, _, data_type, description in _FEATURES],
        description="Feast feature view fraud_features.transaction_features",
        owners=ownership((FRAUD_ML_GROUP_URN, _TECH)),
    )


def _models(
    fraud_detector: ModelBinding, merchant_risk: ModelBinding, review_time: ModelBinding
) -> list[MetadataChangeProposalWrapper]:
    # Production is declared in mlModelProperties.tags (MLflow stage style), not in globalTags: globalTags on
    # models belongs to the verdict write-back, and a re-seed must not erase a verdict already written there.
    fraud_ml = ownership((FRAUD_ML_GROUP_URN, _TECH))
    return [
        *ml_model_group_mcps(MODEL_GROUP_URN, "Card fraud detector (MLflow registered model)", fraud_ml),
        *ml_model_group_mcps(CONTROL_MODEL_GROUP_URN, "Merchant risk scorer (MLflow registered model)", fraud_ml),
        *ml_model_group_mcps(
            REVIEW_MODEL_GROUP_URN, "Manual review time estimator (MLflow registered model)", fraud_ml
        ),
        *ml_model_mcps(
            FRAUD_MODEL_URN,
            description="Scores each card transaction's probability of fraud.",
            model_type="LogisticRegression pipeline",
            tags=["production"],
            features=[feature_urn(name) for name in FEATURE_NAMES],
            group=MODEL_GROUP_URN,
            custom_properties={**fraud_detector.to_custom_properties(), "mlflow.stage": "Production"},
            owners=ownership((FRAUD_ML_GROUP_URN, _TECH), (ALICE_URN, _DATA)),
        ),
        *ml_model_mcps(
            CONTROL_MODEL_URN,
            description="Flags risky merchant and context combinations; never looks at the amount.",
            model_type="LogisticRegression pipeline",
            tags=["production"],
            features=[feature_urn(name) for name in ("merchant_category", "country", "hour", "account_age_days")],
            group=CONTROL_MODEL_GROUP_URN,
            custom_properties={**merchant_risk.to_custom_properties(), "mlflow.stage": "Production"},
            owners=ownership((FRAUD_ML_GROUP_URN, _TECH), (BOB_URN, _DATA)),
        ),
        *ml_model_mcps(
            REVIEW_MODEL_URN,
            description="Predicts how many minutes a manual review of the transaction takes (review queue staffing).",
            model_type="GradientBoostingRegressor pipeline",
            tags=["production"],
            features=[feature_urn(name) for name in ("txn_amount", "merchant_category", "txn_count_1h")],
            group=REVIEW_MODEL_GROUP_URN,
            custom_properties={**review_time.to_custom_properties(), "mlflow.stage": "Production"},
            owners=ownership((FRAUD_ML_GROUP_URN, _TECH), (BOB_URN, _DATA)),
        ),
        *ml_model_mcps(
            CHALLENGER_MODEL_URN,
            description="Candidate replacement for fraud_detector, in staging; not serving traffic.",
            model_type="GradientBoosting pipeline",
            tags=["staging"],
            features=[feature_urn(name) for name in ("txn_amount", "merchant_category", "country")],
            group=MODEL_GROUP_URN,
            custom_properties={"mlflow.stage": "Staging"},
            owners=ownership((FRAUD_ML_GROUP_URN, _TECH), (ALICE_URN, _DATA)),
        ),
    ]


def demo_catalog_mcps(
    fraud_detector: ModelBinding, merchant_risk: ModelBinding, review_time: ModelBinding
) -> list[MetadataChangeProposalWrapper]:
    """All demo entities as UPSERT MCPs, referenced entities first (tags, owners, upstream → downstream)."""
    return [
        *_tags_and_people(),
        definition_mcp(),  # io.provenance.tolerance, which `provenance scan --publish` sets on source columns
        *_datasets(),
        *_features(),
        *_models(fraud_detector, merchant_risk, review_time),
    ]


def write_to_lite(mcps: Iterable[MetadataChangeProposalWrapper], db_path: Path) -> None:
    """Write MCPs straight into a DataHub Lite SQLite file (no HTTP endpoint needed), then close it.

    Identical aspects are deduplicated by Lite, so writing the same catalog twice adds no versions.
    """
    db_path.parent.mkdir(parents=True, exist_ok=True)
    lite = get_datahub_lite({"type": "sqlite", "config": {"file": str(db_path)}})
    try:
        for mcp in mcps:
            # Lite stamps systemMetadata onto the object it is given; a shallow copy keeps the caller's list
            # unchanged (and still equal to a freshly built catalog).
            lite.write(dataclasses.replace(mcp))
    finally:
        lite.close()
