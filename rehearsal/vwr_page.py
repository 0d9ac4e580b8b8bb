"""The waiting page's rules as a rehearsal visitor follows them (rehearsal/locustfile.py): what a
refused `check` means for the ticket, the pace of the status document in each state, the
back-off, the jitter, Retry-After, the booking line's marks and reads (ADR 0032), and a reply as
the visitor reads it. The page is the truth (static/assets/app.js, static/queue/tier2.js); the
load test's visitors keep the same rules (cli/loadtest/src/page.rs), so that the two reports
compare. The vectors of static/test/page-rules.json hold all three to them
(rehearsal/test_page_rules.py here).
"""

import base64
import json
import math
from datetime import timezone
from email.utils import parsedate_to_datetime

# The tier-1 API's verdicts on a ticket: the only answers on which the page forgets its ticket
# (docs/invariants.md#15).
TICKET_VERDICTS = {
    "invalid_request_id",
    "wrong_event",
    "proof_required",
    "request_id_expired",
    "admission_expired",
    "session_ended",
}
# The event's answers that end the wait, and why (the report's `lostBy`).
EVENT_ENDS = {
    "event_not_found": "event_not_found",
    "event_closed": "closed",
    "event_not_active": "inactive",
    "invalid_event_id": "invalid_event_id",
    "enqueue_token_required": "enqueue_token_required",
}
STATUS_POLL_SECONDS = 10.0
PAUSED_POLL_SECONDS = 15.0
OPEN_SPREAD_SECONDS = 5.0
RETRY_AFTER_MAX_SECONDS = 3600
LINE_STALE_SECONDS = 0.5
SECRET_HEADER = "x-vwr-request-secret"


def error_code(body):
    code = body.get("error") if isinstance(body, dict) else None
    return code if isinstance(code, str) else None


def ticket_verdict(body):
    """The verdict in a refused `check`'s body, if it is one: the API's code decides, whatever
    the status."""
    code = error_code(body)
    return code if code in TICKET_VERDICTS else None


def refusal(body):
    """A refused `check`: ("rejoin", code), ("end", why) or ("backoff", None)."""
    code = error_code(body)
    if code in TICKET_VERDICTS:
        return "rejoin", code
    if code in EVENT_ENDS:
        return "end", EVENT_ENDS[code]
    return "backoff", None


def jitter_seconds(secs, random):
    """`secs` +- 20 % for a draw in [0, 1): the page's jitter."""
    return secs * (0.8 + 0.4 * random)


def jitter(rng, secs):
    return max(jitter_seconds(secs, rng.random()), 0.0)


def backoff_seconds(errors):
    return min(2.0 ** min(max(errors, 1), 6), 60.0)


def retry_after_seconds(header, now_ms):
    """Seconds from a Retry-After header at `now_ms` (ms since the epoch): delta-seconds or an
    HTTP date, at most an hour; None when it is neither."""
    if header is None or header == "":
        return None
    text = str(header).strip()
    if text.isascii() and text.isdigit():
        return min(int(text), RETRY_AFTER_MAX_SECONDS)
    try:
        at = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if at.tzinfo is None:
        at = at.replace(tzinfo=timezone.utc)
    secs = math.ceil((at.timestamp() * 1000.0 - now_ms) / 1000.0)
    return min(max(secs, 0), RETRY_AFTER_MAX_SECONDS)


def retry_after_wait(after, random):
    """The wait after a refusal with a Retry-After of `after` s: never less than it asked."""
    return after * (1.0 + 0.2 * random)


def open_spread(random):
    return OPEN_SPREAD_SECONDS * random


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


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


def status_look(doc, position, rate):
    """After a 200 status document, for a ticket at `position` whose last estimate implied
    `rate`: ("check", None), ("status", seconds before jitter), ("end", why) or ("backoff",
    None) when it is not the document (no `state`)."""
    state = doc.get("state") if isinstance(doc, dict) else None
    if not isinstance(state, str):
        return "backoff", None
    serving = as_int(doc.get("servingCounter")) or 0
    served = serving >= position
    if state in ("inactive", "standby"):
        return "end", "inactive"
    if state == "closed":
        return ("check", None) if served else ("end", "closed")
    if state in ("scheduled", "prequeue"):
        return "status", STATUS_POLL_SECONDS
    if served:
        return "check", None
    if state == "paused":
        return "status", PAUSED_POLL_SECONDS
    sps = doc.get("servedPerSecond")
    rate = sps if is_number(sps) and sps > 0 else rate
    return "status", poll_for_wait(wait_seconds(max(position - serving, 1), rate))


def place_from_marks(marks, score):
    """The place of `score` from the line document's marks ([place, score], in line order): the
    mark at or below it, moved on in proportion to the scores up to the next, rounded half up
    (the page's `placeOf`)."""
    place = 1
    for i, (p, s) in enumerate(marks):
        if s > score:
            if i == 0:
                return p
            pa, sa = marks[i - 1]
            return max(math.floor(pa + ((p - pa) * (score - sa)) / (s - sa) + 0.5), 0)
        place = p
    return place


def line_hint(place, threshold, rate):
    """Seconds to the next read of the line document (ADR 0032): within `threshold` of the
    front, a quarter of the own expected wait, 1-2 s; beyond them, a quarter of the wait to
    come within `threshold`, 2-120 s. No rate: 1 s near the front, the slowest beyond."""
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
    return hint if observed is not None and observed > 0 else min(hint, 30.0)


def line_doc_rate(doc):
    """The line document's rate: the fastest of `estimateRate` and `admittedPerSecond`."""
    rates = [r for r in (doc.get("estimateRate"), doc.get("admittedPerSecond")) if is_number(r)]
    return max(rates) if rates else None


def first_line_read(answer):
    """Seconds from an answer with a line score to the first read of the line document:
    `line_hint` at the rate its estimate implies (position / estimatedWaitSeconds)."""
    position = as_int(answer.get("position"))
    position = 1 if position is None else position
    wait = answer.get("estimatedWaitSeconds")
    rate = position / wait if is_number(wait) and wait > 0 else None
    threshold = as_int(answer.get("threshold"))
    return line_hint(position, 1 if threshold is None else threshold, rate)


def line_read_delay(secs, random):
    """The wait before a read `secs` away: jittered only above 1 s."""
    return jitter_seconds(secs, random) if secs > 1 else secs


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
