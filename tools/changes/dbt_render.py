"""dbt models rendered with their project's own macros, as `dbt compile` renders them, at one git revision.

Stripping Jinja (jinja.py) turns `{{ cents_to_dollars('amount') }}` into a placeholder, so a change inside the macro
is invisible, and an ephemeral model is a table nobody has. Here the project's macros (`{% macro %}` blocks of
its `macro-paths`) are loaded into a sandboxed Jinja environment (a pull request's text is untrusted: no attribute
of Python internals, no host environment: `env_var` gives its default), `ref` names the model's table — or, for an
ephemeral model, the CTE `__dbt__cte__<name>` that dbt injects, with the model's rendered SQL — and `source` its
table. What needs a warehouse or a package (`adapter`, `run_query`, `dbt_utils.*`, `return`) cannot be rendered:
`RenderError` says which, and the caller decides (a model whose macros did not change is read with Jinja
stripped; one whose macros changed is reviewed by hand)."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

import sqlglot
import yaml
from jinja2 import StrictUndefined, TemplateError
from jinja2.sandbox import SandboxedEnvironment
from sqlglot.errors import ParseError, TokenError

from tools.changes.jinja import StrippedSql
from tools.errors import BadRequest

_MACRO_BLOCK = re.compile(r"\{%-?\s*macro\s.*?\{%-?\s*endmacro\s*-?%\}", re.DOTALL)
_EPHEMERAL = re.compile(r"""materialized\s*=\s*['"]ephemeral['"]""")
CTE_PREFIX = "__dbt__cte__"


class RenderError(BadRequest, ValueError):
    """The model uses Jinja that only dbt itself (with a warehouse or packages) can render; the message says which."""


@dataclass
class DbtProject:
    """One dbt project at one revision: its folder in the repository, its macros and models (path -> text)."""

    root: str
    macro_paths: list[str]
    model_paths: list[str]
    files: dict[str, str]
    ephemeral_folders: list[str] = field(default_factory=list)
    variables: dict[str, Any] = field(default_factory=dict)
    """dbt_project.yml's `vars` (global ones: a scalar per name)."""

    @classmethod
    def read(cls, root: str, config_text: str, files: dict[str, str]) -> DbtProject:
        try:
            config = yaml.safe_load(config_text) or {}
        except yaml.YAMLError as exc:
            raise RenderError(f"{root or '.'}/dbt_project.yml is not valid YAML: {exc}") from exc
        config = config if isinstance(config, dict) else {}
        macro_paths = [str(p) for p in config.get("macro-paths") or ["macros"]]
        model_paths = [str(p) for p in config.get("model-paths") or config.get("source-paths") or ["models"]]
        project = cls(root, macro_paths, model_paths, files)
        project.ephemeral_folders = _ephemeral_folders(config)
        variables = config.get("vars")
        if isinstance(variables, dict):
            project.variables = {str(k): v for k, v in variables.items() if not isinstance(v, dict)}
        return project

    def _under(self, path: str, folders: list[str]) -> bool:
        relative = PurePosixPath(path).relative_to(self.root) if self.root else PurePosixPath(path)
        return any(relative.is_relative_to(folder) for folder in folders)

    def contains(self, path: str) -> bool:
        return not self.root or PurePosixPath(path).is_relative_to(self.root)

    def is_macro(self, path: str) -> bool:
        return self.contains(path) and self._under(path, self.macro_paths)

    def models(self) -> dict[str, str]:
        """Model name -> path of every `.sql` model."""
        return {
            PurePosixPath(p).stem: p
            for p in self.files
            if p.endswith(".sql") and self.contains(p) and self._under(p, self.model_paths)
        }

    def is_ephemeral(self, path: str) -> bool:
        text = self.files.get(path, "")
        if _EPHEMERAL.search(text):
            return True
        relative = str(PurePosixPath(path).relative_to(self.root) if self.root else PurePosixPath(path))
        return any(relative.startswith(folder.rstrip("/") + "/") for folder in self.ephemeral_folders)

    def macros_text(self) -> str:
        blocks = [
            m.group(0)
            for path, text in sorted(self.files.items())
            if path.endswith(".sql") and self.is_macro(path)
            for m in _MACRO_BLOCK.finditer(text)
        ]
        return "\n".join(blocks)


