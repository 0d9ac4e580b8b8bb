// The built files: current with the sources, within the CloudFront Functions limits and the
// verifier's budget, and written in the subset of JavaScript the CloudFront runtime 2.0 accepts.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import vm from 'node:vm';

import { parse } from 'acorn';

import { PLACEHOLDERS, VERIFIER_BUDGET_BYTES, build, filledSize } from '../build.mjs';
import { DIST, EDGE, cloudFrontScript } from './harness.mjs';

const CLOUDFRONT_FUNCTIONS = ['cloudfront-function.js', 'waiting-page-rewrite.js'];
const MAX_FUNCTION_BYTES = 10 * 1024;

test('edge/dist is what the sources build (run `node edge/build.mjs` after editing edge/src)', async () => {
  for (const [name, text] of Object.entries(await build())) {
    assert.equal(readFileSync(join(DIST, name), 'utf8'), text, `edge/dist/${name} is stale`);
  }
  const check = spawnSync(process.execPath, [join(EDGE, 'build.mjs'), '--check'], { encoding: 'utf8' });
  assert.equal(check.status, 0, check.stderr);
});

test('each CloudFront Function is at most 10 KB', () => {
  for (const name of CLOUDFRONT_FUNCTIONS) {
    const bytes = readFileSync(join(DIST, name)).length;
    assert.ok(bytes <= MAX_FUNCTION_BYTES, `${name} is ${bytes} bytes`);
  }
});

test(`the verifier keeps 30 % of the 10 KB free: at most ${VERIFIER_BUDGET_BYTES} bytes once deployed`, () => {
  assert.equal(VERIFIER_BUDGET_BYTES, 7168);
  const text = readFileSync(join(DIST, 'cloudfront-function.js'), 'utf8');
  const size = filledSize(text);
  assert.ok(size > Buffer.byteLength(text), 'the filled size counts the 36-character KeyValueStore id');
  assert.ok(size <= VERIFIER_BUDGET_BYTES, `edge/dist/cloudfront-function.js is ${size} bytes once filled`);
});

test('the committed files keep the deployment placeholders; filled builds replace them all', async () => {
  const cff = readFileSync(join(DIST, 'cloudfront-function.js'), 'utf8');
  const lambda = readFileSync(join(DIST, 'lambda-edge', 'index.js'), 'utf8');
  assert.equal(cff.split(PLACEHOLDERS.kvsId).length, 2, 'one KVS id placeholder');
  assert.equal(cff.split(PLACEHOLDERS.failMode).length, 2, 'one fail-mode placeholder');
  assert.equal(lambda.split(PLACEHOLDERS.failMode).length, 2, 'one fail-mode placeholder');
  // The minifier must not fold the fail-mode comparison: the placeholder stays a string it is compared with.
  assert.match(cff, /"open"==="__VWR_FAIL_MODE__"\?"open":"closed"/);
  const filled = await build({ kvsId: 'abc-123', failMode: 'open' });
  for (const text of Object.values(filled)) {
    assert.ok(!text.includes('__VWR_'), 'no placeholder left');
  }
  assert.equal(filled['cloudfront-function.js'].split('"abc-123"').length, 2);
});

test('the build command refuses bad arguments with a clear message', () => {
  const run = (...args) => spawnSync(process.execPath, [join(EDGE, 'build.mjs'), ...args], { encoding: 'utf8' });
  let r = run('--fail-mode', 'sometimes', '--out', '/nonexistent');
  assert.equal(r.status, 1);
  assert.match(r.stderr, /--fail-mode must be "open" or "closed"/);
  r = run('--kvs-id', 'abc');
  assert.equal(r.status, 1);
  assert.match(r.stderr, /--out DIR/);
  r = run('--kvs-id', "x'; evil()");
  assert.match(r.stderr, /--kvs-id/);
  r = run('--bogus');
  assert.match(r.stderr, /unknown or incomplete argument/);
});

/**
 * What in `code` the CloudFront Functions runtime 2.0 does not accept (its feature list): for-of,
 * classes, destructuring, spread and rest, optional chaining, nullish coalescing and logical
 * assignment, default parameters, async functions other than top-level declarations, exports,
 * require(), and imports other than `crypto` from 'crypto' and `cf` from 'cloudfront'. Read from
 * the syntax tree, so minified code is judged as well as readable code.
 */
