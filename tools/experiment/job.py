"""One production model's experiment as one job for the executor: prepare, run, draw its plots.

Jobs of several models (and of several conversations) run at once in worker threads, so what they share must be
thread-safe: the baseline cache computes each key once (`SharedBaselineCache`), and plots render under
tools/evidence/plots.py's lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from policies import Policy
from tools.catalog.discovery import AffectedModel
from tools.evidence.schema import ModelEvidence
from tools.experiment.measure import measure_prepared
from tools.experiment.prepare import prepare_model
from tools.experiment.runner import BaselineCache
from tools.mutations import Mutation


class SharedBaselineCache(BaselineCache):
    """A `BaselineCache` for concurrent jobs: one lock per key, so two jobs on the same (artifact, eval data)
    compute the baseline once and the second waits for it; jobs on different keys do not wait for each other."""

    def __init__(self) -> None:
        super().__init__()
        self._guard = threading.Lock()
        self._locks: dict[tuple[str, str], threading.Lock] = {}

    def __reduce__(self) -> tuple[Callable[[], SharedBaselineCache], tuple[()]]:
        # Sent to a worker process, the cache becomes that process's own (locks and arrays do not cross).
        return (process_cache, ())

    def get_or_compute(self, key: tuple[str, str], compute: Callable[[], np.ndarray]) -> tuple[np.ndarray, bool]:
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            return super().get_or_compute(key, compute)


_PROCESS_CACHE: SharedBaselineCache | None = None


def process_cache() -> SharedBaselineCache:
    """This process's baseline cache (one per experiment worker process)."""
    global _PROCESS_CACHE
    if _PROCESS_CACHE is None:
        _PROCESS_CACHE = SharedBaselineCache()
    return _PROCESS_CACHE


def measure_model(
    model: AffectedModel,
    mutation: Mutation,
    base_dir: Path,
    staging: Path,
    cache: BaselineCache,
    policy: Policy | None = None,
) -> ModelEvidence:
    """The model's evidence, its plots written into `staging`. Binding problems and failed baselines make it
    INCOMPLETE (as `prepare_model` and `measure_prepared` decide); a plan that does not fit the data raises PlanError.
    `policy` says how to measure (regression tolerance, segments; `measure_prepared`), never the verdict."""
    from tools.evidence.build import slug

    prepared = prepare_model(model, mutation, base_dir)
    if isinstance(prepared, ModelEvidence):
        return prepared
    test = measure_prepared(prepared, mutation, cache, policy)
    if test.arrays is not None:
        test.evidence.plots = test.arrays.write_plots(staging, slug(test.evidence.name))
    return test.evidence
