"""The console in AWS (docs/console.md, "Sign-in in AWS"): its API carries the admin routes of
both tiers one to one, each behind the one JWT authorizer; the Cognito user pool's groups are the
three role groups and its app client a public, code-flow-only one; the /vwr-console/* behaviour
serves it with its own strict headers; the role claim reaches the functions serving admin
routes from one variable."""

from __future__ import annotations

import ast
import re

from .common import Checks
from .edge import CSP_REQUIRED, EDGE, edge_distributions
from .rust import rust_routes
from .tables import ADMIN_SERVING, HTTP_API_ROUTERS
from .terraform import (
    HTTP_API,
    HTTP_API_ROUTES,
    blocks,
    calls_of,
    first,
    hcl_keys,
    locals_of,
    module_calls,
    module_dir,
    outputs_of,
    tf_routes,
)

CONSOLE = "terraform/modules/console"
CONSOLE_GROUPS = {"vwr-viewer", "vwr-operator", "vwr-admin"}
CONSOLE_SCOPES = {"openid", "email", "profile"}
CONSOLE_PATTERN = "/vwr-console/*"
# Where each console variable's routes come from: the tier module, its output, and the console
# module's call that carries them.
CONSOLE_TIERS = {
    "tier1_admin": ("terraform/modules/tier1", "api"),
    "tier2_admin": ("terraform/modules/tier2", "tier2_routes"),
}
# The route map a console call builds from a tier's route_keys: every route JWT, one authorizer.
FOR_ROUTES = re.compile(r"^\$\{\{for (\w+) , (\w+) in (var\.\w+|each\.value)\.route_keys : \1 => (\{.*\})\}\}$", re.S)
# The outputs that hand a route map on: module http_api/routes' and module http_api's.
ROUTE_KEYS_OUTPUTS = {
    HTTP_API_ROUTES: "${{for k , r in var.routes : k => r.route_key}}",
    HTTP_API: "${module.routes.route_keys}",
}


def console_route_source(call: dict) -> tuple[str | None, dict | None, str | None]:
    """(the console variable a call's routes iterate, the per-route object, a problem) of one
    call of the console module (`api`, `tier2_routes`)."""
    m = FOR_ROUTES.match(str(first(call.get("routes"))))
    if not m:
        return None, None, f"routes {str(first(call.get('routes')))[:90]!r} is not `{{ for name, key in var.X.route_keys : name => {{ route_key = key, … }} }}`"
    try:
        route = ast.literal_eval(m.group(4))
    except (ValueError, SyntaxError):
        return None, None, f"cannot read the route object {m.group(4)!r}"
    if route.get("route_key") != f"${{{m.group(2)}}}":
        return None, None, f"route_key is {route.get('route_key')!r}, not the tier's key ${{{m.group(2)}}}"
    source = m.group(3)
    if source == "each.value":
        refs = set(re.findall(r"var\.(\w+)", str(first(call.get("for_each")))))
        if len(refs) != 1:
            return None, None, f"for_each {first(call.get('for_each'))!r} does not name one variable"
        var = refs.pop()
        prefix = "each.value"
    else:
        var = source[len("var."):]
        prefix = source
    for arg in ("function_name", "invoke_arn"):
        if str(first(call.get(arg))) != f"${{{prefix}.{arg}}}":
            return None, None, f"{arg} is {first(call.get(arg))!r}, not the routes' own {prefix}.{arg}"
    return var, route, None


def tier_admin_routes(modules: dict, caller: str, value) -> tuple[set[str], tuple | None, str | None]:
    """The route keys (normalised) a console argument `module.T.admin_routes` stands for, the
    (module dir, call) of the route map they come from, or a problem."""
    m = re.fullmatch(r"\$\{module\.(\w+)\.admin_routes\}", str(first(value)))
    call = module_calls(modules.get(caller, {})).get(m.group(1)) if m else None
    if call is None:
        return set(), None, f"is {first(value)!r}, not a tier module's admin_routes output"
    tier_dir = module_dir(caller, call)
    out = first(outputs_of(modules.get(tier_dir, {})).get("admin_routes", {}).get("value"))
    if not isinstance(out, dict):
        return set(), None, f"{tier_dir} has no output admin_routes {{function_name, invoke_arn, route_keys}}"
    keys = re.fullmatch(r"\$\{module\.(\w+)\.route_keys\}", str(out.get("route_keys")))
    lam = re.fullmatch(r"\$\{module\.(\w+)\.invoke_arn\}", str(out.get("invoke_arn")))
    calls = module_calls(modules[tier_dir])
    routes_call = calls.get(keys.group(1)) if keys else None
    if routes_call is None or module_dir(tier_dir, routes_call) not in (HTTP_API, HTTP_API_ROUTES):
        return set(), None, f"{tier_dir} output admin_routes.route_keys is {out.get('route_keys')!r}, not an http_api call's route_keys"
    if not lam or str(first(routes_call.get("invoke_arn"))) != f"${{module.{lam.group(1)}.invoke_arn}}":
        return set(), None, f"{tier_dir} output admin_routes.invoke_arn is {out.get('invoke_arn')!r}, not the Lambda of module.{keys.group(1)} ({first(routes_call.get('invoke_arn'))!r})"
    if str(out.get("function_name")) != f"${{module.{lam.group(1)}.function_name}}":
        return set(), None, f"{tier_dir} output admin_routes.function_name is {out.get('function_name')!r}, not module.{lam.group(1)}.function_name"
    return tf_routes(modules[tier_dir], keys.group(1)), (tier_dir, keys.group(1)), None


