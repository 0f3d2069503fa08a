"""A throwaway systemd, booted as PID 1 on a copy-on-write view of this machine, to run blockd
under its real, shipped unit (torture/unit.py), root only:

    with SystemRig(binds={"/blockd/src": REPO}, names={"site.test": "127.0.0.2"}) as rig:
        rig.boot()                      # systemctl is-system-running says running or degraded
        rig.run("systemctl", "start", "blockd")           # a lib.Result, as root inside
        rig.run("getent", "ahosts", "site.test", user="kid")
    # stopped: every process inside killed, the cgroup and the scratch dir removed

The unit's sandbox (ProtectSystem=, RestrictAddressFamilies=, SystemCallFilter=, the socket
unit, Type=notify, Restart=) is applied by systemd itself, so only a real systemd proves it;
the machines this runs on may have no systemd as PID 1, and must not have their own touched.

WHY IT IS BUILT THIS WAY. Each of these is a way a booted systemd reaches the machine:
- systemd-tmpfiles at boot empties /tmp and cleans /var: booting in a mere mount namespace
  empties the machine's real /tmp. Here / is an overlay (lowerdir=/, upper and work dirs in a
  scratch dir under /var/tmp) entered with pivot_root, and the old root is then detached
  (umount -l; the boot refuses to go on if it cannot be), so every write lands in the scratch
  dir and nothing of the machine is reachable inside except the read-only binds asked for.
  An overlay of / holds only the root file system, not other mounts (/work may be one), so
  the repository and the binaries come in as read-only binds made before pivot_root.
- Mount, PID, network, UTS, IPC and cgroup namespaces (unshare): killing the rig's PID 1
  kills everything inside; the network is the namespace's own loopback (dnsmasq on
  127.0.0.1 answers the test names, no other address is reachable); the host name is its own.
- A cgroup of its own (a child of this process's cgroup v2, entered before `unshare
  --cgroup`, the v2 hierarchy mounted as the rig's /sys/fs/cgroup): systemd's slices and
  units live under it, not in the machine's cgroup roots, where a second rig or the
  machine's own manager would share (and kill) them; it is removed at stop.
- systemd in container mode (`container=blockd-sysrig`), as systemd-nspawn runs it: as a
  machine's PID 1 it would set the kernel's time zone and sysctls, load modules, start
  gettys on the real console and ttys, systemd-timesyncd (which may step the clock) and udev
  (which triggers every device). Here those units skip themselves; /sys and /proc/sys are
  read-only, /dev is a fresh tmpfs with its own null, zero, random, tty and devpts (its
  console is a file in the scratch dir), and CAP_SYS_TIME, CAP_SYS_MODULE and CAP_SYS_RAWIO
  (debugfs, tracefs) are dropped from the bounding set of systemd and of every command run
  inside: nothing in the rig can change the clock.
- It boots basic.target (journald, D-Bus, sockets, timers), not the machine's default
  target: a service enabled on this machine (a database, a getty) would start in the rig too.
- /tmp and /run are fresh tmpfs; /etc/resolv.conf (the overlay's) names 127.0.0.1.
- Cleanup does not depend on this process ending well: the unshare process gets SIGKILL
  when this process dies (PR_SET_PDEATHSIG) and takes the rig's PID 1 with it
  (--kill-child); stop() kills PID 1 and everything in the rig's cgroup (cgroup.kill), waits
  for them to go, removes the cgroup and the scratch dir; a scratch dir left by a killed run
  (its owner and PID 1 both gone, its cgroup empty) is removed by the next rig.
Processes inside are started with nsenter into all of PID 1's namespaces, with a clean
environment. Everything here is root only; see suite.require() for what happens without root."""
import ctypes, glob, json, os, shutil, signal, socket, subprocess, sys, tempfile, time
from lib import Result, Timeout, wait_for

