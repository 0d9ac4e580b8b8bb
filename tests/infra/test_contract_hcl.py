#!/usr/bin/env python3
"""The contract check's HCL evaluation (contract/terraform.py, "HCL evaluation"): dynamic
blocks over the module's maps and over a local read from a JSON file of the module, iterator
references, lookups in the module's maps, and the keys of for_each maps (a module call's
arguments included), on the forms the modules use; and the module evaluation: the route maps
given to terraform/modules/http_api (and http_api/routes) read from the calls, `moved`
blocks followed into the modules called, and the console checks (its API's routes and
authorizer, its sign-in, its behaviour, the role claim) failing on each kind of change.

    python3 tests/infra/test_contract_hcl.py     (tests/infra/run.sh runs it)
"""

import json
import os
import shutil
import sys
import tempfile
import unittest

import hcl2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import contract as c  # noqa: E402

RULES = """
locals {
  window = 60
  rules = {
    assign = { priority = 10, path = "/a/", method = "POST", limit = var.assign_limit }
    check  = { priority = 11, path = "/c/", method = null, limit = var.check_limit }
  }
}

resource "aws_wafv2_web_acl" "this" {
  rule {
    name     = "static"
    priority = 0
  }

  dynamic "rule" {
    for_each = local.rules
    content {
      name     = "rate-${rule.key}"
      priority = rule.value.priority
      statement {
        rate_based_statement {
          limit                 = rule.value.limit
          evaluation_window_sec = local.window
          scope_down_statement {
            dynamic "byte_match_statement" {
              for_each = rule.value.method == null ? [rule.value.path] : []
              content {
                search_string = byte_match_statement.value
              }
            }
            dynamic "and_statement" {
              for_each = rule.value.method != null ? [rule.value.method] : []
              iterator = m
              content {
                statement {
                  byte_match_statement {
                    search_string = rule.value.path
                  }
                }
                statement {
                  byte_match_statement {
                    search_string = m.value
                  }
                }
              }
            }
          }
        }
      }
      action {
        dynamic "block" {
          for_each = var.action == "block" ? [1] : []
          content {
            response = "${rule.key} ${rule.value.priority}"
          }
        }
      }
      visibility_config {
        metric_name = "${var.name}-rate-${rule.key}"
      }
    }
  }

  dynamic "rule" {
    for_each = var.on ? [1] : []
    content {
      name = "optional"
    }
  }
}
"""


def parse(text: str) -> tuple[dict, dict]:
    doc = hcl2.loads(text)
    return doc, c.locals_of(doc)


class ExpandDynamic(unittest.TestCase):
    def setUp(self) -> None:
        doc, self.local = parse(RULES)
        self.acl = c.expand_dynamic(c.blocks(doc, "resource", "aws_wafv2_web_acl")["this"], self.local)
        self.rules = {c.first(r["name"]): r for r in self.acl["rule"]}

    def scope(self, name: str) -> dict:
        return self.rules[name]["statement"][0]["rate_based_statement"][0]["scope_down_statement"][0]

    def test_a_map_makes_one_block_per_entry_after_the_static_ones(self):
        self.assertEqual([c.first(r["name"]) for r in self.acl["rule"]], ["static", "rate-assign", "rate-check"])

    def test_references_become_the_values_and_expressions_stay_text(self):
        rate = self.rules["rate-assign"]["statement"][0]["rate_based_statement"][0]
        self.assertEqual(c.first(self.rules["rate-assign"]["priority"]), 10)
        self.assertEqual(c.first(rate["limit"]), "${var.assign_limit}")
        self.assertEqual(c.first(rate["evaluation_window_sec"]), "${local.window}")
        self.assertEqual(c.first(self.rules["rate-check"]["visibility_config"][0]["metric_name"]), "${var.name}-rate-check")

    def test_null_tests_pick_one_form_of_the_scope_down(self):
        self.assertEqual(list(self.scope("rate-check")), ["byte_match_statement"])
        self.assertEqual(c.first(self.scope("rate-check")["byte_match_statement"][0]["search_string"]), "/c/")
        ands = self.scope("rate-assign")["and_statement"][0]["statement"]
        self.assertEqual([c.first(s["byte_match_statement"][0]["search_string"]) for s in ands], ["/a/", "POST"])
        self.assertNotIn("byte_match_statement", self.scope("rate-assign"))

    def test_unread_for_each_stays_dynamic_with_its_content_evaluated(self):
        kept = self.rules["rate-assign"]["action"][0]["dynamic"]
        self.assertEqual(c.first(kept[0]["block"]["for_each"]), '${var.action == "block" ? [1] : []}')
        self.assertEqual(c.first(kept[0]["block"]["content"][0]["response"]), "assign 10")
        self.assertEqual([list(d) for d in self.acl["dynamic"]], [["rule"]])

    def test_a_missing_field_is_an_error(self):
        doc, local = parse('resource "r" "x" {\n  dynamic "b" {\n    for_each = local.m\n    content {\n      v = b.value.nope\n    }\n  }\n}\nlocals {\n  m = { a = { x = 1 } }\n}\n')
        with self.assertRaises(c.HclError):
            c.expand_dynamic(c.blocks(doc, "resource", "r")["x"], local)


