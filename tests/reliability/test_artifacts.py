"""Artifact safety: a model's joblib artifact is a pickle, so nothing is unpickled before its sha256 is verified.

The fraud detector's binding in the catalog is pointed at bad artifacts one after another (written into the Lite
file with the DataHub SDK while the endpoint runs): a wrong hash, a missing file, bytes that are not a pipeline,
a pickle of something else, pipelines that expect other columns or ignore the field, a malformed digest, missing
binding keys, missing or unlabelled evaluation data. The artifacts that must not be loaded are pickles whose
unpickling creates a marker file. Each case runs through the real assessment path (`agent.assessment.assess_change`
over MCP; one also through the graph) and must make the model INCOMPLETE with its reason code, marker absent.

A positive control gives the marker pickle its correct hash: it is then unpickled (the marker appears) and still
refused as not a pipeline, which shows the marker would have caught an early unpickle.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import pathlib
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import joblib
import pandas as pd
import pytest
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from agent.assessment import assess_change
from agent.context import AgentContext
from agent.conversation import open_session
from policies import load_policy
from seed.catalog import FRAUD_MODEL_URN, POSTGRES_TABLE_URN, write_to_lite
from tests.reliability.common import DEMO_QUESTION, KeptHandle, fresh_home, settings_for
from tools.embedded.store import LiteStore
from tools.experiment.binding import ARTIFACT_SHA256, ARTIFACT_URI, EVAL_DATA_URI, LABEL_COLUMN
from tools.mutations import parse_mutation
from tools.settings import ProvenanceSettings


class LeavesMarker:
    """Unpickling this object creates `path`: the proof that a file was unpickled."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (pathlib.Path.touch, (pathlib.Path(self.path),))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass
class ArtifactCase:
    name: str
    expected_code: str
    properties: dict[str, str]
    marker: Path | None
    """The marker this case's pickle would leave if it were unpickled (None: nothing to unpickle)."""
    must_unpickle: bool = False
    through_graph: bool = False


@dataclass
class ArtifactOutcome:
    name: str
    verdict: str
    codes: list[str]
    expected_code: str
    unpickled: bool
    must_unpickle: bool
    overall: str
    ok: bool


@dataclass
class ArtifactFigures:
    cases: int
    incomplete_with_reason: int
    unpickled_before_verification: int
    control_unpickled: bool
    outcomes: list[ArtifactOutcome] = field(default_factory=list)


def build_cases(folder: Path, home: Path) -> list[ArtifactCase]:
    folder.mkdir(parents=True, exist_ok=True)
    demo = home / "demo"
    real, eval_data = demo / "fraud_detector.joblib", demo / "fraud_eval.csv"
    frame = pd.read_csv(eval_data)
    label = "is_fraud"

    def binding(artifact: Path, digest: str, data: Path = eval_data, label_column: str = label) -> dict[str, str]:
        return {
            ARTIFACT_URI: str(artifact),
            ARTIFACT_SHA256: digest,
            EVAL_DATA_URI: str(data),
            LABEL_COLUMN: label_column,
        }

    def booby_trap(name: str) -> tuple[Path, Path]:
        marker, artifact = folder / f"{name}.unpickled", folder / f"{name}.joblib"
        joblib.dump(LeavesMarker(marker), artifact)
        return artifact, marker

    cases = []
    trap, marker = booby_trap("wrong-hash")
    cases.append(ArtifactCase("wrong hash", "hash_mismatch", binding(trap, sha256(real)), marker))
    trap, marker = booby_trap("wrong-hash-graph")
    cases.append(
        ArtifactCase(
            "wrong hash (through the graph)", "hash_mismatch", binding(trap, sha256(real)), marker, through_graph=True
        )
    )
    cases.append(ArtifactCase("missing file", "missing_artifact", binding(folder / "gone.joblib", sha256(real)), None))
    noise = folder / "noise.joblib"
    noise.write_bytes(b"\x80\x05not a pickle at all" * 20)
    cases.append(ArtifactCase("a file that is not a pickle", "not_a_pipeline", binding(noise, sha256(noise)), None))
    other = folder / "dict.joblib"
    joblib.dump({"weights": [1, 2, 3]}, other)
    cases.append(ArtifactCase("a pickle that is not a pipeline", "not_a_pipeline", binding(other, sha256(other)), None))
    columns = folder / "other-columns.joblib"
    toy = pd.DataFrame({"foo": [0.0, 1.0, 2.0, 3.0], "bar": [1.0, 0.0, 1.0, 0.0]})
    joblib.dump(make_pipeline(StandardScaler(), LogisticRegression()).fit(toy, [0, 1, 0, 1]), columns)
    cases.append(
        ArtifactCase("a pipeline expecting other columns", "columns_missing", binding(columns, sha256(columns)), None)
    )
    unused = folder / "ignores-amount.joblib"
    inputs = frame[["hour", "account_age_days", "txn_count_1h"]]
    joblib.dump(make_pipeline(StandardScaler(), LogisticRegression()).fit(inputs, frame[label]), unused)
    cases.append(
        ArtifactCase("a pipeline that ignores the field", "feature_not_used", binding(unused, sha256(unused)), None)
    )
    trap, marker = booby_trap("bad-digest")
    cases.append(ArtifactCase("a malformed sha256", "bad_binding", binding(trap, "not-a-digest"), marker))
    trap, marker = booby_trap("no-binding")
    cases.append(ArtifactCase("no binding keys", "missing_binding", {ARTIFACT_URI: str(trap)}, marker))
    cases.append(
        ArtifactCase(
            "missing evaluation data", "missing_eval_data", binding(real, sha256(real), folder / "no.csv"), None
        )
    )
    unlabelled = folder / "unlabelled.csv"
    frame.assign(is_fraud=frame[label].map({0: "no", 1: "yes"})).to_csv(unlabelled, index=False)
    cases.append(
        ArtifactCase("evaluation labels not 0/1", "bad_eval_data", binding(real, sha256(real), unlabelled), None)
    )
    trap, marker = booby_trap("control")
    cases.append(
        ArtifactCase(
            "control: the marker pickle with its true hash",
            "not_a_pipeline",
            binding(trap, sha256(trap)),
            marker,
            must_unpickle=True,
        )
    )
    return cases


