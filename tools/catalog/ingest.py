"""`provenance catalog ingest`: DataHub's own ingestion recipes into the catalog Provenance reads.

A recipe names a source (postgres, dbt, mlflow, sql-queries…) and no sink: the sink is this catalog's REST
endpoint — the served one when `provenance catalog serve` runs for this home, the embedded one started for the
run otherwise, or the DataHub GMS of PROVENANCE_CATALOG=datahub. Through the REST endpoint the dbt source's
default PATCH proposals (model → table lineage) are applied, which the `datahub-lite` sink refuses.

Recipes run in the order given and stop at the first that fails: a later source may read what an earlier one
wrote (the dbt source reads the warehouse tables' schemas through the same endpoint).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.catalog.served import find_served
from tools.errors import BadRequest
from tools.settings import ProvenanceSettings

SHOWN_MESSAGES = 3


class RecipeError(BadRequest, ValueError):
    """A recipe that cannot run as given; the message says what to change."""


# DataHub sources and the Provenance extra (pyproject.toml; a `make` target of the same name) that installs each.
SOURCE_EXTRAS = {"mlflow": "mlflow", "sql-queries": "mlflow", "sqlite": "mlflow", "dbt": "dbt", "postgres": "dbt"}


@dataclass(frozen=True)
class Endpoint:
    url: str
    token: str
    description: str


@dataclass(frozen=True)
class RecipeRun:
    recipe: Path
    source: str
    records_written: int
    failures: tuple[str, ...]
    warnings: tuple[str, ...]
    seconds: float

    @property
    def ok(self) -> bool:
        return not self.failures


def load_recipe(path: Path) -> dict[str, Any]:
    """The recipe with its ${VARS} expanded; refused with the fix when it cannot run into this catalog."""
    from datahub.configuration.config_loader import list_referenced_env_variables, load_config_file

    if not path.is_file():
        raise RecipeError(f"{path}: no such recipe file (a YAML file with a `source:` section)")
    import yaml
    from datahub.configuration.common import ConfigurationError

    try:
        raw = load_config_file(path, resolve_env_vars=False, allow_remote=False)
    except (yaml.YAMLError, ConfigurationError) as exc:
        raise RecipeError(f"{path} is not a readable recipe: {exc}") from exc
    except RecursionError:
        raise RecipeError(f"{path} is nested deeper than any recipe; it is not a readable recipe") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("source"), dict) or "type" not in raw["source"]:
        raise RecipeError(f"{path}: a recipe needs `source: {{type: …, config: …}}` (DataHub's recipe format)")
    if "sink" in raw:
        sink = raw["sink"].get("type") if isinstance(raw["sink"], dict) else raw["sink"]
        raise RecipeError(
            f"{path} has its own sink ({sink}); `provenance catalog ingest` writes into the catalog Provenance "
            f"reads: remove the `sink:` section, or run `datahub ingest -c {path}` to write where it says"
        )
    _check_keys(path, raw)
    unset = sorted(name for name in list_referenced_env_variables(raw) if name not in os.environ)
    if unset:
        raise RecipeError(f"{path} refers to {', '.join('$' + n for n in unset)}, not set: export it and run again")
    recipe: dict[str, Any] = load_config_file(path, resolve_env_vars=True, allow_remote=False)
    return recipe


# Top-level recipe keys that only say what to ingest. `failure_log` and `reporting` write files where the recipe
# says; anything else is not ours to run.
RECIPE_KEYS = frozenset({"source", "transformers", "pipeline_name", "run_id", "datahub_api", "flags"})


def _check_keys(path: Path, raw: dict[str, Any]) -> None:
    """Refuse what would write files or import code a recipe names, before DataHub's registry imports anything."""
    extra = sorted(set(raw) - RECIPE_KEYS - {"sink"})
    if extra:
        raise RecipeError(
            f"{path}: `{'`, `'.join(extra)}` is not taken here (`provenance catalog ingest` runs a source into this "
            f"catalog and writes no other file); allowed: {', '.join(sorted(RECIPE_KEYS))}"
        )
    types = [("source", raw["source"].get("type"))]
    types += [("transformer", t.get("type")) for t in raw.get("transformers") or [] if isinstance(t, dict)]
    for what, name in types:
        if not isinstance(name, str) or "." in name or ":" in name:
            raise RecipeError(
                f"{path}: {what} type {name!r} is not a DataHub plugin name (e.g. postgres, mlflow, dbt); a dotted "
                "path would import a module of the recipe's choosing, which `provenance catalog ingest` does not do"
            )


def expanded_values(path: Path) -> list[str]:
    """The values of the ${VARS} a recipe refers to (secrets, often): never shown in what a run reports."""
    from datahub.configuration.config_loader import list_referenced_env_variables, load_config_file

    raw = load_config_file(path, resolve_env_vars=False, allow_remote=False)
    names = list_referenced_env_variables(raw) if isinstance(raw, dict) else set()
    return sorted((os.environ[n] for n in names if len(os.environ.get(n, "")) >= 3), key=len, reverse=True)


def scrub(line: str, secrets: list[str]) -> str:
    for value in secrets:
        line = line.replace(value, "***")
    return line


