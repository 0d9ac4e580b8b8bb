#!/usr/bin/env bash
# Runs every vwr test: lints, Rust unit/integration/property tests (against a real Redis and
# a DynamoDB/SQS emulator), JS tests. Installs and starts what it needs:
#   - moto server (DynamoDB/SQS emulator) and Locust (the rehearsal test) in tests/.venv, on a free loopback port, one request
#     at a time (tests/moto_serial.py: DynamoDB serialises writes to an item, moto does not);
#   - Redis on 127.0.0.1:6379 if it is not already answering;
#   - npm packages of the edge build (edge/: its minifier), of the console (static/: its libraries) and of the browser test, and Debian's Chromium and jq (apt-get, when run as root or
#     with sudo) if they are missing.
# `tests/run.sh --quick` is the inner loop (docs/testing.md): fmt, clippy, the Rust unit tests
# and the node tests only — no servers, browser, infrastructure, tutorial or load test.
# Environment knobs: VWR_SKIP_LINT=1 skips fmt/clippy; VWR_MOTO_PORT picks the moto port;
# VWR_MODEL_CASES sets the property-test case count.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="$ROOT/tests/.venv"
LOGDIR="$ROOT/target/test-logs"
mkdir -p "$LOGDIR"
START=$(date +%s)

step() { printf '\n\033[1m==> %s\033[0m (%ss)\n' "$*" "$(( $(date +%s) - START ))"; }
node_tests() {
  command -v node >/dev/null || die "node is required for the edge tests"
  step "Edge verifier and waiting page (node --test)"
  # The edge build's minifier and the test's parser (edge/package.json, pinned in its lockfile).
  if [[ ! -d edge/node_modules/terser ]] || ! cmp -s edge/package-lock.json edge/node_modules/.package-lock.json; then
    (cd edge && npm ci --no-audit --no-fund --silent)
  fi
  # The console's libraries (static/package.json): the build copies them into static/console/.
  if [[ ! -d static/node_modules/uplot ]] || ! cmp -s static/package-lock.json static/node_modules/.package-lock.json; then
    (cd static && npm ci --no-audit --no-fund --silent)
  fi
  node --test edge/test/*.test.mjs static/test/*.test.mjs
}
die() { printf '\033[31mtests/run.sh: %s\033[0m\n' "$*" >&2; exit 1; }

command -v cargo >/dev/null || die "cargo is required (https://rustup.rs)"
command -v python3 >/dev/null || die "python3 is required"

cleanup() {
  if [[ -n "${MOTO_PID:-}" ]]; then kill "$MOTO_PID" 2>/dev/null || true; fi
  if [[ -n "${LT_DEV_PID:-}" ]]; then kill "$LT_DEV_PID" 2>/dev/null || true; fi
  if [[ -n "${LT_REDIS_PORT:-}" ]]; then redis-cli -p "$LT_REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true; fi
  if [[ -n "${CLUSTER_BASE:-}" ]]; then tests/redis-cluster.sh stop "$CLUSTER_BASE" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

QUICK=0
for arg in "$@"; do
  case "$arg" in
    --quick) QUICK=1 ;;
    *) die "unknown argument $arg (only --quick)" ;;
  esac
done

if [[ "$QUICK" == 1 ]]; then
  step "cargo fmt --check"
  cargo fmt --all -- --check
  step "cargo clippy (all targets, warnings are errors)"
  cargo clippy --workspace --all-targets --quiet -- -D warnings
  step "Rust unit tests (no servers)"
  if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run --workspace --lib --bins --no-fail-fast --failure-output final
  else
    cargo test --workspace --lib --bins --no-fail-fast
  fi
  node_tests
  step "Quick checks passed in $(( $(date +%s) - START ))s (the full run: tests/run.sh)"
  exit 0
fi

step "Python tools (moto) in tests/.venv"
# tests/requirements.txt includes rehearsal/requirements.txt (Locust): both decide a reinstall.
if [[ ! -x "$VENV/bin/moto_server" ]] || ! cat tests/requirements.txt rehearsal/requirements.txt | cmp -s - "$VENV/.requirements"; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check -r tests/requirements.txt
  cat tests/requirements.txt rehearsal/requirements.txt > "$VENV/.requirements"
fi

step "moto server"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
MOTO_PORT="${VWR_MOTO_PORT:-$(free_port)}"
"$VENV/bin/python" tests/moto_serial.py -H 127.0.0.1 -p "$MOTO_PORT" >"$LOGDIR/moto.log" 2>&1 &
MOTO_PID=$!
for _ in $(seq 1 100); do
  if curl -fsS "http://127.0.0.1:$MOTO_PORT/moto-api/" >/dev/null 2>&1; then break; fi
  kill -0 "$MOTO_PID" 2>/dev/null || die "moto server exited; see $LOGDIR/moto.log"
  sleep 0.2
done
curl -fsS "http://127.0.0.1:$MOTO_PORT/moto-api/" >/dev/null || die "moto server did not start; see $LOGDIR/moto.log"
echo "moto on 127.0.0.1:$MOTO_PORT"

step "Redis"
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  command -v redis-server >/dev/null || die "Redis is not running on 127.0.0.1:6379 and redis-server is not installed"
  mkdir -p "$ROOT/target/redis"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
    --dir "$ROOT/target/redis" --logfile "$LOGDIR/redis.log"
  for _ in $(seq 1 50); do redis-cli ping >/dev/null 2>&1 && break; sleep 0.1; done
fi
redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null || die "Redis did not answer on 127.0.0.1:6379"
echo "redis on 127.0.0.1:6379"

step "Redis Cluster (3 nodes on loopback)"
# Three consecutive free ports whose cluster-bus ports (+10000) are free too.
CLUSTER_BASE="$(python3 - <<'PY'
import socket, random
def free(p):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p)); return True
    except OSError:
        return False
    finally:
        s.close()
for _ in range(200):
    b = random.randint(20000, 40000)
    if all(free(p) and free(p + 10000) for p in (b, b + 1, b + 2)):
        print(b); break
PY
)"
[[ -n "$CLUSTER_BASE" ]] || die "no free ports for the Redis Cluster"
CLUSTER_LINE="$(tests/redis-cluster.sh start "$CLUSTER_BASE")" || die "could not start the Redis Cluster (see target/redis-cluster)"
export "${CLUSTER_LINE?}"
echo "cluster on 127.0.0.1:$CLUSTER_BASE-$((CLUSTER_BASE + 2))"

export VWR_TEST_AWS_ENDPOINT="http://127.0.0.1:$MOTO_PORT"
export VWR_TEST_REDIS_URL="${VWR_TEST_REDIS_URL:-redis://127.0.0.1:6379}"
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1
# Locust for the rehearsal test (cli/tests/rehearsal_vs_loadtest.rs).
export VWR_TEST_LOCUST="$VENV/bin/locust"
unset AWS_ENDPOINT_URL AWS_PROFILE

if [[ "${VWR_SKIP_LINT:-}" != "1" ]]; then
  step "cargo fmt --check"
  cargo fmt --all -- --check
  step "cargo clippy (all targets, warnings are errors)"
  cargo clippy --workspace --all-targets --quiet -- -D warnings
  # The README's first command builds `vwr` without the AWS checks (docs/testing.md#build-times).
  step "cargo clippy: vwr without the AWS checks (--no-default-features)"
  cargo clippy -p vwr-cli --no-default-features --all-targets --quiet -- -D warnings
fi

step "Rust tests"
# The Lambda entry-point tests run the real binaries: build them first.
cargo build --workspace --bins --quiet
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --no-fail-fast --failure-output final
  cargo test --workspace --doc --quiet
else
  cargo test --workspace --no-fail-fast
fi

node_tests

step "The tutorial as a reader types it (docs/tutorial.md's marked blocks against a fresh vwr dev; tests/tutorial/run.sh)"
# Its commands use curl, jq and node; jq is installed here when we may, as Chromium below.
if ! command -v jq >/dev/null; then
  SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="$(command -v sudo || true)"
  if command -v apt-get >/dev/null && { [[ $(id -u) -eq 0 ]] || [[ -n "$SUDO" ]]; }; then
    echo "installing jq with apt-get"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq || true
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends jq \
      || die "could not install jq: apt-get install -y jq"
  fi
fi
command -v jq >/dev/null || die "jq is required for the tutorial test: apt-get install -y jq"
# target/debug/vwr was built by the Rust tests step above.
VWR="$ROOT/target/debug/vwr" tests/tutorial/run.sh

step "Rehearsal visitor: its rules and requests (python unittest, rehearsal/test_*.py)"
"$VENV/bin/python" -m unittest discover -s rehearsal -p 'test_*.py'

step "Infrastructure: HCL parse, checkov, code/Terraform contract, LocalStack scripts on moto"
tests/infra/run.sh

step "Browser walk (Chromium, shipped edge JS in front of vwr dev)"
CHROMIUM="${VWR_CHROMIUM:-/usr/bin/chromium}"
if [[ ! -x "$CHROMIUM" ]]; then
  # Debian's Chromium (a test tool's own browser download cannot work offline), and CJK fonts
  # for the Korean screenshot: installed here when we may, so a new machine needs nothing else.
  SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="$(command -v sudo || true)"
  if command -v apt-get >/dev/null && { [[ $(id -u) -eq 0 ]] || [[ -n "$SUDO" ]]; }; then
    echo "installing chromium and fonts-noto-cjk with apt-get"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq || true
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-noto-cjk \
      || die "could not install Chromium: apt-get install -y chromium (or set VWR_CHROMIUM)"
  fi
fi
[[ -x "$CHROMIUM" ]] || die "Chromium is required for the browser walk: apt-get install -y chromium (or set VWR_CHROMIUM)"
if [[ ! -d tests/e2e/node_modules/playwright-core ]] || ! cmp -s tests/e2e/package-lock.json tests/e2e/node_modules/.package-lock.json; then
  (cd tests/e2e && npm ci --no-audit --no-fund --silent)
fi
cargo build --quiet --bin vwr
(cd tests/e2e && node --test --test-concurrency=1 walk.test.mjs lifecycle.test.mjs polling.test.mjs abuse.test.mjs place-safety.test.mjs booking.test.mjs languages.test.mjs preview.test.mjs)
echo "screenshots in target/e2e/"

step "The API against its document (Schemathesis on vwr dev, every check; tests/api-fuzz)"
tests/api-fuzz/run.sh

step "Load test: 3,000 visitors through vwr dev, tier-2 waits longer than the tier-1 session, Redis lost for 70 s, 60 s of 403s on check (safety counters, placesLostToFaults included, must be 0)"
# Sessions shorter than the tier-2 wait (60 s tokens, 30 s grace, 120 s at most; the tier-2 line
# grows, 300 slots against 15 served a second): only tier 2's hold keeps each place
# (docs/invariants.md#27). Token and grace (90 s) outlast the 70-s Redis fault: a visitor tier 1
# admits just before it cannot reach tier 2, so has no hold yet, until Redis is back. Redis without persistence, stopped with `shutdown nosave` from 30 s
# to 100 s while visitors are active and waiting in tier 2: its data is lost, and every place
# comes back by the hold in the visitor's identity (the report's fault `effect` must say
# `dropped`); every tier-1 check answered with a WAF's or API Gateway's 403 from 110 s to 170 s.
LT_DIR="$ROOT/target/loadtest"
rm -rf "$LT_DIR" && mkdir -p "$LT_DIR/redis" "$LT_DIR/dev"
LT_REDIS_PORT="$(free_port)"
LT_PORT="$(free_port)"
LT_REDIS_START="redis-server --port $LT_REDIS_PORT --bind 127.0.0.1 --save '' --appendonly no --dir $LT_DIR/redis --logfile $LT_DIR/redis/redis.log --daemonize yes"
sh -c "$LT_REDIS_START"
for _ in $(seq 1 50); do redis-cli -p "$LT_REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
VWR_DEV_DIR="$LT_DIR/dev" VWR_ADMIT_BATCH=2000 RUST_LOG=warn target/debug/vwr dev --addr "127.0.0.1:$LT_PORT" \
  --store memory --redis "redis://127.0.0.1:$LT_REDIS_PORT" >"$LOGDIR/loadtest-dev.log" 2>&1 &
LT_DEV_PID=$!
for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$LT_PORT/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
VWR_DEV_DIR="$LT_DIR/dev" target/debug/vwr loadtest --base-url "http://127.0.0.1:$LT_PORT" --visitors 3000 \
  --arrival uniform --arrival-seconds 30 --batch-size 15 --threshold 300 --dwell-seconds 5 \
  --token-ttl-seconds 60 --reentry-grace-seconds 30 --max-session-seconds 120 \
  --abandon-rate 0.05 --max-seconds 900 --fault redis@30+70 --fault check403@110+60 \
  --redis-stop-cmd "redis-cli -p $LT_REDIS_PORT shutdown nosave" --redis-start-cmd "$LT_REDIS_START" \
  --json "$LT_DIR/report.json" || die "the load test failed or a safety counter is not zero (see $LT_DIR/report.json)"
python3 - "$LT_DIR/report.json" <<'PY' || die "a fault of the load test did not take effect as asked, or no tier-2 wait outlasted the session (see $LT_DIR/report.json)"
import json, sys
faults = json.load(open(sys.argv[1]))["faults"]
kinds = {f["kind"]: f for f in faults}
ok = set(kinds) == {"redis", "check403"} and all(f["injected"] and f["recovered"] for f in faults)
ok = ok and kinds["redis"].get("effect") == "dropped" and kinds["check403"].get("responses", 0) > 0
# The run reached the case it is for: visitors waited in tier 2 longer than the 120-s session.
report = json.load(open(sys.argv[1]))
ok = ok and report["timeToAdmission"]["entryP99Seconds"] - report["timeToAdmission"]["tier1P99Seconds"] > 120
sys.exit(0 if ok else 1)
PY

step "All tests passed in $(( $(date +%s) - START ))s"
