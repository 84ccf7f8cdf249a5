"""A model's latest run on this home, read from the runs' evidence: what `latest_verdict` answers over MCP and what
the chat adds beside the status DataHub shows. The two can differ, and both say which they are: DataHub's tag is
the latest *published* verdict; a run is published only with a person's approval, so a newer one may not be."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tools.evidence.schema import Evidence, ModelEvidence
from tools.evidence.store import EvidenceError, list_run_ids, read_evidence


@dataclass(frozen=True)
class LatestRun:
    evidence: Evidence | None  # None: no readable run tested the model
    model: ModelEvidence | None
    unreadable: list[str] = field(default_factory=list)  # newer runs whose evidence could not be read


def latest_run(home: Path, model: str) -> LatestRun:
    """The newest run that tested `model` (its name or mlModel URN), and the newer runs that could not be read."""
    unreadable: list[str] = []
    for run_id in reversed(list_run_ids(home)):  # run ids start with their UTC time: newest last
        try:
            evidence = read_evidence(home, run_id)
        except EvidenceError as exc:  # said in the answer: the newest readable run may not be the latest
            unreadable.append(f"{run_id}: {exc}")
            continue
        hit = next((m for m in evidence.models if model in (m.urn, m.name)), None)
        if hit is not None:
            return LatestRun(evidence, hit, unreadable)
    return LatestRun(None, None, unreadable)
