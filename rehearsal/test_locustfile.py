"""The rehearsal visitor's requests, against a local server that answers as the edge does:
`python -m unittest discover -s rehearsal` (needs Locust: rehearsal/requirements.txt)."""

import http.server
import threading
import time
import unittest

from locust.env import Environment

from locustfile import Visitor


class Edge(http.server.BaseHTTPRequestHandler):
    """/events/…: the edge's refusal, a 302 to the waiting room; /busy/date, /busy/soon: a 503
    (then a 200) with an HTTP-date Retry-After long past, or one that is neither a date nor
    seconds; /vwr/…: the waiting page."""

    def do_GET(self):  # noqa: N802 - the handler's name
        if self.path.startswith("/events/"):
            self.send_response(302)
            self.send_header("location", "/vwr/e1")
        elif self.path.startswith("/busy/"):
            self.send_response(200 if self.path in self.server.served else 503)
            past = "Wed, 21 Oct 2015 07:28:00 GMT"
            self.send_header("retry-after", past if self.path == "/busy/date" else "soon")
            self.server.served.add(self.path)
        else:
            self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *_args):
        pass


class Requests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Edge)
        cls.server.served = set()
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        host = f"http://127.0.0.1:{cls.server.server_address[1]}"
        Visitor.host = host
        cls.visitor = Visitor(Environment(user_classes=[Visitor], host=host))

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()

    def setUp(self):
        self.visitor.new_record()
        self.visitor.deadline = time.time() + 30

    def test_the_edges_refusal_is_seen_not_followed(self):
        reply = self.visitor.call("edge.event_page", "GET", "/events/e1")
        self.assertEqual(reply.status, 302)
        self.assertEqual([c["status"] for c in self.visitor.rec["calls"]], [302])

    def test_a_retry_after_is_read_as_the_page_reads_it(self):
        # A date (long past: no wait) is a hint, as on the page (static/test/page-rules.json).
        reply = self.visitor.call("tier1.status", "GET", "/busy/date")
        self.assertEqual(reply.status, 200)
        first = self.visitor.rec["calls"][0]
        self.assertEqual((first["status"], first["retryAfter"]), (503, True))

    def test_a_retry_after_that_is_neither_seconds_nor_a_date_is_no_hint(self):
        reply = self.visitor.call("tier1.status", "GET", "/busy/soon")
        self.assertEqual(reply.status, 200)
        first = self.visitor.rec["calls"][0]
        self.assertEqual((first["status"], first["retryAfter"]), (503, False))


if __name__ == "__main__":
    unittest.main()
