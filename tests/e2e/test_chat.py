"""The chat end to end in headless Chromium: questions, an assessment with its verdict card, approve and reject
proven against the catalog FILE, and an approval asked again when a conversation is reopened."""

from __future__ import annotations

import sqlite3

import pytest
from playwright.sync_api import Locator, expect

from agent.chat.messages import STARTERS
from seed.catalog import FRAUD_MODEL_URN
from tests.agent.helpers import DEMO_QUESTION, catalog_write_count, documents, model_tags
from tests.e2e.browser import ASSISTANT, TURN_MS, USER_MESSAGE, Chat, ChatServer
from tools.evidence.store import list_run_ids, read_evidence

pytestmark = [pytest.mark.browser, pytest.mark.slow]

BLOCK_TAG = "urn:li:tag:provenance:BLOCK"
PLANNED_CHANGE = "scale payments.public.transactions.amount ×100 on 100% of rows (seed 0) — "  # the demo's plan


def _plan_said_before_the_experiment(chat: Chat) -> str:
    """The planned experiment is its own message, before the experiment's step, the verdict card and the approval
    question; returns its sentence (what the approval must repeat)."""
    messages = chat.page.locator(ASSISTANT)
    planned = messages.filter(has_text="Planned experiment:").last
    expect(planned).to_contain_text(f"Planned experiment: {PLANNED_CHANGE}")
    texts = [" ".join(text.split()) for text in messages.all_inner_texts()]
    at = max(i for i, text in enumerate(texts) if text.startswith("Planned experiment: "))
    later = texts[at + 1 :]
    assert any("Verdict: BLOCK" in t for t in later) and any("Publish the verdict" in t for t in later), texts
    assert _before(chat.page.get_by_text("Used plan", exact=True).last, planned)
    assert _before(planned, chat.page.get_by_text("Used experiment.measure", exact=True).last)
    return texts[at].removeprefix("Planned experiment: ")


def _before(first: Locator, second: Locator) -> bool:
    """`first` comes before `second` in the page (document order)."""
    handle = second.element_handle()
    return bool(first.evaluate("(a, b) => !!(a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING)", handle))


def _assess_until_approval(chat: Chat) -> str:
    """Ask the demo question; return the run id shown on the verdict card once the approval buttons are up."""
    runs_before = set(list_run_ids(chat.server.home))
    chat.send(DEMO_QUESTION)
    expect(chat.page.get_by_role("button", name="Approve")).to_be_visible(timeout=TURN_MS)
    change = _plan_said_before_the_experiment(chat)
    card = chat.page.locator(ASSISTANT).filter(has_text="Verdict: BLOCK").last
    expect(card).to_contain_text(f"Approving publishes the verdict BLOCK of the change tested: {change}")
    question = chat.page.locator(ASSISTANT).filter(has_text="Publish the verdict BLOCK to DataHub").last
    expect(question).to_contain_text(f"Change tested: {change}")  # next to the Approve / Reject buttons
    expect(card).to_contain_text("fraud_detector")
    expect(card).to_contain_text("Flip rate")
    expect(card).to_contain_text("fraud_detector, 95% CI: Flip rate")
    expect(card).to_contain_text(f"set tag {BLOCK_TAG} on {FRAUD_MODEL_URN}")  # URNs survive the Markdown
    new_runs = set(list_run_ids(chat.server.home)) - runs_before
    assert len(new_runs) == 1, new_runs
    run_id = new_runs.pop()
    expect(card).to_contain_text(run_id)
    plots = chat.page.locator("img[alt='fraud_detector-roc'], img[alt='fraud_detector-shift']")
    expect(plots).to_have_count(2)  # the run's ROC and score-shift plots, inline on the card
    expect(chat.page.get_by_text("Used experiment.measure").last).to_be_visible()
    expect(card).not_to_contain_text("⛔")  # text, not an emoji a browser without an emoji font shows as a box
    card.evaluate("element => element.scrollIntoView({block: 'start'})")  # the card's top: verdict, table, reasons
    chat.screenshot("verdict-card")
    return run_id