BEHAVIOURS = """
locals {
  behaviours = jsondecode(file("${path.module}/b.json"))
  policies   = { fast = aws_cloudfront_cache_policy.fast.id, none = null }
  functions  = { none = [], strip = [aws_cloudfront_function.strip.arn], verifier = local.cf ? [aws_cloudfront_function.v[0].arn] : [] }
}

resource "aws_cloudfront_distribution" "d" {
  dynamic "default_cache_behavior" {
    for_each = [local.behaviours.default]
    iterator = b
    content {
      target_origin_id = b.value.origin
      cache_policy_id  = local.policies[b.value.policy]
      dynamic "function_association" {
        for_each = local.functions[b.value.fn]
        content {
          function_arn = function_association.value
        }
      }
    }
  }
  dynamic "ordered_cache_behavior" {
    for_each = [for b in local.behaviours.ordered : b if contains(local.origin_ids, b.origin)]
    iterator = b
    content {
      path_pattern    = b.value.pattern
      cache_policy_id = local.policies[b.value.policy]
      dynamic "function_association" {
        for_each = local.functions[b.value.fn]
        content {
          function_arn = function_association.value
        }
      }
    }
  }
}
"""


class JsonLocals(unittest.TestCase):
    """A module's local read from its JSON file, and dynamic blocks over it."""

    def load(self, doc: dict) -> tuple[dict, list[str]]:
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "terraform", "m"))
            with open(os.path.join(root, "terraform", "m", "main.tf"), "w", encoding="utf-8") as fh:
                fh.write(BEHAVIOURS)
            with open(os.path.join(root, "terraform", "m", "b.json"), "w", encoding="utf-8") as fh:
                json.dump(doc, fh)
            modules, problems, _ = c.parse_tf(root)
        mod = modules["terraform/m"]
        dist = c.blocks(mod, "resource", "aws_cloudfront_distribution")["d"]
        return c.expand_dynamic(dist, c.locals_of(mod)), problems

    DOC = {
        "default": {"origin": "site", "policy": "none", "fn": "verifier"},
        "ordered": [
            {"pattern": "/a/*", "origin": "x", "policy": "fast", "fn": "strip"},
            {"pattern": "/b/*", "origin": "y", "policy": "none", "fn": "none"},
        ],
    }

    def test_the_blocks_are_the_files_in_its_order_the_names_looked_up(self):
        dist, problems = self.load(self.DOC)
        self.assertEqual(problems, [])
        ordered = dist["ordered_cache_behavior"]
        self.assertEqual([c.first(b["path_pattern"]) for b in ordered], ["/a/*", "/b/*"])
        self.assertEqual(c.first(ordered[0]["cache_policy_id"]), "${aws_cloudfront_cache_policy.fast.id}")
        self.assertEqual(c.first(ordered[1]["cache_policy_id"]), None)
        self.assertEqual(c.first(ordered[0]["function_association"][0]["function_arn"]), "${aws_cloudfront_function.strip.arn}")
        self.assertNotIn("function_association", ordered[1])
        self.assertNotIn("dynamic", dist)

    def test_an_entry_that_is_an_expression_stays_dynamic_named(self):
        dist, _ = self.load(self.DOC)
        default = dist["default_cache_behavior"]
        self.assertEqual(len(default), 1)
        self.assertEqual(c.first(default[0]["target_origin_id"]), "site")
        kept = default[0]["dynamic"][0]["function_association"]
        self.assertIn("aws_cloudfront_function.v[0].arn", c.first(kept["for_each"]))

    def test_a_name_the_map_lacks_is_an_error(self):
        doc = {**self.DOC, "ordered": [{"pattern": "/a/*", "origin": "x", "policy": "slow", "fn": "none"}]}
        with self.assertRaises(c.HclError):
            self.load(doc)

    def test_an_unreadable_file_is_a_parse_problem(self):
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "terraform", "m"))
            with open(os.path.join(root, "terraform", "m", "main.tf"), "w", encoding="utf-8") as fh:
                fh.write(BEHAVIOURS)
            _modules, problems, _ = c.parse_tf(root)
        self.assertEqual(len(problems), 1)
        self.assertIn("b.json", problems[0])


