"""Run folders: atomic creation, unique run ids, evidence updates, and clear errors on bad folders."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from policies import evaluate, load_policy
from tools.catalog.discovery import LineageStep
from tools.evidence.schema import (
    SCHEMA_VERSION,
    ChangeRequest,
    Evidence,
    ModelEvidence,
    PlanRecord,
    PolicyRecord,
    PublicationRecord,
    new_run_id,
)
from tools.evidence.store import (
    EVIDENCE_FILE,
    EvidenceError,
    list_run_ids,
    read_evidence,
    runs_dir,
    update_evidence,
    write_run,
)
from tools.experiment.metrics import compute_metrics

SOURCE = "urn:li:dataset:(urn:li:dataPlatform:postgres,payments.public.transactions,PROD)"


def make_evidence(run_id: str = "20260101T000000Z-0a0b0c") -> Evidence:
    rng = np.random.default_rng(3)
    y = rng.random(600) < 0.4
    baseline = np.clip(0.3 + 0.4 * y + rng.normal(0, 0.2, 600), 0, 1)
    mutated = np.where(rng.random(600) < 0.1, rng.random(600), baseline)
    metrics = compute_metrics(y, baseline, mutated, np.zeros(600, dtype=bool))
    loaded = load_policy()
    decision = evaluate(metrics, loaded.policy)
    model = ModelEvidence(
        urn="urn:li:mlModel:(urn:li:dataPlatform:mlflow,fraud,PROD)",
        name="fraud",
        verdict=decision.verdict,
        reasons=list(decision.reasons),
        lineage_path=[LineageStep(dataset_urn=SOURCE, column="amount")],
        metrics=metrics,
    )
    return Evidence(
        run_id=run_id,
        request=ChangeRequest(dataset_urn=SOURCE, field="amount", op="null_out", params={}, fraction=0.1, seed=1),
        catalog="embedded",
        plan=PlanRecord(
            planner="cli",
            mutation={"op": "null_inject", "fraction": 0.1},
            description="set amount to null on 10% of rows",
        ),
        models=[model],
        verdict=decision.verdict,
        policy=PolicyRecord(name="default", version=1, sha256=loaded.sha256, path=str(loaded.path)),
    )


def write_stub_report(folder: Path) -> None:
    (folder / "report.md").write_text("# report")


def entries(home: Path) -> list[str]:
    """Everything under runs/, hidden staging folders included."""
    return sorted(p.name for p in runs_dir(home).iterdir())


def test_write_run_creates_the_folder(tmp_path: Path) -> None:
    evidence = make_evidence()
    folder = write_run(tmp_path, evidence, write_stub_report)
    assert folder == tmp_path / "runs" / evidence.run_id
    assert sorted(p.name for p in folder.iterdir()) == [EVIDENCE_FILE, "report.md"]
    assert entries(tmp_path) == [evidence.run_id]  # the staging folder was renamed, not copied
    assert list_run_ids(tmp_path) == [evidence.run_id]


def test_write_run_without_extra(tmp_path: Path) -> None:
    folder = write_run(tmp_path, make_evidence())
    assert [p.name for p in folder.iterdir()] == [EVIDENCE_FILE]


def test_failing_extra_leaves_nothing_behind(tmp_path: Path) -> None:
    evidence = make_evidence()

    def broken(staging: Path) -> None:
        (staging / "half-written.png").write_bytes(b"\x89PNG")
        raise RuntimeError("plotting failed")

    with pytest.raises(RuntimeError, match="plotting failed"):
        write_run(tmp_path, evidence, broken)
    assert entries(tmp_path) == []  # no run folder and no hidden staging folder
    assert list_run_ids(tmp_path) == []
    write_run(tmp_path, evidence)  # the run id is still free
    assert list_run_ids(tmp_path) == [evidence.run_id]


def test_a_killed_writers_leftover_of_the_same_run_is_removed_others_kept(tmp_path: Path) -> None:
    evidence = make_evidence()
    runs = tmp_path / "runs"
    (runs / f".{evidence.run_id}.k1ll3d").mkdir(parents=True)  # what a kill -9 inside write_run leaves
    (runs / f".{evidence.run_id}.k1ll3d" / "report.md").write_text("half")
    (runs / ".20990101T000000Z-aaaaaa.other").mkdir()  # another run's, being written now
    write_run(tmp_path, evidence)
    assert entries(tmp_path) == [".20990101T000000Z-aaaaaa.other", evidence.run_id]


def test_extra_sees_a_hidden_staging_folder(tmp_path: Path) -> None:
    seen: list[Path] = []
    write_run(tmp_path, make_evidence(), seen.append)
    assert seen[0].name.startswith(".") and not seen[0].exists()  # readers never list a half-written run


def test_refuses_an_existing_run_id(tmp_path: Path) -> None:
    evidence = make_evidence()
    folder = write_run(tmp_path, evidence)
    before = (folder / EVIDENCE_FILE).read_bytes()
    with pytest.raises(EvidenceError, match="already exists; run ids must be unique"):
        write_run(tmp_path, evidence.model_copy(update={"catalog": "other"}))
    assert (folder / EVIDENCE_FILE).read_bytes() == before
    assert entries(tmp_path) == [evidence.run_id]


def test_update_evidence_replaces_the_json(tmp_path: Path) -> None:
    evidence = make_evidence()
    folder = write_run(tmp_path, evidence)
    evidence.publication = PublicationRecord(
        status="published", decided_by="risk@example.com", tags={"urn:li:mlModel:x": "urn:li:tag:provenance:PASS"}
    )
    (folder / "report.md").write_text("old")
    assert update_evidence(tmp_path, evidence, write_stub_report) == folder
    assert read_evidence(tmp_path, evidence.run_id).publication.status == "published"
    assert (folder / "report.md").read_text() == "# report"
    assert sorted(p.name for p in folder.iterdir()) == [EVIDENCE_FILE, "report.md"]  # no temporary files


def test_update_evidence_needs_an_existing_run(tmp_path: Path) -> None:
    with pytest.raises(EvidenceError, match="has no folder"):
        update_evidence(tmp_path, make_evidence())


def test_read_evidence_round_trips(tmp_path: Path) -> None:
    evidence = make_evidence()
    write_run(tmp_path, evidence)
    loaded = read_evidence(tmp_path, evidence.run_id)
    assert loaded == evidence
    assert loaded.models[0].metrics == evidence.models[0].metrics  # floats survive JSON exactly


def test_a_missing_run_is_named_with_the_count_never_the_ids(tmp_path: Path) -> None:
    """The error said which runs exist; an error is no way to enumerate a home's runs."""
    write_run(tmp_path, make_evidence("20260101T000000Z-000001"))
    with pytest.raises(
        EvidenceError, match=r"no run 'nope' under .*\(1 run there\); `provenance runs` lists them"
    ) as e:
        read_evidence(tmp_path, "nope")
    assert "20260101T000000Z-000001" not in str(e.value)
    with pytest.raises(EvidenceError, match=r"\(0 runs there\)"):
        read_evidence(tmp_path / "empty", "nope")


