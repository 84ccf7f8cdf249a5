"""Siblings without a catalog: one name for a dbt node and its table, and the edges that join them."""

from __future__ import annotations

from tools.catalog.column_paths import column_paths, field_urn
from tools.catalog.datahub import FineGrainedEdge
from tools.catalog.siblings import SIBLING_TRANSFORM, Sibling, with_sibling_edges, without_dbt_twins

DBT_NODE = "urn:li:dataset:(urn:li:dataPlatform:dbt,claims.analytics.claim_features,PROD)"
TABLE = "urn:li:dataset:(urn:li:dataPlatform:postgres,claims.analytics.claim_features,PROD)"
OTHER = "urn:li:dataset:(urn:li:dataPlatform:snowflake,claims.analytics.claim_features,PROD)"
DEV_NODE = "urn:li:dataset:(urn:li:dataPlatform:dbt,claims.analytics.claim_features,DEV)"
RAW_NODE = "urn:li:dataset:(urn:li:dataPlatform:dbt,claims.raw.claims,PROD)"
RAW = "urn:li:dataset:(urn:li:dataPlatform:postgres,claims.raw.claims,PROD)"
STAGING = "urn:li:dataset:(urn:li:dataPlatform:postgres,claims.analytics.stg_claims,PROD)"


def test_a_dbt_node_and_its_table_are_one_candidate() -> None:
    assert without_dbt_twins([DBT_NODE, TABLE]) == [TABLE]
    assert without_dbt_twins([DBT_NODE]) == [DBT_NODE]  # no table: the node is the only candidate
    # two warehouse tables of the same name are truly two datasets; a node of another env is not a twin
    assert without_dbt_twins([DBT_NODE, TABLE, OTHER]) == [TABLE, OTHER]
    assert without_dbt_twins([DEV_NODE, TABLE]) == [DEV_NODE, TABLE]


def test_a_change_at_a_dbt_source_node_walks_on_through_its_table() -> None:
    """The dbt source node is a dead end in the embedded catalog; its sibling table carries the lineage."""
    recorded = {
        STAGING: [FineGrainedEdge(upstream=field_urn(RAW, "amount"), downstream=field_urn(STAGING, "claim_amount"))],
        RAW_NODE: [FineGrainedEdge(upstream=field_urn(RAW, "amount"), downstream=field_urn(RAW_NODE, "amount"))],
    }
    sibling = Sibling(RAW, "same name on postgres (DataHub's sibling rule)")
    edges = with_sibling_edges(recorded, [(RAW_NODE, sibling)], {RAW_NODE: {"amount"}, RAW: {"amount"}})
    # the recorded table -> node edge (no transform) is the same column seen twice, not an unknown transform
    [recorded_edge] = [e for e in edges[RAW_NODE] if e.upstream == field_urn(RAW, "amount")]
    assert (recorded_edge.transform or "").startswith(SIBLING_TRANSFORM)
    paths = column_paths(RAW_NODE, "amount", edges)
    steps = paths[(STAGING, "claim_amount")]
    assert [(s.dataset_urn, s.column) for s in steps] == [
        (RAW_NODE, "amount"),
        (RAW, "amount"),
        (STAGING, "claim_amount"),
    ]
    assert (steps[1].transform or "").startswith(SIBLING_TRANSFORM) and steps[2].transform is None
    # without the sibling the walk stops at the node
    assert (STAGING, "claim_amount") not in column_paths(RAW_NODE, "amount", recorded)
