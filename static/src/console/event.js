/* The view of one event (`#/events/ID[/TAB]`, docs/console.md#one-event): its status read
 * every few seconds and kept for 30 minutes in memory for the live charts, the admin actions,
 * and the tabs of panels.js. The tabs are links, so the browser's back and forward work. */

var EVENT_EVERY_MS = 3000;
// The refusals chart reads the report (the status has no refusals) at most this often.
var REFUSALS_EVERY_MS = 30000;
var TABS = ['live', 'actions', 'message', 'passes', 'audit', 'report', 'draw'];

/** Shows event `id` on `tab`; `{stop, setTab, refresh}`. */
function eventView(app, id, tab) {
  var view = { id: id, tab: null, samples: [], status: null, tier2: null, charts: null, reportAt: 0 };
  app.eventId = id;
  setText('event-title', id);
  fillWith(byId('charts'), []);
  setText('event-summary', 'Reading…');
  function task() {
    return readEvent(app.api, id).then(function (ev) {
      if (ev.outcome === 'missing') {
        view.status = null;
        setText('event-summary', 'No such event yet: an admin can activate it (Actions).');
        byId('event-missing').hidden = false;
        return { outcome: 'ok' };
      }
      if (ev.outcome !== 'ok') return handled(app, ev.outcome, ev.res, 'read');
      byId('event-missing').hidden = true;
      view.status = ev.status;
      view.tier2 = ev.tier2;
      view.samples = keepWindow(view.samples, sampleOf(ev.status, ev.tier2, app.env.now()));
      renderSummary(view);
      if (view.tab === 'live') renderLive(app, view);
      if (view.tab === 'draw') renderDraw(view.status);
      if (view.tab === 'message') showMessage(app, view);
      return { outcome: 'ok' };
    });
  }
  var poll = poller(app.env, task, EVENT_EVERY_MS, function (o, delay) {
    app.reported(o, delay);
  });
  function setTab(t) {
    view.tab = TABS.indexOf(t) >= 0 ? t : 'live';
    TABS.forEach(function (name) {
      byId('tab-' + name).hidden = name !== view.tab;
      var link = byId('to-' + name);
      link.setAttribute('href', '#/events/' + id + (name === 'live' ? '' : '/' + name));
      if (name === view.tab) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    });
    if (view.tab === 'live') renderLive(app, view);
    if (view.tab === 'draw') renderDraw(view.status);
    view.messageShown = false;
    if (view.tab === 'message') showMessage(app, view);
    if (view.tab === 'passes') loadPasses(app);
    if (view.tab === 'audit') loadAudit(app);
    if (view.tab === 'report') loadReport(app);
  }
  setTab(tab);
  view.stop = function () {
    poll.stop();
    if (view.charts) view.charts.forEach(function (c) {
      c.destroy();
    });
  };
  view.setTab = setTab;
  view.refresh = poll.now;
  view.resize = function () {
    if (view.charts) view.charts.forEach(function (c) {
      c.resize();
    });
  };
  return view;
}

function renderSummary(view) {
  var st = view.status;
  var parts = ['State: ' + st.state];
  holds(st).forEach(function (t) {
    parts.push(t);
  });
  parts.push('read ' + new Date(view.samples[view.samples.length - 1].t).toLocaleTimeString());
  setText('event-summary', parts.join(' · '));
}

/** The live tab: the figures now, and the charts of the last 30 minutes. */
function renderLive(app, view) {
  var st = view.status;
  if (!st) return;
  var n = view.samples.length - 1;
  var t2 = view.tier2;
  var figures = [
    ['State', st.state],
    ['In line', formatNumber(st.waiting)],
    ['Joins per minute', formatRate(ratePerMinute(view.samples, 'joins', n))],
    ['Served per minute', formatRate(st.outflow ? st.outflow.servedPerMinute : ratePerMinute(view.samples, 'served', n))],
    ['Redeemed per minute', formatRate(st.outflow ? st.outflow.redeemedPerMinute : ratePerMinute(view.samples, 'redeemed', n))],
    ['Serving counter', formatNumber(st.servingCounter) + ' of ' + formatNumber(st.highestPosition)],
    ['Tier 2 active / threshold', t2 ? formatNumber(t2.active) + ' / ' + (t2.threshold === null ? '–' : formatNumber(t2.threshold)) : 'not registered'],
    ['Health hold', st.heldBy ? 'Held' + (st.holdReason ? ': ' + st.holdReason : '') : 'No'],
    ['Standby alarm', st.standbyAlarm ? st.standbyAlarm + ' (' + (st.standbyAlarmState || '?') + ')' : 'None'],
  ];
  fillWith(
    byId('live-figures'),
    figures.map(function (f) {
      return h('div', {}, [h('dt', { text: f[0] }), h('dd', { text: f[1] })]);
    })
  );
  var span = WINDOW_MS / 1000;
  if (!view.charts) {
    var holder = byId('charts');
    view.charts = [
      makeChart(holder, 'Joins, served and redeemed per minute', ['joins', 'served', 'redeemed'], 'per minute', span),
      makeChart(holder, 'People in line', ['in line'], '', span),
      makeChart(holder, 'Tier 2: active slots against the threshold', ['active', 'threshold'], '', span),
      makeChart(holder, 'Refused joins and checks per minute (from the report)', ['refusals'], 'per minute', span),
    ];
  }
  var s = liveSeries(view.samples);
  view.charts[0].update([s.t, s.joins, s.served, s.redeemed]);
  view.charts[1].update([s.t, s.line]);
  view.charts[2].update([s.t, s.active, s.threshold]);
  var now = app.env.now();
  if (now - view.reportAt >= REFUSALS_EVERY_MS) {
    view.reportAt = now;
    app.api.get(apiPath('report', view.id)).then(function (res) {
      if (outcome(res) !== 'ok' || !view.charts) return;
      var r = reportSeries(res.body, Math.floor(now / 1000), WINDOW_MS / 1000);
      view.charts[3].update([r.t, r.refusals]);
    });
  }
}

