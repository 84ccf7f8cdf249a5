"""Segments: where in the evaluation data a change hurts most (policies/README.md "Segments").

A segment is one value of a categorical column (object / category / string / bool, 2..max_categories distinct
values among the scored rows) or one quantile bin of a numeric column (numeric_bins bins, edges from the
evaluation rows' finite values, at most ~QUANTILE_ROWS evenly spaced ones); a missing value is a segment of its own.
Only segments holding at least ``min_share`` of the scored rows are tested, and at most ``max_columns`` columns are
examined (the rest are listed with the reason they were skipped).

Per segment: the rate of a per-row event over its scored rows (a flip for classifiers, a moved prediction for
regressors), its Wilson interval, and the one-sided exact binomial p-value of H0 "rate <= band" for the policy's
warning band and for its block band. Each band's p-values are Benjamini-Hochberg adjusted across every segment
tested. ``exceeds`` is "block" when the adjusted block-band p < fdr, else "warning" when the adjusted warning-band
p < fdr, else "none".

Everything is a few vectorised passes per column: factorize (or one comparison per quantile edge), then one
bincount; 1M rows x 20 columns take well under a second (benchmarks/bench_tasks.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from policies import Exceeds, SegmentFinding, SegmentMetric, SegmentRule, SegmentSummary
from tools.experiment.metrics import z_quantile

DEFAULT_SEGMENT_RULE = SegmentRule(min_share=0.05, fdr=0.05, numeric_bins=4, max_columns=20, max_categories=50)
DEFAULT_SEGMENT_BANDS = (0.05, 0.10)  # default-v2's flip_rate / moved_share bands
MAX_FINDINGS = 10
QUANTILE_ROWS = 100_000  # numeric bin edges are computed on at most about this many evenly spaced rows
_MISSING = "<missing>"


@dataclass(frozen=True)
class _Column:
    """One column's segments: a code per scored row and a label per code."""

    codes: np.ndarray
    labels: list[str]
    numeric: bool  # labels are bins ("amount in [10, 50)") rather than values ("region=north")


def benjamini_hochberg(p_values: np.ndarray) -> np.ndarray:
    """BH step-up adjusted p-values, in input order: p_(i) * m / i, made monotone from the largest rank down."""
    p = np.asarray(p_values, dtype=np.float64)
    m = len(p)
    if m == 0:
        return p.copy()
    order = np.argsort(p)
    ranked = p[order] * m / np.arange(1, m + 1)
    adjusted = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out


