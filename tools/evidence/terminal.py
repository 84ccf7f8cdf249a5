"""Terminal rendering of an assessment result (the report.md is the full version): each model's own task metrics
(AUC and flips for a binary classifier, errors and moved predictions for a regressor, argmax flips, accuracy and
macro-F1 for a multiclass classifier) and its worst segment."""

from __future__ import annotations

from pathlib import Path

from policies import ModelMetrics
from tools.evidence.formats import pct
from tools.evidence.schema import Evidence
from tools.evidence.task_text import segment_line
from tools.evidence.task_views import task_view


def metrics_line(m: ModelMetrics) -> str:
    """The model's metrics on one line (its worst segment goes on the next, see ``metrics_lines``)."""
    return task_view(m).line(ascii_only=True) + f"; failures {pct(m.failure_rate, 1)} (n={m.n})"


def render_evidence(ev: Evidence, run_dir: Path) -> str:
    """The run as `provenance assess` prints it; `run_dir` is where its report.md is."""
    lines = [f"Verdict: {ev.verdict}   (run {ev.run_id}, policy {ev.policy.name} v{ev.policy.version})"]
    # A model's reasons are printed in its own section below; the summary keeps what concerns the whole run
    models = tuple(f"{m.name}: " for m in ev.models)
    lines += [f"  - {reason}" for reason in ev.verdict_reasons if not reason.startswith(models)]
    lines += [f"  - {m.name}: {m.verdict}" for m in ev.models]
    lines += [f"Published tolerance: {note}" for note in ev.tolerance_notes]
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