def check_console_api(root: str, checks: Checks, modules: dict) -> None:
    """The console API (module console) carries the admin routes of tier 1 and tier 2 one to one
    (the IAM admin API's route maps, which check_routes holds to the routers), each JWT with the
    API's one JWT authorizer, and each to the Lambda that serves it on the admin API."""
    problems = []
    mod = modules.get(CONSOLE, {})
    calls = module_calls(mod)
    for out_dir, want in ROUTE_KEYS_OUTPUTS.items():
        got = str(first(outputs_of(modules.get(out_dir, {})).get("route_keys", {}).get("value")))
        if got != want:
            problems.append(f"{out_dir} output route_keys is {got!r}, not {want}")
    api = calls.get("api", {})
    if module_dir(CONSOLE, api) != HTTP_API:
        problems.append(f"{CONSOLE}: no module api of {HTTP_API}")
    auth = first(api.get("authorizers"))
    auth = auth if isinstance(auth, dict) else {}
    jwt = [k for k, a in auth.items() if not k.startswith("__") and isinstance(a, dict) and first(a.get("type")) == "JWT"]
    if len(jwt) != 1 or len([k for k in auth if not k.startswith("__")]) != 1:
        problems.append(f"{CONSOLE} module.api: authorizers {sorted(auth)}, want one JWT authorizer")
    name = jwt[0] if jwt else None
    if name and "$request.header.Authorization" not in (first(auth[name].get("identity_sources")) or []):
        problems.append(f"{CONSOLE} module.api: authorizer {name} does not read the Authorization header")
    by_var: dict[str, str] = {}
    for call_name in ("api", "tier2_routes"):
        call = calls.get(call_name)
        if call is None:
            problems.append(f"{CONSOLE}: no module {call_name}")
            continue
        var, route, problem = console_route_source(call)
        if problem:
            problems.append(f"{CONSOLE} module.{call_name}: {problem}")
            continue
        by_var[var] = call_name
        if route.get("authorization") != "JWT" or route.get("authorizer") != name:
            problems.append(f"{CONSOLE} module.{call_name}: routes are {route.get('authorization')!r} with authorizer {route.get('authorizer')!r}, want JWT with {name!r}")
        if set(route) - {"route_key", "authorization", "authorizer"}:
            problems.append(f"{CONSOLE} module.{call_name}: routes set {sorted(set(route) - {'route_key', 'authorization', 'authorizer'})} too")
        if call_name != "api":
            existing = first(call.get("existing_authorizers"))
            existing = existing if isinstance(existing, dict) else {}
            ref = existing.get(name, {}) if name else {}
            if first(call.get("authorizers")) or str(ref.get("id")) != f'${{module.api.authorizer_ids["{name}"]}}' or ref.get("type") != "JWT":
                problems.append(f"{CONSOLE} module.{call_name}: its routes must name module.api's authorizer {name!r} (existing_authorizers), and make none")
            if str(first(call.get("api_id"))) != "${module.api.id}":
                problems.append(f"{CONSOLE} module.{call_name}: api_id is {first(call.get('api_id'))!r}, not module.api.id")
    for var, (_tier, call_name) in CONSOLE_TIERS.items():
        if by_var.get(var) != call_name:
            problems.append(f"{CONSOLE}: module.{call_name} does not carry var.{var}'s routes ({by_var})")
    callers = calls_of(modules, CONSOLE)
    if not callers:
        problems.append(f"nothing calls {CONSOLE}")
    # What the admin routers serve, both tiers: the console API must route exactly that.
    served: set[str] = set()
    for router, kind in sorted(set(HTTP_API_ROUTERS.values())):
        if kind == "admin":
            served |= rust_routes(root, router).get("admin", set())
    for caller, call_name, call in callers:
        where = f"{caller} module.{call_name}"
        console: list[str] = []
        for var, (tier_dir, _c) in CONSOLE_TIERS.items():
            keys, source, problem = tier_admin_routes(modules, caller, call.get(var))
            if problem:
                problems.append(f"{where}: {var} {problem}")
                continue
            if source[0] != tier_dir:
                problems.append(f"{where}: {var} comes from {source[0]}, not {tier_dir}")
            router = HTTP_API_ROUTERS.get(source)
            if router is None or router[1] != "admin":
                problems.append(f"{where}: {var} comes from {source[0]} module.{source[1]}, which is not an admin route map of HTTP_API_ROUTERS")
                continue
            console += sorted(keys)
        for r in sorted({r for r in console if console.count(r) > 1}):
            problems.append(f"{where}: the console API would route {r} twice")
        for r in sorted(served - set(console)):
            problems.append(f"{where}: the code serves admin route {r}, the console API has none")
        for r in sorted(set(console) - served):
            problems.append(f"{where}: the console API routes {r}, no admin router serves it")
    checks.check(f"console API: the admin routes of both tiers one to one, each JWT with the one authorizer {name!r}", problems)


