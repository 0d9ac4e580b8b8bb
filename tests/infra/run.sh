#!/usr/bin/env bash
# Infrastructure checks (no cloud, no Terraform providers needed):
#   1. the contract check, the package contract/ (python -m contract, one file per subject;
#      contract.py runs it too): every .tf file parses; code, packaging and Terraform agree
#      (environment, IAM, dist/ layout, routes, table, CloudFront Function size, checkov skip
#      reasons), and so do the docs (the README's routes map and size, docs/settings.md's variables,
#      docs/openapi.yaml against the routers, validated as OpenAPI 3.1, citations of a Markdown
#      section, the count of the invariants, the tracked Markdown under 60,000 words);
#      test_contract_hcl.py: its evaluation of dynamic blocks and for_each maps, of the route
#      maps given to modules/http_api, and of moved blocks into called modules, and the console
#      checks (API routes and authorizer, sign-in, behaviour, role claim) failing on each change;
#      test_contract_openapi.py: the docs/openapi.yaml check fails when file and routers differ;
#      test_contract_docs.py: the citation, invariant-count and word-count checks fail on a
#      broken citation of a Markdown section, a wrong count of the invariants and a tree of
#      Markdown over the limit;
#      test_contract_habits.py: the habit checks (no source file over 800 lines outside test
#      folders, no Result<_, String> in cli/, commit subjects ≤ 72 characters with a body)
#      fail on an injected fault;
#   2. tf_schema.py: terraform/ against the providers' schemas (resource and data types,
#      arguments and blocks, required ones, module inputs, provider version constraints), read
#      from the prebuilt CDKTF bindings pinned in tests/infra/tf-schema.lock.json: downloaded
#      once from the npm registry (npm_config_registry, else registry.npmjs.org), verified
#      against the pinned integrity and cached in target/tf-schema; always runs (no schema is a
#      failure); test_tf_schema.py: it fails on each injected fault;
#   3. checkov on terraform/: fails on any finding not skipped inline with a reason;
#   4. node --test tests/infra/: the /vwr-api prefix-stripping CloudFront Function, and the
#      LocalStack kit's stand-in for the distribution routing by its behaviours.json;
#   5. test_bootstrap.py: the LocalStack kit's resource creation, run against moto
#      (VWR_TEST_AWS_ENDPOINT, else a moto server started here from tests/.venv);
#   6. an optional extra where a terraform binary and an offline AWS provider mirror exist
#      (VWR_TF_PLUGIN_DIR, else Terraform's standard plugin directories): terraform validate
#      and fmt -check of terraform/; skipped otherwise (step 2 is the schema check that
#      always runs).
# Python tools go to tests/infra/.venv (tests/infra/requirements.txt).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
VENV="$HERE/.venv"
LOGDIR="$ROOT/target/test-logs"
mkdir -p "$LOGDIR"
PASSED=0
FAILED=0
SKIPPED=0

step() { printf '\n\033[1m==> infra: %s\033[0m\n' "$*"; }
ok() { PASSED=$((PASSED + 1)); }
fail() { FAILED=$((FAILED + 1)); printf '\033[31minfra: %s failed\033[0m\n' "$*" >&2; }

cleanup() {
  if [[ -n "${MOTO_PID:-}" ]]; then kill "$MOTO_PID" 2>/dev/null || true; fi
  if [[ -n "${TF_TMP:-}" ]]; then rm -rf "$TF_TMP"; fi
}
trap cleanup EXIT

step "Python tools in tests/infra/.venv"
if [[ ! -x "$VENV/bin/checkov" ]] || ! cmp -s "$HERE/requirements.txt" "$VENV/.requirements"; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check -r "$HERE/requirements.txt"
  cp "$HERE/requirements.txt" "$VENV/.requirements"
fi

step "contract: code ⇄ packaging ⇄ Terraform ⇄ docs"
if (cd "$HERE" && "$VENV/bin/python" -m contract --root "$ROOT"); then ok; else fail "contract"; fi

step "contract: HCL evaluation (dynamic blocks, for_each maps, http_api route maps, moved blocks, console)"
if "$VENV/bin/python" "$HERE/test_contract_hcl.py"; then ok; else fail "contract HCL evaluation"; fi

step "contract: docs/openapi.yaml check (routes read from Rust, missing and extra operations)"
if "$VENV/bin/python" "$HERE/test_contract_openapi.py"; then ok; else fail "contract openapi check"; fi

step "contract: citations of a Markdown section and the count of the invariants"
if "$VENV/bin/python" "$HERE/test_contract_docs.py"; then ok; else fail "contract docs checks"; fi

