"""Scale: the cost of one change at 10 and at 100,000 activities, in one run.

1. Registration: 100,000 one-shot blocks (`start` with distinct names over 100 ad-hoc
   domains), pipelined over one connection (64 in flight, the server's per-connection queue),
   from empty, for at most BUDGET seconds. The figure is what was measured; when the budget
   runs out first, a least-squares fit t(n) = a*n^2 + b*n over the progress marks estimates
   the time for 100,000 (a is ~0 when the cost per change does not grow with the count).
2. Sizes 10 / 1,000 / 10,000 / 100,000: N activities, of which 5 are active blocks and the rest
   schedules whose windows open 2 to 14 hours from now (idle). The daemon starts on a prepared
   state file in the format blockd writes; if it does not load that file (the format changed),
   the population is registered over the wire instead (pipelined). Then, median of ROUNDS:
   `status` (5 active), `start` of a 1-domain block (the N+1st activity) and its `stop`,
   `failures-clear` (persist only); start-up to the first answer, and RSS after the rounds.
   `start` at 100,000 against `start` at 10 is the ratio the target is set on.
Usage, from the repository's root: python3 -m bench.scale BLOCKD [BUDGET_SECONDS] [ROUNDS] [SIZES]   (SIZES: comma-separated)
"""
import json, os, statistics, sys, time
from bench.measure import rss_kib
from torture.lib import Sandbox

blockd = sys.argv[1]
budget = float(sys.argv[2]) if len(sys.argv) > 2 else 60
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
SIZES = [int(s) for s in sys.argv[4].split(",")] if len(sys.argv) > 4 else [10, 1_000, 10_000, 100_000]
TARGET = 100_000
ACTIVE = 5
# 100,000 activities plus the block whose `start` is timed (blockd's default cap is lower).
CONFIG = "[Daemon]\nMaxActivities=100001\n"
DEPTH = 64
result = {"activeBlocks": ACTIVE}


def block_request(i):
    return "start " + json.dumps({"selections": [f"d{i % 100}.example.com"], "seconds": 86400, "name": f"b{i}"})


def pipelined(c, lines, budget_s=None):
    """Sends `lines` with DEPTH in flight; returns (done, seconds, marks [(count, seconds)])."""
    sent = done = 0
    marks = []
    t0 = time.perf_counter()
    total = len(lines)
    while done < total:
        while sent < total and sent - done < DEPTH and (budget_s is None or time.perf_counter() - t0 < budget_s):
            c.send(lines[sent].encode() + b"\n")
            sent += 1
        if done == sent:
            break
        r = c.readline()
        if not r.startswith("OK "):
            raise SystemExit(f"request {done} ({lines[done][:80]}) refused: {r[:300]}")
        done += 1
        if done % 100 == 0:
            marks.append((done, time.perf_counter() - t0))
    return done, time.perf_counter() - t0, marks


def fit_seconds(marks, n):
    """t(n) ~ a*n^2 + b*n, least squares through the origin."""
    s22 = sum(m ** 4 for m, _ in marks); s12 = sum(m ** 3 for m, _ in marks); s11 = sum(m ** 2 for m, _ in marks)
    y2 = sum(t * m ** 2 for m, t in marks); y1 = sum(t * m for m, t in marks)
    det = s22 * s11 - s12 * s12
    if not det:
        return None
    qa = (y2 * s11 - y1 * s12) / det
    qb = (s22 * y1 - s12 * y2) / det
    return round(qa * n ** 2 + qb * n)


# 1. Registration, pipelined.
with Sandbox(blockd, config=CONFIG, prefix="bd-scale-") as sb:
    sb.env["TZ"] = "UTC"
    sb.start()
    c = sb.client(timeout=600)
    done, elapsed, marks = pipelined(c, [block_request(i) for i in range(TARGET)], budget)
    c.close()
    result["registered"] = done
    result["registerSeconds"] = round(elapsed, 1)
    if len(marks) >= 2:
        a = marks[max(0, int(len(marks) * 0.9) - 1)]
        b = marks[-1]
        result["marginalMsAtEnd"] = round((b[1] - a[1]) / (b[0] - a[0]) * 1000, 2) if b[0] > a[0] else None
    result["estimatedSecondsFor100k"] = round(elapsed, 1) if done >= TARGET else (fit_seconds(marks, TARGET) if len(marks) >= 3 else None)
est = result["estimatedSecondsFor100k"]
print(f"register {TARGET:,} blocks pipelined over one connection: {done:,} in {result['registerSeconds']} s"
      + ("" if done >= TARGET else f" (budget {budget:.0f} s ran out; {result.get('marginalMsAtEnd')} ms/request at the end;"
                                     f" fit for {TARGET:,}: ~{est if est is not None else '?'} s)"), flush=True)


