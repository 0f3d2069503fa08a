"""W2's desktop-application part end to end (root only), inside the private mount + network +
PID namespace of torture/rig.py: the rig's empty tmpfs over /usr/share/applications (and the
other application directories) holds the test's own .desktop files, so the machine's are never
read, and an overlay over /etc holds the throwaway users and the autostart entry.

    python3 torture/allow_only_apps.py BIN_DIR

- Copies of /bin/sleep in the work directory: bd-game, bd-editor, bd-helper (NoDisplay=true),
  bd-panel (named by /etc/xdg/autostart), and bd-mine (in kid's own ~/.local/share/applications).
- Throwaway users in the overlay's /etc/passwd: `kid` and `other`, login users (uid 1000 or more),
  and `svc`, a system user.
- The real blockd with its default desktop directories and a scratch hosts file and tables.
- `blockc start --allow-only editor` (the selection editor: Apps=bd-editor): as a login user
  bd-game is denied and the hit names "Test Game"; bd-editor, bd-helper and bd-panel run; root
  and svc run bd-game; other's bd-game started before the window is stopped. After `blockc
  stop` bd-game runs again.
- `blockc start --user kid --allow-only editor`: bd-game and kid's own bd-mine are denied for kid
  and run for other.
Without root this prints a skipped RESULT; with BLOCKD_PRIVILEGED_TESTS=1 anything missing fails."""
import os, pwd, shutil, signal, subprocess, sys
from lib import DEADLINE, Tally, sh, wait_for
from rig import Rig, enter

t = Tally("allow-only-apps")
bindir = os.path.abspath(sys.argv[1])
enter(t, ["unshare", "setpriv", "useradd", "findmnt"], "needs root for a private mount namespace and throwaway users")

KID, OTHER, SVC = "bdapps-kid", "bdapps-other", "bdapps-svc"
APPS = "/usr/share/applications"


def desktop(path, name, exec_line, extra=""):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(f"[Desktop Entry]\nType=Application\nName={name}\nExec={exec_line}\n{extra}")


