"""B1, B2 and B4 with the real browsers: blockd's own extension, installed as a machine installs
it, against a stand-in for its native-messaging host (torture/fake_web_host.py), inside the
namespace of torture/rig.py (root only; loopback, *.test -> 127.0.0.2 from dnsmasq, overlays
over /etc and /usr, so nothing of the machine's is written).

    python3 torture/browser_ext.py [BIN_DIR]     (BIN_DIR is not used: no blockd runs here)

scripts/pack-extension packs the extension with PREFIX=/usr (the key in .build/browser-key, or
EXTENSION_KEY); the packed files go to /usr/share/blockd/browser, the browsers' policies to
/etc/chromium/policies/managed/blockd.json (ExtensionSettings: force_installed from
updates.xml) and /etc/firefox/policies/policies.json (ExtensionSettings: force_installed from
blockd.xpi, private browsing, unsigned add-ons allowed), and the fake host's manifests to
/etc/chromium/native-messaging-hosts and /usr/lib/mozilla/native-messaging-hosts. One policy is
the test's own: DeveloperToolsAvailability 1, without which Chromium refuses CDP on an extension a
policy installed (blockd's policy leaves it at its default). Then, for
headless Chromium (driven over --remote-debugging-pipe) and headless Firefox ESR (Marionette),
each as a throwaway user with a fresh profile:
  (a) the extension is there by policy, no flag: Chromium's management.getSelf() says
      installType "admin" and mayDisable false; Firefox's add-on is active, came from the
      enterprise policy, may not be disabled and runs in private windows;
  (b) hello reaches the host (browser, version, lang), then a site report of the open page's
      host (B2);
  (c) a navigation to blocked.test lands on the block page, which shows the site, "Blocked by"
      the activity, the end and the more-time button (B4);
  (d) a tab open on later.test goes to the block page when a new state blocks later.test, and
      back to later.test when the next state lets it go;
  (e) the button sends {"type": "more", ...} with the typed reason; the page shows the host's
      answer, then the approval that follows as a more-time event;
  (f) Chromium: a warning puts the minutes left on the toolbar badge and shows a notification;
  (g) Firefox: a private window's navigation to blocked.test lands on the block page too;
  (h) Chromium started with --lang=ja: hello says lang "ja" and the block page is in Japanese;
  (i) Chromium: when the host says blockd is gone, the block page says so, still shows what
      was blocked, with its button off, and what was blocked stays blocked;
  (k) each kind of rule in each browser: a path prefix (case-sensitive), an exception under a
      blocked domain, an allow-only window (the allowed site and the names under it load);
  (j) Chromium restarted on the same profile with no host to run: blocked.test still lands on
      the block page, which shows what blockd said last and that it cannot be reached.
Without root: skipped, unless BLOCKD_PRIVILEGED_TESTS=1, then failed."""
import json, os, pwd, shutil, subprocess, time
from lib import Tally, as_user, sh, stop, wait_for
from browser_drivers import Chromium, Marionette, Page
from rig import Rig, enter

t = Tally("browser-ext")
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
USER = "bdextweb"
SHARE = "/usr/share/blockd/browser"
FAKE_HOST = "/usr/lib/blockd/fake-web-host"
FIREFOX_ID = "blockd@blockd.local"
with open(f"{REPO}/browser/chromium/manifest.json") as f:
    VERSION = json.load(f)["version"]
enter(t, ["chromium", "firefox-esr", "dnsmasq", "ip", "openssl", "setpriv", "useradd"],
      "needs root for a private mount and network namespace", timeout=400)


# ---- The fake host's directory --------------------------------------------------------------

class Host:
    """The fake host's files: what the extension sent, and the state to send it."""

    def __init__(self, directory):
        self.dir = directory

    def received(self, browser=None):
        """The extension's messages, in order ({"pid", "origin", "message"}), of one browser
        (told apart by the origin the browser gives the host)."""
        try:
            with open(f"{self.dir}/received.jsonl") as f:
                lines = [json.loads(line) for line in f if line.strip()]
        except (OSError, ValueError):
            return []
        mark = {"chromium": "chrome-extension://", "firefox": FIREFOX_ID}.get(browser, "")
        return [x["message"] for x in lines if mark in x["origin"]]

    def state(self, blocked=None, **more):
        path = f"{self.dir}/state.json"
        with open(path + ".new", "w") as f:
            json.dump(dict(more, blocked=blocked) if blocked is not None else more, f)
        os.chmod(path + ".new", 0o644)
        os.rename(path + ".new", path)

    def warning(self, body):
        with open(f"{self.dir}/warning.json.new", "w") as f:
            json.dump(body, f)
        os.rename(f"{self.dir}/warning.json.new", f"{self.dir}/warning.json")


