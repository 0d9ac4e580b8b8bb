"""A rehearsal's settings (env) and this process's records file (rehearsal/locustfile.py;
the format in docs/rehearsal.md#the-records).
"""

import json
import os
import socket
import threading
import time

# The record format's version (`vwr loadtest analyze` refuses other versions).
RECORD_VERSION = 1


def env_float(name, default):
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise SystemExit(f"{name}={raw!r}: expected a number") from None


class Config:
    """The rehearsal's settings, checked once at start-up."""

    def __init__(self):
        self.event = os.environ.get("VWR_EVENT", "")
        self.records_dir = os.environ.get("VWR_RECORDS_DIR", "")
        self.dwell = env_float("VWR_DWELL_SECONDS", 2.0)
        self.abandon_rate = env_float("VWR_ABANDON_RATE", 0.0)
        self.no_show_rate = env_float("VWR_NO_SHOW_RATE", 0.0)
        self.threshold = int(env_float("VWR_THRESHOLD", 0))
        self.max_seconds = env_float("VWR_MAX_SECONDS", 900.0)

    def check(self):
        if not self.event or not all(c.isalnum() or c in "-_" for c in self.event):
            raise SystemExit("VWR_EVENT: set it to the id of an active event (letters, digits, - and _)")
        if not self.records_dir:
            raise SystemExit("VWR_RECORDS_DIR: set it to the directory for the visitors' records")
        for name, rate in (("VWR_ABANDON_RATE", self.abandon_rate), ("VWR_NO_SHOW_RATE", self.no_show_rate)):
            if not 0.0 <= rate <= 1.0:
                raise SystemExit(f"{name}: expected a share from 0 to 1")
        if self.dwell < 0 or self.max_seconds <= 0:
            raise SystemExit("VWR_DWELL_SECONDS and VWR_MAX_SECONDS: expected positive seconds")


CONFIG = Config()


class Records:
    """This process's records file: one JSON line per visitor, flushed as each visitor ends, so
    that a worker stopped early loses nothing already written."""

    def __init__(self):
        self.lock = threading.Lock()
        self.file = None

    def open(self, host):
        os.makedirs(CONFIG.records_dir, exist_ok=True)
        # A file of its own per run (host, process and start time): a reused directory or
        # process id never appends to an earlier run's records.
        tag = f"{socket.gethostname()}-{os.getpid()}-{int(time.time() * 1000)}"
        path = os.path.join(CONFIG.records_dir, f"visitors-{tag}.jsonl")
        self.file = open(path, "x", encoding="utf-8")
        run = {
            "kind": "run",
            "version": RECORD_VERSION,
            "worker": tag,
            "host": host,
            "event": CONFIG.event,
            "dwellSeconds": CONFIG.dwell,
            "abandonRate": CONFIG.abandon_rate,
            "noShowRate": CONFIG.no_show_rate,
            "threshold": CONFIG.threshold,
            "startedAt": time.time(),
        }
        self.write(run)

    def write(self, obj):
        if self.file is None:
            return
        line = json.dumps(obj, separators=(",", ":"))
        with self.lock:
            self.file.write(line + "\n")
            self.file.flush()


RECORDS = Records()