@contextmanager
def ingestion_endpoint(settings: ProvenanceSettings) -> Iterator[Endpoint]:
    """Where recipes write: the served catalog, a real GMS, or the embedded endpoint for the duration."""
    served = find_served(settings)
    if served is not None:
        yield Endpoint(served.gms_url, served.gms_token, served.describe())
        return
    if settings.provenance_catalog == "datahub":
        if not settings.datahub_gms_url:
            raise RecipeError("PROVENANCE_CATALOG=datahub needs DATAHUB_GMS_URL (and usually DATAHUB_GMS_TOKEN)")
        url = settings.datahub_gms_url
        yield Endpoint(url, settings.datahub_gms_token or "", f"DataHub at {url}")
        return
    from tools.embedded.server import start_embedded_catalog

    running = start_embedded_catalog(settings.lite_db)
    try:
        yield Endpoint(running.url, running.token, f"embedded DataHub Lite catalog {settings.lite_db}")
    finally:
        running.stop()


class _DefaultEmitModeNotice(logging.Filter):
    """The REST sink warns on every run that its default batch mode overrides the default emit mode (acryl-datahub
    1.7): a notice about two defaults, not about the recipe, so it is not shown."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Overriding GMS emit mode" not in record.getMessage()


@dataclass(frozen=True)
class PipelineReport:
    """What one DataHub ingestion pipeline reported, as lines."""

    records_written: int
    source_failures: tuple[str, ...]
    source_warnings: tuple[str, ...]
    sink_failures: tuple[str, ...]
    sink_warnings: tuple[str, ...]
    error: str | None  # an exception the pipeline raised, if any


def _datahub_version() -> str:
    from importlib.metadata import version

    return version("acryl-datahub")


def run_pipeline(recipe: dict[str, Any]) -> PipelineReport:
    """A complete recipe (source and sink) through DataHub's ingestion pipeline; failures reported, not raised."""
    from datahub.ingestion.run.pipeline import Pipeline

    sink_log = logging.getLogger("datahub.ingestion.sink.datahub_rest")
    if not any(isinstance(f, _DefaultEmitModeNotice) for f in sink_log.filters):
        sink_log.addFilter(_DefaultEmitModeNotice())
    from datahub.ingestion.run.pipeline import PipelineInitError

    try:
        pipeline = Pipeline.create(recipe, report_to=None)
    except PipelineInitError as exc:  # an unknown or uninstalled source type, a config the source refuses
        source_type = str((recipe.get("source") or {}).get("type") or "?")
        version = _datahub_version()
        extra = SOURCE_EXTRAS.get(source_type)
        install = (
            f"`make {extra}` in the checkout (or `pip install 'provenance[{extra}]'`)"
            if extra
            else f"`uv pip install --python .venv/bin/python 'acryl-datahub[{source_type}]=={version}'`"
        )
        raise RecipeError(
            f"DataHub cannot start the '{source_type}' source: {exc}. If the type is right, its plugin "
            f"is not installed in Provenance's environment: {install} installs it; else fix `source.type` or "
            "`source.config`"
        ) from exc
    error = None
    try:
        pipeline.run()
    except Exception as exc:  # noqa: BLE001 - reported as this recipe's failure; the caller decides what follows
        error = f"{type(exc).__name__}: {exc}"
    source, sink = pipeline.source.get_report(), pipeline.sink.get_report()
    return PipelineReport(
        records_written=int(getattr(sink, "total_records_written", 0)),
        source_failures=report_lines(source.failures),
        source_warnings=report_lines(source.warnings),
        sink_failures=report_lines(sink.failures),
        sink_warnings=report_lines(sink.warnings),
        error=error,
    )


def run_recipe(path: Path, recipe: dict[str, Any], endpoint: Endpoint, secrets: list[str] | None = None) -> RecipeRun:
    """One recipe into `endpoint` (its REST sink); its failures are reported, not raised, with the values of the
    recipe's ${VARS} (`secrets`) replaced by ***."""
    started = time.perf_counter()
    sink = {"type": "datahub-rest", "config": {"server": endpoint.url, "token": endpoint.token or None}}
    hidden = secrets or []
    try:
        report = run_pipeline({**recipe, "sink": sink})
    except RecipeError as exc:
        raise RecipeError(f"{path}: {scrub(str(exc), hidden)}") from exc
    failures = ((report.error,) if report.error else ()) + report.source_failures + report.sink_failures
    return RecipeRun(
        recipe=path,
        source=str(recipe["source"]["type"]),
        records_written=report.records_written,
        failures=tuple(scrub(line, hidden) for line in failures),
        warnings=tuple(scrub(line, hidden) for line in report.source_warnings + report.sink_warnings),
        seconds=time.perf_counter() - started,
    )


def ingest(
    settings: ProvenanceSettings, paths: list[Path], report: Callable[[RecipeRun], None]
) -> tuple[str, list[RecipeRun]]:
    """Every recipe checked first (a typo in the third does not leave the first two half-applied), then run in
    order until one fails. Returns where they were written and what each reported."""
    recipes = [(path, load_recipe(path)) for path in paths]
    runs: list[RecipeRun] = []
    with ingestion_endpoint(settings) as endpoint:
        for path, recipe in recipes:
            run = run_recipe(path, recipe, endpoint, expanded_values(path))
            runs.append(run)
            report(run)
            if not run.ok:
                break
    return endpoint.description, runs


def report_lines(entries: Any) -> tuple[str, ...]:
    """A report's failures or warnings (StructuredLogEntry: title, message, context) as one line each."""
    lines = []
    for entry in entries or ():
        if hasattr(entry, "message"):
            context = list(getattr(entry, "context", None) or [])[:SHOWN_MESSAGES]
            lines.append(f"{entry.title}: {entry.message}" + (f" {context}" if context else ""))
        else:
            lines.append(str(entry))
    return tuple(lines)
