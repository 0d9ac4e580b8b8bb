/* The console's page: small helpers over the document of static/console/index.html. Text only
 * (textContent, never markup from strings), the page's own elements by id, and the shared
 * parts: the line that says the API is being retried, the alert for a refusal, the dialog that
 * confirms an action. */

// The page's document, set by `start` (main.js).
var D = null;

/** The element `id` of the page. */
function byId(id) {
  return D.getElementById(id);
}

/** A new element: `attrs` are attributes (`text` its text, `on` its event handlers, `hidden`
 *  and `disabled` booleans), `kids` elements or texts. */
function h(tag, attrs, kids) {
  var el = D.createElement(tag);
  var a = attrs || {};
  for (var k in a) {
    if (!Object.prototype.hasOwnProperty.call(a, k) || a[k] === undefined || a[k] === null) continue;
    if (k === 'text') el.textContent = a[k];
    else if (k === 'on') for (var ev in a.on) el.addEventListener(ev, a.on[ev]);
    else if (k === 'hidden' || k === 'disabled') el[k] = !!a[k];
    else el.setAttribute(k, a[k]);
  }
  (kids || []).forEach(function (c) {
    if (c !== null && c !== undefined) el.appendChild(typeof c === 'string' ? D.createTextNode(c) : c);
  });
  return el;
}

/** Replaces the children of `el` with `kids`. */
function fillWith(el, kids) {
  while (el.firstChild) el.removeChild(el.firstChild);
  kids.forEach(function (c) {
    if (c) el.appendChild(typeof c === 'string' ? D.createTextNode(c) : c);
  });
}

/** Sets the text of the element `id`. */
function setText(id, text) {
  byId(id).textContent = text;
}

/** Hides what `role` may not do: every element with `data-action` (a key of ACTIONS) that the
 *  role lacks is hidden (not disabled: it is not there for this person). */
function applyRole(root, role) {
  var els = root.querySelectorAll('[data-action]');
  for (var i = 0; i < els.length; i++) els[i].hidden = !allowed(role, els[i].getAttribute('data-action'));
}

/** The line under the header: the API is not answering, and when the console tries again. */
function showNet(kind, delayMs) {
  var el = byId('net');
  if (kind === 'retry') {
    el.textContent = fill('No answer from the API: retrying in {s} s.', { s: Math.max(1, Math.round(delayMs / 1000)) });
    el.hidden = false;
  } else {
    el.textContent = '';
    el.hidden = true;
  }
}

/** A problem to read (an alert), or none. */
function showProblem(text) {
  var el = byId('problem');
  el.textContent = text || '';
  el.hidden = !text;
}

/** A note that an action was done (polite, not an alert). */
function showDone(text) {
  setText('done', text || '');
}

/** Asks before `action` on `eventId` (model.js CONFIRM): a promise of `{agreed, typed}`. The
 *  dialog is modal: focus stays in it, Escape cancels. */
function askConfirm(action, eventId, title, text) {
  var rule = confirmation(action);
  if (rule === 'none') return Promise.resolve({ agreed: true });
  var dlg = byId('confirm');
  setText('confirm-title', title);
  setText('confirm-text', text);
  setText('confirm-id', eventId);
  byId('confirm-typewrap').hidden = rule !== 'type';
  var typed = byId('confirm-typed');
  typed.value = '';
  // The form is not sent (the dialog stays open) until the id is typed exactly.
  typed.required = rule === 'type';
  if (rule === 'type') typed.setAttribute('pattern', '\\s*' + eventId + '\\s*');
  else typed.removeAttribute('pattern');
  setText('confirm-ok', title);
  return new Promise(function (resolve) {
    function closed() {
      dlg.removeEventListener('close', closed);
      resolve({ agreed: dlg.returnValue === 'ok', typed: typed.value });
    }
    dlg.addEventListener('close', closed);
    dlg.returnValue = '';
    dlg.showModal();
    (rule === 'type' ? typed : byId('confirm-cancel')).focus();
  });
}
