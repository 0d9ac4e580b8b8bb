// Shared helpers of the browser walks: free ports, child processes, readiness, admin calls.
import { spawn } from 'node:child_process';
import net from 'node:net';
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
