"""Many active: what one change costs when much is already blocked, in one run.

The index makes a change O(log n) in the activities; this measures what comes after it, with
many of them active at once: the reconcile, the enforcers, the state log and the snapshot.
Each population is a prepared state file in the format blockd writes (as bench/scale.py
does), loaded at start-up and enforced before the first answer:

- ACTIVE in 10 / 2,000 / 5,000: that many active blocks, each on its own one-domain
  selection (`a<i>.example.com`);
- "100,000 domains": 10 active one-domain blocks and one more on a selection of 100,000
  domains from the configuration (the hosts file is then 16 MB).

Then, median of ROUNDS: `start` of one more one-domain block and its `stop` (each returns
once enforced and saved), and `status`. The ratios against 10 active are the targets
(bench/targets.py: startAt5000Active, startWith100kDomains).

With each `start` blockd replaces two files whole, as E1 and U3 say (a temp file, fsync,
rename, fsync of the directory), side by side: the hosts file and the per-user table `all`.
So that a figure says how much of it is that and how much is the rest, the same replacement of
the same bytes (the files as the `start` left them) is timed here too, both files at once from
two threads, median of ROUNDS: `filesMs`. It is the part of a `start` that grows with what is
blocked and that no change to blockd's own work can take away.

Usage, from the repository's root: python3 -m bench.active BLOCKD [ROUNDS] [SIZES]   (SIZES: comma-separated)
"""
import json, os, statistics, sys, threading, time
from torture.lib import Sandbox

blockd = os.path.abspath(sys.argv[1])
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
SIZES = [int(s) for s in sys.argv[3].split(",")] if len(sys.argv) > 3 else [10, 2_000, 5_000]
BIG = 100_000
CONFIG = "[Daemon]\nMaxActivities=20000\n"


def prepared_state(active, now, big=False):
    blocks = [{"name": f"a{i}", "selections": [f"a{i}.example.com"], "start": now - 60, "end": now + 86400} for i in range(active)]
    if big:
        blocks.append({"name": "big", "selections": ["big"], "start": now - 60, "end": now + 86400})
    acts = [{"block": {"_0": dict(b, locked=False, origin={"client": {"uid": 0}})}} for b in blocks]
    return {"version": 1, "activities": acts, "applied": [], "failures": [], "shieldHits": {}, "lastReconcile": now}


def write_big_selection(sb):
    with open(f"{sb.config_dir}/selections.d/big.conf", "w") as f:
        f.write("[Selection]\nName=big\n")
        for i in range(0, BIG, 1000):
            f.write("Domains=" + " ".join(f"d{j}.example.com" for j in range(i, min(i + 1000, BIG))) + "\n")


def timed(c, line):
    t = time.perf_counter()
    r = c.request(line)
    if not r.startswith("OK "):
        raise SystemExit(f"{line[:60]} refused: {r[:300]}")
    return (time.perf_counter() - t) * 1000


def replace(path, data):
    """What blockd does to replace a file (AtomicFile.replace): temp file, fsync, rename, fsync of the directory."""
    temp = f"{path}.bench-{os.getpid()}-{threading.get_ident()}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(temp, path)
    d = os.open(os.path.dirname(path), os.O_RDONLY)
    try:
        os.fsync(d)
    finally:
        os.close(d)


def files_floor(sb, rounds):
    """Milliseconds to replace copies of the hosts file and the table `all` as they are now, both at once."""
    sources = [sb.hosts, f"{sb.dir}/users/all"]
    copies = []
    for i, src in enumerate(sources):
        if not os.path.exists(src):
            continue
        os.makedirs(f"{sb.dir}/floor{i}", exist_ok=True)
        with open(src, "rb") as f:
            copies.append((f"{sb.dir}/floor{i}/{os.path.basename(src)}", f.read()))
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        threads = [threading.Thread(target=replace, args=c) for c in copies]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        times.append((time.perf_counter() - t) * 1000)
    return round(statistics.median(times), 2), sum(len(c[1]) for c in copies)


def measure(active, big=False):
    now = time.time()
    with Sandbox(blockd, config=CONFIG, prefix="bd-active-") as sb:
        sb.env["TZ"] = "UTC"
        os.makedirs(sb.state_dir)
        if big:
            write_big_selection(sb)
        with open(f"{sb.state_dir}/state.json", "w") as f:
            json.dump(prepared_state(active, now, big), f)
        t = time.perf_counter()
        sb.start(timeout=3600)
        startup = time.perf_counter() - t
        c = sb.client(timeout=3600)
        blocked = len(c.ok("status").get("blocked", []))
        want = active + (1 if big else 0)
        if blocked != want:
            raise SystemExit(f"expected {want} blocked selections from the prepared state, saw {blocked} (the state format changed?)")
        m = {"start": [], "stop": [], "status": []}
        # The starts and stops first, then the statuses: at 5,000 active a status is a few MB
        # rendered by the engine (about 50 ms), and a start right after one paid for it (the
        # memory it freed faulted in again, caches cold): 3.2 ms against 2.0 ms in the same
        # run, which is the status's cost, not the start's.
        for _ in range(rounds):
            m["start"].append(timed(c, 'start {"selections":["tiny.example.com"],"seconds":3600,"name":"tiny"}'))
            m["stop"].append(timed(c, 'stop {"name":"tiny"}'))
        for _ in range(rounds):
            m["status"].append(timed(c, "status"))
        timed(c, 'start {"selections":["tiny.example.com"],"seconds":3600,"name":"tiny"}')
        floor, size = files_floor(sb, rounds)
        c.close()
    row = {k + "Ms": round(statistics.median(v), 2) for k, v in m.items()}
    row["startupMs"] = round(startup * 1000)
    row["filesMs"], row["filesBytes"] = floor, size
    what = f"{active} active" + (f" + one of {BIG:,} domains" if big else "")
    print(f"  {what}: start {row['startMs']} ms, stop {row['stopMs']} ms, status {row['statusMs']} ms; start-up {row['startupMs']} ms;"
          f" replacing its two files ({size / 1e6:.2f} MB) alone {floor} ms", flush=True)
    return row


result = {"sizes": {str(n): measure(n) for n in SIZES}}
low, high = str(min(SIZES)), str(max(SIZES))
result["bigSelection"] = measure(int(low), big=True)
base = result["sizes"][low]["startMs"]
result["startRatio"] = {"low": int(low), "high": int(high), "ratio": round(result["sizes"][high]["startMs"] / base, 2)}
result["bigRatio"] = round(result["bigSelection"]["startMs"] / base, 2)
# The rest: each start without the replacement of its files, against the same at 10 active.
rest = lambda row: row["startMs"] - row["filesMs"]
lowRow = result["sizes"][low]
result["restRatio"] = round(rest(result["sizes"][high]) / rest(lowRow), 2) if rest(lowRow) > 0 else None
result["bigRestRatio"] = round(rest(result["bigSelection"]) / rest(lowRow), 2) if rest(lowRow) > 0 else None
print(f"  start with {int(high):,} active vs {int(low):,}: {result['startRatio']['ratio']}x;"
      f" with a {BIG:,}-domain selection blocked too: {result['bigRatio']}x", flush=True)
print(f"  without replacing the files (start minus filesMs): {result['restRatio']}x and {result['bigRestRatio']}x", flush=True)
print("JSON " + json.dumps(result))
