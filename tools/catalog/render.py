"""Plain-text rendering of a discovery for terminals and chat."""

from __future__ import annotations

from tools.catalog.discovery import AffectedFeature, Discovery


def short(urn: str) -> str:
    """`urn:li:dataset:(urn:li:dataPlatform:postgres,payments.public.transactions,PROD)` -> `postgres:payments...`."""
    if urn.startswith("urn:li:dataset:("):
        platform, name = urn.removeprefix("urn:li:dataset:(urn:li:dataPlatform:").split(",")[:2]
        return f"{platform}:{name}"
    if urn.startswith(("urn:li:mlModel:(", "urn:li:mlModelGroup:(")):
        return urn.split(",")[1]
    if urn.startswith("urn:li:mlFeature:("):
        return urn.removeprefix("urn:li:mlFeature:(").rstrip(")").replace(",", ".")
    return urn


def feature_path(feature: AffectedFeature) -> str:
    steps = []
    for step in feature.path:
        transform = f" [{step.transform}]" if step.transform else ""
        note = f" ({step.note})" if step.note else ""
        steps.append(f"{short(step.dataset_urn)}.{step.column}{transform}{note}")
    last = f"feature {short(feature.urn)}" if feature.link == "feature" else f"training run {feature.urn}"
    return " -> ".join([*steps, last])


def render_discovery(found: Discovery) -> str:
    lines = [f"Field {short(found.dataset_urn)}.{found.field} ({found.field_type}, {found.field_native_type})"]
    if found.precision == "dataset":
        lines.append("! only dataset-level lineage exists for this field: results over-approximate")
    lines.append(f"Lineage searched: {', '.join(short(u) for u in found.datasets_searched)}")
    if not found.models and found.coverage.complete:
        lines.append("No ML model depends on this field (the whole lineage graph was read).")
    elif not found.models:
        lines.append("No ML model was found, but the lineage could not be read completely (see coverage).")
    for model in found.models:
        status = "PRODUCTION" if model.production else "not in production (listed, not tested)"
        lines.append(f"\nModel {model.name}  [{status}; {model.production_evidence}]")
        lines.append(f"  urn: {model.urn}")
        if model.owners:
            lines.append(f"  owners: {', '.join(model.owners)}")
        for feature in model.features:
            lines.append(f"  path: {feature_path(feature)} -> model {model.name}")
    lines.append("\nCoverage:")
    lines += [f"  {line}" for line in found.coverage.lines()]
    lines.append(f"\n{found.mcp_calls} MCP calls, {found.duration_ms:.0f} ms, precision: {found.precision}")
    return "\n".join(lines)
