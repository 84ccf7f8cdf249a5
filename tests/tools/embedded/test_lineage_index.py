"""The reverse lineage index: which edges each aspect contributes, and that rewrites replace exactly those."""

from __future__ import annotations

from typing import Any

import datahub.metadata.schema_classes as m
import pytest
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.metadata.urns import DatasetUrn, DocumentUrn, MlFeatureUrn, MlModelGroupUrn, MlModelUrn, SchemaFieldUrn

from tools.embedded.lineage_index import Edge, LineageIndex, edges_from_aspect

KAFKA = str(DatasetUrn("kafka", "events", "PROD"))
PG = str(DatasetUrn("postgres", "db.public.tx", "PROD"))
FEAST = str(DatasetUrn("feast", "fv.tx", "PROD"))
OTHER = str(DatasetUrn("hive", "other", "PROD"))
F_AMOUNT = str(MlFeatureUrn("fv.tx", "txn_amount"))
F_COUNTRY = str(MlFeatureUrn("fv.tx", "country"))
F_HOUR = str(MlFeatureUrn("fv.tx", "hour"))
MODEL = str(MlModelUrn("mlflow", "fraud", "PROD"))
MODEL_2 = str(MlModelUrn("mlflow", "risk", "PROD"))
GROUP = str(MlModelGroupUrn("mlflow", "fraud", "PROD"))
GROUP_2 = str(MlModelGroupUrn("mlflow", "fraud_v2", "PROD"))
DOC = str(DocumentUrn("shared-verdict-1"))


def field(dataset: str, column: str) -> str:
    return str(SchemaFieldUrn(dataset, column))


def as_json(urn: str, aspect: m._Aspect) -> dict[str, Any]:
    """The aspect exactly as DataHub Lite stores it (and as the store hands it to the index)."""
    return MetadataChangeProposalWrapper(entityUrn=urn, aspect=aspect).to_obj(simplified_structure=True)["aspect"][
        "json"
    ]


def lineage(
    upstreams: list[str], columns: list[tuple[list[str], list[str], str | None]] = ()
) -> m.UpstreamLineageClass:
    """Dataset-level upstreams plus fine-grained edges given as (upstream fields, downstream fields, transform)."""
    return m.UpstreamLineageClass(
        upstreams=[m.UpstreamClass(dataset=u, type=m.DatasetLineageTypeClass.TRANSFORMED) for u in upstreams],
        fineGrainedLineages=[
            m.FineGrainedLineageClass(
                upstreamType=m.FineGrainedLineageUpstreamTypeClass.FIELD_SET,
                upstreams=ups,
                downstreamType=m.FineGrainedLineageDownstreamTypeClass.FIELD_SET,
                downstreams=downs,
                transformOperation=transform,
            )
            for ups, downs, transform in columns
        ]
        or None,
    )


def model_properties(features: list[str], groups: list[str] | None = None) -> m.MLModelPropertiesClass:
    return m.MLModelPropertiesClass(mlFeatures=features, groups=groups)


def document_info(*assets: str) -> m.DocumentInfoClass:
    stamp = m.AuditStampClass(time=0, actor="urn:li:corpuser:provenance")
    return m.DocumentInfoClass(
        title="Provenance verdict",
        status=m.DocumentStatusClass(state=m.DocumentStateClass.PUBLISHED),
        contents=m.DocumentContentsClass(text="BLOCK"),
        created=stamp,
        lastModified=stamp,
        relatedAssets=[m.RelatedAssetClass(asset=a) for a in assets],
    )


def all_edges(index: LineageIndex) -> set[tuple[str, str, str]]:
    """Every (kind, upstream, downstream) the index can answer, read back through its public lookups."""
    nodes = {KAFKA, PG, FEAST, OTHER, F_AMOUNT, F_COUNTRY, F_HOUR, MODEL, MODEL_2, GROUP, GROUP_2, DOC}
    nodes |= {field(d, c) for d in (KAFKA, PG, FEAST, OTHER) for c in ("amount", "txn_amount", "country", "x")}
    out: set[tuple[str, str, str]] = set()
    for node in nodes:
        for kind in ("entity", "field"):
            out |= {(kind, node, down) for down in index.neighbours(node, "DOWNSTREAM", kind)}  # type: ignore[arg-type]
        out |= {("document", node, doc) for doc in index.documents_about(node)}
    return out


