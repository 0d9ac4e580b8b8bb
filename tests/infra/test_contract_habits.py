#!/usr/bin/env python3
"""The contract check's habit checks (contract/habits.py): each fails on a small tree with one
fault injected, names the file, and passes on the repository.

    python3 tests/infra/test_contract_habits.py     (tests/infra/run.sh runs it)
"""

import io
import os
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from contract import habits as h  # noqa: E402
from contract.common import Checks  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

TREE = {
    "cli/src/main.rs": "fn main() -> Result<(), CliError> {\n    Ok(())\n}\n",
    "static/assets/app.js": "x\n" * 800,
    "tests/big.rs": "x\n" * 900,
    "cli/src/watch/tests.rs": "x\n" * 900,
    "static/test/a.test.mjs": "x\n" * 900,
    "rehearsal/test_big.py": "x\n" * 900,
}


def run(check, changes=None):
    with tempfile.TemporaryDirectory() as base:
        for name, text in {**TREE, **(changes or {})}.items():
            path = os.path.join(base, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        checks, out = Checks(), io.StringIO()
        with redirect_stdout(out):
            check(base, checks)
        return checks.failed, out.getvalue()


class SourceSizes(unittest.TestCase):
    def test_the_tree_passes(self):
        self.assertEqual(run(h.check_source_sizes), (0, "ok   source files outside test folders ≤ 800 lines\n"))

    def test_a_long_file_fails_naming_it(self):
        for path in ("static/assets/app.js", "cli/src/a.rs", "rehearsal/page.py", "tier2/x/a.lua", "edge/a.mjs"):
            failed, out = run(h.check_source_sizes, {path: "x\n" * 801})
            self.assertEqual(failed, 1, path)
            self.assertIn(f"{path}: 801 lines", out)

    def test_the_repository_passes(self):
        checks = Checks()
        with redirect_stdout(io.StringIO()):
            h.check_source_sizes(ROOT, checks)
        self.assertEqual(checks.failed, 0)


class ErrorTypes(unittest.TestCase):
    def test_the_tree_passes(self):
        self.assertEqual(run(h.check_error_types)[0], 0)

    def test_a_string_error_fails_naming_the_line(self):
        for sig in ("fn f() -> Result<u32, String> {", "fn g() -> Result<Vec<(u8, u8)>, String> {"):
            failed, out = run(h.check_error_types, {"cli/loadtest/src/a.rs": f"// x\n{sig}\n"})
            self.assertEqual(failed, 1, sig)
            self.assertIn("cli/loadtest/src/a.rs:2", out)

    def test_outside_the_command_and_in_comments_it_is_not_read(self):
        change = {"functions/core/src/a.rs": "fn f() -> Result<u32, String> {}\n", "cli/src/b.rs": "// Result<u32, String>\n",
                  "cli/loadtest/tests/a.rs": "fn f() -> Result<u32, String> {}\n"}
        self.assertEqual(run(h.check_error_types, change)[0], 0)


class CommitSubjects(unittest.TestCase):
    def git(self, repo, *args):
        subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True)

    def test_a_long_subject_and_a_missing_body_fail(self):
        with tempfile.TemporaryDirectory() as repo:
            self.git(repo, "init", "-q")
            self.git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "base")
            base = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
            for msg in ("short subject\n\nA body.", "x" * 73 + "\n\nA body.", "no body"):
                self.git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", msg)
            old, h.SUBJECTS_SINCE = h.SUBJECTS_SINCE, base
            try:
                checks, out = Checks(), io.StringIO()
                with redirect_stdout(out):
                    h.check_commit_subjects(repo, checks)
            finally:
                h.SUBJECTS_SINCE = old
            self.assertEqual(checks.failed, 1)
            self.assertIn("subject of 73 characters", out.getvalue())
            self.assertIn("no body", out.getvalue())
            self.assertEqual(out.getvalue().count("     - "), 2)


if __name__ == "__main__":
    unittest.main()
