"""CHANGES.yml (version 1): the declarative list of proposed changes `provenance check` assesses, and
`provenance infer-changes` writes.

Three kinds of entry: `changes` (an allowlisted mutation of one field, assessed exactly like `provenance assess`),
`structural` (a column dropped or renamed: no operator can express it) and `unmapped` (a changed column no operator
fits: reviewed by hand). `load_change_set` checks the whole file (shape, then each operator and its parameters
against tools.mutations) before any catalog is opened, and reports every problem with its YAML line.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tools.errors import BadRequest

ScalarParam = bool | int | float | str
ParamValue = ScalarParam | None | dict[str, str] | list[ScalarParam]
"""An operator parameter as YAML can spell it; None for the optional bounds (clip's lower/upper)."""

DATASET_URN_PREFIX = "urn:li:dataset:"
FORMAT_HINT = "see docs/gate.md for the CHANGES.yml format"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SourceRef(_Frozen):
    """Where in the source (a SQL model, usually) the change was found."""

    file: str
    line: int = Field(ge=1)
    column: str


class Approval(_Frozen):
    """Who approved publishing the verdicts to the catalog (`check --publish` needs one)."""

    by: str = Field(min_length=1)
    note: str = ""


class ProposedChange(_Frozen):
    """One field mutated by one allowlisted operator: assessed like `provenance assess`."""

    dataset: str
    field: str = Field(min_length=1)
    op: str
    params: dict[str, ParamValue] = Field(default_factory=dict)
    fraction: float = 1.0
    seed: int = 0
    note: str = ""
    source: SourceRef | None = None
    confidence: Literal["high", "medium", "low"] | None = None
    """How sure the SQL-to-operator mapping is (infer-changes sets it; None when written by hand)."""


class StructuralChange(_Frozen):
    """A column dropped or renamed: every production model reading it loses an input."""

    dataset: str
    field: str = Field(min_length=1)
    change: Literal["dropped", "renamed"]
    renamed_to: str | None = None
    source: SourceRef | None = None
    note: str = ""


class UnmappedChange(_Frozen):
    """A changed output column no operator fits: the gate cannot score it, a person must review it."""

    file: str
    line: int = Field(ge=1)
    column: str
    dataset: str | None = None
    reason: str


class ChangeSet(_Frozen):
    version: Literal[1] = 1
    approval: Approval | None = None
    changes: list[ProposedChange] = Field(default_factory=list)
    structural: list[StructuralChange] = Field(default_factory=list)
    unmapped: list[UnmappedChange] = Field(default_factory=list)


class ChangeSetError(BadRequest, ValueError):
    """The file is not a valid CHANGES.yml; the message lists every problem with its line."""

    def __init__(self, path: Path, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        listing = "\n".join(f"  {problem}" for problem in problems)
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        super().__init__(f"{path} is not a valid CHANGES file ({count}):\n{listing}\n({FORMAT_HINT})")


def load_change_set(path: Path) -> ChangeSet:
    """Read and check a CHANGES file; raise ChangeSetError listing every problem with its line number."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ChangeSetError(path, [f"cannot read the file: {exc}"]) from exc
    try:
        root, data = _parse(text)
    except RecursionError:
        raise ChangeSetError(path, ["nested deeper than a CHANGES file can be (a list of flat changes)"]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise ChangeSetError(path, [f"{where}not valid YAML: {getattr(exc, 'problem', None) or exc}"]) from exc
    if not isinstance(data, dict):
        raise ChangeSetError(path, ["line 1: expected a mapping with `version: 1` and `changes:` at the top"])
    problems = _semantic_problems(data, root)
    try:
        change_set = ChangeSet.model_validate(data)
    except ValidationError as exc:
        problems = _validation_problems(exc, root) + problems
    if problems:
        unique = list(dict.fromkeys(problems))
        raise ChangeSetError(path, sorted(unique, key=_line_number))
    return change_set


def _parse(text: str) -> tuple[yaml.Node | None, Any]:
    """The document's node tree (for line numbers) and its data (as `yaml.safe_load`), from one parse."""
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        return root, (loader.construct_document(root) if root is not None else None)
    finally:
        loader.dispose()


def dump_change_set(change_set: ChangeSet, *, header: str = "") -> str:
    """Stable YAML (model field order, defaults left out); `header` lines become comments at the top."""
    data: dict[str, object] = {"version": change_set.version}
    data.update(change_set.model_dump(mode="json", exclude_defaults=True, exclude={"version"}))
    data.setdefault("changes", [])
    comments = "".join(f"# {line}\n".replace("# \n", "#\n") for line in header.splitlines())
    return comments + yaml.safe_dump(data, sort_keys=False, default_flow_style=False, allow_unicode=True, width=120)


def _semantic_problems(data: dict[str, Any], root: yaml.Node | None) -> list[str]:
    """What the shape allows but a run would refuse: URNs, operators and their parameters (as `assess` checks).
    Read from the raw entries, so they are reported together with any shape problem of the same file."""
    from tools.mutations import ALLOWED_OPERATORS, PlanError, parse_mutation  # loads pandas: only when loading

    problems: list[str] = []
    for section in ("changes", "structural", "unmapped"):
        for index, entry in _raw_entries(data, section):
            urn = entry.get("dataset")
            if isinstance(urn, str) and not urn.startswith(DATASET_URN_PREFIX):
                message = f"'{urn}' is not a dataset URN; expected urn:li:dataset:(<platform>,<name>,<env>)"
                problems.append(_problem(root, (section, index, "dataset"), message))
    for index, entry in _raw_entries(data, "changes"):
        op, params = entry.get("op"), entry.get("params", {})
        fraction, seed = entry.get("fraction", 1.0), entry.get("seed", 0)
        if not isinstance(op, str):
            continue  # the shape check reports it
        if op.strip().lower() not in ALLOWED_OPERATORS:
            message = f"unknown operator {op!r}; allowed: {', '.join(ALLOWED_OPERATORS)}"
            problems.append(_problem(root, ("changes", index, "op"), message))
            continue
        numbers = isinstance(fraction, int | float) and isinstance(seed, int) and not isinstance(seed, bool)
        if not isinstance(params, dict) or not numbers:
            continue  # the shape check reports it
        try:
            parse_mutation(op, params, fraction=fraction, seed=seed)
        except PlanError as exc:
            message = str(exc).replace("\n", " ")
            problems.append(_problem(root, ("changes", index, *_plan_error_key(message, op, params)), message))
    for index, entry in _raw_entries(data, "structural"):
        if entry.get("change") == "renamed" and not entry.get("renamed_to"):
            problems.append(_problem(root, ("structural", index), "a renamed column needs `renamed_to: <new name>`"))
    return problems


def _raw_entries(data: dict[str, Any], section: str) -> list[tuple[int, dict[str, Any]]]:
    items = data.get(section)
    if not isinstance(items, list):
        return []
    return [(index, item) for index, item in enumerate(items) if isinstance(item, dict)]


def _plan_error_key(message: str, op: str, params: dict[str, Any]) -> tuple[str, ...]:
    """Where in the entry tools.mutations' message points: the parameter it names, fraction/seed, else the op."""
    named = re.search(r"parameter '([^']+)'", message)
    if named and named[1] in params:
        return ("params", named[1])
    for key in ("fraction", "seed"):
        if f"invalid {op.strip().lower()} mutation: {key}" in message or f"parameter '{key}'" in message:
            return (key,)
    return ("op",)


def _line_number(problem: str) -> int:
    return int(problem.removeprefix("line ").partition(":")[0])


def _validation_problems(exc: ValidationError, root: yaml.Node | None) -> list[str]:
    problems: list[str] = []
    for err in exc.errors():
        message = str(err["msg"]).removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = "unknown key (allowed keys are listed in docs/gate.md)"
        elif err["type"] == "literal_error" and err["loc"] == ("version",):
            message = f"unsupported version {err['input']!r}; this Provenance reads version 1"
        problem = _problem(root, tuple(err["loc"]), message)
        if problem not in problems:  # a union's members repeat the same location
            problems.append(problem)
    return problems


def _problem(root: yaml.Node | None, loc: tuple[int | str, ...], message: str) -> str:
    return f"line {_line_of(root, loc)}: {_dotted(loc)}: {message}"


def _dotted(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def _line_of(root: yaml.Node | None, loc: tuple[int | str, ...]) -> int:
    """The 1-based line of the deepest node `loc` reaches (a key's own line for mapping entries)."""
    node = root
    line = root.start_mark.line + 1 if root is not None else 1
    for part in loc:
        child: yaml.Node | None = None
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.value == part:
                    child, line = value, key.start_mark.line + 1
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            child = node.value[part]
            line = child.start_mark.line + 1
        if child is None:
            break
        node = child
    return line
