"""Running the chat for browser tests: a `chainlit run` server on a private home, and a logged-in page.

Uses Debian's /usr/bin/chromium with the playwright package (never `playwright install`). The server runs
offline with no API key (the deterministic planner) and writes nothing into the repository: its app root,
HOME and PROVENANCE_HOME are temporary folders. Requests that leave 127.0.0.1 (web fonts, CDN CSS) are aborted.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import Browser, BrowserContext, Locator, Page, Route, expect

from tests.warm_start import cleared

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ASSISTANT = '[data-step-type="assistant_message"] .message-content'
USER_MESSAGE = '[data-step-type="user_message"]'
USER, PASSWORD = "provenance", "provenance"  # the documented defaults
SERVER_START_S = 120  # imports alone take ~15 s on a busy two-core machine
TURN_MS = 120_000  # an assessment replays 7,200 rows; the first one also starts the MCP server
HERMETIC_ENV_PREFIXES = ("PROVENANCE_", "DATAHUB_", "CHAINLIT_", "LITERAL_")  # LITERAL_API_KEY: a cloud data layer
# The chat model's keys; its PROVENANCE_CHAT_* settings go with the PROVENANCE_ prefix above.
NO_KEYS = ("GOOGLE_API_KEY", "GEMINI_API_KEY", "OPENAI_API_KEY", "DATABASE_URL")


@dataclass(frozen=True)
class ChatServer:
    url: str
    home: Path
    log: Path

    @property
    def catalog(self) -> Path:
        return self.home / "catalog.db"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_until_up(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"chainlit exited with {proc.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"chainlit did not answer {url} within {SERVER_START_S} s:\n{log.read_text()}")


@contextmanager
def chat_server(seeded_home: Path, workdir: Path) -> Iterator[ChatServer]:
    """`chainlit run chainlit_app.py --headless` on a free port, on a copy of `seeded_home`."""
    home, app_root, user_home = workdir / "provenance", workdir / "app", workdir / "home"
    shutil.copytree(seeded_home, home, ignore=shutil.ignore_patterns("logs", "mcp-home"))
    (app_root / ".chainlit").mkdir(parents=True)
    user_home.mkdir()
    shutil.copy(REPO / ".chainlit" / "config.toml", app_root / ".chainlit" / "config.toml")
    shutil.copytree(REPO / ".chainlit" / "translations", app_root / ".chainlit" / "translations")
    shutil.copytree(REPO / "public", app_root / "public")  # Provenance's logo
    shutil.copy(REPO / "chainlit.md", app_root / "chainlit.md")

    env = {k: v for k, v in os.environ.items() if not cleared(k, HERMETIC_ENV_PREFIXES) and k not in NO_KEYS}
    env |= {
        "PROVENANCE_HOME": str(home),
        "HOME": str(user_home),
        "CHAINLIT_APP_ROOT": str(app_root),  # translations, .files and chainlit.md stay out of the repository
        "DATAHUB_TELEMETRY_ENABLED": "false",
    }
    port, log = _free_port(), workdir / "chainlit.log"
    chainlit = Path(sys.executable).with_name("chainlit")
    command = [str(chainlit), "run", str(REPO / "chainlit_app.py"), "--headless", "--host", "127.0.0.1"]
    with log.open("wb") as out:  # a file, not a PIPE: a full pipe would block the server
        proc = subprocess.Popen([*command, "--port", str(port)], cwd=app_root, env=env, stdout=out, stderr=out)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(url, proc, log)
        yield ChatServer(url=url, home=home, log=log)
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


expect.set_options(timeout=30_000)  # not the 5 s default: a loaded CI machine renders slowly; turns wait longer


def _external(url: str) -> bool:
    return not url.startswith("http://127.0.0.1:")


def _abort(route: Route) -> None:
    route.abort()  # offline: Google Fonts and the KaTeX CSS would only wait for a network that is not there


@dataclass
class Chat:
    """A logged-in chat page and the few gestures the tests need."""

    page: Page
    server: ChatServer

    @classmethod
    def open(cls, browser: Browser, server: ChatServer, width: int = 1400) -> tuple[BrowserContext, Chat]:
        context = browser.new_context(viewport={"width": width, "height": 1000})
        context.route(_external, _abort)
        page = context.new_page()
        page.set_default_timeout(30_000)
        chat = cls(page=page, server=server)
        chat.login()
        return context, chat

    def login(self) -> None:
        self.page.goto(self.server.url)
        expect(self.page.get_by_text("User name", exact=True)).to_be_visible()  # the user is "provenance", no email
        self.page.locator("#email").fill(USER)
        self.page.locator("#password").fill(PASSWORD)
        self.page.get_by_role("button", name="Sign In").click()
        expect(self.page.locator("#chat-input")).to_be_visible()

    def start(self, label: str) -> None:
        """Click a starter (enabled once the session's socket is connected; click() waits for that)."""
        self.page.get_by_role("button", name=label, exact=True).click()
        self._wait_for_thread_page()

    def send(self, text: str) -> None:
        box = self.page.locator("#chat-input")
        box.click()
        box.fill(text)
        # The composer ignores Enter until the session's socket is connected (e.g. just after "new chat"); the
        # send button is enabled only then, so wait for it instead of racing the connection.
        submit = self.page.locator("#chat-submit")
        expect(box).to_have_value(text)
        expect(submit).to_be_enabled()
        submit.click()
        expect(self.page.locator(USER_MESSAGE).filter(has_text=text).last).to_be_visible()
        self._wait_for_thread_page()

    def _wait_for_thread_page(self) -> None:
        """The first message of a new chat moves the page from / to /thread/<id> once Chainlit has refreshed its
        thread list (asynchronously, seconds later on a loaded machine), and that remounts the composer: a message
        typed before the move is lost with the old input box. Every gesture that sends waits for the move."""
        self.page.wait_for_url("**/thread/*")

    def screenshot(self, name: str, target: Locator | None = None) -> Path:
        """A PNG of the page (or of `target`) next to the server's log, and in $PROVENANCE_SCREENSHOTS when set
        (how docs/screenshots/ is made)."""
        paths = [self.server.log.with_name(f"{name}.png")]
        if os.environ.get("PROVENANCE_SCREENSHOTS"):
            paths.append(Path(os.environ["PROVENANCE_SCREENSHOTS"]) / f"{name}.png")
        for path in paths:
            path.parent.mkdir(parents=True, exist_ok=True)
            (target or self.page).screenshot(path=path, **({} if target else {"full_page": False}))
        return paths[0]

    def expect_answer(self, text: str, timeout: float = TURN_MS) -> None:
        expect(self.page.locator(ASSISTANT).filter(has_text=text).last).to_be_visible(timeout=timeout)

    def decide(self, label: str) -> None:
        button = self.page.get_by_role("button", name=label)
        expect(button).to_be_visible(timeout=TURN_MS)
        button.click()

    def new_chat(self) -> None:
        self.page.locator("#new-chat-button").click()
        self.page.get_by_role("button", name="Confirm").click()
        self.page.wait_for_url(lambda url: "/thread/" not in url)  # else the next send sees the old thread's page
