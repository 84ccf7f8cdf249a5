"""The locked requirements the Makefile installs (requirements/*.txt, written by `make lock`) against pyproject.toml:
a requirement changed in pyproject.toml without re-locking fails here, not as a wrong version on a user's machine."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parents[1]
PYTHONS = ("3.11", "3.12")  # requires-python >= 3.11; the locks are universal (`--universal --python-version 3.11`)
Pins = dict[str, Version]


def _environment(python: str) -> dict[str, str]:
    return {"python_version": python, "python_full_version": f"{python}.0", "extra": ""}


def read_lock(path: Path, python: str) -> Pins:
    """The `name==version[ ; marker]` lines of a uv lock that apply to one Python version."""
    pins: Pins = {}
    for line in path.read_text().splitlines():
        if not line or line[0] in "# \t-":
            continue
        spec, _, marker = line.partition(";")
        if marker.strip() and not Marker(marker.strip()).evaluate(_environment(python)):
            continue
        name, _, version = spec.strip().partition("==")
        assert version, f"{path.name}: {line!r} is not an exact pin; run `make lock`"
        key = canonicalize_name(name.split("[")[0])
        assert key not in pins, f"{path.name}: {key} pinned twice for Python {python}"
        pins[key] = Version(version)
    return pins


def _project() -> dict[str, object]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert isinstance(project, dict)
    return project


def requirements(extras: tuple[str, ...]) -> list[Requirement]:
    """The project's requirements with these extras, its own extras (`provenance[mlflow,dbt]`) expanded."""
    project = _project()
    optional = project["optional-dependencies"]
    assert isinstance(optional, dict)
    found = [Requirement(r) for r in project["dependencies"]]  # type: ignore[attr-defined]
    pending, seen = list(extras), set()
    while pending:
        extra = pending.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for text in optional[extra]:
            requirement = Requirement(text)
            if canonicalize_name(requirement.name) == canonicalize_name(str(project["name"])):
                pending.extend(requirement.extras)
            else:
                found.append(requirement)
    return found


def unmet(requirements: list[Requirement], pins: Pins, python: str) -> list[str]:
    missing = []
    for requirement in requirements:
        if requirement.marker and not requirement.marker.evaluate(_environment(python)):
            continue
        version = pins.get(canonicalize_name(requirement.name))
        if version is None or not requirement.specifier.contains(version, prereleases=True):
            missing.append(f"{requirement} (locked: {version})")
    return missing


@pytest.mark.parametrize("python", PYTHONS)
def test_the_dev_lock_satisfies_every_requirement_of_the_project(python: str) -> None:
    pins = read_lock(REPO / "requirements" / "dev.txt", python)
    assert not unmet(requirements(("dev",)), pins, python), "run `make lock` after changing pyproject.toml"


@pytest.mark.parametrize("python", PYTHONS)
def test_the_demo_lock_holds_the_runtime_requirements_at_the_dev_locks_versions(python: str) -> None:
    demo = read_lock(REPO / "requirements" / "demo.txt", python)
    dev = read_lock(REPO / "requirements" / "dev.txt", python)
    assert not unmet(requirements(()), demo, python), "run `make lock` after changing pyproject.toml"
    # `make test` after `make demo` installs dev over demo in the same .venv: a different pin would be a downgrade
    assert {name: (version, dev.get(name)) for name, version in demo.items() if dev.get(name) != version} == {}
    # and the demo installs none of the test or lint tooling
    assert not {"pytest", "mypy", "ruff", "playwright", "mlflow-skinny", "xgboost-cpu"} & demo.keys()


def test_a_requirement_the_lock_does_not_meet_is_reported() -> None:
    pins = {"pandas": Version("2.1.0")}
    assert unmet([Requirement("pandas>=2.2,<3.2")], pins, "3.12") == ["pandas<3.2,>=2.2 (locked: 2.1.0)"]
    assert unmet([Requirement("xgboost-cpu==3.4.1; python_version >= '3.12'")], {}, "3.11") == []
    assert unmet([Requirement("xgboost-cpu==3.4.1; python_version >= '3.12'")], {}, "3.12") != []
