#!/usr/bin/env python3
"""The Debian package under a real systemd (root only): install, use, upgrade, remove and purge
blockd_*.deb as an administrator would, in a throwaway systemd booted as PID 1 on an overlay of
this machine (torture/sysrig.py says how, and why that way), with the Swift toolchain hidden:

    python3 torture/deb.py BIN_DIR      (BIN_DIR: blockd, the one executable; the NSS module is
                                         the repository's .build/nss/libnss_blockd.so.2, `make nss`)

Outside the rig, scripts/deb builds two packages from BIN_DIR into a temp dir: VERSION (what
`blockd --version` says) and VERSION+1 (DEB_VERSION), both with DEB_COMPRESS=none (packing is
then seconds, not the minutes of xz; the contents are those of `make deb`). That dir is bound
read-only into the rig. Inside, before anything is installed, a tmpfs is mounted over the
toolchain (/opt/swift), so every blockd, blockc and agent below runs without it, and Docker's
/usr/sbin/policy-rc.d (exit 101: "start no services"), if this machine has one, is removed from
the overlay, so that postinst starts blockd as on a real machine, and so is man-db's
/var/lib/man-db/auto-update (its trigger rebuilt the whole man index at every dpkg run, about
5 s each). Then, each a named check:
  1 install: `apt-get install ./blockd_VERSION_ARCH.deb`, offline: the rig's network is its own
    loopback, so a fetch would fail (apt 2.6's --no-download cannot install a local file:
    "Pathname to install is not absolute"); dpkg says installed; blockd.socket and
    blockd.service enabled and active, the service Type=notify; groups blockd and blockd-admin; the socket 0660 group blockd; blockd first on
    the hosts: line; the catalog has blockd's entries; /usr/bin/blockd is stripped and loads
    nothing from the toolchain (ldd); blockc, blockc-agent and blockd-nm-host are symbolic
    links to it, and each of the four names answers --version and --help (exit 0) as its own
    program, while another name runs nothing (exit 2); the package is at most 25 MB, packed
    uncompressed and installed (P1), for a release build (`make torture`, `make deb`); from a
    debug build (`make check`'s --quick run) the sizes are figures only, -Onone code being larger;
  2 use: `blockc start --minutes 5 site.test`: the rig's /etc/hosts has it, the nftables table
    inet blockd exists, status says it is blocked; a per-user block (`--user KID`) makes
    `getent ahosts other.test` the sink for KID alone, through the packaged NSS module;
  3 upgrade to VERSION+1 with apt-get install: dpkg says VERSION+1, blockd.service was restarted (a new
    MainPID) and is active, both blocks are kept (status, /etc/hosts, KID's getent), the
    hosts: line names blockd once;
  4 a --lock block refuses the removal: `apt-get remove` fails, the package stays installed
    and blockd runs again (postinst abort-remove); once the lock has ended:
  5 remove: dpkg says config-files; blockd's units are gone; /etc/hosts and /etc/nsswitch.conf
    are byte for byte as before the install; no table inet blockd; KID resolves other.test
    again; the state in /var/lib/blockd is kept;
  6 purge: dpkg knows no blockd; /var/lib/blockd, /run/blockd and the conffile in /etc/xdg are
    gone, and so is /etc/blockd's empty directory while an administrator's file in it is kept;
    no unit symlink is left; /etc/hosts and /etc/nsswitch.conf are still as before the install.
Figures: the seconds of each step and the package's sizes. The machine's /etc, systemd, clock
and network are untouched; the rig is stopped and its scratch dir removed whatever happens
(SUITE_SECONDS bounds the run). Without root: skipped, unless BLOCKD_PRIVILEGED_TESTS=1, then
failed."""
import os, re, shutil, subprocess, sys, tempfile, time
import suite
from lib import Tally, wait_for
from sysrig import SystemRig

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DEBS = "/blockd/debs"  # where the packages appear in the rig
TOOLCHAIN = "/opt/swift"
SITE, SITE_ADDRESS, OTHER, OTHER_ADDRESS = "site.test", "127.0.0.2", "other.test", "127.0.0.3"
SINK = {"127.0.0.253", "100::1"}
KID = "bddebkid"
SUITE_SECONDS = 240
APT_ENV = ["env", "DEBIAN_FRONTEND=noninteractive"]
# P1: blockd is the one executable; its other names are symbolic links to it (scripts/install),
# and each answers --version and --help (what their output starts with) as its own program.
LINKS = {"/usr/bin/blockc": "blockd", "/usr/libexec/blockd/blockc-agent": "../../bin/blockd",
         "/usr/libexec/blockd/blockd-nm-host": "blockc-agent"}
