#!/usr/bin/env python3
"""The Terraform schema check (tf_schema.py): it passes on terraform/ and fails on each injected
fault — an unknown argument, resource type, data source or block (a dynamic one and one inside a
dynamic block's content too), a missing required argument or block, an unknown or missing module
input, a provider version the pinned schema does not satisfy, and a lock that misstates its
package's provider release. Also the version constraint arithmetic, the schema extraction from
a jsii assembly, and the download (integrity refused, cache kept) from a registry in a directory.

    python3 tests/infra/test_tf_schema.py     (tests/infra/run.sh runs it, after tf_schema.py has
                                               filled the schema cache)
"""

import base64
import copy
import hashlib
import io
import json
import os
import shutil
import sys
import tarfile
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tf_schema as t  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CACHE = os.path.join(ROOT, "target", "tf-schema")
SCHEMAS = None


def schemas() -> dict:
    global SCHEMAS
    if SCHEMAS is None:
        SCHEMAS = t.load_schemas(CACHE)
    return SCHEMAS


class Tree(unittest.TestCase):
    """terraform/ copied to a temporary root, one file edited, the check run on the copy."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="vwr-tf-schema-")
        shutil.copytree(os.path.join(ROOT, "terraform"), os.path.join(self.tmp, "terraform"), ignore=shutil.ignore_patterns(".terraform"))

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def edit(self, path: str, old: str, new: str) -> None:
        full = os.path.join(self.tmp, "terraform", path)
        with open(full, encoding="utf-8") as fh:
            text = fh.read()
        self.assertEqual(text.count(old), 1, f"{old!r} in {path}")
        with open(full, "w", encoding="utf-8") as fh:
            fh.write(text.replace(old, new))

    def problems(self, s: dict | None = None) -> list[str]:
        return [p for ps in t.check_tree(self.tmp, s or schemas()).values() for p in ps]

    def assertFinds(self, fragment: str, s: dict | None = None) -> None:
        found = self.problems(s)
        self.assertTrue(any(fragment in p for p in found), f"{fragment!r} not in {found}")

    def test_passes_on_the_tree(self):
        self.assertEqual(self.problems(), [])

    def test_unknown_argument(self):
        self.edit("modules/lambda/main.tf", '  retention_in_days = var.log_retention_days\n', '  retention_in_days = var.log_retention_days\n  retention_days    = 7\n')
        self.assertFinds("aws_cloudwatch_log_group.this: unknown argument or block 'retention_days'")

    def test_unknown_argument_in_a_block(self):
        self.edit("modules/lambda/main.tf", '    mode = "PassThrough"\n', '    mode = "PassThrough"\n    sampling = 1\n')
        self.assertFinds("aws_lambda_function.this tracing_config: unknown argument or block 'sampling'")

    def test_unknown_argument_in_a_dynamic_block(self):
        self.edit("modules/lambda/main.tf", "      subnet_ids         = var.vpc_subnet_ids\n", "      subnet_ids         = var.vpc_subnet_ids\n      subnets            = var.vpc_subnet_ids\n")
        self.assertFinds("aws_lambda_function.this dynamic vpc_config: unknown argument or block 'subnets'")

    def test_unknown_resource_type(self):
        self.edit("modules/lambda/main.tf", 'resource "aws_cloudwatch_log_group" "this" {', 'resource "aws_cloudwatch_loggroup" "this" {')
        self.assertFinds("has no resource type aws_cloudwatch_loggroup")

    def test_unknown_data_source(self):
        self.edit("modules/edge/lambda_edge.tf", 'data "archive_file"', 'data "archive_files"')
        self.assertFinds("has no data source archive_files")

    def test_unknown_block(self):
        self.edit("modules/lambda/main.tf", "  tracing_config {\n", "  tracing {\n")
        self.assertFinds("aws_lambda_function.this: unknown argument or block 'tracing'")

    def test_unknown_dynamic_block(self):
        self.edit("modules/lambda/main.tf", 'dynamic "vpc_config" {', 'dynamic "vpc" {')
        self.assertFinds("aws_lambda_function.this: dynamic 'vpc': unknown block")

    def test_missing_required_argument(self):
        self.edit("modules/lambda/main.tf", "  function_name                  = var.function_name\n", "")
        self.assertFinds("aws_lambda_function.this: missing required argument 'function_name'")

    def test_missing_required_block(self):
        s = copy.deepcopy(schemas())
        aws = s["hashicorp/aws"]
        aws["structs"][aws["resources"]["aws_lambda_function"]]["tracing_config"][0] = 1
        self.edit("modules/lambda/main.tf", '  tracing_config {\n    mode = "PassThrough"\n  }\n', "")
        self.assertFinds("aws_lambda_function.this: missing required block 'tracing_config'", s)

    def test_required_block_given_by_a_dynamic_block(self):
        s = copy.deepcopy(schemas())
        aws = s["hashicorp/aws"]
        aws["structs"][aws["resources"]["aws_lambda_function"]]["vpc_config"][0] = 1
        found = self.problems(s)
        self.assertEqual([p for p in found if "modules/lambda/" in p], [])
        # the Lambda@Edge function has no vpc_config, not even a dynamic one
        self.assertTrue(any("lambda_edge: missing required block 'vpc_config'" in p for p in found), found)

    def test_unknown_module_input(self):
        self.edit("examples/complete/main.tf", "  dist_dir                  = local.dist_dir\n", "  dist_dir                  = local.dist_dir\n  dist_folder               = local.dist_dir\n")
        self.assertFinds("module.tier1 (terraform/modules/tier1): unknown input 'dist_folder'")

    def test_missing_required_module_input(self):
        self.edit("examples/complete/main.tf", "  dist_dir                  = local.dist_dir\n", "")
        self.assertFinds("module.tier1 (terraform/modules/tier1): required variable 'dist_dir' (no default) not passed")

    def test_provider_version_mismatch(self):
        self.edit("modules/lambda/versions.tf", 'version = "~> 5.80"', 'version = "~> 6.0"')
        self.assertFinds("terraform/modules/lambda: hashicorp/aws ~> 6.0 is not met by the schema's provider version 5.100.0")

    def test_schema_of_another_release(self):
        s = copy.deepcopy(schemas())
        s["hashicorp/aws"]["provider_version"] = "5.79.0"
        self.assertFinds("hashicorp/aws ~> 5.80 is not met by the schema's provider version 5.79.0", s)

    def test_provider_without_a_schema(self):
        self.edit("modules/lambda/versions.tf", "  required_providers {\n", '  required_providers {\n    null = {\n      source = "hashicorp/null"\n    }\n')
        self.assertFinds("provider null (hashicorp/null) has no pinned schema")

    def test_unknown_provider_argument(self):
        self.edit("examples/complete/versions.tf", '  alias  = "us_east_1"\n', '  alias  = "us_east_1"\n  regoin = "us-east-1"\n')
        self.assertFinds("provider aws: unknown argument or block 'regoin'")


class Pins(unittest.TestCase):
    def test_lock_matches_the_packages(self):
        self.assertEqual(t.check_pins(t.load_lock(), schemas()), [])

    def test_lock_misstating_the_release_fails(self):
        lock = copy.deepcopy(t.load_lock())
        lock["hashicorp/aws"]["provider_version"] = "5.80.0"
        self.assertTrue(any("the lock says" in p for p in t.check_pins(lock, schemas())))

    def test_constraints(self):
        yes = [("5.100.0", "~> 5.80"), ("5.80.0", "~> 5.80"), ("2.7.1", "~> 2.4"), ("4.1.0", "~> 4.0"), ("1.2.9", "~> 1.2.3"), ("5.1.0", ">= 5.0, < 6"), ("3.0.0", "3.0.0"), ("6.0.0", "~> 6")]
        no = [("6.0.0", "~> 5.80"), ("5.79.9", "~> 5.80"), ("1.3.0", "~> 1.2.3"), ("6.0.0", ">= 5.0, < 6"), ("3.0.1", "= 3.0.0"), ("5.1.0", "!= 5.1.0")]
        for v, c in yes:
            self.assertTrue(t.satisfies(v, c), (v, c))
        for v, c in no:
            self.assertFalse(t.satisfies(v, c), (v, c))


def assembly() -> dict:
    """A jsii assembly shaped like cdktf's: one resource with a required argument, a renamed one
    (`systemAttribute` is `system`) and an optional block."""
    link = "{@link https://registry.terraform.io/providers/hashicorp/x/1.2.3/docs/resources/x_thing"

    def prop(name, anchor, **kw):
        return {"name": name, "docs": {"summary": f"Docs at Terraform Registry: {link}#{anchor} XThing#{anchor}}}."}, "type": {"primitive": "string"}, **kw}

    rule = {"fqn": "@cdktf/provider-x.thing.XThingRule"}
    return {
        "name": "@cdktf/provider-x",
        "types": {
            "@cdktf/provider-x.thing.XThing": {"kind": "class", "base": "cdktf.TerraformResource", "docs": {"summary": f"Represents a {link} x_thing}}."}, "initializer": {"parameters": [{"name": "config", "type": {"fqn": "@cdktf/provider-x.thing.XThingConfig"}}]}},
            "@cdktf/provider-x.thing.XThingConfig": {"kind": "interface", "datatype": True, "interfaces": ["cdktf.TerraformMetaArguments"], "properties": [
                prop("name", "name"),
                prop("systemAttribute", "system", optional=True),
                {"name": "rule", "optional": True, "docs": {"summary": "rule block.", "remarks": f"Docs at Terraform Registry: {link}#rule XThing#rule}}"}, "type": {"union": {"types": [{"fqn": "cdktf.IResolvable"}, {"collection": {"kind": "array", "elementtype": rule}}]}}},
            ]},
            "@cdktf/provider-x.thing.XThingRule": {"kind": "interface", "datatype": True, "properties": [prop("maxItems", "max_items")]},
        },
    }


class Extract(unittest.TestCase):
    def test_names_required_blocks(self):
        s = t.extract(assembly())
        self.assertEqual(s["resources"], {"x_thing": "thing.XThingConfig"})
        self.assertEqual(s["structs"]["thing.XThingConfig"], {"name": [1, 0, None], "system": [0, 0, None], "rule": [0, 1, "thing.XThingRule"]})
        self.assertEqual(s["structs"]["thing.XThingRule"], {"max_items": [1, 0, None]})


class Fetch(unittest.TestCase):
    """load_schemas against a registry in a directory (file://): download, integrity, cache."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="vwr-tf-schema-registry-")
        os.makedirs(os.path.join(self.tmp, "registry", "@cdktf", "provider-x", "-"))
        tgz = os.path.join(self.tmp, "registry", "@cdktf", "provider-x", "-", "provider-x-1.0.0.tgz")
        with tarfile.open(tgz, "w:gz") as tar:
            for name, doc in (("package/package.json", {"version": "1.0.0", "cdktf": {"provider": {"name": "registry.terraform.io/hashicorp/x", "version": "1.2.3"}}}), ("package/.jsii", assembly())):
                data = json.dumps(doc).encode()
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        with open(tgz, "rb") as fh:
            digest = base64.b64encode(hashlib.sha512(fh.read()).digest()).decode()
        self.lock = {"hashicorp/x": {"package": "@cdktf/provider-x", "package_version": "1.0.0", "provider_version": "1.2.3", "integrity": f"sha512-{digest}"}}
        self.env = os.environ.get("npm_config_registry")
        os.environ["npm_config_registry"] = "file://" + os.path.join(self.tmp, "registry")

    def tearDown(self):
        if self.env is None:
            os.environ.pop("npm_config_registry", None)
        else:
            os.environ["npm_config_registry"] = self.env
        shutil.rmtree(self.tmp)

    def test_fetched_once_then_cached(self):
        cache = os.path.join(self.tmp, "cache")
        s = t.load_schemas(cache, self.lock)["hashicorp/x"]
        self.assertEqual((s["provider_version"], s["resources"]), ("1.2.3", {"x_thing": "thing.XThingConfig"}))
        self.assertEqual(t.check_pins(self.lock, {"hashicorp/x": s}), [])
        shutil.rmtree(os.path.join(self.tmp, "registry"))  # no registry: the cache serves
        self.assertEqual(t.load_schemas(cache, self.lock)["hashicorp/x"], s)

    def test_refuses_a_wrong_integrity(self):
        lock = copy.deepcopy(self.lock)
        lock["hashicorp/x"]["integrity"] = "sha512-" + base64.b64encode(b"\0" * 64).decode()
        with self.assertRaisesRegex(ValueError, "integrity"):
            t.load_schemas(os.path.join(self.tmp, "cache"), lock)


if __name__ == "__main__":
    unittest.main()
