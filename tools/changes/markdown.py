"""The pull-request summary of a check: one compact Markdown document for `$GITHUB_STEP_SUMMARY` or a sticky
comment. The first line is the combined verdict; then a table per proposed change (per model: verdict, flip rate
with its interval, the performance metric before -> after with the interval of the change, failures) and a link
to its evidence; the structural and unmapped entries; a footer naming the policy and the Provenance version.

GitHub refuses comments over 65,536 characters, so entries that would not fit are left out with a note saying how
many and where the full result is. The hidden marker lets a workflow find and update its earlier comment.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tools.catalog.resolve import dataset_name
from tools.changes.result import CheckResult, EntryResult, ModelOutcome
from tools.evidence.formats import NA, decimal, pct, share_range, signed
from tools.evidence.task_views import MetricChange

MARKER = "<!-- provenance-gate -->"
COMMENT_LIMIT = 65_536
_FOOTER_ROOM = 1_000  # kept free for the truncation note and the footer
_MAX_REASONS = 3
_MAX_CELL = 300
_SECTIONS = {
    "change": "Proposed changes",
    "structural": "Structural changes (dropped or renamed columns)",
    "unmapped": "Not mappable: review by hand",
}


def render_markdown(
    result: CheckResult,
    *,
    evidence_url_base: str | None = None,
    evidence_artifact: str | None = None,
    link_root: Path | None = None,
    limit: int = COMMENT_LIMIT,
) -> str:
    """The summary, at most `limit` characters. Evidence links are `evidence_url_base/<run_id>/report.md` when a
    base is given (where the runs are served); with `evidence_artifact` (the page of a CI artifact, which is a zip
    download, not served file by file) the report's path inside the artifact and one link to that page; else the
    report's path relative to `link_root` (default: as recorded)."""
    links = EvidenceLinks(evidence_url_base, evidence_artifact, link_root)
    head = [
        f"**{result.verdict}** Provenance check of `{result.file}`: {_counts(result)} (exit code {result.exit_code})"
    ]
    if result.approval is not None and result.published:
        head.append(f"\nVerdicts published to the catalog, approved by {_cell(result.approval.by)}.")
    parts = ["\n".join(head)]
    budget = limit - _FOOTER_ROOM - len(parts[0])
    shown = 0
    for block, entries in _blocks(result, links):
        if len(block) + 2 > budget:
            break  # later blocks would show entries out of order; the note below counts what is missing
        parts.append(block)
        budget -= len(block) + 2
        shown += entries
    hidden = len(result.entries) - shown
    if hidden > 0:
        parts.append(
            f"_{hidden} more entr{'y' if hidden == 1 else 'ies'} not shown: the summary would exceed "
            f"GitHub's {COMMENT_LIMIT:,}-character limit. `provenance check --json` lists every entry._"
        )
    parts.append(_footer(result))
    return "\n\n".join(parts) + "\n"


@dataclass(frozen=True)
class EvidenceLinks:
    url_base: str | None = None
    artifact: str | None = None
    root: Path | None = None


def _blocks(result: CheckResult, links: EvidenceLinks) -> list[tuple[str, int]]:
    """The body in order, as (Markdown block, number of entries it shows)."""
    blocks: list[tuple[str, int]] = []
    for kind, title in _SECTIONS.items():
        entries = [e for e in result.entries if e.kind == kind]
        if not entries:
            continue
        blocks.append((f"### {title}", 0))
        if kind == "unmapped":
            blocks.append((_unmapped_table(entries), len(entries)))
        else:
            blocks += [(_entry(e, links), 1) for e in entries]
    return blocks


def _counts(result: CheckResult) -> str:
    by_verdict: dict[str, int] = {}
    for entry in result.entries:
        by_verdict[entry.verdict] = by_verdict.get(entry.verdict, 0) + 1
    if not result.entries:
        return "no entries, nothing to assess"
    tally = ", ".join(f"{n} {verdict}" for verdict, n in sorted(by_verdict.items()))
    return f"{len(result.entries)} entr{'y' if len(result.entries) == 1 else 'ies'} ({tally})"


