"""U1-U3 end to end, as a family would try it (root only), inside the private mount + network +
PID namespace of torture/rig.py: an overlay over /etc (the machine's /etc/hosts, nsswitch.conf,
passwd and group are never written) and a tmpfs over /run (the per-user tables are the
namespace's own).

    python3 torture/users.py BIN_DIR

- Throwaway users in the overlay's /etc/passwd: `kid` (member of group blockd) and `parent`
  (member of blockd and blockd-admin); the groups are created there if missing.
- libnss_blockd.so.2 placed as torture/nss.py does, `hosts: blockd files dns` in the overlay's
  nsswitch.conf; the overlay's /etc/hosts gives youtube's, steam's and instagram's names
  127.0.0.1, where a web server listens (TLS: youtube.com is on Chromium's HSTS preload list).
- The real blockd with its state, socket and `--hosts-file /etc/hosts` (the overlay's).
- As root: `blockc schedule add bedtime --daily HH:MM-HH:MM --user kid youtube steam`, with a
  window that holds now (21:00-07:00 when now is in it). Then `getent ahosts` as kid gives the
  sink, as parent and root 127.0.0.1; the hosts section does not name youtube.com; status as
  root (--all-users) and the parent (blockd-admin: plain status is everyone's, each block
  with whom it is for) show every user's blocks, kid and `--user parent` each their own; headless Chromium as kid is
  refused and as parent loads the page.
- §5 for a plain member: kid's `blockc start --user parent` is refused, kid's own start is
  scoped to kid; kid cannot see the others' blocks.
- U2 on the wire: `blockc watch --json` as kid gets bedtime's lock (for kid); a block for
  everyone started over it is news for the parent ("except": kid), and its end too, while
  kid's watch says nothing and kid stays blocked.
- `blockc schedule remove bedtime`: kid resolves youtube.com again and Chromium loads it.
Without root this prints a skipped RESULT; with BLOCKD_PRIVILEGED_TESTS=1 anything missing fails."""
import ctypes, json, os, pwd, ssl, sys, time
from lib import Tally, as_user, sh, wait_for
from rig import Rig, enter
from asuser import REPO, chromium, getent, install_module, page_handler, throwaway_users

t = Tally("users")
bindir = os.path.abspath(sys.argv[1])
enter(t, ["chromium", "gcc", "make", "perl", "dnsmasq", "ip", "unshare", "setpriv", "useradd", "groupadd", "getent", "findmnt", "openssl"],
      "needs root for a private mount and network namespace and throwaway users", timeout=360)

KID, PARENT = "kid", "parent"
PORT = 8123
NAMES = ("youtube.com", "www.youtube.com", "store.steampowered.com", "instagram.com")
SINK = {"127.0.0.253", "100::1"}


def window():
    """The bedtime window: the issue's 21:00-07:00 when now is well inside it, else from an
    hour ago to an hour from now (local time, as blockd reads it: T7)."""
    now = time.localtime()
    minutes = now.tm_hour * 60 + now.tm_min
    if minutes >= 21 * 60 or minutes < 6 * 60 + 30:
        return "21:00-07:00"
    hhmm = lambda m: f"{(m // 60) % 24:02d}:{m % 60:02d}"
    return f"{hhmm(minutes - 60 + 1440)}-{hhmm(minutes + 60)}"


def setup(rig):
    """Users, groups, the module, nsswitch.conf, /etc/hosts and /run: all in the namespace."""
    throwaway_users({KID: "blockd", PARENT: "blockd,blockd-admin"})
    install_module(rig.work, bindir)
    sh("mount", "-t", "tmpfs", "-o", "mode=0755,size=4m", "tmpfs", "/run")
    if sh("findmnt", "-n", "-o", "FSTYPE", "/run").stdout.strip() != "tmpfs":
        raise RuntimeError("/run is not the test's tmpfs: refusing to go on")
    with open("/etc/nsswitch.conf", "rb") as f:
        lines = [line for line in f.read().split(b"\n") if not line.lstrip().startswith(b"hosts")]
    with open("/etc/nsswitch.conf", "wb") as f:
        f.write(b"\n".join(lines).rstrip(b"\n") + b"\nhosts:          files dns\n")
    t.check(sh(f"{REPO}/scripts/nsswitch", "add", "/etc/nsswitch.conf").stdout == "added\n", "scripts/nsswitch adds blockd")
    with open("/etc/nsswitch.conf") as f:
        hosts_line = [x for x in f.read().splitlines() if x.startswith("hosts:")]
    t.check(hosts_line == ["hosts:          blockd files dns"], f"the overlay's nsswitch.conf: {hosts_line}")
    with open("/etc/hosts", "a") as f:
        f.write("127.0.0.1 " + " ".join(NAMES) + "\n")
    serve_tls(rig)
    os.chmod(rig.work, 0o711)  # the socket's own mode and group decide who connects


