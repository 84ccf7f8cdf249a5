"""Assembling a run's evidence and writing its folder (evidence.json, report.md, plots)."""

from __future__ import annotations

import platform
from functools import cache
from importlib import metadata
from pathlib import Path

from policies import LoadedPolicy
from tools.evidence.schema import Evidence, ModelTest, PolicyRecord
from tools.evidence.store import update_evidence, write_run

TRACKED_PACKAGES = (
    "provenance",
    "scikit-learn",
    "pandas",
    "numpy",
    "scipy",
    "joblib",
    "acryl-datahub",
    "mcp-server-datahub",
    "langchain-mcp-adapters",
    "langgraph",
    "langchain-google-genai",
)


def environment() -> dict[str, str]:
    """The interpreter's and the tracked packages' versions, as the evidence records them."""
    return dict(_versions())


@cache
def _versions() -> tuple[tuple[str, str], ...]:
    # Read once per process: each lookup scans the installed distributions (~6 ms a package, on the event loop
    # of every assessment otherwise), and a running process keeps the modules it imported even if the
    # environment is upgraded underneath it, so the first reading is the true one.
    found = [("python", platform.python_version())]
    for package in TRACKED_PACKAGES:
        try:
            found.append((package, metadata.version(package)))
        except metadata.PackageNotFoundError:
            found.append((package, "not installed"))
    return tuple(found)


def policy_record(loaded: LoadedPolicy) -> PolicyRecord:
    return PolicyRecord(
        name=loaded.policy.name, version=loaded.policy.version, sha256=loaded.sha256, path=str(loaded.path)
    )


def slug(name: str) -> str:
    from tools.evidence.plots import slugify

    return slugify(name)


def persist_run(home: Path, evidence: Evidence, tests: list[ModelTest]) -> Path:
    """Write the run folder atomically: plots first (their names go into the evidence), then report + JSON."""
    from tools.evidence.report import write_report

    def extra(folder: Path) -> None:
        for test in tests:
            if test.arrays is not None:
                test.evidence.plots = test.arrays.write_plots(folder, slug(test.evidence.name))
        evidence.models = [t.evidence for t in tests]
        write_report(folder, evidence)

    return write_run(home, evidence, extra)


def refresh_run(home: Path, evidence: Evidence) -> Path:
    """Rewrite evidence.json and report.md after a later step (publication) changed the evidence."""
    from tools.evidence.report import write_report

    return update_evidence(home, evidence, lambda folder: write_report(folder, evidence))
