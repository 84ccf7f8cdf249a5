"""One step per graph node: what each node worked on and what it produced."""

from __future__ import annotations

from agent.chat.narration import StepNarrator, StepView
from agent.schemas import ExperimentPlan, FieldContext, Intent, RouteDecision
from agent.state import ApprovalDecision
from policies import Verdict
from tests.agent.chat.helpers import DATASET_URN, fraud_model
from tests.tools.evidence import task_examples
from tools.evidence.schema import PlanRecord, StageFailure


def test_each_node_becomes_a_step_with_its_input_and_output() -> None:
    question = "What happens if payments.transactions.amount is sent in cents?"
    narrator = StepNarrator(question=question)
    route = RouteDecision(intent=Intent.ASSESS, subject="payments.transactions.amount", change="sent in cents")
    routed = narrator.view("route", {"route": route, "question": question, "failures": []})
    assert routed == StepView(
        name="route",
        input=question,
        output="intent: assess · subject: payments.transactions.amount",  # the plan step says the change in full
    )
    field = FieldContext(dataset_urn=DATASET_URN, field="amount", field_type="NUMBER")
    gathered = narrator.view("gather_context", {"field_context": field})
    assert gathered is not None and gathered.input == routed.output
    assert gathered.output == f"{DATASET_URN} · field amount (NUMBER)"
    record = PlanRecord(
        planner="deterministic", mutation={"op": "scale", "factor": 100}, description="scale amount by 100"
    )
    planned = narrator.view("plan", {"plan_record": record})
    assert planned is not None and planned.input == f"sent in cents · {DATASET_URN} · field amount (NUMBER)"
    measured = narrator.view("experiment.measure", {"model_results": [fraud_model()]})
    assert measured is not None and measured.input == "scale amount by 100"
    assert measured.output == "- fraud_detector: flips 78.8%, ΔAUC -0.173, PSI 7.31, failures 0.0%"
    assert narrator.view("experiment", {"model_results": [fraud_model()]}) is None  # repeats measure + judge
    judged = narrator.view("experiment.judge", {"verdict": Verdict.BLOCK, "verdict_reasons": ["fraud_detector: x"]})
    assert judged is not None and judged.output == "verdict: BLOCK\n- fraud_detector: x"
    approved = narrator.view("approval", {"approval": ApprovalDecision(decision="approve", by="chat:provenance")})
    assert approved is not None and approved.output == "approve by chat:provenance"
    resumed = StepNarrator(run_id="r1").view("approval", {"approval": ApprovalDecision(decision="reject")})
    assert resumed is not None and (resumed.input, resumed.output) == ("run r1", "reject by unknown")
    assert narrator.view("respond", {}) == StepView(name="respond", input="", output="done")


def test_the_measure_step_shows_each_models_task_metrics() -> None:
    regression = task_examples.model("review_time", task_examples.regression_metrics())
    measured = StepNarrator().view("experiment.measure", {"model_results": [fraud_model(), regression]})
    assert measured is not None
    assert measured.output.splitlines() == [
        "- fraud_detector: flips 78.8%, ΔAUC -0.173, PSI 7.31, failures 0.0%",
        "- review_time: MAE 0.8325 → 1,843 (+221310.0%), moved 40.0%, PSI 5.12, failures 0.1%",
    ]


def test_a_step_whose_node_failed_is_an_error_showing_only_the_new_failure() -> None:
    narrator = StepNarrator()
    first = StageFailure(stage="discover", message="CatalogError: the MCP server did not start")
    failed = narrator.view("discover", {"failures": [first]})
    assert failed is not None and failed.is_error
    assert failed.output == "discover failed: CatalogError: the MCP server did not start"
    second = StageFailure(stage="write_evidence", message="disk full")
    later = narrator.view("write_evidence", {"failures": [first, second]})
    assert later is not None and later.output == "write_evidence failed: disk full"


def test_the_plan_is_said_in_one_sentence_before_the_experiment() -> None:
    narrator = StepNarrator(question="amount in cents?")
    field = FieldContext(dataset_urn=DATASET_URN, field="amount", field_type="NUMBER")
    narrator.view("gather_context", {"field_context": field})
    assert narrator.planned_experiment("gather_context", {"field_context": field}) is None
    plan = ExperimentPlan(
        op="scale",
        params={"factor": "100"},  # as proposed; the sentence says what was validated
        rationale="dollars → cents multiplies every amount by 100.",
        assumptions=["no share given: 100% of rows"],
    )
    record = PlanRecord(
        planner="deterministic", mutation={"op": "scale", "factor": 100}, description="scale amount by 100"
    )
    update = {"plan": plan, "plan_record": record}
    narrator.view("plan", update)
    assert narrator.planned_experiment("plan", update) == (
        "Planned experiment: scale payments.public.transactions.amount ×100 on 100% of rows (seed 0) — "
        "dollars → cents multiplies every amount by 100. Assumed: no share given: 100% of rows."
    )
    refused = StageFailure(stage="plan", message="cannot model 'make it blue'", kind="input")
    assert narrator.planned_experiment("plan", {"failures": [refused]}) is None
    assert narrator.planned_experiment("experiment.measure", update) is None


def test_a_structural_judgement_is_narrated_with_each_models_reason() -> None:
    from policies import Reason, Verdict
    from tools.evidence.schema import ModelEvidence

    reason = Reason(code="structural_dropped_block", severity=Verdict.BLOCK, message="input column amount is dropped")
    judged = ModelEvidence(urn="urn:li:mlModel:(x)", name="fraud_detector", verdict=Verdict.BLOCK, reasons=[reason])
    view = StepNarrator().view("experiment.structural", {"model_results": [judged]})
    assert view is not None and view.output == "- fraud_detector: BLOCK — input column amount is dropped"
