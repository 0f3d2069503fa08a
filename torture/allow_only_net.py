#!/usr/bin/env python3
"""W2 connections, for real, inside the private mount + network + PID namespace of
torture/rig.py (root only). Traffic to the machine's own addresses passes a window, so the
"sites" live in a second network namespace made here, joined by a veth pair with TEST-NET
addresses: allowed.test 192.0.2.10 and 2001:db8::10, other.test 192.0.2.20 and 2001:db8::20,
a nameserver 192.0.2.53 (a second dnsmasq, on an address no window allows, listed in the rig's
resolv.conf after 127.0.0.1) and a DNS server that is not the machine's on 192.0.2.54 and
2001:db8::54 (a third dnsmasq: a VPN or proxy on port 53 would look the same). blockd asks the
rig's dnsmasq on 127.0.0.1. Nothing leaves the test's namespaces; /etc is the rig's overlay.
Two throwaway login users A and B (uids 1000-60000, created in the overlay's /etc) connect
with setpriv:
  (w) during `blockc start --minutes 5 --allow-only allowed.test`: A connects to the allowed
      site, is refused at once by the other one (ECONNREFUSED, not a timeout; over IPv4 and
      IPv6), another login user B is refused too, A's keep-alive
      connection to the other site opened before dies at its next request while the one to
      the allowed site goes on, DNS to 192.0.2.53 (a nameserver of the machine) answers A
      while port 53 of 192.0.2.54 and 2001:db8::54 is refused, over UDP and TCP (it used to
      pass: the table accepted port 53 of any address), a local service on 127.0.0.1
      answers A, and root still connects to the other site; status lists the window's rule;
      a block of the allowed site (Firewall=yes) inside the window refuses it, for A and root;
  (u) the same window with --user A: A is refused by the other site while B connects to it;
  after each `blockc stop` everything connects again and the table holds no window rule;
  (n) with --firewall no, the window has no network part: A connects to the other site,
      status says why in firewall.allowOnlyProblem, and the window is not "not enforced".
Without root: skipped, unless BLOCKD_PRIVILEGED_TESTS=1, then failed.
Usage: torture/allow_only_net.py BIN_DIR
"""
import inspect, json, os, pwd, re, socket, subprocess, sys, time
from http.server import BaseHTTPRequestHandler

from lib import Tally, sh, stop, wait_for
from rig import Rig, enter, request

bindir = os.path.abspath(sys.argv[1])
t = Tally("allow_only_net")
enter(t, ["unshare", "ip", "dnsmasq", "nft", "setpriv", "useradd"],
      "needs root (unshare -m -n, a second network namespace, nftables, throwaway users)", timeout=300)

NS = "bdw2sites"
ALLOWED, OTHER, DNS = "192.0.2.10", "192.0.2.20", "192.0.2.53"
NOTNS, NOTNS6 = "192.0.2.54", "2001:db8::54"  # port 53, but not a nameserver of the machine
ALLOWED6, OTHER6 = "2001:db8::10", "2001:db8::20"
USERS = ("bdw2net-a", "bdw2net-b")


class Local(BaseHTTPRequestHandler):
    """The machine's own web server on 127.0.0.1:80."""
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "6")
        self.end_headers()
        self.wfile.write(b"local\n")

    def log_message(self, *args):
        pass


# The sites, run inside NS: a keep-alive HTTP server on every address there.
SITES = r"""
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class Site(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        body = ("site %s\n" % self.connection.getsockname()[0]).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
class Server(ThreadingHTTPServer):
    daemon_threads = True
    def handle_error(self, *a):
        pass
import socket
class Server6(Server):
    address_family = socket.AF_INET6  # dual-stack: the IPv4 addresses too
Server6(("::", 80), Site).serve_forever()
"""