def setup(rig):
    """The binaries, the users, the desktop files: all in the work directory or the namespace."""
    if sh("findmnt", "-n", "-o", "FSTYPE", APPS).stdout.strip() != "tmpfs":
        raise RuntimeError(f"{APPS} is not the rig's tmpfs: refusing to go on")
    for name in (KID, OTHER, SVC):
        try:
            pwd.getpwnam(name)
            raise RuntimeError(f"a user named {name} exists on this machine: the test needs the name for its throwaway user")
        except KeyError:
            pass
    os.chmod(rig.work, 0o755)
    home = rig.mkdir("home-kid")
    sh("useradd", "--no-create-home", "--home-dir", home, "--shell", "/usr/sbin/nologin", KID)
    sh("useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", OTHER)
    sh("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SVC)
    bins = {}
    rig.mkdir("bin")
    for name in ("game", "editor", "helper", "panel", "mine"):
        bins[name] = f"{rig.work}/bin/bd-{name}"
        shutil.copyfile("/bin/sleep", bins[name])
        os.chmod(bins[name], 0o755)
    desktop(f"{APPS}/game.desktop", "Test Game", f"{bins['game']} %U")
    desktop(f"{APPS}/editor.desktop", "Editor", f"env LANG=C {bins['editor']} %F")
    desktop(f"{APPS}/helper.desktop", "Helper", bins["helper"], "NoDisplay=true\n")
    desktop(f"{APPS}/panel.desktop", "Panel", bins["panel"])
    desktop("/etc/xdg/autostart/bd-panel.desktop", "Panel", bins["panel"])
    desktop(f"{home}/.local/share/applications/mine.desktop", "Mine", bins["mine"])
    rig.configure("", {"editor": f"[Selection]\nName=editor\nApps={bins['editor']}\n"})
    return bins


def spawn(user, path, seconds):
    """`path SECONDS` as `user` (None: root)."""
    argv = [path, str(seconds)]
    if user:
        pw = pwd.getpwnam(user)
        argv = ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups", "--", *argv]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def runs(user, path):
    """Whether `path 0` ran and exited 0 as `user` (a denied exec makes setpriv fail)."""
    p = spawn(user, path, 0)
    try:
        return p.wait(10) == 0
    except subprocess.TimeoutExpired:
        p.kill()
        return False


def started(d, *args):
    """`blockc start ARGS`: accepted, and nothing about apps among the causes it is not enforced
    (the names part needs the NSS module on the hosts: line, which this namespace has not)."""
    start = d.blockc("start", *args, check=False)
    causes = [x.get("cause", "") for x in d.status().get("enforcement", {}).get("notEnforced", [])]
    t.check(start.rc in (0, 1) and not any("desktop" in c or "app" in c.split(":")[0] for c in causes),
            f"W2: blockc start {' '.join(args)}: the apps part is enforced: {start.stdout}{start.stderr} {causes}")


def everyone(d, bins):
    t.check(runs(KID, bins["game"]), "before the window a login user runs bd-game")
    running = spawn(OTHER, bins["game"], 300)
    wait_for(lambda: os.path.realpath(f"/proc/{running.pid}/exe") == os.path.realpath(bins["game"]), what="bd-game running before the window starts")
    started(d, "--for", "1h", "--allow-only", "editor")
    t.check(not runs(KID, bins["game"]), "W2: during the window a login user cannot launch the desktop app bd-game")
    t.check(wait_for(lambda: "Denied launch of Test Game" in d.log()), f"W2: the hit names the app: {d.log()[-600:]}")
    for name in ("editor", "helper", "panel"):
        t.check(runs(KID, bins[name]), f"W2: bd-{name} still runs for a login user (allowed, NoDisplay, autostart)")
    t.check(runs(None, bins["game"]), "W2: root runs bd-game")
    t.check(runs(SVC, bins["game"]), "W2: a system user (uid < 1000) runs bd-game")
    try:
        code = running.wait(DEADLINE)
    except subprocess.TimeoutExpired:
        code = None
    t.check(code == -signal.SIGTERM or code == -signal.SIGKILL, f"W2: a login user's bd-game running at the start was stopped ({code})")
    t.check(wait_for(lambda: "Stopped Test Game" in d.log()), "W2: the stop names the app")
    stop = d.blockc("stop", "only_editor", check=False)
    t.check(stop.rc == 0, f"blockc stop only_editor: {stop.stdout}{stop.stderr}")
    t.check(wait_for(lambda: runs(KID, bins["game"])), "W2: after the window bd-game runs again")


def per_user(d, bins):
    started(d, "--for", "1h", "--user", KID, "--allow-only", "editor")
    t.check(not runs(KID, bins["game"]) and not runs(KID, bins["mine"]), "W2: for kid bd-game and kid's own bd-mine are denied")
    t.check(runs(OTHER, bins["game"]) and runs(OTHER, bins["mine"]), "W2: another login user runs both")
    t.check(runs(KID, bins["editor"]), "W2: kid runs the allowed editor")
    d.blockc("stop", "only_editor", check=False)
    t.check(wait_for(lambda: runs(KID, bins["mine"])), "W2: after kid's window bd-mine runs again")


with Rig(t, bindir, "bd-apps-", [], {}) as rig:
    bins = setup(rig)
    d = rig.daemon("--hosts-file", f"{rig.work}/hosts", "--user-tables-dir", f"{rig.work}/users",
                   "--firewall", "no", "--cut-sockets", "no", "--browser-policies", "no")
    open(f"{rig.work}/hosts", "w").close()
    d.start()
    everyone(d, bins)
    per_user(d, bins)
    t.check(d.proc.poll() is None, f"blockd ran through the whole suite (exit {d.proc.poll()}); its log:\n{d.log()}")
t.done()