/** The draw's commitment and seed (docs/fairness.md), from the status. */
function renderDraw(st) {
  if (!st) return;
  var rows = [
    ['Seed commitment (SHA-256 of the seed)', st.seedCommitment || 'none: the event has no pre-queue'],
    ['Seed', st.seed || (st.seedCommitment ? 'kept secret until the open' : '–')],
    ['Pre-queue size', formatNumber(st.prequeueSize || 0)],
    ['Sealed counts per shard', st.sealedCounts ? st.sealedCounts.join(', ') : 'not sealed yet'],
  ];
  fillWith(
    byId('draw-figures'),
    rows.map(function (r) {
      return h('div', {}, [h('dt', { text: r[0] }), h('dd', { class: 'mono', text: r[1] })]);
    })
  );
  byId('draw-verify').setAttribute('href', '/vwr/assets/verify.html?event=' + encodeURIComponent(st.eventId));
}

/** Sends an action on the current event after its confirmation: a promise of the answer, or
 *  null when it was not sent or not done (the reason is shown). */
function act(app, action, method, kind, body, words, extra) {
  var id = app.eventId;
  return askConfirm(action, id, words.title, words.text || '').then(function (answer) {
    if (!confirmed(action, id, answer)) return null;
    showProblem('');
    showDone('Sending: ' + words.title + '…');
    return app.api.call(method, apiPath(kind, id, extra), body).then(function (res) {
      var o = outcome(res);
      if (o === 'ok') {
        showDone(words.done);
        app.refresh();
        return res;
      }
      showDone('');
      if (o === 'forbidden_role') showProblem(roleMessage(res.body, app.who.role, action));
      else if (o === 'signin') app.signInAgain();
      else if (o === 'retry')
        showProblem(
          'No answer (' + (res.network ? 'network error' : 'HTTP ' + res.status) + '): the change may or may not have been made. The view reads the event again; check it before trying again.'
        );
      else showProblem((res.body && res.body.message) || 'Refused: HTTP ' + res.status);
      return null;
    });
  });
}

/** Wires the forms of the actions tab (index.html), once. */
function wireActions(app) {
  function on(id, fn) {
    byId(id).addEventListener(byId(id).tagName === 'FORM' ? 'submit' : 'click', function (e) {
      e.preventDefault();
      fn();
    });
  }
  function number(id) {
    var v = byId(id).value.trim();
    return v === '' ? undefined : Number(v);
  }
  on('act-pause', function () {
    act(app, 'pause', 'POST', 'pause', {}, { title: 'Pause', done: 'Paused: the line keeps its places.' });
  });
  on('act-resume', function () {
    act(app, 'resume', 'POST', 'resume', undefined, { title: 'Resume', text: 'The line moves on again at its rate.', done: 'Resumed.' });
  });
  on('form-advance', function () {
    act(app, 'advance', 'POST', 'advance', { by: number('advance-by') }, { title: 'Let people through', done: 'The serving counter moved on.' });
  });
  on('form-hold', function () {
    var reason = byId('hold-reason').value.trim() || 'held from the console';
    act(app, 'health', 'PUT', 'health', { ok: false, reason: reason }, { title: 'Hold the line', done: 'The line is held: nobody more is let through.' });
  });
  on('act-unhold', function () {
    act(app, 'health', 'PUT', 'health', { ok: true }, { title: 'Lift the hold', done: 'The hold is lifted.' });
  });
  on('form-threshold', function () {
    act(app, 'threshold', 'PUT', 'threshold', { threshold: number('threshold-value') }, { title: 'Set the tier-2 threshold', done: 'Threshold set.' });
  });
  on('form-activate', function () {
    var body = {};
    if (number('activate-batch') !== undefined) body.batchSize = number('activate-batch');
    if (number('activate-interval') !== undefined) body.intervalSeconds = number('activate-interval');
    act(app, 'activate', 'POST', 'activate', body, { title: 'Activate', text: 'The waiting room gates this event from now on, and its line opens.', done: 'Activated.' });
  });
  on('form-close', function () {
    act(app, 'close', 'POST', 'close', { reason: byId('close-reason').value }, { title: 'Close the sale', text: 'The sale ends for everyone still in line. This cannot be undone.', done: 'The sale is closed.' });
  });
  on('act-deactivate', function () {
    act(app, 'deactivate', 'POST', 'deactivate', undefined, {
      title: 'Deactivate',
      text: 'The waiting room stops gating this event: everybody goes straight to the site, and the line is dropped.',
      done: 'Deactivated.',
    });
  });
}
