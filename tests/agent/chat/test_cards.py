"""The verdict card, the run's files and the publication result."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.chat.cards import approval_question, publication_markdown, run_files, step_line, verdict_card
from agent.chat.messages import plain
from agent.state import ApprovalRequest
from policies import Verdict
from tests.agent.chat.helpers import DATASET_URN, MODEL_URN, fraud_metrics, fraud_model
from tests.tools.evidence import task_examples
from tools.evidence.schema import (
    ChangeRequest,
    Evidence,
    ModelEvidence,
    NotTested,
    PlanRecord,
    PolicyRecord,
    PublicationRecord,
)
from tools.evidence.store import runs_dir


def _evidence(home: Path, models: list[ModelEvidence]) -> Evidence:
    evidence = Evidence(
        run_id="20260101T000000Z-abcdef",
        request=ChangeRequest(dataset_urn=DATASET_URN, field="amount", op="scale", params={}, fraction=1, seed=0),
        catalog="embedded",
        plan=PlanRecord(planner="deterministic", mutation={}, description="scale amount by 100"),
        models=models,
        not_tested=[NotTested(urn="urn:x", name="fraud_detector_challenger", reason="not in production")],
        verdict=Verdict.BLOCK,
        verdict_reasons=["fraud_detector: BLOCK"],
        policy=PolicyRecord(name="default", version=1, sha256="0" * 64, path="policies/default-v1.yaml"),
    )
    folder = runs_dir(home) / evidence.run_id
    folder.mkdir(parents=True)
    (folder / "fraud_detector-roc.png").write_bytes(b"png")  # the shift plot is missing on purpose
    return evidence


def test_verdict_card_shows_verdicts_metrics_with_intervals_reasons_and_writes(tmp_path: Path) -> None:
    evidence = _evidence(tmp_path, [fraud_model()])
    request = ApprovalRequest(
        run_id=evidence.run_id,
        verdict=Verdict.BLOCK,
        models={MODEL_URN: Verdict.BLOCK},
        writes=[f"set tag urn:li:tag:provenance:BLOCK on {MODEL_URN}"],
        report="report.md",
        question="q",
    )
    card = verdict_card(tmp_path, evidence, request)
    assert card.startswith("## Verdict: BLOCK")
    assert "| fraud\\_detector | **BLOCK** | 0.0% | 78.8% | 0.899 → 0.727 | -0.173, p = 6.1e-158 | 7.31 |" in card
    assert "- fraud\\_detector, 95% CI: Flip rate 77.8% to 79.7%; ΔAUC -0.185 to -0.160" in card
    assert "- **fraud\\_detector** BLOCK: flip rate 78\\.8% \\>= 10% block threshold" in card
    assert "0 of 7200 rows failed" not in card  # PASS reasons stay in the report
    assert "fraud\\_detector\\_challenger: not in production" in card
    assert f"`{runs_dir(tmp_path) / evidence.run_id / 'evidence.json'}`" in card
    assert "set tag urn\\:li\\:tag\\:provenance\\:BLOCK" in card
    assert "Approving writes" not in verdict_card(tmp_path, evidence)
    assert "**Approving publishes the verdict BLOCK**\n\n**Approving writes to DataHub:**" in card  # old checkpoints


def test_the_approval_repeats_the_change_tested_next_to_the_verdict_and_the_writes(tmp_path: Path) -> None:
    evidence = _evidence(tmp_path, [fraud_model()])
    change = "scale payments.public.transactions.amount ×100 on 100% of rows (seed 0) — cents. Assumed: all rows."
    request = ApprovalRequest(
        run_id=evidence.run_id,
        verdict=Verdict.BLOCK,
        change_tested=change,
        models={MODEL_URN: Verdict.BLOCK},
        writes=[f"set tag urn:li:tag:provenance:BLOCK on {MODEL_URN}"],
        report="report.md",
        question="q",
    )
    said = plain(change)
    lines = verdict_card(tmp_path, evidence, request).splitlines()
    at = lines.index(f"**Approving publishes the verdict BLOCK** **of the change tested:** {said}")
    assert lines[at + 1 : at + 4] == [
        "",
        "**Approving writes to DataHub:**",
        "- " + plain(f"set tag urn:li:tag:provenance:BLOCK on {MODEL_URN}"),
    ]
    assert approval_question(request) == (
        f"Publish the verdict **BLOCK** to DataHub (tag and impact document)?\n\n**Change tested:** {said}"
    )
    no_change = request.model_copy(update={"change_tested": ""})
    assert approval_question(no_change) == "Publish the verdict **BLOCK** to DataHub (tag and impact document)?"


def test_card_of_an_unmeasured_model_and_the_run_files(tmp_path: Path) -> None:
    unmeasured = fraud_model(Verdict.INCOMPLETE).model_copy(update={"metrics": None})
    evidence = _evidence(tmp_path, [unmeasured])
    assert "| fraud\\_detector | **INCOMPLETE** | not measured |" in verdict_card(tmp_path, evidence)
    plots, evidence_json, report = run_files(tmp_path, evidence)
    folder = runs_dir(tmp_path) / evidence.run_id
    assert plots == [folder / "fraud_detector-roc.png"]
    assert (evidence_json, report) == (folder / "evidence.json", folder / "report.md")


def test_card_of_a_run_with_two_tasks_shows_each_tasks_metrics(tmp_path: Path) -> None:
    regression = task_examples.regression_metrics(segments=task_examples.segments("moved_share"))
    evidence = _evidence(tmp_path, [fraud_model(), task_examples.model("review_time", regression)])
    card = verdict_card(tmp_path, evidence)
    binary, rest = card.split("| Model | Verdict | Failed rows | Moved")
    assert "| fraud\\_detector | **BLOCK** | 0.0% | 78.8% | 0.899 → 0.727 |" in binary
    assert "AUC" not in rest.split("**Why**")[0]  # nothing of a classifier next to the regressor
    assert "| review\\_time | **BLOCK** | 0.1% | 40.0% | 0.8325 → 1,843 |" in rest
    assert "- **review\\_time**: region=north \\(12\\.1% of rows\\)\\: moved share 30\\.4%" in rest


def test_metrics_line_per_task() -> None:
    assert step_line(fraud_metrics()) == "flips 78.8%, ΔAUC -0.173, PSI 7.31, failures 0.0%"
    assert step_line(task_examples.regression_metrics()) == (
        "MAE 0.8325 → 1,843 (+221310.0%), moved 40.0%, PSI 5.12, failures 0.1%"
    )
    assert step_line(task_examples.multiclass_metrics(segments=task_examples.segments())) == (
        "flips 7.0%, accuracy 91.2% → 85.1%, macro-F1 0.884 → 0.801, PSI 0.21, failures 0.1%; "
        "worst segment region=north: flip rate 30.4%"
    )
    assert step_line(None) == "not measured"


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (None, "Nothing was published."),
        (
            PublicationRecord(
                status="published",
                decided_by="chat:provenance",
                tags={MODEL_URN: "urn:li:tag:t"},
                document_urn="urn:li:document:shared-1",
            ),
            f"**Published** by chat\\:provenance: `urn:li:tag:t` on `{MODEL_URN}`; "
            "document `urn:li:document:shared-1`.",
        ),
        (
            PublicationRecord(status="rejected", decided_by="chat:provenance"),
            "**Rejected** by chat\\:provenance: nothing was written to DataHub.",
        ),
        (
            PublicationRecord(status="failed", message="GMS down"),
            "**Publication failed:** GMS down. `provenance publish` retries it.",
        ),
    ],
)
def test_publication_result(record: PublicationRecord | None, expected: str) -> None:
    assert publication_markdown(record) == expected