def check_console_signin(checks: Checks, modules: dict) -> None:
    """The Cognito user pool of the console: its groups are the three role groups, nobody signs
    up alone, MFA is on; its app client is public (no secret) and does the authorization code
    flow only, with the OpenID scopes, redirecting to the console's URLs only."""
    problems = []
    mod = modules.get(CONSOLE, {})
    local = locals_of(mod)
    groups = blocks(mod, "resource", "aws_cognito_user_group")
    names: list[str] = []
    for g in groups.values():
        keys = hcl_keys(first(g.get("for_each")), local) if "for_each" in g else None
        if keys is None or str(first(g.get("name"))) != "${each.key}":
            names.append(str(first(g.get("name"))))
        else:
            names += keys
    if sorted(names) != sorted(CONSOLE_GROUPS):
        problems.append(f"{CONSOLE}: Cognito groups {sorted(names)}, want {sorted(CONSOLE_GROUPS)}")
    pools = blocks(mod, "resource", "aws_cognito_user_pool")
    if len(pools) != 1:
        problems.append(f"{CONSOLE}: {len(pools)} Cognito user pools, want 1")
    for n, p in pools.items():
        admin_only = first((p.get("admin_create_user_config") or [{}])[0].get("allow_admin_create_user_only"))
        if admin_only is not True:
            problems.append(f"aws_cognito_user_pool.{n}: allow_admin_create_user_only is {admin_only!r}: anyone could sign up")
        if first(p.get("mfa_configuration")) not in ("ON", "OPTIONAL"):
            problems.append(f"aws_cognito_user_pool.{n}: mfa_configuration is {first(p.get('mfa_configuration'))!r}")
    clients = blocks(mod, "resource", "aws_cognito_user_pool_client")
    if len(clients) != 1:
        problems.append(f"{CONSOLE}: {len(clients)} Cognito app clients, want 1")

    def value(v):
        ref = re.fullmatch(r"\$\{local\.(\w+)\}", str(first(v)))
        return local.get(ref.group(1)) if ref else first(v)

    for n, cl in clients.items():
        where = f"aws_cognito_user_pool_client.{n}"
        if first(cl.get("generate_secret")) is not False:
            problems.append(f"{where}: generate_secret is {first(cl.get('generate_secret'))!r}: a page in a browser cannot keep a secret")
        if value(cl.get("allowed_oauth_flows")) != ["code"]:
            problems.append(f"{where}: allowed_oauth_flows {value(cl.get('allowed_oauth_flows'))!r}, want the code flow only")
        if first(cl.get("allowed_oauth_flows_user_pool_client")) is not True:
            problems.append(f"{where}: allowed_oauth_flows_user_pool_client must be true")
        scopes = value(cl.get("allowed_oauth_scopes"))
        if not isinstance(scopes, list) or set(scopes) != CONSOLE_SCOPES:
            problems.append(f"{where}: allowed_oauth_scopes {scopes!r}, want {sorted(CONSOLE_SCOPES)}")
        for arg in ("callback_urls", "logout_urls"):
            urls = value(cl.get(arg))
            if not re.fullmatch(r'\$\{\[for (\w+) in var\.site_hosts : "https://\$\{\1\}/vwr-console/"\]\}', str(urls)):
                problems.append(f"{where}: {arg} {urls!r} are not https://<site host>/vwr-console/")
    checks.check(f"console sign-in: Cognito groups {', '.join(sorted(CONSOLE_GROUPS))}; a public app client, code flow only", problems)


