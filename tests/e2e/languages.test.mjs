// Every language × every state the waiting page reaches in `vwr dev`, in Debian Chromium at
// 360 px wide (static/README.md#languages): before the open (the countdown), in line, paused,
// at the turn, and sold out, in en, ko, ja, zh-Hans and zh-Hant, each chosen from the browser's
// language (Chromium's locale). Each renders the language's own title, shows no key name, no
// "undefined" and no {placeholder}, and has no horizontal scrolling
// (document.documentElement.scrollWidth <= 360). Screenshots: target/e2e/lang-{state}-{code}.png.
// Needs: target/debug/vwr (cargo build --bin vwr), /usr/bin/chromium, npm install here.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { STRINGS as S, devSession, renderedIn } from './harness.mjs';

// Chromium's locale for each language: navigator.languages, as a visitor's browser has it.
const LOCALES = { en: 'en-US', ko: 'ko-KR', ja: 'ja-JP', 'zh-Hans': 'zh-CN', 'zh-Hant': 'zh-TW' };
const CODES = Object.keys(LOCALES);
const WIDTH = 360;

let session, devUrl, browser, admin;

before(async () => {
  session = await devSession('lang');
  ({ devUrl, browser, admin } = session);
});

after(async () => {
  if (session) await session.close();
});

const state = (page, s, timeout) => page.waitForSelector(`#room[data-state="${s}"]`, { timeout: timeout ?? 40000 });

const rendered = (page, code, name, titleKey) => renderedIn(page, code, name, titleKey, WIDTH);

test('every state in every language: its strings, no missing key, no overflow at 360 px', async () => {
  const now = Math.floor(Date.now() / 1000);
  await admin('PUT', '/api/admin/vwr/schedule/soon', { prequeueAt: now + 3600, openAt: now + 7200, batchSize: 0, intervalSeconds: 1, shards: 2 });
  await admin('POST', '/api/admin/vwr/activate/gone', { batchSize: 0 });
  await admin('POST', '/api/admin/vwr/close/gone', { reason: 'sold_out' });
  // One sale per language, the operator moving the line: one visitor ahead of each page.
  const line = (code) => `l-${code}`;
  for (const code of CODES) {
    await admin('POST', `/api/admin/vwr/activate/${line(code)}`, { batchSize: 0 });
    assert.equal((await fetch(`${devUrl}/vwr-api/vwr/assign/${line(code)}`, { method: 'POST' })).status, 200);
  }

  const pages = {};
  for (const code of CODES) {
    const context = await browser.newContext({ locale: LOCALES[code], viewport: { width: WIDTH, height: 780 } });
    pages[code] = await context.newPage();
    // The event page behind `next` answers 204 No Content: the browser stays on the waiting
    // page, at its turn, to be looked at.
    await pages[code].route('**/events/**', (route) => route.fulfill({ status: 204 }));
  }
  const each = (fn) => Promise.all(CODES.map((code) => fn(pages[code], code)));

  // Before the open: the countdown (its days through Intl).
  await each(async (page, code) => {
    await page.goto(`${devUrl}/vwr/soon?next=%2Fevents%2Fsoon`);
    await state(page, 'scheduled', 15000);
    await page.waitForFunction(() => /\d\d:\d\d/.test(document.getElementById('countdown').textContent));
    await page.waitForFunction((c) => document.documentElement.lang === c, code);
    await rendered(page, code, 'countdown', 'titleSoon');
  });

  // Sold out.
  await each(async (page, code) => {
    await page.goto(`${devUrl}/vwr/gone?next=%2Fevents%2Fgone`);
    await state(page, 'closed', 15000);
    await page.waitForFunction((c) => document.documentElement.lang === c, code);
    await rendered(page, code, 'sold-out', 'titleSoldOut');
  });

  // In line, second.
  await each(async (page, code) => {
    await page.goto(`${devUrl}/vwr/${line(code)}?next=%2Fevents%2F${line(code)}`);
    await state(page, 'waiting', 15000);
    await page.waitForFunction(() => document.getElementById('position').textContent.trim() === '2');
    await page.waitForFunction((c) => document.documentElement.lang === c, code);
    await rendered(page, code, 'waiting', 'title');
  });

  // Paused, with the operator's message in English and Korean (the others show the English).
  for (const code of CODES) await admin('POST', `/api/admin/vwr/pause/${line(code)}`, { message: { en: 'A short technical pause.', ko: '잠시 점검 중입니다.' } });
  await each(async (page, code) => {
    await state(page, 'paused', 30000);
    await page.waitForFunction(() => !document.getElementById('banner').hidden);
    assert.equal(await page.textContent('#message'), S[code].paused);
    assert.equal(await page.getAttribute('#banner', 'lang'), code === 'ko' ? 'ko' : 'en', 'the message says its own language');
    await rendered(page, code, 'paused', 'title');
  });

  // Resumed, then the turn: "It is your turn!" while the event page loads.
  for (const code of CODES) await admin('POST', `/api/admin/vwr/resume/${line(code)}`);
  await each(async (page) => state(page, 'waiting', 30000));
  for (const code of CODES) await admin('POST', `/api/admin/vwr/advance/${line(code)}`, { by: 2 });
  await each(async (page, code) => {
    await state(page, 'leaving', 30000);
    assert.equal(await page.textContent('#message'), S[code].admitted);
    await rendered(page, code, 'turn', 'title');
  });
  await Promise.all(CODES.map((code) => pages[code].context().close()));
});

