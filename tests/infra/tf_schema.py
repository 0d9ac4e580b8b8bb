#!/usr/bin/env python3
"""terraform/ checked against the providers' schemas, without Terraform or a provider binary.

    python3 tests/infra/tf_schema.py [--root DIR] [--cache DIR]   (tests/infra/run.sh runs it)

Where the schemas come from: the prebuilt CDKTF bindings on npm (@cdktf/provider-aws, …), one
pinned package per provider in tests/infra/tf-schema.lock.json with its sha512 integrity. Each
package is generated from `terraform providers schema -json` of one provider release (its
package.json says which: cdktf.provider.version) and ships a jsii assembly (`package/.jsii`,
JSON) that lists, for every resource and data source, a class and its config struct:
  * the class's doc links to the registry page docs/resources/TYPE or docs/data-sources/TYPE,
    named TYPE (`aws_s3_bucket_versioning`): that is the Terraform type;
  * each property of the config struct is one argument or block; its doc links to
    `…#snake_name`, the Terraform name (the camelCase property name, `versioningConfiguration`,
    is only a fallback: cdktf renames names that clash with its own, the anchor keeps the real
    one); `optional` absent means required (a block with min_items ≥ 1 too); a block's doc
    summary is "NAME block." and its type is (a list of) another struct, the block's schema;
    computed-only attributes are not there (they cannot be set);
  * the provider class (base cdktf.TerraformProvider) has the provider block's config struct.
Meta-arguments (count, for_each, depends_on, provider, lifecycle, …) come from cdktf's own
interface, not from the struct, so they are listed here. Not checked: the content of the few
blocks the bindings type as `any` (too deep for them: wafv2 rule `statement`, quicksight
`definition`) and of nested attributes (`x = { … }`); their names are.

The package (34 MB for aws, its .jsii 120 MB) is downloaded from the npm registry
(npm_config_registry, else registry.npmjs.org) once, checked against the pinned integrity, and
reduced to a few MB of JSON cached in --cache (target/tf-schema by default): later runs need no
network.

Checks: every resource and data type exists; every argument and block of each resource, data
and provider block is known, dynamic blocks' content included; required arguments and blocks are
there (a block by a dynamic block too); every input of a call to a local module is a variable
of that module, and every variable without a default is passed; the pinned provider release
satisfies the version constraint of every versions.tf that requires the provider.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import re
import sys
import tarfile
import tempfile
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from contract import Checks, first, parse_tf, rel  # noqa: E402

LOCK = os.path.join(HERE, "tf-schema.lock.json")
FORMAT = 1  # of the cached JSON; bump when extract() changes

RESOURCE_META = {"count", "for_each", "depends_on", "provider", "lifecycle", "connection", "provisioner"}
DATA_META = {"count", "for_each", "depends_on", "provider", "lifecycle"}
PROVIDER_META = {"alias"}
MODULE_META = {"source", "version", "providers", "count", "for_each", "depends_on"}
LIFECYCLE = {"create_before_destroy", "prevent_destroy", "ignore_changes", "replace_triggered_by", "precondition", "postcondition"}
DYNAMIC = {"for_each", "iterator", "labels", "content"}


# --- schema: pinned package → compact JSON ------------------------------------------------------


def load_lock(path: str = LOCK) -> dict:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)["providers"]


def tarball_url(package: str, version: str) -> str:
    registry = os.environ.get("npm_config_registry") or "https://registry.npmjs.org/"
    base = package.split("/")[-1]
    return f"{registry.rstrip('/')}/{package}/-/{base}-{version}.tgz"


def download(pin: dict, dest: str) -> None:
    """The pinned tarball to dest, refused unless its sha512 matches the lock's integrity."""
    algo, want = pin["integrity"].split("-", 1)
    h = hashlib.new(algo)
    with urllib.request.urlopen(tarball_url(pin["package"], pin["package_version"]), timeout=120) as r, open(dest, "wb") as out:
        while chunk := r.read(1 << 20):
            h.update(chunk)
            out.write(chunk)
    got = base64.b64encode(h.digest()).decode()
    if got != want:
        raise ValueError(f"{pin['package']}@{pin['package_version']}: integrity {algo}-{got}, lock says {pin['integrity']}")


