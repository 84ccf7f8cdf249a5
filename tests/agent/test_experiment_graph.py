"""The experiment subgraph (agent/experiment_graph.py): one model's data that does not take the change makes that
model INCOMPLETE, never another's verdict — a BLOCK must not vanish because a second model's evaluation file has a
bad cell (with `fail-on: BLOCK` the change would merge)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from agent.cli import main
from seed.catalog import FRAUD_MODEL_URN, POSTGRES_TABLE_URN, REVIEW_MODEL_URN

ASSESS = ["assess", "--dataset", POSTGRES_TABLE_URN, "--field", "amount", "--op", "scale", "--param", "factor=100"]


def test_a_bad_cell_in_one_models_data_leaves_the_others_block(
    seeded_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    review = seeded_home / "demo" / "review_eval.csv"
    rows = list(csv.reader(review.open()))
    rows[5][rows[0].index("txn_amount")] = "12.5 USD"  # the 5th data row
    with review.open("w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    monkeypatch.setenv("PROVENANCE_HOME", str(seeded_home))
    capsys.readouterr()
    code = main([*ASSESS, "--no-publish", "--json"])
    out = capsys.readouterr().out
    assert code == 20, out  # BLOCK: the fraud detector's verdict stands
    models = {m["urn"]: m for m in json.loads(out)["models"]}
    assert models[FRAUD_MODEL_URN]["verdict"] == "BLOCK"
    review_model = models[REVIEW_MODEL_URN]
    assert (review_model["verdict"], review_model["reason_codes"]) == ("INCOMPLETE", ["not_applicable"])
    reason = review_model["reasons"][0]
    assert "'txn_amount'" in reason and "row 5 of the rows read" in reason and "defect" not in reason, reason
