"""The private namespace rig shared by the torture suites that need a real network and a real
/etc (felt.py, browsers.py, browsers_live.py), root only:

  enter(t, ...)   re-runs the calling script in a new mount + network + PID namespace
                  (`unshare --mount --net --pid --fork --mount-proc --kill-child --propagation
                  private`): every process it starts dies with it, whatever happens, and /proc
                  is the namespace's own, so PIDs there mean what they mean on a real system
                  (libdispatch's worker monitor opens /proc/TID/stat for its threads and aborts
                  the process when that file is missing, as it is under the host's /proc). Without root or a
                  tool it prints a skipped RESULT, or fails with BLOCKD_PRIVILEGED_TESTS=1.
  Rig(t, ...)     inside: loopback up with the sites' addresses, an overlay over /etc (every
                  write, /etc/hosts and /etc/resolv.conf included, stays in the namespace), an
                  empty tmpfs over each desktop-applications directory (APPLICATION_DIRS),
                  dnsmasq answering the test names, HTTP servers, blockd with sandbox paths,
                  browsers with a temp HOME. Used as `with Rig(...) as rig:`; it stops
                  everything it started on the way out and turns an exception into a failure.
Nothing runs outside the namespace: the machine's sockets, firewall and /etc are untouched."""
import os, shutil, signal, subprocess, tempfile, threading, traceback
from http.server import ThreadingHTTPServer
import lib
from lib import blockc, sh, stop, wait_for

# blockd's default desktop-application directories (W2), each hidden under an empty tmpfs in the rig.
APPLICATION_DIRS = ("/usr/share/applications", "/usr/local/share/applications",
                    "/var/lib/flatpak/exports/share/applications", "/var/lib/flatpak/app")


def enter(t, tools, needs, timeout=240):
    """Returns only inside the namespace; outside it runs the script there and exits with it."""
    lib.enter(t, ["--mount", "--net", "--pid", "--fork", "--mount-proc", "--kill-child", "--propagation", "private"],
              needs, tools, timeout)


# One keep-alive GET of a test site's page, raising on anything but a whole 200 reply. The
# clients run as throwaway users (felt.py, allow_only_net.py) carry this same function, its
# source copied in (inspect.getsource).
def request(f, s):
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    status, length = f.readline(), 0
    while True:
        line = f.readline()
        if not line:
            raise ConnectionError("closed")
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
        if line in (b"\r\n", b"\n"):
            break
    if not status.startswith(b"HTTP/1.1 200") or len(f.read(length)) != length:
        raise ConnectionError("bad reply")


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a cut connection is the point of these tests, not an error to print