test("an event's page document in Chromium: its languages, title, message, logo (img-src https:), colours and links, at 360 px", async () => {
  await admin('POST', '/api/admin/vwr/activate/brand', { batchSize: 0 });
  const context = await browser.newContext({ locale: 'fr-FR', viewport: { width: WIDTH, height: 780 } });
  const page = await context.newPage();
  const violations = [];
  page.on('console', (m) => /Content.Security.Policy/i.test(m.text()) && violations.push(m.text()));
  const fetched = [];
  // The document the server side will answer (stubbed here), and its logo on another https host.
  await page.route('**/vwr-api/vwr/page/brand', (route) => {
    fetched.push(route.request().url());
    return route.fulfill({
      status: 200,
      contentType: 'application/json',
      headers: { 'cache-control': 'public, max-age=60' },
      body: JSON.stringify({
        eventId: 'brand',
        title: { en: 'Spring Festival 2026: presale', ja: '春フェス2026 先行販売' },
        message: { ja: '先行販売へようこそ。お一人様4枚まで購入できます。' },
        logoUrl: 'https://logo.example.com/spring.svg',
        colors: { accent: '#8a1538', background: '#fff8f0', text: '#1a1a1a' },
        links: { help: 'https://help.example.com/faq', terms: 'https://help.example.com/terms' },
        languages: ['en', 'ja'],
        defaultLanguage: 'ja',
        updatedAt: 1764180000,
      }),
    });
  });
  const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="80" height="40"><rect width="80" height="40" fill="#8a1538"/></svg>';
  await page.route('https://logo.example.com/**', (route) => route.fulfill({ status: 200, contentType: 'image/svg+xml', body: svg }));
  await page.goto(`${devUrl}/vwr/brand?next=%2Fevents%2Fbrand`);
  await state(page, 'waiting', 15000);
  // French matches neither of the event's languages: its default, Japanese.
  await page.waitForFunction(() => document.documentElement.lang === 'ja' && !document.getElementById('brand').hidden);
  await page.waitForFunction(() => document.getElementById('logo').naturalWidth > 0);
  const r = await page.evaluate(() => ({
    options: [...document.querySelectorAll('#lang option')].map((o) => o.value),
    event: document.getElementById('event').textContent,
    intro: document.getElementById('intro').textContent,
    title: document.title,
    accent: getComputedStyle(document.documentElement).getPropertyValue('--accent').trim(),
    help: document.getElementById('help').href,
    helpText: document.getElementById('help').textContent,
    scrollWidth: document.documentElement.scrollWidth,
  }));
  assert.deepEqual(r.options, ['en', 'ja']);
  assert.equal(r.event, '春フェス2026 先行販売');
  assert.equal(r.intro, '先行販売へようこそ。お一人様4枚まで購入できます。');
  assert.equal(r.title, `春フェス2026 先行販売 · ${S.ja.htmlTitle}`);
  assert.equal(r.accent, '#8a1538');
  assert.equal(r.help, 'https://help.example.com/faq');
  assert.equal(r.helpText, S.ja.help);
  assert.ok(r.scrollWidth <= WIDTH, `${r.scrollWidth} px`);
  await rendered(page, 'ja', 'branded', 'title');
  await page.selectOption('#lang', 'en');
  await page.waitForFunction(() => document.getElementById('event').textContent === 'Spring Festival 2026: presale');
  assert.equal(await page.getAttribute('#intro', 'lang'), 'ja', 'no English message: the default language\'s, marked as such');
  await rendered(page, 'en', 'branded', 'title');
  assert.equal(fetched.length, 1, 'fetched once');
  assert.deepEqual(violations, []);
  await context.close();
});