class ForEachItems(unittest.TestCase):
    env = {"it": {"key": "k", "value": {"m": None, "p": "/p/", "list": [1, 2]}}}

    def test_forms(self):
        cases = {
            "${it.value.m == None ? [] : [it.value.p]}": [],
            "${it.value.m == None ? ['${it.value.p}'] : []}": [(0, "/p/")],
            "${it.value.p != None ? [it.value.p] : []}": [(0, "/p/")],
            "${it.value.list}": [(0, 1), (1, 2)],
            "${local.m}": [("a", 1)],
            "${local.j.list}": [(0, "x"), (1, "y")],
            "${[for x in local.j.list : x if contains(var.on, x)]}": [(0, "x"), (1, "y")],
            "${[for x in local.j.list : upper(x)]}": None,
            "${local.t[it.key]}": [(0, "k")],
            "${local.t['z']}": [],
            "${var.on ? [1] : []}": None,
            "${other.value == None ? [] : [1]}": None,
        }
        for expr, want in cases.items():
            self.assertEqual(c.for_each_items([expr], self.env, {"m": {"a": 1}, "j": {"list": ["x", "y"]}, "t": {"k": ["k"], "z": []}}), want, expr)
        self.assertEqual(c.for_each_items([["${local.j}", "${it.value.p}", "${var.x}"]], self.env, {"j": {}}), [(0, {}), (1, "/p/"), (2, "${var.x}")])

    def test_templates(self):
        self.assertEqual(c.hcl_subst("x-${it.key}-${var.name}", self.env), "x-k-${var.name}")
        self.assertEqual(c.hcl_subst("${it.value.m}", self.env), None)
        with self.assertRaises(c.HclError):
            c.hcl_subst("x-${it.value.m}", self.env)
        local = {"t": {"k": "${aws_x.k.id}"}}
        self.assertEqual(c.hcl_subst("${local.t[it.key]}", self.env, local), "${aws_x.k.id}")
        self.assertEqual(c.hcl_subst("${local.t}", self.env, local), "${local.t}", "other references to locals stay text")
        with self.assertRaises(c.HclError):
            c.hcl_subst("${local.t[it.value.p]}", self.env, local)


class Scan(unittest.TestCase):
    def test_split_skips_brackets_and_quotes(self):
        self.assertEqual(c.hcl_split("a, {b, c}, 'd, e', \"x\\\"y, z\", f(g, h)", ","), ["a", " {b, c}", " 'd, e'", ' "x\\"y, z"', " f(g, h)"])
        self.assertEqual(c.hcl_split("c ? {'k': 'a ? b'} : {}", " ? "), ["c", "{'k': 'a ? b'} : {}"])

    def test_wrapped_means_one_bracket_around_everything(self):
        for text, want in (("{a}", True), ("(merge(a), b)", True), ("{'}': 1}", True), ("{a} and {b}", False), ("(a) + (b)", False), ("a", False)):
            self.assertEqual(c.hcl_wrapped(text), want, text)


