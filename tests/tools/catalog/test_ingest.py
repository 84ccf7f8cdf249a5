"""`provenance catalog ingest`: recipes checked before anything runs, then DataHub's pipeline into the embedded
endpoint (PATCH proposals applied, as the dbt source sends them), stopping at the first failure."""

from __future__ import annotations

from pathlib import Path

import pytest
from datahub.emitter.mce_builder import make_dataset_urn
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.ingestion.sink.file import write_metadata_file
from datahub.metadata.schema_classes import DatasetLineageTypeClass, DatasetPropertiesClass, UpstreamClass
from datahub.specific.dataset import DatasetPatchBuilder

from agent.cli import main
from tests.realworld.world import read_aspect
from tools.catalog.ingest import RecipeError, RecipeRun, ingest, load_recipe
from tools.settings import ProvenanceSettings

TABLE = make_dataset_urn("postgres", "shop.public.orders")
NODE = make_dataset_urn("dbt", "shop.public.orders")


def _recipe(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_a_recipe_that_cannot_run_here_is_refused_with_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(RecipeError, match="no such recipe file"):
        load_recipe(tmp_path / "missing.yml")
    with pytest.raises(RecipeError, match="is not a readable recipe"):
        load_recipe(_recipe(tmp_path / "y.yml", "source: {type: file, config: {path: ${X}/x.json}}\n"))
    with pytest.raises(RecipeError, match="needs `source:"):
        load_recipe(_recipe(tmp_path / "a.yml", "sink: {type: console}\n"))
    own_sink = _recipe(tmp_path / "b.yml", "source: {type: file, config: {path: x}}\nsink: {type: datahub-lite}\n")
    with pytest.raises(RecipeError, match=r"has its own sink \(datahub-lite\).*remove the `sink:` section"):
        load_recipe(own_sink)
    monkeypatch.delenv("PROVENANCE_TEST_UNSET", raising=False)
    unset = _recipe(tmp_path / "c.yml", 'source: {type: file, config: {path: "${PROVENANCE_TEST_UNSET}/x.json"}}\n')
    with pytest.raises(RecipeError, match=r"refers to \$PROVENANCE_TEST_UNSET, not set: export it"):
        load_recipe(unset)
    monkeypatch.setenv("PROVENANCE_TEST_UNSET", "/data")
    assert load_recipe(unset)["source"]["config"]["path"] == "/data/x.json"


def test_recipes_write_into_the_embedded_catalog_patches_included(tmp_path: Path) -> None:
    records = tmp_path / "records.json"
    patch = DatasetPatchBuilder(NODE).add_upstream_lineage(
        UpstreamClass(dataset=TABLE, type=DatasetLineageTypeClass.COPY)
    )
    write_metadata_file(
        records,
        [MetadataChangeProposalWrapper(entityUrn=TABLE, aspect=DatasetPropertiesClass(name="orders")), *patch.build()],
    )
    first = _recipe(tmp_path / "first.yml", f"source: {{type: file, config: {{path: {records}}}}}\n")
    broken = _recipe(tmp_path / "broken.yml", f"source: {{type: file, config: {{path: {tmp_path / 'nope.json'}}}}}\n")
    never = _recipe(tmp_path / "never.yml", f"source: {{type: file, config: {{path: {records}}}}}\n")
    settings = ProvenanceSettings(provenance_home=tmp_path / "home")
    seen: list[RecipeRun] = []

    where, runs = ingest(settings, [first, broken, never], seen.append)

    assert "embedded DataHub Lite catalog" in where and seen == runs
    assert [r.recipe for r in runs] == [first, broken]  # stopped at the failure
    assert runs[0].ok and runs[0].records_written == 2, runs[0]
    assert not runs[1].ok and runs[1].failures, runs[1]
    assert (read_aspect(settings.lite_db, TABLE, "datasetProperties") or {}).get("name") == "orders"
    lineage = read_aspect(settings.lite_db, NODE, "upstreamLineage") or {}
    assert [u["dataset"] for u in lineage.get("upstreams", [])] == [TABLE]  # the PATCH was applied


def test_the_command_exits_2_on_a_bad_recipe_before_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _recipe(tmp_path / "good.yml", f"source: {{type: file, config: {{path: {tmp_path}/r.json}}}}\n")
    bad = _recipe(tmp_path / "bad.yml", "source: {type: file}\nsink: {type: console}\n")
    monkeypatch.setenv("PROVENANCE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PROVENANCE_LITE_DB", raising=False)
    code = main(["catalog", "ingest", str(good), str(bad)])
    assert code == 2
    assert "has its own sink (console)" in capsys.readouterr().err
    assert not (tmp_path / "home" / "catalog.db").exists()  # the good recipe did not run either


@pytest.mark.parametrize(
    ("recipe", "refusal"),
    [
        ("source: {type: file, config: {path: x.json}}\nfailure_log: {enabled: true, log_config: {filename: /tmp/x}}\n",
         "`failure_log` is not taken here"),
        ("source: {type: file, config: {path: x.json}}\nreporting: [{type: file, config: {filename: /tmp/y}}]\n",
         "`reporting` is not taken here"),
        ("source: {type: planted_module.Source, config: {}}\n", "is not a DataHub plugin name"),
        ("source: {type: file, config: {path: x.json}}\ntransformers: [{type: planted_module.T}]\n",
         "transformer type 'planted_module.T'"),
    ],
)  # fmt: skip
def test_a_recipe_cannot_write_files_or_import_code_of_its_choosing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, recipe: str, refusal: str
) -> None:
    marker = tmp_path / "imported"
    (tmp_path / "planted_module.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "recipe.yml"
    path.write_text(recipe)
    with pytest.raises(RecipeError, match=refusal):
        ingest(ProvenanceSettings(provenance_home=tmp_path / "home"), [path], lambda run: None)
    assert not marker.exists()


def test_the_values_of_a_recipes_variables_never_reach_its_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SECRET_PATH", str(tmp_path / "s3cr3t-value-no-file.json"))
    path = tmp_path / "recipe.yml"
    path.write_text("source: {type: file, config: {path: '${SECRET_PATH}'}}\n")
    runs: list[RecipeRun] = []
    ingest(ProvenanceSettings(provenance_home=tmp_path / "home"), [path], runs.append)
    [run] = runs
    assert not run.ok and run.failures
    assert not any("s3cr3t-value" in line for line in (*run.failures, *run.warnings)), run.failures
    assert any("***" in line for line in run.failures), run.failures  # the source did echo it: scrubbed


@pytest.mark.parametrize(
    ("source", "said"), [("snowflakez", "Did not find a registered class"), ("bigquery", "missing dependency")]
)
def test_a_source_that_is_not_installed_is_bad_input_naming_the_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], source: str, said: str
) -> None:
    monkeypatch.setenv("PROVENANCE_HOME", str(tmp_path / "home"))
    recipe = _recipe(tmp_path / "r.yml", f"source: {{type: {source}, config: {{project_id: x}}}}\n")
    assert main(["catalog", "ingest", str(recipe)]) == 2
    err = capsys.readouterr().err
    assert f"{recipe}: DataHub cannot start the '{source}' source" in err and said in err
    assert f"acryl-datahub[{source}]==" in err and "internal error" not in err
