"""Shared by the per-user torture suites (nss.py, users.py), inside the namespace of rig.py:
libnss_blockd.so.2 placed where glibc finds an installed one, and programs run as a
throwaway user (getent, headless Chromium, blockc)."""
import http.server, os, pwd, shutil, subprocess, tempfile
from lib import as_user, sh

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def throwaway_users(users):
    """Creates `users` ({name: "group,group"}) with groups blockd and blockd-admin, inside the
    namespace's overlay of /etc; refuses a name that exists, never reusing a real account."""
    import grp
    for name in users:
        try:
            pwd.getpwnam(name)
            raise RuntimeError(f"a user named {name} exists on this machine: the test needs the name for its throwaway user")
        except KeyError:
            pass
    for group in ("blockd", "blockd-admin"):
        try:
            grp.getgrnam(group)
        except KeyError:
            sh("groupadd", "--system", group)
    for name, groups in users.items():
        sh("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "-G", groups, name)


def install_module(work, bindir):
    """scripts/install into DESTDIR (with a copy of this machine's nsswitch.conf), then the
    module's directory overlaid read-only in this namespace. Returns (DESTDIR, the install
    environment, the module's path)."""
    sh("make", "-s", "-C", REPO, "nss", timeout=120)
    triplet = sh("gcc", "-print-multiarch").stdout.strip()
    dest = f"{work}/root"
    os.makedirs(f"{dest}/etc")
    shutil.copyfile("/etc/nsswitch.conf", f"{dest}/etc/nsswitch.conf")
    shutil.copyfile("/etc/nsswitch.conf", f"{dest}/machine-nsswitch.conf")
    env = dict(os.environ, DESTDIR=dest, BINDIR_SRC=bindir, NSS_SRC=f"{REPO}/.build/nss/libnss_blockd.so.2")
    sh(f"{REPO}/scripts/install", "install", env=env, timeout=60)
    libdir = f"/usr/lib/{triplet}"
    sh("mount", "-t", "overlay", "overlay", "-o", f"lowerdir={dest}{libdir}:{libdir}", libdir)
    return dest, env, f"{libdir}/libnss_blockd.so.2"


def getent(user, name):
    """The addresses `getent ahosts name` gives as `user`."""
    p = sh(*as_user(user, "getent", "ahosts", name), check=False)
    return {line.split()[0] for line in p.stdout.splitlines() if line.strip()}


def chromium(user, url, prefix="bd-chromium", flags=()):
    """Headless Chromium as `user` with a fresh profile (and `flags`): the DOM it dumps and its
    messages, or "TIMEOUT"."""
    pw = pwd.getpwnam(user)
    home = tempfile.mkdtemp(prefix=f"{prefix}-{user}-")  # its own: another suite may run beside this one
    os.chown(home, pw.pw_uid, pw.pw_gid)
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(HOME=home, XDG_CONFIG_HOME=f"{home}/.config")
    argv = as_user(user, "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                   f"--user-data-dir={home}/profile", *flags, "--dump-dom", url)
    try:
        p = sh(*argv, check=False, timeout=60, env=env)
        return p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return "TIMEOUT"
    finally:
        shutil.rmtree(home, ignore_errors=True)


def firefox(user, url, prefix="bd-firefox", timeout=90):
    """Headless Firefox ESR as `user` with a fresh profile, loading `url` for a screenshot (it
    exits once a page has loaded; on an error page it waits until killed at `timeout`); its
    output, or "TIMEOUT". What it fetched is seen by the server (`page_handler`'s `seen`)."""
    pw = pwd.getpwnam(user)
    home = tempfile.mkdtemp(prefix=f"{prefix}-{user}-")  # its own: another suite may run beside this one
    os.makedirs(f"{home}/profile")
    for d in (home, f"{home}/profile"):
        os.chown(d, pw.pw_uid, pw.pw_gid)
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(HOME=home, XDG_CACHE_HOME=f"{home}/.cache", MOZ_HEADLESS="1")
    argv = as_user(user, "firefox-esr", "--headless", "--no-remote", "--profile", f"{home}/profile",
                   "--screenshot", f"{home}/shot.png", url)
    try:
        p = sh(*argv, check=False, timeout=timeout, env=env)
        return p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return "TIMEOUT"
    finally:
        shutil.rmtree(home, ignore_errors=True)


def page_handler(marker, seen=None):
    """An HTTP handler whose every page holds `marker` (what a browser's dumped DOM is
    searched for); with `seen`, each request's (Host, User-Agent) is appended to it."""
    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if seen is not None:
                seen.append((self.headers.get("Host", ""), self.headers.get("User-Agent", "")))
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<html><body>" + marker + b"</body></html>")

        def log_message(self, *args):
            pass
    return Page
