"""The docs: the README's routes map and size, docs/settings.md's variables, docs/data.md's
stored keys, citations of a Markdown section, the count of invariants stated in prose, the
words of the tracked Markdown."""

from __future__ import annotations

import glob
import os
import re
import subprocess
import unicodedata

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
    INVARIANTS_DOC,
    KEY_CODE_DIRS,
    MARKDOWN_MAX_WORDS,
    PROSE_EXTS,
    PROSE_SKIP_DIRS,
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


def prose_files(root: str) -> list[str]:
    """Every text file the docs checks read (PROSE_EXTS, outside PROSE_SKIP_DIRS), sorted."""
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in PROSE_SKIP_DIRS)
        out += [os.path.join(d, f) for f in sorted(files) if f.endswith(PROSE_EXTS)]
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text: links and tags reduced to their text, lowercase,
    every character but letters, marks, digits, `_`, `-` and spaces dropped, spaces → `-`."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    keep = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LMN")
    return keep.replace(" ", "-")


def markdown_anchors(text: str) -> tuple[set[str], set[str]]:
    """The anchors GitHub gives a Markdown file — each heading's slug (a repeated one gets -1,
    -2, …; fenced code skipped), and explicit `<a id|name="…">` — and the slugs of its bold
    run-in labels (a line opening with `**Label**`), which a citation by name may name too."""
    out: set[str] = set()
    labels: set[str] = set()
    seen: dict[str, int] = {}
    fence = False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
            continue
        if fence:
            continue
        m = re.match(r"^#{1,6}\s+(.*?)(?:\s+#+)?\s*$", line)
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else f"{s}-{n}")
        label = re.match(r"^\s*(?:[-*+]\s+)?\*\*([^*]+)\*\*", line)
        if label:
            labels.add(slug(label.group(1)))
    out |= set(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", text))
    return out, labels


# A citation of a section: a Markdown link `[…](….md#…)` (relative to the citing file); a bare
# `….md#…` or `README#…`; or a heading by its name, `….md, "…"`, `README "…"`, `README's "…"`,
# `README.md ("…")`, which names a heading or a bold run-in label by its first words (a quote may
# wrap to the next line of a comment).
CITE_LINK = re.compile(r"\]\(([^()\s#]*\.md)#([^)\s]+)\)")
CITE_PATH = r"(?<![\w./-])(?<!\]\()((?:[\w.-]+/)*(?:[\w.-]+\.md|README))"
CITE_BARE = re.compile(rf"{CITE_PATH}#([\w-]+)")
CITE_NAME = re.compile(rf"{CITE_PATH}(?:'s)?(?:,\s*|\s+\(?|\()[\"“]([^\"”\n]+)([\"”]?)")


def resolve_cited(root: str, citing: str, target: str, bare: bool) -> str | None:
    """The file a citation names: a link's target is relative to the citing file; a bare name is
    relative to the repository's root, else to the citing file's directory or one above it."""
    if not target.endswith(".md"):
        target += ".md"
    here = os.path.dirname(citing)
    if not bare:
        path = os.path.normpath(os.path.join(here, target))
        return path if os.path.isfile(path) else None
    tries = [root]
    while True:
        tries.append(here)
        if os.path.normpath(here) == os.path.normpath(root) or here in ("", os.sep):
            break
        here = os.path.dirname(here)
    for base in tries:
        path = os.path.normpath(os.path.join(base, target))
        if os.path.isfile(path):
            return path
    return None


def citation_problems(root: str, files: list[str]) -> tuple[list[str], int]:
    """Each citation of a Markdown section in `files` whose file or section does not exist, and
    how many citations were read. An anchor or name without a letter or digit, or of one capital
    letter (`#N`), is a placeholder, not a citation."""
    anchors: dict[str, tuple[set[str], set[str]]] = {}
    problems, count = [], 0
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
        for n, line in enumerate(lines, 1):
            cites = [(t, a, False, "#") for t, a in CITE_LINK.findall(line)]
            cites += [(t, a, True, "#") for t, a in CITE_BARE.findall(line)]
            cites += [(t, name.strip(), True, "name") for t, name, _ in CITE_NAME.findall(line)]
            for target, anchor, bare, how in cites:
                if re.fullmatch(r"[A-Z]|\W*", anchor):
                    continue
                count += 1
                where = f"{rel(root, path)}:{n}"
                shown = f"{target}#{anchor}" if how == "#" else f'{target} "{anchor}"'
                found = resolve_cited(root, path, target, bare)
                if found is None:
                    problems.append(f"{where} cites {shown}: no such file")
                    continue
                if found not in anchors:
                    with open(found, encoding="utf-8", errors="replace") as fh:
                        anchors[found] = markdown_anchors(fh.read())
                headings, labels = anchors[found]
                if how == "#":
                    ok = anchor in headings
                else:
                    want = slug(anchor)
                    ok = any(a == want or a.startswith(want + "-") for a in headings | labels)
                if not ok:
                    problems.append(f"{where} cites {shown}: {rel(root, found)} has no such section")
    return problems, count


def check_citations(root: str, checks: Checks) -> None:
    """Every citation of a Markdown section — docs/, the READMEs, any `.md` — in the code and the
    docs names a file and a heading that exist (GitHub's anchors)."""
    problems, count = citation_problems(root, prose_files(root))
    checks.check(f"citations of a Markdown section (`….md#…`, `README \"…\"`) name a heading that exists ({count} citations)", problems)


NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen".split())}
NUMBER_WORDS.update({w: 10 * i for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)})
TENS = "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
COUNT_WORD = rf"\d+|(?:{TENS})(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?|{'|'.join(sorted(NUMBER_WORDS, key=len, reverse=True))}"
STATED_COUNT = re.compile(rf"\b({COUNT_WORD})\s+(?:numbered\s+)?(?:rules|invariants)\b", re.I)