# ------------------------------------------------------------------------------------------ edges_from_aspect


def test_upstream_lineage_gives_dataset_edges_and_column_edges_with_transform() -> None:
    aspect = lineage(
        [PG, OTHER],
        [
            ([field(PG, "amount")], [field(FEAST, "txn_amount")], "IDENTITY"),
            ([field(PG, "country"), field(OTHER, "x")], [field(FEAST, "country")], "CONCAT"),
            ([field(PG, "amount")], [field(FEAST, "x")], None),
        ],
    )
    edges = edges_from_aspect(FEAST, "upstreamLineage", as_json(FEAST, aspect))
    assert sorted(edges, key=repr) == sorted(
        [
            Edge("entity", PG, FEAST),
            Edge("entity", OTHER, FEAST),
            Edge("field", field(PG, "amount"), field(FEAST, "txn_amount"), "IDENTITY"),
            # A field set feeds every downstream field: one edge per (upstream, downstream) pair.
            Edge("field", field(PG, "country"), field(FEAST, "country"), "CONCAT"),
            Edge("field", field(OTHER, "x"), field(FEAST, "country"), "CONCAT"),
            Edge("field", field(PG, "amount"), field(FEAST, "x"), None),
        ],
        key=repr,
    )


def test_feature_sources_point_from_dataset_to_feature() -> None:
    props = m.MLFeaturePropertiesClass(sources=[FEAST, OTHER], dataType=m.MLFeatureDataTypeClass.CONTINUOUS)
    assert edges_from_aspect(F_AMOUNT, "mlFeatureProperties", as_json(F_AMOUNT, props)) == [
        Edge("entity", FEAST, F_AMOUNT),
        Edge("entity", OTHER, F_AMOUNT),
    ]
    key = "urn:li:mlPrimaryKey:(fv.tx,transaction_id)"
    pk = m.MLPrimaryKeyPropertiesClass(sources=[FEAST])
    assert edges_from_aspect(key, "mlPrimaryKeyProperties", as_json(key, pk)) == [Edge("entity", FEAST, key)]


def test_model_consumes_features_and_sits_upstream_of_its_groups() -> None:
    props = model_properties([F_AMOUNT, F_COUNTRY], [GROUP, GROUP_2])
    assert edges_from_aspect(MODEL, "mlModelProperties", as_json(MODEL, props)) == [
        Edge("entity", F_AMOUNT, MODEL),
        Edge("entity", F_COUNTRY, MODEL),
        Edge("entity", MODEL, GROUP),
        Edge("entity", MODEL, GROUP_2),
    ]


def test_document_related_assets_are_document_edges() -> None:
    assert edges_from_aspect(DOC, "documentInfo", as_json(DOC, document_info(MODEL, PG))) == [
        Edge("document", MODEL, DOC),
        Edge("document", PG, DOC),
    ]


def test_aspects_without_lineage_contribute_nothing() -> None:
    index = LineageIndex()
    index.replace(PG, "datasetProperties", as_json(PG, m.DatasetPropertiesClass(name="tx", description=FEAST)))
    index.replace(MODEL, "mlModelProperties", as_json(MODEL, model_properties([])))
    assert index.edge_count() == 0
    assert all_edges(index) == set()


# ------------------------------------------------------------------------------------------ LineageIndex.replace


