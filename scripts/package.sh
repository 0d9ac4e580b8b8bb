#!/usr/bin/env bash
# Builds everything Terraform deploys into one dist/ layout (Terraform reads only dist/):
#
#   dist/lambda/<binary>.zip            one per Lambda (cargo lambda, provided.al2023, `bootstrap`)
#   dist/edge/cloudfront-function.js    edge verifier, placeholders kept (Terraform fills them)
#   dist/edge/waiting-page-rewrite.js   /vwr/{eventId} → /vwr/index.html
#   dist/edge/lambda-edge/index.js      Lambda@Edge variant (Terraform adds config.json)
#   dist/static/vwr/…                   the waiting page, laid out as its S3 keys
#   dist/static/vwr-console/…           the console (static/console), laid out as its S3 keys
#   dist/manifest.json                  architecture, git revision, sha256 of every file
#
# Usage:
#   scripts/package.sh                  build for x86_64
#   scripts/package.sh --arch arm64     build for Graviton (about 20 % cheaper per GB-second)
#   scripts/package.sh --skip-lambdas   edge and static only (keeps existing Lambda zips)
#   scripts/package.sh --print-layout   print the files dist/ will hold, build nothing
#
# Needs: cargo-lambda (`pip install cargo-lambda`, which brings zig; `cargo lambda --version`),
# node and npm (only to check edge/dist and the pages' built scripts against their sources,
# with edge/'s pinned minifier), python3 (manifest).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIST="${VWR_DIST_DIR:-$ROOT/dist}"

# The Lambda binaries (cargo package name = binary name). tests/infra checks this list against
# the workspace and against what Terraform deploys.
LAMBDAS=(vwr-tier1-api vwr-tier1-admin vwr-tier1-advancer vwr-tier2-api vwr-tier2-worker vwr-tier2-authorizer)
# Edge files copied from edge/dist (generated and committed there by edge/build.mjs).
EDGE_FILES=(cloudfront-function.js waiting-page-rewrite.js lambda-edge/index.js)

die() { printf 'scripts/package.sh: %s\n' "$*" >&2; exit 1; }

ARCH=x86_64
SKIP_LAMBDAS=0
PRINT_LAYOUT=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --arch) [[ $# -ge 2 ]] || die "--arch needs x86_64 or arm64"; ARCH="$2"; shift 2 ;;
    --skip-lambdas) SKIP_LAMBDAS=1; shift ;;
    --print-layout) PRINT_LAYOUT=1; shift ;;
    -h|--help) sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
[[ "$ARCH" == x86_64 || "$ARCH" == arm64 ]] || die "--arch must be x86_64 or arm64"

# The waiting page: everything under static/ except tests, READMEs, its build script, the
# sources it builds the pages' scripts from (static/src), the npm packages the build copies the
# console's libraries from (static/package.json, static/node_modules) and the console, keyed as
# in S3.
static_files() {
  (cd "$ROOT/static" && find . -type f ! -path './test/*' ! -path './src/*' ! -path './console/*' ! -path './node_modules/*' ! -name 'README*' ! -name '.*' ! -name 'build.mjs' ! -name 'package.json' ! -name 'package-lock.json' | sed 's|^\./||' | LC_ALL=C sort)
}

# The console (served under /vwr-console/, docs/console.md): everything under static/console
# except tests, sources and READMEs, whatever files it holds.
console_files() {
  [[ -d "$ROOT/static/console" ]] || return 0
  (cd "$ROOT/static/console" && find . -type f ! -path './test/*' ! -path './src/*' ! -name 'README*' ! -name '.*' | sed 's|^\./||' | LC_ALL=C sort)
}

layout() {
  local b f
  for b in "${LAMBDAS[@]}"; do echo "lambda/$b.zip"; done
  for f in "${EDGE_FILES[@]}"; do echo "edge/$f"; done
  static_files | sed 's|^|static/vwr/|'
  console_files | sed 's|^|static/vwr-console/|'
  echo "manifest.json"
}

if [[ "$PRINT_LAYOUT" == 1 ]]; then
  layout
  exit 0
fi

mkdir -p "$DIST"