def _ephemeral_folders(config: dict[str, Any]) -> list[str]:
    """Model folders `dbt_project.yml` materialises as ephemeral (`models: {project: {folder: {+materialized: …}}}`)."""
    found: list[str] = []

    def walk(node: Any, path: list[str]) -> None:
        if not isinstance(node, dict):
            return
        for key, value in node.items():
            if str(key).lstrip("+") == "materialized" and value == "ephemeral" and path:
                found.append("/".join(path))
            elif isinstance(value, dict):
                walk(value, [*path, str(key)])

    for project_models in (config.get("models") or {}).values() if isinstance(config.get("models"), dict) else []:
        walk(project_models, [])
    model_paths = config.get("model-paths") or ["models"]
    return [f"{str(model_paths[0]).rstrip('/')}/{folder}" for folder in found]


_STATE = threading.local()
"""`returns`: one slot per macro call in progress on this thread; `return(x)` fills the innermost."""


def _returns() -> list[list[Any]]:
    if not hasattr(_STATE, "returns"):
        _STATE.returns = []
    stack: list[list[Any]] = _STATE.returns
    return stack


def _returning(macro: Any) -> Any:
    """A macro as dbt calls it: the value of its `{{ return(x) }}`, else its rendered text."""

    def call(*args: Any, **kwargs: Any) -> Any:
        _returns().append([])
        try:
            text = macro(*args, **kwargs)
        finally:
            slot = _returns().pop()
        return slot[-1] if slot else text

    return call


class _Adapter:
    """The one part of dbt's `adapter` a model's SQL can use without a warehouse: `dispatch`."""

    def __init__(self, renderer: Renderer) -> None:
        self._renderer = renderer

    def dispatch(self, name: str, macro_namespace: str | None = None) -> Any:
        macros = self._renderer.macros()
        for candidate in (f"{self._renderer.adapter_type}__{name}", f"default__{name}"):
            if candidate in macros:
                return macros[candidate]
        raise RenderError(f"adapter.dispatch({name!r}): no default__{name} macro in the project")


