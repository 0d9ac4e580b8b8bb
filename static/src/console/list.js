/* The view of every event (`#/`, docs/console.md#every-event): the events the waiting room gates
 * (`GET /api/admin/vwr/events`) and each one's status, read again every few seconds: state,
 * line, served and redeemed per minute, tier 2's active slots against its threshold, a health
 * hold, a standby alarm. */

var LIST_EVERY_MS = 5000;

/** One event's tier-1 status and tier-2 figures: `{id, outcome, status, tier2, retryAfter}`.
 *  Tier 2's come inside the status from `vwr dev`, else from tier 2's own admin status; a
 *  failure of that second read leaves them out without failing the event. */
function readEvent(api, id) {
  return api.get(apiPath('status', id)).then(function (res) {
    var o = outcome(res);
    if (o !== 'ok') return { id: id, outcome: o, res: res, retryAfter: res.retryAfter };
    var st = res.body || {};
    if (st.tier2) return { id: id, outcome: 'ok', status: st, tier2: st.tier2 };
    return api.get(apiPath('tier2status', id)).then(function (r2) {
      var t2 = outcome(r2) === 'ok' && r2.body && r2.body.registered ? r2.body : null;
      return { id: id, outcome: 'ok', status: st, tier2: t2 };
    });
  });
}

/** The cells of one event's row, as texts. */
function listRow(ev) {
  var st = ev.status || {};
  var out = st.outflow || {};
  var t2 = ev.tier2;
  return {
    state: st.state || (ev.outcome === 'missing' ? 'not found' : '?'),
    line: st.waiting === undefined ? '–' : formatNumber(st.waiting),
    served: formatRate(out.servedPerMinute),
    redeemed: formatRate(out.redeemedPerMinute),
    tier2: t2 ? formatNumber(t2.active) + ' / ' + (t2.threshold === null || t2.threshold === undefined ? '–' : formatNumber(t2.threshold)) : '–',
    hold: st.heldBy ? 'Held' + (st.holdReason ? ': ' + st.holdReason : '') : 'No',
    standby: st.standbyAlarm ? st.standbyAlarm + ' (' + (st.standbyAlarmState || '?') + ')' : '–',
  };
}

/** Shows every event, read again every LIST_EVERY_MS; `stop()` ends the reading. */
function listView(app) {
  var body = byId('events-body');
  function task() {
    return app.api.get(apiPath('events')).then(function (res) {
      var o = outcome(res);
      if (o !== 'ok') return handled(app, o, res, 'read');
      var ids = (res.body && res.body.events) || [];
      return Promise.all(ids.map(function (id) {
        return readEvent(app.api, id);
      })).then(function (evs) {
        renderList(body, evs);
        var w = worst(evs.map(function (e) {
          return e.outcome === 'missing' ? 'ok' : e.outcome;
        }));
        var ra = evs.filter(function (e) {
          return e.retryAfter;
        })[0];
        return { outcome: w, retryAfter: ra ? ra.retryAfter : null };
      });
    });
  }
  var poll = poller(app.env, task, LIST_EVERY_MS, function (o, delay) {
    app.reported(o, delay);
  });
  return { id: null, stop: poll.stop, refresh: poll.now };
}

function renderList(body, evs) {
  byId('events-empty').hidden = evs.length > 0;
  fillWith(
    body,
    evs.map(function (ev) {
      var r = listRow(ev);
      var st = ev.status || {};
      return h('tr', { 'data-state': r.state }, [
        h('th', { scope: 'row' }, [h('a', { href: '#/events/' + ev.id, text: ev.id })]),
        h('td', {}, [h('span', { class: 'state state-' + (st.state || 'unknown'), text: r.state })]),
        h('td', { class: 'num', text: r.line }),
        h('td', { class: 'num', text: r.served }),
        h('td', { class: 'num', text: r.redeemed }),
        h('td', { class: 'num', text: r.tier2 }),
        h('td', { class: st.heldBy ? 'warn' : '', text: r.hold }),
        h('td', { class: st.standbyAlarmState === 'alarm' || st.standbyAlarmState === 'unreadable' ? 'warn' : '', text: r.standby }),
      ]);
    })
  );
}
