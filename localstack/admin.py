#!/usr/bin/env python3
"""`vwr admin` for the LocalStack kit: invokes the admin functions directly with the request
API Gateway would send after IAM authentication (LocalStack's free edition does not
authenticate IAM callers, and the functions refuse requests without an IAM identity).

    python3 localstack/admin.py activate e1 [--batch-size 2] [--interval-seconds 1] [--shards 1]
    python3 localstack/admin.py status e1 | deactivate e1 | events | advance e1 --by 100
    python3 localstack/admin.py schedule e1 --prequeue-at +60 --open-at +300 [--close-at +3600]
    python3 localstack/admin.py pause e1 [--en "Back soon"] [--ko "곧 재개"] | resume e1
    python3 localstack/admin.py close e1 --reason sold_out | message e1 --en "…" | message e1 --clear
    python3 localstack/admin.py audit e1
    python3 localstack/admin.py threshold e1 --threshold 50 | queue-status e1 | queue-remove e1

Endpoint: --endpoint-url (default http://localhost:4566). Needs boto3.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import time
import uuid

import boto3


def event(method: str, path: str, body: dict | None) -> dict:
    raw = json.dumps(body) if body is not None else None
    return {
        "resource": path,
        "path": path,
        "httpMethod": method,
        "headers": {"content-type": "application/json", "accept": "application/json"},
        "multiValueHeaders": {"content-type": ["application/json"], "accept": ["application/json"]},
        "queryStringParameters": None,
        "multiValueQueryStringParameters": None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": path,
            "httpMethod": method,
            "path": path,
            "stage": "local",
            "requestId": str(uuid.uuid4()),
            "accountId": "000000000000",
            "apiId": "local",
            "identity": {"userArn": "arn:aws:iam::000000000000:user/localstack-admin", "sourceIp": "127.0.0.1"},
        },
        "body": raw,
        "isBase64Encoded": False,
    }


def when(text: str | None) -> int | None:
    """Unix seconds, or +N seconds from now."""
    if text is None:
        return None
    return int(time.time()) + int(text[1:]) if text.startswith("+") else int(text)


def message(a: argparse.Namespace) -> dict | None:
    m = {k: v for k, v in {"en": a.en, "ko": a.ko}.items() if v}
    return m or None


def main() -> int:
    ap = argparse.ArgumentParser(description="vwr admin against the LocalStack kit")
    ap.add_argument("--endpoint-url", default=os.environ.get("AWS_ENDPOINT_URL", "http://localhost:4566"))
    ap.add_argument("--region", default=os.environ.get("AWS_DEFAULT_REGION", "us-east-1"))
    ap.add_argument("command", choices=["activate", "deactivate", "status", "advance", "events", "schedule", "pause", "resume", "close", "message", "audit", "threshold", "queue-status", "queue-remove"])
    ap.add_argument("event_id", nargs="?")
    ap.add_argument("--batch-size", type=int)
    ap.add_argument("--interval-seconds", type=int)
    ap.add_argument("--shards", type=int)
    ap.add_argument("--token-ttl-seconds", type=int)
    ap.add_argument("--by", type=int)
    ap.add_argument("--threshold", type=int)
    ap.add_argument("--prequeue-at", help="unix seconds or +seconds from now")
    ap.add_argument("--open-at", help="unix seconds or +seconds from now")
    ap.add_argument("--close-at", help="unix seconds or +seconds from now")
    ap.add_argument("--reason", choices=["sold_out", "ended"])
    ap.add_argument("--en")
    ap.add_argument("--ko")
    ap.add_argument("--clear", action="store_true")
    a = ap.parse_args()
    if a.command != "events" and not a.event_id:
        ap.error("an event id is required")
    e = a.event_id
    fn, method, path, body = {
        "activate": ("vwr-tier1-admin", "POST", f"/api/admin/vwr/activate/{e}", {k: v for k, v in {"batchSize": a.batch_size, "intervalSeconds": a.interval_seconds, "shards": a.shards, "tokenTtlSeconds": a.token_ttl_seconds}.items() if v is not None}),
        "deactivate": ("vwr-tier1-admin", "POST", f"/api/admin/vwr/deactivate/{e}", None),
        "status": ("vwr-tier1-admin", "GET", f"/api/admin/vwr/status/{e}", None),
        "advance": ("vwr-tier1-admin", "POST", f"/api/admin/vwr/advance/{e}", {"by": a.by or 1}),
        "events": ("vwr-tier1-admin", "GET", "/api/admin/vwr/events", None),
        "schedule": ("vwr-tier1-admin", "PUT", f"/api/admin/vwr/schedule/{e}", {k: v for k, v in {"prequeueAt": when(a.prequeue_at), "openAt": when(a.open_at), "closeAt": when(a.close_at), "batchSize": a.batch_size, "intervalSeconds": a.interval_seconds, "shards": a.shards, "tokenTtlSeconds": a.token_ttl_seconds}.items() if v is not None}),
        "pause": ("vwr-tier1-admin", "POST", f"/api/admin/vwr/pause/{e}", {"message": message(a)} if message(a) else {}),
        "resume": ("vwr-tier1-admin", "POST", f"/api/admin/vwr/resume/{e}", None),
        "close": ("vwr-tier1-admin", "POST", f"/api/admin/vwr/close/{e}", {"reason": a.reason or "ended", **({"message": message(a)} if message(a) else {})}),
        "message": ("vwr-tier1-admin", "PUT", f"/api/admin/vwr/message/{e}", {"message": None if a.clear else message(a)}),
        "audit": ("vwr-tier1-admin", "GET", f"/api/admin/vwr/audit/{e}", None),
        "threshold": ("vwr-tier2-api", "PUT", f"/api/queue/admin/threshold/{e}", {"threshold": a.threshold or 1000}),
        "queue-status": ("vwr-tier2-api", "GET", f"/api/queue/admin/status/{e}", None),
        "queue-remove": ("vwr-tier2-api", "DELETE", f"/api/queue/admin/event/{e}", None),
    }[a.command]
    lam = boto3.client(
        "lambda",
        endpoint_url=a.endpoint_url,
        region_name=a.region,
        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "test"),
        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "test"),
    )
    out = lam.invoke(FunctionName=fn, Payload=json.dumps(event(method, path, body)).encode())
    payload = json.loads(out["Payload"].read() or b"null")
    if out.get("FunctionError") or not isinstance(payload, dict):
        print(json.dumps(payload, indent=2), file=sys.stderr)
        return 1
    text = payload.get("body") or ""
    if payload.get("isBase64Encoded"):
        text = base64.b64decode(text).decode()
    print(f"HTTP {payload.get('statusCode')}")
    try:
        print(json.dumps(json.loads(text), indent=2))
    except ValueError:
        print(text)
    return 0 if int(payload.get("statusCode", 500)) < 400 else 1


if __name__ == "__main__":
    sys.exit(main())
