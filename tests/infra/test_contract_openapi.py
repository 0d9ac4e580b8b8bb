#!/usr/bin/env python3
"""The contract check of docs/openapi.yaml (contract/openapi.py, check_openapi): how it reads
the routers' routes, and that it fails when the file and the routers disagree — a route missing
from the file, a path or method of the file that no router serves, an admin route without its
security scheme — or when the file is not valid OpenAPI 3.1.

    python3 tests/infra/test_contract_openapi.py     (tests/infra/run.sh runs it)
"""

import copy
import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import contract as c  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

ROUTER = r'''
use axum::routing::{get, on, post, MethodFilter};

/// Doc comment naming .route("/doc/{event_id}", get(nothing)).
pub fn public_router(svc: Svc) -> Router {
    Router::new()
        .route("/vwr/a/{event_id}", post(assign))
        // .route("/commented/{event_id}", get(gone))
        /* .route("/block/{event_id}", get(gone)) */
        .route(
            "/vwr/b/{event_id}/{request_id}",
            get(|s: State<Svc>, p: Path<(String, String)>| async move { check(s, p).await })
                .post(other),
        )
        .route("/vwr/c/{*rest}", axum::routing::delete(remove).patch(change))
        .route("/vwr/d", on(MethodFilter::PUT.or(MethodFilter::GET), both))
        .route("/vwr/e", get_service(ServeDir::new("x")))
        .layer(middleware::from_fn(log_line("// not a comment .route(\"/s\", get(s))")))
}

pub fn admin_router(svc: Svc, auth: AdminAuth) -> Router {
    Router::new()
        .route("/api/admin/x/{event_id}", axum::routing::put(set))
        .layer(middleware::from_fn_with_state(auth, require_admin))
}

#[cfg(test)]
mod tests {
    fn t() { Router::new().route("/test-only", get(h)); }
}
'''


def by_key(routes):
    return {(r["method"], r["path"]): r for r in routes}


class ParseRoutes(unittest.TestCase):
    def setUp(self) -> None:
        self.routes, self.problems = c.parse_routes(ROUTER, "x/src/http.rs")
        self.keys = by_key(self.routes)

    def test_every_method_of_every_chain_and_nothing_in_comments_strings_or_tests(self):
        self.assertEqual(self.problems, [])
        self.assertEqual(sorted(self.keys), sorted([
            ("POST", "/vwr/a/{event_id}"),
            ("GET", "/vwr/b/{event_id}/{request_id}"),
            ("POST", "/vwr/b/{event_id}/{request_id}"),
            ("DELETE", "/vwr/c/{*rest}"),
            ("PATCH", "/vwr/c/{*rest}"),
            ("PUT", "/vwr/d"),
            ("GET", "/vwr/d"),
            ("GET", "/vwr/e"),
            ("PUT", "/api/admin/x/{event_id}"),
        ]))

    def test_line_function_and_admin(self):
        a = self.keys[("POST", "/vwr/a/{event_id}")]
        self.assertEqual((a["line"], a["fn"], a["admin"]), (7, "public_router", False))
        self.assertEqual(self.keys[("GET", "/vwr/b/{event_id}/{request_id}")]["line"], 10)
        x = self.keys[("PUT", "/api/admin/x/{event_id}")]
        self.assertEqual((x["fn"], x["admin"], x["where"]), ("admin_router", True, "x/src/http.rs:23"))

    def test_what_it_cannot_read_is_a_problem(self):
        cases = {
            '.route(PATH, get(h))': "is not .route(",
            '.route("/p", any(h))': "takes any method",
            '.route("/p", handler)': "has no method",
            '.route("/p", on(filter, h))': "names no MethodFilter",
            '.nest("/api", other())': ".nest(…) hides",
            '.route_service("/p", svc)': ".route_service(…) hides",
        }
        for call, want in cases.items():
            routes, problems = c.parse_routes(f"fn r() -> Router {{ Router::new(){call} }}", "f.rs")
            self.assertEqual(routes, [], call)
            self.assertEqual(len(problems), 1, (call, problems))
            self.assertIn(want, problems[0], call)
            self.assertIn("f.rs:1 (r)", problems[0], call)

    def test_openapi_path_names(self):
        self.assertEqual(c.openapi_path("/vwr/check/{event_id}/{request_id}"), "/vwr/check/{eventId}/{requestId}")
        self.assertEqual(c.openapi_path("/api/seats/{event_id}/{*rest}"), "/api/seats/{eventId}/{rest}")
        self.assertEqual(c.openapi_path("/api/queue/.well-known/jwks.json"), "/api/queue/.well-known/jwks.json")


