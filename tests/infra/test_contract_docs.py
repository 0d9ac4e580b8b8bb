#!/usr/bin/env python3
"""The contract check's prose checks (contract/docs.py): citations of a Markdown section
(check_citations), the count of the invariants stated in prose (check_invariant_counts) and the
words of the tracked Markdown (check_markdown_words) — GitHub's heading slugs, and that each
check fails on a small tree with one fault injected.

    python3 tests/infra/test_contract_docs.py     (tests/infra/run.sh runs it)

The fixtures and expected messages write `@` for `#` in citations, so the repository's own check
does not read them.
"""

import io
import os
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stdout
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import contract as c  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

TREE = {
    "README.md": "# vwr\n\n## Try it\n\n## Routes → files\n\n```sh\n# not a heading\n```\n",
    "docs/invariants.md": "# Invariants\n\n## 1\n\nOne.\n\n## 2\n\nTwo.\n\n## 3\n\nThree.\n",
    "docs/README.md": "| [`invariants.md`](invariants.md) | the three rules that must hold |\n| waf | 5 rules |\n",
    "docs/api.md": "# API\n\n## Tier 1\n\n### `POST /vwr/assign/{eventId}`\n\n## Tier 1\n\n"
                   "**Origins only through CloudFront.** Text.\n",
    "edge/README.md": "# edge\n\n## Lambda@Edge: bundled `config.json`\n",
    "edge/src/a.js": "// edge/README.md@lambdaedge-bundled-configjson; (edge/README.md, \"Lambda@Edge:\n"
                     "// bundled\") and docs/invariants.md@2\n",
    "docs/tokens.md": "See [the walk](../README.md@try-it), [routes](../README.md@routes--files),\n"
                      "[assign](api.md@post-vwrassigneventid), [again](api.md@tier-1-1), invariants.md@3,\n"
                      "docs/api.md, \"Origins only through CloudFront\", the README's \"Try it\".\n"
                      "Cite rules as docs/invariants.md@N.\n\nThe 3 invariants hold.\n\nTwenty rules of WAF.\n",
}


def make_tree(base: str, changes: dict[str, str] | None = None) -> None:
    for name, text in {**TREE, **(changes or {})}.items():
        path = os.path.join(base, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text.replace("@", "#").replace("Lambda#Edge", "Lambda@Edge"))


def run(check, changes: dict[str, str] | None = None, untracked: dict[str, str] | None = None) -> tuple[int, str]:
    """`check` on TREE with `changes`; with `untracked` given, the tree is a git repository
    whose index holds TREE and `changes`, and `untracked` is written after."""
    with tempfile.TemporaryDirectory() as base:
        make_tree(base, changes)
        if untracked is not None:
            subprocess.run(["git", "init", "-q", base], check=True)
            subprocess.run(["git", "-C", base, "add", "-A"], check=True)
            for name, text in untracked.items():
                with open(os.path.join(base, name), "w", encoding="utf-8") as fh:
                    fh.write(text)
        checks = c.Checks()
        out = io.StringIO()
        with redirect_stdout(out):
            check(base, checks)
        return checks.failed, out.getvalue()


class Slugs(unittest.TestCase):
    def test_githubs_heading_slugs(self):
        self.assertEqual(c.slug("Routes → files"), "routes--files")
        self.assertEqual(c.slug("`POST /vwr/assign/{eventId}`"), "post-vwrassigneventid")
        self.assertEqual(c.slug("Place safety at a sale's scale (the release check)"), "place-safety-at-a-sales-scale-the-release-check")
        self.assertEqual(c.slug("Lambda@Edge: bundled `config.json`"), "lambdaedge-bundled-configjson")
        self.assertEqual(c.slug("The edge decision (in short)"), "the-edge-decision-in-short")
        self.assertEqual(c.slug("[ADR](adr/0001.md) snake_case"), "adr-snake_case")

    def test_repeated_headings_fenced_lines_and_labels(self):
        headings, labels = c.markdown_anchors(TREE["docs/api.md"] + "```\n## Fenced\n```\n<a id=\"x-1\"></a>\n")
        self.assertEqual(headings, {"api", "tier-1", "post-vwrassigneventid", "tier-1-1", "x-1"})
        self.assertEqual(labels, {"origins-only-through-cloudfront"})


