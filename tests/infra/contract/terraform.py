"""Reading the Terraform: the .tf files parsed (python-hcl2); modules, blocks, locals and the
Lambda deployments; the evaluation of dynamic blocks and for_each maps; checkov skip reasons."""

from __future__ import annotations

import ast
import glob
import json
import os
import re

import hcl2

from .common import Checks, rel
from .rust import normalize_path


def parse_tf(root: str, on_doc=None) -> tuple[dict[str, dict], list[str], int]:
    """Directory (relative) -> merged parse of its .tf files, the parse problems, and how many
    files; `on_doc(path, doc)` sees each file's parse first (tf_schema.py tags its blocks). A
    local `jsondecode(file("${path.module}/F"))` is F's JSON (read_json_locals)."""
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
    for dirname, mod in modules.items():
        problems += read_json_locals(root, dirname, mod)
    return modules, problems, len(files)


JSON_FILE_LOCAL = re.compile(r'^\$\{jsondecode\(file\("\$\{path\.module\}/([^"$]+)"\)\)\}$')


def read_json_locals(root: str, mod_dir: str, mod: dict) -> list[str]:
    """Puts in place of each local `jsondecode(file("${path.module}/F"))` of the module (mod_dir
    relative to root) F's JSON, as Terraform reads it; the problems reading them."""
    problems = []
    for block in mod.get("locals", []):
        for name, value in block.items():
            m = JSON_FILE_LOCAL.match(str(first(value)))
            if not m:
                continue
            path = os.path.join(root, mod_dir, m.group(1))
            try:
                with open(path, encoding="utf-8") as fh:
                    block[name] = [json.load(fh)]
            except (OSError, ValueError) as e:
                problems.append(f"{mod_dir} local.{name}: {rel(root, path)}: {e}")
    return problems


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


# An HTTP API in front of one Lambda (the API, its stage and access log), and the routes to that
# Lambda (integration, routes, authorizers, invoke permissions), which HTTP_API calls for its API
# and tier 2 for its admin routes on tier 1's admin API.
HTTP_API = "terraform/modules/http_api"
HTTP_API_ROUTES = "terraform/modules/http_api/routes"


def route_maps(mod: dict, call_name: str) -> dict[str, dict]:
    """The route map (name → {route_key, authorization, …}) a module gives to its
    terraform/modules/http_api call `call_name`; {} when there is no such call."""
    routes = first(module_calls(mod).get(call_name, {}).get("routes"))
    return {k: v for k, v in routes.items() if not k.startswith("__")} if isinstance(routes, dict) else {}


def route_key(key: str) -> str:
    """A route key with its path parameters normalised (`POST /vwr/assign/{}`)."""
    method, path = key.split(" ", 1)
    return f"{method} {normalize_path(path)}"


def tf_routes(mod: dict, call_name: str) -> set[str]:
    """The route keys of one http_api call, path parameters normalised."""
    return {route_key(str(first(r.get("route_key")))) for r in route_maps(mod, call_name).values() if isinstance(r, dict)}


def http_apis(modules: dict) -> list[dict]:
    """Every call of HTTP_API, and of HTTP_API_ROUTES but HTTP_API's own: where it is, its route
    map, whether it makes the API (HTTP_API) or adds routes to one, the module call of the Lambda
    it invokes (`module.X.invoke_arn`)."""
    out = []
    calls = [(c, HTTP_API) for c in calls_of(modules, HTTP_API)]
    calls += [(c, HTTP_API_ROUTES) for c in calls_of(modules, HTTP_API_ROUTES) if c[0] != HTTP_API]
    for (caller, name, call), target in calls:
        m = re.fullmatch(r"\$\{module\.(\w+)\.invoke_arn\}", str(first(call.get("invoke_arn"))))
        out.append(
            {
                "where": f"{caller} module.{name}",
                "module_dir": caller,
                "call": name,
                "args": call,
                "routes": route_maps(modules[caller], name),
                "creates": target == HTTP_API,
                "lambda": m.group(1) if m else None,
            }
        )
    return out


def http_api_binary(api: dict, deployments: list[dict]) -> str | None:
    """The binary of the Lambda an http_api call invokes (None when it is not a module lambda
    call of the same module)."""
    for d in deployments:
        if d["module_dir"] == api["module_dir"] and d["call"] == api["lambda"]:
            return d["binary"]
    return None


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
#     reads its keys);
#   * a local read from a JSON file of the module, `jsondecode(file("${path.module}/F"))`
#     (parse_tf puts F's JSON in its place), and paths into it: for_each = local.NAME.field…, a list of such
#     references (`[local.behaviours.default]`), or `[for x in local.NAME.field… : x if …]`
#     (every element, as if the `if` held);
#   * `local.MAP[it.value.field]` (a literal map of the module's locals, indexed by an iterator
#     reference or a quoted key), as a for_each or alone in the content: the map's entry.

