"""A process that imported Chainlit first (the chat's) loads a skops model: Chainlit's lazy names raise
AttributeError for a name they lack once `agent.chat` has imported it (agent/chat/chainlit_names.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]

# A fresh interpreter: the order of imports is the point, and this test's own process has imported scipy already.
LOAD = """
import sys
import chainlit
{repair}
import numpy as np
from sklearn.linear_model import LogisticRegression
import skops.io as sio
from tools.experiment.loading import load_skops
model = LogisticRegression().fit(np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0, 0, 1, 1]))
loaded = load_skops(sio.dumps(model), "model.skops")
print(loaded.predict(np.array([[0.5], [2.5]])).tolist())
"""


@pytest.mark.parametrize(
    ("repair", "loads"), [("import agent.chat.datalayer", True), ("", False)], ids=["chat", "chainlit-alone"]
)
def test_a_skops_model_loads_in_a_process_that_imported_chainlit_first(repair: str, loads: bool) -> None:
    done = subprocess.run(
        [sys.executable, "-c", LOAD.format(repair=repair)], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    if loads:
        assert done.returncode == 0, done.stderr[-3000:]
        assert done.stdout.strip() == "[0, 1]"
    else:  # Chainlit's own behaviour, which the repair exists for: if this passes, the repair can go
        assert done.returncode != 0 and "KeyError: 'agm'" in done.stderr, done.stderr[-3000:]


def test_the_repair_keeps_chainlits_names_and_refuses_others_with_attribute_error() -> None:
    import chainlit

    from agent.chat.chainlit_names import repair_chainlit_getattr

    repair_chainlit_getattr()
    repair_chainlit_getattr()  # twice is once
    assert callable(chainlit.Message)  # a lazily resolved name still resolves
    assert getattr(chainlit, "agm", None) is None
    with pytest.raises(AttributeError, match="no attribute 'agm'"):
        chainlit.agm  # noqa: B018
