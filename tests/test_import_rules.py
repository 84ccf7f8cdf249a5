"""The layering of our packages, checked on the source with `ast` (every import statement, including the ones inside
functions and under TYPE_CHECKING, plus importlib.import_module / __import__ with a literal name):

- `policies` imports nothing of ours (agent, tools, seed): it owns its input types (policies/metrics.py) and how
  its reasons write a share (policies/text.py); the one exception is tools/errors.py, the root of every error we
  raise;
- `tools` imports nothing from `agent`; nor does `seed`;
- the task modules (tools/tasks/) are plugins: only the task registry loads them, by name;
- the graph of tools' parts (tools/<X>/ subpackages and tools/<x>.py modules: catalog, embedded, evidence,
  experiment, registry, settings, ...) has no cycle;
- other packages import `policies` through its front door (policies/__init__.py), not its modules;
- inside `agent`, the front ends (agent/cli, agent/chat, agent/mcp) sit on top: no other agent module imports one,
  and none imports another (what they share lives below them: agent/checking.py, agent/inferring.py, ...) — but for
  the CLI command that starts the MCP server.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("agent", "tools", "policies", "seed")
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "policies": ("agent", "tools", "seed"),
    "tools": ("agent",),
    "seed": ("agent",),
}
ALLOWED = frozenset({"tools.errors"})  # the leaf module any package may import
FRONT_ENDS = ("agent.cli", "agent.chat", "agent.mcp")
LAUNCHERS = {("agent.cli.mcp_command", "agent.mcp")}  # `provenance mcp` starts the MCP front end, using none of it


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, e.g. "tools.evidence.schema"
    path: str  # its file, relative to the root
    line: int
    target: str  # the imported module, e.g. "tools.catalog.discovery"
    statement: str  # the source of the import, for the message

    def where(self) -> str:
        return f"{self.path}:{self.line} `{self.statement}`"


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(root: Path, name: str) -> bool:
    base = root.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _targets(root: Path, module: str, is_package: bool, node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            source = ".".join([*base, *([node.module] if node.module else [])])
        else:
            source = node.module or ""
        for alias in node.names:
            submodule = f"{source}.{alias.name}"
            yield submodule if _is_module(root, submodule) else source  # `from tools import atomic` is tools.atomic
    elif (
        isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
            or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__"))
        )
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        yield node.args[0].value


def collect_imports(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> list[Import]:
    found: list[Import] = []
    for package in packages:  # a package folder, or a single module file (chainlit_app.py)
        top = root / package
        for path in [top] if top.is_file() else sorted(top.rglob("*.py")):
            module = _module_name(root, path)
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            relative = path.relative_to(root).as_posix()
            for node in ast.walk(tree):
                for target in dict.fromkeys(_targets(root, module, path.name == "__init__.py", node)):
                    found.append(Import(module, relative, getattr(node, "lineno", 0), target, ast.unparse(node)))
    return sorted(found, key=lambda i: (i.path, i.line, i.target))


def _top(name: str) -> str:
    return name.split(".")[0]


def forbidden_imports(imports: list[Import]) -> list[str]:
    return [
        f"{i.where()}: {_top(i.module)} must not import {_top(i.target)}"
        for i in imports
        if _top(i.target) in FORBIDDEN.get(_top(i.module), ()) and i.target not in ALLOWED
    ]


def policies_back_doors(imports: list[Import]) -> list[str]:
    """Other packages import policies' names from the package (policies/__init__.py), its one front door."""
    return [
        f"{i.where()}: import from `policies`, not from {i.target}"
        for i in imports
        if _top(i.module) != "policies" and i.target.startswith("policies.")
    ]


def _front_end(name: str) -> str | None:
    return next((f for f in FRONT_ENDS if name == f or name.startswith(f + ".")), None)


def front_end_imports(imports: list[Import]) -> list[str]:
    """Imports of a front end by any agent module outside it (the core, or the other front end)."""
    return [
        f"{i.where()}: {i.module} must not import the front end {_front_end(i.target)}"
        for i in imports
        if _top(i.module) == "agent"
        and _front_end(i.target)
        and _front_end(i.target) != _front_end(i.module)
        and (i.module, _front_end(i.target)) not in LAUNCHERS
    ]


def tools_part(name: str) -> str | None:
    """`tools.catalog.discovery` -> "catalog"; `tools.settings` -> "settings"; `tools` itself -> None."""
    parts = name.split(".")
    return parts[1] if parts[0] == "tools" and len(parts) > 1 else None


def policies_module(name: str) -> str | None:
    """`policies.engine` -> "engine": inside policies, each module is a part (the package is small and flat)."""
    parts = name.split(".")
    return parts[1] if parts[0] == "policies" and len(parts) > 1 else None


def tools_edges(
    imports: list[Import], part: Callable[[str], str | None] = tools_part
) -> dict[tuple[str, str], list[Import]]:
    edges: dict[tuple[str, str], list[Import]] = defaultdict(list)
    for i in imports:
        source, target = part(i.module), part(i.target)
        if source and target and source != target:
            edges[(source, target)].append(i)
    return dict(edges)


