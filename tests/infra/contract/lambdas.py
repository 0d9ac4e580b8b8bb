"""The Lambdas: packaged binaries, dist/ paths, environment and settings, timeouts, the
table, the API routes, and the LocalStack kit."""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys

from .common import Checks, rel
from .rust import cargo_vwr_deps, normalize_path, rust_routes, workspace_lambda_binaries
from .tables import (
    BINARIES,
    ENV_USERS,
    FORBIDDEN_ENV,
    HTTP_API_ROUTERS,
    NOT_REQUIRED,
    OTHER_ENV,
    PLANNED_ENV,
    REQUIRED,
    ROUTE_AUTHORIZATION,
    SCHEDULED_MIN_TIMEOUT,
)
from .terraform import HTTP_API, HTTP_API_ROUTES, blocks, first, http_apis, locals_of, module_calls, tf_routes


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


def check_routes(root: str, checks: Checks, modules: dict) -> None:
    """The route maps given to terraform/modules/http_api (and http_api/routes) are the routers'
    routes (HTTP_API_ROUTERS), each route authorised as its kind must be (ROUTE_AUTHORIZATION:
    admin routes AWS_IAM), and the modules make the routes they are given; the protected-API gate
    covers the prefixes the authorizer knows."""
    problems = []
    apis = http_apis(modules)
    by_call = {(a["module_dir"], a["call"]): a for a in apis}
    for a in apis:
        if a["routes"] and (a["module_dir"], a["call"]) not in HTTP_API_ROUTERS:
            problems.append(f"{a['where']}: routes no router is compared with (HTTP_API_ROUTERS)")
    for (mod_dir, call), (router, kind) in HTTP_API_ROUTERS.items():
        name = f"{mod_dir} module.{call} ({kind} routes of {router})"
        api = by_call.get((mod_dir, call))
        if api is None:
            problems.append(f"{name}: no such call of {HTTP_API} or {HTTP_API_ROUTES}")
            continue
        tf = tf_routes(modules[mod_dir], call)
        rust = rust_routes(root, router).get(kind, set())
        for r in sorted(rust - tf):
            problems.append(f"{name}: the code serves {r}, API Gateway has no such route")
        for r in sorted(tf - rust):
            problems.append(f"{name}: API Gateway routes {r}, the code has no such route")
        for key, route in api["routes"].items():
            auth = first(route.get("authorization")) if isinstance(route, dict) else None
            if auth not in ROUTE_AUTHORIZATION[kind]:
                problems.append(f"{name}: route {key} has authorization {auth!r}; {kind} routes need {' or '.join(ROUTE_AUTHORIZATION[kind])}")
    # The module makes what it is given: one route per entry, with the entry's key and
    # authorization, to the Lambda integration of var.invoke_arn.
    # (HTTP_API hands its route map and Lambda to HTTP_API_ROUTES for its own API.)
    routes_mod = modules.get(HTTP_API_ROUTES, {})
    wiring = {
        f"{HTTP_API_ROUTES} aws_apigatewayv2_route.this": (
            blocks(routes_mod, "resource", "aws_apigatewayv2_route").get("this", {}),
            {"for_each": "${var.routes}", "route_key": "${each.value.route_key}", "authorization_type": "${each.value.authorization}"},
        ),
        f"{HTTP_API_ROUTES} aws_apigatewayv2_integration.this": (
            blocks(routes_mod, "resource", "aws_apigatewayv2_integration").get("this", {}),
            {"api_id": "${var.api_id}", "integration_type": "AWS_PROXY", "integration_uri": "${var.invoke_arn}"},
        ),
        f"{HTTP_API} module.routes": (
            module_calls(modules.get(HTTP_API, {})).get("routes", {}),
            {"routes": "${var.routes}", "invoke_arn": "${var.invoke_arn}", "api_id": "${aws_apigatewayv2_api.this.id}"},
        ),
    }
    for where, (body, want) in wiring.items():
        for arg, value in want.items():
            if str(first(body.get(arg))) != value:
                problems.append(f"{where}: {arg} is {first(body.get(arg))!r}, not {value}")
    t2 = modules.get("terraform/modules/tier2", {})
    with open(os.path.join(root, "tier2/tier2/src/protect.rs"), encoding="utf-8") as fh:
        prefixes = re.search(r"PROTECTED_PREFIXES: \[&str; \d+\] = \[([^\]]*)\]", fh.read()).group(1)
    code_prefixes = {p.strip('"/ ').split("/")[-1] for p in prefixes.split(",") if p.strip()}
    gate = set(locals_of(t2).get("protected_prefixes", {}).values())
    if gate != code_prefixes:
        problems.append(f"protected-API gate covers /api/{sorted(gate)}, the authorizer knows /api/{sorted(code_prefixes)}")
    checks.check(f"API Gateway routes = the routers' routes ({len(HTTP_API_ROUTERS)} route maps); admin routes use {'/'.join(ROUTE_AUTHORIZATION['admin'])}", problems)


def check_env_users(checks: Checks, scans: dict[str, dict], deployments: list[dict], label: str, exact: bool) -> None:
    """ENV_USERS: set on exactly (Terraform) / at most (LocalStack) the binaries that use it."""
    problems = []
    for name, (users, why) in ENV_USERS.items():
        readers = {b for b, crates in BINARIES.items() if any(name in scans[c]["reads"] for c in crates)}
        if not readers and name in PLANNED_ENV:
            readers = set(users)  # set ahead of the code (PLANNED_ENV): its users as listed
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
