"""What a replay compares outside the turns: the policy file, the recorded artifacts, evaluation data and
evidence files (hashed again), and the package versions (notes only)."""

from __future__ import annotations

from pathlib import Path

from agent.replay.compare import Comparer
from agent.traces.schema import Trace
from agent.traces.store import sha256_file
from policies import LoadedPolicy, PolicyError, load_policy
from tools.evidence.build import environment
from tools.evidence.store import EVIDENCE_FILE, REPORT_FILE


def replay_policy(trace: Trace, comparer: Comparer) -> LoadedPolicy:
    recorded = trace.turns[0].policy
    try:
        loaded = load_policy(Path(recorded.path))
    except PolicyError as exc:
        comparer.notes.append(f"recorded policy file unusable ({exc}); using the default policy")
        loaded = load_policy()
    if loaded.sha256 != recorded.sha256:
        comparer.diff(
            None,
            f"policy {recorded.name} v{recorded.version} ({loaded.path})",
            f"sha256 {recorded.sha256}",
            f"sha256 {loaded.sha256} ({loaded.policy.name} v{loaded.policy.version})",
        )
    return loaded


def check_files(trace: Trace, comparer: Comparer) -> None:
    """The recorded artifacts and evaluation data, hashed again; the recorded evidence files, checked."""
    checked: set[str] = set()
    for turn in trace.turns:
        for model in turn.outcome.models if turn.outcome else []:
            binding = model.binding
            if binding is None:
                continue
            for path, expected, what in (
                (binding.artifact_path, binding.artifact_sha256_expected, "artifact"),
                (binding.eval_data_path, binding.eval_data_sha256, "evaluation data"),
            ):
                if expected is None or path in checked:
                    continue
                checked.add(path)
                actual = sha256_file(Path(path))
                if actual != expected:
                    comparer.diff(
                        None,
                        f"model {model.name} · {what} {path}",
                        f"sha256 {expected}",
                        f"sha256 {actual or 'missing'}",
                    )
    last_hashes: dict[str, tuple[str, str | None, str | None]] = {}
    for turn in trace.turns:
        ref = turn.outcome.evidence if turn.outcome else None
        if ref is not None:
            last_hashes[ref.run_id] = (ref.folder, ref.evidence_sha256, ref.report_sha256)
    for run_id, (folder, evidence_sha, report_sha) in last_hashes.items():
        for name, expected in ((EVIDENCE_FILE, evidence_sha), (REPORT_FILE, report_sha)):
            actual = sha256_file(Path(folder) / name)
            if expected is not None and actual != expected:
                state = "is missing" if actual is None else "changed since the recording (e.g. published again)"
                comparer.notes.append(f"run {run_id}: recorded {name} {state}")


def environment_notes(trace: Trace, comparer: Comparer) -> None:
    current = environment()
    recorded: dict[str, str] = {}
    for turn in trace.turns:
        recorded.update(turn.environment)
    for package, version in sorted(recorded.items()):
        if current.get(package) != version:
            comparer.notes.append(f"{package}: recorded {version}, now {current.get(package, 'not installed')}")