class AgainstTheRepository(unittest.TestCase):
    """The real routers and the real docs/openapi.yaml, then the file changed one way at a time."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.routes, problems = c.router_operations(ROOT)
        assert problems == [], problems
        spec, problems = c.load_openapi(ROOT)
        assert problems == [] and spec is not None, problems
        cls.spec = spec

    def problems(self, spec) -> list[str]:
        return c.compare_openapi(self.routes, spec) + c.validate_openapi(spec)

    def test_the_file_matches_the_routers_and_is_valid(self):
        self.assertEqual(self.problems(self.spec), [])
        self.assertGreaterEqual(len(self.routes), 25)

    def test_a_route_missing_from_the_file_fails_naming_it(self):
        spec = copy.deepcopy(self.spec)
        del spec["paths"]["/vwr/assign/{eventId}"]
        problems = c.compare_openapi(self.routes, spec)
        self.assertEqual(len(problems), 1, problems)
        self.assertRegex(problems[0], r"^route POST /vwr/assign/\{event_id\} in functions/tier1/src/http\.rs:\d+ \(public_router\) is missing from docs/openapi\.yaml")

    def test_a_method_missing_from_the_file_fails(self):
        spec = copy.deepcopy(self.spec)
        del spec["paths"]["/api/queue/admin/event/{eventId}"]["delete"]
        problems = c.compare_openapi(self.routes, spec)
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("route DELETE /api/queue/admin/event/{event_id} in tier2/tier2/src/http.rs:", problems[0])

    def test_an_extra_path_in_the_file_fails_naming_it(self):
        spec = copy.deepcopy(self.spec)
        spec["paths"]["/vwr/extra/{eventId}"] = copy.deepcopy(spec["paths"]["/vwr/status/{eventId}"])
        problems = c.compare_openapi(self.routes, spec)
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("docs/openapi.yaml has GET /vwr/extra/{eventId}, which no router", problems[0])

    def test_an_extra_method_in_the_file_fails_with_the_served_ones(self):
        spec = copy.deepcopy(self.spec)
        item = spec["paths"]["/vwr/status/{eventId}"]
        item["delete"] = dict(item["get"], operationId="extraDelete")
        problems = c.compare_openapi(self.routes, spec)
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("has DELETE /vwr/status/{eventId}", problems[0])
        self.assertIn("(the routers serve it as GET)", problems[0])

    def test_a_path_spelled_with_the_router_names_fails_both_ways(self):
        spec = copy.deepcopy(self.spec)
        spec["paths"]["/vwr/status/{event_id}"] = spec["paths"].pop("/vwr/status/{eventId}")
        problems = c.compare_openapi(self.routes, spec)
        self.assertEqual(len(problems), 2, problems)

    def test_admin_routes_need_the_sigv4_scheme_and_public_ones_none(self):
        spec = copy.deepcopy(self.spec)
        spec["paths"]["/api/admin/vwr/events"]["get"]["security"] = [{"devAdminKey": []}]
        spec["paths"]["/vwr/status/{eventId}"]["get"]["security"] = [{"awsSigV4": []}]
        problems = c.compare_openapi(self.routes, spec)
        self.assertEqual(len(problems), 2, problems)
        self.assertIn("GET /api/admin/vwr/events in functions/tier1/src/http.rs", problems[0])
        self.assertIn("must list the awsSigV4 security scheme", problems[0])
        self.assertIn("GET /vwr/status/{event_id}", problems[1])
        self.assertIn("is public", problems[1])

    def test_the_validator_fails_an_invalid_file(self):
        spec = copy.deepcopy(self.spec)
        del spec["paths"]["/vwr/status/{eventId}"]["parameters"]
        self.assertTrue(any("eventId" in p for p in c.validate_openapi(spec)), c.validate_openapi(spec))
        spec = copy.deepcopy(self.spec)
        spec["paths"]["/vwr/status/{eventId}"]["get"]["responses"]["200"]["content"]["application/json"]["schema"] = {"$ref": "#/components/schemas/Nope"}
        self.assertNotEqual(c.validate_openapi(spec), [])
        spec = copy.deepcopy(self.spec)
        spec["paths"]["/vwr/status/{eventId}"]["get"]["responses"] = "none"
        self.assertNotEqual(c.validate_openapi(spec), [])
        spec = copy.deepcopy(self.spec)
        spec["openapi"] = "3.0.3"
        self.assertIn("OpenAPI 3.1", c.validate_openapi(spec)[0])


class WholeCheck(unittest.TestCase):
    """check_openapi on a small tree: which sources it reads, and that it fails or passes."""

    SPEC = """openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /a/{eventId}:
    parameters:
      - {name: eventId, in: path, required: true, schema: {type: string}}
    get:
      responses: {"200": {description: ok}}
"""

    def run_check(self, files: dict[str, str]) -> tuple[int, str]:
        with tempfile.TemporaryDirectory() as root:
            for path, text in files.items():
                os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
                with open(os.path.join(root, path), "w", encoding="utf-8") as fh:
                    fh.write(text)
            checks, out = c.Checks(), io.StringIO()
            with redirect_stdout(out):
                c.check_openapi(root, checks)
            return checks.failed, out.getvalue()

    def test_reads_src_only_and_fails_on_a_missing_route(self):
        router = 'pub fn r() -> Router { Router::new().route("/a/{event_id}", get(h)) }\n'
        files = {
            "functions/x/src/http.rs": router,
            "functions/x/tests/http.rs": 'fn t() { Router::new().route("/test/{event_id}", get(h)); }\n',
            "functions/x/src/tests/mod.rs": 'fn t() { Router::new().route("/unit-dir/{event_id}", get(h)); }\n',
            "tier2/y/src/tests.rs": 'fn t() { Router::new().route("/unit/{event_id}", get(h)); }\n',
            "tier2/y/benches/b.rs": 'fn b() { Router::new().route("/bench/{event_id}", get(h)); }\n',
            "tier2/y/build.rs": 'fn b() { Router::new().route("/build/{event_id}", get(h)); }\n',
            "cli/src/dev/site.rs": 'fn t() { Router::new().route("/demo/{event_id}", get(h)); }\n',
            "docs/openapi.yaml": self.SPEC,
        }
        failed, out = self.run_check(files)
        self.assertEqual(failed, 0, out)
        files["tier2/y/src/http.rs"] = 'pub fn r() -> Router { Router::new().route("/b", post(h)) }\n'
        failed, out = self.run_check(files)
        self.assertEqual(failed, 1, out)
        self.assertIn("route POST /b in tier2/y/src/http.rs:1 (r) is missing from docs/openapi.yaml", out)

    def test_fails_without_the_file(self):
        failed, out = self.run_check({"functions/x/src/http.rs": "fn r() {}\n"})
        self.assertEqual(failed, 1, out)
        self.assertIn("docs/openapi.yaml does not exist", out)


if __name__ == "__main__":
    unittest.main()
