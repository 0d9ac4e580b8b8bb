#!/usr/bin/env python3
"""Copies terraform/ to DEST with the resources of the non-AWS providers (random, tls, archive)
replaced by literals, so that `terraform validate` can check every AWS resource against the
real provider schema where only the AWS provider is available offline (tests/infra/run.sh).

    tf_stub.py SRC DEST
"""

import os
import re
import shutil
import sys

STUBS = [
    (r"random_bytes\.key\[k\]\.base64", '"QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE="'),
    (r'random_password\.redis\["[a-z]+"\]\.result', '"passwordpasswordpassword"'),
    (r"random_password\.origin\.result", '"originsecretoriginsecretoriginsecretoriginsecret"'),
    (r"tls_private_key\.entry\[k\]\.private_key_pem_pkcs8", "var.stub_pkcs8"),
    (r"tls_private_key\.entry\[k\]\.public_key_pem", "var.stub_spki"),
    (r"data\.archive_file\.lambda_edge\[0\]\.output_path", '"/dev/null"'),
    (r"data\.archive_file\.lambda_edge\[0\]\.output_base64sha256", '"stub"'),
]
DROPPED = ['resource "random_bytes"', 'resource "random_password"', 'resource "tls_private_key"', 'data "archive_file"']


def drop_block(text: str, header: str) -> str:
    i = text.find(header)
    while i != -1:
        k = text.index("{", i)
        depth = 0
        while True:
            if text[k] == "{":
                depth += 1
            elif text[k] == "}":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        text = text[:i] + text[k + 1 :]
        i = text.find(header)
    return text


def main() -> None:
    src, dst = sys.argv[1], sys.argv[2]
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".terraform", "*.tfstate*", ".terraform.lock.hcl"))
    for root, _, files in os.walk(dst):
        for f in files:
            if not f.endswith(".tf"):
                continue
            path = os.path.join(root, f)
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            for header in DROPPED:
                text = drop_block(text, header)
            for prov in ("random", "tls", "archive"):
                text = re.sub(r'\n\s*%s = \{\n\s*source\s*= "hashicorp/%s"\n\s*version = "[^"]*"\n\s*\}' % (prov, prov), "", text)
            for pattern, literal in STUBS:
                text = re.sub(pattern, literal, text)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
    with open(os.path.join(dst, "modules/tier2/stub.tf"), "w", encoding="utf-8") as fh:
        fh.write(
            'variable "stub_pkcs8" {\n  type    = string\n  default = "-----BEGIN PRIVATE KEY-----\\nAAAA\\n-----END PRIVATE KEY-----\\n"\n}\n'
            'variable "stub_spki" {\n  type    = string\n  default = "stub"\n}\n'
        )


if __name__ == "__main__":
    main()
