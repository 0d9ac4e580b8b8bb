#!/usr/bin/env bash
# Starts (or stops) a 3-node Redis Cluster on loopback for the tier-2 tests.
#   tests/redis-cluster.sh start [BASE_PORT]   → prints VWR_TEST_REDIS_CLUSTER_URLS=…
#   tests/redis-cluster.sh stop  [BASE_PORT]
# Nodes listen on BASE..BASE+2 (cluster bus on +10000); data lives in target/redis-cluster.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="$ROOT/target/redis-cluster"
CMD="${1:-start}"
BASE="${2:-${VWR_REDIS_CLUSTER_BASE_PORT:-7101}}"
PORTS=("$BASE" "$((BASE + 1))" "$((BASE + 2))")

stop() {
  for p in "${PORTS[@]}"; do redis-cli -p "$p" shutdown nosave >/dev/null 2>&1 || true; done
}

if [[ "$CMD" == stop ]]; then stop; exit 0; fi

command -v redis-server >/dev/null || { echo "redis-server is required" >&2; exit 1; }
stop
rm -rf "$DIR" && mkdir -p "$DIR"
for p in "${PORTS[@]}"; do
  redis-server --port "$p" --bind 127.0.0.1 --cluster-enabled yes --cluster-config-file "$DIR/nodes-$p.conf" \
    --cluster-node-timeout 2000 --save "" --appendonly no --dir "$DIR" --logfile "$DIR/$p.log" --daemonize yes
done
for p in "${PORTS[@]}"; do
  for _ in $(seq 1 50); do redis-cli -p "$p" ping >/dev/null 2>&1 && break; sleep 0.1; done
done
redis-cli --cluster create "${PORTS[@]/#/127.0.0.1:}" --cluster-replicas 0 --cluster-yes >"$DIR/create.log" 2>&1 \
  || { cat "$DIR/create.log" >&2; exit 1; }
for _ in $(seq 1 100); do
  [[ "$(redis-cli -p "$BASE" cluster info | tr -d '\r' | awk -F: '/cluster_state/{print $2}')" == ok ]] && break
  sleep 0.1
done
echo "VWR_TEST_REDIS_CLUSTER_URLS=redis://127.0.0.1:${PORTS[0]},redis://127.0.0.1:${PORTS[1]},redis://127.0.0.1:${PORTS[2]}"
