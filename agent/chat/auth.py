"""The chat's single local account and the secret Chainlit signs login tokens with."""

from __future__ import annotations

import hmac
import os
import secrets
from collections.abc import Mapping, MutableMapping
from pathlib import Path

CHAT_USER = "provenance"
PASSWORD_ENV = "PROVENANCE_CHAT_PASSWORD"
DEFAULT_PASSWORD = "provenance"
AUTH_SECRET_ENV = "CHAINLIT_AUTH_SECRET"
SECRET_FILE = "chainlit-secret"


def ensure_auth_secret(home: Path, env: MutableMapping[str, str] | None = None) -> str:
    """Chainlit signs login tokens with CHAINLIT_AUTH_SECRET. Keep a set one; else reuse or create
    $PROVENANCE_HOME/chainlit-secret (mode 0600), so logins survive restarts, and export it to `env`."""
    env = os.environ if env is None else env
    if secret := env.get(AUTH_SECRET_ENV, "").strip():
        return secret
    path = home / SECRET_FILE
    if not path.exists():
        home.mkdir(parents=True, exist_ok=True)
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process created it first: use theirs
            pass
        else:
            with os.fdopen(descriptor, "w") as handle:
                handle.write(secrets.token_urlsafe(48) + "\n")
    secret = path.read_text().strip()
    if not secret:
        raise RuntimeError(f"{path} is empty; delete it to generate a new secret, or set {AUTH_SECRET_ENV}")
    env[AUTH_SECRET_ENV] = secret
    return secret


def check_login(username: str, password: str, env: Mapping[str, str] | None = None) -> bool:
    """The single local account: user `provenance`, password $PROVENANCE_CHAT_PASSWORD (default `provenance`)."""
    env = os.environ if env is None else env
    expected = env.get(PASSWORD_ENV) or DEFAULT_PASSWORD
    user_ok = hmac.compare_digest(username.encode(), CHAT_USER.encode())
    return hmac.compare_digest(password.encode(), expected.encode()) and user_ok
