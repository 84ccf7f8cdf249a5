"""The recorded demo conversation the replay tests replay: the same fixtures as the trace tests
(tests/agent/traces/conftest.py), recorded once for this package too."""

from tests.agent.traces.conftest import offline, recorded

__all__ = ["offline", "recorded"]
