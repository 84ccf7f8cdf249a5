"""Scale of the catalog: the embedded catalog grown to thousands of entities, discovery through the MCP server.

The demo catalog (written with the DataHub SDK) is grown to 10,000 entities with generated pipelines: per chain
a Kafka topic -> Postgres table -> Feast feature view with column lineage (fineGrainedLineages), four MLFeatures
and one MLModel (every other one in production), plus hub tables that aggregate 50 tables each. The bulk is
written straight into the DataHub Lite table in one WAL transaction, in exactly the rows `SqlBackedLite.write`
produces (the aspect JSON comes from the SDK's own `to_obj`), because the SDK writes one aspect per transaction.

The endpoint runs in a process of its own so its memory is its own: figures are the index build time (the
endpoint's start), its resident memory (VmRSS, and the peak VmHWM after the queries) next to the same process on
the demo catalog, and the median / p95 latency of `Discoverer.discover` through MCP, plus keyword search, which
scans the aspects (no search index in the embedded catalog).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import datahub.metadata.schema_classes as m
import pytest
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.metadata.urns import DatasetUrn, MlFeatureUrn, MlModelUrn

from seed.catalog import FEATURE_TABLE_DATASET_URN, FRAUD_MODEL_URN, POSTGRES_TABLE_URN, REVIEW_MODEL_URN
from seed.catalog_builders import Column, ColumnKind, schema_metadata, upstream_lineage
from tests.reliability.common import fresh_home, percentile, settings_for
from tools.catalog.column_paths import UNREADABLE_TRANSFORM
from tools.catalog.datahub import CatalogReader
from tools.catalog.lineage_walk import Discoverer
from tools.catalog.session import McpServerSpec, mcp_session
from tools.embedded.store import SQLITE_OPTIONS

REPO = Path(__file__).resolve().parents[2]
COLUMNS = [f"c{k}" for k in range(6)]
FEATURES = COLUMNS[:4]
HUB_SIZE = 10


def raw_urn(i: int) -> str:
    return str(DatasetUrn("kafka", f"scale.raw_{i}", "PROD"))


def clean_urn(i: int) -> str:
    return str(DatasetUrn("postgres", f"scale.public.clean_{i}", "PROD"))


def features_urn(i: int) -> str:
    return str(DatasetUrn("feast", f"scale_features.view_{i}", "PROD"))


def feature_urn(i: int, column: str) -> str:
    return str(MlFeatureUrn(f"scale_features.view_{i}", f"f_{column}"))


def model_urn(i: int) -> str:
    return str(MlModelUrn("mlflow", f"scale_model_{i}", "PROD"))


def hub_urn(h: int) -> str:
    return str(DatasetUrn("postgres", f"scale.public.hub_{h}", "PROD"))


def _chain(i: int) -> list[MetadataChangeProposalWrapper]:
    def dataset(urn: str, platform: str, name: str, columns: list[str], *extra: m._Aspect) -> list[m._Aspect]:  # noqa: ARG001
        cols = [Column(c, "number", "double", f"column {c} of {name}") for c in columns]
        return [
            m.DatasetPropertiesClass(name=name, description=f"generated {name}"),
            schema_metadata(platform, name, cols),
            *extra,
        ]

    feature_columns = [f"f_{c}" for c in FEATURES]
    aspects: list[tuple[str, m._Aspect]] = []
    for urn, aspect in (
        *((raw_urn(i), a) for a in dataset(raw_urn(i), "kafka", f"scale.raw_{i}", COLUMNS)),
        *(
            (clean_urn(i), a)
            for a in dataset(
                clean_urn(i),
                "postgres",
                f"scale.public.clean_{i}",
                COLUMNS,
                upstream_lineage(raw_urn(i), clean_urn(i), [(c, c) for c in COLUMNS]),
            )
        ),
        *(
            (features_urn(i), a)
            for a in dataset(
                features_urn(i),
                "feast",
                f"scale_features.view_{i}",
                feature_columns,
                upstream_lineage(clean_urn(i), features_urn(i), [(c, f"f_{c}") for c in FEATURES]),
            )
        ),
    ):
        aspects.append((urn, aspect))
    for column in FEATURES:
        aspects.append(
            (feature_urn(i, column), m.MLFeaturePropertiesClass(sources=[features_urn(i)], description=f"f_{column}"))
        )
    aspects.append(
        (
            model_urn(i),
            m.MLModelPropertiesClass(
                name=f"scale_model_{i}",
                description="generated model",
                mlFeatures=[feature_urn(i, c) for c in FEATURES],
                customProperties={"mlflow.stage": "Production" if i % 2 == 0 else "Staging"},
            ),
        )
    )
    return [MetadataChangeProposalWrapper(entityUrn=urn, aspect=aspect) for urn, aspect in aspects]


def _hub(h: int, members: list[int]) -> list[MetadataChangeProposalWrapper]:
    lineage = m.UpstreamLineageClass(
        upstreams=[m.UpstreamClass(dataset=clean_urn(i), type=m.DatasetLineageTypeClass.TRANSFORMED) for i in members],
        fineGrainedLineages=[
            m.FineGrainedLineageClass(
                upstreamType=m.FineGrainedLineageUpstreamTypeClass.FIELD_SET,
                upstreams=[f"urn:li:schemaField:({clean_urn(i)},c0)" for i in members],
                downstreamType=m.FineGrainedLineageDownstreamTypeClass.FIELD,
                downstreams=[f"urn:li:schemaField:({hub_urn(h)},total)"],
                transformOperation="SUM",
            )
        ],
    )
    name = f"scale.public.hub_{h}"
    return [
        MetadataChangeProposalWrapper(entityUrn=hub_urn(h), aspect=aspect)
        for aspect in (
            m.DatasetPropertiesClass(name=name),
            schema_metadata("postgres", name, [Column("total", "number", "double")]),
            lineage,
        )
    ]


FAN_OUT = 12  # more datasets than the MCP server answers in one get_aspect_history call (10)
WIDE_COLUMNS = 80  # an upstreamLineage aspect over the MCP server's 12,000-character value limit
FAN_SRC = str(DatasetUrn("kafka", "scale.fan_source", "PROD"))
WIDE_SRC = str(DatasetUrn("postgres", "scale.public.wide_source", "PROD"))
WIDE_VIEW = str(DatasetUrn("feast", "scale_features.wide_view", "PROD"))
WIDE_MODEL = str(MlModelUrn("mlflow", "scale_wide_model", "PROD"))


def fan_view_urn(j: int) -> str:
    return str(DatasetUrn("feast", f"scale_features.fan_view_{j}", "PROD"))


def fan_model_urn(j: int) -> str:
    return str(MlModelUrn("mlflow", f"scale_fan_model_{j}", "PROD"))


def _feature_and_model(view: str, namespace: str, column: str, model: str) -> list[MetadataChangeProposalWrapper]:
    feature = str(MlFeatureUrn(namespace, column))
    return [
        MetadataChangeProposalWrapper(entityUrn=feature, aspect=m.MLFeaturePropertiesClass(sources=[view])),
        MetadataChangeProposalWrapper(
            entityUrn=model,
            aspect=m.MLModelPropertiesClass(
                name=model.split(",")[1], mlFeatures=[feature], customProperties={"mlflow.stage": "Production"}
            ),
        ),
    ]


def _special() -> list[MetadataChangeProposalWrapper]:
    """A column feeding 12 feature views, and a feature view too wide to read its column lineage through MCP."""
    number: ColumnKind = "number"
    mcps = []
    source_columns = [Column(c, number, "double") for c in COLUMNS]
    mcps += [
        MetadataChangeProposalWrapper(entityUrn=FAN_SRC, aspect=a)
        for a in (m.DatasetPropertiesClass(name="scale.fan_source"), schema_metadata("kafka", "fan", source_columns))
    ]
    for j in range(FAN_OUT):
        view = fan_view_urn(j)
        mcps += [
            MetadataChangeProposalWrapper(entityUrn=view, aspect=a)
            for a in (
                m.DatasetPropertiesClass(name=f"scale_features.fan_view_{j}"),
                schema_metadata("feast", f"fan_view_{j}", [Column("f_c0", number, "FLOAT64")]),
                upstream_lineage(FAN_SRC, view, [("c0", "f_c0")]),
            )
        ]
        mcps += _feature_and_model(view, f"scale_features.fan_view_{j}", "f_c0", fan_model_urn(j))
    wide = [f"w{k}" for k in range(WIDE_COLUMNS)]
    lineage = upstream_lineage(WIDE_SRC, WIDE_VIEW, [(c, f"f{c}") for c in wide])
    assert lineage.fineGrainedLineages is not None
    lineage.fineGrainedLineages[0].transformOperation = "LOG"  # w0 -> fw0 is not a copy
    mcps += [
        MetadataChangeProposalWrapper(entityUrn=WIDE_SRC, aspect=a)
        for a in (
            m.DatasetPropertiesClass(name="scale.public.wide_source"),
            schema_metadata("postgres", "wide_source", [Column(c, number, "double") for c in wide]),
        )
    ]
    mcps += [
        MetadataChangeProposalWrapper(entityUrn=WIDE_VIEW, aspect=a)
        for a in (
            m.DatasetPropertiesClass(name="scale_features.wide_view"),
            schema_metadata("feast", "wide_view", [Column(f"f{c}", number, "FLOAT64") for c in wide]),
            lineage,
        )
    ]
    return mcps + _feature_and_model(WIDE_VIEW, "scale_features.wide_view", "fw0", WIDE_MODEL)


def entity_count(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(DISTINCT urn) FROM metadata_aspect_v2 WHERE version = 0").fetchone()[0])


def grow_catalog(db: Path, entities: int) -> tuple[int, int, float]:
    """Add generated chains until the catalog holds `entities`; returns (chains, entities, seconds)."""
    started = time.perf_counter()
    special = _special()
    existing = entity_count(db) + len({mcp.entityUrn for mcp in special})
    per_chain = 3 + len(FEATURES) + 1
    chains = 0
    while existing + chains * per_chain + -(-chains // HUB_SIZE) < entities:
        chains += 1
    hubs = -(-chains // HUB_SIZE)
    mcps = special + [mcp for i in range(chains) for mcp in _chain(i)]
    mcps += [mcp for h in range(hubs) for mcp in _hub(h, list(range(h * HUB_SIZE, min(chains, (h + 1) * HUB_SIZE))))]
    now = int(time.time() * 1000)
    system = json.dumps({"lastObserved": now, "properties": {"sysVersion": "1"}})
    rows = []
    for mcp in mcps:
        metadata = json.dumps(mcp.to_obj(simplified_structure=True)["aspect"]["json"])
        rows += [(mcp.entityUrn, mcp.aspectName, version, metadata, system, now) for version in (1, 0)]
    conn = sqlite3.connect(db)
    try:
        for pragma, value in SQLITE_OPTIONS.items():
            conn.execute(f"PRAGMA {pragma} = {value}")
        with conn:
            conn.executemany("INSERT INTO metadata_aspect_v2 VALUES (?, ?, ?, ?, ?, ?)", rows)
    finally:
        conn.close()
    return chains, entity_count(db), time.perf_counter() - started


SERVE = """
import json, os, sys, time
from pathlib import Path
from tools.embedded.server import start_embedded_catalog
running = start_embedded_catalog(Path(sys.argv[1]))
print(json.dumps({"url": running.url, "token": running.token, "startup_seconds": running.startup_seconds,
                  "edges": running.gms.store.index.edge_count()}), flush=True)
