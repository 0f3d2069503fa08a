#!/usr/bin/env python3
"""Six holes an outside tester found in the family model, replayed as a black box so that they stay
closed (root only): blockd installed under its real unit in a throwaway systemd booted as PID 1
on an overlay of this machine (torture/sysrig.py says how, and why that way), driven with
blockc, blockd, systemctl and journalctl by a family of throwaway users made in the rig's
/etc: `kid` and `kid2` (group blockd) and `parent` (blockd and blockd-admin).

    python3 torture/outsider.py BIN_DIR  (BIN_DIR: blockd, blockc, blockc-agent; the NSS module
                                          is the repository's .build/nss/libnss_blockd.so.2,
                                          `make nss`)

Before `make -C REPO install BINDIR_SRC=BIN_DIR` (as unit.py), inside the rig: the users;
/etc/blockd/blockd.conf with MetricsDirectory=/var/lib/prometheus/node-exporter (the one
directory the unit lets blockd write besides /etc); selections gameapp, kapp and k2app, each
`Apps=` a copy of sleep under /opt/bdtest; a second network namespace made inside the rig
(`ip netns add`, so nothing of it is the machine's) joined by a veth pair with TEST-NET
addresses: allowed.test 192.0.2.10 / 2001:db8::10 (TCP 80), a nameserver 192.0.2.53 /
2001:db8::53 (dnsmasq), and 192.0.2.60 / 2001:db8::60, which is no nameserver of the machine
but answers on TCP 53, UDP 53 (an echo), TCP 853 (DoT's port) and TCP 80. The rig's
/etc/resolv.conf lists 127.0.0.1 (a dnsmasq in the rig, answering allowed.test), 192.0.2.53
and 2001:db8::53. Users' probes (TCP connects, UDP datagrams, DNS queries, app launches, raw
protocol lines, idle connections) run as the user through /opt/bdtest/probe.py, which sets
its login uid, groups and uids first. Each check is named after its hole:

1 allow-only has no door on port 53. Before the window kid reaches TCP and UDP 53 of
  192.0.2.60 and 2001:db8::60 (the server is up). During the parent's `blockc start --minutes
  5 --allow-only allowed.test --user kid`: kid reaches allowed.test and is refused by
  192.0.2.60:80 (the window holds); TCP 53 there is refused at once (ECONNREFUSED, under
  0.5 s) and UDP 53 gets no answer (silence or an ICMP error), over IPv4 and IPv6, and TCP 853
  is refused; kid's DNS query to 192.0.2.53, the machine's nameserver, is answered; the
  parent, outside kid's window, still reaches 192.0.2.60:53. After `blockc stop` kid reaches
  port 53 there again. (The table before the fix: `meta l4proto { tcp, udp } th dport 53
  accept` ahead of the window's rules: the refusals fail.)
2 `schedule add` / `limit add` by a member answer only with what was created. kid2 adds
  schedule `secret` (03:00-04:00, alpha.example) and limit `secretlim` (45m, k2app); kid adds
  `secret` (05:00-06:00, bravo.example) and `secretlim` (10m, kapp) with blockc (`--json`
  when blockc takes it; before the fix it did not, and its sentence is judged), and
  `wiresecret`/`wirelim` the same way on the raw protocol (`schedule-add`, `limit-add`): each
  answer names kid/NAME with kid's window, seconds and selections, and nothing of kid2's (not
  "kid2", kid2's uid, 03:00, alpha, 45m/2700, k2app); `schedule list` has both kid2's secret
  and kid's kid/secret. (Before: the answer described kid2's activity.)
3 a machine-wide limit is per person. Root's `blockc limit add shared 20s gameapp`; kid2 runs
  the app 6 s, then kid runs two copies at once until the limit stops them: they are stopped
  after 18-25 s (kid's own 20 s, two processes not counted twice, kid2's 6 s not counted);
  then kid's launch is refused (EPERM/EACCES) while the parent's and kid2's run; `limit list
  --json` shows each of kid, kid2 and the parent their own use, and kid's `report --json`
  counts no second beyond kid's own (kid has a text login open meanwhile: the report counts a
  person's apps while they are at the screen). (Before: one pool for everyone; the parent was
  blocked.)
4 a symlink loop or dangling symlink named *.conf is not "no file". With bedtime for kid in
  force from /etc/blockd/schedules.d/bedtime.conf (a daily window holding now), four cases
  one at a time: loop.conf -> loop.conf, dangling.conf -> /nonexistent, and bedtime.conf itself
  turned into a loop and into a dangling link (its file kept aside): `blockd --check-config`
  (the installed binary) exits 1 saying the path "cannot be read", `blockc reload` fails,
  `blockc status --user kid --json` still has bedtime active, and the journal (`journalctl -u
  blockd`) has no "schedule 'bedtime' ended" since the link was made. Each case starts from
  the regular file reloaded and bedtime active. (Before: check-config said valid and reload
  succeeded, skipping the bad link as if it were no file; when that link was bedtime.conf
  itself, the reload lifted bedtime.)
5 error texts tell a member nothing of others. kid2's block k2, kid2's --lock block diary9,
  and a pending more-time request of kid2's (the parent's schedule for kid and kid2 with
  --more-time approval, `blockc more ... --today`): kid's `blockc stop k2`, `blockc stop
  diary9` and `blockc cancel ID` fail with the same exit status and stderr as the same command
  on a name that does not exist (the name replaced), with no "kid2", "belongs", "--lock",
  "lock" (a word) or "asked"; everything of kid2's is still there afterwards. kid2's and kid's
  request ids, asked one after the other, have 6 or more characters after their letter prefix
  and are not consecutive numbers. (Before: m1, m2, and texts naming kid2, the lock.)
6 smaller ones. (a) With the parent's per-user block of secretsite.test for kid, blockd.prom
  exists and root reads it, and kid2 either cannot read it or finds neither "secretsite" nor
  "kid" in it. (c) kid holds idle connections to the socket until the daemon refuses one
  (ERR busy: the per-user limit); then each of 30 `blockc status` as kid fails with the
  daemon's busy text ("busy" or "too many connections"), none with "Broken pipe", and so do 3
  more whose first socket write is made 0.3 s late by an LD_PRELOAD shim built here with gcc
  (SLOWSEND: a client on a loaded machine; whether blockc's request goes out before blockd
  closes the refused connection is otherwise a race, which the plain tries lost from 0 to
  about half the time before the fix); root's status still works (with the shim too, 0.3 s
  late), and kid's works again once the holder is gone. (b) With kid's own --lock block (and kid2's diary9) active, blockd and
  its socket stopped (--release refuses while a blockd runs on the state directory),
  `blockd --release` is refused with a message that names `blockc stop` and
  `--force-members`, and `blockd --release --force-members` succeeds. (Before: the refusal
  named only the block, and --force-members was an unknown option.)
Each item's breakage is its own failure; the others run. Figures: the seconds of each item,
the nftables rule on port 53 seen during the window, what kid's probes and texts were. Nothing
of the machine is touched (its /etc, users, network, clock, processes); the rig is stopped and
its scratch dir removed whatever happens (SUITE_SECONDS bounds the run; about 30 s, 20 of
them hole 3's limit).
Without root: skipped, unless BLOCKD_PRIVILEGED_TESTS=1, then failed."""
import json, os, re, subprocess, sys, time
import suite
from lib import Tally, wait_for
from sysrig import ENV, SystemRig

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SRC, BIN = "/blockd/src", "/blockd/bin"  # where the repository and BIN_DIR appear in the rig
KID, KID2, PARENT = "kid", "kid2", "parent"
NS = "bdoutsider"  # the second network namespace, made inside the rig
ALLOWED4, ALLOWED6 = "192.0.2.10", "2001:db8::10"
NAMESERVER4, NAMESERVER6 = "192.0.2.53", "2001:db8::53"  # listed in the rig's resolv.conf
STRAY4, STRAY6 = "192.0.2.60", "2001:db8::60"  # port 53 open, but no nameserver of the machine
TEST = "/opt/bdtest"
APPS = ("gameapp", "kapp", "k2app")
METRICS = "/var/lib/prometheus/node-exporter"
LIMIT = 20  # seconds of hole 3's machine-wide limit
BUSY_TRIES = 30  # kid's blockc status while kid holds every connection kid may have
SLOW, SLOW_TRIES = 0.3, 3  # ... and with its first socket write SLOW seconds late (SLOWSEND)
SUITE_SECONDS = 180

