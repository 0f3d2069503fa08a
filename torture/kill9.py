#!/usr/bin/env python3
"""kill -9 at random moments across OPS start/stop/schedule operations, with restarts (T8).

After every kill: the state file parses, and every complete line of the state log is a record
whose CRC-32 (zlib) matches. After every restart: every acknowledged activity
whose end has not passed is still registered, no block whose end passed is still registered
or in the hosts section, and every block that ended while blockd was down is caught up
(logged "Catching up ... ended" and lifted). Requests in flight at the kill may or may not
have happened; the restarted daemon decides, and the model follows it.
Then the torn tail: 200 starts pipelined on one connection, kill -9 while they are being
written, a torn half record appended to the log; after a restart every acknowledged block is
there, the torn record was cut (kept aside) and recorded as a failure.
Usage: torture/kill9.py BLOCKD OPS [SEED]
"""
import json, os, random, signal, sys, time, zlib
from lib import Sandbox, Tally, section_domains

blockd, ops = sys.argv[1], int(sys.argv[2])
seed = int(sys.argv[3]) if len(sys.argv) > 3 else int(time.time())
rng = random.Random(seed)
t = Tally("kill9")
t.figures.update(seed=seed, ops=ops)
counts = dict(acked=0, inFlightAtKill=0, kills=0, restarts=0, stateFileParsed=0, caughtUpEnds=0,
              refused=0, activitiesChecked=0, logLinesChecked=0, tornAcked=0)

blocks = {}      # name -> {lo, hi}: end instant bounds (request sent / answer read + seconds)
schedules = set()
sb = Sandbox(blockd, config="[Daemon]\nMaxActivities=1000\n", prefix="bd-k9-")
sb.env["TZ"] = "UTC"
log_offset = 0


def status(c):
    return c.ok('status {"all":true}')  # idle schedules too


def verify(c, restarted_at=None, killed_at=None):
    # The daemon's state is somewhere between these two instants (a loaded machine may answer
    # late): a block that ended 0.3 s before `asked` must be gone, one that ends 0.5 s after
    # `answered` must be there.
    asked = time.time()
    st = status(c)
    answered = time.time()
    names = {a["name"]: a for a in st["activities"]}
    hosts = section_domains(sb.read_hosts())
    log = sb.read_log()[log_offset:]
    for name, b in list(blocks.items()):
        counts["activitiesChecked"] += 1
        dom = f"{name}.example.com"
        if b["hi"] < asked - 0.3:
            t.check(name not in names, f"block {name} ended {asked - b['hi']:.1f} s before status was asked but is still registered")
            t.check(dom not in hosts, f"block {name} ended {asked - b['hi']:.1f} s before status was asked but {dom} is still in the hosts section")
            if killed_at is not None and b["lo"] > killed_at + 0.05 and b["hi"] < restarted_at:
                counts["caughtUpEnds"] += 1
                t.check(f"'{name}' ended" in log and "Catching up" in log,
                        f"block {name} ended while blockd was down and was not caught up in the log")
            del blocks[name]
        elif b["lo"] > answered + 0.5:
            t.check(name in names, f"block {name} (ends in {b['lo'] - answered:.1f} s) was lost")
    for s in list(schedules):
        counts["activitiesChecked"] += 1
        t.check(s in names, f"schedule {s} was lost")
    return names


def restart():
    global log_offset
    log_offset = len(sb.read_log())
    sb.start()
    counts["restarts"] += 1
    return sb.client()


def kill_now():
    sb.kill(signal.SIGKILL)
    counts["kills"] += 1
    path = f"{sb.state_dir}/state.json"
    if os.path.exists(path):
        try:
            json.load(open(path))
            t.check(True, "")
            counts["stateFileParsed"] += 1
        except ValueError as e:
            t.check(False, f"state file does not parse after kill -9: {e}")
    # Left-over temp files from an interrupted atomic write are fine; a truncated state is not.
    check_log_lines()
    return time.time()


def check_log_lines():
    """Every complete line of the state log is a record: JSON, and its crc is zlib's CRC-32 of
    the line without its `,"crc":"..."` member."""
    path = f"{sb.state_dir}/state.log"
    if not os.path.exists(path):
        return
    for line in open(path, "rb").read().split(b"\n")[:-1]:
        counts["logLinesChecked"] += 1
        good = line[-18:-10] == b',"crc":"' and line.endswith(b'"}')
        good = good and zlib.crc32(line[:-18] + b"}") == int(line[-10:-2], 16)
        try:
            json.loads(line)
        except ValueError:
            good = False
        t.check(good, f"state log line is not a checked record: {line[:120]!r}")