def serve_tls(rig):
    """youtube.com's page over TLS (self-signed): youtube.com is on Chromium's HSTS preload
    list, so Chromium asks for https whatever the URL says; it is told to accept the test's
    certificate. The server is made before a client can connect, then its socket wrapped."""
    key, cert = f"{rig.work}/key.pem", f"{rig.work}/cert.pem"
    sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1",
       "-subj", "/CN=youtube.com", "-addext", "subjectAltName=DNS:youtube.com,DNS:www.youtube.com")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = rig.serve("127.0.0.1", page_handler(b"VIDEO-OK"), PORT)
    server.socket = context.wrap_socket(server.socket, server_side=True)


def view(d, user, *args):
    return d.blockc("status", "--json", *args, user=user, check=False).json()


def blocked(status):
    return {b["selection"]: b.get("users") for b in status.get("blocked", [])}


def table(user):
    try:
        with open(f"/run/blockd/users/{pwd.getpwnam(user).pw_uid}") as f:
            return f.read()
    except OSError:
        return ""


def section(path="/etc/hosts"):
    with open(path) as f:
        text = f.read()
    start = text.find("# BEGIN blockd")
    return text[start:text.find("# END blockd", start)] if start >= 0 else ""


def page(user):
    return chromium(user, f"https://youtube.com:{PORT}/", "bd-users", ["--ignore-certificate-errors"])


def bedtime(d, hours):
    r = d.blockc("schedule", "add", "bedtime", "--daily", hours, "--user", KID, "youtube", "steam", check=False)
    t.check(r.rc == 0, f"blockc schedule add bedtime --daily {hours} --user kid youtube steam: {r.out}")
    t.check(wait_for(lambda: "\nyoutube.com\n" in f"\n{table(KID)}"), f"kid's table lists youtube.com: {table(KID)!r}")
    t.check("store.steampowered.com" in table(KID).split(), "kid's table lists store.steampowered.com (steam)")
    t.check(not os.path.exists(f"/run/blockd/users/{pwd.getpwnam(PARENT).pw_uid}"), "parent has no table")
    for name in ("youtube.com", "www.youtube.com", "store.steampowered.com"):
        got = {who: getent(who, name) for who in (KID, PARENT, "root")}
        t.check(got[KID] == SINK, f"getent ahosts {name} as kid gives the sink: {got[KID]}")
        t.check(got[PARENT] == {"127.0.0.1"} and got["root"] == {"127.0.0.1"}, f"getent ahosts {name} as parent and root: {got}")
    t.check("youtube.com" not in section() and "steampowered" not in section(), f"the hosts section names neither: {section()!r}")

    every = view(d, None, "--all-users")
    mine = [a for a in every.get("activities", []) if a.get("name") == "bedtime"]
    t.check(len(mine) == 1 and mine[0].get("users") == [KID], f"status --all-users --json: bedtime for [kid]: {mine or every}")
    t.check(blocked(every).get("youtube") == [KID] and blocked(every).get("steam") == [KID],
            f"status --all-users --json: youtube and steam blocked for [kid]: {blocked(every)}")
    kid = view(d, KID)
    # Apps per user are the exec shield's (not this suite's): what it says of steam is a figure.
    t.figures["kidNotEnforced"] = kid.get("enforcement", {}).get("notEnforced")
    t.check({"youtube", "steam"} <= set(blocked(kid)), f"kid's blockc status --json: youtube and steam blocked: {kid}")
    r = d.blockc("status", user=KID, check=False)
    t.check(r.rc == 0 and "youtube" in r.out and "steam" in r.out, f"kid's blockc status names youtube and steam: {r.out}")
    # U2: an administrator's plain status is everyone's, each block with whom it is for;
    # --user parent is what the parent sees (not blocked for them).
    parent = view(d, PARENT)
    t.check(blocked(parent).get("youtube") == [KID] and blocked(parent).get("steam") == [KID],
            f"parent's (blockd-admin) blockc status --json: youtube and steam blocked for [kid]: {blocked(parent)}")
    r = d.blockc("status", user=PARENT, check=False)
    t.check(r.rc == 0 and "Blocked now for kid" in r.out and "youtube" in r.out, f"parent's blockc status shows kid's bedtime, for kid: {r.out}")
    own = view(d, PARENT, "--user", PARENT)
    t.check("error" not in own and not {"youtube", "steam"} & set(blocked(own)), f"parent's status --user parent: not blocked for them: {own}")
    r = d.blockc("status", "--user", PARENT, user=PARENT, check=False)
    t.check(r.rc == 0 and "youtube" not in r.out.split("Activities")[0], f"parent's blockc status --user parent does not list youtube as blocked: {r.out}")
    t.check("youtube" in blocked(view(d, PARENT, "--user", KID)), "parent (blockd-admin) sees kid's view with --user kid")
    for args in (("--all-users",), ("--user", PARENT)):
        r = d.blockc("status", *args, user=KID, check=False)
        t.check(r.rc != 0 and "only root and members of group 'blockd-admin'" in r.out, f"kid's status {' '.join(args)} is refused: {r.rc} {r.out}")

    dom_kid, dom_parent = page(KID), page(PARENT)
    t.check("VIDEO-OK" in dom_parent, f"Chromium as parent loads https://youtube.com:{PORT}/: {dom_parent[-300:]}")
    t.check("VIDEO-OK" not in dom_kid and "ERR_CONNECTION_REFUSED" in dom_kid, f"Chromium as kid is refused (the sink): {dom_kid[-300:]}")
    t.figures["chromium"] = {"kid": "refused" if "ERR_CONNECTION_REFUSED" in dom_kid else "loaded" if "VIDEO-OK" in dom_kid else "other",
                             "parent": "loaded" if "VIDEO-OK" in dom_parent else "not loaded"}


