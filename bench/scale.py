#!/usr/bin/env python3
"""Scale: MaxActivities=100000.

1. Registration: schedule-add requests pipelined over one connection (64 in flight, the
   server's per-connection queue), from empty, for at most BUDGET seconds or COUNT schedules.
   Each request persists the whole state file (atomic replace with fsync) and reconciles over
   every activity, so the cost per request grows with the count; the figure reported is what
   was measured, plus a quadratic fit's estimate for 100,000 when the budget ran out first.
2. Cost at 0 (the baseline, same run) / 1k / 10k / 100k activities: the daemon is started on a
   prepared state file holding N client schedules (the format blockd itself writes), then
   timed: start-up to the first answer, `hello`, `status`, `start` of a tiny 1-domain block
   (a request that reconciles and computes the next transition) and its `stop`, and
   `failures-clear` (persists the state, no reconcile). Median of ROUNDS.
Usage: bench/scale.py BLOCKD [BUDGET_SECONDS] [ROUNDS]
"""
import json, os, statistics, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sandbox import Sandbox, rss_kib

blockd = sys.argv[1]
budget = float(sys.argv[2]) if len(sys.argv) > 2 else 120
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
TARGET = 100_000
CONFIG = "[Daemon]\nMaxActivities=100000\n"
result = {}


def schedule(i):
    # Windows spread over the day so that next boundaries differ; none is the busiest.
    h, m = divmod((i * 7) % 1440, 60)
    h2 = (h + 1) % 24
    return {"name": f"s{i}", "window": f"{h:02}:{m:02}-{h2:02}:{m:02}", "days": "mon-fri",
            "selections": [f"d{i % 1000}.example.com"]}


# 1. Registration, pipelined.
with Sandbox(blockd, config=CONFIG, prefix="bd-scale-") as sb:
    sb.env["TZ"] = "UTC"
    sb.start()
    c = sb.client(timeout=600)
    depth = 64
    sent = done = 0
    marks = []  # (count, seconds since start)
    t0 = time.perf_counter()
    while done < TARGET:
        while sent < TARGET and sent - done < depth and time.perf_counter() - t0 < budget:
            s = schedule(sent)
            c.send(b"schedule-add " + json.dumps(s).encode() + b"\n")
            sent += 1
        if done == sent:
            break
        r = c.readline()
        if not r.startswith("OK "):
            raise SystemExit(f"schedule-add {done} refused: {r[:300]}")
        done += 1
        if done % 100 == 0:
            marks.append((done, time.perf_counter() - t0))
    elapsed = time.perf_counter() - t0
    result["registered"] = done
    result["registerSeconds"] = round(elapsed, 1)
    # Marginal cost per request over the last 10% measured.
    if len(marks) >= 2:
        a = marks[max(0, int(len(marks) * 0.9) - 1)]
        b = marks[-1]
        result["marginalMsAtEnd"] = round((b[1] - a[1]) / (b[0] - a[0]) * 1000, 1) if b[0] > a[0] else None
    if done < TARGET and len(marks) >= 3:
        # time(n) ~ a*n^2 + b*n, least squares through the origin
        s22 = sum(n ** 4 for n, _ in marks); s12 = sum(n ** 3 for n, _ in marks); s11 = sum(n ** 2 for n, _ in marks)
        y2 = sum(t * n ** 2 for n, t in marks); y1 = sum(t * n for n, t in marks)
        det = s22 * s11 - s12 * s12
        qa = (y2 * s11 - y1 * s12) / det
        qb = (s22 * y1 - s12 * y2) / det
        result["estimatedSecondsFor100k"] = round(qa * TARGET ** 2 + qb * TARGET)
    c.close()
print(f"register schedules pipelined over one connection: {result['registered']} in {result['registerSeconds']} s"
      + (f" (budget {budget:.0f} s ran out; marginal {result.get('marginalMsAtEnd')} ms/request at the end;"
         f" quadratic fit for 100,000: ~{result.get('estimatedSecondsFor100k', 0) / 3600:.1f} h)" if result["registered"] < TARGET else ""))


# 2. Costs at sizes.
def prepared_state(n):
    acts = []
    for i in range(n):
        s = schedule(i)
        start, end = s["window"].split("-")
        acts.append({"schedule": {"_0": {"days": "mon-fri", "start": start, "end": end, "name": s["name"],
                                         "origin": {"client": {"uid": 0}}, "selections": s["selections"]}}})
    return {"version": 1, "activities": acts, "applied": [], "failures": [], "shieldHits": {}, "lastReconcile": time.time()}


def timed(c, line):
    t = time.perf_counter()
    c.ok(line)
    return (time.perf_counter() - t) * 1000


sizes = {}
for n in (0, 1_000, 10_000, 99_999):  # 99,999 schedules + the tiny block = MaxActivities
    with Sandbox(blockd, config=CONFIG, prefix="bd-scale-") as sb:
        sb.env["TZ"] = "UTC"
        os.makedirs(sb.state_dir)
        with open(f"{sb.state_dir}/state.json", "w") as f:
            json.dump(prepared_state(n), f)
        t = time.perf_counter()
        sb.start(timeout=3600)
        startup = time.perf_counter() - t
        c = sb.client(timeout=3600)
        st = c.ok("status")
        assert len(st["activities"]) == n, (n, len(st["activities"]))
        row = {"startupMs": round(startup * 1000), "rssKiB": rss_kib(sb.pid)}
        m = {"hello": [], "status": [], "start": [], "stop": [], "failuresClear": []}
        for i in range(rounds):
            m["hello"].append(timed(c, "hello"))
            m["status"].append(timed(c, "status"))
            m["start"].append(timed(c, 'start {"selections":["tiny.example.com"],"seconds":3600,"name":"tiny"}'))
            m["stop"].append(timed(c, 'stop {"name":"tiny"}'))
            m["failuresClear"].append(timed(c, "failures-clear"))
        for k, v in m.items():
            row[k + "Ms"] = round(statistics.median(v), 2)
        c.close()
        sizes[str(n)] = row
        print(f"  {n:>7} activities: start-up {row['startupMs']} ms, RSS {row['rssKiB'] / 1024:.0f} MiB; hello {row['helloMs']} ms,"
              f" status {row['statusMs']} ms, start (reconcile + next transition) {row['startMs']} ms, stop {row['stopMs']} ms,"
              f" failures-clear (persist only) {row['failuresClearMs']} ms", flush=True)
result["sizes"] = sizes
base = sizes["0"]["startMs"]
result["startVsEmpty"] = {k: round(v["startMs"] / base, 1) for k, v in sizes.items()}
print(f"  start cost vs 0 activities (same run): " + ", ".join(f"{k}: {v}x" for k, v in result["startVsEmpty"].items()))
print("JSON " + json.dumps(result))