def entry(*domains, activities=("homework",), more="ask", until_text="until 18:00"):
    return {"selection": "social", "activities": list(activities), "until": "2099-12-05T18:00:00+01:00",
            "untilText": until_text, "domains": list(domains), "exceptions": [], "paths": [], "more": more,
            "title": None, "body": None}


# ---- Installing, as the package and blockd would ---------------------------------------------

def install(rig):
    packed = rig.mkdir("packed")
    env = dict(os.environ, PREFIX="/usr")
    sh(f"{REPO}/scripts/pack-extension", packed, env=env, timeout=120)
    upper = rig.mkdir("usr-up")
    sh("mount", "-t", "overlay", "overlay", "-o", f"lowerdir=/usr,upperdir={upper},workdir={rig.mkdir('usr-wk')}", "/usr")
    if sh("findmnt", "-n", "-o", "FSTYPE", "/usr").stdout.strip() != "overlay":
        raise RuntimeError("/usr is not the overlay: refusing to go on")
    os.makedirs(SHARE, exist_ok=True)
    for name in ("blockd.crx", "blockd.xpi", "updates.xml", "chromium-id", "firefox-id"):
        shutil.copyfile(f"{packed}/{name}", f"{SHARE}/{name}")
        os.chmod(f"{SHARE}/{name}", 0o644)
    ext_id = open(f"{SHARE}/chromium-id").read().strip()
    os.makedirs(os.path.dirname(FAKE_HOST), exist_ok=True)
    shutil.copyfile(f"{REPO}/torture/fake_web_host.py", FAKE_HOST)
    os.chmod(FAKE_HOST, 0o755)
    files = {
        "/etc/chromium/policies/managed/blockd.json": {"ExtensionSettings": {ext_id: {
            "installation_mode": "force_installed", "update_url": f"file://{SHARE}/updates.xml"}}},
        # The test's own: without it Chromium refuses DevTools (and so CDP) on an extension a
        # policy installed, and the block page could not be read.
        "/etc/chromium/policies/managed/test-devtools.json": {"DeveloperToolsAvailability": 1},
        "/etc/chromium/native-messaging-hosts/com.blockd.host.json": {
            "name": "com.blockd.host", "description": "blockd", "path": FAKE_HOST, "type": "stdio",
            "allowed_origins": [f"chrome-extension://{ext_id}/"]},
        "/etc/firefox/policies/policies.json": {"policies": {
            "ExtensionSettings": {FIREFOX_ID: {"installation_mode": "force_installed",
                                              "install_url": f"file://{SHARE}/blockd.xpi", "private_browsing": True}},
            "Preferences": {"xpinstall.signatures.required": {"Value": False, "Status": "locked"}}}},
        "/usr/lib/mozilla/native-messaging-hosts/com.blockd.host.json": {
            "name": "com.blockd.host", "description": "blockd", "path": FAKE_HOST, "type": "stdio",
            "allowed_extensions": [FIREFOX_ID]},
    }
    for path, body in files.items():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(body, f, indent=1)
        os.chmod(path, 0o644)
    return ext_id


def throwaway_user():
    try:
        pwd.getpwnam(USER)
        raise RuntimeError(f"a user named {USER} exists on this machine: the test needs the name for its throwaway user")
    except KeyError:
        pass
    sh("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER)
    return pwd.getpwnam(USER)


def user_dir(rig, name, pw):
    path = rig.mkdir(name)
    os.chown(path, pw.pw_uid, pw.pw_gid)
    return path


def browser_env(home, host_dir):
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower() and not k.startswith(("LC_", "LANG"))}
    env.update(HOME=home, XDG_CONFIG_HOME=f"{home}/.config", XDG_CACHE_HOME=f"{home}/.cache", LANG="C.UTF-8",
               BLOCKD_FAKE_HOST_DIR=host_dir)
    return env


# ---- The checks -------------------------------------------------------------------------------

