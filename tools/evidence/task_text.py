"""A model's task metrics in words, shared by report.md, the chat and the terminal: the summary cells of a model of
any task (filled by tools/evidence/task_views.py, which every renderer asks), the regression / multiclass / segment
lines, the per-class rows. Plain text (callers escape it for
Markdown where needed); numbers through ``formats`` so each kind reads the same everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

from policies import ModelMetrics, MulticlassMetrics, RegressionMetrics, SegmentFinding, SegmentSummary
from tools.evidence.formats import NA, decimal, pct, points, pvalue, relative, share_range, sig, signed

SEGMENT_METRIC_NAMES = {"flip_rate": "flip rate", "moved_share": "moved share"}
EXCEEDS_TEXT = {
    "none": "not credibly above the warning band",
    "warning": "credibly above the warning band",
    "block": "credibly above the block band",
}


@dataclass(frozen=True)
class SummaryCells:
    """One model's row of a summary table that mixes tasks."""

    task: str
    quality: str  # the task's quality metric, baseline → mutated
    change: str  # its paired change with the interval
    changed: str  # how many predictions changed: flips, argmax flips, or moved beyond the tolerance
    psi: str


def interval(low: float | None, high: float | None, fmt: str = "pct") -> str:
    """ "(low to high)", as every interval is written (policies/text.py `share_range`), in the given format: "pct",
    "points", "signed" (4 decimals) or "sig" (signed, 4 digits)."""
    if fmt == "pct":
        return f"({share_range(low, high, 2)})"
    if fmt == "points":
        return f"({points(low)} to {points(high)})"
    if fmt == "signed":
        return f"({signed(low)} to {signed(high)})"
    return f"({sig(low, sign=True)} to {sig(high, sign=True)})"


def worst_class(mc: MulticlassMetrics) -> tuple[str, float] | None:
    """The class with the highest flip rate (first in class order on ties); None without classes."""
    if not mc.per_class_flip_rate:
        return None
    name = max(mc.per_class_flip_rate, key=lambda c: mc.per_class_flip_rate[c])
    return name, mc.per_class_flip_rate[name]


def worst_class_psi(mc: MulticlassMetrics) -> tuple[str, float] | None:
    if not mc.per_class_psi:
        return None
    name = max(mc.per_class_psi, key=lambda c: mc.per_class_psi[c])
    return name, mc.per_class_psi[name]


def class_rows(mc: MulticlassMetrics) -> list[tuple[str, str, str]]:
    """(class, flip rate, PSI) per class in the model's class order."""
    return [(c, pct(mc.per_class_flip_rate.get(c)), decimal(mc.per_class_psi.get(c), 3)) for c in mc.classes]


def _symbols(ascii_only: bool) -> tuple[str, str, str]:
    """(arrow, delta, plus-minus): the terminal gets ASCII, as the binary line there always did."""
    return ("->", "delta", "+/-") if ascii_only else ("→", "Δ", "±")


def regression_line(r: RegressionMetrics, *, ascii_only: bool = False) -> str:
    """MAE and RMSE before → after with their paired intervals and relative change, the moved share with its
    tolerance, the prediction PSI."""
    arrow, delta, pm = _symbols(ascii_only)
    return (
        f"MAE {sig(r.mae.baseline)} {arrow} {sig(r.mae.mutated)} ({delta} {sig(r.mae.delta, sign=True)} "
        f"{interval(r.mae.ci_low, r.mae.ci_high, 'sig')}, {relative(r.mae.relative)}); "
        f"RMSE {sig(r.rmse.baseline)} {arrow} {sig(r.rmse.mutated)} ({delta} {sig(r.rmse.delta, sign=True)} "
        f"{interval(r.rmse.ci_low, r.rmse.ci_high, 'sig')}, {relative(r.rmse.relative)}); "
        f"moved {pct(r.moved_share)} {interval(r.moved_share_ci_low, r.moved_share_ci_high)} "
        f"beyond {pm}{sig(r.tolerance)} ({r.tolerance_basis}); prediction PSI {decimal(r.prediction_psi, 3)}"
    )


def multiclass_line(m: ModelMetrics, mc: MulticlassMetrics, *, ascii_only: bool = False) -> str:
    """Argmax flips with the interval, accuracy and macro-F1 before → after with paired intervals, the worst
    class's flip rate and the largest class PSI."""
    arrow, delta, _ = _symbols(ascii_only)
    worst, psi = worst_class(mc), worst_class_psi(mc)
    return (
        f"argmax flips {pct(m.flip_rate)} {interval(m.flip_rate_ci_low, m.flip_rate_ci_high)}; "
        f"accuracy {pct(mc.accuracy.baseline)} {arrow} {pct(mc.accuracy.mutated)} "
        f"({delta} {points(mc.accuracy.delta)} {interval(mc.accuracy.ci_low, mc.accuracy.ci_high, 'points')}); "
        f"macro-F1 {decimal(mc.macro_f1.baseline)} {arrow} {decimal(mc.macro_f1.mutated)} ({delta} "
        f"{signed(mc.macro_f1.delta)} {interval(mc.macro_f1.ci_low, mc.macro_f1.ci_high, 'signed')}); "
        f"worst class {worst[0] + ' flips ' + pct(worst[1]) if worst else NA}; "
        f"class PSI max {decimal(psi[1], 3) + ' (' + psi[0] + ')' if psi else NA}"
    )


def finding_line(f: SegmentFinding) -> str:
    """The segment, its size, its rate with the interval against the overall rate, and the p-value (raw and
    Benjamini-Hochberg adjusted) of the band it is judged against: the block band's once it is above it."""
    metric = SEGMENT_METRIC_NAMES.get(f.metric, f.metric)
    if f.exceeds == "block" and f.p_value_block is not None and f.p_adjusted_block is not None:
        band, p, p_adjusted = "block", f.p_value_block, f.p_adjusted_block
    else:
        band, p, p_adjusted = "warning", f.p_value, f.p_adjusted
    return (
        f"{f.segment} ({pct(f.share, 1)} of rows, n={f.n:,}): {metric} {pct(f.value)} {interval(f.ci_low, f.ci_high)} "
        f"vs {pct(f.overall_value)} overall, p vs {band} band {pvalue(p)} (BH {pvalue(p_adjusted)}), "
        f"{EXCEEDS_TEXT.get(f.exceeds, f.exceeds)}"
    )


def segment_line(s: SegmentSummary) -> str:
    """The worst segment and how many were tested; says so when no segment could be tested."""
    tested = f"{s.segments_tested} segment(s) tested in {len(s.columns_examined)} column(s)"
    if s.worst is None:
        skipped = f", {len(s.columns_skipped)} column(s) skipped" if s.columns_skipped else ""
        return f"segments: no segment of at least {pct(s.min_share, 1)} of rows ({tested}{skipped})"
    return f"worst segment {finding_line(s.worst)}; {tested}"
