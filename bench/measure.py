"""What the benchmarks measure a process by (RSS, context switches of every thread, wake-ups
over a window) and the redis-server they measure blockd against. The sandboxed blockd itself
is torture/lib.py's Sandbox, shared with the torture suites."""
import os, subprocess, tempfile, time
from torture.lib import wait_for

# Wake-ups: threads sampled every SAMPLE seconds; switches less than GAP seconds apart count once.
SAMPLE, GAP = 0.1, 0.5


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def thread_switches(pid):
    """{tid: (name, voluntary, involuntary)} over every thread: /proc/PID/status alone counts
    only the main thread."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            name = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
            v = n = 0
            for line in open(f"/proc/{pid}/task/{tid}/status"):
                if line.startswith("voluntary_ctxt_switches:"):
                    v = int(line.split()[1])
                elif line.startswith("nonvoluntary_ctxt_switches:"):
                    n = int(line.split()[1])
            out[tid] = (name, v, n)
        except OSError:
            pass
    return out


def start_redis(prefix):
    """An idle redis-server on a Unix socket in a temp dir of its own, the baseline several
    benches measure against, once its socket exists (or after 5 s): (process, socket path,
    dir). The caller terminates it."""
    work = tempfile.mkdtemp(prefix=prefix)
    rsock = f"{work}/redis.sock"
    redis = subprocess.Popen(["redis-server", "--port", "0", "--unixsocket", rsock, "--unixsocketperm", "700", "--save", "",
                              "--appendonly", "no", "--dir", work, "--daemonize", "no", "--loglevel", "warning"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: os.path.exists(rsock), 5, 0.01)
    return redis, rsock, work


def voluntary(pid):
    return {tid: (name, v) for tid, (name, v, _) in thread_switches(pid).items()}


def io(pid):
    out = {}
    for line in open(f"/proc/{pid}/io"):
        k, v = line.split(":")
        out[k] = int(v)
    return out


def dir_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return total


def log_records(state_dir):
    """Records in the state log (one JSON line each; compaction starts it again)."""
    try:
        with open(f"{state_dir}/state.log", "rb") as f:
            return f.read().count(b"\n")
    except OSError:
        return 0


def watch(pids, seconds, state_dirs):
    """Samples the threads of each process in `pids` (label -> pid) every SAMPLE seconds for
    `seconds`: voluntary switches, wake-ups (switches less than GAP apart count once), which
    threads woke and when; and, for those with a state dir, what they wrote."""
    t0 = time.monotonic()
    last = {k: voluntary(pid) for k, pid in pids.items()}
    io0 = {k: io(pids[k]) for k in state_dirs}
    d0 = {k: dir_bytes(d) for k, d in state_dirs.items()}
    n0 = {k: log_records(d) for k, d in state_dirs.items()}
    bursts = {k: [] for k in pids}
    woke = {k: {} for k in pids}
    while (now := time.monotonic()) - t0 < seconds:
        time.sleep(min(SAMPLE, seconds - (now - t0)))
        at = round(time.monotonic() - t0, 1)
        for k, pid in pids.items():
            cur = voluntary(pid)
            changed = {}
            for tid, (name, v) in cur.items():
                d = v - last[k].get(tid, (name, 0))[1]
                if d:
                    changed[f"{name}[{tid}]"] = d
                    woke[k][f"{name}[{tid}]"] = woke[k].get(f"{name}[{tid}]", 0) + d
            b = bursts[k]
            if changed and b and at - b[-1]["lastAt"] <= GAP:
                b[-1]["lastAt"] = at
                for t, d in changed.items():
                    b[-1]["threads"][t] = b[-1]["threads"].get(t, 0) + d
            elif changed:
                b.append({"at": at, "lastAt": at, "threads": changed})
            last[k] = cur
    elapsed = time.monotonic() - t0
    per_min = 60 / elapsed
    out = {}
    for k in pids:
        switches = sum(woke[k].values())  # as sampled: a thread that woke and exited still counts
        o = {"seconds": round(elapsed, 1), "voluntarySwitches": switches, "wakeups": len(bursts[k]),
             "switchesPerMinute": round(switches * per_min, 2), "wakeupsPerMinute": round(len(bursts[k]) * per_min, 2),
             "woken": woke[k], "wakeupTimes": [b["at"] for b in bursts[k]],
             "wakeupSpans": [[b["at"], b["lastAt"]] for b in bursts[k]]}
        if k in state_dirs:
            io1 = io(pids[k])
            o.update({"writeBytesPerMinute": round((io1["write_bytes"] - io0[k]["write_bytes"]) * per_min),
                      "wcharPerMinute": round((io1["wchar"] - io0[k]["wchar"]) * per_min),
                      "writeCallsPerMinute": round((io1["syscw"] - io0[k]["syscw"]) * per_min, 1),
                      "stateDirGrowthBytesPerMinute": round((dir_bytes(state_dirs[k]) - d0[k]) * per_min),
                      "stateLogRecordsPerMinute": round((log_records(state_dirs[k]) - n0[k]) * per_min, 2)})
        out[k] = o
    return out
