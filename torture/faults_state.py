#!/usr/bin/env python3
"""§7 "Truth" with the real binaries, in a private mount namespace (root only):
- full disk: the state dir on a 64 KiB tmpfs, then filled: `blockc start` is answered OK only
  while the state log still has room in the blocks it holds, then exits non-zero with
  not-saved and the cause; a timer save that fails is retried and recovers on its own once
  space is freed; the next change succeeds; after a kill -9 and restart exactly what was
  acknowledged is there (nothing lost, nothing refused appears);
- read-only state dir (a read-only bind remount): the same truth, whether the already open
  state log keeps taking records or a change is refused;
- a bad selections.d file at restart with a --lock block and a 24 h schedule active: the hosts
  section still holds their domains and status says blockd runs on the last good configuration;
- a reload that removes a selection an active block uses: the block keeps its domains until
  its end, logged, and they are lifted at the end;
- a second blockd on the same state dir exits non-zero naming the first's pid, and does not
  touch the hosts file; `blockd --release` refuses while the first runs;
- a state file with 150 huge failures: status holds at most 100, and stays small.
Without root: skipped (a RESULT line with 0 failed); with BLOCKD_PRIVILEGED_TESTS=1 and not
root: failed.
Usage: torture/faults_state.py BLOCKD
"""
import errno, json, os, signal, subprocess, sys, time
from datetime import datetime
from zoneinfo import ZoneInfo
from lib import Sandbox, Tally, enter, section_domains, wait_for

blockd = os.path.abspath(sys.argv[1])
t = Tally("faults-state")
enter(t, ["-m", "--propagation", "private"], "needs root for tmpfs and bind mounts in a private mount namespace")

figures = t.figures
sandboxes, mounts = [], []


def sandbox(**kw):
    sb = Sandbox(blockd, prefix="bd-fs-", **kw)
    sandboxes.append(sb)
    return sb


def mount(*args):
    subprocess.run(["mount"] + list(args), check=True)


def names(sb):
    return {a["name"] for a in sb.ok('status {"all":true}')["activities"]}


def restart(sb):
    sb.kill(signal.SIGTERM)
    sb.start()


def refused_then_recovers(sb, label, spoil, heal, advice, must_refuse):
    """With the state dir spoiled: every change answered OK is on disk and every refused one is
    not (the state log appends to blocks it already holds, so a full disk refuses a change only
    once the log's last block is full too, and a file opened before a read-only remount stays
    writable). A refusal says not-saved with the cause; a timer save that fails is retried;
    once healed it recovers alone, the next change succeeds, and a restart after kill -9 keeps
    exactly what was acknowledged."""
    c = sb.client()
    c.ok('start {"selections":["reddit"],"seconds":3600,"name":"keep"}')
    c.ok('start {"selections":["short.example.com"],"seconds":2,"name":"short"}')
    spoil()
    acked, refused = {"keep"}, None
    for i in range(400):
        r = sb.blockc("start", "--for", "1h", "--name", f"g{i}", "youtube")
        if r.rc == 0:
            acked.add(f"g{i}")
            continue
        refused = f"g{i}"
        t.check("the change was not made" in r.out and advice in r.out and sb.state_dir in r.out,
                f"{label}: a refused start does not say not-saved and what to do: {r.out[:300]}")
        break
    figures[f"{label}AckedBeforeRefusal"] = len(acked) - 1
    if must_refuse:
        t.check(refused is not None, f"{label}: 400 starts were all answered OK on a full disk")
    r = sb.blockc("stop", "keep")
    if r.rc == 0:
        acked.discard("keep")
    else:
        t.check("the change was not made" in r.out, f"{label}: a failed stop does not say not-saved (exit {r.rc}): {r.out[:300]}")
    now = names(sb) - {"short"}
    t.check(now == acked, f"{label}: the registry {sorted(now)[:6]} is not what was acknowledged {sorted(acked)[:6]}")
    hosts = section_domains(sb.read_hosts())
    t.check(("youtube.com" in hosts) == any(n.startswith("g") for n in acked) and ("reddit.com" in hosts) == ("keep" in acked),
            f"{label}: enforcement does not match the registry: {sorted(hosts)[:8]}")
    # The short block ends meanwhile: if that timer reconcile's save fails, it is retried.
    t.check(wait_for(lambda: "short" not in names(sb)), f"{label}: the 2 s block did not end")
    problem = "stateProblem" in sb.ok("status")["enforcement"]
    if refused is not None:
        t.check(problem, f"{label}: status does not say the state file cannot be saved")
    heal()
    if problem:
        t.check(wait_for(lambda: "is saved again" in sb.read_log(), 70), f"{label}: the timer save did not recover on its own")
        # T4: the failure is resolved once saved again: status no longer lists it, failures keeps it.
        failures = [f for f in sb.ok("failures")["failures"] if f["code"] == "not-saved"]
        figures[f"{label}NotSavedFailures"] = len(failures)
        t.check(1 <= len(failures) <= 2, f"{label}: not-saved recorded {len(failures)} times (once per distinct cause expected)")
        t.check(all(f.get("resolved") for f in failures), f"{label}: saved again, each not-saved failure is resolved: {failures}")
        current = [f for f in sb.ok("status")["failures"] if f["code"] == "not-saved"]
        t.check(not current, f"{label}: saved again, status lists no not-saved failure: {current}")
    r = sb.blockc("start", "--for", "1h", "--name", "yt", "youtube")
    t.check(r.rc == 0, f"{label}: the next change after recovery failed: {r.out[:300]}")
    acked.add("yt")
    sb.kill(signal.SIGKILL)
    sb.start()
    after = names(sb)
    t.check(after == acked, f"{label}: after a restart the activities are {sorted(after)[:6]}, expected {sorted(acked)[:6]}")


