/* The tabs of one event that are read when opened (docs/console.md#one-event): the message in
 * the waiting page's five languages with its preview, the passes, the audit as a timeline, the
 * report with its charts. */

var LANG_NAMES = { en: 'English', ko: '한국어', ja: '日本語', 'zh-Hans': '简体中文', 'zh-Hant': '繁體中文' };

/** The message tab: the message on the page now, after every read; the fields take it once per
 *  visit of the tab, when the status is first known (later reads leave an edit alone). */
function showMessage(app, view) {
  var st = view.status;
  var m = (st && st.message) || {};
  if (st && !view.messageShown) {
    view.messageShown = true;
    MESSAGE_LANGS.forEach(function (l) {
      byId('msg-' + l).value = m[l] || '';
    });
    renderPreview(app);
  }
  fillWith(
    byId('msg-now'),
    MESSAGE_LANGS.filter(function (l) {
      return m[l];
    }).map(function (l) {
      return h('div', {}, [h('dt', { text: LANG_NAMES[l] }), h('dd', { lang: l, text: m[l] })]);
    })
  );
  byId('msg-none').hidden = MESSAGE_LANGS.some(function (l) {
    return m[l];
  });
}

function messageFields() {
  var f = {};
  MESSAGE_LANGS.forEach(function (l) {
    f[l] = byId('msg-' + l).value;
  });
  return f;
}

/** The preview: the draft in the chosen language as the page's banner shows it (text, else
 *  English), and where the waiting page's preview exists (`vwr dev`: config.json's devTokens),
 *  the page itself in a frame. */
function renderPreview(app) {
  var lang = byId('preview-lang').value;
  var fields = messageFields();
  var text = String(fields[lang] || '').trim() || String(fields.en || '').trim();
  var box = byId('preview-text');
  box.textContent = text || '(no message)';
  box.setAttribute('lang', fields[lang] && fields[lang].trim() ? lang : 'en');
  MESSAGE_LANGS.forEach(function (l) {
    var n = Array.from(String(fields[l] || '').trim()).length;
    var c = byId('count-' + l);
    c.textContent = n + ' / ' + MESSAGE_MAX;
    c.className = n > MESSAGE_MAX ? 'count over' : 'count';
  });
  var frame = byId('preview-frame');
  var wrap = byId('preview-framewrap');
  wrap.hidden = !app.cfg.devTokens;
  if (!wrap.hidden) {
    var url = previewUrl(app.eventId, byId('preview-state').value, lang);
    byId('preview-open').setAttribute('href', url);
    if (frame.getAttribute('src') !== url) {
      frame.hidden = false;
      frame.setAttribute('src', url);
    }
  }
}

/** A preview the browser would not frame (a waiting page that forbids framing) is an error page
 *  of another origin: the frame goes, the link to open the preview stays. */
function previewLoaded() {
  var frame = byId('preview-frame');
  var ok = false;
  try {
    ok = !!(frame.contentDocument && frame.contentDocument.getElementById('room'));
  } catch (e) {
    ok = false;
  }
  frame.hidden = !ok;
  byId('preview-blocked').hidden = ok;
}

function wireMessage(app) {
  MESSAGE_LANGS.forEach(function (l) {
    byId('msg-' + l).addEventListener('input', function () {
      renderPreview(app);
    });
  });
  byId('preview-lang').addEventListener('change', function () {
    renderPreview(app);
  });
  byId('preview-state').addEventListener('change', function () {
    renderPreview(app);
  });
  byId('preview-frame').addEventListener('load', previewLoaded);
  byId('form-message').addEventListener('submit', function (e) {
    e.preventDefault();
    var fields = messageFields();
    var over = messageProblems(fields);
    if (over.length) {
      showProblem('Too long (over ' + MESSAGE_MAX + ' characters): ' + over.map(function (l) {
        return LANG_NAMES[l];
      }).join(', ') + '.');
      return;
    }
    var body = messageBody(fields);
    act(app, 'message', 'PUT', 'message', body, { title: 'Set the message', done: body.message ? 'The message is on the waiting page within a poll.' : 'The message is cleared.' });
  });
  byId('act-message-clear').addEventListener('click', function () {
    act(app, 'message', 'PUT', 'message', { message: null }, { title: 'Clear the message', done: 'The message is cleared.' });
  });
}

/** The passes tab: the event's unexpired passes (`GET pass`), each revocable. */
function loadPasses(app) {
  var id = app.eventId;
  setText('passes-note', 'Reading…');
  return app.api.get(apiPath('passes', id)).then(function (res) {
    var o = outcome(res);
    if (o !== 'ok') {
      setText('passes-note', o === 'missing' ? 'No such event.' : 'Could not read the passes (' + (res.network ? 'network error' : 'HTTP ' + res.status) + ').');
      if (o !== 'missing') handled(app, o, res, 'read');
      return;
    }
    var passes = (res.body && res.body.passes) || [];
    setText('passes-note', passes.length ? '' : 'No unexpired pass.');
    fillWith(
      byId('passes-body'),
      passes.map(function (p) {
        var revoke = p.revokedAt
          ? null
          : h('button', {
              type: 'button',
              'data-action': 'passRevoke',
              text: 'Revoke',
              'aria-label': 'Revoke the pass ' + p.label,
              on: {
                click: function () {
                  act(app, 'passRevoke', 'DELETE', 'passRevoke', undefined, { title: 'Revoke the pass', done: 'Revoked: the edge refuses it within seconds.' }, p.passId).then(function (r) {
                    if (r) loadPasses(app);
                  });
                },
              },
            });
        return h('tr', {}, [
          h('th', { scope: 'row', text: p.label }),
          h('td', { class: 'mono', text: p.passId }),
          h('td', { text: p.createdBy || '–' }),
          h('td', { text: formatTime(p.expiresAt) }),
          h('td', { text: p.revokedAt ? 'revoked ' + formatTime(p.revokedAt) : 'live' }),
          h('td', {}, [revoke]),
        ]);
      })
    );
    applyRole(byId('passes-body'), app.who.role);
  });
}

