"""Replaying a recorded conversation (a trace of `agent.traces`, which the conversation writes) to check that its
verdicts still reproduce. Apart from `agent.traces`: the replay runs the conversation, the conversation uses the
recorder.

Algorithm (`areplay_trace`; `replay_trace` is the blocking form for the CLI):

1. Read the trace (a path or a trace id); a corrupt or foreign file is a `TraceError`.
2. Build a fresh session in a separate PROVENANCE_HOME (a temporary folder unless `home=` is given), so the
   replay's checkpoints, runs and its own trace never touch the user's. Binding URIs resolve against the
   recorded catalog folder, so the experiment loads the recorded artifacts and evaluation data, sha256-verified
   against the (recorded) catalog answer as always. The policy is loaded from the recorded path and its sha256
   compared with the recorded one.
3. Feed the recorded turns in order, on the recorded thread id: questions through `Session.ask`, approval
   decisions through `Session.decide`. For each turn:
   - the planner: the deterministic planner if the turn recorded one, else `LlmPlanner` (named "replay") over a
     `ReplayChatModel` that answers with the turn's recorded LLM outputs in order (a recorded model failure is
     raised again; running out of outputs is an error);
   - the catalog: offline, a `ReplayCatalogSession` answers each MCP call with the recorded result for the same
     tool and arguments (in recorded order per tool+arguments); a call the recording does not have is an error
     naming it. With `live=True`, the current catalog answers through a real MCP session instead (and
     binding URIs resolve against the current catalog's folder).
   - writes: never. Both catalogs refuse the write tools and hand out no writer, so an approved publication
     becomes "skipped in replay" (the decision itself is replayed as recorded).
   The experiment and the policy run for real. A turn that had not finished when recorded (a crash, a cancelled
   chat) is replayed so the thread reaches the same state, but there is nothing to compare it with.
4. Compare each replayed turn with the recorded one: route, validated plan, failures (stage and kind),
   pending approval, overall verdict, and per model (matched by URN) the verdict, reason codes, binding
   (paths and sha256s) and every metric. Integers and strings must be equal; floats must agree within
   `FLOAT_ABS_TOL` absolute or `FLOAT_REL_TOL` relative (both 1e-9; the same code on the same data gives
   identical floats — the tolerance only absorbs last-bit differences from another BLAS or numpy build). The
   artifact and evaluation files at the recorded paths are hashed again and a changed sha256 is reported.
   `--live` additionally reports what changed in the catalog: new or vanished downstream models, production
   status, tags, owners and properties, and which catalog answers differ.

`ReplayReport.reproduced` is True when there is no difference; `render()` explains the outcome for a person.
Package-version changes, a publication skipped in replay and evidence files changed since the recording are
notes, not differences.

The package: `run` (the driver, `areplay_trace` / `replay_trace`), `doubles` (the recorded chat model and
catalog, the read-only live catalog), `compare` (the comparison rules and the catalog-answer diff), `checks`
(what is compared outside the turns: policy, files, package versions), `report` (the outcome for a person and
as JSON) and `describe` (how values and turns are worded).
"""