BLOCK_TEXT = "document.body.innerText"
# The address of the page that loaded: the site's (its body says PAGE) or the block page (its
# heading), never an error page or one still loading.
LOADED = ("document.readyState == 'complete' && (document.body.innerText.startsWith('PAGE ')"
          " || document.querySelector('main h1') && document.querySelector('main h1').textContent) ? location.href : null")


def hello_and_site(host, browser):
    got = wait_for(lambda: [m for m in host.received(browser) if m.get("type") == "hello"], 60, 0.2)
    hello = got[0] if got else {}
    t.check(hello.get("browser") == browser and hello.get("version") == VERSION and hello.get("lang") == "en",
            f"(b) {browser}: hello reaches the host with browser, version and lang: {hello}")
    sites = wait_for(lambda: [m.get("site") for m in host.received(browser) if m.get("type") == "site" and m.get("site") == "open.test"], 30, 0.2)
    t.check(bool(sites), f"(b) {browser}: a site report names the open page's host open.test (B2); sites sent: "
            f"{[m.get('site') for m in host.received(browser) if m.get('type') == 'site']}")


# (k) Each kind of rule in the real browser: URL -> whether it lands on the block page.
RULES = [
    ("a path prefix", [dict(entry(), selection="shorts", domains=[], paths=["later.test/shorts"])],
     {"http://www.later.test/shorts/1": True, "http://later.test/watch": False, "http://later.test/Shorts": False}),
    ("an exception", [dict(entry("blocked.test"), exceptions=["help.blocked.test"])],
     {"http://www.blocked.test/": True, "http://help.blocked.test/": False, "http://a.help.blocked.test/": False}),
    ("an allow-only window", [dict(entry(), selection="only:open.test", domains=[], allowOnly=["open.test"])],
     {"http://other.test/": True, "http://www.open.test/": False, "http://open.test/x": False}),
]


def rules_hold(host, browser, lands):
    """(k) `lands(url)` -> the URL the tab settled on, for each URL of each kind of rule."""
    for what, blocked, cases in RULES:
        host.state(blocked)
        time.sleep(0.5)  # the state reaches the extension in milliseconds (see the tab switch figures)
        for url, want in cases.items():
            got = lands(url)
            is_block = got is not None and "/block.html#" in got and got.endswith("#" + url)
            t.check(is_block == want and got is not None,
                    f"(k) {browser}, {what}: {url} {'lands on the block page' if want else 'loads'}: it went to {got}")
    host.state([entry("blocked.test")])


def page_shows(text, browser, what):
    t.check(text is not None and all(w in text for w in what), f"(c) {browser}: the block page shows {what}: {text!r}")


def more_sent(host, browser, reason):
    sent = wait_for(lambda: [m for m in host.received(browser) if m.get("type") == "more"], 15, 0.1)
    t.check(bool(sent) and sent[0] == {"type": "more", "selection": "social", "minutes": 15, "reason": reason},
            f"(e) {browser}: the button sends a more message with the reason: {sent}")


