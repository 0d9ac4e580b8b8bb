#!/usr/bin/env python3
"""`vwr admin` for the LocalStack kit: invokes the admin functions directly with the request
API Gateway would send after IAM authentication (LocalStack's free edition does not
authenticate IAM callers, and the functions refuse requests without an IAM identity).

    python3 localstack/admin.py activate e1 [--batch-size 2] [--interval-seconds 1] [--shards 1]
    python3 localstack/admin.py activate e1 --mode targetArrivals --target-per-minute 600
        [--max-batch-size 5000] [--reentry-grace-seconds 300] [--max-session-seconds 1800]
    python3 localstack/admin.py status e1 | deactivate e1 | events | advance e1 --by 100
    python3 localstack/admin.py schedule e1 --prequeue-at +60 --open-at +300 [--close-at +3600]
        [any option of activate]
    python3 localstack/admin.py pause e1 [--en "Back soon"] [--ko "곧 재개"] | resume e1
    python3 localstack/admin.py close e1 --reason sold_out | message e1 --en "…" | message e1 --clear
    python3 localstack/admin.py health e1 --hold --reason "origin 5xx" | health e1 --ok
    python3 localstack/admin.py audit e1
    python3 localstack/admin.py standby e1 --alarm site-requests-spike [any option of activate] | standby-end e1
    python3 localstack/admin.py pass-create e1 --label monitor [--ttl-seconds 3600] | pass-list e1
    python3 localstack/admin.py pass-revoke e1 --pass-id pAbCdEfGhIjK
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


def config(a: argparse.Namespace) -> dict:
    """The configuration fields of activate / schedule that were given."""
    fields = {
        "batchSize": a.batch_size,
        "intervalSeconds": a.interval_seconds,
        "shards": a.shards,
        "tokenTtlSeconds": a.token_ttl_seconds,
        "mode": a.mode,
        "targetArrivalsPerMinute": a.target_per_minute,
        "maxBatchSize": a.max_batch_size,
        "reentryGraceSeconds": a.reentry_grace_seconds,
        "maxSessionSeconds": a.max_session_seconds,
    }
    return {k: v for k, v in fields.items() if v is not None}


CLOSE_REASONS = ("sold_out", "ended")


def request(a: argparse.Namespace, ap: argparse.ArgumentParser) -> tuple[str, str, str, dict | None]:
    """(function, method, path, body) of the command."""
    e = a.event_id
    if a.command == "close" and a.reason is not None and a.reason not in CLOSE_REASONS:
        ap.error(f"close --reason must be one of {', '.join(CLOSE_REASONS)}")
    if a.command == "health" and a.ok == a.hold:
        ap.error("health needs --ok (let the advancer go on) or --hold (hold it)")
    if a.command == "health" and a.hold and not (a.reason or "").strip():
        ap.error("health --hold needs --reason (shown in the status and the audit trail)")
    if a.command == "standby" and not a.alarm:
        ap.error("standby needs --alarm (the CloudWatch alarm that opens the event)")
    if a.command == "pass-create" and not a.label:
        ap.error("pass-create needs --label")
    if a.command == "pass-revoke" and not a.pass_id:
        ap.error("pass-revoke needs --pass-id")
    if a.command != "health" and (a.ok or a.hold):
        ap.error("--ok and --hold belong to the health command")
    health = {"ok": bool(a.ok), **({"reason": a.reason} if a.reason else {})}
    return {
        "activate": ("vwr-tier1-admin", "POST", f"/api/admin/vwr/activate/{e}", config(a)),
        "deactivate": ("vwr-tier1-admin", "POST", f"/api/admin/vwr/deactivate/{e}", None),
        "status": ("vwr-tier1-admin", "GET", f"/api/admin/vwr/status/{e}", None),
        "advance": ("vwr-tier1-admin", "POST", f"/api/admin/vwr/advance/{e}", {"by": a.by or 1}),
        "events": ("vwr-tier1-admin", "GET", "/api/admin/vwr/events", None),
        "schedule": ("vwr-tier1-admin", "PUT", f"/api/admin/vwr/schedule/{e}", {k: v for k, v in {"prequeueAt": when(a.prequeue_at), "openAt": when(a.open_at), "closeAt": when(a.close_at)}.items() if v is not None} | config(a)),
        "pause": ("vwr-tier1-admin", "POST", f"/api/admin/vwr/pause/{e}", {"message": message(a)} if message(a) else {}),
        "resume": ("vwr-tier1-admin", "POST", f"/api/admin/vwr/resume/{e}", None),
        "close": ("vwr-tier1-admin", "POST", f"/api/admin/vwr/close/{e}", {"reason": a.reason or "ended", **({"message": message(a)} if message(a) else {})}),
        "message": ("vwr-tier1-admin", "PUT", f"/api/admin/vwr/message/{e}", {"message": None if a.clear else message(a)}),
        "health": ("vwr-tier1-admin", "PUT", f"/api/admin/vwr/health/{e}", health),
        "audit": ("vwr-tier1-admin", "GET", f"/api/admin/vwr/audit/{e}", None),
        "standby": ("vwr-tier1-admin", "PUT", f"/api/admin/vwr/standby/{e}", {"alarm": a.alarm} | config(a)),
        "standby-end": ("vwr-tier1-admin", "DELETE", f"/api/admin/vwr/standby/{e}", None),
        "pass-create": ("vwr-tier1-admin", "POST", f"/api/admin/vwr/pass/{e}", {"label": a.label, "ttlSeconds": a.ttl_seconds or 3600}),
        "pass-list": ("vwr-tier1-admin", "GET", f"/api/admin/vwr/pass/{e}", None),
        "pass-revoke": ("vwr-tier1-admin", "DELETE", f"/api/admin/vwr/pass/{e}/{a.pass_id}", None),
        "threshold": ("vwr-tier2-api", "PUT", f"/api/queue/admin/threshold/{e}", {"threshold": a.threshold or 1000}),
        "queue-status": ("vwr-tier2-api", "GET", f"/api/queue/admin/status/{e}", None),
        "queue-remove": ("vwr-tier2-api", "DELETE", f"/api/queue/admin/event/{e}", None),
    }[a.command]


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description="vwr admin against the LocalStack kit")
    ap.add_argument("--endpoint-url", default=os.environ.get("AWS_ENDPOINT_URL", "http://localhost:4566"))
    ap.add_argument("--region", default=os.environ.get("AWS_DEFAULT_REGION", "us-east-1"))
    ap.add_argument("command", choices=["activate", "deactivate", "status", "advance", "events", "schedule", "pause", "resume", "close", "message", "health", "audit", "standby", "standby-end", "pass-create", "pass-list", "pass-revoke", "threshold", "queue-status", "queue-remove"])
    ap.add_argument("event_id", nargs="?")
    ap.add_argument("--batch-size", type=int)
    ap.add_argument("--interval-seconds", type=int)
    ap.add_argument("--shards", type=int)
    ap.add_argument("--token-ttl-seconds", type=int)
    ap.add_argument("--mode", choices=["fixed", "targetArrivals"], help="outflow mode (docs/outflow.md)")
    ap.add_argument("--target-per-minute", type=int, help="targetArrivals: redeemed admissions per minute to aim at")
    ap.add_argument("--max-batch-size", type=int, help="targetArrivals: the most positions one step serves")
    ap.add_argument("--reentry-grace-seconds", type=int, help="sessions: a new token this long after the last one expired")
    ap.add_argument("--max-session-seconds", type=int, help="sessions: no token past the first admission + this")
    ap.add_argument("--by", type=int)
    ap.add_argument("--threshold", type=int)
    ap.add_argument("--prequeue-at", help="unix seconds or +seconds from now")
    ap.add_argument("--open-at", help="unix seconds or +seconds from now")
    ap.add_argument("--close-at", help="unix seconds or +seconds from now")
    ap.add_argument("--reason", help="close: sold_out or ended; health: why it is held (free text)")
    hold = ap.add_mutually_exclusive_group()
    hold.add_argument("--ok", action="store_true", help="health: let the advancer go on")
    hold.add_argument("--hold", action="store_true", help="health: hold the advancer (nobody new is let in)")
    ap.add_argument("--alarm", help="standby: the CloudWatch alarm whose ALARM state opens the event")
    ap.add_argument("--label", help="pass-create: who or what the pass is for")
    ap.add_argument("--ttl-seconds", type=int, help="pass-create: its life, 60-43200 s")
    ap.add_argument("--pass-id", help="pass-revoke: the passId pass-create printed")
    ap.add_argument("--en")
    ap.add_argument("--ko")
    ap.add_argument("--clear", action="store_true")
    return ap


def main() -> int:
    ap = parser()
    a = ap.parse_args()
    if a.command != "events" and not a.event_id:
        ap.error("an event id is required")
    fn, method, path, body = request(a, ap)
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
