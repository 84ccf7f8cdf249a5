"""The environment variables holding a Gemini API key, in the order langchain-google-genai checks them. A leaf: the
CLI's thin client compares their digest with a warm service's (agent/cli/served.py) without importing LangChain."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping

API_KEY_ENVS = ("GOOGLE_API_KEY", "GEMINI_API_KEY")


def chat_keys_digest(environ: Mapping[str, str] | None = None) -> str:
    """A digest of the keys (never the keys themselves cross the wire): equal digests, the same chat model."""
    env = os.environ if environ is None else environ
    joined = "\n".join(f"{name}={env.get(name, '')}" for name in API_KEY_ENVS)
    return hashlib.sha256(joined.encode()).hexdigest()
