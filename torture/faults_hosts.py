#!/usr/bin/env python3
"""E1 and §7 "Truth" under file-system faults, with the real blockd and blockc.
Root only: the script re-runs itself in a private mount namespace (`unshare -m --propagation
private`), so its tiny tmpfs and read-only bind mounts are seen by nobody else and vanish with it.
  full      a hosts file of ~180 user lines on a full 64 KiB tmpfs: `start` loses no byte, exits 1
            "accepted, but not enforced", applied does not list it, the failure is recorded once;
            space freed → written within seconds, applied lists it; stop → byte-identical.
  readonly  the hosts file on a read-only bind mount: the same truth; remount rw → written within
            seconds with no other request.
  directory the hosts path replaced by a directory during a block: a recorded failure, applied no
            longer claims it; the file back → enforced again.
  symlink   a symlinked hosts file: the link stays a link, the target gets the section, and is
            byte-identical after the block.
  bindfile  a bind mount over the single file (rename gives EBUSY): written in place; with the
            file system under it full, no byte lost; space freed → written.
Usage: torture/faults_hosts.py BIN_DIR
"""
import os, subprocess, sys, time
from lib import DEADLINE, Sandbox, Tally, enter, outside_section, section_domains, sh, wait_for

bindir = os.path.abspath(sys.argv[1])
t = Tally("faults-hosts")
enter(t, ["-m", "--propagation", "private"], "needs root for a private mount namespace with tmpfs and bind mounts")


def user_hosts():
    """~4,000 bytes, 184 lines: CRLF, tabs, bytes that are not UTF-8, no final newline."""
    lines = []
    for i in range(184):
        kind = i % 4
        if kind == 0:
            lines.append(f"10.{i // 250}.{i % 250}.9\thost{i}.lan\n".encode())
        elif kind == 1:
            lines.append(f"10.3.0.{i % 250} crlf{i}\r\n".encode())
        elif kind == 2:
            lines.append(b"# \xff\xfe odd " + str(i).encode() + b"\n")
        else:
            lines.append(f"192.168.{i % 250}.1 nas{i}\n".encode())
    data = b"".join(lines)
    tail = b"\n10.9.9.9 end"  # no final newline
    data += b"#" * (4000 - len(data) - len(tail)) + tail
    assert len(data) == 4000, len(data)
    return data


ORIGINAL = user_hosts()


def applied(sb):
    return sb.ok("status")["enforcement"]["applied"]


def failures_about(sb, word):
    return [f for f in sb.ok("status")["failures"] if word in f["message"]]


def read(path):
    try:
        return open(path, "rb").read()
    except OSError:
        return b""


