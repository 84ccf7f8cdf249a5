"""Real git repositories for the infer-changes tests: files written, committed with the `git` command line."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class GitRepo:
    root: Path

    @classmethod
    def create(cls, root: Path) -> GitRepo:
        root.mkdir(parents=True, exist_ok=True)
        repo = cls(root)
        repo.git("init", "-q", "-b", "main")
        repo.git("config", "user.email", "test@example.com")
        repo.git("config", "user.name", "Test")
        repo.git("config", "commit.gpgsign", "false")
        return repo

    def git(self, *args: str) -> str:
        done = subprocess.run(["git", "-C", str(self.root), *args], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
        return done.stdout.strip()

    def write(self, files: dict[str, str]) -> None:
        for name, text in files.items():
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")

    def commit(self, message: str, files: dict[str, str] | None = None, removed: tuple[str, ...] = ()) -> str:
        """Write `files`, delete `removed`, commit everything; the new commit's sha."""
        self.write(files or {})
        for name in removed:
            self.git("rm", "-q", name)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")
