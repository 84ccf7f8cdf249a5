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

from agent.checking import check_result
from agent.cli.exit_codes import EXIT_FAILURE
from agent.errors import UsageError
from policies import load_policy
from tools.changes.markdown import render_markdown
from tools.changes.result import CheckResult
from tools.changes.schema import Approval, ChangeSet, load_change_set
from tools.settings import ProvenanceSettings

NEEDS_APPROVAL = (
    "--publish needs an approval: add `approval: {{by: NAME, note: WHY}}` to {file} or pass --approved-by NAME. "
    "Without --publish, check writes evidence only and never touches the catalog."
)


def _cmd_check(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    change_set = load_change_set(args.changes)  # every problem, with its line, before any catalog is opened
    approval = _approval(change_set, args)
    policy = load_policy(args.policy)
    result = asyncio.run(check_result(settings, args.changes, change_set, policy, approval))
    entries = result.entries
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
