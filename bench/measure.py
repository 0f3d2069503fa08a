"""What the benchmarks measure a process by (RSS, context switches of every thread) and the
redis-server they measure blockd against. The sandboxed blockd itself is torture/lib.py's
Sandbox, shared with the torture suites."""
import os, subprocess, tempfile
from torture.lib import wait_for


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