def member(d):
    """§5 for a plain member of blockd: only themselves."""
    r = d.blockc("start", "--for", "1m", "--user", PARENT, "instagram", user=KID, check=False)
    t.check(r.rc != 0 and "may block only for themselves" in r.out, f"kid's blockc start --for 1m --user parent instagram is refused: {r.rc} {r.out}")
    r = d.blockc("start", "--for", "1m", "instagram", user=KID, check=False)
    t.check(r.rc == 0, f"kid's own blockc start --for 1m instagram: {r.out}")
    every = view(d, None, "--all-users")
    own = [a for a in every.get("activities", []) if "instagram" in a.get("selections", [])]
    t.check(len(own) == 1 and own[0].get("users") == [KID], f"kid's block is scoped to [kid]: {own or every}")
    t.check(getent(KID, "instagram.com") == SINK and getent(PARENT, "instagram.com") == {"127.0.0.1"},
            "instagram.com: the sink for kid, 127.0.0.1 for parent")
    r = d.blockc("schedule", "remove", "bedtime", user=KID, check=False)
    t.check(r.rc != 0 and "only root may remove it" in r.out, f"kid cannot remove the bedtime schedule root made for them: {r.rc} {r.out}")


class Watcher:
    """`blockc watch --json` as `user`, its events collected on a thread."""
    def __init__(self, d, user):
        import subprocess, threading
        argv = [f"{bindir}/blockc", "--socket", f"{d.work}/s.sock", "watch", "--json"]
        self.proc = subprocess.Popen(as_user(user, *argv), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.events = []
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in self.proc.stdout:
            try:
                self.events.append(json.loads(line))
            except ValueError:
                pass

    def about(self, selection, since=0):
        return [(e.get("event"), e.get("reasons"), e.get("users"), e.get("except"))
                for e in self.events[since:] if e.get("selection") == selection and e.get("event") in ("lock", "unlock")]

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def views(d, kids, parents):
    """U2 per user, on the wire: each user's view of youtube changes on its own. kid is told of
    bedtime, and of nothing when a block for everyone comes and goes over it; the parent (an
    administrator, who gets every event) sees that block as news for everyone but kid."""
    kid_uid = pwd.getpwnam(KID).pw_uid
    t.check(wait_for(lambda: kids.about("youtube")) and kids.about("youtube")[0] == ("lock", ["bedtime"], [kid_uid], None),
            f"kid's watch: bedtime's lock of youtube, for kid: {kids.about('youtube')}")
    k0, p0 = len(kids.events), len(parents.events)
    r = d.blockc("start", "--for", "10m", "--name", "focus", "youtube", check=False)
    t.check(r.rc == 0, f"blockc start --for 10m --name focus youtube (for everyone): {r.out}")
    t.check(wait_for(lambda: parents.about("youtube", p0)) and parents.about("youtube", p0)[0] == ("lock", ["focus"], None, [kid_uid]),
            f"parent's watch: focus locks youtube for everyone but kid: {parents.about('youtube', p0)}")
    t.check(getent(PARENT, "youtube.com") == SINK or getent(PARENT, "youtube.com") == {"0.0.0.0", "::"},
            f"getent ahosts youtube.com as parent during focus: {getent(PARENT, 'youtube.com')}")
    r = d.blockc("stop", "focus", check=False)
    t.check(r.rc == 0, f"blockc stop focus: {r.out}")
    t.check(wait_for(lambda: len(parents.about("youtube", p0)) >= 2) and parents.about("youtube", p0)[1][0] == "unlock"
            and parents.about("youtube", p0)[1][3] == [kid_uid], f"parent's watch: focus's end unlocks youtube for everyone but kid: {parents.about('youtube', p0)}")
    time.sleep(0.3)  # an event for kid would have arrived by now
    t.check(kids.about("youtube", k0) == [], f"kid's watch: nothing about youtube while bedtime holds: {kids.about('youtube', k0)}")
    t.check(getent(KID, "youtube.com") == SINK, f"getent ahosts youtube.com as kid after focus: still the sink: {getent(KID, 'youtube.com')}")


def mounted_over(d, rig):
    """U3: a bind mount over kid's table, which inotify cannot see, is news at once through the
    mount table's own notification (no timer looks for it: before, an audit every 10 s did);
    the table cannot be put back over the mount, which blockd says; unmounted, it is written
    again."""
    path = f"/run/blockd/users/{pwd.getpwnam(KID).pw_uid}"
    fake = f"{rig.work}/fake-table"
    with open(fake, "w") as f:
        f.write("nothing.test\n")
    before = len(d.log())
    # mount(2) itself, not mount(8), which also writes /etc and /run/mount files that blockd's
    # other watches would notice: only the mount table's own news is left to see this.
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mount(fake.encode(), path.encode(), None, 4096, None) != 0:  # MS_BIND
        raise RuntimeError(f"mount --bind {fake} {path}: {os.strerror(ctypes.get_errno())}")
    start = time.monotonic()
    try:
        seen = wait_for(lambda: "cannot write the per-user tables" in d.log()[before:], 3)
        t.figures["mountSeenSeconds"] = round(time.monotonic() - start, 2)
        t.check(seen, f"U3: a mount over kid's table is seen within 3 s, and blockd says it cannot write over it: {d.log()[before:][-600:]}")
    finally:
        libc.umount2(path.encode(), 0)
    t.check(wait_for(lambda: "youtube.com" in table(KID).split()), f"U3: unmounted, kid's table is written again: {table(KID)!r}")


def removed(d):
    r = d.blockc("schedule", "remove", "bedtime", check=False)
    t.check(r.rc == 0, f"blockc schedule remove bedtime: {r.out}")
    t.check(wait_for(lambda: "youtube.com" not in table(KID).split()), f"kid's table no longer lists youtube.com: {table(KID)!r}")
    t.check("instagram.com" in table(KID).split(), "kid's own instagram block stays in the table")
    t.check(getent(KID, "youtube.com") == {"127.0.0.1"}, f"getent ahosts youtube.com as kid: {getent(KID, 'youtube.com')}")
    t.check("youtube" not in blocked(view(d, KID)), "kid's status no longer shows youtube")
    t.check("VIDEO-OK" in page(KID), "Chromium as kid loads the page again")


with Rig(t, bindir, "bd-users-", [], {}) as rig:
    setup(rig)
    rig.configure()
    d = rig.daemon("--hosts-file", "/etc/hosts", "--firewall", "no", "--cut-sockets", "no", "--policy-root", f"{rig.work}/policy")
    d.start()
    hours = window()
    t.figures["window"] = hours
    kids, parents = Watcher(d, KID), Watcher(d, PARENT)
    try:
        wait_for(lambda: d.status().get("server", {}).get("watchers", 0) >= 2, what="both watchers subscribed before anything changes")
        bedtime(d, hours)
        views(d, kids, parents)
    finally:
        kids.stop()
        parents.stop()
    member(d)
    mounted_over(d, rig)
    removed(d)
    t.check(d.proc.poll() is None, f"blockd ran through the whole suite (exit {d.proc.poll()}); its log:\n{d.log()}")
t.done()
