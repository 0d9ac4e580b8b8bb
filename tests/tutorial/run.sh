#!/usr/bin/env bash
# Runs docs/tutorial.md as a reader types it, against a fresh `vwr dev`, and fails naming the
# block and the command that failed (docs/testing.md).
#
# Which blocks run — a marker on the line before a ```sh fence of docs/tutorial.md:
#   <!-- tutorial:run -->  run, in the order of the file, all in one bash with `set -euo pipefail`:
#                          a variable one block sets is seen by the next, as in the reader's
#                          terminal;
#   <!-- tutorial:dev -->  a block that starts `vwr dev` (the reader's other terminal): the
#                          running `vwr dev` is stopped, the block is started in the background,
#                          and the walk goes on once /healthz answers.
# Unmarked blocks are not run: sample output (```text), other languages, and what needs what a
# test run lacks (AWS or an emulator, the edge proxy and a browser, a build).
# Each of the walks in REQUIRED below must keep at least one marked block.
#
# What the blocks run in:
#   - a fresh work directory as the current directory: `vwr dev` keeps its own .vwr/dev.json
#     there, where `vwr admin` finds its address and key (docs/cli.md#addressing-a-stack);
#     `docs` in it links to the repository's docs/ (for docs/examples/*.mjs);
#   - a PATH whose first entries are shims: `vwr` runs $VWR (default target/debug/vwr);
#     `vwr dev` gets `--store memory` and a free loopback port (VWR_ADDR); `cargo run [--release]
#     [--quiet] [--no-default-features] --bin vwr -- ARGS` runs `vwr ARGS` (this test never builds);
#   - `http://127.0.0.1:8080` in a block is rewritten to that free port;
#   - no admin address, key, context or AWS endpoint from the caller's environment.
# Needs bash, curl, jq, node, python3 (a free port). Knobs: VWR (the binary), VWR_TUTORIAL_TIMEOUT
# (seconds for the whole walk, default 240), VWR_TUTORIAL_KEEP=1 (keep the work directory).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DOC="$ROOT/docs/tutorial.md"
REQUIRED=("Tier 1 by hand" "Tier 2: the booking line" "Run a sale" "Outflow that follows reality"
  "Proofs against bots")

die() { printf 'tests/tutorial: %s\n' "$*" >&2; exit 1; }

