// blockd's extension (B1): Chromium's MV3 service worker and Firefox's MV2 persistent background
// page, one file. It speaks to blockd only through the native-messaging host com.blockd.host
// (docs/BROWSER.md has the messages): it says which site the person looks at (B2), keeps the
// last state the host sent and sends every top-level navigation to a blocked URL to its own
// block page (B4), and shows the host's warnings.
"use strict";
if (typeof BlockMatch === "undefined" && typeof importScripts === "function") importScripts("match.js");

const api = globalThis.browser ?? globalThis.chrome;
const HOST = "com.blockd.host";
const IS_FIREFOX = api.runtime.getURL("").startsWith("moz-extension:");
const BLOCK_PAGE = api.runtime.getURL("block.html");
// B2, B5: a person who has not touched keyboard or mouse for this long is idle: long enough
// that reading a page is not idleness, as time trackers count it (ActivityWatch waits three
// minutes). A tab that plays sound still counts while its person is idle (a video watched
// without a touch); a locked screen never counts.
const IDLE_SECONDS = 60;
// Reconnecting to the host: 5 s after it went away, doubling up to a minute.
const RETRY_FIRST = 5000, RETRY_MAX = 60000;
const badge = api.action ?? api.browserAction;

function msg(key, ...subs) {
  return api.i18n.getMessage(key, subs.map(String)) || key;
}

// ---- What the host said last, kept across restarts of the worker and the browser ----------

// { blocked: [...], limits: [...], ... } as in the host's last connected state; `connected`
// and `message` say whether the host and blockd answer now.
let state = { blocked: [] };
let connected = false;
let unreachable = msg("notStarted");

// The language the block page speaks, for the host's words (untilText, answers): the
// catalog's own "lang" message, so the two always agree. Chromium started with --lang=ja shows
// the Japanese catalog while getUILanguage() still says en-US.
function lang() {
  const catalog = msg("lang");
  if (catalog === "en" || catalog === "ja") return catalog;
  return api.i18n.getUILanguage().toLowerCase().startsWith("ja") ? "ja" : "en";
}

async function restore() {
  try {
    const saved = await api.storage.local.get("state");
    if (saved && saved.state && Array.isArray(saved.state.blocked) && !connected) {
      state = saved.state;
      await enforce(false);
    }
  } catch (e) {
    console.error("blockd: reading the saved state failed", e);
  }
}

// ---- The native port ----------------------------------------------------------------------

let port = null;
let retry = RETRY_FIRST;
let retryTimer = null;
// The block pages' "more" requests, in the order they went to the host: its answers come in
// the same order (docs/BROWSER.md).
const pendingMore = [];

function connect() {
  if (port) return;
  clearTimeout(retryTimer);
  retryTimer = null;
  let p;
  try {
    p = api.runtime.connectNative(HOST);
  } catch (e) {
    lost(String(e && e.message || e));
    return;
  }
  port = p;
  p.onMessage.addListener(onHostMessage);
  p.onDisconnect.addListener((gone) => {
    const error = (gone && gone.error) || (api.runtime.lastError) || null;
    if (port === p) port = null;
    lost(error && error.message ? error.message : msg("hostClosed"));
  });
  lastSite = undefined;  // said again once the host has its hello
  send({ type: "hello", browser: IS_FIREFOX ? "firefox" : "chromium", version: api.runtime.getManifest().version, lang: lang() });
  reportSite(true);
}

function lost(why) {
  connected = false;
  unreachable = why;
  while (pendingMore.length) answerMore({ type: "more", ok: false, text: msg("unreachable", why) });
  broadcast();
  if (!retryTimer) {
    retryTimer = setTimeout(() => { retryTimer = null; connect(); }, retry);
    retry = Math.min(retry * 2, RETRY_MAX);
  }
}

function send(message) {
  if (!port) return false;
  try {
    port.postMessage(message);
    return true;
  } catch (e) {
    console.error("blockd: sending to the host failed", e);
    return false;
  }
}

