"""E7/E8 with real browsers: blockd's managed policies as headless Chromium and Firefox ESR read
them, on this machine's browser packages, inside a private mount + network namespace.

    python3 torture/browsers.py BIN_DIR

The namespace (made here with unshare -m -n --propagation private) has loopback only with
127.0.0.2 added, an overlay over /etc (policy writes and atomic renames work as on a real
system and vanish afterwards), dnsmasq answering *.test with 127.0.0.2 and /etc/resolv.conf
pointing at it, and an HTTP server on 127.0.0.2:80 serving / and /shorts/x. blockd runs with
its real default policy paths in there and a scratch --hosts-file. Nothing outside changes.

Without root this prints a skipped RESULT; with BLOCKD_PRIVILEGED_TESTS=1 anything missing is
a failure. Bounded: each browser run has a timeout, the whole suite well under two minutes."""
import http.server, json, os, shutil, signal, subprocess, sys, tempfile, threading, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Tally  # noqa: E402

t = Tally("browsers")
bindir = os.path.abspath(sys.argv[1])
privileged = os.environ.get("BLOCKD_PRIVILEGED_TESTS") == "1"
ADMIN_FIREFOX = {"policies": {"DisableAppUpdate": True, "Homepage": {"URL": "http://intranet.test/", "Locked": True}}}
CHROMIUM_POLICY = "/etc/chromium/policies/managed/blockd.json"
FIREFOX_POLICY = "/etc/firefox/policies/policies.json"


def unavailable(why):
    if privileged:
        t.check(False, f"cannot run the real-browser checks: {why}")
    else:
        print(f"browsers: skipped ({why}; set BLOCKD_PRIVILEGED_TESTS=1 as root to run them)")
        t.figures["skipped"] = why
    t.done()


if os.environ.get("BROWSERS_INSIDE") != "1":
    if os.geteuid() != 0:
        unavailable("needs root for a private mount and network namespace")
    missing = [c for c in ("chromium", "firefox-esr", "dnsmasq", "ip", "unshare") if not shutil.which(c)
               and not os.path.exists(f"/usr/sbin/{c}")]
    if missing:
        unavailable(f"{', '.join(missing)} not installed (scripts/deps check)")
    env = dict(os.environ, BROWSERS_INSIDE="1")
    try:
        p = subprocess.run(["unshare", "-m", "-n", "--propagation", "private", sys.executable, *sys.argv], env=env, timeout=240)
        sys.exit(p.returncode)
    except subprocess.TimeoutExpired:
        t.check(False, "the namespace run did not finish in 240 s")
        t.done()