class Keys(unittest.TestCase):
    MAPS = """
locals {
  tier2 = var.tier2 != null
  apis  = merge({ tier1 = var.a }, local.tier2 ? { tier2 = var.b } : {})
  funcs = merge(local.apis, { "w-x" = "w" })
  sources = {
    cloudfront    = { through = "CloudFront" }
    protected-api = { through = "the gate's ${var.g}" }
  }
  alarms = merge(
    { for k, fn in local.funcs : "${k}-errors" => {
      description = "${fn} fails, it's ${k}"
      threshold   = contains(keys(local.apis), k) ? 0 : var.t
    } },
    {
      "one" = { d = null, e = [1, 2] }
    },
    local.tier2 ? {
      "two" = { q = { QueueName = var.tier2.q } }
    } : {},
  )
}
"""

    def test_keys_of_the_forms_the_modules_use(self):
        _doc, local = parse(self.MAPS)
        self.assertEqual(c.hcl_keys(local["apis"], local), ["tier1", "tier2"])
        self.assertEqual(c.hcl_keys("${local.sources}", local), ["cloudfront", "protected-api"])
        self.assertEqual(c.hcl_keys("${{for k , s in local.sources : k => s if k == var.x}}", local), ["cloudfront", "protected-api"])
        self.assertEqual(c.hcl_keys("${local.alarms}", local), ["tier1-errors", "tier2-errors", "w-x-errors", "one", "two"])

    def test_what_cannot_be_read_is_none(self):
        _doc, local = parse(self.MAPS)
        for expr in ("${toset(var.ids)}", "${local.nope}", "${merge(local.apis, var.more)}", "${{for k , v in local.apis : upper(k) => v}}"):
            self.assertIsNone(c.hcl_keys(expr, local), expr)


class VariableKeys(unittest.TestCase):
    """hcl_keys reads var.NAME from a module call's arguments (what http_api/routes makes)."""

    PERMISSIONS = """
locals {
  invoke_permissions = var.invoke_permissions == null ? {
    for k, r in var.routes : k => { statement_id = "apigw-${k}" }
    } : {
    for sid, path in var.invoke_permissions : sid => { statement_id = sid }
  }
}
"""

    def test_a_call_s_maps_give_the_keys(self):
        _doc, local = parse(self.PERMISSIONS)
        routes = {"assign": {"route_key": "POST /a"}, "check": {"route_key": "GET /c"}}
        self.assertEqual(c.hcl_keys("${local.invoke_permissions}", local, {"routes": [routes], "invoke_permissions": [None]}), ["assign", "check"])
        self.assertEqual(c.hcl_keys("${var.routes}", local, {"routes": [routes]}), ["assign", "check"])
        self.assertEqual(
            c.hcl_keys("${local.invoke_permissions}", local, {"routes": [routes], "invoke_permissions": [{"apigw-admin": "*/*/x/*"}]}),
            ["assign", "check", "apigw-admin"],
        )

    def test_a_variable_not_given_is_unread(self):
        _doc, local = parse(self.PERMISSIONS)
        self.assertIsNone(c.hcl_keys("${var.routes}", local))
        self.assertIsNone(c.hcl_keys("${local.invoke_permissions}", local, {"routes": [{"a": {}}]}))


def tree(**files: str) -> dict:
    """Module directory (under terraform/modules/, `/` for `__`) → its parse."""
    return {f"terraform/modules/{d.replace('__', '/')}": hcl2.loads(text) for d, text in files.items()}


MODULES = dict(
    http_api="""
resource "aws_apigatewayv2_api" "this" {
  name = var.name
}
module "routes" {
  source = "./routes"
  routes = var.routes
  invoke_permissions = var.invoke_permissions
}
""",
    http_api__routes="""
locals {
  invoke_permissions = var.invoke_permissions == null ? { for k, r in var.routes : k => r } : { for sid, p in var.invoke_permissions : sid => p }
}
resource "aws_apigatewayv2_route" "this" {
  for_each = var.routes
}
resource "aws_lambda_permission" "invoke" {
  for_each = local.invoke_permissions
}
""",
    tier1="""
module "public_api" {
  source     = "../http_api"
  invoke_arn = module.api.invoke_arn
  throttle   = { rate = var.rate, burst = 5 }
  routes = {
    assign = { route_key = "POST /vwr/assign/{eventId}", authorization = "NONE" }
    check  = { route_key = "GET /vwr/check/{eventId}/{requestId}", authorization = "NONE", throttle = { rate = 1, burst = 2 } }
  }
}
module "admin_routes" {
  source             = "../http_api/routes"
  invoke_arn         = module.admin.invoke_arn
  invoke_permissions = { "apigw-admin" = "*/*/api/admin/*" }
  routes = {
    events = { route_key = "GET /api/admin/events", authorization = "AWS_IAM" }
  }
}
moved {
  from = aws_apigatewayv2_api.public
  to   = module.public_api.aws_apigatewayv2_api.this
}
moved {
  from = aws_lambda_permission.public
  to   = module.public_api.module.routes.aws_lambda_permission.invoke["check"]
}
moved {
  from = aws_lambda_permission.admin
  to   = module.admin_routes.aws_lambda_permission.invoke["apigw-admin"]
}
""",
)


