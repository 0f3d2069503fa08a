"""E5 and E7 with real browsers holding a page open, inside the namespace of torture/rig.py
(root only; loopback with social.test -> 127.0.0.2 from dnsmasq, an overlay over /etc).

    python3 torture/browsers_live.py BIN_DIR [--bench N]

http://social.test/ is a page whose JavaScript fetches /ping every 250 ms (keep-alive, same
origin); the server notes when each /ping arrives and from which browser. blockd manages the
overlay's /etc/hosts and the real policy paths, with the default ConnectGrace= (2 minutes).
  (a) headless Chromium (fresh --user-data-dir) and Firefox ESR (fresh profile, Marionette)
      have the page open; after `blockc start social` no /ping from either reaches the server
      later than 1 s after blockc returned, and both pages stay open;
  (b) after `blockc stop social` the open Chromium page's fetches reach the server again
      within 3 s (Firefox's figure is reported, not checked);
  (c) Firefox DoH: read through Marionette (chrome context): network.trr.mode and whether it
      is locked, and the policies Firefox applied. Before blockd ever ran: not locked (so the
      check can fail). A Firefox already running when blockd writes policies.json: still not
      locked (it reads the file at start). The same profile restarted: locked at 5 (off) with
      DNSOverHTTPS {Enabled: false, Locked: true} among its active policies.
  (d) W3, private windows and guest profiles, tried as a user would: before any block, during
      `blockc start social` and after `blockc stop social`. Chromium (driven over
      --remote-debugging-pipe): a fresh start with --incognito or --guest opens its page outside
      the normal profile (and --guest makes a "Guest Profile"), and Ctrl+Shift+N in an open
      window opens an Incognito window; during the block the first two land in the normal
      profile and the shortcut opens nothing, in a fresh Chromium and, once it reloaded its
      policies, in one open since before the block. Firefox (Marionette): a new private window
      opens before and after, not during in a Firefox started during the block, while one
      started before the block still opens them (it read policies.json at its start).
A path rule on an open site (social.test/shorts blocks /shorts, not /) is browsers.py's.
--bench N: N timed runs of (a) and (b) with Chromium only, fetching every 20 ms as felt.py's
python client does, times from just before blockc ran; for bench/run (a JSON line).
Without root: skipped, unless BLOCKD_PRIVILEGED_TESTS=1, then failed."""
import fcntl, json, os, select, socket, subprocess, sys, time
from http.server import BaseHTTPRequestHandler
from lib import Tally, stop, wait_for
from rig import Rig, enter

t = Tally("live")
bindir = os.path.abspath(sys.argv[1])
bench_runs = int(sys.argv[sys.argv.index("--bench") + 1]) if "--bench" in sys.argv else 0
enter(t, ["chromium", "firefox-esr", "dnsmasq", "ip", "nft", "unshare"], "needs root for a private mount and network namespace",
      timeout=220 + 10 * bench_runs)
PAGE = b"""<html><body>LIVE<script>
const every = Number(new URLSearchParams(location.search).get("every") || 250);
setInterval(() => fetch("/ping", {cache: "no-store"}).catch(() => {}), every);
</script></body></html>"""
pings = []  # (monotonic time, "chromium" or "firefox"), appended by the server's threads


class Site(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as a browser tab holds it

    def do_GET(self):
        if self.path.startswith("/ping"):
            pings.append((time.monotonic(), "firefox" if "Firefox" in self.headers.get("User-Agent", "") else "chromium"))
        body = b"pong" if self.path.startswith("/ping") else PAGE
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def last_ping(who):
    times = [at for at, w in list(pings) if w == who]
    return times[-1] if times else None


def pinging(who, seconds=30):
    """Whether the page's fetches arrive: 3 /pings from `who` after now."""
    since = time.monotonic()
    return wait_for(lambda: sum(1 for at, w in list(pings) if w == who and at > since) >= 3, seconds, 0.1)


def chromium(rig, url="http://social.test/", n=[0]):
    n[0] += 1
    return rig.spawn(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                      f"--user-data-dir={rig.work}/chromium-{n[0]}", url], f"chromium-{n[0]}.log", env=rig.browser_env())


