"""U3: libnss_blockd.so.2 for real, as root, inside a private mount + network + PID namespace
(torture/rig.py: loopback only, an overlay over /etc, nothing outside changes).

    python3 torture/nss.py BIN_DIR

- The module is installed by scripts/install into a temp DESTDIR and placed with a read-only
  overlay over the multiarch library directory, so glibc finds it by soname exactly as it
  finds an installed one; /run gets a tmpfs, so the table directory /run/blockd/users
  (compiled into the module) is the namespace's own.
- scripts/nsswitch puts blockd on the overlay's `hosts: files` line; /etc/hosts gets
  `127.0.0.1 site.test`; a table for throwaway user A (created in the overlay's /etc/passwd, gone with it)
  lists site.test. `getent ahosts site.test` as A gives the sink 127.0.0.253 and 100::1, as
  throwaway user B 127.0.0.1; real headless Chromium, run as each user, is refused for A and
  loads the page for B.
- The table as blockd writes it (root's, 0640 with the POSIX ACL user:A:r--): A reads it and
  gets the sink, B gets EACCES and the real address. In a user namespace (`unshare -r`, uid 0
  inside; nested; `--map-current-user`) A still gets the sink, B and root the real address;
  with a 0644 table (a file system without ACLs) B's namespace gets A's names too (fail closed).
- The NSS contract through ctypes (as root, uid 0's table): ERANGE for every buffer too small,
  case and a trailing dot, subdomains (W1) but not names that only end alike, the machine-wide
  table `all`, allow-only `*` and `!` lines (W2), malformed tables, tables not to trust, 8 threads.
- W1 and W2 with the real blockd: a machine-wide block's subdomain gives the sink; an allow-only
  window for A (and then for everyone) lets A (every login user) resolve only the allowed site,
  Chromium as A loads it and is refused elsewhere, Firefox ESR as A fetches it and never reaches
  another site, and root and system users are not held.
- Uninstall leaves nsswitch.conf byte-identical (the overlay's, and a DESTDIR copy of this
  machine's own).
Without root this prints a skipped RESULT; with BLOCKD_PRIVILEGED_TESTS=1 anything missing fails."""
import ctypes, os, pwd, socket, struct, sys, threading
from lib import Tally, as_user, sh, wait_for
from rig import Rig, enter
from asuser import REPO, chromium, firefox, getent, install_module, page_handler

t = Tally("nss")
bindir = os.path.abspath(sys.argv[1])
USERS = ("bdnss-a", "bdnss-b")
LOGIN = "bdnss-login"  # a login user (uid 1000 or more): a machine-wide allow-only window holds for it
enter(t, ["chromium", "firefox-esr", "gcc", "make", "perl", "dnsmasq", "ip", "unshare", "setpriv", "useradd", "getent"],
      "needs root for a private mount and network namespace and throwaway users")

SEEN = []  # (Host, User-Agent) of every request the page server got
SUCCESS, NOTFOUND, TRYAGAIN = 1, 0, -2
ERANGE = 34


def table(uid, text, mode=0o644, owner=0):
    path = f"/run/blockd/users/{uid}"
    with open(path, "wb") as f:
        f.write(text)
    os.chown(path, owner, owner)
    os.chmod(path, mode)


class Hostent(ctypes.Structure):
    _fields_ = [("h_name", ctypes.c_char_p), ("h_aliases", ctypes.POINTER(ctypes.c_char_p)),
                ("h_addrtype", ctypes.c_int), ("h_length", ctypes.c_int),
                ("h_addr_list", ctypes.POINTER(ctypes.POINTER(ctypes.c_ubyte)))]


class Tuple(ctypes.Structure):
    pass


Tuple._fields_ = [("next", ctypes.POINTER(Tuple)), ("name", ctypes.c_char_p), ("family", ctypes.c_int),
                  ("addr", ctypes.c_uint32 * 4), ("scopeid", ctypes.c_uint32)]


def by3(lib, name, af, size):
    host, buf = Hostent(), ctypes.create_string_buffer(size) if size else None
    err, herr, ttl, canon = ctypes.c_int(0), ctypes.c_int(0), ctypes.c_int32(-1), ctypes.c_char_p()
    status = lib._nss_blockd_gethostbyname3_r(name, af, ctypes.byref(host), buf, size, ctypes.byref(err),
                                              ctypes.byref(herr), ctypes.byref(ttl), ctypes.byref(canon))
    addr = bytes(host.h_addr_list[0][:host.h_length]) if status == SUCCESS else None
    return status, err.value, addr, host.h_name if status == SUCCESS else None


