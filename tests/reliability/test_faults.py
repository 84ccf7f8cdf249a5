"""Faults: the process killed at every stage, the catalog dying mid-run, the disk filling up.

(a) `provenance ask … --approve` runs in a subprocess that ends itself with `os._exit(137)` at one stage
    (tests/reliability/crash_runner.py); a fresh process then continues each thread from its checkpoint with
    `agent.recovery.continue_thread` and approves, as `provenance resume --approve` would.
(b) The embedded endpoint is stopped, or the MCP server process is SIGKILLed, between two nodes of a turn: the
    turn records the failed stage and still writes its evidence; the next turn reconnects; a publication that
    met a dead MCP server is recorded as failed and a retry publishes it once.
(c) The disk fills up (the atomic evidence write raises ENOSPC): the turn fails with that error, leaves no run
    folder (final or temporary), publishes nothing; once space is back the thread continues to a complete run.

Figures: runs recovered / attempted, evidence files lost (0), duplicate documents or status tags (0).
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import tools.atomic as atomic
import tools.catalog.session as catalog_session
from agent.conversation import Session, open_session
from agent.nodes.approval import publish_run
from agent.recovery import continue_thread, thread_status
from agent.state import ApprovalDecision
from seed.catalog import FRAUD_MODEL_URN, STATUS_TAG_URNS
from tests.agent.helpers import CHAT_MODEL_ENVS
from tests.reliability.common import DEMO_QUESTION, documents_titled, fresh_home, settings_for, snapshot
from tests.reliability.crash_runner import KILL_EXIT, KILL_POINTS
from tools.evidence.store import EVIDENCE_FILE, REPORT_FILE, EvidenceError, read_evidence, runs_dir

REPO = Path(__file__).resolve().parents[2]
BLOCK_TAG = STATUS_TAG_URNS["BLOCK"]
APPROVE = ApprovalDecision(decision="approve", by="reliability")


# ------------------------------------------------------------------------------------------ shared accounting


def run_files(home: Path) -> dict[str, set[str]]:
    """Every file of every complete run folder (hidden staging folders excluded)."""
    folder = runs_dir(home)
    if not folder.is_dir():
        return {}
    return {
        run.name: {p.name for p in run.iterdir()}
        for run in folder.iterdir()
        if run.is_dir() and not run.name.startswith(".")
    }


def hidden_folders(home: Path) -> list[str]:
    folder = runs_dir(home)
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".")) if folder.is_dir() else []


def missing_evidence_files(home: Path, run_id: str) -> list[str]:
    """What a complete run folder must hold and does not: evidence.json, report.md, every plot it names."""
    folder = runs_dir(home) / run_id
    try:
        evidence = read_evidence(home, run_id)
    except EvidenceError:
        return [EVIDENCE_FILE]
    wanted = [REPORT_FILE, *(p for m in evidence.models for p in m.plots.values())]
    return [name for name in wanted if not (folder / name).is_file()]


def duplicates(db: Path, run_ids: list[str]) -> int:
    """Extra impact documents per run, plus status tags beyond one on the tested model."""
    extra_documents = sum(max(0, len(documents_titled(db, f"(run {run_id})")) - 1) for run_id in run_ids)
    status = [t for t in snapshot(db).tags[FRAUD_MODEL_URN] if t.startswith("urn:li:tag:provenance:")]
    return extra_documents + max(0, len(status) - 1)


# ---------------------------------------------------------------------------------------- (a) killed processes


@dataclass
class KillOutcome:
    stage: str
    exit_code: int | None
    status_before: str | None
    next_before: list[str]
    run_id: str | None
    verdict: str | None
    publication: str | None
    missing_files: list[str]
    recovered: bool


@dataclass
class KillFigures:
    attempted: int
    recovered: int
    evidence_files_lost: int
    duplicates: int
    orphan_staging_folders: int
    orphans: list[str]
    kill_seconds: float
    resume_seconds: float
    outcomes: list[KillOutcome] = field(default_factory=list)


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(CHAT_MODEL_ENVS)}
    env.update(PROVENANCE_HOME=str(home), DATAHUB_TELEMETRY_ENABLED="false")  # started in REPO: no PYTHONPATH
    env.pop("PROVENANCE_LITE_DB", None)
    env.pop("PROVENANCE_CATALOG", None)
    return env


async def _runner(home: Path, *args: str, timeout: float = 180) -> tuple[int | None, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.reliability.crash_runner",
        *args,
        cwd=REPO,
        env=_env(home),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), timeout)
    except TimeoutError:
        process.kill()
        await process.wait()
        return None, f"timed out after {timeout} s"
    if process.returncode not in (0, KILL_EXIT):
        return process.returncode, err.decode(errors="replace")[-2000:]
    return process.returncode, out.decode()


async def _kill_and_resume(home: Path, parallel: int) -> KillFigures:
    stages = list(KILL_POINTS)
    gate = asyncio.Semaphore(parallel)

    async def kill(stage: str) -> tuple[int | None, str]:
        async with gate:
            return await _runner(
                home, "kill", stage, "--", "ask", DEMO_QUESTION, "--thread", f"kill-{stage}", "--approve"
            )

    started = time.perf_counter()
    killed = await asyncio.gather(*(kill(stage) for stage in stages))
    kill_seconds = time.perf_counter() - started
    files_after_kill = run_files(home)

    started = time.perf_counter()
    code, out = await _runner(home, "continue", *(f"kill-{s}" for s in stages), "--approve")
    resume_seconds = time.perf_counter() - started
    if code != 0:
        raise AssertionError(f"the resuming process failed ({code}): {out}")
    results = {r["thread"]: r for r in map(json.loads, out.strip().splitlines())}

    db = settings_for(home).lite_db
    files_after = run_files(home)
    lost = sum(len(names - files_after.get(run, set())) for run, names in files_after_kill.items())
    outcomes = []
    for stage, (exit_code, _) in zip(stages, killed, strict=True):
        result = results.get(f"kill-{stage}", {})
        run_id = result.get("run_id")
        missing = missing_evidence_files(home, run_id) if run_id else [EVIDENCE_FILE]
        lost += len(missing)
        outcomes.append(
            KillOutcome(
                stage=stage,
                exit_code=exit_code,
                status_before=result.get("status_before"),
                next_before=result.get("next_before", []),
                run_id=run_id,
                verdict=result.get("verdict"),
                publication=result.get("publication"),
                missing_files=missing,
                recovered=exit_code == KILL_EXIT
                and result.get("verdict") == "BLOCK"
                and result.get("publication") == "published"
                and not missing
                and len(documents_titled(db, f"(run {run_id})")) == 1,
            )
        )
    run_ids = [o.run_id for o in outcomes if o.run_id]
    return KillFigures(
        attempted=len(stages),
        recovered=sum(o.recovered for o in outcomes),
        evidence_files_lost=lost,
        duplicates=duplicates(db, run_ids),
        orphan_staging_folders=len(hidden_folders(home)),
        orphans=hidden_folders(home),
        kill_seconds=kill_seconds,
        resume_seconds=resume_seconds,
        outcomes=outcomes,
    )


def measure_kill_recovery(template: Path, workdir: Path | None = None, parallel: int = 3) -> KillFigures:
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        home = fresh_home(template, Path(tmp) / "home")
        return asyncio.run(_kill_and_resume(home, parallel))


# ------------------------------------------------------------------------------------- (b) the catalog dies


def _children() -> list[int]:
    pids: list[int] = []
    for task in os.listdir("/proc/self/task"):
        try:
            pids += [int(pid) for pid in Path(f"/proc/self/task/{task}/children").read_text().split()]
        except FileNotFoundError:
            continue
    return pids


def kill_mcp_server(home: Path) -> int:
    """SIGKILL the MCP server processes this process started for `home` (found by parent id and command line: the
    launcher's log file is under the home; another catalog of this worker, tests/shared_catalog.py, is left alone)."""
    killed = 0
    for pid in _children():
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except FileNotFoundError:
            continue
        if b"tools.catalog.mcp_launcher" in command and str(home).encode() in command:
            os.kill(pid, signal.SIGKILL)
            killed += 1
    return killed


@dataclass
class CatalogDeathOutcome:
    what: str
    failed_stage: str | None
    message: str
    run_id: str | None
    verdict: str | None
    missing_files: list[str]
    next_turn_verdict: str | None = None
    publication: str | None = None


@dataclass
class CatalogDeathFigures:
    attempted: int
    recorded_with_evidence: int
    """Turns that recorded the failed stage and still wrote complete evidence."""
    recovered: int
    """Later turns or retries that worked once the catalog was back."""
    evidence_files_lost: int
    duplicates: int
    outcomes: list[CatalogDeathOutcome] = field(default_factory=list)


async def _die_between_nodes(session: Session, what: str, thread: str) -> CatalogDeathOutcome:
    home = session.context.settings.home

    async def after_node(node: str, _update: dict[str, Any]) -> None:
        if node != "gather_context":
            return
        catalog = session.context.handle.opened
        assert catalog is not None
        if what == "endpoint":
            assert catalog.embedded is not None
            catalog.embedded.stop()
        else:
            assert kill_mcp_server(home) == 1

    turn = await asyncio.wait_for(session.ask(DEMO_QUESTION, thread_id=thread, on_update=after_node), 120)
    failures = [f for f in turn.values.get("failures") or [] if f.kind == "error"]
    run_id = turn.values.get("run_id")
    return CatalogDeathOutcome(
        what=what,
        failed_stage=failures[0].stage if failures else None,
        message=failures[0].message if failures else "",
        run_id=run_id,
        verdict=str(turn.values.get("verdict")) if turn.values.get("verdict") else None,
        missing_files=missing_evidence_files(home, run_id) if run_id else [EVIDENCE_FILE],
    )


async def _catalog_deaths(home: Path, progress: list[str]) -> CatalogDeathFigures:
    settings = settings_for(home)
    outcomes: list[CatalogDeathOutcome] = []
    recovered = 0

    # The embedded endpoint stops after gather_context: discovery fails, the run is recorded as INCOMPLETE.
    progress.append("endpoint stopped mid-run")
    async with open_session(settings) as session:
        outcomes.append(await _die_between_nodes(session, "endpoint", "endpoint-dies"))
        progress.append("closing the session whose endpoint stopped")

    # One long-lived session, as the chat keeps: the MCP server is killed after gather_context ...
    progress.append("MCP server killed mid-run")
    async with open_session(settings) as session:
        outcome = await _die_between_nodes(session, "mcp server", "mcp-dies")
        outcomes.append(outcome)
        # ... the next turn reconnects ...
        progress.append("the turn after the MCP server died")
        after = await session.ask(DEMO_QUESTION, thread_id="mcp-after")
        outcome.next_turn_verdict = str(after.values.get("verdict"))
        recovered += after.pending is not None and outcome.next_turn_verdict == "BLOCK"
        # ... and when it dies while a run waits for approval, the publication fails and is recorded;
        # `provenance publish` (publish_run) retries it once the catalog is back.
        assert after.pending is not None
        assert kill_mcp_server(settings.home) == 1
        progress.append("approving with the MCP server dead")
        decided = await session.decide("mcp-after", APPROVE)
        failed = decided.values["publication"]
        run_id = after.pending.run_id
        progress.append("retrying the publication")
        retry = await publish_run(session.context, run_id, decided_by="retry")
        outcomes.append(
            CatalogDeathOutcome(
                what="mcp server before publication",
                failed_stage="publish" if failed.status == "failed" else None,
                message=failed.message or "",
                run_id=run_id,
                verdict=str(decided.values.get("verdict")),
                missing_files=missing_evidence_files(settings.home, run_id),
                publication=retry.status,
            )
        )
        recovered += retry.status == "published"
        progress.append("closing the session")

    run_ids = [o.run_id for o in outcomes if o.run_id]
    return CatalogDeathFigures(
        attempted=len(outcomes),
        recorded_with_evidence=sum(
            bool(o.failed_stage and o.message and o.run_id and not o.missing_files) for o in outcomes
        ),
        recovered=recovered,
        evidence_files_lost=sum(len(o.missing_files) for o in outcomes),
        duplicates=duplicates(settings.lite_db, run_ids),
        outcomes=outcomes,
    )


def measure_catalog_death(
    template: Path, workdir: Path | None = None, timeout: float = 240, call_timeout: float = 15
) -> CatalogDeathFigures:
    """`call_timeout` shortens the MCP call bound (120 s in production): a request sent just as the server dies
    can stay unanswered (about 1 run in 10 here), and the bound is what turns that into a recorded failure."""
    progress: list[str] = []
    saved = catalog_session.CALL_TIMEOUT_SECONDS
    catalog_session.CALL_TIMEOUT_SECONDS = call_timeout
    try:
        with tempfile.TemporaryDirectory(dir=workdir) as tmp:
            home = fresh_home(template, Path(tmp) / "home")
            try:
                return asyncio.run(asyncio.wait_for(_catalog_deaths(home, progress), timeout))
            except TimeoutError:
                where = progress[-1] if progress else "start"
                raise AssertionError(f"no progress for {timeout} s at: {where}") from None
    finally:
        catalog_session.CALL_TIMEOUT_SECONDS = saved


# -------------------------------------------------------------------------------------------- (c) disk full


@contextmanager
def disk_full(*, spare_plots: bool = False) -> Iterator[list[Path]]:
    """Atomic file writes fail as on a full disk; yields the paths that were attempted.

    `spare_plots`: the experiment's plot staging still works, so the disk fills up exactly at write_evidence.
    """
    attempted: list[Path] = []
    original = atomic.write_atomically  # every writer calls it through the module, so one patch reaches them all

    def no_space(path: Path, data: bytes, **options: Any) -> None:
        if spare_plots and path.parent.name.startswith(".staging-"):
            return original(path, data, **options)
        attempted.append(path)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    atomic.write_atomically = no_space
    try:
        yield attempted
    finally:
        atomic.write_atomically = original


@dataclass
class DiskFullOutcome:
    when: str
    error: str
    errno_ok: bool
    half_written: list[str]
    """Run folders (final or temporary) the failed write left behind; the plots' staging folder is kept on purpose."""
    catalog_writes: int
    approval_requested: bool
    next_after_failure: list[str]
    evidence_intact: bool
    """The evidence.json on disk is still a readable, earlier version."""
    recovered: bool
    missing_files: list[str]


@dataclass
class DiskFullFigures:
    attempted: int
    clear_failures: int
    half_written_folders: int
    published_without_evidence: int
    recovered: int
    evidence_files_lost: int
    duplicates: int
    outcomes: list[DiskFullOutcome] = field(default_factory=list)


async def _attempt(coroutine: Any, *, spare_plots: bool = False) -> BaseException | None:
    with disk_full(spare_plots=spare_plots):
        try:
            await coroutine
        except OSError as exc:
            return exc
    return None


def _describe(error: BaseException | None) -> tuple[str, bool]:
    text = f"{type(error).__name__}: {error}" if error else "no error"
    return text, isinstance(error, OSError) and error.errno == errno.ENOSPC


async def _disk_full(home: Path) -> DiskFullFigures:
    settings = settings_for(home)
    db = settings.lite_db
    outcomes: list[DiskFullOutcome] = []
    async with open_session(settings) as session:
        # 1. Writing the evidence fails: no run folder, no approval request, no catalog write.
        before, runs_before = snapshot(db), set(run_files(home))
        error = await _attempt(session.ask(DEMO_QUESTION, thread_id="disk"), spare_plots=True)
        status = await thread_status(session, "disk")
        half = sorted(set(run_files(home)) - runs_before) + [
            n for n in hidden_folders(home) if not n.startswith(".staging-")
        ]
        writes = snapshot(db).writes_since(before)
        pending = await session.pending("disk") is not None
        resumed = await continue_thread(session, "disk")  # space is back
        run_id = resumed.values.get("run_id")
        text, errno_ok = _describe(error)
        outcomes.append(
            DiskFullOutcome(
                when="writing the evidence",
                error=text,
                errno_ok=errno_ok,
                half_written=half,
                catalog_writes=writes,
                approval_requested=pending,
                next_after_failure=list(status.next_nodes),
                evidence_intact=True,  # there was none yet
                recovered=resumed.pending is not None and resumed.pending.verdict == "BLOCK",
                missing_files=missing_evidence_files(home, run_id) if run_id else [EVIDENCE_FILE],
            )
        )

        # 2. Recording the publication fails after the tag and document were written: the evidence on disk
        # stays the earlier, whole version, and continuing records the publication without a second document.
        assert resumed.pending is not None and run_id
        error = await _attempt(session.decide("disk", APPROVE))
        status = await thread_status(session, "disk")
        try:
            intact = read_evidence(home, run_id).publication.status == "pending_approval"
        except EvidenceError:
            intact = False
        half = [n for n in hidden_folders(home) if not n.startswith(".staging-")]
        await continue_thread(session, "disk")
        text, errno_ok = _describe(error)
        outcomes.append(
            DiskFullOutcome(
                when="recording the publication",
                error=text,
                errno_ok=errno_ok,
                half_written=half,
                catalog_writes=0,
                approval_requested=False,
                next_after_failure=list(status.next_nodes),
                evidence_intact=intact,
                recovered=read_evidence(home, run_id).publication.status == "published",
                missing_files=missing_evidence_files(home, run_id),
            )
        )
        # 3. The disk is full from the start: the experiment's plots fail (a recorded stage failure), then the
        # evidence; once space is back the run is written as INCOMPLETE, naming the cause. Nothing to approve.
        before, runs_before = snapshot(db), set(run_files(home))
        error = await _attempt(session.ask(DEMO_QUESTION, thread_id="disk-full-early"))
        status = await thread_status(session, "disk-full-early")
        half = sorted(set(run_files(home)) - runs_before) + [
            n for n in hidden_folders(home) if not n.startswith(".staging-")
        ]
        writes = snapshot(db).writes_since(before)
        pending = await session.pending("disk-full-early") is not None
        resumed = await continue_thread(session, "disk-full-early")
        early_run = resumed.values.get("run_id")
        reasons = " ".join(resumed.values.get("verdict_reasons") or [])
        text, errno_ok = _describe(error)
        outcomes.append(
            DiskFullOutcome(
                when="the whole run (disk already full)",
                error=text,
                errno_ok=errno_ok,
                half_written=half,
                catalog_writes=writes,
                approval_requested=pending,
                next_after_failure=list(status.next_nodes),
                evidence_intact=True,
                recovered=bool(early_run)
                and str(resumed.values.get("verdict")) == "INCOMPLETE"
                and "No space left on device" in reasons
                and resumed.pending is None,
                missing_files=missing_evidence_files(home, early_run) if early_run else [EVIDENCE_FILE],
            )
        )
    return DiskFullFigures(
        attempted=len(outcomes),
        clear_failures=sum(o.errno_ok and "No space left on device" in o.error for o in outcomes),
        half_written_folders=sum(len(o.half_written) for o in outcomes),
        published_without_evidence=sum(o.catalog_writes + o.approval_requested for o in outcomes),
        recovered=sum(o.recovered for o in outcomes),
        evidence_files_lost=sum(len(o.missing_files) for o in outcomes) + sum(not o.evidence_intact for o in outcomes),
        duplicates=duplicates(db, [run_id]),
        outcomes=outcomes,
    )


def measure_disk_full(template: Path, workdir: Path | None = None) -> DiskFullFigures:
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        home = fresh_home(template, Path(tmp) / "home")
        return asyncio.run(_disk_full(home))


# ------------------------------------------------------------------------------------------------------ tests


@pytest.mark.slow
def test_a_process_killed_at_any_stage_resumes_without_losing_evidence_or_duplicating(
    seeded_template: Path, tmp_path: Path
) -> None:
    figures = measure_kill_recovery(seeded_template, tmp_path)
    assert all(o.exit_code == KILL_EXIT for o in figures.outcomes), figures.outcomes
    assert figures.recovered == figures.attempted == len(KILL_POINTS), figures.outcomes
    assert figures.evidence_files_lost == 0
    assert figures.duplicates == 0
    assert figures.orphan_staging_folders == 0, figures.orphans  # a resumed experiment reuses its folder (5 were)
    # Where each thread stood depends on whether LangGraph had saved the last step's checkpoint (it saves while
    # the next step runs): a killed turn is either mid-graph or back at its approval, never finished.
    assert all(o.status_before in ("interrupted", "pending_approval") for o in figures.outcomes), figures.outcomes


@pytest.mark.slow
def test_the_catalog_dying_mid_run_is_recorded_and_evidence_still_written(
    seeded_template: Path, tmp_path: Path
) -> None:
    figures = measure_catalog_death(seeded_template, tmp_path)
    assert figures.recorded_with_evidence == figures.attempted == 3, figures.outcomes
    assert [o.failed_stage for o in figures.outcomes] == ["discover", "discover", "publish"]
    assert all(o.verdict == "INCOMPLETE" for o in figures.outcomes[:2])
    assert figures.recovered == 2, figures.outcomes
    assert figures.evidence_files_lost == 0 and figures.duplicates == 0


@pytest.mark.slow
def test_a_full_disk_fails_clearly_leaves_no_half_run_and_publishes_nothing(
    seeded_template: Path, tmp_path: Path
) -> None:
    figures = measure_disk_full(seeded_template, tmp_path)
    assert figures.clear_failures == figures.attempted == 3, figures.outcomes
    assert figures.half_written_folders == 0, figures.outcomes
    assert figures.published_without_evidence == 0, figures.outcomes
    assert [o.next_after_failure for o in figures.outcomes] == [["write_evidence"], ["publish"], ["write_evidence"]]
    assert figures.recovered == 3 and figures.evidence_files_lost == 0 and figures.duplicates == 0, figures.outcomes


def test_continue_thread_leaves_finished_threads_alone_and_refuses_unknown_ones(settings: Any) -> None:
    async def scenario() -> None:
        async with open_session(settings) as session:
            with pytest.raises(ValueError, match="no conversation with this id"):
                await continue_thread(session, "never-started")
            await session.ask("hello, what can you do?", thread_id="done")  # answered without the catalog
            before = await session.graph.aget_state(session.config("done"))
            assert (await thread_status(session, "done")).state == "finished"
            turn = await continue_thread(session, "done")
            after = await session.graph.aget_state(session.config("done"))
            assert turn.pending is None and turn.answer
            assert after.config == before.config  # nothing ran again
            assert session.context.handle.opened is None  # and the catalog was never needed

    asyncio.run(scenario())
