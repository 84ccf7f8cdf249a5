"""A file nested deeper than Python's parser recursion (a CHANGES file, a recipe, a trace) is bad
input naming the file, never an internal error."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.cli import main

DEPTH = 20_000


@pytest.mark.parametrize(
    ("args", "text", "said"),
    [
        (["check"], "[" * DEPTH + "]" * DEPTH, "nested deeper than a CHANGES file can be"),
        (["catalog", "ingest"], "[" * DEPTH + "]" * DEPTH, "nested deeper than any recipe"),
        (["replay"], '{"a":' * DEPTH + "1" + "}" * DEPTH, "nested deeper than any Provenance trace"),
    ],
)
def test_a_file_nested_too_deep_is_refused_clearly(
    args: list[str],
    text: str,
    said: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("PROVENANCE_HOME", str(tmp_path / "home"))
    deep = tmp_path / ("deep.json" if args == ["replay"] else "deep.yml")
    deep.write_text(text)
    assert main([*args, str(deep)]) == 2
    err = capsys.readouterr().err
    assert said in err and "internal error" not in err
