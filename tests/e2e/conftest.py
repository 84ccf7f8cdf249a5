"""Browser fixtures: one chat server per module (on a copy of the seeded home), one Chromium, and a fresh
logged-in page per test.

Module scope, not session: while playwright's sync API is open it runs an event loop in the main thread, and any
later test calling asyncio.run() would fail with "cannot be called from a running event loop"."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright

from tests.e2e.browser import CHROMIUM, CHROMIUM_ARGS, Chat, ChatServer, chat_server

FAILED_KEY = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report = yield
    if call.when == "call" and report.failed:
        item.stash[FAILED_KEY] = True
    return report


@pytest.fixture(scope="module")
def server(seeded_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChatServer]:
    with chat_server(seeded_template, tmp_path_factory.mktemp("chat")) as running:
        yield running
        print(f"chainlit log: {running.log}")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: make system-deps (make test runs it) or apt-get install -y chromium")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(params=[1400])
def chat(request: pytest.FixtureRequest, browser: Browser, server: ChatServer) -> Iterator[Chat]:
    """A logged-in page, 1400 px wide unless the test asks for another width (`@pytest.mark.parametrize("chat",
    [1280], indirect=True)`)."""
    context, logged_in = Chat.open(browser, server, width=request.param)
    yield logged_in
    if request.node.stash.get(FAILED_KEY, False):  # what the page showed when the test failed
        shot = server.log.with_name(f"{request.node.name}.png")
        logged_in.page.screenshot(path=shot, full_page=True)
        print(f"screenshot: {shot}\nserver log: {server.log}")
    context.close()
