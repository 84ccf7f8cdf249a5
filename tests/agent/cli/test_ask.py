"""Durability across processes: process A stops at the approval interrupt and exits; process B answers it."""

from __future__ import annotations

import argparse
import asyncio
import builtins
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent.cli.conversation import _converse
from tests.agent.helpers import CHAT_MODEL_ENVS, DEMO_QUESTION, catalog_write_count, documents, model_tags
from tools.evidence.store import list_run_ids, read_evidence
from tools.settings import ProvenanceSettings

DEMO_CHANGE = "scale payments.public.transactions.amount ×100 on 100% of rows (seed 0) — "


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in CHAT_MODEL_ENVS}
    env["PROVENANCE_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "agent.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=180,
    )


@pytest.mark.parametrize("decision", ["--approve", "--reject"])
@pytest.mark.slow
def test_pending_approval_survives_the_process(seeded_home: Path, decision: str) -> None:
    db = seeded_home / "catalog.db"
    before = catalog_write_count(db)
    first = _cli(seeded_home, "ask", DEMO_QUESTION, "--thread", "durable-1")
    assert first.returncode == 20, first.stderr  # BLOCK, pending
    assert "Approval pending. Resume with: provenance resume durable-1" in first.stdout
    assert f"Change tested: {DEMO_CHANGE}" in first.stdout  # what a later --approve would publish the verdict of
    # off a terminal, the reasons a terminal shows before its prompt: each model's verdict and numbers
    assert "Verdict: BLOCK" in first.stdout and "fraud_detector: BLOCK" in first.stdout, first.stdout
    assert catalog_write_count(db) == before

    second = _cli(seeded_home, "resume", "durable-1", decision)
    assert second.returncode == 20, second.stderr
    if decision == "--approve":
        assert model_tags(db) == ["urn:li:tag:provenance:BLOCK"]
        assert len(documents(db)) == 1
        assert "Publication: published" in second.stdout
    else:
        assert catalog_write_count(db) == before
        assert "Publication: rejected" in second.stdout

    again = _cli(seeded_home, "resume", "durable-1", "--approve")
    assert again.returncode == 2 and "no pending approval" in again.stderr


@pytest.mark.slow
def test_the_terminal_prompt_says_the_change_tested_before_asking(
    seeded_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`provenance ask` on a terminal: the verdict, each model's reason and numbers, the change tested and the writes
    are printed before the question, so a person decides knowing why and a wrong plan is caught."""
    for name in CHAT_MODEL_ENVS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    asked: list[tuple[str, str]] = []

    def answer(prompt: str = "") -> str:
        asked.append((capsys.readouterr().out, prompt))
        return "n"

    monkeypatch.setattr(builtins, "input", answer)
    db = seeded_home / "catalog.db"
    before = catalog_write_count(db)
    args = argparse.Namespace(no_publish=False, thread="tty-1", approve=False, reject=False)
    code = asyncio.run(_converse(ProvenanceSettings(provenance_home=seeded_home), args, DEMO_QUESTION))

    assert code == 20  # BLOCK, rejected
    assert len(asked) == 1
    printed, prompt = asked[0]
    assert prompt == "Publish to DataHub? [y/N] "
    lines = printed.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("Approval needed for run "))
    # why, before the question: the verdict, each model's reason and its numbers
    assert "Verdict: BLOCK" in lines[:at]
    assert any(line.startswith("  - fraud_detector") and "BLOCK" in line for line in lines[:at]), lines
    assert any(line.startswith("  fraud_detector: BLOCK — flips ") for line in lines[:at]), lines
    assert lines[at].endswith("(verdict BLOCK).")
    assert lines[at + 1].startswith(f"Change tested: {DEMO_CHANGE}")
    assert lines[at + 1].endswith(".")
    assert lines[at + 2] == "Approving writes:"
    assert lines[at + 3].startswith("  - set tag urn:li:tag:provenance:BLOCK on ")
    assert catalog_write_count(db) == before
    after = capsys.readouterr().out
    assert "Publication: rejected" in after
    assert (
        "Verdict: BLOCK" not in after and "fraud_detector: BLOCK — flips" not in after
    )  # said once, before the prompt


@pytest.mark.slow
@pytest.mark.parametrize(
    "question",
    ["What depends on billing.transactions.amount?", "What happens if billing.transactions.amount is sent in cents?"],
)
def test_a_table_that_is_not_in_the_catalog_is_asked_about_never_substituted(seeded_home: Path, question: str) -> None:
    """No table billing.transactions exists; the answer must not be about payments.public.transactions."""
    db = seeded_home / "catalog.db"
    before = catalog_write_count(db)
    done = _cli(seeded_home, "ask", question)
    assert done.returncode == 2, done.stdout + done.stderr
    said = done.stdout + done.stderr
    assert "no dataset named 'billing.transactions'" in said and "did you mean payments.public.transactions" in said
    assert "Verdict" not in done.stdout and catalog_write_count(db) == before


@pytest.mark.slow
def test_the_subject_is_the_word_the_catalog_names(seeded_home: Path) -> None:
    """amount is gonna land in cents": the sentence's shape reads 'land'; the catalog names amount, which
    two datasets of the demo have, so the answer asks which one (never 'land', never a guess)."""
    db = seeded_home / "catalog.db"
    before = catalog_write_count(db)
    done = _cli(seeded_home, "ask", "heads up: amount is gonna land in cents instead of dollars from next week")
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert "'amount' alone is ambiguous" in said and "payments.public.transactions.amount" in said
    assert "'land'" not in said and catalog_write_count(db) == before


@pytest.mark.slow
def test_a_condition_in_words_is_asked_about(seeded_home: Path) -> None:
    done = _cli(seeded_home, "ask", "null out country on weekends")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "on weekends" in done.stdout + done.stderr and "Verdict" not in done.stdout


@pytest.mark.slow
def test_a_refusal_offers_runnable_readings_and_the_choice_is_recorded(seeded_home: Path) -> None:
    """A refused change offers requests that run (ready-to-paste, in the same conversation);
    running one records in the evidence which refused request it was chosen for."""
    refused = "null out country on weekends"
    first = _cli(seeded_home, "ask", refused, "--thread", "suggest-1")
    assert first.returncode == 2, first.stdout + first.stderr
    assert "on weekends" in first.stdout and "  - country set to null" in first.stdout
    command = "provenance ask --thread suggest-1 'country set to null'"
    assert command in first.stdout  # ready to paste
    assert list_run_ids(seeded_home) == []  # a refusal makes no run

    second = _cli(seeded_home, "ask", "country set to null", "--thread", "suggest-1")
    assert second.returncode in (0, 10, 20, 30), second.stdout + second.stderr  # a verdict, pending approval
    (run_id,) = list_run_ids(seeded_home)
    plan = read_evidence(seeded_home, run_id).plan
    assert plan.confirmed_from == refused and plan.mutation is not None and plan.mutation.op == "null_inject"

    direct = _cli(seeded_home, "ask", "country set to null", "--thread", "suggest-2")  # asked directly: no choice
    assert direct.returncode == second.returncode, direct.stdout + direct.stderr
    newest = max(set(list_run_ids(seeded_home)) - {run_id})
    assert read_evidence(seeded_home, newest).plan.confirmed_from is None