t = Tally("outsider")
bindir, _ = suite.begin(t, ["make", "gcc", "nft", "useradd", "groupadd", "journalctl", "python3"], SUITE_SECONDS, REPO)
rig = SystemRig(binds={SRC: REPO, BIN: bindir})
uids = {}

# Run in the second namespace: TCP servers that greet and close, and a UDP echo on port 53.
SERVERS = r"""
import socket, threading
def family(a):
    return socket.AF_INET6 if ":" in a else socket.AF_INET
def tcp(a, port):
    s = socket.socket(family(a), socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((a, port))
    s.listen(64)
    while True:
        c, _ = s.accept()
        try:
            c.sendall(b"hello\n")
        except OSError:
            pass
        c.close()
def udp(a, port):
    s = socket.socket(family(a), socket.SOCK_DGRAM)
    s.bind((a, port))
    while True:
        data, peer = s.recvfrom(2048)
        s.sendto(b"echo " + data, peer)
for a, port in (("192.0.2.10", 80), ("2001:db8::10", 80), ("192.0.2.60", 80), ("2001:db8::60", 80),
                ("192.0.2.60", 53), ("2001:db8::60", 53), ("192.0.2.60", 853), ("2001:db8::60", 853)):
    threading.Thread(target=tcp, args=(a, port), daemon=True).start()
for a in ("192.0.2.60", "2001:db8::60"):
    threading.Thread(target=udp, args=(a, 53), daemon=True).start()
threading.Event().wait()
"""

