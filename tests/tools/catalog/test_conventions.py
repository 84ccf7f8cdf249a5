"""Catalog conventions: identity transforms as DataHub's SQL parser writes them, mirrors, bad files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.catalog.conventions import ConventionsError, load_conventions
from tools.catalog.training_runs import dataset_parts


@pytest.mark.parametrize(
    ("transform", "identity"),
    [
        (None, False),  # dbt's column lineage carries no transform, even for `a / b`: unknown, never a copy
        ("", False),
        ("   ", False),
        ("NONE", False),
        ("IDENTITY", True),
        ('COPY: "loan_applications"."loan_amount" AS "loan_amount"', True),
        ("copy: x", True),
        ("CAST", False),  # a cast to an integer rounds: only the SQL says whether it is lossless
        ('SQL: "loan_applications"."debt" / "loan_applications"."income" AS "debt_to_income"', False),
        ("UNKNOWN (column lineage too large to read through MCP)", False),
        ("cents_to_dollars", False),
    ],
)
def test_identity_is_decided_by_the_transform_head(transform: str | None, identity: bool) -> None:
    assert load_conventions().is_identity(transform) is identity


def test_mirror_platforms_and_dataset_parts() -> None:
    conventions = load_conventions()
    assert conventions.is_mirror("mlflow") and conventions.is_mirror("MLflow")
    assert not conventions.is_mirror("sqlite") and not conventions.is_mirror(None)
    assert dataset_parts("urn:li:dataset:(urn:li:dataPlatform:sqlite,main.applicant_features,PROD)") == (
        "sqlite",
        "main.applicant_features",
        "PROD",
    )


def test_a_replacement_file_is_used_and_a_broken_one_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    custom = tmp_path / "conventions.yaml"
    custom.write_text("production:\n  global_tags: [live]\nmirror_platforms: [sagemaker]\n")
    monkeypatch.setenv("PROVENANCE_CONVENTIONS", str(custom))
    loaded = load_conventions()
    assert loaded.production.global_tags == ("live",) and loaded.is_mirror("sagemaker")
    assert loaded.path == str(custom.resolve()) and len(loaded.sha256) == 64
    broken = tmp_path / "broken.yaml"
    broken.write_text("production:\n  global_tag: [typo]\n")
    with pytest.raises(ConventionsError, match=r"broken\.yaml.*production\.global_tag"):
        load_conventions(broken)
    with pytest.raises(ConventionsError, match="cannot read"):
        load_conventions(tmp_path / "missing.yaml")