def full_disk():
    sb = sandbox()
    os.makedirs(sb.state_dir)
    mount("-t", "tmpfs", "-o", "size=64k", "tmpfs", sb.state_dir)
    mounts.append(sb.state_dir)
    sb.start()
    filler = f"{sb.state_dir}/filler"

    def fill():
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise
        finally:
            os.close(fd)
    refused_then_recovers(sb, "fullDisk", fill, lambda: os.unlink(filler), "free space", must_refuse=True)


def read_only():
    sb = sandbox()
    sb.start()
    mount("--bind", sb.state_dir, sb.state_dir)
    mounts.append(sb.state_dir)
    refused_then_recovers(sb, "readOnly", lambda: mount("-o", "remount,bind,ro", sb.state_dir),
                          lambda: mount("-o", "remount,bind,rw", sb.state_dir), "writable", must_refuse=False)


def bad_config_at_restart():
    sb = sandbox(selections={"foo": ["foo.example"]})
    sb.start()
    c = sb.client()
    c.ok('start {"selections":["foo"],"seconds":3600,"lock":true}')
    hhmm = datetime.now(ZoneInfo(sb.env["TZ"])).strftime("%H:%M")
    c.ok('schedule-add {"name":"allday","window":"%s-%s","selections":["reddit"]}' % (hhmm, hhmm))
    before = section_domains(sb.read_hosts())
    t.check({"foo.example", "reddit.com"} <= before, f"bad config: set-up did not block foo and reddit: {sorted(before)[:6]}")
    sb.kill(signal.SIGTERM)
    with open(f"{sb.config_dir}/selections.d/b.conf", "w") as f:
        f.write("[Selection]\nName=b\nDomains=bad_domain.com\n")
    sb.start()
    after = section_domains(sb.read_hosts())
    t.check({"foo.example", "reddit.com"} <= after, f"bad config: a broken file lifted blocks: hosts section {sorted(after)[:6]}")
    s = sb.ok("status")
    blocked = {b["selection"] for b in s["blocked"]}
    t.check({"foo", "reddit"} <= blocked and set(s["enforcement"].get("applied", [])) >= {"foo", "reddit"},
            f"bad config: status blocked {sorted(blocked)}, applied {s['enforcement'].get('applied')}")
    t.check(s["enforcement"].get("config") == "last-good" and "b.conf" in s["enforcement"].get("configProblem", ""),
            f"bad config: status does not say it runs on the last good configuration: {s['enforcement']}")
    t.check(any(f["code"] == "invalid-config" for f in s["failures"]), "bad config: no invalid-config failure in status")
    t.check("last good configuration" in sb.read_log(), "bad config: the journal does not say it runs on the last good configuration")
    r = sb.blockc("status")
    t.check(r.rc == 0 and "Configuration:" in r.out and "last good configuration" in r.out,
            f"bad config: blockc status does not say it runs on the last good configuration: {r.out[-400:]}")
    # T4: the failure clears when its cause is gone: the file fixed and reloaded.
    with open(f"{sb.config_dir}/selections.d/b.conf", "w") as f:
        f.write("[Selection]\nName=b\nDomains=b.example\n")
    r = sb.blockc("reload")
    s = sb.ok("status")
    t.check(r.rc == 0 and not any(f["code"] == "invalid-config" for f in s["failures"]),
            f"bad config: the fixed, reloaded file leaves the failure in status: {r.out[:200]} {s['failures']}")
    listed = sb.ok("failures")
    listed = listed.get("failures", []) if isinstance(listed, dict) else listed
    t.check(any(f["code"] == "invalid-config" and f.get("resolved") for f in listed),
            f"bad config: blockc failures keeps it as resolved: {listed}")


