"""E7/E8/W2 with real browsers: blockd's managed policies as headless Chromium and Firefox ESR read
them, on this machine's browser packages, inside a private mount + network namespace.

    python3 torture/browsers.py BIN_DIR

The namespace (torture/rig.py: unshare -m -n -p --propagation private) has loopback only with
127.0.0.2 and 127.0.0.3 added, an overlay over /etc (policy writes and atomic renames work as on
a real system and vanish afterwards), dnsmasq answering *.test with 127.0.0.2 (games.school.test
with 127.0.0.3) and /etc/resolv.conf pointing at it, and HTTP servers on both serving / and
/shorts/x. blockd runs with its real default policy paths in there, a scratch --hosts-file and
--user-tables-dir. Nothing outside changes. W2: during `blockc start only:school.test` Chromium
loads school.test and the names under it and refuses social.test with
ERR_BLOCKED_BY_ADMINISTRATOR, a site blocked inside the window (games.school.test) stays
refused, and after `blockc stop` both load again.

Without root this prints a skipped RESULT; with BLOCKD_PRIVILEGED_TESTS=1 anything missing is
a failure. Bounded: each browser run has a timeout, the whole suite well under two minutes."""
import http.server, json, os, shutil, subprocess, sys, time
from lib import Tally, read_json, sh, wait_for
from rig import Rig, enter

t = Tally("browsers")
bindir = os.path.abspath(sys.argv[1])
ADMIN_FIREFOX = {"policies": {"DisableAppUpdate": True, "Homepage": {"URL": "http://intranet.test/", "Locked": True}}}
CHROMIUM_POLICY = "/etc/chromium/policies/managed/blockd.json"
FIREFOX_POLICY = "/etc/firefox/policies/policies.json"
enter(t, ["chromium", "firefox-esr", "dnsmasq", "ip", "unshare"], "needs root for a private mount and network namespace")


class Pages(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = {"/": b"<html><body>HOME-OK</body></html>", "/shorts/x": b"<html><body>SHORTS-OK</body></html>"}.get(self.path)
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(body or b"missing")

    def log_message(self, *args):
        pass


def admin_firefox_policy():
    # Chromium counts as installed here by its package (/etc/chromium), Firefox by its file.
    os.makedirs("/etc/firefox/policies", exist_ok=True)
    with open(FIREFOX_POLICY, "w") as f:
        json.dump(ADMIN_FIREFOX, f)


def chromium(rig, url, n=[0]):
    """The DOM a fresh headless Chromium shows for url (it reads the managed policy at start)."""
    n[0] += 1
    argv = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            f"--user-data-dir={rig.work}/chromium-{n[0]}", "--dump-dom", url]
    try:
        p = sh(*argv, check=False, timeout=40, env=rig.browser_env())
        return p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return "TIMEOUT"


def refused(page):
    return "ERR_BLOCKED_BY_ADMINISTRATOR" in page and "HOME-OK" not in page


def allow_only(rig, d):
    """W2: everything but the allowed site, as Chromium enforces URLBlocklist ["*"] + URLAllowlist."""
    start = d.blockc("start", "--minutes", "5", "only:school.test", check=False)
    t.check(start.rc == 0, f"blockc start only:school.test: {start.stdout}{start.stderr}")
    policy = read_json(CHROMIUM_POLICY) or {}
    t.check(policy.get("URLBlocklist") == ["*"] and policy.get("URLAllowlist") == ["chrome://*", "school.test"],
            f"the Chromium policy blocks * and allows school.test and Chromium's own pages: {policy}")
    t.check("HOME-OK" in chromium(rig, "http://school.test/"), "during the window Chromium loads the allowed site")
    t.check("HOME-OK" in chromium(rig, "http://www.school.test/"), "and a name under it")
    page = chromium(rig, "http://social.test/")
    t.check(refused(page), f"another site shows ERR_BLOCKED_BY_ADMINISTRATOR: {page[-300:]}")

    inside = d.blockc("start", "--minutes", "5", "games.school.test", check=False)
    t.check(inside.rc == 0, f"blockc start games.school.test: {inside.stdout}{inside.stderr}")
    page = chromium(rig, "http://games.school.test/")
    t.check(refused(page), f"a site blocked inside the window stays refused (Chromium's longer host wins): {page[-300:]}")
    t.check("HOME-OK" in chromium(rig, "http://school.test/"), "the allowed site beside it still loads")
    d.blockc("stop", "games.school.test")

    stop = d.blockc("stop", "only_school.test", check=False)
    t.check(stop.rc == 0, f"blockc stop only_school.test: {stop.stdout}{stop.stderr}")
    t.check(wait_for(lambda: not os.path.exists(CHROMIUM_POLICY), step=0.1), "the window's end removes the Chromium policy")
    t.check("HOME-OK" in chromium(rig, "http://social.test/"), "after the window the other site loads again")
    t.check("HOME-OK" in chromium(rig, "http://school.test/"), "and the allowed one still does")