# Started as root in the rig: becomes USER (login uid, groups, gid, uid), then answers each
# JSON array on stdin with one JSON line: ["tcp", ADDR, PORT], ["udp", ADDR, PORT],
# ["dns", SERVER, NAME], ["run", N, SECONDS, APP] (N copies at once), ["raw", LINE] (one
# protocol line on blockd's socket). `probe.py USER hold` instead opens connections to the
# socket, each greeted with hello, until one is refused, prints how many and the refusal, and
# keeps them until stdin closes (at most 90 s).
PROBE = r"""
import errno, json, os, pwd, select, socket, struct, subprocess, sys, time
SOCK = "/run/blockd/blockd.sock"
user = sys.argv[1]
pw = pwd.getpwnam(user)
try:
    with open("/proc/self/loginuid", "w") as f:
        f.write(str(pw.pw_uid))
except OSError:
    pass
os.initgroups(user, pw.pw_gid)
os.setgid(pw.pw_gid)
os.setuid(pw.pw_uid)
def family(a):
    return socket.AF_INET6 if ":" in a else socket.AF_INET
def tcp(a, port):
    s = socket.socket(family(a), socket.SOCK_STREAM)
    s.settimeout(3)
    try:
        s.connect((a, int(port)))
        return "ok"
    finally:
        s.close()
def udp(a, port):
    s = socket.socket(family(a), socket.SOCK_DGRAM)
    s.settimeout(1.5)
    try:
        s.connect((a, int(port)))
        s.send(b"ping")
        return "answered" if s.recv(2048) == b"echo ping" else "odd"
    except socket.timeout:
        return "silent"
    finally:
        s.close()
def dns(server, name):
    q = struct.pack(">HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0)
    q += b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0" + struct.pack(">HH", 1, 1)
    s = socket.socket(family(server), socket.SOCK_DGRAM)
    s.settimeout(3)
    try:
        s.connect((server, 53))
        s.send(q)
        reply = s.recv(512)
    except socket.timeout:
        return "silent"
    finally:
        s.close()
    return "ok" if reply[:2] == q[:2] and struct.unpack(">H", reply[6:8])[0] >= 1 else "no answer"
def run(n, seconds, app):
    start, procs, out = time.monotonic(), [], []
    for _ in range(int(n)):
        try:
            procs.append(subprocess.Popen([app, str(seconds)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        except OSError as e:
            out.append(["denied", errno.errorcode.get(e.errno, str(e.errno)), 0])
    for p in procs:
        code = p.wait()
        out.append(["exit" if code >= 0 else "signal", abs(code), round(time.monotonic() - start, 2)])
    return out
def raw(line):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(SOCK)
    try:
        s.sendall(line.encode() + b"\n")
        return s.makefile("rb").readline().decode(errors="replace").strip()
    finally:
        s.close()
def hold():
    held, refusal = [], None
    for _ in range(200):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        try:
            s.connect(SOCK)
            s.sendall(b"hello\n")
            reply = s.makefile("rb").readline().decode(errors="replace").strip()
        except OSError as e:
            reply = "error " + str(e)
        if not reply.startswith("OK"):
            refusal = reply
            s.close()
            break
        held.append(s)
    print(json.dumps({"held": len(held), "refusal": refusal}), flush=True)
    select.select([sys.stdin], [], [], 90)
if sys.argv[2:] == ["hold"]:
    hold()
    sys.exit(0)
for line in sys.stdin:
    if not line.strip():
        continue
    cmd = json.loads(line)
    start = time.monotonic()
    try:
        result = {"tcp": tcp, "udp": udp, "dns": dns, "run": run, "raw": raw}[cmd[0]](*cmd[1:])
    except ConnectionRefusedError:
        result = "refused"
    except socket.timeout:
        result = "timeout"
    except OSError as e:
        result = "error " + errno.errorcode.get(e.errno or 0, type(e).__name__)
    print(json.dumps([result, round(time.monotonic() - start, 3)]), flush=True)
"""

# LD_PRELOAD'ed into blockc for hole 6c: its first write to a socket waits SLOW seconds, as a
# client on a loaded machine would, so blockd has sent ERR busy and closed the refused
# connection before the request goes out (otherwise a race, won by either side).
SLOWSEND = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
static int delayed;
static void slow(int fd) {  /* once: before the first write to a socket */
    struct stat st;
    if (__atomic_load_n(&delayed, __ATOMIC_SEQ_CST) || fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)
        || __atomic_exchange_n(&delayed, 1, __ATOMIC_SEQ_CST))
        return;
    struct timespec ts = {0, %d};
    nanosleep(&ts, 0);
}
typedef ssize_t (*sendto_f)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
typedef ssize_t (*send_f)(int, const void *, size_t, int);
typedef ssize_t (*sendmsg_f)(int, const struct msghdr *, int);
typedef ssize_t (*write_f)(int, const void *, size_t);
typedef ssize_t (*writev_f)(int, const struct iovec *, int);
ssize_t sendto(int fd, const void *b, size_t n, int f, const struct sockaddr *a, socklen_t l) {
    slow(fd);
    return ((sendto_f)dlsym(RTLD_NEXT, "sendto"))(fd, b, n, f, a, l);
}
ssize_t send(int fd, const void *b, size_t n, int f) {
    slow(fd);
    return ((send_f)dlsym(RTLD_NEXT, "send"))(fd, b, n, f);
}
ssize_t sendmsg(int fd, const struct msghdr *m, int f) {
    slow(fd);
    return ((sendmsg_f)dlsym(RTLD_NEXT, "sendmsg"))(fd, m, f);
}
ssize_t write(int fd, const void *b, size_t n) {
    slow(fd);
    return ((write_f)dlsym(RTLD_NEXT, "write"))(fd, b, n);
}
ssize_t writev(int fd, const struct iovec *v, int c) {
    slow(fd);
    return ((writev_f)dlsym(RTLD_NEXT, "writev"))(fd, v, c);
}
""" % int(SLOW * 1e9)


def run(*argv, **kw):
    return rig.run(*argv, check=False, **kw)


def must(*argv, **kw):
    return rig.run(*argv, check=True, **kw)


def blockc(*args, user=None):
    return run("blockc", *args, user=user)


def js(user, *args):
    return blockc(*args, "--json", user=user).json()


def probe(user, *commands, timeout=60):
    """Each command's [result, seconds], run as `user` by probe.py."""
    p = run("python3", f"{TEST}/probe.py", user, input="".join(json.dumps(c) + "\n" for c in commands), timeout=timeout)
    out = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("[")]
    if len(out) != len(commands):
        raise RuntimeError(f"probe.py as {user} answered {p.out[-800:]!r} to {commands}")
    return out


def one(user, *command, timeout=60):
    return probe(user, list(command), timeout=timeout)[0]


def journal():
    return run("journalctl", "-u", "blockd", "-o", "cat", "--no-pager").stdout.splitlines()


def local_window():
    """A daily window holding now in the rig's local time: an hour either side."""
    hh, mm = (int(x) for x in must("date", "+%H %M").stdout.split())
    minutes = hh * 60 + mm
    hhmm = lambda m: f"{(m // 60) % 24:02d}:{m % 60:02d}"
    return f"{hhmm(minutes - 60 + 1440)}-{hhmm(minutes + 60)}"


def activities(status):
    return {a.get("name"): a for a in status.get("activities", [])} if isinstance(status, dict) else {}


def listing(o):
    return o if isinstance(o, list) else []


# Setup ----------------------------------------------------------------------------------------

