"""B1-B5 end to end with the real daemon, the real native-messaging host and the real browsers
(root only), inside the private mount + network + PID namespace of torture/rig.py, with
overlays over /etc and /usr: nothing of the machine's is written, and every process started
here dies with the namespace.

    python3 torture/web_live.py BIN_DIR

Installed as a machine installs it: scripts/pack-extension with PREFIX=/usr, then
scripts/install into a staging DESTDIR (BIN_DIR's binaries, `make nss`), and its browser part
copied into the /usr overlay: /usr/share/blockd/browser (blockd.crx, blockd.xpi, updates.xml,
chromium-id, firefox-id, chromium-host.json), /usr/libexec/blockd/blockc-agent with
blockd-nm-host, the symlink both manifests name (both links to /usr/bin/blockd, the one
executable, which is copied too), and Firefox's host manifest in
/usr/lib/mozilla/native-messaging-hosts. The real blockd from BIN_DIR runs with
`BrowserExtension=/usr/share/blockd/browser` (and `AppShield=no`: no fanotify marks on the
machine's executables), its socket in the work directory (mode and group blockd: the users
reach it), a scratch hosts file, no firewall, no socket cutting, per-user tables in the work
directory, the policy root `/` (the overlays). blockd itself writes Chromium's
policies/managed/blockd-extension.json, its native-messaging-hosts/com.blockd.host.json and
Firefox's policies.json; the test adds only DeveloperToolsAvailability (Chromium refuses CDP on
an extension a policy installed without it). Throwaway login users `kid` and `kid2` (group
blockd); headless Chromium and Firefox ESR as kid, fresh profiles, BLOCKD_SOCKET in their
environment (the host finds blockd as blockc does); pages on *.test from a server on
127.0.0.2 (dnsmasq). The selection `limited` (Domains=limited.test) is in the config dir.

  (e) the extension is there by policy, no flag: Chromium's management.getSelf() says
      installType "admin", mayDisable false; Firefox's add-on came from the enterprise policy
      and may not be disabled or removed; each browser's host started (its stderr names the
      extension and blockd's socket);
  (a) Chromium's focused tab on open.test for 20 s: `blockc report --json --user kid` counts
      15 to 25 s under web["open.test"]; then Firefox's, separately (the count grows by 15 to
      25 s more); kid2's report has no web time;
  (b) `blockc limit add weblimit 20s limited --more-time approval` (for everyone) while kid's
      Chromium shows limited.test: kid is blocked 15 to 30 s after the page loaded (status
      --user kid, and the `limit` event of `blockc watch --json`), the open tab goes to the
      block page, the next navigation to limited.test (Firefox, and a new Chromium tab) lands
      on the block page naming the limit; kid2 is not blocked, and the limit has no use of
      kid2's;
  (c) on Chromium's block page "Ask for more time" with a reason: `blockc requests --json`
      holds kid's request with that reason, the page says it was asked; `blockc approve ID 1m`:
      `blockc status --json` holds kid's grant, kid is no longer blocked, and the block pages
      go back to limited.test in both browsers (the approval's words on the page are a figure:
      the page leaves at once);
  (d) Firefox closed (Marionette:Quit): open.test's count stops within 2 s while Chromium's
      limited.test still counts; Chromium closed (Browser.close): limited.test's stops too;
      no host process is left;
  (g) kid removes the extension from their own profiles while the browsers are closed
      (Chromium's Default/Extensions/ID, Firefox's extensions/ID.xpi): at Chromium's next start
      its policy installs it again, active and not to be disabled; Firefox's first start drops
      the missing add-on from its database and runs without it, and the second has it again
      from the policy (a known limit, docs/BROWSER.md; if Firefox ever reinstalls at the first
      start, this check fails and the limit can go);
  (f) B5 without logind: kid's browsers run in no logind session (and where there is no system
      bus, there is no logind at all): each host says on stderr that it is not following
      logind's hints, the browser's idle state alone counting; the reason it gives is a figure.
      Seen in Chromium's output and in Firefox's browser console, where Firefox puts a host's
      stderr. Nothing here fakes logind: following its hints is NativeHostTests'.
Each part's seconds are figures. About 65 s (a run within 150 s of local midnight waits for
the new day). Without root: skipped, unless BLOCKD_PRIVILEGED_TESTS=1, then failed.

--bench SECONDS (for bench/run, a JSON line): the same set-up, then blockd's wake-ups over
SECONDS with no browser running, then over SECONDS with kid's Chromium showing a static page
(open.test) whose time the extension reports, from 3 s after the report first counts it (the
report's own connection is over by then); and the report's seconds over that window."""
import grp, json, os, pwd, shutil, subprocess, sys, threading, time
from lib import Tally, as_user, sh, stop, wait_for
from browser_drivers import Chromium, Marionette, Page
from rig import Rig, enter

