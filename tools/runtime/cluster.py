"""Experiment jobs on a Dask distributed cluster, behind the same `ExperimentExecutor` interface as the thread and
process pools: `PROVENANCE_CLUSTER=<scheduler address>` (e.g. `tcp://10.0.0.5:8786`) sends a tolerance scan's dose
searches there (tools/tolerance/scan.py); unset, they run in this process.

Why Dask rather than Ray: the jobs are plain Python functions over pandas and scikit-learn, which Dask distributed
ships with cloudpickle and runs in ordinary worker processes; it installs from PyPI as pure Python (Ray brings its
own multi-hundred-MB runtime, raylet and object store, for actors and GPUs this work does not use), and a local
cluster of 2 processes starts in seconds on 2 cores, so the tests run a real one.

The workers need Provenance installed (the same version) and must see the files the bindings name (a shared
filesystem, or URIs MLflow can fetch); each verifies an artifact's sha256 before unpickling it, as in-process.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from tools.errors import ServiceFailure

R = TypeVar("R")
CLUSTER_ENV = "PROVENANCE_CLUSTER"


class ClusterError(ServiceFailure):
    """The cluster could not be reached or could not run a job; the message says what to check."""

    service = "cluster"


class DaskExecutor:
    """`run(fn, *args)` submits `fn(*args)` to the cluster at `address` and awaits its result off the event loop."""

    def __init__(self, address: str, timeout_seconds: float = 15.0) -> None:
        self.address = address
        self.timeout_seconds = timeout_seconds
        self._client: Any = None
        self._guard = threading.Lock()

    def _connected(self) -> Any:
        with self._guard:
            if self._client is None:
                try:
                    from distributed import Client
                except ImportError as exc:
                    raise ClusterError(
                        f"{CLUSTER_ENV} is set but Dask distributed is not installed: "
                        "pip install 'provenance[cluster]', or unset it to run in this process"
                    ) from exc
                try:
                    self._client = Client(self.address, timeout=f"{self.timeout_seconds}s", set_as_default=False)
                except (OSError, TimeoutError) as exc:
                    raise ClusterError(
                        f"no Dask scheduler answered at {self.address} ({exc}); start one (`dask scheduler`) "
                        f"and its workers, or unset {CLUSTER_ENV} to run in this process"
                    ) from exc
            return self._client

    async def run(self, fn: Callable[..., R], /, *args: object) -> R:
        client = await asyncio.to_thread(self._connected)
        future = client.submit(fn, *args, pure=False)
        result: R = await asyncio.to_thread(future.result)
        return result

    async def aclose(self) -> None:
        with self._guard:
            client, self._client = self._client, None
        if client is not None:
            await asyncio.to_thread(client.close)

    def warm(self, *, wait: bool = False) -> None:
        """Nothing to start here: the cluster's workers are already running."""
