// The review card: holds the next cards of the queue, answers the review keys at once, and sends every label to
// Python as an event with its own client id (the "outbox": every label not answered yet, re-sent until Python
// answers it; Python stores a client id once). Unanswered labels are kept in localStorage, so a reload or the next
// visit after a closed tab re-sends them; the card shows a label as saved only once Python's answer says it is stored.
// Labels are posted to the save route (ui/review_card/route.py) and answered by its response, without a rerun;
// when the server does not serve it, or refuses this card's grant, they go through the component's channel.

const STORE = (window.__rjReviewCard = window.__rjReviewCard || {});
const RESEND_MS = 3000;
const POST_TIMEOUT_MS = 15000;  // a request with no answer by then is given up (and sent again): never a stuck card
const ROUTE_MAX_EVENTS = 200;  // ui/review_card/store.py MAX_EVENTS: the route reads no more from one request
const SYNC_IDLE_MS = 1500;  // no new label stored for this long: the fragment is rerun once (syncWhenIdle)

function newId() {
  if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
  return Date.now().toString(36) + "-" + Math.random().toString(36).slice(2, 12);
}

// The outbox is kept in localStorage, one entry per tab (a tab's id lives in its sessionStorage, so a reload keeps
// it): a closed tab's labels survive it and the next visit by the same reviewer to the same run sends them (the
// store writes a client id once, so a label another open tab also sends is stored once).
const PREFIX = "rejudge.review_card.outbox:";
const TAB_KEY = "rejudge.review_card.tab";

function tabId() {
  try {
    let id = sessionStorage.getItem(TAB_KEY);
    if (!id) { id = newId(); sessionStorage.setItem(TAB_KEY, id); }
    return id;
  } catch (e) { return STORE.tab || (STORE.tab = newId()); }
}

function storagePrefix(s) { return `${PREFIX}${encodeURIComponent(s.run)}:${encodeURIComponent(s.who)}:`; }

function storageKey(s) { return storagePrefix(s) + tabId(); }

function parseEvents(raw, s) {
  try {
    const events = raw ? JSON.parse(raw) : [];
    return Array.isArray(events) ? events.filter((e) => e && e.cid && e.run === s.run && e.who === s.who) : [];
  } catch (e) { return []; }
}

function loadOutbox(s) {  // this tab's labels, and those a closed tab left behind (claimed: sent from here now)
  const out = [], seen = new Set();
  const take = (events) => { for (const e of events) if (!seen.has(e.cid)) { seen.add(e.cid); out.push(e); } };
  try {
    const mine = storageKey(s), prefix = storagePrefix(s);
    take(parseEvents(localStorage.getItem(mine), s));
    const others = [];
    for (let i = 0; i < localStorage.length; i++) {
      const k = localStorage.key(i);
      if (k && k !== mine && k.startsWith(prefix)) others.push(k);
    }
    for (const k of others) { take(parseEvents(localStorage.getItem(k), s)); localStorage.removeItem(k); }
    const old = `${PREFIX}${s.run}:${s.who}`;  // the tab-only store of earlier versions
    take(parseEvents(sessionStorage.getItem(old), s));
    sessionStorage.removeItem(old);
  } catch (e) { /* storage off: the outbox lives in this page only */ }
  return out;
}

function saveOutbox(s) {
  try {
    if (s.outbox.length) localStorage.setItem(storageKey(s), JSON.stringify(s.outbox));
    else localStorage.removeItem(storageKey(s));
  } catch (e) { /* storage full or off */ }
}

function freshState(data) {
  const s = {queue: data.queue, run: data.run, who: data.who, cursor: data.cursor, items: new Map(), outbox: [],
             acks: new Map(), history: [], mine: new Map(), cardCid: new Map(), notes: new Map(), flagCid: new Map(),
             strip: "", errors: [], nonce: 0,
             lastSend: 0, total: data.total};
  s.outbox = loadOutbox(s);  // labels a reload interrupted: sent again, stored once
  return s;
}

function merge(s, data) {
  s.total = data.total;
  s.progress = data.progress;
  s.canReview = data.can_review;
  s.blind = data.blind;
  for (const item of data.items || []) s.items.set(item.pos, item);
  s.cardsAsked = 0;  // a render: cards may be asked for again
  takeAcks(s, data.acks || {});
}

