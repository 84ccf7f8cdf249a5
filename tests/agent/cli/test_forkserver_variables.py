"""The variables a forked command may bring that the fork server did not start with (agent/cli/forkserver.py): the
ones action.yml's steps set and the example recipes name are on its lists, so that the action's and the
walkthroughs' commands are forked; any other variable still makes a launch start cold."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from agent.cli.forkserver import ACTION_VARIABLES, RECIPE_VARIABLES, _may_differ

ROOT = Path(__file__).resolve().parents[3]


def test_the_actions_step_variables_are_the_listed_ones() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    named = {name for step in action["runs"]["steps"] for name in (step.get("env") or {})}
    assert {n for n in named if not n.startswith("INPUT_")} == ACTION_VARIABLES


def test_the_example_recipes_variables_are_the_listed_ones() -> None:
    named = {
        name
        for recipe in (ROOT / "examples").rglob("*.yml")
        for name in re.findall(r"\$\{(\w+)\}", recipe.read_text(encoding="utf-8"))
    }
    assert named - {"MLFLOW_TRACKING_URI"} == RECIPE_VARIABLES  # MLflow's is read when a client is made: listed


def test_a_variable_a_library_could_read_as_it_loads_still_refuses() -> None:
    assert _may_differ("MODE") and _may_differ("POSTGRES_PASSWORD") and _may_differ("MLFLOW_TRACKING_URI")
    for name in ("MPLBACKEND", "PYTHONUNBUFFERED", "OMP_NUM_THREADS", "DATAHUB_TELEMETRY_ENABLED", "POSTGRES_"):
        assert not _may_differ(name), name
