"""`provenance diff` in words: the sticky pull-request comment (`--markdown`, the same shape as `check`'s: the
verdict and the coverage, k of n production models measured, on its first line) and the terminal's text."""

from __future__ import annotations

from policies import pct
from tools.diff.schema import DiffEvidence, ModelDiff, Sides
from tools.evidence.task_views import task_view


def _rows(s: Sides) -> str:
    if s.base_rows is None or s.head_rows is None:
        return "rows not counted"
    gone = f"{s.only_base:,} gone ({pct((s.only_base or 0) / s.base_rows if s.base_rows else 0.0, 1)})"
    new = f"{s.only_head:,} new ({pct((s.only_head or 0) / s.base_rows if s.base_rows else 0.0, 1)})"
    size = f", {s.sample_bytes / 1e6:.1f} MB read" if s.sample_bytes is not None else ""
    return f"{s.base_rows:,} rows → {s.head_rows:,}; {gone}, {new}; {s.sampled or 0:,} paired rows scored{size}"


def _headline(m: ModelDiff) -> str:
    if m.metrics is None:
        return "not measured"
    return task_view(m.metrics).short()


def _worst(m: ModelDiff) -> str:
    if m.verdict == "PASS":
        return f"every rule passed ({len(m.reasons)} checked)"
    ranked = sorted(m.reasons, key=lambda r: -r.severity.severity)
    return ranked[0].message if ranked else ""


def markdown(evidence: DiffEvidence) -> str:
    n = len(evidence.models)
    lines = [
        f"**Provenance diff: {evidence.verdict}** — {evidence.measured} of {n} production "
        f"model{'s' if n != 1 else ''} measured on the rows both sides build",
        "",
        f"Base: {evidence.base_label}; head: {evidence.head_label}; warehouse {evidence.dialect}; policy "
        f"{evidence.policy_name} v{evidence.policy_version}; up to {evidence.rows_limit:,} rows per relation, "
        f"sampled by a hash of the key (seed {evidence.seed}).",
        "",
        "| Relation (base → head) | Key | Rows |",
        "|---|---|---|",
        *(f"| `{s.base}` → `{s.head}` | {', '.join(s.key)} ({s.key_basis}) | {_rows(s)} |" for s in evidence.datasets),
    ]
    if evidence.models:
        lines += ["", "| Model | Verdict | On the paired rows | Worst reason |", "|---|---|---|---|"]
        lines += [f"| {m.name} | **{m.verdict}** | {_headline(m)} | {_worst(m)} |" for m in evidence.models]
    else:
        lines += ["", "No production model reads these datasets" + (
            " (the whole lineage graph was read)." if evidence.coverage_complete else "; the lineage could not be "
            "read whole, so this is INCOMPLETE."
        )]  # fmt: skip
    for m in evidence.models:
        changed = [c for c in m.columns if c.changed]
        if changed:
            lines += ["", f"**{m.name}** reads columns that changed:", *(f"- {c.line()}" for c in changed)]
        elif m.columns:
            lines += ["", f"**{m.name}**: none of the {len(m.columns)} columns it reads changed on the paired rows."]
    if evidence.readings:
        lines += ["", "**What the data shows** (the changed datasets' columns on the paired rows):"]
        lines += [f"- {r.line()}" for r in evidence.readings]
    if not evidence.coverage_complete:
        lines += ["", "Coverage: INCOMPLETE", *(f"- {line}" for line in evidence.coverage_lines)]
    lines += ["", f"Evidence: run `{evidence.run_id}`."]
    return "\n".join(lines) + "\n"