DOC_TYPE = re.compile(r"/docs/(resources|data-sources)/\w+ (\w+)\}")
DOC_ANCHOR = re.compile(r"\{@link https://registry\.terraform\.io/\S+#(\w+) ")


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def extract(assembly: dict) -> dict:
    """Resource, data source and provider schemas of a jsii assembly (see the module doc):
    structs are {terraform name: [required 0/1, block 0/1, struct id of a block or null]}."""
    types = assembly["types"]
    prefix = assembly["name"] + "."
    structs: dict[str, dict] = {}

    def struct_refs(t) -> list[str]:
        if not isinstance(t, dict):
            return []
        if "fqn" in t:
            return [t["fqn"]] if types.get(t["fqn"], {}).get("datatype") else []
        if "union" in t:
            return [f for x in t["union"]["types"] for f in struct_refs(x)]
        if "collection" in t:
            return struct_refs(t["collection"]["elementtype"])
        return []

    def struct(fqn: str) -> str:
        sid = fqn.removeprefix(prefix)
        if sid in structs:
            return sid
        structs[sid] = {}
        props: dict = {}
        t = types[fqn]
        for parent in t.get("interfaces", []):
            if parent in types:  # the struct's own interfaces (cdktf.TerraformMetaArguments is not)
                props.update(structs[struct(parent)])
        for p in t.get("properties", []):
            docs = p.get("docs", {})
            text = docs.get("summary", "") + " " + docs.get("remarks", "")
            m = DOC_ANCHOR.search(text)
            name = m.group(1) if m else snake(p["name"])
            block = docs.get("summary", "").endswith(" block.")
            refs = struct_refs(p["type"]) if block else []
            props[name] = [0 if p.get("optional") else 1, 1 if block else 0, struct(refs[0]) if refs else None]
        structs[sid] = props
        return sid

    out: dict = {"resources": {}, "data_sources": {}, "provider": None}
    for fqn, t in types.items():
        base = t.get("base")
        if t.get("kind") != "class" or base not in ("cdktf.TerraformResource", "cdktf.TerraformDataSource", "cdktf.TerraformProvider"):
            continue
        params = {p["name"]: p for p in t.get("initializer", {}).get("parameters", [])}
        config = struct(params["config"]["type"]["fqn"]) if "config" in params else None
        if base == "cdktf.TerraformProvider":
            out["provider"] = config
            continue
        m = DOC_TYPE.search(t.get("docs", {}).get("summary", ""))
        if not m:
            raise ValueError(f"{fqn}: no Terraform type in its doc")
        kind = "resources" if base == "cdktf.TerraformResource" else "data_sources"
        out[kind][m.group(2)] = config
    out["structs"] = structs
    return out


def load_schemas(cache: str, lock: dict | None = None) -> dict[str, dict]:
    """source ("hashicorp/aws") → extracted schema, from the cache or the pinned package."""
    lock = lock or load_lock()
    os.makedirs(cache, exist_ok=True)
    out = {}
    for source, pin in sorted(lock.items()):
        name = f"{pin['package'].replace('@', '').replace('/', '+')}-{pin['package_version']}.json"
        path = os.path.join(cache, name)
        schema = None
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                schema = json.load(fh)
            if schema.get("format") != FORMAT or schema.get("integrity") != pin["integrity"]:
                schema = None
        if schema is None:
            with tempfile.TemporaryDirectory() as tmp:
                tgz = os.path.join(tmp, "package.tgz")
                download(pin, tgz)
                with tarfile.open(tgz) as tar:
                    package = json.load(tar.extractfile("package/package.json"))
                    assembly = json.load(tar.extractfile("package/.jsii"))
            schema = extract(assembly)
            del assembly
            schema.update(
                format=FORMAT,
                package=pin["package"],
                package_version=package["version"],
                integrity=pin["integrity"],
                provider_name=package["cdktf"]["provider"]["name"],
                provider_version=package["cdktf"]["provider"]["version"],
            )
            with open(path + ".tmp", "w", encoding="utf-8") as fh:
                json.dump(schema, fh, separators=(",", ":"), sort_keys=True)
            os.replace(path + ".tmp", path)
        out[source] = schema
    return out


def check_pins(lock: dict, schemas: dict) -> list[str]:
    """The packages are what the lock says: the provider release and its source."""
    problems = []
    for source, pin in sorted(lock.items()):
        s = schemas.get(source)
        if s is None:
            problems.append(f"{source}: no schema")
            continue
        if s["provider_name"] != f"registry.terraform.io/{source}":
            problems.append(f"{pin['package']}@{pin['package_version']} is the schema of {s['provider_name']}, not {source}")
        if s["provider_version"] != pin["provider_version"] or s["package_version"] != pin["package_version"]:
            problems.append(f"{pin['package']}@{s['package_version']} was generated from {source} {s['provider_version']}; the lock says {pin['package_version']} / {pin['provider_version']}")
    return problems


# --- version constraints --------------------------------------------------------------------------


def version_tuple(v: str) -> tuple[int, ...]:
    parts = v.strip().lstrip("v").split("-")[0].split(".")
    return tuple(int(p) for p in parts)


