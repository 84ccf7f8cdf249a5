"""What a newcomer types first: `--version`, `--help` that names every operator's parameters and both decisions,
usage errors found before anything starts (an empty question, a repeated --param), a question that cannot be read
exiting 2, `runs` with a header, and `publish` asking before it writes."""

from __future__ import annotations

import builtins
import getpass
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agent.cli.app import main
from seed.catalog import FRAUD_MODEL_URN
from tests.agent.helpers import catalog_write_count
from tests.tools.evidence.test_store import make_evidence, write_stub_report
from tools.evidence.schema import Evidence
from tools.evidence.store import read_evidence, write_run

PROVENANCE = [sys.executable, "-m", "agent.cli"]


def _demo_run() -> Evidence:
    """A run (made with --no-publish: nothing requested) whose model is the demo catalog's fraud_detector."""
    evidence = make_evidence()
    model = evidence.models[0].model_copy(update={"urn": FRAUD_MODEL_URN, "name": "fraud_detector"})
    return evidence.model_copy(update={"models": [model]})


def _run(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    # A bare environment, but the suite's service setting (tests/conftest.py): no warm service left behind for 15 min
    service = os.environ["PROVENANCE_SERVICE"]
    env = {"PROVENANCE_HOME": str(home), "PATH": "/usr/bin:/bin", "HOME": str(home), "PROVENANCE_SERVICE": service}
    return subprocess.run([*PROVENANCE, *args], capture_output=True, text=True, timeout=120, env=env)


def test_version_is_the_installed_one(tmp_path: Path) -> None:
    from importlib.metadata import version

    done = _run("--version", home=tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == f"provenance {version('provenance')}"


def test_help_names_each_operators_parameters_and_the_decisions(capsys: pytest.CaptureFixture[str]) -> None:
    for command, needles in (
        ("assess", ["scale(factor)", "clip(lower, upper)", "cyclic_shift(offset, period)", "a key once"]),
        ("resume", ["approve the pending publication", "reject it: nothing is written"]),
        ("publish", ["--yes", "recorded as yours"]),
    ):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        for needle in needles:
            assert needle in text, (command, needle, text)


@pytest.mark.parametrize("question", ["", "   ", "\n"])
def test_an_empty_question_is_a_usage_error_at_once(
    question: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PROVENANCE_HOME", str(tmp_path))
    assert main(["ask", question]) == 2
    assert "ask needs a question or a proposed change" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # refused before any catalog, checkpoint or log was created


@pytest.mark.parametrize(
    "args",
    [
        ["catalog", "serve", "--port", "99999"],
        ["catalog", "serve", "--mcp-port", "-1"],
        ["mcp", "--http", "--port", "x"],
    ],
)
def test_a_port_out_of_range_is_a_usage_error(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PROVENANCE_HOME", str(tmp_path))
    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 2
    assert "(0-65535; 0 picks a free one)" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # nothing started, nothing written


def test_a_repeated_param_key_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset = "urn:li:dataset:(urn:li:dataPlatform:postgres,payments.public.transactions,PROD)"
    args = ["assess", "--dataset", dataset, "--field", "amount", "--op", "scale", "--no-publish"]
    assert main([*args, "--param", "factor=100", "--param", "factor=10"]) == 2
    err = capsys.readouterr().err
    assert "--param factor is given twice (factor=100 and 'factor=10'); give each key once" in err


@pytest.mark.slow
@pytest.mark.parametrize("question", ["asdf qwerty", "which models use"])
def test_a_question_it_cannot_read_exits_2_with_what_it_can_do(question: str, seeded_home: Path) -> None:
    done = _run("ask", question, "--no-publish", home=seeded_home)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "error: the question was not read as a catalog question or a change to test" in done.stderr
    assert "I can answer, from DataHub" in done.stdout  # what it can do, so the person can rephrase


def test_runs_prints_a_header_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PROVENANCE_HOME", str(tmp_path))
    write_run(tmp_path, make_evidence(), extra=write_stub_report)
    assert main(["runs"]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split() == ["RUN", "VERDICT", "CHANGE", "FIELD", "PUBLICATION"]
    assert row.split()[0] == "20260101T000000Z-0a0b0c" and row.split()[-1] == "not_requested"


def test_runs_columns_stay_aligned_with_a_long_field_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PROVENANCE_HOME", str(tmp_path))
    write_run(tmp_path, make_evidence(), extra=write_stub_report)
    long = make_evidence("20260102T000000Z-0a0b0d")
    long = long.model_copy(update={"request": long.request.model_copy(update={"field": "x" * 70})})
    write_run(tmp_path, long, extra=write_stub_report)
    assert main(["runs"]) == 0
    lines = capsys.readouterr().out.splitlines()
    lasts = ["PUBLICATION", "not_requested", "not_requested"]
    assert len({line.index(last) for line, last in zip(lines, lasts, strict=True)}) == 1, lines


@pytest.mark.slow
def test_publish_off_a_terminal_needs_yes_and_writes_nothing(seeded_home: Path) -> None:
    write_run(seeded_home, _demo_run(), extra=write_stub_report)
    before = catalog_write_count(seeded_home / "catalog.db")
    done = _run("publish", "20260101T000000Z-0a0b0c", home=seeded_home)
    assert done.returncode == 2
    assert "needs an approval: run it on a terminal to be asked, or pass --yes" in done.stderr
    assert catalog_write_count(seeded_home / "catalog.db") == before
    assert read_evidence(seeded_home, "20260101T000000Z-0a0b0c").publication.status == "not_requested"


def test_publish_on_a_terminal_shows_the_verdict_then_asks_and_no_declines(
    seeded_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PROVENANCE_HOME", str(seeded_home))
    write_run(seeded_home, _demo_run(), extra=write_stub_report)
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    shown: list[str] = []

    def answer(prompt: str = "") -> str:
        shown.append(capsys.readouterr().out + prompt)
        return "n"

    monkeypatch.setattr(builtins, "input", answer)
    assert main(["publish", "20260101T000000Z-0a0b0c"]) == 0
    assert len(shown) == 1 and shown[0].startswith("Run 20260101T000000Z-0a0b0c: verdict ")
    assert shown[0].endswith("to DataHub? [y/N] ")
    assert "Not published" in capsys.readouterr().out
    assert read_evidence(seeded_home, "20260101T000000Z-0a0b0c").publication.status == "not_requested"


@pytest.mark.slow
def test_publish_with_yes_records_who_approved(
    seeded_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PROVENANCE_HOME", str(seeded_home))
    write_run(seeded_home, _demo_run(), extra=write_stub_report)
    code = main(["publish", "20260101T000000Z-0a0b0c", "--yes"])
    publication = read_evidence(seeded_home, "20260101T000000Z-0a0b0c").publication
    assert (code, publication.status) == (0, "published"), capsys.readouterr()
    assert publication.decided_by == f"cli --yes:{getpass.getuser()}"


def test_verbose_logs_carry_timestamps_and_not_a_librarys_every_statement(tmp_path: Path) -> None:
    """-v once printed aiosqlite's DEBUG line for every SQL statement, with no time: Provenance's steps drowned."""
    script = (
        "import logging; from agent.cli.app import _run; _run(['-v', 'runs']); "
        "logging.getLogger('aiosqlite').debug('a statement'); logging.getLogger('agent.steps').debug('a step')"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=os.environ | {"PROVENANCE_HOME": str(tmp_path)}, capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip
    assert "a statement" not in done.stderr
    assert re.search(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ DEBUG agent.steps: a step$", done.stderr, re.M), done.stderr


def test_assess_help_says_no_publish_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["assess", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--no-publish required: assess writes evidence only" in help_text
