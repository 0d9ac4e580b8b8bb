/* The event's branding on the waiting page (static/README.md#event-branding), loaded by app.js
 * only when GET /vwr-api/vwr/page/{eventId} answers: the event's colours (CSS custom
 * properties), logo, help and terms links, languages, title and message. Everything is set as
 * text or attributes, never as markup; URLs must be https, colours #RRGGBB, and every colour
 * the page draws is derived from the three the event sets (palette). */
(function () {
  'use strict';

  /** An https URL without spaces, quotes or angle brackets, or null. */
  function https(u) {
    return typeof u === 'string' && u.length < 2048 && /^https:\/\/[^\s"'<>\\]+$/i.test(u) ? u : null;
  }

  /** `#rrggbb` → [r, g, b]. */
  function rgb(c) {
    return [1, 3, 5].map(function (i) {
      return parseInt(c.slice(i, i + 2), 16);
    });
  }
  /** WCAG 2.x relative luminance. */
  function lum(c) {
    var l = c.map(function (v) {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
  }
  /** WCAG 2.x contrast ratio, 1 to 21. */
  function ratio(a, b) {
    var x = lum(a), y = lum(b);
    return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
  }
  /** `a` moved `p` % of the way to `b`, per channel, in integers (the server's own rounding). */
  function mix(a, b, p) {
    return a.map(function (v, i) {
      return Math.floor((v * (100 - p) + b[i] * p + 50) / 100);
    });
  }
  function hex(c) {
    return '#' + c.map(function (v) {
      return (v < 16 ? '0' : '') + v.toString(16);
    }).join('');
  }

  /**
   * Every colour the page draws, from the event's three (docs/brand.md#colours), the same in both
   * colour schemes: the card is the background; muted text 30 % of the way to the background,
   * or the text where that reads below 4.5:1; the bar's track and the banner 12, 8 or 4 % of the
   * way to the text, the first where the text stays at 4.5:1 and the accent at 3:1 (else the
   * background); links in the accent where it reads at 4.5:1, else in the text. Every pair is
   * thus readable by construction once text/background (4.5:1) and accent/background (3:1) are,
   * which the server checks (functions/tier1/src/model/page.rs, the same derivation).
   * `colors`: {accent, background, text}, `#rrggbb` each; null if any is not.
   */
  function palette(colors) {
    var c = colors || {};
    var ok = ['accent', 'background', 'text'].every(function (k) {
      return typeof c[k] === 'string' && /^#[0-9a-f]{6}$/i.test(c[k]);
    });
    if (!ok) return null;
    var bg = rgb(c.background), text = rgb(c.text), accent = rgb(c.accent);
    var muted = mix(text, bg, 30);
    if (ratio(muted, bg) < 4.5) muted = text;
    var track = bg;
    for (var p = 12; p > 0; p -= 4) {
      var t = mix(bg, text, p);
      if (ratio(text, t) >= 4.5 && ratio(accent, t) >= 3) {
        track = t;
        break;
      }
    }
    return {
      bg: hex(bg),
      card: hex(bg),
      text: hex(text),
      muted: hex(muted),
      track: hex(track),
      accent: hex(accent),
      link: hex(ratio(accent, bg) >= 4.5 ? accent : text),
      scheme: lum(bg) < lum(text) ? 'dark' : 'light',
    };
  }

  /**
   * Applies page document `b` to `doc`. `have`: the page's languages (its switcher);
   * `localized(texts, lang, fallback)` → [text, its language] (app.js). Answers {languages: the
   * event's among `have` (all of `have` if it names none), render(lang): shows the title and
   * message in `lang` (else the event's default language) and answers the tab title's prefix}.
   */
  function brand(b, doc, have, localized) {
    var el = function (id) {
      return doc.getElementById(id);
    };
    var languages = [].concat(b.languages || []).filter(function (c) {
      return have.indexOf(c) >= 0;
    });
    if (!languages.length) languages = have;
    var sel = el('lang');
    for (var i = sel.options.length - 1; i >= 0; i--) if (languages.indexOf(sel.options[i].value) < 0) sel.remove(i);
    sel.hidden = languages.length < 2;
    // All of the page's colours, inline on <html>: they win over both colour schemes of
    // style.css, and `color-scheme` is the brand's, so nothing switches under the visitor's.
    var pal = palette(b.colors);
    if (pal) {
      var root = doc.documentElement.style;
      for (var k in pal) if (k !== 'scheme') root.setProperty('--' + k, pal[k]);
      root.setProperty('color-scheme', pal.scheme);
    }
    var links = b.links || {};
    ['help', 'terms'].forEach(function (k) {
      if (!https(links[k])) return;
      el(k).setAttribute('href', links[k]);
      el(k).hidden = el('links').hidden = false;
    });
    // The logo and title's layout is here, not in style.css: it costs the first load nothing.
    var box = el('brand').style;
    box.display = 'flex';
    box.alignItems = 'center';
    box.gap = '0.5rem';
    box.margin = '0';
    box.fontWeight = '600';
    el('logo').style.maxHeight = '40px';
    el('logo').style.maxWidth = '8rem';
    sel.style.flexShrink = '0';
    if (https(b.logoUrl)) {
      el('logo').setAttribute('src', b.logoUrl);
      el('logo').hidden = false;
    }
    function put(id, t) {
      el(id).textContent = t[0];
      el(id).setAttribute('lang', t[1]);
      el(id).hidden = !t[0];
      return t[0];
    }
    return {
      languages: languages,
      render: function (lang) {
        var title = put('event', localized(b.title, lang, b.defaultLanguage));
        put('intro', localized(b.message, lang, b.defaultLanguage));
        // The logo's alt is empty: the title beside it names the event.
        el('brand').hidden = !title && el('logo').hidden;
        return title ? title + ' · ' : '';
      },
    };
  }

  if (typeof module === 'object' && module.exports) module.exports = { brand: brand, https: https, palette: palette, ratio: function (a, b) { return ratio(rgb(a), rgb(b)); } };
  else self.vwrBrand = brand;
})();
