"""IPC and idle cost against redis-server, all in one run.

- round trips/s on one connection and with 50 concurrent clients, measured by
  bench/linebench (C, no pipelining) against blockd and, as the baseline, against a
  redis-server started here on a Unix socket in a temp dir (the same client): `status` with
  5 active blocks against a GET of a value of the same size as that reply (the targets), and
  `hello` against inline PING; redis-benchmark's own PING_INLINE figures next to them;
- `blockc status` (5 active blocks) whole-process wall time vs `redis-cli -s SOCK ping`
  (hyperfine), and blockd's RSS right after start;
- idle cost: RSS after start and with 20 activities, and context switches over IDLE seconds
  with nothing due, for blockd and the idle redis-server in the same window. WATCHDOG_USEC is
  not set, so blockd should not wake at all; any thread that does is named.
Usage, from the repository's root: python3 -m bench.ipc BIN_DIR LINEBENCH [IDLE_SECONDS]
"""
import json, os, shutil, subprocess, sys, tempfile, time
from datetime import datetime, timedelta, timezone
from bench.measure import rss_kib, start_redis, thread_switches
from torture.lib import Sandbox

bindir = os.path.abspath(sys.argv[1])
linebench = os.path.abspath(sys.argv[2])
idle_seconds = int(sys.argv[3]) if len(sys.argv) > 3 else 60
ONE, MANY, PER_MANY = 20_000, 50, 1_000
ACTIVE = 5


def lb(sock, request, expect, clients, per, min_bytes=0):
    out = subprocess.run([linebench, sock, request, expect, str(clients), str(per), str(min_bytes)],
                         capture_output=True, text=True, check=True).stdout
    rate, errors = out.split()
    if int(errors):
        raise SystemExit(f"linebench: {errors} unexpected replies to {request!r}")
    return round(float(rate))