function onHostMessage(m) {
  if (!m || typeof m !== "object") return;
  retry = RETRY_FIRST;
  switch (m.type) {
    case "state":
      if (m.connected === false) {
        connected = false;
        unreachable = typeof m.message === "string" ? m.message : msg("hostClosed");
        broadcast();
      } else {
        connected = true;
        state = m;
        api.storage.local.set({ state: m }).catch((e) => console.error("blockd: saving the state failed", e));
        enforce(true);
        warnings();
      }
      break;
    case "warning":
      warn(m);
      break;
    case "more":
      answerMore(m);
      break;
    case "more-time":
      for (const page of pages) post(page, { type: "more-time", event: m.event || {}, text: m.text || "" });
      break;
  }
}

// ---- B4: blocking ------------------------------------------------------------------------

function blockURL(url) {
  return BLOCK_PAGE + "#" + url;
}

let endTimer = null;
let appliedRules = "";

// Puts the current state into force: Chromium's redirect rules, then every open tab that shows
// a URL it blocks goes to the block page, then the block pages hear of it. Again at the next
// `until`, when an entry ends by itself.
async function enforce(switchTabs) {
  const now = Date.now();
  if (!IS_FIREFOX) {
    const rules = BlockMatch.dnrRules(state, BLOCK_PAGE, now);
    const text = JSON.stringify(rules);
    if (text !== appliedRules) {
      try {
        const old = await api.declarativeNetRequest.getDynamicRules();
        await api.declarativeNetRequest.updateDynamicRules({ removeRuleIds: old.map((r) => r.id), addRules: rules });
        appliedRules = text;
      } catch (e) {
        console.error("blockd: the redirect rules were refused", e);
      }
    }
  }
  if (switchTabs) {
    try {
      for (const tab of await api.tabs.query({})) {
        if (tab.url && BlockMatch.blockedBy(state, tab.url, now).length) {
          await api.tabs.update(tab.id, { url: blockURL(tab.url) }).catch(() => {});
        }
      }
    } catch (e) {
      console.error("blockd: switching open tabs failed", e);
    }
  }
  broadcast();
  clearTimeout(endTimer);
  const next = BlockMatch.nextEnd(state, now);
  if (next !== null) endTimer = setTimeout(() => enforce(false), Math.min(next - now + 50, 0x7fffffff));
}

// Firefox (MV2): a blocking webRequest listener decides each top-level navigation from the
// state in memory. Chromium has no blocking webRequest for extensions installed this way in
// MV3: its rules are declarativeNetRequest's, set in enforce().
if (IS_FIREFOX) {
  api.webRequest.onBeforeRequest.addListener((details) => {
    if (BlockMatch.blockedBy(state, details.url, Date.now()).length) return { redirectUrl: blockURL(details.url) };
    return {};
  }, { urls: ["http://*/*", "https://*/*"], types: ["main_frame"] }, ["blocking"]);
}

// ---- The block pages -----------------------------------------------------------------------

const pages = new Set();

function view() {
  return { type: "view", state, connected, message: connected ? null : unreachable };
}

function post(page, message) {
  try {
    page.postMessage(message);
  } catch (e) {
    pages.delete(page);
  }
}

function broadcast() {
  for (const page of pages) post(page, view());
}

function answerMore(reply) {
  const asked = pendingMore.shift();
  if (asked && asked.page) post(asked.page, { type: "more-answer", selection: asked.selection, reply });
}

api.runtime.onConnect.addListener((page) => {
  if (page.name !== "block" || !(page.sender && page.sender.url || "").startsWith(BLOCK_PAGE)) return;
  pages.add(page);
  page.onDisconnect.addListener(() => {
    pages.delete(page);
    for (const asked of pendingMore) if (asked.page === page) asked.page = null;
  });
  page.onMessage.addListener((m) => {
    if (!m || m.type !== "more" || typeof m.selection !== "string") return;
    const request = { type: "more", selection: m.selection, minutes: m.minutes === 1 ? 1 : 15 };
    if (typeof m.reason === "string" && m.reason.trim()) request.reason = m.reason.trim().slice(0, 500);
    if (!connected || !send(request)) {
      post(page, { type: "more-answer", selection: m.selection, reply: { type: "more", ok: false, text: msg("unreachable", unreachable) } });
      return;
    }
    pendingMore.push({ page, selection: m.selection });
  });
  post(page, view());
});