t = Tally("web-live")
bench_seconds = int(sys.argv[sys.argv.index("--bench") + 1]) if "--bench" in sys.argv else 0
if len(sys.argv) != (4 if bench_seconds else 2):
    sys.exit("usage: python3 torture/web_live.py BIN_DIR [--bench SECONDS]")
bindir = os.path.abspath(sys.argv[1])
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
KID, KID2 = "kid", "kid2"
SHARE = "/usr/share/blockd/browser"
FIREFOX_ID = "blockd@blockd.local"
LIMIT, SELECTION = "weblimit", "limited"
COUNT = 20  # seconds each browser shows open.test
enter(t, ["chromium", "firefox-esr", "dnsmasq", "ip", "openssl", "setpriv", "useradd", "groupadd", "findmnt", "make", "gcc", "strip"],
      "needs root for a private mount and network namespace and throwaway users", timeout=300)
began = time.monotonic()


def clear_of_midnight(margin=150):
    """The limit's day ends at local midnight (T7), and with it the block the checks look for:
    within `margin` seconds of it, wait for the new day first."""
    now = time.localtime()
    left = 86400 - (now.tm_hour * 3600 + now.tm_min * 60 + now.tm_sec)
    if left < margin:
        print(f"  (waiting {left + 5} s for local midnight: a limit's day ends there)", flush=True)
        time.sleep(left + 5)


# ---- Installing, as the machine does ----------------------------------------------------------

def install(rig):
    """scripts/install into a staging DESTDIR, its browser part copied into the /usr overlay."""
    packed, dest = rig.mkdir("packed"), rig.mkdir("dest")
    sh(f"{REPO}/scripts/pack-extension", packed, env=dict(os.environ, PREFIX="/usr"), timeout=120)
    sh("make", "-s", "-C", REPO, "nss", timeout=120)
    sh(f"{REPO}/scripts/install", "install", timeout=120, env=dict(
        os.environ, PREFIX="/usr", DESTDIR=dest, BINDIR_SRC=bindir, BROWSER_SRC=packed,
        NSS_SRC=f"{REPO}/.build/nss/libnss_blockd.so.2"))
    sh("mount", "-t", "overlay", "overlay", "-o", f"lowerdir=/usr,upperdir={rig.mkdir('usr-up')},workdir={rig.mkdir('usr-wk')}", "/usr")
    if sh("findmnt", "-n", "-o", "FSTYPE", "/usr").stdout.strip() != "overlay":
        raise RuntimeError("/usr is not the overlay: refusing to go on")
    for part in ("share/blockd/browser", "libexec/blockd", "lib/mozilla/native-messaging-hosts"):
        shutil.copytree(f"{dest}/usr/{part}", f"/usr/{part}", symlinks=True, dirs_exist_ok=True)
    # P1: the agent's names there are links to the one executable, /usr/bin/blockd.
    shutil.copy2(f"{dest}/usr/bin/blockd", "/usr/bin/blockd")
    host = "/usr/libexec/blockd/blockd-nm-host"
    t.check(os.readlink(host) == "blockc-agent" and os.access(host, os.X_OK),
            f"(e) the host {host} is a symlink to blockc-agent, as scripts/install makes it: {os.readlink(host)}")
    with open(f"{SHARE}/chromium-id") as f:
        return f.read().strip()


def users(rig):
    """kid and kid2, login users (uid 1000 or more) in group blockd, in the overlay's /etc."""
    for name in (KID, KID2):
        try:
            pwd.getpwnam(name)
            raise RuntimeError(f"a user named {name} exists on this machine: the test needs the name for its throwaway user")
        except KeyError:
            pass
    try:
        grp.getgrnam("blockd")
    except KeyError:
        sh("groupadd", "--system", "blockd")
    for name in (KID, KID2):
        sh("useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", "-G", "blockd", name)
    os.chmod(rig.work, 0o711)  # the socket's own mode and group decide who connects
    return pwd.getpwnam(KID)


