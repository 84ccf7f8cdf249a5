"""The PR gate on the style-guide dbt project a separate reader wrote (tests/realworld/dbt_style_project) and its
five code changes: each change that alters a feature is reported for that feature (mapped or to review by hand),
never "no existing column changed"; a refactor that changes nothing proposes no change."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.tools.changes.repo import GitRepo
from tools.changes.infer import ModelChanges, analyse

PROJECT = Path(__file__).resolve().parents[2] / "realworld" / "dbt_style_project"
CHANGES = yaml.safe_load((PROJECT / "code_changes" / "code_changes.yaml").read_text())


def _analysed(tmp_path: Path, change_id: str) -> dict[str, ModelChanges]:
    change = next(c for c in CHANGES if c["id"] == change_id)
    folder = next(p for p in (PROJECT / "code_changes").iterdir() if p.is_dir() and p.name.endswith(change_id))
    repo = GitRepo.create(tmp_path / "repo")
    shutil.copytree(
        PROJECT, repo.root, dirs_exist_ok=True, ignore=shutil.ignore_patterns("target", "logs", "code_changes")
    )
    repo.commit("base")
    for path in change["files"]:
        shutil.copy(folder / path, repo.root / path)
    repo.commit(change["says"])
    return {m.file: m for m in analyse(repo.root, "HEAD~1", "HEAD", dialect="postgres")}


MART = "models/marts/order_features.sql"


def _columns(model: ModelChanges) -> set[str]:
    return {f.column for f in model.findings}


@pytest.mark.parametrize(
    ("change", "file", "columns"),
    [
        ("order_total_in_cents", MART, {"order_total_usd"}),  # ×100 in a CTE of a `select * from final` mart
        ("ephemeral_cost_fallback", MART, {"gross_margin_rate"}),  # inside an ephemeral, grouped model
        ("macro_mills", "models/staging/shop/stg_shop__orders.sql", {"subtotal", "shipping_amount"}),  # a macro edit
        ("macro_mills", "models/staging/shop/stg_shop__payments.sql", {"amount"}),
    ],
)
def test_a_change_to_a_feature_is_reported_for_it(tmp_path: Path, change: str, file: str, columns: set[str]) -> None:
    found = _analysed(tmp_path, change)
    assert file in found, f"{change}: {file} not reported (found {sorted(found)})"
    assert columns <= _columns(found[file]), found[file]


def test_a_changed_filter_is_reviewed_by_hand(tmp_path: Path) -> None:
    model = _analysed(tmp_path, "payments_include_pending")["models/intermediate/int_payments_pivoted_to_orders.sql"]
    assert model.error is not None and "filter" in model.error


def test_a_refactor_that_changes_nothing_proposes_no_change(tmp_path: Path) -> None:
    for model in _analysed(tmp_path, "stg_orders_refactor").values():
        assert all(f.mapping is None for f in model.findings), model
