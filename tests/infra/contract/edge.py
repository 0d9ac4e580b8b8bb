"""The edge: CloudFront behaviours (terraform/modules/edge/behaviours.json) and origins, the
origin lock, throttling, the waiting and booking pages, the status and line documents, early
release, where the verifier runs."""

from __future__ import annotations

import fnmatch
import os
import re

from .common import Checks, rel
from .tables import (
    FORWARD_ALL_POLICIES,
    FRONTED,
    ORIGIN_HEADER,
    RELEASE_HEADER,
    RELEASE_PATH,
    RELEASE_ROUTE,
    STATUS_PATTERN,
    STATUS_ROUTE,
)
from .terraform import (
    HclError,
    blocks,
    calls_of,
    expand_dynamic,
    first,
    flat,
    HTTP_API,
    HTTP_API_ROUTES,
    http_api_binary,
    http_apis,
    locals_of,
    module_calls,
    module_dir,
    origins,
    outputs_of,
    tf_routes,
    var_default,
)

EDGE = "terraform/modules/edge"
BEHAVIOURS = f"{EDGE}/behaviours.json"


def edge_distributions(modules: dict) -> tuple[dict[str, dict], list[str]]:
    """The edge module's CloudFront distributions as Terraform makes them: dynamic blocks
    expanded, so the cache behaviours are behaviours.json's (parse_tf reads the file in place of
    the module's `jsondecode(file(…))`), every optional origin's included; and the problems
    where a distribution cannot be read so."""
    edge = modules.get(EDGE, {})
    local = locals_of(edge)
    out, problems = {}, []
    for name, dist in blocks(edge, "resource", "aws_cloudfront_distribution").items():
        try:
            out[name] = expand_dynamic(dist, local)
        except HclError as e:
            problems.append(f"{EDGE} aws_cloudfront_distribution.{name}: {e}")
    return out, problems


def ordered_behaviours(modules: dict) -> list[dict]:
    """The ordered cache behaviours of the edge module's distributions, in order."""
    dists, _ = edge_distributions(modules)
    return [b for d in dists.values() for b in d.get("ordered_cache_behavior", [])]