def number(text: str) -> int:
    """`29`, `twenty-nine`, `twenty nine`, `fourteen` → the number."""
    if text.isdigit():
        return int(text)
    return sum(NUMBER_WORDS[w] for w in re.split(r"[- ]", text.lower()))


def prose_units(text: str) -> list[tuple[int, str]]:
    """Paragraphs (first line number, text): blank lines part them, and each table row, list
    item and heading starts one of its own."""
    units: list[tuple[int, list[str]]] = []
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            units.append((n, []))
            continue
        if not units or re.match(r"^(?:\||[-*+] |#|\d+\. )", stripped):
            units.append((n, []))
        units[-1][1].append(stripped)
    return [(n, " ".join(ls)) for n, ls in units if ls]


def stated_count_problems(root: str, files: list[str], rules: int) -> list[str]:
    """Each paragraph that speaks of the invariants and states how many rules there are ("the
    N rules", "N invariants", N in digits or words) with a count other than `rules`."""
    problems = []
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for n, unit in prose_units(text):
            if "invariant" not in unit.lower():
                continue
            for m in STATED_COUNT.finditer(unit):
                if number(m.group(1)) != rules:
                    problems.append(f"{rel(root, path)}:{n} says {m.group(0)!r}; {INVARIANTS_DOC} has {rules} (its `## N` headings)")
    return problems


def invariant_rules(text: str) -> list[int]:
    """The numbers of docs/invariants.md's rules: its `## N` headings."""
    return [int(n) for n in re.findall(r"^## (\d+)\s*$", text, re.M)]


def check_invariant_counts(root: str, checks: Checks) -> None:
    """A count of the invariants stated in any Markdown file (in digits or words) is the number of
    rules docs/invariants.md has, and those are numbered 1…N."""
    with open(os.path.join(root, INVARIANTS_DOC), encoding="utf-8") as fh:
        numbers = invariant_rules(fh.read())
    problems = [] if numbers == list(range(1, len(numbers) + 1)) else [f"{INVARIANTS_DOC}: the rules are numbered {numbers}, not 1…{len(numbers)}"]
    markdown = [p for p in prose_files(root) if p.endswith(".md")]
    problems += stated_count_problems(root, markdown, len(numbers))
    checks.check(f"every count of the invariants stated in Markdown = the {len(numbers)} rules of {INVARIANTS_DOC}", problems)


def markdown_words(root: str) -> tuple[dict[str, int], str]:
    """Words of each tracked Markdown file (`git ls-files "*.md"`), counted as `wc -w` does:
    runs of bytes between ASCII whitespace; and, when git cannot list them (no repository, no
    git), why — then every `.md` file outside PROSE_SKIP_DIRS counts instead."""
    try:
        listed = subprocess.run(["git", "-C", root, "ls-files", "-z", "--", "*.md"], capture_output=True, check=False)
        error = listed.stderr.decode("utf-8", "replace").strip() if listed.returncode else ""
    except OSError as e:
        listed, error = None, str(e)
    if listed is None or error:
        names = [rel(root, p) for p in prose_files(root) if p.endswith(".md")]
    else:
        names = [n.decode("utf-8", "replace") for n in listed.stdout.split(b"\0") if n]
    words = {}
    for name in sorted(names):
        path = os.path.join(root, name)
        if os.path.isfile(path):
            with open(path, "rb") as fh:
                words[name] = len(fh.read().split())
    return words, error


def check_markdown_words(root: str, checks: Checks) -> None:
    """The tracked Markdown stays under MARKDOWN_MAX_WORDS words (`wc -w`): a topic has one
    home and the other files link it."""
    words, error = markdown_words(root)
    which = "tracked Markdown" if not error else "Markdown (no git listing: every .md file)"
    total = sum(words.values())
    problems = []
    if total >= MARKDOWN_MAX_WORDS:
        largest = sorted(words.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
        problems.append(
            f"{which}: {len(words)} files hold {total} words, not under {MARKDOWN_MAX_WORDS}: "
            f"cut a retold topic to a sentence and a link (largest: {', '.join(f'{n} {w}' for n, w in largest)})"
        )
    checks.check(f"{which} under {MARKDOWN_MAX_WORDS} words ({total} words in {len(words)} files)", problems)
