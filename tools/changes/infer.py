"""From a git diff of SQL models to a ChangeSet: read both versions of each changed file (Jinja stripped), diff
their output columns (sqlmap.py), ask the resolver which dataset each model builds, and write every finding as a
proposed change, a structural change or an unmapped entry. Nothing is left out: a file that cannot be parsed, a
column no operator fits and a model whose dataset cannot be found all become `unmapped` entries saying why."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Literal

from tools.catalog.resolve import near_or_listed
from tools.changes.dbt_render import DbtRevision, Renderer, RenderError, is_project_file
from tools.changes.gitdiff import ChangedFile, changed_sql_files, files_at, resolve_ref
from tools.changes.jinja import strip_jinja
from tools.changes.resolve import Resolution, Resolver
from tools.changes.schema import ChangeSet, ProposedChange, SourceRef, StructuralChange, UnmappedChange
from tools.changes.sqlmap import Finding, NullShare, diff_models
from tools.changes.sqlmodel import SqlModel, SqlParseError, parse_model

WHOLE_FILE = "*"
"""The `column` of an unmapped entry about a whole file (it could not be parsed)."""


@dataclass(frozen=True)
class ModelChanges:
    """One changed SQL file: the table it builds (as the catalog knows it: the base version's), what changed."""

    file: str
    status: str
    table: str
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None
    """Why a version could not be parsed; the file is then reviewed by hand."""
    error_line: int = 1
    note: str = ""

    @property
    def changed(self) -> bool:
        """An existing column changed, or a version could not be parsed: either way the model needs an entry."""
        return bool(self.findings) or self.error is not None


@dataclass(frozen=True)
class Inference:
    change_set: ChangeSet
    files: list[ModelChanges]
    unresolved: dict[str, str]
    """Table name -> why its dataset was not found (and how to fix it)."""


@dataclass(frozen=True)
class Rendering:
    """How to read each side's Jinja: with the dbt project's macros (dbt_render.py), or stripped (None)."""

    base: Renderer | None = None
    head: Renderer | None = None
    required: str | None = None
    """Set when a macro or an ephemeral model changed: a model whose Jinja cannot be rendered may hide that change,
    so it is reviewed by hand instead of read with its Jinja stripped. Names what changed."""


def _version(
    text: str, path: str, dialect: str | None, renderer: Renderer | None = None, required: str | None = None
) -> tuple[SqlModel, str]:
    """The parsed model and the table it builds: a dbt `config(alias=...)`, else CREATE/INSERT's table, else the
    file's stem (dbt names a model's table after its file)."""
    stripped = None
    if renderer is not None:
        try:
            stripped = renderer.render(path, text)
        except RenderError as exc:
            if required is not None:
                raise SqlParseError(f"{exc}; and {required}, which this model may call") from exc
    stripped = stripped or strip_jinja(text)
    model = parse_model(stripped.sql, dialect)
    return model, stripped.alias or model.table or PurePosixPath(path).stem


def analyse_file(
    changed: ChangedFile,
    *,
    dialect: str | None = None,
    null_share: NullShare | None = None,
    rendering: Rendering | None = None,
) -> ModelChanges:
    rendering = rendering or Rendering()
    stem = PurePosixPath(changed.old_path).stem
    if changed.base_text is None:  # a new model: no existing column changes, nothing downstream reads it yet
        return ModelChanges(changed.path, changed.status, PurePosixPath(changed.path).stem)
    try:
        base, table = _version(changed.base_text, changed.old_path, dialect, rendering.base, rendering.required)
    except SqlParseError as exc:
        error = f"sqlglot cannot parse the base version of {changed.old_path}: {exc}"
        return ModelChanges(changed.path, changed.status, stem, error=error, error_line=exc.line)
    if changed.head_text is None:
        note = "the file is deleted: every column of the model is gone"
        return ModelChanges(changed.path, changed.status, table, diff_models(base, None, null_share), note=note)
    try:
        head, head_table = _version(changed.head_text, changed.path, dialect, rendering.head, rendering.required)
    except SqlParseError as exc:
        error = f"sqlglot cannot parse the head version of {changed.path}: {exc}"
        return ModelChanges(changed.path, changed.status, table, error=error, error_line=exc.line)
    if head_table.lower() != table.lower():
        note = f"the model now builds {head_table} instead of {table}: every column of {table} is gone"
        return ModelChanges(changed.path, changed.status, table, diff_models(base, None, null_share), note=note)
    findings = diff_models(base, head, null_share)
    unread = _not_read(base, head, findings, changed.base_text, changed.head_text)
    if unread is None:
        return ModelChanges(changed.path, changed.status, table, findings)
    reason, line = unread
    return ModelChanges(changed.path, changed.status, table, findings, error=reason, error_line=line)


def _not_read(
    base: SqlModel, head: SqlModel, findings: list[Finding], base_text: str, head_text: str
) -> tuple[str, int] | None:
    """What changed that the column findings do not say, and the first changed line: never "no change"."""
    line = _first_changed_line(base_text, head_text)
    if base.skeleton != head.skeleton:
        return (
            "the SQL changed outside the output columns' expressions (a filter, a join, a grouping, a source table "
            "or a union branch): not a column change infer-changes can express",
            line,
        )
    changed_ctes = sorted(
        name for name in set(base.opaque) | set(head.opaque) if base.cte_sql.get(name) != head.cte_sql.get(name)
    )
    if not findings and changed_ctes:
        through = ", ".join(changed_ctes)
        return (
            f"the output columns read through {through} (an aggregate, a window, a union or a nested WITH), which "
            "infer-changes does not follow column by column, and the SQL changed: what reaches the output cannot "
            "be read",
            line,
        )
    if not findings and (base.has_star or head.has_star) and base.sql != head.sql:
        return (
            "the model's output columns come through a `SELECT *` whose columns are unknown here (no CTE lists "
            "them), and its SQL changed: what reaches the output cannot be read",
            line,
        )
    return None


def _first_changed_line(base_text: str, head_text: str) -> int:
    matcher = difflib.SequenceMatcher(None, base_text.splitlines(), head_text.splitlines(), autojunk=False)
    for tag, _, _, j1, _ in matcher.get_opcodes():
        if tag != "equal":
            return j1 + 1
    return 1


def analyse(
    repo: Path,
    base: str,
    head: str,
    paths: list[str] | None = None,
    *,
    dialect: str | None = None,
    null_share: NullShare | None = None,
) -> list[ModelChanges]:
    """Every SQL file changed from `base` to `head`, analysed; raises GitInputError for a bad repository or ref.

    In a dbt project, models are rendered with the project's macros at each side; a changed macro or ephemeral
    model is read through every model of the project (their text unchanged, their compiled SQL maybe not)."""
    changed = changed_sql_files(repo, base, head, paths)
    base_commit, head_commit = resolve_ref(repo, base), resolve_ref(repo, head)
    revisions = [
        DbtRevision.from_files(files_at(repo, c, is_project_file), dialect) for c in (base_commit, head_commit)
    ]
    if not revisions[1].projects:
        return [analyse_file(c, dialect=dialect, null_share=null_share) for c in changed]
    out: list[ModelChanges] = []
    ripples = _ripples(changed, revisions)
    seen = {c.path for c in changed}
    for file in changed:
        rendering = _rendering(file.path, revisions, ripples)
        project = revisions[1].project(file.path) or revisions[0].project(file.old_path)
        if project is not None and (project.is_macro(file.path) or _ephemeral(file, revisions)):
            continue  # read through the models that call or ref it (below)
        out.append(analyse_file(file, dialect=dialect, null_share=null_share, rendering=rendering))
    for root, what in ripples.items():
        head_project = next(p for p in revisions[1].projects if p.root == root)
        for path in sorted(head_project.models().values()):
            if path in seen or path not in (revisions[0].project(path) or head_project).files:
                continue
            if head_project.is_ephemeral(path):
                continue
            text = head_project.files[path]
            unchanged = ChangedFile("modified", path, path, text, text)
            analysed = analyse_file(
                unchanged, dialect=dialect, null_share=null_share, rendering=_rendering(path, revisions, ripples)
            )
            if analysed.changed:
                out.append(replace(analysed, note=f"{what}: the model's compiled SQL changed"))
    return sorted(out, key=lambda m: m.file)


def _ephemeral(file: ChangedFile, revisions: list[DbtRevision]) -> bool:
    return any(
        (project := revision.project(path)) is not None and path in project.files and project.is_ephemeral(path)
        for revision, path in ((revisions[0], file.old_path), (revisions[1], file.path))
    )


def _ripples(changed: list[ChangedFile], revisions: list[DbtRevision]) -> dict[str, str]:
    """Project root -> what changed in it that reaches models through Jinja (a macro, an ephemeral model)."""
    found: dict[str, list[str]] = {}
    for file in changed:
        for revision, path in ((revisions[0], file.old_path), (revisions[1], file.path)):
            project = revision.project(path)
            if project is None:
                continue
            if project.is_macro(path):
                found.setdefault(project.root, []).append(f"the macro file {file.path} changed")
            elif _ephemeral(file, revisions):
                found.setdefault(project.root, []).append(f"the ephemeral model {file.path} changed")
    return {root: "; ".join(dict.fromkeys(what)) for root, what in found.items()}


def _rendering(path: str, revisions: list[DbtRevision], ripples: dict[str, str]) -> Rendering:
    project = revisions[1].project(path) or revisions[0].project(path)
    required = ripples.get(project.root) if project is not None else None
    return Rendering(revisions[0].renderer(path), revisions[1].renderer(path), required)


def _field(column: str, resolution: Resolution) -> tuple[str, str | None]:
    """(the catalog's spelling of the column, or why the catalog's schema does not have it)."""
    if resolution.fields is None:
        return column, None
    for candidate in resolution.fields:
        if candidate.lower() == column.lower():
            return candidate, None
    near = near_or_listed(column, list(resolution.fields))
    return column, f"the catalog's schema of {resolution.urn} has no field {column!r} ({near})"


def _proposal(finding: Finding) -> str:
    if finding.mapping is not None:
        return f"proposed {finding.mapping.op} {json.dumps(finding.mapping.params)} on {finding.column}"
    if finding.kind == "renamed":
        return f"{finding.column} renamed to {finding.renamed_to}"
    return f"{finding.column} {finding.kind}" + (f" ({finding.reason})" if finding.reason else "")


def _entry(
    model: ModelChanges, finding: Finding, resolution: Resolution
) -> ProposedChange | StructuralChange | UnmappedChange:
    name, missing = _field(finding.column, resolution)
    source = SourceRef(file=model.file, line=max(finding.line, 1), column=finding.column)
    problem = missing or (None if resolution.urn else f"dataset of model {model.table!r} unknown: {resolution.reason}")
    if problem is not None or finding.kind == "unmapped" or resolution.urn is None:
        reason = finding.reason if finding.kind == "unmapped" else _proposal(finding)
        reason = f"{reason}; {problem}" if problem else f"{reason}; not mappable, review by hand"
        return UnmappedChange(
            file=model.file, line=source.line, column=finding.column, dataset=resolution.urn, reason=reason
        )
    if finding.mapping is not None:
        mapping = finding.mapping
        return ProposedChange(
            dataset=resolution.urn,
            field=name,
            op=mapping.op,
            params=mapping.params,
            fraction=mapping.fraction,
            note=mapping.note,
            source=source,
            confidence=mapping.confidence,
        )
    where = f"line {finding.line} of the base version" if finding.kind == "dropped" else f"now line {finding.line}"
    note = f"column {finding.column} {finding.kind} in {model.file} ({where})" + (
        f"; {model.note}" if model.note else ""
    )
    kind: Literal["dropped", "renamed"] = "renamed" if finding.kind == "renamed" else "dropped"
    return StructuralChange(
        dataset=resolution.urn, field=name, change=kind, renamed_to=finding.renamed_to, source=source, note=note
    )


async def build_change_set(models: list[ModelChanges], resolve: Resolver) -> Inference:
    """The ChangeSet of the analysed files, each model's dataset asked of `resolve` (only for models with findings)."""
    changes: list[ProposedChange] = []
    structural: list[StructuralChange] = []
    unmapped: list[UnmappedChange] = []
    unresolved: dict[str, str] = {}
    for model in models:
        if not model.changed:
            continue
        resolution = await resolve(model.table, model.file)
        if resolution.urn is None:
            unresolved[model.table] = resolution.reason
        if model.error is not None:
            reason = f"{model.error}; not mappable, review by hand"
            unmapped.append(
                UnmappedChange(
                    file=model.file, line=model.error_line, column=WHOLE_FILE, dataset=resolution.urn, reason=reason
                )
            )
        for finding in model.findings:
            entry = _entry(model, finding, resolution)
            if isinstance(entry, ProposedChange):
                changes.append(entry)
            elif isinstance(entry, StructuralChange):
                structural.append(entry)
            else:
                unmapped.append(entry)
    change_set = ChangeSet(changes=changes, structural=structural, unmapped=unmapped)
    return Inference(change_set=change_set, files=models, unresolved=unresolved)
