#!/usr/bin/env python3
"""E5 "felt at once", for real, inside the private mount + network + PID namespace of
torture/rig.py (root only): loopback network with 127.0.0.2/127.0.0.3 as "sites", an overlay over
/etc (every write, /etc/hosts and /etc/resolv.conf included, stays in the namespace),
dnsmasq answering social.test -> 127.0.0.2 and fw.test -> 127.0.0.3, keep-alive HTTP servers
on the sites, and a "local web server" on 127.0.0.1:80 and on the sink 127.0.0.253:80.
blockd manages /etc/hosts (the overlay's) with ConnectGrace=3s.
  (a) a keep-alive connection to social.test dies within 1 s of `blockc start`;
  (b) a new connection to its old address is refused during the grace, works after it;
      with Firewall=yes (fw.test) it stays refused for the whole block; after the unlock the
      nftables table is gone;
  (c) getent answers the sink, and a connect to it is refused at once although a server
      listens there, while 127.0.0.1:80 still answers;
  (u) per user: two throwaway users A and B (created in the overlay's /etc/passwd and removed
      again) each hold a keep-alive and an idle connection to social.test; a block scoped to A
      destroys A's two and refuses A's new connects at once (the table matches the socket
      owner, meta skuid) while B's connections go on and B connects as before;
  (d) blockd --release removes the table.
Nothing runs outside the namespace: the machine's sockets, firewall and /etc are untouched.
Without root: skipped, unless BLOCKD_PRIVILEGED_TESTS=1, then failed.
Usage: torture/felt.py BIN_DIR [--bench N]   (--bench: N timed runs of (a), for bench/run)
"""
import inspect, json, os, pwd, re, socket, subprocess, sys, threading, time
from http.server import BaseHTTPRequestHandler

from lib import Tally, sh, wait_for
from rig import Rig, enter, request

bindir = os.path.abspath(sys.argv[1])
bench_runs = int(sys.argv[sys.argv.index("--bench") + 1]) if "--bench" in sys.argv else 0
t = Tally("felt")
enter(t, ["unshare", "ip", "dnsmasq", "nft", "getent", "mount", "setpriv", "useradd"],
      "needs root (unshare -m -n, nftables, sock_diag, throwaway users)", timeout=300)