function takeAcks(s, acks) {  // Python's answers, from a render or from the save route
  let newest = null;
  for (const [cid, ack] of Object.entries(acks)) {
    if (s.acks.has(cid)) continue;
    s.acks.set(cid, ack);
    newest = ack;
    if (!ack.ok && ack.error) s.errors.push(ack.error);
  }
  if (newest && newest.ok && newest.strip) s.strip = newest.strip;
  for (const e of s.outbox) {  // a refused label gives its note back as the card's draft (the classic card keeps it)
    const ack = s.acks.get(e.cid);
    if (!ack || ack.ok || e.type !== "label" || !e.note || s.notes.get(e.decision)) continue;
    s.notes.set(e.decision, e.note);
    const parts = s.root && s.root.__rjrcParts;
    const box = parts && parts.shownFor === e.decision ? parts.extras.querySelector(".rjrc-note") : null;
    if (box && !box.value) box.value = e.note;
  }
  const before = s.outbox.length;
  s.outbox = s.outbox.filter((e) => !s.acks.has(e.cid));
  if (s.outbox.length !== before) saveOutbox(s);
}

function esc(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
}

function mineOf(s, item) { return s.mine.has(item.id) ? s.mine.get(item.id) : item.mine; }

function markOf(s, item) {
  const cid = s.cardCid.get(item.id);
  if (!cid) return "";
  const ack = s.acks.get(cid);
  if (!ack) return '<span class="pending">pending: not stored yet</span>';
  if (!ack.ok) return `<span class="error">${esc(ack.error || "not stored")}</span>`;
  return '<span class="saved">saved ✓</span>';
}

function statusLine(s) {  // labels and undos; a flag's own status sits under its form
  const flags = new Set(s.flagCid.values());
  let saved = 0, failed = 0;
  for (const [cid, a] of s.acks) { if (flags.has(cid)) continue; if (a.ok) saved += 1; else failed += 1; }
  const pending = s.outbox.filter((e) => e.type !== "erratum").length;
  const parts = [`${saved} saved`];
  if (pending) parts.push(`<span class="pending">${pending} pending (not saved yet)</span>`);
  if (failed) parts.push(`<span class="error">${failed} not stored</span>`);
  return parts.join(" · ");
}

function nav(s) {
  return `<div class="rjrc-nav">
    <button type="button" data-act="back" aria-label="Back to the previous decision (key p)" aria-keyshortcuts="p"
      ${s.cursor <= 0 ? "disabled" : ""}>‹ back<kbd>p</kbd></button>
    <button type="button" data-act="next" aria-label="Next decision without labelling (key n)" aria-keyshortcuts="n"
      ${s.cursor >= s.total ? "disabled" : ""}>next ›<kbd>n</kbd></button>
    <button type="button" data-act="undo" aria-label="Undo your last review (key Backspace)"
      aria-keyshortcuts="Backspace" ${s.history.length ? "" : "disabled"}>↶ undo last<kbd>Backspace</kbd></button>
  </div>`;
}