if [[ "$SKIP_LAMBDAS" == 0 ]]; then
  cargo lambda --version >/dev/null 2>&1 || die "cargo-lambda is required: pip install cargo-lambda (then \`cargo lambda --version\`)"
  flag=--x86-64
  [[ "$ARCH" == arm64 ]] && flag=--arm64
  pkgs=()
  for b in "${LAMBDAS[@]}"; do pkgs+=(-p "$b"); done
  echo "==> cargo lambda build --release --output-format zip $flag ${pkgs[*]}"
  (cd "$ROOT" && cargo lambda build --release --output-format zip "$flag" "${pkgs[@]}")
  rm -rf "$DIST/lambda"
  mkdir -p "$DIST/lambda"
  for b in "${LAMBDAS[@]}"; do
    src="$ROOT/target/lambda/$b/bootstrap.zip"
    [[ -f "$src" ]] || die "cargo lambda did not produce $src"
    cp "$src" "$DIST/lambda/$b.zip"
  done
else
  for b in "${LAMBDAS[@]}"; do
    [[ -f "$DIST/lambda/$b.zip" ]] || die "--skip-lambdas, but $DIST/lambda/$b.zip is missing"
  done
  if [[ -f "$DIST/manifest.json" ]]; then
    ARCH="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["architecture"])' "$DIST/manifest.json")"
  fi
fi

echo "==> edge bundles"
if command -v node >/dev/null 2>&1; then
  # The check rebuilds with the pinned minifier (edge/package.json).
  if [[ ! -d "$ROOT/edge/node_modules/terser" ]] || ! cmp -s "$ROOT/edge/package-lock.json" "$ROOT/edge/node_modules/.package-lock.json"; then
    (cd "$ROOT/edge" && npm ci --no-audit --no-fund --silent)
  fi
  node "$ROOT/edge/build.mjs" --check
  # The pages' scripts, built from static/src with the same minifier, and the console's
  # libraries, copied from static/package.json's (static/build.mjs).
  if [[ ! -d "$ROOT/static/node_modules/uplot" ]] || ! cmp -s "$ROOT/static/package-lock.json" "$ROOT/static/node_modules/.package-lock.json"; then
    (cd "$ROOT/static" && npm ci --no-audit --no-fund --silent)
  fi
  node "$ROOT/static/build.mjs" --check
else
  echo "node not found: not checking that edge/dist matches edge/src, nor the pages' scripts static/src" >&2
fi
rm -rf "$DIST/edge"
for f in "${EDGE_FILES[@]}"; do
  mkdir -p "$(dirname "$DIST/edge/$f")"
  cp "$ROOT/edge/dist/$f" "$DIST/edge/$f"
done

echo "==> waiting page and console"
rm -rf "$DIST/static"
while IFS= read -r f; do
  mkdir -p "$(dirname "$DIST/static/vwr/$f")"
  cp "$ROOT/static/$f" "$DIST/static/vwr/$f"
done < <(static_files)
while IFS= read -r f; do
  mkdir -p "$(dirname "$DIST/static/vwr-console/$f")"
  cp "$ROOT/static/console/$f" "$DIST/static/vwr-console/$f"
done < <(console_files)

echo "==> manifest"
REV="$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
if [[ -n "$(git -C "$ROOT" status --porcelain 2>/dev/null || true)" ]]; then REV="$REV-dirty"; fi
# shellcheck disable=SC2046 # the layout's paths have no spaces
python3 - "$DIST" "$ARCH" "$REV" $(layout | grep -v '^manifest.json$') <<'PY'
import hashlib, json, os, sys
dist, arch, rev = sys.argv[1:4]
files = {}
for rel in sys.argv[4:]:
    path = os.path.join(dist, rel)
    if not os.path.isfile(path):
        sys.exit(f"scripts/package.sh: {path} is missing")
    with open(path, "rb") as fh:
        files[rel] = hashlib.sha256(fh.read()).hexdigest()
manifest = {"architecture": arch, "revision": rev, "files": files}
with open(os.path.join(dist, "manifest.json"), "w") as fh:
    json.dump(manifest, fh, indent=2, sort_keys=True)
    fh.write("\n")
PY
echo "dist/ ready ($ARCH, $REV):"
layout | sed 's|^|  |'
