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
  * routes: the route maps given to terraform/modules/http_api (and http_api/routes) are the Rust
    routers' routes one to one (HTTP_API_ROUTERS), admin routes use AWS_IAM and public ones NONE,
    the modules make the routes they are given, and the protected-API gate covers the prefixes
    the authorizer knows;
  * the DynamoDB table is the one `vwr bootstrap` creates (keys, index, TTL);
  * the CloudFront Functions stay within 10 KB once the placeholders are filled;
  * the distribution's cache behaviours are terraform/modules/edge/behaviours.json's, in its
    order (the one place they are written: `vwr dev` and the local proxies read it too), every
    name it uses is one the module maps, and every pattern a literal prefix and a trailing `*`;
  * origins are locked to CloudFront: every CloudFront origin gets the `x-vwr-origin-secret`
    header, and every Lambda behind a CloudFront-fronted API gets VWR_ORIGIN_SECRET_ID (and no
    other Lambda does);
  * every API Gateway stage is throttled (rate and burst, positive defaults): http_api's stage
    takes its call's throttle, and route throttles are positive and set where the stage is made;
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
  * every `moved` block of terraform/ moves an address no longer declared to an instance that is
    declared, in the module or a module it calls (module.X.…, nested), with the for_each or
    count its index needs (and, where the keys can be read, the key);
  * the edge verifier, which deletes viewer x-vwr-* headers, runs on every behaviour but those
    of the origins that read them (the waiting page, the tier-1 API, tier 2).
  * the console in AWS (docs/console.md): its API carries the admin routes of tier 1 and tier 2
    one to one (followed from the tier modules' admin_routes outputs to the admin API's route
    maps), each JWT with its one authorizer and served by the same Lambda as on the admin API; the
    Cognito groups are vwr-viewer, vwr-operator and vwr-admin, nobody signs up alone, MFA is on,
    and the app client is public (no secret) with the authorization code flow only; the
    /vwr-console/* behaviour serves the bucket's files with no verifier and a strict CSP, DENY
    framing and no Referer; VWR_ADMIN_GROUPS_CLAIM reaches every admin-serving Lambda from one
    variable;
  * the docs stay true to the code: the README's routes → files map names every route the
    routers serve (tier 1, tier 2, the site and health routes of `vwr dev`) and nothing else,
    every file it names exists, and the README stays a front door (≤ 15,000 bytes, ≤ 250
    lines); docs/settings.md has exactly one row for every VWR_* variable the Rust code reads;
    docs/data.md has one row for every DynamoDB key and Redis key the key builders make (naming
    the builder; for Redis, the Lua header's KEYS[i], name and type) and none for a key no builder
    makes, and no other Rust source builds a key; every citation of a Markdown section in the code
    and the docs (`….md#…`, `README.md, "…"`, `README's "…"`) names a file and a
    heading (GitHub's slug) or bold run-in label that exist; a count of the invariants stated in
    Markdown ("the N rules", digits or words) is the number of `## N` rules of docs/invariants.md;
    the tracked Markdown (`git ls-files "*.md"`; without git, every .md file) holds under 60,000
    words as `wc -w` counts them;
  * docs/openapi.yaml is the routers' API: every `.route(…)` of the non-test Rust sources under
    functions/ and tier2/ (each method of a `get(…).post(…)` chain, `on(MethodFilter::…)`) is an
    operation of the file and every operation of the file is a route (paths compared with the
    router's `{snake_case}` / `{*rest}` parameters written `{camelCase}` / `{rest}`); the routes
    behind `require_admin` declare the SigV4 security scheme and the others none; and the file is
    valid OpenAPI 3.1 (openapi-spec-validator).

What the code reads and calls is derived from the Rust sources of the crates each binary is
built from (BINARIES in tables.py, checked against the Cargo manifests). The tables of
tables.py are the explicit, reviewed part of the contract: a new environment variable, a new required variable or
a new AWS call that they do not classify makes this test fail with a message naming the file.

The package, by subject: tables.py (the reviewed tables), common.py (the tally), rust.py (the
Rust sources: reads, calls, key builders, the routers' routes), terraform.py (the .tf files
parsed, the JSON files they read, and dynamic blocks and for_each maps evaluated), lambdas.py (binaries, packaging,
environment, timeouts, table, routes, the LocalStack kit), iam.py (IAM and keys), edge.py
(CloudFront behaviours and origins), console.py (the console's API, sign-in and behaviour), waf.py (the web ACL), observability.py (the alarms),
docs.py (README, docs/settings.md, docs/data.md, citations, the invariants' count, the
Markdown's words), openapi.py (docs/openapi.yaml), habits.py (file sizes, the command's error types, commit
subjects), main.py (runs them all, in this order). Every name is re-exported here: `import
contract` (tf_schema.py and the self-tests test_contract_*.py do) sees them all.

Usage: python3 -m contract [--root DIR]   (from tests/infra; tests/infra/contract.py runs it too)
       prints one line per check and "N passed, M failed"; exit status 1 on a failure.
"""

from .tables import *  # noqa: F403
from .common import *  # noqa: F403
from .rust import *  # noqa: F403
from .terraform import *  # noqa: F403
from .lambdas import *  # noqa: F403
from .iam import *  # noqa: F403
from .edge import *  # noqa: F403
from .console import *  # noqa: F403
from .waf import *  # noqa: F403
from .observability import *  # noqa: F403
from .docs import *  # noqa: F403
from .openapi import *  # noqa: F403
from .habits import *  # noqa: F403
from .main import *  # noqa: F403