class Citations(unittest.TestCase):
    def test_the_tree_passes(self):
        failed, out = run(c.check_citations)
        self.assertEqual(failed, 0, out)
        self.assertIn("(10 citations)", out)

    def test_each_broken_citation_fails_naming_it(self):
        cases = {
            "a link to a heading that is gone": ("docs/tokens.md", "[x](../README.md@layout)", "docs/tokens.md:1 cites ../README.md@layout: README.md has no such section"),
            "a link to a file that is gone": ("docs/tokens.md", "[x](gone.md@a)", "docs/tokens.md:1 cites gone.md@a: no such file"),
            "a code comment's README anchor": ("src/x.rs", "// see edge/README.md@build\n", "src/x.rs:1 cites edge/README.md@build: edge/README.md has no such section"),
            "a README section by name": ("src/x.rs", "//! Place safety (README \"Load testing\").\n", "src/x.rs:1 cites README \"Load testing\": README.md has no such section"),
            "the README's section": ("docs/x.md", "After the README's \"Try it out\".\n", "docs/x.md:1 cites README \"Try it out\": README.md has no such section"),
            "a name in a doc of docs/": ("a.tf", "# (docs/api.md, \"Tier 2\")\n", "a.tf:1 cites docs/api.md \"Tier 2\": docs/api.md has no such section"),
            "a heading's old slug": ("docs/x.md", "[s](api.md@post-vwrassign)\n", "docs/x.md:1 cites api.md@post-vwrassign"),
        }
        for what, (name, text, want) in cases.items():
            failed, out = run(c.check_citations, {name: text})
            self.assertEqual(failed, 1, (what, out))
            self.assertIn(want.replace("@", "#"), out, what)

    def test_the_repository_passes(self):
        problems, count = c.citation_problems(ROOT, c.prose_files(ROOT))
        self.assertEqual(problems, [])
        self.assertGreater(count, 300)


class InvariantCounts(unittest.TestCase):
    def test_number_words(self):
        for text, n in {"3": 3, "fourteen": 14, "twenty-nine": 29, "Twenty nine": 29, "thirty": 30}.items():
            self.assertEqual(c.number(text), n, text)

    def test_the_tree_passes(self):
        failed, out = run(c.check_invariant_counts)
        self.assertEqual(failed, 0, out)
        self.assertIn("the 3 rules of docs/invariants.md", out)

    def test_a_wrong_count_fails_in_words_or_digits(self):
        for text, said in {
            "| [`invariants.md`](invariants.md) | the fourteen rules that must hold |\n": "fourteen rules",
            "The invariants:\nall 4 rules, tested.\n": "4 rules",
            "Twenty-nine invariants hold.\n": "Twenty-nine invariants",
        }.items():
            failed, out = run(c.check_invariant_counts, {"docs/README.md": text})
            self.assertEqual(failed, 1, (text, out))
            self.assertIn(f"docs/README.md:1 says {said!r}; docs/invariants.md has 3", out)

    def test_a_new_rule_makes_the_old_count_fail(self):
        failed, out = run(c.check_invariant_counts, {"docs/invariants.md": TREE["docs/invariants.md"] + "\n## 4\n\nFour.\n"})
        self.assertEqual(failed, 1, out)
        self.assertIn("says 'three rules'; docs/invariants.md has 4", out)

    def test_rules_out_of_order_fail(self):
        failed, out = run(c.check_invariant_counts, {"docs/invariants.md": "## 1\n\n## 3\n", "docs/README.md": "", "docs/tokens.md": ""})
        self.assertEqual(failed, 1, out)
        self.assertIn("numbered [1, 3], not 1…2", out)



class MarkdownWords(unittest.TestCase):
    LIMIT = c.MARKDOWN_MAX_WORDS

    def test_the_tree_passes_counting_as_wc_does(self):
        failed, out = run(c.check_markdown_words, untracked={})
        self.assertEqual(failed, 0, out)
        words = sum(len(t.replace("@", "#").split()) for n, t in TREE.items() if n.endswith(".md"))
        self.assertIn(f"({words} words in 6 files)", out)
        failed, out = run(c.check_markdown_words, {"docs/x.md": "one\ttwo\nthree  four—five é\n"}, untracked={})
        self.assertIn(f"({words + 5} words in 7 files)", out)

    def test_a_tree_over_the_limit_fails_naming_the_largest(self):
        failed, out = run(c.check_markdown_words, {"docs/long.md": "word " * self.LIMIT}, untracked={})
        self.assertEqual(failed, 1, out)
        self.assertIn(f"not under {self.LIMIT}", out)
        self.assertIn(f"largest: docs/long.md {self.LIMIT}", out)

    def test_untracked_and_other_files_do_not_count(self):
        failed, out = run(c.check_markdown_words, {"notes.txt": "word " * self.LIMIT}, untracked={"draft.md": "word " * self.LIMIT})
        self.assertEqual(failed, 0, out)

    def test_without_git_every_markdown_file_counts(self):
        with mock.patch.dict(os.environ, {"GIT_CEILING_DIRECTORIES": os.path.realpath(tempfile.gettempdir())}):
            failed, out = run(c.check_markdown_words)
            self.assertEqual(failed, 0, out)
            self.assertIn("Markdown (no git listing: every .md file) under", out)
            failed, out = run(c.check_markdown_words, {"draft.md": "word " * self.LIMIT})
            self.assertEqual(failed, 1, out)
            self.assertIn(f"largest: draft.md {self.LIMIT}", out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