def by4(lib, name, size):
    pat, buf = ctypes.POINTER(Tuple)(), ctypes.create_string_buffer(size) if size else None
    err, herr, ttl = ctypes.c_int(0), ctypes.c_int(0), ctypes.c_int32(-1)
    status = lib._nss_blockd_gethostbyname4_r(name, ctypes.byref(pat), buf, size, ctypes.byref(err), ctypes.byref(herr), ctypes.byref(ttl))
    found = []
    node = pat
    while status == SUCCESS and node:
        found.append((node.contents.family, bytes(node.contents.addr)[:4 if node.contents.family == socket.AF_INET else 16]))
        node = node.contents.next
    return status, err.value, found


def contract(lib):
    v4, v6 = bytes([127, 0, 0, 253]), bytes([1] + [0] * 14 + [1])
    table(0, b"# header\nsite.test\n  Spaced.Test \t\r\n" + b"x" * 10000 + b"\nnul\0.test\nlast.test")
    needed = next(n for n in range(0, 512) if by3(lib, b"site.test", socket.AF_INET, n)[0] == SUCCESS)
    small = [by3(lib, b"site.test", socket.AF_INET, n)[:2] for n in range(needed)]
    t.check(all(s == (TRYAGAIN, ERANGE) for s in small), f"every buffer under {needed} bytes gives TRYAGAIN/ERANGE: {set(small)}")
    t.check(by3(lib, b"SITE.Test.", socket.AF_INET6, 512)[2:] == (v6, b"site.test"), "case and a trailing dot are ignored; AF_INET6 gives 100::1")
    t.check(by3(lib, b"site.test", socket.AF_INET, 512)[2] == v4, "AF_INET gives 127.0.0.253")
    needed4 = next(n for n in range(0, 512) if by4(lib, b"site.test", n)[0] == SUCCESS)
    t.check(all(by4(lib, b"site.test", n)[:2] == (TRYAGAIN, ERANGE) for n in range(needed4)), "gethostbyname4_r: ERANGE below its size")
    t.check(by4(lib, b"site.test", 512)[2] == [(socket.AF_INET, v4), (socket.AF_INET6, v6)], "gethostbyname4_r gives both sinks")
    for name, want in ((b"spaced.test", SUCCESS), (b"last.test", SUCCESS), (b"www.site.test", SUCCESS), (b"A.b.Site.Test.", SUCCESS),
                       (b"xsite.test", NOTFOUND), (b"site.test.example", NOTFOUND), (b"test", NOTFOUND), (b".site.test", SUCCESS),
                       (b"nul", NOTFOUND), (b"x" * 300, NOTFOUND), (b"", NOTFOUND), (b".", NOTFOUND)):
        t.check(by3(lib, name, socket.AF_INET, 512)[0] == want,
                f"W1: {name[:40]!r}: status {want} expected (a name and the names under it, malformed lines skipped)")
    t.check(by3(lib, b"www.site.test", socket.AF_INET, 512)[3] == b"www.site.test", "W1: a subdomain is answered under its own name")
    os.remove("/run/blockd/users/0")
    allow_only_contract(lib)
    table("all", b"# machine-wide\nevery.test\n")
    for name in (b"every.test", b"www.every.test", b"deep.er.every.test"):
        t.check(by3(lib, name, socket.AF_INET, 512)[0] == SUCCESS, f"W1: the machine-wide table `all` covers {name!r}")
    t.check(by3(lib, b"neverytest.test", socket.AF_INET, 512)[0] == NOTFOUND, "W1: `all` does not cover a name that only ends alike")
    table("all", b"every.test\n", 0o664)
    t.check(by3(lib, b"every.test", socket.AF_INET, 512)[0] == NOTFOUND, "a group-writable `all` is not trusted")
    os.remove("/run/blockd/users/all")
    table(0, b"# header\nsite.test\n  Spaced.Test \t\r\n" + b"x" * 10000 + b"\nnul\0.test\nlast.test")
    t.check(by3(lib, b"other.test", socket.AF_INET, 0)[0] == NOTFOUND, "a name not listed is NOTFOUND whatever the buffer")
    results = []

    def hammer():
        results.extend(by4(lib, b"site.test", 256)[0] == SUCCESS and by3(lib, b"nope.test", socket.AF_INET, 256)[0] == NOTFOUND for _ in range(300))
    threads = [threading.Thread(target=hammer) for _ in range(8)]
    [th.start() for th in threads]
    [th.join() for th in threads]
    t.check(len(results) == 2400 and all(results), "8 threads x 300 lookups all answered right")
    for what, mode, owner in (("group-writable", 0o664, 0), ("world-writable", 0o646, 0), ("not root's", 0o644, 65534)):
        table(0, b"site.test\n", mode, owner)
        t.check(by3(lib, b"site.test", socket.AF_INET, 512)[0] == NOTFOUND, f"a {what} table is not trusted")
    os.remove("/run/blockd/users/0")
    os.symlink("/run/blockd/elsewhere", "/run/blockd/users/0")
    table("../elsewhere", b"site.test\n")
    t.check(by3(lib, b"site.test", socket.AF_INET, 512)[0] == NOTFOUND, "a symlinked table is not trusted")
    os.remove("/run/blockd/users/0")
    table(0, b"site.test\n")
    os.chmod("/run/blockd/users", 0o777)
    t.check(by3(lib, b"site.test", socket.AF_INET, 512)[0] == NOTFOUND, "a table in a world-writable directory is not trusted")
    os.chmod("/run/blockd/users", 0o755)
    os.remove("/run/blockd/users/0")