# The client run as a throwaway user: one command a line on stdin, one answer line each,
# starting with the command's word. `connect ADDR PORT`: a new connection and one request;
# `open ADDR`: a keep-alive connection kept under ADDR; `again ADDR`: one more request on it;
# `dns SERVER NAME`: an A query over UDP.
CLIENT = r"""
import socket, struct, sys, time
kept = {}
""" + inspect.getsource(request) + r"""
def outcome(fn):
    start = time.monotonic()
    try:
        fn()
        r = "ok"
    except ConnectionRefusedError:
        r = "refused"
    except OSError as e:
        r = "error_" + type(e).__name__
    return "%s %.3f" % (r, time.monotonic() - start)
def connect(addr, port):
    with socket.create_connection((addr, int(port)), timeout=3) as s:
        request(s.makefile("rb"), s)
def open_(addr):
    s = socket.create_connection((addr, 80), timeout=3)
    kept[addr] = (s, s.makefile("rb"))
    request(kept[addr][1], s)
def again(addr):
    s, f = kept[addr]
    request(f, s)
def tcp(addr, port):
    socket.create_connection((addr, int(port)), timeout=3).close()
def dns(server, name):
    q = struct.pack(">HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0)
    q += b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0" + struct.pack(">HH", 1, 1)
    with socket.socket(socket.AF_INET6 if ":" in server else socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(3)
        s.sendto(q, (server, 53))
        reply = s.recv(512)
    if reply[:2] != q[:2] or struct.unpack(">H", reply[6:8])[0] < 1:
        raise OSError("no answer")
for line in sys.stdin:
    words = line.split()
    fn = {"connect": connect, "open": open_, "again": again, "dns": dns, "tcp": tcp}[words[0]]
    print(words[0], outcome(lambda: fn(*words[1:])), flush=True)
"""


