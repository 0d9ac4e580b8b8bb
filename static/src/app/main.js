/* The end of assets/app.js (static/build.mjs): under Node (tests) the script only exports its
 * rules and `start`; in a browser it runs the waiting page. */

var api = {
  fill: fill,
  eventIdFrom: eventIdFrom,
  queryParam: queryParam,
  safeNext: safeNext,
  pickLang: pickLang,
  retryAfterSeconds: retryAfterSeconds,
  jitter: jitter,
  backoffSeconds: backoffSeconds,
  pollSeconds: pollSeconds,
  waitSeconds: waitSeconds,
  pollForWait: pollForWait,
  formatWait: formatWait,
  formatCountdown: formatCountdown,
  progress: progress,
  clockBounds: clockBounds,
  clockOffset: clockOffset,
  localized: localized,
  start: start,
};

if (typeof module === 'object' && module.exports) {
  module.exports = api;
} else {
  var storage = null;
  try {
    storage = window.localStorage;
  } catch (e) {
    // Storage blocked: the place is kept for this page's life only.
  }
  start({
    document: document,
    storage: storage,
    fetch: window.fetch.bind(window),
    setTimeout: window.setTimeout.bind(window),
    clearTimeout: window.clearTimeout.bind(window),
    now: Date.now,
    random: Math.random,
    location: {
      pathname: location.pathname,
      search: location.search,
      origin: location.origin,
      replace: function (url) {
        location.replace(url);
      },
    },
    languages: navigator.languages || [navigator.language],
    locks: navigator.locks,
    tab: window,
    addEventListener: window.addEventListener.bind(window),
    Notification: window.Notification,
    AudioContext: window.AudioContext || window.webkitAudioContext,
    Worker: window.Worker,
  });
}