class HttpApis(unittest.TestCase):
    """The route maps given to terraform/modules/http_api and http_api/routes, read from the calls."""

    def setUp(self) -> None:
        self.modules = tree(**MODULES)

    def test_every_call_but_http_api_s_own(self):
        apis = {a["call"]: a for a in c.http_apis(self.modules)}
        self.assertEqual(sorted(apis), ["admin_routes", "public_api"])
        self.assertTrue(apis["public_api"]["creates"])
        self.assertFalse(apis["admin_routes"]["creates"])
        self.assertEqual((apis["public_api"]["lambda"], apis["admin_routes"]["lambda"]), ("api", "admin"))
        self.assertEqual(apis["public_api"]["routes"]["check"]["throttle"], {"rate": 1, "burst": 2})

    def test_route_keys_are_normalised(self):
        tier1 = self.modules["terraform/modules/tier1"]
        self.assertEqual(c.tf_routes(tier1, "public_api"), {"POST /vwr/assign/{}", "GET /vwr/check/{}/{}"})
        self.assertEqual(c.tf_routes(tier1, "admin_routes"), {"GET /api/admin/events"})
        self.assertEqual(c.tf_routes(tier1, "nope"), set())


class Moved(unittest.TestCase):
    """check_moved follows `to` into the modules called, nested, and reads for_each keys from the
    calls' arguments."""

    def problems(self, extra: str = "") -> list[str]:
        files = dict(MODULES, tier1=MODULES["tier1"] + extra)
        out: list[str] = []
        checks = c.Checks()
        checks.check = lambda _name, problems: out.extend(problems)  # type: ignore[method-assign]
        c.check_moved(checks, tree(**files))
        return out

    def test_moves_into_made_instances_pass(self):
        self.assertEqual(self.problems(), [])

    def test_each_wrong_target_is_named(self):
        bad = """
moved {
  from = aws_lambda_permission.other
  to   = module.admin_routes.aws_lambda_permission.invoke["apigw-public"]
}
moved {
  from = aws_apigatewayv2_api.admin
  to   = module.public_api.aws_apigatewayv2_api.this[0]
}
moved {
  from = aws_apigatewayv2_route.x
  to   = module.public_apis.aws_apigatewayv2_route.this
}
moved {
  from = module.public_api.aws_apigatewayv2_api.this
  to   = aws_apigatewayv2_api.again
}
"""
        got = self.problems(bad)
        self.assertEqual(len(got), 5, got)
        for want in ("not 'apigw-public'", "without count", "module.public_apis.aws_apigatewayv2_route.this is not declared", "is still declared", "aws_apigatewayv2_api.again is not declared"):
            self.assertTrue(any(want in p for p in got), (want, got))



ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CONSOLE_CHECKS = ("check_console_api", "check_console_signin", "check_console_edge", "check_admin_groups_claim")


