"""LiteStore over a real DataHub Lite file: reads, writes, the per-write index, and writes by other connections."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import datahub.metadata.schema_classes as m
import pytest
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.lite.lite_util import get_datahub_lite
from datahub.metadata.urns import DatasetUrn, MlFeatureUrn, MlModelUrn, SchemaFieldUrn

from seed.catalog import write_to_lite
from tools.embedded.store import LiteStore

# DataHub Lite's own reindex (run by close() on a writable instance) calls deprecated URN helpers.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SRC = str(DatasetUrn("postgres", "shop.public.orders", "PROD"))
DST = str(DatasetUrn("snowflake", "analytics.orders_clean", "PROD"))
ALT = str(DatasetUrn("kafka", "orders.events", "PROD"))
FEATURE = str(MlFeatureUrn("orders_fv", "order_total"))
MODEL = str(MlModelUrn("mlflow", "churn", "PROD"))


def mcp(urn: str, aspect: m._Aspect) -> MetadataChangeProposalWrapper:
    return MetadataChangeProposalWrapper(entityUrn=urn, aspect=aspect)


def upstream(*datasets: str) -> m.UpstreamLineageClass:
    return m.UpstreamLineageClass(
        upstreams=[m.UpstreamClass(dataset=d, type=m.DatasetLineageTypeClass.TRANSFORMED) for d in datasets]
    )


def schema(*columns: str) -> m.SchemaMetadataClass:
    return m.SchemaMetadataClass(
        schemaName="orders",
        platform="urn:li:dataPlatform:postgres",
        version=0,
        hash="",
        platformSchema=m.OtherSchemaClass(rawSchema=""),
        fields=[
            m.SchemaFieldClass(
                fieldPath=c,
                type=m.SchemaFieldDataTypeClass(type=m.NumberTypeClass()),
                nativeDataType="numeric",
            )
            for c in columns
        ],
    )


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "lite" / "catalog.db"


@pytest.fixture
def store(db: Path) -> Iterator[LiteStore]:
    s = LiteStore(db)
    yield s
    s.close()


def test_written_aspects_read_back_as_json_and_typed(store: LiteStore, db: Path) -> None:
    assert db.exists()  # the parent folder is created
    props = m.DatasetPropertiesClass(name="orders", description="One row per order", customProperties={"k": "v"})
    store.write(mcp(SRC, props))
    store.write(mcp(SRC, schema("order_id", "total")))

    raw = store.aspects(SRC)
    assert set(raw) == {"datasetProperties", "schemaMetadata"}
    assert raw["datasetProperties"]["description"] == "One row per order"
    assert raw["datasetProperties"]["customProperties"] == {"k": "v"}
    assert [f["fieldPath"] for f in raw["schemaMetadata"]["fields"]] == ["order_id", "total"]

    typed = store.typed_aspects(SRC)
    assert typed["datasetProperties"] == props
    assert isinstance(typed["schemaMetadata"], m.SchemaMetadataClass)
    assert typed["schemaMetadata"].fields[1].type.type == m.NumberTypeClass()

    assert store.exists(SRC)
    assert not store.exists(DST)
    assert store.aspects(DST) == {}


def test_key_aspects_are_skipped_and_empty_mcps_refused(store: LiteStore) -> None:
    store.write(mcp(DST, DatasetUrn.from_string(DST).to_key_aspect()))
    assert not store.exists(DST)
    empty = MetadataChangeProposalWrapper(entityUrn=DST, aspect=None, aspectName="datasetProperties")
    with pytest.raises(ValueError, match="without an aspect"):
        store.write(empty)


def test_urns_lists_every_entity_once_in_order(store: LiteStore) -> None:
    for urn in (DST, SRC, ALT):
        store.write(mcp(urn, m.DatasetPropertiesClass(name=urn)))
    store.write(mcp(SRC, m.StatusClass(removed=False)))
    assert list(store.urns()) == sorted([DST, SRC, ALT])


def test_index_follows_every_write_without_a_rebuild(store: LiteStore) -> None:
    assert store.index_rebuilds == 1  # built once on open
    store.write(mcp(DST, upstream(SRC)))
    assert store.index.neighbours(SRC, "DOWNSTREAM", "entity") == {DST}

    store.write(mcp(DST, upstream(ALT)))  # rewrite: SRC → DST must vanish
    assert store.index.neighbours(SRC, "DOWNSTREAM", "entity") == set()
    assert store.index.neighbours(DST, "UPSTREAM", "entity") == {ALT}

    store.write(mcp(FEATURE, m.MLFeaturePropertiesClass(sources=[DST])))
    store.write(mcp(MODEL, m.MLModelPropertiesClass(mlFeatures=[FEATURE])))
    assert [p[-1] for p in store.index.paths(ALT, "DOWNSTREAM", 5, "entity")] == [DST, FEATURE, MODEL]

    # Non-lineage aspects do not touch the index; reads do not trigger rebuilds either.
    store.write(mcp(MODEL, m.StatusClass(removed=False)))
    assert store.aspects(MODEL)["status"] == {"removed": False}
    assert store.exists(FEATURE)
    list(store.urns())
    store.search_urns(["churn"])
    store.sync()
    assert store.index.edge_count() == 3
    assert store.index_rebuilds == 1


def test_index_built_on_open_from_an_existing_file(db: Path) -> None:
    write_to_lite([mcp(DST, upstream(SRC, ALT)), mcp(FEATURE, m.MLFeaturePropertiesClass(sources=[DST]))], db)
    store = LiteStore(db)
    try:
        assert store.index_rebuilds == 1
        assert store.index.neighbours(DST, "UPSTREAM", "entity") == {SRC, ALT}
        assert store.index.neighbours(DST, "DOWNSTREAM", "entity") == {FEATURE}
    finally:
        store.close()


def test_write_by_another_connection_is_visible_and_rebuilds_once(store: LiteStore, db: Path) -> None:
    store.write(mcp(DST, upstream(SRC)))
    assert store.index_rebuilds == 1

    # The DataHub SDK writing the same file, the way `datahub-lite` sinks and `write_to_lite` do.
    write_to_lite(
        [
            mcp(DST, upstream(ALT)),
            mcp(FEATURE, m.MLFeaturePropertiesClass(sources=[DST])),
            mcp(ALT, m.DatasetPropertiesClass(name="orders.events", description="written elsewhere")),
        ],
        db,
    )
    assert store.aspects(ALT)["datasetProperties"]["description"] == "written elsewhere"
    assert store.index_rebuilds == 2
    assert store.index.neighbours(DST, "UPSTREAM", "entity") == {ALT}  # replaced, not added to
    assert store.index.neighbours(SRC, "DOWNSTREAM", "entity") == set()
    assert store.index.neighbours(DST, "DOWNSTREAM", "entity") == {FEATURE}

    # No further external writes: nothing is rebuilt again, whatever is read or written here.
    store.aspects(DST)
    store.exists(SRC)
    list(store.urns())
    store.sync()
    store.write(mcp(MODEL, m.MLModelPropertiesClass(mlFeatures=[FEATURE])))
    assert store.index.neighbours(FEATURE, "DOWNSTREAM", "entity") == {MODEL}
    assert store.index_rebuilds == 2


def test_open_sdk_lite_writer_is_picked_up_by_sync(store: LiteStore, db: Path) -> None:
    other = get_datahub_lite({"type": "sqlite", "config": {"file": str(db)}})
    try:
        other.write(mcp(FEATURE, m.MLFeaturePropertiesClass(sources=[SRC])))
        # sync() alone (what GetEntityLineage calls) refreshes the index.
        store.sync()
        assert store.index.neighbours(SRC, "DOWNSTREAM", "entity") == {FEATURE}
        assert store.index_rebuilds == 2
        store.sync()
        assert store.typed_aspects(FEATURE)["mlFeatureProperties"].sources == [SRC]
        assert store.index_rebuilds == 2

        other.write(mcp(FEATURE, m.MLFeaturePropertiesClass(sources=[ALT])))
        assert store.index.neighbours(ALT, "DOWNSTREAM", "entity") == set()  # not synced yet
        assert store.exists(FEATURE)  # any read syncs
        assert store.index.neighbours(ALT, "DOWNSTREAM", "entity") == {FEATURE}
        assert store.index.neighbours(SRC, "DOWNSTREAM", "entity") == set()
        assert store.index_rebuilds == 3
    finally:
        other.close()


def test_search_urns_matches_urns_and_aspect_text(store: LiteStore) -> None:
    store.write(mcp(SRC, m.DatasetPropertiesClass(name="orders", description="Gross ORDER Totals in EUR")))
    store.write(mcp(SRC, schema("order_id", "discount_code")))
    store.write(mcp(DST, m.DatasetPropertiesClass(name="orders_clean", description="cleaned")))
    store.write(mcp(MODEL, m.MLModelPropertiesClass(description="predicts churn")))

    assert store.search_urns(["snowflake"]) == [DST]  # URN text
    assert store.search_urns(["eur"]) == [SRC]  # aspect text, case-insensitive
    assert store.search_urns(["DISCOUNT_CODE"]) == [SRC]  # schema field names
    assert store.search_urns(["orders"]) == sorted([SRC, DST])
    assert store.search_urns(["orders", "cleaned"]) == [DST]  # every needle must match
    assert store.search_urns(["orders", "churn"]) == []
    assert store.search_urns([]) == sorted([SRC, DST, MODEL])


def test_aspect_version_history(store: LiteStore) -> None:
    for description in ("first", "second", "third"):
        store.write(mcp(SRC, m.DatasetPropertiesClass(description=description)))
    store.write(mcp(SRC, m.DatasetPropertiesClass(description="third")))  # identical: no new version
    store.write(mcp(SRC, m.StatusClass(removed=False)))

    latest = store.aspect_version(SRC, "datasetProperties", 0)
    assert latest is not None
    assert latest[0]["description"] == "third"
    assert latest[1] == 3  # history rows 1..3
    history = [store.aspect_version(SRC, "datasetProperties", v) for v in (1, 2, 3)]
    assert [(h[0]["description"], h[1]) for h in history if h] == [("first", 3), ("second", 3), ("third", 3)]
    assert store.aspect_version(SRC, "datasetProperties", 4) is None
    assert store.aspect_version(SRC, "globalTags", 0) is None
    assert store.aspect_version(DST, "datasetProperties", 0) is None
    assert store.aspect_version(SRC, "status", 0) == ({"removed": False}, 1)


def test_column_lineage_from_upstream_lineage_in_the_index(store: LiteStore) -> None:
    fgl = m.FineGrainedLineageClass(
        upstreamType=m.FineGrainedLineageUpstreamTypeClass.FIELD_SET,
        upstreams=[str(SchemaFieldUrn(SRC, "total"))],
        downstreamType=m.FineGrainedLineageDownstreamTypeClass.FIELD,
        downstreams=[str(SchemaFieldUrn(DST, "total_eur"))],
        transformOperation="MULTIPLY",
    )
    store.write(mcp(DST, m.UpstreamLineageClass(upstreams=upstream(SRC).upstreams, fineGrainedLineages=[fgl])))
    assert store.index.neighbours(str(SchemaFieldUrn(SRC, "total")), "DOWNSTREAM", "field") == {
        str(SchemaFieldUrn(DST, "total_eur"))
    }


DATASET = "urn:li:dataset:(urn:li:dataPlatform:postgres,db.public.t,PROD)"


def _add_tags(db: str, prefix: str, count: int, start: Any) -> None:
    """One process's read-modify-writes of the dataset's tags, as the embedded endpoint's batchAddTags does them."""
    from datahub.emitter.mcp import MetadataChangeProposalWrapper
    from datahub.metadata.schema_classes import GlobalTagsClass, TagAssociationClass

    store = LiteStore(Path(db))
    start.wait()  # both processes write at once
    try:
        for i in range(count):
            with store.locked():
                current = store.typed_aspects(DATASET).get("globalTags") or GlobalTagsClass(tags=[])
                tags = [*current.tags, TagAssociationClass(tag=f"urn:li:tag:{prefix}{i}")]
                store.write(MetadataChangeProposalWrapper(entityUrn=DATASET, aspect=GlobalTagsClass(tags=tags)))
    finally:
        store.close()


@pytest.mark.slow
def test_two_processes_writing_one_file_lose_nothing(tmp_path: Path) -> None:
    """Each `catalog serve` (or CLI) process has its own store: the writer lock is a file lock, not only a thread's."""
    import multiprocessing

    from datahub.emitter.mcp import MetadataChangeProposalWrapper
    from datahub.metadata.schema_classes import DatasetPropertiesClass

    db = tmp_path / "catalog.db"
    store = LiteStore(db)
    store.write(MetadataChangeProposalWrapper(entityUrn=DATASET, aspect=DatasetPropertiesClass(name="t")))
    store.close()
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(2)
    workers = [context.Process(target=_add_tags, args=(str(db), prefix, 100, start)) for prefix in ("a", "b")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    store = LiteStore(db)
    try:
        tags = {t.tag for t in store.typed_aspects(DATASET)["globalTags"].tags}
    finally:
        store.close()
    assert len(tags) == 200, sorted(tags)