@pytest.fixture
def index() -> LineageIndex:
    idx = LineageIndex()
    idx.replace(
        PG,
        "upstreamLineage",
        as_json(PG, lineage([KAFKA], [([field(KAFKA, "amount")], [field(PG, "amount")], "IDENTITY")])),
    )
    idx.replace(
        FEAST,
        "upstreamLineage",
        as_json(FEAST, lineage([PG], [([field(PG, "amount")], [field(FEAST, "txn_amount")], "IDENTITY")])),
    )
    for feature in (F_AMOUNT, F_COUNTRY, F_HOUR):
        idx.replace(feature, "mlFeatureProperties", as_json(feature, m.MLFeaturePropertiesClass(sources=[FEAST])))
    idx.replace(MODEL, "mlModelProperties", as_json(MODEL, model_properties([F_AMOUNT, F_COUNTRY], [GROUP])))
    idx.replace(MODEL_2, "mlModelProperties", as_json(MODEL_2, model_properties([F_AMOUNT, F_HOUR])))
    idx.replace(DOC, "documentInfo", as_json(DOC, document_info(MODEL)))
    return idx


def test_lookups_in_both_directions(index: LineageIndex) -> None:
    assert index.neighbours(FEAST, "DOWNSTREAM", "entity") == {F_AMOUNT, F_COUNTRY, F_HOUR}
    assert index.neighbours(F_AMOUNT, "DOWNSTREAM", "entity") == {MODEL, MODEL_2}
    assert index.neighbours(MODEL, "UPSTREAM", "entity") == {F_AMOUNT, F_COUNTRY}
    assert index.neighbours(MODEL, "DOWNSTREAM", "entity") == {GROUP}
    assert index.neighbours(GROUP, "UPSTREAM", "entity") == {MODEL}
    assert index.neighbours(field(PG, "amount"), "DOWNSTREAM", "field") == {field(FEAST, "txn_amount")}
    assert index.neighbours(field(PG, "amount"), "UPSTREAM", "field") == {field(KAFKA, "amount")}
    # Entity and field edges never mix.
    assert index.neighbours(PG, "DOWNSTREAM", "field") == set()
    assert index.neighbours(field(PG, "amount"), "DOWNSTREAM", "entity") == set()
    assert index.documents_about(MODEL) == {DOC}
    assert index.documents_about(MODEL_2) == set()
    assert index.edge_count() == 2 + 2 + 3 + 3 + 2 + 1


def test_rewriting_an_aspect_replaces_exactly_its_edges(index: LineageIndex) -> None:
    before = all_edges(index)
    index.replace(MODEL, "mlModelProperties", as_json(MODEL, model_properties([F_COUNTRY, F_HOUR], [GROUP_2])))
    after = all_edges(index)
    removed = {
        ("entity", F_AMOUNT, MODEL),
        ("entity", MODEL, GROUP),
    }
    added = {("entity", F_HOUR, MODEL), ("entity", MODEL, GROUP_2)}
    assert after == (before - removed) | added
    # No stale keys left behind: the old group is unreachable in both directions.
    assert index.neighbours(GROUP, "UPSTREAM", "entity") == set()
    assert index.neighbours(F_AMOUNT, "DOWNSTREAM", "entity") == {MODEL_2}  # MODEL_2's edge survived
    assert index.edge_count() == 13


def test_rewriting_column_lineage_keeps_other_datasets_columns(index: LineageIndex) -> None:
    new = lineage([PG], [([field(PG, "country")], [field(FEAST, "country")], "IDENTITY")])
    index.replace(FEAST, "upstreamLineage", as_json(FEAST, new))
    assert index.neighbours(field(PG, "amount"), "DOWNSTREAM", "field") == set()
    assert index.neighbours(field(PG, "country"), "DOWNSTREAM", "field") == {field(FEAST, "country")}
    assert index.neighbours(field(PG, "amount"), "UPSTREAM", "field") == {field(KAFKA, "amount")}  # PG's own aspect
    assert index.neighbours(PG, "DOWNSTREAM", "entity") == {FEAST}


def test_writing_the_same_aspect_twice_does_not_duplicate_edges(index: LineageIndex) -> None:
    before, count = all_edges(index), index.edge_count()
    index.replace(MODEL, "mlModelProperties", as_json(MODEL, model_properties([F_AMOUNT, F_COUNTRY], [GROUP])))
    assert all_edges(index) == before
    assert index.edge_count() == count


