// Which entries of blockd's last state block a URL (B4), and the same decision as
// declarativeNetRequest rules for Chromium. Pure: no browser API and no clock read (the caller
// passes `now`), so the same file runs in the extension (a Chromium service worker imports it,
// Firefox's background page and the block page load it before their own scripts) and in node,
// where ExtensionMatchTests.swift checks it table by table.
//
// An entry of the state is one blocked selection as the host sends it (docs/BROWSER.md):
//   domains     each covers the host and every name under it (W1);
//   exceptions  hosts under those domains that stay open, and the names under them;
//   paths       URL prefixes "host/path?query": the host or a name under it, then a path and
//               query starting with the rest (E8);
//   allowOnly   present only for an allow-only window (W2): every http(s) URL is blocked but
//               those of these sites and the names under them. An item with a path stands for
//               its whole site here: Chromium's own URLAllowlist (E7) narrows it to the prefix.
//   until       ISO 8601, or null (no end in sight): an entry whose end has passed blocks
//               nothing, even when no newer state came (the daemon may be unreachable).
// Only http and https URLs are ever blocked: the extension's own pages, the browser's pages
// (chrome://, about:) and files never are.
"use strict";
(function (root) {
  const schemes = ["http:", "https:"];

  // "WWW.Example.com." -> "www.example.com"; "[::1]" -> "::1".
  function normalHost(host) {
    let h = String(host || "").toLowerCase();
    if (h.startsWith("[") && h.endsWith("]")) h = h.slice(1, -1);
    while (h.endsWith(".")) h = h.slice(0, -1);
    return h;
  }

  // W1: a domain covers itself and every name under it, never a name that only ends alike.
  function covers(domain, host) {
    const d = normalHost(domain);
    return d !== "" && (host === d || host.endsWith("." + d));
  }

  // The parts of a URL the rules look at, or null for anything but http(s).
  function parse(url) {
    let u;
    try {
      u = new URL(url);
    } catch (e) {
      return null;
    }
    if (!schemes.includes(u.protocol)) return null;
    return { host: normalHost(u.hostname), rest: u.pathname + u.search };
  }

  // "youtube.com/shorts" -> { host: "youtube.com", path: "/shorts" }; null without a path.
  function splitPrefix(prefix) {
    const text = String(prefix || "").replace(/^https?:\/\//i, "");
    const slash = text.search(/[/?]/);
    if (slash <= 0) return null;
    const path = text.slice(slash);
    return { host: normalHost(text.slice(0, slash)), path: path.startsWith("/") ? path : "/" + path };
  }

  // The site an allowOnly item stands for ("school.com/math" -> "school.com").
  function siteOf(item) {
    const p = splitPrefix(item);
    return p ? p.host : normalHost(item);
  }

  function list(value) {
    return Array.isArray(value) ? value.filter((x) => typeof x === "string" && x !== "") : [];
  }

  // Whether the entry still holds at `now` (milliseconds since the epoch).
  function live(entry, now) {
    if (!entry || typeof entry !== "object") return false;
    if (entry.until === null || entry.until === undefined) return true;
    const end = Date.parse(entry.until);
    return Number.isNaN(end) || end > now;
  }

  // Whether one entry blocks the parsed URL `u`.
  function entryBlocks(entry, u) {
    if (Array.isArray(entry.allowOnly)) {
      return !entry.allowOnly.some((item) => typeof item === "string" && covers(siteOf(item), u.host));
    }
    if (list(entry.exceptions).some((e) => covers(e, u.host))) return false;
    if (list(entry.domains).some((d) => covers(d, u.host))) return true;
    return list(entry.paths).some((p) => {
      const prefix = splitPrefix(p);
      return prefix !== null && covers(prefix.host, u.host) && u.rest.startsWith(prefix.path);
    });
  }

  // The state's entries that block `url` at `now`, in the state's order (empty: not blocked).
  function blockedBy(state, url, now) {
    const u = parse(url);
    if (!u || !state || !Array.isArray(state.blocked)) return [];
    return state.blocked.filter((entry) => live(entry, now) && entryBlocks(entry, u));
  }

  // The earliest `until` after `now` among the state's entries (milliseconds), or null: when
  // the rules must be worked out again even if no new state comes.
  function nextEnd(state, now) {
    let next = null;
    for (const entry of (state && Array.isArray(state.blocked) ? state.blocked : [])) {
      if (!entry || entry.until === null || entry.until === undefined) continue;
      const end = Date.parse(entry.until);
      if (!Number.isNaN(end) && end > now && (next === null || end < next)) next = end;
    }
    return next;
  }

  function escapeRegex(text) {
    return text.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");
  }

  // Chromium (MV3): the same decision as declarativeNetRequest rules, each redirecting a
  // top-level navigation to `blockPage` + "#" + the URL it was going to (regexSubstitution's
  // \0 is the whole URL). requestDomains covers a domain and the names under it as `covers`
  // does, excludedRequestDomains the exceptions; a path rule's regex starts after the
  // authority. Case-sensitive, as `startsWith` is. Rule ids count from 1.
  function dnrRules(state, blockPage, now) {
    const rules = [];
    const anyURL = "^https?://.*";
    const redirect = { type: "redirect", redirect: { regexSubstitution: blockPage + "#\\0" } };
    const add = (condition) => rules.push({
      id: rules.length + 1, priority: 1, action: redirect,
      condition: Object.assign({ resourceTypes: ["main_frame"], isUrlFilterCaseSensitive: true }, condition),
    });
    const entries = state && Array.isArray(state.blocked) ? state.blocked : [];
    for (const entry of entries) {
      if (!live(entry, now)) continue;
      if (Array.isArray(entry.allowOnly)) {
        const allowed = [...new Set(entry.allowOnly.filter((x) => typeof x === "string").map(siteOf).filter((x) => x))];
        add(allowed.length ? { regexFilter: anyURL, excludedRequestDomains: allowed } : { regexFilter: anyURL });
        continue;
      }
      const except = [...new Set(list(entry.exceptions).map(normalHost).filter((x) => x))];
      const unless = except.length ? { excludedRequestDomains: except } : {};
      const domains = [...new Set(list(entry.domains).map(normalHost).filter((x) => x))];
      if (domains.length) add(Object.assign({ regexFilter: anyURL, requestDomains: domains }, unless));
      for (const p of list(entry.paths)) {
        const prefix = splitPrefix(p);
        if (!prefix || !prefix.host) continue;
        add(Object.assign({ regexFilter: "^https?://[^/?#]*" + escapeRegex(prefix.path) + ".*", requestDomains: [prefix.host] }, unless));
      }
    }
    return rules;
  }

  // The host a tab shows, for B2's site report: null for anything but http(s).
  function siteOfURL(url) {
    const u = parse(url);
    return u && u.host ? u.host : null;
  }

  const api = { normalHost, covers, parse, blockedBy, nextEnd, dnrRules, siteOfURL };
  if (typeof module === "object" && module.exports) module.exports = api;
  root.BlockMatch = api;
})(typeof globalThis === "object" ? globalThis : this);