function unsupported(code) {
  const problems = [];
  const ast = parse(code, { ecmaVersion: 'latest', sourceType: 'module' });
  const topLevel = new Set(ast.body);
  const banned = {
    ForOfStatement: 'for-of',
    ClassDeclaration: 'class',
    ClassExpression: 'class',
    ObjectPattern: 'destructuring',
    ArrayPattern: 'destructuring',
    SpreadElement: 'spread',
    RestElement: 'rest parameters',
    ChainExpression: 'optional chaining',
    AssignmentPattern: 'default parameters',
    ExportNamedDeclaration: 'export',
    ExportDefaultDeclaration: 'export',
    ExportAllDeclaration: 'export',
  };
  const visit = (node) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node.type !== 'string') return;
    const at = `${node.type} at ${node.start}`;
    if (banned[node.type]) problems.push(`${banned[node.type]} (${at})`);
    if (node.type === 'LogicalExpression' && node.operator === '??') problems.push(`nullish coalescing (${at})`);
    if (node.type === 'AssignmentExpression' && ['??=', '||=', '&&='].includes(node.operator)) problems.push(`logical assignment (${at})`);
    if (node.async && !(node.type === 'FunctionDeclaration' && topLevel.has(node))) problems.push(`async function not at the top level (${at})`);
    if (node.type === 'CallExpression' && node.callee.type === 'Identifier' && node.callee.name === 'require') problems.push(`require() (${at})`);
    if (node.type === 'ImportDeclaration') {
      const what = `${node.specifiers.map((s) => `${s.type}:${s.local.name}`).join(',')} from ${node.source.value}`;
      if (!['ImportDefaultSpecifier:crypto from crypto', 'ImportDefaultSpecifier:cf from cloudfront'].includes(what)) problems.push(`import ${what}`);
    }
    for (const key of Object.keys(node)) if (key !== 'type' && typeof node[key] === 'object') visit(node[key]);
  };
  visit(ast);
  const handler = ast.body.find((n) => n.type === 'FunctionDeclaration' && n.id.name === 'handler');
  if (!handler || handler.params.length !== 1) problems.push('no top-level function handler(event)');
  return problems;
}

test('the runtime-2.0 check finds what the runtime lacks', () => {
  const code = [
    "import fs from 'fs';",
    'var { a } = b;',
    'for (var x of y) {}',
    'class C {}',
    'f(...z);',
    'var d = p?.q ?? 1;',
    'function g(n = 1) {}',
    'var h = async () => 1;',
    'function handler(event) { return async function () {}; }',
    "require('x');",
    'export var e = 1;',
  ].join('\n');
  const found = unsupported(code).join('\n');
  for (const what of ['import', 'destructuring', 'for-of', 'class', 'spread', 'optional chaining', 'nullish coalescing', 'default parameters', 'async function not at the top level', 'require()', 'export']) {
    assert.ok(found.includes(what), `${what} not found in:\n${found}`);
  }
  assert.deepEqual(unsupported("import crypto from 'crypto';\nimport cf from 'cloudfront';\nasync function handler(event) { return (x) => x; }"), []);
});

test('CloudFront Functions use only what runtime 2.0 supports', () => {
  for (const name of CLOUDFRONT_FUNCTIONS) {
    const text = readFileSync(join(DIST, name), 'utf8');
    assert.deepEqual(unsupported(text), [], name);
    for (const line of text.split('\n')) {
      if (/^import /.test(line)) assert.match(line, /^import (crypto from 'crypto'|cf from 'cloudfront');$/);
    }
    // It compiles, once its imports are taken out.
    new vm.Script(cloudFrontScript(text).body, { filename: name });
  }
});

test('the Lambda@Edge bundle loads under plain Node (CommonJS)', () => {
  const out = execFileSync(process.execPath, ['-e', `const m = require(${JSON.stringify(join(DIST, 'lambda-edge', 'index.js'))}); console.log(typeof m.handler, typeof m.setConfig)`], { encoding: 'utf8' });
  assert.equal(out.trim(), 'function function');
});
