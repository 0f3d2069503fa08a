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
A path rule on an open site (social.test/shorts blocks /shorts, not /) is browsers.py's.
--bench N: N timed runs of (a) and (b) with Chromium only, fetching every 20 ms as felt.py's
python client does, times from just before blockc ran; for bench/run (a JSON line).
Without root: skipped, unless BLOCKD_PRIVILEGED_TESTS=1, then failed."""
import json, os, socket, sys, threading, time
from http.server import BaseHTTPRequestHandler
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Tally  # noqa: E402
from rig import Rig, enter, stop, wait_for  # noqa: E402

t = Tally("live")
bindir = os.path.abspath(sys.argv[1])
bench_runs = int(sys.argv[sys.argv.index("--bench") + 1]) if "--bench" in sys.argv else 0
enter(t, ["chromium", "firefox-esr", "dnsmasq", "ip", "nft", "unshare"], "needs root for a private mount and network namespace",
      timeout=100 + 10 * bench_runs)
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
        deadline = time.monotonic() + 30
        while True:
            try:
                self.sock = socket.create_connection(("127.0.0.1", port), timeout=20)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
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

    def close(self):
        self.sock.close()


def doh_of_running(what):
    m = Marionette()
    try:
        return m.doh()
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
        live(rig)
t.done()
