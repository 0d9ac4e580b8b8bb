#!/usr/bin/env python3
"""Creates vwr's AWS resources on any AWS-compatible endpoint (LocalStack, moto, …).

What the code expects, in the same shapes as terraform/ (tests/infra checks both against the
Rust sources): the tier-1 table (pk/sk, index active-index, TTL expiresAt), the two key secrets
(generated here) and tier 2's link keys derived from the tier-1 keys, the admission-notice FIFO queue with its dead-letter queue, the six Lambda
functions from dist/lambda/<binary>.zip, an EventBridge rule that runs the advancer and the
worker every minute, and one REST API with the public routes and the entry-token gate.

    python3 localstack/bootstrap.py --endpoint-url http://localhost:4566 [--dist dist]
        [--redis-url redis://redis:6379] [--state-file FILE] [--no-lambdas]

Idempotent: existing resources are kept (keys are never regenerated), functions are updated.
Needs boto3 (LocalStack's own Python has it; so do tests/.venv and tests/infra/.venv) and, for
the tier-2 key, the `cryptography` package or the `openssl` command.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import secrets
import subprocess
import sys
import time

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

ACTIVE_INDEX = "active-index"
STAGE = "local"


def configure(name: str) -> None:
    """Resource names from a prefix (--name; tests use their own so runs never collide)."""
    global NAME, TABLE, TIER1_SECRET, TIER1_LINK_SECRET, TIER2_SECRET, REDIS_SECRET, QUEUE, DLQ, ROLE, RULE
    NAME = name
    TABLE = f"{name}-tier1"
    TIER1_SECRET = f"{name}/tier1-keys"
    TIER1_LINK_SECRET = f"{name}/tier1-link"
    TIER2_SECRET = f"{name}/tier2-keys"
    REDIS_SECRET = f"{name}/redis-url"
    QUEUE = f"{name}-notices.fifo"
    DLQ = f"{name}-notices-dlq.fifo"
    ROLE = f"{name}-localstack-lambda"
    RULE = f"{name}-every-minute"


def function_name(binary: str) -> str:
    """vwr-tier1-api with the default prefix; <name>-tier1-api otherwise."""
    return NAME + binary[len("vwr") :]


configure("vwr")

# Placeholders filled in by environment(): ${table}, ${tier1_secret}, ${tier1_link}, ${tier2_secret},
# ${queue_url}, ${redis_secret}, ${jwks}, ${enqueue_jwks} (a variable whose value is empty is left out).
TIER1_ENV = {
    "VWR_TIER1_KEYS_SECRET_ID": "${tier1_secret}",
    "VWR_TABLE": "${table}",
    "RUST_LOG": "info",
}
TIER2_SETTINGS = {
    # The URL may carry a password: it goes through Secrets Manager, as in terraform/.
    "VWR_REDIS_URL_SECRET_ID": "${redis_secret}",
    "VWR_TIER2_KEYS_SECRET_ID": "${tier2_secret}",
    "RUST_LOG": "info",
}
# lambda_http puts a REST API's stage in front of the path unless told not to (the AWS
# deployment uses HTTP APIs on the $default stage, where this does not arise).
REST_STAGE = {"AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH": "true"}

# binary -> function settings. Timeouts as in terraform/ (the scheduled ones run ~57 s).
FUNCTIONS = {
    # VWR_ENQUEUE_JWKS: the site's enqueue-token keys (--enqueue-jwks); left out when not given.
    "vwr-tier1-api": {"timeout": 10, "memory": 256, "env": {**TIER1_ENV, **REST_STAGE, "VWR_ENQUEUE_JWKS": "${enqueue_jwks}"}},
    "vwr-tier1-admin": {"timeout": 15, "memory": 128, "env": {**TIER1_ENV, **REST_STAGE, "VWR_ENQUEUE_JWKS": "${enqueue_jwks}"}},
    "vwr-tier1-advancer": {"timeout": 75, "memory": 128, "env": dict(TIER1_ENV)},
    "vwr-tier2-api": {
        "timeout": 10,
        "memory": 256,
        # Tier 2 reads callers' tier-1 tokens with the derived link keys, never the master keys.
        "env": {**TIER2_SETTINGS, "VWR_TIER1_LINK_SECRET_ID": "${tier1_link}", "VWR_TABLE": "${table}", **REST_STAGE},
    },
    "vwr-tier2-worker": {
        "timeout": 75,
        "memory": 256,
        "env": {**TIER2_SETTINGS, "VWR_NOTICE_QUEUE_URL": "${queue_url}", "VWR_TABLE": "${table}"},
    },
    "vwr-tier2-authorizer": {
        "timeout": 5,
        "memory": 128,
        "env": {"VWR_TIER2_JWKS": "${jwks}", "VWR_TIER1_LINK_SECRET_ID": "${tier1_link}", "RUST_LOG": "info"},
    },
}
SCHEDULED = ["vwr-tier1-advancer", "vwr-tier2-worker"]

# REST API layout: path -> (method, binary, authorization). The tier-1 routes are served without
# the /vwr-api prefix, as behind CloudFront; localstack/cloudfront-router.mjs adds the layout.
ROUTES = [
    ("/vwr/assign/{eventId}", "POST", "vwr-tier1-api", "NONE"),
    ("/vwr/check/{eventId}/{requestId}", "GET", "vwr-tier1-api", "NONE"),
    ("/vwr/status/{eventId}", "GET", "vwr-tier1-api", "NONE"),
    # The page document (docs/brand.md).
    ("/vwr/page/{eventId}", "GET", "vwr-tier1-api", "NONE"),
    # Early release (docs/outflow.md#early-release): the visitor's tier-1 token in x-vwr-token or
    # the tier-1 cookie.
    ("/vwr/release/{eventId}", "POST", "vwr-tier1-api", "NONE"),
    ("/api/queue/{proxy+}", "ANY", "vwr-tier2-api", "NONE"),
]
# No admin routes: LocalStack's free edition does not authenticate IAM callers, and the admin
# functions refuse requests without an IAM identity. localstack/admin.py invokes them directly
# with the identity API Gateway would add.
# Protected-API stand-in: the entry-token authorizer in front of a mock answer.
GATED = ["/api/seats/{proxy+}", "/api/reservations/{proxy+}"]


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


# The edge verifies tier-1 tokens with keys derived from the master keys, never the master keys
# themselves (terraform/modules/tier1: SHA-256 of this label + the unpadded base64url master key,
# as HmacKeyring::edge_ring).
EDGE_KEY_LABEL = "vwr/edge-token/v1:"


def edge_key(master_b64url: str) -> str:
    return b64url(hashlib.sha256((EDGE_KEY_LABEL + master_b64url).encode()).digest())


# Tier 2 gets the edge keys and the place-proof keys (HmacKeyring::place_ring), never the master
# keys: {"signingKid", "edge": {kid: key}, "place": {kid: key}} (VWR_TIER1_LINK_SECRET_ID).
PLACE_KEY_LABEL = "vwr/tier2-place/v1:"


def place_key(master_b64url: str) -> str:
    return b64url(hashlib.sha256((PLACE_KEY_LABEL + master_b64url).encode()).digest())


def link_keys(ring: dict) -> str:
    keys = ring["keys"]
    return json.dumps({
        "signingKid": ring.get("signingKid") or sorted(keys)[-1],
        "edge": {k: edge_key(v) for k, v in keys.items()},
        "place": {k: place_key(v) for k, v in keys.items()},
    })


def p256_pkcs8() -> tuple[bytes, str, str]:
    """A fresh P-256 key: PKCS#8 DER, and the public x, y (base64url)."""
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        key = ec.generate_private_key(ec.SECP256R1())
        der = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        nums = key.public_key().public_numbers()
        return der, b64url(nums.x.to_bytes(32, "big")), b64url(nums.y.to_bytes(32, "big"))
    except ImportError:
        der = subprocess.run(
            ["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-outform", "DER"],
            check=True,
            capture_output=True,
        ).stdout
        spki = subprocess.run(
            ["openssl", "pkey", "-inform", "DER", "-pubout", "-outform", "DER"], input=der, check=True, capture_output=True
        ).stdout
        point = spki[-65:]
        return der, b64url(point[1:33]), b64url(point[33:65])


