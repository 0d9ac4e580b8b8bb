#!/usr/bin/env node
// The waiting page has no build step: its files are served as they are (S3, `vwr dev`). One
// exception keeps the helpers it shares with the "Check the draw" page and the booking page's
// client in one place. They live in assets/app.js (the page with a weight budget: another file,
// or markers in it, would cost bytes it does not have), and this script copies them into
// assets/verify.js and queue/tier2.js, between the markers that say so; a test fails when the
// copies differ.
//
//   node static/build.mjs            rewrite the copies in verify.js and tier2.js
//   node static/build.mjs --check    fail if they are not app.js's
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const APP = join(here, 'assets', 'app.js');
export const VERIFY = join(here, 'assets', 'verify.js');
export const TIER2 = join(here, 'queue', 'tier2.js');

/** What verify.js takes from app.js: each copy's indentation (top level, or inside `start`) and functions. */
export const SHARED = [
  { indent: '  ', names: ['fill', 'queryParam', 'pickLang'] },
  { indent: '    ', names: ['read', 'number'] },
];

/** What tier2.js (the booking page's client) takes from app.js. */
export const TIER2_SHARED = [{ indent: '  ', names: ['fill', 'retryAfterSeconds', 'jitter', 'backoffSeconds', 'pollSeconds'] }];

const begin = (indent, names) => `${indent}// ---- Copied from app.js by static/build.mjs (edit it there): ${names.join(', ')} ----`;
const end = (indent) => `${indent}// ---- End of the copy ----`;

/** Function `name` at `indent` in `text`, its doc comment included. */
export function extract(text, name, indent) {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.startsWith(`${indent}function ${name}(`));
  if (at < 0 || lines.findIndex((l, i) => i > at && l.startsWith(`${indent}function ${name}(`)) >= 0) {
    throw new Error(`app.js needs exactly one \`function ${name}(\` indented by ${indent.length}`);
  }
  let from = at;
  if (at > 0 && lines[at - 1].trimEnd().endsWith('*/')) {
    let k = at - 1;
    while (k >= 0 && !lines[k].startsWith(`${indent}/**`)) k--;
    if (k >= 0) from = k;
  }
  const to = lines.findIndex((l, i) => i > at && l === `${indent}}`);
  if (to < 0) throw new Error(`app.js: the end of \`function ${name}\` was not found`);
  return lines.slice(from, to + 1).join('\n');
}

/** `text` (the file `file`) with its copies of `shared` taken from app.js. */
function copyInto(app, text, shared, file) {
  let out = text;
  for (const { indent, names } of shared) {
    const open = begin(indent, names);
    const close = end(indent);
    const i = out.indexOf(`${open}\n`);
    const j = i < 0 ? -1 : out.indexOf(`\n${close}\n`, i);
    if (i < 0 || j < 0) throw new Error(`${file} lacks the markers\n${open}\n${close}`);
    const sep = indent === '  ' ? '\n\n' : '\n';
    out = out.slice(0, i + open.length + 1) + names.map((n) => extract(app, n, indent)).join(sep) + out.slice(j);
  }
  return out;
}

/** verify.js with its copies taken from app.js. */
export function build(app = readFileSync(APP, 'utf8'), verify = readFileSync(VERIFY, 'utf8')) {
  return copyInto(app, verify, SHARED, 'verify.js');
}

/** tier2.js with its copies taken from app.js. */
export function buildTier2(app = readFileSync(APP, 'utf8'), tier2 = readFileSync(TIER2, 'utf8')) {
  return copyInto(app, tier2, TIER2_SHARED, 'queue/tier2.js');
}

function main(argv) {
  if (argv.length > 1 || (argv.length === 1 && argv[0] !== '--check')) throw new Error('usage: node static/build.mjs [--check]');
  for (const [file, text, name] of [[VERIFY, build(), 'static/assets/verify.js'], [TIER2, buildTier2(), 'static/queue/tier2.js']]) {
    if (argv[0] === '--check') {
      if (text !== readFileSync(file, 'utf8')) throw new Error(`${name}: its copies of app.js helpers are out of date: run \`node static/build.mjs\``);
      console.log(`${name} has app.js's helpers`);
    } else {
      writeFileSync(file, text);
      console.log(`${file} rewritten`);
    }
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    main(process.argv.slice(2));
  } catch (e) {
    console.error(`static/build.mjs: ${e.message}`);
    process.exit(1);
  }
}
