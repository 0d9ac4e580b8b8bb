#!/usr/bin/env bash
# Reproduces the "Measured figures" of docs/performance.md on this machine, each next to its
# baseline from the same run. Needs what tests/run.sh needs (it reuses tests/.venv for moto)
# and a release build (made here). Takes about 10 minutes on 2 cores.
#   scripts/perf.sh [--visitors N]   (default 100000 for the headline run)
# Writes target/perf/*.json and prints a Markdown table.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VISITORS=100000
[[ "${1:-}" == "--visitors" ]] && VISITORS="$2"
OUT="$ROOT/target/perf"
rm -rf "$OUT" && mkdir -p "$OUT"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  [[ -n "${REDIS_PORT:-}" ]] && redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
wait_http() { for _ in $(seq 1 200); do curl -fsS "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done; echo "no answer from $1" >&2; exit 1; }

echo "==> release build"
cargo build --release --quiet --bin vwr
VWR="$ROOT/target/release/vwr"

echo "==> moto and Redis"
[[ -x tests/.venv/bin/moto_server ]] || { python3 -m venv tests/.venv; tests/.venv/bin/pip install -q -r tests/requirements.txt; }
MOTO_PORT="$(free_port)"; tests/.venv/bin/python tests/moto_serial.py -H 127.0.0.1 -p "$MOTO_PORT" >"$OUT/moto.log" 2>&1 & PIDS+=($!)
wait_http "http://127.0.0.1:$MOTO_PORT/moto-api/"
REDIS_PORT="$(free_port)"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes --logfile "$OUT/redis.log"
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1

# run NAME ENV... -- LOADTEST-ARGS... : a fresh `vwr dev` (and aws-proxy) per scenario.
run() {
  local name="$1"; shift
  local envs=(); while [[ "$1" != "--" ]]; do envs+=("$1"); shift; done; shift
  local port proxy dev_dir="$OUT/$name-dev"
  port="$(free_port)"
  mkdir -p "$dev_dir"
  env VWR_DEV_DIR="$dev_dir" RUST_LOG=warn VWR_ADMIT_BATCH=2000 "${envs[@]}" \
    "$VWR" dev --addr "127.0.0.1:$port" --redis "redis://127.0.0.1:$REDIS_PORT" >"$OUT/$name-dev.log" 2>&1 & local dev=$!
  wait_http "http://127.0.0.1:$port/healthz"
  echo "==> $name"
  VWR_DEV_DIR="$dev_dir" "$VWR" loadtest --base-url "http://127.0.0.1:$port" --json "$OUT/$name.json" "$@" >"$OUT/$name.txt" 2>&1 \
    || { echo "loadtest $name failed (see $OUT/$name.txt)"; tail -5 "$OUT/$name.txt"; }
  kill "$dev" 2>/dev/null || true; wait "$dev" 2>/dev/null || true
}

# A DynamoDB emulator behind the counting/throttling proxy; the table is created through it.
proxy() {
  local port; port="$(free_port)"
  "$VWR" aws-proxy --listen "127.0.0.1:$port" --upstream "http://127.0.0.1:$MOTO_PORT" "$@" >"$OUT/proxy-$port.log" 2>&1 & PIDS+=($!)
  sleep 0.5
  echo "http://127.0.0.1:$port"
}

# 1. Headline: N visitors, burst, whole flow (tier 1 in memory, tier 2 on Redis).
run headline -- --visitors "$VISITORS" --batch-size 1000 --interval-seconds 1 --threshold 2000 --dwell-seconds 2 --abandon-rate 0.02

# 2. Serving-counter cache: DynamoDB reads per check, 1 s cache vs none (baseline).
for ttl in 1000 0; do
  P="$(proxy)"
  run "cache-$ttl" AWS_ENDPOINT_URL="$P" VWR_CACHE_TTL_MS="$ttl" VWR_TABLE="perf-cache-$ttl" -- \
    --visitors 2000 --batch-size 100 --interval-seconds 1 --threshold 2000 --dwell-seconds 0 --aws-proxy "$P"
done

# 3. Counter shards against a model of DynamoDB's per-item write limit (scaled to the emulator:
#    100 writes/s per item): 4 shards vs 1 (baseline).
for shards in 1 4; do
  P="$(proxy --item-writes-per-second 100)"
  run "shards-$shards" AWS_ENDPOINT_URL="$P" VWR_TABLE="perf-shards-$shards" -- \
    --visitors 3000 --shards "$shards" --batch-size 5000 --interval-seconds 1 --threshold 5000 --dwell-seconds 0 --aws-proxy "$P"
done

python3 - "$OUT" <<'PY'
import json, sys, os
out = sys.argv[1]
r = {n: json.load(open(os.path.join(out, n + ".json"))) for n in ["headline", "cache-1000", "cache-0", "shards-1", "shards-4"] if os.path.exists(os.path.join(out, n + ".json"))}
def reads_per_check(x):
    c = x.get("awsCalls", {}); checks = x["latency"].get("tier1.check", {}).get("requests", 0) or 1
    return sum(v for k, v in c.items() if k.endswith(".GetItem")) / checks
print("| scenario | figure | baseline (same run) | ratio |")
print("|---|---|---|---|")
if "headline" in r:
    h = r["headline"]
    print(f"| {h['visitors']} visitors, burst, whole flow | {h['throughput']['requestsPerSecond']:.0f} requests/s, tier-1 check p99 {h['latency']['tier1.check']['p99Ms']} ms; safety {h['safety']} | — | — |")
if "cache-1000" in r and "cache-0" in r:
    a, b = reads_per_check(r["cache-1000"]), reads_per_check(r["cache-0"])
    print(f"| DynamoDB reads per tier-1 check, 1 s cache | {a:.3f} | {b:.3f} without cache | {a/b:.3f} |")
if "shards-1" in r and "shards-4" in r:
    a, b = r["shards-4"]["throughput"]["joinsPerSecond"], r["shards-1"]["throughput"]["joinsPerSecond"]
    print(f"| joins/s, 4 shards, per-item limit 100 writes/s | {a:.0f} ({r['shards-4'].get('awsThrottledWrites')} throttled) | {b:.0f} with 1 shard ({r['shards-1'].get('awsThrottledWrites')} throttled) | {a/b:.2f} |")
PY
