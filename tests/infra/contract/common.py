"""The checks' tally, and the path helper every check uses."""

from __future__ import annotations

import os


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def check(self, name: str, problems: list[str]) -> None:
        if problems:
            self.failed += 1
            print(f"FAIL {name}")
            for p in problems:
                print(f"     - {p}")
        else:
            self.passed += 1
            print(f"ok   {name}")


def rel(root: str, path: str) -> str:
    return os.path.relpath(path, root)