SCRATCH, PREFIX = "/var/tmp", "blockd-sysrig."
SYSTEMD = "/lib/systemd/systemd"
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
ENV = {"PATH": PATH, "LANG": "C.UTF-8", "HOME": "/root", "TERM": "dumb", "SYSTEMD_PAGER": "", "SYSTEMD_COLORS": "0"}
TOOLS = ["unshare", "nsenter", "pivot_root", "mount", "umount", "ip", "dnsmasq", "setpriv", "systemctl"]
PR_SET_PDEATHSIG, PR_CAPBSET_DROP = 1, 24
CAP_SYS_MODULE, CAP_SYS_RAWIO, CAP_SYS_TIME = 16, 17, 25
DROPPED = "-sys_time,-sys_module,-sys_rawio"  # the same three, as setpriv names them


def cgroup2():
    """(mount point of the cgroup v2 hierarchy, this process's cgroup in it), or None."""
    mount = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            if right.split()[0] == "cgroup2":
                mount = left.split()[4]
                break
    if mount is None:
        return None
    with open("/proc/self/cgroup") as f:
        mine = [line.strip()[3:] for line in f if line.startswith("0::")]
    return (mount, mine[0]) if mine else None


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def start_time(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def remove_cgroup(path, seconds=10):
    """Removes a cgroup and its children once their processes are gone. True when removed."""
    if not path or not os.path.isdir(path):
        return True
    deadline = time.monotonic() + seconds
    while True:
        for root, dirs, _ in os.walk(path, topdown=False):
            for d in dirs:
                try:
                    os.rmdir(os.path.join(root, d))
                except OSError:
                    pass
        try:
            os.rmdir(path)
            return True
        except OSError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)


def sweep():
    """Removes what a killed earlier run left: scratch dirs whose owner and PID 1 are gone."""
    for d in glob.glob(f"{SCRATCH}/{PREFIX}*"):
        try:
            with open(f"{d}/owner") as f:
                owner = json.load(f)
        except (OSError, ValueError):
            continue  # still being made, or not one of ours
        if start_time(owner["pid"]) == owner["start"] or (owner.get("pid1") and alive(owner["pid1"])):
            continue
        if remove_cgroup(owner.get("cgroup"), 2) and not mounted_under(d):  # a busy one is left alone
            shutil.rmtree(d, ignore_errors=True)


def mounted_under(path):
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4].startswith(path.rstrip("/") + "/") for line in f)