def firefox(rig, log):
    return rig.spawn(["firefox-esr", "--headless", "--no-remote", "--profile", rig.mkdir("ff"), "--marionette",
                      "--remote-allow-system-access", "http://social.test/"], log, env=rig.browser_env())


class Marionette:
    """Just enough of Firefox's Marionette protocol (`len:json` frames) to run chrome-context
    JavaScript: what about:policies shows, read without a screen."""

    def __init__(self, port=2828):
        def connected():
            try:
                return socket.create_connection(("127.0.0.1", port), timeout=20)
            except OSError:
                return None
        self.sock = wait_for(connected, 30, 0.2, what=f"Firefox's Marionette accepting a connection on port {port}")
        self.id = 0
        self.read()
        self.call("WebDriver:NewSession", {"capabilities": {}})
        self.call("Marionette:SetContext", {"value": "chrome"})

    def read(self):
        head = b""
        while not head.endswith(b":"):
            head += self.sock.recv(1) or b"!"
            if head.endswith(b"!"):
                raise ConnectionError("Marionette closed the connection")
        size, data = int(head[:-1]), b""
        while len(data) < size:
            data += self.sock.recv(size - len(data)) or b"!"
        return json.loads(data)

    def call(self, name, params):
        self.id += 1
        frame = json.dumps([0, self.id, name, params]).encode()
        self.sock.sendall(str(len(frame)).encode() + b":" + frame)
        _, _, error, result = self.read()
        if error:
            raise RuntimeError(f"Marionette {name}: {error}")
        return result.get("value") if isinstance(result, dict) else result

    def doh(self):
        """(network.trr.mode, locked, the DNSOverHTTPS policy Firefox applied)."""
        return self.call("WebDriver:ExecuteScript", {"args": [], "script": """
            const p = Services.policies.getActivePolicies() || {};
            return [Services.prefs.getIntPref("network.trr.mode", 0), Services.prefs.prefIsLocked("network.trr.mode"),
                    p.DNSOverHTTPS || null];"""})

    def private_window(self):
        """W3: (whether asking for a new private window gave one, whether policies allow it). With
        private browsing disabled Firefox still opens the window, as an ordinary one: so this
        waits for the new window to have loaded (15 s at most, within the connection's 20 s),
        whichever it is, and then asks whether it is private."""
        return self.call("WebDriver:ExecuteScript", {"args": [], "script": """
            const { PrivateBrowsingUtils } = ChromeUtils.importESModule("resource://gre/modules/PrivateBrowsingUtils.sys.mjs");
            const windows = () => [...Services.wm.getEnumerator("navigator:browser")];
            const before = new Set(windows());
            Services.wm.getMostRecentWindow("navigator:browser").OpenBrowserWindow({private: true});
            const deadline = Date.now() + 15000;
            return new Promise(done => {
                const look = () => {
                    const opened = windows().filter(w => !before.has(w) && w.document.readyState == "complete");
                    if (opened.length || Date.now() > deadline) {
                        done([opened.some(w => PrivateBrowsingUtils.isWindowPrivate(w)), Services.policies.isAllowed("privatebrowsing")]);
                    } else {
                        setTimeout(look, 100);
                    }
                };
                look();
            });"""})

    def close(self):
        self.sock.close()


