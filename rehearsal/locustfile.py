"""A distributed rehearsal of a sale on Locust: each Locust user is one visitor who behaves as
the waiting page and the booking page do (docs/rehearsal.md#rehearse-with-locust).

    VWR_EVENT=sale1 VWR_RECORDS_DIR=records \
      locust -f rehearsal/locustfile.py --headless --host https://tickets.example.com \
      --users 100000 --spawn-rate 2000 --run-time 30m

or as a master (`--master --expect-workers N`) with workers on other machines
(`--worker --master-host …`, each with its own VWR_RECORDS_DIR), or `--processes N` on one.
`vwr loadtest analyze DIR` then turns the records of every worker, gathered in one directory,
into the report of `vwr loadtest` (flow, fairness, safety, costs).

A visitor: `assign` (its position and the request secret); the public status document at the
page's pace (the server's first hint, then a quarter of its expected wait, 1-30 s, +-20 %);
`check` with the request secret when the serving counter reaches its position; the event page
through the edge with its tier-1 cookie; a second `check` of the admitted ticket, which must
answer the same identity (a safety probe, reported apart from the costs); tier 2: check in,
the line document until its front passes the visitor, `check` again, the booking call with the
entry token, heartbeats while it dwells, leave. A refusal that is no verdict on the place (a
WAF's or API Gateway's 403 or 429, a 5xx, a network error) keeps the place and backs off as the
page does; only the tier-1 API's verdicts on the ticket make it join again. The same rules as
`vwr loadtest`'s visitors (cli/loadtest/src/visitor/), so that the two reports compare; the
page's rules are in `vwr_page.py`, the settings and the records file in `vwr_records.py`.

Env: VWR_EVENT (an active event; required), VWR_RECORDS_DIR (required: one JSON line per
visitor, in `visitors-<host>-<pid>-<start ms>.jsonl`, written as each visitor ends), VWR_DWELL_SECONDS
(2), VWR_ABANDON_RATE (0), VWR_NO_SHOW_RATE (0), VWR_THRESHOLD (tier 2's cap, for the
over-threshold check; the answers' own `threshold` when unset), VWR_MAX_SECONDS (a visitor
gives up retrying after this long, 900).

Not done: the site's enqueue tokens and proofs of work (rehearse with them off), bots.
"""

import json
import logging
import os
import random
import socket
import time

import gevent
from locust import constant, events, task
from locust.contrib.fasthttp import FastHttpUser
from locust.runners import MasterRunner, WorkerRunner

# Beside this file (Locust puts its folder on the import path).
from vwr_page import (
    LINE_STALE_SECONDS,
    SECRET_HEADER,
    STATUS_POLL_SECONDS,
    Reply,
    Stop,
    as_int,
    as_time,
    backoff_seconds,
    claims_of,
    first_line_read,
    hint_of,
    jitter,
    line_doc_rate,
    line_read_delay,
    lost,
    next_line_read,
    open_spread,
    place_from_marks,
    progress,
    refusal,
    retry_after_seconds,
    retry_after_wait,
    status_look,
    ticket_verdict,
)
from vwr_records import CONFIG, RECORDS


@events.init.add_listener
def on_init(environment, **_kwargs):
    runner = environment.runner
    if isinstance(runner, MasterRunner):
        # The master runs no visitors: it counts the visits its workers report ended.
        runner.register_message("vwr_ended", lambda msg, **_kw: ENDED.add(msg.data))
        start_quitter(environment)
        return
    CONFIG.check()
    RECORDS.open(environment.host or "")
    if not isinstance(runner, WorkerRunner):
        start_quitter(environment)


class Ended:
    """Visits ended so far (in this process, or reported by the workers to the master)."""

    def __init__(self):
        self.n = 0

    def add(self, n):
        self.n += int(n)


ENDED = Ended()


def visit_ended(environment):
    runner = environment.runner
    if isinstance(runner, WorkerRunner):
        runner.send_message("vwr_ended", 1)
    else:
        ENDED.add(1)


def start_quitter(environment):
    """Ends the run once every visitor has made its one visit, rather than at `--run-time`
    (which stays the hard stop): each user visits once and then stays idle, so that Locust,
    which keeps `--users` users alive, does not start new visitors in their place."""

    def watch():
        while True:
            gevent.sleep(0.5)
            runner = environment.runner
            if runner is None:
                return
            target = runner.target_user_count or 0
            if target > 0 and runner.state == "running" and ENDED.n >= target:
                runner.quit()
                return

    gevent.spawn(watch)