def chromium(rig, host, ext_id, pw, host_dir):
    home = user_dir(rig, "chromium-home", pw)
    c = Chromium(rig, home, browser_env(home, host_dir), "http://open.test/", user=USER)
    began = time.monotonic()
    try:
        worker = wait_for(lambda: next((x for x in c.targets("service_worker") if x["url"].startswith(f"chrome-extension://{ext_id}/")), None),
                          60, 0.25)
        t.check(worker is not None, f"(a) chromium: the extension's service worker runs (policy install); targets: "
                f"{[x['url'] for x in c.targets()]}; {SHARE}/blockd.crx refused? see chromium-1.log")
        if worker is None:
            return
        t.figures["chromiumInstalledSeconds"] = round(time.monotonic() - began, 1)
        me = c.evaluate_soon(worker["targetId"], "chrome.management.getSelf().then(s => [s.installType, s.mayDisable, s.enabled, s.version])")
        t.check(me == ["admin", False, True, VERSION], f"(a) chromium: installed by policy, may not be disabled: {me}")
        hello_and_site(host, "chromium")
        prefix = f"chrome-extension://{ext_id}/block.html#"

        tab = c.call("Target.createTarget", {"url": "http://blocked.test/path?q=1"})["targetId"]
        landed = wait_for(lambda: c.page(prefix + "http://blocked.test/path?q=1"), 15, 0.1)
        t.check(landed is not None, f"(c) chromium: blocked.test lands on the block page; pages: {[x['url'] for x in c.targets('page')]}")
        if landed:
            text = wait_for(lambda: (lambda s: s if s and "Blocked by" in s else None)(c.peek(tab, BLOCK_TEXT)), 10, 0.1)
            page_shows(text, "chromium", ["blocked.test", "Blocked by homework", "until 18:00", "Ask for more time"])

        later = c.call("Target.createTarget", {"url": "http://later.test/"})["targetId"]
        wait_for(lambda: c.peek(later, BLOCK_TEXT) == "PAGE later.test", 15, 0.1)
        changed = time.monotonic()
        host.state([entry("blocked.test", "later.test")])
        switched = wait_for(lambda: c.page(prefix + "http://later.test/"), 15, 0.05)
        t.figures["chromiumTabSwitchSeconds"] = round(time.monotonic() - changed, 2)
        t.check(switched is not None, f"(d) chromium: the open later.test tab goes to the block page when a state blocks it "
                f"({t.figures['chromiumTabSwitchSeconds']} s)")

        if landed:
            c.evaluate(tab, "document.querySelector('.reason input').value = 'homework research'; document.querySelector('.more button').click()")
            more_sent(host, "chromium", "homework research")
            answer = wait_for(lambda: (lambda s: s if s and "approved" in s else None)(c.peek(tab, "document.querySelector('.answer').textContent")), 15, 0.1)
            t.check(answer == "Your request for social was approved",
                    f"(e) chromium: the page shows the answer, then the approval live: {answer!r}")

        host.warning({"activity": "social-limit", "selections": ["social"], "left": 300, "text": "5 minutes of social-limit left today"})
        badge = wait_for(lambda: c.peek(worker["targetId"], "chrome.action.getBadgeText({})"), 10, 0.1)
        t.check(badge == "5m", f"(f) chromium: a warning puts the minutes left on the badge: {badge!r}")
        # the badge is set before the notification is created: wait for it rather than read once
        shown = wait_for(lambda: (lambda n: n if n else None)(
            c.peek(worker["targetId"], "chrome.notifications.getAll().then(n => Object.keys(n))")), 10, 0.1)
        t.check(shown == ["blockd-warning-social-limit"], f"(f) chromium: and shows it as a notification: {shown}")

        host.state(connected=False, message="blockd is not running: test")
        said = wait_for(lambda: (lambda s: s if s and "cannot be reached" in s else None)(c.peek(tab, BLOCK_TEXT)), 10, 0.1)
        t.check(said is not None and "blockd is not running: test" in said and "Blocked by homework" in said
                and c.peek(tab, "document.querySelector('.more button').disabled") is True,
                f"(i) chromium: blockd gone, the page says so, keeps what it knew and turns the button off: {said!r}")
        t.check(c.page(prefix + "http://later.test/") is not None, "(i) chromium: blockd gone, what was blocked stays blocked")

        host.state([entry("blocked.test")])
        back = wait_for(lambda: c.page("http://later.test/"), 15, 0.05)
        t.check(back is not None, f"(d) chromium: the block page of later.test goes back to it when the block ends; pages: {[x['url'] for x in c.targets('page')]}")
        rules = c.evaluate(worker["targetId"], "chrome.declarativeNetRequest.getDynamicRules().then(r => r.map(x => x.condition.requestDomains))")
        t.check(rules == [["blocked.test"]], f"(d) chromium: the redirect rules follow the state: {rules}")

        def lands(url):
            tab = c.call("Target.createTarget", {"url": url})["targetId"]
            try:
                # The page that loaded: the site's (its body says PAGE) or the block page (its h1).
                return wait_for(lambda: c.peek(tab, LOADED), 15, 0.05)
            finally:
                c.call("Target.closeTarget", {"targetId": tab})
        rules_hold(host, "chromium", lands)
    finally:
        c.quit()


