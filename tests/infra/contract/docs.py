"""The docs: the README's routes map and size, docs/settings.md's variables, docs/data.md's
stored keys."""

from __future__ import annotations

import glob
import os
import re

from .common import Checks, rel
from .rust import (
    ENV_LITERAL,
    KEY_LITERAL,
    dynamo_key_builders,
    normalize_path,
    parse_routes,
    read_code,
    redis_key_builders,
)
from .tables import (
    DATA_DOC,
    DYNAMO_KEY_FILES,
    KEY_CODE_DIRS,
    PROTECT_RS,
    README,
    README_MAX_BYTES,
    README_MAX_LINES,
    REDIS_KEY_FILE,
    REDIS_LUA_HEADER,
    ROUTER_FILES,
    ROUTES_MAP_HEADING,
    SETTINGS_CODE_DIRS,
    SETTINGS_DOC,
    SETTINGS_PY_GLOBS,
    SETTINGS_SCRIPT_GLOBS,
)


ANY_ROUTE = re.compile(r'\.route\(\s*"([^"]+)"\s*,\s*(?:axum::routing::)?(get|post|put|delete|patch)\(')
METHOD_PATH = re.compile(r"^(?:(GET|POST|PUT|DELETE|PATCH) )?(/\S*)$")
GROUP = re.compile(r"\{([^{}]*,[^{}]*)\}")
FILE_TOKEN = re.compile(r"^[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+/?$")


def router_routes(root: str) -> dict[str, dict[str, set[str]]]:
    """Normalized path -> {method: {file}} over ROUTER_FILES (test modules cut)."""
    out: dict[str, dict[str, set[str]]] = {}
    for f in ROUTER_FILES:
        with open(os.path.join(root, f), encoding="utf-8") as fh:
            routes, _ = parse_routes(fh.read(), f)
        for r in routes:
            out.setdefault(normalize_path(r["path"]), {}).setdefault(r["method"], set()).add(f)
    return out


def expand_groups(path: str) -> list[str]:
    """`/a/{b,c}/{id}` -> [`/a/b/{id}`, `/a/c/{id}`]: a brace group with a comma is alternatives,
    one without is a path parameter."""
    m = GROUP.search(path)
    if not m:
        return [path]
    out = []
    for alt in m.group(1).split(","):
        out += expand_groups(path[: m.start()] + alt.strip() + path[m.end():])
    return out


def table_rows(lines: list[str]) -> list[list[str]]:
    """Cells of a Markdown table's body rows (header and separator skipped)."""
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines if line.lstrip().startswith("|")]
    return [r for r in rows[1:] if not all(set(c) <= set("-: ") for c in r)]


def section(text: str, heading: str) -> list[str] | None:
    """The lines under `heading` up to the next heading."""
    lines = text.splitlines()
    if heading not in lines:
        return None
    start = lines.index(heading) + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("#")), len(lines))
    return lines[start:end]


def check_readme_routes(root: str, checks: Checks) -> None:
    """Every route of the routers is in the README's routes → files map, every path there is
    served (or, `/…/**`, a prefix the protected-API authorizer knows), a method written beside
    a path is the router's, and every file the map names exists."""
    with open(os.path.join(root, README), encoding="utf-8") as fh:
        lines = section(fh.read(), ROUTES_MAP_HEADING)
    name = f"README routes → files map = the routers' routes ({', '.join(ROUTER_FILES)})"
    if lines is None:
        checks.check(name, [f"{README} has no {ROUTES_MAP_HEADING!r} section"])
        return
    served = router_routes(root)
    with open(os.path.join(root, PROTECT_RS), encoding="utf-8") as fh:
        found = re.search(r"PROTECTED_PREFIXES: \[&str; \d+\] = \[([^\]]*)\]", fh.read())
    protected = {p.strip().strip('"') for p in found.group(1).split(",") if p.strip()} if found else set()
    problems = [] if found else [f"{PROTECT_RS}: PROTECTED_PREFIXES not found"]
    named: set[str] = set()
    named_prefixes: set[str] = set()
    for row in table_rows(lines):
        for token in re.findall(r"`([^`]+)`", row[0]):
            m = METHOD_PATH.match(token)
            if not m:
                continue
            for path in expand_groups(m.group(2)):
                if path.endswith("/**"):
                    prefix = path[:-2]
                    named_prefixes.add(prefix)
                    if prefix not in protected:
                        problems.append(f"the map names {path}; the authorizer protects {sorted(protected)}")
                    continue
                key = normalize_path(path)
                named.add(key)
                if key not in served:
                    problems.append(f"the map names {path}, which no router serves")
                elif m.group(1) and m.group(1) not in served[key]:
                    problems.append(f"the map names {m.group(1)} {path}; the router serves it as {sorted(served[key])}")
        for cell in row[1:]:
            for token in re.findall(r"`([^`]+)`", cell):
                if FILE_TOKEN.match(token) and not os.path.exists(os.path.join(root, token)):
                    problems.append(f"the map names {token}, which does not exist")
    for key in sorted(set(served) - named):
        for method, files in sorted(served[key].items()):
            problems.append(f"{', '.join(sorted(files))} serves {method} {key}; the README's routes map does not name it")
    for prefix in sorted(protected - named_prefixes):
        problems.append(f"the authorizer protects {prefix}**; the README's routes map does not name it")
    checks.check(name, problems)