class Visitor(FastHttpUser):
    wait_time = constant(0)

    def __init__(self, environment):
        super().__init__(environment)
        # Cookies as the harness keeps them (the tier-1 token the page sets, tier 2's identity).
        self.client.client.cookiejar = None
        self.rng = random.Random()
        self.event = CONFIG.event

    # ----- the record -----

    def new_record(self):
        self.rec = {
            "kind": "visitor",
            "visitor": f"{socket.gethostname()}-{os.getpid()}-{id(self):x}-{self.rng.getrandbits(32):08x}",
            "arrivedAt": time.time(),
            "joinedAt": None,
            "position": None,
            "tier1AdmittedAt": None,
            "tier2AdmittedAt": None,
            "tier2IdleSeconds": None,
            "estimateSeconds": None,
            "estimatedAt": None,
            "firstCheckAt": None,
            "prequeue": False,
            "passedEdge": False,
            "statusPolls": 0,
            "checks": 0,
            "lineReads": 0,
            "maxActiveSeen": 0,
            "end": "unfinished",
            "lostBy": None,
            "placeLost": None,
            "placeLosses": {},
            "verdicts": {},
            "counts": {},
            "tier1Jti": None,
            "tier2Jti": None,
            "calls": [],
            "endedAt": None,
        }

    def count(self, name, n=1):
        self.rec["counts"][name] = self.rec["counts"].get(name, 0) + n

    def lose_place(self, why):
        self.rec["placeLosses"][why] = self.rec["placeLosses"].get(why, 0) + 1
        if self.rec["placeLost"] is None:
            self.rec["placeLost"] = why

    def transient(self):
        self.count("transientRefusals")
        self.errors += 1
        return jitter(self.rng, backoff_seconds(self.errors))

    # ----- requests, with the page's retries on 503/429/5xx/network errors -----

    def call(self, endpoint, method, path, headers=None, body=None):
        errors = 0
        while True:
            if time.time() > self.deadline:
                raise Stop("end", "unfinished")
            at = time.time()
            # The edge refuses with a 302 to the waiting room: seen as such, never followed.
            kwargs = {"headers": dict(headers or {}), "name": endpoint, "catch_response": True, "allow_redirects": False}
            if body is not None:
                kwargs["data"] = json.dumps(body)
                kwargs["headers"]["content-type"] = "application/json"
            with self.client.request(method, path, **kwargs) as resp:
                ms = (time.time() - at) * 1000.0
                status = resp.status_code or 0
                hdrs = list(resp.headers.items()) if resp.headers is not None else []
                reply = Reply(status, hdrs, resp.text or "" if status else "")
                retry = retry_after_seconds(reply.header("retry-after"), time.time() * 1000.0)
                self.rec["calls"].append(
                    {
                        "endpoint": endpoint,
                        "at": round(at, 4),
                        "ms": round(ms, 3),
                        "status": status,
                        "xCache": reply.header("x-cache"),
                        # As the load test: a Retry-After the page reads (seconds or a date).
                        "retryAfter": retry is not None,
                    }
                )
                if status == 0 or status >= 500 or status == 429:
                    resp.failure(f"{status}")
                else:
                    resp.success()
            if status != 0 and status < 500 and status != 429:
                return reply
            # The page's back-off (2, 4 ... 60 s), or a 503's or 429's Retry-After (at least
            # half a second: a `Retry-After: 0` is no reason to spin).
            errors += 1
            if status in (503, 429) and retry is not None:
                gevent.sleep(max(retry_after_wait(retry, self.rng.random()), 0.5))
            else:
                gevent.sleep(jitter(self.rng, backoff_seconds(errors)))

    def cookies(self):
        """The tier-1 token and the tier-2 identity, as a browser sends them (both `Path=/`)
        while their `Max-Age` lasts."""
        now = time.monotonic()
        jar = ((self.t1, self.t1_until), (self.t2, self.t2_until))
        return "; ".join(c for c, until in jar if c and (until is None or now < until))

    def keep_cookies(self, reply):
        """Keeps the cookies a reply sets, as a browser does: tier 2's identity, and the tier-1
        token (set by tier 1, renewed by tier 2 while it holds the visitor)."""
        for kind in ("t1", "t2"):
            name = f"vwr_{kind}_{self.event}"
            found = reply.set_cookie_for(name)
            if found is None:
                continue
            value, max_age = found
            until = None if max_age is None else time.monotonic() + max_age
            setattr(self, kind, f"{name}={value}" if value else None)
            setattr(self, f"{kind}_until", until if value else None)

    def check_headers(self):
        """A tier-1 `check`'s headers: the request secret and the cookies, as the page's."""
        h = dict(self.proof())
        cookies = self.cookies()
        if cookies:
            h["cookie"] = cookies
        return h

    def check_threshold(self, body):
        cur = as_int(body.get("currentUsers"))
        if cur is None:
            return
        self.rec["maxActiveSeen"] = max(self.rec["maxActiveSeen"], cur)
        cap = max(CONFIG.threshold, as_int(body.get("threshold")) or 0)
        if cap > 0 and cur > cap:
            self.count("overThreshold")

    # ----- the visit -----

    @task
    def visit(self):
        self.new_record()
        self.deadline = time.time() + CONFIG.max_seconds
        self.ticket = None
        self.first_ticket = True
        self.answer = {}
        self.t1 = self.t2 = None
        self.t1_until = self.t2_until = None
        self.t1_jti = self.t2_jti = None
        self.evicted = False
        self.errors = 0
        rng = self.rng
        abandons = rng.random() < CONFIG.abandon_rate
        in_tier2 = rng.random() < 0.5
        after = 1.0 + rng.random() * 10.0
        self.abandon_tier1 = after if abandons and not in_tier2 else None
        self.abandon_tier2 = abandons and in_tier2
        self.abandon_after = after
        no_show = rng.random() < CONFIG.no_show_rate
        try:
            self.rec["end"] = self.run_visit(no_show)
        except Stop as stop:
            self.rec["end"] = stop.end if stop.kind == "end" else "lost"
            if self.rec["end"] == "lost":
                self.rec["lostBy"] = stop.why or "refused"
        except Exception as e:  # noqa: BLE001 - a fault of this file, not of vwr: said, and the visit ends
            self.rec["end"], self.rec["lostBy"] = "lost", "harness_error"
            self.rec["counts"]["harnessError"] = 1
            logging.exception("vwr rehearsal: visitor %s: %s", self.rec["visitor"], e)
        finally:
            # Also when Locust stops the run (`--run-time`): the visitor is `unfinished`.
            self.rec["endedAt"] = time.time()
            RECORDS.write(self.rec)
            self.rec = None
        visit_ended(self.environment)
        # One visit per user: idle until the run ends (see `start_quitter`).
        while True:
            gevent.sleep(3600)

    def run_visit(self, no_show):
        self.join()
        if no_show:
            return "noShow"
        rejoins = 0
        while True:
            try:
                self.through()
                return "done"
            except Stop as stop:
                if stop.kind == "line":
                    continue
                if stop.kind != "rejoin":
                    raise
                # As the page: forget the ticket and join again, three times at once, then
                # with back-off.
                self.rec["verdicts"][stop.why] = self.rec["verdicts"].get(stop.why, 0) + 1
                self.lose_place("ticketReplaced")
                self.ticket, self.t1, self.first_ticket = None, None, False
                rejoins += 1
                if rejoins > 3:
                    gevent.sleep(jitter(self.rng, backoff_seconds(rejoins - 3)))
                self.join()

    def join(self):
        refused = Stop("end", "refused") if self.first_ticket else lost("rejoin_refused")
        while True:
            r = self.call("tier1.assign", "POST", f"/vwr-api/vwr/assign/{self.event}")
            if r.status == 409 and r.body.get("error") == "event_not_open" and time.time() < self.deadline:
                gevent.sleep(jitter(self.rng, 1.0))
                continue
            break
        if not 200 <= r.status < 300:
            self.count("unexpected4xx")
            raise refused
        request_id = r.body.get("requestId")
        if not isinstance(request_id, str):
            raise refused
        position = as_int(r.body.get("position"))
        if self.first_ticket:
            self.rec["joinedAt"] = time.time()
            self.rec["position"] = position
            est = r.body.get("estimatedWaitSeconds")
            if position is not None and isinstance(est, (int, float)):
                self.rec["estimateSeconds"] = est
                self.rec["estimatedAt"] = self.rec["joinedAt"]
        secret = r.body.get("requestSecret")
        self.ticket = {"id": request_id, "secret": secret if isinstance(secret, str) else None, "position": position}
        self.answer = r.body

    def check_path(self):
        return f"/vwr-api/vwr/check/{self.event}/{self.ticket['id']}"

    def proof(self):
        secret = self.ticket and self.ticket["secret"]
        return {SECRET_HEADER: secret} if secret else {}

    def admitted(self, token):
        self.t1 = f"vwr_t1_{self.event}={token}"
        self.t1_jti = claims_of(token).get("jti")
        if self.rec["tier1AdmittedAt"] is None:
            self.rec["tier1AdmittedAt"] = time.time()
            self.rec["tier1Jti"] = self.t1_jti

    def position_seen(self, p):
        if p is None:
            return
        known = self.ticket["position"]
        if known is not None and known != p:
            self.lose_place("tier1PositionChanged")
        elif known is None:
            self.ticket["position"] = p
            if self.first_ticket and self.rec["position"] is None:
                self.rec["position"] = p

    def check_answer(self, r):
        """A `check` answer: a verdict on the ticket or the event's refusal raises; a refusal
        that is no verdict is None (the caller backs off); else the body, an admission taken."""
        if not 200 <= r.status < 300:
            then, why = refusal(r.body)
            if then == "rejoin":
                raise Stop("rejoin", why=why)
            if then == "end":
                self.count("unexpected4xx")
                raise lost(why)
            return None
        self.errors = 0
        if r.body.get("admitted") is True:
            token = r.body.get("token") or ""
            self.position_seen(as_int(claims_of(token).get("pos")))
            self.admitted(token)
        return r.body

    # ----- tier 1: in line -----

    def learn(self, place, body):
        p = as_int(body.get("position"))
        if p is not None:
            place["position"] = p
        ahead = as_int(body.get("peopleAhead"))
        serving = as_int(body.get("servingCounter"))
        if ahead is None and serving is not None and place["position"] is not None:
            ahead = max(place["position"] - serving - 1, 0)
        wait = body.get("estimatedWaitSeconds")
        if ahead is not None and isinstance(wait, (int, float)) and wait > 0:
            place["rate"] = (ahead + 1) / wait

    def wait_for_open(self, opens_at):
        path = f"/vwr-api/vwr/status/{self.event}"
        while True:
            left = opens_at - time.time()
            if left <= 0:
                break
            gevent.sleep(min(jitter(self.rng, STATUS_POLL_SECONDS), left))
            if time.time() >= opens_at:
                break
            r = self.call("tier1.status", "GET", path)
            self.rec["statusPolls"] += 1
            state = r.body.get("state")
            if state in ("scheduled", "prequeue"):
                if isinstance(r.body.get("opensAt"), (int, float)):
                    opens_at = r.body["opensAt"]
            elif state is not None and 200 <= r.status < 300:
                break
        gevent.sleep(open_spread(self.rng.random()))

    def wait_for_turn(self):
        status_path = f"/vwr-api/vwr/status/{self.event}"
        answer = self.answer
        place = {"position": None, "rate": None}
        self.learn(place, answer)
        if place["position"] is None:
            place["position"] = self.ticket["position"]
        waiting_since = time.time() if place["position"] is not None else None
        look, delay = "status", jitter(self.rng, hint_of(answer))
        if place["position"] is None and answer.get("state") == "prequeue":
            if self.first_ticket:
                self.rec["prequeue"] = True
            self.wait_for_open(float(answer.get("opensAt") or 0))
            if self.first_ticket:
                self.rec["firstCheckAt"] = time.time()
            look, delay = "check", jitter(self.rng, 0.0)
        while True:
            if self.abandon_tier1 is not None and waiting_since is not None and time.time() - waiting_since > self.abandon_tier1:
                raise Stop("end", "abandoned")
            gevent.sleep(delay)
            if look == "status":
                r = self.call("tier1.status", "GET", status_path)
                self.rec["statusPolls"] += 1
                d = r.body
                # Not the status document (as the page: a 200 with a `state`): back off.
                if not 200 <= r.status < 300 or not isinstance(d.get("state"), str):
                    if d.get("error") == "event_not_found":
                        self.count("unexpected4xx")
                        raise lost("event_not_found")
                    delay = self.transient()
                    continue
                self.errors = 0
                position = place["position"]
                if position is None:
                    look, delay = "check", 0.0
                    continue
                then, value = status_look(d, position, place["rate"])
                if then == "end":
                    if value == "inactive":
                        self.count("unexpected4xx")
                    raise lost(value)
                if then == "check":
                    look, delay = "check", 0.0
                elif then == "status":
                    delay = jitter(self.rng, value)
                else:
                    delay = self.transient()
                continue
            r = self.call("tier1.check", "GET", self.check_path(), self.check_headers())
            self.keep_cookies(r)
            self.rec["checks"] += 1
            body = self.check_answer(r)
            if body is None:
                look, delay = "check", self.transient()
                continue
            if body.get("admitted") is True:
                return
            self.position_seen(as_int(body.get("position")))
            if place["position"] is None:
                place["position"] = self.ticket["position"]
            if place["position"] is not None and waiting_since is None:
                waiting_since = time.time()
            est = body.get("estimatedWaitSeconds")
            if self.first_ticket and self.rec["estimateSeconds"] is None and isinstance(est, (int, float)):
                self.rec["estimateSeconds"] = est
                self.rec["estimatedAt"] = time.time()
            self.learn(place, body)
            if body.get("state") == "closed":
                raise lost("closed")
            look = "status" if place["position"] is not None and body.get("state") != "prequeue" else "check"
            delay = jitter(self.rng, hint_of(body))
            self.answer = body

    # ----- from the turn to the leave -----

    def through(self):
        if self.t1 is None:
            self.wait_for_turn()
        page = f"/events/{self.event}"
        tries = 0
        while True:
            r = self.call("edge.event_page", "GET", page, {"cookie": self.cookies()})
            if r.status == 200:
                break
            tries += 1
            if tries > 1:
                self.count("edgeRefused")
                raise lost("edge_refused")
            self.readmit()
        self.rec["passedEdge"] = True
        self.recheck()
        self.tier2()

    def recheck(self):
        """A second tab: the same ticket must answer the same identity, still admitted."""
        r = self.call("tier1.recheck", "GET", self.check_path(), self.check_headers())
        self.keep_cookies(r)
        if 200 <= r.status < 300:
            if r.body.get("admitted") is True:
                if claims_of(r.body.get("token") or "").get("jti") != self.t1_jti:
                    self.count("doubleAdmitted")
            elif r.body.get("state") != "closed":
                self.lose_place("tier1Unadmitted")
        elif ticket_verdict(r.body):
            self.lose_place("tier1Unadmitted")

    def readmit(self):
        while True:
            r = self.call("tier1.check", "GET", self.check_path(), self.check_headers())
            self.keep_cookies(r)
            body = self.check_answer(r)
            if body is None:
                gevent.sleep(self.transient())
                continue
            if body.get("admitted") is True:
                return
            if body.get("state") == "closed":
                raise lost("closed")
            self.lose_place("tier1Unadmitted")
            self.position_seen(as_int(body.get("position")))
            self.t1 = None
            self.answer = body
            raise Stop("line")

    # ----- tier 2 -----

    def tier2_call(self, endpoint, method, path):
        r = self.call(endpoint, method, path, {"cookie": self.cookies()})
        self.keep_cookies(r)
        return r

    @staticmethod
    def tier2_answer(r):
        code = r.body.get("error")
        if 200 <= r.status < 300 and isinstance(r.body.get("status"), str):
            return "place"
        if r.status == 404 and code == "not_in_queue":
            return "not_in_queue"
        if r.status == 404 and code == "event_not_found":
            return "gone"
        if (r.status, code) in ((401, "identity_required"), (403, "invalid_identity"), (403, "tier1_token_required")):
            return "identity"
        if r.status == 409 and code == "position_taken":
            return "position_taken"
        return "transient"

    def tier2_refused(self, answer, refusals):
        if answer == "not_in_queue":
            self.evicted = True
            self.count("rejoinedTier2")
        elif answer == "identity":
            refusals[0] += 1
            if refusals[0] > 3:
                self.count("unexpected4xx")
                raise lost("tier2_identity")
            self.readmit()
        elif answer == "position_taken":
            self.count("unexpected4xx")
            self.lose_place("tier2PositionTaken")
            raise lost("position_taken")
        elif answer == "gone":
            self.count("unexpected4xx")
            raise lost("event_not_found")
        elif answer == "transient":
            gevent.sleep(self.transient())

    def wait_on_line(self, answer, started):
        path = f"/api/queue/line/{self.event}"
        score = as_int(answer.get("lineScore")) or 0
        checked_at = as_time(answer.get("checkedAt")) or 0.0
        seen, seen_at, observed = None, 0.0, None
        # The first read when this place could have moved, as the page.
        gevent.sleep(first_line_read(answer))
        while True:
            if self.abandon_tier2 and time.time() - started > self.abandon_after:
                return False
            r = self.call("tier2.line", "GET", path)
            self.rec["lineReads"] += 1
            doc = r.body
            if not 200 <= r.status < 300 or as_int(doc.get("waiting")) is None:
                return False
            # Both seconds with a millisecond fraction (docs/api.md#times).
            if (as_time(doc.get("updatedAt")) or 0.0) < checked_at:
                gevent.sleep(LINE_STALE_SECONDS)
                continue
            front = as_int(doc.get("front"))
            if front is None or front > score:
                return True
            marks = [(m[0], m[1]) for m in doc.get("marks") or [] if isinstance(m, list) and len(m) == 2]
            place = place_from_marks(marks, score)
            now = time.monotonic()
            observed = progress(seen, seen_at, place, now) or observed
            seen, seen_at = place, now
            hint = next_line_read(place, as_int(doc.get("threshold")) or 1, line_doc_rate(doc), observed)
            gevent.sleep(line_read_delay(hint, self.rng.random()))

    def tier2(self):
        e = self.event
        started = time.time()
        dwell_end = None
        check_in = True
        refusals = [0]
        while True:  # 'admission
            while True:
                if self.abandon_tier2 and time.time() - started > self.abandon_after:
                    raise Stop("end", "abandoned")
                if check_in:
                    r = self.tier2_call("tier2.check", "POST", f"/api/queue/check/{e}")
                else:
                    r = self.tier2_call("tier2.status", "GET", f"/api/queue/status/{e}")
                known_at = time.time()
                answer = self.tier2_answer(r)
                if answer != "place":
                    check_in = check_in or answer != "transient"
                    self.tier2_refused(answer, refusals)
                    continue
                refusals[0], self.errors = 0, 0
                body = r.body
                self.check_threshold(body)
                if self.evicted:
                    self.evicted = False
                    if not (body.get("status") == "active" or body.get("restored") is True):
                        self.lose_place("tier2NotRestored")
                if body.get("status") == "active":
                    token = body.get("entryToken") or ""
                    self.t2_jti = claims_of(token).get("jti")
                    if self.rec["tier2AdmittedAt"] is None:
                        self.rec["tier2AdmittedAt"] = time.time()
                        self.rec["tier2Jti"] = self.t2_jti
                        at = as_time(body.get("admittedAt"))
                        if at is not None:
                            self.rec["tier2IdleSeconds"] = max(known_at - at, 0.0)
                    break
                if as_int(body.get("lineScore")) is not None:
                    left = self.wait_on_line(body, started)
                    check_in = True
                    if not left:
                        gevent.sleep(jitter(self.rng, 1.0))
                else:
                    check_in = False
                    hint = body.get("nextPollSeconds")
                    gevent.sleep(jitter(self.rng, hint if isinstance(hint, (int, float)) else 1.0))

            # The booking call with the entry token (sent back by the edge: the ticket again).
            for attempt in range(2):
                headers = {"cookie": self.cookies(), "x-queue-entry-token": token}
                r = self.call("seats", "GET", f"/api/seats/{e}", headers)
                if r.status == 200:
                    break
                if attempt == 0 and r.body.get("error") == "waiting_room_token_required":
                    self.readmit()
                    continue
                self.count("seatsRefused")
                break

            # Dwell, heartbeating through status (the same identity throughout).
            if dwell_end is None:
                dwell_end = time.time() + CONFIG.dwell
            demoted = False
            while time.time() < dwell_end:
                if self.abandon_tier2:
                    raise Stop("end", "abandoned")
                gevent.sleep(min(CONFIG.dwell, 5.0))
                r = self.tier2_call("tier2.heartbeat", "GET", f"/api/queue/status/{e}")
                answer = self.tier2_answer(r)
                if answer == "place":
                    refusals[0] = 0
                    self.check_threshold(r.body)
                    if r.body.get("status") != "active":
                        self.lose_place("tier2Demoted")
                        check_in, demoted = False, True
                        break
                    jti = claims_of(r.body.get("entryToken") or "").get("jti")
                    if jti is not None and jti != self.t2_jti:
                        self.count("doubleAdmitted")
                elif answer == "transient":
                    self.count("transientRefusals")
                else:
                    self.tier2_refused(answer, refusals)
                    if answer == "not_in_queue":
                        check_in, demoted = True, True
                        break
            if not demoted:
                break
        self.tier2_call("tier2.leave", "POST", f"/api/queue/leave/{e}")
