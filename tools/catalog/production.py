"""Is a model in production? Decided from the markers real catalogs write, declared in `conventions.yaml`."""

from __future__ import annotations

from tools.catalog.conventions import ProductionMarkers
from tools.catalog.datahub import EntitySummary


def model_platform(entity: EntitySummary) -> str | None:
    if entity.platform:
        return entity.platform
    inner = entity.urn.partition("(")[2]
    head = inner.split(",", 1)[0]
    return head.removeprefix("urn:li:dataPlatform:") if head.startswith("urn:li:dataPlatform:") else None


def production_marker(
    entity: EntitySummary, markers: ProductionMarkers, property_tags: list[str] | None = None
) -> str | None:
    """The marker that makes the model a production model (for the evidence), or None.

    `property_tags` is `mlModelProperties.tags`, which the MCP server's entity query does not return; the caller
    reads it from the aspect when the other markers are silent."""
    tag_names = {tag.removeprefix("urn:li:tag:").lower(): tag for tag in entity.tags}
    platform = model_platform(entity)
    wanted = [t.lower() for t in markers.global_tags]
    if platform:
        wanted += [t.format(platform=platform).lower() for t in markers.platform_tags]
    for name in wanted:
        if name in tag_names:
            return f"global tag {tag_names[name]}"
    stage_values = {v.lower() for v in markers.stage_values}
    for key in markers.stage_properties:
        values = {v.strip().lower() for v in entity.custom_properties.get(key, "").split(",")}
        if values & stage_values:
            return f"property {key}={entity.custom_properties[key]}"
    wanted_property_tags = {t.lower() for t in markers.model_property_tags}
    for value in property_tags or []:
        if value.strip().lower() in wanted_property_tags:
            return f"mlModelProperties.tags contains {value!r}"
    return None


def needs_property_tags(entity: EntitySummary, markers: ProductionMarkers) -> bool:
    """Only models that no cheaper marker settles need their mlModelProperties aspect read."""
    return bool(markers.model_property_tags) and production_marker(entity, markers) is None
