"""GMS's aspect patch templates, as data: which arrays a PATCH addresses as maps, keyed by which fields.

Mirrors datahub-project/datahub `entity-registry/.../aspect/patch/template/` (`*Template.java`, the
`AspectTemplateEngine`, `FineGrainedLineageTemplateHelper`). An aspect with no entry here is refused, as GMS
refuses an aspect outside `AspectTemplateEngine.SUPPORTED_TEMPLATES`; the engine that applies these lives in
`tools.embedded.patch`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tools.embedded.json_patch import JsonObject, PatchError

SYSTEM_ACTOR = "urn:li:corpuser:__datahub_system"
# A key field reaching into a sub-record, e.g. `attribution<U+241F>source` (ArrayMergingTemplate.UNIT_SEPARATOR).
UNIT_SEPARATOR = "\u241f"
ATTRIBUTION_SOURCE = f"attribution{UNIT_SEPARATOR}source"
FINE_GRAINED = "fineGrainedLineages"


@dataclass(frozen=True)
class AspectTemplate:
    default: Callable[[], JsonObject]  # the value a PATCH starts from when the entity lacks the aspect
    # (array field, key fields): the array is a map while the patch applies; no key fields = an array of strings
    arrays: tuple[tuple[str, tuple[str, ...]], ...] = ()
    fine_grained: bool = False  # fineGrainedLineages as /OPERATION/DOWNSTREAM/QUERY/UPSTREAM
    fixup: Callable[[JsonObject], None] | None = None  # run before and after the patch
    # (sub-record field, aspect template) applied inside each element of the first array (editableSchemaMetadata)
    element_templates: tuple[tuple[str, str], ...] = ()


def _stamp() -> JsonObject:
    return {"time": int(time.time() * 1000), "actor": SYSTEM_ACTOR}


def _change_stamps() -> JsonObject:
    stamp = _stamp()
    return {"created": stamp, "lastModified": dict(stamp)}


def _glossary_audit_stamp(node: JsonObject) -> None:
    node.setdefault("auditStamp", _stamp())  # a required (deprecated) field GlossaryTermsTemplate fills in


_EDGE = ("destinationUrn",)

TEMPLATES: dict[str, AspectTemplate] = {
    "upstreamLineage": AspectTemplate(
        lambda: {"upstreams": [], FINE_GRAINED: []}, (("upstreams", ("dataset",)),), fine_grained=True
    ),
    "globalTags": AspectTemplate(lambda: {"tags": []}, (("tags", ("tag",)),)),
    # Keyed by `urn` alone, as the SDK's field-level add_term path (/terms/<urn>) expects; one GMS version keys
    # terms by (urn, attribution source), which only a GenericJsonPatch envelope (the SDK's add_term) addresses.
    "glossaryTerms": AspectTemplate(
        lambda: {"terms": [], "auditStamp": _stamp()}, (("terms", ("urn",)),), fixup=_glossary_audit_stamp
    ),
    "ownership": AspectTemplate(
        lambda: {"owners": [], "lastModified": _stamp()}, (("owners", ("owner", "type", "typeUrn")),)
    ),
    "datasetProperties": AspectTemplate(lambda: {"tags": [], "customProperties": {}}, (("tags", ()),)),
    "editableDatasetProperties": AspectTemplate(dict),
    "editableSchemaMetadata": AspectTemplate(
        lambda: {**_change_stamps(), "editableSchemaFieldInfo": []},
        (("editableSchemaFieldInfo", ("fieldPath",)),),
        element_templates=(("globalTags", "globalTags"), ("glossaryTerms", "glossaryTerms")),
    ),
    "siblings": AspectTemplate(lambda: {"siblings": [], "primary": False}, (("siblings", ()),)),
    "domains": AspectTemplate(lambda: {"domains": []}, (("domains", ()),)),
    "documentation": AspectTemplate(lambda: {"documentations": []}, (("documentations", (ATTRIBUTION_SOURCE,)),)),
    "institutionalMemory": AspectTemplate(lambda: {"elements": []}, (("elements", ("url",)),)),
    "structuredProperties": AspectTemplate(
        lambda: {"properties": []}, (("properties", ("propertyUrn", ATTRIBUTION_SOURCE)),)
    ),
    "status": AspectTemplate(lambda: {"removed": False}),
    "dataJobInfo": AspectTemplate(lambda: {"customProperties": {}}),
    "dataFlowInfo": AspectTemplate(lambda: {"customProperties": {}}),
    "dataJobInputOutput": AspectTemplate(
        lambda: {
            "inputDatajobEdges": [],
            "inputDatasetEdges": [],
            "outputDatasetEdges": [],
            FINE_GRAINED: [],
            "inputDatasetFields": [],
            "outputDatasetFields": [],
            "inputDatajobs": [],
            "inputDatasets": [],
            "outputDatasets": [],
        },
        (
            ("inputDatajobEdges", _EDGE),
            ("inputDatasetEdges", _EDGE),
            ("outputDatasetEdges", _EDGE),
            ("inputDatasetFields", ()),
            ("outputDatasetFields", ()),
        ),
        fine_grained=True,
    ),
    "chartInfo": AspectTemplate(
        lambda: {"description": "", "title": "", "lastModified": _change_stamps(), "inputEdges": [], "inputs": []},
        (("inputEdges", _EDGE), ("inputs", ())),
    ),
    "dashboardInfo": AspectTemplate(
        lambda: {
            "title": "",
            "description": "",
            "lastModified": _change_stamps(),
            "chartEdges": [],
            "datasetEdges": [],
            "datasets": [],
            "charts": [],
        },
        (("chartEdges", _EDGE), ("datasetEdges", _EDGE), ("dashboards", _EDGE), ("datasets", ()), ("charts", ())),
    ),
    "dataProductProperties": AspectTemplate(lambda: {"assets": []}, (("assets", _EDGE),)),
}

# In GMS's SUPPORTED_TEMPLATES but not mirrored here: refused by name as not implemented, not as unpatchable.
GMS_ONLY_TEMPLATES = frozenset(
    {
        "formInfo",
        "structuredPropertyDefinition",
        "versionProperties",
        "editableContainerProperties",
        "editableMlModelGroupProperties",
    }
)


# ------------------------------------------------------------------------------------ fine-grained lineage


def fine_grained_to_map(value: Any) -> JsonObject:
    """FineGrainedLineageTemplateHelper.combineAndTransformFineGrainedLineages."""
    mapped: JsonObject = {}
    if not isinstance(value, list):
        return mapped
    for lineage in value:
        if not isinstance(lineage, dict):
            raise PatchError(f"{FINE_GRAINED} holds a non-object element: {lineage!r}")
        downstreams = lineage.get("downstreams")
        if not isinstance(downstreams, list) or len(downstreams) != 1:
            raise PatchError(
                "Patching not supported on fine grained lineages with not exactly one downstream "
                f"(found {downstreams!r}): patches are keyed on the single downstream field"
            )
        upstreams = [str(u) for u in lineage.get("upstreams") or []]
        upstream_type = lineage.get("upstreamType")
        if upstream_type is None:
            is_dataset = bool(upstreams) and upstreams[0].startswith("urn:li:dataset:")
            upstream_type = "DATASET" if is_dataset else "FIELD_SET"
        value_node = {
            "confidenceScore": _score(_given(lineage, "confidenceScore", 1.0)),
            "upstreamType": upstream_type,
            "downstreamType": _given(lineage, "downstreamType", "FIELD"),
        }
        by_downstream = mapped.setdefault(str(_given(lineage, "transformOperation", "NONE")), {})
        by_query = by_downstream.setdefault(str(downstreams[0]), {})
        query_node = by_query.setdefault(str(_given(lineage, "query", "NONE")), {})
        for upstream in dict.fromkeys(upstreams):
            query_node[upstream] = dict(value_node)
    return mapped


def map_to_fine_grained(value: Any) -> Any:
    """FineGrainedLineageTemplateHelper.reconstructFineGrainedLineages (an array set by the patch stays as is)."""
    if isinstance(value, list):
        return value
    if value is None:
        return []
    rebuilt: list[JsonObject] = []
    for operation, by_downstream in _object(value, FINE_GRAINED).items():
        for downstream, by_query in _object(by_downstream, f"{FINE_GRAINED}/{operation}").items():
            for query, upstream_nodes in _object(by_query, f"{FINE_GRAINED}/{operation}/{downstream}").items():
                upstream_nodes = _object(upstream_nodes, f"{FINE_GRAINED}/{operation}/{downstream}/{query}")
                if not upstream_nodes:
                    continue  # every upstream of this downstream was removed
                score, upstream_type, downstream_type = 1.0, "FIELD_SET", "FIELD"
                for upstream, node in upstream_nodes.items():
                    node = _object(node, f"{FINE_GRAINED}/.../{upstream}")
                    if "confidenceScore" in node:
                        score = min(score, _score(node["confidenceScore"]))
                    upstream_type = str(node.get("upstreamType", upstream_type))
                    downstream_type = str(node.get("downstreamType", downstream_type))
                lineage: JsonObject = {"downstreams": [downstream], "upstreams": list(upstream_nodes)}
                if query.strip() and query != "NONE":
                    lineage["query"] = query
                lineage |= {
                    "upstreamType": upstream_type,
                    "downstreamType": downstream_type,
                    "confidenceScore": score,
                    "transformOperation": operation,
                }
                rebuilt.append(lineage)
    return rebuilt


def _given(node: JsonObject, field: str, default: Any) -> Any:
    value = node.get(field)
    return default if value is None else value


def _object(value: Any, where: str) -> JsonObject:
    if not isinstance(value, dict):
        raise PatchError(f"{where} must be an object after the patch, got {value!r}")
    return value


def _score(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PatchError(f"confidenceScore must be a number, got {value!r}")
    return float(value)
