"""The reviewed tables, the explicit part of the contract (see the package docstring), and
the files and limits the checks read."""

from __future__ import annotations


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
    "VWR_ADMIN_GROUPS_CLAIM": ({"vwr-tier1-admin", "vwr-tier2-api"}, "the console's role claim: read where admin routes are served (docs/console.md)"),
}

# Set by Terraform ahead of the code that reads it. Remove an entry once the code reads it.
PLANNED_ENV: dict[str, str] = {}

# The HTTP APIs: every call of terraform/modules/http_api (module dir, call name) that has
# routes, and the routes of the router it deploys (router file, "public" or "admin"). Its route
# map is compared with them one to one (check_routes), and each route's authorization must be one
# of ROUTE_AUTHORIZATION's for its kind.
HTTP_API_ROUTERS = {
    ("terraform/modules/tier1", "public_api"): ("functions/tier1/src/http.rs", "public"),
    ("terraform/modules/tier1", "admin_api"): ("functions/tier1/src/http.rs", "admin"),
    ("terraform/modules/tier2", "public_api"): ("tier2/tier2/src/http.rs", "public"),
    ("terraform/modules/tier2", "admin_routes"): ("tier2/tier2/src/http.rs", "admin"),
}
# Public routes: the function checks the caller's signed tokens itself (no authorizer in front).
# Admin routes: signed by an IAM principal (`vwr admin --sigv4`), the function's require_admin
# then checks VWR_ADMIN_PRINCIPALS.
ROUTE_AUTHORIZATION = {"public": ("NONE",), "admin": ("AWS_IAM",)}

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

# Citations and counts in prose (check_citations, check_invariant_counts): the text files
# read (by extension), and the directories never read (tools' and builds' trees).
PROSE_EXTS = (".md", ".rs", ".js", ".mjs", ".py", ".tf", ".sh", ".html", ".yaml", ".yml", ".toml")
PROSE_SKIP_DIRS = (".git", ".venv", "node_modules", "target")
INVARIANTS_DOC = "docs/invariants.md"
# The Markdown the repository tracks (`git ls-files "*.md"`) stays under this many words, as
# `wc -w` counts them (check_markdown_words): each topic has one home, the rest is a link.
MARKDOWN_MAX_WORDS = 60_000

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
