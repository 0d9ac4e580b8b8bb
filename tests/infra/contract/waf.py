"""The web ACL at the edge: managed rule groups, per-IP rate rules, and the tier-2 poll rate
of the visitors behind one address."""

from __future__ import annotations

import os
import re

from .common import Checks
from .rust import rust_routes, strip_tests
from .tables import (
    TIER1_EDGE_PREFIX,
    TIER2_ANSWERS,
    TIER2_QUEUED_HINTS,
    TIER2_REQUESTS_PER_POLL,
    WAF_MANAGED_GROUPS,
    WAF_MIN_LIMIT,
    WAF_QUEUE_NAT_VISITORS,
    WAF_RATE_RULES,
    WAF_WINDOW_SECONDS,
)
from .terraform import HclError, blocks, calls_of, expand_dynamic, first, locals_of, var_default


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
