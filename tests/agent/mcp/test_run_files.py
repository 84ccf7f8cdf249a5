"""The MCP server's run resources serve the files Provenance wrote, never a link planted in a run folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.mcp.server import _run_path
from tools.evidence.store import runs_dir
from tools.settings import ProvenanceSettings


def test_a_link_in_a_run_folder_is_not_served(tmp_path: Path) -> None:
    settings = ProvenanceSettings(provenance_home=tmp_path)
    run = runs_dir(settings.home) / "20261206T000000Z-abc"
    run.mkdir(parents=True)
    (run / "report.md").write_text("# a report")
    assert _run_path(settings, run.name, "report.md").read_text() == "# a report"
    (run / "evidence.json").symlink_to("/etc/passwd")
    with pytest.raises(ValueError, match="is a link"):
        _run_path(settings, run.name, "evidence.json")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "report.md").write_text("not a run")
    (runs_dir(settings.home) / "20261206T000001Z-def").symlink_to(elsewhere)
    with pytest.raises(ValueError, match="is a link"):
        _run_path(settings, "20261206T000001Z-def", "report.md")
