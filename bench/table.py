#!/usr/bin/env python3
"""Prints bench/results.json as the tables of docs/BENCHMARKS.md (markdown): each figure next to
its baseline from the same run, then the targets. Usage: bench/table.py bench/results.json"""
import json, sys

r = json.load(open(sys.argv[1]))
rows = []


def row(what, figure, baseline=""):
    rows.append(f"| {what} | {figure} | {baseline} |")


def n(x):
    return f"{x:,}"


i = r.get("ipc")
if i:
    row(f"`status` round trips/s, {i.get('statusBytes', 0):,}-byte reply (5 active blocks), 1 connection (C client, no pipelining)", n(i["statusOne"]),
        f"redis-server GET of a same-size value, same client: {n(i['redisGetOne'])} ({i['statusOneVsRedis']}×; target 0.8×)")
    row("`status` round trips/s, 50 concurrent connections", n(i["statusFifty"]),
        f"redis GET {n(i['redisGetFifty'])} ({i['statusFiftyVsRedis']}×; target 0.5×)")
    row("`hello` round trips/s, 1 / 50 connections", f"{n(i['helloOne'])} / {n(i['helloFifty'])}",
        f"redis inline PING {n(i['redisPingOne'])} / {n(i['redisPingFifty'])} ({i['helloOneVsRedis']}× / {i['helloFiftyVsRedis']}×);"
        f" redis-benchmark -c 1 / -c 50: {n(i['redisBenchmarkOne'])} / {n(i['redisBenchmarkFifty'])}")
    row("`blockc status`, whole process (hyperfine median)", f"{i['blockcStatusMs']} ms",
        f"`redis-cli -s SOCK ping`: {i['redisCliPingMs']} ms ({i['blockcVsRedisCli']}×; target 1.2×)")
    row("RSS after start / with 20 activities", f"{i['rssAfterStartKiB'] / 1024:.1f} MiB / {i['rssWith20KiB'] / 1024:.1f} MiB",
        f"idle redis-server: {i['redisRssAfterStartKiB'] / 1024:.1f} MiB (target for blockd after start: 20 MiB)")
    wakers = ", ".join(f"{k}: {v}" for k, v in i["idleWakers"].items())
    row(f"voluntary context switches in {i['idleSeconds']} s idle, all threads, no watchdog", n(i["idleVoluntarySwitches"]) + (f" ({wakers})" if wakers else ""),
        f"idle redis-server (hz 10): {n(i['redisIdleVoluntarySwitches'])}")
u = r.get("idleUsage")
if u:
    i = u["idle"]
    wakers = ", ".join(f"{k}: {v}" for k, v in i["woken"].items())
    row(f"voluntary context switches in {i['seconds']} s idle, {u['activities']} activities of which 3 name selections with `Apps=`"
        f" (usage monitor: {u['usageMode']}), none of those apps running", n(i["voluntarySwitches"]) + (f" ({wakers})" if wakers else ""),
        f"the same blockd without the 3: {n(i['control']['voluntarySwitches'])}; idle redis-server (hz 10): {n(i['redisVoluntarySwitches'])}")
    for phase, what in (("app", "an app only the report counts (R1)"), ("limitedApp", "a limited app (§9, R1)")):
        p = u.get(phase)
        if p:
            c = p["control"]
            row(f"while {what} runs ({p['seconds']} s): wake-ups (switches < {u['burstGapSeconds']} s apart count once) / voluntary switches"
                f" per minute; state-log records and bytes written per minute (to disk / through write calls); the report's seconds for it",
                f"{p['wakeupsPerMinute']} / {p['switchesPerMinute']}; {p['stateLogRecordsPerMinute']} records,"
                f" {n(p['writeBytesPerMinute'])} / {n(p['wcharPerMinute'])} bytes; {p['reportSeconds']} s for {p['ranSeconds']} s run",
                f"the same blockd without the apps: {c['wakeupsPerMinute']} / {c['switchesPerMinute']}; {c['stateLogRecordsPerMinute']} records,"
                f" {n(c['writeBytesPerMinute'])} / {n(c['wcharPerMinute'])} bytes; idle redis-server (hz 10):"
                f" {round(p['redisVoluntarySwitches'] * 60 / p['seconds'])} switches per minute")
