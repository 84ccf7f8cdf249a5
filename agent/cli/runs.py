"""`provenance runs`: the evidence runs of this home, one line each. It reads evidence files only, so it imports
nothing of the graph, the catalog or the experiment: it answers in a fraction of a second, with or without a warm
service (agent/cli/warm.py)."""

from __future__ import annotations

import argparse

from agent.cli.exit_codes import EXIT_OK
from agent.plan_sentence import dataset_name
from tools.evidence.store import EvidenceError, list_run_ids, read_evidence
from tools.settings import ProvenanceSettings


def _cmd_runs(settings: ProvenanceSettings, _args: argparse.Namespace) -> int:
    ids = list_run_ids(settings.home)
    if not ids:
        print(f"No runs under {settings.home / 'runs'} yet.")
        return EXIT_OK
    rows: list[tuple[str, ...]] = [("RUN", "VERDICT", "CHANGE", "FIELD", "PUBLICATION")]
    for run_id in ids:
        try:
            ev = read_evidence(settings.home, run_id)
        except EvidenceError as exc:
            rows.append((run_id, f"unreadable: {exc}"))
            continue
        target = f"{dataset_name(ev.request.dataset_urn)}.{ev.request.field}"
        rows.append((run_id, str(ev.verdict), ev.request.op, target, ev.publication.status))
    widths = [max(len(row[i]) for row in rows if len(row) > i + 1) for i in range(4)]  # the last column is free
    for row in rows:
        cells = [cell.ljust(widths[i]) if i < len(row) - 1 else cell for i, cell in enumerate(row)]
        print("  ".join(cells))
    return EXIT_OK
