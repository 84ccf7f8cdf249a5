"""Run a composite action's `run:` steps locally, the way the GitHub runner does: each step's script through
`bash --noprofile --norc -eo pipefail`, `${{ ... }}` expressions substituted from the inputs (defaults first), the
`github`, `runner`, `env` and `steps` contexts; `$GITHUB_OUTPUT`, `$GITHUB_ENV` and `$GITHUB_STEP_SUMMARY` files
per step, read back after it; a failed step stops the rest. `uses:` steps (and the ids in `skip`) are not run.

Expressions: property paths and single-quoted literals joined by `||`, the subset action.yml uses; anything else
raises, so an expression this runner would misread cannot pass silently.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
_TERM = re.compile(r"^(?:'(?:[^']|'')*'|[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*)$")


@dataclass
class Contexts:
    inputs: dict[str, str] = field(default_factory=dict)
    github: dict[str, Any] = field(default_factory=dict)
    runner: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    steps: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class StepRun:
    name: str
    id: str | None
    status: str  # "success", "failure", "skipped"
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""
    summary: str = ""


@dataclass
class ActionRun:
    steps: list[StepRun]
    outputs: dict[str, str]
    env: dict[str, str]

    def step(self, name: str) -> StepRun:
        return next(s for s in self.steps if s.name == name)

    @property
    def succeeded(self) -> bool:
        return all(s.status != "failure" for s in self.steps)


def evaluate(expression: str, contexts: Contexts) -> str:
    """`a || b || 'c'`: the first truthy operand, else the last one (as Actions evaluates `||`)."""
    value = ""
    for term in (t.strip() for t in expression.split("||")):
        if not _TERM.match(term):
            raise ValueError(f"unsupported expression term {term!r} in ${{{{ {expression} }}}}")
        if term.startswith("'"):
            value = term[1:-1].replace("''", "'")
        else:
            root, *path = term.split(".")
            found: Any = getattr(contexts, root)
            for part in path:
                found = found.get(part) if isinstance(found, dict) else None
            value = "" if found is None else str(found)
        if value:
            return value
    return value


def substitute(text: str, contexts: Contexts) -> str:
    return EXPRESSION.sub(lambda m: evaluate(m[1], contexts), text)


def read_command_file(path: Path) -> dict[str, str]:
    """`KEY=value` lines and `KEY<<DELIMITER` blocks, as $GITHUB_OUTPUT and $GITHUB_ENV are written."""
    values: dict[str, str] = {}
    lines = path.read_text().splitlines() if path.exists() else []
    index = 0
    while index < len(lines):
        line = lines[index]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, index + 1)
            values[key] = "\n".join(lines[index + 1 : end])
            index = end + 1
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ValueError(f"{path}: malformed line {line!r}")
        values[key] = value
        index += 1
    return values


def run_action(
    action: dict[str, Any],
    given: dict[str, str],
    contexts: Contexts,
    *,
    workspace: Path,
    base_env: dict[str, str],
    skip: tuple[str, ...] = (),
    only: tuple[str, ...] | None = None,
) -> ActionRun:
    """Run the steps (those named in `only`, when given) with the inputs `given` over the defaults."""
    temp = Path(contexts.runner["temp"])
    defaults = {name: substitute(spec.get("default", ""), contexts) for name, spec in action["inputs"].items()}
    unknown = set(given) - set(defaults)
    if unknown:
        raise ValueError(f"inputs the action does not declare: {sorted(unknown)}")
    contexts.inputs = {**defaults, **given}
    job_env: dict[str, str] = {}
    runs: list[StepRun] = []
    failed = False
    for index, step in enumerate(action["runs"]["steps"]):
        name = step.get("name", f"step {index}")
        if failed or "uses" in step or step.get("id") in skip or (only is not None and name not in only):
            runs.append(StepRun(name, step.get("id"), "skipped"))
            continue
        files = {kind: temp / f"{kind}-{index}" for kind in ("output", "env", "summary", "script")}
        for kind in ("output", "env", "summary"):
            files[kind].write_text("")
        files["script"].write_text(step["run"])
        contexts.env = {**base_env, **job_env}
        env = {
            **contexts.env,
            **{key: substitute(str(value), contexts) for key, value in step.get("env", {}).items()},
            "GITHUB_OUTPUT": str(files["output"]),
            "GITHUB_ENV": str(files["env"]),
            "GITHUB_STEP_SUMMARY": str(files["summary"]),
            "GITHUB_WORKSPACE": str(workspace),
            "RUNNER_TEMP": str(temp),
        }
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(files["script"])],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        job_env.update(read_command_file(files["env"]))
        if step.get("id"):
            contexts.steps[step["id"]] = {"outputs": read_command_file(files["output"])}
        status = "success" if done.returncode == 0 else "failure"
        runs.append(
            StepRun(
                name, step.get("id"), status, done.returncode, done.stdout, done.stderr, files["summary"].read_text()
            )
        )
        failed = status == "failure"
    outputs = {name: substitute(spec["value"], contexts) for name, spec in action.get("outputs", {}).items()}
    return ActionRun(runs, outputs, job_env)