function render(s) {
  const root = s.root;
  if (!root) return;
  const focused = root.contains(document.activeElement) ? document.activeElement.getAttribute("data-focus") : null;
  const item = s.items.get(s.cursor);
  const top = `<div class="rjrc-top"><span>${esc(s.progress || "")}</span>
    <span class="rjrc-status" aria-live="polite">${statusLine(s)}</span></div>`;
  const strip = `<div class="rjrc-strip" aria-live="polite">${esc(s.strip)}</div>`;
  const errors = s.errors.length ? `<div class="rjrc-mark"><span class="error">${esc(s.errors[s.errors.length - 1])}</span></div>` : "";
  let body, after = "";
  if (s.cursor >= s.total) {
    body = `<div class="rjrc-end rjrc-card" data-pos="${s.cursor}" data-decision="">${s.total ? "You reached the end of this queue. Back (p) shows the decisions you labelled." : "Nothing left in this queue. Pick another queue or filter, or look at the Scores page."}</div>${nav(s)}`;
  } else if (!item) {
    body = `<div class="rjrc-card" data-pos="" data-decision="" aria-busy="true">Loading the next decisions…</div>${nav(s)}`;
  } else {
    const mine = mineOf(s, item);
    const buttons = item.buttons.map((b, i) => {
      const yours = mine === b.label;
      const label = b.aria + (yours ? ", your current label" : "");
      return `<button type="button" data-act="label" data-i="${i}" data-focus="label-${i}" aria-label="${esc(label)}"
        aria-pressed="${yours}" ${b.key ? `aria-keyshortcuts="${esc(b.key)}"` : ""} ${s.canReview ? "" : "disabled"}>${esc(b.text)}${yours ? " (yours)" : ""}${b.key ? `<kbd>${esc(b.key)}</kbd>` : ""}</button>`;
    }).join("");
    const context = item.context.length ? `<dl class="rjrc-context">${item.context.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join("")}</dl>` : "";
    const who = s.canReview ? "" : '<div class="rjrc-mark"><span class="error">Enter your reviewer name in the sidebar to label.</span></div>';
    body = `<div class="rjrc-head">${esc(item.head)} · ${(s.cursor + 1).toLocaleString("en-US")} of ${s.total.toLocaleString("en-US")}</div>
      <div class="rjrc-box"><div class="rjrc-card" data-pos="${item.pos}" data-decision="${item.id}">${item.html}</div>
      <div class="rjrc-buttons" role="group" aria-label="Labels">${buttons}</div></div>
      <div class="rjrc-mark" aria-live="polite">${markOf(s, item)}</div>${who}
      ${nav(s)}<div class="rjrc-keys">Keyboard: ${esc(item.hint)} · n: next · p: back · Backspace: undo · Esc: leave the note</div>`;
    after = context;
  }
  const parts = layout(root);
  parts.main.innerHTML = top + errors + body;
  parts.after.innerHTML = after + strip;
  updateExtras(s, s.cursor < s.total ? item : null);
  root.querySelectorAll("[data-act]").forEach((el) => { if (!el.getAttribute("data-focus")) el.setAttribute("data-focus", el.getAttribute("data-act")); });
  if (focused) {
    const again = root.querySelector(`[data-focus="${focused}"]`);
    if (again && !again.disabled) again.focus();
  }
}

// A queue control just changed (the Queue box, a filter, a switch): the control keeps the focus, so the review
// keys would be typed into it. The card takes the keys back; a text being typed inside the card is left alone.
function takeKeys(root) {
  const el = document.activeElement;
  if (!el || el === document.body || root.contains(el)) return;
  if (el.blur) el.blur();
  root.focus({preventScroll: true});
}

function needsCards(s) {
  if (s.cursor >= s.total) return false;
  const ahead = Math.min(s.total - 1, s.cursor + 8);
  for (const pos of [s.cursor, ahead, Math.max(0, s.cursor - 1)]) if (!s.items.has(pos)) return true;
  return false;
}

function viaRoute(s) { return Boolean(s.saveUrl && s.grant && s.refusedGrant !== s.grant); }

// The route's last request failed for want of a connection: the labels also go through the channel, whose state
// the app sends again once it is reconnected (after a server restart only a full rerun reaches the new session:
// the card's fragment is unknown there, and that rerun gives the card a new grant).
function post(s, leaving) {  // one request at a time; what was labelled meanwhile goes in the next one
  // ...but a tab that is going sends what is pending at once, beside a request still out: no next one would come
  // (the route stores each label once, however often it arrives)
  if (s.posting && !leaving) { s.postAgain = true; return; }
  const events = s.outbox.slice(0, ROUTE_MAX_EVENTS), grant = s.grant;
  s.posting = true;
  s.lastSend = Date.now();
  fetch(s.saveUrl, {method: "POST", headers: {"Content-Type": "application/json"}, credentials: "same-origin",
                    keepalive: Boolean(leaving), body: JSON.stringify({grant, queue: s.queue, events}),
                    signal: AbortSignal.timeout(POST_TIMEOUT_MS)})
    .then((r) => {
      if (r.ok) {
        s.routeDown = false;
        return r.json().then((body) => {
          takeAcks(s, (body && body.acks) || {});
          if (body && typeof body.progress === "string") s.progress = body.progress;  // read after these labels
          render(s);
          syncWhenIdle(s);
        });
      }
      if (r.status === 401) {  // signed out (or in as someone else) in another tab: said, labels kept pending
        return r.json().then((body) => { s.errors = [(body && body.error) || "signed out: reload the page"];
                                         render(s); }, () => null);
      }
      if ([403, 404, 405, 409].includes(r.status)) {  // no route, or no grant for it: the channel takes the labels
        s.refusedGrant = grant;
        if (!(r.status === 403 && renewGrant(s))) channel(s, true);
      }
      return null;  // any other answer: kept pending, re-sent by the timer
    })
    .catch(() => {  // no connection (or no answer in time): kept pending (and in localStorage), re-sent
      s.routeDown = true;
      channel(s, true);
    })
    .finally(() => {
      s.posting = false;
      if (s.postAgain) { s.postAgain = false; if (s.outbox.length && viaRoute(s)) post(s); }
    });
}

