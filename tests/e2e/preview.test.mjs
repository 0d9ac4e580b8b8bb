// Previews (docs/brand.md#previews): `vwr dev`'s `/vwr/{eventId}?preview=STATE&lang=L` shows the
// real waiting page in each state (prequeue, waiting, turn, paused, closed) in each of the five
// languages, in Debian Chromium at 360 px, without taking a place; with the event's own page
// document (title, message, logo, colours), whose colours meet AA contrast as Chromium draws
// them. `vwr preview` writes a screenshot per state × language with a progress line per shot.
// Needs: target/debug/vwr (cargo build --bin vwr), /usr/bin/chromium, npm install here.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CHROMIUM, LANGUAGES, STRINGS as S, VWR, devSession, renderedIn } from './harness.mjs';

const WIDTH = 360;
// Each preview: the page's state (`data-state`) and the string its title shows.
const STATES = {
  prequeue: ['prequeue', 'titleSoon'],
  waiting: ['waiting', 'title'],
  turn: ['leaving', 'title'],
  paused: ['paused', 'title'],
  closed: ['closed', 'titleSoldOut'],
};
const PAGE = {
  title: { en: 'Summer tour 2026', ko: '2026 여름 투어', ja: 'サマーツアー2026' },
  message: { en: 'Tickets go on sale at 8 pm.', ja: '午後8時に販売開始です。' },
  logoUrl: 'https://logo.example.com/tour.svg',
  colors: { accent: '#8a1538', background: '#fff8f0', text: '#1a1a1a' },
};
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="80" height="40"><rect width="80" height="40" fill="#8a1538"/></svg>';

let session, devUrl, browser, admin;

before(async () => {
  session = await devSession('preview');
  ({ devUrl, browser, admin } = session);
  await admin('POST', '/api/admin/vwr/activate/tour', { batchSize: 0 });
  await admin('PUT', '/api/admin/vwr/page/tour', PAGE);
});

after(async () => {
  if (session) await session.close();
});

