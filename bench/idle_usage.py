"""R1's promise, measured: the usage ledger keeps blockd at zero idle wake-ups while the
usage monitor follows apps, and costs about one checkpoint a minute while one of them runs.

blockd gets the 20 domain activities of bench/ipc.py's idle phase plus three naming
selections with `Apps=` (each a copy of /usr/bin/sleep in the sandbox, so nothing else on the
machine runs them): a schedule whose window opens in 6 hours (benchapp), a daily limit of
23 h (benchgame) and a day-long block (benchblocked, so the app shield holds its mark too).
A second blockd with the 20 domain activities only (the control) and an idle redis-server
(hz 10) are measured in the same windows: the control's figures are what the apps add to.
In each window, the voluntary context switches of every thread, read from /proc (which does
not wake them) every 0.1 s, so that switches less than 0.5 s apart count as one wake-up (the apps' own: blockd's less
the control's); and
for both daemons /proc/PID/io (bytes written to disk, bytes and calls through write(2)), the
state log's records (a checkpoint is one) and the state directory's growth:
1. idle, none of the apps running (IDLE seconds; target 0 switches, as in bench/ipc.py);
2. benchapp running (RUN seconds): only the report's ledger counts it (R1);
3. benchgame running (RUN seconds): the limit's ledger counts it too (§9).
Each running phase starts the copy as a child of this script (killed at the phase's end, and
in any case on the way out), waits until the report shows it and starts measuring 3 s later
(the request's connection linger is over); after the kill, the report's seconds for the app
(all users) are compared with the time it ran as measured here.
The usage monitor's mode (fanotify as root, the /proc scan otherwise) comes from `status`.
Usage, from the repository's root: python3 -m bench.idle_usage BIN_DIR [IDLE_SECONDS] [RUN_SECONDS]
"""
import json, os, shutil, subprocess, sys, time
from datetime import datetime, timedelta, timezone
from bench.measure import GAP, SAMPLE, start_redis, watch
from torture.lib import Sandbox, wait_for

bindir = os.path.abspath(sys.argv[1])
idle_seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 30
run_seconds = int(sys.argv[3]) if len(sys.argv) > 3 else 120


def report_seconds(c, app):
    days = c.ok('report {"days": 1, "allUsers": true}').get("days") or [{}]
    return days[-1].get("apps", {}).get(app)


def limit_used(c, name):
    for a in c.ok("limit-list")["limits"]:
        if a.get("name") == name:
            return a
    return None


def populate(sb, with_apps):
    """bench/ipc.py's 20 domain activities (10 day-long blocks, 10 schedules opening in 6
    hours) and, with_apps, three more naming the app selections, one of each kind."""
    c = sb.client()
    for i in range(10):
        c.ok("start " + json.dumps({"selections": [f"idle{i}.example.com"], "seconds": 86400}))
    start = datetime.now(timezone.utc) + timedelta(hours=6)
    window = f"{start:%H}:00-{(start + timedelta(hours=1)):%H}:00"
    for i in range(10):
        c.ok("schedule-add " + json.dumps({"name": f"idle{i}", "window": window, "selections": [f"sched{i}.example.com"]}))
    if with_apps:
        c.ok("schedule-add " + json.dumps({"name": "appsched", "window": window, "selections": ["benchapp"]}))
        c.ok("limit-add " + json.dumps({"name": "applimit", "seconds": 82800, "selections": ["benchgame"]}))
        c.ok("start " + json.dumps({"selections": ["benchblocked"], "seconds": 86400, "name": "appblock"}))
    enforcement = c.ok("status").get("enforcement", {})
    c.close()
    return enforcement


def phase(seconds):
    """One window over both daemons and redis-server: blockd's figures, the control's and
    redis-server's next to them."""
    w = watch({"blockd": sb.pid, "control": base.pid, "redis": redis.pid}, seconds,
              {"blockd": sb.state_dir, "control": base.state_dir})
    p = w["blockd"]
    p["control"] = w["control"]
    p["redisVoluntarySwitches"] = w["redis"]["voluntarySwitches"]
    # The apps' own: blockd's wake-ups less the control's (what wakes both, such as U3's 10 s
    # tables audit or a change in /etc, is not theirs; the two audits do not run in step, so
    # the count is compared, not the instants).
    p["ownWakeups"] = p["wakeups"] - w["control"]["wakeups"]
    p["ownWakeupsPerMinute"] = round(p["ownWakeups"] * 60 / p["seconds"], 2)
    return p


def woken(p):
    return f"; woken: {p['woken']} at {p['wakeupTimes']} s" if p["woken"] else ""


