#!/usr/bin/env python3
"""T3/T6/T7 on the real binaries under faketime (libfaketime: clock_gettime and timerfd), in
TZ=America/New_York. Checked through `status` and the sandbox hosts file:
- midnight (T3): at 23:59:55 `blockc start --until 00:05` ends at 00:05 the next day; an 8 s
  block started at 23:59:55 is lifted after midnight and shows its full date;
- spring forward, 2026-03-08 (T7): a 01:00-02:30 window ends at 03:00 EDT (the gap's first
  valid instant) and is lifted then; a 02:30-04:00 window starts at 03:00 EDT; a 1 h block (T6)
  started at 01:59:55 EST lasts 3,600 s of elapsed time (ends 03:59:55 EDT);
- fall back, 2026-11-01 (T7): a 01:30-01:45 window takes the first 01:30 (EDT), is lifted at
  01:45 EDT and does not come back at 01:30 EST; a 01:00-02:00 window lasts two hours (ends 02:00 EST).
Usage: torture/clock.py BIN_DIR
"""
import calendar, os, shutil, sys, tempfile, time
from lib import Sandbox, Tally, faketime_libs, iso, section_domains, wait_for

bindir = os.path.abspath(sys.argv[1])
t = Tally("clock")
TZ = "America/New_York"
shim_dir = tempfile.mkdtemp(prefix="bd-ck-shim-")
shim, LIBFAKETIME = faketime_libs(shim_dir)
if LIBFAKETIME is None:
    sys.exit("clock: libfaketime.so.1 not found (install the Debian package faketime)")


# Through the faketime(1) wrapper, which forks: the sandbox runs it in its own process group
# and kills the group. (Preloading libfaketime 0.9.10 directly from Python's subprocess, without
# the wrapper, left a Swift binary with an empty CommandLine.arguments, so blockd ran on its
# built-in paths: never do that.) "YYYY-MM-DD HH:MM:SS UTC" is unambiguous on a fall-back night.
FAKE_ENV = {"LD_PRELOAD": shim, "FAKETIME_DONT_FAKE_MONOTONIC": "1"}


def utc(text):
    return calendar.timegm(time.strptime(text, "%Y-%m-%d %H:%M:%S"))


sandboxes = []


def daemon(start_utc):
    """A sandboxed blockd whose clocks start at start_utc (a UTC wall time) and then run."""
    sb = Sandbox(os.path.join(bindir, "blockd"), prefix="bd-ck-")
    sandboxes.append(sb)  # closed (and its daemon killed) even if it never starts serving
    sb.env["TZ"] = TZ
    sb.fake = f"{start_utc} UTC"
    sb.start(prefix=["faketime", sb.fake], env=FAKE_ENV)
    first = sb.read_log().splitlines()[0] if sb.read_log() else ""
    if sb.socket not in first:
        raise RuntimeError(f"blockd under faketime is not using its sandbox flags: {first}")
    return sb


def activity(st, name):
    return next((a for a in st["activities"] if a["name"] == name), None)