/** WCAG 2.x contrast of two computed `rgb(r, g, b)` colours. */
function contrast(a, b) {
  const lum = (c) => {
    const [r, g, bl] = c.match(/\d+(\.\d+)?/g).slice(0, 3).map((v) => {
      const s = Number(v) / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

test('every state in every language, branded, without taking a place', async () => {
  const context = await browser.newContext({ viewport: { width: WIDTH, height: 780 } });
  await context.route('https://logo.example.com/**', (route) => route.fulfill({ status: 200, contentType: 'image/svg+xml', body: SVG }));
  const page = await context.newPage();
  const calls = [];
  page.on('request', (r) => /\/vwr-api\/vwr\/(assign|check|status)\//.test(r.url()) && calls.push(r.url()));
  for (const [name, [dataState, titleKey]] of Object.entries(STATES)) {
    for (const code of LANGUAGES) {
      await page.goto(`${devUrl}/vwr/tour?preview=${name}&lang=${code}`);
      await page.waitForSelector(`#room[data-state="${dataState}"]`, { timeout: 15000 });
      await page.waitForFunction((c) => document.documentElement.lang === c && !document.getElementById('brand').hidden, code);
      if (name === 'turn') assert.equal(await page.textContent('#message'), S[code].admitted);
      if (name === 'waiting') assert.equal((await page.textContent('#ahead')).trim(), new Intl.NumberFormat(code).format(342));
      if (name === 'prequeue') await page.waitForFunction(() => /\d\d:\d\d/.test(document.getElementById('countdown').textContent));
      await renderedIn(page, code, `preview-${name}`, titleKey, WIDTH);
    }
  }
  // The event's page document as Chromium draws it: its title (English where the event has
  // none), the logo loaded, and its colours at AA contrast.
  await page.goto(`${devUrl}/vwr/tour?preview=waiting&lang=ko`);
  await page.waitForFunction(() => !document.getElementById('brand').hidden && document.getElementById('logo').naturalWidth > 0);
  const drawn = await page.evaluate(() => {
    const bg = (e) => {
      for (; e; e = e.parentElement) {
        const c = getComputedStyle(e).backgroundColor;
        if (!/rgba\(.*, 0\)$|transparent/.test(c)) return c;
      }
      return 'rgb(255, 255, 255)';
    };
    const title = document.getElementById('title');
    const fill = document.getElementById('fill');
    return {
      event: document.getElementById('event').textContent,
      text: getComputedStyle(title).color,
      behind: bg(title),
      accent: getComputedStyle(fill).backgroundColor,
      track: bg(fill.parentElement.parentElement),
    };
  });
  assert.equal(drawn.event, PAGE.title.ko);
  assert.equal(drawn.text, 'rgb(26, 26, 26)', 'the event\'s text colour is drawn');
  assert.ok(contrast(drawn.text, drawn.behind) >= 4.5, `text ${drawn.text} on ${drawn.behind}: ${contrast(drawn.text, drawn.behind).toFixed(2)}:1`);
  assert.ok(contrast(drawn.accent, drawn.track) >= 3, `accent ${drawn.accent} on ${drawn.track}: ${contrast(drawn.accent, drawn.track).toFixed(2)}:1`);
  await context.close();

  // Not one call of the tier-1 API left the page (the page document did): nobody joined.
  assert.deepEqual(calls, []);
  const status = await admin('GET', '/api/admin/vwr/status/tour');
  assert.equal(status.issued, 0, 'no place was handed out');
  assert.equal(status.waiting, 0);
});

test('an event\'s colours are readable as Chromium draws them, in the light and the dark scheme', async () => {
  // docs/brand.md's example and a dark brand: before the page drew every surface from its
  // colours, their number was drawn at 1.07:1 (dark scheme) and 1.00:1 (light scheme).
  const brands = { docs: { accent: '#0b5fff', background: '#ffffff', text: '#1a1a1a' }, dark: { accent: '#ffcc00', background: '#000000', text: '#ffffff' } };
  for (const [id, colors] of Object.entries(brands)) {
    await admin('POST', `/api/admin/vwr/activate/${id}`, { batchSize: 0 });
    await admin('PUT', `/api/admin/vwr/page/${id}`, { title: { en: 'Tour' }, colors, links: { help: 'https://help.example.com/' } });
    for (const colorScheme of ['light', 'dark']) {
      const context = await browser.newContext({ colorScheme, viewport: { width: WIDTH, height: 780 } });
      const page = await context.newPage();
      await page.goto(`${devUrl}/vwr/${id}?preview=waiting&lang=en`);
      await page.waitForSelector('#room[data-state="waiting"]', { timeout: 15000 });
      await page.waitForFunction(() => !document.getElementById('brand').hidden && !document.getElementById('help').hidden);
      const drawn = await page.evaluate(() => {
        const bg = (e) => {
          for (; e; e = e.parentElement) {
            const c = getComputedStyle(e).backgroundColor;
            if (!/rgba\(.*, 0\)$|transparent/.test(c)) return c;
          }
          return 'rgb(255, 255, 255)';
        };
        const text = (sel) => {
          const e = document.querySelector(sel);
          return [getComputedStyle(e).color, bg(e)];
        };
        const fill = document.getElementById('fill');
        return {
          texts: Object.fromEntries(['#position', '#title', '#event', 'dt', '#lead', '#help', '#keep'].map((s) => [s, text(s)])),
          bar: [getComputedStyle(fill).backgroundColor, bg(fill.parentElement)],
          scheme: getComputedStyle(document.documentElement).colorScheme,
        };
      });
      for (const [sel, [fg, behind]] of Object.entries(drawn.texts)) {
        const r = contrast(fg, behind);
        assert.ok(r >= 4.5, `${id}, ${colorScheme} scheme: ${sel} ${fg} on ${behind} at ${r.toFixed(2)}:1`);
      }
      const r = contrast(...drawn.bar);
      assert.ok(r >= 3, `${id}, ${colorScheme} scheme: the bar ${drawn.bar.join(' on ')} at ${r.toFixed(2)}:1`);
      assert.equal(drawn.scheme, id === 'dark' ? 'dark' : 'light', 'the brand\'s colour scheme, not the visitor\'s');
      await context.close();
    }
  }
});

test('a preview of an unknown state or language is refused with 400', async () => {
  for (const q of ['preview=queued', 'preview=waiting&lang=fr', 'preview=bogus&preview=turn', 'preview=turn&lang=en&lang=ja']) {
    const r = await fetch(`${devUrl}/vwr/tour?${q}`);
    assert.equal(r.status, 400, q);
    assert.equal((await r.json()).error, 'invalid_request');
  }
  // Without `preview`, the page as deployed: no preview script.
  assert.ok(!(await (await fetch(`${devUrl}/vwr/tour`)).text()).includes('preview.js'));
});

test('vwr preview writes a screenshot per state and language, a progress line per shot', () => {
  const out = mkdtempSync(join(tmpdir(), 'vwr-preview-'));
  try {
    const r = spawnSync(VWR, ['preview', 'tour', '--url', devUrl, '--out', out, '--states', 'waiting,turn', '--langs', 'en,ja', '--chromium', CHROMIUM, '--no-sandbox'], { encoding: 'utf8', timeout: 120000 });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.deepEqual(lines.map((l) => l.split(' ').slice(0, 3).join(' ')), ['[1/4] waiting en', '[2/4] waiting ja', '[3/4] turn en', '[4/4] turn ja']);
    assert.deepEqual(readdirSync(out).sort(), ['turn-en.png', 'turn-ja.png', 'waiting-en.png', 'waiting-ja.png']);
    for (const f of readdirSync(out)) {
      const png = readFileSync(join(out, f));
      assert.equal(png.subarray(1, 4).toString(), 'PNG', f);
      assert.equal(png.readUInt32BE(16), WIDTH, `${f}: ${WIDTH} px wide`);
    }
    const bad = spawnSync(VWR, ['preview', 'tour', '--url', devUrl, '--out', out, '--states', 'queued'], { encoding: 'utf8' });
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /unknown state "queued"/);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