def tools_cycles(imports: list[Import], part: Callable[[str], str | None] = tools_part) -> list[str]:
    """One message per strongly connected group of parts (tools' parts by default), listing every import inside the
    group."""
    edges = tools_edges(imports, part)
    graph: dict[str, set[str]] = defaultdict(set)
    for source, target in edges:
        graph[source].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    messages = []
    for group in groups:
        inside = [i for (s, t), found in sorted(edges.items()) if s in group and t in group for i in found]
        lines = "\n".join(f"    {part(i.module)} -> {part(i.target)}: {i.where()}" for i in inside)
        messages.append(
            f"{_top(inside[0].module)} parts import each other in a cycle ({' <-> '.join(group)}):\n{lines}"
        )
    return messages


@pytest.fixture(scope="module")
def imports() -> list[Import]:
    """The repository's imports, parsed once for the module's checks (each parse reads every file: ~0.8 s)."""
    return collect_imports()


def test_no_forbidden_imports(imports: list[Import]) -> None:
    problems = forbidden_imports(imports)
    assert not problems, "imports that break the layering:\n" + "\n".join(problems)


def test_other_packages_use_the_policies_front_door(imports: list[Import]) -> None:
    problems = policies_back_doors(imports)
    assert not problems, "\n".join(problems)


def test_no_agent_module_imports_a_front_end(imports: list[Import]) -> None:
    problems = front_end_imports(imports)
    assert not problems, (
        "imports of a front end (agent/cli, agent/chat, agent/mcp) from below or beside it:\n" + "\n".join(problems)
    )


def test_tools_parts_have_no_cycle(imports: list[Import]) -> None:
    problems = tools_cycles(imports)
    assert not problems, "\n".join(problems)


def test_the_task_modules_are_plugins_only_the_registry_loads(imports: list[Import]) -> None:
    """tools/tasks/ sits above the experiment and the evidence, which look a task up in tools/task_registry.py; the
    registry loads the task modules by name (BUILT_IN), so no static import shows that edge. Nothing else may import
    a task module, or the layering the cycle check guards would hold only on paper."""
    from tools.task_registry import BUILT_IN

    modules = {p.stem for p in (ROOT / "tools" / "tasks").glob("*.py") if p.stem != "__init__"}
    assert {name.rsplit(".", 1)[1] for name in BUILT_IN} == modules
    outside = [
        i.where() for i in imports if i.target.startswith("tools.tasks") and not i.module.startswith("tools.tasks")
    ]
    assert not outside, "\n".join(outside)


def test_policies_modules_have_no_cycle(imports: list[Import]) -> None:
    problems = tools_cycles(imports, policies_module)
    assert not problems, "\n".join(problems)


def test_the_checks_see_function_level_relative_and_cyclic_imports(tmp_path: Path) -> None:
    files = {
        "policies/__init__.py": "",
        "policies/engine.py": (
            "def f():\n    from tools.experiment import metrics\nfrom tools.errors import BadRequest\n"
        ),
        "tools/errors.py": "",
        "tools/__init__.py": "",
        "tools/settings.py": "",
        "tools/catalog/__init__.py": "",
        "tools/catalog/writeback.py": "from ..evidence import schema\nimport tools.settings\n",
        "tools/evidence/__init__.py": "",
        "tools/evidence/schema.py": "if TYPE_CHECKING:\n    from tools.catalog import x, y\n",
        "tools/experiment/__init__.py": "from tools import settings\n",
        "tools/experiment/metrics.py": "import importlib\nimportlib.import_module('agent.cli')\n",
        "seed/__init__.py": "",
        "agent/__init__.py": "",
        "agent/service.py": "from agent.cli.render import render\nfrom policies.engine import Verdict\n",
        "agent/cli/__init__.py": "",
        "agent/cli/render.py": "from agent.chat import cards\nfrom agent.cli import parser\n",
        "agent/chat/__init__.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    imports = collect_imports(tmp_path)
    assert forbidden_imports(imports) == [
        "policies/engine.py:2 `from tools.experiment import metrics`: policies must not import tools",
        "tools/experiment/metrics.py:2 `importlib.import_module('agent.cli')`: tools must not import agent",
    ]
    assert sorted(tools_edges(imports)) == [
        ("catalog", "evidence"),
        ("catalog", "settings"),
        ("evidence", "catalog"),
        ("experiment", "settings"),
    ]
    assert policies_back_doors(imports) == [
        "agent/service.py:2 `from policies.engine import Verdict`: import from `policies`, not from policies.engine"
    ]
    assert front_end_imports(imports) == [
        "agent/cli/render.py:1 `from agent.chat import cards`: agent.cli.render must not import the front end "
        "agent.chat",
        "agent/service.py:1 `from agent.cli.render import render`: agent.service must not import the front end "
        "agent.cli",
    ]
    assert tools_cycles(imports) == [
        "tools parts import each other in a cycle (catalog <-> evidence):\n"
        "    catalog -> evidence: tools/catalog/writeback.py:1 `from ..evidence import schema`\n"
        "    evidence -> catalog: tools/evidence/schema.py:2 `from tools.catalog import x, y`"
    ]