class Bootstrap:
    def __init__(self, endpoint: str, region: str) -> None:
        cfg = Config(retries={"max_attempts": 5, "mode": "standard"})
        kw = {"endpoint_url": endpoint, "region_name": region, "config": cfg}
        kw.update({"aws_access_key_id": os.environ.get("AWS_ACCESS_KEY_ID", "test"), "aws_secret_access_key": os.environ.get("AWS_SECRET_ACCESS_KEY", "test")})
        self.ddb = boto3.client("dynamodb", **kw)
        self.sm = boto3.client("secretsmanager", **kw)
        self.sqs = boto3.client("sqs", **kw)
        self.iam = boto3.client("iam", **kw)
        self.lam = boto3.client("lambda", **kw)
        self.apigw = boto3.client("apigateway", **kw)
        self.events = boto3.client("events", **kw)
        self.endpoint = endpoint
        self.enqueue_jwks = ""
        self.region = region
        self.out: dict = {"endpoint": endpoint, "region": region}

    # --- data -----------------------------------------------------------------------------------

    def table(self) -> None:
        try:
            self.ddb.describe_table(TableName=TABLE)
        except ClientError as e:
            if e.response["Error"]["Code"] != "ResourceNotFoundException":
                raise
            self.ddb.create_table(
                TableName=TABLE,
                BillingMode="PAY_PER_REQUEST",
                AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "gsi1pk", "gsi1sk")],
                KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
                GlobalSecondaryIndexes=[
                    {
                        "IndexName": ACTIVE_INDEX,
                        "KeySchema": [{"AttributeName": "gsi1pk", "KeyType": "HASH"}, {"AttributeName": "gsi1sk", "KeyType": "RANGE"}],
                        "Projection": {"ProjectionType": "ALL"},
                    }
                ],
            )
            self.ddb.get_waiter("table_exists").wait(TableName=TABLE)
        if self._ttl_off():
            self.ddb.update_time_to_live(TableName=TABLE, TimeToLiveSpecification={"Enabled": True, "AttributeName": "expiresAt"})
        self.out["table"] = TABLE

    def _ttl_off(self) -> bool:
        d = self.ddb.describe_time_to_live(TableName=TABLE)["TimeToLiveDescription"]
        return d.get("TimeToLiveStatus") not in ("ENABLED", "ENABLING")

    def _secret(self, name: str, make) -> tuple[str, str]:
        try:
            d = self.sm.describe_secret(SecretId=name)
            value = self.sm.get_secret_value(SecretId=name)["SecretString"]
            return d["ARN"], value
        except ClientError as e:
            if e.response["Error"]["Code"] != "ResourceNotFoundException":
                raise
        value = make()
        arn = self.sm.create_secret(Name=name, SecretString=value)["ARN"]
        return arn, value

    def keys(self) -> None:
        arn1, v1 = self._secret(TIER1_SECRET, lambda: json.dumps({"signingKid": "k1", "keys": {"k1": b64url(secrets.token_bytes(32))}}))
        generated: dict = {}

        def tier2() -> str:
            der, x, y = p256_pkcs8()
            generated["jwk"] = {"kty": "EC", "crv": "P-256", "kid": "k1", "alg": "ES256", "use": "sig", "x": x, "y": y}
            return json.dumps({"signingKid": "k1", "keys": {"k1": b64url(der)}})

        arn2, v2 = self._secret(TIER2_SECRET, tier2)
        if "jwk" not in generated:
            generated["jwk"] = jwk_of(json.loads(v2))
        ring = json.loads(v1)
        link_arn, link = self._secret(TIER1_LINK_SECRET, lambda: link_keys(ring))
        if link != link_keys(ring):
            self.sm.put_secret_value(SecretId=link_arn, SecretString=link_keys(ring))
        self.out.update(
            tier1_secret=arn1,
            tier1_link=link_arn,
            tier2_secret=arn2,
            jwks=json.dumps({"keys": [generated["jwk"]]}, separators=(",", ":")),
            tier1_keys_text=",".join(f"{k}:{v}" for k, v in ring["keys"].items()),
            # For the local edge proxy (--keys): derived, like the KeyValueStore's `keys`.
            edge_keys_text=",".join(f"{k}:{edge_key(v)}" for k, v in ring["keys"].items()),
        )

    def queues(self) -> None:
        dlq_url = self.sqs.create_queue(QueueName=DLQ, Attributes={"FifoQueue": "true", "MessageRetentionPeriod": "1209600"})["QueueUrl"]
        dlq_arn = self.sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        attrs = {
            "FifoQueue": "true",
            "ContentBasedDeduplication": "false",
            "DeduplicationScope": "messageGroup",
            "FifoThroughputLimit": "perMessageGroupId",
            "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 5}),
        }
        url = self.sqs.create_queue(QueueName=QUEUE, Attributes=attrs)["QueueUrl"]
        self.out.update(queue_url=url, dlq_url=dlq_url)

    # --- functions ------------------------------------------------------------------------------

    def role(self) -> str:
        trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
        try:
            return self.iam.get_role(RoleName=ROLE)["Role"]["Arn"]
        except ClientError:
            return self.iam.create_role(RoleName=ROLE, AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]

    def redis_secret(self, redis_url: str) -> str:
        """The secret holding the Redis URL (created, or updated to `redis_url`)."""
        arn, value = self._secret(REDIS_SECRET, lambda: redis_url)
        if value != redis_url:
            self.sm.put_secret_value(SecretId=arn, SecretString=redis_url)
        return arn

    def environment(self, binary: str, redis_url: str) -> dict:
        values = {
            "table": self.out["table"],
            "tier1_secret": self.out["tier1_secret"],
            "tier1_link": self.out["tier1_link"],
            "tier2_secret": self.out["tier2_secret"],
            "queue_url": self.out["queue_url"],
            "redis_secret": self.redis_secret(redis_url),
            "jwks": self.out["jwks"],
            "enqueue_jwks": self.enqueue_jwks,
        }
        env = {}
        for k, v in FUNCTIONS[binary]["env"].items():
            for name, value in values.items():
                v = v.replace("${" + name + "}", value)
            if v:
                env[k] = v
        return env

    def functions(self, dist: str, redis_url: str, placeholder_code: bool) -> None:
        role = self.role()
        arns = {}
        for binary, spec in FUNCTIONS.items():
            zip_path = os.path.join(dist, "lambda", f"{binary}.zip")
            if placeholder_code:
                code = placeholder_zip()
            else:
                with open(zip_path, "rb") as fh:
                    code = fh.read()
            conf = {
                "Runtime": "provided.al2023",
                "Handler": "bootstrap",
                "Role": role,
                "Timeout": spec["timeout"],
                "MemorySize": spec["memory"],
                "Environment": {"Variables": self.environment(binary, redis_url)},
            }
            fn = function_name(binary)
            try:
                self.lam.get_function(FunctionName=fn)
                self.lam.update_function_code(FunctionName=fn, ZipFile=code)
                self._wait(fn)
                self.lam.update_function_configuration(FunctionName=fn, **conf)
            except ClientError as e:
                if e.response["Error"]["Code"] != "ResourceNotFoundException":
                    raise
                self.lam.create_function(FunctionName=fn, Code={"ZipFile": code}, Architectures=["x86_64"], **conf)
            self._wait(fn)
            arns[binary] = self.lam.get_function(FunctionName=fn)["Configuration"]["FunctionArn"]
        self.out["functions"] = arns

    def _wait(self, name: str) -> None:
        for _ in range(120):
            c = self.lam.get_function(FunctionName=name)["Configuration"]
            if c.get("State", "Active") != "Pending" and c.get("LastUpdateStatus", "Successful") != "InProgress":
                return
            time.sleep(0.5)

    def schedule(self) -> None:
        """An EventBridge rule every minute (the AWS deployment uses EventBridge Scheduler)."""
        rule_arn = self.events.put_rule(Name=RULE, ScheduleExpression="rate(1 minute)", State="ENABLED")["RuleArn"]
        targets = []
        for i, binary in enumerate(SCHEDULED):
            arn = self.out["functions"][binary]
            targets.append({"Id": f"t{i}", "Arn": arn, "Input": json.dumps({"source": "vwr.schedule"})})
            self._permit(binary, "events.amazonaws.com", rule_arn, "events")
        self.events.put_targets(Rule=RULE, Targets=targets)
        self.out["schedule_rule"] = RULE

    def _permit(self, binary: str, principal: str, source_arn: str, sid: str) -> None:
        try:
            self.lam.add_permission(FunctionName=function_name(binary), StatementId=sid, Action="lambda:InvokeFunction", Principal=principal, SourceArn=source_arn)
        except ClientError as e:
            if e.response["Error"]["Code"] != "ResourceConflictException":
                raise

    # --- REST API -------------------------------------------------------------------------------

    def api(self) -> None:
        existing = [a for a in self.apigw.get_rest_apis(limit=500)["items"] if a["name"] == f"{NAME}-local"]
        for a in existing:  # rebuilt each time: simpler than diffing resources
            self.apigw.delete_rest_api(restApiId=a["id"])
        api_id = self.apigw.create_rest_api(name=f"{NAME}-local", endpointConfiguration={"types": ["REGIONAL"]})["id"]
        resources = {r["path"]: r["id"] for r in self.apigw.get_resources(restApiId=api_id)["items"]}

        def resource(path: str) -> str:
            if path in resources:
                return resources[path]
            parent, _, part = path.rpartition("/")
            rid = self.apigw.create_resource(restApiId=api_id, parentId=resource(parent or "/"), pathPart=part)["id"]
            resources[path] = rid
            return rid

        def lambda_uri(binary: str) -> str:
            arn = self.out["functions"][binary]
            return f"arn:aws:apigateway:{self.region}:lambda:path/2015-03-31/functions/{arn}/invocations"

        account = self.out["functions"]["vwr-tier1-api"].split(":")[4]
        source = f"arn:aws:execute-api:{self.region}:{account}:{api_id}/*"
        for path, method, binary, auth in ROUTES:
            rid = resource(path)
            self.apigw.put_method(restApiId=api_id, resourceId=rid, httpMethod=method, authorizationType=auth)
            self.apigw.put_integration(restApiId=api_id, resourceId=rid, httpMethod=method, type="AWS_PROXY", integrationHttpMethod="POST", uri=lambda_uri(binary))
            self._permit(binary, "apigateway.amazonaws.com", source, f"apigw-{api_id}")

        authorizer = self.apigw.create_authorizer(
            restApiId=api_id,
            name="entry-token",
            type="REQUEST",
            authorizerUri=lambda_uri("vwr-tier2-authorizer"),
            identitySource="method.request.header.x-queue-entry-token",
            authorizerResultTtlInSeconds=0,
        )["id"]
        self._permit("vwr-tier2-authorizer", "apigateway.amazonaws.com", source, f"apigw-{api_id}")
        for path in GATED:
            rid = resource(path)
            self.apigw.put_method(restApiId=api_id, resourceId=rid, httpMethod="ANY", authorizationType="CUSTOM", authorizerId=authorizer)
            self.apigw.put_integration(restApiId=api_id, resourceId=rid, httpMethod="ANY", type="MOCK", requestTemplates={"application/json": '{"statusCode": 200}'})
            self.apigw.put_method_response(restApiId=api_id, resourceId=rid, httpMethod="ANY", statusCode="200")
            self.apigw.put_integration_response(
                restApiId=api_id, resourceId=rid, httpMethod="ANY", statusCode="200",
                responseTemplates={"application/json": '{"ok":true,"note":"protected API stand-in: the entry token was accepted"}'},
            )
        self.apigw.put_gateway_response(
            restApiId=api_id,
            responseType="ACCESS_DENIED",
            statusCode="403",
            responseTemplates={"application/json": '{"error":"$context.authorizer.error","message":"$context.authorizer.message","redirectTo":"$context.authorizer.redirectTo"}'},
        )
        self.apigw.create_deployment(restApiId=api_id, stageName=STAGE)
        base = self.endpoint.rstrip("/")
        self.out.update(
            rest_api_id=api_id,
            api_url=f"{base}/restapis/{api_id}/{STAGE}/_user_request_",
        )