redis, rsock, work = start_redis("bd-usage-redis-")
sb = Sandbox(os.path.join(bindir, "blockd"), prefix="bd-usage-")
base = Sandbox(os.path.join(bindir, "blockd"), prefix="bd-usage-control-")
sb.env["TZ"] = base.env["TZ"] = "UTC"
apps = {}
os.makedirs(f"{sb.dir}/apps")
for name in ("benchapp", "benchgame", "benchblocked"):
    apps[name] = f"{sb.dir}/apps/blockd-{name}"
    shutil.copy("/usr/bin/sleep", apps[name])
    with open(f"{sb.config_dir}/selections.d/{name}.conf", "w") as f:
        f.write(f"[Selection]\nName={name}\nDomains={name}.example.com\nApps={apps[name]}\n")
running = None
r = {"idleSeconds": idle_seconds, "runSeconds": run_seconds, "sampleSeconds": SAMPLE, "burstGapSeconds": GAP, "activities": 23}
try:
    sb.start()
    base.start()
    enforcement = populate(sb, True)
    populate(base, False)
    r["usageMode"], r["shieldMode"] = enforcement.get("usage"), enforcement.get("apps")
    print(f"usage monitor: {r['usageMode']}, app shield: {r['shieldMode']} ({'root' if os.geteuid() == 0 else 'not root'});"
          f" 23 activities, 3 naming selections with Apps= (a schedule, a limit, a block); control: a second blockd with"
          f" the 20 domain activities only, measured in the same windows")
    time.sleep(10)  # connection linger timers (2 s) have run and idle libdispatch workers have exited

    i = r["idle"] = phase(idle_seconds)
    print(f"idle, apps followed, none running: {i['voluntarySwitches']} voluntary context switches in {i['seconds']} s, all threads"
          f" ({i['wakeups']} wake-ups); control {i['control']['voluntarySwitches']} ({i['control']['wakeups']} wake-ups);"
          f" redis-server, hz 10: {i['redisVoluntarySwitches']}; {i['writeBytesPerMinute']} bytes written/min" + woken(i))

    for key, name, counted in (("app", "benchapp", "the report's ledger (R1)"), ("limitedApp", "benchgame", "the report's and the limit's ledgers")):
        c = sb.client()
        before = report_seconds(c, apps[name]) or 0
        t_start = time.monotonic()
        running = subprocess.Popen([apps[name], "600"])
        seen = time.monotonic() - t_start if wait_for(lambda: report_seconds(c, apps[name]) is not None, 10, 0.1) else None
        c.close()
        time.sleep(3)
        p = phase(run_seconds)
        running.kill()
        running.wait()
        ran = time.monotonic() - t_start
        running = None
        time.sleep(1)  # the exit is seen through a pidfd
        c = sb.client()
        p["ranSeconds"] = round(ran, 1)
        p["seenAfterSeconds"] = seen and round(seen, 2)
        p["reportSeconds"] = (report_seconds(c, apps[name]) or 0) - before
        p["reportMinusRan"] = round(p["reportSeconds"] - ran, 1)
        if name == "benchgame":
            p["limitUsedSeconds"] = (limit_used(c, "applimit") or {}).get("used")
        c.close()
        r[key] = p
        print(f"{name} running ({counted}), {p['seconds']} s: {p['wakeups']} wake-ups ({p['wakeupsPerMinute']}/min),"
              f" {p['voluntarySwitches']} voluntary switches ({p['switchesPerMinute']}/min); control {p['control']['wakeups']} wake-ups,"
              f" {p['control']['voluntarySwitches']} switches: {p['ownWakeupsPerMinute']:+}/min over the control;"
              f" redis-server {p['redisVoluntarySwitches']}" + woken(p))
        print(f"  written per minute: {p['stateLogRecordsPerMinute']} state-log records (control {p['control']['stateLogRecordsPerMinute']}), {p['writeBytesPerMinute']} bytes to disk (write_bytes), {p['wcharPerMinute']} bytes in"
              f" {p['writeCallsPerMinute']} write calls (wchar, syscw), state dir +{p['stateDirGrowthBytesPerMinute']} bytes;"
              f" control: {p['control']['writeBytesPerMinute']}, {p['control']['wcharPerMinute']} in {p['control']['writeCallsPerMinute']}")
        print(f"  report: {p['reportSeconds']} s for an app that ran {p['ranSeconds']} s ({p['reportMinusRan']:+} s; seen after"
              f" {p['seenAfterSeconds']} s)" + (f"; limit used: {p['limitUsedSeconds']} s" if "limitUsedSeconds" in p else ""))
    print("JSON " + json.dumps(r))
finally:
    if running:
        running.kill()
        running.wait()
    sb.close()
    base.close()
    redis.terminate()
    redis.wait()
    shutil.rmtree(work, ignore_errors=True)
