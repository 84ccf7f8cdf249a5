"""Conversation traces: every turn of a conversation (CLI or chat), saved as schema-versioned JSON.

`$PROVENANCE_HOME/traces/<trace_id>.json`, one file per conversation thread (the trace id is the thread id, made
safe for a file name), so `provenance resume` in another process appends to the same trace. The file is replaced
atomically when a turn starts (its input, status "running") and when it ends (everything below), so a crash
mid-conversation leaves every finished turn on disk and the interrupted one marked as such.

A turn records, in order of the conversation:
- its input: the user's question (and publish mode), or the approval decision;
- `llm_outputs`: every chat-model output, as `message_to_dict`, captured by a callback's `on_llm_end` (structured
  output calls included); a failed model call is recorded as `{"type": "error", "data": {"message": ...}}`;
- `catalog_calls`: every DataHub MCP call the turn made (tool, arguments, result or error), from
  `CatalogSession.calls` — attributed per turn even when one catalog session serves many threads at once;
- `outcome`: route, plan, the models lineage reached, per-model verdicts and metrics (with their binding and
  hashes), the overall verdict, the pending approval, the publication, failures, the evidence paths and the
  sha256 of evidence.json and report.md;
- the policy (name, version, sha256) and the package versions in force.

The package:
- `schema`: the trace records (pydantic) and `parse_trace`, their validation;
- `store`: the files: ids and paths, locked atomic writes, reading, finding and listing traces;
- `recorder`: `TraceRecorder`, which the conversation `Session` calls as each turn begins and ends, and the
  callback collecting the turn's LLM outputs;
- `replay`: re-running a trace offline from exactly this record and comparing the outcome with it.

Recording never breaks a conversation: a trace that cannot be written is logged as a warning.
"""