def test_the_welcome_screen_is_provenances(chat: Chat) -> None:
    """Provenance's logo and name and its starters."""
    for label, _ in STARTERS:
        expect(chat.page.get_by_role("button", name=label, exact=True)).to_be_visible()
    for theme in ("light", "dark"):
        logo = chat.page.request.get(f"{chat.server.url}/logo?theme={theme}")
        assert logo.ok and "<title>Provenance</title>" in logo.text(), theme
    logos = chat.page.locator("img[src*='/logo']")
    expect(logos.first).to_be_visible()
    assert chat.screenshot("welcome").stat().st_size > 10_000


def test_catalog_question_from_a_starter(chat: Chat) -> None:
    label, _ = STARTERS[2]  # "Who owns payments.public.transactions?"
    chat.start(label)
    chat.expect_answer("Owners of transactions")
    # the footer under the composer is true offline: no language model runs, and none ever decides a verdict
    expect(chat.page.get_by_text("Verdicts come from measured experiments and a versioned policy")).to_be_visible()
    expect(chat.page.get_by_text("LLMs can make mistakes")).to_have_count(0)
    expect(chat.page.locator(ASSISTANT).last).to_contain_text("urn:li:corpGroup:payments-platform")
    expect(chat.page.get_by_text("Used catalog_qa").last).to_be_visible()


def test_approve_writes_the_tag_and_the_document(chat: Chat) -> None:
    db = chat.server.catalog
    documents_before = len(documents(db))
    run_id = _assess_until_approval(chat)
    assert read_evidence(chat.server.home, run_id).publication.status == "pending_approval"

    chat.decide("Approve")
    chat.expect_answer("Published")

    assert BLOCK_TAG in model_tags(db, FRAUD_MODEL_URN)
    assert len(documents(db)) == documents_before + 1
    assert any(run_id in str(doc.get("title")) for doc in documents(db))
    publication = read_evidence(chat.server.home, run_id).publication
    assert (publication.status, publication.decided_by) == ("published", "chat:provenance")


def test_reject_in_a_new_chat_writes_nothing(chat: Chat) -> None:
    chat.start(STARTERS[3][0])  # "What is the latest verdict for fraud_detector?"
    chat.expect_answer("latest published Provenance status")
    chat.new_chat()
    expect(chat.page.locator(ASSISTANT)).to_have_count(0)

    rows_before = catalog_write_count(chat.server.catalog)
    run_id = _assess_until_approval(chat)
    chat.decide("Reject")
    chat.expect_answer("Rejected")

    assert catalog_write_count(chat.server.catalog) == rows_before
    assert read_evidence(chat.server.home, run_id).publication.status == "rejected"


def _persisted_threads(server: ChatServer) -> set[str]:
    with sqlite3.connect(server.home / "chat.db") as conn:
        rows = conn.execute('SELECT "id" FROM threads WHERE "userIdentifier" = ?', ("provenance",)).fetchall()
    conn.close()
    return {str(row[0]) for row in rows}


def test_reopened_chat_asks_for_the_pending_approval_again(chat: Chat) -> None:
    db = chat.server.catalog
    documents_before = len(documents(db))
    run_id = _assess_until_approval(chat)
    chat.page.wait_for_url("**/thread/*")  # the first message made the chat a persisted thread
    thread_id = chat.page.url.rsplit("/", 1)[-1]
    assert thread_id in _persisted_threads(chat.server)

    chat.page.goto(chat.server.url)  # walk away without answering: the approval stays pending in the checkpoint
    expect(chat.page.locator("#chat-input")).to_be_visible()
    expect(chat.page.get_by_role("button", name="Approve")).to_have_count(0)
    thread = chat.page.locator(f"#thread-{thread_id}")
    expect(thread).to_be_visible()
    thread.click()
    chat.page.wait_for_url(f"**/thread/{thread_id}")
    chat.expect_answer(f"Run {run_id} (BLOCK) is still waiting for your decision")
    expect(chat.page.get_by_role("button", name="Approve")).to_have_count(1)
    asked_again = chat.page.locator(ASSISTANT).filter(has_text="Publish the verdict BLOCK").last
    expect(asked_again).to_contain_text(f"Change tested: {PLANNED_CHANGE}")  # kept in the checkpoint

    chat.decide("Approve")
    chat.expect_answer("Published")
    assert BLOCK_TAG in model_tags(db, FRAUD_MODEL_URN)
    assert len(documents(db)) == documents_before + 1
    assert read_evidence(chat.server.home, run_id).publication.status == "published"