def rebind(db: Path, properties: dict[str, str]) -> None:
    """Replace the fraud detector's custom properties in the Lite file, through the DataHub SDK."""
    store = LiteStore(db)
    try:
        current = store.typed_aspects(FRAUD_MODEL_URN)["mlModelProperties"]
    finally:
        store.close()
    updated = copy.deepcopy(current)
    updated.customProperties = {"mlflow.stage": "Production", **properties}
    write_to_lite([MetadataChangeProposalWrapper(entityUrn=FRAUD_MODEL_URN, aspect=updated)], db)


async def _assess(settings: ProvenanceSettings, cases: list[ArtifactCase]) -> list[ArtifactOutcome]:
    mutation = parse_mutation("scale", {"factor": 100})
    outcomes = []
    handle = KeptHandle(settings)  # one catalog for the fixed-plan assessments and the conversations
    try:
        context = AgentContext(settings=settings, policy=load_policy(), catalog=handle)
        for case in (c for c in cases if not c.through_graph):
            rebind(settings.lite_db, case.properties)
            result = await assess_change(context, POSTGRES_TABLE_URN, "amount", mutation)
            model = next(m for m in result.evidence.models if m.urn == FRAUD_MODEL_URN)
            codes = [r.code for r in model.reasons]
            outcomes.append(_outcome(case, str(model.verdict), codes, str(result.evidence.verdict)))
        for case in (c for c in cases if c.through_graph):
            rebind(settings.lite_db, case.properties)
            async with open_session(settings, context=AgentContext(settings=settings, catalog=handle)) as session:
                turn = await session.ask(DEMO_QUESTION, thread_id=f"artifact-{case.name}", mode="no_publish")
            model = next(m for m in turn.values["model_results"] if m.urn == FRAUD_MODEL_URN)
            codes = [r.code for r in model.reasons]
            outcomes.append(_outcome(case, str(model.verdict), codes, str(turn.values["verdict"])))
    finally:
        await handle.close()
    return outcomes


def _outcome(case: ArtifactCase, verdict: str, codes: list[str], overall: str) -> ArtifactOutcome:
    unpickled = case.marker is not None and case.marker.exists()
    return ArtifactOutcome(
        name=case.name,
        verdict=verdict,
        codes=codes,
        expected_code=case.expected_code,
        unpickled=unpickled,
        must_unpickle=case.must_unpickle,
        overall=overall,
        ok=verdict == "INCOMPLETE" and case.expected_code in codes and unpickled == case.must_unpickle,
    )


def measure_artifacts(template: Path, workdir: Path | None = None) -> ArtifactFigures:
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        home = fresh_home(template, Path(tmp) / "home")
        cases = build_cases(home / "artifacts", home)  # under the home: inside the default artifact roots
        outcomes = asyncio.run(_assess(settings_for(home), cases))
    tested = [o for o in outcomes if not o.must_unpickle]
    return ArtifactFigures(
        cases=len(tested),
        incomplete_with_reason=sum(o.ok for o in tested),
        unpickled_before_verification=sum(o.unpickled for o in tested),
        control_unpickled=all(o.unpickled for o in outcomes if o.must_unpickle),
        outcomes=outcomes,
    )


@pytest.mark.slow
def test_bad_artifacts_are_never_unpickled_and_make_the_model_incomplete(seeded_template: Path, tmp_path: Path) -> None:
    figures = measure_artifacts(seeded_template, tmp_path)
    assert figures.control_unpickled, "the marker pickle must leave its marker when it is loaded"
    assert figures.unpickled_before_verification == 0, figures.outcomes
    assert figures.incomplete_with_reason == figures.cases == 11, figures.outcomes
    # The run's verdict is its worst model's: the demo's regressor (its own, intact artifact) BLOCKs ×100, and BLOCK
    # outranks the bad artifact's INCOMPLETE; never a PASS.
    assert all(o.overall == "BLOCK" for o in figures.outcomes), figures.outcomes
