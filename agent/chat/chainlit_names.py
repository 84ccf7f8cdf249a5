"""Chainlit's package resolves its public names lazily (PEP 562), but its module `__getattr__` raises KeyError, not
AttributeError, for a name it does not have. `getattr(chainlit, name, None)` then raises instead of returning None,
and libraries that look a name up in every loaded module do exactly that: skops, as it is imported, looks up each of
scipy's ufuncs (`KeyError: 'agm'`). In a process that imported Chainlit before scipy.special (the chat's), a skops
model could not be loaded."""

from __future__ import annotations

import sys
from typing import Any

_REPAIRED = "_provenance_raises_attribute_error"


def repair_chainlit_getattr() -> None:
    """Make the imported chainlit package raise AttributeError for a name it lacks, as PEP 562 asks."""
    chainlit = sys.modules.get("chainlit")
    if chainlit is None:
        return
    lazy = vars(chainlit).get("__getattr__")
    if lazy is None or getattr(lazy, _REPAIRED, False):
        return

    def __getattr__(name: str) -> Any:
        try:
            return lazy(name)
        except KeyError:
            raise AttributeError(f"module 'chainlit' has no attribute {name!r}") from None

    setattr(__getattr__, _REPAIRED, True)
    chainlit.__getattr__ = __getattr__  # type: ignore[method-assign]