def test_replay_a_past_conversation_from_the_chat(chat: Chat) -> None:
    threads = sorted(_persisted_threads(chat.server))
    traces = {p.stem for p in (chat.server.home / "traces").glob("*.json")}
    recorded = [t for t in threads if t in traces]
    assert recorded, (threads, traces)
    rows_before = catalog_write_count(chat.server.catalog)
    chat.new_chat()
    chat.send("/replay")
    chat.expect_answer("Recent conversations")
    chat.send(f"/replay {recorded[0]}")
    chat.expect_answer("Replay reproduced", timeout=TURN_MS)
    assert catalog_write_count(chat.server.catalog) == rows_before  # replay never writes


def test_server_log_has_no_traceback(server: ChatServer) -> None:
    """Started offline without an API key, the server ran every scenario above without an error."""
    log = server.log.read_text()
    assert "Your app is available at" in log
    assert "Traceback" not in log and " - ERROR - " not in log, log
    assert "blob_storage_client" not in log  # the chat keeps no files; nothing asks it to store one


def test_a_tolerance_map_in_the_chat_shows_its_plots(chat: Chat) -> None:
    """ "How much can … change?" runs a scan: the brackets per model, and the dose-response figures and heat map."""
    chat.send("How much can payments.public.transactions.amount change before the models break?")
    chat.expect_answer("Tolerance map of amount")
    answer = chat.page.locator(ASSISTANT).filter(has_text="Tolerance map of amount").last
    expect(answer).to_contain_text("BLOCK from ×1.5 (×1.2 tolerated)")
    # The heat map, then one figure per model and axis: a model's seven panels in one figure shrank to a thumbnail.
    axes = ("scale_up", "scale_down", "shift_up", "shift_down", "nulls", "rounding", "clip_high")
    names = ["tolerance-heatmap", *(f"{m}-{a}" for m in ("fraud_detector", "review_time_estimator") for a in axes)]
    plots = chat.page.locator(", ".join(f"img[alt='{name}']" for name in names))
    expect(plots).to_have_count(len(names), timeout=TURN_MS)
    expect(chat.page.get_by_text("Used tolerance").last).to_be_visible()
    figure = chat.page.locator("img[alt='review_time_estimator-nulls']")
    figure.evaluate("element => element.scrollIntoView({block: 'center'})")  # the plots, under the brackets
    expect(figure).to_be_visible()
    shown, natural = figure.evaluate("element => [element.clientWidth, element.naturalWidth]")
    assert shown >= 0.75 * natural, f"shown {shown} px wide of {natural}: too small to read"
    chat.screenshot("tolerance-map")


def test_a_refusal_offers_readings_and_a_click_runs_one(chat: Chat) -> None:
    """Refusal → buttons with runnable readings → one clicked runs, and the evidence records that
    the person chose it for the refused request."""
    refused = "null out country on weekends"
    runs_before = set(list_run_ids(chat.server.home))
    chat.send(refused)
    chat.expect_answer("on weekends")
    button = chat.page.get_by_role("button", name="country set to null")
    expect(button).to_be_visible(timeout=TURN_MS)
    assert set(list_run_ids(chat.server.home)) == runs_before  # a refusal runs nothing
    chat.screenshot("refusal-suggestions")

    button.click()
    expect(chat.page.locator(USER_MESSAGE).filter(has_text="country set to null").last).to_be_visible()
    expect(chat.page.get_by_role("button", name="Approve")).to_be_visible(timeout=TURN_MS)
    new_runs = set(list_run_ids(chat.server.home)) - runs_before
    assert len(new_runs) == 1, new_runs
    plan = read_evidence(chat.server.home, new_runs.pop()).plan
    assert plan.confirmed_from == refused and plan.mutation is not None and plan.mutation.op == "null_inject"
    chat.decide("Reject")
    chat.expect_answer("Rejected")


