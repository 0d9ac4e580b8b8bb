"""Habits the project keeps (docs/testing.md#habits): no source file over 800 lines outside test
folders, no `Result<_, String>` in the command's crates (one error type per command), commit
subjects of at most 72 characters with a body."""

from __future__ import annotations

import os
import re
import subprocess

from .common import Checks

MAX_SOURCE_LINES = 800
SOURCE_EXTS = (".rs", ".js", ".mjs", ".py", ".lua")
# Test folders and test files: a `tests`/`test` directory, Rust's `tests.rs` module, node's
# `*.test.mjs`, Python's `test_*.py`.
TEST_DIRS = {"tests", "test"}
ERROR_TYPE_DIRS = ("cli/",)
STRING_ERROR = re.compile(r"Result<[^;{]*,\s*String\s*>")
MAX_SUBJECT = 72
# Subjects are checked from the commit after this one: history before the rule was written
# stays as it landed.
SUBJECTS_SINCE = "bb5315538287ddccc8cfc977ecb02d24040e3b6a"
SKIP_DIRS = {".git", ".venv", "node_modules", "target"}


def tracked(root: str) -> list[str]:
    """The tracked files (git ls-files), or every file under `root` outside SKIP_DIRS."""
    if os.path.exists(os.path.join(root, ".git")):
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, check=True)
        return [p for p in out.stdout.decode().split("\0") if p]
    files = []
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS]
        files += [os.path.relpath(os.path.join(d, n), root) for n in names]
    return files


def is_test(path: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    return bool(TEST_DIRS & set(parts[:-1])) or name == "tests.rs" or name.endswith(".test.mjs") or name.startswith("test_")


def check_source_sizes(root: str, checks: Checks) -> None:
    problems = []
    for path in tracked(root):
        if not path.endswith(SOURCE_EXTS) or is_test(path):
            continue
        try:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                n = sum(1 for _ in f)
        except (OSError, UnicodeDecodeError):
            continue
        if n > MAX_SOURCE_LINES:
            problems.append(f"{path}: {n} lines (at most {MAX_SOURCE_LINES} outside test folders: split it)")
    checks.check(f"source files outside test folders ≤ {MAX_SOURCE_LINES} lines", problems)


def check_error_types(root: str, checks: Checks) -> None:
    problems = []
    for path in tracked(root):
        if not path.endswith(".rs") or not path.startswith(ERROR_TYPE_DIRS) or is_test(path):
            continue
        with open(os.path.join(root, path), encoding="utf-8") as f:
            for i, line in enumerate(f, 1):
                if STRING_ERROR.search(line) and not line.lstrip().startswith("//"):
                    problems.append(f"{path}:{i}: a Result with a String error (give the command its error type)")
    checks.check("the vwr command's crates: typed errors, no Result<_, String>", problems)


def check_commit_subjects(root: str, checks: Checks) -> None:
    if not os.path.exists(os.path.join(root, ".git")):
        print("note commit subjects: not a git checkout, skipped")
        return
    known = subprocess.run(["git", "-C", root, "cat-file", "-e", f"{SUBJECTS_SINCE}^{{commit}}"], capture_output=True)
    if known.returncode != 0:
        print("note commit subjects: the base commit is not in this clone (shallow?), skipped")
        return
    out = subprocess.run(
        ["git", "-C", root, "log", "--no-merges", "--format=%h%x00%s%x00%b%x01", f"{SUBJECTS_SINCE}..HEAD"],
        capture_output=True, check=True,
    ).stdout.decode()
    problems = []
    for entry in filter(None, (e.strip("\n") for e in out.split("\x01"))):
        sha, subject, body = (entry.split("\x00") + ["", ""])[:3]
        if len(subject) > MAX_SUBJECT:
            problems.append(f"{sha}: subject of {len(subject)} characters (at most {MAX_SUBJECT})")
        if not body.strip():
            problems.append(f"{sha}: no body (say what and why below the subject)")
    checks.check(f"commit subjects ≤ {MAX_SUBJECT} characters, with a body", problems)