s = r.get("scale")
if s:
    reg = f"{n(s['registered'])} in {s['registerSeconds']} s"
    if s["registered"] < 100_000:
        est = s.get("estimatedSecondsFor100k")
        reg += f" (budget ran out; {s.get('marginalMsAtEnd')} ms per request at the end; fit for 100,000: ~{n(est) if est is not None else '?'} s)"
    row("register 100,000 blocks, pipelined on one connection (MaxActivities=100001)", reg, "target: < 30 s")
    sizes = s["sizes"]
    low = str(s["startRatio"]["low"])
    z = sizes[low]
    for k, v in sizes.items():
        if k == low:
            continue
        row(f"at {int(k):,} activities, 5 active: `status` / `start` of a 1-domain block / `stop` / `failures-clear` (persist only)",
            f"{v['statusMs']} / {v['startMs']} / {v['stopMs']} / {v['failuresClearMs']} ms; start-up {n(v['startupMs'])} ms; RSS {v['rssKiB'] // 1024} MiB",
            f"{int(low):,} activities: {z['statusMs']} / {z['startMs']} / {z['stopMs']} / {z['failuresClearMs']} ms (start {round(v['startMs'] / z['startMs'], 1)}×)")
h = r.get("hostsApply")
if h:
    row(f"apply a {n(h['domains'])}-domain selection ({h['hostsBytes'] / 1e6:.1f} MB hosts file, atomic replace with fsync)", f"{h['blockMs']} ms",
        f"`cp` of the same bytes and fsync of the copy: {h['cpFsyncMs']} ms ({h['blockVsCpFsync']}×); `cp` alone: {h['cpMs']} ms"
        if "cpFsyncMs" in h else f"`cp` of a same-size file, no fsync: {h['cpMs']} ms ({h['blockVsCp']}×)")
    row("lift it again", f"{h['unblockMs']} ms", f"{h['unblockVsCpFsync']}× the cp + fsync" if "cpFsyncMs" in h else "")
m = r.get("manyActive")
if m:
    base = m["sizes"][str(m["startRatio"]["low"])]
    for k, v in m["sizes"].items():
        row(f"{int(k):,} active selections, one domain each: `start` / `stop` of one more / `status`",
            f"{v['startMs']} / {v['stopMs']} / {v['statusMs']} ms",
            f"{m['startRatio']['low']} active: start {base['startMs']} ms ({round(v['startMs'] / base['startMs'], 1)}×)")
    b = m["bigSelection"]
    row(f"{m['startRatio']['low']} active and a 100,000-domain selection: `start` / `stop` of one more",
        f"{b['startMs']} / {b['stopMs']} ms", f"{m['bigRatio']}× the start with {m['startRatio']['low']} active (the 16 MB hosts file is rewritten)")
u = r.get("unlockLatency")
if u:
    row(f"timed unlock, deadline → hosts file → journald entry ({u['unlocks']} unlocks)", f"p50 {u['p50Ms']} ms, p99 {u['p99Ms']} ms, max {u['maxMs']} ms",
        "systemd timers default to 1-minute accuracy, `at` to whole minutes")
a = r.get("unlockLatencyAllLayers")
if a:
    row(f"the same with every layer on: Chromium, Chrome and Firefox policies, firewall, socket cutting ({a['unlocks']} unlocks)",
        f"p50 {a['p50Ms']} ms, p99 {a['p99Ms']} ms, max {a['maxMs']} ms", "the browsers' files are written just after the unlock (E7)")
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
w = r.get("webIdle")
if w:
    row(f"B2 at rest: blockd's wake-ups in {w['browser']['seconds']} s while kid's headless Chromium shows a static page whose time the extension reports ({w['counted']} s counted)",
        f"{w['browser']['wakeups']} ({w['browser']['voluntarySwitches']} voluntary switches)",
        f"the same blockd with no browser, just before: {w['alone']['wakeups']} ({w['alone']['voluntarySwitches']})")
print(f"machine: {r['machine']}; {r['date']}\n")
print("| what | figure | baseline in the same run |\n|---|---|---|")
print("\n".join(rows))
targets = r.get("targets") or []
if targets:
    mark = {True: "pass", False: "**below**", None: "not measured"}
    print("\n| target | figure | target | |\n|---|---|---|---|")
    for t in targets:
        print(f"| {t['what']} | {t['figure']} | {t['target']} | {mark[t['ok']]} |")
    below = [t for t in targets if t["ok"] is False]
    if below:
        print("\nBelow target, and why:")
        for t in below:
            print(f"- **{t['what']}** ({t['figure']}): {t['cause']}")
