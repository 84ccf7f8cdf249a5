"""The SQL files changed between two refs of a real git repository: statuses, both texts, renames, pathspecs,
and refusals (not a repository, an unknown ref) that say what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools.changes.repo import GitRepo
from tools.changes.gitdiff import GitInputError, changed_sql_files


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.create(tmp_path / "repo")
    repo.commit(
        "base",
        {
            "models/a.sql": "select 1 as a\n",
            "models/b.sql": "select 1 as b\n",
            "models/old_name.sql": "select 1 as c, 2 as d, 3 as e, 4 as f\n",
            "README.md": "docs\n",
        },
    )
    return repo


def test_statuses_and_both_texts(repo: GitRepo) -> None:
    repo.git("mv", "models/old_name.sql", "models/new_name.sql")
    repo.commit(
        "head",
        {"models/a.sql": "select 2 as a\n", "models/new.sql": "select 1 as n\n", "README.md": "more docs\n"},
        removed=("models/b.sql",),
    )
    changed = {f.path: f for f in changed_sql_files(repo.root, "HEAD~1", "HEAD")}
    assert {path: f.status for path, f in changed.items()} == {
        "models/a.sql": "modified",
        "models/b.sql": "deleted",
        "models/new.sql": "added",
        "models/new_name.sql": "renamed",
    }
    assert (changed["models/a.sql"].base_text, changed["models/a.sql"].head_text) == (
        "select 1 as a\n",
        "select 2 as a\n",
    )
    assert changed["models/b.sql"].head_text is None and changed["models/new.sql"].base_text is None
    assert changed["models/new_name.sql"].old_path == "models/old_name.sql"
    assert changed["models/new_name.sql"].base_text == changed["models/new_name.sql"].head_text


def test_pathspecs_are_relative_to_the_repo_folder_given(repo: GitRepo) -> None:
    repo.commit("head", {"models/a.sql": "select 2 as a\n", "other/x.sql": "select 1 as x\n"})
    assert [f.path for f in changed_sql_files(repo.root, "main~1", "main", ["models"])] == ["models/a.sql"]
    inside = changed_sql_files(repo.root / "models", "main~1", "main", ["a.sql"])
    assert [f.path for f in inside] == ["models/a.sql"]  # paths stay relative to the repository's top


def test_nothing_changed_is_an_empty_list(repo: GitRepo) -> None:
    repo.commit("docs only", {"README.md": "changed\n"})
    assert changed_sql_files(repo.root, "HEAD~1", "HEAD") == []


def test_an_unknown_ref_says_how_to_fetch_it(repo: GitRepo) -> None:
    with pytest.raises(GitInputError, match=r"unknown git ref 'origin/main'.*`git fetch origin main`"):
        changed_sql_files(repo.root, "origin/main", "HEAD")


def test_not_a_repository(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(GitInputError, match="not inside a git repository"):
        changed_sql_files(tmp_path / "plain", "main", "HEAD")
    with pytest.raises(GitInputError, match="not a folder"):
        changed_sql_files(tmp_path / "missing", "main", "HEAD")
