/* The event's branding on the waiting page (static/README.md#event-branding), loaded by app.js
 * only when GET /vwr-api/vwr/page/{eventId} answers: the event's colours (CSS custom
 * properties), logo, help and terms links, languages, title and message. Everything is set as
 * text or attributes, never as markup; URLs must be https, colours #RRGGBB. */
(function () {
  'use strict';

  /** An https URL without spaces, quotes or angle brackets, or null. */
  function https(u) {
    return typeof u === 'string' && u.length < 2048 && /^https:\/\/[^\s"'<>\\]+$/i.test(u) ? u : null;
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
    var colors = b.colors || {};
    var vars = { accent: '--accent', background: '--bg', text: '--text' };
    for (var k in vars) if (/^#[0-9a-f]{6}$/i.test(colors[k])) doc.documentElement.style.setProperty(vars[k], colors[k]);
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

  if (typeof module === 'object' && module.exports) module.exports = { brand: brand, https: https };
  else self.vwrBrand = brand;
})();
