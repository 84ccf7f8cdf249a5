"""Terminal rendering of an assessment result (the report.md is the full version): each model's own task metrics
(AUC and flips for a binary classifier, errors and moved predictions for a regressor, argmax flips, accuracy and
macro-F1 for a multiclass classifier) and its worst segment."""

from __future__ import annotations

from pathlib import Path

from policies import ModelMetrics
from tools.evidence.formats import decimal, pct
from tools.evidence.schema import Evidence
from tools.evidence.task_text import multiclass_line, regression_line, segment_line


def metrics_line(m: ModelMetrics) -> str:
    """The model's metrics on one line (its worst segment goes on the next, see ``metrics_lines``)."""
    tail = f"; failures {pct(m.failure_rate, 1)} (n={m.n})"
    if m.task == "regression" and m.regression is not None:
        return regression_line(m.regression, ascii_only=True) + tail
    if m.task == "multiclass" and m.multiclass is not None:
        return multiclass_line(m, m.multiclass, ascii_only=True) + tail
    auc = f"AUC {decimal(m.auc_baseline, 3)} -> {decimal(m.auc_mutated, 3)}"
    if m.auc_p_value is not None:
        auc += f" (delta {decimal(m.auc_delta, 3)}, p={m.auc_p_value:.2g})"
    return (
        f"{auc}; flips {pct(m.flip_rate, 1)} [{pct(m.flip_rate_ci_low, 1)}, {pct(m.flip_rate_ci_high, 1)}]"
        f"; shift mean {decimal(m.prob_shift_mean, 3)} p95 {decimal(m.prob_shift_p95, 3)}; PSI {decimal(m.psi, 3)}"
        + tail
    )


def render_evidence(ev: Evidence, run_dir: Path) -> str:
    """The run as `provenance assess` prints it; `run_dir` is where its report.md is."""
    lines = [f"Verdict: {ev.verdict}   (run {ev.run_id}, policy {ev.policy.name} v{ev.policy.version})"]
    lines += [f"  - {reason}" for reason in ev.verdict_reasons]
    for model in ev.models:
        lines.append(f"\n{model.name}: {model.verdict}")
        if model.experiment:
            lines.append(f"  change: {model.experiment.mutation}; {model.experiment.rows_changed} rows changed")
            lines += [f"  carried through SQL: {d}" for d in model.experiment.derivation]
        if model.metrics:
            lines.append(f"  {metrics_line(model.metrics)}")
            if model.metrics.segments is not None:
                lines.append(f"  {segment_line(model.metrics.segments)}")
        if model.production_marker:
            lines.append(f"  production: {model.production_marker}")
        lines += [f"  [{r.severity}] {r.message}" for r in model.reasons]
    for skipped in ev.not_tested:
        lines.append(f"\nnot tested: {skipped.name} ({skipped.reason})")
    if ev.coverage is not None:
        lines.append("\nCoverage:")
        lines += [f"  {line}" for line in ev.coverage.lines()]
    lines.append(f"\nEvidence: {run_dir}/report.md")
    counted = "MCP calls not counted" if ev.mcp_calls is None else f"{ev.mcp_calls} MCP calls"
    lines.append(f"{counted}; publication: {ev.publication.status}")
    return "\n".join(lines)