NAMES = {"/usr/bin/blockd": ("blockd ", "Usage: blockd"), "/usr/bin/blockc": ("blockc ", "Usage: blockc"),
         "/usr/libexec/blockd/blockc-agent": ("blockc-agent ", "usage: blockc-agent"),
         "/usr/libexec/blockd/blockd-nm-host": ("blockc-agent ", "usage: blockc-agent")}
MAX_MB = 25  # the package, and what it installs (P1), for a release build: what ships
RELEASE = os.sep + "release" in os.path.realpath(sys.argv[1] if len(sys.argv) > 1 else "")

t = Tally("deb")
bindir, NSS = suite.begin(t, ["dpkg-deb", "dpkg-gencontrol", "dpkg-shlibdeps", "apt-get", "strip", "getent", "useradd", "nft"], SUITE_SECONDS, REPO)
outdir = tempfile.mkdtemp(prefix="blockd-debs.", dir="/var/tmp")
rig = SystemRig(binds={DEBS: outdir}, names={SITE: SITE_ADDRESS, OTHER: OTHER_ADDRESS})
debs = {}


def timed(name):
    """Records the seconds of a step under figures[name]."""
    return suite.timed(t, name)


def run(*argv, **kw):
    return rig.run(*argv, check=False, **kw)


def apt(*args):
    # dpkg's fsync of every unpacked file is for power cuts; the rig's disk is a scratch dir.
    return run(*APT_ENV, "apt-get", "-y", "-q", "-o", "Dpkg::Options::=--force-unsafe-io", *args, timeout=120)


def active(unit):
    return run("systemctl", "is-active", unit).stdout.strip()


def dpkg_status():
    p = run("dpkg-query", "-W", "-f", "${Status}|${Version}", "blockd")
    return p.stdout.strip() if p.rc == 0 else None


def status(*args):
    return run("blockc", "status", "--json", *args).json()


def blocked(s):
    return {b["selection"] for b in s.get("blocked", [])}


def getent(name, user=None):
    p = run("getent", "ahosts", name, user=user)
    return {line.split()[0] for line in p.stdout.splitlines() if line.strip()}


def hosts_section():
    text = rig.read("/etc/hosts").decode(errors="replace")
    start = text.find("# BEGIN blockd")
    return text[start:text.find("# END blockd", start)] if start >= 0 else ""


def exists(path):
    return run("test", "-e", path).rc == 0


def hosts_line():
    return [x for x in rig.read("/etc/nsswitch.conf").decode().splitlines() if re.match(r"\s*hosts\s*:", x)]


# What may change outside the package's own files: dpkg's and apt's books, logs, caches,
# systemd's catalog database and deb-systemd-helper's state (emptied by purge, its directories
# kept, as for every package), the groups (kept on purge).
# What the rig's own services leave (logind's private /var/tmp dirs and linger, PackageKit's
# database after apt's hook) is not the package's either.
BOOKS = re.compile(r"^/var/(lib/(dpkg|apt|systemd/catalog|systemd/deb-systemd-helper-(enabled|masked)|systemd/linger|PackageKit)"
                   r"|log|cache|tmp/systemd-private-[^/]*)(/|$)")


