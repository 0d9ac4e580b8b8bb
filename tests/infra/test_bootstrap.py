#!/usr/bin/env python3
"""Runs localstack/bootstrap.py against moto (functions are never run there) and checks that it
creates what the code expects: the table the tier-1 store uses, valid key material in the two
secrets (and a JWKS that matches the tier-2 key), the FIFO queue with its dead-letter queue,
the six functions with their environment pointing at those resources, the schedule and the REST
API with the entry-token gate. Runs it twice: the second run must keep the keys.

    test_bootstrap.py --endpoint-url URL     (tests/infra/run.sh passes moto's URL)
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import sys
import tempfile

import boto3
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "localstack"))
import bootstrap  # noqa: E402

passed = failed = 0


def check(name: str, problems: list[str]) -> None:
    global passed, failed
    if problems:
        failed += 1
        print(f"FAIL {name}")
        for p in problems:
            print(f"     - {p}")
    else:
        passed += 1
        print(f"ok   {name}")


def b64d(s: str) -> bytes:
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def check_admin_requests() -> None:
    """localstack/admin.py builds the admin calls of docs/api.md (no endpoint needed)."""
    import admin  # noqa: PLC0415 - the kit's own module, next to bootstrap

    def req(*argv: str):
        ap = admin.parser()
        return admin.request(ap.parse_args(list(argv)), ap)

    def refused(*argv: str) -> bool:
        ap = admin.parser()
        ap.error = lambda msg: (_ for _ in ()).throw(ValueError(msg))  # type: ignore[method-assign]
        try:
            admin.request(ap.parse_args(list(argv)), ap)
        except ValueError:
            return True
        return False

    problems = []
    want = {
        ("health", "e1", "--hold", "--reason", "origin 5xx"): ("vwr-tier1-admin", "PUT", "/api/admin/vwr/health/e1", {"ok": False, "reason": "origin 5xx"}),
        ("health", "e1", "--ok"): ("vwr-tier1-admin", "PUT", "/api/admin/vwr/health/e1", {"ok": True}),
        ("activate", "e1", "--mode", "targetArrivals", "--target-per-minute", "600", "--max-batch-size", "900", "--reentry-grace-seconds", "120", "--max-session-seconds", "900"): (
            "vwr-tier1-admin", "POST", "/api/admin/vwr/activate/e1",
            {"mode": "targetArrivals", "targetArrivalsPerMinute": 600, "maxBatchSize": 900, "reentryGraceSeconds": 120, "maxSessionSeconds": 900},
        ),
        ("activate", "e1", "--batch-size", "2", "--mode", "fixed"): ("vwr-tier1-admin", "POST", "/api/admin/vwr/activate/e1", {"batchSize": 2, "mode": "fixed"}),
        ("schedule", "e1", "--prequeue-at", "100", "--open-at", "200", "--mode", "targetArrivals", "--target-per-minute", "60"): (
            "vwr-tier1-admin", "PUT", "/api/admin/vwr/schedule/e1",
            {"prequeueAt": 100, "openAt": 200, "mode": "targetArrivals", "targetArrivalsPerMinute": 60},
        ),
        ("close", "e1", "--reason", "sold_out"): ("vwr-tier1-admin", "POST", "/api/admin/vwr/close/e1", {"reason": "sold_out"}),
    }
    for argv, expected in want.items():
        got = req(*argv)
        if got != expected:
            problems.append(f"{' '.join(argv)}: {got} != {expected}")
    for argv in (("health", "e1"), ("health", "e1", "--hold"), ("health", "e1", "--ok", "--hold"), ("close", "e1", "--reason", "origin 5xx"), ("pause", "e1", "--hold")):
        try:
            if not refused(*argv):
                problems.append(f"{' '.join(argv)} is not refused")
        except SystemExit:
            pass  # argparse refused it itself (mutually exclusive options)
    check("admin.py: health --ok/--hold, outflow and session options of activate/schedule", problems)


ENQUEUE_JWKS = '{"keys":[{"kty":"EC","crv":"P-256","kid":"site-t","x":"x","y":"y"}]}'


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--endpoint-url", required=True)
    a = ap.parse_args()
    region = "us-east-1"
    kw = {"endpoint_url": a.endpoint_url, "region_name": region, "aws_access_key_id": "test", "aws_secret_access_key": "test"}

    with tempfile.TemporaryDirectory() as tmp:
        state_file = os.path.join(tmp, "state.json")
        args = ["--endpoint-url", a.endpoint_url, "--region", region, "--placeholder-code", "--quiet"]
        args += ["--name", f"vwrinfra{os.getpid()}", "--state-file", state_file]
        # The site's enqueue-token keys (an arbitrary, well-formed JWKS: nothing verifies here).
        args += ["--enqueue-jwks", ENQUEUE_JWKS]
        first = bootstrap.main(args)
        second = bootstrap.main(args)
        mode = os.stat(state_file).st_mode & 0o777
    check("state file is private (it holds the tier-1 keys)", [] if mode == 0o600 else [f"mode {oct(mode)}"])
    problems = []
    master = dict(kv.split(":", 1) for kv in first["tier1_keys_text"].split(","))
    edge = dict(kv.split(":", 1) for kv in first["edge_keys_text"].split(","))
    if set(edge) != set(master):
        problems.append(f"edge key ids {sorted(edge)} != tier-1 key ids {sorted(master)}")
    for kid, v in master.items():
        want = base64.urlsafe_b64encode(hashlib.sha256(b"vwr/edge-token/v1:" + v.encode()).digest()).decode().rstrip("=")
        if edge.get(kid) != want:
            problems.append(f"edge key {kid} is not SHA-256(\"vwr/edge-token/v1:\" + master key)")
        if edge.get(kid) == v:
            problems.append(f"edge key {kid} is the master key")
    # The pinned vector (terraform/modules/tier1/README.md, "Edge keys"; Rust HmacKeyring::edge_ring).
    if bootstrap.edge_key(base64.urlsafe_b64encode(bytes([1] * 32)).decode().rstrip("=")) != "39IwIO3pg-GGyq5lSQfUh-kmyM0jAhY1L1z5lJWwaWQ":
        problems.append("the derivation does not give the pinned test vector")
    check("edge keys: derived from the tier-1 keys (never the master keys), pinned vector", problems)
    check(
        "a second run keeps the keys (idempotent)",
        [] if (first["tier1_keys_text"], first["jwks"]) == (second["tier1_keys_text"], second["jwks"]) else ["keys changed"],
    )

    ddb = boto3.client("dynamodb", **kw)
    t = ddb.describe_table(TableName=bootstrap.TABLE)["Table"]
    problems = []
    if {(k["AttributeName"], k["KeyType"]) for k in t["KeySchema"]} != {("pk", "HASH"), ("sk", "RANGE")}:
        problems.append(f"key schema {t['KeySchema']}")
    gsi = {g["IndexName"]: g for g in t.get("GlobalSecondaryIndexes", [])}
    g = gsi.get("active-index")
    if not g or {(k["AttributeName"], k["KeyType"]) for k in g["KeySchema"]} != {("gsi1pk", "HASH"), ("gsi1sk", "RANGE")} or g["Projection"]["ProjectionType"] != "ALL":
        problems.append(f"index active-index: {g}")
    if t.get("BillingModeSummary", {}).get("BillingMode") != "PAY_PER_REQUEST":
        problems.append("billing mode")
    ttl = ddb.describe_time_to_live(TableName=bootstrap.TABLE)["TimeToLiveDescription"]
    if ttl.get("AttributeName") != "expiresAt" or ttl.get("TimeToLiveStatus") not in ("ENABLED", "ENABLING"):
        problems.append(f"TTL {ttl}")
    check("table: pk/sk, active-index (gsi1pk/gsi1sk, ALL), TTL expiresAt, on demand", problems)

    sm = boto3.client("secretsmanager", **kw)
    problems = []
    t1 = json.loads(sm.get_secret_value(SecretId=bootstrap.TIER1_SECRET)["SecretString"])
    if t1.get("signingKid") not in t1.get("keys", {}):
        problems.append("tier-1 signingKid not among the keys")
    for kid, v in t1.get("keys", {}).items():
        if len(b64d(v)) < 32:
            problems.append(f"tier-1 key {kid} is shorter than 32 bytes")
    t2 = json.loads(sm.get_secret_value(SecretId=bootstrap.TIER2_SECRET)["SecretString"])
    kid = t2.get("signingKid")
    try:
        key = serialization.load_der_private_key(b64d(t2["keys"][kid]), password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
            problems.append("tier-2 key is not P-256")
        nums = key.public_key().public_numbers()
        jwk = json.loads(first["jwks"])["keys"][0]
        if (b64d(jwk["x"]), b64d(jwk["y"]), jwk["kid"]) != (nums.x.to_bytes(32, "big"), nums.y.to_bytes(32, "big"), kid):
            problems.append("the JWKS does not match the tier-2 key")
    except Exception as e:  # noqa: BLE001
        problems.append(f"tier-2 key: {e}")
    # Tier 2's link keys: derived from the master keys (edge and place-proof), never the master keys.
    link = json.loads(sm.get_secret_value(SecretId=bootstrap.TIER1_LINK_SECRET)["SecretString"])
    master = t1.get("keys", {})
    if link.get("signingKid") != t1.get("signingKid"):
        problems.append("tier-1 link signingKid is not the tier-1 signingKid")
    if link.get("edge") != {k: bootstrap.edge_key(v) for k, v in master.items()}:
        problems.append("tier-1 link edge keys are not the derived edge keys")
    if link.get("place") != {k: bootstrap.place_key(v) for k, v in master.items()}:
        problems.append("tier-1 link place keys are not the derived place-proof keys")
    if set(master.values()) & (set(link.get("edge", {}).values()) | set(link.get("place", {}).values())):
        problems.append("the tier-1 link secret holds a master key")
    check("secrets: tier-1 HMAC ≥ 32 bytes, tier-1 link keys derived, tier-2 P-256 PKCS#8, JWKS = its public key", problems)

    sqs = boto3.client("sqs", **kw)
    problems = []
    url = sqs.get_queue_url(QueueName=bootstrap.QUEUE)["QueueUrl"]
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    dlq_url = sqs.get_queue_url(QueueName=bootstrap.DLQ)["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    if attrs.get("FifoQueue") != "true" or attrs.get("ContentBasedDeduplication") != "false":
        problems.append(f"queue must be FIFO without content-based deduplication: {attrs}")
    if json.loads(attrs.get("RedrivePolicy", "{}")).get("deadLetterTargetArn") != dlq_arn:
        problems.append("no redrive to the dead-letter queue")
    # The worker's batch: MessageGroupId = eventId, MessageDeduplicationId = userId:eventId.
    r = sqs.send_message_batch(
        QueueUrl=url,
        Entries=[{"Id": "0", "MessageBody": "{}", "MessageGroupId": "e1", "MessageDeduplicationId": "u1:e1"}],
    )
    if r.get("Failed"):
        problems.append(f"a notice batch like the worker's fails: {r['Failed']}")
    check("notices: FIFO queue, redrive to a FIFO DLQ, accepts the worker's batches", problems)

    lam = boto3.client("lambda", **kw)
    problems = []
    resources = {
        "VWR_TABLE": bootstrap.TABLE,
        "VWR_TIER1_KEYS_SECRET_ID": first["tier1_secret"],
        "VWR_TIER1_LINK_SECRET_ID": first["tier1_link"],
        "VWR_TIER2_KEYS_SECRET_ID": first["tier2_secret"],
        "VWR_NOTICE_QUEUE_URL": url,
    }
    for binary, spec in bootstrap.FUNCTIONS.items():
        c = lam.get_function(FunctionName=bootstrap.function_name(binary))["Configuration"]
        env = c.get("Environment", {}).get("Variables", {})
        if set(env) != set(spec["env"]):
            problems.append(f"{binary}: environment {sorted(env)} != {sorted(spec['env'])}")
        for k, want in resources.items():
            if k in env and env[k] != want:
                problems.append(f"{binary}: {k}={env[k]!r}, the resource is {want!r}")
        if "VWR_ENQUEUE_JWKS" in env and env["VWR_ENQUEUE_JWKS"] != ENQUEUE_JWKS:
            problems.append(f"{binary}: VWR_ENQUEUE_JWKS is not the --enqueue-jwks given")
        if "VWR_TIER2_JWKS" in env and env["VWR_TIER2_JWKS"] != first["jwks"]:
            problems.append(f"{binary}: VWR_TIER2_JWKS is not the tier-2 key's JWKS")
        if any("${" in v for v in env.values()):
            problems.append(f"{binary}: unfilled placeholder in {env}")
        if (c["Runtime"], c["Handler"], c["Timeout"]) != ("provided.al2023", "bootstrap", spec["timeout"]):
            problems.append(f"{binary}: {c['Runtime']} {c['Handler']} {c['Timeout']} s")
    check("functions: all six, environment pointing at the created resources", problems)

    events = boto3.client("events", **kw)
    problems = []
    rule = events.describe_rule(Name=bootstrap.RULE)
    if rule.get("ScheduleExpression") != "rate(1 minute)":
        problems.append(f"schedule {rule.get('ScheduleExpression')}")
    targets = {t["Arn"] for t in events.list_targets_by_rule(Rule=bootstrap.RULE)["Targets"]}
    want = {first["functions"][b] for b in bootstrap.SCHEDULED}
    if targets != want:
        problems.append(f"targets {sorted(targets)} != {sorted(want)}")
    check("schedule: advancer and worker every minute", problems)

    apigw = boto3.client("apigateway", **kw)
    problems = []
    apis = [x for x in apigw.get_rest_apis()["items"] if x["name"] == f"{bootstrap.NAME}-local"]
    if len(apis) != 1:
        problems.append(f"{len(apis)} REST APIs named {bootstrap.NAME}-local (a rerun must replace, not add)")
    else:
        api_id = apis[0]["id"]
        paths = {r["path"]: r for r in apigw.get_resources(restApiId=api_id, embed=["methods"])["items"]}
        for path, method, binary, _auth in bootstrap.ROUTES:
            if path not in paths:
                problems.append(f"no resource {path}")
                continue
            m = apigw.get_method(restApiId=api_id, resourceId=paths[path]["id"], httpMethod=method)
            uri = (m.get("methodIntegration") or {}).get("uri", "")
            if first["functions"][binary] not in uri:
                problems.append(f"{method} {path} does not invoke {binary}: {uri!r}")
        if ("/vwr/release/{eventId}", "POST", "vwr-tier1-api", "NONE") not in bootstrap.ROUTES:
            problems.append("no POST /vwr/release/{eventId} (early release) in ROUTES")
        auths = apigw.get_authorizers(restApiId=api_id)["items"]
        if not auths or auths[0]["type"] != "REQUEST" or first["functions"]["vwr-tier2-authorizer"] not in auths[0]["authorizerUri"]:
            problems.append(f"authorizer {auths}")
        for path in bootstrap.GATED:
            m = apigw.get_method(restApiId=api_id, resourceId=paths[path]["id"], httpMethod="ANY") if path in paths else None
            if not m or m.get("authorizationType") != "CUSTOM":
                problems.append(f"{path} is not behind the authorizer")
    check("REST API: tier-1 and tier-2 routes, protected paths behind the entry-token authorizer", problems)

    check_admin_requests()

    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
