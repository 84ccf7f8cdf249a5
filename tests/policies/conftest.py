from __future__ import annotations

import pytest

from policies import V1_POLICY_PATH, Policy, load_policy


@pytest.fixture(scope="session")
def v1() -> Policy:
    return load_policy(V1_POLICY_PATH).policy