def check_console_edge(checks: Checks, modules: dict) -> None:
    """The /vwr-console/* behaviour: the bucket's vwr-console/ files, no verifier and no viewer
    data forwarded, only GET and HEAD, and a strict Content-Security-Policy (nothing inline, no
    eval, connections to the site and the listed origins only), never framed, no Referer."""
    problems = []
    edge = modules.get(EDGE, {})
    policies = blocks(edge, "resource", "aws_cloudfront_response_headers_policy")
    dists, _ = edge_distributions(modules)
    found = [b for d in dists.values() for b in d.get("ordered_cache_behavior", []) if first(b.get("path_pattern")) == CONSOLE_PATTERN]
    if len(found) != 1:
        problems.append(f"expected one {CONSOLE_PATTERN} behaviour in {EDGE}, found {len(found)}")
    for b in found:
        if first(b.get("target_origin_id")) != "waiting-page":
            problems.append(f"{CONSOLE_PATTERN} goes to {first(b.get('target_origin_id'))!r}, not the bucket (waiting-page)")
        if b.get("function_association") or b.get("lambda_function_association") or b.get("dynamic"):
            problems.append(f"{CONSOLE_PATTERN} runs a viewer-request function: the console needs none")
        if set(first(b.get("allowed_methods")) or []) != {"GET", "HEAD"}:
            problems.append(f"{CONSOLE_PATTERN} allows {first(b.get('allowed_methods'))}: static files need GET and HEAD")
        m = re.fullmatch(r"\$\{aws_cloudfront_response_headers_policy\.(\w+)\.id\}", str(first(b.get("response_headers_policy_id"))))
        policy = policies.get(m.group(1)) if m else None
        if policy is None:
            problems.append(f"{CONSOLE_PATTERN} has no response headers policy of the module")
            continue
        sec = (policy.get("security_headers_config") or [{}])[0]
        csp = (sec.get("content_security_policy") or [{}])[0]
        text = str(first(csp.get("content_security_policy")))
        ref = re.fullmatch(r"\$\{local\.(\w+)\}", text)
        if ref:
            text = str(locals_of(edge).get(ref.group(1)))
        problems += [f"console CSP lacks {d!r}: {text!r}" for d in CSP_REQUIRED if d not in text]
        problems += [f"console CSP allows {w!r}" for w in ("unsafe-inline", "unsafe-eval") if w in text]
        if first(csp.get("override")) is not True:
            problems.append("the console CSP must override (override = true)")
        if first((sec.get("frame_options") or [{}])[0].get("frame_option")) != "DENY":
            problems.append("the console's frame_options must be DENY")
        if first((sec.get("referrer_policy") or [{}])[0].get("referrer_policy")) != "no-referrer":
            problems.append("the console's referrer_policy must be no-referrer (the sign-in's code is in its URL)")
    checks.check(f"the console ({CONSOLE_PATTERN}): the bucket's files, no verifier, its CSP, DENY framing, no Referer", problems)


def check_admin_groups_claim(checks: Checks, modules: dict, deployments: list[dict]) -> None:
    """VWR_ADMIN_GROUPS_CLAIM (the console's role claim) on every Lambda serving admin routes comes
    from the tier module's var.admin_groups_claim, and callers give the tier modules one value."""
    problems = []
    for d in deployments:
        if d["binary"] not in ADMIN_SERVING or not isinstance(d["env"], dict):
            continue
        if str(d["env"].get("VWR_ADMIN_GROUPS_CLAIM")) != "${var.admin_groups_claim}":
            problems.append(f"{d['where']}: VWR_ADMIN_GROUPS_CLAIM is {d['env'].get('VWR_ADMIN_GROUPS_CLAIM')!r}, not var.admin_groups_claim")
    for mod_dir, mod in modules.items():
        given = {
            name: str(first(call.get("admin_groups_claim")))
            for name, call in module_calls(mod).items()
            if module_dir(mod_dir, call) in ("terraform/modules/tier1", "terraform/modules/tier2")
        }
        if len(set(given.values())) > 1:
            problems.append(f"{mod_dir}: the tier modules get different admin_groups_claim: {given}")
    checks.check(f"the console's role claim (VWR_ADMIN_GROUPS_CLAIM) on {', '.join(sorted(ADMIN_SERVING))}, from one variable", problems)
