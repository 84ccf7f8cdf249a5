"""Writing and reading run folders under $PROVENANCE_HOME/runs/<run_id>/, atomically.

A run folder is assembled under a hidden temporary name and renamed into place, so a reader (or a crash)
never sees half a run. Later updates (publication status) replace evidence.json atomically (tools/atomic.py).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from tools import atomic
from tools.errors import BadRequest
from tools.evidence.schema import READABLE_SCHEMAS, SCHEMA_VERSION, Evidence

EVIDENCE_FILE = "evidence.json"
REPORT_FILE = "report.md"


class EvidenceError(BadRequest):
    """A run folder that cannot be read or written; the message says which and why."""


def runs_dir(home: Path) -> Path:
    return home / "runs"


def write_run(home: Path, evidence: Evidence, extra: Callable[[Path], None] | None = None) -> Path:
    """Create runs/<run_id>/ with evidence.json plus whatever `extra(folder)` writes (report, plots)."""
    final = runs_dir(home) / evidence.run_id
    if final.exists():
        raise EvidenceError(f"run folder {final} already exists; run ids must be unique")
    final.parent.mkdir(parents=True, exist_ok=True)
    # A process killed while assembling this run left its temporary folder: the run id is this turn's alone, so the
    # leftover is ours to remove (a kill leaves no `except` to do it).
    for leftover in final.parent.glob(f".{evidence.run_id}.*"):
        shutil.rmtree(leftover, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{evidence.run_id}."))
    try:
        if extra is not None:
            extra(staging)
        atomic.write_atomically(staging / EVIDENCE_FILE, evidence.model_dump_json(indent=2).encode())
        os.rename(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return final


def update_evidence(home: Path, evidence: Evidence, extra: Callable[[Path], None] | None = None) -> Path:
    folder = runs_dir(home) / evidence.run_id
    if not folder.is_dir():
        raise EvidenceError(f"run {evidence.run_id} has no folder under {runs_dir(home)}")
    if extra is not None:
        extra(folder)
    atomic.write_atomically(folder / EVIDENCE_FILE, evidence.model_dump_json(indent=2).encode())
    return folder


def staging_dir(home: Path, run_id: str) -> Path:
    """Where an experiment stages its plots until its run folder is written: named after the run id it will have,
    so an experiment killed and resumed stages into the same folder instead of leaving one behind."""
    return runs_dir(home) / f".staging-{run_id}"


def read_evidence(home: Path, run_id: str) -> Evidence:
    path = runs_dir(home) / run_id / EVIDENCE_FILE
    if not path.is_file():
        # The count, not the ids: an error is no way to enumerate the runs of a home.
        count = len(list_run_ids(home))
        raise EvidenceError(
            f"no run {run_id!r} under {runs_dir(home)} ({count} run{'s' if count != 1 else ''} there); "
            "`provenance runs` lists them"
        )
    try:
        raw = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise EvidenceError(f"{path} is not valid JSON ({exc}); the run folder is damaged") from exc
    if raw.get("schema_version") not in READABLE_SCHEMAS:
        raise EvidenceError(
            f"{path} has schema {raw.get('schema_version')!r}; this Provenance reads {', '.join(READABLE_SCHEMAS)}"
        )
    try:
        return Evidence.model_validate(raw | {"schema_version": SCHEMA_VERSION})  # read into today's shape
    except ValidationError as exc:
        raise EvidenceError(f"{path} does not match {SCHEMA_VERSION}: {exc.error_count()} problems") from exc


def list_run_ids(home: Path) -> list[str]:
    folder = runs_dir(home)
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