def setup():
    for group in ("blockd", "blockd-admin"):
        must("groupadd", "--system", "-f", group)
    for name, groups in ((KID, "blockd"), (KID2, "blockd"), (PARENT, "blockd,blockd-admin")):
        p = run("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "-G", groups, name)
        if p.rc != 0:
            raise RuntimeError(f"useradd {name} in the rig (a user of that name on this machine?): {p.out}")
        uids[name] = int(must("id", "-u", name).stdout)
    must("mkdir", "-p", TEST, "/etc/blockd/selections.d", "/etc/blockd/schedules.d", METRICS)
    for app in APPS:
        must("cp", "/bin/sleep", f"{TEST}/{app}")
        rig.write(f"/etc/blockd/selections.d/{app}.conf", f"[Selection]\nName={app}\nApps={TEST}/{app}\n")
    rig.write("/etc/blockd/blockd.conf", f"[Daemon]\nMetricsDirectory={METRICS}\n")
    rig.write(f"{TEST}/probe.py", PROBE)
    rig.write(f"{TEST}/servers.py", SERVERS)
    rig.write(f"{TEST}/slowsend.c", SLOWSEND)
    # The second network namespace, inside the rig's own.
    must("ip", "netns", "add", NS)
    must("ip", "link", "add", "bdo0", "type", "veth", "peer", "name", "bdo1", "netns", NS)
    must("ip", "addr", "add", "192.0.2.1/24", "dev", "bdo0")
    must("ip", "addr", "add", "2001:db8::1/64", "dev", "bdo0", "nodad")
    must("ip", "link", "set", "bdo0", "up")
    for address in (ALLOWED4, NAMESERVER4, STRAY4):
        must("ip", "-n", NS, "addr", "add", f"{address}/24", "dev", "bdo1")
    for address in (ALLOWED6, NAMESERVER6, STRAY6):
        must("ip", "-n", NS, "addr", "add", f"{address}/64", "dev", "bdo1", "nodad")
    must("ip", "-n", NS, "link", "set", "bdo1", "up")
    must("ip", "-n", NS, "link", "set", "lo", "up")
    inside = ["nsenter", f"--net=/run/netns/{NS}"]
    answers = [f"--address=/allowed.test/{ALLOWED4}", f"--address=/allowed.test/{ALLOWED6}"]
    must("systemd-run", "--quiet", "--unit=bdo-servers", "--service-type=exec", *inside, "python3", f"{TEST}/servers.py")
    must("systemd-run", "--quiet", "--unit=bdo-nameserver", "--service-type=exec", *inside, "dnsmasq", "--keep-in-foreground",
         "--no-resolv", "--no-hosts", f"--listen-address={NAMESERVER4}", f"--listen-address={NAMESERVER6}", "--bind-interfaces",
         *answers, "--user=root")
    must("systemd-run", "--quiet", "--unit=bdo-localdns", "--service-type=exec", "dnsmasq", "--keep-in-foreground", "--no-resolv",
         "--no-hosts", "--listen-address=127.0.0.1", "--bind-interfaces", *answers, "--user=root")
    rig.write("/etc/resolv.conf", f"nameserver 127.0.0.1\nnameserver {NAMESERVER4}\nnameserver {NAMESERVER6}\n")
    up = lambda: [r[0] for r in probe("root", ["tcp", ALLOWED4, 80], ["tcp", STRAY6, 53], ["udp", STRAY4, 53],
                                      ["dns", NAMESERVER4, "allowed.test"], ["dns", "127.0.0.1", "allowed.test"])]
    t.check(wait_for(lambda: up() == ["ok", "ok", "answered", "ok", "ok"], step=0.2),
            f"setup: the second namespace's servers and both nameservers answer through the veth pair: {up()}")
    p = run("make", "-C", SRC, "install", f"BINDIR_SRC={BIN}", timeout=120)
    if not t.check(p.rc == 0 and "blockd is running" in p.stdout, f"setup: make install BINDIR_SRC=... in the rig: {p.out[-1500:]}"):
        raise RuntimeError("make install failed: nothing else can be checked")
    r = blockc("status")
    t.check(r.rc == 0, f"setup: blockc status answers under the unit: {r.out}")


# 1 --------------------------------------------------------------------------------------------

PORT53 = [["tcp", STRAY4, 53], ["tcp", STRAY6, 53], ["udp", STRAY4, 53], ["udp", STRAY6, 53]]


def window_rule():
    w = js(None, "status").get("enforcement", {}).get("firewall", {}).get("allowOnly", [])
    return w if w and {ALLOWED4, ALLOWED6} <= set(w[0].get("addresses", [])) else None


def port53():
    before = probe(KID, *PORT53, ["tcp", STRAY4, 853], ["tcp", STRAY4, 80])
    t.figures["port53Before"] = before
    want = ["ok", "ok", "answered", "answered", "ok", "ok"]
    t.check([r[0] for r in before] == want,
            f"1 before the window kid reaches TCP/UDP 53 (v4, v6), TCP 853 and TCP 80 of {STRAY4}/{STRAY6}: {before} (want {want})")
    r = blockc("start", "--minutes", "5", "--name", "outside53", "--allow-only", "allowed.test", "--user", KID, user=PARENT)
    t.check(r.rc == 0, f"1 parent's blockc start --minutes 5 --allow-only allowed.test --user kid: {r.rc} {r.out}")
    rules = wait_for(window_rule, step=0.1)
    t.check(rules and rules[0].get("uids") == [uids[KID]], f"1 status lists kid's window with allowed.test's addresses: {rules}")
    table = run("nft", "list", "table", "inet", "blockd").stdout
    t.figures["port53Rules"] = [line.strip() for line in table.splitlines() if re.search(r"dport (\{ )?53\b", line)]
    got = probe(KID, ["tcp", ALLOWED4, 80], ["tcp", ALLOWED6, 80], ["tcp", STRAY4, 80], *PORT53,
                ["tcp", STRAY4, 853], ["tcp", STRAY6, 853], ["dns", NAMESERVER4, "allowed.test"], ["dns", NAMESERVER6, "allowed.test"])
    t.figures["port53During"] = got
    t.check(got[0][0] == "ok" and got[1][0] == "ok", f"1 during the window kid reaches allowed.test over IPv4 and IPv6: {got[:2]}")
    t.check(got[2][0] == "refused", f"1 during the window kid is refused by {STRAY4}:80 (the window holds): {got[2]}")
    for (cmd, address, port), (result, seconds) in zip(PORT53, got[3:7]):
        if cmd == "tcp":
            t.check(result == "refused" and seconds < 0.5,
                    f"1 port 53: kid's TCP connect to {address}:53 (not a nameserver of the machine) is refused at once: {result} in {seconds} s")
        else:
            t.check(result != "answered" and result != "odd",  # silent, refused, or EPERM from the local reject
                    f"1 port 53: kid's UDP datagram to {address}:53 (not a nameserver of the machine) gets no answer: {result}")
    for (result, seconds), address in zip(got[7:9], (STRAY4, STRAY6)):
        t.check(result == "refused" and seconds < 0.5, f"1 DoT: kid's TCP connect to {address}:853 is refused at once: {result} in {seconds} s")
    t.check(got[9][0] == "ok", f"1 kid's DNS query to the machine's nameserver {NAMESERVER4} (in resolv.conf) is answered: {got[9]}")
    t.figures["dnsToNameserver6"] = got[10][0]
    parent = probe(PARENT, ["tcp", STRAY4, 53], ["tcp", STRAY4, 80])
    t.check([r[0] for r in parent] == ["ok", "ok"], f"1 the parent, outside kid's window, reaches {STRAY4}:53 and :80: {parent}")
    r = blockc("stop", "outside53", user=PARENT)
    t.check(r.rc == 0, f"1 parent's blockc stop outside53: {r.rc} {r.out}")
    t.check(wait_for(lambda: not window_rule(), step=0.1), "1 after the stop status lists no window")
    after = probe(KID, *PORT53, ["tcp", STRAY4, 80])
    t.check([r[0] for r in after] == ["ok", "ok", "answered", "answered", "ok"],
            f"1 after blockc stop kid reaches TCP/UDP 53 and TCP 80 of {STRAY4}/{STRAY6} again: {after}")


# 2 --------------------------------------------------------------------------------------------

def with_json(user, *args):
    """`blockc ARGS --json` as `user`, or ARGS alone when this blockc has no --json there."""
    r = blockc(*args, "--json", user=user)
    if r.rc == 2 and "not an option" in r.out:
        t.figures.setdefault("noJsonFor", []).append(" ".join(args[:2]))
        r = blockc(*args, user=user)
    return r


def document(text):
    """The JSON document of a reply (a protocol line's `OK {...}`, or blockc --json), or None."""
    text = text.strip()
    try:
        doc = json.loads(text[3:] if text.startswith("OK ") else text)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def describes(text, mine, theirs):
    """What is wrong with `text` as kid's answer: `mine` {field: kid's value} must be there,
    `theirs` {field: kid2's value} must not. A JSON document is judged by its fields (and
    kid2's name and selections nowhere in it); a sentence by the values' words in it."""
    doc, wrong = document(text), []
    if doc is not None:
        wrong += [f"{k}={doc.get(k)!r}, not {v!r}" for k, v in mine.items() if doc.get(k) != v]
        wrong += [f"{k}={doc.get(k)!r} is kid2's" for k, v in theirs.items() if doc.get(k) == v]
        owners = [doc.get("uid"), *(doc.get("userIds") or []), *(doc.get("users") or [])]
        wrong += ["kid2 among its owners or users"] if uids[KID2] in owners or KID2 in owners else []
        wrong += [f"{w!r} in it" for w in ("kid2", *[x for v in theirs.values() if isinstance(v, list) for x in v]) if w in text]
        return wrong
    said = lambda v: [v] if isinstance(v, str) else v if isinstance(v, list) else []
    words = {"name": lambda v: [v], "window": lambda v: v.split("-")[:1], "limit": lambda v: [f"{v // 60}m"]}
    for k, v in mine.items():
        wrong += [f"no {w!r}" for w in words.get(k, said)(v) if w not in text]
    for k, v in theirs.items():
        wrong += [f"{w!r} (kid2's {k})" for w in words.get(k, said)(v) if w in text]
    return wrong + (["'kid2'"] if "kid2" in text else [])


def member_replies():
    """kid2's activity first; then kid's of the same name, through blockc and on the wire."""
    kid2_schedule = {"window": "03:00-04:00", "selections": ["alpha.example"]}
    kid_schedule = {"window": "05:00-06:00", "selections": ["bravo.example"]}
    kid2_limit, kid_limit = {"limit": 2700, "selections": ["k2app"]}, {"limit": 600, "selections": ["kapp"]}
    for name, how in (("secret", "blockc"), ("wiresecret", "the protocol")):
        r = blockc("schedule", "add", name, "--daily", "03:00-04:00", "alpha.example", user=KID2)
        t.check(r.rc == 0, f"2 kid2's blockc schedule add {name} --daily 03:00-04:00 alpha.example: {r.rc} {r.out}")
        if how == "blockc":
            r = with_json(KID, "schedule", "add", name, "--daily", "05:00-06:00", "bravo.example")
            ok, reply = r.rc == 0, r.out
        else:
            reply = one(KID, "raw", "schedule-add " + json.dumps({"name": name, **kid_schedule}))[0]
            ok = reply.startswith("OK ")
        t.figures[f"kidScheduleAdd ({how})"] = reply
        wrong = describes(reply, {"name": f"kid/{name}", **kid_schedule}, kid2_schedule)
        t.check(ok and not wrong, f"2 kid's schedule add {name} --daily 05:00-06:00 bravo.example through {how} answers with kid/{name} "
                                  f"(kid's window and selection), nothing of kid2's: {reply!r} ({'; '.join(wrong)})")
    listed = activities({"activities": listing(js(None, "schedule", "list"))})
    t.check(listed.get("kid/secret", {}).get("selections") == ["bravo.example"] and listed.get("secret", {}).get("uid") == uids[KID2],
            f"2 blockd made kid's kid/secret (bravo.example) beside kid2's secret: {sorted(listed)}")
    for name, how in (("secretlim", "blockc"), ("wirelim", "the protocol")):
        r = blockc("limit", "add", name, "45m", "k2app", user=KID2)
        t.check(r.rc == 0, f"2 kid2's blockc limit add {name} 45m k2app: {r.rc} {r.out}")
        if how == "blockc":
            r = with_json(KID, "limit", "add", name, "10m", "kapp")
            ok, reply = r.rc == 0, r.out
        else:
            reply = one(KID, "raw", "limit-add " + json.dumps({"name": name, "seconds": 600, "selections": ["kapp"]}))[0]
            ok = reply.startswith("OK ")
        t.figures[f"kidLimitAdd ({how})"] = reply
        wrong = describes(reply, {"name": f"kid/{name}", **kid_limit}, kid2_limit)
        t.check(ok and not wrong, f"2 kid's limit add {name} 10m kapp through {how} answers with kid/{name} (10m of kapp), "
                                  f"nothing of kid2's: {reply!r} ({'; '.join(wrong)})")


# 3 --------------------------------------------------------------------------------------------

def ran(user, copies, seconds):
    """[["exit"|"signal", code, seconds] or ["denied", errno name, 0], ...] of `copies` copies
    of gameapp run at once by `user` for `seconds`."""
    result = one(user, "run", copies, seconds, f"{TEST}/gameapp", timeout=seconds + 30)[0]
    return result if isinstance(result, list) else [[result, None, 0]]


def used(user, name="shared"):
    entry = [x for x in listing(js(user, "limit", "list")) if x.get("name") == name]
    return entry[0].get("used") if entry else None


def at_the_screen(user):
    """A login session of `user`'s through PAM (a text login, no seat: logind counts it active),
    so that blockd counts `user` as at the screen: the report counts a person's apps only then
    (R1). Returns the unit to stop."""
    unit = f"bd-outsider-session-{user}"
    rig.login(unit, user, "tty", ["/bin/sleep", "infinity"])
    return unit


def limit_per_person():
    app = f"{TEST}/gameapp"
    screen = at_the_screen(KID)  # kid's apps count in kid's report while kid is at the screen
    r = blockc("limit", "add", "shared", f"{LIMIT}s", "gameapp")
    t.check(r.rc == 0, f"3 root's blockc limit add shared {LIMIT}s gameapp (for everyone): {r.rc} {r.out}")
    kid2_ran = ran(KID2, 1, 6)
    t.check(len(kid2_ran) == 1 and kid2_ran[0][:2] == ["exit", 0], f"3 kid2 runs the app for 6 s, to its end: {kid2_ran}")
    kid2_seconds = kid2_ran[0][2] if kid2_ran else 0
    kid_ran = ran(KID, 2, 45)
    t.figures["kidRan"], t.figures["kid2Ran"] = kid_ran, kid2_ran
    kid_seconds = max((x[2] for x in kid_ran), default=0)
    t.check(len(kid_ran) == 2 and all(x[0] == "signal" for x in kid_ran),
            f"3 kid's two copies of the app are stopped by the limit: {kid_ran}")
    t.check(LIMIT - 2 <= kid_seconds <= LIMIT + 5,
            f"3 kid's two copies at once ran {kid_seconds} s before the limit stopped them: kid's own {LIMIT} s "
            f"(two processes not counted twice, kid2's {kid2_seconds} s not counted against kid)")
    t.figures["usedAfter"] = {u: used(u) for u in (KID, KID2, PARENT)}
    launches = {u: ran(u, 1, 0.5) for u in (KID, PARENT, KID2)}
    t.figures["launchesAfter"] = launches
    kid = launches[KID][0] if launches[KID] else None
    t.check(kid and kid[0] == "denied" and kid[1] in ("EPERM", "EACCES"), f"3 kid's new launch of the app is refused (EPERM/EACCES): {kid}")
    for who in (PARENT, KID2):
        got = launches[who][0] if launches[who] else None
        t.check(got and got[:2] == ["exit", 0], f"3 {who}'s launch of the app runs (a limit for everyone is per person): {got}")
    mine, theirs, parents = t.figures["usedAfter"][KID], t.figures["usedAfter"][KID2], t.figures["usedAfter"][PARENT]
    t.check(mine is not None and mine >= LIMIT - 1 and abs(mine - kid_seconds) <= 3,
            f"3 kid's limit list --json: shared used is kid's own ~{kid_seconds} s (>= {LIMIT - 1}): {mine}")
    t.check(theirs is not None and abs(theirs - kid2_seconds) <= 3 and theirs < LIMIT,
            f"3 kid2's limit list --json: shared used is kid2's own ~{kid2_seconds} s: {theirs}")
    t.check(parents is not None and parents <= 2, f"3 the parent's limit list --json: shared used is the parent's own 0 s: {parents}")
    report = js(KID, "report")
    today = (report.get("days") or [{}])[-1] if isinstance(report, dict) else {}
    seconds = {"apps": today.get("apps", {}).get(app), "used": today.get("used", {}).get("gameapp"),
               "limit": today.get("limits", {}).get("shared", {}).get("used")}
    t.figures["kidReport"] = seconds
    t.check(all(v is not None and v <= kid_seconds + 3 for v in seconds.values()) and report.get("user") == uids[KID],
            f"3 kid's report --json counts kid's own ~{kid_seconds} s of gameapp and none of kid2's or the parent's: {seconds}")
    run("systemctl", "stop", screen)


# 4 --------------------------------------------------------------------------------------------

SCHEDULES = "/etc/blockd/schedules.d"


def bedtime_active():
    return activities(js(None, "status", "--user", KID)).get("bedtime", {}).get("active") is True


def config_symlinks():
    text = f"[Schedule]\nName=bedtime\nWindow={local_window()}\nSelections=instagram\nUsers={KID}\n"
    cases = [("loop.conf", "loop.conf"), ("dangling.conf", "/nonexistent"), ("bedtime.conf", "bedtime.conf"),
             ("bedtime.conf", "/nonexistent")]
    t.figures["checkConfig"] = {}
    for name, target in cases:
        what = f"{name} -> {target}"
        path = f"{SCHEDULES}/{name}"
        run("rm", "-f", path)
        rig.write(f"{SCHEDULES}/bedtime.conf", text)
        r = blockc("reload")
        t.check(r.rc == 0 and wait_for(bedtime_active, step=0.1),
                f"4 ({what}) before: bedtime.conf reloaded, bedtime active for kid: {r.rc} {r.out}")
        seen = len(journal())
        if name == "bedtime.conf":
            must("mv", path, "/etc/blockd/bedtime.conf.kept")
        must("ln", "-s", target, path)
        r = run("/usr/local/bin/blockd", "--check-config")
        t.figures["checkConfig"][what] = f"{r.rc} {r.out[:300]}"
        t.check(r.rc == 1 and "cannot be read" in r.out and path in r.out,
                f"4 ({what}) blockd --check-config exits 1 saying {path} cannot be read: {r.rc} {r.out[:400]!r}")
        r = blockc("reload")
        t.check(r.rc != 0, f"4 ({what}) blockc reload fails: {r.rc} {r.out!r}")
        time.sleep(1)  # what the reload did is in status and the journal by now
        t.check(bedtime_active(), f"4 ({what}) bedtime is still active for kid: {activities(js(None, 'status', '--user', KID)).get('bedtime')}")
        ended = [m for m in journal()[seen:] if "schedule 'bedtime' ended" in m]
        t.check(not ended, f"4 ({what}) the journal has no \"schedule 'bedtime' ended\": {ended}")
        run("rm", "-f", path)
        run("rm", "-f", "/etc/blockd/bedtime.conf.kept")
    rig.write(f"{SCHEDULES}/bedtime.conf", text)
    blockc("reload")


# 5 --------------------------------------------------------------------------------------------

def same_failure(what, theirs, name, fake):
    """kid's command on kid2's `name` against the same on `fake`, a name nobody has."""
    real, none = blockc(*theirs, name, user=KID), blockc(*theirs, fake, user=KID)
    t.figures.setdefault("errorTexts", {})[what] = [real.rc, real.stderr.strip(), none.rc, none.stderr.strip()]
    t.check(real.rc != 0 and real.rc == none.rc and real.stderr.replace(name, "NAME") == none.stderr.replace(fake, "NAME"),
            f"5 kid's blockc {' '.join(theirs)} {name} fails as on a name that does not exist: "
            f"{real.rc} {real.stderr.strip()!r} against {none.rc} {none.stderr.strip()!r}")
    said = [w for w in ("kid2", "belongs", "--lock", "asked") if w in real.out] + (["lock"] if re.search(r"\block\b", real.out) else [])
    t.check(not said, f"5 kid's blockc {' '.join(theirs)} {name} says nothing of kid2's ({said}): {real.out!r}")


def request_ids():
    o = js(PARENT, "requests")
    return {r.get("user"): r.get("id") for r in (o.get("requests", []) if isinstance(o, dict) else [])}


def member_errors():
    r = blockc("start", "--minutes", "5", "--name", "k2", "k2site.example", user=KID2)
    t.check(r.rc == 0, f"5 kid2's blockc start --minutes 5 --name k2 k2site.example: {r.rc} {r.out}")
    r = blockc("start", "--minutes", "5", "--lock", "--name", "diary9", "diary.example", user=KID2)
    t.check(r.rc == 0, f"5 kid2's blockc start --minutes 5 --lock --name diary9 diary.example: {r.rc} {r.out}")
    r = blockc("schedule", "add", "famsite", "--daily", local_window(), "--user", KID, "--user", KID2, "--more-time", "approval",
               "famsite.example", user=PARENT)
    t.check(r.rc == 0, f"5 parent's blockc schedule add famsite --user kid --user kid2 --more-time approval famsite.example: {r.rc} {r.out}")
    for who in (KID2, KID):
        r = blockc("more", "famsite.example", "--today", user=who)
        t.check(r.rc == 0 and "Asked" in r.out, f"5 {who}'s blockc more famsite.example --today leaves a request: {r.rc} {r.out}")
    ids = request_ids()
    t.figures["requestIds"] = ids
    theirs, mine = ids.get(KID2), ids.get(KID)
    if not t.check(theirs and mine, f"5 the parent's requests --json list kid2's and kid's requests: {ids}"):
        return
    parts = [(x[:1], x[1:]) for x in (theirs, mine)]  # the one-letter prefix (m), then the rest
    numbers = [int(rest) for _, rest in parts if rest.isdigit()]
    t.check(all(len(rest) >= 6 for _, rest in parts) and not (len(numbers) == 2 and abs(numbers[0] - numbers[1]) <= 1),
            f"5 request ids are not guessable: kid2's {theirs!r} and kid's {mine!r}, asked one after the other, "
            f"have 6 or more characters after their prefix and are not consecutive numbers")
    same_failure("stop k2", ["stop"], "k2", "nosuch7q")
    same_failure("stop diary9", ["stop"], "diary9", "nosuch7q")
    prefix, rest = parts[0]
    fake = next(x for x in (prefix + rest[::-1], prefix + "9" * (len(rest) + 1), prefix + "x" * len(rest)) if x not in ids.values())
    same_failure("cancel", ["cancel"], theirs, fake)
    every = activities(js(None, "status", "--all-users"))
    t.check({"k2", "diary9"} <= set(every) and request_ids().get(KID2) == theirs,
            f"5 kid's refused commands changed nothing: kid2's k2, diary9 and request {theirs} are still there: {sorted(every)} {request_ids()}")


# 6 --------------------------------------------------------------------------------------------

def metrics():
    prom = f"{METRICS}/blockd.prom"
    before = run("cat", prom).stdout
    r = blockc("start", "--minutes", "5", "--user", KID, "--name", "sec", "secretsite.test", user=PARENT)
    t.check(r.rc == 0, f"6a parent's blockc start --minutes 5 --user kid secretsite.test: {r.rc} {r.out}")
    t.check(wait_for(lambda: run("cat", prom).stdout not in ("", before), step=0.1), f"6a {prom} is rewritten after the start")
    time.sleep(0.3)
    root = run("cat", prom)
    t.figures["promMode"] = run("stat", "-c", "%a %U:%G", prom).stdout.strip()
    t.check(root.rc == 0 and "blockd_" in root.stdout, f"6a {prom} exists and root reads it: {root.rc} {root.out[:200]}")
    kid2 = run("cat", prom, user=KID2)
    leaked = [w for w in ("secretsite", "kid") if kid2.rc == 0 and w in kid2.stdout]
    t.figures["promForKid2"] = "denied" if kid2.rc != 0 else f"read, {leaked or 'nothing'} of kid's"
    t.check((kid2.rc != 0 and "Permission denied" in kid2.stderr) or (kid2.rc == 0 and not leaked),
            f"6a kid2 cannot read blockd.prom, or finds neither 'secretsite' nor 'kid' in it: rc {kid2.rc}, found {leaked} "
            f"{[x for x in kid2.stdout.splitlines() if 'secretsite' in x or 'kid' in x][:3]}")


def said_busy(r):
    return r.rc != 0 and ("busy" in r.out or "too many connections" in r.out) and "Broken pipe" not in r.out


def tally(results):
    out = {}
    for r in results:
        out[f"{r.rc} {r.out}"] = out.get(f"{r.rc} {r.out}", 0) + 1
    return out


def busy():
    must("gcc", "-shared", "-fPIC", "-O2", "-o", f"{TEST}/slowsend.so", f"{TEST}/slowsend.c", "-ldl")
    slow = ("env", f"LD_PRELOAD={TEST}/slowsend.so")
    start = time.monotonic()
    r = run(*slow, "blockc", "status")
    t.check(r.rc == 0 and time.monotonic() - start >= SLOW, f"6c root's blockc status with the slow-send shim works, "
            f"{SLOW} s late: {r.rc} in {time.monotonic() - start:.2f} s {r.out[:200]}")
    holder = subprocess.Popen([*rig.enter(), "--", "python3", f"{TEST}/probe.py", KID, "hold"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=dict(ENV))
    try:
        line = holder.stdout.readline()
        held = json.loads(line) if line.startswith("{") else {}
        t.figures["held"] = held
        t.check(held.get("held", 0) >= 1 and str(held.get("refusal")).startswith("ERR busy"),
                f"6c kid holds idle connections until the daemon refuses one with ERR busy: {held or line!r}")
        tries = [blockc("status", user=KID) for _ in range(BUSY_TRIES)]
        t.figures["statusWhenBusy"] = tally(tries)
        t.check(all(said_busy(r) for r in tries), f"6c each of kid's {BUSY_TRIES} blockc status over the limit fails with the "
                f"daemon's busy text, not Broken pipe: {t.figures['statusWhenBusy']}")
        slowed = [run(*slow, "blockc", "status", user=KID) for _ in range(SLOW_TRIES)]
        t.figures["slowStatusWhenBusy"] = tally(slowed)
        t.check(all(said_busy(r) for r in slowed), f"6c each of kid's {SLOW_TRIES} blockc status over the limit, its request "
                f"sent {SLOW} s after connecting (blockd has closed the refused connection by then), fails with the daemon's "
                f"busy text, not Broken pipe: {t.figures['slowStatusWhenBusy']}")
        r = blockc("status")
        t.check(r.rc == 0, f"6c root's blockc status still works: {r.rc} {r.out[:200]}")
    finally:
        holder.stdin.close()
        try:
            holder.wait(10)
        except subprocess.TimeoutExpired:
            holder.kill()
            holder.wait(5)
    t.check(wait_for(lambda: blockc("status", user=KID).rc == 0, step=0.2), "6c kid's blockc status works again once the holder is gone")


def release():
    r = blockc("start", "--minutes", "5", "--lock", "--name", "kidlock", "lockme.example", user=KID)
    t.check(r.rc == 0, f"6b kid's own blockc start --minutes 5 --lock --name kidlock lockme.example: {r.rc} {r.out}")
    r = run("systemctl", "stop", "blockd", "blockd.socket")
    t.check(r.rc == 0, f"6b systemctl stop blockd blockd.socket: {r.rc} {r.out}")
    r = run("/usr/local/bin/blockd", "--release")
    t.figures["release"] = [r.rc, r.out]
    t.check(r.rc != 0, f"6b blockd --release with kid's --lock block active is refused: {r.rc} {r.out!r}")
    t.check("blockc stop" in r.out and "--force-members" in r.out,
            f"6b the refusal names blockc stop and --force-members: {r.out!r}")
    r = run("/usr/local/bin/blockd", "--release", "--force-members")
    t.figures["releaseForce"] = [r.rc, r.out]
    t.check(r.rc == 0, f"6b blockd --release --force-members succeeds: {r.rc} {r.out!r}")


ITEMS = [("1 allow-only port 53", port53), ("2 member replies", member_replies), ("3 limit per person", limit_per_person),
         ("4 config symlinks", config_symlinks), ("5 member errors", member_errors), ("6a metrics", metrics),
         ("6c busy", busy), ("6b release", release)]

suite.run_items(t, rig, setup, ITEMS)