def test_none_removes_the_aspects_edges_only(index: LineageIndex) -> None:
    before = all_edges(index)
    index.replace(F_AMOUNT, "mlFeatureProperties", None)
    assert all_edges(index) == before - {("entity", FEAST, F_AMOUNT)}
    index.replace(DOC, "documentInfo", None)
    assert index.documents_about(MODEL) == set()
    # Removing something never indexed, or an aspect the index ignores, is harmless.
    index.replace(OTHER, "upstreamLineage", None)
    index.replace(PG, "schemaMetadata", None)
    assert index.edge_count() == 13 - 2


def test_an_edge_declared_by_two_aspects_survives_removing_one() -> None:
    index = LineageIndex()
    shared = ([field(PG, "amount")], [field(FEAST, "txn_amount")], "IDENTITY")
    index.replace(FEAST, "upstreamLineage", as_json(FEAST, lineage([PG], [shared])))
    # A second dataset's upstreamLineage that (also) declares the PG.amount → FEAST.txn_amount column edge.
    index.replace(OTHER, "upstreamLineage", as_json(OTHER, lineage([PG], [shared])))
    index.replace(OTHER, "upstreamLineage", None)
    assert index.neighbours(field(PG, "amount"), "DOWNSTREAM", "field") == {field(FEAST, "txn_amount")}


# ------------------------------------------------------------------------------------------ paths


def test_paths_walk_several_hops_breadth_first(index: LineageIndex) -> None:
    paths = index.paths(PG, "DOWNSTREAM", 10, "entity")
    assert paths == [
        [PG, FEAST],
        # neighbours are visited in URN order: ...,country) < ...,hour) < ...,txn_amount)
        [PG, FEAST, F_COUNTRY],
        [PG, FEAST, F_HOUR],
        [PG, FEAST, F_AMOUNT],
        [PG, FEAST, F_COUNTRY, MODEL],
        [PG, FEAST, F_HOUR, MODEL_2],
        [PG, FEAST, F_AMOUNT, MODEL],
        [PG, FEAST, F_AMOUNT, MODEL_2],
        [PG, FEAST, F_COUNTRY, MODEL, GROUP],
        [PG, FEAST, F_AMOUNT, MODEL, GROUP],
    ]
    lengths = [len(p) for p in paths]
    assert lengths == sorted(lengths)


def test_paths_respect_max_degree(index: LineageIndex) -> None:
    assert index.paths(PG, "DOWNSTREAM", 1, "entity") == [[PG, FEAST]]
    two = index.paths(PG, "DOWNSTREAM", 2, "entity")
    assert {p[-1] for p in two} == {FEAST, F_AMOUNT, F_COUNTRY, F_HOUR}
    assert max(len(p) - 1 for p in two) == 2
    assert index.paths(PG, "DOWNSTREAM", 0, "entity") == []


def test_paths_upstream_and_on_columns(index: LineageIndex) -> None:
    assert index.paths(GROUP, "UPSTREAM", 2, "entity") == [
        [GROUP, MODEL],
        [GROUP, MODEL, F_COUNTRY],
        [GROUP, MODEL, F_AMOUNT],
    ]
    assert index.paths(field(KAFKA, "amount"), "DOWNSTREAM", 5, "field") == [
        [field(KAFKA, "amount"), field(PG, "amount")],
        [field(KAFKA, "amount"), field(PG, "amount"), field(FEAST, "txn_amount")],
    ]
    assert index.paths(field(FEAST, "txn_amount"), "DOWNSTREAM", 5, "field") == []


def test_cycles_are_cut() -> None:
    a, b, c = KAFKA, PG, FEAST
    index = LineageIndex()
    index.replace(b, "upstreamLineage", as_json(b, lineage([a])))
    index.replace(c, "upstreamLineage", as_json(c, lineage([b])))
    index.replace(a, "upstreamLineage", as_json(a, lineage([c])))  # a → b → c → a
    assert index.paths(a, "DOWNSTREAM", 1_000, "entity") == [[a, b], [a, b, c]]
    assert index.paths(a, "UPSTREAM", 1_000, "entity") == [[a, c], [a, c, b]]
    # Self-loops too.
    index.replace(OTHER, "upstreamLineage", as_json(OTHER, lineage([OTHER])))
    assert index.paths(OTHER, "DOWNSTREAM", 1_000, "entity") == []