function wirePasses(app) {
  byId('form-pass').addEventListener('submit', function (e) {
    e.preventDefault();
    var minutes = Number(byId('pass-minutes').value || 60);
    var body = { label: byId('pass-label').value.trim(), ttlSeconds: Math.round(minutes * 60) };
    act(app, 'passCreate', 'POST', 'passCreate', body, { title: 'Create a pass', done: 'Pass created: copy it now, it is not shown again.' }).then(function (res) {
      if (!res) return;
      var out = byId('pass-new');
      out.value = (res.body && res.body.pass) || '';
      byId('pass-newwrap').hidden = false;
      out.focus();
      out.select();
      loadPasses(app);
    });
  });
}

/** The audit tab: the trail, newest first, in words. */
function loadAudit(app) {
  setText('audit-note', 'Reading…');
  return app.api.get(apiPath('audit', app.eventId)).then(function (res) {
    var o = outcome(res);
    if (o !== 'ok') {
      setText('audit-note', 'Could not read the audit (' + (res.network ? 'network error' : 'HTTP ' + res.status) + ').');
      if (o !== 'missing') handled(app, o, res, 'read');
      return;
    }
    var entries = ((res.body && res.body.entries) || []).slice().reverse();
    setText('audit-note', entries.length ? entries.length + ' entries, newest first.' : 'Nothing recorded yet.');
    fillWith(
      byId('audit-list'),
      entries.map(function (e) {
        var d = describeAudit(e);
        return h('li', {}, [
          h('time', { datetime: new Date(e.at * 1000).toISOString(), text: formatTime(e.at) }),
          ' ',
          h('strong', { text: d.who }),
          ' ' + d.what + '.',
          d.changes.length
            ? h(
                'ul',
                {},
                d.changes.map(function (c) {
                  return h('li', { text: c });
                })
              )
            : null,
        ]);
      })
    );
  });
}

/** The report tab: the totals, the waits, and the minutes as charts (docs/operate.md). */
function loadReport(app) {
  setText('report-note', 'Reading…');
  var holder = byId('report-charts');
  return Promise.all([app.api.get(apiPath('report', app.eventId)), app.api.get(apiPath('tier2report', app.eventId))]).then(function (both) {
    var res = both[0];
    var o = outcome(res);
    if (o !== 'ok') {
      setText('report-note', 'Could not read the report (' + (res.network ? 'network error' : 'HTTP ' + res.status) + ').');
      if (o !== 'missing') handled(app, o, res, 'read');
      return;
    }
    var r = res.body;
    var t = r.totals || {};
    var w = r.waitSeconds;
    var t2 = outcome(both[1]) === 'ok' ? both[1].body : null;
    setText('report-note', 'Made ' + formatTime(r.generatedAt) + ', ' + (r.minutes || []).length + ' minutes counted.');
    var rows = [
      ['Joined', t.joins],
      ['Places called', t.served],
      ['Came through', t.redeemed],
      ['Never came', t.abandoned],
      ['Released by the site', t.released],
      ['Refusals', total(t.refusals) + (total(t.refusals) ? ' (' + Object.keys(t.refusals).map(function (k) {
        return k + ' ' + t.refusals[k];
      }).join(', ') + ')' : '')],
      ['Wait p50 / p90 / p99', w ? w.p50 + ' s / ' + w.p90 + ' s / ' + w.p99 + ' s' : '–'],
      ['Target per minute', r.targetPerMinute === undefined ? '–' : formatRate(r.targetPerMinute)],
    ];
    if (t2 && t2.totals) rows.push(['Tier 2 admitted / found it full', t2.totals.admitted + ' / ' + t2.totals.overThreshold]);
    fillWith(
      byId('report-totals'),
      rows.map(function (x) {
        return h('div', {}, [h('dt', { text: x[0] }), h('dd', { text: typeof x[1] === 'number' ? formatNumber(x[1]) : String(x[1] === undefined ? '–' : x[1]) })]);
      })
    );
    fillWith(holder, []);
    var s = reportSeries(r);
    makeChart(holder, 'Joins, served and redeemed per minute', ['joins', 'served', 'redeemed']).update([s.t, s.joins, s.served, s.redeemed]);
    var codes = Object.keys(s.byCode);
    makeChart(holder, 'Refusals per minute, by code', codes.length ? codes : ['refusals']).update(
      [s.t].concat(
        codes.length
          ? codes.map(function (c) {
              return s.byCode[c];
            })
          : [s.refusals]
      )
    );
    if (t2 && t2.minutes && t2.minutes.length) {
      var m2 = t2.minutes;
      makeChart(holder, 'Tier 2 per minute: admitted, and checks that found it full', ['admitted', 'found it full']).update([
        m2.map(function (m) {
          return m.at;
        }),
        m2.map(function (m) {
          return m.admitted;
        }),
        m2.map(function (m) {
          return m.overThreshold;
        }),
      ]);
    }
  });
}