def check_behaviours(checks: Checks, modules: dict) -> None:
    """The distribution's cache behaviours are behaviours.json's, the one place they are written
    (`vwr dev` and the local proxies route by the same file): the module reads the file, makes
    its default behaviour and, in the file's order, its ordered ones from it (no other, no
    dynamic block left unread, so the order is known), every name the file uses is one the
    module maps, every origin one the distribution has, every pattern a literal prefix and one
    trailing `*` (the form the local emulators match), and every behaviour HTTPS-only or
    redirecting, with one of the module's response headers policies."""
    local = locals_of(modules.get(EDGE, {}))
    doc = local.get("behaviours")
    dists, problems = edge_distributions(modules)
    if not isinstance(doc, dict) or not isinstance(doc.get("ordered"), list) or not isinstance(doc.get("default"), dict):
        problems.append(f"{EDGE}: local.behaviours is not {BEHAVIOURS} read with jsondecode(file(…)) ({str(doc)[:80]!r})")
        doc = {"default": {}, "ordered": []}
    want = [b.get("pathPattern") for b in doc["ordered"]]
    for p in want:
        if not isinstance(p, str) or not p.startswith("/") or not p.endswith("*") or any(c in p[:-1] for c in "*?"):
            problems.append(f"{BEHAVIOURS}: pattern {p!r} is not a literal path prefix and one trailing *")
    if not dists and not problems:
        problems.append(f"no aws_cloudfront_distribution in {EDGE}")
    raw = blocks(modules.get(EDGE, {}), "resource", "aws_cloudfront_distribution")
    policies = blocks(modules.get(EDGE, {}), "resource", "aws_cloudfront_response_headers_policy")
    for name, dist in dists.items():
        left = [n for dyn in dist.get("dynamic", []) for n in dyn if n.endswith("cache_behavior")]
        if left:
            problems.append(f"aws_cloudfront_distribution.{name}: dynamic {left} not read: the behaviours and their order are unknown")
        if raw[name].get("ordered_cache_behavior") or raw[name].get("default_cache_behavior"):
            problems.append(f"aws_cloudfront_distribution.{name}: a cache behaviour written in HCL, not made from {BEHAVIOURS}")
        got = [first(b.get("path_pattern")) for b in dist.get("ordered_cache_behavior", [])]
        if got != want:
            problems.append(f"aws_cloudfront_distribution.{name}: ordered behaviours {got}, {BEHAVIOURS} has {want}")
        if len(dist.get("default_cache_behavior", [])) != 1:
            problems.append(f"aws_cloudfront_distribution.{name}: {len(dist.get('default_cache_behavior', []))} default behaviours from {BEHAVIOURS}, want 1")
        ids = {first(o.get("origin_id")) for o in origins(dist)}
        for b in [doc["default"], *doc["ordered"]]:
            if b.get("origin") not in ids:
                problems.append(f"{BEHAVIOURS}: {b.get('pathPattern', 'default')} goes to origin {b.get('origin')!r}, not one of {sorted(ids)}")
        # What checkov may not see through the lookups (its CKV2_AWS_32 is skipped for this):
        # every behaviour has one of the module's response headers policies, and plain HTTP
        # reaches no origin.
        made = [("default", b) for b in dist.get("default_cache_behavior", [])]
        made += [(first(b.get("path_pattern")), b) for b in dist.get("ordered_cache_behavior", [])]
        for pattern, b in made:
            ref = re.fullmatch(r"\$\{aws_cloudfront_response_headers_policy\.(\w+)\.id\}", str(first(b.get("response_headers_policy_id"))))
            if not ref or ref.group(1) not in policies:
                problems.append(f"aws_cloudfront_distribution.{name} behaviour {pattern}: response headers policy {first(b.get('response_headers_policy_id'))!r} is not one of the module's")
            if first(b.get("viewer_protocol_policy")) not in ("https-only", "redirect-to-https"):
                problems.append(f"aws_cloudfront_distribution.{name} behaviour {pattern}: viewer_protocol_policy {first(b.get('viewer_protocol_policy'))!r}")
    checks.check(f"CloudFront behaviours = {BEHAVIOURS} ({len(want)} ordered and the default), in its order", problems)


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
    apis = http_apis(modules)
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
            dom = re.fullmatch(r"\$\{module\.(\w+)\.domain\}", out_value)
            api = next((a for a in apis if dom and a["module_dir"] == src_dir and a["call"] == dom.group(1)), None)
            if api is not None:
                binary = http_api_binary(api, deployments)
                if not api["creates"]:
                    problems.append(f"{where}: {arg} → {api['where']}, which makes no API (existing_api)")
                elif binary is None:
                    problems.append(f"{where}: {arg} → {api['where']}: cannot tell which Lambda it invokes (invoke_arn = module.X.invoke_arn)")
                else:
                    fronted.add(binary)
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

    # The HTTP APIs: modules/http_api's stage takes var.throttle, every call of it gives one, and a
    # route's own throttle (route map) is positive too (and only where the call makes the stage).
    stage = blocks(modules.get(HTTP_API, {}), "resource", "aws_apigatewayv2_stage").get("this", {})
    settings = (stage.get("default_route_settings") or [{}])[0]
    for key, field in (("throttling_rate_limit", "rate"), ("throttling_burst_limit", "burst")):
        if str(first(settings.get(key))) != f"${{var.throttle.{field}}}":
            problems.append(f"{HTTP_API} aws_apigatewayv2_stage.this: default_route_settings {key} is {first(settings.get(key))!r}, not var.throttle.{field}")
    for api in http_apis(modules):
        caller = modules[api["module_dir"]]
        throttles = [("throttle", first(api["args"].get("throttle")))] if api["creates"] else []
        count += 1 if api["creates"] else 0
        throttles += [(f"routes.{k}.throttle", r["throttle"]) for k, r in api["routes"].items() if isinstance(r, dict) and r.get("throttle") is not None]
        for where, throttle in throttles:
            if not api["creates"]:
                problems.append(f"{api['where']}: {where} on routes of an API made elsewhere: its stage's owner sets route throttles")
                continue
            if not isinstance(throttle, dict):
                problems.append(f"{api['where']}: {where} is {throttle!r}, not {{rate, burst}} (unthrottled)")
                continue
            for field in ("rate", "burst"):
                positive(api["module_dir"], caller, f"module.{api['call']}", f"{where}.{field}", throttle.get(field))

    for mod_dir, mod in modules.items():
        for name, stage in blocks(mod, "resource", "aws_apigatewayv2_stage").items():
            if mod_dir == HTTP_API:
                continue  # one stage per call, above
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
        # Nor may a caller switch it off (a literal ≤ 0 for a *throttle* argument; http_api's
        # calls are read above).
        for call_name, call in module_calls(mod).items():
            if module_dir(mod_dir, call) in (HTTP_API, HTTP_API_ROUTES):
                continue
            for arg, value in call.items():
                v = first(value)
                values = v.items() if isinstance(v, dict) else [(None, v)]
                for field, x in values:
                    if "throttle" in arg and isinstance(x, (int, float)) and not isinstance(x, bool) and x <= 0:
                        problems.append(f"{mod_dir} module.{call_name}: {arg}{'.' + field if field else ''} = {x}")
    if not count:
        problems.append("no API Gateway stage found")
    checks.check(f"every API Gateway stage is throttled ({count} stages)", problems)


