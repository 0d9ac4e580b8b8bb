/* The end of console/console.js (static/build.mjs): under Node (tests) the script only exports
 * its rules; in a browser it runs the console: config.json, the sign-in, who is signed in
 * (`GET /api/admin/vwr/whoami`), then the view the address names. */

/** What a read's failure does: a sign-in asked again, a refusal shown; `{outcome, retryAfter}`
 *  for the poller (which backs off on 'retry'). */
function handled(app, o, res, what) {
  if (o === 'signin') app.signInAgain();
  else if (o === 'forbidden_role') showProblem(roleMessage(res && res.body, app.who && app.who.role, what));
  else if (o === 'refused') showProblem((res && res.body && res.body.message) || 'Refused: HTTP ' + res.status);
  return { outcome: o, retryAfter: res && res.retryAfter };
}

/** Shows one of the page's three parts: 'signin', 'events' or 'event'. */
function showPart(part) {
  ['signin', 'events', 'event'].forEach(function (p) {
    byId(p).hidden = p !== part;
  });
}

/** Runs the console in `env` (the browser's parts it uses). */
function start(env) {
  D = env.document;
  Plot = env.uPlot || null;
  var app = {
    env: env,
    cfg: null,
    api: null,
    who: null,
    view: null,
    eventId: null,
    session: null,
    reported: function (o, delay) {
      showNet(o, delay);
    },
    refresh: function () {
      if (app.view) app.view.refresh();
    },
    signInAgain: function () {
      stopView();
      if (!app.session) return;
      app.session.renew().then(signInNeeded);
    },
  };

  function stopView() {
    if (app.view) app.view.stop();
    app.view = null;
  }

  function signInNeeded(s) {
    stopView();
    showPart('signin');
    byId('who').hidden = true;
    var go = byId('signin-go');
    go.hidden = s.needed !== 'oidc';
    go.onclick = s.go || null;
    var says = {
      oidc: 'Sign in with your organisation’s account to see the sales.',
      dev: 'vwr dev: sign in with a token it makes. In a terminal: vwr admin console-token --role admin (or operator, viewer), then open the address it prints.',
      config: 'This console’s config.json names no way to sign in (issuer and clientId).',
    };
    setText('signin-text', (s.error ? 'The sign-in failed: ' + s.error + '. ' : '') + (says[s.needed] || says.config));
  }

  function go() {
    if (/^#token=/.test(env.location.hash)) return;
    showProblem('');
    var r = route(env.location.hash);
    if (r.view === 'event' && app.view && app.view.id === r.id) {
      app.view.setTab(r.tab);
      return;
    }
    stopView();
    if (r.view === 'event') {
      showPart('event');
      app.view = eventView(app, r.id, r.tab);
    } else {
      showPart('events');
      app.eventId = null;
      app.view = listView(app);
    }
    byId('main').focus();
  }

  function signedIn(session) {
    app.session = session;
    app.api = apiClient(env, app.cfg.api, function () {
      return session.token;
    });
    return app.api.get(apiPath('whoami')).then(function (res) {
      var o = outcome(res);
      if (o === 'signin') return session.renew().then(signInNeeded);
      var who = whoamiFrom(res);
      if (!who) {
        showProblem(o === 'forbidden_role' ? 'Signed in, but with no role in the waiting room: ask an admin for the vwr-viewer, vwr-operator or vwr-admin group.' : 'Could not ask who is signed in (' + (res.network ? 'network error' : 'HTTP ' + res.status) + '): reload to try again.');
        return;
      }
      app.who = who;
      setText('who-name', who.name || 'signed in');
      setText('who-role', who.role);
      byId('who').hidden = false;
      applyRole(D, who.role);
      env.addEventListener('hashchange', go);
      go();
    });
  }

  // A new `#token=…` link opened in this tab changes only the fragment: start again with it.
  env.addEventListener('hashchange', function () {
    if (/^#token=/.test(env.location.hash)) env.location.reload();
  });
  wireActions(app);
  wireMessage(app);
  wirePasses(app);
  byId('signout').addEventListener('click', function () {
    stopView();
    var s = app.session;
    app.session = null;
    // Forgets the token (a dev token, or the OIDC user of this tab) and offers the sign-in.
    (s ? s.renew() : Promise.resolve({ needed: app.cfg.devTokens ? 'dev' : 'config' })).then(signInNeeded);
  });
  byId('open-form').addEventListener('submit', function (e) {
    e.preventDefault();
    var id = byId('open-id').value.trim();
    if (/^[A-Za-z0-9_-]{1,64}$/.test(id)) env.location.hash = '#/events/' + id;
    else showProblem('An event id is 1 to 64 of A–Z, a–z, 0–9, _ and -.');
  });
  env.addEventListener('resize', function () {
    if (app.view && app.view.resize) app.view.resize();
  });

  env
    .fetch('config.json', { cache: 'no-store' })
    .then(function (r) {
      if (!r.ok) throw new Error('config.json: HTTP ' + r.status);
      return r.json();
    })
    .then(function (cfg) {
      app.cfg = cfg || {};
      return signIn(env, app.cfg);
    })
    .then(function (s) {
      return s.token ? signedIn(s) : signInNeeded(s);
    })
    .catch(function (e) {
      showPart('signin');
      setText('signin-text', 'The console could not start: ' + String((e && e.message) || e) + '. Reload to try again.');
    });
  return app;
}

var api = {
  ROLES: ROLES,
  ACTIONS: ACTIONS,
  WINDOW_MS: WINDOW_MS,
  MESSAGE_LANGS: MESSAGE_LANGS,
  allowed: allowed,
  visibleActions: visibleActions,
  confirmation: confirmation,
  confirmed: confirmed,
  tokenFromHash: tokenFromHash,
  route: route,
  sampleOf: sampleOf,
  keepWindow: keepWindow,
  ratePerMinute: ratePerMinute,
  liveSeries: liveSeries,
  reportSeries: reportSeries,
  outcome: outcome,
  whoamiFrom: whoamiFrom,
  roleMessage: roleMessage,
  messageBody: messageBody,
  messageProblems: messageProblems,
  previewUrl: previewUrl,
  describeAudit: describeAudit,
  apiClient: apiClient,
  apiPath: apiPath,
  worst: worst,
  nextDelay: nextDelay,
  poller: poller,
  signIn: signIn,
  listRow: listRow,
  start: start,
};

if (typeof module === 'object' && module.exports) {
  module.exports = api;
} else {
  var session = null;
  try {
    session = window.sessionStorage;
  } catch (e) {
    // Storage blocked: a dev token lasts until the next reload.
  }
  start({
    document: document,
    location: location,
    history: history,
    session: session,
    fetch: window.fetch.bind(window),
    setTimeout: window.setTimeout.bind(window),
    clearTimeout: window.clearTimeout.bind(window),
    addEventListener: window.addEventListener.bind(window),
    now: Date.now,
    random: Math.random,
    oidc: window.oidc,
    uPlot: window.uPlot,
  });
}