def reload_removes_selection():
    sb = sandbox(selections={"foo": ["foo.example"]})
    sb.start()
    sb.ok('start {"selections":["foo"],"seconds":8,"name":"focus"}')
    os.unlink(f"{sb.config_dir}/selections.d/foo.conf")
    r = sb.blockc("reload")
    t.check(r.rc == 0, f"reload: {r.out[:300]}")
    t.check("foo.example" in section_domains(sb.read_hosts()), "reload: removing the selection lifted an active block's domains")
    t.check("Selection 'foo' was removed from the configuration; block 'focus' keeps its targets until it ends at" in sb.read_log(),
            "reload: the kept targets were not logged")
    t.check(wait_for(lambda: "foo.example" not in section_domains(sb.read_hosts())), "reload: the domains stayed after the block's end")


def second_daemon():
    sb = sandbox()
    sb.start()
    sb.ok('start {"selections":["reddit"],"seconds":3600,"name":"plain"}')
    hosts_before = sb.read_hosts()
    st_before = os.stat(sb.hosts)
    args = [blockd, "--socket", f"{sb.dir}/second.sock", "--state-dir", sb.state_dir, "--config-dir", sb.config_dir,
            "--hosts-file", sb.hosts, "--log-target", "console", "--policy-root", f"{sb.dir}/root",
            "--firewall", "no", "--cut-sockets", "no", "--user-tables-dir", f"{sb.dir}/users"]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=sb.env, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        t.check(False, "second daemon: it kept running on the same state directory")
    else:
        t.check(p.returncode != 0 and f"pid {sb.pid}" in out and sb.state_dir in out,
                f"second daemon: exit {p.returncode}, message: {out[-300:]}")
    time.sleep(1.5)
    st = os.stat(sb.hosts)
    t.check(sb.read_hosts() == hosts_before and (st.st_ino, st.st_mtime_ns) == (st_before.st_ino, st_before.st_mtime_ns),
            "second daemon: the hosts file was rewritten")
    t.check(sb.client().request("hello").startswith("OK "), "second daemon: the first stopped answering")
    r = subprocess.run([blockd, "--release", "--state-dir", sb.state_dir, "--config-dir", sb.config_dir, "--hosts-file", sb.hosts],
                       capture_output=True, text=True, env=sb.env, timeout=30)
    t.check(r.returncode != 0 and "running" in r.stderr, f"release: not refused while blockd runs: exit {r.returncode}, {r.stderr[-300:]}")
    t.check("reddit.com" in section_domains(sb.read_hosts()), "release: the running daemon's enforcement was removed")


def huge_failures():
    sb = sandbox()
    os.makedirs(sb.state_dir)
    message = "x" * 100_000
    failures = [{"time": 1_700_000_000 + i, "code": "internal", "message": f"{i} {message}"} for i in range(150)]
    with open(f"{sb.state_dir}/state.json", "w") as f:
        json.dump({"version": 1, "activities": [], "failures": failures}, f)
    sb.start()
    line = sb.client().request("status")
    s = json.loads(line[3:])
    figures["statusBytesWith150HugeFailures"] = len(line)
    t.check(len(s["failures"]) <= 100, f"huge failures: status holds {len(s['failures'])} failures")
    t.check(len(line) < 1_000_000, f"huge failures: status is {len(line)} bytes")


try:
    for check in (full_disk, read_only, bad_config_at_restart, reload_removes_selection, second_daemon, huge_failures):
        start = time.monotonic()
        try:
            check()
        except Exception as e:
            log = sandboxes[-1].read_log()[-1500:] if sandboxes else ""
            t.check(False, f"{check.__name__}: harness: {type(e).__name__}: {e}; daemon log tail:\n{log}")
        figures[f"{check.__name__}Seconds"] = round(time.monotonic() - start, 1)
finally:
    for sb in sandboxes:
        sb.kill()
    for path in reversed(mounts):
        subprocess.run(["umount", "-l", path], check=False)
    for sb in sandboxes:
        sb.close()
print(f"faults-state: {t.passed} checks passed, {t.failed} failed")
t.done()
