"""One chat step per graph node: what the node worked on (from earlier updates of the same turn) and what it
produced."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agent.chat.cards import step_line
from agent.plan_sentence import checked_plan, dataset_name, planned_experiment


@dataclass(frozen=True, kw_only=True)
class StepView:
    name: str
    input: str
    output: str
    is_error: bool = False


class StepNarrator:
    """Turns each node's state update into a step: what the node worked on (from earlier updates of the same
    turn) and what it produced. One narrator per turn, told what the turn starts from: `question=` for a new
    question, `run_id=` when resuming an approval."""

    def __init__(self, **known: Any) -> None:
        self.state: dict[str, Any] = dict(known)

    def planned_experiment(self, node: str, update: Mapping[str, Any]) -> str | None:
        """`Planned experiment: …` in one plain sentence once `plan` has a validated mutation, so the chat says what
        will be tested before the experiment runs; None for any other update (or a refused plan)."""
        record = update.get("plan_record")
        if node != "plan" or record is None or (record.mutation is None and record.structural is None):
            return None
        ctx = update.get("field_context") or self.state.get("field_context")
        target = f"{dataset_name(ctx.dataset_urn)}.{ctx.field}" if ctx is not None else "the field"
        planned = planned_experiment(checked_plan(update.get("plan"), record.mutation), target)
        notes = update.get("tolerance_notes") or []
        return "\n".join([planned, *(f"Published tolerance: {note}" for note in notes)])

    def view(self, node: str, update: Mapping[str, Any]) -> StepView | None:
        if node == "experiment":  # the subgraph's merged output repeats experiment.measure and experiment.judge
            return None
        before, self.state = self.state, {**self.state, **update}
        new_failures = [f for f in update.get("failures") or [] if f not in (before.get("failures") or [])]
        output = _OUTPUTS.get(node, _no_output)(update)
        if new_failures:
            output = "\n".join([*(f"{f.stage} failed: {f.message}" for f in new_failures), output]).strip()
        return StepView(
            name=node,
            input=_INPUTS.get(node, _no_output)(before),
            output=output or "done",
            is_error=bool(new_failures),
        )


def _no_output(_: Mapping[str, Any]) -> str:
    return ""


def _route(update: Mapping[str, Any]) -> str:
    route = update.get("route")
    if route is None:
        return ""
    # Not the router's slice of the change ("10% of are null" once the subject is cut out): the plan step says
    # what is tested, in full.
    return f"intent: {route.intent} · subject: {route.subject or '-'}"


def _field(state: Mapping[str, Any]) -> str:
    ctx = state.get("field_context")
    return f"{ctx.dataset_urn} · field {ctx.field} ({ctx.field_type})" if ctx else ""


def _discovery(update: Mapping[str, Any]) -> str:
    found = update.get("discovery")
    if found is None:
        return ""
    lines = [f"{len(found.features)} feature(s), {len(found.models)} model(s); lineage precision {found.precision}"]
    for model in found.models:
        lines.append(f"- {model.name}: {'production' if model.production else 'not in production'}")
    return "\n".join(lines)


def _plan(update: Mapping[str, Any]) -> str:
    record, plan = update.get("plan_record"), update.get("plan")
    if record is not None:
        return f"{record.description} (planner: {record.planner})\n{record.rationale}".strip()
    return f"refused: {plan.refusal}" if plan is not None and plan.refusal else ""


def _measured(update: Mapping[str, Any]) -> str:
    return "\n".join(f"- {m.name}: {step_line(m.metrics)}" for m in update.get("model_results") or [])


def _structural(update: Mapping[str, Any]) -> str:
    """A dropped or renamed column: each model's structural verdict, no measurement."""
    return "\n".join(
        f"- {m.name}: {m.verdict} — {m.reasons[0].message if m.reasons else 'no reason'}"
        for m in update.get("model_results") or []
    )


def _judged(update: Mapping[str, Any]) -> str:
    if (verdict := update.get("verdict")) is None:
        return ""
    return "\n".join([f"verdict: {verdict}", *(f"- {reason}" for reason in update.get("verdict_reasons") or [])])


def _publication(update: Mapping[str, Any]) -> str:
    if (record := update.get("publication")) is None:
        return ""
    return f"{record.status}: {record.message}" if record.message else str(record.status)


def _approval(update: Mapping[str, Any]) -> str:
    decision = update.get("approval")
    return f"{decision.decision} by {decision.by}" if decision else ""


def _plan_input(state: Mapping[str, Any]) -> str:
    route = state.get("route")
    change = route.change if route is not None and route.change else state.get("question", "")
    return f"{change} · {_field(state)}"


_INPUTS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "route": lambda s: str(s.get("question", "")),
    "catalog_qa": _route,
    "gather_context": _route,
    "discover": _field,
    "plan": _plan_input,
    "experiment.measure": lambda s: s["plan_record"].description if s.get("plan_record") else "",
    "experiment.structural": lambda s: s["plan_record"].description if s.get("plan_record") else "",
    "experiment.judge": _measured,
    "write_evidence": _judged,
    "approval": lambda s: f"run {s['run_id']}" if s.get("run_id") else "",
    "publish": lambda s: f"run {s.get('run_id') or '?'}, {_approval(s)}",
}
_OUTPUTS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "route": _route,
    "catalog_qa": lambda u: str(u.get("answer", "")),
    "tolerance": lambda u: str(u.get("answer", "")),
    "gather_context": _field,
    "discover": _discovery,
    "plan": _plan,
    "experiment.measure": _measured,
    "experiment.structural": _structural,
    "experiment.judge": _judged,
    "write_evidence": lambda u: f"run {u['run_id']}: evidence.json, report.md and plots" if u.get("run_id") else "",
    "approval": lambda u: "\n".join(filter(None, [_approval(u), _publication(u)])),
    "publish": _publication,
    "respond": lambda u: str(u.get("answer", "")),
}