class Console(unittest.TestCase):
    """The console checks (contract/console.py) on the repository's terraform/, and on copies of
    it with one thing changed: each change is named."""

    def problems(self, *edits: tuple[str, str, str]) -> list[str]:
        """The console checks' problems on terraform/ with each (file, old, new) edit made."""
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(os.path.join(ROOT, "terraform"), os.path.join(tmp, "terraform"), ignore=shutil.ignore_patterns(".terraform"))
            for d in ("functions", "tier2"):
                os.symlink(os.path.join(ROOT, d), os.path.join(tmp, d))
            for path, old, new in edits:
                full = os.path.join(tmp, path)
                with open(full, encoding="utf-8") as fh:
                    text = fh.read()
                self.assertIn(old, text, path)
                with open(full, "w", encoding="utf-8") as fh:
                    fh.write(text.replace(old, new, 1))
            modules, parse_problems, _ = c.parse_tf(tmp)
            self.assertEqual(parse_problems, [])
            out: list[str] = []
            checks = c.Checks()
            checks.check = lambda _name, problems: out.extend(problems)  # type: ignore[method-assign]
            c.check_console_api(tmp, checks, modules)
            c.check_console_signin(checks, modules)
            c.check_console_edge(checks, modules)
            c.check_admin_groups_claim(checks, modules, c.lambda_deployments(modules))
            return out

    def assertNamed(self, got: list[str], *wants: str) -> None:
        self.assertTrue(got, "no problem found")
        for want in wants:
            self.assertTrue(any(want in p for p in got), (want, got))

    def test_the_repository_passes(self):
        self.assertEqual(self.problems(), [])

    def test_a_console_route_that_is_not_jwt(self):
        edit = ("terraform/modules/console/main.tf", 'name => { route_key = key, authorization = "JWT", authorizer = "oidc" } }\n  authorizers', 'name => { route_key = key, authorization = "AWS_IAM", authorizer = "oidc" } }\n  authorizers')
        self.assertNamed(self.problems(edit), "module.api: routes are 'AWS_IAM'")

    def test_tier_2_routes_with_an_authorizer_of_their_own(self):
        edit = ("terraform/modules/console/main.tf", 'existing_authorizers   = { oidc = { id = module.api.authorizer_ids["oidc"], type = "JWT" } }', 'authorizers = { oidc = { type = "JWT", identity_sources = [], issuer = "https://x", audience = ["a"] } }')
        self.assertNamed(self.problems(edit), "module.tier2_routes: its routes must name module.api's authorizer")

    def test_an_admin_route_the_console_lacks(self):
        # The tier-2 routes come from the public API's map instead of the admin routes.
        edit = ("terraform/modules/tier2/outputs.tf", "route_keys             = module.admin_routes.route_keys", "route_keys             = module.public_api.route_keys")
        self.assertNamed(self.problems(edit), "not an admin route map of HTTP_API_ROUTERS")

    def test_routes_served_by_another_lambda(self):
        edit = ("terraform/modules/tier1/outputs.tf", "invoke_arn             = module.admin.invoke_arn", "invoke_arn             = module.api.invoke_arn")
        self.assertNamed(self.problems(edit), "admin_routes.invoke_arn")

    def test_a_tier_left_out(self):
        edit = ("terraform/examples/complete/main.tf", "  tier2_admin = module.tier2.admin_routes\n", "")
        self.assertNamed(self.problems(edit), "tier2_admin is None", "the code serves admin route PUT /api/queue/admin/threshold/{}")

    def test_groups_and_client(self):
        got = self.problems(
            ("terraform/modules/console/cognito.tf", '"vwr-viewer"   = {', '"vwr-reader"   = {'),
            ("terraform/modules/console/cognito.tf", "generate_secret                      = false", "generate_secret                      = true"),
            ("terraform/modules/console/cognito.tf", 'allowed_oauth_flows                  = ["code"]', 'allowed_oauth_flows                  = ["code", "implicit"]'),
            ("terraform/modules/console/cognito.tf", "allow_admin_create_user_only = true", "allow_admin_create_user_only = false"),
        )
        self.assertNamed(got, "Cognito groups ['vwr-admin', 'vwr-operator', 'vwr-reader']", "generate_secret is True", "allowed_oauth_flows ['code', 'implicit']", "anyone could sign up")

    def test_the_behaviour_and_its_headers(self):
        got = self.problems(
            ("terraform/modules/edge/console.tf", "\"script-src 'self'\",", "\"script-src 'self' 'unsafe-inline'\","),
            ("terraform/modules/edge/console.tf", 'frame_option = "DENY"', 'frame_option = "SAMEORIGIN"'),
            ("terraform/modules/edge/behaviours.json", '"responseHeadersPolicy": "console",\n      "viewerRequest": "none"', '"responseHeadersPolicy": "console",\n      "viewerRequest": "verifier"'),
        )
        self.assertNamed(got, "console CSP allows 'unsafe-inline'", "frame_options must be DENY", "runs a viewer-request function")

    def test_the_role_claim_from_one_variable(self):
        edit = ("terraform/examples/complete/main.tf", "admin_groups_claim       = var.admin_oidc_groups_claim", 'admin_groups_claim       = "groups"')
        self.assertNamed(self.problems(edit), "the tier modules get different admin_groups_claim")


if __name__ == "__main__":
    unittest.main()