class Rig:
    """sites: loopback addresses to add; names: dnsmasq `--address` rules (name -> address,
    or a list of them: an IPv4 and an IPv6 one)."""

    def __init__(self, t, bindir, prefix, sites, names):
        self.t, self.bindir, self.sites, self.names = t, bindir, sites, names
        self.work = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
        self.servers, self.daemons, self.procs = [], [], []

    def __enter__(self):
        sh("ip", "link", "set", "lo", "up")
        for address in self.sites:
            sh("ip", "addr", "add", f"{address}/8", "dev", "lo", check=False)
        os.makedirs(f"{self.work}/up")
        os.makedirs(f"{self.work}/wk")
        sh("mount", "-t", "overlay", "overlay", "-o", f"lowerdir=/etc,upperdir={self.work}/up,workdir={self.work}/wk", "/etc")
        fstype = sh("findmnt", "-n", "-o", "FSTYPE", "/etc").stdout.strip()
        if fstype != "overlay":  # stop before blockd could touch the machine's /etc
            raise RuntimeError(f"/etc is {fstype!r}, not the overlay: refusing to go on")
        # W2: a blockd in here never reads (nor marks, nor stops) the machine's desktop applications.
        for apps in APPLICATION_DIRS:
            if os.path.isdir(apps):
                sh("mount", "-t", "tmpfs", "-o", "mode=0755,size=4m", "tmpfs", apps)
        os.remove("/etc/resolv.conf")  # a symlink on some systems: replace it, inside the overlay
        with open("/etc/resolv.conf", "w") as f:
            f.write("nameserver 127.0.0.1\n")
        rules = [f"--address=/{name}/{a}" for name, address in self.names.items()
                 for a in (address if isinstance(address, list) else [address])]
        sh("dnsmasq", "--no-resolv", "--no-hosts", "--listen-address=127.0.0.1", "--bind-interfaces",
           *rules, f"--pid-file={self.work}/dns.pid", "--user=root")
        return self

    def __exit__(self, kind, error, tb):
        if error is not None and not isinstance(error, SystemExit):  # a broken rig is a failure with its reason
            where = traceback.format_exc().strip().splitlines()[-3]
            logs = "".join(f"\nblockd log:\n{d.log()}" for d in self.daemons)
            self.t.check(False, f"{type(error).__name__}: {error} at {where}{logs}")
        for p in self.procs:
            stop(p)
        for d in self.daemons:
            d.stop()
        for s in self.servers:
            s.shutdown()
        try:
            with open(f"{self.work}/dns.pid") as f:
                os.kill(int(f.read().strip()), signal.SIGTERM)
        except (OSError, ValueError):
            pass
        subprocess.run(["umount", "/etc"], capture_output=True)
        shutil.rmtree(self.work, ignore_errors=True)
        return error is not None and not isinstance(error, SystemExit)

    def serve(self, address, handler, port=80):
        server = Server((address, port), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.servers.append(server)
        return server

    def configure(self, conf="", selections=None):
        """blockd's --config-dir: blockd.conf and selections.d/NAME.conf."""
        os.makedirs(f"{self.work}/etc/selections.d", exist_ok=True)
        with open(f"{self.work}/etc/blockd.conf", "w") as f:
            f.write(conf)
        for name, text in (selections or {}).items():
            with open(f"{self.work}/etc/selections.d/{name}.conf", "w") as f:
                f.write(text)

    def daemon(self, *extra):
        d = Daemon(self.bindir, self.work, extra)
        self.daemons.append(d)
        return d

    def spawn(self, argv, log, **kw):
        """A long-running process (a browser) in its own process group, stopped on the way out."""
        p = subprocess.Popen(argv, stdout=open(f"{self.work}/{log}", "wb"), stderr=subprocess.STDOUT,
                             start_new_session=True, **kw)
        self.procs.append(p)
        return p

    def browser_env(self):
        env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
        env.update(HOME=f"{self.work}/home", XDG_CONFIG_HOME=f"{self.work}/home/.config")
        os.makedirs(env["XDG_CONFIG_HOME"], exist_ok=True)
        return env

    def mkdir(self, name):
        path = f"{self.work}/{name}"
        os.makedirs(path, exist_ok=True)
        return path


class Daemon:
    """blockd on the rig's sandbox paths plus `extra` (--policy-root, --hosts-file, ...)."""

    def __init__(self, bindir, work, extra=()):
        self.bindir, self.work = bindir, work
        self.args = [f"{bindir}/blockd", "--socket", f"{work}/s.sock", "--state-dir", f"{work}/state",
                     "--config-dir", f"{work}/etc", "--log-target", "console", *extra]
        self.proc = None

    def start(self):
        log = open(f"{self.work}/blockd.log", "ab")
        self.proc = subprocess.Popen(self.args, stdout=log, stderr=log)

        def answering():
            if self.proc.poll() is not None:
                raise RuntimeError(f"blockd exited with {self.proc.returncode}: {self.log()}")
            return os.path.exists(f"{self.work}/s.sock") and self.blockc("version", check=False).rc == 0
        wait_for(answering, step=0.01, what=lambda: f"blockd answering on {self.work}/s.sock; its log: {self.log()}")

    def blockc(self, *args, user=None, check=True):
        """blockc on this daemon's socket, as root or as `user`: a lib.Result; raises when
        `check` and it fails."""
        return blockc(self.bindir, f"{self.work}/s.sock", *args, user=user, check=check)

    def status(self):
        return self.blockc("status", "--json").json()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)

    def log(self):
        try:
            with open(f"{self.work}/blockd.log", errors="replace") as f:
                return f.read()[-3000:]
        except OSError:
            return ""