def torn_tail():
    """kill -9 while 200 pipelined starts are written, then a torn record appended: every
    acknowledged block survives, the torn record is cut and recorded."""
    global log_offset
    c = sb.client()
    names = [f"torn{i}" for i in range(200)]
    c.send(b"".join(("start " + json.dumps({"selections": [f"{n}.example.com"], "seconds": 600, "name": n}) + "\n").encode()
                    for n in names))
    acked = set()
    for n in names[:50]:
        if c.readline().startswith("OK "):
            acked.add(n)
    sb.kill(signal.SIGKILL)
    for n in names[50:]:
        try:
            reply = c.readline()
        except OSError:
            break
        if reply.startswith("OK "):
            acked.add(n)
    c.close()
    counts["tornAcked"] = len(acked)
    path = f"{sb.state_dir}/state.log"
    data = open(path, "rb").read()
    last = data.rstrip(b"\n").rsplit(b"\n", 1)[-1]
    with open(path, "ab") as f:
        f.write(last[: len(last) // 2])
    torn = len(last) // 2
    log_offset = len(sb.read_log())
    sb.start()
    c = sb.client()
    st = c.ok("status")
    have = {a["name"] for a in st["activities"]}
    t.check(acked <= have, f"torn tail: acknowledged blocks lost: {sorted(acked - have)[:10]}")
    t.check(any(f"incomplete record of {torn} bytes" in f["message"] for f in st["failures"]),
            f"torn tail: the cut is not recorded as a failure: {[f['message'][:100] for f in st['failures']][-3:]}")
    t.check(any(p.startswith("state.log.cut-") for p in os.listdir(sb.state_dir)), "torn tail: the cut record was not kept aside")
    c.close()


try:
    sb.start()
    c = sb.client()
    i = 0
    while i < ops:
        i += 1
        live = [n for n, b in blocks.items() if b["lo"] > time.time() + 1]
        r = rng.random()
        if r < 0.45 or not (live or schedules):
            name = f"b{i}"
            secs = rng.choice([1, 2, 3, 4]) if rng.random() < 0.7 else 600
            op = ("start", name, secs)
            line = "start " + json.dumps({"selections": [f"{name}.example.com"], "seconds": secs, "name": name})
        elif r < 0.7 and live:
            name = rng.choice(live)
            op = ("stop", name)
            line = "stop " + json.dumps({"name": name})
        elif r < 0.9 or not schedules:
            name = f"s{i}"
            h, m = rng.randrange(24), rng.randrange(60)
            op = ("schedule-add", name)
            line = "schedule-add " + json.dumps({"name": name, "window": f"{h:02}:{m:02}-{(h + rng.randrange(1, 4)) % 24:02}:{m:02}",
                                                 "selections": [f"{name}.example.com"]})
        else:
            name = rng.choice(sorted(schedules))
            op = ("schedule-remove", name)
            line = "schedule-remove " + json.dumps({"name": name})
        mode = rng.random()
        sent = time.time()
        if mode < 0.10:
            # kill -9 while the request is being handled (0-4 ms after sending it)
            c.send(line.encode() + b"\n")
            time.sleep(rng.random() * 0.004)
            killed_at = kill_now()
            counts["inFlightAtKill"] += 1
            try:
                reply = c.readline()
            except OSError:
                reply = None
            c.close()
            if rng.random() < 0.3:
                time.sleep(rng.random() * 2.5)  # let short blocks end while blockd is down
            restarted = time.time()
            c = restart()
            names = {a["name"] for a in status(c)["activities"]}
            # The model follows what the restarted daemon says happened (or an answer we got).
            if op[0] == "start":
                if name in names or (reply or "").startswith("OK "):
                    blocks[name] = {"lo": sent + op[2], "hi": time.time() + op[2]}
                    t.check(name in names or sent + op[2] < time.time() + 0.5,
                            f"start of {name} was answered OK before the kill but is lost")
            elif op[0] == "stop":
                if name not in names:
                    blocks.pop(name, None)
                else:
                    t.check(not (reply or "").startswith("OK "), f"stop of {name} was answered OK but the block is back")
            elif op[0] == "schedule-add":
                if name in names:
                    schedules.add(name)
                else:
                    t.check(not (reply or "").startswith("OK "), f"schedule {name} was answered OK but is lost")
            else:
                if name not in names:
                    schedules.discard(name)
                else:
                    t.check(not (reply or "").startswith("OK "), f"removal of {name} was answered OK but it is back")
            verify(c, restarted_at=restarted, killed_at=killed_at)
            continue
        reply = c.request(line)
        got = time.time()
        if not reply.startswith("OK "):
            counts["refused"] += 1
            t.check(False, f"{line[:80]} refused: {reply[:200]}")
            continue
        counts["acked"] += 1
        if op[0] == "start":
            blocks[name] = {"lo": sent + op[2], "hi": got + op[2]}
        elif op[0] == "stop":
            blocks.pop(name, None)
        elif op[0] == "schedule-add":
            schedules.add(name)
        else:
            schedules.discard(name)
        if mode < 0.16:
            # kill -9 between requests, sometimes with a pause so that blocks end meanwhile
            killed_at = kill_now()
            c.close()
            if rng.random() < 0.3:
                time.sleep(rng.random() * 2.5)
            restarted = time.time()
            c = restart()
            verify(c, restarted_at=restarted, killed_at=killed_at)
        elif i % 50 == 0:
            verify(c)
    # Let every short block end, then check they were all lifted.
    time.sleep(5)
    verify(c)
    c.close()
    torn_tail()
    print(f"kill -9: {ops} operations (seed {seed}): {counts['kills']} kills ({counts['inFlightAtKill']} with a request in flight),"
          f" {counts['restarts']} restarts, state file parsed after every kill ({counts['stateFileParsed']}),"
          f" {counts['activitiesChecked']} activity checks, {counts['caughtUpEnds']} ends missed while down and caught up,"
          f" {counts['logLinesChecked']} log lines checked; torn tail: {counts['tornAcked']} acknowledged of 200 pipelined, all kept")
except Exception as e:  # a crash of the harness is a failure, not a pass
    t.check(False, f"harness: {type(e).__name__}: {e}; daemon log tail:\n{sb.read_log()[-2000:]}")
finally:
    sb.close()
t.figures.update(counts)
t.done()