class Chromium:
    """Headless Chromium driven over --remote-debugging-pipe: CDP's JSON messages, each ended by a
    NUL, on the browser's fds 3 (in) and 4 (out), so no websocket client is needed."""

    def __init__(self, rig, *flags, n=[0]):
        n[0] += 1
        self.profile = f"{rig.work}/cdp-{n[0]}"
        to_browser, self.out = os.pipe()
        self.inp, from_browser = os.pipe()
        # Copied to 10 and up (bash, unlike dash, redirects those), so that `3<&` cannot overwrite the other end first.
        theirs = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_browser, from_browser)]
        for fd in (to_browser, from_browser):
            os.close(fd)
        argv = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--user-data-dir={self.profile}",
                "--remote-debugging-pipe", *flags, "data:text/html,W3"]
        self.proc = subprocess.Popen(["bash", "-c", f'exec "$@" 3<&{theirs[0]} 4>&{theirs[1]}', "bash", *argv], pass_fds=theirs,
                                     stdout=open(f"{self.profile}.log", "wb"), stderr=subprocess.STDOUT,
                                     start_new_session=True, env=rig.browser_env())
        rig.procs.append(self.proc)
        for fd in theirs:
            os.close(fd)
        self.id, self.buf = 0, b""
        wait_for(lambda: self.page() is not None, step=0.2, what=f"a page of Chromium {' '.join(flags)}")

    def call(self, method, params=None, session=None):
        self.id += 1
        message = {"id": self.id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.out, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + 20
        while True:
            while b"\0" not in self.buf:
                if not select.select([self.inp], [], [], max(0, deadline - time.monotonic()))[0]:
                    raise TimeoutError(f"CDP {method}: no answer")
                self.buf += os.read(self.inp, 65536) or b"!\0"
            line, self.buf = self.buf.split(b"\0", 1)
            reply = json.loads(line) if line != b"!" else {"id": self.id, "error": "Chromium closed the pipe"}
            if reply.get("id") == self.id:  # events are not needed here
                if "error" in reply:
                    raise RuntimeError(f"CDP {method}: {reply['error']}")
                return reply.get("result", {})

    def pages(self):
        """(the normal profile's context, [(url, context, target id) of every page])."""
        default = self.call("Target.getBrowserContexts")["defaultBrowserContextId"]
        return default, [(p["url"], p.get("browserContextId"), p["targetId"])
                         for p in self.call("Target.getTargets")["targetInfos"] if p["type"] == "page"]

    def page(self):
        return next((p for p in self.pages()[1] if p[0].startswith("data:text/html")), None)

    def outside_profile(self):
        """Whether the page Chromium started with is outside the normal profile (Incognito, guest)."""
        default, _ = self.pages()
        return self.page()[1] != default

    def private_pages(self):
        default, pages = self.pages()
        return sum(1 for _, context, _ in pages if context != default)

    def shortcut_opens(self, seconds=10):
        """Ctrl+Shift+N in the open window, as a user presses it: whether an Incognito window
        opened within `seconds` (a loaded machine may take a few; nothing else says the key
        was handled, so "none opened" costs the whole wait)."""
        before = self.private_pages()
        session = self.call("Target.attachToTarget", {"targetId": self.page()[2], "flatten": True})["sessionId"]
        for kind in ("rawKeyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", {"type": kind, "modifiers": 2 | 8, "key": "N", "code": "KeyN",
                                                 "windowsVirtualKeyCode": 78, "nativeVirtualKeyCode": 78}, session)
        self.call("Target.detachFromTarget", {"sessionId": session})
        return wait_for(lambda: self.private_pages() > before, seconds, 0.1)

    def quit(self):
        stop(self.proc)
        os.close(self.out)
        os.close(self.inp)


def doh_of_running(what, probe="doh"):
    m = Marionette()
    try:
        return getattr(m, probe)()
    finally:
        m.close()


def cut(d, browsers, hold=2.5, since_call=False):
    """`blockc start social` with the pages open: seconds from blockc returning (or, with
    since_call, from just before it ran) to each browser's last /ping during a `hold`-second
    block (negative: none after that moment)."""
    began = time.monotonic()
    d.blockc("start", "--for", "10m", "social")
    returned = time.monotonic()
    time.sleep(hold)
    zero = began if since_call else returned
    return {who: round(last_ping(who) - zero, 3) for who in browsers}, returned - began


def resume(d, browsers, seconds=5):
    """`blockc stop social`: seconds from blockc returning to each browser's next /ping (None:
    none within `seconds`)."""
    d.blockc("stop", "social")
    returned = time.monotonic()
    wait_for(lambda: all((last_ping(who) or 0) > returned for who in browsers), seconds, 0.02)
    return {who: round(last_ping(who) - returned, 3) if last_ping(who) > returned else None for who in browsers}


def live(rig):
    fx = firefox(rig, "firefox-1.log")
    t.check(pinging("firefox"), "Firefox ESR has the page open and its fetches arrive")
    mode, locked, _ = doh_of_running("firefox before blockd")
    t.check(not locked, f"before blockd ever ran, network.trr.mode is not locked (mode {mode}): the check below can fail")
    d = rig.daemon()
    d.start()
    mode, locked, _ = doh_of_running("firefox running when blockd wrote its policy")
    t.check(not locked, f"a Firefox already running keeps its DoH setting until restarted (mode {mode}, locked {locked})")
    t.figures["firefoxRunningLocked"] = locked
    ch = chromium(rig)
    t.check(pinging("chromium"), "headless Chromium has the page open and its fetches arrive")
    last, _ = cut(d, ["chromium", "firefox"])
    t.figures["lastPingAfterStart"] = last
    for who, p in (("chromium", ch), ("firefox", fx)):
        t.check(last[who] <= 1.0, f"(a) {who}: the open page's last fetch reached the server {last[who]} s after blockc start (want <= 1 s)")
        t.check(p.poll() is None, f"(a) {who}: the page is still open (the browser did not exit)")
    back = resume(d, ["chromium", "firefox"])
    t.figures["firstPingAfterStop"] = back
    t.check(back["chromium"] is not None and back["chromium"] <= 3.0,
            f"(b) chromium: after blockc stop the open page's fetches reached the server again after {back['chromium']} s (want <= 3 s)")
    stop(fx)
    fx = firefox(rig, "firefox-2.log")
    mode, locked, policy = doh_of_running("firefox restarted")
    t.check(mode == 5 and locked and policy == {"Enabled": False, "Locked": True},
            f"(c) Firefox restarted with blockd's policies.json: network.trr.mode {mode} (want 5, off), locked {locked}, policy {policy}")
    t.figures["firefoxRestarted"] = {"trrMode": mode, "locked": locked}
    stop(fx)
    return d


def fresh_chromium(rig, when, closed):
    """(d) Chromium started now with --incognito and with --guest."""
    for flag, what in (("--incognito", "an Incognito window"), ("--guest", "a guest profile")):
        c = Chromium(rig, flag)
        outside = c.outside_profile()
        guest = os.path.isdir(f"{c.profile}/Guest Profile")
        c.quit()
        if flag == "--guest":
            outside = outside or guest
        t.check(outside != closed, f"(d) {when}: Chromium started with {flag} {'does not open' if closed else 'opens'} {what} "
                f"(page outside the normal profile: {outside}, Guest Profile made: {guest})")


def private_windows(rig, d):
    """(d) W3 before, during and after `blockc start social`."""
    running = Chromium(rig)  # open since before the block
    t.check(running.shortcut_opens(), "(d) before any block, Ctrl+Shift+N in Chromium opens an Incognito window")
    fresh_chromium(rig, "before any block", False)
    fx = firefox(rig, "firefox-w3-1.log")
    opened, allowed = doh_of_running("firefox before the block", "private_window")
    t.check(opened and allowed, f"(d) before any block, Firefox opens a private window (opened {opened}, allowed {allowed})")

    d.blockc("start", "--for", "10m", "social")
    began = time.monotonic()
    notes = d.status()["enforcement"]["browserPolicies"]
    t.check(notes.get("closed") == ["private windows", "guest profiles", "new profiles"] and notes.get("firefoxPrivateClosed") is True,
            f"(d) status says what the block closes: {notes}")
    t.check("Closed while blocked: private windows" in d.blockc("status").stdout, "(d) blockc status shows the Closed line")
    t.check(wait_for(lambda: not running.shortcut_opens(), 60, 0), "(d) during the block, Ctrl+Shift+N in a Chromium open since before it stops opening Incognito windows")
    t.figures["chromiumRunningClosedAfter"] = round(time.monotonic() - began, 1)
    t.figures["chromiumIncognitoPagesStillOpen"] = running.private_pages()  # opened before the policy reload
    fresh_chromium(rig, "during the block", True)
    opened, _ = doh_of_running("firefox running when the block began", "private_window")
    t.check(opened, "(d) a Firefox running when the block began still opens private windows (it reads policies.json at its start), as status says")
    stop(fx)
    fx = firefox(rig, "firefox-w3-2.log")
    opened, allowed = doh_of_running("firefox started during the block", "private_window")
    t.check(not opened and not allowed, f"(d) a Firefox started during the block opens no private window (opened {opened}, allowed {allowed})")

    d.blockc("stop", "social")
    ended = time.monotonic()
    t.check(d.status()["enforcement"]["browserPolicies"].get("closed") == [], "(d) after the block status says nothing is closed")
    t.check(wait_for(lambda: running.shortcut_opens(), 60, 0), "(d) after the block, Ctrl+Shift+N in the same open Chromium opens Incognito windows again")
    t.figures["chromiumRunningOpenAfter"] = round(time.monotonic() - ended, 1)
    fresh_chromium(rig, "after the block", False)
    stop(fx)
    fx = firefox(rig, "firefox-w3-3.log")
    opened, allowed = doh_of_running("firefox started after the block", "private_window")
    t.check(opened and allowed, f"(d) after the block, a Firefox started again opens private windows (opened {opened}, allowed {allowed})")
    stop(fx)
    running.quit()


def bench(rig, runs):
    d = rig.daemon()
    d.start()
    chromium(rig, "http://social.test/?every=20")  # the python client's pace, for a finer figure
    t.check(pinging("chromium"), "headless Chromium has the page open and its fetches arrive")
    cuts, backs, alone = [], [], []
    for _ in range(runs):
        last, took = cut(d, ["chromium"], 1.5, since_call=True)
        cuts.append(last["chromium"])
        alone.append(took)
        backs.append(resume(d, ["chromium"])["chromium"])
        pinging("chromium", 5)

    def pct(xs, q):
        xs = sorted(x for x in xs if x is not None)
        return round(1000 * xs[min(len(xs) - 1, int(q * len(xs)))], 1) if xs else None
    t.check(all(x is not None for x in backs), f"every unlock let the page's fetches through again: {backs}")
    print("JSON " + json.dumps({"runs": runs, "everyMs": 20, "lastPingP50Ms": pct(cuts, 0.5), "lastPingP99Ms": pct(cuts, 0.99),
                                "blockcStartP50Ms": pct(alone, 0.5), "blockcStartP99Ms": pct(alone, 0.99),
                                "resumeP50Ms": pct(backs, 0.5), "resumeP99Ms": pct(backs, 0.99)}), flush=True)


with Rig(t, bindir, "bd-live.", ["127.0.0.2"], {"social.test": "127.0.0.2"}) as rig:
    rig.configure("", {"social": "[Selection]\nName=social\nDomains=social.test\n"})
    rig.serve("127.0.0.2", Site)
    os.makedirs("/etc/firefox/policies", exist_ok=True)  # Firefox counts as installed by its binary; the dir is for the file
    if bench_runs:
        bench(rig, bench_runs)
    else:
        private_windows(rig, live(rig))
t.done()