def policies_written(ext_id):
    """blockd's own files, written at its start: the extension force-installed in both browsers."""
    chromium_policy = "/etc/chromium/policies/managed/blockd-extension.json"
    settings = (read_json(chromium_policy) or {}).get("ExtensionSettings", {}).get(ext_id, {})
    t.check(settings.get("installation_mode") == "force_installed" and settings.get("update_url") == f"file://{SHARE}/updates.xml",
            f"(e) blockd wrote {chromium_policy}: force-installed from {SHARE}/updates.xml: {read_json(chromium_policy)}")
    manifest = "/etc/chromium/native-messaging-hosts/com.blockd.host.json"
    t.check(read_bytes(manifest) is not None and read_bytes(manifest) == read_bytes(f"{SHARE}/chromium-host.json"),
            f"(e) blockd copied chromium-host.json to {manifest}: {read_bytes(manifest)!r}")
    host = read_json(manifest) or {}
    t.check(host.get("path") == "/usr/libexec/blockd/blockd-nm-host" and host.get("allowed_origins") == [f"chrome-extension://{ext_id}/"],
            f"(e) Chromium's host manifest names blockd-nm-host and the extension: {host}")
    policies = (read_json("/etc/firefox/policies/policies.json") or {}).get("policies", {})
    entry = policies.get("ExtensionSettings", {}).get(FIREFOX_ID, {})
    t.check(entry.get("installation_mode") == "force_installed" and entry.get("install_url") == f"file://{SHARE}/blockd.xpi"
            and policies.get("Preferences", {}).get("xpinstall.signatures.required", {}).get("Value") is False,
            f"(e) blockd merged the add-on into /etc/firefox/policies/policies.json: {policies}")
    # The test's own: Chromium refuses DevTools (and so CDP) on an extension a policy installed.
    with open("/etc/chromium/policies/managed/test-devtools.json", "w") as f:
        json.dump({"DeveloperToolsAvailability": 1}, f)


