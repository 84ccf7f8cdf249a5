"""Is a model in production? Decided from the markers real catalogs write, declared in `conventions.yaml`."""

from __future__ import annotations

from dataclasses import dataclass, field

from tools.catalog.conventions import ProductionMarkers
from tools.catalog.entity import EntitySummary


@dataclass(frozen=True)
class AspectMarkers:
    """What the entity query does not return and is read from aspects only for models no cheaper marker settles:
    `mlModelProperties.tags` and `versionProperties.aliases`, plus the model registry's own answer when one is
    configured (`registry`: e.g. "MLflow registry: claims_fraud version 1 has alias champion")."""

    property_tags: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    registry_stage: str | None = None
    registry_aliases: list[str] = field(default_factory=list)
    registry_where: str | None = None  # "MLflow registry at <uri>: claims_fraud version 1"


def model_platform(entity: EntitySummary) -> str | None:
    if entity.platform:
        return entity.platform
    inner = entity.urn.partition("(")[2]
    head = inner.split(",", 1)[0]
    return head.removeprefix("urn:li:dataPlatform:") if head.startswith("urn:li:dataPlatform:") else None


def _listed(value: str) -> set[str]:
    return {v.strip().lower() for v in value.split(",") if v.strip()}


def production_marker(
    entity: EntitySummary, markers: ProductionMarkers, read: AspectMarkers | None = None
) -> str | None:
    """The marker that makes the model a production model (for the evidence), or None.

    The registry, when one was asked (`read.registry_where`), is the authoritative source and is named first; the
    catalog's markers still count when it is silent (a stale catalog errs towards testing a model, not skipping it)."""
    read = read or AspectMarkers()
    stage_values = {v.lower() for v in markers.stage_values}
    alias_values = {v.lower() for v in markers.alias_values}
    if read.registry_where:
        if (read.registry_stage or "").lower() in stage_values:
            return f"{read.registry_where} is in stage {read.registry_stage}"
        hit = sorted(a for a in read.registry_aliases if a.lower() in alias_values)
        if hit:
            return f"{read.registry_where} has alias {', '.join(hit)}"
    tag_names = {tag.removeprefix("urn:li:tag:").lower(): tag for tag in entity.tags}
    platform = model_platform(entity)
    wanted = [t.lower() for t in markers.global_tags]
    if platform:
        wanted += [t.format(platform=platform).lower() for t in markers.platform_tags]
    for name in wanted:
        if name in tag_names:
            return f"global tag {tag_names[name]}"
    for key in markers.stage_properties:
        if _listed(entity.custom_properties.get(key, "")) & stage_values:
            return f"property {key}={entity.custom_properties[key]}"
    for key in markers.alias_properties:
        if _listed(entity.custom_properties.get(key, "")) & alias_values:
            return f"alias property {key}={entity.custom_properties[key]}"
    hit = sorted(a for a in read.aliases if a.lower() in alias_values)
    if hit:
        return f"versionProperties.aliases contains {', '.join(hit)}"
    wanted_property_tags = {t.lower() for t in markers.model_property_tags}
    for value in read.property_tags:
        if value.strip().lower() in wanted_property_tags:
            return f"mlModelProperties.tags contains {value!r}"
    return None


def needs_aspects(entity: EntitySummary, markers: ProductionMarkers) -> bool:
    """Only models that no cheaper marker settles need their aspects read."""
    return production_marker(entity, markers) is None and bool(markers.model_property_tags or markers.alias_values)
