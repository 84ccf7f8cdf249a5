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


def test_untransformed_edges_are_copies_only_where_the_user_declares_it(tmp_path: Path) -> None:
    import asyncio

    from tools.catalog.discovery import LineageStep
    from tools.catalog.sql_source import SqlSource, carries_as_is, not_carried

    feast = "urn:li:dataset:(urn:li:dataPlatform:feast,driver_stats,PROD)"
    path = [
        LineageStep(dataset_urn="urn:li:dataset:(urn:li:dataPlatform:postgres,db.public.trips,PROD)", column="fare"),
        LineageStep(dataset_urn=feast, column="fare", transform=None),
    ]
    default = load_conventions()
    assert default.copy_edge_platforms == () and not carries_as_is(path[1], default)  # assumed nothing by default
    declared_file = tmp_path / "conventions.yaml"
    text = (Path(default.path).read_text()).replace("copy_edge_platforms: []", "copy_edge_platforms: [feast]")
    declared_file.write_text(text)
    declared = load_conventions(declared_file)
    annotated = asyncio.run(SqlSource(None, declared, {}).annotate({(feast, "fare"): path}, {}))  # type: ignore[arg-type]
    step = annotated[(feast, "fare")][1]
    assert carries_as_is(step, declared) and not_carried(annotated[(feast, "fare")], declared) == []
    assert step.note is not None and "your declaration" in step.note and "feast" in step.note
