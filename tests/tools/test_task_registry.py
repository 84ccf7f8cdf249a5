"""The task registry: the built-ins in order, a clear error for a name nobody registered or a module that cannot be
imported, and a task module named in PROVENANCE_TASKS loaded by a fresh process (as the experiment's spawned
workers are)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tools import task_registry
from tools.errors import BadRequest
from tools.task_registry import UnknownTask

ROOT = Path(__file__).resolve().parents[2]


def test_the_built_in_tasks_come_first_in_order() -> None:
    assert task_registry.names()[:3] == ("binary", "multiclass", "regression")


def test_an_unknown_name_is_refused_naming_the_registered_ones() -> None:
    with pytest.raises(UnknownTask, match=r"unknown task 'ranking'.*registered: binary, multiclass, regression"):
        task_registry.get("ranking")


def test_a_module_that_cannot_be_imported_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROVENANCE_TASKS", "tests.tools.tasks.no_such_task")
    monkeypatch.setattr(task_registry, "_loaded", False)
    with pytest.raises(BadRequest, match="PROVENANCE_TASKS names 'tests.tools.tasks.no_such_task'"):
        task_registry.names()


def test_a_second_class_under_a_registered_name_is_refused() -> None:
    class Impostor(type(task_registry.get("binary"))):  # type: ignore[misc]
        pass

    with pytest.raises(ValueError, match="already registered"):
        task_registry.register(Impostor())


def test_a_fresh_process_loads_the_modules_provenance_tasks_names() -> None:
    env = {**os.environ, "PROVENANCE_TASKS": "tests.tools.tasks.quantile_task"}
    code = "from tools import task_registry; print(','.join(task_registry.names()))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "binary,multiclass,regression,quantile"
