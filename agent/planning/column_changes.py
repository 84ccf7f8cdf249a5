"""A column dropped or renamed, said of the field itself ("amount is dropped", "rename the column to amount_usd"):
a schema change no experiment can simulate, which the policy's structural rule judges for every production model
that reads the column — as `provenance check` judges a dropped or renamed column in CHANGES.yml.

Read only when the whole change is that one clause, so "'grocery' is renamed to 'groceries'" (a category rename),
"5% of rows are dropped" or "the table is dropped" never reads as one; other schema changes (retyping, encrypting,
masking, splitting, a table dropped) stay refused by `detectors.structural`. `structural_plan` also checks a chat
model's structural proposal against the request's words: a plan is never structural unless the person said so.
"""

from __future__ import annotations

from typing import Final, Literal

from agent.planning.phrases import rx
from agent.schemas import ExperimentPlan, FieldContext
from tools.evidence.schema import PlanRecord
from tools.mutations import PlanError

_FROM: Final = r"(?:\s+from(?:\s+(?:the\s+)?(?:\w+\s+)?(?:table|dataset|schema|source|view|model))?)?"
_SUBJECT: Final = r"^\W*(?:the\s+)?(?:(?:column|field)\s+)?"
_BE: Final = r"(?:is|gets?|got|was|will\s+be|would\s+be|were|being)\s+"
_WE: Final = r"^\W*(?:(?:we|they|i|you|someone)\s+)?(?:(?:will|would|want\s+to|plan\s+to)\s+)?"
_NAME: Final = r"[`'\"]?([A-Za-z_]\w*)[`'\"]?"
DROPPED: Final = rx(
    rf"{_SUBJECT}(?:{_BE})?(?:dropped|deleted|removed){_FROM}\W*$"
    rf"|{_WE}(?:drop|delete|remove)s?(?:\s+the)?(?:\s+(?:column|field))?{_FROM}\W*$"
)
RENAMED: Final = rx(
    rf"{_SUBJECT}(?:{_BE})?renamed(?:\s+(?:to|as|into)(?:\s+{_NAME})?)?\W*$"
    rf"|{_WE}renam(?:e|es|ed)(?:\s+the)?(?:\s+(?:column|field))?(?:\s+(?:to|as|into)(?:\s+{_NAME})?)?\W*$"
)
# The new name as written, where masking the dataset's dotted name left a blank ("… renamed to a.b.amount_usd").
RAW_TARGET: Final = rx(r"\brenamed?\s+(?:\w+\s+)?(?:to|as|into)\s+[`'\"]?([\w.]+)")
SAID: Final = rx(r"\b(?:drop|delet|remov|renam)\w*")

_WHY: Final = (
    "every model that reads it loses an input; the policy's structural rule judges this schema change (no experiment "
    "can simulate it)"
)


def column_change(masked: str, raw: str, field: FieldContext) -> ExperimentPlan | None:
    """The plan for a dropped or renamed column, when that is the whole change; None otherwise. `masked` is the
    change with identifiers and the field's name blanked (the planner's reading), `raw` the change as written."""
    name = field.field.rsplit(".", 1)[-1]
    if DROPPED.search(masked):
        return ExperimentPlan(structural="dropped", rationale=f"the request drops the column {name}: {_WHY}.")
    if not (found := RENAMED.search(masked)):
        return None
    target = found.group(1) or found.group(2)
    if target is None and (written := RAW_TARGET.search(raw)):
        target = written.group(1).rsplit(".", 1)[-1]
    if target is not None and target.lower() == name.lower():
        return ExperimentPlan(refusal=f"This renames {name} to its own name, which changes nothing.")
    to = f" to {target}" if target else ""
    plan = ExperimentPlan(
        structural="renamed", renamed_to=target, rationale=f"the request renames the column {name}{to}: {_WHY}."
    )
    return plan if target else plan.model_copy(update={"assumptions": ["no new name given"]})


def structural_plan(
    proposal: ExperimentPlan, field: FieldContext, question: str, planner: str
) -> tuple[ExperimentPlan, PlanRecord]:
    """The checked structural proposal and its record; PlanError when it is not one the request made."""
    change: Literal["dropped", "renamed"] | None = proposal.structural
    assert change is not None
    if proposal.op is not None:
        raise PlanError("a plan is either a change to the values (op) or a dropped/renamed column, not both")
    if not SAID.search(question):
        raise PlanError(
            f"the planner proposed that {field.field} is {change}, but the request does not say the column is "
            "dropped or renamed; say the change to test"
        )
    name = field.field.rsplit(".", 1)[-1]
    dataset = field.dataset_urn.split(",")[1] if field.dataset_urn.count(",") >= 2 else field.dataset_urn
    renamed_to = proposal.renamed_to if change == "renamed" else None
    what = f"renamed to {renamed_to}" if renamed_to else "renamed" if change == "renamed" else "dropped"
    record = PlanRecord(
        planner=planner,  # type: ignore[arg-type]  # a PlannerName
        mutation=None,
        description=f"column {name} of {dataset} {what} (a schema change: the policy's structural rule, no experiment)",
        rationale=proposal.rationale,
        structural=change,
        renamed_to=renamed_to,
    )
    return proposal.model_copy(update={"renamed_to": renamed_to}), record