// A rerun of the whole page gives the card a new grant (the card's own messages do not reach a restarted server:
// its fragment is unknown to the new session). Sent alone: Streamlit sends the widget updates of one moment as one
// rerun, of the card's fragment if the card is among them; the timer sends the labels through the channel after
// it, and asks again while no new grant has come (a request made while still disconnected is lost).
function renewGrant(s) {
  if (!STORE.refresh || s.refusedGrant !== s.grant || Date.now() - (s.refreshed || 0) <= RESEND_MS) return false;
  s.refreshed = s.lastSend = Date.now();
  STORE.refresh();
  return true;
}

function channel(s, force) {  // a message through the component: a rerun of the card's fragment
  if (!s.setStateValue) return;
  const labels = !viaRoute(s) || s.routeDown;
  if (!labels) {  // the channel only asks for cards, once until they come (each ask is a rerun on the server)
    if (!needsCards(s) || (!force && (s.cursor === s.sentCursor || Date.now() - (s.cardsAsked || 0) < RESEND_MS))) return;
    s.cardsAsked = Date.now();
  } else if (!force && !s.outbox.length && !needsCards(s) && s.cursor === s.sentCursor) return;
  s.nonce += 1;
  s.lastSend = Date.now();
  s.sentCursor = s.cursor;
  s.setStateValue("outbox", {queue: s.queue, events: labels ? s.outbox.slice() : [], cursor: s.cursor, nonce: s.nonce});
}

// The route's saves rerun nothing, so what the server draws around the card (the reviewer progress table) would
// stay as the page was drawn: once every label is stored and no new one came for SYNC_IDLE_MS, one message through
// the channel reruns the card's fragment (a burst of keys costs one rerun, not one per key).
function syncWhenIdle(s) {
  clearTimeout(s.syncTimer);
  s.syncTimer = setTimeout(() => {
    s.syncTimer = null;
    if (!s.setStateValue || !s.root || !s.root.isConnected || s.outbox.length || s.posting) return;  // the next answer asks again
    s.nonce += 1;
    s.lastSend = Date.now();
    s.sentCursor = s.cursor;
    s.setStateValue("outbox", {queue: s.queue, events: [], cursor: s.cursor, nonce: s.nonce});
  }, SYNC_IDLE_MS);
}

function flush(s, force, leaving) {
  if (viaRoute(s) && s.outbox.length) post(s, leaving);
  channel(s, force);
}

function later(s) {  // after the next card is drawn: the send never delays it
  if (s.flushTimer) return;
  s.flushTimer = setTimeout(() => { s.flushTimer = null; flush(s, false); }, 0);
}

function label(s, index) {
  const item = s.items.get(s.cursor);
  if (!item || !s.canReview) return;
  const button = item.buttons[index];
  if (!button) return;
  const ev = {cid: newId(), type: "label", decision: item.id, label: button.label, run: s.run, who: s.who};
  const note = (s.notes.get(item.id) || "").trim();
  if (note) ev.note = note;
  s.notes.delete(item.id);
  s.outbox.push(ev);
  saveOutbox(s);
  s.history.push({cid: ev.cid, pos: item.pos, decision: item.id, prev: mineOf(s, item)});
  s.mine.set(item.id, button.label);
  s.cardCid.set(item.id, ev.cid);
  s.cursor = Math.min(item.pos + 1, s.total);
  render(s);
  later(s);
}

