"""The SQL files changed between two git refs, with both versions' text, read through the `git` command line
(`git diff --name-status -M`, `git show REF:path`): no library, the same answers a person gets in a terminal."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tools.errors import BadRequest

SQL_SUFFIXES = (".sql",)
GIT_TIMEOUT_SECONDS = 60


class GitInputError(BadRequest, ValueError):
    """The repository or a ref cannot be used as given (exit 2); the message says what to check."""


@dataclass(frozen=True)
class ChangedFile:
    """One SQL file changed between base and head. `path` is where it lives in head (in base when deleted)."""

    status: Literal["added", "modified", "deleted", "renamed"]
    path: str
    old_path: str
    base_text: str | None
    head_text: str | None


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["git", "-C", str(repo), *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_SECONDS,
        )
    except FileNotFoundError as exc:
        raise GitInputError("the `git` command is not installed or not on PATH; install git and retry") from exc


def check_repository(repo: Path) -> Path:
    """The top folder of the work tree `repo` belongs to, or a GitInputError."""
    if not repo.is_dir():
        raise GitInputError(f"{repo} is not a folder; pass --repo with the path of a git checkout")
    done = _git(repo, "rev-parse", "--show-toplevel")
    if done.returncode != 0:
        raise GitInputError(f"{repo} is not inside a git repository ({done.stderr.strip()}); run it in a checkout")
    return Path(done.stdout.strip())


def resolve_ref(repo: Path, ref: str) -> str:
    """The commit `ref` names, or a GitInputError saying how to make it available (a shallow CI clone lacks it)."""
    done = _git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    if done.returncode != 0:
        branch = ref.removeprefix("origin/")
        raise GitInputError(
            f"unknown git ref {ref!r} in {repo}; check the name, or fetch it first (CI checkouts are often "
            f"shallow: `git fetch origin {branch}`, or fetch-depth: 0 in actions/checkout)"
        )
    return done.stdout.strip()


def _is_sql(path: str) -> bool:
    return path.lower().endswith(SQL_SUFFIXES)


def _show(repo: Path, commit: str, path: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "show", f"{commit}:{path}"],
        capture_output=True,
        timeout=GIT_TIMEOUT_SECONDS,
    )
    if done.returncode != 0:
        raise GitInputError(f"git cannot read {path} at {commit[:12]}: {done.stderr.decode(errors='replace').strip()}")
    # Invalid UTF-8 is kept visible (U+FFFD) so the parser reports it at its line instead of the run failing.
    return done.stdout.decode("utf-8", errors="replace")


def _parse_name_status(output: str) -> list[tuple[str, str, str]]:
    """(status letter, old path, new path) per line of `git diff --name-status -z`."""
    fields = output.split("\0")
    entries: list[tuple[str, str, str]] = []
    i = 0
    while i < len(fields) and fields[i]:
        letter = fields[i][0]
        if letter in "RC":
            entries.append((letter, fields[i + 1], fields[i + 2]))
            i += 3
        else:
            entries.append((letter, fields[i + 1], fields[i + 1]))
            i += 2
    return entries


def changed_sql_files(repo: Path, base: str, head: str, paths: list[str] | None = None) -> list[ChangedFile]:
    """Every `.sql` file added, modified, deleted or renamed from `base` to `head` (limited to `paths` when given,
    pathspecs relative to `repo`), sorted by path."""
    top = check_repository(repo)
    base_commit, head_commit = resolve_ref(repo, base), resolve_ref(repo, head)
    # Run in `repo` so pathspecs are relative to it; --no-relative keeps the output relative to the top folder
    # (what `git show REF:path` expects) even when a user's config sets diff.relative.
    done = _git(
        repo, "diff", "--name-status", "--no-relative", "-z", "-M", base_commit, head_commit, "--", *paths or []
    )
    if done.returncode != 0:
        raise GitInputError(f"git diff {base}..{head} failed: {done.stderr.strip()}")
    changed: list[ChangedFile] = []
    for letter, old, new in _parse_name_status(done.stdout):
        if not (_is_sql(old) or _is_sql(new)):
            continue
        if letter == "D":
            changed.append(ChangedFile("deleted", old, old, _show(top, base_commit, old), None))
        elif letter in "AC":
            changed.append(ChangedFile("added", new, new, None, _show(top, head_commit, new)))
        elif letter == "R" and not _is_sql(new):  # renamed away from .sql: the model is gone
            changed.append(ChangedFile("deleted", old, old, _show(top, base_commit, old), None))
        elif letter == "R" and not _is_sql(old):
            changed.append(ChangedFile("added", new, new, None, _show(top, head_commit, new)))
        elif letter == "R":
            changed.append(ChangedFile("renamed", new, old, _show(top, base_commit, old), _show(top, head_commit, new)))
        else:  # M, T (type change)
            changed.append(
                ChangedFile("modified", new, old, _show(top, base_commit, old), _show(top, head_commit, new))
            )
    return sorted(changed, key=lambda f: f.path)


def files_at(repo: Path, commit: str, wanted: Callable[[str], bool]) -> dict[str, str]:
    """The text of every file at `commit` whose path `wanted` accepts (one `git cat-file --batch` for all)."""
    top = check_repository(repo)
    listed = _git(top, "ls-tree", "-r", "--name-only", "-z", commit)
    if listed.returncode != 0:
        raise GitInputError(f"git cannot list the files of {commit[:12]}: {listed.stderr.strip()}")
    paths = [p for p in listed.stdout.split("\0") if p and wanted(p)]
    if not paths:
        return {}
    request = "".join(f"{commit}:{p}\n" for p in paths).encode()
    done = subprocess.run(
        ["git", "-C", str(top), "cat-file", "--batch"], input=request, capture_output=True, timeout=GIT_TIMEOUT_SECONDS
    )
    if done.returncode != 0:
        raise GitInputError(f"git cannot read the files of {commit[:12]}: {done.stderr.decode(errors='replace')}")
    out: dict[str, str] = {}
    data, position = done.stdout, 0
    for path in paths:
        header_end = data.index(b"\n", position)
        size = int(data[position:header_end].split()[2])
        out[path] = data[header_end + 1 : header_end + 1 + size].decode("utf-8", errors="replace")
        position = header_end + 1 + size + 1
    return out
