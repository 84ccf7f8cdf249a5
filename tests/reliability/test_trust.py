"""The trust boundary (docs/trust.md), attacked as a catalog writer would: the fraud detector's binding in the demo
catalog is rewritten (through the DataHub SDK, into the Lite file) to point at what an attacker controls or wants to
read, and each case runs through the real assessment path (`agent.assessment.assess_change` over MCP) with the
default artifact roots (the Provenance home and the catalog's folder; PROVENANCE_ARTIFACT_ROOTS unset).

The two high findings of the red-team pass this reruns (`scripts/redteam.py` prints the same figures):
1. a pickle planted anywhere on the host, with its own hash in `provenance.artifact_sha256`, ran on `assess`;
2. `provenance.eval_data_uri=/proc/self/environ` put the environment into evidence and reports.

Every case must end INCOMPLETE for that model with its reason code, no marker pickle unpickled, and no byte of the
secret (an environment variable set for the run, and /etc/passwd's first line) in the run's files or reasons. A
control keeps the demo's own binding: BLOCK, so the refusals are not a model that never loads.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import joblib
import pandas as pd
import pytest

from agent.assessment import assess_change
from agent.context import AgentContext
from policies import load_policy
from seed.catalog import FRAUD_MODEL_URN, POSTGRES_TABLE_URN
from tests.reliability.common import KeptHandle, fresh_home, settings_for
from tests.reliability.test_artifacts import LeavesMarker, rebind, sha256
from tools.experiment.binding import ARTIFACT_SHA256, ARTIFACT_URI, EVAL_DATA_URI, LABEL_COLUMN
from tools.experiment.trust import ROOTS_ENV
from tools.mutations import parse_mutation
from tools.settings import ProvenanceSettings

SECRET_ENV = "PROVENANCE_REDTEAM_SECRET"


@dataclass
class TrustCase:
    name: str
    expected_code: str  # "" for the control, which must be tested (BLOCK)
    properties: dict[str, str]
    marker: Path | None = None  # left by a pickle if it is ever unpickled


@dataclass
class TrustOutcome:
    name: str
    verdict: str
    codes: list[str]
    code_ran: bool
    leaked: list[str]
    ok: bool


@dataclass
class TrustFigures:
    cases: int
    refused_with_reason: int
    code_ran: int
    leaks: int
    control_tested: bool
    outcomes: list[TrustOutcome] = field(default_factory=list)


def build_cases(home: Path, outside: Path) -> list[TrustCase]:
    """`outside`: a folder of the attacker's, not under any root."""
    outside.mkdir(parents=True, exist_ok=True)
    demo = home / "demo"
    real, eval_data = demo / "fraud_detector.joblib", demo / "fraud_eval.csv"

    def binding(artifact: str, digest: str, data: str = str(eval_data), label: str = "is_fraud") -> dict[str, str]:
        return {ARTIFACT_URI: artifact, ARTIFACT_SHA256: digest, EVAL_DATA_URI: data, LABEL_COLUMN: label}

    def planted(name: str) -> tuple[Path, Path]:
        marker, artifact = outside / f"{name}.ran", outside / f"{name}.joblib"
        joblib.dump(LeavesMarker(marker), artifact)
        return artifact, marker

    cases = [TrustCase("control: the demo's own binding", "", binding(str(real), sha256(real)))]
    trap, marker = planted("planted")
    cases.append(
        TrustCase(
            "a pickle planted outside the roots, its own hash",
            "untrusted_location",
            binding(str(trap), sha256(trap)),
            marker,
        )
    )
    trap, marker = planted("linked")
    link = demo / "looks-local.joblib"
    link.symlink_to(trap)
    cases.append(
        TrustCase(
            "a link inside the home to a planted pickle", "untrusted_location", binding(str(link), sha256(trap)), marker
        )
    )
    trap, marker = planted("relative")
    relative = os.path.relpath(trap, home)  # relative to the catalog's folder, climbing out of it
    cases.append(
        TrustCase(
            "a relative path climbing out of the catalog folder",
            "untrusted_location",
            binding(relative, sha256(trap)),
            marker,
        )
    )
    cases.append(
        TrustCase(
            "a pickle at a URL of the writer's choosing",
            "untrusted_location",
            binding("https://127.0.0.1:9/model.pkl", sha256(real)),
        )
    )
    cases.append(
        TrustCase(
            "/proc/self/environ as evaluation data",
            "untrusted_location",
            binding(str(real), sha256(real), "/proc/self/environ"),
        )
    )
    cases.append(
        TrustCase(
            "/etc/passwd as evaluation data", "untrusted_location", binding(str(real), sha256(real), "/etc/passwd")
        )
    )
    environ_link = demo / "environ.csv"
    environ_link.symlink_to("/proc/self/environ")
    cases.append(
        TrustCase(
            "a link inside the home to /proc/self/environ",
            "untrusted_location",
            binding(str(real), sha256(real), str(environ_link)),
        )
    )
    secret_header = demo / "secret-header.csv"
    pd.DataFrame({os.environ[SECRET_ENV]: [1, 2], "amount": [1.0, 2.0]}).to_csv(secret_header, index=False)
    cases.append(
        TrustCase(
            "a readable file inside the roots whose header is a secret",
            "bad_eval_data",
            binding(str(real), sha256(real), str(secret_header)),
        )
    )
    return cases


