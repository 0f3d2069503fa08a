"""What the torture suites (torture/*.py) and the benchmarks (bench/*.py) share, in one place:
a sandboxed blockd (Sandbox, Client), the pass/fail tally every suite ends with, waiting for a
state with a deadline (wait_for), running a command or blockc (sh, blockc: one Result shape),
stopping a process group, re-running a suite inside private namespaces (enter), the hosts
file's section, and the faketime shim of the clock suites.

A suite runs as `python3 torture/SUITE.py ...`, which puts torture/ on the import path, and
imports this as `lib`; bench/run runs the benchmarks from the repository's root as modules
(`python3 -m bench.ipc ...`), which import it as `torture.lib`. So it imports nothing but the
standard library: no other file of torture/."""
import json, os, pwd, shutil, signal, socket, subprocess, sys, tempfile, time
from dataclasses import dataclass
from datetime import datetime

BEGIN = b"# BEGIN blockd:"
END = b"# END blockd\n"
HOSTS_TEMPLATE = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n# a user's own line, no final newline\n10.0.0.7 nas"
# How long a suite waits for a state it checks, unless the check bounds the time itself: a
# deadline costs nothing when things are fast, and a loaded machine (a second suite, a build)
# gets the time it needs.
DEADLINE = 20


class Tally:
    """A suite's passed and failed checks. Each suite ends with one line `RESULT <suite>
    <passed> <failed> <figures as JSON>` (done()), which torture/run sums up."""

    def __init__(self, suite):
        self.suite = suite
        self.passed = 0
        self.failed = 0
        self.figures = {}
        self.failures = []

    def check(self, ok, what):
        """Counts a check; `what` is printed when it fails. Returns `ok`."""
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            if len(self.failures) < 20:
                self.failures.append(what)
            print(f"FAIL [{self.suite}] {what}", flush=True)
        return ok

    def cannot_run(self, why):
        """Ends a suite that cannot run here: failed with BLOCKD_PRIVILEGED_TESTS=1, else skipped
        with the reason."""
        if os.environ.get("BLOCKD_PRIVILEGED_TESTS") == "1":
            self.check(False, f"cannot run: {why}")
        else:
            print(f"{self.suite}: skipped ({why}; set BLOCKD_PRIVILEGED_TESTS=1 as root to run it)")
            self.figures["skipped"] = why
        self.done()

    def done(self):
        print(f"RESULT {self.suite} {self.passed} {self.failed} {json.dumps(self.figures)}", flush=True)
        sys.exit(1 if self.failed else 0)


class Timeout(Exception):
    """What wait_for waited for did not come within its deadline."""


def wait_for(predicate, timeout=DEADLINE, step=0.05, what=None):
    """Calls `predicate` every `step` seconds until it returns a true value, and returns that
    value. At the deadline (after one last call) it raises Timeout naming `what`, the thing
    awaited (or what it returns, when it is a function: a message made after the wait), when
    given; without `what` it returns the last (false) value, for the caller's own check."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            break
        time.sleep(step)
    if not value and what is not None:
        raise Timeout(f"{what() if callable(what) else what}: not within {timeout:g} s (last seen: {value!r})")
    return value


@dataclass(frozen=True)
class Result:
    """A finished command: its exit status and its output."""
    rc: int
    stdout: str
    stderr: str

    @classmethod
    def of(cls, p):
        """From a subprocess.CompletedProcess run with text=True."""
        return cls(p.returncode, p.stdout, p.stderr)

    @property
    def out(self):
        """stdout and stderr together, stripped: what a person running it would read."""
        return (self.stdout + self.stderr).strip()

    def json(self):
        """The document on stdout (blockc ... --json), or {"error": the output} when the
        command failed or printed no JSON."""
        try:
            return json.loads(self.stdout) if self.rc == 0 else {"error": self.out}
        except ValueError:
            return {"error": self.out}


def sh(*argv, check=True, timeout=30, env=None):
    """Runs argv; raises RuntimeError with its output when `check` and it fails."""
    r = Result.of(subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=timeout, env=env))
    if check and r.rc != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({r.rc}): {r.stdout}{r.stderr}")
    return r


def as_user(user, *argv):
    """argv run with `user`'s uid, primary group and supplementary groups (setpriv)."""
    pw = pwd.getpwnam(user)
    return ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--init-groups", "--", *argv]


def blockc(bindir, sock, *args, user=None, prefix=(), env=None, check=False, timeout=30):
    """`BINDIR/blockc --socket SOCK ARGS` as root, or as `user`; `prefix` goes before it (a
    faketime wrapper), `env` over this process's environment."""
    argv = [*prefix, f"{bindir}/blockc", "--socket", sock, *args]
    return sh(*(as_user(user, *argv) if user else argv), check=check, timeout=timeout,
              env=dict(os.environ, **env) if env else None)


def stop(p, seconds=10):
    """SIGTERM to a process's group (it was started with start_new_session), SIGKILL after
    `seconds`."""
    if p.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, seconds), (signal.SIGKILL, 5)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(wait)
            return
        except subprocess.TimeoutExpired:
            pass


