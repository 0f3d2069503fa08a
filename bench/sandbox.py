"""A blockd in a temp directory, for bench/ and torture/ scripts (the Python twin of
Tests/BlockDaemonTests/Sandbox.swift): its own socket, state and config dirs and, always, its
own --hosts-file, so nothing here ever touches the real /etc/hosts. Loopback only: the daemon
speaks on a Unix socket in the temp dir. Every process started here is stopped by close().
"""
import json, os, shutil, signal, socket, subprocess, tempfile, time

HOSTS_TEMPLATE = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n# a user's own line, no final newline\n10.0.0.7 nas"


class Client:
    """One blocking connection speaking raw protocol lines."""

    def __init__(self, path, timeout=30):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""

    def send(self, data):
        self.sock.sendall(data)

    def readline(self):
        while b"\n" not in self.buf:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("connection closed")
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode("utf-8", "replace")

    def request(self, line):
        self.send(line.encode() + b"\n")
        return self.readline()

    def ok(self, line):
        r = self.request(line)
        if not r.startswith("OK "):
            raise RuntimeError(f"{line[:80]!r} -> {r[:300]}")
        return json.loads(r[3:])

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class Sandbox:
    def __init__(self, blockd, config=None, selections=None, prefix="bd-"):
        self.blockd = os.path.abspath(blockd)
        self.dir = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
        self.socket = f"{self.dir}/s.sock"
        self.state_dir = f"{self.dir}/state"
        self.config_dir = f"{self.dir}/etc"
        self.hosts = f"{self.dir}/hosts"
        self.log = f"{self.dir}/blockd.log"
        os.makedirs(f"{self.config_dir}/selections.d")
        os.makedirs(f"{self.config_dir}/schedules.d")
        with open(self.hosts, "w") as f:
            f.write(HOSTS_TEMPLATE)
        if config:
            with open(f"{self.config_dir}/blockd.conf", "w") as f:
                f.write(config)
        for name, domains in (selections or {}).items():
            with open(f"{self.config_dir}/selections.d/{name}.conf", "w") as f:
                f.write(f"[Selection]\nName={name}\nDomains={' '.join(domains)}\n")
        self.proc = None
        self.env = dict(os.environ)
        self.env.pop("WATCHDOG_USEC", None)
        self.env.pop("NOTIFY_SOCKET", None)
        self.env.setdefault("TZ", "Asia/Tokyo")

    def args(self):
        return [self.blockd, "--socket", self.socket, "--state-dir", self.state_dir, "--config-dir", self.config_dir, "--policy-root", self.dir + "/root",
                "--hosts-file", self.hosts, "--log-target", "console", "--firewall", "no", "--cut-sockets", "no",
                # U3: the per-user tables in the sandbox too, never the machine's /run/blockd/users.
                "--user-tables-dir", self.dir + "/users"]

    def start(self, prefix=(), env=None, timeout=30):
        e = dict(self.env)
        e.update(env or {})
        out = open(self.log, "ab")
        # Its own process group: a wrapper in `prefix` (faketime forks) dies with blockd.
        self.proc = subprocess.Popen(list(prefix) + self.args(), stdout=out, stderr=out, env=e, start_new_session=True)
        out.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"blockd exited with {self.proc.returncode}; log:\n{self.read_log()[-3000:]}")
            try:
                c = Client(self.socket, timeout=5)
                r = c.request("hello")
                c.close()
                if r.startswith("OK "):
                    return self.proc
            except OSError:
                pass
            time.sleep(0.01)
        raise RuntimeError("blockd did not start serving")

    @property
    def pid(self):
        return self.proc.pid

    def client(self, timeout=30):
        return Client(self.socket, timeout)

    def kill(self, sig=signal.SIGKILL):
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass
            self.proc.wait()

    def read_log(self):
        try:
            return open(self.log, errors="replace").read()
        except OSError:
            return ""

    def read_hosts(self):
        return open(self.hosts, "rb").read()

    def close(self):
        if self.proc:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)  # blockd and any wrapper around it
            except ProcessLookupError:
                pass
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


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
    for _ in range(500):
        if os.path.exists(rsock):
            break
        time.sleep(0.01)
    return redis, rsock, work
