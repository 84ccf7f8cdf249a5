"""Assessment turn, before the experiment: resolve the field, read its DataHub context, discover the affected
models, then let the planner propose a mutation that code validates against the allowlist and the field."""

from __future__ import annotations

from typing import Any

from agent.context import AgentContext
from agent.nodes.failures import Node, captured
from agent.planning.chat_plan import CHAT_PLANNERS, own_words
from agent.planning.column_changes import structural_plan
from agent.planning.suggest import suggestions
from agent.schemas import FieldContext
from agent.state import AgentState
from tools.catalog.resolve import one_column
from tools.evidence.schema import PlanRecord, new_run_id
from tools.experiment.prepare import validate_against_field
from tools.mutations import PlanError, parse_mutation
from tools.tolerance.publish import TOLERANCE_PROPERTY
from tools.tolerance.published import notes as published_notes


def make_gather_context(ctx: AgentContext) -> Node:
    @captured("gather_context")
    async def gather_context(state: AgentState) -> dict[str, Any]:
        assert state.route is not None
        discoverer = await ctx.handle.discoverer()
        if state.target is not None:  # named exactly by the front end: checked below, never resolved from words
            dataset, field = state.target.dataset_urn, state.target.field
        elif state.route.subject:
            dataset, field = one_column(state.route.subject, await discoverer.resolve_subject(state.route.subject))
        else:
            raise PlanError("name the field to change, e.g. 'payments.transactions.amount'")
        await discoverer.require_dataset(dataset)
        schema_field = await discoverer.require_field(dataset, field)
        context = FieldContext(
            dataset_urn=dataset,
            field=field,
            field_type=schema_field.type,
            native_type=schema_field.native_data_type,
            description=schema_field.description,
            other_fields=[name for name in await discoverer.field_names(dataset) if name != field],
        )
        published = schema_field.structured_properties.get(TOLERANCE_PROPERTY, [])
        return {"field_context": context, "published_tolerance": [str(v) for v in published]}

    return gather_context


def make_discover(ctx: AgentContext) -> Node:
    @captured("discover")
    async def discover(state: AgentState) -> dict[str, Any]:
        assert state.field_context is not None
        found = await (await ctx.handle.discoverer()).discover(
            state.field_context.dataset_urn, state.field_context.field
        )
        return {"discovery": found}

    return discover


def make_plan(ctx: AgentContext) -> Node:
    @captured("plan")
    async def plan(state: AgentState) -> dict[str, Any]:
        assert state.field_context is not None and state.discovery is not None
        proposal = await ctx.planner.plan(state.question, state.field_context)
        if proposal.structural is not None:  # a dropped or renamed column: judged, not measured
            checked, record = structural_plan(proposal, state.field_context, state.question, ctx.planner.name)
            return {"plan": checked, "plan_record": record}
        if proposal.op is None:
            refusal = proposal.refusal or "the planner could not map this change to a mutation operator"
            raise PlanError(refusal, suggestions=suggestions(state.question, state.field_context))
        # The proposal is untrusted: the allowlist, the bounds and the field's type decide.
        mutation = parse_mutation(proposal.op, proposal.params, fraction=proposal.fraction, seed=proposal.seed)
        validate_against_field(mutation, state.discovery)
        if ctx.planner.name in CHAT_PLANNERS:  # the offline planner and `assess`'s flags read the words themselves
            proposal = own_words(proposal, mutation, state.question, state.field_context)
        record = PlanRecord(
            planner=ctx.planner.name,
            mutation=mutation,
            description=mutation.describe(state.field_context.field),
            rationale=proposal.rationale,
            confirmed_from=state.confirmed_from,
        )
        notes = published_notes(state.published_tolerance, mutation, state.field_context.field)
        # The run id is chosen here, checkpointed before the experiment starts: a process killed in the experiment
        # resumes into the same staging folder instead of leaving it behind and starting another.
        return {"plan": proposal, "plan_record": record, "tolerance_notes": notes, "planned_run_id": new_run_id()}

    return plan