def chromium_again(rig, host, ext_id, pw, host_dir):
    """(j) The first Chromium's profile started again with the host's manifest gone."""
    home = f"{rig.work}/chromium-home"
    manifest = "/etc/chromium/native-messaging-hosts/com.blockd.host.json"
    os.rename(manifest, manifest + ".off")
    c = Chromium(rig, home, browser_env(home, host_dir), "about:blank", user=USER, profile="chromium-1")
    try:
        tab = c.call("Target.createTarget", {"url": "http://blocked.test/again"})["targetId"]
        landed = wait_for(lambda: c.page(f"chrome-extension://{ext_id}/block.html#http://blocked.test/again"), 15, 0.1)
        said = wait_for(lambda: (lambda s: s if s and "cannot be reached" in s else None)(c.peek(tab, BLOCK_TEXT)), 10, 0.1)
        t.check(landed is not None and said is not None and "Blocked by homework" in said and "until 18:00" in said,
                f"(j) chromium restarted without its host: blocked.test still lands on the block page, with what blockd said last "
                f"and that it cannot be reached: {said!r}; pages {[x['url'] for x in c.targets('page')]}")
    finally:
        c.quit()
        os.rename(manifest + ".off", manifest)


def chromium_ja(rig, host, ext_id, pw, host_dir):
    """(h) Chromium in Japanese: hello says lang "ja" and the block page speaks Japanese."""
    home = user_dir(rig, "chromium-ja-home", pw)
    before = len(host.received("chromium"))
    c = Chromium(rig, home, browser_env(home, host_dir), "about:blank", "--lang=ja", user=USER)
    try:
        hello = wait_for(lambda: [m for m in host.received("chromium")[before:] if m.get("type") == "hello"], 60, 0.2)
        t.check(bool(hello) and hello[0].get("lang") == "ja", f"(h) chromium --lang=ja: hello says lang ja: {hello}")
        tab = c.call("Target.createTarget", {"url": "http://blocked.test/"})["targetId"]
        words = wait_for(lambda: (lambda w: w if w and w[0] else None)(
            c.peek(tab, "[document.querySelector('h1').textContent, document.querySelector('.more button').textContent]")), 15, 0.1)
        t.check(words == ["このサイトはブロック中です", "時間の延長を頼む"], f"(h) chromium --lang=ja: the block page speaks Japanese: {words}")
    finally:
        c.quit()


