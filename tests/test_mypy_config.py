"""mypy skips the packages that only our dependencies import (pyproject.toml's `follow_imports = "skip"` override):
a module of ours that imported one would be checked against Any, so none may."""

from __future__ import annotations

import tomllib
from fnmatch import fnmatchcase

from tests.test_import_rules import ROOT, collect_imports


def _mypy_config() -> dict[str, object]:
    config: dict[str, object] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    return config


def skipped_patterns(config: dict[str, object]) -> list[str]:
    overrides = config.get("overrides", [])
    assert isinstance(overrides, list)
    return [p for o in overrides if o.get("follow_imports") == "skip" for p in o["module"]]


def is_skipped(module: str, patterns: list[str]) -> bool:
    # mypy's `pkg.*` names the package itself and every module below it
    return any(fnmatchcase(module, p) or module == p.removesuffix(".*") for p in patterns)


def test_no_module_mypy_checks_imports_a_package_mypy_skips() -> None:
    config = _mypy_config()
    patterns = skipped_patterns(config)
    files = config["files"]
    assert isinstance(files, list)
    assert patterns, "pyproject.toml's mypy override that skips our dependencies' own imports is gone"
    offending = [
        f"{i.where()} imports {i.target}" for i in collect_imports(ROOT, tuple(files)) if is_skipped(i.target, patterns)
    ]
    assert not offending, (
        "mypy skips these packages (pyproject.toml, follow_imports = 'skip'), so it would check these imports "
        "against nothing; remove the package from that list:\n" + "\n".join(offending)
    )


def test_the_pattern_matching_is_mypys() -> None:
    patterns = ["google.*", "dask.*"]
    assert is_skipped("google", patterns)
    assert is_skipped("google.genai.types", patterns)
    assert is_skipped("dask.array", patterns)
    assert not is_skipped("googleapiclient", patterns)
    assert not is_skipped("langchain_google_genai", patterns)
