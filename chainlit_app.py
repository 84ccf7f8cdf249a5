"""Provenance chat: Chainlit UI events only; what it shows comes from the package agent/chat.

Run `make chat` (or `chainlit run chainlit_app.py`) and log in as `provenance` / $PROVENANCE_CHAT_PASSWORD
(default `provenance`). One agent session (checkpoints + the MCP catalog) serves every chat of the process. With
PROVENANCE_DATABASE_URL, checkpoints and chat history are in PostgreSQL and several such processes can serve the
same chats (README, "Many instances").
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import chainlit as cl
from chainlit.data.sql_alchemy import SQLAlchemyDataLayer
from chainlit.types import ThreadDict

from agent.chat import auth, cards, datalayer, messages, replay
from agent.chat.narration import StepNarrator
from agent.conversation import Session, TurnResult, UpdateHook, open_session
from agent.errors import AlreadyDecided, DatabaseError
from agent.llm import ChatModelConfigError, chat_model_from_env
from agent.state import ApprovalDecision, ApprovalRequest
from tools.catalog.session import CatalogError
from tools.evidence.store import EvidenceError, read_evidence
from tools.settings import load_settings
from tools.tolerance.report import chat_figures

SETTINGS = load_settings()
auth.ensure_auth_secret(SETTINGS.home)  # Chainlit reads CHAINLIT_AUTH_SECRET only after importing this module
try:  # a bad PROVENANCE_DATABASE_URL stops the server here, with what to do instead of a traceback
    CHAT_DATA_LAYER = datalayer.chat_data_layer_args(SETTINGS)
except DatabaseError as exc:
    raise SystemExit(f"error: {exc}") from None
try:  # likewise a bad PROVENANCE_CHAT_MODEL (or _TIMEOUT, _BASE_URL): never a chat that quietly runs without the model
    CHAT_MODEL = chat_model_from_env()  # built here, nothing is sent until a turn invokes it
except ChatModelConfigError as exc:
    raise SystemExit(f"error: {exc}") from None
APPROVAL_TIMEOUT_S = 3600  # unanswered, the approval stays pending in the checkpoint: reopen the chat to decide
_resources = AsyncExitStack()
_session: Session | None = None


@cl.on_app_startup
async def startup() -> None:  # in the server's event loop, which the checkpointer and catalog must share
    global _session
    _session = await _resources.enter_async_context(open_session(SETTINGS, model=CHAT_MODEL, long_lived=True))


@cl.on_app_shutdown
async def shutdown() -> None:
    await _resources.aclose()


@cl.data_layer
def data_layer() -> SQLAlchemyDataLayer:
    return datalayer.ChatDataLayer(**CHAT_DATA_LAYER)


@cl.password_auth_callback
async def login(username: str, password: str) -> cl.User | None:
    if auth.check_login(username, password):
        return cl.User(identifier=username, metadata={"role": "admin", "provider": "credentials"})
    return None


@cl.set_starters
async def starters(user: cl.User | None = None, language: str | None = None) -> list[cl.Starter]:
    return [cl.Starter(label=label, message=message) for label, message in messages.STARTERS]


def agent() -> Session:
    if _session is None:
        raise RuntimeError("the agent session is not open; chainlit did not run on_app_startup")
    return _session


async def run_turn(call: Callable[[UpdateHook], Awaitable[TurnResult]], narrator: StepNarrator) -> TurnResult | None:
    """Run one graph turn, showing every node as a step; catalog failures become a plain message."""

    async def show_step(node: str, update: dict[str, Any]) -> None:
        if view := narrator.view(node, update):
            async with cl.Step(name=view.name, type="tool", show_input="text", language="text") as step:
                step.input, step.output, step.is_error = view.input, view.output, view.is_error
        if sentence := narrator.planned_experiment(node, update):  # said before the experiment runs
            await cl.Message(content=messages.planned_experiment_markdown(sentence)).send()

    try:
        return await call(show_step)
    except CatalogError as exc:
        await cl.Message(content=messages.catalog_error_markdown(exc)).send()
        return None
    except AlreadyDecided as exc:  # another chat process answered the same approval first
        await cl.Message(content=messages.plain(str(exc))).send()
        return None


async def show_run(run_id: str, request: ApprovalRequest | None = None) -> None:
    """The verdict card with the run's plots and evidence files."""
    try:
        evidence = read_evidence(SETTINGS.home, run_id)
    except EvidenceError as exc:
        await cl.Message(content=messages.plain(f"Run {run_id}: {exc}")).send()
        return
    plots, evidence_json, report = cards.run_files(SETTINGS.home, evidence)
    elements: list[Any] = [cl.Image(path=str(p), name=p.stem, display="inline", size="large") for p in plots]
    elements += [cl.File(path=str(f), name=f.name, display="inline") for f in (evidence_json, report)]
    await cl.Message(content=cards.verdict_card(SETTINGS.home, evidence, request), elements=elements).send()