HCL_PURE_REF = re.compile(r"^\$\{([A-Za-z_]\w*(?:\.[A-Za-z_][\w-]*)*)\}$")
HCL_TEMPLATE_REF = re.compile(r"\$\{([A-Za-z_]\w*(?:\.[A-Za-z_][\w-]*)*)\}")
HCL_NULL_TEST = re.compile(r"^\$\{(\S+) (==|!=) None \? (\[\]|\[(.+)\]) : (\[\]|\[(.+)\])\}$")
HCL_INDEX = re.compile(r"^\$\{local\.(\w+)\[([A-Za-z_]\w*(?:\.[A-Za-z_][\w-]*)*|'[^']*'|\"[^\"]*\")\]\}$")
HCL_FOR_ALL = re.compile(r"^\$\{\[for (\w+) in ([A-Za-z_][\w.-]*) : (\w+)(?: if .*)?\]\}$", re.S)


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


def hcl_local(path: str, local: dict | None):
    """(True, value) of `local.NAME.field…` with NAME in local (a missing field of a map read
    is an error); (False, None) otherwise."""
    parts = path.split(".")
    if local is None or parts[0] != "local" or len(parts) < 2 or parts[1] not in local:
        return False, None
    v = local[parts[1]]
    for p in parts[2:]:
        if not isinstance(v, dict):
            return False, None
        if p not in v:
            raise HclError(f"{path}: no field {p!r} in local.{parts[1]}")
        v = v[p]
    return True, v


def hcl_ref(text, env: dict, local: dict | None):
    """(True, value) of '${…}' text that is an iterator reference, a path into a local, or
    `local.MAP[key]` (key an iterator reference or quoted); (False, None) for anything else."""
    if not isinstance(text, str):
        return False, None
    m = HCL_PURE_REF.match(text)
    if m:
        found, value = hcl_lookup(m.group(1), env)
        return (found, value) if found else hcl_local(m.group(1), local)
    m = HCL_INDEX.match(text)
    if not m or local is None or not isinstance(local.get(m.group(1)), dict):
        return False, None
    key = m.group(2)
    if key[0] in "'\"":
        found, key = True, key[1:-1]
    else:
        found, key = hcl_lookup(key, env)
    if not found:
        return False, None
    table = local[m.group(1)]
    if not isinstance(key, str) or key not in table:
        raise HclError(f"{text}: no entry {key!r} in local.{m.group(1)} ({sorted(k for k in table if not k.startswith('__'))})")
    return True, table[key]


def hcl_operand(text: str, env: dict):
    """(True, value) of a for_each operand: an iterator reference, bare or as '${…}'."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    m = HCL_PURE_REF.match(text)
    return hcl_lookup(m.group(1) if m else text, env)


def hcl_subst(v, env: dict, local: dict | None = None):
    """v with the iterator references of env replaced, recursively, and with local given, each
    `local.MAP[key]` by the map's entry (other references to locals stay text)."""
    if isinstance(v, dict):
        return {k: hcl_subst(x, env, local) for k, x in v.items()}
    if isinstance(v, list):
        return [hcl_subst(x, env, local) for x in v]
    if not isinstance(v, str) or "${" not in v:
        return v
    m = HCL_PURE_REF.match(v)
    if m:
        found, value = hcl_lookup(m.group(1), env)
        return value if found else v
    if HCL_INDEX.match(v):
        found, value = hcl_ref(v, env, local)
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
    if isinstance(expr, list):
        values = []
        for x in expr:
            found, value = hcl_ref(x, env, local)
            values.append(value if found else x)
        return hcl_items(values)
    if not isinstance(expr, str):
        return hcl_items(expr)
    found, value = hcl_ref(expr, env, local)
    if found:
        return hcl_items(value)
    m = HCL_FOR_ALL.match(expr)
    if m and m.group(1) == m.group(3):
        found, value = hcl_ref("${" + m.group(2) + "}", env, local)
        return hcl_items(value) if found and isinstance(value, list) else None
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
                        kept.append({name: {**hcl_subst({k: x for k, x in spec.items() if k != "content"}, env, local), "content": [expand_dynamic(c, local, env) for c in contents]}})
                        continue
                    it = re.sub(r"^\$\{(\w+)\}$", r"\1", str(first(spec.get("iterator")) or name))
                    for k, value in items:
                        for c in contents:
                            made.setdefault(name, []).append(expand_dynamic(c, local, {**env, it: {"key": k, "value": value}}))
        elif isinstance(v, list) and v and all(isinstance(b, dict) for b in v):
            out[key] = [expand_dynamic(b, local, env) for b in v]
        else:
            out[key] = hcl_subst(v, env, local)
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