class Site(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as a browser tab holds it

    def do_GET(self):
        body = f"site {self.server.server_address[0]}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def connect(address, port=80, timeout=2.0):
    """'ok', 'refused' or the error, and how long it took."""
    start = time.monotonic()
    try:
        with socket.create_connection((address, port), timeout=timeout) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            data = s.recv(100)
            result = "ok" if data.startswith(b"HTTP/1.1 200") else f"odd reply {data!r}"
    except ConnectionRefusedError:
        result = "refused"
    except OSError as e:
        result = f"error {e}"
    return result, time.monotonic() - start


class KeepAlive:
    """One connection reused for a request every 20 ms; records the last success and the
    first failure (monotonic times)."""

    def __init__(self, host):
        self.sock = socket.create_connection((host, 80), timeout=2)
        self.file = self.sock.makefile("rb")
        self.last_ok = None
        self.failed_at = None
        self.requests = 0
        self.request()
        threading.Thread(target=self.loop, daemon=True).start()

    def request(self):
        request(self.file, self.sock)
        self.last_ok = time.monotonic()
        self.requests += 1

    def loop(self):
        while True:
            try:
                self.request()
            except OSError as e:
                self.failed_at = time.monotonic()
                self.error = e
                return
            time.sleep(0.02)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def table_exists():
    return sh("nft", "list", "table", "inet", "blockd", check=False).rc == 0


def getent(name):
    return sorted({line.split()[0] for line in sh("getent", "ahosts", name, check=False).stdout.splitlines()})


class Idle:
    """A connection that made one request and then only waits to read: it sends nothing, so
    no firewall rule can touch it, and only a destroyed socket (SOCK_DESTROY) ends its wait."""

    def __init__(self, host):
        self.sock = socket.create_connection((host, 80), timeout=2)
        self.file = self.sock.makefile("rb")
        self.requests, self.last_ok = 0, None
        KeepAlive.request(self)  # one whole reply; the server keeps the connection open
        self.sock.settimeout(None)
        self.ended_at = None
        self.error = None
        threading.Thread(target=self.wait, daemon=True).start()

    def wait(self):
        try:
            self.sock.recv(1)
        except OSError as e:
            self.error = e
        self.ended_at = time.monotonic()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def cut_once(d, extra=()):
    """`blockc start` with a keep-alive connection open: (seconds to the first failure,
    seconds to the last successful request), both from just before blockc ran. An idle
    connection open at the same time must be destroyed too (the socket cut, not the table)."""
    client = KeepAlive("social.test")
    idle = Idle("social.test")
    time.sleep(0.1)
    start = time.monotonic()
    d.blockc("start", "--for", "8s", "social", *extra)
    wait_for(lambda: client.failed_at is not None, 3)
    wait_for(lambda: idle.ended_at is not None, 3)
    t.check(idle.ended_at is not None and idle.error is not None and idle.ended_at - start <= 1.0,
            f"(a) an idle connection to the site was destroyed {idle.ended_at and idle.ended_at - start} s after blockc start "
            f"(want <= 1 s; {idle.error})")
    idle.close()
    client.close()
    failed = client.failed_at - start if client.failed_at else None
    return failed, (client.last_ok - start) if client.last_ok else None, client


def felt(d):
    t.check(getent("social.test") == ["127.0.0.2"], f"before: social.test is {getent('social.test')} from dnsmasq")
    failed, last_ok, client = cut_once(d, ("fw",))
    t.check(failed is not None and failed <= 1.0,
            f"(a) the keep-alive connection died {failed} s after blockc start (want <= 1 s); log:\n{d.log()}")
    t.figures["cutSeconds"] = round(failed, 3) if failed is not None else None
    t.figures["lastRequestSeconds"] = round(last_ok, 3) if last_ok is not None else None
    result, took = connect("127.0.0.2")
    t.check(result == "refused" and took < 0.5, f"(b) a new connection to the old address during the grace: {result} in {took:.3f} s")
    # fw.test's address is learned by blockd's own DNS lookup, which runs after the hosts write
    # and may take up to its one-second budget on a loaded machine.
    t.check(wait_for(lambda: connect("127.0.0.3")[0] == "refused", 1.5), "(b) Firewall=yes: fw.test's address is refused")
    sinks = getent("social.test")
    t.check(sinks in (["127.0.0.253"], ["100::1", "127.0.0.253"]), f"(c) getent ahosts social.test during the block: {sinks}")
    with open("/etc/hosts") as f:
        hosts = f.read()
    t.check("\n127.0.0.253 social.test\n100::1 social.test\n" in hosts, f"(c) the hosts section points at the sink:\n{hosts[:400]}")
    result, took = connect("127.0.0.253")
    t.check(result == "refused" and took < 0.5, f"(c) connect to the sink with a server listening there: {result} in {took:.3f} s")
    t.check(connect("127.0.0.1")[0] == "ok", "(c) the machine's own web server on 127.0.0.1:80 still answers")
    e = d.status()["enforcement"]
    t.check(e.get("sink") == "127.0.0.253 100::1" and e.get("socketsCut", 0) >= 1 and e.get("firewall", {}).get("enabled") is True,
            f"status: enforcement {json.dumps(e)}")
    t.check("127.0.0.2" in e.get("firewall", {}).get("addresses", []), f"status lists the refused address: {e.get('firewall')}")
    t.check(wait_for(lambda: connect("127.0.0.2")[0] == "ok", 4), "(b) after ConnectGrace=3s the old address answers again")
    t.check(connect("127.0.0.3")[0] == "refused", "(b) Firewall=yes: still refused after the grace")
    t.check(wait_for(lambda: "Nothing is blocked" in d.blockc("status").stdout), "the 8 s block ended")
    t.check(wait_for(lambda: not table_exists(), 2), "after the unlock the table inet blockd is gone")
    t.check(connect("127.0.0.3")[0] == "ok" and getent("social.test") == ["127.0.0.2"], "after the unlock everything answers as before")


# A client run as a throwaway user (setpriv): a keep-alive connection making a request every
# 20 ms and an idle one (only SOCK_DESTROY ends its wait), both to argv[1]:80; on stdin,
# "connect" tries a new connection and "status" reports. Times are CLOCK_MONOTONIC, as the test's.
USER_CLIENT = r"""
import socket, sys, threading, time
host = sys.argv[1]
out = threading.Lock()
def say(*words):
    with out:
        print(*words, flush=True)
""" + inspect.getsource(request) + r"""
keep, idle = socket.create_connection((host, 80), timeout=2), socket.create_connection((host, 80), timeout=2)
kf, jf = keep.makefile("rb"), idle.makefile("rb")
request(kf, keep); request(jf, idle)
idle.settimeout(None)
count = [0]
def loop():
    while True:
        try:
            request(kf, keep)
            count[0] += 1
        except OSError as e:
            say("keep-failed", time.monotonic(), repr(e).replace(" ", "_"))
            return
        time.sleep(0.02)
def wait():
    try:
        idle.recv(1)
        e = "eof"
    except OSError as x:
        e = repr(x).replace(" ", "_")
    say("idle-ended", time.monotonic(), e)
threading.Thread(target=loop, daemon=True).start()
threading.Thread(target=wait, daemon=True).start()
say("ready")
for line in sys.stdin:
    if line.strip() == "connect":
        start = time.monotonic()
        try:
            with socket.create_connection((host, 80), timeout=2):
                r = "ok"
        except ConnectionRefusedError:
            r = "refused"
        except OSError as e:
            r = "error_" + type(e).__name__
        say("connect", r, time.monotonic() - start)
    elif line.strip() == "status":
        say("status", count[0])
"""
USERS = ("bdfelt-a", "bdfelt-b")


class UserClient:
    """USER_CLIENT as `user`, read line by line on a thread; stopped by close()."""

    def __init__(self, user, host):
        self.user, self.lines, self.cond = user, [], threading.Condition()
        self.proc = subprocess.Popen(["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups",
                                      sys.executable, "-c", USER_CLIENT, host],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd="/")
        threading.Thread(target=self.read, daemon=True).start()
        if not self.wait("ready", 5):
            raise RuntimeError(f"the client as {user} did not connect: {self.lines}")

    def read(self):
        for line in self.proc.stdout:
            with self.cond:
                self.lines.append(line.split())
                self.cond.notify_all()

    def wait(self, word, seconds, after=0):
        with self.cond:
            self.cond.wait_for(lambda: any(l and l[0] == word for l in self.lines[after:]), seconds)
            return next((l for l in self.lines[after:] if l and l[0] == word), None)

    def ask(self, command):
        n = len(self.lines)
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self.wait(command, 5, n)

    def close(self):
        self.proc.kill()
        self.proc.wait(5)


def per_user(d):
    """U3: a block scoped to user A cuts A's connections and refuses A's new ones (the table
    matches the socket owner, meta skuid); B's connections to the same site go on."""
    a, b = (UserClient(u, "127.0.0.2") for u in USERS)
    try:
        time.sleep(0.2)
        start = time.monotonic()
        d.blockc("start", "--for", "30s", "--user", USERS[0], "social")
        a_keep, a_idle = a.wait("keep-failed", 3), a.wait("idle-ended", 3)
        a_cut = float(a_keep[1]) - start if a_keep else None
        t.check(a_cut is not None and a_cut <= 1.0, f"(u) A's keep-alive connection died {a_cut} s after blockc start --user A (want <= 1 s)")
        t.check(a_idle is not None and float(a_idle[1]) - start <= 1.0 and a_idle[2] != "eof",
                f"(u) A's idle connection was destroyed (the socket cut of A's sockets): {a_idle}")
        before = int(b.ask("status")[1])
        got_a, got_b = a.ask("connect"), b.ask("connect")
        t.check(got_a[1] == "refused" and float(got_a[2]) < 0.5, f"(u) A's new connection is refused at once (meta skuid): {got_a}")
        t.check(got_b[1] == "ok", f"(u) B's new connection to the same address works: {got_b}")
        time.sleep(1.0)
        after = int(b.ask("status")[1])
        t.check(b.wait("keep-failed", 0) is None and b.wait("idle-ended", 0) is None and after - before >= 5,
                f"(u) B's keep-alive and idle connections live on ({after - before} requests in the last second): {b.lines}")
        rules = d.status()["enforcement"].get("firewall", {})
        uid_a = pwd.getpwnam(USERS[0]).pw_uid
        t.check({"uids": [uid_a], "addresses": ["127.0.0.2"]} in rules.get("perUser", []),
                f"status lists the address refused for A only: {rules}")
        ruleset = sh("nft", "list", "table", "inet", "blockd", check=False).stdout
        # A's rule refuses the addresses of its own set (the table is changed set element by
        # set element, T5): that set holds 127.0.0.2.
        m = re.search(rf"meta skuid {uid_a} ip daddr @(\w+) ", ruleset)
        held = re.search(rf"set {m.group(1)} {{[^}}]*elements = {{([^}}]*)}}", ruleset) if m else None
        t.check(held is not None and "127.0.0.2" in re.split(r"[\s,]+", held.group(1)),
                f"the table matches A's sockets:\n{ruleset}")
        t.figures["perUserCutSeconds"] = round(a_cut, 3) if a_cut is not None else None
        t.figures["otherUserRequestsPerSecond"] = after - before
    finally:
        a.close()
        b.close()
    d.blockc("stop", "social", check=False)
    t.check(wait_for(lambda: "Nothing is blocked" in d.blockc("status").stdout), "(u) the per-user block stopped")
    t.check(wait_for(lambda: not table_exists(), 2), "(u) after it the table inet blockd is gone")


def release(d):
    d.blockc("start", "--for", "1h", "social")
    t.check(wait_for(table_exists, 2), "(d) a new block creates the table")
    d.stop()
    t.check(table_exists(), "(d) E4: the table stays when blockd stops")
    p = sh(*d.args, "--release", check=False)
    t.check(p.rc == 0 and not table_exists(), f"(d) blockd --release removes the table: {p.stdout}{p.stderr}")
    with open("/etc/hosts") as f:
        t.check("BEGIN blockd" not in f.read(), "(d) and the hosts section")


def bench(d, runs):
    """For bench/run: time from `blockc start` to the last successful request of an open
    keep-alive connection, against the hosts write alone (blockc start returning)."""
    cut, alone = [], []
    for _ in range(runs):
        failed, last_ok, _ = cut_once(d)
        cut.append(last_ok)
        d.blockc("stop", "social", check=False)
        wait_for(lambda: "Nothing is blocked" in d.blockc("status").stdout, 10)
        start = time.monotonic()
        d.blockc("start", "--for", "8s", "social")
        alone.append(time.monotonic() - start)
        d.blockc("stop", "social", check=False)
        wait_for(lambda: "Nothing is blocked" in d.blockc("status").stdout, 10)
    def pct(xs, q):
        xs = sorted(x for x in xs if x is not None)
        return round(1000 * xs[min(len(xs) - 1, int(q * len(xs)))], 2) if xs else None
    t.check(all(x is not None for x in cut), "every run had a successful request before the cut")
    print("JSON " + json.dumps({"runs": runs, "lastRequestP50Ms": pct(cut, 0.5), "lastRequestP99Ms": pct(cut, 0.99),
                                "blockcStartP50Ms": pct(alone, 0.5), "blockcStartP99Ms": pct(alone, 0.99)}), flush=True)


def main():
    with Rig(t, bindir, "bd-felt-", ["127.0.0.2", "127.0.0.3"], {"social.test": "127.0.0.2", "fw.test": "127.0.0.3"}) as rig:
        rig.configure("[Daemon]\nConnectGrace=3s\n", {
            "social": "[Selection]\nName=social\nDomains=social.test\n",
            "fw": "[Selection]\nName=fw\nDomains=fw.test\nFirewall=yes\n"})
        for address in ("127.0.0.2", "127.0.0.3", "127.0.0.1", "127.0.0.253"):
            rig.serve(address, Site)
        # Per-user tables go to /run/blockd/users: the namespace's own /run; the throwaway
        # users live in the overlay's /etc/passwd (removed at the end, gone with it anyway).
        sh("mount", "-t", "tmpfs", "-o", "mode=0755,size=4m", "tmpfs", "/run")
        for u in USERS:
            sh("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", u)
        # A per-user block is only in force where blockd is on the hosts: line (§7
        # Truth): put it on the overlay's, as make install and the package do.
        repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        sh(f"{repo}/scripts/nsswitch", "add", "/etc/nsswitch.conf")
        d = rig.daemon("--policy-root", f"{rig.work}/root")
        d.start()
        try:
            if bench_runs:
                bench(d, bench_runs)
            else:
                felt(d)
                per_user(d)
                release(d)
        finally:
            for u in USERS:
                sh("userdel", u, check=False)
    t.done()


main()
