// The block page (B4): what is blocked, why, until when, what to do instead, and the more-time
// button the host offers. It is opened as block.html#URL, URL being where the navigation was
// going; it learns the state from the background script over a port and shows it live.
"use strict";
const api = globalThis.browser ?? globalThis.chrome;

function msg(key, ...subs) {
  return api.i18n.getMessage(key, subs.map(String)) || key;
}

// Where the tab was going. Only an http(s) address is taken: anyone may open this page with
// any fragment, and the button that goes back must never run a javascript: URL.
const target = (() => {
  const hash = location.href.indexOf("#");
  const url = hash < 0 ? "" : location.href.slice(hash + 1);
  return BlockMatch.parse(url) ? url : null;
})();

// The labels of the more-time button, by what the host says pressing it gets.
const moreLabel = { grant: "moreGrant", ask: "moreAsk", minute: "moreMinute" };
// The request each selection's button sent and still waits for ("m…": asked, waiting for an
// administrator), so a later answer finds its section.
const asked = new Map();
const sections = new Map();
let wasBlocked = null;
let connected = false;
let port = null;
let lastView = { state: { blocked: [] } };

function translate(root) {
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = msg(el.dataset.i18n);
}

function text(el, value) {
  el.textContent = value || "";
  el.hidden = !value;
}

function section(entry) {
  let s = sections.get(entry.selection);
  if (s) return s;
  const node = document.getElementById("entry").content.firstElementChild.cloneNode(true);
  translate(node);
  s = { node, button: node.querySelector("button"), reason: node.querySelector(".reason"),
        input: node.querySelector("input"), answer: node.querySelector(".answer"), kind: null, selection: entry.selection };
  s.button.addEventListener("click", () => ask(s));
  sections.set(entry.selection, s);
  document.getElementById("entries").append(node);
  return s;
}

function fill(s, entry) {
  const activities = Array.isArray(entry.activities) ? entry.activities.filter((a) => typeof a === "string") : [];
  text(s.node.querySelector(".title"), entry.title || entry.selection);
  text(s.node.querySelector(".body"), entry.body || "");
  text(s.node.querySelector(".why"), msg("blockedBy", activities.length ? activities.join(", ") : entry.selection));
  text(s.node.querySelector(".until"), entry.untilText || (entry.until ? entry.until : msg("noEnd")));
  text(s.node.querySelector(".allowed"), Array.isArray(entry.allowOnly)
    ? (entry.allowOnly.length ? msg("allowedOnly", entry.allowOnly.join(", ")) : msg("allowedNothing")) : "");
  s.kind = moreLabel[entry.more] ? entry.more : null;
  s.node.querySelector(".more").hidden = s.kind === null;
  if (s.kind) s.button.textContent = msg(moreLabel[s.kind]);
  s.reason.hidden = s.kind !== "ask";
  s.button.disabled = !connected || asked.has(s.selection);
}

function render(v) {
  lastView = v;
  connected = v.connected === true;
  const status = document.getElementById("status");
  text(status, connected ? "" : msg("unreachable", v.message || msg("hostClosed")));
  if (!target) {
    text(document.getElementById("site"), msg("noAddress"));
    return;
  }
  const hits = BlockMatch.blockedBy(v.state, target, Date.now());
  const shown = new Set();
  for (const entry of hits) {
    if (!entry || typeof entry.selection !== "string") continue;
    fill(section(entry), entry);
    shown.add(entry.selection);
  }
  for (const [name, s] of sections) {
    if (!shown.has(name)) {
      s.node.remove();
      sections.delete(name);
    }
  }
  const blocked = hits.length > 0;
  document.getElementById("free").hidden = blocked;
  document.getElementById("instead").hidden = !blocked;
  document.title = blocked ? msg("pageTitle") : msg("notBlockedTitle");
  // The block ended while the page was open: back to where the tab was going. A page opened
  // for a URL that is not blocked only offers the button, so a rule the browser holds that
  // this state does not can never make a loop.
  if (!blocked && wasBlocked === true) location.replace(target);
  wasBlocked = blocked;
}

function ask(s) {
  if (!s.kind || !port) return;
  s.button.disabled = true;
  text(s.answer, msg("asking"));
  const request = { type: "more", selection: s.selection, minutes: s.kind === "minute" ? 1 : 15 };
  if (s.kind === "ask" && s.input.value.trim()) request.reason = s.input.value.trim();
  asked.set(s.selection, null);
  port.postMessage(request);
}

function answered(selection, reply) {
  const s = sections.get(selection);
  if (!reply || reply.ok !== true) {
    asked.delete(selection);
    if (s) {
      text(s.answer, (reply && reply.text) || msg("moreFailed"));
      s.button.disabled = !connected;
    }
    return;
  }
  if (reply.answer === "asked") asked.set(selection, reply.id || null);
  else asked.delete(selection);
  if (s) {
    text(s.answer, reply.text || msg(reply.answer === "asked" ? "askedFallback" : "grantedFallback"));
    s.button.disabled = !connected || asked.has(selection);
  }
}

// A later answer to a request this page sent (approved, denied, expired).
function moreTime(event, words) {
  if (!event || !asked.has(event.selection)) return;
  const id = asked.get(event.selection);
  if (id && event.activity && event.activity !== id) return;
  const s = sections.get(event.selection);
  if (event.kind !== "asked") asked.delete(event.selection);
  if (s) {
    text(s.answer, words || event.message || "");
    s.button.disabled = !connected || asked.has(event.selection);
  }
}

function listen() {
  port = api.runtime.connect({ name: "block" });
  port.onMessage.addListener((m) => {
    if (!m) return;
    if (m.type === "view") render(m);
    else if (m.type === "more-answer") answered(m.selection, m.reply);
    else if (m.type === "more-time") moreTime(m.event, m.text);
  });
  port.onDisconnect.addListener(() => {
    // The background went away (Chromium restarts its worker): ask again in a second.
    port = null;
    render({ state: lastView.state, connected: false, message: msg("hostClosed") });
    setTimeout(listen, 1000);
  });
}

document.documentElement.lang = api.i18n.getUILanguage();
translate(document);
if (target) {
  const u = new URL(target);
  text(document.getElementById("site"), u.hostname);
  text(document.getElementById("address"), target);
  const back = document.getElementById("back");
  back.textContent = msg("goBack", u.hostname);
  back.addEventListener("click", () => location.replace(target));
}
listen();
