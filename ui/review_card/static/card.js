// The review card: holds the next cards of the queue, answers the review keys at once, and sends every label to
// Python as an event with its own client id ("outbox" state: every label not answered yet, re-sent until Python
// answers it; Python stores a client id once). Unanswered labels are kept in sessionStorage, so a reload re-sends
// them; the card shows a label as saved only once Python's answer says it is stored.

const STORE = (window.__rjReviewCard = window.__rjReviewCard || {});
const RESEND_MS = 3000;

function newId() {
  if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
  return Date.now().toString(36) + "-" + Math.random().toString(36).slice(2, 12);
}

function storageKey(s) { return `rejudge.review_card.outbox:${s.run}:${s.who}`; }

function loadOutbox(s) {
  try {
    const raw = sessionStorage.getItem(storageKey(s));
    const events = raw ? JSON.parse(raw) : [];
    return Array.isArray(events) ? events.filter((e) => e && e.cid && e.run === s.run && e.who === s.who) : [];
  } catch (e) { return []; }
}

function saveOutbox(s) {
  try { sessionStorage.setItem(storageKey(s), JSON.stringify(s.outbox)); } catch (e) { /* storage full or off */ }
}

function freshState(data) {
  const s = {queue: data.queue, run: data.run, who: data.who, cursor: data.cursor, items: new Map(), outbox: [],
             acks: new Map(), history: [], mine: new Map(), cardCid: new Map(), strip: "", errors: [], nonce: 0,
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
  const acks = data.acks || {};
  let newest = null;
  for (const [cid, ack] of Object.entries(acks)) {
    if (s.acks.has(cid)) continue;
    s.acks.set(cid, ack);
    newest = ack;
    if (!ack.ok && ack.error) s.errors.push(ack.error);
  }
  if (newest && newest.ok && newest.strip) s.strip = newest.strip;
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

function statusLine(s) {
  let saved = 0, failed = 0;
  for (const a of s.acks.values()) { if (a.ok) saved += 1; else failed += 1; }
  const parts = [`${saved} saved`];
  if (s.outbox.length) parts.push(`<span class="pending">${s.outbox.length} pending</span>`);
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
  let body;
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
    body = `<div class="rjrc-head">${esc(item.head)} · ${s.cursor + 1} of ${s.total}</div>
      <div class="rjrc-box"><div class="rjrc-card" data-pos="${item.pos}" data-decision="${item.id}">${item.html}</div>
      <div class="rjrc-buttons" role="group" aria-label="Labels">${buttons}</div></div>
      <div class="rjrc-mark" aria-live="polite">${markOf(s, item)}</div>${who}
      ${nav(s)}<div class="rjrc-keys">Keyboard: ${esc(item.hint)} · n: next · p: back · Backspace: undo</div>${context}`;
  }
  root.innerHTML = top + errors + body + strip;
  root.querySelectorAll("[data-act]").forEach((el) => { if (!el.getAttribute("data-focus")) el.setAttribute("data-focus", el.getAttribute("data-act")); });
  if (focused) {
    const again = root.querySelector(`[data-focus="${focused}"]`);
    if (again && !again.disabled) again.focus();
  }
}

function needsCards(s) {
  if (s.cursor >= s.total) return false;
  const ahead = Math.min(s.total - 1, s.cursor + 8);
  for (const pos of [s.cursor, ahead, Math.max(0, s.cursor - 1)]) if (!s.items.has(pos)) return true;
  return false;
}

function flush(s, force) {
  if (!s.setStateValue) return;
  if (!force && !s.outbox.length && !needsCards(s) && s.cursor === s.sentCursor) return;
  s.nonce += 1;
  s.lastSend = Date.now();
  s.sentCursor = s.cursor;
  s.setStateValue("outbox", {queue: s.queue, events: s.outbox.slice(), cursor: s.cursor, nonce: s.nonce});
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
  merge(s, data);
  render(s);
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
      if (st && (st.outbox.length || needsCards(st)) && Date.now() - st.lastSend > RESEND_MS) flush(st, true);
    }, 1000);
  }
  if (fresh && s.outbox.length) later(s);
  return () => {
    if (!root.isConnected) {
      document.removeEventListener("keydown", STORE.keys, true);
      STORE.keys = null;
      clearInterval(STORE.timer);
      STORE.timer = null;
    }
  };
}
