/* vwr waiting page: follows the sale of /vwr/{eventId} through its states (docs/lifecycle.md):
 * counts down, joins the pre-queue, keeps the ticket and its place across refreshes and tabs,
 * follows the line in the CDN-cached status document, calls `check` at its turn, then goes on
 * to `next`. Part of assets/app.js (static/build.mjs), with the rules of ../rules.js and
 * rules.js and the alerts of alerts.js; static/README.md. */

/**
 * Runs the waiting room. `env` holds everything it touches, so tests can drive it:
 * {document, storage, fetch, setTimeout, clearTimeout, now, random, location: {pathname,
 * search, origin, replace}, languages, locks, tab (whose `name` is window.name),
 * addEventListener, Notification?, AudioContext?, Worker?}.
 */
function start(env) {
  var doc = env.document;
  var eventId = eventIdFrom(env.location.pathname);
  var next = safeNext(queryParam(env.location.search, 'next'), env.location.origin) || (eventId ? '/events/' + eventId : '/');
  var ticketKey = 'vwr.ticket.' + eventId;
  var loopKey = 'vwr.redirects.' + eventId;
  // The languages (the switcher's), those loaded, the one shown, the one asked for.
  var have = [];
  var LANGS = (env.tab && env.tab.VWR_LANGS) || {};
  var lang = 'en';
  var S = strings(lang);
  var wanted = lang;
  // The event's branding (brand.js).
  var page = null;
  var ticket = null;
  var last = null;
  var message = null;
  var shown = '';
  var timer = null;
  var pending = null;
  var dueAt = 0;
  var resumeAt = 0;
  var errors = 0;
  var rejoins = 0;
  var refused = 0;
  var quit = null;
  var stopped = false;
  var announced = { at: -Infinity, ahead: null };
  // The page's state (MODES, `leaving`, `stopped`), the opening time (unix s), the
  // operator's message, the server's clock.
  var mode = 'starting';
  var opensAt = null;
  var spreadFor = null;
  var banner = null;
  var clock = null;
  var statusAt = -Infinity;
  var tickTimer = null;
  var mark = 0;
  var markFor = null;
  // What the live region says in reply to one answer (the operator's message last).
  var speech = null;
  var tail = null;
  // An API without the status document: `check` is polled in line, as before.
  var noStatus = false;
  var leaveTo = null;
  var turned = false;
  // The alerts at the turn in a hidden tab: a sound and a notification, both opt-in.
  var alerts = turnAlerts(env, el, eventId);

  function el(id) {
    return doc.getElementById(id);
  }
  function loadTicket() {
    var t = null;
    try {
      t = JSON.parse(getItem(env.storage, ticketKey));
    } catch (e) {
      t = null;
    }
    return t && typeof t.requestId === 'string' && t.requestId ? t : null;
  }
  function saveTicket() {
    setItem(env.storage, ticketKey, ticket ? JSON.stringify(ticket) : null);
  }
  function serverNow() {
    return env.now() + clockOffset(clock);
  }

  // -- The live region: one announcement per answer or tick --
  function say(text, atEnd) {
    if (!text) return;
    if (speech) (atEnd ? tail : speech).push(text);
    else el('status').textContent = text;
  }
  function batch(fn) {
    return function (arg) {
      speech = [];
      tail = [];
      try {
        return fn(arg);
      } finally {
        var text = speech.concat(tail).join(' ');
        speech = tail = null;
        if (text) el('status').textContent = text;
      }
    };
  }

  // -- Languages: one file each, assets/i18n/{code}.js (static/README.md#languages) --
  // `code`'s strings, a missing key in English.
  function strings(code) {
    var s = {};
    for (var k in LANGS.en) s[k] = LANGS[code][k] || LANGS.en[k];
    return s;
  }
  // Shows `code`, loading its file first; one that fails leaves the page as it is.
  function choose(code) {
    wanted = code;
    if (LANGS[code]) {
      lang = code;
      S = strings(code);
      return applyLang();
    }
    script('i18n/' + code, function () {
      if (wanted !== code) return;
      if (LANGS[code]) choose(code);
      else el('lang').value = lang;
    });
  }
  // A string with a count: {one, other…} (Intl.PluralRules).
  function plural(v, n) {
    return typeof v === 'string' ? v : v[new Intl.PluralRules(lang).select(n)] || v.other;
  }
  function waitingText(d) {
    return fill(plural(S.waiting, d.ahead), { position: formatNumber(d.position, lang), ahead: formatNumber(d.ahead, lang) });
  }
  function inSeconds(n) {
    try {
      return new Intl.RelativeTimeFormat(lang).format(n, 'second');
    } catch (e) {
      return unit(n, 'second', lang, true);
    }
  }

  // -- Rendering --
  function applyLang() {
    doc.documentElement.setAttribute('lang', lang);
    var nodes = doc.querySelectorAll('[data-i18n]');
    for (var i = 0; i < nodes.length; i++) nodes[i].textContent = S[nodes[i].getAttribute('data-i18n')];
    el('lang').value = lang;
    el('lang').setAttribute('aria-label', S.language);
    el('bar').setAttribute('aria-label', S.progress);
    el('back').setAttribute('href', next);
    if (last && mode !== 'closed') {
      render(last, false);
      el('status').textContent = waitingText(last);
    }
    doc.title = turned ? S.turnTitle : (page ? page.render(lang) : '') + S.htmlTitle;
    if (message) show(message.key, message.values, message.isError);
    renderBanner(false);
    alerts.render(S);
    countdown(false);
  }

  function show(key, values, isError) {
    message = key ? { key: key, values: values || {}, isError: !!isError } : null;
    var v = message && message.values.seconds;
    var text = key ? fill(S[key], v === undefined ? {} : { when: inSeconds(v) }) : '';
    var box = el('error');
    // Errors to the alert box; others to the visible line and (changed) the live region.
    box.hidden = !isError;
    box.textContent = isError ? text : '';
    el('message').hidden = isError || !key;
    el('message').textContent = isError ? '' : text;
    if (key && !isError && text !== shown) say(text);
    shown = key && !isError ? text : '';
    el('backwrap').hidden = !TERMINAL.hasOwnProperty(key) && mode !== 'closed';
    el('back').textContent = S[TERMINAL[key] || 'back'];
  }

  // The page's state: `data-state` on #room, the title and lead, what is shown.
  function setMode(m, reason) {
    mode = m;
    el('room').setAttribute('data-state', m);
    var keys = MODES[m === 'closed' ? reason : m];
    if (keys) {
      el('title').setAttribute('data-i18n', keys[0]);
      el('title').textContent = S[keys[0]];
      el('lead').setAttribute('data-i18n', keys[1]);
      el('lead').textContent = S[keys[1]];
    }
    if (m === 'scheduled' || m === 'prequeue' || m === 'closed') el('queue').hidden = true;
    el('keep').hidden = m === 'closed';
    el('alerts').hidden = !/^(scheduled|prequeue|opening|waiting|paused)$/.test(m);
    countdown(false);
  }

  function render(data, announce) {
    last = data;
    el('queue').hidden = false;
    el('position').textContent = formatNumber(data.position, lang);
    el('ahead').textContent = formatNumber(data.ahead, lang);
    el('wait').textContent = formatWait(data.wait, S, lang);
    var pct = Math.round(progress(ticket ? ticket.firstAhead : data.ahead, data.ahead) * 100);
    el('fill').style.width = pct + '%';
    el('bar').setAttribute('aria-valuenow', String(pct));
    // The live region: a change of people ahead, at most every 15 s.
    var t = env.now();
    if (announce && data.ahead !== announced.ahead && t - announced.at >= ANNOUNCE_EVERY_MS) {
      announced = { at: t, ahead: data.ahead };
      say(waitingText(data));
    }
  }

  // The operator's message: plain text (textContent only), in the page's language.
  function setBanner(m) {
    banner = m === undefined || m === null ? null : m;
    renderBanner(true);
  }
  function renderBanner(announce) {
    var t = localized(banner, lang);
    var box = el('banner');
    if (box.textContent !== t[0] && announce) say(t[0], true);
    box.textContent = t[0];
    box.setAttribute('lang', t[1]);
    box.hidden = !t[0];
  }

  // The event's page document, once (static/README.md#event-branding); then brand.js.
  function getPage() {
    call('GET', API + '/page/' + eventId, { cache: 'default', credentials: 'omit' }).then(function (r) {
      if (r.status !== 200 || r.body.eventId !== eventId) return;
      script('brand', function () {
        if (!env.tab.vwrBrand) return;
        page = env.tab.vwrBrand(r.body, doc, have, localized);
        have = page.languages;
        applyLang();
        choose(pickLang(getItem(env.storage, 'vwr.lang'), env.languages, have, r.body.defaultLanguage));
      });
    });
  }
  function script(name, done) {
    var s = doc.createElement('script');
    s.src = '/vwr/assets/' + name + '.js';
    s.onload = s.onerror = done;
    doc.head.appendChild(s);
  }

  // The turn in a hidden tab: the title, and the alerts the visitor asked for.
  function alertTurn() {
    turned = true;
    doc.title = S.turnTitle;
    alerts.turn(S, lang);
  }

  // The draw's commitment (hex SHA-256 of the seed) with a link to check it.
  function setDraw(commitment) {
    var ok = typeof commitment === 'string' && /^[0-9a-f]{64}$/i.test(commitment);
    if (ok) el('commitment').textContent = commitment;
    el('draw').hidden = !ok;
  }

  // The countdown to the open on the server's clock, read aloud on entering a state and at
  // a few marks, never every second. `run`: keep it ticking, and open at zero.
  function countdown(entering, run) {
    var box = el('countdown');
    box.hidden = (mode !== 'scheduled' && mode !== 'prequeue') || opensAt === null || stopped;
    if (box.hidden || run) {
      env.clearTimeout(tickTimer);
      tickTimer = null;
    }
    if (box.hidden) return;
    var left = opensAt * 1000 - serverNow();
    var secs = Math.max(0, Math.ceil(left / 1000));
    var text = fill(S.countdown, { time: formatCountdown(secs, lang) });
    box.textContent = text;
    var m = MARKS.filter(function (x) {
      return secs <= x;
    }).length;
    if (!run) return;
    if (entering || m > mark || markFor !== opensAt) say(text);
    mark = m;
    markFor = opensAt;
    if (left > 0) tickTimer = env.setTimeout(batch(tick), left % 1000 || 1000);
    else if (spreadFor !== opensAt) {
      // Once per opening time: if the server is late, the status document says when it opens.
      spreadFor = opensAt;
      opening('opening');
    }
  }
  function tick() {
    countdown(false, true);
  }

  // -- Timers: hidden, every 30–42 s at most; shown again, at once --
  function hidden() {
    return doc.visibilityState === 'hidden';
  }
  function schedule(fn, seconds) {
    pending = fn;
    dueAt = env.now() + seconds * 1000;
    arm(false);
  }
  function arm(atOnce) {
    env.clearTimeout(timer);
    timer = null;
    if (!pending || stopped) return;
    var ms = (atOnce ? resumeAt : dueAt) - env.now();
    if (hidden()) ms = Math.max(ms, HIDDEN_POLL_S * 1000 * (1 + 0.4 * env.random()));
    timer = env.setTimeout(runPending, Math.max(0, ms));
  }
  function runPending() {
    timer = null;
    var fn = pending;
    pending = null;
    if (fn && !stopped) fn();
  }
  function onVisibility() {
    if (leaveTo) return hidden() ? null : out();
    arm(!hidden());
  }
  function halt(state) {
    stopped = true;
    env.clearTimeout(timer);
    env.clearTimeout(tickTimer);
    timer = tickTimer = null;
    pending = null;
    if (quit) quit(null);
    setMode(state);
  }

  // -- Talking to the tier-1 API --
  function call(method, path, init) {
    var sent = env.now();
    init = init || {};
    var headers = init.headers || {};
    headers.accept = 'application/json';
    return env
      .fetch(path, { method: method, headers: headers, body: init.body, cache: init.cache || 'no-store', credentials: init.credentials || 'same-origin' })
      .then(function (res) {
        return res.text().then(function (text) {
          var body = null;
          try {
            body = text ? JSON.parse(text) : null;
          } catch (e) {
            body = null;
          }
          clock = clockBounds(clock, res.headers.get('date'), res.headers.get('age'), sent, env.now());
          return { status: res.status, body: body && typeof body === 'object' ? body : {}, retryAfter: res.headers.get('retry-after') };
        });
      })
      .catch(function () {
        return { status: 0, body: {}, retryAfter: null };
      });
  }

  // On to `url`; admitted (`turn`) in a hidden tab: the alerts, then 10 s (or until shown).
  function go(url, turn) {
    halt('leaving');
    show('admitted');
    leaveTo = url;
    if (!turn || !hidden()) return out();
    alertTurn();
    timer = env.setTimeout(out, TURN_HOLD_S * 1000);
  }
  function out() {
    var url = leaveTo;
    leaveTo = null;
    env.clearTimeout(timer);
    if (url) env.location.replace(url);
  }

  // Redirects to `next` made lately, {n, at}: in localStorage, or (blocked with cookies) in
  // window.name, which lasts across the tab's same-site navigations.
  function redirects(record) {
    var tabKey = loopKey + '=';
    if (record) {
      if (!setItem(env.storage, loopKey, JSON.stringify(record)) && env.tab) env.tab.name = tabKey + JSON.stringify(record);
      return record;
    }
    var text = getItem(env.storage, loopKey);
    var name = env.tab ? String(env.tab.name || '') : '';
    if (text === null && name.indexOf(tabKey) === 0) text = name.slice(tabKey.length);
    try {
      record = JSON.parse(text);
    } catch (e) {
      record = null;
    }
    return record && Number(record.n) > 0 && env.now() - record.at < LOOP_WINDOW_MS ? record : { n: 0 };
  }

  // On to `next`: admitted, or not gated (409, `inactive`). Sent back here again and again
  // within a minute (cookie not kept, or the edge lags the API): the third time, stop and
  // say so (`stopKey`) instead of looping.
  function leave(stopKey) {
    var n = redirects().n + 1;
    redirects({ n: n, at: env.now() });
    if (n < LOOP_MAX) return go(next, stopKey === 'noPass');
    halt('stopped');
    show(stopKey, {}, true);
  }

  function forget() {
    ticket = null;
    last = null;
    saveTicket();
  }

  // What an error answer means for the page (by the API's code); `retry`: what to try again.
  function failed(r, retry) {
    var code = r.body.error;
    if (code === 'event_not_found') {
      halt('stopped');
      return show('notFound', {}, true);
    }
    if (code === 'invalid_event_id' || code === 'enqueue_token_required') {
      // A bad address, or only the site's signed-in visitors may join: nothing to retry.
      halt('stopped');
      return show(code === 'invalid_event_id' ? 'badAddress' : 'signIn', {}, true);
    }
    if (code === 'event_not_open') {
      // Not even in the pre-queue yet: count down, and join when the status document says so.
      setOpensAt(r.body.opensAt);
      return preOpen('scheduled');
    }
    if (code === 'event_closed') {
      if (r.body.message && typeof r.body.message === 'object') setBanner(r.body.message);
      return closed(r.body.closeReason);
    }
    if (code === 'event_not_active') return leave('notOpen');
    // A verdict on the ticket (403 proof_required: one stored without its secret): join
    // again; after three times in a row, with back-off.
    if (retry === check && VERDICTS.test(code)) {
      forget();
      if (++rejoins <= 3) return join('rejoin');
      retry = join;
    }
    backoff(r, retry, 0);
  }

  // Try `retry` again later: exponential back-off, or any Retry-After given; never sooner
  // than `least` seconds.
  function backoff(r, retry, least) {
    errors++;
    var after = retryAfterSeconds(r.retryAfter, env.now());
    var seconds = Math.max(least, after !== null ? after * (1 + 0.2 * env.random()) : backoffSeconds(errors, env.random()));
    resumeAt = env.now() + seconds * 1000;
    show(r.status === 429 || r.status === 503 ? 'busy' : 'retry', { seconds: Math.ceil(seconds) }, true);
    schedule(retry, seconds);
  }

  function setOpensAt(value) {
    var t = Number(value);
    if (value !== null && value !== undefined && isFinite(t) && t > 0) opensAt = t;
  }

  // -- The states of the sale --

  // Before the open: the countdown, and the status document every ~10 s.
  function preOpen(state) {
    var entering = mode !== state;
    setMode(state);
    show(state === 'prequeue' && ticket ? 'prequeued' : null);
    schedule(pollStatus, env.now() - statusAt < (STATUS_POLL_S * 1000) / 2 ? jitter(STATUS_POLL_S, env.random()) : 0);
    countdown(entering, true);
  }

  // The open (or the end of a pause): a random 0–5 s first, so a crowd does not call at once.
  function opening(key) {
    setMode('opening');
    show(key);
    schedule(ticket ? check : join, OPEN_SPREAD_S * env.random());
  }

  // Paused: keep the place and the numbers; read the status document every ~15 s.
  function paused() {
    setMode('paused');
    show('paused');
    schedule(pollStatus, jitter(PAUSED_POLL_S, env.random()));
  }

  function closed(reason) {
    halt('closed');
    show(null);
    setMode('closed', reason === 'sold_out' ? 'sold_out' : 'ended');
    el('backwrap').hidden = false;
    say(el('title').textContent + '. ' + el('lead').textContent);
  }

  // A pre-queue answer: count down; past the opening time (a late server), ask again.
  function prequeued(body) {
    setOpensAt(body.opensAt);
    var left = opensAt === null ? 1 : opensAt * 1000 - serverNow();
    if (left > (mode === 'opening' ? 10000 : 0)) return preOpen('prequeue');
    if (mode !== 'opening') {
      setMode('opening');
      show('opening');
    }
    schedule(check, jitter(pollSeconds(body.nextPollSeconds), env.random()));
  }

  // A 200 answer of assign or check, not an admission; `checked`: from a check (only that
  // resets the back-off counters: a fresh ticket could still be refused).
  function answered(body, checked) {
    setBanner(body.message);
    if (body.state === 'prequeue') return prequeued(body);
    if (body.state === 'closed') return closed(body.closeReason);
    if (checked) {
      errors = 0;
      rejoins = 0;
    }
    if (message) show(null);
    var ahead = Math.max(0, Number(body.peopleAhead !== undefined ? body.peopleAhead : body.position - body.servingCounter - 1) || 0);
    // Kept with the ticket: the place (a pre-queue ticket learns it at its first check) and
    // the rate the estimate implies.
    var wait = Number(body.estimatedWaitSeconds);
    var changed = track(ahead);
    if (body.position !== undefined) changed = keep('position', body.position) || changed;
    if (wait > 0) changed = keep('rate', (ahead + 1) / wait) || changed;
    if (changed) saveTicket();
    render({ position: body.position, ahead: ahead, wait: body.estimatedWaitSeconds }, true);
    if (body.state === 'paused') return paused();
    setMode('waiting');
    // The first look after the server's hint; then the page's own.
    schedule(placed() && !noStatus ? pollStatus : check, jitter(pollSeconds(body.nextPollSeconds), env.random()));
  }

  function placed() {
    return !!ticket && ticket.position > 0;
  }
  function keep(k, v) {
    var was = ticket[k];
    ticket[k] = v;
    return was !== v;
  }
  // The first people-ahead count seen (where the progress bar starts).
  function track(ahead) {
    return !(typeof ticket.firstAhead === 'number' && ahead <= ticket.firstAhead) && keep('firstAhead', ahead);
  }

  // The place from the status document: ahead = position − servingCounter − 1; the wait at
  // its servedPerSecond, else at the rate of the last estimate. Answers the wait (s).
  function local(d) {
    var place = Math.max(1, ticket.position - Math.max(0, Number(d.servingCounter) || 0));
    var wait = waitSeconds(place, Number(d.servedPerSecond) > 0 ? Number(d.servedPerSecond) : ticket.rate);
    if (track(place - 1)) saveTicket();
    render({ position: ticket.position, ahead: place - 1, wait: wait }, true);
    return wait;
  }

  // In line: only the status document, every quarter of the wait (1–30 s), until the turn.
  function inLine(d, key) {
    setMode('waiting');
    show(key || null);
    schedule(pollStatus, jitter(pollForWait(local(d)), env.random()));
  }

  // The public status document (CDN-cached): polled in every state before the close.
  function pollStatus() {
    // No header that skips a cache, no cookies: the same document for everyone.
    return call('GET', API + '/status/' + eventId, { cache: 'default', credentials: 'omit' }).then(
      batch(function (r) {
        if (stopped) return;
        if (r.status === 200 && typeof r.body.state === 'string') {
          errors = 0;
          statusAt = env.now();
          return onStatus(r.body);
        }
        if (r.body.error === 'event_not_found') return failed(r, pollStatus);
        // No status document here (an older API's router: 404 not_found): assign and check say
        // the state too.
        if ((mode === 'starting' || mode === 'waiting') && r.status === 404 && r.body.error === 'not_found') {
          noStatus = true;
          return ticket ? check() : join();
        }
        backoff(r, pollStatus, mode === 'starting' || mode === 'waiting' ? 0 : mode === 'paused' ? PAUSED_POLL_S : STATUS_POLL_S);
      })
    );
  }

  function onStatus(d) {
    setBanner(d.message);
    setDraw(d.seedCommitment);
    setOpensAt(d.opensAt);
    // Without a Date header the last change is still a lower bound on the server's time.
    if (!clock && Number(d.updatedAt) > 0) clock = { lo: Number(d.updatedAt) * 1000 - env.now(), hi: Infinity };
    var served = placed() && Number(d.servingCounter) >= ticket.position;
    if (d.state === 'inactive' || d.state === 'standby') return leave('notOpen');
    if (d.state === 'closed') return served ? check() : closed(d.closeReason);
    if (d.state === 'scheduled') return preOpen('scheduled');
    if (d.state === 'prequeue') return ticket ? preOpen('prequeue') : join();
    if (served) {
      if (mode === 'waiting') local(d);
      return check();
    }
    // No place yet (no ticket, a pre-queue ticket): join, or check the ticket.
    if (mode === 'starting' && !placed()) return ticket ? check() : join();
    if (d.state === 'paused') {
      if (!ticket) return join();
      if (placed()) local(d);
      return paused();
    }
    // open (or a state this page does not know)
    if (placed()) return inLine(d, mode === 'paused' ? 'resumedLine' : null);
    opening(mode === 'paused' ? 'resumed' : 'opening');
  }

  // The secret proves the ticket is this browser's: a header only, never in a URL or the page.
  function check() {
    var h = ticket.secret ? { 'x-vwr-request-secret': ticket.secret } : {};
    return call('GET', API + '/check/' + eventId + '/' + encodeURIComponent(ticket.requestId), { headers: h }).then(
      batch(function (r) {
        if (stopped) return;
        if (r.status === 200 && r.body.admitted === true) return leave('noPass');
        if (r.status === 200 && r.body.admitted === false) return answered(r.body, true);
        failed(r, check);
      })
    );
  }

  // `pow`: a solved proof of work {challenge, nonce}. Answers when the join is done (the
  // proof included, so the tabs' lock is held throughout).
  function assign(pow) {
    var existing = loadTicket();
    if (existing) {
      ticket = existing;
      return check();
    }
    var init = pow ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pow: pow }) } : null;
    return call('POST', API + '/assign/' + eventId, init).then(
      batch(function (r) {
        if (stopped) return;
        if (r.status === 200 && typeof r.body.requestId === 'string') {
          refused = 0;
          ticket = { requestId: r.body.requestId, secret: r.body.requestSecret, position: r.body.position };
          saveTicket();
          return answered(r.body, false);
        }
        // A proof of work first; a refused one (expired, replayed) with the new challenge,
        // three times in a row, then with back-off.
        if (r.status === 403 && r.body.error === 'challenge_required' && typeof r.body.challenge === 'string') {
          if (!pow || ++refused < 3) return work(r.body);
          refused = 0;
        }
        failed(r, join);
      })
    );
  }

  // Solves challenge `c` in a Web Worker (pow-worker.js), else (no Worker) with the same file
  // as a script, here in slices; then joins with it, or after POW_MAX_S without (a new one).
  function work(c) {
    show('pow');
    return new Promise(function (resolve) {
      var w, stop;
      var timer = env.setTimeout(end, POW_MAX_S * 1000);
      function end(nonce) {
        env.clearTimeout(timer);
        if (w) w.terminate();
        if (stop) stop();
        w = stop = quit = null;
        resolve(nonce);
      }
      function here() {
        if (w) w.terminate();
        // (Not loaded: the timer above tries a new challenge.)
        script('pow-worker', function () {
          if (quit === end && env.tab.vwrPow) stop = env.tab.vwrPow.solveSliced(c.challenge, c.difficulty, end, env.setTimeout);
        });
      }
      quit = end;
      try {
        w = new env.Worker(POW_URL);
        w.onmessage = function (e) {
          end(e.data.nonce);
        };
        w.onerror = here;
        w.postMessage(c);
      } catch (e) {
        here();
      }
    }).then(function (nonce) {
      if (!stopped) return assign(nonce ? { challenge: c.challenge, nonce: nonce } : null);
    });
  }

  // A cross-tab lock where there is one: two tabs opened together get one place.
  function join(reason) {
    if (!message || !message.isError) show(reason === 'rejoin' ? 'rejoin' : 'joining');
    if (env.locks && env.locks.request) {
      return env.locks.request('vwr-join-' + eventId, function () {
        return assign();
      });
    }
    return assign();
  }

  // -- Start --
  for (var i = 0; i < el('lang').options.length; i++) have.push(el('lang').options[i].value);
  el('lang').addEventListener('change', function () {
    setItem(env.storage, 'vwr.lang', el('lang').value);
    choose(el('lang').value);
  });
  setMode('starting');
  applyLang();
  choose(pickLang(getItem(env.storage, 'vwr.lang'), env.languages, have));
  if (!eventId) {
    halt('stopped');
    show('badAddress', {}, true);
    return;
  }
  el('verify').setAttribute('href', '/vwr/assets/verify.html?event=' + encodeURIComponent(eventId));
  doc.addEventListener('visibilitychange', onVisibility);
  // Another tab replacing the ticket (after re-joining): use the same place here.
  env.addEventListener('storage', function (e) {
    var t = e.key === ticketKey ? loadTicket() : null;
    if (t && (!ticket || t.requestId !== ticket.requestId)) ticket = t;
  });
  // Deliberately no unload handler: leaving or refreshing the page never gives up the place.
  el('notify').addEventListener('click', alerts.ask);
  el('sound').addEventListener('change', alerts.soundChanged);
  doc.addEventListener('click', alerts.audioOn);
  doc.addEventListener('keydown', alerts.audioOn);
  // A ticket without a place (pre-queue, older page) is checked first; otherwise the status
  // document says the state (and no page joins before the pre-queue).
  getPage();
  ticket = loadTicket();
  if (ticket && !placed()) check();
  else pollStatus();
  return {
    state: function () {
      return { ticket: ticket, pending: !!pending, timer: timer !== null, errors: errors, stopped: stopped, lang: lang, next: next, mode: mode, opensAt: opensAt, clockOffset: clockOffset(clock), noStatus: noStatus };
    },
  };
}