def allow_only_contract(lib):
    """W2: `*` blocks every name but the exempt ones, `!name` lets a name and those under it
    through, the most specific line decides (a listed name wins a tie); the `*` of `all` holds
    for login users only, so not for root (this process)."""
    host = socket.gethostname().encode()
    table(0, b"# window\n*\n!site.test\nblocked.site.test\n")
    for name, want in ((b"other.test", SUCCESS), (b"site.test", NOTFOUND), (b"www.site.test", NOTFOUND),
                       (b"blocked.site.test", SUCCESS), (b"x.blocked.site.test", SUCCESS), (b"xsite.test", SUCCESS),
                       (b"localhost", NOTFOUND), (b"a.localhost", NOTFOUND), (b"printer", NOTFOUND), (host, NOTFOUND)):
        t.check(by3(lib, name, socket.AF_INET, 512)[0] == want, f"W2: with `*` and `!site.test`, {name!r}: status {want} expected")
    table(0, b"*\n!site.test\nsite.test\n")
    t.check(by3(lib, b"site.test", socket.AF_INET, 512)[0] == SUCCESS, "W2: a listed name wins over a `!` of the same name")
    table(0, b"site.test\n!edu.site.test\n")  # AlwaysAllowed= under a blocked site, no window
    for name, want in ((b"edu.site.test", NOTFOUND), (b"a.edu.site.test", NOTFOUND), (b"www.site.test", SUCCESS), (b"other.test", NOTFOUND)):
        t.check(by3(lib, name, socket.AF_INET, 512)[0] == want, f"W2: an always-allowed `!edu.site.test` under site.test, {name!r}: status {want}")
    os.remove("/run/blockd/users/0")
    table("all", b"*\n!site.test\n")
    t.check(by3(lib, b"other.test", socket.AF_INET, 512)[0] == NOTFOUND, "W2: the `*` of `all` does not hold for root")
    os.remove("/run/blockd/users/all")