class SystemRig:
    """binds: {path inside: path outside}, bound read-only; names: dnsmasq's answers
    ({name: IPv4 address}, the name's subdomains included)."""

    def __init__(self, binds=None, names=None, boot_seconds=60):
        self.binds, self.names, self.boot_seconds = dict(binds or {}), dict(names or {}), boot_seconds
        self.dir = self.cgroup = self.proc = self.pid1 = None
        self.boot_log = ""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def boot(self):
        """Boots the rig; raises RuntimeError with the boot log when it does not come up."""
        sweep()
        started = time.monotonic()
        self.dir = tempfile.mkdtemp(prefix=PREFIX, dir=SCRATCH)
        mount, mine = cgroup2()
        self.cgroup = os.path.normpath(f"{mount}/{mine}/{os.path.basename(self.dir)}")
        os.mkdir(self.cgroup)
        self.note()
        config = {"dir": self.dir, "binds": self.binds}
        log = open(f"{self.dir}/boot.log", "wb")
        cgroup_procs = f"{self.cgroup}/cgroup.procs"

        def child():  # in the forked child, before exec: our cgroup, and die with this process
            with open(cgroup_procs, "w") as f:
                f.write(str(os.getpid()))
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

        self.proc = subprocess.Popen(
            ["unshare", "--mount", "--pid", "--net", "--uts", "--ipc", "--cgroup", "--fork", "--kill-child",
             # -B: ENV has no PYTHONDONTWRITEBYTECODE, and importing lib must not write into the repository.
             "--propagation", "private", sys.executable, "-B", os.path.abspath(__file__), "__boot", json.dumps(config)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, preexec_fn=child, env=dict(ENV))
        log.close()
        deadline = time.monotonic() + self.boot_seconds
        while self.pid1 is None and time.monotonic() < deadline and self.proc.poll() is None:
            try:
                with open(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children") as f:
                    kids = f.read().split()
                self.pid1 = int(kids[0]) if kids else None
            except OSError:
                pass
            time.sleep(0.02)
        self.note()
        state = ""
        while self.pid1 and time.monotonic() < deadline and self.proc.poll() is None:
            if self.comm() == "systemd":
                state = self.run("systemctl", "is-system-running", check=False, timeout=10).stdout.strip()
                if state in ("running", "degraded"):
                    break
            time.sleep(0.1)
        if state not in ("running", "degraded"):
            raise RuntimeError(f"the rig's systemd did not boot in {self.boot_seconds} s "
                               f"(state {state!r}, unshare {self.proc.poll()}): {self.log()[-3000:]}")
        self.boot_seconds_taken = time.monotonic() - started
        self.state = state
        if self.names:
            rules = [f"--address=/{name}/{address}" for name, address in self.names.items()]
            self.run("systemd-run", "--quiet", "--unit=sysrig-dnsmasq", "--service-type=exec", "dnsmasq",
                     "--keep-in-foreground", "--no-resolv", "--no-hosts", "--listen-address=127.0.0.1",
                     "--bind-interfaces", "--user=root", *rules)
            name = next(iter(self.names))
            try:
                wait_for(lambda: self.run("getent", "ahosts", name, check=False).rc == 0, 10, 0.1, what=f"dnsmasq in the rig answering {name}")
            except Timeout as e:
                raise RuntimeError(f"{e}: " + self.run("systemctl", "status", "sysrig-dnsmasq", check=False).stdout) from None
        return self

    def note(self):
        """What a later sweep needs if this process is killed before stop()."""
        with open(f"{self.dir}/owner.new", "w") as f:
            json.dump({"pid": os.getpid(), "start": start_time(os.getpid()), "pid1": self.pid1, "cgroup": self.cgroup}, f)
        os.rename(f"{self.dir}/owner.new", f"{self.dir}/owner")

    def comm(self):
        try:
            with open(f"/proc/{self.pid1}/comm") as f:
                return f.read().strip()
        except OSError:
            return None

    def show(self, unit, *props):
        """`systemctl show UNIT --property=...` inside, as a dict."""
        p = self.run("systemctl", "show", unit, *(f"--property={x}" for x in props), check=False)
        return dict(line.split("=", 1) for line in p.stdout.splitlines() if "=" in line)

    def run(self, *argv, user=None, check=True, timeout=60, input=None):
        """argv as root inside (or as `user`: uid, primary group and groups, set inside), with
        a clean environment and / as its directory: a lib.Result. Raises RuntimeError when
        check and it fails."""
        who = (f"--reuid={user}", f"--regid={user}", "--init-groups") if user is not None else ()
        p = Result.of(subprocess.run([*self.enter(), *who, "--", *argv], capture_output=True, text=True,
                                     errors="replace", timeout=timeout, input=input, env=dict(ENV)))
        if check and p.rc != 0:
            raise RuntimeError(f"in the rig, {' '.join(argv)} failed ({p.rc}): {p.stdout}{p.stderr}")
        return p

    def login(self, unit, user, kind, argv, may_end=False):
        """A login session for `user` through PAM (systemd-run's PAMName=login, as a display
        manager (kind x11) or a VT login (tty) opens one), running argv as the unit `unit`:
        (its logind id once logind has it, the unit's main pid). With `may_end`, the id is None
        when the unit ended before logind had it (blockd may end a login at once)."""
        self.run("systemd-run", "--quiet", f"--unit={unit}", "-p", "PAMName=login", "-p", f"User={user}",
                 "-p", f"Environment=XDG_SESSION_TYPE={kind} XDG_SESSION_CLASS=user", *argv)
        pid = self.run("systemctl", "show", "-p", "MainPID", "--value", unit).stdout.strip()
        found = []

        def registered():
            for line in self.run("loginctl", "list-sessions", "--no-legend", check=False).stdout.splitlines():
                sid = line.split()[0] if line.split() else ""
                leader = self.run("loginctl", "show-session", sid, "-p", "Leader", "--value", check=False) if sid else None
                if leader is not None and leader.rc == 0 and leader.stdout.strip() == pid:
                    found.append(sid)
                    return True
            return False

        def running():
            return self.run("systemctl", "is-active", unit, check=False).stdout.strip() in ("active", "activating", "reloading")
        if not wait_for(lambda: registered() or may_end and not running(), timeout=10, step=0.05):
            raise RuntimeError(f"logind has no session for {unit} (pid {pid}): "
                               f"{self.run('journalctl', '-u', unit, '--no-pager', check=False).stdout[-800:]}")
        return (found[0] if found else None), pid

    def read(self, path):
        """A file inside, as bytes (cat through nsenter: the rig's / is not this process's)."""
        p = subprocess.run([*self.enter(), "--", "cat", path], capture_output=True,
                           timeout=30, env=dict(ENV))
        if p.returncode != 0:
            raise RuntimeError(f"in the rig, cannot read {path}: {p.stderr.decode(errors='replace')}")
        return p.stdout

    def write(self, path, data):
        """Replaces a file inside with `data` (bytes or text)."""
        subprocess.run([*self.enter(), "--", "sh", "-c", 'cat > "$0"', path],
                       input=data if isinstance(data, bytes) else data.encode(), check=True, capture_output=True,
                       timeout=30, env=dict(ENV))

    def enter(self):
        """nsenter into all of PID 1's namespaces, then setpriv without the capabilities the
        rig's systemd was booted without (a command run here cannot set the clock either)."""
        if not self.pid1:
            raise RuntimeError("the rig is not running")
        return ["nsenter", "--target", str(self.pid1), "--all", "setpriv", f"--bounding-set={DROPPED}"]

    def journal(self, unit="blockd"):
        """`unit`'s journal entries inside (journalctl -u UNIT -o json), oldest first."""
        entries = []
        for line in self.run("journalctl", "-u", unit, "-o", "json", "--no-pager", check=False).stdout.splitlines():
            try:
                entries.append(json.loads(line))
            except ValueError:
                pass
        return entries

    def log(self):
        try:
            with open(f"{self.dir}/boot.log", errors="replace") as f:
                boot = f.read()
            with open(f"{self.dir}/console", errors="replace") as f:
                return boot + f.read()
        except (OSError, TypeError):
            return self.boot_log

    def stop(self):
        """Kills PID 1 (the kernel then kills everything in its PID namespace) and everything in
        the rig's cgroup (cgroup.kill), waits for them to go, removes the cgroup and the scratch
        dir. Safe to call twice; raises RuntimeError if something could not be removed."""
        problems = []
        if self.dir:
            self.boot_log = self.log()
        if self.pid1 and self.proc and self.proc.poll() is None:
            try:  # still ours: the child of our unshare
                with open(f"/proc/{self.pid1}/stat") as f:
                    ours = int(f.read().rsplit(")", 1)[1].split()[1]) == self.proc.pid
            except (OSError, ValueError, IndexError):
                ours = False
            if ours:
                os.kill(self.pid1, signal.SIGKILL)
        if self.cgroup and os.path.exists(f"{self.cgroup}/cgroup.kill"):
            try:  # whatever was started in the rig's cgroup, even before pid1 was known
                with open(f"{self.cgroup}/cgroup.kill", "w") as f:
                    f.write("1")
            except OSError:
                pass
        if self.proc:
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()  # --kill-child: its child dies with it
                self.proc.wait(5)
        if self.cgroup and not remove_cgroup(self.cgroup, 15):
            problems.append(f"the rig's cgroup {self.cgroup} is still busy")
        if self.dir:
            if mounted_under(self.dir):
                problems.append(f"something is still mounted under {self.dir}: left in place")
            else:
                shutil.rmtree(self.dir, ignore_errors=True)
                if os.path.exists(self.dir):
                    problems.append(f"could not remove {self.dir}")
        self.pid1 = self.proc = self.dir = self.cgroup = None
        if problems:
            raise RuntimeError("; ".join(problems))


def boot_inside(config):
    """PID 1 of the new namespaces, before systemd: the overlay root, its mounts, pivot_root,
    then exec systemd. Any failure exits before systemd runs."""
    d = config["dir"]
    root = f"{d}/root"

    def sh(*argv):
        subprocess.run(argv, check=True)

    for sub in ("up", "wk", "root"):
        os.makedirs(f"{d}/{sub}", exist_ok=True)
    sh("mount", "--make-rprivate", "/")
    sh("mount", "-t", "overlay", "overlay", "-o", f"lowerdir=/,upperdir={d}/up,workdir={d}/wk", root)
    for inside, outside in config["binds"].items():
        target = root + inside
        os.makedirs(target, exist_ok=True)
        sh("mount", "--bind", outside, target)
        sh("mount", "-o", "remount,bind,ro", target)
    # /dev: a tmpfs of its own; nodes made here, so a chmod inside changes no machine device.
    os.umask(0)
    sh("mount", "-t", "tmpfs", "-o", "mode=0755,size=4m,nosuid", "tmpfs", f"{root}/dev")
    for name, minor in (("null", 3), ("zero", 5), ("full", 7), ("random", 8), ("urandom", 9)):
        os.mknod(f"{root}/dev/{name}", 0o20666, os.makedev(1, minor))
    os.mknod(f"{root}/dev/tty", 0o20666, os.makedev(5, 0))
    for sub in ("pts", "shm", "mqueue"):
        os.makedirs(f"{root}/dev/{sub}")
    sh("mount", "-t", "devpts", "-o", "newinstance,ptmxmode=0666,mode=0620", "devpts", f"{root}/dev/pts")
    os.symlink("pts/ptmx", f"{root}/dev/ptmx")
    sh("mount", "-t", "tmpfs", "-o", "mode=1777,nosuid,nodev", "tmpfs", f"{root}/dev/shm")
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{root}/dev/{name}")
    os.umask(0o022)
    open(f"{d}/console", "w").close()
    open(f"{root}/dev/console", "w").close()
    sh("mount", "--bind", f"{d}/console", f"{root}/dev/console")
    # /proc of this PID namespace, its kernel-wide knobs read-only; /sys read-only with the
    # rig's own cgroup (the cgroup namespace's root) writable at /sys/fs/cgroup.
    sh("mount", "-t", "proc", "-o", "nosuid,nodev,noexec", "proc", f"{root}/proc")
    for knob in ("sys", "sysrq-trigger"):
        if not os.path.exists(f"{root}/proc/{knob}"):
            continue
        sh("mount", "--bind", f"{root}/proc/{knob}", f"{root}/proc/{knob}")
        sh("mount", "-o", "remount,bind,ro", f"{root}/proc/{knob}")
    sh("mount", "-t", "sysfs", "-o", "ro,nosuid,nodev,noexec", "sysfs", f"{root}/sys")
    sh("mount", "-t", "cgroup2", "-o", "nosuid,nodev,noexec", "cgroup2", f"{root}/sys/fs/cgroup")
    sh("mount", "-t", "tmpfs", "-o", "mode=0755,nosuid,nodev", "tmpfs", f"{root}/run")
    sh("mount", "-t", "tmpfs", "-o", "mode=1777,nosuid,nodev", "tmpfs", f"{root}/tmp")
    if os.path.lexists(f"{root}/etc/resolv.conf"):
        os.remove(f"{root}/etc/resolv.conf")  # in the overlay: the machine's stays
    with open(f"{root}/etc/resolv.conf", "w") as f:
        f.write("nameserver 127.0.0.1\n")
    os.makedirs(f"{root}/.oldroot", exist_ok=True)
    os.chdir(root)
    sh("pivot_root", ".", ".oldroot")
    os.chdir("/")
    sh("umount", "--lazy", "/.oldroot")
    with open("/proc/self/mountinfo") as f:
        if any(line.split()[4].startswith("/.oldroot") for line in f):
            sys.exit("sysrig: the old root is still mounted inside; refusing to boot")
    os.rmdir("/.oldroot")
    sh("ip", "link", "set", "lo", "up")
    socket.sethostname("blockd-sysrig")
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_SYS_TIME, CAP_SYS_MODULE, CAP_SYS_RAWIO):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            sys.exit(f"sysrig: cannot drop capability {cap}: errno {ctypes.get_errno()}")
    sys.stdout.flush()
    os.execve(SYSTEMD, [SYSTEMD, "--unit=basic.target", "--log-level=notice"], {"container": "blockd-sysrig", "PATH": PATH, "LANG": "C.UTF-8"})


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "__boot":
    boot_inside(json.loads(sys.argv[2]))
