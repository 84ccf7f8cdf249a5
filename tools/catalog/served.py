"""A catalog kept running by `provenance catalog serve`, which other commands read through instead of starting one.

`serve_catalog` starts the embedded endpoint and the pinned mcp-server-datahub as its stateless HTTP entry point
(mcp-server-datahub-http) with mutations off, and advertises both in `$PROVENANCE_HOME/catalog-serve.json` (written
atomically, removed on exit). `find_served` is what `open_catalog` asks first: the state file, when its pid is alive,
it serves this home's Lite file and both health checks answer; or PROVENANCE_CATALOG_URL (a served MCP URL) with
DATAHUB_GMS_URL / DATAHUB_GMS_TOKEN for its endpoint. A served reader spawns nothing; a writer (publish) still
starts its own stdio server, mutations on, against the served endpoint.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from tools import atomic
from tools.catalog.serve_state import live_state, state_path
from tools.catalog.session import CatalogError, McpServerSpec
from tools.settings import ProvenanceSettings

log = logging.getLogger(__name__)

HTTP_LOG = "mcp-server-datahub-http.log"
START_TIMEOUT_SECONDS = 60.0
HEALTH_TIMEOUT_SECONDS = 2.0
_PASSED_ENV = ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "USER", "LOGNAME", "TMPDIR")


@dataclass(frozen=True)
class ServedCatalog:
    mcp_url: str
    """The MCP server's streamable HTTP endpoint (…/mcp); it takes the endpoint's token as a bearer token."""
    gms_url: str
    gms_token: str
    pid: int | None = None
    """The `provenance catalog serve` process; None when given by PROVENANCE_CATALOG_URL."""
    lite_db: str | None = None
    assess_url: str | None = None
    """Where the serving process takes assessments (agent/service.py), once it does."""
    reader_token: str | None = None
    """A token that only reads (the one `catalog serve` prints); `gms_token` writes, and stays in the state file."""
    stamp: str | None = None
    """What a background service was started with (tools/catalog/service_stamp.py); None for a foreground serve."""
    idle_seconds: int | None = None
    """A background service exits after this long without a request; None: it runs until stopped."""

    def describe(self) -> str:
        by = f"`provenance catalog serve` (pid {self.pid})" if self.pid else "PROVENANCE_CATALOG_URL"
        return f"served catalog: MCP {self.mcp_url} over HTTP, endpoint {self.gms_url}, from {by}"


def _get(url: str, token: str | None = None) -> int:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    with urllib.request.urlopen(request, timeout=HEALTH_TIMEOUT_SECONDS) as response:  # noqa: S310 - our URLs
        return int(response.status)


def health_problem(served: ServedCatalog) -> str | None:
    """None when the MCP server's /health and the endpoint's /config answer 200; else what failed."""
    checks = ((_health_url(served.mcp_url), None), (f"{served.gms_url.rstrip('/')}/config", served.gms_token))
    for url, token in checks:
        try:
            status = _get(url, token)
        except (OSError, urllib.error.URLError) as exc:
            return f"{url} did not answer ({exc})"
        if status != 200:
            return f"{url} answered {status}"
    return None


def _health_url(mcp_url: str) -> str:
    base = mcp_url.rstrip("/").removesuffix("/mcp")
    return f"{base}/health"


def find_served(settings: ProvenanceSettings) -> ServedCatalog | None:
    """The running catalog to read through, or None (start one). See the module's docstring."""
    if settings.provenance_catalog_url:
        if not settings.datahub_gms_url:
            raise CatalogError(
                "PROVENANCE_CATALOG_URL needs DATAHUB_GMS_URL (and DATAHUB_GMS_TOKEN): the endpoint the served MCP "
                "server reads, which the publish step writes to; `provenance catalog serve` prints all three"
            )
        return ServedCatalog(
            settings.provenance_catalog_url, settings.datahub_gms_url, settings.datahub_gms_token or ""
        )
    if settings.provenance_catalog != "embedded":
        return None
    state = live_state(settings)
    if state is None:
        return None
    try:
        served = ServedCatalog(**state)
    except TypeError as exc:
        log.warning("ignoring %s: unexpected fields (%s)", state_path(settings), exc)
        return None
    problem = health_problem(served)
    if problem is not None:
        log.warning("ignoring %s: %s; starting a catalog", state_path(settings), problem)
        return None
    log.info("reusing the %s", served.describe())
    return served


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _tail(path: Path, lines: int = 5) -> str:
    if not path.exists():
        return "(no log written)"
    return " | ".join(path.read_text(errors="replace").strip().splitlines()[-lines:])