def satisfies(version: str, constraint: str) -> bool:
    """Terraform's version constraint syntax: comma-separated =, !=, >, >=, <, <=, ~> terms."""
    have = version_tuple(version)
    have += (0,) * (3 - len(have))
    for term in constraint.split(","):
        m = re.match(r"^\s*(~>|>=|<=|!=|=|>|<)?\s*(\S+)\s*$", term)
        if not m:
            raise ValueError(f"version constraint {constraint!r}: cannot read {term!r}")
        op, want_text = m.group(1) or "=", m.group(2)
        want = version_tuple(want_text)
        padded = want + (0,) * (3 - len(want))
        if op == "~>":
            # ~> 5.80 → >= 5.80, < 6; ~> 1.2.3 → >= 1.2.3, < 1.3 (only the last part moves)
            upper = want[:-1] if len(want) > 1 else want
            upper = upper[:-1] + (upper[-1] + 1,) if len(want) > 1 else (want[0] + 1,)
            ok = have >= padded and have[: len(upper)] < upper
        else:
            ok = {"=": have == padded, "!=": have != padded, ">": have > padded, ">=": have >= padded, "<": have < padded, "<=": have <= padded}[op]
        if not ok:
            return False
    return True


# --- Terraform side -------------------------------------------------------------------------------


def load_tree(root: str) -> tuple[dict[str, dict], list[str]]:
    """Directory (relative) → merged parse of its .tf files (contract.parse_tf), each labelled
    block's body with "__file__" (its file, relative) added for the messages."""

    def tag(path: str, doc: dict) -> None:
        for key, blocks_ in doc.items():
            for block in blocks_:
                for body in labelled_bodies(key, block):
                    body["__file__"] = rel(root, path)
                    if key == "check":  # its scoped data sources
                        for inner in (b for d in body.get("data", []) for b in labelled_bodies("data", d)):
                            inner["__file__"] = rel(root, path)

    modules, problems, _ = parse_tf(root, tag)
    return modules, problems


def labelled_bodies(key: str, block: dict) -> list[dict]:
    depth = {"resource": 2, "data": 2, "module": 1, "provider": 1, "variable": 1, "check": 1}.get(key, 0)
    out = [block]
    for _ in range(depth):
        out = [b for o in out for k, b in o.items() if not k.startswith("__") and isinstance(b, dict)]
    return out if depth else []


def where(body: dict) -> str:
    return f"{body.get('__file__', '?')}:{body.get('__start_line__', '?')}"


def required_providers(mod: dict) -> dict[str, dict]:
    """local name → {source, version} of a module's terraform { required_providers }."""
    out = {}
    for tf in mod.get("terraform", []):
        for rp in tf.get("required_providers", []):
            for name, spec in rp.items():
                spec = first(spec)
                if isinstance(spec, dict):
                    out[name] = {"source": first(spec.get("source")), "version": first(spec.get("version"))}
    return out


def provider_source(mod: dict, type_: str) -> str:
    local = type_.split("_", 1)[0]
    spec = required_providers(mod).get(local)
    source = (spec or {}).get("source") or f"hashicorp/{local}"
    return source.removeprefix("registry.terraform.io/")


def check_body(body: dict, sid: str, schema: dict, meta: set[str], what: str, problems: list[str]) -> None:
    """A block body's arguments and blocks against struct sid (recursively), dynamic blocks too."""
    props = schema["structs"][sid]
    present = set()
    for key, v in body.items():
        if key.startswith("__"):
            continue
        if key in meta:
            if key == "lifecycle":
                for lc in v if isinstance(v, list) else [v]:
                    for k in (k for k in lc if not k.startswith("__")):
                        if k not in LIFECYCLE:
                            problems.append(f"{what}: unknown lifecycle argument {k!r}")
            continue
        if key == "dynamic":
            for dyn in v:
                for name, spec in dyn.items():
                    if name.startswith("__"):
                        continue
                    p = props.get(name)
                    if p is None or not p[1]:
                        problems.append(f"{what}: dynamic {name!r}: {'not a block' if p else 'unknown block'}")
                        continue
                    present.add(name)
                    for k in (k for k in spec if not k.startswith("__")):
                        if k not in DYNAMIC:
                            problems.append(f"{what}: dynamic {name!r}: unknown argument {k!r}")
                    contents = spec.get("content", [])
                    for c in contents if isinstance(contents, list) else [contents]:
                        if p[2]:
                            check_body(c, p[2], schema, set(), f"{what} dynamic {name}", problems)
            continue
        p = props.get(key)
        if p is None:
            problems.append(f"{what}: unknown argument or block {key!r}")
            continue
        present.add(key)
        if p[1] and p[2] and isinstance(v, list):
            for b in v:
                if isinstance(b, dict):
                    check_body(b, p[2], schema, set(), f"{what} {key}", problems)
    for name, p in sorted(props.items()):
        if p[0] and name not in present:
            problems.append(f"{what}: missing required {'block' if p[1] else 'argument'} {name!r}")