# 2. Costs at sizes.
def population(n, now):
    """n - ACTIVE idle schedules (windows 2 to 14 hours ahead, UTC) and ACTIVE active blocks."""
    schedules, blocks = [], []
    for i in range(n - ACTIVE):
        t = time.gmtime(now + 7200 + (i * 37) % 43200)
        start = f"{t.tm_hour:02}:{t.tm_min:02}"
        end = f"{(t.tm_hour + 1) % 24:02}:{t.tm_min:02}"
        schedules.append({"name": f"s{i}", "days": "mon-sun", "start": start, "end": end, "selections": [f"d{i % 1000}.example.com"]})
    for i in range(ACTIVE):
        blocks.append({"name": f"focus{i}", "selections": [f"focus{i}.example.com"], "start": now - 60, "end": now + 86400})
    return schedules, blocks


def prepared_state(schedules, blocks, now):
    acts = [{"schedule": {"_0": dict(s, origin={"client": {"uid": 0}})}} for s in schedules]
    acts += [{"block": {"_0": dict(b, locked=False, origin={"client": {"uid": 0}})}} for b in blocks]
    return {"version": 1, "activities": acts, "applied": [], "failures": [], "shieldHits": {}, "lastReconcile": now}


def register_over_wire(c, schedules, blocks):
    lines = ["schedule-add " + json.dumps({"name": s["name"], "window": f"{s['start']}-{s['end']}", "days": s["days"],
                                            "selections": s["selections"]}) for s in schedules]
    lines += ["start " + json.dumps({"name": b["name"], "selections": b["selections"], "seconds": 86400}) for b in blocks]
    pipelined(c, lines)


def population_seen(c):
    schedules = len(c.ok("schedule-list")["schedules"])
    status = c.ok("status")
    active = [a for a in status.get("activities", []) if a.get("active")]
    return schedules, len(active), len(status.get("blocked", []))


def timed(c, line):
    t = time.perf_counter()
    c.ok(line)
    return (time.perf_counter() - t) * 1000


def measure(n):
    now = time.time()
    schedules, blocks = population(n, now)
    with Sandbox(blockd, config=CONFIG, prefix="bd-scale-") as sb:
        sb.env["TZ"] = "UTC"
        os.makedirs(sb.state_dir)
        with open(f"{sb.state_dir}/state.json", "w") as f:
            json.dump(prepared_state(schedules, blocks, now), f)
        t = time.perf_counter()
        sb.start(timeout=3600)
        startup = time.perf_counter() - t
        c = sb.client(timeout=3600)
        row = {"startupMs": round(startup * 1000), "loadedFrom": "state file"}
        if population_seen(c)[0] != len(schedules):
            print(f"  {n:>7}: blockd did not load the prepared state file (format changed?); registering over the wire", flush=True)
            row["loadedFrom"] = "registered over the wire"
            register_over_wire(c, schedules, blocks)
        seen = population_seen(c)
        if seen != (len(schedules), ACTIVE, ACTIVE):
            raise SystemExit(f"at {n}: expected {len(schedules)} schedules, {ACTIVE} active, {ACTIVE} blocked; saw {seen}")
        m = {"status": [], "start": [], "stop": [], "failuresClear": []}
        for _ in range(rounds):
            m["status"].append(timed(c, "status"))
            m["start"].append(timed(c, 'start {"selections":["tiny.example.com"],"seconds":3600,"name":"tiny"}'))
            m["stop"].append(timed(c, 'stop {"name":"tiny"}'))
            m["failuresClear"].append(timed(c, "failures-clear"))
        for k, v in m.items():
            row[k + "Ms"] = round(statistics.median(v), 2)
        row["statusBytes"] = len(c.request("status"))
        row["rssKiB"] = rss_kib(sb.pid)
        c.close()
    print(f"  {n:>7} activities ({ACTIVE} active): start-up {row['startupMs']} ms, RSS {row['rssKiB'] / 1024:.0f} MiB;"
          f" status {row['statusMs']} ms ({row['statusBytes']:,} bytes), start {row['startMs']} ms, stop {row['stopMs']} ms,"
          f" failures-clear (persist only) {row['failuresClearMs']} ms", flush=True)
    return row


sizes = {str(n): measure(n) for n in SIZES}
result["sizes"] = sizes
low, high = str(min(SIZES)), str(max(SIZES))
result["startRatio"] = {"low": int(low), "high": int(high), "ratio": round(sizes[high]["startMs"] / sizes[low]["startMs"], 2)}
print(f"  start at {int(high):,} vs at {int(low):,} activities (same run): {result['startRatio']['ratio']}x", flush=True)
print("JSON " + json.dumps(result))