function undo(s) {
  const last = s.history.pop();
  if (!last) return;
  const ev = {cid: newId(), type: "undo", undo_of: last.cid, decision: last.decision, run: s.run, who: s.who};
  s.outbox.push(ev);
  saveOutbox(s);
  if (last.prev === null || last.prev === undefined) s.mine.delete(last.decision); else s.mine.set(last.decision, last.prev);
  s.cardCid.set(last.decision, ev.cid);
  s.cursor = last.pos;
  render(s);
  later(s);
}

function move(s, to) {
  s.cursor = Math.max(0, Math.min(to, s.total));
  render(s);
  later(s);
}

function act(s, what, index) {
  if (what === "label") label(s, index);
  else if (what === "next") move(s, s.cursor + 1);
  else if (what === "back") move(s, s.cursor - 1);
  else if (what === "undo") undo(s);
}

function onKey(e) {
  const s = STORE.state;
  if (!s || !s.root || !s.root.isConnected) return;
  if (e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
  const t = e.target;
  if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
  const key = e.key;
  const item = s.items.get(s.cursor);
  if (item && s.cursor < s.total) {
    const i = item.buttons.findIndex((b) => b.key && b.key === key.toLowerCase());
    if (i >= 0) { e.preventDefault(); e.stopPropagation(); label(s, i); return; }
  }
  if (key === "n" || key === "ArrowRight") { e.preventDefault(); move(s, s.cursor + 1); }
  else if (key === "p" || key === "ArrowLeft") { e.preventDefault(); move(s, s.cursor - 1); }
  else if (key === "Backspace") { e.preventDefault(); undo(s); }
}

// The note box, the document link and the errata form: built once from constant markup, then only ever given
// text through textContent / value (never innerHTML: gold items and document ids are data), and not redrawn by
// `render`, so a note being typed keeps its text, caret and focus while cards and answers arrive.
const OTHER_ITEM = "(an item not in the list / missing from the gold)";
const EXTRAS_HTML = `
  <div class="rjrc-note-row">
    <label class="rjrc-note-label" for="rjrc-note">Note</label>
    <textarea id="rjrc-note" class="rjrc-note" rows="1" data-focus="note" aria-describedby="rjrc-note-help"
      placeholder="note (optional): stored with your next label of this decision"></textarea>
    <a class="rjrc-doclink" data-focus="doc" href="#"></a>
    <button type="button" class="rjrc-flag-open" data-focus="flag" aria-expanded="false" aria-controls="rjrc-flag"
      aria-label="Flag a gold error: the gold data of this document looks wrong or incomplete">⚑ Flag a gold error</button>
  </div>
  <div id="rjrc-note-help" class="rjrc-sr">Keys typed in the note are note text; Escape leaves the note, and the review keys work again.</div>
  <div class="rjrc-flag-status" role="status" aria-live="polite"></div>
  <form id="rjrc-flag" class="rjrc-flag" hidden aria-label="Flag a gold error (scores are not changed)">
    <label class="rjrc-item-pick">Gold item <select name="picked" data-focus="flag-item"></select></label>
    <label>…or type the item <input name="typed" type="text" data-focus="flag-typed"></label>
    <label>Problem <select name="problem" data-focus="flag-problem"></select></label>
    <label>Proposed correction <input name="correction" type="text" data-focus="flag-correction"
      placeholder="what the gold should say (empty: remove it)"></label>
    <label class="rjrc-wide">Note <input name="note" type="text" data-focus="flag-note" placeholder="why (optional)"></label>
    <div class="rjrc-wide rjrc-flag-buttons">
      <button type="submit" data-focus="flag-send">Flag gold item</button>
      <button type="button" class="rjrc-flag-cancel" data-focus="flag-cancel">Cancel</button>
      <span class="rjrc-help">Scores are not changed; flags are listed on the Gold errata page.</span>
    </div>
  </form>`;

function layout(root) {
  if (!root.__rjrcParts) {
    root.setAttribute("tabindex", "-1");  // Esc in the note gives the focus back to the card
    const part = (cls) => { const el = document.createElement("div"); el.className = cls; root.appendChild(el); return el; };
    root.textContent = "";
    const main = part("rjrc-main"), extras = part("rjrc-extras"), after = part("rjrc-after");
    extras.innerHTML = EXTRAS_HTML;  // constant markup, no data in it
    root.__rjrcParts = {main, extras, after};
    wireExtras(root.__rjrcParts);
  }
  return root.__rjrcParts;
}

function option(value, text) {
  const o = document.createElement("option");
  o.value = value;
  o.textContent = text;
  return o;
}

function flagStatus(s, item) {
  const cid = item ? s.flagCid.get(item.id) : null;
  if (!cid) return ["", ""];
  const ack = s.acks.get(cid);
  if (!ack) return ["pending", "Flag pending: not stored yet"];
  if (!ack.ok) return ["error", ack.error || "not flagged"];
  return ["saved", ack.strip || "Flagged ✓"];
}

function fillForm(s, item, parts) {
  const form = parts.extras.querySelector(".rjrc-flag");
  const pick = form.elements.picked, problem = form.elements.problem;
  pick.replaceChildren(...item.gold.map(([raw, shown], i) => option(String(i), shown)), option("other", OTHER_ITEM));
  const at = item.gold.findIndex(([raw]) => raw === item.gold_item);
  pick.value = at >= 0 ? String(at) : (item.gold.length ? "0" : "other");
  form.querySelector(".rjrc-item-pick").hidden = !item.gold.length;
  const typedLabel = form.elements.typed.parentElement;
  typedLabel.firstChild.textContent = item.gold.length ? "…or type the item " : "Gold item ";
  form.elements.typed.value = item.gold.length ? "" : (item.gold_item || "");
  problem.replaceChildren(...s.extras.problems.map(([key, why]) => option(key, `${key} — ${why}`)));
  form.elements.correction.value = "";
  form.elements.note.value = "";
  for (const el of [form.elements.typed, form.elements.correction]) el.maxLength = s.extras.maxItem;
  form.elements.note.maxLength = s.extras.maxNote;
}

function showForm(s, open) {
  const parts = s.root.__rjrcParts;
  const form = parts.extras.querySelector(".rjrc-flag");
  const button = parts.extras.querySelector(".rjrc-flag-open");
  form.hidden = !open;
  button.setAttribute("aria-expanded", String(open));
  button.textContent = open ? "✕ Close the flag form" : "⚑ Flag a gold error";
  button.setAttribute("aria-label", open ? "Close the flag form"
    : "Flag a gold error: the gold data of this document looks wrong or incomplete");
  if (open) {
    const item = s.items.get(s.cursor);
    if (item) fillForm(s, item, parts);
    form.scrollIntoView({block: "nearest"});
    (item && item.gold.length ? form.elements.picked : form.elements.typed).focus();
  }
}

function updateExtras(s, item) {
  const parts = s.root.__rjrcParts;
  const box = parts.extras;
  box.hidden = !item;
  if (!item) {  // the end of the queue, or cards loading: coming back redraws the card's own draft
    parts.shownFor = null;
    return;
  }
  const note = box.querySelector(".rjrc-note"), link = box.querySelector(".rjrc-doclink");
  const flag = box.querySelector(".rjrc-flag-open");
  if (parts.shownFor !== item.id) {  // another card: its own note draft, its link, the flag form closed
    parts.shownFor = item.id;
    note.value = s.notes.get(item.id) || "";
    link.href = `${s.extras.docLink}&doc=${encodeURIComponent(item.doc)}&${s.extras.decisionKey}=${encodeURIComponent(item.num)}`;
    link.textContent = `Open the whole ${s.extras.docNoun} ↗`;
    link.setAttribute("aria-label", `Open the whole ${s.extras.docNoun} ${item.doc} on the Document page`);
    showForm(s, false);
  }
  note.maxLength = s.extras.maxNote;
  note.disabled = !s.canReview;
  flag.disabled = !s.canReview;
  const [cls, text] = flagStatus(s, item);
  const status = box.querySelector(".rjrc-flag-status");
  status.className = `rjrc-flag-status ${cls}`;
  status.textContent = text;
}

function sendFlag(s) {
  const item = s.items.get(s.cursor);
  const form = s.root.__rjrcParts.extras.querySelector(".rjrc-flag");
  if (!item || !s.canReview) return;
  const picked = form.elements.picked.value;
  const listed = item.gold.length && picked !== "other" ? item.gold[Number(picked)][0] : null;
  const ev = {cid: newId(), type: "erratum", decision: item.id, item: listed, typed: form.elements.typed.value,
              problem: form.elements.problem.value, correction: form.elements.correction.value,
              note: form.elements.note.value, run: s.run, who: s.who};
  s.outbox.push(ev);
  saveOutbox(s);
  s.flagCid.set(item.id, ev.cid);
  showForm(s, false);
  s.root.__rjrcParts.extras.querySelector(".rjrc-flag-open").focus();
  render(s);
  later(s);
}

function wireExtras(parts) {
  const box = parts.extras;
  const note = box.querySelector(".rjrc-note");
  note.addEventListener("input", () => {
    const s = STORE.state, item = s && s.items.get(s.cursor);
    if (item) s.notes.set(item.id, note.value);
  });
  box.addEventListener("keydown", (e) => {
    if (e.key !== "Escape" || !/^(INPUT|TEXTAREA|SELECT)$/.test(e.target.tagName)) return;
    e.preventDefault();
    e.stopPropagation();
    e.target.blur();
    STORE.state.root.focus();  // the review keys work again
  });
  box.querySelector(".rjrc-flag-open").addEventListener("click", () => {
    const s = STORE.state;
    showForm(s, box.querySelector(".rjrc-flag").hidden);
  });
  box.querySelector(".rjrc-flag-cancel").addEventListener("click", () => {
    showForm(STORE.state, false);
    box.querySelector(".rjrc-flag-open").focus();
  });
  box.querySelector(".rjrc-flag").addEventListener("submit", (e) => { e.preventDefault(); sendFlag(STORE.state); });
  box.querySelector(".rjrc-doclink").addEventListener("click", (e) => {
    const s = STORE.state;
    if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey || !s.setTriggerValue) return;
    e.preventDefault();  // a plain click: followed in this session (the queue's filters are kept)
    s.setTriggerValue("open", parts.shownFor);
  });
}