sys.stdin.read()
running.stop()
"""


@dataclass
class Endpoint:
    url: str
    token: str
    startup_seconds: float
    edges: int
    process: subprocess.Popen[str]

    def memory_mb(self, key: str = "VmRSS") -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(f"{key}:"):
                return int(line.split()[1]) / 1024
        return float("nan")


@contextmanager
def endpoint_process(db: Path) -> Iterator[Endpoint]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "DATAHUB_TELEMETRY_ENABLED": "false"}
    process = subprocess.Popen(
        [sys.executable, "-c", SERVE, str(db)],
        cwd=REPO,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        info = json.loads(process.stdout.readline())
        yield Endpoint(info["url"], info["token"], info["startup_seconds"], info["edges"], process)
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class ScaleFigures:
    entities: int
    chains: int
    generate_seconds: float
    index_edges: int
    index_build_seconds: float
    """The endpoint's start: opening the Lite file and building the lineage index from it."""
    rss_mb: float
    peak_rss_mb: float
    demo_rss_mb: float
    """The same endpoint process on the 40-entity demo catalog."""
    discoveries: int
    discover_median_ms: float
    discover_p95_ms: float
    mcp_calls_per_discovery: float
    search_median_ms: float
    dataset_level_fallbacks: int
    """Discoveries that fell back to dataset-level precision (every field here has column lineage: 0)."""
    wrong_answers: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Sample:
    dataset: str
    field: str
    production: tuple[str, ...]
    """The production models discovery must return, and no other."""
    unknown_transform: bool = False
    """The column edges are unreadable through MCP, so the path must say its transform is unknown."""