def allow_only(rig, a, b, login):
    """W2 with the real blockd: `blockc start --allow-only` for one user, then for everyone."""
    d = rig.daemon("--hosts-file", "/etc/hosts", "--firewall", "no", "--cut-sockets", "no", "--policy-root", f"{rig.work}/policy")
    d.start()
    sink = {"127.0.0.253", "100::1"}
    try:
        t.check(d.blockc("start", "--for", "1h", "--user", a, "--allow-only", "site.test", check=False).rc == 0,
                f"W2: blockc start --user A --allow-only site.test: {d.log()[-400:]}")
        t.check(getent(a, "cdn.every.test") == sink, f"W2: during A's window cdn.every.test gives A the sink: {getent(a, 'cdn.every.test')}")
        t.check(getent(a, "www.site.test") == {"127.0.0.1"}, "W2: the allowed site (and its subdomains) resolves for A")
        t.check(getent(a, "localhost") >= {"127.0.0.1"} or getent(a, "localhost") >= {"::1"}, "W2: localhost still resolves for A")
        t.check(getent(b, "cdn.every.test") == {"127.0.0.1"}, "W2: B is not in the window")
        dom_site, dom_other = chromium(a, "http://site.test/", "bd-nss-w2"), chromium(a, "http://cdn.every.test/", "bd-nss-w2")
        t.check("SITE-OK" in dom_site, f"W2: Chromium as A loads the allowed site: {dom_site[-300:]}")
        t.check("SITE-OK" not in dom_other and "ERR_CONNECTION_REFUSED" in dom_other, f"W2: Chromium as A is refused elsewhere: {dom_other[-300:]}")
        # Firefox writes no filter for a window (it reads policies only at its start); it asks
        # glibc, so the module holds it: the allowed page is fetched, the other never reaches the server.
        SEEN.clear()
        # (On the refused page's error page Firefox's screenshot mode never exits: 20 s is plenty.)
        out_site, _ = firefox(a, "http://site.test/"), firefox(a, "http://cdn.every.test/", timeout=20)
        hosts = [host for host, agent in SEEN if "Firefox" in agent]
        t.check("site.test" in hosts, f"W2: Firefox ESR as A fetches the allowed site: {hosts} {out_site[-300:]}")
        t.check("cdn.every.test" not in hosts, f"W2: Firefox ESR as A never reaches another site: {hosts}")
        d.blockc("stop", "only_site.test")
        t.check(wait_for(lambda: getent(a, "cdn.every.test") == {"127.0.0.1"}), "W2: after the window A resolves everything again")
        d.blockc("start", "--for", "1h", "--allow-only", "site.test")
        t.check(getent(login, "cdn.every.test") == sink, "W2: a machine-wide window holds for a login user")
        t.check(getent(login, "site.test") == {"127.0.0.1"}, "W2: ... who still reaches the allowed site")
        root = {line.split()[0] for line in sh("getent", "ahosts", "cdn.every.test", check=False).stdout.splitlines() if line.strip()}
        t.check(root == {"127.0.0.1"} and getent(b, "cdn.every.test") == {"127.0.0.1"},
                f"W2: root and a system user (uid < 1000) keep resolving: root {root}, B {getent(b, 'cdn.every.test')}")
        d.blockc("stop", "only_site.test")
        t.check(wait_for(lambda: getent(login, "cdn.every.test") == {"127.0.0.1"}), "W2: after it the login user resolves again")
    finally:
        d.stop()


def acl(uid):
    """The access ACL blockd gives uid's table: user::rw- user:UID:r-- group::--- mask::r-- other::---
    (<linux/posix_acl_xattr.h>: version 2, then tag, perm, id per entry)."""
    none = 0xFFFFFFFF
    entries = ((0x01, 6, none), (0x02, 4, uid), (0x04, 0, none), (0x10, 4, none), (0x20, 0, none))
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", tag, perm, ident) for tag, perm, ident in entries)


def in_namespace(user, *unshare_args):
    """`getent ahosts site.test` as `user` (None: root) inside `unshare *unshare_args`."""
    argv = [*unshare_args, "getent", "ahosts", "site.test"]
    p = sh(*(as_user(user, *argv) if user else argv), check=False)
    return {line.split()[0] for line in p.stdout.splitlines() if line.strip()}