def paths():
    """Every path under /etc, /usr and /var in the rig (its own file system only), but /var/tmp:
    the rig's root is an overlay on the machine's, so another suite's rig scratch there
    (/var/tmp/blockd-sysrig.*) comes and goes through the lower layer while this one runs. The
    package writes nothing there; a check of it would test the neighbours, not the purge."""
    p = run("find", "/etc", "/usr", "/var", "-xdev", "-path", "/var/tmp", "-prune", "-o", "-print", timeout=120)
    return {x for x in p.stdout.splitlines() if not BOOKS.match(x)}


def build():
    """Both packages, outside the rig, from BIN_DIR (scripts/deb; DEB_COMPRESS=none)."""
    version = subprocess.run(["sed", "-n", r's/^ *public static let version = "\([^"]*\)".*/\1/p',
                              f"{REPO}/Sources/BlockCore/Version.swift"], capture_output=True, text=True).stdout.strip()
    t.figures["version"] = version
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True).stdout.strip()
    builds = {}
    with timed("build s"):  # both at once: stripping and packing each take a core
        for v in (version, f"{version}+1"):
            env = dict(os.environ, BINDIR_SRC=bindir, NSS_SRC=NSS, OUTDIR=outdir, DEB_VERSION=v, DEB_COMPRESS="none")
            builds[v] = subprocess.Popen([f"{REPO}/scripts/deb"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        results = {v: p.communicate(timeout=120) + (p.returncode,) for v, p in builds.items()}
    for v, (stdout, stderr, code) in results.items():
        if not t.check(code == 0, f"scripts/deb DEB_VERSION={v}: {stdout[-1500:]}{stderr[-1500:]}"):
            raise RuntimeError("scripts/deb failed: nothing to install")
        debs[v] = stdout.strip().splitlines()[-1]
        t.check(os.path.basename(debs[v]) == f"blockd_{v}_{arch}.deb", f"scripts/deb named the package blockd_VERSION_ARCH.deb: {debs[v]}")
    t.figures["debMB"] = round(os.path.getsize(debs[version]) / 1e6, 1)
    if RELEASE:
        t.check(t.figures["debMB"] <= MAX_MB, f"P1: the package, uncompressed, is at most {MAX_MB} MB: {t.figures['debMB']} MB")
    return version


def prepare():
    """Inside the rig, before the install: no toolchain, no Docker policy-rc.d, the bytes to compare."""
    if os.path.isdir(TOOLCHAIN):
        p = run("mount", "-t", "tmpfs", "-o", "size=64k,mode=0755", "blockd-no-toolchain", TOOLCHAIN)
        t.check(p.rc == 0 and run("ls", "-A", TOOLCHAIN).stdout.strip() == "",
                f"the Swift toolchain {TOOLCHAIN} is hidden in the rig under an empty tmpfs: {p.out}")
    run("rm", "-f", "/var/lib/man-db/auto-update")
    if exists("/usr/sbin/policy-rc.d"):
        t.figures["policyRcD"] = "removed in the rig: " + run("sh", "-c", "tail -n 1 /usr/sbin/policy-rc.d").stdout.strip()
        run("rm", "-f", "/usr/sbin/policy-rc.d")
    global hosts_before, nsswitch_before, paths_before
    hosts_before, nsswitch_before = rig.read("/etc/hosts"), rig.read("/etc/nsswitch.conf")
    paths_before = paths()
    t.check(not exists("/usr/bin/blockd") and dpkg_status() in (None, "unknown ok not-installed|"),
            f"no blockd in the rig before the install: {dpkg_status()}")


def install(version):
    with timed("install s"):
        p = apt("install", f"{DEBS}/{os.path.basename(debs[version])}")
    if not t.check(p.rc == 0, f"1 apt-get install ./blockd_{version}: {p.out[-2500:]}"):
        raise RuntimeError("the install failed: nothing else can be checked")
    t.check(dpkg_status() == f"install ok installed|{version}", f"1 dpkg: blockd {version} is installed: {dpkg_status()}")
    props = rig.show("blockd.service", "ActiveState", "SubState", "Type", "UnitFileState", "FragmentPath")
    t.check(props.get("ActiveState") == "active" and props.get("Type") == "notify" and props.get("UnitFileState") == "enabled"
            and props.get("FragmentPath") in ("/usr/lib/systemd/system/blockd.service", "/lib/systemd/system/blockd.service"),
            f"1 postinst enabled and started blockd.service from /usr/lib/systemd/system (/lib on merged /usr), Type=notify: {props}")
    t.check(active("blockd.socket") == "active" and run("systemctl", "is-enabled", "blockd.socket").stdout.strip() == "enabled",
            "1 blockd.socket is enabled and active")
    groups = {g: run("getent", "group", g).rc == 0 for g in ("blockd", "blockd-admin")}
    t.check(all(groups.values()), f"1 postinst made groups blockd and blockd-admin (sysusers.d): {groups}")
    sock = run("stat", "-c", "%a %G", "/run/blockd/blockd.sock").stdout.strip()
    t.check(sock == "660 blockd", f"1 /run/blockd/blockd.sock is 0660, group blockd: {sock!r}")
    line = hosts_line()
    t.check(line and line[0].split(":", 1)[1].split()[0] == "blockd", f"1 U3: blockd is first on the hosts: line: {line}")
    catalog = run("journalctl", "--list-catalog").stdout
    t.check("blockd: Blocked @BLOCKD_SELECTION@" in catalog, "1 postinst updated the journal catalog: blockd's entries are listed")
    ldd = run("ldd", "/usr/bin/blockd").out
    t.check("not found" not in ldd and TOOLCHAIN not in ldd and "libswift" not in ldd,
            f"1 /usr/bin/blockd loads nothing from the toolchain (ldd): {ldd}")
    sections = run("readelf", "-S", "-W", "/usr/bin/blockd").stdout
    t.check(".symtab" not in sections and ".debug_info" not in sections and ".comment" not in sections,
            "1 /usr/bin/blockd is stripped (no .symtab, .debug_info, .comment)")
    # P1: one executable; every other name is a symbolic link to it and runs as that program.
    for path, target in LINKS.items():
        p = run("readlink", path)
        t.check(p.rc == 0 and p.stdout.strip() == target and run("realpath", path).stdout.strip() == "/usr/bin/blockd",
                f"1 P1: {path} is a symbolic link to {target}, that is to /usr/bin/blockd: {p.out}")
    for path, want in NAMES.items():
        for flag, first in (("--version", want[0]), ("--help", want[1])):
            p = run(path, flag)
            t.check(p.rc == 0 and p.stdout.startswith(first), f"1 P1: {path} {flag} exits 0 as its own program, without the toolchain: {p.out[:300]}")
    p = run("sh", "-c", "ln -s /usr/bin/blockd /tmp/foo && /tmp/foo --version; echo \"exit $?\"; rm -f /tmp/foo")
    t.check(p.stdout.rstrip().endswith("exit 2") and "blockc-agent" in p.stderr and not p.stdout.startswith("blockd "),
            f"1 P1: under another name it runs nothing, names the names it answers to and exits 2: {p.out}")
    t.figures["installedMB"] = round(int(run("dpkg-query", "-W", "-f", "${Installed-Size}", "blockd").stdout or 0) / 1024, 1)
    if RELEASE:
        t.check(t.figures["installedMB"] <= MAX_MB, f"1 P1: the package installs at most {MAX_MB} MB: {t.figures['installedMB']} MiB")
    t.figures["build"] = "release" if RELEASE else "debug (size bound not applied)"


def use():
    p = run("blockc", "start", "--minutes", "5", SITE)
    t.check(p.rc == 0, f"2 blockc start --minutes 5 {SITE}: {p.out}")
    t.check(wait_for(lambda: SITE in hosts_section(), step=0.1), f"2 E1: the rig's /etc/hosts has {SITE} in blockd's section: {hosts_section()!r}")
    t.check(SITE in blocked(status()), f"2 blockc status: {SITE} is blocked: {status()}")
    t.check(wait_for(lambda: run("nft", "list", "table", "inet", "blockd").rc == 0, step=0.1), "2 E5: the nftables table inet blockd exists")
    p = run("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", KID)
    t.check(p.rc == 0, f"2 useradd {KID} in the rig: {p.out}")
    p = run("blockc", "start", "--minutes", "5", "--user", KID, "--name", "kidsite", OTHER)
    t.check(p.rc == 0, f"2 U1: blockc start --minutes 5 --user {KID} --name kidsite {OTHER}: {p.out}")
    t.check(wait_for(lambda: getent(OTHER, KID) == SINK, step=0.1), f"2 U3: through the packaged NSS module, {OTHER} is the sink for {KID}: {getent(OTHER, KID)}")
    t.check(getent(OTHER) == {OTHER_ADDRESS}, f"2 U3: and {OTHER_ADDRESS} for root: {getent(OTHER)}")


def upgrade(version):
    newer = f"{version}+1"
    pid = rig.show("blockd.service", "MainPID").get("MainPID")
    with timed("upgrade s"):
        p = apt("install", f"{DEBS}/{os.path.basename(debs[newer])}")
    t.check(p.rc == 0, f"3 apt-get install ./blockd_{newer} (an upgrade): {p.out[-2500:]}")
    t.check(dpkg_status() == f"install ok installed|{newer}", f"3 dpkg: blockd {newer} is installed: {dpkg_status()}")
    after = rig.show("blockd.service", "MainPID", "ActiveState")
    t.check(after.get("ActiveState") == "active" and after.get("MainPID") not in (pid, "0"),
            f"3 postinst restarted blockd.service: MainPID {pid} -> {after}")
    s = status("--all-users")
    t.check(SITE in blocked(s) and {SITE, "kidsite"} <= {a["name"] for a in s.get("activities", [])},
            f"3 T8: both blocks are kept across the upgrade: {s}")
    t.check(SITE in hosts_section(), f"3 E4: the rig's /etc/hosts still has {SITE}")
    t.check(getent(OTHER, KID) == SINK, f"3 U3: {OTHER} is still the sink for {KID}: {getent(OTHER, KID)}")
    line = hosts_line()
    t.check(len(line) == 1 and line[0].split().count("blockd") == 1, f"3 the hosts: line names blockd once: {line}")


def locked_remove():
    # 10 s: apt-get reaches prerm's blockd --release in 2-3 s when the machine is quiet, and in
    # more than 4 s with another suite building beside it; the block must still last then.
    p = run("blockc", "start", "--for", "10s", "--lock", "--name", "lockcheck", "reddit")
    t.check(p.rc == 0, f"4 blockc start --for 10s --lock --name lockcheck reddit: {p.out}")
    ends = time.monotonic() + 10
    p = apt("remove", "blockd")
    t.check(p.rc != 0 and "refusing to release" in p.out, f"4 E4: apt-get remove is refused while a --lock block lasts: {p.out[-1500:]}")
    t.check(dpkg_status() is not None and dpkg_status().startswith("install ok installed"),
            f"4 the package stays installed: {dpkg_status()}")
    t.check(wait_for(lambda: active("blockd.service") == "active", step=0.1), f"4 postinst abort-remove started blockd again: {active('blockd.service')}")
    time.sleep(max(0.0, ends - time.monotonic()) + 0.5)
    t.check(wait_for(lambda: "lockcheck" not in {a["name"] for a in status().get("activities", [])}, step=0.1),
            "4 the --lock block ended by itself")


def remove():
    with timed("remove s"):
        p = apt("remove", "blockd")
    t.check(p.rc == 0, f"5 apt-get remove blockd: {p.out[-2500:]}")
    t.check(dpkg_status() is not None and dpkg_status().startswith("deinstall ok config-files"),
            f"5 dpkg: blockd removed, its conffiles kept: {dpkg_status()}")
    t.check(rig.show("blockd.service", "LoadState").get("LoadState") == "not-found" and active("blockd.socket") != "active",
            f"5 blockd's units are gone: {rig.show('blockd.service', 'LoadState', 'ActiveState')}")
    t.check(rig.read("/etc/hosts") == hosts_before, f"5 E4: the rig's /etc/hosts is byte for byte as before the install: {rig.read('/etc/hosts')!r}")
    t.check(rig.read("/etc/nsswitch.conf") == nsswitch_before, f"5 U3: /etc/nsswitch.conf is byte for byte as before the install: {hosts_line()}")
    t.check(run("nft", "list", "table", "inet", "blockd").rc != 0, "5 E5: no nftables table inet blockd")
    t.check(getent(OTHER, KID) == {OTHER_ADDRESS}, f"5 {KID} resolves {OTHER} again: {getent(OTHER, KID)}")
    t.check(not exists("/usr/bin/blockd") and not exists("/usr/lib/x86_64-linux-gnu/libnss_blockd.so.2"),
            "5 the binaries and the NSS module are gone")
    t.check(exists("/var/lib/blockd"), "5 the state in /var/lib/blockd is kept by remove")


def purge():
    # An administrator's file in /etc/blockd is kept by purge; an empty directory is not.
    run("mkdir", "-p", "/etc/blockd/selections.d", "/etc/blockd/schedules.d")
    rig.write("/etc/blockd/selections.d/mine.conf", "[Selection]\nName=mine\nDomains=mine.test\n")
    with timed("purge s"):
        p = apt("purge", "blockd")
    t.check(p.rc == 0, f"6 apt-get purge blockd: {p.out[-2500:]}")
    t.check(dpkg_status() in (None, "unknown ok not-installed|"), f"6 dpkg knows no blockd: {dpkg_status()}")
    gone = {path: exists(path) for path in ("/var/lib/blockd", "/run/blockd", "/etc/xdg/autostart/blockd-agent.desktop",
                                             "/etc/blockd/schedules.d", "/etc/systemd/system/multi-user.target.wants/blockd.service",
                                             "/etc/systemd/system/sockets.target.wants/blockd.socket")}
    t.check(not any(gone.values()), f"6 purge removed the state, the runtime dir, the conffile, the empty config dir and the unit links: {gone}")
    t.check(exists("/etc/blockd/selections.d/mine.conf"), "6 purge kept the administrator's /etc/blockd/selections.d/mine.conf")
    t.check("kept /etc/blockd" in p.out, f"6 purge says it kept /etc/blockd: {p.out[-600:]}")
    t.check(rig.read("/etc/hosts") == hosts_before, "6 /etc/hosts is byte for byte as before the install")
    t.check(rig.read("/etc/nsswitch.conf") == nsswitch_before, "6 /etc/nsswitch.conf is byte for byte as before the install")
    mine = {"/etc/blockd", "/etc/blockd/selections.d", "/etc/blockd/selections.d/mine.conf"}
    left, lost = paths() - paths_before - mine, paths_before - paths()
    t.check(not left and not lost, f"6 nothing is left under /etc, /usr and /var but the administrator's file (and dpkg's books), "
            f"and nothing of before is missing: left {sorted(left)[:20]}, missing {sorted(lost)[:20]}")


started = time.monotonic()
try:
    version = build()
    with timed("boot s"):
        rig.boot()
    prepare()
    install(version)
    use()
    upgrade(version)
    locked_remove()
    remove()
    purge()
except Exception as e:  # a broken rig or a timeout is a failure with its reason
    suite.fail(t, rig, e)
finally:
    suite.stop(t, rig)
    shutil.rmtree(outdir, ignore_errors=True)
    t.figures["seconds"] = round(time.monotonic() - started, 1)
t.done()