def check_tree(root: str, schemas: dict, modules: dict | None = None) -> dict[str, list[str]]:
    """Check name → problems, for the Terraform under root/terraform."""
    parse: list[str] = []
    if modules is None:
        modules, parse = load_tree(root)
    versions, types, args, mods = [], [], [], []
    count = 0
    for dirname, mod in sorted(modules.items()):
        for name, spec in sorted(required_providers(mod).items()):
            source = (spec["source"] or f"hashicorp/{name}").removeprefix("registry.terraform.io/")
            s = schemas.get(source)
            if s is None:
                versions.append(f"{dirname}: provider {name} ({source}) has no pinned schema in tests/infra/tf-schema.lock.json")
            elif spec["version"] and not satisfies(s["provider_version"], spec["version"]):
                versions.append(f"{dirname}: {source} {spec['version']} is not met by the schema's provider version {s['provider_version']} ({s['package']}@{s['package_version']})")
        for kind, table, meta in (("resource", "resources", RESOURCE_META), ("data", "data_sources", DATA_META)):
            bodies = [(t, n, b) for block in mod.get(kind, []) for t, named in block.items() for n, b in named.items() if not t.startswith("__") and not n.startswith("__")]
            for check in mod.get("check", []):  # scoped data sources of check blocks
                for body in (b for b in check.values() if isinstance(b, dict)):
                    if kind == "data":
                        bodies += [(t, n, b) for block in body.get("data", []) for t, named in block.items() for n, b in named.items() if not t.startswith("__") and not n.startswith("__")]
            for type_, name, body in bodies:
                count += 1
                label = f"{where(body)} {'data.' if kind == 'data' else ''}{type_}.{name}"
                s = schemas.get(provider_source(mod, type_))
                if s is None:
                    types.append(f"{label}: no schema for provider {provider_source(mod, type_)}")
                    continue
                sid = s[table].get(type_)
                if sid is None:
                    types.append(f"{label}: {s['provider_name']} {s['provider_version']} has no {'data source' if kind == 'data' else 'resource type'} {type_}")
                    continue
                check_body(body, sid, s, meta, label, args)
        for block in mod.get("provider", []):
            for pname, body in block.items():
                if pname.startswith("__"):
                    continue
                s = schemas.get(provider_source(mod, pname + "_"))
                if s and s.get("provider"):
                    check_body(body, s["provider"], s, PROVIDER_META, f"{where(body)} provider {pname}", args)
        for block in mod.get("module", []):
            for cname, call in block.items():
                if cname.startswith("__"):
                    continue
                source = str(first(call.get("source")))
                if not source.startswith(("./", "../")):
                    continue
                target = os.path.normpath(os.path.join(dirname, source))
                label = f"{where(call)} module.{cname} ({target})"
                if target not in modules:
                    mods.append(f"{label}: no such module directory with .tf files")
                    continue
                variables = {k: v for vb in modules[target].get("variable", []) for k, v in vb.items() if not k.startswith("__")}
                inputs = {k for k in call if not k.startswith("__") and k not in MODULE_META}
                for k in sorted(inputs - set(variables)):
                    mods.append(f"{label}: unknown input {k!r} (not a variable of the module)")
                for k, v in sorted(variables.items()):
                    if isinstance(v, dict) and "default" not in v and k not in inputs:
                        mods.append(f"{label}: required variable {k!r} (no default) not passed")
    return {
        "every .tf file parses": parse,
        "provider versions: the pinned schemas' releases satisfy every required_providers constraint": versions,
        f"resource and data types exist in the provider schemas ({count} blocks)": types,
        "arguments and blocks are in the schemas, required ones present (dynamic blocks included)": args,
        "module calls: inputs are variables of the module, variables without a default passed": mods,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.normpath(os.path.join(HERE, "..", "..")))
    ap.add_argument("--cache", help="where the extracted schemas are kept (default ROOT/target/tf-schema)")
    args = ap.parse_args()
    checks = Checks()
    lock = load_lock()
    try:
        schemas = load_schemas(args.cache or os.path.join(args.root, "target", "tf-schema"), lock)
    except Exception as e:  # noqa: BLE001 - no schema is a failure, not a skip
        checks.check("provider schemas: pinned packages fetched and verified", [
            f"{type(e).__name__}: {e}",
            f"the packages pinned in {rel(args.root, LOCK)} are downloaded from the npm registry once (npm_config_registry), then read from the cache",
        ])
        return 1
    pins = ", ".join(f"{src} {s['provider_version']} ({s['package']}@{s['package_version']})" for src, s in sorted(schemas.items()))
    checks.check(f"provider schemas: {pins}", check_pins(lock, schemas))
    for name, problems in check_tree(args.root, schemas).items():
        checks.check(name, problems)
    print(f"\ntf_schema: {checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
