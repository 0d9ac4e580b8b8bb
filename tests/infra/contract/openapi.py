"""docs/openapi.yaml against the routers' routes, validated as OpenAPI 3.1."""

from __future__ import annotations

import os
import re

from .common import Checks
from .rust import router_operations
from .tables import OPENAPI_ADMIN_SCHEME, OPENAPI_DOC, OPENAPI_METHODS, OPENAPI_ROUTER_DIRS


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