INSIDE = "BLOCKD_TORTURE_INSIDE"


def enter(t, unshare, needs, tools=(), timeout=None):
    """Returns only inside the namespaces `unshare` (its options) makes, where what the suite
    mounts is seen by nobody else and goes with them; outside, it runs this script there and
    exits with its status. Without root or one of `tools` the suite cannot run here (t's
    cannot_run; `needs` says why root is needed)."""
    if os.environ.get(INSIDE) == "1":
        return
    why = needs if os.geteuid() != 0 else None
    missing = [x for x in ("unshare", *tools) if not shutil.which(x) and not os.path.exists(f"/usr/sbin/{x}")]
    if not why and missing:
        why = f"missing {' '.join(sorted(set(missing)))} (scripts/deps check)"
    if why:
        t.cannot_run(why)
    argv = ["unshare", *unshare, sys.executable, os.path.abspath(sys.argv[0]), *sys.argv[1:]]
    try:
        code = subprocess.run(argv, env=dict(os.environ, **{INSIDE: "1"}), timeout=timeout).returncode
    except subprocess.TimeoutExpired:  # unshare was killed; with --kill-child its processes died with it
        t.check(False, f"the namespace run did not finish in {timeout} s")
        t.done()
    if code not in (0, 1):  # the run inside ended without its RESULT line
        t.check(False, f"the run inside `unshare {' '.join(unshare)}` ended with status {code}")
        t.done()
    sys.exit(code)


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def outside_section(data):
    """The hosts file's bytes with blockd's managed section cut out."""
    b = data.find(BEGIN)
    if b < 0:
        return data
    e = data.find(END, b)
    return data[:b] + (data[e + len(END):] if e >= 0 else b"")


def section_domains(data):
    b = data.find(BEGIN)
    if b < 0:
        return set()
    e = data.find(END, b)
    out = set()
    for line in data[b:e].split(b"\n")[1:]:
        if line.startswith(b"0.0.0.0 "):
            out.add(line[8:].decode())
    return out


def iso(stamp):
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def faketime_libs(directory):
    """For the clock suites: (the shim built into `directory` from torture/timerfd_passthrough.c,
    libfaketime.so.1's path or None). libfaketime 0.9.10 cannot fire absolute CLOCK_BOOTTIME
    timerfds (see the shim): only the wall clock is faked, timerfd_settime goes to the kernel."""
    shim = os.path.join(directory, "timerfd_passthrough.so")
    subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-O2",
                    os.path.join(os.path.dirname(os.path.abspath(__file__)), "timerfd_passthrough.c"), "-o", shim], check=True)
    libfaketime = next((p for p in (f"/usr/lib/{os.uname().machine}-linux-gnu/faketime/libfaketime.so.1",
                                    "/usr/lib/faketime/libfaketime.so.1") if os.path.exists(p)), None)
    return shim, libfaketime


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
    """A blockd in a temp directory (the Python twin of Tests/Support/Sandbox.swift):
    its own socket, state and config dirs and, always, its own --hosts-file and per-user
    tables dir, so nothing here ever touches the real /etc/hosts or /run/blockd. Loopback only:
    the daemon speaks on a Unix socket in the temp dir. Every process started here is stopped
    by close()."""

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
                "--user-tables-dir", self.dir + "/users",
                # Screen time: the machine's logins are not the sandbox's to count.
                "--screen-time", "no"]

    def start(self, prefix=(), env=None, timeout=30):
        """Starts blockd (after `prefix`, a wrapper such as faketime), its output going to
        self.log, and returns once it answers `hello`."""
        e = dict(self.env)
        e.update(env or {})
        out = open(self.log, "ab")
        # Its own process group: a wrapper in `prefix` (faketime forks) dies with blockd.
        self.proc = subprocess.Popen(list(prefix) + self.args(), stdout=out, stderr=out, env=e, start_new_session=True)
        out.close()

        def serving():
            if self.proc.poll() is not None:
                raise RuntimeError(f"blockd exited with {self.proc.returncode}; log:\n{self.read_log()[-3000:]}")
            try:
                c = Client(self.socket, timeout=5)
                try:
                    return c.request("hello").startswith("OK ")
                finally:
                    c.close()
            except OSError:
                return False
        wait_for(serving, timeout, 0.01, what="blockd serving on its sandbox socket")
        return self.proc

    @property
    def pid(self):
        return self.proc.pid

    def client(self, timeout=30):
        return Client(self.socket, timeout)

    def ok(self, line):
        """One request on a connection of its own: the OK reply's document (raises otherwise)."""
        c = self.client()
        try:
            return c.ok(line)
        finally:
            c.close()

    def blockc(self, *args, prefix=(), env=None):
        """The blockc beside this blockd, in the sandbox's time zone, without colours."""
        return blockc(os.path.dirname(self.blockd), self.socket, *args, prefix=prefix,
                      env={"TZ": self.env["TZ"], "NO_COLOR": "1", **(env or {})})

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
