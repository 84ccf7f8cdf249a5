"""The optional chat model (Gemini) and the planner that asks it for structured proposals.

`chat_model_from_env` builds the model only when an API key is configured, so the deterministic path never needs
google-genai. `LlmPlanner` wraps any chat model that supports `with_structured_output` (Gemini, or the scripted
fake of `agent.fakes` in tests and replays) and turns every failure into a `PlannerError`: there is no silent
fallback to a guess.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TypeVar

from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, SecretStr

from agent.prompts import RETRY_PROMPT, plan_messages, route_messages
from agent.schemas import ExperimentPlan, FieldContext, PlannerName, RouteDecision

DEFAULT_GEMINI_MODEL = "gemini-2.5-flash"
MODEL_ENV = "PROVENANCE_GEMINI_MODEL"
BASE_URL_ENV = "PROVENANCE_GEMINI_BASE_URL"  # another endpoint (a gateway, or a local stub in tests)
API_KEY_ENVS = ("GOOGLE_API_KEY", "GEMINI_API_KEY")  # the order langchain-google-genai checks them in

_MAX_ERROR_CHARS = 500

M = TypeVar("M", bound=BaseModel)


class PlannerError(RuntimeError):
    """The model could not produce a usable proposal; the message names the step, the model and the cause."""


def chat_model_from_env(env: Mapping[str, str] | None = None) -> BaseChatModel | None:
    """Gemini when `GOOGLE_API_KEY` or `GEMINI_API_KEY` is set (non-empty), else None.

    `PROVENANCE_GEMINI_MODEL` picks the model (default gemini-2.5-flash); `PROVENANCE_GEMINI_BASE_URL` sends
    requests to another endpoint. Nothing is sent until the model is invoked.
    """
    env = os.environ if env is None else env
    api_key = next((value for name in API_KEY_ENVS if (value := env.get(name, "").strip())), None)
    if api_key is None:
        return None
    # Imported here: google-genai is slow to import and not needed at all when no key is configured.
    from langchain_google_genai import ChatGoogleGenerativeAI

    return ChatGoogleGenerativeAI(
        model=env.get(MODEL_ENV, "").strip() or DEFAULT_GEMINI_MODEL,
        temperature=0,
        max_retries=2,
        timeout=30,
        api_key=SecretStr(api_key),
        # `base_url` becomes google-genai's HttpOptions(base_url=...); None keeps the public endpoint.
        base_url=env.get(BASE_URL_ENV, "").strip() or None,
        # A key means the Gemini Developer API; don't let a stray GOOGLE_GENAI_USE_VERTEXAI switch to Vertex.
        vertexai=False,
    )


class LlmPlanner:
    """Routes a request and proposes an experiment plan through a chat model's structured output.

    Both results are proposals: callers validate them (the plan against the operator allowlist) before use.
    A reply that does not parse into the schema is retried up to `attempts` times in all, with the parse error
    shown to the model; any other model failure (network, quota, bad request) raises at once, because the chat
    client has already retried those.
    """

    def __init__(self, model: BaseChatModel, *, attempts: int = 2, name: PlannerName = "gemini") -> None:
        if attempts < 1:
            raise ValueError(f"attempts must be at least 1, got {attempts}")
        self.model = model
        self.attempts = attempts
        self.name: PlannerName = name

    def __repr__(self) -> str:
        return f"LlmPlanner(model={self._model_label()!r}, attempts={self.attempts}, name={self.name!r})"

    async def route(self, text: str, *, config: RunnableConfig | None = None) -> RouteDecision:
        """Classify the request and pick out its subject and proposed change."""
        return await self._ask(RouteDecision, route_messages(text), config)

    async def plan(self, text: str, field: FieldContext, *, config: RunnableConfig | None = None) -> ExperimentPlan:
        """Propose the mutation that models the requested change to `field`."""
        return await self._ask(ExperimentPlan, plan_messages(text, field), config)

    async def _ask(self, schema: type[M], messages: list[BaseMessage], config: RunnableConfig | None) -> M:
        structured = self.model.with_structured_output(schema)
        failure: OutputParserException | None = None
        for _ in range(self.attempts):
            try:
                result = await structured.ainvoke(messages, config=config)
                if not isinstance(result, schema):
                    # e.g. a function-calling reply without the tool call: the parser yields None, not an error.
                    raise OutputParserException(f"expected a {schema.__name__}, got {type(result).__name__}")
                return result
            except OutputParserException as exc:
                failure = exc
                messages = [*messages, *_correction(exc)]
            except Exception as exc:
                raise PlannerError(
                    f"{self._model_label()} failed while proposing a {schema.__name__}: "
                    f"{type(exc).__name__}: {_clip(str(exc))}"
                ) from exc
        raise PlannerError(
            f"{self._model_label()} did not return a valid {schema.__name__} in {self.attempts} attempt(s): "
            f"{_clip(str(failure))}"
        ) from failure

    def _model_label(self) -> str:
        return str(getattr(self.model, "model", "") or type(self.model).__name__)


def _correction(exc: OutputParserException) -> list[BaseMessage]:
    """The rejected reply and the reason, so the next attempt can fix the reply rather than repeat it."""
    rejected = exc.llm_output if isinstance(exc.llm_output, str) else ""
    # An empty model turn would be an invalid request for Gemini, so the rejected reply is shown only if present.
    reply: list[BaseMessage] = [AIMessage(_clip(rejected))] if rejected.strip() else []
    return [*reply, HumanMessage(RETRY_PROMPT.format(error=_clip(str(exc))))]


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_ERROR_CHARS else text[: _MAX_ERROR_CHARS - 1] + "…"