def private_tables(a, b):
    """U3: a table readable by its user only, and user namespaces (the module keys on the
    initial namespace's uid)."""
    uid = pwd.getpwnam(a).pw_uid
    path = f"/run/blockd/users/{uid}"
    table(uid, b"site.test\n", mode=0o600)
    os.setxattr(path, "system.posix_acl_access", acl(uid))
    t.check(oct(os.stat(path).st_mode & 0o7777) == "0o640", f"the ACL shows as mode 0640: {oct(os.stat(path).st_mode)}")
    reads = sh(*as_user(b, "cat", path), check=False)
    t.check(reads.rc != 0 and "Permission denied" in reads.stderr, f"B cannot read A's table (EACCES): {reads.stderr.strip()}")
    t.check(sh(*as_user(a, "cat", path), check=False).stdout == "site.test\n", "A reads its own table")
    sink = {"127.0.0.253", "100::1"}
    t.check(getent(a, "site.test") == sink, "A gets the sink through the 0640+ACL table")
    t.check(getent(b, "site.test") == {"127.0.0.1"}, "B gets the real address")
    for what in (("unshare", "-r"), ("unshare", "-r", "unshare", "-r"), ("unshare", "--map-current-user")):
        t.check(in_namespace(a, *what) == sink, f"A in `{' '.join(what)}` gets the sink: {in_namespace(a, *what)}")
    t.check(in_namespace(b, "unshare", "-r") == {"127.0.0.1"}, "B in `unshare -r` gets the real address")
    t.check(in_namespace(None, "unshare", "-r") == {"127.0.0.1"}, "root in `unshare -r` gets root's table (none)")
    table(uid, b"site.test\n")  # 0644: a file system without ACLs
    t.check(in_namespace(b, "unshare", "-r") == sink, "without ACLs B's namespace reads A's table too: more blocked, never less")
    t.check(getent(b, "site.test") == {"127.0.0.1"}, "outside a namespace B still gets its own (no) table")


def whole_site(rig, a, b):
    """W1 with the real blockd: a machine-wide block of site.test goes to the table `all`, so
    a subdomain no hosts line names gives the sink to every user and Chromium is refused
    there; the user's own line for it is held meanwhile and everything is back after."""
    os.remove(f"/run/blockd/users/{pwd.getpwnam(a).pw_uid}")
    with open("/etc/hosts", "a") as f:
        f.write("127.0.0.1 deep.er.site.test\n")
    t.check(getent(b, "deep.er.site.test") == {"127.0.0.1"}, "before the block B resolves deep.er.site.test")
    d = rig.daemon("--hosts-file", "/etc/hosts", "--firewall", "no", "--cut-sockets", "no", "--policy-root", f"{rig.work}/policy")
    d.start()
    try:
        d.blockc("start", "--for", "1h", "site.test")
        with open("/run/blockd/users/all") as f:
            listed = f.read()
        t.check(listed.splitlines()[1:] == ["site.test"] and oct(os.stat("/run/blockd/users/all").st_mode & 0o777) == "0o644",
                f"W1: blockd wrote the machine-wide table `all` (0644): {listed!r}")
        with open("/etc/hosts") as f:
            hosts = f.read()
        t.check(all(f"0.0.0.0 {n}\n" in hosts for n in ("site.test", "www.site.test", "m.site.test")),
                f"W1: the hosts section lists site.test with its www. and m. forms:\n{hosts[:600]}")
        t.check("# blockd-held: 127.0.0.1 deep.er.site.test" in hosts, "W1: the user's own line for a subdomain is held")
        sink = {"127.0.0.253", "100::1"}
        for user in (a, b):
            got = getent(user, "deep.er.site.test")
            t.check(got == sink, f"W1: getent ahosts deep.er.site.test as {user} gives the sink: {got}")
        dom = chromium(b, "http://deep.er.site.test/", "bd-nss-w1")
        t.check("SITE-OK" not in dom and "ERR_CONNECTION_REFUSED" in dom, f"W1: Chromium is refused on a subdomain of the blocked site: {dom[-300:]}")
        t.check(d.blockc("status", "--json", check=False).rc == 0 and "site.test" in d.status()["enforcement"]["applied"],
                "the block is enforced")
        d.blockc("stop", "site.test")
        t.check(wait_for(lambda: not os.path.exists("/run/blockd/users/all")), "W1: the table `all` goes with the block")
        t.check(getent(b, "deep.er.site.test") == {"127.0.0.1"}, "W1: after the block B resolves deep.er.site.test again (its line is back)")
    finally:
        d.stop()


