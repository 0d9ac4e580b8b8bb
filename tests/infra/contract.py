#!/usr/bin/env python3
"""Contract between the Rust code, the packaging step and Terraform (tests/infra/run.sh runs it).

Fails when they disagree:
  * every .tf file parses;
  * environment: each Lambda gets every variable its code requires, and every VWR_* variable
    Terraform sets is one its code reads (no typos), no secret in plain environment variables,
    and a setting shared by several functions of a module has the same value everywhere;
  * IAM: every AWS call the code makes is allowed by that function's policy, and the policy
    allows nothing the code does not call (least privilege both ways); a DynamoDB transaction is
    authorized item by item (Put → PutItem, Update → UpdateItem, …, derived from the item
    builders in the code), and Query on the base table only where the code queries it without an
    index (QUERY_TABLE_USERS);
  * packaging: Terraform deploys exactly the Lambda binaries of the workspace, from the dist/
    layout scripts/package.sh declares (`--print-layout`), and reads no other dist/ file;
  * routes: the API Gateway routes are the Rust routers' routes, admin routes use AWS_IAM, and
    the protected-API gate covers the prefixes the authorizer knows;
  * the DynamoDB table is the one `vwr bootstrap` creates (keys, index, TTL);
  * the CloudFront Functions stay within 10 KB once the placeholders are filled;
  * origins are locked to CloudFront: every CloudFront origin gets the `x-vwr-origin-secret`
    header, and every Lambda behind a CloudFront-fronted API gets VWR_ORIGIN_SECRET_ID (and no
    other Lambda does);
  * every API Gateway stage is throttled (rate and burst, positive defaults);
  * the edge gets the derived tier-1 keys (`edge_keys_text`), never the master `keys_text`, and
    the derivation label is the Rust side's;
  * tier 2 never gets the tier-1 master keys: no tier-2 function has VWR_TIER1_KEYS* or may read
    the tier1 module's `keys_secret_arn`, and the tier2 module's link keys are the tier1 module's
    derived `tier2_link_keys` (the place-proof label is the Rust side's);
  * the tier-2 roles write no tier-1 item: every DynamoDB write they are allowed is narrowed by
    `dynamodb:LeadingKeys` to the tier-2 registration items (a sample key of every other key
    builder is refused);
  * the waiting page's behavior has its Content-Security-Policy;
  * the public status document (/vwr-api/vwr/status/*) has its own behavior before /vwr-api/*:
    cached 1 s keyed on the path alone, nothing of the viewer's request forwarded, the prefix
    stripped and never the verifier, and it reaches a tier-1 public route;
  * the admin principal allow-list reaches every Lambda that serves admin routes;
  * variables only some binaries of a crate use (ENV_USERS, e.g. VWR_HEALTH_ALARMS: the advancer)
    are set on exactly those;
  * early release (POST /vwr-api/vwr/release/*) reaches the tier-1 API through /vwr-api/* with
    the method allowed and the visitor's tier-1 cookie and x-vwr-token header forwarded;
  * per-client limits at the edge (docs/abuse.md): the edge module creates a CLOUDFRONT web ACL in
    us-east-1 with the AWS managed IP-reputation and known-bad-inputs groups (never count-only)
    and per-IP rate-based rules (60 s window, limits from variables) scoped to assign and
    /api/queue/* — paths that are the routers' — answering 429 with the API's JSON error; the
    distribution uses it, and examples/complete turns it on; the per-IP limits on /api/queue/*
    hold 100 tier-2 visitors behind one address at the fastest poll hint of the Rust code
    (dynamic blocks over the module's maps are read as the blocks they make);
  * the observability module's alarms are the ones its README's table names, each notifies
    var.alarm_actions on ALARM and OK, and its `moved` blocks land on instances it makes;
  * the edge verifier, which deletes viewer x-vwr-* headers, runs on every behaviour but the
    waiting page, /vwr-api/* and /api/queue/*, and `vwr dev` and the local proxy skip the same.
  * the docs stay true to the code: the README's routes → files map names every route the
    routers serve (tier 1, tier 2, the site and health routes of `vwr dev`) and nothing else,
    every file it names exists, and the README stays a front door (≤ 15,000 bytes, ≤ 250
    lines); docs/settings.md has exactly one row for every VWR_* variable the Rust code reads;
    docs/data.md has one row for every DynamoDB key and Redis key the key builders make (naming
    the builder; for Redis, the Lua header's KEYS[i], name and type) and none for a key no builder
    makes, and no other Rust source builds a key;
  * docs/openapi.yaml is the routers' API: every `.route(…)` of the non-test Rust sources under
    functions/ and tier2/ (each method of a `get(…).post(…)` chain, `on(MethodFilter::…)`) is an
    operation of the file and every operation of the file is a route (paths compared with the
    router's `{snake_case}` / `{*rest}` parameters written `{camelCase}` / `{rest}`); the routes
    behind `require_admin` declare the SigV4 security scheme and the others none; and the file is
    valid OpenAPI 3.1 (openapi-spec-validator).

What the code reads and calls is derived from the Rust sources of the crates each binary is
built from (BINARIES below, checked against the Cargo manifests). The tables below are the
explicit, reviewed part of the contract: a new environment variable, a new required variable or
a new AWS call that they do not classify makes this test fail with a message naming the file.

Usage: contract.py [--root DIR]   (prints one line per check and "N passed, M failed")
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import glob
import os
import re
import subprocess
import sys
import tomllib

import hcl2

# ------------------------------------------------------------------------------------------------
# The reviewed tables

# Workspace crates (package name -> directory).
CRATES = {
    "vwr-core": "functions/core",
    "vwr-tier1": "functions/tier1",
    "vwr-tier1-store": "functions/tier1-store",
    "vwr-tier2": "tier2/tier2",
    "vwr-tier2-store": "tier2/tier2-store",
    "vwr-lambda": "functions/lambda",
    "vwr-tier1-api": "functions/tier1-api",
    "vwr-tier1-admin": "functions/tier1-admin",
    "vwr-tier1-advancer": "functions/tier1-advancer",
    "vwr-tier2-api": "tier2/tier2-api",
    "vwr-tier2-worker": "tier2/tier2-worker",
    "vwr-tier2-authorizer": "tier2/tier2-authorizer",
}

# Lambda binary -> the workspace crates its code comes from (checked against Cargo.toml).
BINARIES = {
    "vwr-tier1-api": ["vwr-tier1-api", "vwr-lambda", "vwr-tier1-store", "vwr-tier1", "vwr-core"],
    "vwr-tier1-admin": ["vwr-tier1-admin", "vwr-lambda", "vwr-tier1-store", "vwr-tier1", "vwr-core"],
    "vwr-tier1-advancer": ["vwr-tier1-advancer", "vwr-lambda", "vwr-tier1-store", "vwr-tier1", "vwr-core"],
    "vwr-tier2-api": [
        "vwr-tier2-api", "vwr-lambda", "vwr-tier2-store", "vwr-tier2", "vwr-tier1-store", "vwr-tier1", "vwr-core",
    ],
    "vwr-tier2-worker": ["vwr-tier2-worker", "vwr-lambda", "vwr-tier2-store", "vwr-tier2", "vwr-core"],
    # JWT only: no store crate at all.
    "vwr-tier2-authorizer": ["vwr-tier2-authorizer", "vwr-lambda", "vwr-tier2", "vwr-core"],
}
ALL = set(BINARIES)
TIER1 = {"vwr-tier1-api", "vwr-tier1-admin", "vwr-tier1-advancer"}

# Scheduled binaries: they run ~57 s per invocation (MAX_RUN 60 s minus a 3 s margin).
SCHEDULED_MIN_TIMEOUT = {"vwr-tier1-advancer": 70, "vwr-tier2-worker": 70}

# AWS SDK operation (snake_case, as called in Rust) -> IAM action.
SDK_ACTIONS = {
    "get_item": "dynamodb:GetItem",
    "put_item": "dynamodb:PutItem",
    "update_item": "dynamodb:UpdateItem",
    "delete_item": "dynamodb:DeleteItem",
    "batch_get_item": "dynamodb:BatchGetItem",
    "batch_write_item": "dynamodb:BatchWriteItem",
    "query": "dynamodb:Query",
    "scan": "dynamodb:Scan",
    "transact_write_items": "dynamodb:TransactWriteItems",
    "transact_get_items": "dynamodb:TransactGetItems",
    "create_table": "dynamodb:CreateTable",
    "describe_table": "dynamodb:DescribeTable",
    "describe_time_to_live": "dynamodb:DescribeTimeToLive",
    "update_time_to_live": "dynamodb:UpdateTimeToLive",
    "get_secret_value": "secretsmanager:GetSecretValue",
    "send_message": "sqs:SendMessage",
    "send_message_batch": "sqs:SendMessage",
    "describe_key_value_store": "cloudfront-keyvaluestore:DescribeKeyValueStore",
    "get_key": "cloudfront-keyvaluestore:GetKey",
    "put_key": "cloudfront-keyvaluestore:PutKey",
    "describe_alarms": "cloudwatch:DescribeAlarms",
}

# IAM action -> the binaries that call it (among those whose crates contain the call). The store
# crates are shared (the tier-2 API links the tier-1 store to look up active events; the worker
# links the tier-2 store with its registry), so this is where "which function really makes which
# call" is decided; keep it in step with the code paths:
#   tier-1 api: assign (event GetItem, shard UpdateItem ADD, pre-queue join UpdateItem), check
#     (redemption PutItem / GetItem, shard UpdateItem), status document (event GetItem); admin:
#     every change of an event (activate, deactivate, schedule, pause, resume, close, message,
#     manual advance) is a TransactWriteItems — the event item + an audit item Put — plus seals
#     (UpdateItem), status GetItem + BatchGetItem, events Query(active-index), audit Query (base
#     table, pk = EVT#{e}#AUDIT); advancer: Query(active-index), BatchGetItem, UpdateItem (steps,
#     shard seals, pre-queue size), GetItem, TransactWriteItems (prequeue/open/close + audit);
#     tier-2 api: tier-1 event lookup (GetItem) and the tier-2 registration
#     item EVT#{eventId}/T2 (GetItem, PutItem, UpdateItem); worker: notices, and the
#     registration item (GetItem) to re-hydrate a registration Redis lost; advancer: the
#     health gate's and the standby alarms (CloudWatch DescribeAlarms); admin: a standby's alarm
#     when it is set and in the status (docs/lifecycle.md#standby).
#   Every binary reads its keys from Secrets Manager at start-up.
CALL_USERS = {
    "dynamodb:GetItem": TIER1 | {"vwr-tier2-api", "vwr-tier2-worker"},
    "dynamodb:BatchGetItem": {"vwr-tier1-admin", "vwr-tier1-advancer"},
    "dynamodb:UpdateItem": TIER1 | {"vwr-tier2-api"},
    "dynamodb:PutItem": {"vwr-tier1-api", "vwr-tier2-api"},
    "dynamodb:Query": {"vwr-tier1-admin", "vwr-tier1-advancer"},
    # Lifecycle changes with their audit item (docs/lifecycle.md). Not an IAM action: what it needs
    # is derived from the transaction's items in the code (TRANSACTION_ITEMS).
    "dynamodb:TransactWriteItems": {"vwr-tier1-admin", "vwr-tier1-advancer"},
    # `vwr bootstrap` (CLI) only: functions/tier1-store/src/dynamo/table.rs ensure_table.
    "dynamodb:CreateTable": set(),
    "dynamodb:DescribeTable": set(),
    "dynamodb:DescribeTimeToLive": set(),
    "dynamodb:UpdateTimeToLive": set(),
    "secretsmanager:GetSecretValue": set(ALL),
    "sqs:SendMessage": {"vwr-tier2-worker"},
    # Edge event list (functions/tier1/src/edge_sync.rs, functions/tier1-store/src/kvs.rs): admin on activate/deactivate, advancer
    # reconciling every run.
    "cloudfront-keyvaluestore:DescribeKeyValueStore": {"vwr-tier1-admin", "vwr-tier1-advancer"},
    "cloudfront-keyvaluestore:GetKey": {"vwr-tier1-admin", "vwr-tier1-advancer"},
    "cloudfront-keyvaluestore:PutKey": {"vwr-tier1-admin", "vwr-tier1-advancer"},
    # The health gate (docs/outflow.md#health-gate; functions/tier1-store/src/alarms.rs): the
    # store crate builds the CloudWatch client only when VWR_HEALTH_ALARMS is set, which only the
    # advancer gets (ENV_USERS). The standby alarms (CloudWatchAlarmStates): the advancer reads
    # them at each tick, the admin function when a standby is set and in its status; the API
    # links the code but never calls it.
    "cloudwatch:DescribeAlarms": {"vwr-tier1-advancer", "vwr-tier1-admin"},
}

# Transactions are not IAM actions: DynamoDB authorizes each item of a transaction with the
# action of its kind (docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html).
# Granting "dynamodb:TransactWriteItems" grants nothing; a binary that makes transactions needs the
# actions of the item kinds its crates build (`Put::builder()` / `TransactWriteItem::builder().put(`…).
TRANSACTION_ITEMS = {
    "dynamodb:TransactWriteItems": {
        "put": "dynamodb:PutItem",
        "update": "dynamodb:UpdateItem",
        "delete": "dynamodb:DeleteItem",
        "condition_check": "dynamodb:ConditionCheckItem",
    },
    "dynamodb:TransactGetItems": {"get": "dynamodb:GetItem"},
}
TX_BUILDER = {"Put": "put", "Update": "update", "Delete": "delete", "ConditionCheck": "condition_check", "Get": "get"}

# Binaries that Query the base table (a `.query()` without `.index_name(`), not only the index:
# the admin's audit trail (GET /api/admin/vwr/audit/{eventId}, pk = EVT#{e}#AUDIT). Every other
# Query grant must name the index only.
QUERY_TABLE_USERS = {"vwr-tier1-admin"}

# The public status document behind CloudFront (docs/lifecycle.md): path pattern and its route.
STATUS_PATTERN = "/vwr-api/vwr/status/*"
STATUS_ROUTE = "GET /vwr/status/{}"
# Early release (docs/outflow.md#early-release): a request path behind CloudFront, its tier-1
# route, and what the origin must receive of the viewer's request (the tier-1 cookie is
# vwr_t1_<eventId>, one name per event: only "all cookies" forwards it).
RELEASE_PATH = "/vwr-api/vwr/release/e1"
RELEASE_ROUTE = "POST /vwr/release/{}"
RELEASE_HEADER = "x-vwr-token"
# CloudFront managed origin request policies that forward every viewer cookie and header.
FORWARD_ALL_POLICIES = {
    "b689b0a8-53d0-40ab-baf2-68738e2966ac": "Managed-AllViewerExceptHostHeader",
    "216adef6-5c7f-47e4-b989-5492eafa07d3": "Managed-AllViewer",
}

# Per-client limits at the edge (docs/abuse.md, "Per-client limits at the edge"): the AWS managed
# rule groups the edge module's web ACL must always run (blocking, not count-only), and the paths
# its per-IP rate-based rules must cover — as the viewer sends them (WAF inspects the request
# before the prefix-stripping function) — with the method the scope-down must require (None: any).
WAF_MANAGED_GROUPS = ("AWSManagedRulesAmazonIpReputationList", "AWSManagedRulesKnownBadInputsRuleSet")
WAF_RATE_RULES = {
    "/vwr-api/vwr/assign/": "POST",
    "/api/queue/": None,
}
# Where CloudFront serves the tier-1 API (the /vwr-api/* behaviour's prefix, stripped at the edge).
TIER1_EDGE_PREFIX = "/vwr-api"
WAF_WINDOW_SECONDS = 60
WAF_MIN_LIMIT = 10
# Visitors behind one client address (a carrier-grade NAT, a campus proxy) who, all polling
# tier 2 at its fastest, must stay under every per-IP limit on /api/queue/*: a 429 there stops
# heartbeats, and a visitor near the front would lose the place (docs/abuse.md).
WAF_QUEUE_NAT_VISITORS = 100
# Requests one tier-2 poll makes: `status` (docs/api.md: also the heartbeat).
TIER2_REQUESTS_PER_POLL = 1
# Where the tier-2 poll hints live: the queued hint (vwr_core::hints::next_poll_seconds, whose
# doc also states the clients' jitter) and the active one (Tier2Service::answer's refresh clamp,
# in the visitor's operations).
TIER2_QUEUED_HINTS = "functions/core/src/hints.rs"
TIER2_ANSWERS = "tier2/tier2/src/service/visitor.rs"

# Actions a policy may grant because a needed action implies them (a customer managed KMS key on
# the queue: SendMessage needs the key).
IMPLIED = {
    "kms:GenerateDataKey": "sqs:SendMessage",
    "kms:Decrypt": "sqs:SendMessage",
}

# Granted ahead of the code that uses it (allowed even when the call is not in the sources yet).
PLANNED_ACTIONS: set[str] = set()

# Required environment: each group lists alternatives, one of which must be set.
REQUIRED = {
    "vwr-tier1-api": [("VWR_TIER1_KEYS_SECRET_ID", "VWR_TIER1_KEYS"), ("VWR_TABLE",)],
    "vwr-tier1-admin": [("VWR_TIER1_KEYS_SECRET_ID", "VWR_TIER1_KEYS"), ("VWR_TABLE",)],
    "vwr-tier1-advancer": [("VWR_TIER1_KEYS_SECRET_ID", "VWR_TIER1_KEYS"), ("VWR_TABLE",)],
    "vwr-tier2-api": [
        ("VWR_REDIS_URL_SECRET_ID", "VWR_REDIS_URL"),
        ("VWR_TIER2_KEYS_SECRET_ID", "VWR_TIER2_KEYS"),
        # Callers are identified by their tier-1 token (the derived link keys, never the master
        # keys); events active in tier 1 are served.
        ("VWR_TIER1_LINK_SECRET_ID", "VWR_TIER1_EDGE_KEYS"),
        ("VWR_TABLE",),
    ],
    "vwr-tier2-worker": [
        ("VWR_REDIS_URL_SECRET_ID", "VWR_REDIS_URL"),
        ("VWR_TIER2_KEYS_SECRET_ID", "VWR_TIER2_KEYS"),
        # Without a queue the worker keeps notices in memory: not what a deployment wants.
        ("VWR_NOTICE_QUEUE_URL",),
        # The tier-2 registrations persisted in the tier-1 table: re-hydrates what Redis lost.
        ("VWR_TABLE",),
    ],
    "vwr-tier2-authorizer": [
        ("VWR_TIER2_JWKS", "VWR_TIER2_KEYS_SECRET_ID", "VWR_TIER2_KEYS"),
        ("VWR_TIER1_LINK_SECRET_ID", "VWR_TIER1_EDGE_KEYS"),
    ],
}

# Variables the code reports as missing (ConfigError::Missing / missing(…)) that a binary does
# not need, with the reason.
NOT_REQUIRED = {
    "vwr-tier1-api": {"VWR_REDIS_URL": "tier 2 only (vwr_lambda::secrets::redis_url, called by tier-2 roots)"},
    "vwr-tier1-admin": {"VWR_REDIS_URL": "tier 2 only (vwr_lambda::secrets::redis_url, called by tier-2 roots)"},
    "vwr-tier1-advancer": {"VWR_REDIS_URL": "tier 2 only (vwr_lambda::secrets::redis_url, called by tier-2 roots)"},
    "vwr-tier2-api": {
        "VWR_TIER2_JWKS": "authorizer only (its main.rs)",
        "VWR_TIER1_KEYS": "tier 1's own configuration (Tier1Config), which the tier-2 API never builds: it reads the derived link keys",
    },
    "vwr-tier2-worker": {
        "VWR_TIER2_JWKS": "authorizer only (its main.rs)",
        "VWR_TIER1_KEYS": "optional for the worker: callers are identified by the API, not here",
    },
    "vwr-tier2-authorizer": {"VWR_REDIS_URL": "the authorizer never touches Redis (its main.rs)"},
}

# Never in plain environment variables: these hold key material.
FORBIDDEN_ENV = {
    "VWR_TIER1_KEYS": "use VWR_TIER1_KEYS_SECRET_ID",
    "VWR_TIER1_EDGE_KEYS": "use VWR_TIER1_LINK_SECRET_ID",
    "VWR_TIER1_PLACE_KEYS": "use VWR_TIER1_LINK_SECRET_ID",
    "VWR_TIER2_KEYS": "use VWR_TIER2_KEYS_SECRET_ID (or VWR_TIER2_JWKS for verifiers)",
    "VWR_ADMIN_KEY": "vwr dev only; deployed admin APIs use IAM",
    "VWR_REDIS_URL": "it carries the Redis password: use VWR_REDIS_URL_SECRET_ID",
}

# Optional variables read by a crate that several binaries link, but used by some of them only
# (with the reason): Terraform sets each on exactly these binaries (the value may be null, i.e.
# left out when not configured), and neither Terraform nor the LocalStack kit sets it on any
# other. A binary outside the list does not need it: the code treats it as optional.
ENV_USERS = {
    "VWR_HEALTH_ALARMS": ({"vwr-tier1-advancer"}, "the health gate's CloudWatch alarms hold the advancer (docs/outflow.md#health-gate)"),
    "VWR_ADVANCER_TICK_SECONDS": ({"vwr-tier1-advancer"}, "how often the advancer looks for due steps"),
    "VWR_EDGE_KVS_ARN": ({"vwr-tier1-admin", "vwr-tier1-advancer"}, "the edge event list: written on activate/deactivate, reconciled by the advancer"),
    "VWR_ENQUEUE_JWKS": ({"vwr-tier1-api", "vwr-tier1-admin"}, "the site's enqueue-token keys: the API verifies tokens, the admin refuses enqueueTokenRequired without them (docs/abuse.md)"),
}

# Set by Terraform ahead of the code that reads it. Remove an entry once the code reads it.
PLANNED_ENV: dict[str, str] = {}

# Lambdas behind a CloudFront-fronted API (derived from the Terraform wiring in
# check_origin_lock; this is the reviewed minimum, so a broken derivation cannot pass empty).
FRONTED = {"vwr-tier1-api", "vwr-tier2-api"}
# Lambdas serving admin routes (AWS_IAM), derived likewise: they get VWR_ADMIN_PRINCIPALS.
ADMIN_SERVING = {"vwr-tier1-admin", "vwr-tier2-api"}
ORIGIN_HEADER = "x-vwr-origin-secret"
# Tier-1 edge keys: SHA-256("vwr/edge-token/v1:" + base64url master key), HmacKeyring::edge_ring.
EDGE_KEY_LABEL = "vwr/edge-token/v1:"
# Place-proof keys, tier 2's: SHA-256("vwr/tier2-place/v1:" + base64url master key), place_ring.
PLACE_KEY_LABEL = "vwr/tier2-place/v1:"
# Tier-1 variables that carry the MASTER keys: never on a tier-2 function.
TIER1_MASTER_ENV = ("VWR_TIER1_KEYS", "VWR_TIER1_KEYS_SECRET_ID")
# The data model (check_data_doc, check_tier2_writes): every stored key is built by one function of
# these files. A DynamoDB builder returns `key(<pk>, <sk>)`, each a `format!("…")`, a string
# literal or a call of a function of the same file that returns one `format!("…")`; the Redis keys
# are `event_keys`' pattern over EVENT_KEY_SUFFIXES, and EVENTS_KEY. DATA_DOC has a table row for
# every key they build, naming its builder, and no other; no other Rust source writes a key.
DATA_DOC = "docs/data.md"
DYNAMO_KEY_FILES = ("functions/tier1-store/src/dynamo/items.rs", "tier2/tier2-store/src/registry.rs")
REDIS_KEY_FILE = "tier2/tier2-store/src/redis/keys.rs"
REDIS_LUA_HEADER = "tier2/tier2-store/lua/lib.lua"
KEY_CODE_DIRS = ("functions", "tier2", "cli")
# The tier-2 registration's builder: the only item the tier-2 roles may write; every other
# builder's key (tier 1's, and the old registration's in the tier-1 event partition) is refused.
REGISTRATION_BUILDER = "registration_key"
DYNAMO_WRITES = ("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem")

# The docs (check_readme_routes, check_readme_size, check_settings_doc).
README = "README.md"
README_MAX_BYTES = 15_000
README_MAX_LINES = 250
ROUTES_MAP_HEADING = "### Routes → files"
# Every `.route("…", method(…))` of these files is a route the routes map must name: tier 1's
# public and admin routers, tier 2's, and what `vwr dev` serves besides (dev/site.rs: the
# greeting, the waiting page, the demo origin; dev/mod.rs: /healthz).
ROUTER_FILES = ("functions/tier1/src/http.rs", "tier2/tier2/src/http.rs", "cli/src/dev/site.rs", "cli/src/dev/mod.rs", "cli/src/dev/alarms.rs")
# The protected APIs are prefixes the authorizer knows, not routes: the map writes them `/api/seats/**`.
PROTECT_RS = "tier2/tier2/src/protect.rs"
SETTINGS_DOC = "docs/settings.md"
# Where the VWR_* variables are read: every `"VWR_…"` literal of the Rust sources (tests and
# benches included) must have its row.
SETTINGS_CODE_DIRS = ("functions", "tier2", "cli")
# Scripts and JS that read variables too: a row may name a variable only these read.
SETTINGS_SCRIPT_GLOBS = ("tests/*.sh", "tests/infra/*.sh", "tests/e2e/*.mjs", "scripts/*.sh", "edge/local/*.mjs", ".ci/*")
# Python the product ships that reads settings from the environment (the rehearsal's
# locustfile): every "VWR_*" string in it is a variable read, and needs its row.
SETTINGS_PY_GLOBS = ("rehearsal/*.py",)

# docs/openapi.yaml (check_openapi): the routes of the routers in the non-test sources (`src/`
# trees, `#[cfg(test)]` modules cut) under these directories, one to one. `vwr dev`'s own routes
# (cli/src/dev: the demo site, the waiting page, /healthz) are not vwr's API: the file's
# description names them. Router parameters `{snake_case}` and catch-alls `{*name}` are written
# `{camelCase}` and `{name}` in the file (openapi_path).
OPENAPI_DOC = "docs/openapi.yaml"
OPENAPI_ROUTER_DIRS = ("functions", "tier2")
# The security scheme of the routes behind `require_admin` (API Gateway AWS_IAM); public routes
# declare none.
OPENAPI_ADMIN_SCHEME = "awsSigV4"
OPENAPI_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")

# Non-VWR variables Terraform may set.
OTHER_ENV = {
    "RUST_LOG": "log filter (tracing EnvFilter)",
    "KEYS_REVISION": "changes with the key id lists so functions restart and reload the keys",
    "AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH": "lambda_http behind a REST API stage (LocalStack kit only)",
}

# ------------------------------------------------------------------------------------------------


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def check(self, name: str, problems: list[str]) -> None:
        if problems:
            self.failed += 1
            print(f"FAIL {name}")
            for p in problems:
                print(f"     - {p}")
        else:
            self.passed += 1
            print(f"ok   {name}")


def rel(root: str, path: str) -> str:
    return os.path.relpath(path, root)


# --- Rust side ------------------------------------------------------------------------------------


def rust_sources(root: str, crate: str) -> list[str]:
    """The crate's non-test sources."""
    out = []
    for path in sorted(glob.glob(os.path.join(root, CRATES[crate], "src", "**", "*.rs"), recursive=True)):
        if os.path.basename(path) == "tests.rs":
            continue
        out.append(path)
    return out


