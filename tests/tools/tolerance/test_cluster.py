"""A tolerance scan on a real local Dask cluster of 2 worker processes gives exactly the in-process scan, and a
cluster that is not there is a clear error, not a hang."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from distributed import LocalCluster

from agent.cli.catalog import discover
from policies import load_policy
from seed.catalog import POSTGRES_TABLE_URN
from tools.runtime.cluster import CLUSTER_ENV, ClusterError, DaskExecutor
from tools.settings import ProvenanceSettings, load_settings
from tools.tolerance.scan import scan, scan_executor

pytestmark = pytest.mark.slow
AXES = ["scale_down", "nulls"]


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as running:
        yield running


def test_the_cluster_scan_equals_the_in_process_scan(
    settings: ProvenanceSettings, cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    found, _, _ = asyncio.run(discover(settings, POSTGRES_TABLE_URN, "amount"))
    base = settings.lite_db.parent
    here = scan(found, base, load_policy(), AXES)
    monkeypatch.setenv(CLUSTER_ENV, cluster.scheduler_address)
    address = load_settings().cluster  # PROVENANCE_CLUSTER, read with every other setting
    assert address == cluster.scheduler_address and isinstance(scan_executor(address), DaskExecutor)
    there = scan(found, base, load_policy(), AXES, cluster=address)
    assert [m.model_dump(exclude={"axes"}) for m in there.models] == [
        m.model_dump(exclude={"axes"}) for m in here.models
    ]
    for near, far in zip(here.models, there.models, strict=True):
        assert [a.axis for a in far.axes] == ["nulls", "scale_down"]
        assert [a.model_dump() for a in far.axes] == [a.model_dump() for a in near.axes]  # every dose, every verdict
    assert there.experiments == here.experiments > 0
    assert len(cluster.scheduler_info["workers"]) == 2


def test_an_unreachable_cluster_says_what_to_do() -> None:
    executor = DaskExecutor("tcp://127.0.0.1:9", timeout_seconds=2)  # nothing listens on the discard port

    async def run() -> None:
        try:
            await executor.run(len, [1])
        finally:
            await executor.aclose()

    with pytest.raises(ClusterError, match="no Dask scheduler answered at tcp://127.0.0.1:9.*unset PROVENANCE_CLUSTER"):
        asyncio.run(run())
