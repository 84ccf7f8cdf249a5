"""The chat's UI-agnostic helpers: local login and secret, history schema, node steps, verdict card, messages."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

import pytest

from agent import chat_support as ui
from agent.schemas import FieldContext, Intent, RouteDecision
from agent.state import ApprovalDecision, ApprovalRequest
from policies.engine import Reason, Verdict
from tools.evidence.schema import (
    ChangeRequest,
    Evidence,
    ModelEvidence,
    NotTested,
    PlanRecord,
    PolicyRecord,
    PublicationRecord,
    StageFailure,
)
from tools.evidence.store import runs_dir
from tools.experiment.metrics import ModelMetrics

MODEL_URN = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,fraud_detector,PROD)"
DATASET_URN = "urn:li:dataset:(urn:li:dataPlatform:postgres,payments.public.transactions,PROD)"

# --- local setup ---------------------------------------------------------------------------------------------


def test_auth_secret_is_created_private_and_reused(tmp_path: Path) -> None:
    env: dict[str, str] = {}
    secret = ui.ensure_auth_secret(tmp_path, env)
    path = tmp_path / ui.SECRET_FILE
    assert env[ui.AUTH_SECRET_ENV] == secret and len(secret) >= 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again: dict[str, str] = {}
    assert ui.ensure_auth_secret(tmp_path, again) == secret == again[ui.AUTH_SECRET_ENV]


def test_auth_secret_from_the_environment_wins_and_writes_nothing(tmp_path: Path) -> None:
    env = {ui.AUTH_SECRET_ENV: "set-by-the-operator"}
    assert ui.ensure_auth_secret(tmp_path, env) == "set-by-the-operator"
    assert not (tmp_path / ui.SECRET_FILE).exists()


def test_an_empty_secret_file_is_an_error_not_a_weak_secret(tmp_path: Path) -> None:
    (tmp_path / ui.SECRET_FILE).write_text("\n")
    with pytest.raises(RuntimeError, match="chainlit-secret is empty"):
        ui.ensure_auth_secret(tmp_path, {})


@pytest.mark.parametrize(
    ("user", "password", "env", "ok"),
    [
        ("provenance", "provenance", {}, True),
        ("provenance", "wrong", {}, False),
        ("admin", "provenance", {}, False),
        ("provenance", "s3cret", {ui.PASSWORD_ENV: "s3cret"}, True),
        ("provenance", "provenance", {ui.PASSWORD_ENV: "s3cret"}, False),
    ],
)
def test_login(user: str, password: str, env: dict[str, str], ok: bool) -> None:
    assert ui.check_login(user, password, env) is ok


def test_chat_db_schema_is_created_idempotently(tmp_path: Path) -> None:
    path = ui.init_chat_db(tmp_path / "home")
    assert ui.init_chat_db(tmp_path / "home") == path == tmp_path / "home" / "chat.db"
    with sqlite3.connect(path) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        columns = {row[1] for row in conn.execute("PRAGMA table_info(steps)")}
    conn.close()
    assert tables == {"users", "threads", "steps", "elements", "feedbacks"}
    assert {"threadId", "parentId", "showInput", "defaultOpen"} <= columns


# --- steps ---------------------------------------------------------------------------------------------------


def _metrics(**overrides: float | None) -> ModelMetrics:
    values: dict[str, object] = {
        "n": 7200,
        "positives": 556,
        "negatives": 6644,
        "n_scored": 7200,
        "auc_baseline": 0.8993,
        "auc_mutated": 0.7266,
        "auc_delta": -0.1727,
        "auc_delta_ci_low": -0.1854,
        "auc_delta_ci_high": -0.1601,
        "auc_p_value": 6.06e-158,
        "flips": 5672,
        "flip_rate": 0.7878,
        "flip_rate_ci_low": 0.7782,
        "flip_rate_ci_high": 0.7971,
        "prob_shift_mean": 0.686,
        "prob_shift_p95": 0.938,
        "prob_shift_max": 0.967,
        "psi": 7.307,
        "failures": 0,
        "failure_rate": 0.0,
        "threshold": 0.5,
        "confidence": 0.95,
        "methods": {},
    }
    return ModelMetrics.model_validate(values | overrides)


def _model(verdict: Verdict = Verdict.BLOCK, metrics: ModelMetrics | None = None) -> ModelEvidence:
    reasons = [
        Reason(code="flip_rate_block", severity=Verdict.BLOCK, message="flip rate 78.8% >= 10% block threshold"),
        Reason(code="inference_failures_pass", severity=Verdict.PASS, message="0 of 7200 rows failed"),
    ]
    return ModelEvidence(
        urn=MODEL_URN,
        name="fraud_detector",
        verdict=verdict,
        reasons=reasons,
        metrics=metrics or _metrics(),
        plots={"roc": "fraud_detector-roc.png", "shift": "fraud_detector-shift.png"},
    )


def test_each_node_becomes_a_step_with_its_input_and_output() -> None:
    question = "What happens if payments.transactions.amount is sent in cents?"
    narrator = ui.StepNarrator(question=question)
    route = RouteDecision(intent=Intent.ASSESS, subject="payments.transactions.amount", change="sent in cents")
    routed = narrator.view("route", {"route": route, "question": question, "failures": []})
    assert routed == ui.StepView(
        name="route",
        input=question,
        output="intent: assess · subject: payments.transactions.amount · change: sent in cents",
    )
    field = FieldContext(dataset_urn=DATASET_URN, field="amount", field_type="NUMBER")
    gathered = narrator.view("gather_context", {"field_context": field})
    assert gathered is not None and gathered.input == routed.output
    assert gathered.output == f"{DATASET_URN} · field amount (NUMBER)"
    record = PlanRecord(planner="deterministic", mutation={"op": "scale"}, description="scale amount by 100")
    planned = narrator.view("plan", {"plan_record": record})
    assert planned is not None and planned.input == f"sent in cents · {DATASET_URN} · field amount (NUMBER)"
    measured = narrator.view("experiment.measure", {"model_results": [_model()]})
    assert measured is not None and measured.input == "scale amount by 100"
    assert measured.output == "- fraud_detector: flips 78.8%, ΔAUC -0.173, PSI 7.31, failures 0.0%"
    assert narrator.view("experiment", {"model_results": [_model()]}) is None  # repeats measure + judge
    judged = narrator.view("experiment.judge", {"verdict": Verdict.BLOCK, "verdict_reasons": ["fraud_detector: x"]})
    assert judged is not None and judged.output == "verdict: BLOCK\n- fraud_detector: x"
    approved = narrator.view("approval", {"approval": ApprovalDecision(decision="approve", by="chat:provenance")})
    assert approved is not None and approved.output == "approve by chat:provenance"
    resumed = ui.StepNarrator(run_id="r1").view("approval", {"approval": ApprovalDecision(decision="reject")})
    assert resumed is not None and (resumed.input, resumed.output) == ("run r1", "reject by unknown")
    assert narrator.view("respond", {}) == ui.StepView(name="respond", input="", output="(no change)")


def test_a_step_whose_node_failed_is_an_error_showing_only_the_new_failure() -> None:
    narrator = ui.StepNarrator()
    first = StageFailure(stage="discover", message="CatalogError: the MCP server did not start")
    failed = narrator.view("discover", {"failures": [first]})
    assert failed is not None and failed.is_error
    assert failed.output == "discover failed: CatalogError: the MCP server did not start"
    second = StageFailure(stage="write_evidence", message="disk full")
    later = narrator.view("write_evidence", {"failures": [first, second]})
    assert later is not None and later.output == "write_evidence failed: disk full"


# --- messages ------------------------------------------------------------------------------------------------


def test_plain_text_keeps_urns_lines_and_indentation() -> None:
    text = "Owners: urn:li:corpuser:alice\n  - path: a -> b [IDENTITY]"
    assert ui.plain(text) == (
        "Owners\\: urn\\:li\\:corpuser\\:alice  \n\u00a0\u00a0\\- path\\: a \\-\\> b \\[IDENTITY\\]"
    )


def test_answer_says_plainly_when_the_catalog_is_unreachable() -> None:
    failure = StageFailure(stage="catalog_qa", message="CatalogError: could not start the DataHub MCP server")
    answer = ui.answer_markdown({"answer": "Stage catalog_qa failed: ...", "failures": [failure]})
    assert answer.startswith("**The DataHub catalog could not be reached.**")
    assert ui.answer_markdown({"answer": "Owners of x", "failures": []}) == "Owners of x"
    refused = StageFailure(stage="plan", message="cannot model 'make it blue'", kind="input")
    assert "could not be reached" not in ui.answer_markdown({"answer": "I could not run this", "failures": [refused]})


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
    evidence = _evidence(tmp_path, [_model()])
    request = ApprovalRequest(
        run_id=evidence.run_id,
        verdict=Verdict.BLOCK,
        models={MODEL_URN: Verdict.BLOCK},
        writes=[f"set tag urn:li:tag:provenance:BLOCK on {MODEL_URN}"],
        report="report.md",
        question="q",
    )
    card = ui.verdict_card(tmp_path, evidence, request)
    assert card.startswith("## ⛔ Verdict: BLOCK")
    assert "| fraud\\_detector | ⛔ BLOCK | 78.8% (77.8% – 79.7%) | 0.899 → 0.727 |" in card
    assert "-0.173 (-0.185 to -0.160), p = 6.1e-158 | 7.31 | 0.0% |" in card
    assert "- **fraud\\_detector** BLOCK: flip rate 78\\.8% \\>= 10% block threshold" in card
    assert "0 of 7200 rows failed" not in card  # PASS reasons stay in the report
    assert "fraud\\_detector\\_challenger: not in production" in card
    assert f"`{runs_dir(tmp_path) / evidence.run_id / 'evidence.json'}`" in card
    assert "set tag urn\\:li\\:tag\\:provenance\\:BLOCK" in card
    assert "Approving writes" not in ui.verdict_card(tmp_path, evidence)


def test_card_of_an_unmeasured_model_and_the_run_files(tmp_path: Path) -> None:
    unmeasured = _model(Verdict.INCOMPLETE).model_copy(update={"metrics": None})
    evidence = _evidence(tmp_path, [unmeasured])
    assert "| fraud\\_detector | ❔ INCOMPLETE | not measured |" in ui.verdict_card(tmp_path, evidence)
    plots, evidence_json, report = ui.run_files(tmp_path, evidence)
    folder = runs_dir(tmp_path) / evidence.run_id
    assert plots == [folder / "fraud_detector-roc.png"]
    assert (evidence_json, report) == (folder / "evidence.json", folder / "report.md")


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
    assert ui.publication_markdown(record) == expected


def test_starters_cover_the_demo_and_the_three_catalog_questions() -> None:
    messages = [message for _, message in ui.STARTERS]
    assert messages[0] == ui.DEMO_QUESTION
    assert {"owners", "dependents", "latest verdict"} <= {
        "owners" if "Who owns" in m else "dependents" if "depends on" in m else "latest verdict" for m in messages[1:]
    }


def test_replay_command_parsing() -> None:
    assert ui.replay_argument("/replay") == ""
    assert ui.replay_argument("  /replay abc-123 ") == "abc-123"
    assert ui.replay_argument("/replaying") is None
    assert ui.replay_argument("what depends on amount?") is None


def test_replay_markdown_lists_and_rejects_unknown_traces(tmp_path: Path) -> None:
    import asyncio

    assert asyncio.run(ui.replay_markdown("", tmp_path)) == "No saved conversations yet."
    answer = asyncio.run(ui.replay_markdown("no-such-trace", tmp_path))
    assert answer.startswith("Cannot replay")
