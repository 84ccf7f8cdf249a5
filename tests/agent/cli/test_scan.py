"""`provenance scan` as a user runs it: the brackets per model and axis, the evidence path, `--json`, and bad input
refused before the catalog is opened."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.cli import main
from seed.catalog import POSTGRES_TABLE_URN
from tools.tolerance.report import scans_dir


def run(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    monkeypatch.setenv("PROVENANCE_HOME", str(home))
    code = main(["scan", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_scan_prints_each_models_brackets_and_writes_its_evidence(
    seeded_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(seeded_home, monkeypatch, capsys, "--dataset", POSTGRES_TABLE_URN, "--field", "amount",
                       "--axes", "scale_up")  # fmt: skip
    assert code == 0, out
    assert "Tolerance map of amount (2 production model(s)" in out
    assert (
        "  fraud_detector:\n    scale_up    BLOCK from ×1.5 (×1.2 tolerated); WARNING from ×1.5 (×1.2 tolerated)" in out
    )
    assert "  review_time_estimator:\n    scale_up    BLOCK from ×" in out
    [folder] = list(scans_dir(seeded_home).iterdir())
    assert f"Evidence: {folder / 'report.md'}" in out
    code, out, _ = run(seeded_home, monkeypatch, capsys, "--dataset", POSTGRES_TABLE_URN, "--field", "amount",
                       "--axes", "scale_up", "--json")  # fmt: skip
    scanned = json.loads(out)
    assert code == 0 and scanned["schema_version"] == "provenance.scan/1" and len(scanned["models"]) == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--dataset", POSTGRES_TABLE_URN, "--field", "amount", "--axes", "scale_up,bogus"], "unknown axis bogus"),
        (["--dataset", "payments.public.transactions", "--field", "amount"], "is not a dataset URN"),
    ],
)
def test_bad_input_is_refused_with_exit_2_and_no_scan(
    seeded_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    code, _, err = run(seeded_home, monkeypatch, capsys, *args)
    assert code == 2 and message in err
    assert not scans_dir(seeded_home).exists()
