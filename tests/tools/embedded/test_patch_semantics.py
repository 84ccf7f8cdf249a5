"""tools.embedded.patch without HTTP: JSON Patch details, arrays as maps, GenericJsonPatch envelopes and the
patches the SDK's other builders (charts, dashboards, data jobs) send."""

from __future__ import annotations

import json
from typing import Any

import datahub.metadata.schema_classes as m
import pytest
from datahub.emitter.mcp_patch_builder import MetadataPatchProposal
from datahub.emitter.serialization_helper import pre_json_transform
from datahub.specific.chart import ChartPatchBuilder
from datahub.specific.dashboard import DashboardPatchBuilder
from datahub.specific.datajob import DataJobPatchBuilder

from tools.embedded.patch import PatchError, apply_patch, validated_aspect

DS_A = "urn:li:dataset:(urn:li:dataPlatform:hive,a,PROD)"
DS_B = "urn:li:dataset:(urn:li:dataPlatform:hive,b,PROD)"


def ops(*operations: dict[str, Any]) -> str:
    return json.dumps(list(operations))


def generic(keys: dict[str, list[str]], *operations: dict[str, Any], force: bool = False) -> str:
    return json.dumps({"arrayPrimaryKeys": keys, "patch": list(operations), "forceGenericPatch": force})


def json_of(aspect: m._Aspect) -> dict[str, Any]:
    value: dict[str, Any] = pre_json_transform(aspect.to_obj())
    return value


def apply_builder(builder: MetadataPatchProposal, current: m._Aspect) -> Any:
    """Every MCP the builder makes, applied in order to `current`; the typed result."""
    value = json_of(current)
    for mcp in builder.build():
        assert mcp.aspect is not None and mcp.aspectName == current.ASPECT_NAME
        value = apply_patch(current.ASPECT_NAME, value, mcp.aspect.value)
    return validated_aspect(current.ASPECT_NAME, value)


def test_pointer_escapes_and_absent_keys() -> None:
    value = apply_patch(
        "datasetProperties",
        {"customProperties": {"keep": "1", "a/b": "x", "~1": "y"}},
        ops(
            {"op": "add", "path": "/customProperties/c~1d~0e", "value": "slash-tilde"},
            {"op": "remove", "path": "/customProperties/a~1b"},
            {"op": "remove", "path": "/customProperties/~01"},  # the key "~1", not "/"
            {"op": "remove", "path": "/customProperties/never-there"},  # GMS creates it first: a no-op
        ),
    )
    assert value["customProperties"] == {"keep": "1", "c/d~e": "slash-tilde"}
    assert value["tags"] == []  # DatasetPropertiesTemplate's string array, rebuilt as an array


def test_every_rfc6902_operation_on_a_forced_generic_patch() -> None:
    patch = generic(
        {},
        {"op": "copy", "from": "/customProperties/a", "path": "/customProperties/b"},
        {"op": "move", "from": "/customProperties/a", "path": "/description"},
        {"op": "replace", "path": "/customProperties/b", "value": "B"},
        {"op": "test", "path": "/description", "value": "A"},
        {"op": "add", "path": "/tags/-", "value": "t2"},
        {"op": "add", "path": "/tags/0", "value": "t0"},
        force=True,
    )
    value = apply_patch("datasetProperties", {"customProperties": {"a": "A"}, "tags": ["t1"]}, patch)
    assert value == {"customProperties": {"b": "B"}, "description": "A", "tags": ["t0", "t1", "t2"]}
    with pytest.raises(PatchError, match="no array index"):
        apply_patch(
            "datasetProperties", {"tags": []}, generic({}, {"op": "add", "path": "/tags/3", "value": "x"}, force=True)
        )
    with pytest.raises(PatchError, match="into itself"):
        apply_patch("datasetProperties", {}, generic({}, {"op": "move", "from": "/a", "path": "/a/b"}, force=True))


def test_keys_only_in_the_path_are_put_back_into_the_element() -> None:
    value = apply_patch(
        "upstreamLineage", None, ops({"op": "add", "path": f"/upstreams/{DS_A}", "value": {"type": "COPY"}})
    )
    assert value["upstreams"] == [{"type": "COPY", "dataset": DS_A}]
    assert value["fineGrainedLineages"] == []
    assert validated_aspect("upstreamLineage", value).upstreams[0].dataset == DS_A