@contextmanager
def start_http_mcp_server(spec: McpServerSpec, log_file: Path, *, port: int = 0) -> Iterator[tuple[str, int]]:
    """mcp-server-datahub-http against `spec`'s endpoint, mutations off, on 127.0.0.1; yields (MCP URL, pid) once
    /health answers, and stops it on exit. The HTTP entry point refuses a shared DATAHUB_GMS_TOKEN: every request
    carries the token."""
    port = port or _free_port()
    log_file.parent.mkdir(parents=True, exist_ok=True)
    spec.home.mkdir(parents=True, exist_ok=True)
    env = {key: os.environ[key] for key in _PASSED_ENV if key in os.environ}
    env.update(spec.server_env(mutations=False))
    del env["DATAHUB_GMS_TOKEN"]
    env.update({"FASTMCP_HOST": "127.0.0.1", "FASTMCP_PORT": str(port), "FASTMCP_SHOW_SERVER_BANNER": "false"})
    process = subprocess.Popen(
        [sys.executable, "-m", "tools.catalog.mcp_launcher", str(log_file), "http"],
        env=env,
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # Ctrl-C on the serving terminal reaches `serve`, which stops this one in order
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while True:
            if process.poll() is not None:
                raise CatalogError(
                    f"the DataHub MCP server (HTTP) exited with {process.returncode} before answering; "
                    f"its log is {log_file}: {_tail(log_file)}"
                )
            try:
                if _get(_health_url(url)) == 200:
                    break
            except (OSError, urllib.error.URLError):
                pass
            if time.monotonic() > deadline:
                raise CatalogError(
                    f"the DataHub MCP server (HTTP) did not answer on {url} within {START_TIMEOUT_SECONDS:g} s; "
                    f"its log is {log_file}: {_tail(log_file)}"
                )
            time.sleep(0.05)
        yield url, process.pid
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def serve_catalog(
    settings: ProvenanceSettings, *, port: int = 0, token: str | None = None, mcp_port: int = 0
) -> Iterator[ServedCatalog]:
    """The embedded endpoint and a reader MCP server over HTTP, advertised in the state file while the block runs."""
    from tools.embedded.server import start_embedded_catalog

    embedded = start_embedded_catalog(settings.lite_db, port=port, token=token, reader_token=secrets.token_urlsafe(24))
    try:
        spec = McpServerSpec(
            gms_url=embedded.url,
            gms_token=embedded.token,
            log_file=settings.logs / HTTP_LOG,
            home=settings.home / "mcp-home",
            forkserver=settings.forkserver,
        )
        with start_http_mcp_server(spec, settings.logs / HTTP_LOG, port=mcp_port) as (mcp_url, _server_pid):
            served = ServedCatalog(
                mcp_url, embedded.url, embedded.token, os.getpid(), str(settings.lite_db), None, embedded.reader_token
            )
            path = advertise(settings, served)
            try:
                yield served
            finally:
                _remove_state(path, served.pid)
    finally:
        embedded.stop()


def advertise(settings: ProvenanceSettings, served: ServedCatalog) -> Path:
    """Write (or rewrite) the state file other commands find this catalog by; private: it holds the token."""
    path = state_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_atomically(path, json.dumps(asdict(served), indent=2).encode(), mode=atomic.PRIVATE)
    return path


def _remove_state(path: Path, pid: int | None) -> None:
    """Remove the state file if it is still ours (a later `serve` on the same home may have replaced it)."""
    with atomic.file_lock(path):
        try:
            if json.loads(path.read_text()).get("pid") == pid:
                path.unlink()
        except (OSError, ValueError):
            pass
