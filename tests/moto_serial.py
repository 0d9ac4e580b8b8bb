#!/usr/bin/env python3
"""moto server that handles one request at a time (tests/run.sh starts it).

DynamoDB applies the writes to one item one after another, so two concurrent
`UpdateItem ... ADD n :one` on the same counter can never read the same old value. moto's own
server answers each request on a thread and its DynamoDB backend takes no lock, so under CPU
load two such requests do read the same value and hand out the same number: the tier-1
uniqueness invariant test failed that way on a loaded machine (issue "tests that wait for
events"). Serialising requests restores the guarantee the code relies on; it hides no race of
ours, since our races would be between separate requests, which still interleave freely.

Usage: moto_serial.py [-H HOST] [-p PORT]   (same defaults as moto_server)
"""

import argparse
import os
import threading

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import run_simple


def serialised(app):
    lock = threading.Lock()

    def handle(environ, start_response):
        with lock:
            # Consume the whole answer under the lock: the backend work happens while the
            # response iterable is produced.
            return list(app(environ, start_response))

    return handle


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-H", "--host", default="127.0.0.1")
    p.add_argument("-p", "--port", type=int, default=int(os.environ.get("MOTO_PORT", 5000)))
    args = p.parse_args()
    os.environ.setdefault("MOTO_PORT", str(args.port))
    app = DomainDispatcherApplication(create_backend_app)
    run_simple(args.host, args.port, serialised(app), threaded=True)


if __name__ == "__main__":
    main()
