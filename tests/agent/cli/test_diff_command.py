"""`provenance diff` from the command line: the demo's DuckDB warehouse end to end (`provenance demo --diff`, the
one command docs/diff.md gives a newcomer), and the refusals that need no catalog or warehouse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.cli import main
from seed.catalog import FRAUD_MODEL_URN, POSTGRES_TABLE_URN, REVIEW_MODEL_URN


@pytest.mark.slow
def test_the_demo_diff_blocks_with_the_numbers_its_guide_quotes(
    seeded_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PROVENANCE_HOME", str(seeded_home))
    assert main(["demo", "--diff"]) == 0  # the demo succeeds when the diff BLOCKs
    out = capsys.readouterr().out
    assert "**Provenance diff: BLOCK** — 3 of 3 production models measured" in out
    guide = (Path(__file__).resolve().parents[3] / "docs" / "diff.md").read_text()
    for quoted in ("645 gone (2.7%)", "txn_amount: 34.8% of 23,355 rows changed"):
        assert quoted in out
    assert "2.7 %" in guide and "34.8 %" in guide
    folder = Path(out.rsplit("(evidence: ", 1)[1].split(")")[0])
    evidence = json.loads((folder / "diff.json").read_text())
    verdicts = {m["urn"]: m["verdict"] for m in evidence["models"]}
    assert verdicts[FRAUD_MODEL_URN] == verdicts[REVIEW_MODEL_URN] == "BLOCK"
    assert evidence["datasets"][0]["key_basis"] == "the catalog's primary key"
    fraud = next(m for m in evidence["models"] if m["urn"] == FRAUD_MODEL_URN)
    assert sorted(fraud["plots"]) == ["roc", "shift"] and all((folder / f).is_file() for f in fraud["plots"].values())


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ([], "pass --warehouse URL or set PROVENANCE_WAREHOUSE_URL"),
        (["--warehouse", "duckdb:///x.duckdb"], "name the pull request's side"),
        (["--warehouse", "duckdb:///x.duckdb", "--head-schema", "pr", "--rows", "0"], "--rows must be at least 1"),
        (["--warehouse", "duckdb:///x.duckdb", "--relation", "t=a"], "expected NAME=BASE:HEAD"),
    ],
)
def test_refusals_before_any_catalog(
    args: list[str], says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PROVENANCE_HOME", str(tmp_path))
    monkeypatch.delenv("PROVENANCE_WAREHOUSE_URL", raising=False)
    assert main(["diff", "--dataset", POSTGRES_TABLE_URN, *args]) == 2
    assert says in capsys.readouterr().err


@pytest.mark.slow
def test_a_changes_file_is_compared_with_what_the_data_shows(
    seeded_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from seed.diff_warehouse import HEAD_SCHEMA, build_demo_warehouse

    monkeypatch.setenv("PROVENANCE_HOME", str(seeded_home))
    warehouse = build_demo_warehouse(seeded_home / "demo")
    changes = seeded_home / "CHANGES.yml"
    changes.write_text(
        f"version: 1\nchanges:\n  - dataset: '{POSTGRES_TABLE_URN}'\n    field: amount\n    op: scale\n"
        "    params: {factor: 100}\n"
    )
    args = ["diff", "--dataset", POSTGRES_TABLE_URN, "--warehouse", f"duckdb:///{warehouse}", "--head-schema",
            HEAD_SCHEMA, "--changes", str(changes), "--json"]  # fmt: skip
    assert main(args) == 20
    readings = json.loads(capsys.readouterr().out)["readings"]
    amount = next(r for r in readings if r["column"] == "amount")
    # the SQL reading said every row; the data shows the CASE's share of the rows: a disagreement, recorded
    assert amount["agree"] is False and amount["sql"] == "scale(factor=100) on 100.0% of rows"
    assert amount["data"] == "scale(factor=100) on 34.8% of the rows it alters"
    assert [r["column"] for r in readings] == ["amount"]  # no other column changed


@pytest.mark.slow
def test_without_labels_flips_still_block_and_nothing_passes_on_decisions_alone(
    seeded_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import duckdb

    from seed.diff_warehouse import HEAD_SCHEMA, build_demo_warehouse

    monkeypatch.setenv("PROVENANCE_HOME", str(seeded_home))
    labelled = build_demo_warehouse(seeded_home / "demo")
    unlabelled = seeded_home / "unlabelled.duckdb"
    with duckdb.connect(str(unlabelled)) as c:
        c.execute(f"ATTACH '{labelled}' AS src (READ_ONLY)")
        for schema in ("public", HEAD_SCHEMA):
            c.execute(f"CREATE SCHEMA {schema}")
            c.execute(f"CREATE TABLE {schema}.transactions AS SELECT * EXCLUDE (is_fraud, review_minutes) "
                      f"FROM src.{schema}.transactions")  # fmt: skip
    args = ["diff", "--dataset", POSTGRES_TABLE_URN, "--warehouse", f"duckdb:///{unlabelled}", "--head-schema",
            HEAD_SCHEMA, "--json"]  # fmt: skip
    assert main(args) == 20
    models = {m["urn"]: m for m in json.loads(capsys.readouterr().out)["models"]}
    fraud, review = models[FRAUD_MODEL_URN], models[REVIEW_MODEL_URN]
    codes = {r["code"] for r in fraud["reasons"]}
    assert fraud["verdict"] == "BLOCK" and {"flip_rate_block", "label_metrics_not_measured"} <= codes
    assert fraud["metrics"]["binary"] == {"positives": 0, "negatives": 0, "auc": None}  # no number read the stand-in
    merchant = next(m for urn, m in models.items() if urn not in (FRAUD_MODEL_URN, REVIEW_MODEL_URN))
    assert merchant["metrics"]["flips"] == 0 and merchant["verdict"] == "INCOMPLETE"  # no flip, but no quality either
    assert review["verdict"] == "INCOMPLETE" and review["reasons"][0]["code"] == "label_not_in_relation"