def test_corrupt_json(tmp_path: Path) -> None:
    folder = write_run(tmp_path, make_evidence())
    (folder / EVIDENCE_FILE).write_text('{"schema_version": ')
    with pytest.raises(EvidenceError, match="is not valid JSON .*the run folder is damaged"):
        read_evidence(tmp_path, folder.name)


def test_foreign_schema_version(tmp_path: Path) -> None:
    folder = write_run(tmp_path, make_evidence())
    raw = json.loads((folder / EVIDENCE_FILE).read_text())
    raw["schema_version"] = "provenance.evidence/99"
    (folder / EVIDENCE_FILE).write_text(json.dumps(raw))
    message = f"has schema 'provenance.evidence/99'; this Provenance reads provenance.evidence/1, {SCHEMA_VERSION}"
    with pytest.raises(EvidenceError, match=re.escape(message)):
        read_evidence(tmp_path, folder.name)


def test_a_run_written_with_flat_metrics_schema_1_reads_in_todays_shape(tmp_path: Path) -> None:
    evidence = make_evidence()
    folder = write_run(tmp_path, evidence)
    raw = json.loads((folder / EVIDENCE_FILE).read_text())
    for model in raw["models"]:  # what /1 wrote: the binary section's numbers as top-level fields
        binary = model["metrics"].pop("binary")
        auc = binary["auc"]
        model["metrics"] |= {"positives": binary["positives"], "negatives": binary["negatives"]}
        model["metrics"] |= {"auc_baseline": auc["baseline"], "auc_mutated": auc["mutated"], "auc_delta": auc["delta"]}
        model["metrics"] |= {"auc_delta_ci_low": auc["ci_low"], "auc_delta_ci_high": auc["ci_high"]}
        model["metrics"] |= {"auc_p_value": auc["p_value"]}
    (folder / EVIDENCE_FILE).write_text(json.dumps(raw | {"schema_version": "provenance.evidence/1"}))
    assert read_evidence(tmp_path, folder.name) == evidence


def test_json_that_does_not_match_the_schema(tmp_path: Path) -> None:
    folder = write_run(tmp_path, make_evidence())
    (folder / EVIDENCE_FILE).write_text(json.dumps({"schema_version": SCHEMA_VERSION, "run_id": 3}))
    with pytest.raises(EvidenceError, match=r"does not match provenance\.evidence/2: \d+ problems"):
        read_evidence(tmp_path, folder.name)


def test_list_run_ids_is_sorted_and_skips_hidden(tmp_path: Path) -> None:
    assert list_run_ids(tmp_path) == []
    for run_id in ("20260102T000000Z-bbbbbb", "20260101T000000Z-aaaaaa"):
        write_run(tmp_path, make_evidence(run_id))
    (runs_dir(tmp_path) / ".20260103T000000Z-cccccc.tmp").mkdir()  # a staging folder of a run in progress
    assert list_run_ids(tmp_path) == ["20260101T000000Z-aaaaaa", "20260102T000000Z-bbbbbb"]


def test_new_run_id_sorts_by_time() -> None:
    first = new_run_id(datetime(2026, 1, 1, tzinfo=UTC))
    assert re.fullmatch(r"20260101T000000Z-[0-9a-f]{6}", first)
    assert first < new_run_id(datetime(2026, 1, 2, tzinfo=UTC))