def firefox(rig, host, pw, host_dir):
    home = user_dir(rig, "firefox-home", pw)
    profile = user_dir(rig, "firefox-home/profile", pw)
    env = browser_env(home, host_dir)
    p = subprocess.Popen(as_user(USER, "firefox-esr", "--headless", "--no-remote", "--marionette", "--remote-allow-system-access",
                                 "--profile", profile, "http://open.test/"),
                         stdout=open(f"{rig.work}/firefox.log", "wb"), stderr=subprocess.STDOUT, start_new_session=True, env=env, cwd=home)
    rig.procs.append(p)
    began = time.monotonic()
    m = Marionette()
    try:
        addon = wait_for(lambda: m.script("""
            const { AddonManager } = ChromeUtils.importESModule("resource://gre/modules/AddonManager.sys.mjs");
            const { ExtensionPermissions } = ChromeUtils.importESModule("resource://gre/modules/ExtensionPermissions.sys.mjs");
            return AddonManager.getAddonByID(arguments[0]).then(async a => a && a.isActive ? {
                source: a.installTelemetryInfo && a.installTelemetryInfo.source, version: a.version,
                mayDisable: !!(a.permissions & AddonManager.PERM_CAN_DISABLE),
                mayUninstall: !!(a.permissions & AddonManager.PERM_CAN_UNINSTALL),
                privateBrowsing: (await ExtensionPermissions.get(arguments[0])).permissions.includes("internal:privateBrowsingAllowed"),
                uuid: WebExtensionPolicy.getByID(arguments[0]).mozExtensionHostname } : null);""", FIREFOX_ID, chrome=True), 60, 0.5)
        t.figures["firefoxInstalledSeconds"] = round(time.monotonic() - began, 1)
        t.check(addon is not None and addon["source"] == "enterprise-policy" and not addon["mayDisable"] and not addon["mayUninstall"]
                and addon["privateBrowsing"] and addon["version"] == VERSION,
                f"(a) firefox: the add-on is active, from the enterprise policy, may not be disabled or removed, runs in private windows: {addon}")
        if addon is None:
            return
        hello_and_site(host, "firefox")
        prefix = f"moz-extension://{addon['uuid']}/block.html#"

        m.context("content")
        m.call("WebDriver:Navigate", {"url": "http://blocked.test/path?q=1"})
        url = wait_for(lambda: (lambda u: u if u.startswith(prefix) else None)(m.call("WebDriver:GetCurrentURL")), 15, 0.1)
        t.check(url == prefix + "http://blocked.test/path?q=1", f"(c) firefox: blocked.test lands on the block page: {url}")
        text = wait_for(lambda: (lambda s: s if s and "Blocked by" in s else None)(m.peek("return " + BLOCK_TEXT)), 10, 0.1)
        page_shows(text, "firefox", ["blocked.test", "Blocked by homework", "until 18:00", "Ask for more time"])
        blocked_tab = m.call("WebDriver:GetWindowHandle")

        m.context("content")
        m.call("WebDriver:NewWindow", {"type": "tab"})
        later = [h for h in m.call("WebDriver:GetWindowHandles") if h != blocked_tab][-1]
        m.call("WebDriver:SwitchToWindow", {"handle": later})
        m.call("WebDriver:Navigate", {"url": "http://later.test/"})
        changed = time.monotonic()
        host.state([entry("blocked.test", "later.test")])
        switched = wait_for(lambda: any(u == prefix + "http://later.test/" for u, _ in m.tab_urls()), 15, 0.05)
        t.figures["firefoxTabSwitchSeconds"] = round(time.monotonic() - changed, 2)
        t.check(switched, f"(d) firefox: the open later.test tab goes to the block page when a state blocks it "
                f"({t.figures['firefoxTabSwitchSeconds']} s): {m.tab_urls()}")

        m.call("WebDriver:SwitchToWindow", {"handle": blocked_tab})
        m.script("document.querySelector('.reason input').value = 'homework research'; document.querySelector('.more button').click();")
        more_sent(host, "firefox", "homework research")
        answer = wait_for(lambda: (lambda s: s if s and "approved" in s else None)(m.peek("return document.querySelector('.answer').textContent")), 15, 0.1)
        t.check(answer == "Your request for social was approved", f"(e) firefox: the page shows the answer, then the approval live: {answer!r}")

        host.state([entry("blocked.test")])
        back = wait_for(lambda: any(u == "http://later.test/" for u, _ in m.tab_urls()), 15, 0.05)
        t.check(back, f"(d) firefox: the block page of later.test goes back to it when the block ends: {m.tab_urls()}")

        def lands(url):
            m.context("content")
            m.call("WebDriver:Navigate", {"url": url})
            return wait_for(lambda: m.peek("return " + LOADED), 15, 0.05)
        m.call("WebDriver:SwitchToWindow", {"handle": blocked_tab})
        rules_hold(host, "firefox", lands)

        m.script("""const w = Services.wm.getMostRecentWindow("navigator:browser");
                    w.openTrustedLinkIn("http://blocked.test/private", "window", { private: true });""", chrome=True)
        private = wait_for(lambda: [u for u, private in m.tab_urls() if private and u.startswith(prefix)], 20, 0.1)
        t.check(private == [prefix + "http://blocked.test/private"],
                f"(g) firefox: in a private window blocked.test lands on the block page too: {m.tab_urls()}")
    finally:
        m.close()
        stop(p)


with Rig(t, None, "bd-ext.", ["127.0.0.2"], {"test": "127.0.0.2"}) as rig:
    rig.serve("127.0.0.2", Page)
    os.chmod(rig.work, 0o711)  # the throwaway user's homes and the host's directory are in it
    pw = throwaway_user()
    host_dir = user_dir(rig, "host", pw)
    host = Host(host_dir)
    host.state([entry("blocked.test")])
    os.chown(f"{host_dir}/state.json", pw.pw_uid, pw.pw_gid)
    ext_id = install(rig)
    try:
        for name, run in (("chromium", lambda: chromium(rig, host, ext_id, pw, host_dir)),
                          ("chromiumRestarted", lambda: chromium_again(rig, host, ext_id, pw, host_dir)),
                          ("chromiumJapanese", lambda: chromium_ja(rig, host, ext_id, pw, host_dir)),
                          ("firefox", lambda: firefox(rig, host, pw, host_dir))):
            began = time.monotonic()
            host.state([entry("blocked.test")])
            run()
            t.figures[f"{name}Seconds"] = round(time.monotonic() - began, 1)
    finally:
        for p in rig.procs:
            stop(p)
        subprocess.run(["umount", "-l", "/usr"], capture_output=True)
t.done()
