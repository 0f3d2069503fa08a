#!/usr/bin/env python3
"""T6 on the real binaries: wall-clock steps of +1 h and -1 h, with libfaketime following a file
so the clock can be stepped while blockd runs (the boot clock and timerfds stay real, so the
kernel's "clock was set" wake-up never comes: the daemon meets each step only when it next
looks, which is the case a real machine hits when a request is queued before that wake-up).
- (a) a step during a 6 s block: the block unlocks 6 s of elapsed time after its start;
- (b) a step while the daemon is idle, between two requests, then a new 6 s block: it is
  enforced at once, `status` shows it ending 6 s after the daemon's own now, and it unlocks 6 s
  of elapsed time after its start.
Every unlock is timed against the test's monotonic clock (±0.3 s). Nothing may be reported
blocked that the hosts file does not hold, and no log line may say a selection "stays blocked"
when nothing covers it.
Usage: torture/clockstep.py BIN_DIR [--quick]
"""
import os, queue, shutil, sys, tempfile, threading, time
from lib import Sandbox, Tally, faketime_libs, iso, section_domains

bindir = os.path.abspath(sys.argv[1])
t = Tally("clockstep")
TOLERANCE = 0.3
BLOCK = 6

shim_dir = tempfile.mkdtemp(prefix="bd-cs-shim-")
shim, LIBFAKETIME = faketime_libs(shim_dir)
if LIBFAKETIME is None:
    sys.exit("clockstep: libfaketime.so.1 not found (install the Debian package faketime)")
offset_file = os.path.join(shim_dir, "offset")


def set_offset(seconds):
    """Steps the faked wall clock: libfaketime re-reads this file on every clock read."""
    tmp = offset_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"{seconds:+d}\n")
    os.rename(tmp, offset_file)


def wrapped(argv):
    """argv under the faketime(1) wrapper (a Swift binary preloaded with libfaketime without it
    loses its arguments), with FAKETIME dropped so the offset file is followed."""
    return ["faketime", "-f", "+0s", "env", "-u", "FAKETIME",
            f"LD_PRELOAD={shim} {LIBFAKETIME}", f"FAKETIME_TIMESTAMP_FILE={offset_file}",
            "FAKETIME_NO_CACHE=1", "FAKETIME_DONT_FAKE_MONOTONIC=1"] + argv


class Watcher:
    """A `watch` connection on its own thread, stamping each unlock with the monotonic clock."""

    def __init__(self, sb):
        self.client = sb.client(timeout=None)
        reply = self.client.request("watch")
        if not reply.startswith("OK "):
            raise RuntimeError(f"watch refused: {reply}")
        self.unlocks = queue.Queue()
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        import json
        try:
            while True:
                line = self.client.readline()
                if line.startswith("EVENT "):
                    e = json.loads(line[6:])
                    if e.get("event") == "unlock":
                        self.unlocks.put((time.monotonic(), e["selection"]))
        except (OSError, ConnectionError, ValueError):
            pass

    def unlock_of(self, selection, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                at, name = self.unlocks.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                break
            if name == selection:
                return at
        return None


def start_block(sb, domain):
    """Starts a 6 s block through the real blockc; returns the monotonic instants around it."""
    before = time.monotonic()
    r = sb.blockc("start", "--for", f"{BLOCK}s", "--name", domain.split(".")[0], domain, prefix=wrapped([]))
    after = time.monotonic()
    t.check(r.rc == 0, f"blockc start {domain} failed ({r.rc}): {r.out}")
    return before, after


def check_truth(sb, c, what):
    """Everything status calls blocked is in the hosts file."""
    st = c.ok("status")
    blocked = {b["selection"] for b in st["blocked"]}
    in_file = section_domains(sb.read_hosts())
    t.check(blocked <= in_file, f"{what}: status reports {sorted(blocked - in_file)} blocked, the hosts file has {sorted(in_file)}")
    return st


def check_unlock(w, domain, started, what):
    before, after = started
    at = w.unlock_of(domain, BLOCK + 5)
    if not t.check(at is not None, f"{what}: {domain} was never unlocked (was it ever locked?)"):
        return
    # The block starts when the daemon receives the request: between `before` and `after`.
    early, late = at - (after + BLOCK), at - (before + BLOCK)
    t.check(early >= -TOLERANCE and late <= TOLERANCE,
            f"{what}: {domain} unlocked {at - before:.2f} s after blockc start (client took {after - before:.2f} s); expected {BLOCK} s ± {TOLERANCE}")
    t.figures.setdefault("unlockAfterS", []).append(round(at - before, 3))


sb = None
try:
    set_offset(0)
    sb = Sandbox(os.path.join(bindir, "blockd"), prefix="bd-cs-")
    sb.start(prefix=wrapped([]))
    first = sb.read_log().splitlines()[0] if sb.read_log() else ""
    if sb.socket not in first:
        raise RuntimeError(f"blockd under faketime is not using its sandbox flags: {first}")
    w = Watcher(sb)
    c = sb.client()
    offset = 0
    for step in (3600, -3600):
        # (a) the step lands while a 6 s block runs.
        domain = f"during{'-fwd' if step > 0 else '-back'}.example.com"
        started = start_block(sb, domain)
        check_truth(sb, c, f"step {step:+d} during a block")
        time.sleep(2)
        offset += step
        set_offset(offset)
        check_unlock(w, domain, started, f"step {step:+d} s during a 6 s block")

        # (b) the step lands while the daemon is idle, between two requests.
        c.ok("status")
        offset += step
        set_offset(offset)
        time.sleep(0.5)
        domain = f"after{'-fwd' if step > 0 else '-back'}.example.com"
        started = start_block(sb, domain)
        st = check_truth(sb, c, f"step {step:+d} while idle, then start")
        t.check(domain in section_domains(sb.read_hosts()), f"step {step:+d} while idle: the new block is not in the hosts file")
        mine = next((a for a in st["activities"] if a["name"] == domain.split(".")[0]), None)
        if t.check(mine is not None, f"step {step:+d} while idle: status does not show the new block"):
            left = iso(mine["end"]) - iso(st["now"])
            t.check(0 < left <= BLOCK + TOLERANCE, f"step {step:+d} while idle: status shows the new block ending {left:.1f} s after its now, not ≤ {BLOCK} s")
        check_unlock(w, domain, started, f"step {step:+d} s while idle, then a new 6 s block")
        check_truth(sb, c, f"step {step:+d}: after the unlocks")

    stays = [line for line in sb.read_log().splitlines() if "stay blocked" in line]
    t.check(not stays, f"the log claims selections stay blocked though nothing covers them: {stays[:2]}")
    t.check(section_domains(sb.read_hosts()) == set(), f"the hosts section still holds {section_domains(sb.read_hosts())}")
    print(f"clockstep: ±1 h wall steps during blocks and while idle; unlocks after {t.figures.get('unlockAfterS')} s; "
          f"{t.passed} checks passed, {t.failed} failed")
except Exception as e:
    t.check(False, f"harness: {type(e).__name__}: {e}; daemon log tail:\n{sb.read_log()[-2000:] if sb else ''}")
finally:
    if sb:
        sb.close()
    shutil.rmtree(shim_dir, ignore_errors=True)
t.done()