def checks(rig):
    dest, env, module = install_module(rig.work, bindir)
    sh("mount", "-t", "tmpfs", "-o", "mode=0755,size=4m", "tmpfs", "/run")
    os.makedirs("/run/blockd/users", mode=0o755)
    contract(ctypes.CDLL(module))

    with open("/etc/nsswitch.conf", "rb") as f:
        lines = [line for line in f.read().split(b"\n") if not line.lstrip().startswith(b"hosts")]
    with open("/etc/nsswitch.conf", "wb") as f:
        f.write(b"\n".join(lines).rstrip(b"\n") + b"\nhosts:  files   # the test's own line\n")
    with open("/etc/nsswitch.conf", "rb") as f:
        before = f.read()
    t.check(sh(f"{REPO}/scripts/nsswitch", "add", "/etc/nsswitch.conf").stdout == "added\n", "scripts/nsswitch adds blockd")
    with open("/etc/nsswitch.conf", "rb") as f:
        t.check(b"\nhosts:  blockd files   # the test's own line\n" in f.read(), "hosts: blockd files")
    with open("/etc/hosts", "a") as f:
        f.write("127.0.0.1 site.test\n127.0.0.1 www.site.test\n127.0.0.1 cdn.every.test\n")
    a, b = USERS
    table(pwd.getpwnam(a).pw_uid, b"# blocked for A\nsite.test\n")
    got_a, got_b = getent(a, "site.test"), getent(b, "site.test")
    t.check(got_a == {"127.0.0.253", "100::1"}, f"getent ahosts site.test as A gives the sink: {got_a}")
    t.check(got_b == {"127.0.0.1"}, f"getent ahosts site.test as B gives its address: {got_b}")
    t.check(getent(a, "SITE.TEST.") == {"127.0.0.253", "100::1"}, "as A, SITE.TEST. is blocked too")
    t.check(getent(a, "www.site.test") == {"127.0.0.253", "100::1"}, "W1: as A, the subdomain www.site.test gives the sink")
    t.check(getent(b, "www.site.test") == {"127.0.0.1"}, "W1: as B, www.site.test gives its address")
    table("all", b"every.test\n")
    t.check(getent(b, "cdn.every.test") == {"127.0.0.253", "100::1"}, "W1: the machine-wide table blocks cdn.every.test for B too")
    os.remove("/run/blockd/users/all")
    t.check(getent(b, "cdn.every.test") == {"127.0.0.1"}, "W1: without the machine-wide table cdn.every.test resolves again")
    private_tables(a, b)

    rig.serve("127.0.0.1", page_handler(b"SITE-OK", SEEN))
    dom_b, dom_a = chromium(b, "http://site.test/", "bd-nss"), chromium(a, "http://site.test/", "bd-nss")
    t.check("SITE-OK" in dom_b, f"Chromium as B loads http://site.test/: {dom_b[-300:]}")
    # Refused, not "not resolved": Chromium got the sink from glibc (its own resolver, which
    # reads /etc/hosts itself, steps aside when nsswitch.conf names a module it does not know).
    t.check("SITE-OK" not in dom_a and "ERR_CONNECTION_REFUSED" in dom_a, f"Chromium as A is refused (the sink): {dom_a[-300:]}")
    t.figures["chromiumAsA"] = "refused" if "SITE-OK" not in dom_a else "loaded"

    whole_site(rig, a, b)
    allow_only(rig, a, b, LOGIN)

    t.check(sh(f"{REPO}/scripts/nsswitch", "remove", "/etc/nsswitch.conf").stdout == "removed\n", "scripts/nsswitch removes blockd")
    with open("/etc/nsswitch.conf", "rb") as f:
        t.check(f.read() == before, "the overlay's nsswitch.conf is byte-identical after the removal")
    t.check(getent(a, "site.test") == {"127.0.0.1"}, "without blockd on the hosts: line A resolves site.test again")
    t.check("SITE-OK" in chromium(a, "http://site.test/", "bd-nss"), "without blockd on the hosts: line Chromium as A loads the page")
    sh(f"{REPO}/scripts/install", "uninstall", env=env, timeout=60)
    with open(f"{dest}/etc/nsswitch.conf", "rb") as f, open(f"{dest}/machine-nsswitch.conf", "rb") as g:
        t.check(f.read() == g.read(), "scripts/install uninstall gives this machine's nsswitch.conf back byte for byte (DESTDIR copy)")


with Rig(t, bindir, "bd-nss.", [], {}) as rig:
    # The throwaway users live in the overlay's /etc/passwd: they vanish with the namespace.
    for u in USERS:
        sh("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", u)
    sh("useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", LOGIN)
    checks(rig)
t.done()