def read_bytes(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def read_json(path):
    try:
        return json.loads(read_bytes(path) or b"null")
    except ValueError:
        return None


# ---- blockd's side --------------------------------------------------------------------------

def web(d, user, site=None):
    """The seconds of `site` (every site's, without one) under web in `user`'s report of the
    last two days (a run across local midnight splits, T7)."""
    o = d.blockc("report", "--json", "--last", "2", "--user", user, check=False).json()
    days = o.get("days")
    if days is None:
        raise RuntimeError(f"blockc report --json --user {user}: {o}")
    return sum(v for day in days for s, v in day.get("web", {}).items() if site is None or s == site)


def blocked(d, user):
    o = d.blockc("status", "--json", "--user", user, check=False).json()
    return {b.get("selection"): b for b in o.get("blocked", [])}


class Watcher:
    """`blockc watch --json` as root: every event, collected on a thread with its arrival time."""

    def __init__(self, rig, d):
        self.proc = subprocess.Popen([f"{bindir}/blockc", "--socket", f"{d.work}/s.sock", "watch", "--json"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        rig.procs.append(self.proc)
        self.events = []
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in self.proc.stdout:
            try:
                self.events.append((time.monotonic(), json.loads(line)))
            except ValueError:
                pass

    def find(self, **match):
        return [(at, e) for at, e in self.events if all(e.get(k) == v for k, v in match.items())]


# ---- The browsers ---------------------------------------------------------------------------

def home_of(rig, name, pw):
    path = rig.mkdir(name)
    os.chown(path, pw.pw_uid, pw.pw_gid)
    return path


def browser_env(home, sock):
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower() and not k.startswith(("LC_", "LANG", "XDG_SESSION"))}
    env.update(HOME=home, XDG_CONFIG_HOME=f"{home}/.config", XDG_CACHE_HOME=f"{home}/.cache", LANG="C.UTF-8",
               BLOCKD_SOCKET=sock)
    return env


def extension_worker(c, ext_id):
    """The extension's service worker in Chromium `c`, once it runs (None after 60 s)."""
    return wait_for(lambda: next((x for x in c.targets("service_worker") if x["url"].startswith(f"chrome-extension://{ext_id}/")), None), 60, 0.2)


def navigate(c, target, url):
    """The Chromium tab `target` to `url`, as typed in its address bar."""
    session = c.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    try:
        c.call("Page.navigate", {"url": url}, session)
    finally:
        c.call("Target.detachFromTarget", {"sessionId": session})


BLOCK_TEXT = "document.body.innerText"
LOADED = "document.readyState == 'complete' ? location.href : null"


def firefox_start(rig, pw, sock):
    home = home_of(rig, "firefox-home", pw)
    profile = home_of(rig, "firefox-home/profile", pw)
    p = subprocess.Popen(as_user(KID, "firefox-esr", "--headless", "--no-remote", "--marionette", "--remote-allow-system-access",
                                 "--profile", profile, "about:blank"),
                         stdout=open(f"{rig.work}/firefox.log", "wb"), stderr=subprocess.STDOUT, start_new_session=True,
                         env=browser_env(home, sock), cwd=home)
    rig.procs.append(p)
    return p


def firefox_addon(m):
    """(e) The add-on as Firefox's add-on manager has it (None until it is active)."""
    return m.script("""
        const { AddonManager } = ChromeUtils.importESModule("resource://gre/modules/AddonManager.sys.mjs");
        return AddonManager.getAddonByID(arguments[0]).then(a => a && a.isActive ? {
            source: a.installTelemetryInfo && a.installTelemetryInfo.source,
            mayDisable: !!(a.permissions & AddonManager.PERM_CAN_DISABLE),
            mayUninstall: !!(a.permissions & AddonManager.PERM_CAN_UNINSTALL),
            uuid: WebExtensionPolicy.getByID(arguments[0]).mozExtensionHostname } : null);""", FIREFOX_ID, chrome=True)


def firefox_console(m):
    """What Firefox's browser console holds from native-messaging hosts (their stderr)."""
    return m.script("""return Services.console.getMessageArray().map(x => x.message)
                           .filter(x => x.includes("blockd-nm-host"));""", chrome=True) or []


def ff_url(m):
    m.context("content")
    return m.call("WebDriver:GetCurrentURL")


def ff_go(m, url):
    m.context("content")
    m.call("WebDriver:Navigate", {"url": url})


def host_pids():
    """The native-messaging hosts running as kid: started by the name blockd-nm-host, their
    process name (P1: the file itself is /usr/bin/blockd, as for every name of it)."""
    uid = pwd.getpwnam(KID).pw_uid
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/comm") as f:
                comm = f.read().strip()
            if os.stat(f"/proc/{pid}").st_uid == uid and comm == "blockd-nm-host":
                out.append(int(pid))
        except OSError:
            pass
    return out


def run(rig, d, ext_id, pw):
    sock = f"{d.work}/s.sock"
    figures = t.figures
    watcher = Watcher(rig, d)
    wait_for(lambda: d.status().get("server", {}).get("watchers", 0) >= 1, what="the watcher subscribed")

    # Both browsers at once, on about:blank (no site): their start overlaps.
    mark = time.monotonic()
    home = home_of(rig, "chromium-home", pw)
    c = Chromium(rig, home, browser_env(home, sock), "about:blank", user=KID)
    fp = firefox_start(rig, pw, sock)
    m = Marionette()
    worker = extension_worker(c, ext_id)
    t.check(worker is not None, f"(e) chromium: the extension's service worker runs; targets {[x['url'] for x in c.targets()]}")
    if worker is None:
        return
    me = c.evaluate_soon(worker["targetId"], "chrome.management.getSelf().then(s => [s.installType, s.mayDisable, s.enabled])")
    t.check(me == ["admin", False, True], f"(e) chromium: installed by policy (installType admin), may not be disabled: {me}")
    addon = wait_for(lambda: firefox_addon(m), 60, 0.3)
    t.check(addon is not None and addon["source"] == "enterprise-policy" and not addon["mayDisable"] and not addon["mayUninstall"],
            f"(e) firefox: the add-on is active, from the enterprise policy, may not be disabled or removed: {addon}")
    if addon is None:
        return
    started = wait_for(lambda: "blockd-nm-host: started for chrome-extension://" in (read_bytes(c.log) or b"").decode(errors="replace"), 20, 0.1)
    t.check(started and f"blockd at {sock}" in (read_bytes(c.log) or b"").decode(errors="replace"),
            f"(e) chromium started blockd-nm-host for the extension, on blockd's socket from BLOCKD_SOCKET: see {c.log}")
    figures["browsersUpSeconds"] = round(time.monotonic() - mark, 1)
    tab = next(x["targetId"] for x in c.targets("page"))

    # (a) Chromium on open.test for COUNT seconds.
    mark = time.monotonic()
    navigate(c, tab, "http://open.test/")
    wait_for(lambda: c.peek(tab, BLOCK_TEXT) == "PAGE open.test", 15, 0.05, what="open.test in Chromium")
    shown = time.monotonic()
    time.sleep(max(0, shown + COUNT - time.monotonic()))
    navigate(c, tab, "about:blank")
    gone = time.monotonic()
    time.sleep(1)  # the null site reaches blockd in milliseconds; a second keeps the figure still
    chromium_open = web(d, KID, "open.test")
    figures["chromiumOpenTest"] = {"shown": round(gone - shown, 1), "counted": chromium_open}
    t.check(15 <= chromium_open <= 25, f"(a) chromium: open.test in kid's focused tab for {gone - shown:.1f} s counts 15-25 s: {chromium_open}")
    figures["aChromiumSeconds"] = round(time.monotonic() - mark, 1)

    # (a) Firefox on open.test for COUNT seconds, while (b) Chromium uses up the limit on limited.test.
    mark = time.monotonic()
    r = d.blockc("limit", "add", LIMIT, "20s", SELECTION, "--more-time", "approval", check=False)
    t.check(r.rc == 0, f"(b) blockc limit add {LIMIT} 20s {SELECTION} --more-time approval (for everyone): {r.out}")
    navigate(c, tab, "http://limited.test/")
    ff_go(m, "http://open.test/")
    wait_for(lambda: c.peek(tab, BLOCK_TEXT) == "PAGE limited.test", 15, 0.05, what="limited.test in Chromium")
    limited_shown = time.monotonic()
    ff_shown = limited_shown if m.peek(f"return {BLOCK_TEXT}") == "PAGE open.test" else None
    ff_gone = blocked_at = switched_at = None
    block_prefix = f"chrome-extension://{ext_id}/block.html#"
    while time.monotonic() < limited_shown + 40 and not (ff_gone and blocked_at and switched_at):
        now = time.monotonic()
        if ff_gone is None and ff_shown and now >= ff_shown + COUNT:
            ff_go(m, "about:blank")
            ff_gone = time.monotonic()
        if blocked_at is None and SELECTION in blocked(d, KID):
            blocked_at = time.monotonic()
        if switched_at is None and c.page(block_prefix + "http://limited.test/"):
            switched_at = time.monotonic()
        time.sleep(0.1)
    if ff_gone is None:
        ff_go(m, "about:blank")
        ff_gone = time.monotonic()
    time.sleep(1)
    firefox_open = web(d, KID, "open.test") - chromium_open
    figures["firefoxOpenTest"] = {"shown": round(ff_gone - ff_shown, 1) if ff_shown else None, "counted": firefox_open}
    t.check(ff_shown is not None and 15 <= firefox_open <= 25,
            f"(a) firefox: open.test in kid's focused tab for {figures['firefoxOpenTest']['shown']} s counts 15-25 s more: {firefox_open}")
    t.check(web(d, KID2) == 0, f"(a) kid2's report has no web time: {web(d, KID2)}")

    reached = round(blocked_at - limited_shown, 1) if blocked_at else None
    figures["limitReachedAfterSeconds"] = reached
    t.check(reached is not None and 15 <= reached <= 30, f"(b) kid is blocked 15-30 s after limited.test loaded (a 20 s limit): {reached}")
    events = watcher.find(event="limit", activity=LIMIT)
    figures["limitEvent"] = events[0][1] if events else None
    t.check(bool(events), f"(b) blockc watch --json: a limit event for {LIMIT}: {[e for _, e in watcher.events][-5:]}")
    entry = blocked(d, KID).get(SELECTION, {})
    t.check(entry.get("reasons") == [LIMIT], f"(b) blockc status --json --user kid: {SELECTION} blocked by {LIMIT}: {entry}")
    t.check(SELECTION not in blocked(d, KID2), f"(b) kid2 is not blocked: {blocked(d, KID2)}")
    people = next((a.get("people") for a in d.blockc("limit", "list", "--json", check=False).json() if a.get("name") == LIMIT), None)
    figures["limitPeople"] = people
    t.check(people is not None and [(p["user"], p["blocked"]) for p in people if p["used"] or p["blocked"]] == [(KID, True)],
            f"(b) blockc limit list --json: kid used it up and is blocked, kid2 has no use: {people}")
    # From the limit event's arrival (the instant blockd said so) to the tab on the block page.
    if events and switched_at:
        figures["tabSwitchAfterLimitEventSeconds"] = round(switched_at - events[0][0], 2)
    t.check(switched_at is not None, f"(b) chromium: the open limited.test tab goes to the block page: {[x['url'] for x in c.targets('page')]}")
    text = wait_for(lambda: (lambda s: s if s and "Blocked by" in s else None)(c.peek(tab, BLOCK_TEXT)), 10, 0.1)
    t.check(text is not None and "limited.test" in text and f"Blocked by {LIMIT}" in text and "Ask for more time" in text,
            f"(b) chromium: the block page names the site and the limit, and offers to ask: {text!r}")

    # (b) The next navigation, in Firefox and in a new Chromium tab.
    ff_prefix = f"moz-extension://{addon['uuid']}/block.html#"
    ff_go(m, "http://limited.test/next")
    url = wait_for(lambda: (lambda u: u if u.startswith(ff_prefix) else None)(ff_url(m)), 15, 0.1)
    ff_text = wait_for(lambda: (lambda s: s if s and "Blocked by" in s else None)(m.peek(f"return {BLOCK_TEXT}")), 10, 0.1)
    t.check(url == ff_prefix + "http://limited.test/next" and ff_text and f"Blocked by {LIMIT}" in ff_text,
            f"(b) firefox: the next navigation to limited.test lands on the block page naming {LIMIT}: {url} {ff_text!r}")
    other = c.call("Target.createTarget", {"url": "http://www.limited.test/again"})["targetId"]
    landed = wait_for(lambda: c.page(block_prefix + "http://www.limited.test/again"), 15, 0.1)
    other_text = wait_for(lambda: (lambda s: s if s and "Blocked by" in s else None)(c.peek(other, BLOCK_TEXT)), 10, 0.1)
    t.check(landed is not None and other_text and f"Blocked by {LIMIT}" in other_text,
            f"(b) chromium: a new tab's navigation to www.limited.test lands on the block page naming {LIMIT}: {other_text!r}")
    c.call("Target.closeTarget", {"targetId": other})
    figures["bSeconds"] = round(time.monotonic() - mark, 1)

    # (c) Ask for more time on Chromium's block page; root approves.
    mark = time.monotonic()
    c.evaluate(tab, "document.querySelector('.reason input').value = 'homework research'; document.querySelector('.more button').click()")
    requests = wait_for(lambda: [x for x in d.blockc("requests", "--json", check=False).json().get("requests", [])
                                 if x.get("user") == KID and x.get("selection") == SELECTION], 10, 0.1)
    t.check(len(requests) == 1 and requests[0].get("reason") == "homework research",
            f"(c) blockc requests --json: kid's request for {SELECTION} with the typed reason, blockd's own record: {requests}")
    answer = "document.querySelector('.answer').textContent"
    asked = wait_for(lambda: (lambda s: s if s and "Asked" in s else None)(c.peek(tab, answer)), 10, 0.1)
    figures["askedText"] = asked
    t.check(asked is not None, f"(c) chromium: the page says it asked: {asked!r}")
    if requests:
        r = d.blockc("approve", requests[0]["id"], "1m", check=False)
        approving = time.monotonic()
        t.check(r.rc == 0, f"(c) blockc approve {requests[0]['id']} 1m: {r.out}")
        # The page shows the approval, then goes back to the site as the new state lifts the
        # block (B4): the text may be on screen for milliseconds only, so it is a figure.
        seen = {}
        def settled():
            said = c.peek(tab, answer)
            if said and "approved" in said:
                seen.setdefault("approvedText", said)
            if "chromiumBack" not in seen and c.page("http://limited.test/") and not c.page(block_prefix):
                seen["chromiumBack"] = round(time.monotonic() - approving, 2)
            if "firefoxBack" not in seen and ff_url(m) == "http://limited.test/next":
                seen["firefoxBack"] = round(time.monotonic() - approving, 2)
            return "chromiumBack" in seen and "firefoxBack" in seen
        wait_for(settled, 15, 0.05)
        figures["approval"] = seen
        grants = [g for g in d.status().get("grants", []) if g.get("selection") == SELECTION]
        figures["grant"] = [{k: g.get(k) for k in ("user", "grantedByUser", "start", "end", "allowance", "reason")} for g in grants]
        t.check(len(grants) == 1 and grants[0].get("uid") == pw.pw_uid, f"(c) blockc status --json: the grant, kid's: {grants}")
        t.check(not blocked(d, KID).get(SELECTION), f"(c) the grant lifts the block for kid: {blocked(d, KID)}")
        t.check("chromiumBack" in seen, f"(c) chromium: the block page goes back to limited.test: {[x['url'] for x in c.targets('page')]}")
        t.check("firefoxBack" in seen, f"(c) firefox: the block page goes back to limited.test: {ff_url(m)}")
    figures["cSeconds"] = round(time.monotonic() - mark, 1)

    # (d) Firefox back on open.test, then closed; then Chromium (on limited.test) closed.
    mark = time.monotonic()
    ff_go(m, "http://open.test/")
    wait_for(lambda: m.peek(f"return {BLOCK_TEXT}") == "PAGE open.test", 15, 0.05, what="open.test in Firefox")
    time.sleep(3)
    ff_log = firefox_console(m)
    t.check(any(f"started for /usr/lib/mozilla/native-messaging-hosts/com.blockd.host.json; blockd at {sock}" in x for x in ff_log),
            f"(e) firefox started blockd-nm-host from its manifest, on blockd's socket from BLOCKD_SOCKET: {ff_log[:2]}")
    before = len(host_pids())
    try:
        m.call("Marionette:Quit", {"flags": ["eForceQuit"]})
    except (RuntimeError, ConnectionError, OSError):
        pass
    closed = time.monotonic()
    fp.wait(20)
    figures["firefoxQuitSeconds"] = round(time.monotonic() - closed, 2)
    stopped = (web(d, KID, "open.test"), web(d, KID, "limited.test"))
    time.sleep(max(0, closed + 2 - time.monotonic()))
    at2 = (web(d, KID, "open.test"), web(d, KID, "limited.test"))
    time.sleep(max(0, closed + 6 - time.monotonic()))
    at6 = (web(d, KID, "open.test"), web(d, KID, "limited.test"))
    figures["firefoxClosed"] = {"openTest": [stopped[0], at2[0], at6[0]], "limitedTest": [stopped[1], at2[1], at6[1]]}
    t.check(at2[0] == at6[0] and at2[0] - stopped[0] <= 2,
            f"(d) firefox closed: open.test's count stops within 2 s (at the close, +2 s, +6 s): {[stopped[0], at2[0], at6[0]]}")
    t.check(at6[1] >= at2[1] + 3, f"(d) while Chromium's limited.test still counts: {[stopped[1], at2[1], at6[1]]}")
    try:
        c.call("Browser.close")
    except (RuntimeError, TimeoutError):
        pass
    closed = time.monotonic()
    c.proc.wait(20)
    figures["chromiumCloseSeconds"] = round(time.monotonic() - closed, 2)
    stopped = web(d, KID, "limited.test")
    time.sleep(max(0, closed + 2 - time.monotonic()))
    at2 = web(d, KID, "limited.test")
    time.sleep(max(0, closed + 6 - time.monotonic()))
    at6 = web(d, KID, "limited.test")
    figures["chromiumClosed"] = [stopped, at2, at6]
    t.check(at2 == at6 and at2 - stopped <= 2, f"(d) chromium closed: limited.test's count stops within 2 s: {[stopped, at2, at6]}")
    left = wait_for(lambda: not host_pids(), 5, 0.1)
    t.check(before >= 2 and left, f"(d) both hosts ran ({before}) and none is left: {host_pids()}")
    figures["dSeconds"] = round(time.monotonic() - mark, 1)

    # (g) The extension removed from kid's profiles, as kid, while the browsers are closed.
    mark = time.monotonic()
    ext_dir = f"{c.profile_dir}/Default/Extensions/{ext_id}"
    xpi = f"{rig.work}/firefox-home/profile/extensions/{FIREFOX_ID}.xpi"
    had = (os.path.isdir(ext_dir), os.path.isfile(xpi))
    subprocess.run(as_user(KID, "rm", "-rf", ext_dir, xpi), check=False)
    t.check(had == (True, True) and not os.path.exists(ext_dir) and not os.path.exists(xpi),
            f"(g) kid removed the extension from both profiles (they were there: {had})")
    c2 = Chromium(rig, home, browser_env(home, sock), "about:blank", user=KID, profile=os.path.basename(c.profile_dir))
    worker = extension_worker(c2, ext_id)
    me = c2.evaluate_soon(worker["targetId"], "chrome.management.getSelf().then(s => [s.installType, s.mayDisable, s.enabled])") if worker else None
    t.check(me == ["admin", False, True], f"(g) chromium: at the next start the policy installed it again, not to be disabled: {me}")
    figures["chromiumReinstalledDir"] = sorted(os.listdir(f"{c.profile_dir}/Default/Extensions")) if os.path.isdir(f"{c.profile_dir}/Default/Extensions") else None
    figures["chromiumReinstalledSeconds"] = round(time.monotonic() - mark, 1)
    try:
        c2.call("Browser.close")
    except (RuntimeError, TimeoutError):
        pass
    c2.proc.wait(20)
    starts = []
    for attempt in (1, 2, 3):
        mark = time.monotonic()
        fp = firefox_start(rig, pw, sock)
        m = Marionette()
        addon = wait_for(lambda: firefox_addon(m), 30, 0.3)
        starts.append({"addon": addon is not None, "seconds": round(time.monotonic() - mark, 1),
                       "xpi": os.path.isfile(xpi), "extensionsJsonHasIt": FIREFOX_ID in (read_bytes(f"{rig.work}/firefox-home/profile/extensions.json") or b"").decode(errors="replace")})
        try:
            m.call("Marionette:Quit", {"flags": ["eForceQuit"]})
        except (RuntimeError, ConnectionError, OSError):
            pass
        fp.wait(20)
        if addon is not None:
            break
    figures["firefoxStarts"] = starts
    # Firefox drops a missing add-on from its database at the first start, and only then does
    # the policy see it missing: the add-on is back from the second start on (a known limit,
    # docs/BROWSER.md; the sites stay blocked at the other layers meanwhile).
    t.check(not starts[0]["addon"] and len(starts) == 2 and starts[1]["addon"],
            f"(g) firefox: the first start after the removal runs without the add-on, the second has it again from the policy: {starts}")

    # (f) B5 without logind.
    said = [line for line in (read_bytes(c.log) or b"").decode(errors="replace").splitlines() if "logind" in line]
    figures["chromiumHostLogind"] = said[:1]
    t.check(any("not following logind's idle and lock hints" in x for x in said),
            f"(f) chromium's host says it is not following logind (no system bus here): {said}")
    ff_said = [x for x in ff_log if "logind" in x]
    figures["firefoxHostLogind"] = ff_said[:1]
    t.check(any("not following logind's idle and lock hints" in x for x in ff_said),
            f"(f) firefox's host says so too, in Firefox's browser console: {ff_log[:4]}")


def bench(rig, d, ext_id, pw, seconds):
    """B2's cost at rest: blockd's wake-ups with no browser, then with a static page counting."""
    sys.path.insert(0, REPO)
    from bench.measure import watch
    state = {"blockd": f"{d.work}/state"}
    alone = watch({"blockd": d.proc.pid}, seconds, state)["blockd"]
    sock = f"{d.work}/s.sock"
    home = home_of(rig, "chromium-home", pw)
    c = Chromium(rig, home, browser_env(home, sock), "about:blank", user=KID)
    worker = extension_worker(c, ext_id)
    t.check(worker is not None, f"chromium: the extension's service worker runs; targets {[x['url'] for x in c.targets()]}")
    if worker is None:
        return
    tab = next(x["targetId"] for x in c.targets("page"))
    navigate(c, tab, "http://open.test/")
    wait_for(lambda: c.peek(tab, BLOCK_TEXT) == "PAGE open.test", 15, 0.05, what="open.test in Chromium")
    counting = wait_for(lambda: web(d, KID, "open.test") > 0, 15, 0.2)
    t.check(counting, "the report counts open.test in kid's focused tab")
    time.sleep(3)  # the report's connection lingers; it is not the browser's
    before = web(d, KID, "open.test")
    shown = watch({"blockd": d.proc.pid}, seconds, state)["blockd"]
    counted = web(d, KID, "open.test") - before
    t.check(abs(counted - shown["seconds"]) <= 3, f"the window's {shown['seconds']} s are counted: {counted} s")
    keys = ("seconds", "voluntarySwitches", "wakeups", "wakeupsPerMinute", "woken", "wakeupTimes", "stateLogRecordsPerMinute")
    print("JSON " + json.dumps({"alone": {k: alone[k] for k in keys}, "browser": {k: shown[k] for k in keys}, "counted": counted,
                                "ownWakeups": shown["wakeups"] - alone["wakeups"],
                                "ownWakeupsPerMinute": round((shown["wakeups"] - alone["wakeups"]) * 60 / shown["seconds"], 2)}), flush=True)


with Rig(t, bindir, "bd-weblive.", ["127.0.0.2"], {"test": "127.0.0.2"}) as rig:
    rig.serve("127.0.0.2", Page)
    pw = users(rig)
    if not bench_seconds:
        clear_of_midnight()
    try:
        mark = time.monotonic()
        ext_id = install(rig)
        rig.configure(f"[Daemon]\nBrowserExtension={SHARE}\nAppShield=no\n",
                      {SELECTION: f"[Selection]\nName={SELECTION}\nDomains=limited.test\n"})
        open(f"{rig.work}/hosts", "w").close()
        d = rig.daemon("--hosts-file", f"{rig.work}/hosts", "--firewall", "no", "--cut-sockets", "no",
                       "--user-tables-dir", f"{rig.work}/users")
        d.start()
        policies_written(ext_id)
        t.figures["setupSeconds"] = round(time.monotonic() - mark, 1)
        if bench_seconds:
            bench(rig, d, ext_id, pw, bench_seconds)
        else:
            run(rig, d, ext_id, pw)
        t.check(d.proc.poll() is None, f"blockd ran through the whole suite; its log:\n{d.log()}")
        if t.failed:
            hosts = [x for x in (read_bytes(f"{rig.work}/chromium-1.log") or b"").decode(errors="replace").splitlines() if "blockd-nm-host" in x]
            print("blockd log:\n" + d.log() + "\nChromium's host:\n" + "\n".join(hosts[-30:]), flush=True)
    finally:
        for p in rig.procs:
            stop(p)
        for x in rig.daemons:
            x.stop()
        subprocess.run(["umount", "-l", "/usr"], capture_output=True)
t.figures["totalSeconds"] = round(time.monotonic() - began, 1)
t.done()