def fill(directory):
    """Fills the file system of `directory` to the last byte."""
    for name, chunk in (("filler", 4096), ("filler2", 1)):  # pages, then the last partial one
        fd = os.open(f"{directory}/{name}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        try:
            while True:
                os.write(fd, b"\0" * chunk)
        except OSError:
            pass
        finally:
            os.close(fd)


def free(directory):
    os.unlink(f"{directory}/filler")
    os.unlink(f"{directory}/filler2")


class Case:
    def __init__(self, name):
        self.name = name
        self.sb = Sandbox(f"{bindir}/blockd", prefix=f"bd-fh-{name}-")
        self.mounts = []

    def mount(self, *argv, target):
        sh("mount", *argv, target)
        self.mounts.append(target)

    def tmpfs(self, path):
        os.makedirs(path, exist_ok=True)
        self.mount("-t", "tmpfs", "-o", "size=64k", "tmpfs", target=path)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.sb.kill()
        for m in reversed(self.mounts):
            subprocess.run(["umount", "-l", m], capture_output=True)
        self.sb.close()


def truth_when_failing(case, selection, r, word):
    sb = case.sb
    t.check(r.rc == 1, f"{case.name}: blockc start exited {r.rc}, expected 1 (accepted, not enforced)")
    t.check("accepted, but not enforced" in r.stderr and "registered" in r.stderr,
            f"{case.name}: blockc did not say 'accepted, but not enforced' and that the block is registered: {r.stderr!r}")
    t.check(selection not in applied(sb), f"{case.name}: status claims {selection} is applied while the write failed")
    s = sb.ok("status")
    t.check(any(a["name"] == selection for a in s["activities"]), f"{case.name}: the block was not registered")
    t.check(any(n["selection"] == selection for n in s["enforcement"].get("notEnforced", [])),
            f"{case.name}: status does not list {selection} as not enforced: {s['enforcement']}")
    t.check(len(failures_about(sb, word)) == 1, f"{case.name}: expected one recorded failure about {word!r}: {s['failures']}")


def case_full():
    with Case("full") as case:
        sb = case.sb
        fs = f"{sb.dir}/fs"
        case.tmpfs(fs)
        sb.hosts = f"{fs}/hosts"
        open(sb.hosts, "wb").write(ORIGINAL)
        sb.start()
        fill(fs)
        r = sb.blockc("start", "--minutes", "10", "reddit")
        t.check(read(sb.hosts) == ORIGINAL, "full: a failed write on a full disk changed the hosts file "
                f"({len(read(sb.hosts))} bytes, outside the section intact: {outside_section(read(sb.hosts)) == ORIGINAL})")
        truth_when_failing(case, "reddit", r, "No space")
        time.sleep(3.2)  # retries at 1 s and 3 s fail the same way
        t.check(len(failures_about(sb, "No space")) == 1, "full: the same failure was recorded again on a retry")
        t.check(read(sb.hosts) == ORIGINAL, "full: a retry on a full disk changed the hosts file")
        free(fs)
        ok = wait_for(lambda: "reddit.com" in section_domains(read(sb.hosts)))
        t.check(ok, f"full: the section was not written within {DEADLINE} s of freeing space")
        t.check(outside_section(read(sb.hosts)) == ORIGINAL, "full: user bytes changed after the retry")
        # The retry writes the file, then tells the engine: status may lag the file by a moment.
        t.check(wait_for(lambda: "reddit" in applied(sb)), f"full: applied does not list reddit within {DEADLINE} s of it being written")
        # T4: the failure clears when its cause is gone: status no longer lists it, failures keeps it resolved.
        t.check(wait_for(lambda: not failures_about(sb, "No space")), f"full: the written file leaves the failure in status: {sb.ok('status')['failures']}")
        listed = sb.ok("failures")["failures"]
        t.check(any("No space" in f["message"] and f.get("resolved") for f in listed), f"full: blockc failures keeps it, resolved: {listed}")
        t.check(sb.read_log().count("written again") == 1, "full: 'written again' was not logged exactly once")
        # §7 Truth: a stop whose write fails is an unblock pending, not "Unblocked", until it lands.
        fill(fs)
        r = sb.blockc("stop", "reddit")
        pending = [p.get("selection") for p in sb.ok("status")["enforcement"].get("unblockPending", [])]
        t.check(r.rc == 0 and pending == ["reddit"] and "reddit" in applied(sb) and "reddit.com" in section_domains(read(sb.hosts)),
                f"full: a stop on a full disk is not shown as an unblock pending ({r.rc} {r.stderr!r}, pending {pending})")
        t.check("Unblocked reddit" not in sb.read_log(), "full: 'Unblocked reddit' was logged while the file still held its lines")
        free(fs)
        t.check(wait_for(lambda: read(sb.hosts) == ORIGINAL), f"full: after stop the file is not byte-identical within {DEADLINE} s of freeing space")
        t.check(wait_for(lambda: "Unblocked reddit" in sb.read_log() and "reddit" not in applied(sb)),
                "full: the unlock was not logged, or reddit is still applied, once the write landed")


def case_readonly():
    with Case("readonly") as case:
        sb = case.sb
        ro = f"{sb.dir}/ro"
        os.makedirs(ro)
        sb.hosts = f"{ro}/hosts"
        open(sb.hosts, "wb").write(ORIGINAL)
        case.mount("--bind", ro, target=ro)
        sh("mount", "-o", "remount,ro,bind", ro)
        sb.start()
        r = sb.blockc("start", "--minutes", "10", "instagram")
        t.check(read(sb.hosts) == ORIGINAL, "readonly: the hosts file changed")
        truth_when_failing(case, "instagram", r, "Read-only")
        time.sleep(1.5)
        sh("mount", "-o", "remount,rw,bind", ro)
        ok = wait_for(lambda: "instagram.com" in section_domains(read(sb.hosts)))
        t.check(ok, f"readonly: not written within {DEADLINE} s of the remount, with no other request")
        t.check(outside_section(read(sb.hosts)) == ORIGINAL, "readonly: user bytes changed")
        t.check(wait_for(lambda: "instagram" in applied(sb)), f"readonly: applied does not list instagram within {DEADLINE} s of it being written")
        r = sb.blockc("stop", "instagram")
        t.check(r.rc == 0 and read(sb.hosts) == ORIGINAL, "readonly: after stop the file is not byte-identical")


def case_directory():
    with Case("directory") as case:
        sb = case.sb
        open(sb.hosts, "wb").write(ORIGINAL)
        sb.start()
        r = sb.blockc("start", "--minutes", "10", "reddit")
        t.check(r.rc == 0 and "reddit" in applied(sb), f"directory: a normal start failed ({r.rc} {r.stderr!r})")
        os.rename(sb.hosts, f"{sb.dir}/hosts.saved")
        os.mkdir(sb.hosts)
        ok = wait_for(lambda: failures_about(sb, "directory"))
        t.check(ok, f"directory: no failure recorded for a hosts path that became a directory: {sb.ok('status')['failures']}")
        t.check("reddit" not in applied(sb), "directory: status still claims reddit is applied")
        os.rmdir(sb.hosts)
        os.rename(f"{sb.dir}/hosts.saved", sb.hosts)
        ok = wait_for(lambda: "reddit" in applied(sb) and "reddit.com" in section_domains(read(sb.hosts)))
        t.check(ok, f"directory: not enforced again within {DEADLINE} s of the file coming back")
        sb.blockc("stop", "reddit")
        t.check(read(sb.hosts) == ORIGINAL, "directory: after stop the file is not byte-identical")


def case_symlink():
    with Case("symlink") as case:
        sb = case.sb
        os.makedirs(f"{sb.dir}/real")
        os.makedirs(f"{sb.dir}/link")
        target = f"{sb.dir}/real/hosts"
        open(target, "wb").write(ORIGINAL)
        sb.hosts = f"{sb.dir}/link/hosts"
        os.symlink("../real/hosts", sb.hosts)
        sb.start()
        r = sb.blockc("start", "--minutes", "10", "reddit")
        t.check(r.rc == 0, f"symlink: start failed ({r.rc} {r.stderr!r})")
        t.check(os.path.islink(sb.hosts), "symlink: the link was replaced by a regular file")
        t.check("reddit.com" in section_domains(read(target)), "symlink: the target did not get the section")
        t.check(outside_section(read(target)) == ORIGINAL, "symlink: user bytes of the target changed")
        t.check(os.listdir(f"{sb.dir}/real") == ["hosts"], f"symlink: stray files: {os.listdir(sb.dir + '/real')}")
        sb.blockc("stop", "reddit")
        t.check(os.path.islink(sb.hosts) and read(target) == ORIGINAL, "symlink: after stop the target is not byte-identical")


def case_bindfile():
    with Case("bindfile") as case:
        sb = case.sb
        fs = f"{sb.dir}/fs"
        case.tmpfs(fs)
        source = f"{fs}/hosts.src"
        open(source, "wb").write(ORIGINAL)
        open(sb.hosts, "wb").write(b"")
        case.mount("--bind", source, target=sb.hosts)
        sb.start()
        r = sb.blockc("start", "--minutes", "10", "reddit")
        t.check(r.rc == 0 and "reddit.com" in section_domains(read(source)), f"bindfile: in-place write failed ({r.rc} {r.stderr!r})")
        t.check("writing it in place" in sb.read_log(), "bindfile: the in-place write was not logged")
        sb.blockc("stop", "reddit")
        t.check(read(source) == ORIGINAL, "bindfile: after stop the file is not byte-identical")
        fill(fs)
        r = sb.blockc("start", "--minutes", "10", "instagram")
        t.check(read(source) == ORIGINAL, f"bindfile: on a full file system the in-place write lost bytes "
                f"({len(read(source))} of {len(ORIGINAL)} bytes, user part intact: {outside_section(read(source)) == ORIGINAL})")
        truth_when_failing(case, "instagram", r, "No space")
        time.sleep(0.5)
        free(fs)
        ok = wait_for(lambda: "instagram.com" in section_domains(read(source)))
        t.check(ok, f"bindfile: not written within {DEADLINE} s of freeing space")
        t.check(outside_section(read(source)) == ORIGINAL, "bindfile: wrong bytes outside the section")
        # The retry writes the file, then tells the engine, whose reconcile moves it to applied:
        # status may lag the file by a moment on a busy machine.
        t.check(wait_for(lambda: "instagram" in applied(sb)), f"bindfile: written but not applied within {DEADLINE} s")
        sb.blockc("stop", "instagram")
        t.check(read(source) == ORIGINAL, "bindfile: after the second stop the file is not byte-identical")


for name, case in [("full", case_full), ("readonly", case_readonly), ("directory", case_directory),
                   ("symlink", case_symlink), ("bindfile", case_bindfile)]:
    started = time.monotonic()
    before = t.failed
    try:
        case()
    except Exception as e:  # a broken case is a failure, and the next case still runs
        t.check(False, f"{name}: {type(e).__name__}: {e}")
    t.figures[name] = "ok" if t.failed == before else "FAILED"
    print(f"faults-hosts {name}: {'ok' if t.failed == before else 'FAILED'} ({time.monotonic() - started:.1f} s)", flush=True)
t.done()
