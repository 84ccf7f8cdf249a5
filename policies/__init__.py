"""Pure, LLM-free policy: versioned threshold files and the engine that turns metrics into verdicts."""

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

__all__ = [
    "DEFAULT_POLICY_PATH",
    "AucDropRule",
    "Band",
    "Decision",
    "FailureRule",
    "LoadedPolicy",
    "Policy",
    "PolicyError",
    "Reason",
    "Verdict",
    "evaluate",
    "incomplete",
    "load_policy",
    "overall_verdict",
]