@contextlib.contextmanager
def default_roots_and_a_secret() -> Iterator[str]:
    """PROVENANCE_ARTIFACT_ROOTS unset (the defaults a user gets) and a secret in this process's environment."""
    saved = {k: os.environ.get(k) for k in (ROOTS_ENV, SECRET_ENV)}
    os.environ.pop(ROOTS_ENV, None)
    os.environ[SECRET_ENV] = secret = f"redteam-{secrets.token_hex(8)}"
    try:
        yield secret
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _leaks(texts: list[str], secret: str) -> list[str]:
    passwd = Path("/etc/passwd").read_text().splitlines()[0] if Path("/etc/passwd").is_file() else None
    needles = [n for n in (secret, passwd, "PATH=/") if n]
    return [n for n in needles if any(n in t for t in texts)]


async def _assess(settings: ProvenanceSettings, cases: list[TrustCase], secret: str) -> list[TrustOutcome]:
    mutation = parse_mutation("scale", {"factor": 100})
    handle = KeptHandle(settings)
    outcomes = []
    try:
        context = AgentContext(settings=settings, policy=load_policy(), catalog=handle)
        for case in cases:
            rebind(settings.lite_db, case.properties)
            result = await assess_change(context, POSTGRES_TABLE_URN, "amount", mutation)
            model = next(m for m in result.evidence.models if m.urn == FRAUD_MODEL_URN)
            codes = [r.code for r in model.reasons]
            run = settings.home / "runs" / result.evidence.run_id
            texts = [
                p.read_text(errors="replace") for p in run.rglob("*") if p.is_file() and p.suffix in (".json", ".md")
            ]
            texts.append(result.evidence.model_dump_json())
            leaked = _leaks(texts, secret)
            ran = case.marker is not None and case.marker.exists()
            if case.expected_code:
                ok = str(model.verdict) == "INCOMPLETE" and case.expected_code in codes
            else:
                ok = str(model.verdict) == "BLOCK"
            outcomes.append(
                TrustOutcome(case.name, str(model.verdict), codes, ran, leaked, ok and not ran and not leaked)
            )
    finally:
        await handle.close()
    return outcomes


def measure_trust(template: Path, workdir: Path | None = None) -> TrustFigures:
    with tempfile.TemporaryDirectory(dir=workdir) as tmp, default_roots_and_a_secret() as secret:
        home = fresh_home(template, Path(tmp) / "home")
        cases = build_cases(home, Path(tmp) / "attacker")
        outcomes = asyncio.run(_assess(settings_for(home), cases, secret))
    attacks = [o for o, c in zip(outcomes, cases, strict=True) if c.expected_code]
    control = [o for o, c in zip(outcomes, cases, strict=True) if not c.expected_code]
    return TrustFigures(
        cases=len(attacks),
        refused_with_reason=sum(o.ok for o in attacks),
        code_ran=sum(o.code_ran for o in outcomes),
        leaks=sum(bool(o.leaked) for o in outcomes),
        control_tested=all(o.ok for o in control),
        outcomes=outcomes,
    )


@pytest.mark.slow
def test_a_catalog_writer_cannot_run_code_or_read_files_on_the_host(seeded_template: Path, tmp_path: Path) -> None:
    figures = measure_trust(seeded_template, tmp_path)
    assert figures.control_tested, figures.outcomes
    assert figures.code_ran == 0 and figures.leaks == 0, figures.outcomes
    assert figures.refused_with_reason == figures.cases == 8, figures.outcomes