def _samples(chains: int, count: int) -> list[Sample]:
    rng = random.Random(7)
    picks = [
        Sample(POSTGRES_TABLE_URN, "amount", (FRAUD_MODEL_URN, REVIEW_MODEL_URN)),
        Sample(POSTGRES_TABLE_URN, "transaction_id", ()),  # feeds no feature, and column lineage says so
        Sample(FEATURE_TABLE_DATASET_URN, "txn_amount", (FRAUD_MODEL_URN, REVIEW_MODEL_URN)),  # the feature's column
        Sample(FAN_SRC, "c0", tuple(sorted(fan_model_urn(j) for j in range(FAN_OUT)))),
        Sample(WIDE_SRC, "w0", (WIDE_MODEL,), unknown_transform=True),
        Sample(WIDE_SRC, "w1", ()),
    ]
    while len(picks) < count:
        i, column = rng.randrange(chains), rng.choice(COLUMNS)
        dataset = rng.choice([raw_urn(i), clean_urn(i)])
        picks.append(Sample(dataset, column, (model_urn(i),) if column in FEATURES and i % 2 == 0 else ()))
    return picks


async def _discover_all(endpoint: Endpoint, home: Path, chains: int, count: int) -> dict[str, object]:
    spec = McpServerSpec(
        endpoint.url, endpoint.token, home / "logs" / "scale-mcp.log", home / "mcp-home", forkserver=_forkserver()
    )
    latencies, calls, wrong, searches, fallbacks = [], [], [], [], 0
    async with mcp_session(spec) as session:
        reader = CatalogReader(session)
        discoverer = Discoverer(reader)
        await discoverer.discover(POSTGRES_TABLE_URN, "amount")  # warm-up: first-call costs are not discovery's
        for sample in _samples(chains, count):
            started = time.perf_counter()
            found = await discoverer.discover(sample.dataset, sample.field)
            latencies.append((time.perf_counter() - started) * 1e3)
            calls.append(found.mcp_calls)
            fallbacks += found.precision != "column"
            production = tuple(sorted(m.urn for m in found.production_models))
            transforms = [t for m in found.production_models for f in m.features for t in f.non_identity_transforms]
            if production != sample.production or (UNREADABLE_TRANSFORM in transforms) != sample.unknown_transform:
                wrong.append(f"{sample.dataset}.{sample.field}: {production} {transforms} (expected {sample})")
        for i in (0, chains // 2, chains - 1):
            started = time.perf_counter()
            await reader.search(f"clean_{i}", filter="entity_type = dataset", num_results=25)
            searches.append((time.perf_counter() - started) * 1e3)
    return {"latencies": latencies, "calls": calls, "wrong": wrong, "searches": searches, "fallbacks": fallbacks}


def measure_scale(
    template: Path, workdir: Path | None = None, entities: int = 10_000, discoveries: int = 40
) -> ScaleFigures:
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        home = fresh_home(template, Path(tmp) / "home")
        db = settings_for(home).lite_db
        with endpoint_process(db) as demo:
            demo_rss = demo.memory_mb()
        chains, total, generate_seconds = grow_catalog(db, entities)
        with endpoint_process(db) as endpoint:
            rss = endpoint.memory_mb()
            found = asyncio.run(_discover_all(endpoint, home, chains, discoveries))
            peak = endpoint.memory_mb("VmHWM")
    latencies = found["latencies"]
    assert isinstance(latencies, list) and isinstance(found["calls"], list) and isinstance(found["searches"], list)
    return ScaleFigures(
        entities=total,
        chains=chains,
        generate_seconds=generate_seconds,
        index_edges=endpoint.edges,
        index_build_seconds=endpoint.startup_seconds,
        rss_mb=rss,
        peak_rss_mb=peak,
        demo_rss_mb=demo_rss,
        discoveries=len(latencies),
        discover_median_ms=statistics.median(latencies),
        discover_p95_ms=percentile(latencies, 95),
        mcp_calls_per_discovery=statistics.mean(found["calls"]),
        search_median_ms=statistics.median(found["searches"]),
        dataset_level_fallbacks=int(found["fallbacks"]),  # type: ignore[call-overload]
        wrong_answers=list(found["wrong"]),  # type: ignore[call-overload]
    )


# The answers at scale; the times and memory at 10,000 entities are measured, not asserted, by
# `scripts/reliability_figures.py --only scale` (docs/performance.md): a timed bound here would fail on a busy machine.
@pytest.mark.slow
def test_discovery_stays_column_precise_in_a_grown_catalog(seeded_template: Path, tmp_path: Path) -> None:
    figures = measure_scale(seeded_template, tmp_path, entities=2_000, discoveries=20)
    assert figures.entities >= 2_000 and figures.chains > HUB_SIZE  # more than one hub table
    assert figures.discoveries == 20
    assert not figures.wrong_answers, figures.wrong_answers  # column-precise at scale too
    assert figures.dataset_level_fallbacks == 0


def _forkserver() -> str | None:
    from tools.settings import load_settings

    return load_settings().forkserver  # the suite's warm fork server (tests/conftest.py), as the product reads it
