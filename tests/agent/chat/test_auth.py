"""The chat's local login and the secret its login tokens are signed with."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from agent.chat.auth import AUTH_SECRET_ENV, PASSWORD_ENV, SECRET_FILE, check_login, ensure_auth_secret


def test_auth_secret_is_created_private_and_reused(tmp_path: Path) -> None:
    env: dict[str, str] = {}
    secret = ensure_auth_secret(tmp_path, env)
    path = tmp_path / SECRET_FILE
    assert env[AUTH_SECRET_ENV] == secret and len(secret) >= 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again: dict[str, str] = {}
    assert ensure_auth_secret(tmp_path, again) == secret == again[AUTH_SECRET_ENV]


def test_auth_secret_from_the_environment_wins_and_writes_nothing(tmp_path: Path) -> None:
    env = {AUTH_SECRET_ENV: "set-by-the-operator"}
    assert ensure_auth_secret(tmp_path, env) == "set-by-the-operator"
    assert not (tmp_path / SECRET_FILE).exists()


def test_an_empty_secret_file_is_an_error_not_a_weak_secret(tmp_path: Path) -> None:
    (tmp_path / SECRET_FILE).write_text("\n")
    with pytest.raises(RuntimeError, match="chainlit-secret is empty"):
        ensure_auth_secret(tmp_path, {})


@pytest.mark.parametrize(
    ("user", "password", "env", "ok"),
    [
        ("provenance", "provenance", {}, True),
        ("provenance", "wrong", {}, False),
        ("admin", "provenance", {}, False),
        ("provenance", "s3cret", {PASSWORD_ENV: "s3cret"}, True),
        ("provenance", "provenance", {PASSWORD_ENV: "s3cret"}, False),
    ],
)
def test_login(user: str, password: str, env: dict[str, str], ok: bool) -> None:
    assert check_login(user, password, env) is ok