async def show_scan(folder: Path, answer: str) -> None:
    """A tolerance map: the brackets, the dose-response figures and heat map, and the scan's evidence files."""
    elements: list[Any] = [
        cl.Image(path=str(p), name=p.stem, display="inline", size="large") for p in chat_figures(folder)
    ]
    elements += [cl.File(path=str(folder / name), name=name, display="inline") for name in ("scan.json", "report.md")]
    await cl.Message(content=answer, elements=elements).send()


async def ask_approval(thread_id: str, request: ApprovalRequest) -> None:
    answer = await cl.AskActionMessage(
        content=cards.approval_question(request),
        actions=[
            cl.Action(name="approve", payload={"decision": "approve"}, label="Approve"),
            cl.Action(name="reject", payload={"decision": "reject"}, label="Reject"),
        ],
        timeout=APPROVAL_TIMEOUT_S,
    ).send()
    if answer is None:
        if await agent().pending(thread_id) is not None:  # not decided elsewhere meanwhile
            await cl.Message(content="No answer: the approval stays pending. Reopen this chat to decide.").send()
        return
    current = await agent().pending(thread_id)
    if current is None or current.run_id != request.run_id:  # e.g. answered in another tab meanwhile
        await cl.Message(content=f"Run `{request.run_id}` was already decided; nothing more to do.").send()
        return
    user = cl.user_session.get("user")
    by = f"chat:{user.identifier if user else 'anonymous'}"
    decision = ApprovalDecision(decision=answer["payload"]["decision"], by=by)
    turn = await run_turn(
        lambda hook: agent().decide(thread_id, decision, on_update=hook), StepNarrator(run_id=request.run_id)
    )
    if turn is not None:
        await cl.Message(content=cards.publication_markdown(turn.state.publication)).send()


@cl.on_message
async def on_message(message: cl.Message) -> None:
    if (reference := replay.replay_argument(message.content)) is not None:
        await cl.Message(content=await replay.replay_markdown(reference, SETTINGS.home)).send()
        return
    await answer(message.content)


@cl.action_callback("suggestion")
async def on_suggestion(action: cl.Action) -> None:
    """A reading a refusal offered, picked: sent as the person's message, so the turn records the choice."""
    text = str(action.payload["text"])
    await action.remove()  # one pick per refusal: the other buttons stay, this one is now a message
    await cl.Message(content=text, type="user_message", author="You").send()
    await answer(text)


async def answer(text: str) -> None:
    thread_id = cl.context.session.thread_id  # the LangGraph thread: stable when the chat is resumed
    turn = await run_turn(
        lambda hook: agent().ask(text, thread_id=thread_id, on_update=hook),
        StepNarrator(question=text),
    )
    if turn is None:
        return
    if turn.pending is not None:
        await show_run(turn.pending.run_id, turn.pending)
        await ask_approval(thread_id, turn.pending)
    elif run_id := turn.state.run_id:
        await show_run(run_id)
    elif turn.state.scan_dir:
        await show_scan(Path(turn.state.scan_dir), messages.answer_markdown(turn.state))
    else:
        await cl.Message(content=messages.answer_markdown(turn.state)).send()
        if offered := [s for failure in turn.state.failures for s in failure.suggestions]:
            actions = [cl.Action(name="suggestion", payload={"text": s}, label=s) for s in offered]
            await cl.Message(content="Run one of these instead?", actions=actions).send()


async def ask_again(thread_id: str) -> None:
    if (request := await agent().pending(thread_id)) is not None:
        note = f"Run `{request.run_id}` ({request.verdict}) is still waiting for your decision."
        await cl.Message(content=note).send()
        await show_run(request.run_id, request)
        await ask_approval(thread_id, request)


@cl.on_chat_resume
async def on_chat_resume(thread: ThreadDict) -> None:
    # Chainlit sends the thread's history only after this returns, so the question is asked from a task.
    cl.context.session.current_task = asyncio.create_task(ask_again(thread["id"]))