def strip_tests(text: str) -> str:
    """Cuts `#[cfg(test)] mod … { … }` (kept at the end of files in this code base)."""
    m = re.search(r"^\s*#\[cfg\(test\)\]\s*\n\s*(pub\s+)?mod\s+\w+\s*\{", text, re.M)
    return text[: m.start()] if m else text


def read_code(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        return strip_tests(fh.read())


ENV_LITERAL = re.compile(r'"(VWR_[A-Z0-9_]+)"')
MISSING = re.compile(r'(?:\bmissing\(\s*|Missing\s*\{\s*name:\s*|\.required\(\s*)"(VWR_[A-Z0-9_]+)"')
SDK_CALL = re.compile(r"client(?:\(\))?\s*\.\s*([a-z_][a-z0-9_]*)\s*\(\s*\)")
SEND = re.compile(r"\.send\(\)")
# Methods of an SDK client value that are not AWS operations (`client.clone()`).
CLIENT_METHODS = {"clone", "config"}
# Items of a transaction: `Put::builder()` (any path prefix) or `TransactWriteItem::builder().put(`.
TX_ITEM = re.compile(
    r"\b(Put|Update|Delete|ConditionCheck|Get)::builder\(\)"
    r"|\bTransact(?:Write|Get)Item::builder\(\)\s*\.\s*(?:set_)?(put|update|delete|condition_check|get)\s*\("
)


def names_aws_sdk(path: str, text: str) -> bool:
    """Whether a file's `client` is an AWS SDK client: it names an `aws_sdk_` crate, or it is a
    room of a module whose `mod.rs` does (the store's operations use the client of its struct)."""
    if "aws_sdk_" in text:
        return True
    parent = os.path.join(os.path.dirname(path), "mod.rs")
    return os.path.basename(path) != "mod.rs" and os.path.exists(parent) and "aws_sdk_" in read_code(parent)


def scan_crate(root: str, crate: str) -> dict:
    reads: set[str] = set()
    missing: dict[str, str] = {}
    calls: dict[str, list[str]] = {}
    unknown: list[str] = []
    unmatched_sends: list[str] = []
    tx_kinds: dict[str, list[str]] = {}  # item kind (put, update, …) -> where
    queries: dict[str, list[str]] = {}  # "index" / "table" -> where
    tx_calls: list[str] = []
    for path in rust_sources(root, crate):
        text = read_code(path)
        reads |= set(ENV_LITERAL.findall(text))
        for m in MISSING.finditer(text):
            missing.setdefault(m.group(1), f"{rel(root, path)}:{text.count(chr(10), 0, m.start()) + 1}")
        if not names_aws_sdk(path, text):
            continue  # no AWS client in this file (Redis, axum … clients are not AWS calls)
        call_positions = []
        for m in SDK_CALL.finditer(text):
            op = m.group(1)
            if op in CLIENT_METHODS:
                continue  # a method of the client value itself, not an AWS operation
            where = f"{rel(root, path)}:{text.count(chr(10), 0, m.start()) + 1}"
            call_positions.append(m.start())
            if op in SDK_ACTIONS:
                calls.setdefault(SDK_ACTIONS[op], []).append(where)
                if SDK_ACTIONS[op] in TRANSACTION_ITEMS:
                    tx_calls.append(where)
                if op == "query":
                    # Up to the call's .send(): an index query names its index.
                    end = SEND.search(text, m.end())
                    chain = text[m.end() : end.start() if end else len(text)]
                    queries.setdefault("index" if re.search(r"\.(?:set_)?index_name\(", chain) else "table", []).append(where)
            else:
                unknown.append(f"{where}: client.{op}()")
        for m in TX_ITEM.finditer(text):
            kind = TX_BUILDER.get(m.group(1) or "", m.group(2))
            tx_kinds.setdefault(kind, []).append(f"{rel(root, path)}:{text.count(chr(10), 0, m.start()) + 1}")
        # Every `.send()` must close a call this test identified (within the preceding 20 lines).
        for m in SEND.finditer(text):
            window_start = max(0, m.start() - 1500)
            if not any(window_start <= p < m.start() for p in call_positions):
                unmatched_sends.append(f"{rel(root, path)}:{text.count(chr(10), 0, m.start()) + 1}")
    # The items' actions are calls too (the code makes them, inside the transaction).
    if tx_calls:
        for tx in [tx for tx in TRANSACTION_ITEMS if tx in calls]:
            for kind, wheres in tx_kinds.items():
                if kind in TRANSACTION_ITEMS[tx]:
                    calls.setdefault(TRANSACTION_ITEMS[tx][kind], []).extend(f"{w} (in a transaction)" for w in wheres)
    return {
        "reads": reads, "missing": missing, "calls": calls, "unknown": unknown, "sends": unmatched_sends,
        "tx_kinds": tx_kinds, "tx_calls": tx_calls, "queries": queries,
    }


def cargo_vwr_deps(root: str, crate: str) -> set[str]:
    """Workspace crates `crate` depends on, transitively (normal dependencies only)."""
    seen: set[str] = set()
    todo = [crate]
    while todo:
        c = todo.pop()
        if c in seen:
            continue
        seen.add(c)
        if c not in CRATES:
            raise SystemExit(f"contract.py: workspace crate {c} is not in CRATES")
        with open(os.path.join(root, CRATES[c], "Cargo.toml"), "rb") as fh:
            manifest = tomllib.load(fh)
        for dep in manifest.get("dependencies", {}):
            if dep.startswith("vwr-"):
                todo.append(dep)
    return seen


def workspace_lambda_binaries(root: str) -> set[str]:
    with open(os.path.join(root, "Cargo.toml"), "rb") as fh:
        members = tomllib.load(fh)["workspace"]["members"]
    out = set()
    for member in members:
        with open(os.path.join(root, member, "Cargo.toml"), "rb") as fh:
            manifest = tomllib.load(fh)
        deps = manifest.get("dependencies", {})
        if os.path.exists(os.path.join(root, member, "src", "main.rs")) and (
            "lambda_runtime" in deps or "lambda_http" in deps
        ):
            out.add(manifest["package"]["name"])
    return out


ROUTE = re.compile(r'\.route\(\s*"([^"]+)"\s*,\s*(?:axum::routing::)?(get|post|put|delete|patch)\(')
ROUTER_FN = re.compile(r"pub fn (\w*router\w*)\(")


def rust_routes(root: str, path: str) -> dict[str, set[str]]:
    """Router function family (public / admin) -> {"METHOD /path/{}"}: every method of a
    `.route(…, get(a).post(b))` chain (parse_routes, the reader check_openapi uses)."""
    with open(os.path.join(root, path), encoding="utf-8") as fh:
        routes, _ = parse_routes(fh.read(), path)
    out: dict[str, set[str]] = {}
    for r in routes:
        family = "admin" if r["fn"].startswith("admin") else "public"
        out.setdefault(family, set()).add(f"{r['method']} {normalize_path(r['path'])}")
    return out


def normalize_path(p: str) -> str:
    return re.sub(r"\{[^}]+\}", "{}", p)


# --- Terraform side -------------------------------------------------------------------------------


def parse_tf(root: str, on_doc=None) -> tuple[dict[str, dict], list[str], int]:
    """Directory (relative) -> merged parse of its .tf files, the parse problems, and how many
    files; `on_doc(path, doc)` sees each file's parse first (tf_schema.py tags its blocks)."""
    problems = []
    modules: dict[str, dict] = {}
    files = sorted(glob.glob(os.path.join(root, "terraform", "**", "*.tf"), recursive=True))
    files = [f for f in files if "/.terraform/" not in f]
    for path in files:
        try:
            with open(path, encoding="utf-8") as fh:
                doc = hcl2.load(fh)
        except Exception as e:  # noqa: BLE001 - any parser error is a finding
            problems.append(f"{rel(root, path)}: {e}")
            continue
        if on_doc is not None:
            on_doc(path, doc)
        d = modules.setdefault(rel(root, os.path.dirname(path)), {})
        for key, blocks in doc.items():
            d.setdefault(key, []).extend(blocks)
    if not files:
        problems.append("no .tf files under terraform/")
    return modules, problems, len(files)


def load_tf(root: str, checks: Checks) -> dict[str, dict]:
    """Directory (relative) -> merged parse of its .tf files."""
    modules, problems, files = parse_tf(root)
    checks.check(f"every .tf file parses ({files} files)", problems)
    return modules


def first(v):
    return v[0] if isinstance(v, list) and len(v) == 1 else v


def locals_of(mod: dict) -> dict:
    out = {}
    for block in mod.get("locals", []):
        out.update({k: first(v) for k, v in block.items()})
    return out


def blocks(mod: dict, kind: str, type_: str) -> dict[str, dict]:
    """resource/data blocks of one type: name -> body."""
    out = {}
    for block in mod.get(kind, []):
        for t, named in block.items():
            if t == type_:
                out.update(named)
    return out


def module_calls(mod: dict) -> dict[str, dict]:
    out = {}
    for block in mod.get("module", []):
        out.update(block)
    return out


REF = re.compile(r"^\$\{(local|data\.aws_iam_policy_document)\.([A-Za-z0-9_]+)(?:\.json)?\}$")


def policy_statements(doc: dict) -> list[dict]:
    """Statements of an aws_iam_policy_document, dynamic ones included (as if enabled)."""
    out = [s for s in doc.get("statement", [])]
    for dyn in doc.get("dynamic", []):
        for name, body in dyn.items():
            if name == "statement":
                content = body.get("content", [])
                out.extend(content if isinstance(content, list) else [content])
    return out


def flat(v) -> list:
    if isinstance(v, list):
        out = []
        for x in v:
            out.extend(flat(x))
        return out
    return [v]


def lambda_deployments(modules: dict) -> list[dict]:
    """Every call of terraform/modules/lambda: binary, env, IAM statements, settings."""
    out = []
    for dirname, mod in modules.items():
        local = locals_of(mod)
        docs = blocks(mod, "data", "aws_iam_policy_document")
        for name, call in module_calls(mod).items():
            if first(call.get("source")) != "../lambda":
                continue
            binary = first(call.get("binary"))
            env_ref = REF.match(str(first(call.get("environment"))))
            pol_ref = REF.match(str(first(call.get("policy_json"))))
            env = local.get(env_ref.group(2)) if env_ref and env_ref.group(1) == "local" else None
            doc = docs.get(pol_ref.group(2)) if pol_ref else None
            out.append(
                {
                    "where": f"{dirname} module.{name}",
                    "module_dir": dirname,
                    "binary": binary,
                    "env": env,
                    "env_ref": first(call.get("environment")),
                    "statements": policy_statements(doc) if doc else None,
                    "policy_ref": first(call.get("policy_json")),
                    "timeout": first(call.get("timeout_seconds")),
                    "call": name,
                }
            )
    return out


# --- checks ---------------------------------------------------------------------------------------


def check_binaries(root: str, checks: Checks, layout: list[str], deployments: list[dict], localstack_bins: set[str] | None) -> None:
    problems = []
    workspace = workspace_lambda_binaries(root)
    if workspace != set(BINARIES):
        problems.append(f"workspace Lambda binaries {sorted(workspace)} != BINARIES {sorted(BINARIES)}")
    for b, crates in BINARIES.items():
        deps = cargo_vwr_deps(root, b)
        if deps != set(crates):
            problems.append(f"{b}: Cargo dependencies {sorted(deps)} != BINARIES entry {sorted(crates)}")
    checks.check("BINARIES matches the workspace and the Cargo dependencies", problems)

    packaged = {p[len("lambda/") : -len(".zip")] for p in layout if p.startswith("lambda/") and p.endswith(".zip")}
    problems = []
    if packaged != workspace:
        problems.append(f"scripts/package.sh packages {sorted(packaged)}, the workspace has {sorted(workspace)}")
    deployed = [d["binary"] for d in deployments]
    for b in sorted(set(deployed)):
        if b not in packaged:
            problems.append(f"Terraform deploys {b}, which scripts/package.sh does not build")
        if deployed.count(b) > 1:
            problems.append(f"Terraform deploys {b} {deployed.count(b)} times")
    for b in sorted(packaged - set(deployed)):
        problems.append(f"{b} is packaged but no Terraform module deploys it")
    if localstack_bins is not None and localstack_bins != packaged:
        problems.append(f"localstack/bootstrap.py deploys {sorted(localstack_bins)}, packaged are {sorted(packaged)}")
    checks.check("every packaged Lambda is deployed once, and only packaged ones", problems)


def check_dist_refs(root: str, checks: Checks, layout: list[str], modules: dict) -> None:
    problems = []
    lam = modules.get("terraform/modules/lambda", {})
    zip_path = locals_of(lam).get("zip_path")
    if zip_path != "${var.dist_dir}/lambda/${var.binary}.zip":
        problems.append(f"terraform/modules/lambda reads {zip_path!r}, not the packaged lambda/<binary>.zip")
    refs = []
    for path in glob.glob(os.path.join(root, "terraform", "**", "*.tf"), recursive=True):
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        for m in re.finditer(r'\$\{var\.dist_dir\}/([^"$]*)"', text):
            refs.append((rel(root, path), m.group(1)))
        for m in re.finditer(r'fileset\("\$\{var\.dist_dir\}/([^"]+)",\s*"([^"]+)"\)', text):
            refs.append((rel(root, path), m.group(1) + "/" + m.group(2).replace("**", "")))
    for where, ref in refs:
        if ref in ("lambda/", "static/", "static"):
            continue
        if ref.endswith("/") or ref.endswith("/**"):
            if not any(p.startswith(ref.rstrip("*")) for p in layout):
                problems.append(f"{where} reads {ref}… which the dist/ layout does not have")
        elif ref not in layout and not ref.startswith("static/"):
            problems.append(f"{where} reads dist/{ref}, which scripts/package.sh does not produce")
    if not refs:
        problems.append("found no ${var.dist_dir} reference in terraform/")
    checks.check(f"Terraform reads only files of the dist/ layout ({len(refs)} references)", problems)


def check_env(root: str, checks: Checks, deployments: list[dict], scans: dict[str, dict], label: str) -> None:
    for d in deployments:
        b = d["binary"]
        problems = []
        if b not in BINARIES:
            checks.check(f"{label} {d['where']}: environment of {b}", [f"unknown binary {b}"])
            continue
        env = d["env"]
        if not isinstance(env, dict):
            checks.check(f"{label} {d['where']}: environment of {b}", [f"environment is {d['env_ref']!r}: use a local map (readable by this test)"])
            continue
        reads = set().union(*(scans[c]["reads"] for c in BINARIES[b]))
        missing = {}
        for c in BINARIES[b]:
            missing.update(scans[c]["missing"])
        for k in env:
            if k in FORBIDDEN_ENV:
                problems.append(f"sets {k}: key material in plain environment ({FORBIDDEN_ENV[k]})")
            elif k.startswith("VWR_"):
                if k not in reads and k not in PLANNED_ENV:
                    problems.append(f"sets {k}, which no code of {b} reads (typo?)")
            elif k not in OTHER_ENV:
                problems.append(f"sets {k}: not a VWR_ variable and not in OTHER_ENV")
        for group in REQUIRED[b]:
            if not any(k in env for k in group):
                problems.append(f"needs {' or '.join(group)}")
        required_names = {k for g in REQUIRED[b] for k in g}
        for name, where in sorted(missing.items()):
            if name not in required_names and name not in NOT_REQUIRED.get(b, {}):
                problems.append(f"the code can stop for a missing {name} ({where}): add it to REQUIRED or NOT_REQUIRED for {b}")
        checks.check(f"{label} {d['where']}: environment of {b}", problems)


def check_shared_settings(checks: Checks, deployments: list[dict]) -> None:
    problems = []
    by_module: dict[str, list[dict]] = {}
    for d in deployments:
        if isinstance(d["env"], dict):
            by_module.setdefault(d["module_dir"], []).append(d)
    for mod, ds in by_module.items():
        seen: dict[str, tuple[str, str]] = {}
        for d in ds:
            for k, v in d["env"].items():
                if k in seen and seen[k][0] != v:
                    problems.append(f"{mod}: {k} is {seen[k][0]!r} for {seen[k][1]} but {v!r} for {d['binary']}")
                seen.setdefault(k, (v, d["binary"]))
    checks.check("a setting shared by functions of one module has one value", problems)


def check_iam(root: str, checks: Checks, deployments: list[dict], scans: dict[str, dict], dynamo_index: str) -> None:
    problems = []
    found: dict[str, list[str]] = {}
    for c, s in scans.items():
        for action, wheres in s["calls"].items():
            found.setdefault(action, []).extend(wheres)
        for u in s["unknown"]:
            problems.append(f"unknown AWS SDK call {u}: add it to SDK_ACTIONS and CALL_USERS")
        for w in s["sends"]:
            problems.append(f"{w}: a .send() whose operation this test cannot identify (call it on a `client`)")
        if s["tx_calls"] and not s["tx_kinds"]:
            problems.append(
                f"{', '.join(s['tx_calls'])}: a transaction whose items (hence IAM actions) this test cannot find:"
                " build them with Put::builder(), Update::builder(), ConditionCheck::builder() … in the crate"
            )
    for action, wheres in sorted(found.items()):
        if action not in CALL_USERS:
            problems.append(f"new AWS call {action} ({', '.join(sorted(set(wheres)))}): add it to CALL_USERS with the binaries that make it")
    # A base-table Query must be classified too (QUERY_TABLE_USERS), so that an index-only role
    # never gets Query on the whole table by accident.
    for c, s in scans.items():
        wheres = s["queries"].get("table")
        if not wheres:
            continue
        users = {b for b, crates in BINARIES.items() if c in crates and b in CALL_USERS.get("dynamodb:Query", set())}
        if not users & QUERY_TABLE_USERS:
            problems.append(f"a Query on the base table ({', '.join(wheres)}): add the binaries that make it to QUERY_TABLE_USERS")
    checks.check("every AWS call in the Lambda crates is classified", problems)

    for d in deployments:
        b = d["binary"]
        problems = []
        if d["statements"] is None:
            checks.check(f"IAM of {b} ({d['where']})", [f"policy_json is {d['policy_ref']!r}: use data.aws_iam_policy_document (readable by this test)"])
            continue
        code_calls = set()
        tx_kinds: set[str] = set()
        queries: set[str] = set()
        for c in BINARIES.get(b, []):
            code_calls |= set(scans[c]["calls"])
            tx_kinds |= set(scans[c]["tx_kinds"])
            queries |= set(scans[c]["queries"])
        needed = {a for a, users in CALL_USERS.items() if b in users}
        # Transactions: the stale-entry test below applies to them; the IAM actions are the items'.
        for tx in sorted(needed & set(TRANSACTION_ITEMS)):
            if tx not in code_calls and tx not in PLANNED_ACTIONS:
                problems.append(f"CALL_USERS says {b} calls {tx}, but its crates do not: stale entry")
            needed |= {TRANSACTION_ITEMS[tx][k] for k in tx_kinds if k in TRANSACTION_ITEMS[tx]}
        needed -= set(TRANSACTION_ITEMS)
        granted: dict[str, list[str]] = {}
        for st in d["statements"]:
            if first(st.get("effect", "Allow")) == "Deny":
                continue
            for a in flat(st.get("actions", [])):
                granted.setdefault(a, []).extend(str(r) for r in flat(st.get("resources", [])))
        for a in sorted(needed):
            if a not in code_calls and a not in PLANNED_ACTIONS:
                problems.append(f"CALL_USERS says {b} calls {a}, but its crates do not: stale entry")
            if a not in granted and (a in code_calls):
                problems.append(f"the code calls {a} but the policy does not allow it")
        for a in sorted(granted):
            if "*" in a:
                problems.append(f"wildcard action {a}")
            elif a in TRANSACTION_ITEMS:
                problems.append(f"allows {a}, which is not an IAM action: a transaction needs the actions of its items ({', '.join(sorted(set(TRANSACTION_ITEMS[a].values())))})")
            elif a not in needed and IMPLIED.get(a) not in needed:
                problems.append(f"allows {a}, which {b} does not call")
            for r in granted[a]:
                if r == "*":
                    problems.append(f"{a} on resource *")
        query_on = granted.get("dynamodb:Query", [])
        if query_on and not any(r.endswith(f"/index/{dynamo_index}") for r in query_on):
            problems.append(f"dynamodb:Query must be allowed on the index …/index/{dynamo_index}")
        on_table = [r for r in query_on if "/index/" not in r]
        if b in QUERY_TABLE_USERS and "dynamodb:Query" in needed:
            if "table" not in queries and "dynamodb:Query" not in PLANNED_ACTIONS:
                problems.append(f"QUERY_TABLE_USERS says {b} queries the base table, but its crates query only indexes: stale entry")
            elif "table" in queries and not on_table:
                problems.append("the code queries the base table but dynamodb:Query is allowed on indexes only")
        elif on_table:
            problems.append(f"dynamodb:Query on the base table ({', '.join(on_table)}): {b} queries the index only (QUERY_TABLE_USERS)")
        checks.check(f"IAM of {b}: exactly what the code calls ({d['where']})", problems)


def check_timeouts(checks: Checks, deployments: list[dict]) -> None:
    problems = []
    for d in deployments:
        need = SCHEDULED_MIN_TIMEOUT.get(d["binary"])
        if need is not None and (not isinstance(d["timeout"], int) or d["timeout"] < need):
            problems.append(f"{d['binary']}: timeout_seconds {d['timeout']!r} < {need} (it runs ~57 s)")
    checks.check("scheduled functions outlive their one-minute run", problems)


# Where the tier-1 table's shape is in the code: the creation (keys, index, TTL) and the index name.
TABLE_CODE = ("functions/tier1-store/src/dynamo/table.rs", "functions/tier1-store/src/dynamo/items.rs")


def check_table(root: str, checks: Checks, modules: dict) -> str:
    code = ""
    for path in TABLE_CODE:
        with open(os.path.join(root, path), encoding="utf-8") as fh:
            code += fh.read()
    index = re.search(r'pub const ACTIVE_INDEX: &str = "([^"]+)"', code).group(1)
    ttl = re.search(r'\.attribute_name\("([^"]+)"\)\s*\n\s*\.enabled\(true\)', code).group(1)
    create = code[code.index(".create_table()") :]
    hash_key = re.search(r'\.key_schema\(key\("(\w+)", KeyType::Hash\)\?\)\s*\.key_schema\(key\("(\w+)", KeyType::Range\)', create)
    gsi = re.search(r'key_schema\(key\("(\w+)", KeyType::Hash\)\?\)\s*\n\s*\.key_schema\(key\("(\w+)", KeyType::Range\)\?\)\s*\n\s*\.projection', code)
    problems = []
    tables = blocks(modules.get("terraform/modules/tier1", {}), "resource", "aws_dynamodb_table")
    if len(tables) != 1:
        problems.append(f"expected one aws_dynamodb_table in modules/tier1, found {len(tables)}")
    for t in tables.values():
        if first(t.get("billing_mode")) != "PAY_PER_REQUEST":
            problems.append("billing_mode must be PAY_PER_REQUEST (as `vwr bootstrap`)")
        if (first(t.get("hash_key")), first(t.get("range_key"))) != (hash_key.group(1), hash_key.group(2)):
            problems.append(f"table keys {first(t.get('hash_key'))}/{first(t.get('range_key'))} != code {hash_key.group(1)}/{hash_key.group(2)}")
        attrs = {first(a["name"]): first(a["type"]) for a in t.get("attribute", [])}
        for k in (hash_key.group(1), hash_key.group(2), gsi.group(1), gsi.group(2)):
            if attrs.get(k) != "S":
                problems.append(f"attribute {k} must be declared as S")
        gsis = {first(g["name"]): g for g in t.get("global_secondary_index", [])}
        g = gsis.get(index)
        if g is None:
            problems.append(f"no global secondary index {index}")
        elif (first(g["hash_key"]), first(g["range_key"]), first(g["projection_type"])) != (gsi.group(1), gsi.group(2), "ALL"):
            problems.append(f"index {index} must be {gsi.group(1)}/{gsi.group(2)}, projection ALL")
        ttls = t.get("ttl", [])
        if not ttls or first(ttls[0].get("attribute_name")) != ttl or first(ttls[0].get("enabled")) is not True:
            problems.append(f"TTL must be enabled on {ttl}")
        pitr = t.get("point_in_time_recovery", [])
        if not pitr or first(pitr[0].get("enabled")) is not True:
            problems.append("point-in-time recovery must be on")
    checks.check(f"tier-1 table = what `vwr bootstrap` creates (pk/sk, {index}, TTL {ttl})", problems)
    return index


def tf_routes(mod: dict, local_name: str) -> set[str]:
    routes = locals_of(mod).get(local_name, {})
    return {f"{v.split(' ', 1)[0]} {normalize_path(v.split(' ', 1)[1])}" for v in routes.values()}


def check_routes(root: str, checks: Checks, modules: dict) -> None:
    t1 = modules.get("terraform/modules/tier1", {})
    t2 = modules.get("terraform/modules/tier2", {})
    r1 = rust_routes(root, "functions/tier1/src/http.rs")
    r2 = rust_routes(root, "tier2/tier2/src/http.rs")
    pairs = [
        ("tier-1 public API", tf_routes(t1, "public_routes"), r1.get("public", set())),
        ("tier-1 admin API", tf_routes(t1, "admin_routes"), r1.get("admin", set())),
        ("tier-2 public API", tf_routes(t2, "public_routes"), r2.get("public", set())),
        ("tier-2 admin routes", tf_routes(t2, "admin_routes"), r2.get("admin", set())),
    ]
    problems = []
    for name, tf, rust in pairs:
        for r in sorted(rust - tf):
            problems.append(f"{name}: the code serves {r}, API Gateway has no such route")
        for r in sorted(tf - rust):
            problems.append(f"{name}: API Gateway routes {r}, the code has no such route")
    for mod_name, mod in (("tier1", t1), ("tier2", t2)):
        for name, route in blocks(mod, "resource", "aws_apigatewayv2_route").items():
            auth = first(route.get("authorization_type"))
            for_each = str(first(route.get("for_each")))
            if "admin_routes" in for_each and auth != "AWS_IAM":
                problems.append(f"modules/{mod_name} aws_apigatewayv2_route.{name}: admin routes need AWS_IAM, not {auth}")
    with open(os.path.join(root, "tier2/tier2/src/protect.rs"), encoding="utf-8") as fh:
        prefixes = re.search(r"PROTECTED_PREFIXES: \[&str; \d+\] = \[([^\]]*)\]", fh.read()).group(1)
    code_prefixes = {p.strip('"/ ').split("/")[-1] for p in prefixes.split(",") if p.strip()}
    gate = set(locals_of(t2).get("protected_prefixes", {}).values())
    if gate != code_prefixes:
        problems.append(f"protected-API gate covers /api/{sorted(gate)}, the authorizer knows /api/{sorted(code_prefixes)}")
    checks.check("API Gateway routes = the routers' routes; admin routes use AWS_IAM", problems)


def check_edge(root: str, checks: Checks, layout: list[str]) -> None:
    problems = []
    fn = os.path.join(root, "edge/dist/cloudfront-function.js")
    with open(fn, encoding="utf-8") as fh:
        code = fh.read()
    for placeholder in ("__VWR_KVS_ID__", "__VWR_FAIL_MODE__"):
        if code.count(placeholder) != 1:
            problems.append(f"edge/dist/cloudfront-function.js has {code.count(placeholder)} {placeholder} (Terraform replaces exactly one)")
    with open(os.path.join(root, "terraform/modules/edge/main.tf"), encoding="utf-8") as fh:
        tf = fh.read()
    for placeholder in ("__VWR_KVS_ID__", "__VWR_FAIL_MODE__"):
        if f'"{placeholder}"' not in tf:
            problems.append(f"terraform/modules/edge does not fill {placeholder}")
    # A KeyValueStore id is a UUID (36 characters); "closed" is the longer fail mode.
    filled = code.replace("__VWR_KVS_ID__", "0" * 36).replace("__VWR_FAIL_MODE__", "closed")
    size = len(filled.encode("utf-8"))
    if size > 10240:
        problems.append(f"the filled CloudFront Function is {size} bytes > 10240")
    others = [os.path.join(root, "edge/dist/waiting-page-rewrite.js"), os.path.join(root, "terraform/modules/edge/functions/strip-prefix.js")]
    sizes = [size]
    for path in others:
        n = os.path.getsize(path)
        sizes.append(n)
        if n > 10240:
            problems.append(f"{rel(root, path)} is {n} bytes > 10240")
    checks.check(f"CloudFront Functions ≤ 10 KB once filled (verifier {size} bytes)", problems)


def module_dir(caller_dir: str, call: dict) -> str:
    """The relative directory of a module call's (local) source."""
    return os.path.normpath(os.path.join(caller_dir, str(first(call.get("source")))))


def calls_of(modules: dict, target: str) -> list[tuple[str, str, dict]]:
    """(caller dir, call name, call) of every call of the module in directory `target`."""
    out = []
    for dirname, mod in modules.items():
        for name, call in module_calls(mod).items():
            if module_dir(dirname, call) == target:
                out.append((dirname, name, call))
    return out


def outputs_of(mod: dict) -> dict:
    return {k: v for block in mod.get("output", []) for k, v in block.items()}


def var_default(mod: dict, name: str):
    for block in mod.get("variable", []):
        if name in block:
            return first(block[name].get("default"))
    return None


def origins(dist: dict) -> list[dict]:
    """Static and dynamic `origin` blocks of an aws_cloudfront_distribution."""
    out = list(dist.get("origin", []))
    for dyn in dist.get("dynamic", []):
        body = dyn.get("origin")
        if body:
            content = body.get("content", [])
            out.extend(content if isinstance(content, list) else [content])
    return out


def integration_binaries(mod_dir: str, mod: dict, deployments: list[dict], select) -> tuple[set[str], list[str]]:
    """Binaries of the Lambda integrations (aws_apigatewayv2_integration) for which
    select(name, body) holds, in one module."""
    found, problems = set(), []
    by_call = {d["call"]: d for d in deployments if d["module_dir"] == mod_dir}
    for name, integ in blocks(mod, "resource", "aws_apigatewayv2_integration").items():
        if not select(name, integ):
            continue
        m = re.search(r"module\.(\w+)\.invoke_arn", str(first(integ.get("integration_uri"))))
        if not m or m.group(1) not in by_call:
            problems.append(f"{mod_dir} aws_apigatewayv2_integration.{name}: cannot tell which Lambda it invokes")
            continue
        found.add(by_call[m.group(1)]["binary"])
    return found, problems


def check_origin_lock(checks: Checks, modules: dict, deployments: list[dict]) -> None:
    """Every CloudFront origin gets the origin secret; every Lambda behind an API CloudFront
    forwards to can check it (VWR_ORIGIN_SECRET_ID), and no other Lambda refuses its callers."""
    problems = []
    dists = 0
    for dirname, mod in modules.items():
        for name, dist in blocks(mod, "resource", "aws_cloudfront_distribution").items():
            dists += 1
            for o in origins(dist):
                headers = {first(h.get("name")): first(h.get("value")) for h in o.get("custom_header", [])}
                if not headers.get(ORIGIN_HEADER):
                    problems.append(f"{dirname} aws_cloudfront_distribution.{name}: origin {first(o.get('origin_id'))} does not send {ORIGIN_HEADER}")
    if not dists:
        problems.append("no aws_cloudfront_distribution found")

    # The APIs the edge module gets as origins (…_api_domain), followed to their Lambdas.
    fronted: set[str] = set()
    edge_calls = calls_of(modules, "terraform/modules/edge")
    if not edge_calls:
        problems.append("nothing calls terraform/modules/edge")
    for caller, call_name, call in edge_calls:
        where = f"{caller} module.{call_name}"
        siblings = module_calls(modules[caller])
        secret = re.fullmatch(r"\$\{module\.(\w+)\.origin_secret\}", str(first(call.get("origin_secret"))))
        if not secret:
            problems.append(f"{where}: origin_secret must be a tier1 module's origin_secret output")
        else:
            want = f"${{module.{secret.group(1)}.origin_secret_arn}}"
            for n, c in siblings.items():
                if "origin_secret_arn" in c and str(first(c["origin_secret_arn"])) != want:
                    problems.append(f"{caller} module.{n}: origin_secret_arn is not module.{secret.group(1)}.origin_secret_arn, the secret CloudFront sends")
        for arg, value in call.items():
            if not arg.endswith("_api_domain"):
                continue
            m = re.fullmatch(r"\$\{module\.(\w+)\.(\w+)\}", str(first(value)))
            if not m or m.group(1) not in siblings:
                problems.append(f"{where}: {arg} is not a module output; cannot follow it to its Lambda")
                continue
            src_dir = module_dir(caller, siblings[m.group(1)])
            src = modules.get(src_dir, {})
            out_value = str(first(outputs_of(src).get(m.group(2), {}).get("value")))
            http = re.search(r"aws_apigatewayv2_api\.(\w+)", out_value)
            if http:
                api_id = f"${{aws_apigatewayv2_api.{http.group(1)}.id}}"
                found, p = integration_binaries(src_dir, src, deployments, lambda _n, i: str(first(i.get("api_id"))) == api_id)
                problems += p
                if not found:
                    problems.append(f"{where}: {arg} → {src_dir} aws_apigatewayv2_api.{http.group(1)} has no Lambda integration")
                fronted |= found
            elif not re.search(r"aws_api_gateway_rest_api\.", out_value):
                problems.append(f"{where}: {arg} = module.{m.group(1)}.{m.group(2)}, which names no API")
            # A REST API (the protected-API gate) proxies to the operator's backend: no Lambda of
            # ours serves it; the backend checks the header (terraform/README.md).
    for b in sorted(FRONTED - fronted):
        problems.append(f"{b} is in FRONTED but the Terraform wiring does not put it behind CloudFront (derivation broken?)")
    for d in deployments:
        env = d["env"] if isinstance(d["env"], dict) else {}
        if d["binary"] in fronted and "VWR_ORIGIN_SECRET_ID" not in env:
            problems.append(f"{d['where']}: {d['binary']} serves a CloudFront-fronted API without VWR_ORIGIN_SECRET_ID")
        if d["binary"] not in fronted and "VWR_ORIGIN_SECRET_ID" in env:
            problems.append(f"{d['where']}: {d['binary']} is not behind CloudFront; VWR_ORIGIN_SECRET_ID would refuse its callers")
    checks.check(f"origins locked to CloudFront: {ORIGIN_HEADER} on every origin, VWR_ORIGIN_SECRET_ID on {', '.join(sorted(fronted))}", problems)


def check_throttling(checks: Checks, modules: dict) -> None:
    """Every API Gateway stage has a rate and a burst limit (positive, defaults included)."""
    problems = []
    count = 0

    def positive(mod_dir: str, mod: dict, where: str, key: str, value) -> None:
        v = first(value)
        ref = re.fullmatch(r"\$\{var\.(\w+)\}", str(v))
        if ref:
            v = var_default(mod, ref.group(1))
            if v is None:
                problems.append(f"{mod_dir} {where}: {key} = var.{ref.group(1)}, which has no default")
                return
        if not isinstance(v, (int, float)) or isinstance(v, bool) or v <= 0:
            problems.append(f"{mod_dir} {where}: {key} is {v!r}, not a positive number")

    for mod_dir, mod in modules.items():
        for name, stage in blocks(mod, "resource", "aws_apigatewayv2_stage").items():
            count += 1
            where = f"aws_apigatewayv2_stage.{name}"
            settings = stage.get("default_route_settings", [])
            if not settings:
                problems.append(f"{mod_dir} {where}: no default_route_settings (unthrottled)")
                continue
            for key in ("throttling_rate_limit", "throttling_burst_limit"):
                if key in settings[0]:
                    positive(mod_dir, mod, where, key, settings[0][key])
                else:
                    problems.append(f"{mod_dir} {where}: no {key}")
        method_settings = blocks(mod, "resource", "aws_api_gateway_method_settings")
        for name in blocks(mod, "resource", "aws_api_gateway_stage"):
            count += 1
            ms = {
                n: m
                for n, m in method_settings.items()
                if re.search(rf"aws_api_gateway_stage\.{name}\b", str(first(m.get("stage_name")))) and first(m.get("method_path")) == "*/*"
            }
            if not ms:
                problems.append(f'{mod_dir} aws_api_gateway_stage.{name}: no aws_api_gateway_method_settings with method_path "*/*" (unthrottled)')
            for n, m in ms.items():
                settings = (m.get("settings") or [{}])[0]
                for key in ("throttling_rate_limit", "throttling_burst_limit"):
                    if key in settings:
                        positive(mod_dir, mod, f"aws_api_gateway_method_settings.{n}", key, settings[key])
                    else:
                        problems.append(f"{mod_dir} aws_api_gateway_method_settings.{n}: no {key}")
        # Nor may a caller switch it off (a literal ≤ 0 for a *throttle* argument).
        for call_name, call in module_calls(mod).items():
            for arg, value in call.items():
                v = first(value)
                if "throttle" in arg and isinstance(v, (int, float)) and v <= 0:
                    problems.append(f"{mod_dir} module.{call_name}: {arg} = {v}")
    if not count:
        problems.append("no API Gateway stage found")
    checks.check(f"every API Gateway stage is throttled ({count} stages)", problems)


def check_kms_decrypt(checks: Checks, modules: dict) -> None:
    """Where a module encrypts a function's environment (or what it reads) with a customer managed
    key, the function's role may decrypt with that key: otherwise the first cold start fails."""
    problems = []
    for mod_dir, mod in modules.items():
        fns = [n for n, f in blocks(mod, "resource", "aws_lambda_function").items() if "kms_key_arn" in f]
        if not fns:
            continue
        docs = blocks(mod, "data", "aws_iam_policy_document")
        granted = False
        for name, doc in docs.items():
            for st in doc.get("statement", []):
                if "'kms:Decrypt'" in str(st.get("actions")) and "var.kms_key_arn" in str(st.get("resources")):
                    policies = [p for p in blocks(mod, "resource", "aws_iam_role_policy").values() if f"aws_iam_policy_document.{name}" in str(p.get("policy"))]
                    granted = granted or bool(policies)
        if not granted:
            problems.append(f"{mod_dir}: aws_lambda_function {', '.join(fns)} use var.kms_key_arn, but no role policy grants kms:Decrypt on it")
    checks.check("a customer managed key: every function's role may kms:Decrypt with it", problems)


def check_edge_keys(root: str, checks: Checks, modules: dict) -> None:
    """The edge gets the derived keys (tier1 edge_keys_text), never the master keys_text."""
    problems = []
    tier1 = "terraform/modules/tier1"
    edge_out = str(first(outputs_of(modules.get(tier1, {})).get("edge_keys_text", {}).get("value")))
    derived = str(locals_of(modules.get(tier1, {})).get("tier1_edge_keys_b64url"))
    if "local.tier1_edge_keys_b64url" not in edge_out:
        problems.append(f"{tier1} output edge_keys_text does not come from local.tier1_edge_keys_b64url")
    if f'base64sha256("{EDGE_KEY_LABEL}${{local.tier1_keys_b64url[k]}}")' not in derived:
        problems.append(f'{tier1} local.tier1_edge_keys_b64url is not base64sha256("{EDGE_KEY_LABEL}" + the base64url master key)')
    calls = calls_of(modules, "terraform/modules/edge")
    if not calls:
        problems.append("nothing calls terraform/modules/edge")
    for caller, call_name, call in calls:
        t1 = {n for n, c in module_calls(modules[caller]).items() if module_dir(caller, c) == tier1}
        for arg, value in call.items():
            for m in re.finditer(r"module\.(\w+)\.keys_text\b", str(first(value))):
                if m.group(1) in t1:
                    problems.append(f"{caller} module.{call_name}: {arg} gets the MASTER tier-1 keys (module.{m.group(1)}.keys_text): use edge_keys_text")
        keys = re.fullmatch(r"\$\{module\.(\w+)\.edge_keys_text\}", str(first(call.get("tier1_edge_keys_text"))))
        if not keys or keys.group(1) not in t1:
            problems.append(f"{caller} module.{call_name}: tier1_edge_keys_text must be a tier1 module's edge_keys_text")
    checks.check("the edge gets the derived tier-1 keys (edge_keys_text), never the master keys_text", problems)

    # The tokens the edge checks are signed by the Rust side with the same derivation.
    problems = []
    label = re.compile(r'b?"' + re.escape(EDGE_KEY_LABEL))
    if not any(label.search(read_code(p)) for c in ("vwr-core", "vwr-tier1") for p in rust_sources(root, c)):
        problems.append(f'no source of vwr-core / vwr-tier1 has the label "{EDGE_KEY_LABEL}" (HmacKeyring::edge_ring)')
    checks.check(f'edge-key derivation label "{EDGE_KEY_LABEL}" = the Rust side\'s', problems)


def check_tier2_link_keys(root: str, checks: Checks, modules: dict, deployments: list[dict]) -> None:
    """Tier 2 gets the derived link keys (tier1 tier2_link_keys), never the tier-1 master keys:
    no master-key variable on a tier-2 function, no read of the tier1 module's keys secret."""
    problems = []
    tier1, tier2 = "terraform/modules/tier1", "terraform/modules/tier2"
    link_out = str(first(outputs_of(modules.get(tier1, {})).get("tier2_link_keys", {}).get("value")))
    for need in ("local.tier1_edge_keys_b64url", "local.tier1_place_keys_b64url"):
        if need not in link_out:
            problems.append(f"{tier1} output tier2_link_keys does not hold {need}")
    derived = str(locals_of(modules.get(tier1, {})).get("tier1_place_keys_b64url"))
    if f'base64sha256("{PLACE_KEY_LABEL}${{local.tier1_keys_b64url[k]}}")' not in derived:
        problems.append(f'{tier1} local.tier1_place_keys_b64url is not base64sha256("{PLACE_KEY_LABEL}" + the base64url master key)')
    for d in deployments:
        if not str(d["binary"]).startswith("vwr-tier2-"):
            continue
        for k in TIER1_MASTER_ENV:
            if isinstance(d["env"], dict) and k in d["env"]:
                problems.append(f"{d['where']} ({d['binary']}) sets {k}: the tier-1 MASTER keys (use VWR_TIER1_LINK_SECRET_ID)")
        for st in d["statements"] or []:
            if "secretsmanager:GetSecretValue" not in flat(st.get("actions", [])):
                continue
            for r in flat(st.get("resources", [])):
                m = re.fullmatch(r"\$\{var\.(\w+)\}", str(r))
                if not m:
                    continue
                for caller, call_name, call in calls_of(modules, d["module_dir"]):
                    t1 = {n for n, c in module_calls(modules[caller]).items() if module_dir(caller, c) == tier1}
                    arg = str(first(call.get(m.group(1))))
                    for mm in re.finditer(r"module\.(\w+)\.(keys_secret_arn|keys_text)\b", arg):
                        if mm.group(1) in t1:
                            problems.append(
                                f"{d['where']} ({d['binary']}) may read var.{m.group(1)} = module.{mm.group(1)}.{mm.group(2)} "
                                f"({caller} module.{call_name}): the tier-1 MASTER keys"
                            )
    calls = calls_of(modules, tier2)
    if not calls:
        problems.append(f"nothing calls {tier2}")
    for caller, call_name, call in calls:
        t1 = {n for n, c in module_calls(modules[caller]).items() if module_dir(caller, c) == tier1}
        for arg, value in call.items():
            for m in re.finditer(r"module\.(\w+)\.(keys_secret_arn|keys_text)\b", str(first(value))):
                if m.group(1) in t1:
                    problems.append(f"{caller} module.{call_name}: {arg} gets the tier-1 MASTER keys (module.{m.group(1)}.{m.group(2)}): use tier2_link_keys")
        keys = re.fullmatch(r"\$\{module\.(\w+)\.tier2_link_keys\}", str(first(call.get("tier1_link_keys"))))
        if not keys or keys.group(1) not in t1:
            problems.append(f"{caller} module.{call_name}: tier1_link_keys must be a tier1 module's tier2_link_keys")
    checks.check("tier 2 gets the derived tier-1 link keys (tier2_link_keys), never the tier-1 master keys", problems)

    problems = []
    label = re.compile(r'b?"' + re.escape(PLACE_KEY_LABEL))
    if not any(label.search(read_code(p)) for p in rust_sources(root, "vwr-core")):
        problems.append(f'no source of vwr-core has the label "{PLACE_KEY_LABEL}" (HmacKeyring::place_ring)')
    checks.check(f'place-key derivation label "{PLACE_KEY_LABEL}" = the Rust side\'s', problems)


def iam_match(pattern: str, value: str) -> bool:
    """IAM string matching: `*` any run of characters, `?` one character, case-sensitive."""
    return re.fullmatch("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern), value) is not None


def leading_keys_allow(st: dict, key: str) -> bool:
    """Whether a statement's dynamodb:LeadingKeys conditions let a request on partition key `key`
    through (no condition: any key)."""
    for cond in flat(st.get("condition", [])):
        if not isinstance(cond, dict) or first(cond.get("variable")) != "dynamodb:LeadingKeys":
            continue
        test = str(first(cond.get("test")))
        values = [str(v) for v in flat(cond.get("values", []))]
        hit = any(iam_match(v, key) for v in values)
        if test.endswith("StringLike") and not test.endswith("NotLike") and not hit:
            return False
        if test.endswith("StringNotLike") and hit:
            return False
        if test.endswith("StringEquals") and key not in values:
            return False
        if test.endswith("StringNotEquals") and key in values:
            return False
    return True


def check_tier2_writes(root: str, checks: Checks, deployments: list[dict]) -> None:
    """The tier-2 roles may write the tier-2 registration items and no other item: a sample
    partition key of every key builder (DYNAMO_KEY_FILES) is tried against their grants."""
    builders, _ = dynamo_key_builders(root)
    samples = {name: sample_key(pk) for name, (_, pk, _) in builders.items()}
    registration = samples.pop(REGISTRATION_BUILDER, None)
    problems = [] if registration else [f"no key builder {REGISTRATION_BUILDER} in {', '.join(DYNAMO_KEY_FILES)}"]
    others = sorted({k for k in samples.values() if k != registration})
    if len(others) < 2:
        problems.append(f"found {len(others)} other item keys in {', '.join(DYNAMO_KEY_FILES)}: the key builders were not read")
    for d in deployments:
        if not str(d["binary"]).startswith("vwr-tier2-") or d["statements"] is None:
            continue
        writes = [st for st in d["statements"] if first(st.get("effect", "Allow")) != "Deny"
                  and any(a in DYNAMO_WRITES for a in flat(st.get("actions", [])))]
        for st in writes:
            for key in others:
                if leading_keys_allow(st, key):
                    problems.append(f"{d['where']} ({d['binary']}) statement {first(st.get('sid'))!r} may write the item {key}")
        if registration and writes and not any(leading_keys_allow(st, registration) for st in writes):
            problems.append(f"{d['where']} ({d['binary']}) writes DynamoDB but not the registration item {registration}")
    checks.check("the tier-2 roles write no tier-1 item (dynamodb:LeadingKeys: registration items only)", problems)


CSP_REQUIRED = ("default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "base-uri 'none'")


def check_waiting_page_headers(checks: Checks, modules: dict) -> None:
    """The /vwr/* behavior answers with a strict CSP (nothing inline, no eval) and no framing."""
    problems = []
    edge = modules.get("terraform/modules/edge", {})
    policies = blocks(edge, "resource", "aws_cloudfront_response_headers_policy")
    dists = list(blocks(edge, "resource", "aws_cloudfront_distribution").values())
    behaviors = [b for d in dists for b in d.get("ordered_cache_behavior", []) if first(b.get("path_pattern")) == "/vwr/*"]
    if len(behaviors) != 1:
        problems.append(f"expected one /vwr/* behavior in terraform/modules/edge, found {len(behaviors)}")
    for b in behaviors:
        m = re.fullmatch(r"\$\{aws_cloudfront_response_headers_policy\.(\w+)\.id\}", str(first(b.get("response_headers_policy_id"))))
        policy = policies.get(m.group(1)) if m else None
        if policy is None:
            problems.append("the /vwr/* behavior has no response headers policy of the module")
            continue
        sec = (policy.get("security_headers_config") or [{}])[0]
        csp = (sec.get("content_security_policy") or [{}])[0]
        text = str(first(csp.get("content_security_policy")))
        problems += [f"CSP lacks {d!r}: {text!r}" for d in CSP_REQUIRED if d not in text]
        problems += [f"CSP allows {w!r}" for w in ("unsafe-inline", "unsafe-eval", "*") if w in text]
        if first(csp.get("override")) is not True:
            problems.append("the CSP must override (override = true)")
        if first((sec.get("frame_options") or [{}])[0].get("frame_option")) != "DENY":
            problems.append("frame_options must be DENY")
        if not sec.get("strict_transport_security") or not sec.get("content_type_options"):
            problems.append("HSTS and X-Content-Type-Options must be set")
    checks.check("the waiting page (/vwr/*) has its Content-Security-Policy and DENY framing", problems)


BOOKING_FILES = ("static/vwr/queue/index.html", "static/vwr/queue/tier2.js")


def check_booking_page(root: str, checks: Checks, modules: dict, layout: list[str]) -> None:
    """The booking page is deployed beside the waiting page (docs/adr/0027-booking-page-path.md):
    its files are packaged under vwr/queue/ (uploaded with the waiting page's), every file it
    loads is packaged too, the /vwr/* behaviour's viewer-request function is the rewrite that
    maps /vwr/queue/{eventId} to it, and `vwr dev` serves the same path."""
    problems = [f"scripts/package.sh does not package {f}" for f in BOOKING_FILES if f not in layout]
    with open(os.path.join(root, "static/queue/index.html"), encoding="utf-8") as fh:
        page = fh.read()
    for ref in re.findall(r'(?:src|href)="(/vwr/[^"]+)"', page):
        if f"static{ref}" not in layout:
            problems.append(f"static/queue/index.html loads {ref}, which is not packaged")
    edge = modules.get("terraform/modules/edge", {})
    fns = blocks(edge, "resource", "aws_cloudfront_function")
    dists = list(blocks(edge, "resource", "aws_cloudfront_distribution").values())
    behaviors = [b for d in dists for b in d.get("ordered_cache_behavior", []) if first(b.get("path_pattern")) == "/vwr/*"]
    for b in behaviors:
        arns = [str(first(f.get("function_arn"))) for f in b.get("function_association", []) if first(f.get("event_type")) == "viewer-request"]
        names = [m.group(1) for a in arns for m in [re.fullmatch(r"\$\{aws_cloudfront_function\.(\w+)\.arn\}", a)] if m]
        codes = [str(first(fns.get(n, {}).get("code"))) for n in names]
        if not any("edge/waiting-page-rewrite.js" in c for c in codes):
            problems.append(f"the /vwr/* behaviour's viewer-request function is not edge/dist/waiting-page-rewrite.js ({arns})")
    with open(os.path.join(root, "edge/dist/waiting-page-rewrite.js"), encoding="utf-8") as fh:
        rewrite = fh.read()
    if '"/vwr/queue/index.html"' not in rewrite or "\\/vwr\\/queue\\/" not in rewrite:
        problems.append("edge/dist/waiting-page-rewrite.js does not map /vwr/queue/{eventId} to /vwr/queue/index.html")
    with open(os.path.join(root, "cli/src/dev/site.rs"), encoding="utf-8") as fh:
        site = fh.read()
    if '"/vwr/queue/{name}"' not in site:
        problems.append("vwr dev (cli/src/dev/site.rs) does not serve /vwr/queue/…")
    checks.check("the booking page: packaged under vwr/queue/, mapped by the /vwr/* rewrite, served by vwr dev at the same path", problems)


def check_status_document(checks: Checks, modules: dict) -> None:
    """The public status document: its own CloudFront behavior before /vwr-api/*, cached 1 s on
    the path alone, nothing of the viewer's request forwarded, treated like /vwr-api/* at the edge
    (prefix stripped, never the verifier), and a tier-1 public route behind it."""
    problems = []
    edge = modules.get("terraform/modules/edge", {})
    dists = list(blocks(edge, "resource", "aws_cloudfront_distribution").values())
    ordered = [b for d in dists for b in d.get("ordered_cache_behavior", [])]
    patterns = [first(b.get("path_pattern")) for b in ordered]
    dynamic_patterns = [
        str(first(body.get("for_each")))
        for d in dists for dyn in d.get("dynamic", []) for name, body in dyn.items() if name == "ordered_cache_behavior"
    ]
    if patterns.count(STATUS_PATTERN) != 1:
        problems.append(f"expected one {STATUS_PATTERN} behavior in terraform/modules/edge, found {patterns.count(STATUS_PATTERN)}")
    elif "/vwr-api/*" not in patterns:
        problems.append("no /vwr-api/* behavior in terraform/modules/edge")
    else:
        if patterns.index(STATUS_PATTERN) > patterns.index("/vwr-api/*"):
            problems.append(f"{STATUS_PATTERN} comes after /vwr-api/*, which would take its requests (first match wins)")
        if any(STATUS_PATTERN in p for p in dynamic_patterns):
            problems.append(f"{STATUS_PATTERN} is a dynamic behavior: its order against /vwr-api/* cannot be checked")
        status = ordered[patterns.index(STATUS_PATTERN)]
        api = ordered[patterns.index("/vwr-api/*")]
        if first(status.get("target_origin_id")) != first(api.get("target_origin_id")):
            problems.append(f"{STATUS_PATTERN} goes to {first(status.get('target_origin_id'))}, /vwr-api/* to {first(api.get('target_origin_id'))}")

        def edge_functions(b: dict) -> list[str]:
            out = [f"{first(f.get('event_type'))} {first(f.get('function_arn'))}" for f in b.get("function_association", [])]
            out += [f"{first(f.get('event_type'))} {first(f.get('lambda_arn'))}" for f in b.get("lambda_function_association", [])]
            out += [f"dynamic {name}" for dyn in b.get("dynamic", []) for name in dyn]
            return out

        if edge_functions(status) != edge_functions(api):
            problems.append(f"{STATUS_PATTERN} runs {edge_functions(status)} at the edge, /vwr-api/* runs {edge_functions(api)}: treat them alike")
        if any("verifier" in f or "lambda_edge" in f or f.startswith("dynamic") for f in edge_functions(status)):
            problems.append(f"{STATUS_PATTERN} must never be gated by the edge verifier")
        if "${local.all_methods}" in str(status.get("allowed_methods")):
            problems.append(f"{STATUS_PATTERN} allows every method: GET and HEAD suffice for a cached document")

        cache_ref = re.fullmatch(r"\$\{aws_cloudfront_cache_policy\.(\w+)\.id\}", str(first(status.get("cache_policy_id"))))
        cache = blocks(edge, "resource", "aws_cloudfront_cache_policy").get(cache_ref.group(1)) if cache_ref else None
        if cache is None:
            problems.append(f"{STATUS_PATTERN} has no cache policy of the module")
        else:
            # An error is cached by the distribution's error TTL (10 s unless set), not the policy.
            for d in dists:
                ttl404 = [first(e.get("error_caching_min_ttl")) for e in d.get("custom_error_response", []) if first(e.get("error_code")) == 404]
                if not ttl404 or not isinstance(ttl404[0], (int, float)) or ttl404[0] > 1:
                    problems.append(f"a 404 of {STATUS_PATTERN} (an event not active yet) is cached {ttl404 or 'the default 10 s'}: want custom_error_response 404 with error_caching_min_ttl <= 1")
            ttls = tuple(first(cache.get(k)) for k in ("min_ttl", "default_ttl", "max_ttl"))
            if ttls != (0, 1, 1):
                problems.append(f"cache policy {cache_ref.group(1)}: min/default/max TTL {ttls}, want (0, 1, 1)")
            key = (cache.get("parameters_in_cache_key_and_forwarded_to_origin") or [{}])[0]
            for cfg, field in (("cookies_config", "cookie_behavior"), ("headers_config", "header_behavior"), ("query_strings_config", "query_string_behavior")):
                v = first((key.get(cfg) or [{}])[0].get(field))
                if v != "none":
                    problems.append(f"cache policy {cache_ref.group(1)}: {field} is {v!r}: the key must be the path alone")
        orp = status.get("origin_request_policy_id")
        if orp is not None:
            orp_ref = re.fullmatch(r"\$\{aws_cloudfront_origin_request_policy\.(\w+)\.id\}", str(first(orp)))
            policy = blocks(edge, "resource", "aws_cloudfront_origin_request_policy").get(orp_ref.group(1)) if orp_ref else None
            if policy is None:
                problems.append(f"{STATUS_PATTERN}: origin request policy {first(orp)!r} is not one of the module (a managed one forwards viewer data)")
            else:
                for cfg, field in (("cookies_config", "cookie_behavior"), ("headers_config", "header_behavior"), ("query_strings_config", "query_string_behavior")):
                    v = first((policy.get(cfg) or [{}])[0].get(field))
                    if v != "none":
                        problems.append(f"origin request policy {orp_ref.group(1)}: {field} is {v!r}: nothing of the viewer's request may vary the answer")
    if STATUS_ROUTE not in tf_routes(modules.get("terraform/modules/tier1", {}), "public_routes"):
        problems.append(f"the tier-1 public API has no route {STATUS_ROUTE} for {STATUS_PATTERN}")
    checks.check(f"public status document: {STATUS_PATTERN} before /vwr-api/*, cached 1 s on the path alone, never gated", problems)


LINE_PATTERN = "/api/queue/line/*"
LINE_ROUTE = "GET /api/queue/line/{}"


def check_line_document(checks: Checks, modules: dict) -> None:
    """Tier 2's line document (docs/api.md#the-line-document, ADR 0026) has its own CloudFront
    behaviour before /api/queue/*'s, cached 1 s on the path alone with the status document's
    cache and origin request policies (nothing of the viewer's reaches the origin), to the
    tier-2 API, and the tier-2 public API has the route."""
    problems = []
    edge = modules.get("terraform/modules/edge", {})
    dists = list(blocks(edge, "resource", "aws_cloudfront_distribution").values())
    dyns = [
        (str(first(body.get("for_each"))), (body.get("content") or [{}])[0])
        for d in dists for dyn in d.get("dynamic", []) for name, body in dyn.items() if name == "ordered_cache_behavior"
    ]
    line = [i for i, (fe, _) in enumerate(dyns) if f"'{LINE_PATTERN}'" in fe]
    queue = [i for i, (fe, _) in enumerate(dyns) if "'/api/queue/*'" in fe]
    if not line:
        problems.append(f"no CloudFront behaviour for {LINE_PATTERN}")
    elif queue and line[0] > queue[0]:
        problems.append(f"{LINE_PATTERN} comes after /api/queue/*, which would take it uncached")
    else:
        content = dyns[line[0]][1]
        want = {
            "cache_policy_id": "${aws_cloudfront_cache_policy.status.id}",
            "origin_request_policy_id": "${aws_cloudfront_origin_request_policy.status.id}",
            "target_origin_id": "tier2-api",
        }
        for field, value in want.items():
            got = str(first(content.get(field)))
            if got != value:
                problems.append(f"{LINE_PATTERN}: {field} is {got!r}, not {value!r}")
    if LINE_ROUTE not in tf_routes(modules.get("terraform/modules/tier2", {}), "public_routes"):
        problems.append(f"the tier-2 public API has no route {LINE_ROUTE}")
    checks.check(f"tier-2 line document: {LINE_PATTERN} before /api/queue/*, cached 1 s on the path alone", problems)


def check_release(checks: Checks, modules: dict) -> None:
    """POST /vwr-api/vwr/release/{eventId} reaches the tier-1 release route: the first
    CloudFront behaviour that matches it is /vwr-api/*'s, allows POST, and forwards the
    visitor's tier-1 cookie and x-vwr-token to the origin."""
    problems = []
    edge = modules.get("terraform/modules/edge", {})
    local = locals_of(edge)
    dists = list(blocks(edge, "resource", "aws_cloudfront_distribution").values())
    ordered = [b for d in dists for b in d.get("ordered_cache_behavior", [])]
    dynamic_patterns = [
        str(first(body.get("for_each")))
        for d in dists for dyn in d.get("dynamic", []) for name, body in dyn.items() if name == "ordered_cache_behavior"
    ]

    def resolve(v):
        ref = re.fullmatch(r"\$\{local\.(\w+)\}", str(first(v)))
        return local.get(ref.group(1)) if ref else first(v)

    matching = [b for b in ordered if fnmatch.fnmatchcase(RELEASE_PATH, str(first(b.get("path_pattern"))))]
    if any("/vwr-api" in p for p in dynamic_patterns):
        problems.append(f"a dynamic behaviour may take /vwr-api paths ({dynamic_patterns}): its order cannot be checked")
    if not matching:
        problems.append(f"no CloudFront behaviour matches {RELEASE_PATH}")
    else:
        b = matching[0]
        pattern = first(b.get("path_pattern"))
        if pattern != "/vwr-api/*":
            problems.append(f"{RELEASE_PATH} is taken by {pattern!r} before /vwr-api/*")
        methods = resolve(b.get("allowed_methods"))
        if "POST" not in flat(methods):
            problems.append(f"{pattern}: allowed_methods {methods!r} lack POST")
        policy_id = str(resolve(b.get("origin_request_policy_id")))
        orp = re.fullmatch(r"\$\{aws_cloudfront_origin_request_policy\.(\w+)\.id\}", policy_id)
        if policy_id in FORWARD_ALL_POLICIES:
            pass
        elif orp:
            policy = blocks(edge, "resource", "aws_cloudfront_origin_request_policy").get(orp.group(1))
            if policy is None:
                problems.append(f"{pattern}: origin request policy {orp.group(1)} is not in terraform/modules/edge")
            else:
                cookies = (policy.get("cookies_config") or [{}])[0]
                headers = (policy.get("headers_config") or [{}])[0]
                if first(cookies.get("cookie_behavior")) != "all":
                    problems.append(f"{pattern}: origin request policy {orp.group(1)} does not forward all cookies (the tier-1 cookie is named per event)")
                hb = first(headers.get("header_behavior"))
                items = [str(i).lower() for i in flat((headers.get("headers") or [{}])[0].get("items", []))]
                if hb not in ("allViewer", "allViewerAndWhitelistCloudFront") and RELEASE_HEADER not in items:
                    problems.append(f"{pattern}: origin request policy {orp.group(1)} does not forward {RELEASE_HEADER}")
        else:
            problems.append(f"{pattern}: origin request policy {policy_id!r} is neither a module policy nor one known to forward every cookie and header")
    if RELEASE_ROUTE not in tf_routes(modules.get("terraform/modules/tier1", {}), "public_routes"):
        problems.append(f"the tier-1 public API has no route {RELEASE_ROUTE}")
    checks.check(f"early release: {RELEASE_PATH} → /vwr-api/* (POST allowed, tier-1 cookie and {RELEASE_HEADER} forwarded) → {RELEASE_ROUTE}", problems)


# --- HCL evaluation: dynamic blocks and for_each maps --------------------------------------------
# python-hcl2 gives a block's `dynamic "x" { for_each, content }` as {"x": {"for_each": […],
# "content": […]}} and every expression that is not a literal as "${…}" text. The checks want the
# blocks Terraform makes, so these helpers evaluate exactly the forms the modules use, and leave
# anything else unevaluated (a dynamic block stays dynamic; an expression stays text):
#   * for_each = local.NAME (a literal map or list of the module's locals), or an iterator's
#     value (`rule.value.list`);
#   * for_each = X == null ? [] : [Y] (or != null, or the branches the other way round), X and Y
#     iterator references (`rule.value.method`);
#   * in the content, `${it.key}`, `${it.value}`, `${it.value.field…}` for an iterator `it` in
#     scope (the dynamic block's label or its `iterator`), alone (the value itself: a number,
#     null, "${var.x}" stays an expression) or inside a string template;
#   * each.key / each.value.field of a resource whose for_each is a map the same way (for_each_keys
#     reads its keys).

HCL_PURE_REF = re.compile(r"^\$\{([A-Za-z_]\w*(?:\.[A-Za-z_][\w-]*)*)\}$")
HCL_TEMPLATE_REF = re.compile(r"\$\{([A-Za-z_]\w*(?:\.[A-Za-z_][\w-]*)*)\}")
HCL_NULL_TEST = re.compile(r"^\$\{(\S+) (==|!=) None \? (\[\]|\[(.+)\]) : (\[\]|\[(.+)\])\}$")


class HclError(Exception):
    """An expression of a form these helpers read, that does not evaluate (a missing field)."""


def hcl_lookup(path: str, env: dict):
    """(True, value) of an iterator reference `it.key`, `it.value`, `it.value.a.b` with `it` in
    env; (False, None) for any other reference (var.*, local.*, …)."""
    parts = path.split(".")
    if parts[0] not in env or len(parts) < 2 or parts[1] not in ("key", "value"):
        return False, None
    v = env[parts[0]][parts[1]]
    for p in parts[2:]:
        if not isinstance(v, dict) or p not in v:
            raise HclError(f"{path}: no field {p!r} in {v!r}")
        v = v[p]
    return True, v


def hcl_operand(text: str, env: dict):
    """(True, value) of a for_each operand: an iterator reference, bare or as '${…}'."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    m = HCL_PURE_REF.match(text)
    return hcl_lookup(m.group(1) if m else text, env)


def hcl_subst(v, env: dict):
    """v with the iterator references of env replaced, recursively."""
    if isinstance(v, dict):
        return {k: hcl_subst(x, env) for k, x in v.items()}
    if isinstance(v, list):
        return [hcl_subst(x, env) for x in v]
    if not isinstance(v, str) or "${" not in v:
        return v
    m = HCL_PURE_REF.match(v)
    if m:
        found, value = hcl_lookup(m.group(1), env)
        return value if found else v

    def one(m: re.Match) -> str:
        found, value = hcl_lookup(m.group(1), env)
        if not found:
            return m.group(0)
        if value is None or isinstance(value, (dict, list)):
            raise HclError(f"{v!r}: {m.group(1)} is {value!r}, not text")
        return str(value).lower() if isinstance(value, bool) else str(value)

    return HCL_TEMPLATE_REF.sub(one, v)


def hcl_items(v) -> list[tuple]:
    """(key, value) pairs of a map, (index, value) of a list; None for anything else."""
    if isinstance(v, dict):
        return [(k, x) for k, x in v.items() if not k.startswith("__")]
    if isinstance(v, list):
        return list(enumerate(v))
    return None


def for_each_items(expr, env: dict, local: dict) -> list[tuple] | None:
    """What a for_each iterates over, as (key, value) pairs, or None when it is not a form
    these helpers read."""
    expr = first(expr)
    if not isinstance(expr, str):
        return hcl_items(expr)
    m = HCL_PURE_REF.match(expr)
    if m:
        ref = m.group(1).split(".")
        if ref[0] == "local" and len(ref) == 2 and ref[1] in local:
            return hcl_items(local[ref[1]])
        found, value = hcl_lookup(m.group(1), env)
        return hcl_items(value) if found else None
    m = HCL_NULL_TEST.match(expr)
    if m:
        found, value = hcl_operand(m.group(1), env)
        if not found:
            return None
        branch = (m.group(3), m.group(4)) if (value is None) == (m.group(2) == "==") else (m.group(5), m.group(6))
        if branch[0] == "[]":
            return []
        found, item = hcl_operand(branch[1], env)
        return [(0, item)] if found else None
    return None


def expand_dynamic(body: dict, local: dict, env: dict | None = None) -> dict:
    """body with every dynamic block whose for_each these helpers read replaced by the blocks it
    makes (after the static blocks of the same name), nested ones included; other dynamic blocks
    stay, their content evaluated as far as the iterators in scope go."""
    env = env or {}
    out: dict = {}
    made: dict[str, list] = {}
    kept = []
    for key, v in body.items():
        if key == "dynamic":
            for dyn in v:
                for name, spec in dyn.items():
                    items = for_each_items(spec.get("for_each"), env, local)
                    contents = spec.get("content", [])
                    contents = contents if isinstance(contents, list) else [contents]
                    if items is None:
                        kept.append({name: {**hcl_subst({k: x for k, x in spec.items() if k != "content"}, env), "content": [expand_dynamic(c, local, env) for c in contents]}})
                        continue
                    it = re.sub(r"^\$\{(\w+)\}$", r"\1", str(first(spec.get("iterator")) or name))
                    for k, value in items:
                        for c in contents:
                            made.setdefault(name, []).append(expand_dynamic(c, local, {**env, it: {"key": k, "value": value}}))
        elif isinstance(v, list) and v and all(isinstance(b, dict) for b in v):
            out[key] = [expand_dynamic(b, local, env) for b in v]
        else:
            out[key] = hcl_subst(v, env)
    for name, blocks_ in made.items():
        out[name] = out.get(name, []) + blocks_
    if kept:
        out["dynamic"] = kept
    return out


def hcl_scan(text: str):
    """(index, bracket depth) of each character of an expression outside quotes; the depth
    goes below 0 where a bracket closes that text did not open."""
    depth, quote, escaped = 0, None, False
    for i, ch in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in ")]}":
            depth -= 1
        yield i, depth
        if ch in "([{":
            depth += 1


def hcl_split(text: str, sep: str) -> list[str]:
    """text cut at each `sep` outside brackets and quotes."""
    cuts = [i for i, depth in hcl_scan(text) if depth == 0 and text.startswith(sep, i)]
    parts, start = [], 0
    for i in cuts:
        if i >= start:
            parts.append(text[start:i])
            start = i + len(sep)
    return parts + [text[start:]]


def hcl_wrapped(text: str) -> bool:
    """Whether text is one bracketed expression: `{…}` or `(…)` whose first bracket closes last."""
    depths = [d for _i, d in hcl_scan(text)]
    return len(text) >= 2 and text[0] in "([{" and text[-1] in ")]}" and depths[-1] == 0 and min(depths[1:-1] or [1]) >= 1


def hcl_keys(v, local: dict) -> list[str] | None:
    """The keys of a map expression as python-hcl2 gives it, or None when they cannot be read:
    a literal map, local.NAME, merge(…) of maps, `cond ? A : B` (both, as if either held),
    `{ for k, v in MAP : KEY => … }` (any `if`, as if it held) with KEY `k` or a template of
    it. An operand that cannot be read makes the whole None."""
    if isinstance(v, dict):
        return [k for k in v if not k.startswith("__")]
    if not isinstance(v, str):
        return None
    t = v.strip()
    if t.startswith("${") and hcl_wrapped(t[1:]):
        t = t[2:-1].strip()
    m = re.fullmatch(r"local\.(\w+)", t)
    if m:
        return hcl_keys(local[m.group(1)], local) if m.group(1) in local else None
    m = re.fullmatch(r"merge(\(.*\))", t, re.S)
    if m and hcl_wrapped(m.group(1)):
        out: list[str] = []
        for arg in hcl_split(m.group(1)[1:-1], ","):
            keys = hcl_keys(arg, local)
            if keys is None:
                return None
            out += [k for k in keys if k not in out]
        return out
    cond = hcl_split(t, " ? ")
    if len(cond) == 2 and len(hcl_split(cond[1], " : ")) == 2:
        a, b = (hcl_keys(x, local) for x in hcl_split(cond[1], " : "))
        return None if a is None or b is None else a + [k for k in b if k not in a]
    m = re.fullmatch(r"\{for (\w+) , \w+ in (.*)\}", t, re.S)
    if m:
        head = hcl_split(m.group(2), " : ")
        arrow = hcl_split(" : ".join(head[1:]), " => ")
        source = hcl_keys(head[0], local)
        if len(head) < 2 or len(arrow) < 2 or source is None:
            return None
        key = arrow[0].strip()
        if key == m.group(1):
            return source
        if len(key) >= 2 and key[0] == key[-1] == '"':
            return [key[1:-1].replace("${" + m.group(1) + "}", k) for k in source]
        return None
    if t.startswith("{") and t.endswith("}"):
        inner = t[1:-1].strip()
        if not inner:
            return []
        out = []
        for item in hcl_split(inner, ","):
            kv = hcl_split(item, ": ")
            try:
                out.append(str(ast.literal_eval(kv[0].strip())))
            except (ValueError, SyntaxError):
                return None
        return out
    return None


def check_waf(root: str, checks: Checks, modules: dict) -> None:
    """The edge module's web ACL: CLOUDFRONT scope in us-east-1, the managed groups of
    WAF_MANAGED_GROUPS blocking, per-IP rate-based rules over WAF_WINDOW_SECONDS scoped to the
    paths of WAF_RATE_RULES (which the routers serve) and answering 429 with the API's JSON error;
    attached to the distribution; on in examples/complete."""
    problems = []
    edge_dir = "terraform/modules/edge"
    edge = modules.get(edge_dir, {})
    local = locals_of(edge)
    acls = blocks(edge, "resource", "aws_wafv2_web_acl")

    def value(v):
        """A literal, a var.* (its default) or a local.* (its value), else the expression."""
        v = first(v)
        m = re.fullmatch(r"\$\{(var|local)\.(\w+)\}", str(v))
        if m:
            return var_default(edge, m.group(2)) if m.group(1) == "var" else local.get(m.group(2))
        return v

    def kids(body: dict, name: str) -> list[dict]:
        """Static `name` blocks of body and the content of its dynamic `name` blocks."""
        out = list(body.get(name, []))
        for dyn in body.get("dynamic", []):
            if name in dyn:
                content = dyn[name].get("content", [])
                out.extend(content if isinstance(content, list) else [content])
        return out

    def byte_matches(stmt: dict) -> tuple[list[dict], list[str]]:
        """The byte-match statements a scope-down requires (itself, or all of an and_statement)."""
        if stmt.get("byte_match_statement"):
            return [stmt["byte_match_statement"][0]], []
        ands = stmt.get("and_statement")
        if ands:
            out, bad = [], []
            for st in ands[0].get("statement", []):
                got, b = byte_matches(st)
                out += got
                bad += b
            return out, bad
        return [], [f"a scope-down of {sorted(stmt)}: only byte matches, alone or in an and_statement, can be checked"]

    if len(acls) != 1:
        problems.append(f"expected one aws_wafv2_web_acl in {edge_dir}, found {len(acls)}")
    for acl_name, acl in acls.items():
        where = f"{edge_dir} aws_wafv2_web_acl.{acl_name}"
        try:
            acl = expand_dynamic(acl, local)
        except HclError as e:
            problems.append(f"{where}: {e}")
            continue
        if first(acl.get("scope")) != "CLOUDFRONT":
            problems.append(f"{where}: scope {first(acl.get('scope'))!r}, want CLOUDFRONT")
        if first(acl.get("provider")) != "${aws.us_east_1}":
            problems.append(f"{where}: a CLOUDFRONT web ACL must be created in us-east-1 (provider = aws.us_east_1)")
        if not (acl.get("default_action") or [{}])[0].get("allow"):
            problems.append(f"{where}: the default action must be allow (the rules block)")
        bodies = {first(b.get("key")): b for b in acl.get("custom_response_body", [])}
        static_rules = acl.get("rule", [])

        for group in WAF_MANAGED_GROUPS:
            found = [
                r for r in static_rules
                for st in r.get("statement", [])
                for g in st.get("managed_rule_group_statement", [])
                if first(g.get("name")) == group and first(g.get("vendor_name")) == "AWS"
            ]
            if not found:
                problems.append(f"{where}: no (always-on) rule runs the AWS managed group {group}")
            for r in found:
                override = (r.get("override_action") or [{}])[0]
                if "none" not in override:
                    problems.append(f"{where}: rule {first(r.get('name'))} runs {group} with override_action {sorted(override)}: it must block (none)")
                g = r["statement"][0]["managed_rule_group_statement"][0]
                if g.get("rule_action_override"):
                    problems.append(f"{where}: rule {first(r.get('name'))} overrides actions of {group}")

        rate_rules = [(r, st["rate_based_statement"][0]) for r in static_rules for st in r.get("statement", []) if st.get("rate_based_statement")]
        covered: dict[str, list[str]] = {}
        for r, rate in rate_rules:
            name = first(r.get("name"))
            rw = f"{where}: rate rule {name}"
            if first(rate.get("aggregate_key_type")) != "IP":
                problems.append(f"{rw}: aggregate_key_type {first(rate.get('aggregate_key_type'))!r}, want IP (per client)")
            if value(rate.get("evaluation_window_sec")) != WAF_WINDOW_SECONDS:
                problems.append(f"{rw}: evaluation_window_sec {value(rate.get('evaluation_window_sec'))!r}, want {WAF_WINDOW_SECONDS} (limits are per minute)")
            limit_ref = re.fullmatch(r"\$\{var\.(\w+)\}", str(first(rate.get("limit"))))
            limit = value(rate.get("limit"))
            if not limit_ref:
                problems.append(f"{rw}: limit {first(rate.get('limit'))!r} is not a variable")
            elif not isinstance(limit, int) or isinstance(limit, bool) or limit < WAF_MIN_LIMIT:
                problems.append(f"{rw}: limit var.{limit_ref.group(1)} defaults to {limit!r}, not a whole number ≥ {WAF_MIN_LIMIT}")
            # What it answers: the API's error shape with a 429 the waiting page backs off on.
            actions = (r.get("action") or [{}])[0]
            blocks_ = kids(actions, "block")
            for dyn in actions.get("dynamic", []):
                if "block" in dyn:
                    sel = re.search(r'var\.(\w+) == \\?"block\\?"', str(first(dyn["block"].get("for_each"))))
                    if not sel or var_default(edge, sel.group(1)) != "block":
                        problems.append(f"{rw}: its block action is not on by default ({first(dyn['block'].get('for_each'))})")
            if not blocks_:
                problems.append(f"{rw}: no block action")
            for b in blocks_:
                resp = (b.get("custom_response") or [{}])[0]
                if first(resp.get("response_code")) != 429:
                    problems.append(f"{rw}: blocks with {first(resp.get('response_code'))!r}, want 429 (the waiting page backs off on it)")
                body = bodies.get(first(resp.get("custom_response_body_key")))
                if body is None:
                    problems.append(f"{rw}: custom_response_body_key {first(resp.get('custom_response_body_key'))!r} names no custom_response_body")
                else:
                    content = str(first(body.get("content")))
                    if first(body.get("content_type")) != "APPLICATION_JSON" or not re.search(r"""['"]error['"]\s*[:=]\s*['"]rate_limited['"]""", content):
                        problems.append(f"{rw}: the 429 body is not JSON with error rate_limited: {content!r}")
            # What it counts.
            scope = (rate.get("scope_down_statement") or [None])[0]
            if scope is None:
                problems.append(f"{rw}: no scope-down statement")
                continue
            matches, bad = byte_matches(scope)
            problems += [f"{rw}: {b}" for b in bad]
            paths = [
                first(m.get("search_string")) for m in matches
                if (m.get("field_to_match") or [{}])[0].get("uri_path") is not None and first(m.get("positional_constraint")) == "STARTS_WITH"
            ]
            methods = [
                first(m.get("search_string")) for m in matches
                if (m.get("field_to_match") or [{}])[0].get("method") is not None and first(m.get("positional_constraint")) == "EXACTLY"
            ]
            for path in paths:
                covered.setdefault(path, []).extend(methods or ["*"])
        for prefix, method in WAF_RATE_RULES.items():
            got = covered.get(prefix)
            if got is None:
                problems.append(f"{where}: no per-IP rate rule scoped to paths starting with {prefix}")
            elif method is not None and method not in got:
                problems.append(f"{where}: the rate rule on {prefix} counts {got}, not {method}")
            elif method is None and "*" not in got:
                problems.append(f"{where}: the rate rule on {prefix} counts only {got}, want every method")

    # The prefixes are the routers' paths as CloudFront serves them.
    t1 = {f"{TIER1_EDGE_PREFIX}{r.split(' ', 1)[1]}": r.split(" ", 1)[0] for r in rust_routes(root, "functions/tier1/src/http.rs").get("public", set())}
    t2 = {r.split(" ", 1)[1]: r.split(" ", 1)[0] for r in rust_routes(root, "tier2/tier2/src/http.rs").get("public", set())}
    for prefix, method in WAF_RATE_RULES.items():
        served = [(p, m) for p, m in {**t1, **t2}.items() if p.startswith(prefix)]
        if not served:
            problems.append(f"WAF_RATE_RULES: no public route is served under {prefix}")
        elif method is not None and not any(m == method for _p, m in served):
            problems.append(f"WAF_RATE_RULES: no {method} route under {prefix} ({served})")

    # The distribution uses it (or the operator's own web ACL).
    for name, dist in blocks(edge, "resource", "aws_cloudfront_distribution").items():
        acl_ref = str(first(dist.get("web_acl_id")))
        if not any(f"aws_wafv2_web_acl.{a}" in acl_ref for a in acls):
            problems.append(f"{edge_dir} aws_cloudfront_distribution.{name}: web_acl_id {acl_ref!r} does not use the module's web ACL")
        if "var.web_acl_id" not in acl_ref:
            problems.append(f"{edge_dir} aws_cloudfront_distribution.{name}: web_acl_id ignores var.web_acl_id (the operator's own web ACL)")

    # examples/complete turns it on.
    example = "terraform/examples/complete"
    calls = [(c, n, call) for c, n, call in calls_of(modules, edge_dir) if c == example]
    if not calls:
        problems.append(f"{example} does not call {edge_dir}")
    for caller, call_name, call in calls:
        where = f"{caller} module.{call_name}"
        for arg, want in (("waf_enabled", True), ("web_acl_id", None)):
            if arg not in call:
                v = var_default(edge, arg)
            else:
                v = first(call[arg])
                ref = re.fullmatch(r"\$\{var\.(\w+)\}", str(v))
                if ref:
                    v = var_default(modules[caller], ref.group(1))
            if v != want:
                problems.append(f"{where}: {arg} is {v!r} by default, want {want!r} (the module's web ACL on by default)")
    checks.check(f"per-client limits at the edge: web ACL with {', '.join(WAF_MANAGED_GROUPS)} and per-IP rate rules on {', '.join(WAF_RATE_RULES)}, attached, on in examples/complete", problems)


def tier2_fastest_poll(root: str) -> tuple[float, list[str], str]:
    """The shortest time between two polls of one tier-2 client, from the Rust hints: the least
    `next_poll_seconds` answer (queued), the lower clamp of the active refresh hint, less the
    clients' jitter stated in the hints' doc. Answers (seconds, problems, how it was derived)."""
    problems = []
    with open(os.path.join(root, TIER2_QUEUED_HINTS), encoding="utf-8") as fh:
        hints = strip_tests(fh.read())
    with open(os.path.join(root, TIER2_ANSWERS), encoding="utf-8") as fh:
        service = strip_tests(fh.read())
    body = re.search(r"pub fn next_poll_seconds\(position: i64\) -> u64 \{(.*?)\n\}", hints, re.S)
    queued = [int(n) for n in re.findall(r"=>\s*(\d+)", body.group(1))] if body else []
    if not queued:
        problems.append(f"{TIER2_QUEUED_HINTS}: no `next_poll_seconds` match arms read")
    if "next_poll_seconds(" not in service:
        problems.append(f"{TIER2_ANSWERS}: queued answers no longer use next_poll_seconds: read the hint they use")
    active = re.search(r"let refresh = \(.*?\)\.clamp\((\d+),\s*(\d+)\);", service)
    if not active:
        problems.append(f"{TIER2_ANSWERS}: the active refresh hint (`let refresh = (…).clamp(lo, hi);`) was not found")
    jitter = re.search(r"jitter \(±(\d+) %\)", hints)
    if not jitter:
        problems.append(f"{TIER2_QUEUED_HINTS}: the clients' jitter (`jitter (±N %)`) is not stated")
    if problems:
        return 1.0, problems, "unknown"
    fastest = min(min(queued), int(active.group(1)))
    shortest = fastest * (1 - int(jitter.group(1)) / 100)
    how = f"hints {min(queued)} s queued, {active.group(1)} s active, ±{jitter.group(1)} % jitter: {shortest:g} s"
    if shortest <= 0:
        problems.append(f"tier 2 may poll without pause ({how})")
    return shortest, problems, how


def check_verifier_behaviours(root: str, checks: Checks, modules: dict) -> None:
    """The edge verifier deletes the viewer's x-vwr-* headers (docs/invariants.md#25), so it
    runs on the default behaviour and every ordered one except those whose origins read viewer
    x-vwr-* headers (the waiting page, /vwr-api/*, /api/queue/*), which must never run it, in both
    verifier variants; and `vwr dev` and the local proxy skip exactly those prefixes."""
    problems = []
    edge = modules.get("terraform/modules/edge", {})
    variants = ("aws_cloudfront_function.verifier", "aws_lambda_function.lambda_edge")
    free: set[str] = set()
    for name, dist in blocks(edge, "resource", "aws_cloudfront_distribution").items():
        behaviours = [("default", b) for b in dist.get("default_cache_behavior", [])]
        behaviours += [(str(first(b.get("path_pattern"))), b) for b in dist.get("ordered_cache_behavior", [])]
        for dyn in dist.get("dynamic", []):
            body = dyn.get("ordered_cache_behavior")
            if body:
                for pattern in re.findall(r"'(/[^']*)'|\"(/[^\"]*)\"", str(first(body.get("for_each")))):
                    behaviours += [(pattern[0] or pattern[1], c) for c in body.get("content", [])]
        for pattern, b in behaviours:
            text = str(b)
            runs = [v for v in variants if v in text]
            if pattern != "default" and pattern.endswith("*") and any(pattern.startswith(p) for p in ("/vwr/", "/vwr-api/", "/api/queue/")):
                free.add(pattern[:-1])
                if runs:
                    problems.append(f"{name} behaviour {pattern} runs the verifier ({runs}): it would delete the x-vwr-* headers its origin reads")
            elif len(runs) != len(variants):
                problems.append(f"{name} behaviour {pattern} runs {runs or 'no verifier'}: want both variants {list(variants)} (x-vwr-* viewer headers must be deleted there)")
    minimal = sorted(p for p in free if not any(p != q and p.startswith(q) for q in free))
    for path, pat in (("edge/local/proxy.mjs", r"NO_VERIFIER_PREFIXES = \[([^\]]*)\]"), ("cli/src/dev/edge.rs", r"NO_VERIFIER_PREFIXES: \[&str; \d+\] = \[([^\]]*)\]")):
        with open(os.path.join(root, path), encoding="utf-8") as fh:
            m = re.search(pat, fh.read())
        got = sorted(re.findall(r"['\"]([^'\"]+)['\"]", m.group(1))) if m else None
        if got != minimal:
            problems.append(f"{path}: NO_VERIFIER_PREFIXES is {got}, the behaviours without the verifier are {minimal}")
    checks.check(f"the edge verifier (x-vwr-* viewer headers deleted) on every behaviour but {', '.join(p + '*' for p in minimal)}, and vwr dev and the local proxy agree", problems)


def check_waf_queue_nat(root: str, checks: Checks, modules: dict) -> None:
    """WAF_QUEUE_NAT_VISITORS visitors behind one address, each polling tier 2 at its fastest
    (the Rust poll hints, less the clients' jitter), never trip a per-IP rate rule that counts
    /api/queue/* requests — with the edge module's default limits and the values
    examples/complete passes by default."""
    problems = []
    edge_dir = "terraform/modules/edge"
    edge = modules.get(edge_dir, {})
    shortest, problems, how = tier2_fastest_poll(root)
    per_visitor = WAF_WINDOW_SECONDS / shortest * TIER2_REQUESTS_PER_POLL
    need = WAF_QUEUE_NAT_VISITORS * per_visitor
    seen = []
    for acl_name, acl in blocks(edge, "resource", "aws_wafv2_web_acl").items():
        try:
            acl = expand_dynamic(acl, locals_of(edge))
        except HclError as e:
            problems.append(f"{edge_dir} aws_wafv2_web_acl.{acl_name}: {e}")
            continue
        for r in acl.get("rule", []):
            for st in r.get("statement", []):
                rate = (st.get("rate_based_statement") or [None])[0]
                if rate is None:
                    continue
                scope = (rate.get("scope_down_statement") or [None])[0]
                stmts = [scope] if scope else []
                paths = []
                while stmts:
                    x = stmts.pop()
                    for m in x.get("byte_match_statement", []):
                        if (m.get("field_to_match") or [{}])[0].get("uri_path") is not None:
                            paths.append((str(first(m.get("search_string"))), str(first(m.get("positional_constraint")))))
                    for a in x.get("and_statement", []) + x.get("or_statement", []):
                        stmts.extend(a.get("statement", []))
                counts_queue = scope is None or any(
                    "/api/queue/".startswith(p) if c == "STARTS_WITH" else p in "/api/queue/" for p, c in paths
                )
                if not counts_queue:
                    continue
                name = first(r.get("name"))
                ref = re.fullmatch(r"\$\{var\.(\w+)\}", str(first(rate.get("limit"))))
                limits = []
                if ref:
                    limits.append((f"var.{ref.group(1)} default", var_default(edge, ref.group(1))))
                    for caller, call_name, call in calls_of(modules, edge_dir):
                        if ref.group(1) not in call:
                            continue
                        v = first(call[ref.group(1)])
                        cref = re.fullmatch(r"\$\{var\.(\w+)\}", str(v))
                        if cref:
                            v = var_default(modules[caller], cref.group(1))
                        limits.append((f"{caller} module.{call_name}", v))
                else:
                    limits.append(("a literal", first(rate.get("limit"))))
                for where, limit in limits:
                    if not isinstance(limit, (int, float)) or isinstance(limit, bool):
                        problems.append(f"rate rule {name} ({where}): limit {limit!r} is not a number")
                        continue
                    seen.append(f"{name} {limit:g}")
                    visitors = limit / per_visitor
                    if visitors < WAF_QUEUE_NAT_VISITORS:
                        problems.append(
                            f"rate rule {name} ({where}): {limit:g} requests per {WAF_WINDOW_SECONDS} s per address is tripped by "
                            f"{visitors:.0f} tier-2 visitors behind one address polling every {shortest:g} s ({how}); "
                            f"{WAF_QUEUE_NAT_VISITORS} need at least {need:g} (docs/abuse.md)"
                        )
    if not seen and not problems:
        problems.append(f"no rate rule of {edge_dir} counts /api/queue/*: check_waf wants one")
    checks.check(
        f"/api/queue/* per-IP limits hold {WAF_QUEUE_NAT_VISITORS} tier-2 visitors behind one address at the fastest poll "
        f"({how}; {', '.join(sorted(set(seen))) or 'none'} ≥ {need:g})",
        problems,
    )


def check_alarms(root: str, checks: Checks, modules: dict) -> None:
    """The observability module's alarms are the ones its README's table names (every row's
    alarm exists, every alarm has a row; `<…>` stands for any key), each notifies
    var.alarm_actions when it fires and when it recovers, and every `moved` block leaves an
    address no longer declared for an instance the module makes."""
    problems = []
    obs_dir = "terraform/modules/observability"
    obs = modules.get(obs_dir, {})
    local = locals_of(obs)
    alarms = blocks(obs, "resource", "aws_cloudwatch_metric_alarm")
    instances: dict[str, list[str] | None] = {}
    names: dict[str, str] = {}
    for name, body in alarms.items():
        where = f"{obs_dir} aws_cloudwatch_metric_alarm.{name}"
        for arg in ("alarm_actions", "ok_actions"):
            if first(body.get(arg)) != "${var.alarm_actions}":
                problems.append(f"{where}: {arg} is {first(body.get(arg))!r}, want var.alarm_actions")
        template = str(first(body.get("alarm_name"))).replace("${var.name}", "<name>")
        keys = hcl_keys(first(body["for_each"]), local) if "for_each" in body else [None]
        instances[name] = keys if "for_each" in body else None
        for key in keys if keys is not None else ["*"]:
            try:
                alarm = hcl_subst(template, {"each": {"key": key, "value": None}}) if key is not None else template
            except HclError as e:
                problems.append(f"{where}: {e}")
                continue
            if "${" in alarm:
                problems.append(f"{where}: alarm_name {template!r} does not read as a name")
            names[alarm] = where

    # The README's table: `<name>-…` names in its first column.
    with open(os.path.join(root, obs_dir, "README.md"), encoding="utf-8") as fh:
        rows = [line.split("|")[1] for line in fh if line.startswith("| `")]
    documented = [n for row in rows for n in re.findall(r"`(<name>-[^`]+)`", row)]

    def pattern(n: str) -> str:
        return "<name>" + re.sub(r"<[^>]+>", "*", n[len("<name>"):])

    for alarm, where in sorted(names.items()):
        if not any(fnmatch.fnmatchcase(alarm, pattern(d)) or pattern(alarm) == pattern(d) for d in documented):
            problems.append(f"{where}: alarm {alarm} has no row in {obs_dir}/README.md")
    for d in documented:
        if not any(fnmatch.fnmatchcase(a, pattern(d)) or pattern(a) == pattern(d) for a in names):
            problems.append(f"{obs_dir}/README.md names {d}, which the module does not make")

    # moved blocks: from an address gone, to one the module makes.
    address = re.compile(r'^\$\{(\w+)\.(\w+)(?:\[(?:"([^"]*)"|(\d+))\])?\}$')
    for block in obs.get("moved", []):
        frm, to = (address.match(str(first(block.get(k)))) for k in ("from", "to"))
        if not frm or not to:
            problems.append(f"{obs_dir} moved {first(block.get('from'))} → {first(block.get('to'))}: not resource addresses")
            continue
        if blocks(obs, "resource", frm.group(1)).get(frm.group(2)) is not None:
            problems.append(f"{obs_dir} moved from {frm.group(1)}.{frm.group(2)}, which is still declared")
        target = blocks(obs, "resource", to.group(1)).get(to.group(2))
        keys = instances.get(to.group(2)) if to.group(1) == "aws_cloudwatch_metric_alarm" else None
        if target is None:
            problems.append(f"{obs_dir} moved to {to.group(1)}.{to.group(2)}, which is not declared")
        elif to.group(3) is not None and ("for_each" not in target or (keys is not None and to.group(3) not in keys)):
            problems.append(f"{obs_dir} moved to {to.group(1)}.{to.group(2)}[{to.group(3)!r}], a key its for_each does not make ({keys})")
    checks.check(f"alarms of {obs_dir} = its README's table ({len(names)} names), each notifies var.alarm_actions, moved blocks land on made instances", problems)


def check_env_users(checks: Checks, scans: dict[str, dict], deployments: list[dict], label: str, exact: bool) -> None:
    """ENV_USERS: set on exactly (Terraform) / at most (LocalStack) the binaries that use it."""
    problems = []
    for name, (users, why) in ENV_USERS.items():
        readers = {b for b, crates in BINARIES.items() if any(name in scans[c]["reads"] for c in crates)}
        if not readers:
            problems.append(f"ENV_USERS names {name}, which no code reads: stale entry")
            continue
        if users - readers:
            problems.append(f"ENV_USERS gives {name} to {sorted(users - readers)}, whose code does not read it")
        for d in deployments:
            if not isinstance(d["env"], dict):
                continue  # reported by the environment check
            b = d["binary"]
            if b in users and exact and name not in d["env"]:
                problems.append(f"{d['where']}: {b} does not get {name} ({why})")
            if b not in users and name in d["env"]:
                problems.append(f"{d['where']}: {b} gets {name}, which only {', '.join(sorted(users))} use(s) ({why})")
    scope = "exactly those" if exact else "no other binary"
    checks.check(f"{label}: variables some binaries use ({', '.join(sorted(ENV_USERS))}) go to {scope}", problems)


def check_admin_allow_list(checks: Checks, modules: dict, deployments: list[dict]) -> None:
    """VWR_ADMIN_PRINCIPALS reaches every Lambda behind an admin route, from one variable."""
    problems = []
    serving: set[str] = set()
    for mod_dir, mod in modules.items():
        targets = set()
        for route in blocks(mod, "resource", "aws_apigatewayv2_route").values():
            if "admin_routes" in str(first(route.get("for_each"))):
                m = re.search(r"aws_apigatewayv2_integration\.(\w+)\.id", str(first(route.get("target"))))
                if m:
                    targets.add(m.group(1))
        found, p = integration_binaries(mod_dir, mod, deployments, lambda n, _i: n in targets)
        serving |= found
        problems += p
    for b in sorted(ADMIN_SERVING - serving):
        problems.append(f"{b} is in ADMIN_SERVING but serves no admin route in Terraform (derivation broken?)")
    for d in deployments:
        if d["binary"] not in serving or not isinstance(d["env"], dict):
            continue
        value = str(d["env"].get("VWR_ADMIN_PRINCIPALS"))
        ref = re.fullmatch(r"\$\{local\.(\w+)\}", value)
        if ref:
            value = str(locals_of(modules[d["module_dir"]]).get(ref.group(1)))
        if "var.admin_principal_patterns" not in value:
            problems.append(f"{d['where']}: {d['binary']} serves admin routes; VWR_ADMIN_PRINCIPALS must come from var.admin_principal_patterns")
    # Callers give the tier modules one allow-list.
    for mod_dir, mod in modules.items():
        given = {
            name: str(first(call.get("admin_principal_patterns")))
            for name, call in module_calls(mod).items()
            if module_dir(mod_dir, call) in ("terraform/modules/tier1", "terraform/modules/tier2")
        }
        if len(set(given.values())) > 1:
            problems.append(f"{mod_dir}: the tier modules get different admin_principal_patterns: {given}")
    checks.check(f"admin allow-list (VWR_ADMIN_PRINCIPALS) on every admin-serving Lambda: {', '.join(sorted(serving))}", problems)


SKIP = re.compile(r"#\s*checkov:skip=([A-Z0-9_]+)(?::(.*))?")


def check_checkov_skips(root: str, checks: Checks) -> None:
    """Every checkov suppression is inline, names one check and says why (≥ 20 characters)."""
    problems = []
    count = 0
    for path in sorted(glob.glob(os.path.join(root, "terraform", "**", "*.tf"), recursive=True)):
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if "checkov" not in line:
                    continue
                m = SKIP.search(line)
                if not m:
                    problems.append(f"{rel(root, path)}:{n}: unrecognised checkov comment")
                    continue
                count += 1
                if len((m.group(2) or "").strip()) < 20:
                    problems.append(f"{rel(root, path)}:{n}: {m.group(1)} skipped without a written reason")
    for cfg in (".checkov.yml", ".checkov.yaml", "terraform/.checkov.yml", "terraform/.checkov.yaml"):
        if os.path.exists(os.path.join(root, cfg)):
            problems.append(f"{cfg}: suppressions belong inline, next to the resource, with a reason")
    checks.check(f"every checkov skip is inline with a written reason ({count} skips)", problems)


def package_layout(root: str) -> list[str]:
    out = subprocess.run(
        ["bash", os.path.join(root, "scripts/package.sh"), "--print-layout"], check=True, capture_output=True, text=True
    )
    return [line.strip() for line in out.stdout.splitlines() if line.strip()]


def localstack_functions(root: str) -> dict | None:
    path = os.path.join(root, "localstack", "bootstrap.py")
    if not os.path.exists(path):
        return None
    sys.path.insert(0, os.path.dirname(path))
    import bootstrap  # noqa: PLC0415 - the kit's own module

    return bootstrap.FUNCTIONS


def check_localstack_routes(root: str, checks: Checks) -> None:
    """The LocalStack kit's REST API serves every tier-1 public route (localstack/bootstrap.py
    ROUTES, without the /vwr-api prefix, as behind CloudFront)."""
    import bootstrap  # noqa: PLC0415 - loaded by localstack_functions

    kit = {f"{method} {normalize_path(path)}" for path, method, binary, _auth in bootstrap.ROUTES if binary == "vwr-tier1-api"}
    rust = rust_routes(root, "functions/tier1/src/http.rs").get("public", set())
    problems = [f"the code serves {r}, localstack/bootstrap.py ROUTES do not" for r in sorted(rust - kit)]
    problems += [f"localstack/bootstrap.py routes {r}, the code has no such route" for r in sorted(kit - rust)]
    checks.check("LocalStack REST API: the tier-1 public routes", problems)


# --- Docs -----------------------------------------------------------------------------------------

ANY_ROUTE = re.compile(r'\.route\(\s*"([^"]+)"\s*,\s*(?:axum::routing::)?(get|post|put|delete|patch)\(')
METHOD_PATH = re.compile(r"^(?:(GET|POST|PUT|DELETE|PATCH) )?(/\S*)$")
GROUP = re.compile(r"\{([^{}]*,[^{}]*)\}")
FILE_TOKEN = re.compile(r"^[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+/?$")


def router_routes(root: str) -> dict[str, dict[str, set[str]]]:
    """Normalized path -> {method: {file}} over ROUTER_FILES (test modules cut)."""
    out: dict[str, dict[str, set[str]]] = {}
    for f in ROUTER_FILES:
        with open(os.path.join(root, f), encoding="utf-8") as fh:
            routes, _ = parse_routes(fh.read(), f)
        for r in routes:
            out.setdefault(normalize_path(r["path"]), {}).setdefault(r["method"], set()).add(f)
    return out


def expand_groups(path: str) -> list[str]:
    """`/a/{b,c}/{id}` -> [`/a/b/{id}`, `/a/c/{id}`]: a brace group with a comma is alternatives,
    one without is a path parameter."""
    m = GROUP.search(path)
    if not m:
        return [path]
    out = []
    for alt in m.group(1).split(","):
        out += expand_groups(path[: m.start()] + alt.strip() + path[m.end():])
    return out


def table_rows(lines: list[str]) -> list[list[str]]:
    """Cells of a Markdown table's body rows (header and separator skipped)."""
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines if line.lstrip().startswith("|")]
    return [r for r in rows[1:] if not all(set(c) <= set("-: ") for c in r)]


def section(text: str, heading: str) -> list[str] | None:
    """The lines under `heading` up to the next heading."""
    lines = text.splitlines()
    if heading not in lines:
        return None
    start = lines.index(heading) + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("#")), len(lines))
    return lines[start:end]


def check_readme_routes(root: str, checks: Checks) -> None:
    """Every route of the routers is in the README's routes → files map, every path there is
    served (or, `/…/**`, a prefix the protected-API authorizer knows), a method written beside
    a path is the router's, and every file the map names exists."""
    with open(os.path.join(root, README), encoding="utf-8") as fh:
        lines = section(fh.read(), ROUTES_MAP_HEADING)
    name = f"README routes → files map = the routers' routes ({', '.join(ROUTER_FILES)})"
    if lines is None:
        checks.check(name, [f"{README} has no {ROUTES_MAP_HEADING!r} section"])
        return
    served = router_routes(root)
    with open(os.path.join(root, PROTECT_RS), encoding="utf-8") as fh:
        found = re.search(r"PROTECTED_PREFIXES: \[&str; \d+\] = \[([^\]]*)\]", fh.read())
    protected = {p.strip().strip('"') for p in found.group(1).split(",") if p.strip()} if found else set()
    problems = [] if found else [f"{PROTECT_RS}: PROTECTED_PREFIXES not found"]
    named: set[str] = set()
    named_prefixes: set[str] = set()
    for row in table_rows(lines):
        for token in re.findall(r"`([^`]+)`", row[0]):
            m = METHOD_PATH.match(token)
            if not m:
                continue
            for path in expand_groups(m.group(2)):
                if path.endswith("/**"):
                    prefix = path[:-2]
                    named_prefixes.add(prefix)
                    if prefix not in protected:
                        problems.append(f"the map names {path}; the authorizer protects {sorted(protected)}")
                    continue
                key = normalize_path(path)
                named.add(key)
                if key not in served:
                    problems.append(f"the map names {path}, which no router serves")
                elif m.group(1) and m.group(1) not in served[key]:
                    problems.append(f"the map names {m.group(1)} {path}; the router serves it as {sorted(served[key])}")
        for cell in row[1:]:
            for token in re.findall(r"`([^`]+)`", cell):
                if FILE_TOKEN.match(token) and not os.path.exists(os.path.join(root, token)):
                    problems.append(f"the map names {token}, which does not exist")
    for key in sorted(set(served) - named):
        for method, files in sorted(served[key].items()):
            problems.append(f"{', '.join(sorted(files))} serves {method} {key}; the README's routes map does not name it")
    for prefix in sorted(protected - named_prefixes):
        problems.append(f"the authorizer protects {prefix}**; the README's routes map does not name it")
    checks.check(name, problems)


def check_readme_size(root: str, checks: Checks) -> None:
    """The README is a front door: what vwr is, the two commands, a short walk, the layout and
    the routes map, an index of docs/ — everything else is one link away."""
    with open(os.path.join(root, README), "rb") as fh:
        data = fh.read()
    size, lines = len(data), data.count(b"\n")
    problems = []
    if size > README_MAX_BYTES:
        problems.append(f"{README} is {size} bytes, over {README_MAX_BYTES}: move a section to docs/ and link it")
    if lines > README_MAX_LINES:
        problems.append(f"{README} is {lines} lines, over {README_MAX_LINES}: move a section to docs/ and link it")
    checks.check(f"{README} is a front door: ≤ {README_MAX_BYTES} bytes and ≤ {README_MAX_LINES} lines ({size} bytes, {lines} lines)", problems)


def check_settings_doc(root: str, checks: Checks) -> None:
    """docs/settings.md has exactly one table row (by its first cell) for every VWR_* variable the
    Rust code or the rehearsal's Python reads, and names no variable that nothing reads."""
    read: dict[str, str] = {}
    for d in SETTINGS_CODE_DIRS:
        for path in sorted(glob.glob(os.path.join(root, d, "**", "*.rs"), recursive=True)):
            with open(path, encoding="utf-8") as fh:
                for v in ENV_LITERAL.findall(fh.read()):
                    read.setdefault(v, rel(root, path))
    for pattern in SETTINGS_PY_GLOBS:
        for path in sorted(glob.glob(os.path.join(root, pattern))):
            with open(path, encoding="utf-8") as fh:
                for v in re.findall(r"[\"'](VWR_[A-Z0-9_]*[A-Z0-9])[\"']", fh.read()):
                    read.setdefault(v, rel(root, path))
    mentioned = set(read)
    for pattern in SETTINGS_SCRIPT_GLOBS:
        for path in glob.glob(os.path.join(root, pattern)):
            if os.path.isfile(path):
                with open(path, encoding="utf-8", errors="replace") as fh:
                    mentioned |= set(re.findall(r"\bVWR_[A-Z0-9_]*[A-Z0-9]\b", fh.read()))
    with open(os.path.join(root, SETTINGS_DOC), encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    rows: dict[str, int] = {}
    for row in table_rows(lines):
        for v in set(re.findall(r"\bVWR_[A-Z0-9_]*[A-Z0-9]\b", row[0])):
            rows[v] = rows.get(v, 0) + 1
    problems = [f"{v} (read in {read[v]}) has no row in {SETTINGS_DOC}" for v in sorted(set(read) - set(rows))]
    problems += [f"{v} has {n} rows in {SETTINGS_DOC}: keep one" for v, n in sorted(rows.items()) if n > 1]
    problems += [f"{SETTINGS_DOC} has a row for {v}, which no code or script reads" for v in sorted(set(rows) - mentioned)]
    checks.check(f"{SETTINGS_DOC}: one row per VWR_* variable the code reads ({len(read)} variables)", problems)


RUST_FN = re.compile(r"^(?:pub(?:\([^)]*\))?\s+)?fn\s+(\w+)\s*\([^)]*\)\s*->\s*([^{]+?)\s*\{\n(.*?)^\}", re.M | re.S)
FORMAT_LITERAL = r'format!\(\s*"([^"]*)"\s*\)'
KEY_PART = FORMAT_LITERAL + r'|"([^"]*)"|(\w+)\([^()]*\)'
KEY_PART_ANY = r'format!\(\s*"[^"]*"\s*\)|"[^"]*"|\w+\([^()]*\)'
KEY_CALL = re.compile(r"\bkey\(\s*(" + KEY_PART_ANY + r")\s*,\s*(" + KEY_PART_ANY + r")\s*,?\s*\)")
FORMAT_TOKEN = re.compile(r"\{\{|\}\}|\{[^{}]*\}")
KEY_LITERAL = re.compile(r'"[^"\n]*(?:EVT#|vwr:\{|vwr:[a-z])')


def key_pattern(fmt: str) -> str:
    """A Rust format string as docs/data.md writes the key: `{name}` for a value, and a hash tag's
    literal braces around a value written once (`vwr:{{{e}}}:w` → `vwr:{e}:w`)."""
    out = FORMAT_TOKEN.sub(lambda m: {"{{": "\0", "}}": "\1"}.get(m.group(0), m.group(0)), fmt)
    out = out.replace("\0{", "{").replace("}\1", "}")
    return out.replace("\0", "{").replace("\1", "}")


def sample_key(pattern: str) -> str:
    """A key of `pattern`: event `e1`, any other value `7`."""
    return re.sub(r"\{[^{}]*\}", lambda m: "e1" if m.group(0) == "{e}" else "7", pattern)


def dynamo_key_builders(root: str) -> tuple[dict[str, tuple[str, str, str]], list[str]]:
    """Key builder -> (file, pk pattern, sk pattern) over DYNAMO_KEY_FILES (test modules cut), and
    what breaks the convention: two builders of one key, or an `EVT#` format no builder uses."""
    builders: dict[str, tuple[str, str, str]] = {}
    problems = []
    for path in DYNAMO_KEY_FILES:
        code = read_code(os.path.join(root, path))
        fns = {m.group(1): (m.group(2).strip(), m.group(3)) for m in RUST_FN.finditer(code)}
        strings = {}
        for name, (ret, body) in fns.items():
            m = re.fullmatch(r"\s*" + FORMAT_LITERAL + r"\s*", body)
            if ret == "String" and m:
                strings[name] = m.group(1)
        used = set()

        def part(expr: str) -> str | None:
            m = re.fullmatch(KEY_PART, expr)
            if not m:
                return None
            raw = m.group(1) if m.group(1) is not None else m.group(2) if m.group(2) is not None else strings.get(m.group(3))
            if raw is not None:
                used.add(raw)
            return raw

        for name, (ret, body) in fns.items():
            call = KEY_CALL.search(body)
            if not call:
                continue
            pk, sk = part(call.group(1)), part(call.group(2))
            if pk is None or sk is None:
                problems.append(f"{path}: {name} builds its key from {call.group(0)!r}, which this test cannot read")
                continue
            builders[name] = (path, key_pattern(pk), key_pattern(sk))
        for fmt in re.findall(FORMAT_LITERAL, code):
            if fmt.startswith("EVT#") and fmt not in used:
                problems.append(f'{path}: format!("{fmt}") is in no key builder\'s key(pk, sk)')
    seen: dict[tuple[str, str], str] = {}
    for name, (path, pk, sk) in sorted(builders.items()):
        if (pk, sk) in seen:
            problems.append(f"{pk} / {sk} is built by both {seen[(pk, sk)]} and {name}: keep one builder")
        seen[(pk, sk)] = name
    return builders, problems


def redis_key_builders(root: str) -> tuple[dict[str, int], list[str]]:
    """Redis key pattern -> its position in the scripts' KEYS (0: the index and the other keys no
    script binds, each built by its own `pub fn name(e: &EventId[, day: u64]) -> String`)."""
    code = read_code(os.path.join(root, REDIS_KEY_FILE))
    index = re.search(r'pub const EVENTS_KEY: &str = "([^"]+)"', code)
    suffixes = re.search(r"EVENT_KEY_SUFFIXES: \[&str; \d+\]\s*=\s*\[([^\]]*)\]", code)
    fmt = re.search(r"fn event_keys\b[^{]*\{[^}]*?" + FORMAT_LITERAL, code)
    problems = [f"{REDIS_KEY_FILE}: no {what}" for what, m in
                (("EVENTS_KEY", index), ("EVENT_KEY_SUFFIXES", suffixes), ('format!("…") in event_keys', fmt)) if not m]
    if problems:
        return {}, problems
    pattern = key_pattern(fmt.group(1))
    values = [v for v in re.findall(r"\{[^{}]*\}", pattern) if v != "{e}"]
    if len(values) != 1:
        return {}, [f"{REDIS_KEY_FILE}: event_keys' pattern {pattern} should have one value besides {{e}}, the suffix"]
    keys = {pattern.replace(values[0], sfx): i for i, sfx in enumerate(re.findall(r'"([^"]*)"', suffixes.group(1)), 1)}
    keys[index.group(1)] = 0
    # Keys of an event that no script binds (the report's minutes): their own builder each.
    for name, fmt_one in re.findall(r"pub fn (\w+)\(e: &EventId(?:, \w+: u64)*\) -> String \{\s*" + FORMAT_LITERAL, code):
        keys[key_pattern(fmt_one)] = 0
    return keys, []


def doc_tables(lines: list[str]) -> list[tuple[list[str], list[list[str]]]]:
    """Every Markdown table of `lines`: its header cells (lowercase, backticks dropped) and rows."""
    out, block = [], []
    for line in lines + [""]:
        if line.lstrip().startswith("|"):
            block.append(line)
            continue
        if block:
            header = [c.strip().strip("`").lower() for c in block[0].strip().strip("|").split("|")]
            out.append((header, table_rows(block)))
            block = []
    return out


def first_code(cell: str) -> str | None:
    m = re.search(r"`([^`]+)`", cell)
    return m.group(1) if m else None


def check_data_doc(root: str, checks: Checks) -> None:
    """docs/data.md names every stored key: each key a builder makes has one row (DynamoDB: its
    pk / sk and the builder; Redis: the key, and for an event's key its `KEYS[i]`, name and type
    in the Lua header), each row's key is one a builder makes, and no other Rust source builds a
    key (no `"EVT#…"` or `"vwr:…"` literal outside the builders; tests aside)."""
    dynamo, problems = dynamo_key_builders(root)
    redis_keys, more = redis_key_builders(root)
    problems += more
    with open(os.path.join(root, REDIS_LUA_HEADER), encoding="utf-8") as fh:
        lua = {int(i): (name, kind) for i, name, kind in
               re.findall(r"^--\s+KEYS\[(\d+)\]\s+(\w+)\s+(ZSET|HASH|LIST|SET)\b", fh.read(), re.M)}
    with open(os.path.join(root, DATA_DOC), encoding="utf-8") as fh:
        text = fh.read()
    built = {(pk, sk): name for name, (_, pk, sk) in dynamo.items()}
    documented: dict[tuple[str, str], int] = {}
    redis_documented: dict[str, int] = {}
    for header, rows in doc_tables(text.splitlines()):
        if {"pk", "sk", "built by"} <= set(header):
            cols = {h: header.index(h) for h in ("pk", "sk", "built by")}
            for row in rows:
                pk, sk, fn = (first_code(row[cols[h]]) if len(row) > cols[h] else None for h in ("pk", "sk", "built by"))
                documented[(pk, sk)] = documented.get((pk, sk), 0) + 1
                if (pk, sk) not in built:
                    problems.append(f"{DATA_DOC} has a row for {pk} / {sk}, which no key builder makes")
                elif fn != built[(pk, sk)]:
                    problems.append(f"{DATA_DOC}: {pk} / {sk} is built by {built[(pk, sk)]}, the row says {fn}")
        elif {"key", "lib.lua", "type"} <= set(header):
            ck, cl, ct = header.index("key"), header.index("lib.lua"), header.index("type")
            for row in rows:
                key = first_code(row[ck])
                redis_documented[key] = redis_documented.get(key, 0) + 1
                if key not in redis_keys:
                    problems.append(f"{DATA_DOC} has a row for {key}, which {REDIS_KEY_FILE} does not build")
                    continue
                i = redis_keys[key]
                if i == 0:
                    continue
                named = re.search(r"KEYS\[(\d+)\]`?\s*(\w+)?", row[cl])
                name, kind = lua.get(i, ("?", "?"))
                if not named or int(named.group(1)) != i or named.group(2) != name:
                    problems.append(f"{DATA_DOC}: {key} is KEYS[{i}] {name} in {REDIS_LUA_HEADER}, the row says {row[cl]!r}")
                if row[ct].strip("` ") != kind:
                    problems.append(f"{DATA_DOC}: {key} is a {kind} in {REDIS_LUA_HEADER}, the row says {row[ct]!r}")
    for (pk, sk), name in sorted(built.items()):
        if documented.get((pk, sk), 0) != 1:
            problems.append(f"{name} builds {pk} / {sk}: {DATA_DOC} has {documented.get((pk, sk), 0)} rows for it, keep one")
    for key, i in sorted(redis_keys.items()):
        if redis_documented.get(key, 0) != 1:
            problems.append(f"{REDIS_KEY_FILE} builds {key}: {DATA_DOC} has {redis_documented.get(key, 0)} rows for it, keep one")
    if len(lua) != sum(1 for i in redis_keys.values() if i):
        problems.append(f"{REDIS_LUA_HEADER} names {len(lua)} KEYS, {REDIS_KEY_FILE} builds {sum(1 for i in redis_keys.values() if i)}")
    for name in ("event_keys", "EVENTS_KEY"):
        if f"`{name}`" not in text:
            problems.append(f"{DATA_DOC} does not name {name}, the Redis key builder")
    allowed = set(DYNAMO_KEY_FILES) | {REDIS_KEY_FILE}
    for d in KEY_CODE_DIRS:
        for path in sorted(glob.glob(os.path.join(root, d, "**", "*.rs"), recursive=True)):
            where = rel(root, path)
            if where in allowed or "/tests/" in f"/{where}":
                continue
            for n, line in enumerate(read_code(path).splitlines(), 1):
                if not line.lstrip().startswith("//") and KEY_LITERAL.search(line):
                    problems.append(f"{where}:{n} builds a stored key outside the key builders: {line.strip()}")
    checks.check(f"{DATA_DOC} names every stored key and its builder ({len(built)} DynamoDB items, {len(redis_keys)} Redis keys), and nothing else builds one", problems)


# --- docs/openapi.yaml ------------------------------------------------------------------------

RAW_STRING = re.compile(r'b?r(#*)"')
CHAR_LITERAL = re.compile(r"b?'(?:\\(?:x[0-9A-Fa-f]{2}|u\{[0-9A-Fa-f]{1,6}\}|.)|[^\\'\n])'")
IDENT = re.compile(r"[A-Za-z_]\w*")
ROUTER_CALL = re.compile(r"\.\s*(route|route_service|nest|nest_service)\s*\(")
METHOD_FILTER = re.compile(r"\bMethodFilter\s*::\s*([A-Z]+)\b")
RUST_FN_NAME = re.compile(r"\bfn\s+([A-Za-z_]\w*)")


def rust_literal_end(text: str, i: int) -> int | None:
    """Where the string or char literal that starts at `i` ends (after it), or None."""
    prev = text[i - 1] if i else " "
    if prev.isalnum() or prev == "_":
        return None
    m = RAW_STRING.match(text, i)
    if m:
        end = text.find('"' + m.group(1), m.end())
        return len(text) if end < 0 else end + 1 + len(m.group(1))
    if text.startswith('"', i) or text.startswith('b"', i):
        j = i + (2 if text[i] == "b" else 1)
        while j < len(text) and text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        return min(j + 1, len(text))
    m = CHAR_LITERAL.match(text, i)
    return m.end() if m else None


def blank_comments(text: str, strings: bool = False) -> str:
    """`text` with its Rust comments turned into spaces (newlines kept, so offsets and line numbers
    stay); string and char literals are left as they are (a `//` in a string is no comment), or,
    with `strings`, their contents are blanked too (quotes kept): code only, same offsets."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
        else:
            end = rust_literal_end(text, i) if text[i] in "\"'br" else None
            if end and strings:
                opening = next(k for k in range(i, end) if text[k] in "\"'")
                for k in range(opening + 1, end - 1):
                    if out[k] != "\n":
                        out[k] = " "
            i = end if end else i + 1
            continue
        for k in range(i, j):
            if out[k] != "\n":
                out[k] = " "
        i = j
    return "".join(out)


def balanced_end(text: str, i: int) -> int:
    """`text[i]` opens a bracket: the index just after its match (literals skipped)."""
    depth = 0
    while i < len(text):
        c = text[i]
        end = rust_literal_end(text, i) if c in "\"'br" else None
        if end:
            i = end
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def call_args(text: str, open_paren: int) -> tuple[list[str], int]:
    """The top-level arguments of the call whose `(` is at `open_paren`, and the index after `)`."""
    close = balanced_end(text, open_paren)
    args, start, i = [], open_paren + 1, open_paren + 1
    while i < close - 1:
        c = text[i]
        # A literal or a nested bracket is skipped whole (balanced_end): only top-level commas split.
        end = rust_literal_end(text, i) if c in "\"'br" else balanced_end(text, i) if c in "([{" else None
        if end:
            i = end
            continue
        if c == ",":
            args.append(text[start:i])
            start = i + 1
        i += 1
    last = text[start : close - 1]
    if last.strip():
        args.append(last)
    return [a.strip() for a in args], close


def chain_calls(expr: str) -> list[tuple[str, str]]:
    """The calls of a method chain at its top level, `(name, argument text)`:
    `axum::routing::get(a).post(b)` -> [("get", "a"), ("post", "b")]."""
    calls, i = [], 0
    while i < len(expr):
        c = expr[i]
        end = rust_literal_end(expr, i) if c in "\"'br" else None
        if end:
            i = end
            continue
        m = IDENT.match(expr, i)
        if m and (i == 0 or not (expr[i - 1].isalnum() or expr[i - 1] == "_")):
            j = m.end()
            while j < len(expr) and expr[j].isspace():
                j += 1
            if expr.startswith("::<", j):  # turbofish: name::<T>(…)
                depth, j = 0, j + 2
                while j < len(expr):
                    depth += {"<": 1, ">": -1}.get(expr[j], 0)
                    j += 1
                    if depth == 0:
                        break
                while j < len(expr) and expr[j].isspace():
                    j += 1
            if j < len(expr) and expr[j] == "(":
                close = balanced_end(expr, j)
                calls.append((m.group(0), expr[j + 1 : close - 1]))
                i = close
                continue
            i = m.end()
            continue
        i = balanced_end(expr, i) if c in "([{" else i + 1
    return calls


def string_literal(arg: str) -> str | None:
    m = re.fullmatch(r'"((?:[^"\\]|\\.)*)"|r(#*)"(.*?)"\2', arg, re.S)
    if not m:
        return None
    return m.group(1) if m.group(1) is not None else m.group(3)


def parse_routes(source: str, where: str) -> tuple[list[dict], list[str]]:
    """Every route of one Rust file (comments and the `#[cfg(test)]` module are cut):
    [{method, path, line, fn, admin, where}], `admin` when the router function layers
    `require_admin`; and what could not be read (a path that is no literal, a route without a
    method, `any`, `route_service`, `nest`)."""
    text = strip_tests(blank_comments(source))
    code = blank_comments(text, strings=True)  # what is not in a literal, at the same offsets
    routes: list[dict] = []
    problems: list[str] = []
    fns = [(m.start(), m.group(1)) for m in RUST_FN_NAME.finditer(code)]
    for m in ROUTER_CALL.finditer(code):
        line = text.count("\n", 0, m.start()) + 1
        owner = [(pos, name) for pos, name in fns if pos < m.start()]
        fn_name = owner[-1][1] if owner else "?"
        fn_start = owner[-1][0] if owner else 0
        fn_end = next((pos for pos, _ in fns if pos > m.start()), len(text))
        admin = re.search(r"\brequire_admin\b", code[fn_start:fn_end]) is not None
        at = f"{where}:{line} ({fn_name})"
        kind = m.group(1)
        if kind != "route":
            problems.append(f"{at}: .{kind}(…) hides its paths or methods from check_openapi: use .route(\"/path\", get(…)), or teach contract.py to read it")
            continue
        args, _ = call_args(text, m.end() - 1)
        path = string_literal(args[0]) if args else None
        if path is None or len(args) != 2:
            problems.append(f"{at}: .route({', '.join(args)}) is not .route(\"/literal/path\", methods): check_openapi cannot read it")
            continue
        methods: list[str] = []
        for name, inner in chain_calls(args[1]):
            base = name.removesuffix("_service")
            if base in OPENAPI_METHODS:
                methods.append(base.upper())
            elif base == "on":
                found = METHOD_FILTER.findall(inner)
                if not found:
                    problems.append(f"{at}: on({inner.strip()}) names no MethodFilter::… check_openapi can read")
                methods += found
            elif base == "any":
                problems.append(f"{at}: {path} takes any method ({name}(…)): list the methods (get(…).post(…)) so docs/openapi.yaml can name them")
        if not methods and not any(p.startswith(at) for p in problems):
            problems.append(f"{at}: .route(\"{path}\", {args[1]}) has no method check_openapi can read (get, post, put, delete, patch, on(MethodFilter::…))")
        for method in methods:
            routes.append({"method": method, "path": path, "line": line, "fn": fn_name, "admin": admin, "where": f"{where}:{line}"})
    return routes, problems


def router_sources(root: str) -> list[str]:
    """The non-test Rust sources under OPENAPI_ROUTER_DIRS (src/ trees; tests/, benches/, tests.rs out)."""
    out = []
    for d in OPENAPI_ROUTER_DIRS:
        for path in sorted(glob.glob(os.path.join(root, d, "**", "*.rs"), recursive=True)):
            parts = rel(root, path).split(os.sep)
            if "src" in parts and not {"tests", "benches", "examples", "target"} & set(parts) and parts[-1] != "tests.rs":
                out.append(path)
    return out


def router_operations(root: str) -> tuple[list[dict], list[str]]:
    routes, problems = [], []
    for path in router_sources(root):
        with open(path, encoding="utf-8") as fh:
            raw = fh.read()
        if ".route" not in raw and ".nest" not in raw:
            continue
        found, more = parse_routes(raw, rel(root, path))
        routes += found
        problems += more
    return routes, problems


def openapi_path(router_path: str) -> str:
    """The router's path as docs/openapi.yaml writes it: `{event_id}` -> `{eventId}`,
    `{*rest}` -> `{rest}`."""
    def camel(m: re.Match) -> str:
        head, *tail = m.group(1).split("_")
        return "{" + head + "".join(t[:1].upper() + t[1:] for t in tail) + "}"

    return re.sub(r"\{\*?([A-Za-z_][A-Za-z0-9_]*)\}", camel, router_path)


def openapi_operations(spec: dict) -> tuple[dict[tuple[str, str], dict], list[str]]:
    """(METHOD, path) -> operation of an OpenAPI document, and what could not be read."""
    ops: dict[tuple[str, str], dict] = {}
    problems = []
    paths = spec.get("paths") if isinstance(spec, dict) else None
    if not isinstance(paths, dict):
        return ops, [f"{OPENAPI_DOC} has no paths object"]
    for path, item in paths.items():
        if str(path).startswith("x-"):
            continue
        if not isinstance(item, dict):
            problems.append(f"{OPENAPI_DOC}: paths.{path} is not a path item")
            continue
        if "$ref" in item:
            problems.append(f"{OPENAPI_DOC}: paths.{path} is a $ref; write the path item in place so its operations can be compared with the routers")
        for method in OPENAPI_METHODS:
            if isinstance(item.get(method), dict):
                ops[(method.upper(), str(path))] = item[method]
    return ops, problems


def compare_openapi(routes: list[dict], spec: dict) -> list[str]:
    """A route missing from the file, an operation of the file that no router serves, and the
    admin routes' security scheme (required behind `require_admin`, none elsewhere)."""
    ops, problems = openapi_operations(spec)
    served: dict[tuple[str, str], list[dict]] = {}
    for r in routes:
        served.setdefault((r["method"], openapi_path(r["path"])), []).append(r)
    top_security = spec.get("security") if isinstance(spec, dict) else None
    for key, rs in sorted(served.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        method, path = key
        for r in rs:
            if key not in ops:
                problems.append(f"route {method} {r['path']} in {r['where']} ({r['fn']}) is missing from {OPENAPI_DOC}: add `{method.lower()}` under paths.{path}")
                continue
            security = ops[key].get("security", top_security) or []
            schemes = {name for req in security if isinstance(req, dict) for name in req}
            if r["admin"] and OPENAPI_ADMIN_SCHEME not in schemes:
                problems.append(f"route {method} {r['path']} in {r['where']} ({r['fn']}) is behind require_admin: {OPENAPI_DOC}'s {method} {path} must list the {OPENAPI_ADMIN_SCHEME} security scheme")
            elif not r["admin"] and schemes:
                problems.append(f"route {method} {r['path']} in {r['where']} ({r['fn']}) is public: {OPENAPI_DOC}'s {method} {path} declares security {sorted(schemes)}")
    by_path: dict[str, set[str]] = {}
    for method, path in served:
        by_path.setdefault(path, set()).add(method)
    for method, path in sorted(set(ops) - set(served), key=lambda k: (k[1], k[0])):
        hint = f" (the routers serve it as {', '.join(sorted(by_path[path]))})" if path in by_path else ""
        problems.append(f"{OPENAPI_DOC} has {method} {path}, which no router in {', '.join(d + '/' for d in OPENAPI_ROUTER_DIRS)} serves{hint}: remove it, or add the route")
    return problems


def validate_openapi(spec: dict) -> list[str]:
    """Errors of the standard validator (openapi-spec-validator, OpenAPI 3.1)."""
    try:
        from openapi_spec_validator import OpenAPIV31SpecValidator  # noqa: PLC0415 - only this check needs it
    except ImportError:
        return ["openapi-spec-validator is not installed: pip install -r tests/infra/requirements.txt"]
    version = str(spec.get("openapi", "")) if isinstance(spec, dict) else ""
    if not version.startswith("3.1."):
        return [f"{OPENAPI_DOC} is OpenAPI {version or '?'}; the contract is OpenAPI 3.1 (openapi: 3.1.x)"]
    out = []
    try:
        for e in OpenAPIV31SpecValidator(spec).iter_errors():
            at = "/".join(str(p) for p in e.path)
            out.append(f"{OPENAPI_DOC}: {e.message}" + (f" (at {at})" if at else ""))
    except Exception as e:  # noqa: BLE001 - the validator raises on what it cannot walk (a $ref to nowhere)
        ref = getattr(e, "ref", None)
        text = f"{ref} does not exist" if ref else str(e)[:200]
        out.append(f"{OPENAPI_DOC}: invalid ({type(e).__name__}: {text})")
    return out


def load_openapi(root: str) -> tuple[dict | None, list[str]]:
    import yaml  # noqa: PLC0415 - PyYAML comes with checkov and openapi-spec-validator

    path = os.path.join(root, OPENAPI_DOC)
    if not os.path.exists(path):
        return None, [f"{OPENAPI_DOC} does not exist"]
    try:
        with open(path, encoding="utf-8") as fh:
            spec = yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as e:
        return None, [f"{OPENAPI_DOC} is not YAML: {e}"]
    return (spec, []) if isinstance(spec, dict) else (None, [f"{OPENAPI_DOC} is not a mapping"])


def check_openapi(root: str, checks: Checks) -> None:
    """docs/openapi.yaml names every route of the routers and nothing else, with the admin routes'
    security scheme, and is valid OpenAPI 3.1."""
    routes, problems = router_operations(root)
    spec, more = load_openapi(root)
    problems += more
    if spec is not None:
        problems += compare_openapi(routes, spec)
        problems += validate_openapi(spec)
    files = len({r["where"].split(":")[0] for r in routes})
    checks.check(f"{OPENAPI_DOC} = the routers' routes ({len(routes)} routes in {files} files), admin routes signed with {OPENAPI_ADMIN_SCHEME}, valid OpenAPI 3.1", problems)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
    args = ap.parse_args()
    root = args.root
    checks = Checks()

    modules = load_tf(root, checks)
    layout = package_layout(root)
    deployments = lambda_deployments(modules)
    scans = {c: scan_crate(root, c) for c in CRATES}
    ls = localstack_functions(root)

    check_binaries(root, checks, layout, deployments, set(ls) if ls is not None else None)
    check_dist_refs(root, checks, layout, modules)
    check_env(root, checks, deployments, scans, "Terraform")
    if ls is not None:
        ls_deployments = [
            {"where": "localstack/bootstrap.py", "module_dir": "localstack", "binary": b, "env": {k: str(v) for k, v in f["env"].items()}, "env_ref": "FUNCTIONS", "timeout": f["timeout"]}
            for b, f in ls.items()
        ]
        check_env(root, checks, ls_deployments, scans, "LocalStack")
        check_env_users(checks, scans, ls_deployments, "LocalStack", exact=False)
        check_localstack_routes(root, checks)
        check_timeouts(checks, ls_deployments)
    check_env_users(checks, scans, deployments, "Terraform", exact=True)
    for name in PLANNED_ENV:
        if any(name in scans[c]["reads"] for c in CRATES):
            print(f"note {name} is now read by the code: it can leave PLANNED_ENV")
    check_shared_settings(checks, deployments)
    index = check_table(root, checks, modules)
    check_iam(root, checks, deployments, scans, index)
    check_timeouts(checks, deployments)
    check_routes(root, checks, modules)
    check_edge(root, checks, layout)
    check_origin_lock(checks, modules, deployments)
    check_throttling(checks, modules)
    check_kms_decrypt(checks, modules)
    check_edge_keys(root, checks, modules)
    check_tier2_link_keys(root, checks, modules, deployments)
    check_tier2_writes(root, checks, deployments)
    check_waiting_page_headers(checks, modules)
    check_booking_page(root, checks, modules, layout)
    check_status_document(checks, modules)
    check_release(checks, modules)
    check_line_document(checks, modules)
    check_waf(root, checks, modules)
    check_waf_queue_nat(root, checks, modules)
    check_alarms(root, checks, modules)
    check_verifier_behaviours(root, checks, modules)
    check_admin_allow_list(checks, modules, deployments)
    check_checkov_skips(root, checks)
    check_readme_routes(root, checks)
    check_readme_size(root, checks)
    check_settings_doc(root, checks)
    check_data_doc(root, checks)
    check_openapi(root, checks)

    print(f"{checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
