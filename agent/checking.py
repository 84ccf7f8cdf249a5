"""Judging a change file (CHANGES.yml): each `changes` entry through `assess_change` (the agent's graph with a
fixed plan, `no_publish`) with its own evidence run, `structural` entries by the policy's structural rule,
`unmapped` ones INCOMPLETE; one combined verdict. Shared by `provenance check` and the MCP tool `check_changes`;
publishing (only with an approval) goes through `publish_run`, as `provenance publish`."""

from __future__ import annotations

import asyncio
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from agent.assessment import assess_change
from agent.context import AgentContext
from agent.nodes.approval import publish_run
from agent.nodes.failures import worth_publishing
from policies import LoadedPolicy, Verdict
from tools.catalog.handle import CatalogHandle
from tools.changes.result import CheckResult, EntryResult, PolicyRef, combined_verdict, outcome_of
from tools.changes.schema import Approval, ChangeSet, ProposedChange
from tools.changes.structural import judge_structural, judge_unmapped
from tools.errors import VERDICT_EXIT_CODES
from tools.evidence.store import REPORT_FILE
from tools.mutations import PlanError, parse_mutation
from tools.settings import ProvenanceSettings


async def check_result(
    settings: ProvenanceSettings,
    file: Path,
    change_set: ChangeSet,
    policy: LoadedPolicy,
    approval: Approval | None,
) -> CheckResult:
    """Every entry of a checked change file assessed or judged, and their combined verdict (also the MCP tool's)."""
    entries = await _check(settings, change_set, policy, approval)
    verdict = combined_verdict(entries)
    return CheckResult(
        file=str(file),
        verdict=verdict,
        exit_code=VERDICT_EXIT_CODES[verdict],
        entries=entries,
        policy=PolicyRef(name=policy.policy.name, version=policy.policy.version, sha256=policy.sha256),
        provenance_version=_provenance_version(),
        approval=approval,
        published=approval is not None and any(e.publication == "published" for e in entries),
    )


async def _check(
    settings: ProvenanceSettings, change_set: ChangeSet, policy: LoadedPolicy, approval: Approval | None
) -> list[EntryResult]:
    entries: list[EntryResult] = []
    async with CatalogHandle(settings) as handle:  # opened on first use, shared by every entry
        context = AgentContext(settings=settings, policy=policy, catalog=handle)
        publishable: set[str] = set()  # run ids the graph would have asked approval for
        # At once, as the chat serves conversations: one entry's catalog reads overlap another's experiment (the
        # demo's two changes: 2.4 s one after the other in a warm service). Results keep the file's order.
        # Each runs to its end; the first failure in the file's order is raised, as one after the other raised it.
        # The structural entries' lineage walks run alongside them.
        assessed, structural = await asyncio.gather(
            _assess_all(context, change_set), _judge_structural(handle, change_set, policy), return_exceptions=True
        )
        if isinstance(assessed, BaseException):
            raise assessed
        if isinstance(structural, BaseException):
            raise structural
        for entry, worth in assessed:
            entries.append(entry)
            if worth and entry.run_id is not None:
                publishable.add(entry.run_id)
        entries += structural
        entries += [judge_unmapped(unmapped, index) for index, unmapped in enumerate(change_set.unmapped)]
        if approval is not None:
            entries = [
                await _publish(context, entry, approval) if entry.run_id in publishable else entry for entry in entries
            ]
    return entries


async def _assess_all(context: AgentContext, change_set: ChangeSet) -> list[tuple[EntryResult, bool]]:
    assessed = await asyncio.gather(
        *(_assess_entry(context, c, i) for i, c in enumerate(change_set.changes)), return_exceptions=True
    )
    results = []
    for outcome in assessed:
        if isinstance(outcome, BaseException):
            raise outcome
        results.append(outcome)
    return results


async def _judge_structural(handle: CatalogHandle, change_set: ChangeSet, policy: LoadedPolicy) -> list[EntryResult]:
    if not change_set.structural:
        return []
    discoverer = await handle.discoverer()
    return [
        await judge_structural(discoverer, structural, index, policy.policy)
        for index, structural in enumerate(change_set.structural)
    ]


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


def _provenance_version() -> str:
    try:
        return version("provenance")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"
