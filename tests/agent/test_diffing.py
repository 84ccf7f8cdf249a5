"""Which relation a model is scored on in `provenance diff`: read from the lineage, never assumed."""

from __future__ import annotations

from agent.diffing import reads_of, relation_unknown
from policies import Verdict
from tools.catalog.discovery import AffectedFeature, AffectedModel, LineageStep

RAW = "urn:li:dataset:(urn:li:dataPlatform:postgres,shop.public.orders,PROD)"
FEATURES = "urn:li:dataset:(urn:li:dataPlatform:postgres,shop.public.order_features,PROD)"
VIEW = "urn:li:dataset:(urn:li:dataPlatform:feast,order_stats,PROD)"


def _model(*paths: list[LineageStep]) -> AffectedModel:
    links = [
        AffectedFeature(
            urn=f"urn:li:mlFeature:(f,{i})",
            name=f"f{i}",
            dataset_urn=path[-1].dataset_urn,
            column=path[-1].column,
            path=path,
            precision="column",
        )  # fmt: skip
        for i, path in enumerate(paths)
    ]
    return AffectedModel(urn="urn:li:mlModel:m", name="m", production=True, production_evidence="stage",
                         features=links, owners=[], tags=[], custom_properties={}, related_documents=[])  # fmt: skip


def test_the_last_warehouse_step_on_the_path_is_the_relation_and_names_the_column() -> None:
    model = _model([LineageStep(dataset_urn=RAW, column="amount"),
                    LineageStep(dataset_urn=FEATURES, column="amount_usd", transform="SQL: amount / 100"),
                    LineageStep(dataset_urn=VIEW, column="amount_usd")])  # fmt: skip
    reads = reads_of(model, RAW)
    assert reads.dataset_urn == FEATURES and reads.columns == {"f0": "amount_usd"}


def test_a_path_with_no_warehouse_step_leaves_the_relation_unknown_and_the_model_incomplete() -> None:
    """It fell back to the changed dataset, scoring the model on rows that may not be its own."""
    model = _model([LineageStep(dataset_urn=VIEW, column="amount")])
    reads = reads_of(model, RAW)
    assert reads.dataset_urn is None
    diff = relation_unknown(model, reads)
    assert diff.verdict == Verdict.INCOMPLETE and diff.reads is None
    assert diff.reasons[0].code == "relation_unknown" and RAW in diff.reasons[0].message
