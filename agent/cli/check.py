"""`provenance check CHANGES.yml`: every entry of a change file judged, one combined verdict and exit code.

Each `changes` entry runs through `assess_change` (the agent's graph with a fixed plan, `no_publish`), exactly as
`provenance assess` does, with its own evidence run folder; all of them share one catalog session. `structural`
entries get the policy's structural verdict for every production model downstream (tools/changes/structural.py),
`unmapped` entries are INCOMPLETE. Nothing is written to the catalog unless `--publish` is given with an approval
(in the file or `--approved-by`); then each publishable run goes through `publish_run`, as `provenance publish`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from importlib.metadata import PackageNotFoundError, version

from agent.assessment import assess_change
from agent.cli.exit_codes import EXIT_CODES, EXIT_FAILURE
from agent.context import AgentContext
from agent.errors import UsageError
from agent.nodes.approval import publish_run
from agent.nodes.failures import worth_publishing
from policies import LoadedPolicy, Verdict, load_policy
from tools.catalog.handle import CatalogHandle
from tools.catalog.lineage_walk import Discoverer
from tools.changes.markdown import render_markdown
from tools.changes.result import CheckResult, EntryResult, PolicyRef, combined_verdict, outcome_of
from tools.changes.schema import Approval, ChangeSet, ProposedChange, load_change_set
from tools.changes.structural import judge_structural, judge_unmapped
from tools.evidence.store import REPORT_FILE
from tools.mutations import PlanError, parse_mutation
from tools.settings import ProvenanceSettings

NEEDS_APPROVAL = (
    "--publish needs an approval: add `approval: {{by: NAME, note: WHY}}` to {file} or pass --approved-by NAME. "
    "Without --publish, check writes evidence only and never touches the catalog."
)


def _cmd_check(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    change_set = load_change_set(args.changes)  # every problem, with its line, before any catalog is opened
    approval = _approval(change_set, args)
    policy = load_policy(args.policy)
    entries = asyncio.run(_check(settings, change_set, policy, approval))
    verdict = combined_verdict(entries)
    result = CheckResult(
        file=str(args.changes),
        verdict=verdict,
        exit_code=EXIT_CODES[verdict],
        entries=entries,
        policy=PolicyRef(name=policy.policy.name, version=policy.policy.version, sha256=policy.sha256),
        provenance_version=_provenance_version(),
        approval=approval,
        published=approval is not None and any(e.publication == "published" for e in entries),
    )
    if args.markdown is not None:
        markdown = render_markdown(
            result,
            evidence_url_base=args.evidence_url_base,
            evidence_artifact=args.evidence_artifact,
            link_root=args.markdown.parent,
        )
        args.markdown.write_text(markdown, encoding="utf-8")
    print(result.model_dump_json(indent=2) if args.json else render_text(result))
    failed = [e for e in entries if e.publication == "failed"]
    if failed:
        runs = ", ".join(str(e.run_id) for e in failed)
        print(f"error: publication failed for run(s) {runs}; retry with `provenance publish RUN_ID`", file=sys.stderr)
        return EXIT_FAILURE
    return result.exit_code


def _approval(change_set: ChangeSet, args: argparse.Namespace) -> Approval | None:
    """The approval that lets --publish write, or None without --publish; refused (exit 2) when missing."""
    if not args.publish:
        return None
    if args.approved_by:
        return Approval(by=args.approved_by, note="given on the command line")
    if change_set.approval is None:
        raise UsageError(NEEDS_APPROVAL.format(file=args.changes))
    return change_set.approval


async def _check(
    settings: ProvenanceSettings, change_set: ChangeSet, policy: LoadedPolicy, approval: Approval | None
) -> list[EntryResult]:
    entries: list[EntryResult] = []
    async with CatalogHandle(settings) as handle:  # opened on first use, shared by every entry
        context = AgentContext(settings=settings, policy=policy, catalog=handle)
        publishable: set[str] = set()  # run ids the graph would have asked approval for
        for index, change in enumerate(change_set.changes):
            entry, worth = await _assess_entry(context, change, index)
            entries.append(entry)
            if worth and entry.run_id is not None:
                publishable.add(entry.run_id)
        if change_set.structural:
            discoverer = Discoverer(await handle.reader())
            for index, structural in enumerate(change_set.structural):
                entries.append(await judge_structural(discoverer, structural, index, policy.policy))
        entries += [judge_unmapped(unmapped, index) for index, unmapped in enumerate(change_set.unmapped)]
        if approval is not None:
            entries = [
                await _publish(context, entry, approval) if entry.run_id in publishable else entry for entry in entries
            ]
    return entries


async def _assess_entry(context: AgentContext, change: ProposedChange, index: int) -> tuple[EntryResult, bool]:
    """The entry, and whether its run is worth publishing (agent/nodes/failures.py::worth_publishing)."""
    mutation = parse_mutation(change.op, change.params, fraction=change.fraction, seed=change.seed)
    entry = EntryResult(
        kind="change",
        index=index,
        dataset=change.dataset,
        field=change.field,
        op=mutation.op,
        params=change.params,
        fraction=change.fraction,
        seed=change.seed,
        note=change.note,
        source=change.source,
        confidence=change.confidence,
        verdict=Verdict.INCOMPLETE,
        reasons=[],
    )
    try:
        result = await assess_change(context, change.dataset, change.field, mutation)
    except PlanError as exc:  # the catalog has no such field, or the operator does not fit it: this entry only
        return entry.model_copy(update={"reasons": [f"not assessed: {exc}"]}), False
    ev = result.evidence
    assessed = entry.model_copy(
        update={
            "verdict": ev.verdict,
            "reasons": [*ev.verdict_reasons, *(f"published tolerance: {n}" for n in ev.tolerance_notes)],
            "models": [outcome_of(m) for m in ev.models],
            "not_tested": [f"{n.name}: {n.reason}" for n in ev.not_tested],
            "coverage_complete": ev.coverage.complete if ev.coverage is not None else None,
            "run_id": ev.run_id,
            "evidence_dir": str(result.run_dir),
            "report": str(result.run_dir / REPORT_FILE),
            "publication": ev.publication.status,
        }
    )
    return assessed, worth_publishing(bool(ev.models), ev.failures)


async def _publish(context: AgentContext, entry: EntryResult, approval: Approval) -> EntryResult:
    """Publish the entry's run as `provenance publish` does (only runs the graph would have asked approval for)."""
    if entry.run_id is None:
        return entry
    record = await publish_run(context, entry.run_id, decided_by=f"check:{approval.by}")
    return entry.model_copy(update={"publication": record.status})


def render_text(result: CheckResult) -> str:
    lines = [
        f"Check of {result.file}: {result.verdict} (exit code {result.exit_code}); "
        f"policy {result.policy.name} v{result.policy.version}"
    ]
    for entry in result.entries:
        lines.append(f"\n{entry.verdict:<10} {entry.label}")
        lines += [f"    {m.name}: {m.verdict}" + (f" — {m.reasons[0]}" if m.reasons else "") for m in entry.models]
        tabled = tuple(f"{m.name}: " for m in entry.models)  # the model lines above say it already
        lines += [f"    - {reason}" for reason in entry.reasons if not reason.startswith(tabled)]
        if entry.report:
            lines.append(f"    evidence: {entry.report} (publication: {entry.publication})")
    if not result.entries:
        lines.append("  no entries: nothing to assess")
    return "\n".join(lines)


def _provenance_version() -> str:
    try:
        return version("provenance")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"
