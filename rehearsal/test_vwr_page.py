"""The rehearsal visitor's reading of answers (times, cookies) and its progress in line:
`python -m unittest discover -s rehearsal`. The page's rules themselves (verdicts, pace,
back-off, jitter, Retry-After, the line's marks and reads): the vectors of
static/test/page-rules.json, in test_page_rules.py."""

import unittest

from vwr_page import Reply, as_time, progress


class PageRules(unittest.TestCase):
    def test_progress_is_how_fast_the_place_moved(self):
        self.assertEqual(progress(1500, 0.0, 500, 20.0), 50.0)
        self.assertIsNone(progress(500, 0.0, 500, 20.0))
        self.assertIsNone(progress(None, 0.0, 500, 20.0))

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
