"""What the planners (a chat model or the deterministic one) may return. Both are proposals: code validates every field
before use, and nothing here can carry a verdict or a write."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field


class Intent(StrEnum):
    ASSESS = "assess"  # "what happens if X is sent in cents?"
    DEPENDENTS = "dependents"  # "what depends on X?" / "which models use X?"
    OWNERS = "owners"  # "who owns X?"
    LATEST_VERDICT = "latest_verdict"  # "what is the latest verdict for model M?"
    TOLERANCE = "tolerance"  # "how much change can X take?" (a tolerance scan)
    HELP = "help"  # greetings, "what can you do?"
    UNKNOWN = "unknown"


class RouteDecision(BaseModel):
    """First step: what kind of request is this and what does it talk about."""

    intent: Intent = Field(description="The kind of request.")
    subject: str | None = Field(
        default=None,
        description="The dataset, field or model exactly as the user named it, e.g. "
        "'payments.transactions.amount', 'fraud_detector' or a full DataHub URN. None if not named.",
    )
    change: str | None = Field(
        default=None, description="For intent=assess: the proposed change in the user's words, e.g. 'sent in cents'."
    )


class FieldTarget(BaseModel):
    """A field named exactly by a front end (`provenance assess`, the service, MCP's assess_change): no words to
    resolve, carried typed into the state."""

    dataset_urn: str
    field: str

    @property
    def urn(self) -> str:
        """DataHub's schemaField URN of the field."""
        return f"urn:li:schemaField:({self.dataset_urn},{self.field})"


class FieldContext(BaseModel):
    """DataHub facts about the resolved field, gathered before planning and shown to the planner."""

    dataset_urn: str
    field: str
    field_type: str = Field(description="DataHub type: NUMBER, STRING, BOOLEAN, …")
    native_type: str | None = None
    description: str | None = None
    sample_values: list[str] = Field(default_factory=list, description="Known categories, when available.")
    other_fields: list[str] = Field(
        default_factory=list,
        description="The dataset's other fields: a change that names one is not this field's alone.",
    )


class ExperimentPlan(BaseModel):
    """Second step (assessments only): the mutation that models the proposed change."""

    op: str | None = Field(
        default=None, description="One allowlisted operator name, or None when the change cannot be modelled."
    )
    params: dict[str, Any] = Field(default_factory=dict, description="The operator's parameters.")
    fraction: float = Field(default=1.0, description="Share of rows affected, in (0, 1].")
    seed: int = Field(default=0, description="Seed for choosing rows; keep 0 unless asked.")
    rationale: str = Field(default="", description="One sentence: why this operator and these parameters.")
    assumptions: list[str] = Field(
        default_factory=list,
        description="Every default chosen because the request did not say, e.g. 'no share given: 100% of rows'.",
    )
    refusal: str | None = Field(
        default=None, description="When op is None: why, and what kinds of change can be tested instead."
    )
    structural: Literal["dropped", "renamed"] | None = Field(
        default=None,
        description="Only when the request drops the column itself or renames the column itself (not its values or "
        "categories): 'dropped' or 'renamed'; op stays None. Judged by the policy's structural rule, not measured.",
    )
    renamed_to: str | None = Field(default=None, description="With structural 'renamed': the column's new name.")
    cited: list[str] = Field(
        default_factory=list,
        description="The words of the request, copied exactly, that each part of the plan was read from: the change, "
        "its size and unit, the share of rows, quoted values, the seed. One span per entry, e.g. ['sent in cents', "
        "'on 5% of rows']. Every number, unit, quoted value, condition, range and direction the request states must "
        "be in a cited span or in context; if one cannot be part of the plan, set op to null and refuse.",
    )
    context: list[str] = Field(
        default_factory=list,
        description="Numbers of the request, copied exactly, that are not part of the change: a ticket number, a "
        "date, a count of models (e.g. 'JIRA-1234', 'in 2 weeks'). Never a condition, a range or a second change.",
    )


# Who planned, as evidence and traces record it: "gemini" (ChatGoogleGenerativeAI), "chat_model" (any other chat
# model, e.g. of PROVENANCE_CHAT_MODEL), "deterministic" (agent/planning), "replay" (a trace's recorded replies),
# "cli" (`provenance assess`'s fixed plan).
PlannerName = Literal["deterministic", "gemini", "chat_model", "replay", "cli"]