class Pages(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = {"/": b"<html><body>HOME-OK</body></html>", "/shorts/x": b"<html><body>SHORTS-OK</body></html>"}.get(self.path)
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(body or b"missing")

    def log_message(self, *args):
        pass


def run(argv, timeout=60, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)


def setup(tmp):
    run(["ip", "link", "set", "lo", "up"], check=True)
    run(["ip", "addr", "add", "127.0.0.2/8", "dev", "lo"], check=True)
    os.makedirs(f"{tmp}/up")
    os.makedirs(f"{tmp}/wk")
    run(["mount", "-t", "overlay", "overlay", "-o", f"lowerdir=/etc,upperdir={tmp}/up,workdir={tmp}/wk", "/etc"], check=True)
    os.remove("/etc/resolv.conf")  # a symlink on some systems: replace it, inside the overlay
    with open("/etc/resolv.conf", "w") as f:
        f.write("nameserver 127.0.0.1\n")
    run(["dnsmasq", "--no-resolv", "--no-hosts", "--listen-address=127.0.0.1", "--bind-interfaces",
         f"--pid-file={tmp}/dns.pid", "--user=root", "--address=/test/127.0.0.2"], check=True)
    server = http.server.ThreadingHTTPServer(("127.0.0.2", 80), Pages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    # Chromium counts as installed here by its package (/etc/chromium), Firefox by its file.
    os.makedirs("/etc/firefox/policies", exist_ok=True)
    with open(FIREFOX_POLICY, "w") as f:
        json.dump(ADMIN_FIREFOX, f)
    return server


def browser_env(tmp):
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(HOME=f"{tmp}/home", XDG_CONFIG_HOME=f"{tmp}/home/.config")
    os.makedirs(env["XDG_CONFIG_HOME"], exist_ok=True)
    return env


def chromium(tmp, url, n=[0]):
    """The DOM a fresh headless Chromium shows for url (it reads the managed policy at start)."""
    n[0] += 1
    argv = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            f"--user-data-dir={tmp}/chromium-{n[0]}", "--dump-dom", url]
    try:
        p = run(argv, timeout=40, env=browser_env(tmp))
        return p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return "TIMEOUT"


def blockc(tmp, *args):
    return run([f"{bindir}/blockc", "--socket", f"{tmp}/s.sock", *args], timeout=20)


def wait_for(cond, timeout=10):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def checks(tmp):
    t.check("SHORTS-OK" in chromium(tmp, "http://social.test/shorts/x"), "the rig serves /shorts/x to Chromium before any block")
    shutil.copyfile("/etc/hosts", f"{tmp}/hosts")
    blockd = subprocess.Popen([f"{bindir}/blockd", "--socket", f"{tmp}/s.sock", "--state-dir", f"{tmp}/state",
                               "--config-dir", f"{tmp}/etc", "--hosts-file", f"{tmp}/hosts", "--log-target", "console"],
                              stdout=open(f"{tmp}/blockd.log", "w"), stderr=subprocess.STDOUT)
    try:
        t.check(wait_for(lambda: blockc(tmp, "status").returncode == 0), "blockd answers")
        firefox = read_json(FIREFOX_POLICY) or {}
        t.check(firefox.get("policies", {}).get("DNSOverHTTPS") == {"Enabled": False, "Locked": True},
                f"blockd's start locks DoH off in Firefox's policies.json: {firefox}")
        t.check(all(firefox.get("policies", {}).get(k) == v for k, v in ADMIN_FIREFOX["policies"].items()),
                "the administrator's Firefox policies are kept")
        ff = run(["firefox-esr", "--headless", "--no-remote", "--profile", mkdir(f"{tmp}/ff"), "--screenshot",
                  f"{tmp}/shot.png", "http://social.test/"], timeout=60, env=browser_env(tmp))
        t.check(ff.returncode == 0 and os.path.exists(f"{tmp}/shot.png") and "policy" not in ff.stderr.lower(),
                f"Firefox ESR starts headless with the merged policies.json (exit {ff.returncode}): {ff.stderr[-300:]}")

        start = blockc(tmp, "start", "--minutes", "5", "social.test/shorts")
        t.check(start.returncode == 0, f"blockc start social.test/shorts: {start.stdout}{start.stderr}")
        policy = read_json(CHROMIUM_POLICY) or {}
        t.check("social.test/shorts" in policy.get("URLBlocklist", []) and policy.get("DnsOverHttpsMode") == "off",
                f"the Chromium policy lists the prefix with DoH off: {policy}")
        with open(f"{tmp}/hosts", "rb") as f:
            t.check(b"social.test" not in f.read(), "a path-only block leaves the hosts file alone")
        began = time.monotonic()
        blocked = chromium(tmp, "http://social.test/shorts/x")
        t.figures["chromiumNavigationSeconds"] = round(time.monotonic() - began, 1)
        t.check("ERR_BLOCKED_BY_ADMINISTRATOR" in blocked and "SHORTS-OK" not in blocked,
                f"Chromium refuses /shorts/x with ERR_BLOCKED_BY_ADMINISTRATOR: {blocked[-300:]}")
        t.check("HOME-OK" in chromium(tmp, "http://social.test/"), "Chromium still loads / of the same site")

        stop = blockc(tmp, "stop", "social.test_shorts")
        t.check(stop.returncode == 0, f"blockc stop: {stop.stdout}{stop.stderr}")
        t.check(wait_for(lambda: not os.path.exists(CHROMIUM_POLICY), 3), "the unlock removes the Chromium policy")
        t.check("SHORTS-OK" in chromium(tmp, "http://social.test/shorts/x"), "after the unlock Chromium loads /shorts/x again")
    finally:
        blockd.send_signal(signal.SIGTERM)
        blockd.wait(timeout=10)
    rel = run([f"{bindir}/blockd", "--state-dir", f"{tmp}/state", "--config-dir", f"{tmp}/etc", "--hosts-file", f"{tmp}/hosts",
               "--release"], timeout=20)
    t.check(rel.returncode == 0 and read_json(FIREFOX_POLICY) == ADMIN_FIREFOX,
            f"--release gives Firefox's file back as the administrator wrote it: {read_json(FIREFOX_POLICY)} {rel.stderr}")


def mkdir(path):
    os.makedirs(path, exist_ok=True)
    return path


tmp = tempfile.mkdtemp(prefix="bd-browsers.", dir="/tmp")
server = None
try:
    server = setup(tmp)
    checks(tmp)
except Exception as e:  # a broken rig is a failure with its reason, never a silent pass
    import traceback
    t.check(False, f"browser rig: {e!r} at {traceback.format_exc().strip().splitlines()[-3]}")
finally:
    if server:
        server.shutdown()
    try:
        with open(f"{tmp}/dns.pid") as f:
            os.kill(int(f.read().strip()), signal.SIGTERM)
    except (OSError, ValueError):
        pass
    subprocess.run(["umount", "/etc"], capture_output=True)
    shutil.rmtree(tmp, ignore_errors=True)
t.done()
