"""Reading the Rust sources: what each crate reads and calls, the Cargo manifests, the key
builders, and a small lexer (comments, strings, balanced calls) for the routers' routes."""

from __future__ import annotations

import glob
import os
import re
import tomllib

from .common import rel
from .tables import (
    CRATES,
    DYNAMO_KEY_FILES,
    OPENAPI_METHODS,
    OPENAPI_ROUTER_DIRS,
    REDIS_KEY_FILE,
    SDK_ACTIONS,
    TRANSACTION_ITEMS,
    TX_BUILDER,
)


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


# --- The key builders (docs.check_data_doc, iam.check_tier2_writes) -------------------------------

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


# --- The routers' routes, read with a small lexer (openapi.check_openapi) -------------------------

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
