"""A scripted chat model for tests and trace replay: it answers with prepared messages, in order.

The stock fakes of langchain-core raise NotImplementedError on `bind_tools` and `with_structured_output`, and
`GenericFakeChatModel` drops tool calls when LangGraph streams it with stream_mode="messages".
`FakeToolChatModel` fixes both, so a graph can run end to end on scripted answers, in both shapes a real model
uses for structured output: JSON text (Gemini's default json_schema method) or a tool call (function calling).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.output_parsers import JsonOutputParser, PydanticOutputParser, PydanticToolsParser
from langchain_core.outputs import ChatResult
from langchain_core.runnables import Runnable, RunnableLambda
from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

Scripted = BaseModel | Mapping[str, Any] | str | AIMessage


class FakeToolChatModel(GenericFakeChatModel):
    """Answers each call with the next scripted message; records what it was asked in `received`.

    Build it with `scripted(...)`. A structured-output call parses the next message: its first tool call when it
    has one, else its text as JSON. Running out of script is an error, never a silent default.
    """

    # Always answer through _generate: GenericFakeChatModel._stream loses tool calls (see the module docstring).
    disable_streaming: bool | Literal["tool_calling"] = True
    received: list[list[BaseMessage]] = Field(default_factory=list)
    """The messages of every call, in order, so tests can check what the prompts contained."""

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.received.append(list(messages))
        try:
            return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)
        except StopIteration:
            # A bare StopIteration would surface as a confusing RuntimeError inside generators and runnables.
            raise RuntimeError(
                f"FakeToolChatModel: the script is exhausted (call {len(self.received)} has no answer left)"
            ) from None

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        # The script already says which tool calls come back, so the tools themselves are not needed.
        return self

    def with_structured_output(
        self,
        schema: dict[str, Any] | type,
        *,
        include_raw: bool = False,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, dict[str, Any] | BaseModel]:
        def parse(message: BaseMessage) -> Any:
            if not isinstance(message, AIMessage):
                raise OutputParserException(f"expected an AIMessage, got {type(message).__name__}")
            return _parse(schema, message)

        if not include_raw:
            return self | RunnableLambda(parse)

        def parse_with_raw(message: BaseMessage) -> dict[str, Any]:
            # Same shape as the real models' include_raw=True: parse errors are returned, not raised.
            try:
                return {"raw": message, "parsed": parse(message), "parsing_error": None}
            except OutputParserException as exc:
                return {"raw": message, "parsed": None, "parsing_error": exc}

        return self | RunnableLambda(parse_with_raw)


def _parse(schema: dict[str, Any] | type, message: AIMessage) -> Any:
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        if message.tool_calls:
            return PydanticToolsParser(tools=[schema], first_tool_only=True).invoke(message)
        return PydanticOutputParser(pydantic_object=schema).invoke(message)
    # A JSON-schema dict: return plain data, as the real models do for dict schemas.
    if message.tool_calls:
        return message.tool_calls[0]["args"]
    return JsonOutputParser().invoke(message)


def as_message(output: Scripted) -> AIMessage:
    """One scripted answer: pydantic objects and mappings become JSON text, as Gemini's json_schema replies are."""
    if isinstance(output, AIMessage):
        return output
    if isinstance(output, BaseModel):
        return AIMessage(output.model_dump_json())
    if isinstance(output, str):
        return AIMessage(output)
    return AIMessage(json.dumps(dict(output)))


def as_tool_call(output: BaseModel, *, call_id: str | None = None) -> AIMessage:
    """A function-calling answer: one tool call named after the schema class, as `PydanticToolsParser` expects."""
    call_id = call_id or f"call_{uuid.uuid4().hex[:12]}"
    args = output.model_dump(mode="json")
    return AIMessage("", tool_calls=[{"name": type(output).__name__, "args": args, "id": call_id}])


def scripted(*outputs: Scripted) -> FakeToolChatModel:
    """A fake model that answers successive calls with `outputs`, in order."""
    return FakeToolChatModel(messages=iter([as_message(output) for output in outputs]))
