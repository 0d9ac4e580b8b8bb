"""The rehearsal visitor's copy of the waiting page's rules (vwr_page.py) against the vectors of
static/test/page-rules.json, which the page's own test and the load test's run too:
`python -m unittest discover -s rehearsal -p 'test_*.py'`."""

import json
import os
import unittest

from vwr_page import (
    backoff_seconds,
    first_line_read,
    hint_of,
    jitter_seconds,
    line_doc_rate,
    line_hint,
    line_read_delay,
    next_line_read,
    open_spread,
    place_from_marks,
    poll_for_wait,
    refusal,
    retry_after_seconds,
    retry_after_wait,
    status_look,
    wait_seconds,
)

VECTORS_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "static", "test", "page-rules.json")
with open(VECTORS_PATH, encoding="utf-8") as f:
    VECTORS = json.load(f)

# The sections this test runs: every one of the file.
SECTIONS = {
    "verdicts",
    "statusPacing",
    "openSpread",
    "hints",
    "waits",
    "pollForWait",
    "backoff",
    "jitter",
    "retryAfterWait",
    "retryAfter",
    "marks",
    "lineDelay",
    "nextRead",
    "firstLineRead",
    "lineReadDelay",
}


class PageRuleVectors(unittest.TestCase):
    def run_cases(self, section, check):
        """`check(case)` answers (got, want) for every case of `section`; numbers within 1e-9."""
        cases = VECTORS[section]["cases"]
        self.assertTrue(cases, f"{section}: no cases")
        failures = []
        for i, case in enumerate(cases):
            got, want = check(case)
            same = got == want
            if isinstance(got, (int, float)) and isinstance(want, (int, float)):
                same = abs(got - want) < 1e-9
            if not same:
                failures.append(f"{section}[{i}] {json.dumps(case)}: got {got!r}, want {want!r}")
        self.assertEqual(failures, [], f"{len(failures)} case(s) disagree with the page")

    def test_every_section_of_the_file_is_run(self):
        self.assertEqual(set(VECTORS) - {"about"}, SECTIONS)

    def test_a_refused_check_forgets_the_ticket_only_on_a_verdict(self):
        self.run_cases("verdicts", lambda c: (refusal(c["body"])[0], c["then"]))

    def test_the_status_document_is_read_at_the_pace_of_each_state(self):
        def pacing(c):
            then, value = status_look(c["doc"], c["position"], c.get("rate"))
            return (then, value if then == "status" else None), (c["then"], c.get("seconds"))

        # A pair compares as a whole: the seconds are exact halves and quarters here.
        self.run_cases("statusPacing", pacing)
        self.run_cases("openSpread", lambda c: (open_spread(c["random"]), c["seconds"]))
        self.run_cases("hints", lambda c: (hint_of(c), c["seconds"]))
        self.run_cases("waits", lambda c: (wait_seconds(c["place"], c["rate"]), c["seconds"]))
        self.run_cases("pollForWait", lambda c: (poll_for_wait(c["wait"]), c["seconds"]))

    def test_refusals_are_backed_off_jittered_and_at_the_servers_retry_after(self):
        self.run_cases("backoff", lambda c: (backoff_seconds(c["errors"]), c["seconds"]))
        self.run_cases("jitter", lambda c: (jitter_seconds(c["seconds"], c["random"]), c["delay"]))
        self.run_cases("retryAfterWait", lambda c: (retry_after_wait(c["after"], c["random"]), c["seconds"]))
        self.run_cases("retryAfter", lambda c: (retry_after_seconds(c.get("header"), c["nowMs"]), c["seconds"]))

    def test_the_booking_line_is_read_from_its_marks_at_its_pace(self):
        self.run_cases("marks", lambda c: (place_from_marks([tuple(m) for m in c["marks"]], c["score"]), c["place"]))
        self.run_cases("lineDelay", lambda c: (line_hint(c["place"], c["threshold"], c["rate"]), c["seconds"]))
        self.run_cases(
            "nextRead",
            lambda c: (next_line_read(c["place"], c["threshold"], c["docRate"], c["observed"]), c["seconds"]),
        )
        self.run_cases("firstLineRead", lambda c: (first_line_read(c["answer"]), c["seconds"]))

        def line_read(c):
            doc = c["doc"]
            hint = next_line_read(c["place"], doc["threshold"], line_doc_rate(doc), None)
            return line_read_delay(hint, c["random"]), c["seconds"]

        self.run_cases("lineReadDelay", line_read)


if __name__ == "__main__":
    unittest.main()