def wilson_bounds(events: np.ndarray, n: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised Wilson score interval (no continuity correction, as scipy's binomtest "wilson"), 0 / 1 exact at the
    ends."""
    z = z_quantile(confidence)
    k, n = np.asarray(events, dtype=np.float64), np.asarray(n, dtype=np.float64)
    p = k / n
    denom = 1.0 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = np.where(k == 0, 0.0, np.clip(center - half, 0.0, 1.0))
    high = np.where(k == n, 1.0, np.clip(center + half, 0.0, 1.0))
    return low, high


def binomial_greater_p(events: np.ndarray, n: np.ndarray, rate: float) -> np.ndarray:
    """One-sided exact binomial p-value of H0 "rate <= `rate`": P(X >= events) for X ~ Bin(n, rate), i.e.
    scipy.stats.binomtest(events, n, rate, alternative="greater").pvalue, vectorised."""
    from scipy.stats import binom

    return np.asarray(binom.sf(np.asarray(events) - 1, np.asarray(n), rate), dtype=np.float64)


def _categorical(series: pd.Series) -> _Column:
    # The whole column is factorized: an Arrow-backed string column (pandas' default string dtype) is
    # dictionary-encoded in place instead of being copied into Python objects first.
    all_codes, uniques = pd.factorize(series, use_na_sentinel=True)
    codes = np.asarray(all_codes)
    missing = codes < 0
    if missing.any():  # missing values are a segment of their own: a change can hurt exactly those rows
        codes = np.where(missing, len(uniques), codes)
    return _Column(codes=codes, labels=[*(str(u) for u in uniques), _MISSING], numeric=False)


def _numeric(values: np.ndarray, bins: int) -> _Column | str:
    v = values.astype(np.float64, copy=False)
    finite = np.isfinite(v)
    all_finite = bool(finite.all())
    if not all_finite and not finite.any():
        return "no finite value"
    kept = v if all_finite else v[finite]
    # Segment edges need not be exact quantiles: above QUANTILE_ROWS they come from evenly spaced rows (no seed),
    # which moves a bin's share by well under a percent point and saves a partition of every row per column.
    step = max(1, len(kept) // QUANTILE_ROWS)
    edges = np.unique(np.quantile(kept[::step], np.linspace(0.0, 1.0, bins + 1)[1:-1]))
    lows = [float(np.min(kept)), *edges.tolist()]
    highs = [*edges.tolist(), float(np.max(kept))]
    labels = [f"[{lo:.4g}, {hi:.4g})" for lo, hi in zip(lows[:-1], highs[:-1], strict=True)]
    labels.append(f"[{lows[-1]:.4g}, {highs[-1]:.4g}]")
    # The smallest integer type that holds `2 * code + 1` (`_scored` pairs codes with events): int8 codes make
    # these passes ~5x faster than int64 ones.
    dtype = np.min_scalar_type(-(2 * len(labels) + 3))
    codes = np.zeros(len(v), dtype=dtype)
    for edge in edges:  # the number of edges <= value, as searchsorted(side="right"), by one pass per edge
        np.add(codes, v >= edge, out=codes, casting="unsafe")
    if not all_finite:
        codes = np.where(finite, codes, np.asarray(len(labels), dtype=dtype))
        labels.append(_MISSING)
    return _Column(codes=codes, labels=labels, numeric=True)


def is_categorical(dtype: Any) -> bool:
    """Segmented by value (not binned): booleans, categoricals, strings and objects."""
    return (
        pd.api.types.is_bool_dtype(dtype)
        or isinstance(dtype, pd.CategoricalDtype)
        or pd.api.types.is_object_dtype(dtype)
        or pd.api.types.is_string_dtype(dtype)
    )


def _group(series: pd.Series, rule: SegmentRule) -> _Column | str:
    dtype = series.dtype
    if is_categorical(dtype):
        return _categorical(series)
    if pd.api.types.is_numeric_dtype(dtype):
        return _numeric(series.to_numpy(), rule.numeric_bins)
    return f"dtype {dtype} is neither categorical nor numeric"


class SegmentGroups:
    """Each evaluation row's segment, per column of ``frame`` (or why the column cannot be segmented).

    Groups depend on the evaluation data alone, not on the mutation or on which rows fail, so `prepare` can run
    while the model scores (tools/experiment/measure.py); `segment_analysis` then narrows them to the scored rows.
    A column is grouped on first use otherwise. Numeric bin edges come from every row with a finite value."""

    def __init__(self, frame: pd.DataFrame, rule: SegmentRule = DEFAULT_SEGMENT_RULE) -> None:
        self.frame = frame
        self.rule = rule
        self._columns: dict[str, _Column | str] = {}

    def column(self, name: str) -> _Column | str:
        if name not in self._columns:
            self._columns[name] = _group(self.frame[name], self.rule)
        return self._columns[name]

    def prepare(self) -> SegmentGroups:
        """Group columns in order until `max_columns` of them can be segmented (what an analysis examines when
        every row scores)."""
        usable = 0
        for raw_name in self.frame.columns:
            if usable >= self.rule.max_columns:
                break
            usable += isinstance(self.column(str(raw_name)), _Column)
        return self


def _scored(
    column: _Column | str, ok: np.ndarray, every: bool, hit: np.ndarray, max_categories: int
) -> tuple[_Column, np.ndarray, np.ndarray] | str:
    """The column, its scored rows per code and events per code; or why it is not segmented there."""
    if isinstance(column, str):
        return column
    codes = column.codes if every else column.codes[ok]
    # One bincount of (code, event) pairs: ~3x faster than counting the rows, then indexing the events' codes.
    pairs = np.bincount(codes * 2 + hit, minlength=2 * len(column.labels))
    events = pairs[1::2]
    size = pairs[0::2] + events
    present = int(np.count_nonzero(size))
    if present < 2:
        return "a single value"
    if not column.numeric and present > max_categories:
        return f"{present} distinct values (more than {max_categories}: identifier-like)"
    return column, size, events


def _label(column: str, label: str, numeric: bool) -> str:
    if label == _MISSING:
        return f"{column} is missing"
    return f"{column} in {label}" if numeric else f"{column}={label}"


def segment_analysis(
    frame: pd.DataFrame,
    ok: np.ndarray,
    events: np.ndarray,
    *,
    metric: SegmentMetric,
    bands: tuple[float, float] = DEFAULT_SEGMENT_BANDS,
    rule: SegmentRule = DEFAULT_SEGMENT_RULE,
    confidence: float = 0.95,
    groups: SegmentGroups | None = None,
) -> SegmentSummary:
    """Segment the scored rows (``ok``, over all rows of ``frame``) by the per-scored-row bool ``events``.
    ``groups``: the frame's SegmentGroups under the same rule, if already prepared."""
    ok = np.asarray(ok, dtype=bool)
    hit = np.asarray(events, dtype=bool)
    if len(frame) != len(ok):
        raise ValueError(
            f"segments_frame has {len(frame)} rows but the metrics have {len(ok)}; pass the evaluation rows"
        )
    if int(ok.sum()) != len(hit):
        raise ValueError(f"{len(hit)} events for {int(ok.sum())} scored rows: pass one event per scored row")
    warning, block = bands
    n_scored = len(hit)
    every = n_scored == len(ok)
    if groups is None:
        groups = SegmentGroups(frame, rule)
    elif groups.frame is not frame or groups.rule != rule:
        raise ValueError("the segment groups were prepared for another frame or rule; prepare them for this one")
    examined: list[str] = []
    skipped: dict[str, str] = {}
    names: list[tuple[str, str]] = []
    counts: list[np.ndarray] = []
    hits: list[np.ndarray] = []
    for raw_name in frame.columns:
        name = str(raw_name)
        if len(examined) >= rule.max_columns:
            skipped[name] = f"column limit reached (segments.max_columns = {rule.max_columns})"
            continue
        column = groups.column(name) if n_scored else "no scored rows"
        scored = _scored(column, ok, every, hit, rule.max_categories)
        if isinstance(scored, str):
            skipped[name] = scored
            continue
        examined.append(name)
        column, size, flipped = scored
        for code in np.flatnonzero(size >= rule.min_share * n_scored):
            names.append((name, _label(name, column.labels[code], column.numeric)))
            counts.append(size[code])
            hits.append(flipped[code])
    method = (
        f"categorical columns (2-{rule.max_categories} values), numeric columns in {rule.numeric_bins} quantile bins, "
        f"at most {rule.max_columns} columns; segments >= {rule.min_share:g} of scored rows; Wilson interval; "
        "one-sided exact binomial p (H0: rate <= band) for the warning and the block band; "
        "Benjamini-Hochberg across all segments tested, per band"
    )
    findings: list[SegmentFinding] = []
    if names:
        n, k = np.asarray(counts), np.asarray(hits)
        low, high = wilson_bounds(k, n, confidence)
        p_warn, p_block = binomial_greater_p(k, n, warning), binomial_greater_p(k, n, block)
        adj_warn, adj_block = benjamini_hochberg(p_warn), benjamini_hochberg(p_block)
        overall = float(hit.mean())
        for i, (column_name, segment) in enumerate(names):
            exceeds: Exceeds = "block" if adj_block[i] < rule.fdr else "warning" if adj_warn[i] < rule.fdr else "none"
            findings.append(
                SegmentFinding(
                    column=column_name, segment=segment, n=int(n[i]), share=float(n[i] / n_scored), metric=metric,
                    value=float(k[i] / n[i]), ci_low=float(low[i]), ci_high=float(high[i]), overall_value=overall,
                    p_value=float(p_warn[i]), p_adjusted=float(adj_warn[i]), exceeds=exceeds, events=int(k[i]),
                    p_value_block=float(p_block[i]), p_adjusted_block=float(adj_block[i]),
                )
            )  # fmt: skip
    rank = {"block": 2, "warning": 1, "none": 0}
    # Worst first: what the policy acts on (credibly above a band), then the highest rate; ties by the smaller p.
    findings.sort(key=lambda f: (-rank[f.exceeds], -f.value, f.p_value, f.segment))
    return SegmentSummary(
        columns_examined=examined,
        columns_skipped=skipped,
        segments_tested=len(names),
        min_share=rule.min_share,
        method=method,
        worst=findings[0] if findings else None,
        findings=findings[:MAX_FINDINGS],
        warning_band=warning,
        block_band=block,
        fdr=rule.fdr,
    )