// ---- B2: the site in the focused window's visible tab, while the person is active ---------

let focusedWindow = api.windows.WINDOW_ID_NONE;
let idleState = "active";
let lastSite;  // undefined: nothing said yet on this port
let reporting = Promise.resolve();

function reportSite(always) {
  reporting = reporting.then(async () => {
    let site = null;
    if (idleState !== "locked" && focusedWindow !== api.windows.WINDOW_ID_NONE) {
      try {
        const [tab] = await api.tabs.query({ active: true, windowId: focusedWindow });
        const present = idleState === "active" || (tab && tab.audible);
        site = tab && present ? BlockMatch.siteOfURL(tab.url) : null;
      } catch (e) {
        site = null;
      }
    }
    if (always || site !== lastSite) {
      if (send({ type: "site", site })) lastSite = site;
    }
  });
  return reporting;
}

api.windows.onFocusChanged.addListener((id) => {
  focusedWindow = id;
  reportSite(false);
});
api.windows.onRemoved.addListener((id) => {
  if (id === focusedWindow) focusedWindow = api.windows.WINDOW_ID_NONE;
  reportSite(false);
});
api.tabs.onActivated.addListener(() => reportSite(false));
api.tabs.onUpdated.addListener((id, change) => {
  if (change.url || change.status || change.audible !== undefined) reportSite(false);
});
api.tabs.onRemoved.addListener(() => reportSite(false));
api.idle.setDetectionInterval(IDLE_SECONDS);
api.idle.onStateChanged.addListener((s) => {
  idleState = s;
  reportSite(false);
});
// Wakes Chromium's worker when the browser starts, so it connects before any tab event.
api.runtime.onStartup.addListener(() => {});

// ---- Warnings --------------------------------------------------------------------------------

// The activity a badge was set for and when it comes off by itself.
let warned = null;

function warn(w) {
  const text = typeof w.text === "string" && w.text ? w.text : msg("warningFallback");
  const left = typeof w.left === "number" && w.left > 0 ? w.left : null;
  Promise.all([
    badge.setBadgeText({ text: left !== null ? Math.max(1, Math.ceil(left / 60)) + "m" : "!" }),
    badge.setBadgeBackgroundColor({ color: "#b3261e" }),
    badge.setTitle({ title: text }),
  ]).catch((e) => console.error("blockd: the badge failed", e));
  clearTimeout(warned && warned.timer);
  warned = { activity: w.activity, timer: left !== null ? setTimeout(clearWarning, left * 1000) : null };
  api.notifications.create("blockd-warning-" + (w.activity || ""), {
    type: "basic", iconUrl: api.runtime.getURL("icon-128.png"), title: msg("extName"), message: text,
  }).catch((e) => console.error("blockd: the notification failed", e));
}

function clearWarning() {
  if (!warned) return;
  clearTimeout(warned.timer);
  warned = null;
  Promise.all([badge.setBadgeText({ text: "" }), badge.setTitle({ title: msg("extName") })])
    .catch((e) => console.error("blockd: the badge failed", e));
}

// A warning's badge goes when its limit is used up (the block page says the rest) or no
// longer in the state.
function warnings() {
  if (!warned) return;
  const limit = (Array.isArray(state.limits) ? state.limits : []).find((l) => l && l.activity === warned.activity);
  if (!limit || limit.reached) clearWarning();
}

// ---- Start ------------------------------------------------------------------------------------

async function start() {
  try {
    const w = await api.windows.getLastFocused({});
    if (w && w.focused) focusedWindow = w.id;
  } catch (e) {
    focusedWindow = api.windows.WINDOW_ID_NONE;
  }
  try {
    idleState = await api.idle.queryState(IDLE_SECONDS);
  } catch (e) {
    idleState = "active";
  }
  reportSite(false);
}

restore();
connect();
start();