def redis_benchmark(sock, clients, n):
    out = subprocess.run(["redis-benchmark", "-s", sock, "-c", str(clients), "-n", str(n), "-t", "ping_inline", "--csv"],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        cells = [c.strip('"') for c in line.split(",")]
        if cells[0] == "PING_INLINE":
            return round(float(cells[1]))
    raise SystemExit("redis-benchmark printed no PING_INLINE figure:\n" + out)


def hyperfine(cmds, names):
    out = tempfile.mktemp(suffix=".json")
    argv = ["hyperfine", "-N", "--warmup", "10", "--runs", "200", "--export-json", out, "--style", "none"]
    for n in names:
        argv += ["-n", n]
    subprocess.run(argv + cmds, check=True, stdout=subprocess.DEVNULL)
    data = json.load(open(out))
    os.unlink(out)
    return {r["command"]: round(r["median"] * 1000, 2) for r in data["results"]}


redis, rsock, work = start_redis("bd-redis-")
sb = Sandbox(os.path.join(bindir, "blockd"), prefix="bd-ipc-")
sb.env["TZ"] = "UTC"
result = {}
try:
    sb.start()
    time.sleep(0.5)
    result["rssAfterStartKiB"] = rss_kib(sb.pid)
    result["redisRssAfterStartKiB"] = rss_kib(redis.pid)
    # Installed size: blockd stripped as `make install` strips it (bytes); blockc and
    # blockc-agent are links to it once installed (P1), the same file under other names here.
    stripped = os.path.join(work, "blockd.stripped")
    subprocess.run(["strip", "--remove-section=.comment", "--remove-section=.note", "--strip-unneeded",
                    "-o", stripped, os.path.join(bindir, "blockd")], check=True)
    result["blockdStrippedBytes"] = os.path.getsize(stripped)
    os.unlink(stripped)
    print(f"installed (stripped) size: blockd {result['blockdStrippedBytes'] / 1e6:.1f} MB (blockc and blockc-agent are links to it)")

    r = result
    # `status` with 5 active blocks (two domains each), and a redis value of the reply's size.
    c = sb.client()
    for i in range(ACTIVE):
        c.ok("start " + json.dumps({"selections": [f"focus{i}.example.com", f"www.focus{i}.example.com"], "seconds": 86400, "name": f"focus{i}"}))
    r["statusBytes"] = len(c.request("status")) + 1
    c.close()
    value = "x" * r["statusBytes"]
    reply = f"${len(value)}\r\n{value}\r\n"
    subprocess.run(["redis-cli", "-s", rsock, "-x", "set", "bench:status"], input=value, text=True, check=True, stdout=subprocess.DEVNULL)
    r["helloOne"] = lb(sb.socket, "hello", "OK ", 1, ONE)
    r["statusOne"] = lb(sb.socket, "status", "OK ", 1, ONE)
    r["redisPingOne"] = lb(rsock, "PING\r", "+PONG", 1, ONE)
    r["redisGetOne"] = lb(rsock, "GET bench:status\r", "$", 1, ONE, len(reply))
    r["helloFifty"] = lb(sb.socket, "hello", "OK ", MANY, PER_MANY)
    r["statusFifty"] = lb(sb.socket, "status", "OK ", MANY, PER_MANY)
    r["redisPingFifty"] = lb(rsock, "PING\r", "+PONG", MANY, PER_MANY)
    r["redisGetFifty"] = lb(rsock, "GET bench:status\r", "$", MANY, PER_MANY, len(reply))
    r["redisBenchmarkOne"] = redis_benchmark(rsock, 1, ONE)
    r["redisBenchmarkFifty"] = redis_benchmark(rsock, MANY, MANY * PER_MANY)
    r["helloOneVsRedis"] = round(r["helloOne"] / r["redisPingOne"], 2)
    r["statusOneVsRedis"] = round(r["statusOne"] / r["redisGetOne"], 2)
    r["helloFiftyVsRedis"] = round(r["helloFifty"] / r["redisPingFifty"], 2)
    r["statusFiftyVsRedis"] = round(r["statusFifty"] / r["redisGetFifty"], 2)
    print(f"IPC round trips/s (bench/linebench, no pipelining; baseline redis-server, same client):")
    print(f"  1 connection:   status ({ACTIVE} active blocks, {r['statusBytes']:,} bytes) {r['statusOne']} vs redis GET of a"
          f" same-size value {r['redisGetOne']} ({r['statusOneVsRedis']}x; target 0.8x); hello {r['helloOne']} vs PING {r['redisPingOne']}"
          f" ({r['helloOneVsRedis']}x)")
    print(f"  50 connections: status {r['statusFifty']} vs redis GET {r['redisGetFifty']} ({r['statusFiftyVsRedis']}x; target 0.5x);"
          f" hello {r['helloFifty']} vs PING {r['redisPingFifty']} ({r['helloFiftyVsRedis']}x)")
    print(f"  redis-benchmark PING_INLINE: {r['redisBenchmarkOne']}/s with -c 1, {r['redisBenchmarkFifty']}/s with -c 50")

    env_blockc = f"{bindir}/blockc"
    os.environ["BLOCKD_SOCKET"] = sb.socket
    os.environ["NO_COLOR"] = "1"
    times = hyperfine([f"{env_blockc} status", f"redis-cli -s {rsock} ping"], ["blockc status", "redis-cli ping"])
    r["blockcStatusMs"] = times["blockc status"]
    r["redisCliPingMs"] = times["redis-cli ping"]
    r["blockcVsRedisCli"] = round(r["blockcStatusMs"] / r["redisCliPingMs"], 2)
    print(f"whole-process wall time (hyperfine, median of 200): blockc status {r['blockcStatusMs']} ms,"
          f" redis-cli ping {r['redisCliPingMs']} ms ({r['blockcVsRedisCli']}x)")

    # Idle: 20 activities, none due within the window (the 5 blocks above, 5 more day-long
    # blocks, 10 schedules whose window opens in 6 hours).
    c = sb.client()
    for i in range(10 - ACTIVE):
        c.ok('start ' + json.dumps({"selections": [f"idle{i}.example.com"], "seconds": 86400}))
    start = datetime.now(timezone.utc) + timedelta(hours=6)
    window = f"{start:%H}:00-{(start + timedelta(hours=1)):%H}:00"
    for i in range(10):
        c.ok('schedule-add ' + json.dumps({"name": f"idle{i}", "window": window, "selections": [f"sched{i}.example.com"]}))
    assert len(c.ok("schedule-list")["schedules"]) == 10
    c.close()
    time.sleep(10)  # connection linger timers (2 s) have run and idle libdispatch workers have exited
    r["rssWith20KiB"] = rss_kib(sb.pid)
    before, rbefore = thread_switches(sb.pid), thread_switches(redis.pid)
    time.sleep(idle_seconds)
    after, rafter = thread_switches(sb.pid), thread_switches(redis.pid)

    def delta(b, a):
        woke = {}
        for tid, (name, v, n) in a.items():
            v0 = b.get(tid, (name, 0, 0))[1]
            if v - v0:
                woke[f"{name}[{tid}]"] = v - v0
        return sum(woke.values()), woke

    r["idleSeconds"] = idle_seconds
    r["idleVoluntarySwitches"], r["idleWakers"] = delta(before, after)
    r["redisIdleVoluntarySwitches"], _ = delta(rbefore, rafter)
    r["threads"] = len(after)
    print(f"idle: RSS {r['rssAfterStartKiB'] / 1024:.1f} MiB after start, {r['rssWith20KiB'] / 1024:.1f} MiB with 20 activities"
          f" (redis-server {r['redisRssAfterStartKiB'] / 1024:.1f} MiB)")
    print(f"  voluntary context switches over {idle_seconds} s, all {r['threads']} threads: blockd {r['idleVoluntarySwitches']}"
          f" (redis-server, hz 10: {r['redisIdleVoluntarySwitches']})" + (f"; woken: {r['idleWakers']}" if r["idleWakers"] else ""))
    print("JSON " + json.dumps(r))
finally:
    sb.close()
    redis.terminate()
    redis.wait()
    shutil.rmtree(work, ignore_errors=True)