def checks(rig):
    t.check("SHORTS-OK" in chromium(rig, "http://social.test/shorts/x"), "the rig serves /shorts/x to Chromium before any block")
    tmp = rig.work
    shutil.copyfile("/etc/hosts", f"{tmp}/hosts")
    d = rig.daemon("--hosts-file", f"{tmp}/hosts", "--user-tables-dir", f"{tmp}/tables")
    d.start()
    try:
        t.check(wait_for(lambda: d.blockc("status", check=False).rc == 0, step=0.1), "blockd answers")
        firefox = read_json(FIREFOX_POLICY) or {}
        t.check(firefox.get("policies", {}).get("DNSOverHTTPS") == {"Enabled": False, "Locked": True},
                f"blockd's start locks DoH off in Firefox's policies.json: {firefox}")
        t.check(all(firefox.get("policies", {}).get(k) == v for k, v in ADMIN_FIREFOX["policies"].items()),
                "the administrator's Firefox policies are kept")
        ff = sh("firefox-esr", "--headless", "--no-remote", "--profile", rig.mkdir("ff"), "--screenshot",
                f"{tmp}/shot.png", "http://social.test/", check=False, timeout=60, env=rig.browser_env())
        t.check(ff.rc == 0 and os.path.exists(f"{tmp}/shot.png") and "policy" not in ff.stderr.lower(),
                f"Firefox ESR starts headless with the merged policies.json (exit {ff.rc}): {ff.stderr[-300:]}")

        start = d.blockc("start", "--minutes", "5", "social.test/shorts", check=False)
        t.check(start.rc == 0, f"blockc start social.test/shorts: {start.stdout}{start.stderr}")
        policy = read_json(CHROMIUM_POLICY) or {}
        t.check("social.test/shorts" in policy.get("URLBlocklist", []) and policy.get("DnsOverHttpsMode") == "off",
                f"the Chromium policy lists the prefix with DoH off: {policy}")
        with open(f"{tmp}/hosts", "rb") as f:
            t.check(b"social.test" not in f.read(), "a path-only block leaves the hosts file alone")
        began = time.monotonic()
        blocked = chromium(rig, "http://social.test/shorts/x")
        t.figures["chromiumNavigationSeconds"] = round(time.monotonic() - began, 1)
        t.check("ERR_BLOCKED_BY_ADMINISTRATOR" in blocked and "SHORTS-OK" not in blocked,
                f"Chromium refuses /shorts/x with ERR_BLOCKED_BY_ADMINISTRATOR: {blocked[-300:]}")
        t.check("HOME-OK" in chromium(rig, "http://social.test/"), "Chromium still loads / of the same site")

        stop = d.blockc("stop", "social.test_shorts", check=False)
        t.check(stop.rc == 0, f"blockc stop: {stop.stdout}{stop.stderr}")
        t.check(wait_for(lambda: not os.path.exists(CHROMIUM_POLICY), step=0.1), "the unlock removes the Chromium policy")
        t.check("SHORTS-OK" in chromium(rig, "http://social.test/shorts/x"), "after the unlock Chromium loads /shorts/x again")
        allow_only(rig, d)
    finally:
        d.stop()
    rel = sh(*d.args, "--release", check=False, timeout=20)
    t.check(rel.rc == 0 and read_json(FIREFOX_POLICY) == ADMIN_FIREFOX,
            f"--release gives Firefox's file back as the administrator wrote it: {read_json(FIREFOX_POLICY)} {rel.stderr}")


# games.school.test has an address of its own: blocking it refuses its address for ConnectGrace=
# (E5), which must not be school.test's.
with Rig(t, bindir, "bd-browsers.", ["127.0.0.2", "127.0.0.3"], {"test": "127.0.0.2", "games.school.test": "127.0.0.3"}) as rig:
    rig.serve("127.0.0.2", Pages)
    rig.serve("127.0.0.3", Pages)
    admin_firefox_policy()
    checks(rig)
t.done()
