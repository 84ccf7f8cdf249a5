"""Any chat model through `PROVENANCE_CHAT_MODEL=provider:model`: the settings, and the planner through the real
langchain-openai client against a loopback OpenAI-compatible stub (what a local Ollama or vLLM serves), including a
malformed reply, a timeout, and a proposal refused by the same validation as any other planner's. No test needs the
internet."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from langchain_google_genai import ChatGoogleGenerativeAI
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from agent.conversation import TurnResult, open_session
from agent.llm import LlmPlanner, PlannerError, chat_model_from_env
from agent.llm_providers import (
    CHAT_API_KEY_ENV,
    CHAT_BASE_URL_ENV,
    CHAT_MODEL_ENV,
    CHAT_TIMEOUT_ENV,
    MAX_RETRIES,
    ChatModelConfigError,
)
from agent.prompts import PLAN_SYSTEM_PROMPT, ROUTE_SYSTEM_PROMPT
from agent.schemas import ExperimentPlan, Intent, RouteDecision
from tests.agent.helpers import REPO, catalog_write_count, runner_env
from tests.agent.llm_shared import FIELD, PLAN, QUESTION, ROUTE, run, serving
from tools.mutations import parse_mutation
from tools.mutations.operators import Scale
from tools.settings import ProvenanceSettings

# google-genai subclasses aiohttp.ClientSession, which aiohttp warns about; third-party noise, not our concern.
pytestmark = pytest.mark.filterwarnings("ignore:Inheritance class AiohttpClientSession:DeprecationWarning")


# ---------------------------------------------------------------- (a) the settings


def test_unset_keeps_the_gemini_rules() -> None:
    assert chat_model_from_env({}) is None
    assert chat_model_from_env({CHAT_MODEL_ENV: "  ", CHAT_TIMEOUT_ENV: "5"}) is None
    model = chat_model_from_env({CHAT_MODEL_ENV: "", "GEMINI_API_KEY": "dummy", CHAT_TIMEOUT_ENV: "12.5"})
    assert isinstance(model, ChatGoogleGenerativeAI)
    assert (model.model, model.temperature, model.max_retries, model.timeout) == ("gemini-2.5-flash", 0, 2, 12.5)


def test_a_named_model_wins_over_the_gemini_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    env = {
        CHAT_MODEL_ENV: " openai:some-model ",
        CHAT_BASE_URL_ENV: "http://127.0.0.1:9/v1",
        CHAT_API_KEY_ENV: "sk-local",
        "GOOGLE_API_KEY": "ignored",
    }
    model = chat_model_from_env(env)
    assert isinstance(model, ChatOpenAI)
    assert (model.model_name, model.temperature, model.request_timeout, model.max_retries) == ("some-model", 0, 30, 2)
    assert model.openai_api_base == "http://127.0.0.1:9/v1"
    assert model.openai_api_key is not None and model.openai_api_key.get_secret_value() == "sk-local"  # type: ignore[union-attr]


def test_the_provider_key_is_the_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-openai-env")
    model = chat_model_from_env({CHAT_MODEL_ENV: "openai:gpt-4o-mini", CHAT_TIMEOUT_ENV: "7"})
    assert isinstance(model, ChatOpenAI)
    assert model.openai_api_key is not None and model.openai_api_key.get_secret_value() == "sk-from-openai-env"  # type: ignore[union-attr]
    assert model.request_timeout == 7 and model.openai_api_base is None


def test_gemini_by_name_goes_through_init_chat_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "dummy")  # read by the provider's class, from the process environment
    model = chat_model_from_env({CHAT_MODEL_ENV: "google_genai:gemini-2.5-pro", "PROVENANCE_GEMINI_MODEL": "x"})
    assert isinstance(model, ChatGoogleGenerativeAI)
    assert (model.model, model.temperature, model.timeout, model.vertexai) == ("gemini-2.5-pro", 0, 30, False)


NOT_PROVIDER_MODEL = "is not provider:model"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({CHAT_MODEL_ENV: "gpt-4o-mini"}, f"{CHAT_MODEL_ENV}='gpt-4o-mini' {NOT_PROVIDER_MODEL}"),
        ({CHAT_MODEL_ENV: "openai:"}, NOT_PROVIDER_MODEL),
        ({CHAT_MODEL_ENV: ":llama3.1"}, NOT_PROVIDER_MODEL),
        ({CHAT_MODEL_ENV: "nope:some-model"}, f"{CHAT_MODEL_ENV}=nope:some-model could not be built: ValueError"),
        ({CHAT_MODEL_ENV: "openai:gpt-4o-mini", CHAT_TIMEOUT_ENV: "soon"}, f"{CHAT_TIMEOUT_ENV}='soon' is not a"),
        ({CHAT_MODEL_ENV: "openai:gpt-4o-mini", CHAT_TIMEOUT_ENV: "0"}, "set a positive number"),
        ({"GOOGLE_API_KEY": "dummy", CHAT_TIMEOUT_ENV: "-3"}, "set a positive number"),
        ({"GOOGLE_API_KEY": "dummy", CHAT_TIMEOUT_ENV: "inf"}, "set a positive number"),
        ({CHAT_BASE_URL_ENV: "http://localhost:11434/v1"}, f"{CHAT_BASE_URL_ENV} set but {CHAT_MODEL_ENV} is not"),
        ({CHAT_API_KEY_ENV: "ollama", "GOOGLE_API_KEY": "dummy"}, f"{CHAT_API_KEY_ENV} set but {CHAT_MODEL_ENV}"),
    ],
)
def test_a_bad_setting_names_the_variable_and_what_to_set(env: dict[str, str], expected: str) -> None:
    with pytest.raises(ChatModelConfigError) as info:
        chat_model_from_env(env)
    message = str(info.value)
    assert expected in message
    assert "e.g. openai:gpt-4o-mini" in message or "number such as 30" in message  # what to write instead


def test_no_key_for_an_openai_model_says_where_to_put_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ChatModelConfigError, match=r"(?s)could not be built: OpenAIError.*PROVENANCE_CHAT_API_KEY"):
        chat_model_from_env({CHAT_MODEL_ENV: "openai:llama3.1", CHAT_BASE_URL_ENV: "http://localhost:11434/v1"})


def test_a_missing_provider_package_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain_anthropic", None)  # as if not installed, whatever the venv has
    with pytest.raises(ChatModelConfigError, match=r"requires the langchain-anthropic package.*\.venv/bin/pip"):
        chat_model_from_env({CHAT_MODEL_ENV: "anthropic:claude-sonnet-4-5", CHAT_API_KEY_ENV: "k"})
    # Ollama's own package is not a dependency: the message gives the OpenAI-compatible settings that need none.
    monkeypatch.setitem(sys.modules, "langchain_ollama", None)
    monkeypatch.setitem(sys.modules, "langchain_community", None)
    with pytest.raises(ChatModelConfigError) as info:
        chat_model_from_env({CHAT_MODEL_ENV: "ollama:llama3.1:8b"})
    assert f"{CHAT_MODEL_ENV}=openai:llama3.1:8b {CHAT_BASE_URL_ENV}=http://localhost:11434/v1" in str(info.value)


def test_importing_the_module_loads_no_provider() -> None:
    code = "import sys, agent.llm; print(sorted({'langchain', 'langchain_openai', 'openai'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (0, "[]"), done.stderr


# `ask` exits as on any bad input (2); the chat server stops on import (SystemExit with the message: 1).
@pytest.mark.parametrize(
    ("command", "code"), [(["-m", "agent.cli", "ask", QUESTION], 2), (["-c", "import chainlit_app"], 1)]
)
@pytest.mark.slow
def test_ask_and_the_chat_refuse_to_start_on_a_bad_model(tmp_path: Path, command: list[str], code: int) -> None:
    env = runner_env(tmp_path / "home", None) | {CHAT_MODEL_ENV: "gpt-4o-mini"}
    done = subprocess.run([sys.executable, *command], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == code, done.stderr
    assert done.stderr.startswith(f"error: {CHAT_MODEL_ENV}='gpt-4o-mini' {NOT_PROVIDER_MODEL}"), done.stderr
    assert "Traceback" not in done.stderr


# ---------------------------------------------------------------- (b) the real client against a loopback stub


@dataclass
class Captured:
    path: str
    headers: dict[str, str]  # lower-case names
    body: dict[str, Any]


@dataclass
class Reply:
    status: int
    body: dict[str, Any]
    delay_s: float = 0.0  # held back this long first: a server slower than the client's timeout


@dataclass
class OpenAIStub:
    """Imitates POST /v1/chat/completions of an OpenAI-compatible server: records each request, answers from
    `replies`. It speaks HTTP/1.0 (one connection per request), so no pooled connection outlives a test's loop."""

    server: ThreadingHTTPServer
    replies: list[Reply] = field(default_factory=list)
    requests: list[Captured] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/v1"

    def call(self, name: str, arguments: str, *, delay_s: float = 0.0) -> None:
        """Queue a reply calling function `name` with `arguments`: JSON text, malformed when a test wants it."""
        tool_call = {
            "id": f"call_{len(self.replies)}",
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }
        self._queue({"role": "assistant", "content": None, "tool_calls": [tool_call]}, "tool_calls", delay_s)

    def answer(self, value: BaseModel, *, delay_s: float = 0.0) -> None:
        """Queue what a model answers to the forced function call of `with_structured_output`: `value`."""
        self.call(type(value).__name__, value.model_dump_json(), delay_s=delay_s)

    def say(self, text: str) -> None:
        """Queue a plain text reply: a model (or server) that ignored the forced function call."""
        self._queue({"role": "assistant", "content": text}, "stop", 0.0)

    def _queue(self, message: dict[str, Any], finish_reason: str, delay_s: float) -> None:
        body = {
            "id": f"chatcmpl-{len(self.replies)}",
            "object": "chat.completion",
            "created": 0,
            "model": "stub",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
        self.replies.append(Reply(200, body, delay_s))


@pytest.fixture
def openai_stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStub]:
    # A proxy from the environment would take the loopback request elsewhere; OPENAI_BASE_URL or a gateway would
    # change the endpoint the client builds; OPENAI_API_KEY would hide a missing PROVENANCE_CHAT_API_KEY.
    proxies = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "OPENAI_PROXY")
    for name in (*proxies, "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "LANGSMITH_GATEWAY"):
        monkeypatch.delenv(name, raising=False)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            stub.requests.append(Captured(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            if stub.replies:
                reply = stub.replies.pop(0)
            else:
                reply = Reply(500, {"error": {"message": "the stub has no reply left", "type": "server_error"}})
            if reply.delay_s and stub.stopping.wait(reply.delay_s):
                return  # the test is over: hang up rather than hold the server's shutdown
            data = json.dumps(reply.body).encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting (the timeout test) and hung up: there is no one to answer

        def log_message(self, format: str, *args: Any) -> None:  # keep the test output clean
            pass

    stub = OpenAIStub(ThreadingHTTPServer(("127.0.0.1", 0), Handler))
    with serving(stub.server):
        yield stub
        stub.stopping.set()


def _model(stub: OpenAIStub, **env: str) -> ChatOpenAI:
    settings = {CHAT_MODEL_ENV: "openai:local-model", CHAT_BASE_URL_ENV: stub.base_url, CHAT_API_KEY_ENV: "sk-stub"}
    model = chat_model_from_env(settings | env)
    assert isinstance(model, ChatOpenAI)
    return model


def test_route_through_the_real_client(openai_stub: OpenAIStub) -> None:
    openai_stub.answer(ROUTE)
    model = _model(openai_stub)
    assert run(LlmPlanner(model).route(QUESTION)) == ROUTE

    [request] = openai_stub.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-stub"
    body = request.body
    assert (body["model"], body["temperature"]) == ("local-model", 0)
    # Function calling, forced: the method OpenAI-compatible servers share (see structured_output_kwargs).
    [tool] = body["tools"]
    assert tool["function"]["name"] == "RouteDecision"
    assert set(tool["function"]["parameters"]["properties"]) == {"intent", "subject", "change"}
    assert body["tool_choice"] == {"type": "function", "function": {"name": "RouteDecision"}}
    assert "response_format" not in body
    assert [(m["role"], m["content"]) for m in body["messages"]] == [
        ("system", ROUTE_SYSTEM_PROMPT),
        ("user", QUESTION),
    ]


def test_plan_through_the_real_client(openai_stub: OpenAIStub) -> None:
    openai_stub.answer(PLAN)
    model = _model(openai_stub)
    plan = run(LlmPlanner(model).plan(QUESTION, FIELD))
    assert plan == PLAN
    mutation = parse_mutation(plan.op or "", plan.params, fraction=plan.fraction, seed=plan.seed)
    assert isinstance(mutation, Scale) and mutation.factor == 100

    [request] = openai_stub.requests
    [tool] = request.body["tools"]
    assert tool["function"]["name"] == "ExperimentPlan"
    assert {"op", "params", "fraction", "seed", "rationale", "refusal"} <= set(
        tool["function"]["parameters"]["properties"]
    )
    system, user = request.body["messages"]
    assert system == {"role": "system", "content": PLAN_SYSTEM_PROMPT}
    assert QUESTION in user["content"] and "<datahub_context>" in user["content"]


def test_a_malformed_reply_is_retried_once_with_the_parse_error(openai_stub: OpenAIStub) -> None:
    openai_stub.call("RouteDecision", '{"intent": "assess", "subject": ')  # cut short: not JSON
    openai_stub.answer(ROUTE)
    model = _model(openai_stub)
    assert run(LlmPlanner(model).route(QUESTION)) == ROUTE

    first, second = openai_stub.requests
    assert len(first.body["messages"]) == 2
    retry = second.body["messages"]
    # The rejected reply comes back as text, not as a tool call (which would need a tool result to be valid).
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert retry[2] == {"role": "assistant", "content": '{"intent": "assess", "subject": '}
    assert "could not be used" in retry[3]["content"] and "are not valid JSON" in retry[3]["content"]


@pytest.mark.parametrize(
    "reply",
    [
        ("call", "RouteDecision", "{not json"),
        ("call", "RouteDecision", '{"intent": "launch_rockets"}'),  # JSON, but not a RouteDecision
        ("say", "Sure! The intent is assess."),  # the forced function call ignored
    ],
)
def test_a_reply_that_stays_malformed_raises_a_planner_error(openai_stub: OpenAIStub, reply: tuple[str, ...]) -> None:
    kind, *args = reply
    for _ in range(2):
        getattr(openai_stub, kind)(*args)
    model = _model(openai_stub)
    with pytest.raises(PlannerError, match=r"^local-model did not return a valid RouteDecision in 2 attempt\(s\): "):
        run(LlmPlanner(model).route(QUESTION))
    assert len(openai_stub.requests) == 2  # one retry, no more


@pytest.mark.slow
def test_a_timeout_raises_a_planner_error_that_names_it(openai_stub: OpenAIStub) -> None:
    for _ in range(1 + MAX_RETRIES):
        openai_stub.answer(ROUTE, delay_s=30)
    model = _model(openai_stub, **{CHAT_TIMEOUT_ENV: "0.3"})
    started = time.monotonic()
    with pytest.raises(PlannerError) as info:
        run(LlmPlanner(model).route(QUESTION))
    elapsed = time.monotonic() - started
    message = str(info.value)
    assert message.startswith("local-model failed while proposing a RouteDecision: ") and "Timeout" in message
    assert f"{CHAT_TIMEOUT_ENV} sets the seconds each request may take" in message
    # The client's own retries (each 0.3 s plus a backoff of at most a few seconds), and not the stub's 30 s.
    assert len(openai_stub.requests) == 1 + MAX_RETRIES
    assert elapsed < 10, elapsed


# ---------------------------------------------------------------- (c) the same validation as any planner's


def test_a_plan_from_this_model_meets_the_same_allowlist(settings: ProvenanceSettings, openai_stub: OpenAIStub) -> None:
    openai_stub.answer(RouteDecision(intent=Intent.ASSESS, subject="payments.transactions.amount", change="drop it"))
    openai_stub.answer(ExperimentPlan(op="drop_column", params={}, rationale="the verdict should be PASS"))
    model = _model(openai_stub)
    before = catalog_write_count(settings.lite_db)

    async def ask() -> TurnResult:
        async with open_session(settings, model=model) as session:  # the graph wraps the model in LlmPlanner
            return await session.ask("What if payments.transactions.amount is dropped?", thread_id="t-1")

    turn = run(ask())
    assert len(openai_stub.requests) == 2  # the route, then the plan: both came from the stub
    assert turn.pending is None and turn.values["run_id"] is None
    assert "unknown mutation operator 'drop_column'" in turn.answer, turn.answer
    assert catalog_write_count(settings.lite_db) == before
