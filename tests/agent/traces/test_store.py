"""Trace files: listed by `provenance traces`; corrupt, foreign or damaged ones are readable errors."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent.cli import main
from agent.replay.run import replay_trace
from agent.traces.schema import TRACE_SCHEMA_VERSION, TraceError
from tests.agent.traces.helpers import REPO, THREAD, Recorded, cli_env


def test_traces_command_lists_date_question_verdict_and_publication(
    recorded: Recorded, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PROVENANCE_HOME", str(recorded.settings.home))
    assert main(["traces"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if THREAD in line)
    assert "BLOCK" in line and "published" in line and "What happens if payments.transactions.amount" in line
    assert line[:4].isdigit()  # the date comes first


BAD_TRACES = {
    "corrupt": ('{"schema_version": "provenance.trace/1", "turns": [', "is not valid JSON"),
    "foreign": (
        json.dumps({"schema_version": "provenance.evidence/1", "run_id": "x"}),
        "has schema 'provenance.evidence/1'; this Provenance reads provenance.trace/1",
    ),
    "missing-fields": (
        json.dumps({"schema_version": TRACE_SCHEMA_VERSION, "trace_id": "x", "turns": []}),
        "does not match provenance.trace/1: thread_id: Field required",
    ),
}


@pytest.mark.slow
def test_cli_replay_of_a_corrupt_or_foreign_trace_exits_2_with_a_message(tmp_path: Path) -> None:
    processes = {}
    for kind, (content, _) in BAD_TRACES.items():  # in parallel: each process mostly waits for its imports
        path = tmp_path / f"{kind}.json"
        path.write_text(content)
        command = [sys.executable, "-m", "agent.cli", "replay", str(path)]
        processes[kind] = subprocess.Popen(
            command, cwd=REPO, env=cli_env(tmp_path / "home"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
    for kind, process in processes.items():
        stdout, stderr = process.communicate(timeout=300)
        assert process.returncode == 2, (kind, stdout, stderr)
        assert stderr.startswith("error: ") and BAD_TRACES[kind][1] in stderr, (kind, stderr)
        assert "Traceback" not in stderr + stdout, kind


def test_other_unreadable_traces_are_trace_errors(recorded: Recorded, tmp_path: Path) -> None:
    cases: dict[str, tuple[object, str]] = {
        "array": ([1, 2], "holds a JSON list"),
        "no-version": ({"trace_id": "x"}, "has no schema_version"),
        "bad-metric": (None, "turns.0.outcome.models.0.metrics.flip_rate"),
        "bad-llm-output": (None, "turns.0.llm_outputs.0 is not a recorded chat message"),
        "decision-missing": (None, "turns.1.input.decision is missing"),
    }
    raw = json.loads(recorded.trace.read_text())
    bad_metric = copy.deepcopy(raw)
    bad_metric["turns"][0]["outcome"]["models"][0]["metrics"]["flip_rate"] = "a lot"
    bad_llm = copy.deepcopy(raw)
    bad_llm["turns"][0]["llm_outputs"] = [{"what": "no type"}]
    no_decision = copy.deepcopy(raw)
    no_decision["turns"][1]["input"]["decision"] = None
    contents = {"bad-metric": bad_metric, "bad-llm-output": bad_llm, "decision-missing": no_decision}
    for name, (content, message) in cases.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(contents.get(name, content)))
        with pytest.raises(TraceError, match=message.replace("(", r"\(")):
            replay_trace(path, recorded.settings)
    with pytest.raises(TraceError, match="no trace 'nope'.*recent: demo-trace"):
        replay_trace("nope", recorded.settings)