_FITS = """element => {
    const card = element.closest('.step') || element.parentElement;
    return element.getBoundingClientRect().right <= Math.min(card.getBoundingClientRect().right, window.innerWidth) + 1;
}"""
_CELL_LINES = """table => {
    const cells = [...table.querySelectorAll('td')];
    const style = getComputedStyle(cells[0]);
    const line = parseFloat(style.lineHeight) || 1.5 * parseFloat(style.fontSize);
    return Math.max(...cells.map(td => td.getBoundingClientRect().height)) / line;
}"""
_WRAPPED = """pres => pres.every(pre => pre.scrollWidth <= pre.clientWidth + 1)"""


@pytest.mark.parametrize("chat", [1280], indirect=True)
def test_at_1280_px_the_regression_table_fits_and_step_boxes_wrap_their_lines(chat: Chat) -> None:
    """The regression table pushed "Failed rows" out of view at 1400 px and an interval wrapped over five lines;
    an expanded step box must wrap its long lines (a URN), not cut them."""
    chat.send(DEMO_QUESTION)
    expect(chat.page.get_by_role("button", name="Approve")).to_be_visible(timeout=TURN_MS)
    card = chat.page.locator(ASSISTANT).filter(has_text="Verdict: BLOCK").last
    table = card.locator("table").filter(has_text="ΔRMSE")
    expect(table).to_be_visible()
    failed = table.locator("th").filter(has_text="Failed rows")
    assert failed.evaluate(_FITS), "the regression table's Failed rows column is out of view at 1280 px"
    assert table.evaluate(_FITS), "the regression table is wider than the chat at 1280 px"
    assert table.evaluate(_CELL_LINES) < 3.5, "a cell of the regression table wraps over more than two lines"
    expect(card).to_contain_text("review_time_estimator, 95% CI: Moved")  # the intervals, under the table

    step = chat.page.get_by_text("Used plan", exact=True).last
    step.click()  # expand it: the change in full, the field's URN
    pres = chat.page.locator("pre")
    expect(pres.filter(has_text="urn:li:dataset:").first).to_be_visible()
    assert pres.evaluate_all(_WRAPPED), "a step box cuts its long lines"
    chat.screenshot("regression-table-1280")
    chat.decide("Reject")
    chat.expect_answer("Rejected")


@pytest.mark.parametrize("chat", [1280], indirect=True)
def test_at_1280_px_a_refusal_shows_its_list_as_a_list_and_commands_as_code(chat: Chat) -> None:
    """The help and a refusal's readings showed their items as literal "- " lines and `commands` with backticks."""
    chat.send("make the amount column weird")
    answer = chat.page.locator(ASSISTANT).filter(has_text="I can answer, from DataHub").last
    expect(answer).to_be_visible(timeout=TURN_MS)
    expect(answer.locator("li")).to_have_count(3)
    expect(answer.locator("code").filter(has_text="provenance check")).to_have_count(1)
    text = answer.inner_text()
    assert "`" not in text and "\\-" not in text, text
    changes = answer.locator("[role=article]").filter(has_text="Changes I can test")
    assert changes.evaluate("p => !p.innerHTML.split('Changes I can test')[1].includes('<br')"), "broken mid-text"

    chat.send("null out country on weekends")
    refusal = chat.page.locator(ASSISTANT).filter(has_text="I can run one of these instead").last
    expect(refusal).to_be_visible(timeout=TURN_MS)
    expect(refusal.locator("li").first).to_be_visible()
    assert "\\-" not in refusal.inner_text()
    chat.screenshot("refusal-1280")
