"""`provenance bind`: bind a model registered in MLflow (write the provenance.* binding as model-version tags), or
check the binding it has (`--check`).

Exit codes: 0 bound / binding valid; 2 refused or bad input (nothing written); 1 MLflow unreachable or the
confirmation declined; 30 (`--check`) the binding is missing or does not work — what `assess` would call
INCOMPLETE.
"""

from __future__ import annotations

import argparse
import os
import sys

from agent.cli.exit_codes import EXIT_BAD_INPUT, EXIT_CODES, EXIT_FAILURE, EXIT_OK
from tools.registry.binder import BindOptions, CheckResult, Proposal, binding_keys, check, propose
from tools.registry.catalog_sync import gms_properties, lite_properties, merge_into_gms, merge_into_lite
from tools.registry.mlflow_registry import (
    TRACKING_ENV,
    MlflowRegistry,
    ModelRef,
    ModelVersionInfo,
    RegistryError,
)
from tools.settings import ProvenanceSettings

EXIT_CHECK_FAILED = EXIT_CODES["INCOMPLETE"]


def _cmd_bind(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    tracking_uri = os.environ.get(TRACKING_ENV, "").strip()
    if not tracking_uri:
        raise RegistryError(
            f"{TRACKING_ENV} is not set: point it at the MLflow tracking server or store the model is registered in "
            "(e.g. http://mlflow:5000 or sqlite:///path/to/mlflow.db)"
        )
    ref = ModelRef.parse(args.model)
    registry = MlflowRegistry(tracking_uri)
    if args.check:
        if args.eval_data or args.label or args.threshold is not None or args.yes:
            raise RegistryError("--check only reads: it takes MODEL and --version, nothing else")
        return _check(settings, registry, ref, args.version)
    options = BindOptions(version=args.version, eval_data=args.eval_data, label=args.label, threshold=args.threshold)
    proposal = propose(registry, ref, options)
    print(_describe(proposal, registry, settings, ref))
    if not args.yes:
        if not sys.stdin.isatty():
            print("error: not written — confirm on a terminal, or pass --yes to write without asking", file=sys.stderr)
            return EXIT_BAD_INPUT
        if not _confirm("Write these tags? [y/N] "):
            print("Nothing written.")
            return EXIT_FAILURE
    version = proposal.version
    try:
        registry.set_tags(version.name, version.version, proposal.tags)
    except Exception as exc:  # MLflow's REST and SQL stores raise their own errors
        print(
            f"error: writing the tags to {version.name} version {version.version} failed ({exc}); some may be "
            "written: `provenance bind --check` shows what is there, and running bind again writes them all",
            file=sys.stderr,
        )
        return EXIT_FAILURE
    print(f"Wrote {len(proposal.tags)} tags to {version.name} version {version.version} in MLflow.")
    print(_sync(settings, version, ref, proposal.tags))
    return EXIT_OK


def _confirm(prompt: str) -> bool:
    try:
        return input(prompt).strip().lower() in ("y", "yes")
    except EOFError:
        return False


def _urn(version: ModelVersionInfo, ref: ModelRef) -> str:
    return ref.urn or version.datahub_urn(ref.env)


def _describe(proposal: Proposal, registry: MlflowRegistry, settings: ProvenanceSettings, ref: ModelRef) -> str:
    version = proposal.version
    lines = [f"Binding {proposal.findings[0]}", *(f"  {line}" for line in proposal.findings[1:]), ""]
    lines.append(
        f"Will set these MLflow model-version tags on {version.name} version {version.version} "
        f"({TRACKING_ENV}={registry.tracking_uri}):"
    )
    for key, value in proposal.tags.items():
        same = "  (unchanged)" if version.tags.get(key) == value else ""
        lines.append(f"  {key}={value}{same}")
    urn = _urn(version, ref)
    if settings.provenance_catalog == "embedded":
        lines.append(
            f"and merge them into mlModelProperties.customProperties of {urn} in the DataHub Lite file "
            f"{settings.lite_db} (DataHub's mlflow ingestion copies the tags there again every run)."
        )
    elif settings.datahub_gms_url and settings.datahub_gms_token:
        lines.append(
            f"and merge them into mlModelProperties.customProperties of {urn} in DataHub at "
            f"{settings.datahub_gms_url} (DataHub's mlflow ingestion copies the tags there again every run)."
        )
    else:
        lines.append(f"DataHub gets them on {urn} at the next run of its mlflow ingestion source.")
    return "\n".join(lines)


def _sync(settings: ProvenanceSettings, version: ModelVersionInfo, ref: ModelRef, tags: dict[str, str]) -> str:
    urn = _urn(version, ref)
    if settings.provenance_catalog == "embedded":
        return _capitalised(merge_into_lite(settings.lite_db, urn, tags).message)
    if settings.datahub_gms_url and settings.datahub_gms_token:
        try:
            return _capitalised(merge_into_gms(settings.datahub_gms_url, settings.datahub_gms_token, urn, tags).message)
        except Exception as exc:  # the MLflow tags are written; DataHub's copy is a convenience
            return f"Not written to DataHub ({exc}); the next mlflow ingestion copies the tags there."
    return f"DataHub gets them on {urn} at the next run of its mlflow ingestion source."


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _check(settings: ProvenanceSettings, registry: MlflowRegistry, ref: ModelRef, version_arg: str | None) -> int:
    version = registry.find_version(ref, version_arg)
    base_dir = settings.lite_db.parent  # where assess resolves relative URIs
    print(f"Checking the binding of {version.name} version {version.version} (chosen: {version.chosen})")
    mlflow_keys = binding_keys(version.tags)
    results = [check(version.tags, base_dir, f"MLflow model-version tags ({TRACKING_ENV}={registry.tracking_uri})")]
    urn = _urn(version, ref)
    catalog_props, where = _catalog_properties(settings, urn)
    notes: list[str] = []
    if catalog_props is None:
        notes.append(where)
    elif binding_keys(catalog_props) == mlflow_keys:
        notes.append(f"{where} carries the same provenance.* keys as MLflow")
    else:
        differs = sorted(
            k
            for k in set(binding_keys(catalog_props)) | set(mlflow_keys)
            if catalog_props.get(k) != version.tags.get(k)
        )
        notes.append(
            f"{where} differs from MLflow on {', '.join(differs)}: assess reads DataHub's copy; re-run DataHub's "
            "mlflow ingestion (or `provenance bind` on the embedded catalog) to bring them in line"
        )
        results.append(check(catalog_props, base_dir, where))
    for result in results:
        print(_render_check(result))
    for note in notes:
        print(f"Note: {note}")
    valid = all(r.valid for r in results)
    print(
        "Binding is valid: assess can test this model."
        if valid
        else "Binding is not usable: assess would give "
        f"INCOMPLETE ({', '.join(sorted({r.code or 'invalid' for r in results if not r.valid}))})."
    )
    return EXIT_OK if valid else EXIT_CHECK_FAILED


def _catalog_properties(settings: ProvenanceSettings, urn: str) -> tuple[dict[str, str] | None, str]:
    if settings.provenance_catalog == "embedded":
        props = lite_properties(settings.lite_db, urn)
        where = f"DataHub customProperties of {urn} ({settings.lite_db})"
        return props, where if props is not None else f"{urn} is not in the catalog {settings.lite_db}"
    if settings.datahub_gms_url:
        try:
            props = gms_properties(settings.datahub_gms_url, settings.datahub_gms_token, urn)
        except Exception as exc:  # a check should still report MLflow's side
            return None, f"DataHub at {settings.datahub_gms_url} could not be read ({exc})"
        where = f"DataHub customProperties of {urn} ({settings.datahub_gms_url})"
        return props, where if props is not None else f"{urn} is not in DataHub at {settings.datahub_gms_url}"
    return None, "DataHub was not read (no DATAHUB_GMS_URL)"


def _render_check(result: CheckResult) -> str:
    lines = [f"{result.where}: {'valid' if result.valid else 'NOT valid'}"]
    if result.missing:
        lines.append(f"  missing keys: {', '.join(result.missing)}")
    lines += [f"  ok: {line}" for line in result.ok]
    lines += [f"  problem: {line}" for line in result.problems]
    return "\n".join(lines)
