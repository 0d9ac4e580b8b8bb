"""Runs every check: one line per check, then "N passed, M failed"; exit status 1 on a failure."""

from __future__ import annotations

import argparse
import os

from .common import Checks
from .console import check_admin_groups_claim, check_console_api, check_console_edge, check_console_signin
from .docs import (
    check_citations,
    check_data_doc,
    check_invariant_counts,
    check_markdown_words,
    check_readme_routes,
    check_readme_size,
    check_settings_doc,
)
from .edge import (
    check_behaviours,
    check_booking_page,
    check_edge,
    check_line_document,
    check_origin_lock,
    check_release,
    check_status_document,
    check_throttling,
    check_verifier_behaviours,
    check_waiting_page_headers,
)
from .habits import check_commit_subjects, check_error_types, check_source_sizes
from .iam import (
    check_admin_allow_list,
    check_edge_keys,
    check_iam,
    check_kms_decrypt,
    check_tier2_link_keys,
    check_tier2_writes,
)
from .lambdas import (
    check_binaries,
    check_dist_refs,
    check_env,
    check_env_users,
    check_localstack_routes,
    check_routes,
    check_shared_settings,
    check_table,
    check_timeouts,
    localstack_functions,
    package_layout,
)
from .observability import check_alarms
from .openapi import check_openapi
from .rust import scan_crate
from .tables import CRATES, PLANNED_ENV
from .terraform import check_checkov_skips, check_moved, lambda_deployments, load_tf
from .waf import check_waf, check_waf_queue_nat


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))
    args = ap.parse_args()
    root = args.root
    checks = Checks()

    modules = load_tf(root, checks)
    layout = package_layout(root)
    deployments = lambda_deployments(modules)
    scans = {c: scan_crate(root, c) for c in CRATES}
    ls = localstack_functions(root)

    check_binaries(root, checks, layout, deployments, set(ls) if ls is not None else None)
    check_dist_refs(root, checks, layout, modules)
    check_env(root, checks, deployments, scans, "Terraform")
    if ls is not None:
        ls_deployments = [
            {"where": "localstack/bootstrap.py", "module_dir": "localstack", "binary": b, "env": {k: str(v) for k, v in f["env"].items()}, "env_ref": "FUNCTIONS", "timeout": f["timeout"]}
            for b, f in ls.items()
        ]
        check_env(root, checks, ls_deployments, scans, "LocalStack")
        check_env_users(checks, scans, ls_deployments, "LocalStack", exact=False)
        check_localstack_routes(root, checks)
        check_timeouts(checks, ls_deployments)
    check_env_users(checks, scans, deployments, "Terraform", exact=True)
    for name in PLANNED_ENV:
        if any(name in scans[c]["reads"] for c in CRATES):
            print(f"note {name} is now read by the code: it can leave PLANNED_ENV")
    check_shared_settings(checks, deployments)
    index = check_table(root, checks, modules)
    check_iam(root, checks, deployments, scans, index)
    check_timeouts(checks, deployments)
    check_routes(root, checks, modules)
    check_edge(root, checks, layout)
    check_origin_lock(checks, modules, deployments)
    check_throttling(checks, modules)
    check_kms_decrypt(checks, modules)
    check_edge_keys(root, checks, modules)
    check_tier2_link_keys(root, checks, modules, deployments)
    check_tier2_writes(root, checks, deployments)
    check_behaviours(checks, modules)
    check_waiting_page_headers(checks, modules)
    check_booking_page(root, checks, modules, layout)
    check_status_document(checks, modules)
    check_release(checks, modules)
    check_line_document(checks, modules)
    check_waf(root, checks, modules)
    check_waf_queue_nat(root, checks, modules)
    check_alarms(root, checks, modules)
    check_verifier_behaviours(checks, modules)
    check_admin_allow_list(checks, modules, deployments)
    check_admin_groups_claim(checks, modules, deployments)
    check_console_api(root, checks, modules)
    check_console_signin(checks, modules)
    check_console_edge(checks, modules)
    check_moved(checks, modules)
    check_checkov_skips(root, checks)
    check_readme_routes(root, checks)
    check_readme_size(root, checks)
    check_settings_doc(root, checks)
    check_data_doc(root, checks)
    check_citations(root, checks)
    check_invariant_counts(root, checks)
    check_markdown_words(root, checks)
    check_openapi(root, checks)
    check_source_sizes(root, checks)
    check_error_types(root, checks)
    check_commit_subjects(root, checks)

    print(f"{checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed else 0