CSP_REQUIRED = ("default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "base-uri 'none'")


def check_waiting_page_headers(checks: Checks, modules: dict) -> None:
    """The /vwr/* behavior answers with a strict CSP (nothing inline, no eval) and no framing."""
    problems = []
    edge = modules.get(EDGE, {})
    policies = blocks(edge, "resource", "aws_cloudfront_response_headers_policy")
    behaviors = [b for b in ordered_behaviours(modules) if first(b.get("path_pattern")) == "/vwr/*"]
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
    edge = modules.get(EDGE, {})
    fns = blocks(edge, "resource", "aws_cloudfront_function")
    behaviors = [b for b in ordered_behaviours(modules) if first(b.get("path_pattern")) == "/vwr/*"]
    if not behaviors:
        problems.append(f"no /vwr/* behaviour in {EDGE}")
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
    edge = modules.get(EDGE, {})
    dists = list(edge_distributions(modules)[0].values())
    ordered = [b for d in dists for b in d.get("ordered_cache_behavior", [])]
    patterns = [first(b.get("path_pattern")) for b in ordered]
    if patterns.count(STATUS_PATTERN) != 1:
        problems.append(f"expected one {STATUS_PATTERN} behavior in terraform/modules/edge, found {patterns.count(STATUS_PATTERN)}")
    elif "/vwr-api/*" not in patterns:
        problems.append("no /vwr-api/* behavior in terraform/modules/edge")
    else:
        if patterns.index(STATUS_PATTERN) > patterns.index("/vwr-api/*"):
            problems.append(f"{STATUS_PATTERN} comes after /vwr-api/*, which would take its requests (first match wins)")
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
        methods = flat(first(status.get("allowed_methods")))
        if set(methods) - {"GET", "HEAD"}:
            problems.append(f"{STATUS_PATTERN} allows {methods}: GET and HEAD suffice for a cached document")

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
    if STATUS_ROUTE not in tf_routes(modules.get("terraform/modules/tier1", {}), "public_api"):
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
    ordered = ordered_behaviours(modules)
    patterns = [first(b.get("path_pattern")) for b in ordered]
    line = [i for i, p in enumerate(patterns) if p == LINE_PATTERN]
    queue = [i for i, p in enumerate(patterns) if p == "/api/queue/*"]
    if not line:
        problems.append(f"no CloudFront behaviour for {LINE_PATTERN}")
    elif queue and line[0] > queue[0]:
        problems.append(f"{LINE_PATTERN} comes after /api/queue/*, which would take it uncached")
    else:
        content = ordered[line[0]]
        want = {
            "cache_policy_id": "${aws_cloudfront_cache_policy.status.id}",
            "origin_request_policy_id": "${aws_cloudfront_origin_request_policy.status.id}",
            "target_origin_id": "tier2-api",
        }
        for field, value in want.items():
            got = str(first(content.get(field)))
            if got != value:
                problems.append(f"{LINE_PATTERN}: {field} is {got!r}, not {value!r}")
    if LINE_ROUTE not in tf_routes(modules.get("terraform/modules/tier2", {}), "public_api"):
        problems.append(f"the tier-2 public API has no route {LINE_ROUTE}")
    checks.check(f"tier-2 line document: {LINE_PATTERN} before /api/queue/*, cached 1 s on the path alone", problems)


def check_release(checks: Checks, modules: dict) -> None:
    """POST /vwr-api/vwr/release/{eventId} reaches the tier-1 release route: the first
    CloudFront behaviour that matches it is /vwr-api/*'s, allows POST, and forwards the
    visitor's tier-1 cookie and x-vwr-token to the origin."""
    problems = []
    edge = modules.get(EDGE, {})
    local = locals_of(edge)
    ordered = ordered_behaviours(modules)

    def resolve(v):
        ref = re.fullmatch(r"\$\{local\.(\w+)\}", str(first(v)))
        return local.get(ref.group(1)) if ref else first(v)

    matching = [b for b in ordered if fnmatch.fnmatchcase(RELEASE_PATH, str(first(b.get("path_pattern"))))]
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
    if RELEASE_ROUTE not in tf_routes(modules.get("terraform/modules/tier1", {}), "public_api"):
        problems.append(f"the tier-1 public API has no route {RELEASE_ROUTE}")
    checks.check(f"early release: {RELEASE_PATH} → /vwr-api/* (POST allowed, tier-1 cookie and {RELEASE_HEADER} forwarded) → {RELEASE_ROUTE}", problems)


# The origins that read the viewer's own x-vwr-* headers (the request secret, a tier-1 token),
# which the edge verifier deletes (docs/invariants.md#25).
READS_VIEWER_X_VWR = ("waiting-page", "tier1-api", "tier2-api")


def check_verifier_behaviours(checks: Checks, modules: dict) -> None:
    """The edge verifier deletes the viewer's x-vwr-* headers (docs/invariants.md#25), so it
    runs, in both verifier variants, on the default behaviour and every ordered one except
    those whose origins read viewer x-vwr-* headers (READS_VIEWER_X_VWR: the waiting page, the
    tier-1 API, tier 2), which must never run it. `vwr dev` and the local proxies decide from
    the same behaviours.json."""
    problems = []
    variants = ("aws_cloudfront_function.verifier", "aws_lambda_function.lambda_edge")
    dists, _ = edge_distributions(modules)
    free = []
    for name, dist in dists.items():
        behaviours = [("default", b) for b in dist.get("default_cache_behavior", [])]
        behaviours += [(str(first(b.get("path_pattern"))), b) for b in dist.get("ordered_cache_behavior", [])]
        for pattern, b in behaviours:
            runs = [v for v in variants if v in str(b)]
            if first(b.get("target_origin_id")) in READS_VIEWER_X_VWR:
                free.append(pattern)
                if runs:
                    problems.append(f"{name} behaviour {pattern} runs the verifier ({runs}): it would delete the x-vwr-* headers its origin {first(b.get('target_origin_id'))} reads")
            elif len(runs) != len(variants):
                problems.append(f"{name} behaviour {pattern} runs {runs or 'no verifier'}: want both variants {list(variants)} (x-vwr-* viewer headers must be deleted there)")
    if not dists:
        problems.append(f"no aws_cloudfront_distribution in {EDGE}")
    checks.check(f"the edge verifier (x-vwr-* viewer headers deleted) on every behaviour but {', '.join(free)}", problems)
