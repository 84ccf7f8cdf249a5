"""Any LangChain chat model, chosen with `PROVENANCE_CHAT_MODEL=provider:model` and built by `init_chat_model`.

`PROVENANCE_CHAT_BASE_URL` points a provider at another endpoint: `openai:<model>` with a base URL is how a local
Ollama or vLLM server (or any OpenAI-compatible gateway) is used. A setting that cannot give a model raises
`ChatModelConfigError` naming the variable and what to set, when the process starts; it never falls back to the
deterministic planner, since the user asked for a model. Nothing here imports a provider package until a model is
built, so the deterministic path never pays for `openai` or `google-genai`.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from pydantic import SecretStr

from agent.errors import UsageError

CHAT_MODEL_ENV = "PROVENANCE_CHAT_MODEL"
CHAT_BASE_URL_ENV = "PROVENANCE_CHAT_BASE_URL"
CHAT_API_KEY_ENV = "PROVENANCE_CHAT_API_KEY"
CHAT_TIMEOUT_ENV = "PROVENANCE_CHAT_TIMEOUT"
DEFAULT_TIMEOUT_S = 30.0
# The chat client's own retries of a failed request (openai's include timeouts); a reply that does not parse is
# LlmPlanner's retry, not the client's.
MAX_RETRIES = 2

_EXAMPLES = (
    "e.g. openai:gpt-4o-mini, google_genai:gemini-2.5-flash, or openai:llama3.1 with "
    f"{CHAT_BASE_URL_ENV}=http://localhost:11434/v1 for a local Ollama (vLLM: http://localhost:8000/v1)"
)
# Settings a provider's class would otherwise take from elsewhere. A Gemini key means the Developer API: a stray
# GOOGLE_GENAI_USE_VERTEXAI must not switch to Vertex (as for the default Gemini model of agent.llm).
_PROVIDER_DEFAULTS: dict[str, dict[str, Any]] = {"google_genai": {"vertexai": False}}


class ChatModelConfigError(UsageError):
    """The PROVENANCE_CHAT_* settings do not describe a usable chat model; the message names the variable and what to
    set. A `UsageError`: the CLI prints it as `error: ...` (exit 2), the chat server stops with it at startup."""


@dataclass(frozen=True)
class ChatModelSpec:
    """What `PROVENANCE_CHAT_*` asks for, checked but not yet built."""

    provider: str  # init_chat_model's provider key: openai, google_genai, anthropic, ...
    model: str
    base_url: str | None
    # None: the provider's class reads its own variable (OPENAI_API_KEY, GOOGLE_API_KEY, ...) from the process
    # environment, not from the mapping given to chat_model_spec.
    api_key: SecretStr | None
    timeout_s: float

    @property
    def label(self) -> str:
        return f"{self.provider}:{self.model}"


def chat_timeout(env: Mapping[str, str]) -> float:
    """Seconds one request to the model may take (`PROVENANCE_CHAT_TIMEOUT`, default 30), for every chat model."""
    raw = env.get(CHAT_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT_S
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise ChatModelConfigError(
            f"{CHAT_TIMEOUT_ENV}={raw!r} is not a number of seconds: set a positive number such as 30, or unset it "
            f"for the default ({DEFAULT_TIMEOUT_S:g})"
        )
    return seconds


def chat_model_spec(env: Mapping[str, str]) -> ChatModelSpec | None:
    """The model `PROVENANCE_CHAT_MODEL` names, or None when it is unset (then agent.llm's Gemini rules apply)."""
    raw = env.get(CHAT_MODEL_ENV, "").strip()
    base_url = env.get(CHAT_BASE_URL_ENV, "").strip() or None
    api_key = env.get(CHAT_API_KEY_ENV, "").strip() or None
    if not raw:
        # A base URL or key alone would be ignored, and the run would quietly use Gemini or no model at all.
        stray = [name for name, value in ((CHAT_BASE_URL_ENV, base_url), (CHAT_API_KEY_ENV, api_key)) if value]
        if stray:
            raise ChatModelConfigError(
                f"{' and '.join(stray)} set but {CHAT_MODEL_ENV} is not: set {CHAT_MODEL_ENV}=provider:model "
                f"({_EXAMPLES}), or unset {' and '.join(stray)}"
            )
        return None
    provider, colon, model = raw.partition(":")
    provider, model = provider.strip().lower().replace("-", "_"), model.strip()
    if not colon or not provider or not model:
        raise ChatModelConfigError(
            f"{CHAT_MODEL_ENV}={raw!r} is not provider:model: write both, separated by a colon ({_EXAMPLES})"
        )
    return ChatModelSpec(
        provider=provider,
        model=model,
        base_url=base_url,
        api_key=SecretStr(api_key) if api_key else None,
        timeout_s=chat_timeout(env),
    )


def build_chat_model(spec: ChatModelSpec) -> BaseChatModel:
    """`init_chat_model` with temperature 0, the timeout and few retries; every failure is a ChatModelConfigError."""
    kwargs: dict[str, Any] = {
        "temperature": 0,
        "timeout": spec.timeout_s,
        "max_retries": MAX_RETRIES,
        **_PROVIDER_DEFAULTS.get(spec.provider, {}),
    }
    if spec.base_url is not None:
        kwargs["base_url"] = spec.base_url
    if spec.api_key is not None:
        kwargs["api_key"] = spec.api_key
    try:
        # Imported here: langchain's factory is only needed when a model is asked for by name.
        from langchain.chat_models import init_chat_model

        model: BaseChatModel = init_chat_model(spec.model, model_provider=spec.provider, **kwargs)
    except ImportError as exc:
        raise ChatModelConfigError(f"{CHAT_MODEL_ENV}={spec.label}: {exc}. {_import_hint(spec)}") from exc
    except Exception as exc:
        # Each provider's class reports a missing key or a bad setting with its own exception type (OpenAIError,
        # pydantic's ValidationError, ValueError for an unknown provider): all mean "fix the settings".
        raise ChatModelConfigError(
            f"{CHAT_MODEL_ENV}={spec.label} could not be built: {type(exc).__name__}: {exc}\n"
            f"Check the provider and model ({_EXAMPLES}); a missing key goes in {CHAT_API_KEY_ENV} or the provider's "
            f"own variable (OPENAI_API_KEY, GOOGLE_API_KEY, ...); a local OpenAI-compatible server accepts any "
            "non-empty key."
        ) from exc
    return model


def structured_output_kwargs(model: BaseChatModel) -> dict[str, Any]:
    """How to ask `model` for structured output, when its own default does not suit the planner's schemas.

    langchain-openai defaults to OpenAI's strict `json_schema`, which (a) requires `additionalProperties: false` on
    every object, and ExperimentPlan's free-form `params` is not; (b) is parsed inside the openai SDK, so a
    malformed reply raises from the call instead of as a parse error LlmPlanner can retry; (c) is not served by
    every OpenAI-compatible server. Function calling is the method those servers share (vLLM, Ollama). Other
    models keep their default (Gemini: JSON schema; the scripted fake: either).
    """
    # Looked up, not imported: if langchain-openai was never imported, `model` cannot be one of its classes.
    openai_module = sys.modules.get("langchain_openai.chat_models.base")
    base_class = getattr(openai_module, "BaseChatOpenAI", None)
    if base_class is not None and isinstance(model, base_class):
        return {"method": "function_calling"}
    return {}


def _import_hint(spec: ChatModelSpec) -> str:
    if spec.provider == "ollama":
        # langchain-ollama is not a dependency; Ollama's OpenAI-compatible endpoint needs nothing more.
        return (
            f"Or use Ollama's OpenAI-compatible endpoint with what is installed: {CHAT_MODEL_ENV}=openai:{spec.model} "
            f"{CHAT_BASE_URL_ENV}=http://localhost:11434/v1 {CHAT_API_KEY_ENV}=ollama"
        )
    return f"Install it with .venv/bin/pip, or pick a provider whose package is installed ({_EXAMPLES})"