step "contract: habits (file sizes, the command's error types, commit subjects)"
if "$VENV/bin/python" "$HERE/test_contract_habits.py"; then ok; else fail "contract habit checks"; fi

step "Terraform against the providers' schemas (tests/infra/tf-schema.lock.json)"
if "$VENV/bin/python" "$HERE/tf_schema.py" --root "$ROOT" --cache "$ROOT/target/tf-schema"; then ok; else fail "terraform schema check"; fi

step "Terraform schema check: injected faults fail it"
if "$VENV/bin/python" "$HERE/test_tf_schema.py"; then ok; else fail "terraform schema check self-test"; fi

step "checkov on terraform/"
if "$VENV/bin/checkov" --directory "$ROOT/terraform" --framework terraform --skip-download \
  --compact --quiet --output cli; then ok; else fail "checkov"; fi

step "CloudFront Function and distribution stand-in tests (node --test)"
if command -v node >/dev/null; then
  if node --test "$HERE"/*.test.mjs; then ok; else fail "node tests"; fi
else
  echo "node not found: skipped"; SKIPPED=$((SKIPPED + 1))
fi

step "LocalStack kit bootstrap against moto"
ENDPOINT="${VWR_TEST_AWS_ENDPOINT:-}"
if [[ -z "$ENDPOINT" ]]; then
  MOTO_VENV="$ROOT/tests/.venv"
  # As tests/run.sh: its requirements include the rehearsal's.
  if [[ ! -x "$MOTO_VENV/bin/moto_server" ]] || ! cat "$ROOT/tests/requirements.txt" "$ROOT/rehearsal/requirements.txt" | cmp -s - "$MOTO_VENV/.requirements"; then
    python3 -m venv "$MOTO_VENV"
    "$MOTO_VENV/bin/pip" install --quiet --disable-pip-version-check -r "$ROOT/tests/requirements.txt"
    cat "$ROOT/tests/requirements.txt" "$ROOT/rehearsal/requirements.txt" > "$MOTO_VENV/.requirements"
  fi
  PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')"
  "$MOTO_VENV/bin/python" "$ROOT/tests/moto_serial.py" -H 127.0.0.1 -p "$PORT" >"$LOGDIR/infra-moto.log" 2>&1 &
  MOTO_PID=$!
  ENDPOINT="http://127.0.0.1:$PORT"
  for _ in $(seq 1 100); do
    curl -fsS "$ENDPOINT/moto-api/" >/dev/null 2>&1 && break
    sleep 0.2
  done
fi
if "$VENV/bin/python" "$HERE/test_bootstrap.py" --endpoint-url "$ENDPOINT"; then ok; else fail "bootstrap on moto"; fi

step "terraform validate and fmt (optional: offline provider mirror)"
PLUGINS="${VWR_TF_PLUGIN_DIR:-}"
if [[ -z "$PLUGINS" ]]; then
  for d in "$HOME/.terraform.d/plugins" "${XDG_DATA_HOME:-$HOME/.local/share}/terraform/plugins" \
    /usr/local/share/terraform/plugins /usr/share/terraform/plugins; do
    if [[ -d "$d/registry.terraform.io/hashicorp/aws" ]]; then PLUGINS="$d"; break; fi
  done
fi
if command -v terraform >/dev/null && [[ -n "$PLUGINS" && -d "$PLUGINS/registry.terraform.io/hashicorp/aws" ]]; then
  TF_TMP="$(mktemp -d)"
  cat >"$TF_TMP/terraformrc" <<RC
provider_installation {
  filesystem_mirror {
    path    = "$PLUGINS"
    include = ["registry.terraform.io/hashicorp/aws"]
  }
}
RC
  "$VENV/bin/python" "$HERE/tf_stub.py" "$ROOT/terraform" "$TF_TMP/terraform"
  if (cd "$TF_TMP/terraform/examples/complete" &&
      TF_CLI_CONFIG_FILE="$TF_TMP/terraformrc" terraform init -backend=false -input=false -no-color >"$LOGDIR/infra-tf-init.log" 2>&1 &&
      TF_CLI_CONFIG_FILE="$TF_TMP/terraformrc" terraform validate -no-color); then ok
  else fail "terraform validate (see $LOGDIR/infra-tf-init.log)"; fi
  if TF_CLI_CONFIG_FILE="$TF_TMP/terraformrc" terraform fmt -check -recursive -diff "$ROOT/terraform"; then ok; else fail "terraform fmt -check"; fi
else
  echo "no terraform binary or no offline AWS provider (set VWR_TF_PLUGIN_DIR): skipped"; SKIPPED=$((SKIPPED + 1))
fi

echo
echo "infra: $PASSED passed, $FAILED failed, $SKIPPED skipped"
[[ "$FAILED" == 0 ]]