class User:
    """CLIENT as `name`; `ask` sends one command and returns (result, seconds)."""

    def __init__(self, name):
        pw = pwd.getpwnam(name)
        self.name, self.uid = name, pw.pw_uid
        self.proc = subprocess.Popen(["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups",
                                      sys.executable, "-c", CLIENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, cwd="/", start_new_session=True)

    def ask(self, *command):
        self.proc.stdin.write(" ".join(command) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline().split()
        if len(line) != 3 or line[0] != command[0]:
            raise RuntimeError(f"the client as {self.name} answered {line} to {command}")
        return line[1], float(line[2])

    def close(self):
        stop(self.proc, 2)


def root_connect(addr):
    try:
        with socket.create_connection((addr, 80), timeout=3) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            return "ok" if s.recv(100).startswith(b"HTTP/1.1 200") else "odd"
    except ConnectionRefusedError:
        return "refused"
    except OSError as e:
        return f"error {e}"


def table():
    p = sh("nft", "list", "table", "inet", "blockd", check=False)
    return p.stdout if p.rc == 0 else ""


def window_rules(d, what):
    """The status's firewall.allowOnly once its first window allows `ALLOWED` (blockd's own
    lookup of allowed.test answered), else what it is at the deadline."""
    def allowed():
        w = d.status()["enforcement"].get("firewall", {}).get("allowOnly", [])
        return w if w and {ALLOWED, ALLOWED6} <= set(w[0].get("addresses", [])) else None
    start = time.monotonic()
    if wait_for(allowed, step=0.01):
        t.figures.setdefault(f"{what}LearnedSeconds", round(time.monotonic() - start, 3))
    rules = d.status()["enforcement"].get("firewall", {}).get("allowOnly", [])
    t.check(rules and {ALLOWED, ALLOWED6} <= set(rules[0].get("addresses", [])) and rules[0].get("hosts") == 1,
            f"({what}) status lists the window's rule with allowed.test's learned addresses: {json.dumps(rules)}")
    return rules


def all_connect(what, *users):
    for u in users:
        for addr in (ALLOWED, OTHER, ALLOWED6, OTHER6):
            got = u.ask("connect", addr, "80")
            t.check(got[0] == "ok", f"({what}) {u.name} connects to {addr}: {got}")


def stopped(d, what, *users):
    d.blockc("stop", "w2net")
    t.check(wait_for(lambda: "Nothing is blocked" in d.blockc("status").stdout), f"({what}) the window stopped")
    t.check(wait_for(lambda: "skuid" not in table()), f"({what}) after blockc stop the table holds no window rule:\n{table()}")
    all_connect(f"{what}, after stop", *users)


def everyone(d, a, b):
    all_connect("w, before", a)
    for server in (NOTNS, NOTNS6):
        t.check(a.ask("dns", server, "allowed.test")[0] == "ok" and a.ask("tcp", server, "53")[0] == "ok",
                f"(w, before) A reaches the DNS server on port 53 of {server} (UDP and TCP)")
    t.check(a.ask("open", OTHER)[0] == "ok" and a.ask("open", ALLOWED)[0] == "ok", "(w) A holds keep-alive connections to both sites")
    d.blockc("start", "--minutes", "5", "--name", "w2net", "--allow-only", "allowed.test")
    rules = window_rules(d, "w")
    t.check(rules and "uids" not in rules[0], f"(w) a window for everyone holds for login users, no uid list: {rules}")
    human = d.blockc("status").stdout
    t.check("allow-only time: login users reach only 2 addresses of 1 allowed host" in human, f"(w) blockc status says it:\n{human}")
    got = a.ask("connect", ALLOWED, "80")
    t.check(got[0] == "ok", f"(w) A connects to the allowed site: {got}")
    got = a.ask("connect", OTHER, "80")
    t.check(got[0] == "refused" and got[1] < 0.5, f"(w) A is refused by the other site at once (ECONNREFUSED, not a timeout): {got}")
    for addr in (ALLOWED6, OTHER6):
        got = a.ask("connect", addr, "80")
        want = "ok" if addr == ALLOWED6 else "refused"
        t.check(got[0] == want and got[1] < 0.5, f"(w) over IPv6, A's connection to {addr}: {got} (want {want})")
    got = a.ask("again", OTHER)
    t.check(got[0] != "ok" and got[1] < 1.0, f"(w) A's open keep-alive connection to the other site dies at its next request: {got}")
    t.figures["openConnectionEnds"] = got[0]
    got = a.ask("again", ALLOWED)
    t.check(got[0] == "ok", f"(w) A's open keep-alive connection to the allowed site goes on: {got}")
    got = a.ask("dns", DNS, "allowed.test")
    t.check(got[0] == "ok", f"(w) DNS to {DNS}, the machine's nameserver on an address the window does not allow, answers A: {got}")
    for server in (NOTNS, NOTNS6):
        got = a.ask("dns", server, "allowed.test")
        t.check(got[0] != "ok", f"(w) UDP port 53 of {server}, not a nameserver of the machine, is refused: {got}")
        got = a.ask("tcp", server, "53")
        t.check(got[0] == "refused" and got[1] < 0.5, f"(w) TCP port 53 of {server} is refused at once: {got}")
    got = a.ask("tcp", DNS, "853")
    t.check(got[0] == "refused", f"(w) DNS over TLS (853) to the nameserver is refused: {got}")
    t.check("th dport 53 accept" in table() and not re.search(r"^\s*meta l4proto \{ tcp, udp \} th dport 53 accept", table(), re.M),
            f"(w) port 53 is accepted only with the nameservers' addresses:\n{table()}")
    got = a.ask("connect", "127.0.0.1", "80")
    t.check(got[0] == "ok", f"(w) the local service on 127.0.0.1:80 answers A: {got}")
    got = b.ask("connect", OTHER, "80")
    t.check(got[0] == "refused", f"(w) B, another login user, is refused too: {got}")
    t.check(root_connect(OTHER) == "ok", "(w) root's connection to the other site still works")
    text = table()
    t.check(re.search(r"meta skuid 1000-60000 ip daddr != (\{ )?192\.0\.2\.10 ", text) and "fib daddr type local accept" in text
            and re.search(r"meta skuid 1000-60000 ip6 daddr != (\{ )?2001:db8::10 ", text),
            f"(w) the table holds the window's rule for login users:\n{text}")
    # A block of the allowed site inside the window (Firewall=yes: refused for the whole block)
    # wins over the window's allowance: its reject comes first.
    d.blockc("start", "--minutes", "5", "--name", "blk", "allowedfw")
    t.check(wait_for(lambda: a.ask("connect", ALLOWED, "80")[0] == "refused"),
            "(w) a block of the allowed site inside the window refuses it")
    t.check(root_connect(ALLOWED) == "refused", "(w) for everyone, as a block does")
    d.blockc("stop", "blk")
    t.check(wait_for(lambda: a.ask("connect", ALLOWED, "80")[0] == "ok"), "(w) the block stopped, the window allows the site again")
    stopped(d, "w", a, b)


def per_user(d, a, b):
    d.blockc("start", "--minutes", "5", "--name", "w2net", "--user", a.name, "--allow-only", "allowed.test")
    rules = window_rules(d, "u")
    t.check(rules and rules[0].get("uids") == [a.uid], f"(u) the window's rule holds for A's uid only: {rules}")
    got = a.ask("connect", OTHER, "80")
    t.check(got[0] == "refused" and got[1] < 0.5, f"(u) A is refused by the other site at once: {got}")
    got = a.ask("connect", ALLOWED, "80")
    t.check(got[0] == "ok", f"(u) A connects to the allowed site: {got}")
    got = b.ask("connect", OTHER, "80")
    t.check(got[0] == "ok", f"(u) B, outside the window, connects to the other site: {got}")
    t.check(f"meta skuid {a.uid} ip daddr != " in table(), f"(u) the table matches A's sockets:\n{table()}")
    stopped(d, "u", a, b)


def firewall_off(rig, a):
    """Firewall=no: the window keeps names only; its network part is not there, and status
    says so next to the firewall's own problem (the selection is not "not enforced" for it)."""
    d = rig.daemon("--policy-root", f"{rig.work}/root", "--firewall", "no")
    d.start()
    try:
        p = d.blockc("start", "--minutes", "5", "--name", "w2net", "--allow-only", "allowed.test")
        t.check("not enforced" not in p.stdout + p.stderr, f"(n) Firewall=no does not make the window 'not enforced': {p.stdout}{p.stderr}")
        fw = d.status()["enforcement"].get("firewall", {})
        t.check("allowOnly" not in fw and "Firewall=no" in fw.get("allowOnlyProblem", ""),
                f"(n) status says the window's connections are not refused, and why: {json.dumps(fw)}")
        got = a.ask("connect", OTHER, "80")
        t.check(got[0] == "ok" and table() == "", f"(n) with Firewall=no A still connects to the other site, no table: {got}")
        d.blockc("stop", "w2net")
    finally:
        d.stop()


def free_uids(n):
    out, uid = [], 59990
    while len(out) < n:
        try:
            pwd.getpwuid(uid)
        except KeyError:
            out.append(uid)
        uid -= 1
    return out


def sites(rig):
    """The second network namespace with the sites and its nameserver, joined by a veth pair."""
    sh("mount", "-t", "tmpfs", "-o", "mode=0755,size=4m", "tmpfs", "/run")  # the namespace's own /run (ip netns, user tables)
    sh("ip", "netns", "add", NS)
    sh("ip", "link", "add", "bdw2a", "type", "veth", "peer", "name", "bdw2b", "netns", NS)
    sh("ip", "addr", "add", "192.0.2.1/24", "dev", "bdw2a")
    sh("ip", "addr", "add", "2001:db8::1/64", "dev", "bdw2a", "nodad")
    for address in (ALLOWED6, OTHER6, NOTNS6):
        sh("ip", "-n", NS, "addr", "add", f"{address}/64", "dev", "bdw2b", "nodad")
    sh("ip", "link", "set", "bdw2a", "up")
    for address in (ALLOWED, OTHER, DNS, NOTNS):
        sh("ip", "-n", NS, "addr", "add", f"{address}/24", "dev", "bdw2b")
    sh("ip", "-n", NS, "link", "set", "bdw2b", "up")
    sh("ip", "-n", NS, "link", "set", "lo", "up")
    rig.spawn(["ip", "netns", "exec", NS, sys.executable, "-c", SITES], "sites.log")
    rig.spawn(["ip", "netns", "exec", NS, "dnsmasq", "--keep-in-foreground", "--no-resolv", "--no-hosts",
               f"--listen-address={DNS}", "--bind-interfaces", f"--address=/allowed.test/{ALLOWED}", "--user=root"], "dns2.log")
    rig.spawn(["ip", "netns", "exec", NS, "dnsmasq", "--keep-in-foreground", "--no-resolv", "--no-hosts", "--port=53",
               f"--listen-address={NOTNS}", f"--listen-address={NOTNS6}", "--bind-interfaces",
               f"--address=/allowed.test/{ALLOWED}", "--user=root", f"--pid-file={rig.work}/dns3.pid"], "dns3.log")
    with open("/etc/resolv.conf", "a") as f:  # the overlay's: a second nameserver of the machine, off the machine
        f.write(f"nameserver {DNS}\n")
    t.check(wait_for(lambda: all(root_connect(a) == "ok" for a in (ALLOWED, OTHER, ALLOWED6, OTHER6))),
            "the sites answer through the veth pair, over IPv4 and IPv6")


def main():
    with Rig(t, bindir, "bd-w2net-", [], {"allowed.test": [ALLOWED, ALLOWED6], "other.test": [OTHER, OTHER6]}) as rig:
        rig.configure("[Daemon]\nConnectGrace=3s\n", {"allowedfw": "[Selection]\nName=allowedfw\nDomains=allowed.test\nFirewall=yes\n"})
        rig.serve("127.0.0.1", Local)
        users = []
        try:
            sites(rig)
            for name, uid in zip(USERS, free_uids(len(USERS))):
                sh("useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", "-u", str(uid), name)
            users = [User(u) for u in USERS]
            # A window is in force where blockd is on the hosts: line (§7 Truth): put it
            # on the overlay's, as make install and the package do (felt.py does the same).
            sh(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts", "nsswitch"), "add", "/etc/nsswitch.conf")
            d = rig.daemon("--policy-root", f"{rig.work}/root")
            d.start()
            everyone(d, *users)
            per_user(d, *users)
            d.stop()
            firewall_off(rig, users[0])
        finally:
            for u in users:
                u.close()
            for name in USERS:
                sh("userdel", name, check=False)
            sh("ip", "netns", "del", NS, check=False)
    t.done()


main()