class Renderer:
    """Renders the models of one project at one revision; `adapter_type` picks `<adapter>__` macros (the SQL
    dialect, e.g. postgres), else `default__` ones."""

    def __init__(self, project: DbtProject, adapter_type: str | None = None) -> None:
        self.adapter_type = adapter_type or "default"
        self.project = project
        self.env = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False)  # noqa: S701 (SQL, not HTML)
        self._macros: Any = None
        self._wrapped: dict[str, Any] | None = None
        self._rendered: dict[str, str] = {}

    def _load_macros(self) -> Any:
        if self._macros is None:
            try:
                self._macros = self.env.from_string(self.project.macros_text()).make_module(self._globals({}, []))
            except TemplateError as exc:
                raise RenderError(f"the project's macros cannot be read: {exc}") from exc
        return self._macros

    def _globals(self, config: dict[str, Any], ctes: list[str]) -> dict[str, Any]:
        models = self.project.models()

        def ref(*args: str, **_: Any) -> str:
            name = args[-1]
            path = models.get(name)
            if path is not None and self.project.is_ephemeral(path):
                if name not in ctes:
                    ctes.append(name)
                return f"{CTE_PREFIX}{name}"
            return name

        def source(source_name: str, table: str) -> str:
            return f"{source_name}.{table}"

        def set_config(*_: Any, **kwargs: Any) -> str:
            config.update(kwargs)
            return ""

        def var(name: str, default: Any = None) -> Any:
            if name in self.project.variables:
                return self.project.variables[name]
            if default is None:
                raise RenderError(f"var({name!r}) is set neither in dbt_project.yml nor by a default")
            return default

        def env_var(name: str, default: Any = None) -> Any:
            if default is None:
                raise RenderError(f"env_var({name!r}) has no default (the host's environment is never read)")
            return default

        def returned(value: Any) -> str:
            if not _returns():
                raise RenderError("return() outside a macro")
            _returns()[-1].append(value)
            return ""

        return {
            "ref": ref,
            "source": source,
            "config": set_config,
            "var": var,
            "env_var": env_var,
            "is_incremental": lambda: False,
            "return": returned,
            "adapter": _Adapter(self),
        }

    def macros(self) -> dict[str, Any]:
        """The project's macros as dbt calls them, built once per renderer."""
        if self._wrapped is None:
            module = self._load_macros()
            self._wrapped = {n: _returning(getattr(module, n)) for n in dir(module) if not n.startswith("_")}
        return self._wrapped

    def render(self, path: str, text: str) -> StrippedSql:
        """The model's SQL as dbt compiles it (ephemeral models it refs injected as CTEs)."""
        config: dict[str, Any] = {}
        ctes: list[str] = []
        names = self.macros()
        try:
            context = {**self._globals(config, ctes), **names, "this": PurePosixPath(path).stem}
            sql = self.env.from_string(text).render(**context)
        except RenderError:
            raise
        except (TemplateError, TypeError, ValueError, AttributeError) as exc:
            raise RenderError(f"{path}: Jinja only dbt can render ({type(exc).__name__}: {exc})") from exc
        injected = [f"{CTE_PREFIX}{name} as ({self._ephemeral(name)})" for name in ctes]
        if injected:
            sql = _inject(sql, injected)
        alias = config.get("alias")
        return StrippedSql(sql=sql, alias=str(alias) if alias else None, had_jinja=True)

    def _ephemeral(self, name: str) -> str:
        if name not in self._rendered:
            path = self.project.models()[name]
            self._rendered[name] = "(rendering)"  # a cycle of ephemeral refs renders as unreadable SQL
            rendered = self.render(path, self.project.files[path]).sql
            try:
                self._rendered[name] = sqlglot.parse_one(rendered).sql()  # one line: the model's line numbers stay
            except (ParseError, TokenError) as exc:
                raise RenderError(f"the ephemeral model {name} ({path}) cannot be parsed: {exc}") from exc
        return self._rendered[name]


def _inject(sql: str, ctes: list[str]) -> str:
    """dbt's CTE injection: into the model's own WITH, else a new WITH before its query, on the first line."""
    match = re.match(r"(\s*(?:--[^\n]*\n\s*)*)with\s", sql, re.IGNORECASE)
    if match:
        return f"{sql[: match.end()]}{', '.join(ctes)}, {sql[match.end() :]}"
    lead = re.match(r"\s*", sql)
    start = lead.end() if lead else 0
    return f"{sql[:start]}with {', '.join(ctes)} {sql[start:]}"


@dataclass
class DbtRevision:
    """The dbt projects of a repository at one commit (none when it has no dbt_project.yml)."""

    projects: list[DbtProject]
    adapter_type: str | None = None
    renderers: dict[str, Renderer] = field(default_factory=dict)

    @classmethod
    def from_files(cls, files: dict[str, str], adapter_type: str | None = None) -> DbtRevision:
        roots = sorted(
            (
                str(PurePosixPath(p).parent) if "/" in p else ""
                for p in files
                if PurePosixPath(p).name == "dbt_project.yml"
            ),
            key=len,
            reverse=True,
        )
        projects = []
        for root in roots:
            config = files[f"{root}/dbt_project.yml" if root else "dbt_project.yml"]
            inside = {p: t for p, t in files.items() if not root or PurePosixPath(p).is_relative_to(root)}
            projects.append(DbtProject.read(root, config, inside))
        return cls(projects, adapter_type)

    def project(self, path: str) -> DbtProject | None:
        """The innermost project holding `path`."""
        return next((p for p in self.projects if p.contains(path)), None)

    def renderer(self, path: str) -> Renderer | None:
        project = self.project(path)
        if project is None:
            return None
        return self.renderers.setdefault(project.root, Renderer(project, self.adapter_type))


def is_project_file(path: str) -> bool:
    return path.endswith(".sql") or PurePosixPath(path).name == "dbt_project.yml"
