"""`provenance scan` as a user runs it: the brackets per model and axis, the evidence path, `--json`, and bad input
refused before the catalog is opened."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from agent.cli import main
from seed.catalog import FRAUD_MODEL_URN, POSTGRES_TABLE_URN
from seed.model import FRAUD_DETECTOR, MODEL_FEATURES
from tools.catalog.handle import CatalogHandle
from tools.settings import ProvenanceSettings
from tools.tolerance.publish import TOLERANCE_PROPERTY
from tools.tolerance.report import read_scan, scans_dir


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


def tolerance_on_amount(home: Path) -> list[str]:
    """The column's io.provenance.tolerance values, read back through the official MCP server."""

    async def read() -> list[str]:
        async with CatalogHandle(ProvenanceSettings(provenance_home=home)) as handle:
            fields = await (await handle.reader()).list_schema_fields(POSTGRES_TABLE_URN)
        [amount] = [f for f in fields if f.field_path == "amount"]
        return list(amount.structured_properties.get(TOLERANCE_PROPERTY, []))

    return asyncio.run(read())


@pytest.mark.slow
def test_publish_puts_the_map_on_the_column_and_a_rescan_updates_it_in_place(
    seeded_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--dataset", POSTGRES_TABLE_URN, "--field", "amount", "--axes", "scale_up", "--publish", "--yes"]
    code, out, _ = run(seeded_home, monkeypatch, capsys, *args)
    assert code == 0 and "Publication: published — 2 value(s) on urn:li:schemaField:(" in out, out
    first = tolerance_on_amount(seeded_home)
    assert [v.split(";")[0] for v in first] == [
        "fraud_detector: scale_up BLOCK from ×1.5 (×1.2 tolerated), WARNING from ×1.5 (×1.2 tolerated)",
        "review_time_estimator: scale_up BLOCK from ×1.05 (×1.02 tolerated), WARNING from ×1.05 (×1.02 tolerated)",
    ]
    assert all("policy default v2, scan scan-" in v for v in first)
    [folder] = list(scans_dir(seeded_home).iterdir())
    publication = read_scan(folder).publication
    assert (
        publication.status == "published" and publication.decided_by and publication.decided_by.startswith("cli --yes:")
    )
    # assess says early that ×100 is beyond the published map, and the experiment still decides the verdict
    code = main(["assess", "--dataset", POSTGRES_TABLE_URN, "--field", "amount", "--op", "scale", "--param",
                 "factor=100", "--no-publish", "--json"])  # fmt: skip
    assessed = json.loads(capsys.readouterr().out)
    assert code == 20 and assessed["verdict"] == "BLOCK"
    assert [n.split(" is at or beyond")[0] for n in assessed["tolerance_notes"]] == [
        "fraud_detector: scale amount by 100 on 100% of rows (seed 0)",
        "review_time_estimator: scale amount by 100 on 100% of rows (seed 0)",
    ]
    assert "(scale_up: BLOCK from ×1.5; scanned " in assessed["tolerance_notes"][0]
    main(["assess", "--dataset", POSTGRES_TABLE_URN, "--field", "amount", "--op", "scale", "--param",
          "factor=1.01", "--no-publish", "--json"])  # fmt: skip
    assert json.loads(capsys.readouterr().out)["tolerance_notes"] == []  # within every published tolerance
    code, out, _ = run(seeded_home, monkeypatch, capsys, *args)  # a later scan of the same column
    assert code == 0
    second = tolerance_on_amount(seeded_home)
    assert len(second) == 2 and second != first  # replaced (the new scan's id), not appended
    documents = {read_scan(f).publication.document_urn for f in scans_dir(seeded_home).iterdir()}
    assert len(documents) == 1  # the column's one document, updated in place


def test_publish_without_an_approval_is_refused_before_anything_runs(
    seeded_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", open(os.devnull))  # not a terminal: nobody to ask
    code, _, err = run(seeded_home, monkeypatch, capsys, "--dataset", POSTGRES_TABLE_URN, "--field", "amount",
                       "--publish")  # fmt: skip
    assert code == 2 and "needs an approval: run it on a terminal, or add --yes" in err
    assert not scans_dir(seeded_home).exists()


@pytest.mark.slow
def test_a_model_scan_maps_each_of_its_features_source_columns_for_that_model_only(
    seeded_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(seeded_home, monkeypatch, capsys, "--model", FRAUD_MODEL_URN, "--axes", "nulls", "--json")
    scans = json.loads(out)
    assert code == 0
    assert sorted(s["field"] for s in scans) == sorted(MODEL_FEATURES[FRAUD_DETECTOR])
    assert all([m["urn"] for m in s["models"]] == [FRAUD_MODEL_URN] for s in scans)  # not review_time_estimator
    by_field = {s["field"]: s["models"][0] for s in scans}
    assert by_field["txn_amount"]["column"] == "txn_amount" and by_field["hour"]["column"] == "hour"
    nulls = by_field["txn_amount"]["axes"][0]["search"]["brackets"]["BLOCK"]
    assert (nulls["tolerated"], nulls["reached"]) == (0.2, 0.5)  # as scanning the table's amount found
    [columns] = list(scans_dir(seeded_home).glob("*-columns.png"))  # the heat map of the columns × axes
    assert columns.read_bytes().startswith(b"\x89PNG")


def test_a_model_scan_needs_a_model_urn(
    seeded_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(seeded_home, monkeypatch, capsys, "--model", "fraud_detector")
    assert code == 2 and "--model takes an mlModel URN" in err
