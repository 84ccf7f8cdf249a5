"""Shared fixtures. HOME points at a temporary folder so acryl-datahub never writes into the real ~/.datahub."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

# uv's cache stays the user's, the one `make test` installed .venv from (uv reads XDG_CACHE_HOME or ~/.cache): the
# venvs the tests make (the README's demo venv, the dbt and Feast CLIs) link its files instead of fetching them again
# into the temporary HOME, and the demo venv's modules are then the files .venv compiled (tests/test_readme_blocks.py).
_UV_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "uv"
if "UV_CACHE_DIR" not in os.environ and _UV_CACHE.is_dir():
    os.environ["UV_CACHE_DIR"] = str(_UV_CACHE)
_HOME = tempfile.mkdtemp(prefix="provenance-test-home-")
os.environ["HOME"] = _HOME
os.environ["DATAHUB_TELEMETRY_ENABLED"] = "false"
# The test worlds (MLflow stores, warehouses, evaluation files, catalogs) are built in the temporary folder: it is
# what an operator lists in PROVENANCE_ARTIFACT_ROOTS. Tests of the trust boundary set roots of their own.
os.environ["PROVENANCE_ARTIFACT_ROOTS"] = os.path.realpath(tempfile.gettempdir())
# The suite runs as CI runs it: no command leaves a warm service behind (agent/cli/warm.py). CI=true survives the
# tests that clear every PROVENANCE_ variable; the warm service's own tests (tests/agent/cli/test_warm.py) unset it.
os.environ["CI"] = "true"
os.environ["PROVENANCE_SERVICE"] = "off"

from tests.warm_start import CLI_FORKSERVER_ENV, MCP_FORKSERVER_ENV, ForkServer  # noqa: E402

# The fixtures import what they build (the seed, the catalog, the settings): xdist's controller, which runs no test,
# loads this file before it starts the workers, and those imports (~4 CPU s) delayed every worker's start.
if TYPE_CHECKING:
    from tests.postgres import Cluster
    from tests.realworld.world import RealWorld
    from tests.shared_catalog import SharedCatalog
    from tools.settings import ProvenanceSettings

# `make test` runs pytest-xdist with --dist loadgroup: tests of a group run on one worker, so what they share is
# built once. The browser tests share a chat server per module and load the CPU; the dbt world (~55 s) lives in
# its worker's PostgreSQL server, as the Feast world (~40 s) does. Other session fixtures (the seeded home: ~2 CPU s)
# are per worker.
_GROUP_FIXTURES = {
    "dbt_world": "dbt_world",
    "dbt_world_copy": "dbt_world",
    "feast_catalog": "feast_world",
    "dbt_style_world": "dbt_style_world",
    # the real-ingestion world (~15 s, sources run in-process): its ~30 s of tests on one worker build it once
    "real_world": "real_world",
    "real_world_copy": "real_world",
}


def _shared_scope(item: pytest.Item) -> str:
    """The module (or package) whose module-, class- or package-scoped fixtures the test uses: xdist would otherwise
    hand the module's tests to both workers, and each would build those fixtures (a module's assessments, a DuckDB
    warehouse, a served catalog: 2-18 s apiece, ~50 worker-seconds a run)."""
    info = getattr(item, "_fixtureinfo", None)
    scopes = {d.scope for defs in (info.name2fixturedefs.values() if info else ()) for d in defs}
    path = item.nodeid.split("::")[0]
    if "package" in scopes:
        return path.rsplit("/", 1)[0]
    return path if scopes & {"module", "class"} else ""


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.pluginmanager.hasplugin("xdist"):  # `-p no:xdist`: its mark is not even registered
        return
    for item in items:
        if item.get_closest_marker("browser") is not None:
            group = "browser"
        else:
            fixtures = getattr(item, "fixturenames", ())
            group = next((g for f, g in _GROUP_FIXTURES.items() if f in fixtures), "") or _shared_scope(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))


_FORK_SERVERS = pytest.StashKey[tuple[Path, list[subprocess.Popen[bytes]]]]()


def pytest_configure(config: pytest.Config) -> None:
    """Warm fork servers for the DataHub MCP servers (tools/catalog/mcp_forkserver.py: hundreds of catalog sessions)
    and the `provenance` commands (agent/cli/forkserver.py: ~100) and the suite's runner programs
    (tests/runner_forkserver.py) this session starts, each 2-4 CPU s of imports when cold. Started once, here in
    the process that runs the session (xdist's controller): its workers inherit the sockets' variables, and their
    processes are forked from the same servers (a server's own start costs ~10 CPU s). A launch either cannot vouch
    for starts cold."""
    if hasattr(config, "workerinput"):  # an xdist worker: the controller's servers, named in what it inherited
        return
    from tests.mcp_forkserver import REPO, spawn_forkserver

    folder = Path(tempfile.mkdtemp(prefix="pv-fork-"))  # short: a UNIX socket path has at most 107 bytes
    servers = [spawn_forkserver(folder / "mcp.sock", folder / "mcp.log")]
    os.environ[MCP_FORKSERVER_ENV] = str(folder / "mcp.sock")  # launches before it listens start cold
    # `make check` (not slow) runs few commands: one of twelve was forked, and the server's start costs ~9 CPU s.
    if "not slow" not in (config.getoption("markexpr") or ""):
        with (folder / "cli.log").open("wb") as cli_log:  # the environment the tests' commands get, less settings
            command = [sys.executable, "-m", "tests.runner_forkserver", str(folder / "cli.sock")]
            servers.append(
                subprocess.Popen(command, cwd=REPO, stdin=subprocess.DEVNULL, stdout=cli_log, stderr=cli_log)
            )
        os.environ[CLI_FORKSERVER_ENV] = str(folder / "cli.sock")
    config.stash[_FORK_SERVERS] = (folder, servers)


def pytest_unconfigure(config: pytest.Config) -> None:
    import shutil

    folder, servers = config.stash.get(_FORK_SERVERS, (None, []))
    for variable in (MCP_FORKSERVER_ENV, CLI_FORKSERVER_ENV):
        os.environ.pop(variable, None)
    for server in servers:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
    if folder is not None:
        shutil.rmtree(folder)  # the sockets and logs: each run left a folder in /tmp
    # This process's temporary HOME (each run left three). A process this one started may still be ending and write
    # into it as it goes: what is left then is a few files in /tmp, not a reason to fail the run.
    shutil.rmtree(_HOME, ignore_errors=True)


@pytest.fixture(scope="session")
def forkservers() -> dict[str, ForkServer]:
    """The session's fork servers (`pytest_configure`), by the variable that names each one's socket."""
    named = {variable: os.environ.get(variable) for variable in (MCP_FORKSERVER_ENV, CLI_FORKSERVER_ENV)}
    return {v: ForkServer(Path(path), Path(path).with_suffix(".log")) for v, path in named.items() if path}


@pytest.fixture(scope="session")
def seeded_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A seeded PROVENANCE_HOME, built once per test session; copy it before writing."""
    from seed.seeding import seed_demo
    from tools.settings import ProvenanceSettings

    home = tmp_path_factory.mktemp("seeded-home")
    seed_demo(ProvenanceSettings(provenance_home=home))
    return home


@pytest.fixture
def seeded_home(seeded_template: Path, tmp_path: Path) -> Iterator[Path]:
    """A private, writable copy of the seeded home (catalog file + demo artifacts)."""
    import shutil

    home = tmp_path / "home"
    shutil.copytree(seeded_template, home, ignore=shutil.ignore_patterns("logs", "mcp-home"))
    yield home


@pytest.fixture
def settings(seeded_home: Path) -> ProvenanceSettings:
    from tools.settings import ProvenanceSettings

    return ProvenanceSettings(provenance_home=seeded_home)


@pytest.fixture(scope="session")
def shared_catalog(seeded_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedCatalog]:
    """The seeded catalog, read-only, opened once per worker (tests/shared_catalog.py). Logs and the MCP server's
    home go to a folder of its own, so that the template copied by `seeded_home` stays as seeded."""
    from tests.shared_catalog import SharedCatalog
    from tools.settings import ProvenanceSettings

    home = tmp_path_factory.mktemp("shared-catalog")
    settings = ProvenanceSettings(provenance_home=home, provenance_lite_db=seeded_template / "catalog.db")
    catalog = SharedCatalog(settings)
    yield catalog
    catalog.close()


@pytest.fixture(scope="session")
def real_world(tmp_path_factory: pytest.TempPathFactory) -> RealWorld:
    """A world written by DataHub's real ingestion sources (sqlalchemy, sql-queries, mlflow) over a SQLite warehouse
    and a real MLflow store, built once per session (~15 s); read-only: use ``real_world_copy`` to write."""
    from tests.realworld.world import build_world

    return build_world(tmp_path_factory.mktemp("real-world"))


@pytest.fixture
def real_world_copy(real_world: RealWorld, tmp_path: Path) -> RealWorld:
    """A private, writable copy of ``real_world`` (Lite file, warehouse, MLflow store and artifacts, CSVs)."""
    from tests.realworld.world import copy_world

    return copy_world(real_world, tmp_path / "real-world")


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Cluster]:
    """A throw-away PostgreSQL server for the whole session (tests/postgres.py); fails, never skips, when the
    server programs are missing: `make system-deps` installs them."""
    from tests.postgres import ClusterError, start_cluster

    try:
        cluster = start_cluster()
    except ClusterError as exc:
        pytest.fail(str(exc), pytrace=False)
    yield cluster
    cluster.stop()


@pytest.fixture
def postgres_url(postgres_cluster: Cluster) -> str:
    """The URL of a new, empty database on the session's PostgreSQL server (one per test)."""
    return postgres_cluster.create_database()


# ---------------------------------------------------------------------------------------------------- the dbt world
if TYPE_CHECKING:
    from tests.realworld.dbt_style_world import StyleWorld
    from tests.realworld.dbt_world import DbtWorld


@pytest.fixture(scope="session")
def dbt_world(tmp_path_factory: pytest.TempPathFactory, postgres_cluster: Cluster) -> DbtWorld:
    """A world on the dbt stack (tests/realworld/dbt_world.py): raw.claims in the session's PostgreSQL server, the
    real dbt CLI, MLflow, and DataHub's postgres, dbt and mlflow sources into two Lite catalogs (`lite`, `rest`);
    built once per session (~55 s; the first run ever also installs the dbt CLI into .venv/dbt-cli, with uv).
    Read-only: use ``dbt_world_copy`` to write."""
    from tests.realworld.dbt_world import build_dbt_world

    return build_dbt_world(tmp_path_factory.mktemp("dbt-world"), postgres_cluster)


@pytest.fixture(scope="session")
def dbt_style_world(tmp_path_factory: pytest.TempPathFactory, postgres_cluster: Cluster) -> StyleWorld:
    """The style-guide dbt world (tests/realworld/dbt_style_world.py): a separate reader's dbt project on the
    session's PostgreSQL server, built by the dbt CLI and ingested by DataHub's postgres and dbt sources through a
    REST sink (~25 s). Read-only."""
    from tests.realworld.dbt_style_world import build_style_world

    return build_style_world(tmp_path_factory.mktemp("dbt-style-world"), postgres_cluster)


@pytest.fixture
def dbt_world_copy(dbt_world: DbtWorld, tmp_path: Path) -> DbtWorld:
    """A private, writable copy of ``dbt_world``'s files (both catalogs, MLflow store and artifacts, CSVs, the dbt
    project); the PostgreSQL database stays shared (read it, do not change it)."""
    from tests.realworld.dbt_world import copy_dbt_world

    return copy_dbt_world(dbt_world, tmp_path / "dbt-world")
