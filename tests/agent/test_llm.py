"""The LLM seam: the Gemini factory, the planner through the real Gemini client against a loopback stub, and the
scripted fake that the rest of the test suite and trace replay rely on. No test needs the internet."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.tools import tool
from langchain_google_genai import ChatGoogleGenerativeAI
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from agent.fakes import as_tool_call, scripted
from agent.llm import BASE_URL_ENV, MODEL_ENV, LlmPlanner, PlannerError, chat_model_from_env
from agent.prompts import PLAN_SYSTEM_PROMPT, ROUTE_SYSTEM_PROMPT, plan_messages, route_messages
from agent.schemas import ExperimentPlan, RouteDecision
from tests.agent.llm_shared import FIELD, PLAN, QUESTION, ROUTE, T, run, serving
from tools.mutations import parse_mutation
from tools.mutations.operators import Scale

# google-genai subclasses aiohttp.ClientSession, which aiohttp warns about; third-party noise, not our concern.
pytestmark = pytest.mark.filterwarnings("ignore:Inheritance class AiohttpClientSession:DeprecationWarning")


# ---------------------------------------------------------------- (a) the factory


def test_no_key_means_no_model() -> None:
    assert chat_model_from_env({}) is None
    assert chat_model_from_env({"GOOGLE_API_KEY": "  ", MODEL_ENV: "gemini-2.5-pro"}) is None


@pytest.mark.parametrize("key_env", ["GOOGLE_API_KEY", "GEMINI_API_KEY"])
def test_either_key_builds_gemini(key_env: str) -> None:
    model = chat_model_from_env({key_env: "dummy"})
    assert isinstance(model, ChatGoogleGenerativeAI)
    assert (model.model, model.temperature, model.max_retries, model.timeout) == ("gemini-2.5-flash", 0, 2, 30)
    assert model.google_api_key is not None and model.google_api_key.get_secret_value() == "dummy"
    assert model.base_url is None


def test_google_key_wins_and_model_is_configurable() -> None:
    model = chat_model_from_env({"GEMINI_API_KEY": "second", "GOOGLE_API_KEY": "first", MODEL_ENV: "gemini-x"})
    assert isinstance(model, ChatGoogleGenerativeAI)
    assert model.model == "gemini-x"
    assert model.google_api_key is not None and model.google_api_key.get_secret_value() == "first"


def test_default_env_is_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    assert chat_model_from_env() is None
    monkeypatch.setenv("GEMINI_API_KEY", "dummy")
    assert isinstance(chat_model_from_env(), ChatGoogleGenerativeAI)


def test_importing_the_module_does_not_load_gemini() -> None:
    code = "import sys, agent.llm; sys.exit('langchain_google_genai' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], timeout=60).returncode == 0


# ---------------------------------------------------------------- (b) the real client against a loopback stub


@dataclass
class Captured:
    path: str
    headers: dict[str, str]  # lower-case names: httpx and aiohttp spell them differently
    body: dict[str, Any]


@dataclass
class GeminiStub:
    """Imitates POST /{version}/models/{model}:generateContent: records each request, answers from `replies`."""

    server: ThreadingHTTPServer
    replies: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    requests: list[Captured] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/"

    def answer(self, text: str) -> None:
        """Queue a successful reply whose only candidate says `text`."""
        candidate = {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}
        usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
        self.replies.append((200, {"candidates": [candidate], "usageMetadata": usage, "modelVersion": "stub"}))


@pytest.fixture
def gemini(monkeypatch: pytest.MonkeyPatch) -> Iterator[GeminiStub]:
    # A proxy from the environment would take the loopback request elsewhere; Vertex/gateway settings would
    # change the endpoint the client builds.
    proxies = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
    for name in (*proxies, "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GEMINI_BASE_URL", "LANGSMITH_GATEWAY"):
        monkeypatch.delenv(name, raising=False)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            stub.requests.append(Captured(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            status, reply = stub.replies.pop(0) if stub.replies else (500, {"error": {"message": "no reply"}})
            data = json.dumps(reply).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # keep the test output clean
            pass

    stub = GeminiStub(ThreadingHTTPServer(("127.0.0.1", 0), Handler))
    with serving(stub.server):
        yield stub


def _gemini(stub: GeminiStub, **env: str) -> ChatGoogleGenerativeAI:
    model = chat_model_from_env({"GOOGLE_API_KEY": "dummy", BASE_URL_ENV: stub.base_url, **env})
    assert isinstance(model, ChatGoogleGenerativeAI)
    return model


async def _ask(model: ChatGoogleGenerativeAI, call: Coroutine[Any, Any, T]) -> T:
    try:
        return await call
    finally:
        assert model.client is not None
        await model.client.aio.aclose()  # the async HTTP session belongs to this test's event loop


def _text(content: dict[str, Any]) -> str:
    return "".join(part.get("text", "") for part in content["parts"])


def test_route_through_the_real_client(gemini: GeminiStub) -> None:
    gemini.answer(ROUTE.model_dump_json())
    model = _gemini(gemini)
    assert run(_ask(model, LlmPlanner(model).route(QUESTION))) == ROUTE

    [request] = gemini.requests
    assert request.path.endswith("/models/gemini-2.5-flash:generateContent")  # after /v1 or /v1beta
    assert request.headers["x-goog-api-key"] == "dummy"
    config = request.body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["temperature"] == 0
    assert config["responseJsonSchema"]["title"] == "RouteDecision"
    assert set(config["responseJsonSchema"]["properties"]) == {"intent", "subject", "change"}
    assert _text(request.body["systemInstruction"]) == ROUTE_SYSTEM_PROMPT
    assert [(c["role"], _text(c)) for c in request.body["contents"]] == [("user", QUESTION)]


def test_plan_through_the_real_client(gemini: GeminiStub) -> None:
    gemini.answer(PLAN.model_dump_json())
    model = _gemini(gemini, **{MODEL_ENV: "gemini-2.5-flash-lite"})
    plan = run(_ask(model, LlmPlanner(model).plan(QUESTION, FIELD)))
    assert plan == PLAN
    # The proposal is usable by the code that validates plans.
    mutation = parse_mutation(plan.op or "", plan.params, fraction=plan.fraction, seed=plan.seed)
    assert isinstance(mutation, Scale) and mutation.factor == 100

    [request] = gemini.requests
    assert "gemini-2.5-flash-lite:generateContent" in request.path
    schema = request.body["generationConfig"]["responseJsonSchema"]
    assert request.body["generationConfig"]["responseMimeType"] == "application/json"
    assert {"op", "params", "fraction", "seed", "rationale", "refusal"} <= set(schema["properties"])
    system = _text(request.body["systemInstruction"])
    assert system == PLAN_SYSTEM_PROMPT and "cyclic_shift(offset, period)" in system and "untrusted" in system
    [user] = request.body["contents"]
    assert user["role"] == "user"
    assert QUESTION in _text(user) and "<datahub_context>" in _text(user)
    assert FIELD.dataset_urn in _text(user) and "Transaction amount in US dollars." in _text(user)


def test_malformed_replies_raise_after_two_attempts(gemini: GeminiStub) -> None:
    gemini.answer("Sure! The intent is assess.")  # not JSON
    gemini.answer('{"intent": "launch_rockets"}')  # JSON, but not a valid RouteDecision
    model = _gemini(gemini)
    with pytest.raises(PlannerError, match=r"did not return a valid RouteDecision in 2 attempt") as info:
        run(_ask(model, LlmPlanner(model).route(QUESTION)))
    assert "launch_rockets" in str(info.value)

    first, second = gemini.requests
    assert len(first.body["contents"]) == 1
    # The retry shows the model its rejected reply and why it was rejected.
    roles_and_text = [(c["role"], _text(c)) for c in second.body["contents"]]
    assert roles_and_text[:2] == [("user", QUESTION), ("model", "Sure! The intent is assess.")]
    assert roles_and_text[2][0] == "user" and "could not be used" in roles_and_text[2][1]


def test_api_error_raises_at_once(gemini: GeminiStub) -> None:
    error = {"error": {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT"}}
    gemini.replies.append((400, error))
    model = _gemini(gemini)
    with pytest.raises(PlannerError, match=r"gemini-2.5-flash failed while proposing a ExperimentPlan.*400"):
        run(_ask(model, LlmPlanner(model).plan(QUESTION, FIELD)))
    assert len(gemini.requests) == 1  # a client error is not a parse error: no second attempt


# ---------------------------------------------------------------- (c) the scripted fake


def test_fake_scripts_route_and_plan() -> None:
    fake = scripted(ROUTE, PLAN.model_dump())  # a pydantic object and a dict: both become JSON text
    planner = LlmPlanner(fake, name="replay")
    assert run(planner.route(QUESTION)) == ROUTE
    assert run(planner.plan(QUESTION, FIELD)) == PLAN
    assert fake.received == [route_messages(QUESTION), plan_messages(QUESTION, FIELD)]


def test_fake_parses_tool_calls_and_include_raw() -> None:
    fake = scripted(as_tool_call(ROUTE), as_tool_call(PLAN, call_id="c2"), "not json")
    assert fake.with_structured_output(RouteDecision).invoke(QUESTION) == ROUTE
    raw = fake.with_structured_output(ExperimentPlan, include_raw=True).invoke(QUESTION)
    assert isinstance(raw, dict) and raw["parsed"] == PLAN and raw["raw"].tool_calls[0]["id"] == "c2"
    failed = fake.with_structured_output(ExperimentPlan, include_raw=True).invoke(QUESTION)
    assert isinstance(failed, dict) and failed["parsed"] is None and failed["parsing_error"] is not None


def test_fake_retry_then_success_and_exhaustion() -> None:
    fake = scripted("{broken", ROUTE)
    assert run(LlmPlanner(fake).route(QUESTION)) == ROUTE
    assert "could not be used" in str(fake.received[1][-1].content)
    with pytest.raises(PlannerError, match="script is exhausted"):
        run(LlmPlanner(fake).route(QUESTION))


class _State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    route: RouteDecision | None


@tool
def get_lineage(urn: str) -> str:
    """Downstream lineage of a DataHub entity."""
    return urn


@pytest.mark.parametrize("content", ["", "Let me look that up."])
def test_fake_keeps_tool_calls_when_a_graph_streams_messages(content: str) -> None:
    call = {"name": "get_lineage", "args": {"urn": FIELD.dataset_urn}, "id": "call-1", "type": "tool_call"}
    fake = scripted(ROUTE, AIMessage(content, tool_calls=[call]))
    planner = LlmPlanner(fake, name="replay")

    async def route(state: _State) -> dict[str, Any]:
        return {"route": await planner.route(str(state["messages"][-1].content))}

    async def chat(state: _State) -> dict[str, Any]:
        return {"messages": [await fake.bind_tools([get_lineage]).ainvoke(state["messages"])]}

    builder = StateGraph(_State)
    builder.add_node("route", route)
    builder.add_node("chat", chat)
    builder.add_edge(START, "route")
    builder.add_edge("route", "chat")
    graph = builder.compile()

    async def stream() -> list[Any]:
        inputs: _State = {"messages": [HumanMessage(QUESTION)], "route": None}
        return [part async for part in graph.astream(inputs, stream_mode=["messages", "values"])]

    parts = run(stream())
    final = [data for mode, data in parts if mode == "values"][-1]
    assert final["route"] == ROUTE
    assert final["messages"][-1].tool_calls == [call]
    streamed = [data[0] for mode, data in parts if mode == "messages" and data[1]["langgraph_node"] == "chat"]
    assert [(m.content, getattr(m, "tool_calls", None)) for m in streamed] == [(content, [call])]