def check_readme_size(root: str, checks: Checks) -> None:
    """The README is a front door: what vwr is, the two commands, a short walk, the layout and
    the routes map, an index of docs/ — everything else is one link away."""
    with open(os.path.join(root, README), "rb") as fh:
        data = fh.read()
    size, lines = len(data), data.count(b"\n")
    problems = []
    if size > README_MAX_BYTES:
        problems.append(f"{README} is {size} bytes, over {README_MAX_BYTES}: move a section to docs/ and link it")
    if lines > README_MAX_LINES:
        problems.append(f"{README} is {lines} lines, over {README_MAX_LINES}: move a section to docs/ and link it")
    checks.check(f"{README} is a front door: ≤ {README_MAX_BYTES} bytes and ≤ {README_MAX_LINES} lines ({size} bytes, {lines} lines)", problems)


def check_settings_doc(root: str, checks: Checks) -> None:
    """docs/settings.md has exactly one table row (by its first cell) for every VWR_* variable the
    Rust code or the rehearsal's Python reads, and names no variable that nothing reads."""
    read: dict[str, str] = {}
    for d in SETTINGS_CODE_DIRS:
        for path in sorted(glob.glob(os.path.join(root, d, "**", "*.rs"), recursive=True)):
            with open(path, encoding="utf-8") as fh:
                for v in ENV_LITERAL.findall(fh.read()):
                    read.setdefault(v, rel(root, path))
    for pattern in SETTINGS_PY_GLOBS:
        for path in sorted(glob.glob(os.path.join(root, pattern))):
            with open(path, encoding="utf-8") as fh:
                for v in re.findall(r"[\"'](VWR_[A-Z0-9_]*[A-Z0-9])[\"']", fh.read()):
                    read.setdefault(v, rel(root, path))
    mentioned = set(read)
    for pattern in SETTINGS_SCRIPT_GLOBS:
        for path in glob.glob(os.path.join(root, pattern)):
            if os.path.isfile(path):
                with open(path, encoding="utf-8", errors="replace") as fh:
                    mentioned |= set(re.findall(r"\bVWR_[A-Z0-9_]*[A-Z0-9]\b", fh.read()))
    with open(os.path.join(root, SETTINGS_DOC), encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    rows: dict[str, int] = {}
    for row in table_rows(lines):
        for v in set(re.findall(r"\bVWR_[A-Z0-9_]*[A-Z0-9]\b", row[0])):
            rows[v] = rows.get(v, 0) + 1
    problems = [f"{v} (read in {read[v]}) has no row in {SETTINGS_DOC}" for v in sorted(set(read) - set(rows))]
    problems += [f"{v} has {n} rows in {SETTINGS_DOC}: keep one" for v, n in sorted(rows.items()) if n > 1]
    problems += [f"{SETTINGS_DOC} has a row for {v}, which no code or script reads" for v in sorted(set(rows) - mentioned)]
    checks.check(f"{SETTINGS_DOC}: one row per VWR_* variable the code reads ({len(read)} variables)", problems)


def doc_tables(lines: list[str]) -> list[tuple[list[str], list[list[str]]]]:
    """Every Markdown table of `lines`: its header cells (lowercase, backticks dropped) and rows."""
    out, block = [], []
    for line in lines + [""]:
        if line.lstrip().startswith("|"):
            block.append(line)
            continue
        if block:
            header = [c.strip().strip("`").lower() for c in block[0].strip().strip("|").split("|")]
            out.append((header, table_rows(block)))
            block = []
    return out


def first_code(cell: str) -> str | None:
    m = re.search(r"`([^`]+)`", cell)
    return m.group(1) if m else None


def check_data_doc(root: str, checks: Checks) -> None:
    """docs/data.md names every stored key: each key a builder makes has one row (DynamoDB: its
    pk / sk and the builder; Redis: the key, and for an event's key its `KEYS[i]`, name and type
    in the Lua header), each row's key is one a builder makes, and no other Rust source builds a
    key (no `"EVT#…"` or `"vwr:…"` literal outside the builders; tests aside)."""
    dynamo, problems = dynamo_key_builders(root)
    redis_keys, more = redis_key_builders(root)
    problems += more
    with open(os.path.join(root, REDIS_LUA_HEADER), encoding="utf-8") as fh:
        lua = {int(i): (name, kind) for i, name, kind in
               re.findall(r"^--\s+KEYS\[(\d+)\]\s+(\w+)\s+(ZSET|HASH|LIST|SET)\b", fh.read(), re.M)}
    with open(os.path.join(root, DATA_DOC), encoding="utf-8") as fh:
        text = fh.read()
    built = {(pk, sk): name for name, (_, pk, sk) in dynamo.items()}
    documented: dict[tuple[str, str], int] = {}
    redis_documented: dict[str, int] = {}
    for header, rows in doc_tables(text.splitlines()):
        if {"pk", "sk", "built by"} <= set(header):
            cols = {h: header.index(h) for h in ("pk", "sk", "built by")}
            for row in rows:
                pk, sk, fn = (first_code(row[cols[h]]) if len(row) > cols[h] else None for h in ("pk", "sk", "built by"))
                documented[(pk, sk)] = documented.get((pk, sk), 0) + 1
                if (pk, sk) not in built:
                    problems.append(f"{DATA_DOC} has a row for {pk} / {sk}, which no key builder makes")
                elif fn != built[(pk, sk)]:
                    problems.append(f"{DATA_DOC}: {pk} / {sk} is built by {built[(pk, sk)]}, the row says {fn}")
        elif {"key", "lib.lua", "type"} <= set(header):
            ck, cl, ct = header.index("key"), header.index("lib.lua"), header.index("type")
            for row in rows:
                key = first_code(row[ck])
                redis_documented[key] = redis_documented.get(key, 0) + 1
                if key not in redis_keys:
                    problems.append(f"{DATA_DOC} has a row for {key}, which {REDIS_KEY_FILE} does not build")
                    continue
                i = redis_keys[key]
                if i == 0:
                    continue
                named = re.search(r"KEYS\[(\d+)\]`?\s*(\w+)?", row[cl])
                name, kind = lua.get(i, ("?", "?"))
                if not named or int(named.group(1)) != i or named.group(2) != name:
                    problems.append(f"{DATA_DOC}: {key} is KEYS[{i}] {name} in {REDIS_LUA_HEADER}, the row says {row[cl]!r}")
                if row[ct].strip("` ") != kind:
                    problems.append(f"{DATA_DOC}: {key} is a {kind} in {REDIS_LUA_HEADER}, the row says {row[ct]!r}")
    for (pk, sk), name in sorted(built.items()):
        if documented.get((pk, sk), 0) != 1:
            problems.append(f"{name} builds {pk} / {sk}: {DATA_DOC} has {documented.get((pk, sk), 0)} rows for it, keep one")
    for key, i in sorted(redis_keys.items()):
        if redis_documented.get(key, 0) != 1:
            problems.append(f"{REDIS_KEY_FILE} builds {key}: {DATA_DOC} has {redis_documented.get(key, 0)} rows for it, keep one")
    if len(lua) != sum(1 for i in redis_keys.values() if i):
        problems.append(f"{REDIS_LUA_HEADER} names {len(lua)} KEYS, {REDIS_KEY_FILE} builds {sum(1 for i in redis_keys.values() if i)}")
    for name in ("event_keys", "EVENTS_KEY"):
        if f"`{name}`" not in text:
            problems.append(f"{DATA_DOC} does not name {name}, the Redis key builder")
    allowed = set(DYNAMO_KEY_FILES) | {REDIS_KEY_FILE}
    for d in KEY_CODE_DIRS:
        for path in sorted(glob.glob(os.path.join(root, d, "**", "*.rs"), recursive=True)):
            where = rel(root, path)
            if where in allowed or "/tests/" in f"/{where}":
                continue
            for n, line in enumerate(read_code(path).splitlines(), 1):
                if not line.lstrip().startswith("//") and KEY_LITERAL.search(line):
                    problems.append(f"{where}:{n} builds a stored key outside the key builders: {line.strip()}")
    checks.check(f"{DATA_DOC} names every stored key and its builder ({len(built)} DynamoDB items, {len(redis_keys)} Redis keys), and nothing else builds one", problems)
