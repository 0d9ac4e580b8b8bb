#!/usr/bin/env bash
# The API against its document (docs/testing.md#the-api-against-its-document): Schemathesis
# (pinned in requirements.txt, its own venv) sends generated requests — valid and invalid — to
# every operation of docs/openapi.yaml on a fresh `vwr dev`, with every check, and fails on any
# disagreement. Only the exclusions of schemathesis.toml apply, each with its reason.
# Needs target/debug/vwr. Knobs: VWR_FUZZ_EXAMPLES (per operation, default 40), VWR_FUZZ_SEED.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
VENV="$HERE/.venv"
OUT="$ROOT/target/api-fuzz"
if [[ ! -x "$VENV/bin/schemathesis" ]] || ! cmp -s "$HERE/requirements.txt" "$VENV/.requirements"; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check -r "$HERE/requirements.txt"
  cp "$HERE/requirements.txt" "$VENV/.requirements"
fi
rm -rf "$OUT" && mkdir -p "$OUT/dev"
PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')"
VWR_DEV_DIR="$OUT/dev" RUST_LOG=warn "$ROOT/target/debug/vwr" dev --addr "127.0.0.1:$PORT" --store memory >"$OUT/dev.log" 2>&1 &
DEV_PID=$!
trap 'kill $DEV_PID 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
KEY="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["adminKey"])' "$OUT/dev/dev.json")"
SEED="${VWR_FUZZ_SEED:-20261128}"
EXAMPLES="${VWR_FUZZ_EXAMPLES:-40}"
fuzz() { # fuzz NAME BASE-URL [filters…]
  local name="$1" base="$2"; shift 2
  echo "schemathesis: $name at $base (seed $SEED, $EXAMPLES examples per operation)"
  (cd "$HERE" && "$VENV/bin/schemathesis" --no-color run "$ROOT/docs/openapi.yaml" --url "$base" \
    -H "Authorization: Bearer $KEY" --max-examples "$EXAMPLES" --seed "$SEED" --report junit \
    --report-dir "$OUT/$name" "$@")
}
# Tier 1's public routes are served under /vwr-api (as CloudFront strips it); everything else
# at the root.
fuzz tier1-public "http://127.0.0.1:$PORT/vwr-api" --include-path-regex '^/vwr/'
fuzz the-rest "http://127.0.0.1:$PORT" --exclude-path-regex '^/vwr/'