def jwk_of(doc: dict) -> dict:
    kid = doc["signingKid"]
    der = base64.urlsafe_b64decode(doc["keys"][kid] + "=" * (-len(doc["keys"][kid]) % 4))
    try:
        from cryptography.hazmat.primitives import serialization

        key = serialization.load_der_private_key(der, password=None)
        nums = key.public_key().public_numbers()
        x, y = nums.x.to_bytes(32, "big"), nums.y.to_bytes(32, "big")
    except ImportError:
        spki = subprocess.run(["openssl", "pkey", "-inform", "DER", "-pubout", "-outform", "DER"], input=der, check=True, capture_output=True).stdout
        x, y = spki[-64:-32], spki[-32:]
    return {"kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256", "use": "sig", "x": b64url(x), "y": b64url(y)}


def placeholder_zip() -> bytes:
    """A zip with an empty `bootstrap`, for emulators that never run functions (moto)."""
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("bootstrap", "#!/bin/sh\nexit 1\n")
    return buf.getvalue()


def main(argv: list[str] | None = None) -> dict:
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--endpoint-url", required=True, help="AWS-compatible endpoint, e.g. http://localhost:4566")
    ap.add_argument("--region", default=os.environ.get("AWS_DEFAULT_REGION", "us-east-1"))
    ap.add_argument("--dist", default=os.path.join(here, "..", "dist"), help="dist/ of scripts/package.sh")
    ap.add_argument("--redis-url", default="redis://redis:6379", help="VWR_REDIS_URL as the functions see it")
    ap.add_argument("--state-file", help="write endpoints, URLs and the tier-1 keys (secret!) here as JSON")
    ap.add_argument("--no-lambdas", action="store_true", help="data, keys and queues only")
    ap.add_argument("--placeholder-code", action="store_true", help="deploy empty functions (emulators that never run them)")
    ap.add_argument("--name", default="vwr", help="resource name prefix (default vwr)")
    ap.add_argument("--enqueue-jwks", default=os.environ.get("VWR_ENQUEUE_JWKS", ""),
                    help="the site's enqueue-token JWKS for the tier-1 API and admin (VWR_ENQUEUE_JWKS of `vwr keys generate`; docs/abuse.md)")
    ap.add_argument("--quiet", action="store_true", help="print nothing")
    args = ap.parse_args(argv)
    configure(args.name)

    b = Bootstrap(args.endpoint_url, args.region)
    if args.enqueue_jwks:
        json.loads(args.enqueue_jwks)  # a typo fails here, not at the first join
        b.enqueue_jwks = args.enqueue_jwks
    b.table()
    b.keys()
    b.queues()
    if not args.no_lambdas:
        b.functions(args.dist, args.redis_url, args.placeholder_code)
        b.schedule()
        b.api()
    if args.state_file:
        fd = os.open(args.state_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump(b.out, fh, indent=2)
            fh.write("\n")
    if not args.quiet:
        shown = {k: v for k, v in b.out.items() if k not in ("tier1_keys_text", "edge_keys_text")}
        print(json.dumps(shown, indent=2))
    return b.out


if __name__ == "__main__":
    try:
        main()
    except ClientError as e:
        sys.exit(f"bootstrap.py: {e}")