def _entry(entry: EntryResult, links: EvidenceLinks) -> str:
    lines = [f"#### **{entry.verdict}** `{_cell(entry.label)}`"]
    context = []
    if entry.dataset:
        context.append(f"dataset `{entry.dataset}`")
    if entry.source is not None:
        context.append(f"from `{entry.source.file}:{entry.source.line}` (column `{entry.source.column}`)")
    if entry.confidence:
        context.append(f"mapping confidence {entry.confidence}")
    if entry.note:
        context.append(f"note: {_cell(entry.note)}")
    if context:
        lines.append(" · ".join(context))
    if entry.models:
        lines.append("")
        lines += _model_table(entry)
    tabled = tuple(f"{m.name}: " for m in entry.models)  # a model's own line repeats its row of the table
    items = [f"- {_cell(reason)}" for reason in entry.reasons if not reason.startswith(tabled)][: _MAX_REASONS + 2]
    items += [f"- not tested: {_cell(item)}" for item in entry.not_tested]
    if items:
        lines += ["", *items]
    link = _evidence_link(entry, links)
    if link:
        lines.append(f"\nEvidence: {link}" + (f" · publication: {entry.publication}" if entry.publication else ""))
    return "\n".join(lines)


def _model_table(entry: EntryResult) -> list[str]:
    if entry.kind == "structural":
        rows = ["| model | verdict | why |", "|---|---|---|"]
        rows += [f"| {_cell(m.name)} | **{m.verdict}** | {_reasons(m)} |" for m in entry.models]
        return rows
    rows = [
        "| model | verdict | flip rate (95% CI) | before → after | change (95% CI) | failures | why |",
        "|---|---|---|---|---|---|---|",
    ]
    for m in entry.models:
        before_after, change = _performance(m.performance)
        why = _reasons(m) if m.verdict != "PASS" else ""
        rows.append(
            f"| {_cell(m.name)} | **{m.verdict}** | {_flip(m)} | {before_after} | {change} | {_failures(m)} | {why} |"
        )
    return rows


def _unmapped_table(entries: list[EntryResult]) -> str:
    rows = ["| verdict | where | column | dataset | why |", "|---|---|---|---|---|"]
    for e in entries:
        where = f"`{e.source.file}:{e.source.line}`" if e.source else ""
        dataset = f"`{dataset_name(e.dataset)}`" if e.dataset else "unresolved"
        rows.append(f"| **{e.verdict}** | {where} | `{_cell(e.field)}` | {dataset} | {_cell('; '.join(e.reasons))} |")
    return "\n".join(rows)


def _flip(m: ModelOutcome) -> str:
    f = m.flip_rate
    if f is None:
        return NA
    interval = f" ({share_range(f.low, f.high)})" if f.low is not None and f.high is not None else ""
    return f"{pct(f.value, 1)}{interval}"


def _performance(p: MetricChange | None) -> tuple[str, str]:
    if p is None:
        return NA, NA
    c = p.change
    interval = f" ({signed(c.ci_low, 3)} to {signed(c.ci_high, 3)})"
    significance = f", p={c.p_value:.2g}" if c.p_value is not None else ""
    return (
        f"{p.name} {decimal(c.baseline, 3)} → {decimal(c.mutated, 3)}",
        f"{signed(c.delta, 3)}{interval}{significance}",
    )


def _failures(m: ModelOutcome) -> str:
    if m.failures is None:
        return NA
    return f"{m.failures} of {m.rows}" if m.rows is not None else str(m.failures)


def _reasons(m: ModelOutcome) -> str:
    return "; ".join(_cell(r) for r in m.reasons[:_MAX_REASONS])


def _evidence_link(entry: EntryResult, links: EvidenceLinks) -> str:
    if entry.run_id is None or entry.report is None:
        return ""
    if links.artifact:
        return f"`{entry.run_id}/report.md` in the [evidence artifact]({links.artifact}) (run `{entry.run_id}`)"
    if links.url_base:
        target = f"{links.url_base.rstrip('/')}/{entry.run_id}/report.md"
    else:
        target = _relative(entry.report, links.root) if links.root is not None else entry.report
    return f"[report]({target.replace(' ', '%20')}) (run `{entry.run_id}`)"


def _relative(path: str, root: Path) -> str:
    """`path` relative to `root`, with `../` where it lies elsewhere: a link that works next to the Markdown file
    (and in a copy of both folders), never an absolute path of this machine."""
    return Path(os.path.relpath(Path(path).resolve(), root.resolve())).as_posix()


def _footer(result: CheckResult) -> str:
    policy = result.policy
    return (
        f"---\n<sub>Policy `{policy.name}` v{policy.version} (sha256 `{policy.sha256[:12]}`) · "
        f"Provenance {result.provenance_version} · verdict order BLOCK > INCOMPLETE > WARNING > PASS</sub>\n{MARKER}"
    )


def _cell(text: str) -> str:
    """One table cell or list item: no line breaks, no bare pipes, bounded length."""
    flat = " ".join(text.split()).replace("|", "\\|")
    return flat if len(flat) <= _MAX_CELL else flat[: _MAX_CELL - 1] + "…"
