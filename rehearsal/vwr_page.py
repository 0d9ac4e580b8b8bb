"""The waiting page's rules as a rehearsal visitor follows them (rehearsal/locustfile.py): its
pacing, its back-off, how it reads the line document's marks and the tier-1 API's verdicts, and
a reply as the visitor reads it. The same rules as `vwr loadtest`'s visitors
(cli/loadtest/src/visitor/), so that the two reports compare.
"""

import base64
import json
import math

# The tier-1 API's verdicts on a ticket: the only answers on which the page forgets its ticket.
TICKET_VERDICTS = {
    "invalid_request_id",
    "wrong_event",
    "proof_required",
    "request_id_expired",
    "admission_expired",
    "session_ended",
}
STATUS_POLL_SECONDS = 10.0
PAUSED_POLL_SECONDS = 15.0
OPEN_SPREAD_SECONDS = 5.0
SECRET_HEADER = "x-vwr-request-secret"


def jitter(rng, secs):
    """`secs` x (1 +- 20 %), as the page's jitter."""
    return max(secs * (0.8 + 0.4 * rng.random()), 0.05)


def backoff_seconds(errors):
    return min(2.0 ** min(max(errors, 1), 6), 60.0)


def wait_seconds(place, rate):
    if place <= 0:
        return 0.0
    if rate is not None and rate > 0 and math.isfinite(rate):
        return float(math.ceil(place / rate))
    return max(float(place // 50), 5.0)


def poll_for_wait(wait):
    return min(max(wait / 4.0, 1.0), 30.0)


def hint_of(body):
    s = body.get("nextPollSeconds") if isinstance(body, dict) else None
    return min(max(float(s), 1.0), 60.0) if isinstance(s, (int, float)) else 5.0


def place_from_marks(marks, score):
    if not marks:
        return 1
    p0, s0 = marks[0]
    if score <= s0:
        return max(p0, 1)
    for (p1, s1), (p2, s2) in zip(marks, marks[1:]):
        if s1 <= score < s2:
            return p1 + round((p2 - p1) * (score - s1) / (s2 - s1))
    return marks[-1][0]


def line_hint(place, threshold, rate):
    """Seconds to the next read of the line document (ADR 0032): within `threshold` of the
    front, a quarter of the own expected wait, 1-2 s; beyond them, a quarter of the wait to
    come within `threshold`, 2-120 s. No rate: 1 s near the front, the slowest beyond."""
    threshold = max(threshold, 1)
    if rate is None or rate <= 0:
        return 1.0 if place <= threshold else 120.0
    if place <= threshold:
        return min(max(place / rate / 4.0, 1.0), 2.0)
    return min(max((place - threshold) / rate / 4.0, 2.0), 120.0)


def next_line_read(place, threshold, doc_rate, observed):
    """Seconds to the next read (ADR 0032): `line_hint` paced by the fastest of the document's
    rates and the visitor's own progress (the last positive one), at most 30 s until the place
    is seen to move."""
    rates = [r for r in (doc_rate, observed) if r is not None and r > 0]
    hint = line_hint(place, threshold, max(rates) if rates else None)
    return hint if observed else min(hint, 30.0)


def progress(before, before_at, place, now):
    """How fast the place moved since `before` (at `before_at`), if it moved."""
    if before is None or now <= before_at or before <= place:
        return None
    return (before - place) / (now - before_at)


def claims_of(token):
    try:
        payload = token.split(".")[1]
        return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError, AttributeError):
        return {}


def as_int(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def as_time(v):
    """A time of an answer: seconds since the epoch, with a fraction of milliseconds where
    sub-second order matters (docs/api.md#times); None when it is not a number."""
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


class Stop(Exception):
    """How a stage stopped: `rejoin` (a verdict on the ticket), `line` (back in line), or `end`."""

    def __init__(self, kind, end=None, why=None):
        super().__init__(kind)
        self.kind, self.end, self.why = kind, end, why


def lost(why):
    return Stop("end", "lost", why)


class Reply:
    def __init__(self, status, headers, text):
        self.status, self.headers, self.text = status, headers, text
        try:
            self.body = json.loads(text) if text else {}
        except ValueError:
            self.body = {}
        if not isinstance(self.body, dict):
            self.body = {}

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name:
                return v
        return None

    def set_cookie(self, name):
        """The value of cookie `name` this reply sets: "" when it clears it, None when absent."""
        found = self.set_cookie_for(name)
        return None if found is None else found[0]

    def set_cookie_for(self, name):
        """`(value, max_age)` of cookie `name` this reply sets (max_age None without one):
        ("", 0) when it clears it, None when absent."""
        found = None
        for k, v in self.headers:
            if k.lower() == "set-cookie" and v.startswith(name + "="):
                parts = [p.strip() for p in v.split(";")]
                value = parts[0][len(name) + 1 :]
                max_age = None
                for p in parts[1:]:
                    key, _, val = p.partition("=")
                    if key.strip().lower() == "max-age" and val.strip().isdigit():
                        max_age = int(val.strip())
                found = ("", 0) if value == "" or max_age == 0 else (value, max_age)
        return found
