"""Progress on a terminal: a line per stage of a 10-20 s command on stderr, and nothing when piped or with --json."""

from __future__ import annotations

import argparse
import asyncio
import io
from pathlib import Path

import pytest

from agent.cli.progress import terminal_progress
from tools.mutations import parse_mutation
from tools.settings import ProvenanceSettings

DATASET = "urn:li:dataset:(urn:li:dataPlatform:postgres,payments.public.transactions,PROD)"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_nothing_when_piped_or_json() -> None:
    assert terminal_progress(stream=io.StringIO()) is None  # a pipe: not a terminal
    assert terminal_progress(json_output=True, stream=Terminal()) is None


@pytest.mark.slow
def test_assess_on_a_terminal_shows_each_stage_in_order(seeded_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent.cli.assess import _assess

    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    args = argparse.Namespace(
        dataset=DATASET, field="amount", mutation=parse_mutation("scale", {"factor": 100}), policy=None, json=False,
    )  # fmt: skip
    result = asyncio.run(_assess(ProvenanceSettings(provenance_home=seeded_home), args))
    assert result.evidence.verdict == "BLOCK"
    stages = [line.split("] ", 1)[1] for line in terminal.getvalue().splitlines()]
    assert stages[0] == "starting: opening the catalog"
    expected = [
        "field found in the catalog",
        "lineage walked: 2 production model(s) fraud_detector, review_time_estimator",
        "experiment planned",
        "experiment on fraud_detector done",
        "experiment on review_time_estimator done",
        "evidence written",
    ]
    assert [s for s in stages if s in expected] == expected, stages
