"""What the suites that boot a systemd of their own (unit.py, deb.py, fleet.py, outsider.py)
share around torture/sysrig.py's rig: their opening (`begin`), whether they can run here, the
binaries they install, a deadline that stops the rig whatever happens, and timed steps."""
import os, shutil, signal, sys, time, traceback

from sysrig import SYSTEMD, TOOLS, cgroup2


NEEDS_ROOT = "needs root to boot a systemd of its own (overlay root, mount/PID/network namespaces)"


def begin(t, tools, seconds, repo):
    """The opening of a suite run as `torture/NAME.py BIN_DIR`: BIN_DIR, the tools it needs
    besides the rig's (else skipped or failed, `require`), the binaries and the NSS module it
    installs (`binaries`), and its deadline. Returns BIN_DIR and the module's path."""
    if len(sys.argv) != 2:
        sys.exit(f"usage: torture/{t.suite}.py BIN_DIR")
    bindir = os.path.realpath(sys.argv[1])
    require(t, tools, NEEDS_ROOT)
    nss = binaries(t, bindir, repo)
    deadline(seconds)
    return bindir, nss


def require(t, tools, needs):
    """Returns if the rig can run here; otherwise ends the suite: skipped with the reason, or
    failed with BLOCKD_PRIVILEGED_TESTS=1 (as rig.enter does)."""
    why = needs if os.geteuid() != 0 else None
    missing = [x for x in TOOLS + list(tools) if not shutil.which(x) and not os.path.exists(f"/usr/sbin/{x}")]
    if not os.access(SYSTEMD, os.X_OK):
        missing.append(SYSTEMD)
    if not why and missing:
        why = f"missing {' '.join(missing)} (scripts/deps check)"
    if not why and cgroup2() is None:
        why = "no cgroup v2 hierarchy mounted (the rig's systemd gets a cgroup of its own there)"
    if why:
        t.cannot_run(why)


def binaries(t, bindir, repo):
    """The NSS module the rig installs, after checking that it and the built executables exist
    and that the module is not older than its source (the repository is read-only in the
    rig, which cannot build it); otherwise ends the suite, failed, with what to run."""
    nss = f"{repo}/.build/nss/libnss_blockd.so.2"
    missing = [p for p in (f"{bindir}/blockd", f"{bindir}/blockc", f"{bindir}/blockc-agent", nss) if not os.path.exists(p)]
    if missing:
        t.check(False, f"missing {' '.join(missing)} (swift build; make nss)")
        t.done()
    if os.path.getmtime(nss) < os.path.getmtime(f"{repo}/nss/nss_blockd.c"):
        t.check(False, f"{nss} is older than nss/nss_blockd.c: make nss (the repository is read-only in the rig)")
        t.done()
    return nss


class Timeout(Exception):
    """A suite ran over its time, or was told to stop: raised in it so that its `finally`
    stops the rig."""


def deadline(seconds):
    """Raises Timeout in the suite after `seconds`, and at SIGTERM, SIGINT or SIGHUP."""
    def on_signal(signum, frame):
        raise Timeout(f"signal {signum}" if signum != signal.SIGALRM else f"the suite ran over {seconds} s")
    for s in (signal.SIGALRM, signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, on_signal)
    signal.alarm(seconds)


def timed(t, name):
    """A `with` block whose seconds are recorded under t.figures[name]."""
    class Step:
        def __enter__(self):
            self.start = time.monotonic()

        def __exit__(self, *exc):
            t.figures[name] = round(time.monotonic() - self.start, 2)
    return Step()


def fail(t, rig, e):
    """A suite's broken rig or timeout as one failure with its reason and the journal's tail."""
    tail = ""
    try:
        if rig.pid1:
            tail = "\n" + rig.run("journalctl", "-b", "--no-pager", "-n", "30", check=False).stdout
    except Exception:
        pass
    t.check(False, f"{type(e).__name__}: {e}{tail}")


def run_items(t, rig, setup, items):
    """A suite of named items in a booted rig: boot, `setup`, then each `(name, function)` in
    turn, one item's breakage its own failure (the others run); a broken rig or a timeout is one
    failure with its reason. The rig is stopped whatever happens; then `t.done()`. Figures:
    bootSeconds, setupSeconds, each item's ok and seconds, and the whole run's seconds."""
    started = time.monotonic()
    try:
        rig.boot()
        t.figures["bootSeconds"] = round(rig.boot_seconds_taken, 2)
        with timed(t, "setupSeconds"):
            setup()
        t.figures["items"] = {}
        for name, item in items:
            failed, start = t.failed, time.monotonic()
            try:
                item()
            except Timeout:
                raise
            except Exception as error:  # one item's breakage is its failure, not the others'
                where = traceback.format_exc().strip().splitlines()[-3]
                t.check(False, f"{name}: {type(error).__name__}: {error} at {where}")
            t.figures["items"][name] = {"ok": t.failed == failed, "seconds": round(time.monotonic() - start, 1)}
    except Exception as e:  # a broken rig or a timeout is a failure with its reason
        fail(t, rig, e)
    finally:
        stop(t, rig)
        t.figures["seconds"] = round(time.monotonic() - started, 1)
    t.done()


def stop(t, rig):
    """Stops the rig whatever happened; nothing interrupts the stop."""
    signal.alarm(0)
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, signal.SIG_IGN)
    try:
        rig.stop()
    except Exception as e:
        t.check(False, f"stopping the rig: {e}")