export default function (component) {
  const { data, setStateValue, parentElement } = component;
  const root = parentElement.querySelector(".rjrc");
  let s = STORE.state;
  let fresh = false;
  if (!s || s.queue !== data.queue || s.who !== data.who || s.run !== data.run) {
    s = freshState(data);
    STORE.state = s;
    fresh = true;
  }
  s.root = root;
  s.setStateValue = setStateValue;
  s.setTriggerValue = component.setTriggerValue;
  s.saveUrl = data.save_url || null;
  s.grant = data.grant || null;
  s.extras = {docLink: data.doc_link || "document?", decisionKey: data.decision_key, docNoun: data.doc_noun || "document",
              problems: data.problems || [], maxNote: data.max_note || 5000, maxItem: data.max_item || 2000};
  merge(s, data);
  render(s);
  if (fresh) takeKeys(root);
  if (!root.__rjrcClicks) {
    root.__rjrcClicks = true;
    root.addEventListener("click", (e) => {
      const el = e.target.closest("[data-act]");
      if (el && !el.disabled) act(STORE.state, el.getAttribute("data-act"), Number(el.getAttribute("data-i")));
    });
  }
  if (!STORE.keys) {
    STORE.keys = onKey;
    document.addEventListener("keydown", onKey, true);
  }
  if (!STORE.timer) {  // re-send what is not answered (a lost connection, a rerun that swallowed a message)
    STORE.timer = setInterval(() => {
      const st = STORE.state;
      if (st && (st.outbox.length || needsCards(st)) && Date.now() - st.lastSend > RESEND_MS
          && !(st.outbox.length && renewGrant(st))) flush(st, true);
    }, 1000);
  }
  if (!STORE.hide) {  // the tab is going: send what is not stored now (it is in localStorage anyway)
    STORE.hide = () => { const st = STORE.state; if (st && st.outbox.length) { saveOutbox(st); flush(st, true, true); } };
    window.addEventListener("pagehide", STORE.hide);
    document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") STORE.hide(); });
  }
  if (fresh && s.outbox.length) later(s);
  return () => {
    // A control above the card that appears or goes (the queue's switches) re-mounts it: the new mount may run
    // before this cleanup, and the keys it listens with are then its own, not to be removed here.
    if (!root.isConnected && (!STORE.state || STORE.state.root === root)) {
      document.removeEventListener("keydown", STORE.keys, true);
      STORE.keys = null;
      clearInterval(STORE.timer);
      STORE.timer = null;
    }
  };
}
