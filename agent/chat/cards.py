"""A run in the chat: the verdict card (verdicts, each task's metrics with their intervals, the worst segments,
reasons, evidence paths, what approving would write), the run's plots and files, the approval question and the
publication result. The metric tables are in ``tables``."""

from __future__ import annotations

from pathlib import Path

from agent.chat.messages import plain
from agent.chat.tables import metric_tables
from agent.state import ApprovalRequest
from policies import ModelMetrics, Verdict
from tools.evidence.formats import pct
from tools.evidence.schema import Evidence, PublicationRecord
from tools.evidence.store import EVIDENCE_FILE, REPORT_FILE, runs_dir
from tools.evidence.task_text import SEGMENT_METRIC_NAMES
from tools.evidence.task_views import task_view


def step_line(m: ModelMetrics | None) -> str:
    """One line per model for the chat's steps: the task's headline numbers and, when segmented, the worst one."""
    if m is None:
        return "not measured"
    line = task_view(m).short()
    worst = m.segments.worst if m.segments is not None else None
    if worst is not None:
        metric = SEGMENT_METRIC_NAMES.get(worst.metric, worst.metric)
        line += f"; worst segment {worst.segment}: {metric} {pct(worst.value, 1)}"
    return line


def run_files(home: Path, evidence: Evidence) -> tuple[list[Path], Path, Path]:
    """(plots, evidence.json, report.md) of a run folder; plots that are missing on disk are left out."""
    folder = runs_dir(home) / evidence.run_id
    plots = [folder / name for model in evidence.models for name in model.plots.values()]
    return [p for p in plots if p.is_file()], folder / EVIDENCE_FILE, folder / REPORT_FILE


def verdict_card(home: Path, evidence: Evidence, request: ApprovalRequest | None = None) -> str:
    """Markdown: overall and per-model verdicts, metrics with 95% intervals, the reasons, the evidence paths
    and, when approval is pending, exactly what approving would write."""
    req = evidence.request
    dataset = req.dataset_urn.split(",")[1] if req.dataset_urn.count(",") >= 2 else req.dataset_urn
    confidence = next((m.metrics.confidence for m in evidence.models if m.metrics), 0.95)
    lines = [
        f"## Verdict: {evidence.verdict}",
        f"**Change tested:** {plain(evidence.plan.description)} on `{dataset}.{req.field}` "
        f"· policy {plain(evidence.policy.name)} v{evidence.policy.version} · run `{evidence.run_id}`",
    ]
    lines += metric_tables(evidence.models, confidence)
    reasons = [
        f"- **{plain(model.name)}** {reason.severity}: {plain(reason.message)}"
        for model in evidence.models
        for reason in model.reasons
        if reason.severity != Verdict.PASS
    ] or [f"- {plain(reason)}" for reason in evidence.verdict_reasons]
    lines += ["", "**Why**", *reasons]
    if evidence.not_tested:
        lines += ["", "**Not tested**", *(f"- {plain(n.name)}: {plain(n.reason)}" for n in evidence.not_tested)]
    if evidence.failures:
        lines += ["", "**Failures**", *(f"- {f.stage}: {plain(f.message)}" for f in evidence.failures)]
    if evidence.coverage is not None:
        lines += ["", "**Coverage**", *(f"- {plain(line)}" for line in evidence.coverage.lines())]
    _, evidence_json, report = run_files(home, evidence)
    lines += ["", f"**Evidence:** `{evidence_json}` · **Report:** `{report}`"]
    if request is not None:
        lines += ["", *approval_lines(request)]
    return "\n".join(lines)


def approval_lines(request: ApprovalRequest) -> list[str]:
    """What approving publishes: the verdict of which change (the plan in one sentence, so a wrong plan is caught
    by the person approving it), then every write."""
    head = f"**Approving publishes the verdict {request.verdict}**"
    if request.change_tested:
        head += f" **of the change tested:** {plain(request.change_tested)}"
    return [head, "", "**Approving writes to DataHub:**", *(f"- {plain(write)}" for write in request.writes)]


def approval_question(request: ApprovalRequest) -> str:
    """The question asked with the Approve / Reject buttons: the verdict and the change tested, next to them."""
    question = f"Publish the verdict **{request.verdict}** to DataHub (tag and impact document)?"
    if request.change_tested:
        question += f"\n\n**Change tested:** {plain(request.change_tested)}"
    return question


def publication_markdown(record: PublicationRecord | None) -> str:
    if record is None or record.status == "not_requested":
        return "Nothing was published."
    if record.status == "published":
        tags = ", ".join(f"`{tag}` on `{urn}`" for urn, tag in record.tags.items())
        return f"**Published** by {plain(record.decided_by or 'unknown')}: {tags}; document `{record.document_urn}`."
    if record.status == "rejected":
        return f"**Rejected** by {plain(record.decided_by or 'unknown')}: nothing was written to DataHub."
    if record.status == "failed":
        return (
            f"**Publication failed:** {plain(record.message or 'no reason recorded')}. `provenance publish` retries it."
        )
    return f"Publication {record.status}."