def test_every_simple_path_of_a_diamond_is_returned() -> None:
    index = LineageIndex()
    index.replace(PG, "upstreamLineage", as_json(PG, lineage([KAFKA])))
    index.replace(OTHER, "upstreamLineage", as_json(OTHER, lineage([KAFKA])))
    index.replace(FEAST, "upstreamLineage", as_json(FEAST, lineage([PG, OTHER])))
    ends = [p for p in index.paths(KAFKA, "DOWNSTREAM", 5, "entity") if p[-1] == FEAST]
    assert sorted(ends) == sorted([[KAFKA, PG, FEAST], [KAFKA, OTHER, FEAST]])


# ------------------------------------------------------------------------------------------ rebuild


def test_rebuild_forgets_everything_and_indexes_the_rows(index: LineageIndex) -> None:
    rows = [
        (FEAST, "upstreamLineage", as_json(FEAST, lineage([OTHER]))),
        (F_AMOUNT, "mlFeatureProperties", as_json(F_AMOUNT, m.MLFeaturePropertiesClass(sources=[FEAST]))),
        (PG, "datasetProperties", as_json(PG, m.DatasetPropertiesClass(name="ignored"))),
    ]
    index.rebuild(iter(rows))
    assert all_edges(index) == {("entity", OTHER, FEAST), ("entity", FEAST, F_AMOUNT)}
    assert index.edge_count() == 2
    assert index.documents_about(MODEL) == set()
    # Contributions are tracked after a rebuild too, so the next rewrite still replaces exactly.
    index.replace(FEAST, "upstreamLineage", as_json(FEAST, lineage([PG])))
    assert all_edges(index) == {("entity", PG, FEAST), ("entity", FEAST, F_AMOUNT)}
    index.rebuild([])
    assert index.edge_count() == 0
    assert all_edges(index) == set()


RUN = "urn:li:dataProcessInstance:3f1c0de2b6f8"
MLFLOW_DATA = str(DatasetUrn("mlflow", "main.applicant_features", "PROD"))


def test_training_runs_link_their_inputs_to_the_model_as_gms_lineage_does() -> None:
    """DataProcessInstanceConsumes (inputEdges), TrainedBy (trainingJobs) and DataProcessInstanceProduces
    (outputEdges) are lineage in GMS; the plain `inputs` list (Consumes without isLineage) is not."""
    run_input = m.DataProcessInstanceInputClass(inputs=[OTHER], inputEdges=[m.EdgeClass(destinationUrn=MLFLOW_DATA)])
    run_output = m.DataProcessInstanceOutputClass(outputs=[], outputEdges=[m.EdgeClass(destinationUrn=MODEL)])
    props = m.MLModelPropertiesClass(trainingJobs=[RUN])
    assert edges_from_aspect(RUN, "dataProcessInstanceInput", as_json(RUN, run_input)) == [
        Edge("entity", MLFLOW_DATA, RUN)
    ]
    assert edges_from_aspect(RUN, "dataProcessInstanceOutput", as_json(RUN, run_output)) == [Edge("entity", RUN, MODEL)]
    assert edges_from_aspect(MODEL, "mlModelProperties", as_json(MODEL, props)) == [Edge("entity", RUN, MODEL)]

    index = LineageIndex()
    index.replace(RUN, "dataProcessInstanceInput", as_json(RUN, run_input))
    index.replace(RUN, "dataProcessInstanceOutput", as_json(RUN, run_output))
    index.replace(MODEL, "mlModelProperties", as_json(MODEL, props))
    assert index.paths(MLFLOW_DATA, "DOWNSTREAM", 2, "entity") == [[MLFLOW_DATA, RUN], [MLFLOW_DATA, RUN, MODEL]]
    assert index.neighbours(OTHER, "DOWNSTREAM", "entity") == set()
    # the same edge declared twice (trainingJobs and outputEdges) survives removing one of them
    index.replace(RUN, "dataProcessInstanceOutput", None)
    assert index.neighbours(RUN, "DOWNSTREAM", "entity") == {MODEL}
