"""The optional chat model and the planner that asks it for structured proposals.

`chat_model_from_env` builds the model named by `PROVENANCE_CHAT_MODEL=provider:model` (any LangChain chat model,
`agent.llm_providers`), else Gemini when its API key is configured, else none: the deterministic path never needs
google-genai or openai. `LlmPlanner` wraps any chat model that supports `with_structured_output` (Gemini, an
OpenAI-compatible server, or the scripted fake of `agent.fakes` in tests and replays) and turns every failure into
a `PlannerError`: there is no silent fallback to a guess.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TypeVar

from langchain_core.exceptions import ModelTimeoutError, OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, SecretStr, ValidationError

from agent.chat_keys import API_KEY_ENVS
from agent.llm_providers import (
    CHAT_TIMEOUT_ENV,
    MAX_RETRIES,
    ChatModelConfigError,
    build_chat_model,
    chat_model_spec,
    chat_timeout,
    structured_output_kwargs,
)
from agent.prompts import RETRY_PROMPT, plan_messages, route_messages
from agent.schemas import ExperimentPlan, FieldContext, PlannerName, RouteDecision
from tools.errors import ServiceFailure

DEFAULT_GEMINI_MODEL = "gemini-2.5-flash"
MODEL_ENV = "PROVENANCE_GEMINI_MODEL"
BASE_URL_ENV = "PROVENANCE_GEMINI_BASE_URL"  # another endpoint (a gateway, or a local stub in tests)

_MAX_ERROR_CHARS = 500

M = TypeVar("M", bound=BaseModel)

__all__ = ["ChatModelConfigError", "LlmPlanner", "PlannerError", "chat_model_from_env"]


class PlannerError(ServiceFailure, RuntimeError):
    """The model could not produce a usable proposal; the message names the step, the model and the cause."""


def chat_model_from_env(env: Mapping[str, str] | None = None) -> BaseChatModel | None:
    """The model of `PROVENANCE_CHAT_MODEL=provider:model`; else Gemini when `GOOGLE_API_KEY` or `GEMINI_API_KEY` is
    set (non-empty); else None, for the deterministic planner.

    For Gemini, `PROVENANCE_GEMINI_MODEL` picks the model (default gemini-2.5-flash) and
    `PROVENANCE_GEMINI_BASE_URL` sends requests to another endpoint. `PROVENANCE_CHAT_TIMEOUT` (seconds, default
    30) bounds each request of either. Nothing is sent until the model is invoked. Raises `ChatModelConfigError`
    (naming the variable and what to set) when the settings cannot give the model they ask for: call this at
    startup, so a bad setting stops the command before any work.
    """
    env = os.environ if env is None else env
    spec = chat_model_spec(env)
    if spec is not None:
        return build_chat_model(spec)
    timeout = chat_timeout(env)
    api_key = next((value for name in API_KEY_ENVS if (value := env.get(name, "").strip())), None)
    if api_key is None:
        return None
    # Imported here: google-genai is slow to import and not needed at all when no key is configured.
    from langchain_google_genai import ChatGoogleGenerativeAI

    return ChatGoogleGenerativeAI(
        model=env.get(MODEL_ENV, "").strip() or DEFAULT_GEMINI_MODEL,
        temperature=0,
        max_retries=MAX_RETRIES,
        timeout=timeout,
        api_key=SecretStr(api_key),
        # `base_url` becomes google-genai's HttpOptions(base_url=...); None keeps the public endpoint.
        base_url=env.get(BASE_URL_ENV, "").strip() or None,
        # A key means the Gemini Developer API; don't let a stray GOOGLE_GENAI_USE_VERTEXAI switch to Vertex.
        vertexai=False,
    )


class LlmPlanner:
    """Routes a request and proposes an experiment plan through a chat model's structured output.

    Both results are proposals: callers validate them (the plan against the operator allowlist) before use.
    A reply that does not parse into the schema (or parses but fails its validation) is retried up to `attempts`
    times in all, with the error shown to the model; any other model failure (network, timeout, quota, bad request)
    raises at once, because the chat client has already retried those.
    """

    def __init__(self, model: BaseChatModel, *, attempts: int = 2, name: PlannerName = "chat_model") -> None:
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
        # include_raw: a reply that does not parse comes back with the reply and the parse error instead of raising,
        # whatever the structured-output method, so the retry can show the model what it sent and why it failed.
        structured = self.model.with_structured_output(schema, include_raw=True, **structured_output_kwargs(self.model))
        failure: OutputParserException | ValidationError | None = None
        for _ in range(self.attempts):
            try:
                reply = await structured.ainvoke(messages, config=config)
            # A model whose include_raw still raises parse errors (the scripted fake lets pydantic's error for a
            # tool call's arguments through): the same retry.
            except (OutputParserException, ValidationError) as exc:
                failure = exc
            except Exception as exc:
                raise PlannerError(
                    f"{self._model_label()} failed while proposing a {schema.__name__}: "
                    f"{type(exc).__name__}: {_clip(str(exc))}{_next_step(exc)}"
                ) from exc
            else:
                parsed = reply.get("parsed") if isinstance(reply, dict) else reply
                if isinstance(parsed, schema):
                    return parsed
                failure = _rejection(schema, reply)
            messages = [*messages, *_correction(failure)]
        raise PlannerError(
            f"{self._model_label()} did not return a valid {schema.__name__} in {self.attempts} attempt(s): "
            f"{_clip(str(failure))}"
        ) from failure

    def _model_label(self) -> str:
        # Gemini's field is `model`; langchain-openai's is `model_name` (`model` is only its constructor alias).
        name = getattr(self.model, "model", "") or getattr(self.model, "model_name", "")
        return str(name or type(self.model).__name__)


def _next_step(exc: Exception) -> str:
    if isinstance(exc, ModelTimeoutError | TimeoutError):
        return f" ({CHAT_TIMEOUT_ENV} sets the seconds each request may take; raise it for a slow model)"
    return ""


def _rejection(schema: type[BaseModel], reply: object) -> OutputParserException:
    """Why an include_raw reply ({"raw", "parsed", "parsing_error"}) is not a `schema`; the rejected text goes in
    `llm_output`, for `_correction`."""
    raw = reply.get("raw") if isinstance(reply, dict) else None
    error = reply.get("parsing_error") if isinstance(reply, dict) else None
    rejected = _reply_text(raw)
    if error is not None:
        reason = str(error)
    elif isinstance(raw, AIMessage) and raw.invalid_tool_calls:
        # langchain-openai sets a call whose arguments are not JSON aside, and the tool parser then finds no call.
        reason = str(raw.invalid_tool_calls[0].get("error") or "its function call did not parse")
    else:  # e.g. text where a function call was required: the parser yields None, not an error
        reason = f"expected a {schema.__name__}, got {'text' if rejected.strip() else 'an empty reply'}"
    return OutputParserException(reason, llm_output=rejected)


def _reply_text(raw: object) -> str:
    """What the model sent: its text, else the arguments of its (possibly malformed) function call."""
    if not isinstance(raw, AIMessage):
        return ""
    if raw.text.strip():
        return raw.text
    if raw.invalid_tool_calls:
        return str(raw.invalid_tool_calls[0].get("args") or "")
    if raw.tool_calls:
        return json.dumps(raw.tool_calls[0]["args"])
    return ""


def _correction(exc: OutputParserException | ValidationError) -> list[BaseMessage]:
    """The rejected reply and the reason, so the next attempt can fix the reply rather than repeat it."""
    llm_output = exc.llm_output if isinstance(exc, OutputParserException) else None
    rejected = llm_output if isinstance(llm_output, str) else ""
    # An empty model turn would be an invalid request for Gemini, so the rejected reply is shown only if present.
    reply: list[BaseMessage] = [AIMessage(_clip(rejected))] if rejected.strip() else []
    return [*reply, HumanMessage(RETRY_PROMPT.format(error=_clip(str(exc))))]


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_ERROR_CHARS else text[: _MAX_ERROR_CHARS - 1] + "…"
