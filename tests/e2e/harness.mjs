// Shared helpers of the browser walks: free ports, child processes, readiness, admin calls.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';

/** A TCP port that was free a moment ago. */
export function freePort() {
  return new Promise((ok, fail) => {
    const s = net.createServer();
    s.on('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

/** Starts a child whose output is kept (`child.output()`); `children` collects it for cleanup. */
export function start(children, cmd, args, env) {
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  child.output = () => out;
  children.push(child);
  return child;
}

/** Waits until `url` answers below 500; `what()` names it in the error. */
export async function waitFor(url, what) {
  const deadline = Date.now() + 30000;
  for (;;) {
    try {
      const r = await fetch(url);
      if (r.status < 500) return;
    } catch { /* not up yet */ }
    if (Date.now() > deadline) throw new Error(`${what()} did not start`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** An admin caller for the server at `base()` with the bearer `key`; non-2xx fails the test. */
export function adminClient(base, key) {
  return async (method, path, body) => {
    const r = await fetch(base() + path, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await r.json().catch(() => null);
    assert.ok(r.ok, `${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
    return json;
  };
}

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run'];

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const VWR = process.env.VWR_BIN || join(ROOT, 'target', 'debug', 'vwr');
export const CHROMIUM = process.env.VWR_CHROMIUM || '/usr/bin/chromium';
export const ARTIFACTS = join(ROOT, 'target', 'e2e');

/**
 * `vwr dev` (in-memory stores, native edge, no dev user header) on a free port, its own state
 * directory, a fresh admin key, and Chromium: `session.devUrl`, `.devDir`, `.browser`,
 * `.admin(method, path, body)`; `session.close()` ends them all. `env`: more for `vwr dev`.
 */
export async function devSession(tag, env = {}) {
  mkdirSync(ARTIFACTS, { recursive: true });
  const key = 'e2e-admin-key-' + Math.random().toString(36).slice(2);
  const s = { children: [], devDir: mkdtempSync(join(tmpdir(), `vwr-e2e-${tag}-`)), browser: null };
  s.devUrl = `http://127.0.0.1:${await freePort()}`;
  s.admin = adminClient(() => s.devUrl, key);
  s.close = async () => {
    if (s.browser) await s.browser.close();
    for (const c of s.children) c.kill('SIGTERM');
    rmSync(s.devDir, { recursive: true, force: true });
  };
  const dev = start(s.children, VWR, ['dev', '--addr', s.devUrl.slice(7), '--store', 'memory', '--no-dev-user-header'],
    { VWR_DEV_DIR: s.devDir, VWR_ADMIN_KEY: key, RUST_LOG: 'warn', ...env });
  await waitFor(`${s.devUrl}/healthz`, () => `vwr dev (${dev.output()})`);
  const { chromium } = await import('playwright-core');
  s.browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  return s;
}

/** The waiting page's languages (static/assets/i18n/), and their strings by language. */
export const LANGUAGES = ['en', 'ko', 'ja', 'zh-Hans', 'zh-Hant'];
const loaded = {};
for (const code of LANGUAGES) new Function('self', readFileSync(join(ROOT, 'static', 'assets', 'i18n', `${code}.js`), 'utf8'))(loaded);
export const STRINGS = loaded.VWR_LANGS;
const KEYS = Object.keys(STRINGS.en);

/**
 * Checks the waiting page as it is shown: in `code`, its title the string of `titleKey`, the
 * switcher named in the language, no key name, no "undefined" and no {placeholder} anywhere,
 * no horizontal scrolling at `width`; then a screenshot target/e2e/lang-{name}-{code}.png.
 */
export async function renderedIn(page, code, name, titleKey, width) {
  const r = await page.evaluate(() => {
    const shown = (e) => !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length);
    const leaves = [...document.querySelectorAll('body *')].filter((e) => shown(e) && !e.children.length && e.tagName !== 'OPTION');
    return {
      text: document.body.innerText,
      leaves: leaves.map((e) => e.textContent.trim()),
      title: document.title,
      h1: document.getElementById('title').textContent,
      lang: document.documentElement.lang,
      label: document.getElementById('lang').getAttribute('aria-label'),
      scrollWidth: document.documentElement.scrollWidth,
    };
  });
  const where = `${name} in ${code}`;
  const S = STRINGS;
  assert.equal(r.lang, code, `${where}: <html lang>`);
  assert.equal(r.h1, S[code][titleKey], `${where}: the title in the language`);
  assert.equal(r.label, S[code].language, `${where}: the switcher's name`);
  assert.ok(r.scrollWidth <= width, `${where}: no horizontal scrolling (${r.scrollWidth} px)`);
  for (const text of [r.text, r.title]) {
    assert.ok(!/undefined|NaN|\{\w+\}/.test(text), `${where}: nothing unfilled in ${JSON.stringify(text)}`);
    // A key name shown instead of its string: camelCase keys anywhere, any key as a whole text.
    for (const k of KEYS.filter((k) => /[A-Z]/.test(k))) assert.ok(!text.includes(k), `${where}: key ${k} shown`);
  }
  for (const leaf of r.leaves) assert.ok(!KEYS.includes(leaf), `${where}: key ${leaf} shown`);
  await page.screenshot({ path: join(ARTIFACTS, `lang-${name}-${code}.png`), fullPage: true });
}