def hcl_keys(v, local: dict, variables: dict | None = None) -> list[str] | None:
    """The keys of a map expression as python-hcl2 gives it, or None when they cannot be read:
    a literal map, local.NAME, merge(…) of maps, `cond ? A : B` (both, as if either held),
    `{ for k, v in MAP : KEY => … }` (any `if`, as if it held) with KEY `k` or a template of
    it; var.NAME where `variables` (a module call's arguments) has it, null as no keys. An operand
    that cannot be read makes the whole None."""
    if isinstance(v, dict):
        return [k for k in v if not k.startswith("__")]
    if not isinstance(v, str):
        return None
    t = v.strip()
    if t.startswith("${") and hcl_wrapped(t[1:]):
        t = t[2:-1].strip()
    m = re.fullmatch(r"local\.(\w+)", t)
    if m:
        return hcl_keys(local[m.group(1)], local, variables) if m.group(1) in local else None
    m = re.fullmatch(r"var\.(\w+)", t)
    if m:
        if variables is None or m.group(1) not in variables:
            return None
        value = first(variables[m.group(1)])
        return [] if value is None else hcl_keys(value, local, variables)
    m = re.fullmatch(r"merge(\(.*\))", t, re.S)
    if m and hcl_wrapped(m.group(1)):
        out: list[str] = []
        for arg in hcl_split(m.group(1)[1:-1], ","):
            keys = hcl_keys(arg, local, variables)
            if keys is None:
                return None
            out += [k for k in keys if k not in out]
        return out
    cond = hcl_split(t, " ? ")
    if len(cond) == 2 and len(hcl_split(cond[1], " : ")) == 2:
        a, b = (hcl_keys(x, local, variables) for x in hcl_split(cond[1], " : "))
        return None if a is None or b is None else a + [k for k in b if k not in a]
    m = re.fullmatch(r"\{for (\w+) , \w+ in (.*)\}", t, re.S)
    if m:
        head = hcl_split(m.group(2), " : ")
        arrow = hcl_split(" : ".join(head[1:]), " => ")
        source = hcl_keys(head[0], local, variables)
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


# --- moved blocks ---------------------------------------------------------------------------------

MOVED_ADDRESS = re.compile(r'^\$\{((?:module\.\w+\.)*)(\w+)\.(\w+)(?:\[(?:"([^"]*)"|(\d+))\])?\}$')


def check_moved(checks: Checks, modules: dict) -> None:
    """Every `moved` block moves an address no longer declared to an instance the module makes:
    `to` names a resource declared in this module or in a module it calls (module.X.…, nested),
    with for_each for a ["key"] instance (a key its for_each makes, when that can be read: a map of
    the module, or of the call's arguments), count for [n], and neither for a plain address."""
    problems = []
    count = 0

    def resolve(mod_dir: str, path: str, type_: str, name: str) -> tuple[dict | None, dict | None, dict]:
        """(body of the resource, arguments of the call that reaches it, its module) at path."""
        args = None
        for call_name in re.findall(r"module\.(\w+)\.", path):
            call = module_calls(modules.get(mod_dir, {})).get(call_name)
            if call is None:
                return None, None, {}
            # An argument `var.X` is the outer call's X (left out when that is not known).
            outer, args = args, {}
            for k, v in call.items():
                ref = re.fullmatch(r"\$\{var\.(\w+)\}", str(first(v)))
                if not ref:
                    args[k] = v
                elif outer is not None and ref.group(1) in outer:
                    args[k] = outer[ref.group(1)]
            mod_dir = module_dir(mod_dir, call)
        mod = modules.get(mod_dir, {})
        return blocks(mod, "resource", type_).get(name), args, mod

    for mod_dir, mod in sorted(modules.items()):
        for block in mod.get("moved", []):
            count += 1
            frm, to = (MOVED_ADDRESS.match(str(first(block.get(k)))) for k in ("from", "to"))
            label = f"{mod_dir} moved {str(first(block.get('from')))[2:-1]} → {str(first(block.get('to')))[2:-1]}"
            if not frm or not to:
                problems.append(f"{label}: not resource addresses")
                continue
            if resolve(mod_dir, *frm.group(1, 2, 3))[0] is not None:
                problems.append(f"{label}: {frm.group(1)}{frm.group(2)}.{frm.group(3)} is still declared")
            body, args, target = resolve(mod_dir, *to.group(1, 2, 3))
            if body is None:
                problems.append(f"{label}: {to.group(1)}{to.group(2)}.{to.group(3)} is not declared")
                continue
            key, index = to.group(4), to.group(5)
            if key is not None:
                keys = hcl_keys(first(body.get("for_each")), locals_of(target), args) if "for_each" in body else None
                if "for_each" not in body:
                    problems.append(f"{label}: a [\"{key}\"] instance of a resource without for_each")
                elif keys is not None and key not in keys:
                    problems.append(f"{label}: its for_each makes {keys}, not {key!r}")
            elif index is not None and "count" not in body:
                problems.append(f"{label}: a [{index}] instance of a resource without count")
    checks.check(f"moved blocks move addresses no longer declared to instances the modules make ({count} moves)", problems)


# --- checkov skip reasons -------------------------------------------------------------------------

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