try:
    # --- midnight, an ordinary night (2026-03-06 -> 03-07, EST) ---
    sb = daemon("2026-03-07 04:59:55")   # 23:59:55 EST
    # The client's "now" must be the daemon's: same fake start, it runs for well under a second.
    r = sb.blockc("start", "--until", "00:05", "--name", "late", "until-midnight.example.com", prefix=["faketime", sb.fake], env=FAKE_ENV)
    t.check(r.rc == 0, f"midnight: blockc start --until 00:05 failed: {r.out}")
    c = sb.client()
    c.ok('start {"selections":["across-midnight.example.com"],"seconds":8,"name":"across"}')
    st = c.ok('status {"all":true}')
    late = activity(st, "late")
    t.check(late is not None and iso(late["end"]) == utc("2026-03-07 05:05:00"),
            f"T3: --until 00:05 at 23:59:55 should end 2026-03-07T00:05-05:00, got {late and late['end']}")
    across = activity(st, "across")
    t.check(across is not None and across["end"].startswith("2026-03-07T00:00:0"),
            f"T3: status shows the full date of an end after midnight: {across and across['end']}")
    t.check("across-midnight.example.com" in section_domains(sb.read_hosts()), "midnight: the 8 s block is not in the hosts file")
    t.check(wait_for(lambda: "across-midnight.example.com" not in section_domains(sb.read_hosts()), step=0.1),
            "midnight: the 8 s block across midnight was not lifted")
    now = iso(c.ok('status {"all":true}')["now"])
    t.check(now >= utc("2026-03-07 05:00:00"), f"midnight: the daemon's clock did not pass midnight ({now})")
    t.check("until-midnight.example.com" in section_domains(sb.read_hosts()), "midnight: the --until 00:05 block was lifted early")
    c.close()
    sb.close()

    # --- spring forward, 2026-03-08: 02:00 EST -> 03:00 EDT ---
    sb = daemon("2026-03-08 06:59:55")   # 01:59:55 EST
    c = sb.client()
    c.ok('schedule-add {"name":"gap-end","window":"01:00-02:30","selections":["gap-end.example.com"]}')
    c.ok('schedule-add {"name":"gap-start","window":"02:30-04:00","selections":["gap-start.example.com"]}')
    c.ok('start {"selections":["hour.example.com"],"seconds":3600,"name":"hour"}')
    st = c.ok('status {"all":true}')
    started = iso(st["now"])
    ge, gs, hour = activity(st, "gap-end"), activity(st, "gap-start"), activity(st, "hour")
    t.check(ge["active"] and iso(ge["end"]) == utc("2026-03-08 07:00:00"),
            f"T7: 01:00-02:30 on spring-forward night should end at 03:00 EDT, got {ge['end']}")
    t.check(not gs["active"] and iso(gs["start"]) == utc("2026-03-08 07:00:00") and iso(gs["end"]) == utc("2026-03-08 08:00:00"),
            f"T7: 02:30-04:00 should run 03:00-04:00 EDT, got {gs['start']} to {gs['end']}")
    t.check(abs(iso(hour["end"]) - (started + 3600)) < 2 and hour["end"].startswith("2026-03-08T03:59:5"),
            f"T6: a 1 h block at 01:59:55 EST should end 03:59:55 EDT, got {hour['end']}")
    hosts = section_domains(sb.read_hosts())
    t.check("gap-end.example.com" in hosts and "gap-start.example.com" not in hosts, f"spring forward: hosts before 03:00 holds {hosts}")
    t.check(wait_for(lambda: "gap-end.example.com" not in section_domains(sb.read_hosts()), step=0.1),
            "T7: the 01:00-02:30 window was not lifted at 03:00 EDT")
    hosts = section_domains(sb.read_hosts())
    t.check("gap-start.example.com" in hosts, f"T7: the 02:30-04:00 window did not start at 03:00 EDT: {hosts}")
    t.check("hour.example.com" in hosts, "T6: the 1 h block was lifted at the DST jump")
    c.close()
    sb.close()

    # --- fall back, 2026-11-01: 02:00 EDT -> 01:00 EST ---
    sb = daemon("2026-11-01 05:44:55")   # 01:44:55 EDT, the first 01:44
    c = sb.client()
    c.ok('schedule-add {"name":"first","window":"01:30-01:45","selections":["first.example.com"]}')
    c.ok('schedule-add {"name":"long","window":"01:00-02:00","selections":["long.example.com"]}')
    st = c.ok('status {"all":true}')
    first, long_ = activity(st, "first"), activity(st, "long")
    t.check(first["active"] and iso(first["end"]) == utc("2026-11-01 05:45:00"),
            f"T7: 01:30-01:45 on fall-back night takes the first occurrence (ends 01:45 EDT), got {first['start']} to {first['end']}")
    t.check(long_["active"] and iso(long_["start"]) == utc("2026-11-01 05:00:00") and iso(long_["end"]) == utc("2026-11-01 07:00:00"),
            f"T7: 01:00-02:00 on fall-back night lasts two hours (01:00 EDT to 02:00 EST), got {long_['start']} to {long_['end']}")
    t.check(wait_for(lambda: "first.example.com" not in section_domains(sb.read_hosts()), step=0.1),
            "T7: the 01:30-01:45 window was not lifted at 01:45 EDT")
    st = c.ok('status {"all":true}')
    first = activity(st, "first")
    t.check(not first["active"] and iso(first["start"]) == utc("2026-11-02 06:30:00"),
            f"T7: after 01:45 EDT the next 01:30-01:45 window is tomorrow's (not 01:30 EST tonight), got {first['start']}")
    t.check("long.example.com" in section_domains(sb.read_hosts()), "T7: the two-hour fall-back window was lifted early")
    c.close()
    sb.close()
    print(f"clock: midnight, spring-forward and fall-back nights in {TZ} under faketime: {t.passed} checks passed, {t.failed} failed")
except Exception as e:
    t.check(False, f"harness: {type(e).__name__}: {e}; daemon log tail:\n{sandboxes[-1].read_log()[-2000:] if sandboxes else ''}")
finally:
    for s in sandboxes:
        s.close()
    shutil.rmtree(shim_dir, ignore_errors=True)
t.done()
