"""Doing independent parts of an experiment at once, on two threads.

Inference, the metrics and pandas' Arrow kernels spend most of their time in C code that releases the GIL, and
scikit-learn's inference mostly keeps to one core: work that needs only the evaluation data (the labels, label
codes and segment groups: ~0.15 s per 1M rows) is done on a second thread while the model scores, and the class
PSIs while the rest of the multiclass metrics is computed (benchmarks/bench_tasks.py: the experiment's cost over
raw inference, 1.51x -> ~1.2x for a cheap multiclass model).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

R = TypeVar("R")
S = TypeVar("S")


def alongside(main: Callable[[], R], side: Callable[[], S]) -> tuple[R, S]:
    """``main()`` on this thread and ``side()`` on another meanwhile; both results. An exception from either is
    raised (main's first); when main raises, side still finishes before this returns, so nothing outlives the call."""
    with ThreadPoolExecutor(1, thread_name_prefix="provenance-alongside") as pool:
        future = pool.submit(contextvars.copy_context().run, side)
        result = main()
        return result, future.result()