def test_generic_envelopes_key_arrays_as_they_say_and_start_from_an_empty_record() -> None:
    owners = {"owners": ["owner", "type"]}
    add = {"op": "add", "path": "/owners/urn:li:corpuser:a/DATAOWNER", "value": {"owner": "urn:li:corpuser:a"}}
    value = apply_patch("ownership", None, generic(owners, add))
    assert value == {"owners": [{"owner": "urn:li:corpuser:a", "type": "DATAOWNER"}]}  # `type` re-injected
    assert validated_aspect("ownership", value).lastModified.time == 0  # the schema default fills the rest

    current = {"tags": [{"tag": "urn:li:tag:x", "attribution": {"source": "urn:li:s", "time": 1, "actor": "urn:li:a"}}]}
    by_source = {"tags": ["attribution\u241fsource", "tag"]}
    value = apply_patch(
        "globalTags",
        current,
        generic(by_source, {"op": "add", "path": "/tags//urn:li:tag:x", "value": {"tag": "urn:li:tag:x"}}),
    )
    assert [t.get("attribution", {}).get("source") for t in value["tags"]] == ["urn:li:s", None]  # a second entry
    value = apply_patch("globalTags", value, generic(by_source, {"op": "remove", "path": "/tags/urn:li:s"}))
    assert value["tags"] == [{"tag": "urn:li:tag:x"}]


def test_fine_grained_lineage_defaults_and_minimum_confidence() -> None:
    down, up1, up2 = (
        f"urn:li:schemaField:({DS_B},c)",
        f"urn:li:schemaField:({DS_A},c)",
        f"urn:li:schemaField:({DS_A},d)",
    )
    current = {
        "upstreams": [],
        "fineGrainedLineages": [{"upstreams": [DS_A], "downstreams": [down], "confidenceScore": 0.8}],
    }
    patch = ops(
        {"op": "add", "path": f"/fineGrainedLineages/NONE/{down}/NONE/{up1}", "value": {"confidenceScore": 0.3}},
        {"op": "add", "path": f"/fineGrainedLineages/NONE/{down}/NONE/{up2}", "value": {}},
    )
    (merged,) = apply_patch("upstreamLineage", current, patch)["fineGrainedLineages"]
    assert merged == {
        "downstreams": [down],
        "upstreams": [DS_A, up1, up2],
        "upstreamType": "DATASET",  # from the first element, whose upstream is a dataset
        "downstreamType": "FIELD",
        "confidenceScore": 0.3,
        "transformOperation": "NONE",
    }
    emptied = ops(*({"op": "remove", "path": f"/fineGrainedLineages/NONE/{down}/NONE/{u}"} for u in (DS_A, up1, up2)))
    assert apply_patch("upstreamLineage", current, emptied)["fineGrainedLineages"] == []


def test_sdk_builders_for_charts_dashboards_and_data_jobs() -> None:
    chart = "urn:li:chart:(looker,c1)"
    info = m.ChartInfoClass(
        "t", "d", m.ChangeAuditStampsClass(), inputEdges=[m.EdgeClass(DS_A)], customProperties={"k": "v"}
    )
    out = apply_builder(ChartPatchBuilder(chart).add_input_edge(DS_B).add_custom_property("k2", "v2"), info)
    assert [e.destinationUrn for e in out.inputEdges] == [DS_A, DS_B]
    assert out.customProperties == {"k": "v", "k2": "v2"} and out.title == "t"

    dash = m.DashboardInfoClass("t", "d", m.ChangeAuditStampsClass(), chartEdges=[m.EdgeClass(chart)])
    builder = DashboardPatchBuilder("urn:li:dashboard:(looker,d1)").add_dataset_edge(DS_A).remove_chart_edge(chart)
    out = apply_builder(builder.add_dashboard("urn:li:dashboard:(looker,d0)"), dash)
    assert ([e.destinationUrn for e in out.datasetEdges], out.chartEdges) == ([DS_A], [])
    assert [e.destinationUrn for e in out.dashboards] == ["urn:li:dashboard:(looker,d0)"]

    job = "urn:li:dataJob:(urn:li:dataFlow:(airflow,f,PROD),t)"
    io = m.DataJobInputOutputClass([], [], inputDatasetEdges=[m.EdgeClass(DS_A)])
    out = apply_builder(DataJobPatchBuilder(job).add_input_dataset(DS_B).add_output_dataset(DS_A), io)
    assert [e.destinationUrn for e in out.inputDatasetEdges] == [DS_A, DS_B]
    assert [e.destinationUrn for e in out.outputDatasetEdges] == [DS_A]


def test_refusals() -> None:
    with pytest.raises(PatchError, match="Aspect: mlModelProperties does not currently support patch operations"):
        apply_patch("mlModelProperties", {}, ops())
    with pytest.raises(PatchError, match="does not implement PATCH for aspect formInfo"):
        apply_patch("formInfo", {}, ops())
    with pytest.raises(PatchError, match="arrayPrimaryKeys"):
        apply_patch("globalTags", {}, json.dumps({"arrayPrimaryKeys": {"tags": "tag"}, "patch": []}))
    with pytest.raises(PatchError, match="non-object"):
        apply_patch("globalTags", {}, ops({"op": "add", "path": "", "value": []}))
    with pytest.raises(PatchError, match="/upstreams/0/surprise"):
        value = apply_patch(
            "upstreamLineage",
            None,
            ops({"op": "add", "path": f"/upstreams/{DS_A}", "value": {"type": "COPY", "surprise": 1}}),
        )
        validated_aspect("upstreamLineage", value)
