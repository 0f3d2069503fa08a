#!/usr/bin/env python3
"""Prints bench/results.json as the README's Performance table (markdown): each figure next to
its baseline from the same run. Usage: bench/table.py bench/results.json"""
import json, sys

r = json.load(open(sys.argv[1]))
rows = []


def row(what, figure, baseline=""):
    rows.append(f"| {what} | {figure} | {baseline} |")


def n(x):
    return f"{x:,}"


i = r.get("ipc")
if i:
    row("`hello` round trips/s, 1 connection (C client, no pipelining)", n(i["helloOne"]),
        f"redis-server inline PING, same client: {n(i['redisPingOne'])} ({i['helloOneVsRedis']}×; target 0.8×); redis-benchmark -c 1: {n(i['redisBenchmarkOne'])}")
    row("`status` round trips/s, 1 connection", n(i["statusOne"]), f"redis PING {n(i['redisPingOne'])} ({i['statusOneVsRedis']}×)")
    row("`hello` round trips/s, 50 concurrent connections", n(i["helloFifty"]),
        f"redis PING {n(i['redisPingFifty'])} ({i['helloFiftyVsRedis']}×); redis-benchmark -c 50: {n(i['redisBenchmarkFifty'])}")
    row("`status` round trips/s, 50 concurrent connections", n(i["statusFifty"]), f"redis PING {n(i['redisPingFifty'])} ({i['statusFiftyVsRedis']}×)")
    row("`blockc status`, whole process (hyperfine median)", f"{i['blockcStatusMs']} ms",
        f"`redis-cli -s SOCK ping`: {i['redisCliPingMs']} ms ({i['blockcVsRedisCli']}×)")
    row("RSS after start / with 20 activities", f"{i['rssAfterStartKiB'] / 1024:.1f} MiB / {i['rssWith20KiB'] / 1024:.1f} MiB",
        f"idle redis-server: {i['redisRssAfterStartKiB'] / 1024:.1f} MiB")
    wakers = ", ".join(f"{k}: {v}" for k, v in i["idleWakers"].items())
    row(f"voluntary context switches in {i['idleSeconds']} s idle, all threads, no watchdog", n(i["idleVoluntarySwitches"]) + (f" ({wakers})" if wakers else ""),
        f"idle redis-server (hz 10): {n(i['redisIdleVoluntarySwitches'])}")
s = r.get("scale")
if s:
    reg = f"{n(s['registered'])} in {s['registerSeconds']} s"
    if s["registered"] < 100_000:
        reg += f" (budget ran out; {s.get('marginalMsAtEnd')} ms per request at the end; quadratic fit for 100,000: ~{s.get('estimatedSecondsFor100k', 0) / 3600:.0f} h)"
    row("register schedules, pipelined on one connection (MaxActivities=100000)", reg, "each request persists the whole state file with fsync")
    z = s["sizes"]["0"]
    for k, v in s["sizes"].items():
        if k == "0":
            continue
        row(f"at {int(k):,} activities: `status` / `start` of a 1-domain block (reconcile + next transition) / `failures-clear` (persist only)",
            f"{v['statusMs']} / {v['startMs']} / {v['failuresClearMs']} ms; start-up {n(v['startupMs'])} ms; RSS {v['rssKiB'] // 1024} MiB",
            f"0 activities: {z['statusMs']} / {z['startMs']} / {z['failuresClearMs']} ms (start {s['startVsEmpty'][k]}×)")
h = r.get("hostsApply")
if h:
    row(f"apply a {n(h['domains'])}-domain selection ({h['hostsBytes'] / 1e6:.1f} MB hosts file, atomic replace with fsync)", f"{h['blockMs']} ms",
        f"`cp` of a same-size file, no fsync: {h['cpMs']} ms ({h['blockVsCp']}×)")
    row("lift it again", f"{h['unblockMs']} ms", "")
u = r.get("unlockLatency")
if u:
    row(f"timed unlock, deadline → hosts file → journald entry ({u['unlocks']} unlocks)", f"p50 {u['p50Ms']} ms, p99 {u['p99Ms']} ms, max {u['maxMs']} ms",
        "systemd timers default to 1-minute accuracy, `at` to whole minutes")
e = r.get("execRate")
if e:
    row("exec rate of an unrelated `/bin/true` with the app shield active", f"{n(e['activePerSecond'])}/s",
        f"{n(e['inactivePerSecond'])}/s inactive (ratio {e['activeVsInactive']})")
f = r.get("felt")
if f:
    row(f"E5: `blockc start` → last successful request of an open keep-alive connection ({f['runs']} runs, namespace)",
        f"p50 {f['lastRequestP50Ms']} ms, p99 {f['lastRequestP99Ms']} ms",
        f"`blockc start` returning (hosts write alone): p50 {f['blockcStartP50Ms']} ms, p99 {f['blockcStartP99Ms']} ms")
c = r.get("feltChromium")
if c:
    row(f"E5: `blockc start` → last `/ping` the server receives from a page open in headless Chromium, fetching every {c['everyMs']} ms ({c['runs']} runs, namespace)",
        f"p50 {c['lastPingP50Ms']} ms, p99 {c['lastPingP99Ms']} ms; after `blockc stop` the page's next fetch arrives in p50 {c['resumeP50Ms']} ms, p99 {c['resumeP99Ms']} ms",
        f"the python keep-alive client above; `blockc start` returning: p50 {c['blockcStartP50Ms']} ms, p99 {c['blockcStartP99Ms']} ms")
print(f"machine: {r['machine']}; {r['date']}\n")
print("| what | figure | baseline in the same run |\n|---|---|---|")
print("\n".join(rows))
