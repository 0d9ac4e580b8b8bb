"""IAM and keys: every call granted and nothing more, KMS, the edge and tier-2 keys, the tier-2
roles' writes, the admin allow-list."""

from __future__ import annotations

import re

from .common import Checks
from .rust import dynamo_key_builders, read_code, rust_sources, sample_key
from .tables import (
    ADMIN_SERVING,
    BINARIES,
    CALL_USERS,
    DYNAMO_KEY_FILES,
    DYNAMO_WRITES,
    EDGE_KEY_LABEL,
    IMPLIED,
    PLACE_KEY_LABEL,
    PLANNED_ACTIONS,
    QUERY_TABLE_USERS,
    REGISTRATION_BUILDER,
    TIER1_MASTER_ENV,
    TRANSACTION_ITEMS,
)
from .terraform import (
    blocks,
    calls_of,
    first,
    flat,
    http_api_binary,
    http_apis,
    locals_of,
    module_calls,
    module_dir,
    outputs_of,
)


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


def check_admin_allow_list(checks: Checks, modules: dict, deployments: list[dict]) -> None:
    """VWR_ADMIN_PRINCIPALS reaches every Lambda behind an admin route, from one variable."""
    problems = []
    serving: set[str] = set()
    # An HTTP API's Lambda serves admin routes when any route of its map is authorised (not NONE).
    for api in http_apis(modules):
        if any(isinstance(r, dict) and first(r.get("authorization")) != "NONE" for r in api["routes"].values()):
            binary = http_api_binary(api, deployments)
            if binary is None:
                problems.append(f"{api['where']}: cannot tell which Lambda it invokes (invoke_arn = module.X.invoke_arn)")
            else:
                serving.add(binary)
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
