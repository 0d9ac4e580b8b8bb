// The waiting page's languages (static/README.md#languages): one file each under
// assets/i18n/, one <option> each in index.html's switcher, one line each in `vwr dev`'s list.
// Every file has exactly the keys of en.js, none empty, the same {placeholders}; and the
// browser's language list maps to one of them.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';

const STATIC = join(import.meta.dirname, '..');
const DIR = join(STATIC, 'assets', 'i18n');
const app = createRequire(import.meta.url)(join(STATIC, 'assets', 'app.js'));
const HTML = readFileSync(join(STATIC, 'index.html'), 'utf8');
const OPTIONS = [...HTML.matchAll(/<option value="([\w-]+)" lang="([\w-]+)">([^<]+)<\/option>/g)].map((m) => ({ code: m[1], lang: m[2], name: m[3] }));
const FILES = readdirSync(DIR).filter((f) => f.endsWith('.js')).sort();

/** Runs a language file as the browser does; answers what it registered. */
function load(file) {
  const self = {};
  new Function('self', readFileSync(join(DIR, file), 'utf8'))(self);
  return self.VWR_LANGS;
}
const EN = load('en.js').en;
const holes = (s) => [...new Set([...String(s).matchAll(/\{(\w+)\}/g)].map((m) => m[1]))].sort();

test('each file registers its own language, with exactly the keys of en.js, none empty, the same placeholders', () => {
  for (const file of FILES) {
    const code = file.slice(0, -3);
    const reg = load(file);
    assert.deepEqual(Object.keys(reg), [code], `${file} registers ${code} and nothing else`);
    const strings = reg[code];
    assert.deepEqual(Object.keys(strings).sort(), Object.keys(EN).sort(), `${file}: the keys of en.js`);
    for (const [key, value] of Object.entries(strings)) {
      // A string, or plural forms by Intl.PluralRules category, `other` always there.
      const forms = typeof value === 'string' ? { other: value } : value;
      assert.equal(typeof forms.other, 'string', `${file} ${key}: a string, or {one?, …, other}`);
      for (const [cat, s] of Object.entries(forms)) {
        assert.ok(['zero', 'one', 'two', 'few', 'many', 'other'].includes(cat), `${file} ${key}.${cat}`);
        assert.equal(typeof s, 'string');
        assert.ok(s.trim(), `${file} ${key}: not empty`);
        const en = typeof EN[key] === 'string' ? EN[key] : EN[key].other;
        assert.deepEqual(holes(s), holes(en), `${file} ${key}: the placeholders of en.js`);
      }
    }
  }
});

test('the switcher offers exactly the files, each in its own name with its lang; vwr dev serves each', () => {
  assert.deepEqual(OPTIONS.map((o) => `${o.code}.js`).sort(), FILES);
  assert.ok(FILES.length >= 5);
  for (const o of OPTIONS) assert.equal(o.lang, o.code, `${o.code}: lang="${o.code}"`);
  assert.deepEqual(OPTIONS.map((o) => o.name), ['English', '한국어', '日本語', '简体中文', '繁體中文']);
  const site = readFileSync(join(STATIC, '..', 'cli', 'src', 'dev', 'site.rs'), 'utf8');
  for (const f of FILES) assert.ok(site.includes(`("${f}", include_str!("../../../static/assets/i18n/${f}"))`), `cli/src/dev/site.rs serves ${f}`);
});

test('the browser languages map to a file: saved first, zh by script and region, else en', () => {
  const have = OPTIONS.map((o) => o.code);
  const cases = [
    [null, ['zh-TW'], 'zh-Hant'],
    [null, ['zh-HK', 'en'], 'zh-Hant'],
    [null, ['zh-MO'], 'zh-Hant'],
    [null, ['zh-Hant-TW'], 'zh-Hant'],
    [null, ['zh-Hant'], 'zh-Hant'],
    [null, ['zh-CN'], 'zh-Hans'],
    [null, ['zh-SG'], 'zh-Hans'],
    [null, ['zh-Hans-CN'], 'zh-Hans'],
    [null, ['zh'], 'zh-Hans'],
    [null, ['ja-JP', 'en'], 'ja'],
    [null, ['ja'], 'ja'],
    [null, ['ko-KR'], 'ko'],
    [null, ['en-GB', 'ko'], 'en'],
    [null, ['fr-FR', 'de', 'ja'], 'ja'],
    [null, ['fr-FR'], 'en'],
    [null, [], 'en'],
    ['zh-Hant', ['ko'], 'zh-Hant'],
    ['ja', ['en-US'], 'ja'],
    ['xx', ['ko'], 'ko'],
  ];
  for (const [saved, languages, want] of cases) assert.equal(app.pickLang(saved, languages, have), want, `${saved} ${JSON.stringify(languages)}`);
  // An event's languages (its page document) narrow the choice; its default when none matches.
  assert.equal(app.pickLang(null, ['ja'], ['en', 'ko'], 'ko'), 'ko');
  assert.equal(app.pickLang(null, ['ja'], ['en', 'ko']), 'en');
  assert.equal(app.pickLang('ja', ['en'], ['en', 'ko'], 'ko'), 'en', 'a saved language the event lacks gives way');
  assert.equal(app.pickLang(null, ['fr'], ['ja']), 'ja');
});
