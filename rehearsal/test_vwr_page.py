"""The rehearsal visitor's rules against the load test's (the vectors of
cli/loadtest/src/visitor/tier2.rs and line.rs): `python -m unittest discover -s rehearsal`."""

import random
import unittest

from vwr_page import (
    Reply,
    as_time,
    backoff_seconds,
    hint_of,
    jitter,
    line_hint,
    next_line_read,
    progress,
    place_from_marks,
    poll_for_wait,
    wait_seconds,
)


class PageRules(unittest.TestCase):
    def test_a_place_is_read_between_the_marks_around_the_score(self):
        marks = [(1, 100), (11, 200), (21, 400)]
        self.assertEqual(place_from_marks(marks, 50), 1)
        self.assertEqual(place_from_marks(marks, 100), 1)
        self.assertEqual(place_from_marks(marks, 150), 6)
        self.assertEqual(place_from_marks(marks, 300), 16)
        self.assertEqual(place_from_marks(marks, 400), 21)
        self.assertEqual(place_from_marks(marks, 900), 21)
        self.assertEqual(place_from_marks([], 5), 1)

    def test_the_line_document_is_read_by_the_wait(self):
        self.assertEqual(line_hint(1, 400, 1.0), 1.0)
        self.assertEqual(line_hint(400, 400, None), 1.0)
        self.assertEqual(line_hint(400, 2000, 10.0), 2.0)
        self.assertEqual(line_hint(60, 2000, 10.0), 1.5)
        self.assertEqual(line_hint(30, 2000, 10.0), 1.0)
        self.assertEqual(line_hint(410, 400, 1.0), 2.5)
        self.assertEqual(line_hint(1400, 400, 1.0), 120.0)
        self.assertEqual(line_hint(402, 400, 10.0), 2.0)
        self.assertEqual(line_hint(5000, 400, None), 120.0)
        self.assertEqual(progress(1500, 0.0, 500, 20.0), 50.0)
        self.assertIsNone(progress(500, 0.0, 500, 20.0))
        self.assertEqual(next_line_read(12000, 2000, 3.0, None), 30.0)
        self.assertEqual(next_line_read(12000, 2000, 3.0, 50.0), 50.0)
        self.assertEqual(next_line_read(12000, 2000, 80.0, 50.0), 31.25)

    def test_the_status_document_pace(self):
        self.assertEqual(wait_seconds(0, 2.0), 0.0)
        self.assertEqual(wait_seconds(10, 3.0), 4.0)
        self.assertEqual(wait_seconds(1000, None), 20.0)
        self.assertEqual(wait_seconds(10, None), 5.0)
        self.assertEqual(poll_for_wait(2.0), 1.0)
        self.assertEqual(poll_for_wait(40.0), 10.0)
        self.assertEqual(poll_for_wait(1000.0), 30.0)
        self.assertEqual(hint_of({"nextPollSeconds": 120}), 60.0)
        self.assertEqual(hint_of({}), 5.0)
        self.assertEqual([backoff_seconds(e) for e in (0, 1, 2, 5, 6, 9)], [2, 2, 4, 32, 60, 60])
        rng = random.Random(1)
        self.assertTrue(all(8.0 <= jitter(rng, 10.0) <= 12.0 for _ in range(100)))

    def test_times_are_seconds_with_a_millisecond_fraction(self):
        # docs/api.md#times: `checkedAt` and `updatedAt` keep the order of their milliseconds.
        checked, updated = as_time(1764337871.234), as_time(1764337871.233)
        self.assertEqual(checked, 1764337871.234)
        self.assertLess(updated, checked)
        self.assertEqual(as_time(1764337871), 1764337871.0)
        self.assertIsNone(as_time(True))
        self.assertIsNone(as_time("1764337871.234"))
        self.assertIsNone(as_time(None))

    def test_a_cookie_set_or_cleared(self):
        r = Reply(200, [("set-cookie", "vwr_t2_e1=abc; Path=/; HttpOnly")], "{}")
        self.assertEqual(r.set_cookie("vwr_t2_e1"), "abc")
        r = Reply(200, [("Set-Cookie", "vwr_t2_e1=; Max-Age=0")], "not json")
        self.assertEqual(r.set_cookie("vwr_t2_e1"), "")
        self.assertEqual(r.body, {})
        self.assertIsNone(r.set_cookie("other"))

    def test_a_cookie_lasts_its_max_age(self):
        # As a browser keeps it: the tier-1 cookie outlives its token (a day), so the visitor
        # still sends it, lapsed, for tier 2 to renew at the turn.
        r = Reply(200, [("set-cookie", "vwr_t1_e1=t.o.k; Max-Age=86400; Path=/")], "{}")
        self.assertEqual(r.set_cookie_for("vwr_t1_e1"), ("t.o.k", 86400))
        r = Reply(200, [("set-cookie", "vwr_t1_e1=t.o.k; Path=/")], "{}")
        self.assertEqual(r.set_cookie_for("vwr_t1_e1"), ("t.o.k", None))
        r = Reply(200, [("set-cookie", "vwr_t1_e1=x; max-age=0")], "{}")
        self.assertEqual(r.set_cookie_for("vwr_t1_e1"), ("", 0))


if __name__ == "__main__":
    unittest.main()
