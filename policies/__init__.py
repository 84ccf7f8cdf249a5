"""Pure, LLM-free policy: versioned threshold files, the metrics they judge, and the engine that turns metrics into
verdicts. Imports nothing of ours (tests/test_import_rules.py)."""

from policies.engine import (
    DEFAULT_POLICY_PATH,
    AucDropRule,
    Band,
    Decision,
    FailureRule,
    LoadedPolicy,
    Policy,
    PolicyError,
    Reason,
    Verdict,
    evaluate,
    incomplete,
    load_policy,
    overall_verdict,
)
from policies.metrics import ModelMetrics

__all__ = [
    "DEFAULT_POLICY_PATH",
    "AucDropRule",
    "Band",
    "Decision",
    "FailureRule",
    "LoadedPolicy",
    "ModelMetrics",
    "Policy",
    "PolicyError",
    "Reason",
    "Verdict",
    "evaluate",
    "incomplete",
    "load_policy",
    "overall_verdict",
]