VWR_BIN="${VWR:-$ROOT/target/debug/vwr}"
[[ "$VWR_BIN" == /* ]] || VWR_BIN="$PWD/$VWR_BIN"
[[ -x "$VWR_BIN" ]] || die "no vwr binary at $VWR_BIN (build it: cargo build --bin vwr; or set VWR)"
for tool in curl jq node python3 timeout; do
  command -v "$tool" >/dev/null || die "$tool is required (the tutorial's commands use curl, jq and node)"
done
[[ -f "$DOC" ]] || die "no $DOC"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/vwr-tutorial.XXXXXX")"
cleanup() {
  local pid
  if [[ -f "$WORK/dev.pid" ]]; then
    pid="$(cat "$WORK/dev.pid")"
    kill "$pid" 2>/dev/null || true
  fi
  if [[ "${VWR_TUTORIAL_KEEP:-}" == 1 ]]; then
    echo "tests/tutorial: work directory kept: $WORK"
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT

PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')"
mkdir -p "$WORK/bin" "$WORK/blocks" "$WORK/run"
ln -s "$ROOT/docs" "$WORK/run/docs"

# The shims (see the top of this file).
cat >"$WORK/bin/vwr" <<EOF
#!/usr/bin/env bash
if [[ "\${1:-}" == dev ]]; then
  shift
  echo \$\$ >"$WORK/dev.pid"
  VWR_ADDR=127.0.0.1:$PORT exec "$VWR_BIN" dev --store memory "\$@"
fi
exec "$VWR_BIN" "\$@"
EOF
cat >"$WORK/bin/cargo" <<'EOF'
#!/usr/bin/env bash
# tests/tutorial/run.sh: `cargo run --bin vwr -- ARGS` is `vwr ARGS` here; nothing is built.
args=("$@")
[[ "${args[0]:-}" == run ]] || { echo "tests/tutorial: cargo $* is not supported here (only cargo run --bin vwr -- …)" >&2; exit 2; }
i=1
while (( i < ${#args[@]} )); do
  case "${args[i]}" in
    --release | --quiet | -q | --no-default-features) ;;
    --bin) i=$((i + 1)); [[ "${args[i]:-}" == vwr ]] || { echo "tests/tutorial: only --bin vwr is supported" >&2; exit 2; } ;;
    --) exec vwr "${args[@]:i+1}" ;;
    *) echo "tests/tutorial: cargo $* is not supported here (only cargo run --bin vwr -- …)" >&2; exit 2 ;;
  esac
  i=$((i + 1))
done
echo "tests/tutorial: cargo $*: no -- before vwr's arguments" >&2
exit 2
EOF
chmod +x "$WORK/bin/vwr" "$WORK/bin/cargo"

# Extract the marked blocks into one script. Each block is preceded by a call that says which
# block runs (for the failure message); a `dev` block runs in the background.
SCRIPT="$WORK/tutorial.sh"
cat >"$SCRIPT" <<EOF
set -euo pipefail
TUT_N=0 TUT_SECTION='' TUT_MD=0 TUT_AT=0 TUT_KIND=run TUT_SAID=0
tut_block() { # N SECTION MD_LINE SCRIPT_LINE KIND: block N of SECTION starts at docs/tutorial.md:MD_LINE
  TUT_N=\$1 TUT_SECTION=\$2 TUT_MD=\$3 TUT_AT=\$4 TUT_KIND=\$5
  printf '\n\033[1m--- block %s, "%s" (docs/tutorial.md:%s)%s\033[0m\n' "\$1" "\$2" "\$3" \
    "\$([[ \$5 != dev ]] || echo ', started in the background')"
  sed 's/^/\$ /' "$WORK/blocks/\$1.sh"
}
tut_failed() { # STATUS LINE COMMAND
  local at=\$TUT_MD
  [[ \$TUT_KIND == dev ]] || at=\$((TUT_MD + \$2 - TUT_AT - 1))
  TUT_SAID=1
  printf '\n\033[31mtests/tutorial: block %s of "%s" failed (exit %s) at docs/tutorial.md:%s:\033[0m\n  %s\n' \
    "\$TUT_N" "\$TUT_SECTION" "\$1" "\$at" "\$3" >&2
}
trap 'tut_failed \$? \$LINENO "\$BASH_COMMAND"' ERR
# An exit the ERR trap does not see (an unset variable under set -u): still name the block.
trap 'rc=\$?; if (( rc != 0 && TUT_SAID == 0 )); then printf "\ntests/tutorial: block %s of \"%s\" (docs/tutorial.md:%s) failed (exit %s)\n" "\$TUT_N" "\$TUT_SECTION" "\$TUT_MD" "\$rc" >&2; fi' EXIT
tut_dev_stop() {
  local pid
  [[ -f "$WORK/dev.pid" ]] || return 0
  pid="\$(cat "$WORK/dev.pid")"; rm -f "$WORK/dev.pid"
  kill "\$pid" 2>/dev/null || return 0
  for _ in \$(seq 1 50); do kill -0 "\$pid" 2>/dev/null || return 0; sleep 0.1; done
  echo "tests/tutorial: vwr dev (pid \$pid) did not stop" >&2; return 1
}
tut_dev_wait() {
  for _ in \$(seq 1 100); do
    if curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && [[ -f "$WORK/dev.pid" ]]; then
      echo "(vwr dev answers on 127.0.0.1:$PORT; its log: $WORK/dev.log)"; return 0
    fi
    sleep 0.2
  done
  echo "tests/tutorial: vwr dev did not answer on 127.0.0.1:$PORT; the end of its log:" >&2
  tail -n 20 "$WORK/dev.log" >&2; return 1
}
EOF

n=0 line_no=0 section="start" marker="" in_block=0 in_other=0 block_kind=""
declare -A runs=()
while IFS= read -r line || [[ -n "$line" ]]; do
  line_no=$((line_no + 1))
  if (( in_block )); then
    if [[ "$line" =~ ^\`\`\`[[:space:]]*$ ]]; then
      in_block=0
      if [[ "$block_kind" == dev ]]; then
        { echo "tut_dev_stop"; echo "( $(cat "$WORK/blocks/$n.sh")"
          echo ") >>\"$WORK/dev.log\" 2>&1 &"; echo "tut_dev_wait"; } >>"$SCRIPT"
      else
        cat "$WORK/blocks/$n.sh" >>"$SCRIPT"
      fi
    else
      printf '%s\n' "${line//http:\/\/127.0.0.1:8080/http://127.0.0.1:$PORT}" >>"$WORK/blocks/$n.sh"
    fi
    continue
  fi
  if (( in_other )); then
    [[ ! "$line" =~ ^\`\`\` ]] || in_other=0
    continue
  fi
  if [[ -n "$marker" ]]; then
    [[ "$line" =~ ^\`\`\`(sh|bash)[[:space:]]*$ ]] \
      || die "docs/tutorial.md:$line_no: the line after <!-- tutorial:$marker --> must open a \`\`\`sh block"
    n=$((n + 1)) in_block=1 block_kind="$marker" marker=""
    : >"$WORK/blocks/$n.sh"
    runs["$section"]=1
    # $LINENO is this call's line in the script and the block's first line the next one: a
    # failure's line maps back to docs/tutorial.md.
    echo "tut_block $n '${section//\'/}' $((line_no + 1)) \$LINENO $block_kind" >>"$SCRIPT"
    continue
  fi
  if [[ "$line" =~ ^\`\`\` ]]; then
    in_other=1
  elif [[ "$line" =~ ^##[[:space:]]+(.*)$ ]]; then
    section="${BASH_REMATCH[1]}"
  elif [[ "$line" =~ ^\<!--\ tutorial:(run|dev)\ --\>[[:space:]]*$ ]]; then
    marker="${BASH_REMATCH[1]}"
  fi
done <"$DOC"
(( in_block == 0 )) || die "docs/tutorial.md: a marked block is not closed"
(( n > 0 )) || die "docs/tutorial.md has no block marked <!-- tutorial:run -->"
for s in "${REQUIRED[@]}"; do
  [[ -n "${runs[$s]:-}" ]] || die "docs/tutorial.md: the walk \"$s\" has no block marked <!-- tutorial:run --> (or its heading changed)"
done
echo 'printf "\ntests/tutorial: all blocks ran\n"' >>"$SCRIPT"

echo "tests/tutorial: $n blocks of docs/tutorial.md against $VWR_BIN on 127.0.0.1:$PORT"
START=$(date +%s)
status=0
(
  cd "$WORK/run"
  unset VWR_ADMIN_URL VWR_ADMIN_KEY VWR_CONTEXT VWR_DEV_DIR VWR_TIER2_ADMIN_URL VWR_SIGV4 VWR_ADDR \
    VWR_REDIS_URL VWR_NOTICE_QUEUE_URL VWR_ENQUEUE_JWKS AWS_ENDPOINT_URL AWS_PROFILE
  export PATH="$WORK/bin:$PATH" VWR_CONFIG="$WORK/config.toml" RUST_LOG="${RUST_LOG:-info}"
  exec timeout "${VWR_TUTORIAL_TIMEOUT:-240}" bash "$SCRIPT"
) || status=$?
if (( status == 124 )); then
  echo "tests/tutorial: the walk did not finish within ${VWR_TUTORIAL_TIMEOUT:-240} s" >&2
fi
if (( status != 0 )); then
  echo "tests/tutorial: FAILED; the end of vwr dev's log:" >&2
  tail -n 20 "$WORK/dev.log" >&2 2>/dev/null || true
  exit 1
fi
echo "tests/tutorial: passed in $(( $(date +%s) - START )) s"
