"""The real browsers, driven by the torture suites that need a page's DOM or an extension's
state (browser_ext.py against a stand-in host, web_live.py against blockd itself), inside the
namespace of torture/rig.py:

  Chromium(rig, home, env, url, *flags, user=NAME)   headless Chromium as NAME with a profile
      under `home`, driven over --remote-debugging-pipe (CDP: targets, evaluate in a page or
      a service worker); its output (the native-messaging host's stderr too) in `log`.
  Marionette(port)   a Firefox started with --marionette: scripts in content or chrome
      context, navigation, tabs.

It imports nothing of torture/ but lib."""
import fcntl, json, os, select, socket, subprocess, time
from http.server import BaseHTTPRequestHandler
from lib import as_user, stop, wait_for


# ---- Chromium over CDP ----------------------------------------------------------------------

class Chromium:
    """Headless Chromium as `user`, driven over --remote-debugging-pipe: CDP's JSON messages,
    each ended by a NUL, on the browser's fds 3 (in) and 4 (out). Its stdout and stderr (with
    its native-messaging hosts' stderr) go to `log`, a file in the rig's work directory."""

    def __init__(self, rig, home, env, url, *flags, user, profile=None, n=[0]):
        n[0] += 1
        profile = profile or f"chromium-{n[0]}"
        self.profile_dir = f"{home}/{profile}"
        to_browser, self.out = os.pipe()
        self.inp, from_browser = os.pipe()
        theirs = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_browser, from_browser)]
        for fd in (to_browser, from_browser):
            os.close(fd)
        argv = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
                f"--user-data-dir={home}/{profile}", "--remote-debugging-pipe", "--enable-unsafe-extension-debugging", *flags, url]
        self.log = f"{rig.work}/chromium-{n[0]}.log"
        self.proc = subprocess.Popen(as_user(user, "bash", "-c", f'exec "$@" 3<&{theirs[0]} 4>&{theirs[1]}', "bash", *argv),
                                     pass_fds=theirs, stdout=open(self.log, "wb"), stderr=subprocess.STDOUT,
                                     start_new_session=True, env=env, cwd=home)
        rig.procs.append(self.proc)
        for fd in theirs:
            os.close(fd)
        self.id, self.buf = 0, b""

    def call(self, method, params=None, session=None, timeout=20):
        self.id += 1
        message = {"id": self.id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.out, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" not in self.buf:
                if not select.select([self.inp], [], [], max(0, deadline - time.monotonic()))[0]:
                    raise TimeoutError(f"CDP {method}: no answer")
                self.buf += os.read(self.inp, 65536) or b"!\0"
            line, self.buf = self.buf.split(b"\0", 1)
            reply = json.loads(line) if line != b"!" else {"id": self.id, "error": "Chromium closed the pipe"}
            if reply.get("id") == self.id:
                if "error" in reply:
                    raise RuntimeError(f"CDP {method}: {reply['error']}")
                return reply.get("result", {})

    def targets(self, kind=None):
        return [x for x in self.call("Target.getTargets")["targetInfos"] if kind is None or x["type"] == kind]

    def evaluate(self, target_id, expression):
        """The value of `expression` (awaited) in a page or worker."""
        session = self.call("Target.attachToTarget", {"targetId": target_id, "flatten": True})["sessionId"]
        try:
            r = self.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True}, session)
        finally:
            self.call("Target.detachFromTarget", {"sessionId": session})
        if "exceptionDetails" in r:
            raise RuntimeError(f"evaluating {expression[:60]!r}: {r['exceptionDetails'].get('exception', {}).get('description')}")
        return r["result"].get("value")

    def peek(self, target_id, expression):
        """evaluate(), or None where it fails: a page still loading has no body yet, a worker
        that has just started may not have its extension APIs yet."""
        try:
            return self.evaluate(target_id, expression)
        except RuntimeError:
            return None

    def evaluate_soon(self, target_id, expression, seconds=10):
        return wait_for(lambda: self.peek(target_id, expression), seconds, 0.2)

    def page(self, prefix):
        return next((x for x in self.targets("page") if x["url"].startswith(prefix)), None)

    def quit(self):
        stop(self.proc)
        os.close(self.out)
        os.close(self.inp)


# ---- Firefox over Marionette ------------------------------------------------------------------

class Marionette:
    """Just enough of Marionette (`len:json` frames) to drive tabs and read pages."""

    def __init__(self, port=2828):
        def connected():
            try:
                return socket.create_connection(("127.0.0.1", port), timeout=30)
            except OSError:
                return None
        self.sock = wait_for(connected, 60, 0.2, what=f"Firefox's Marionette on port {port}")
        self.id = 0
        self.read()
        self.call("WebDriver:NewSession", {"capabilities": {}})

    def read(self):
        head = b""
        while not head.endswith(b":"):
            head += self.sock.recv(1) or b"!"
            if head.endswith(b"!"):
                raise ConnectionError("Marionette closed the connection")
        size, data = int(head[:-1]), b""
        while len(data) < size:
            data += self.sock.recv(size - len(data)) or b"!"
        return json.loads(data)

    def call(self, name, params=None):
        self.id += 1
        frame = json.dumps([0, self.id, name, params or {}]).encode()
        self.sock.sendall(str(len(frame)).encode() + b":" + frame)
        _, _, error, result = self.read()
        if error:
            raise RuntimeError(f"Marionette {name}: {error}")
        return result.get("value") if isinstance(result, dict) else result

    def context(self, which):
        self.call("Marionette:SetContext", {"value": which})

    def script(self, source, *args, chrome=False):
        self.context("chrome" if chrome else "content")
        return self.call("WebDriver:ExecuteScript", {"script": source, "args": list(args)})

    def peek(self, source):
        """A content script's value, or None where it fails (a page still loading)."""
        try:
            return self.script(source)
        except RuntimeError:
            return None

    def tab_urls(self):
        """Every tab's URL in every window, private ones too: [(url, private)]."""
        return self.script("""
            const { PrivateBrowsingUtils } = ChromeUtils.importESModule("resource://gre/modules/PrivateBrowsingUtils.sys.mjs");
            return [...Services.wm.getEnumerator("navigator:browser")].flatMap(w =>
                w.gBrowser.tabs.map(t => [t.linkedBrowser.currentURI.spec, PrivateBrowsingUtils.isWindowPrivate(w)]));""", chrome=True)

    def close(self):
        self.sock.close()


# ---- Pages ---------------------------------------------------------------------------------------

class Page(BaseHTTPRequestHandler):
    """Every *.test page: its host in the title and the body."""

    def do_GET(self):
        host = self.headers.get("Host", "").split(":")[0]
        body = f"<html><head><title>{host}</title></head><body>PAGE {host}</body></html>".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass
