/* The alerts of a hidden tab at its turn (static/README.md, "Behaviour"): a beep (Web Audio, no
 * file) and a browser notification, each opt-in and remembered (vwr.sound, vwr.notify); the
 * page itself changes the tab's title. Part of assets/app.js (static/build.mjs). */

/**
 * The alerts of the page in `env` (its storage, tab, Notification? and AudioContext?) for
 * `eventId`; `el(id)` finds the page's elements. Answers {render(S): shows the controls in the
 * strings `S`; ask(): asks for notifications (#notify's click); soundChanged(): #sound was
 * toggled; audioOn(): starts the audio (any click or key); turn(S, lang): alerts now}.
 */
function turnAlerts(env, el, eventId) {
  var Notify = env.Notification || null;
  var sound = getItem(env.storage, 'vwr.sound') === '1';
  var notifyOpt = getItem(env.storage, 'vwr.notify') === '1';
  var asked = false;
  var audio = null;
  // The strings last shown (the page's language).
  var S = null;

  function render(strings) {
    S = strings || S;
    var p = Notify ? Notify.permission : 'denied';
    var on = notifyOpt && p === 'granted';
    // The button while the browser can still be asked; a note once on, or refused.
    el('notify').hidden = !Notify || on || p === 'denied';
    el('notified').hidden = !(on || (asked && p !== 'granted'));
    el('notified').textContent = on ? S.notifyOn : S.notifyOff;
    el('soundwrap').hidden = !env.AudioContext;
    el('sound').checked = sound;
  }
  function ask() {
    var done = function (p) {
      asked = true;
      if (p === 'granted') {
        notifyOpt = true;
        setItem(env.storage, 'vwr.notify', '1');
      }
      render();
    };
    try {
      // Old Safari: a callback; the others: a promise.
      var r = Notify.requestPermission(done);
      if (r && r.then) r.then(done, done);
    } catch (e) {
      done('denied');
    }
  }
  // Sound needs a touch of the page first: the toggle (after a reload: any click or key).
  function audioOn() {
    if (!sound || !env.AudioContext) return null;
    try {
      if (!audio) audio = new env.AudioContext();
      if (audio.state === 'suspended' && audio.resume) audio.resume();
    } catch (e) {
      audio = null;
    }
    return audio;
  }
  function beep() {
    var a = audioOn();
    if (!a) return;
    try {
      var o = a.createOscillator();
      var g = a.createGain();
      var t = a.currentTime;
      o.frequency.value = 880;
      g.gain.setValueAtTime(0.2, t);
      g.gain.exponentialRampToValueAtTime(0.001, t + 0.5);
      o.connect(g);
      g.connect(a.destination);
      o.start(t);
      o.stop(t + 0.5);
    } catch (e) {
      // No sound; the title and the notification still tell.
    }
  }
  function soundChanged() {
    sound = !!el('sound').checked;
    setItem(env.storage, 'vwr.sound', sound ? '1' : null);
    beep(); // a sample (and the audio starts)
  }
  function turn(strings, lang) {
    if (sound) beep();
    if (!Notify || !notifyOpt || Notify.permission !== 'granted') return;
    try {
      var n = new Notify(strings.turnTitle, { body: strings.admitted, tag: 'vwr-' + eventId, lang: lang });
      n.onclick = function () {
        if (env.tab && env.tab.focus) env.tab.focus();
      };
    } catch (e) {
      // Android Chrome: service-worker notifications only.
    }
  }

  return { render: render, ask: ask, soundChanged: soundChanged, audioOn: audioOn, turn: turn };
}
