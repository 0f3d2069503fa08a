#!/usr/bin/env python3
"""Screen time against the real logind (root only): blockd installed under its real unit in a
throwaway systemd booted as PID 1 on an overlay of this machine (torture/sysrig.py says how, and
why that way), with systemd-logind running there and login sessions opened for throwaway users
through PAM, as a display manager opens them:

    python3 torture/sessions.py BIN_DIR  (BIN_DIR: blockd, blockc, blockc-agent; the NSS module
                                          is the repository's .build/nss/libnss_blockd.so.2,
                                          `make nss`)

A "desktop" session is `systemd-run -p PAMName=login -p User=USER` with XDG_SESSION_TYPE=x11
(pam_systemd registers it with logind: class user, no seat, so active), whose process is a small
screen locker on the system bus as the user: it answers logind's Lock and Unlock signals with
SetLockedHint, as GNOME's or xss-lock do. A "text" session is the same with XDG_SESSION_TYPE=tty
running sleep. IdleHint is set through logind's API (SetIdleHint, as root). blockd.conf has
IdleSeconds=2s. Users: kid and kid2 (group blockd), made in the rig's /etc. Set-up checks that
blockd follows logind under its unit and holds a delay inhibitor for sleep (systemd-inhibit
--list). Each check is named:

1 screen time counted: kid2's desktop session is counted in `blockc report --json --all-users`
  (at least 2 s after 3 s); idle past IdleSeconds= it stops (under 1 s more over 3 s).
2 a 10 s screen-time limit with Action=logout for kid (root's `blockc limit add screen 10s --user
  kid --session --action logout`): kid's session runs 4 s, is idle 8 s (2 s of it counted) and
  is still there; back from idle it is ended by logind (TerminateSession) 2.5 to 9 s later, and
  the journal has blockd's `session` entry for it.
3 a login while over is ended at once (within 4 s).
4 more time lets the next session run: kid's `blockc more screen 30s` is a request (a limit root
  set for kid asks an administrator), root approves it, and kid's next session still runs 5 s on.
5 allowed hours: root's `blockc schedule add night --daily (now-1m)-(now+30m) --user kid
  --session`: kid's unlocked desktop session is locked (LockedHint, set by its locker after
  logind's Lock) within 4 s, kid2's is not; unlocked (`loginctl unlock-session`), it is locked
  again within 4 s; kid's desktop with no locker (nothing answers logind's Lock) is ended about
  10 s after it was asked to lock (8 to 20 s); kid's text session opened in the window is ended
  within 4 s; the journal
  has "Allowed hours 'night' keep kid off the screen".
7 (before 6) the login check: with pam-auth-update's blockd-screen profile enabled (`pam-auth-update
  --enable blockd-screen`, which puts `blockc screen --pam` in common-account), `blockc screen
  --user kid` names the hours, kid's login (PAMName=login) is refused by PAM and opens no
  session, kid2's goes through; disabled again, common-account no longer names it.
6 more time over allowed hours: kid's `blockc more night 2m` asks (2m: one minute would be the one more minute anyone gets), root approves, and kid's
  session unlocked after that stays unlocked for 3 s.
Figures: the seconds of each check and of the limit's end. Nothing of the machine is touched;
the rig is stopped and its scratch dir removed whatever happens (SUITE_SECONDS bounds the run).
Without root: skipped, unless BLOCKD_PRIVILEGED_TESTS=1, then failed."""
import os, time
import suite
from lib import Tally, wait_for
from sysrig import SystemRig

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SRC, BIN = "/blockd/src", "/blockd/bin"  # where the repository and BIN_DIR appear in the rig
KID, KID2 = "kid", "kid2"
TEST = "/opt/bdtest"
SUITE_SECONDS = 150

t = Tally("sessions")
bindir, _ = suite.begin(t, ["make", "useradd", "journalctl", "loginctl", "busctl", "python3"], SUITE_SECONDS, REPO)
rig = SystemRig(binds={SRC: REPO, BIN: bindir})
uids = {}

# A screen locker, as the session's user: logind's Lock and Unlock signals for its own session
# answered with SetLockedHint (Debian's python3-dbus and python3-gi).
LOCKER = r"""
import dbus, os
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib
DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
LOGIND, SESSION = "org.freedesktop.login1", "org.freedesktop.login1.Session"
manager = dbus.Interface(bus.get_object(LOGIND, "/org/freedesktop/login1"), "org.freedesktop.login1.Manager")
path = manager.GetSessionByPID(dbus.UInt32(os.getpid()))
session = dbus.Interface(bus.get_object(LOGIND, path), SESSION)
def locked(value):
    session.SetLockedHint(value)
    print("locked" if value else "unlocked", flush=True)
bus.add_signal_receiver(lambda: locked(True), "Lock", SESSION, LOGIND, path)
bus.add_signal_receiver(lambda: locked(False), "Unlock", SESSION, LOGIND, path)
print("ready " + str(path), flush=True)
GLib.MainLoop().run()
"""


def run(*argv, **kw):
    return rig.run(*argv, check=False, **kw)


def must(*argv, **kw):
    return rig.run(*argv, check=True, **kw)


def blockc(*args, user=None):
    return run("blockc", *args, user=user)


def bus_path(sid):
    """logind's object path of session `sid` (sd-bus label escaping: a leading digit too)."""
    out = "".join(c if c.isalnum() and not (i == 0 and c.isdigit()) else "_%02x" % ord(c) for i, c in enumerate(sid))
    return "/org/freedesktop/login1/session/" + out


def open_session(unit, user, kind="x11", may_end=False, locker=True):
    """A login session for `user` through PAM, as a display manager (x11) or a VT login (tty)
    opens one; its logind id once logind has it. With `may_end`, None when it ended before it
    could be seen (blockd may end a login at once)."""
    argv = ["/usr/bin/python3", f"{TEST}/locker.py"] if kind == "x11" and locker else ["/bin/sleep", "infinity"]
    sid, pid = rig.login(unit, user, kind, argv, may_end=may_end)
    if sid is None:
        return None
    # The session's processes are in its scope now, not the unit: its output is found by pid.
    if kind == "x11" and locker and not wait_for(lambda: "ready" in run("journalctl", f"_PID={pid}", "-o", "cat", "--no-pager").stdout, timeout=10, step=0.1):
        raise RuntimeError(f"the locker of {unit} did not start: {run('journalctl', f'_PID={pid}', '--no-pager').stdout[-800:]}")
    return sid


def unit_running(unit):
    return run("systemctl", "is-active", unit).stdout.strip() in ("active", "activating", "reloading")


def prop(sid, name):
    r = run("loginctl", "show-session", sid, "-p", name, "--value")
    return r.stdout.strip() if r.rc == 0 else None


def alive(sid):
    return prop(sid, "State") in ("active", "online")


def idle(sid, value):
    must("busctl", "call", "org.freedesktop.login1", bus_path(sid), "org.freedesktop.login1.Session", "SetIdleHint", "b",
         "true" if value else "false")


def session_entries():
    return [e.get("MESSAGE", "") for e in rig.journal() if e.get("BLOCKD_EVENT") == "session"]


def screen_seconds(user):
    r = blockc("report", "--json", "--all-users")
    try:
        days = r.json().get("days", [])
    except Exception:
        return None
    return sum(float((d.get("screen") or {}).get(str(uids[user]), 0)) for d in days)


def request_id(r):
    try:
        return r.json().get("id")
    except Exception:
        return None


# Setup ----------------------------------------------------------------------------------------

def setup():
    must("systemctl", "start", "systemd-logind")
    must("groupadd", "--system", "-f", "blockd")
    for name in (KID, KID2):
        p = run("useradd", "--create-home", "--shell", "/bin/sh", "-G", "blockd", name)
        if p.rc != 0:
            raise RuntimeError(f"useradd {name} in the rig (a user of that name on this machine?): {p.out}")
        uids[name] = int(must("id", "-u", name).stdout)
    must("mkdir", "-p", TEST, "/etc/blockd")
    rig.write(f"{TEST}/locker.py", LOCKER)
    rig.write("/etc/blockd/blockd.conf", "[Daemon]\nIdleSeconds=2s\n")
    p = run("make", "-C", SRC, "install", f"BINDIR_SRC={BIN}", timeout=120)
    if not t.check(p.rc == 0 and "blockd is running" in p.stdout, f"setup: make install BINDIR_SRC=... in the rig: {p.out[-1500:]}"):
        raise RuntimeError("make install failed: nothing else can be checked")
    r = blockc("status")
    t.check(r.rc == 0, f"setup: blockc status answers under the unit: {r.out}")
    warned = [e.get("MESSAGE", "") for e in rig.journal() if "Screen time is not counted" in e.get("MESSAGE", "")]
    t.check(not warned, f"setup: blockd follows logind under its unit (no 'not counted' warning): {warned}")
    held = lambda: run("systemd-inhibit", "--list", "--no-legend", "--no-pager").stdout
    t.check(wait_for(lambda: any("blockd" in line and "sleep" in line and "delay" in line for line in held().splitlines()), timeout=10, step=0.2),
            f"setup: blockd holds a delay inhibitor for sleep (to stop counting before the machine sleeps): {held()}")


# 1 --------------------------------------------------------------------------------------------

def counted():
    sid = open_session("bd-kid2-desk", KID2)
    time.sleep(3)
    first = screen_seconds(KID2)
    t.figures["counted"] = first
    t.check(first is not None and first >= 2, f"1 kid2's desktop session counts as screen time in the report: {first} s after 3 s")
    idle(sid, True)
    time.sleep(2.5)  # the 2 s grace
    before = screen_seconds(KID2)
    time.sleep(3)
    after = screen_seconds(KID2)
    t.check(before is not None and after is not None and after - before < 1,
            f"1 idle past IdleSeconds=2s it stops counting: {before} then {after} s")
    idle(sid, False)
    must("systemctl", "stop", "bd-kid2-desk")


# 2, 3, 4 --------------------------------------------------------------------------------------

def limit():
    r = blockc("limit", "add", "screen", "10s", "--user", KID, "--session", "--action", "logout")
    t.check(r.rc == 0, f"2 root's blockc limit add screen 10s --user kid --session --action logout: {r.rc} {r.out}")
    sid = open_session("bd-kid-s1", KID)
    time.sleep(4)
    idle(sid, True)
    time.sleep(8)
    t.check(alive(sid), f"2 4 s at the screen and 8 s idle (2 s of it counted): kid's session is still there ({prop(sid, 'State')})")
    idle(sid, False)
    back = time.monotonic()
    time.sleep(2.5)
    t.check(alive(sid), "2 back from idle, 2.5 s on (8.5 s counted): still there")
    ended = wait_for(lambda: not alive(sid), timeout=10, step=0.1)
    seconds = round(time.monotonic() - back, 2)
    t.figures["limitEndedAfter"] = seconds
    t.check(ended and seconds <= 9, f"2 ended by logind about 4 s after coming back from idle (10 s at the screen): after {seconds} s")
    t.check(any("Screen time limit 'screen' is used up for kid: ending their session (Action=logout)" in m for m in session_entries()),
            f"2 the journal has blockd's session entry: {session_entries()}")
    opened = time.monotonic()
    sid2 = open_session("bd-kid-s2", KID, may_end=True)
    t.check(wait_for(lambda: not unit_running("bd-kid-s2") and (sid2 is None or not alive(sid2)), timeout=4, step=0.05),
            "3 kid's login while over is ended at once")
    t.figures["loginEndedAfter"] = round(time.monotonic() - opened, 2)
    r = blockc("more", "screen", "30s", "--json", user=KID)
    rid = request_id(r)
    t.check(r.rc == 0 and rid and (r.json() or {}).get("expires"), f"4 kid's blockc more screen 30s is a request for an administrator: {r.rc} {r.out}")
    r = blockc("approve", str(rid), "30s")
    t.check(r.rc == 0, f"4 root's blockc approve {rid} 30s: {r.rc} {r.out}")
    sid3 = open_session("bd-kid-s3", KID)
    time.sleep(5)
    t.check(alive(sid3), f"4 with 30 s more, kid's next session still runs 5 s on ({prop(sid3, 'State')})")
    run("systemctl", "stop", "bd-kid-s3")
    r = blockc("limit", "remove", "screen")
    t.check(r.rc == 0, f"4 root's blockc limit remove screen: {r.rc} {r.out}")


# 5, 6 -----------------------------------------------------------------------------------------

def hours():
    kid = open_session("bd-kid-desk", KID)
    kid2 = open_session("bd-kid2-desk2", KID2)
    start = must("date", "-d", "-1 min", "+%H:%M").stdout.strip()
    end = must("date", "-d", "+30 min", "+%H:%M").stdout.strip()
    r = blockc("schedule", "add", "night", "--daily", f"{start}-{end}", "--user", KID, "--session")
    t.check(r.rc == 0, f"5 root's blockc schedule add night --daily {start}-{end} --user kid --session: {r.rc} {r.out}")
    t.check(wait_for(lambda: prop(kid, "LockedHint") == "yes", timeout=4, step=0.1), "5 kid's desktop session is locked at once")
    t.check(prop(kid2, "LockedHint") == "no", f"5 kid2's is not: {prop(kid2, 'LockedHint')}")
    t.check(any(m.startswith("Allowed hours 'night' keep kid off the screen") for m in session_entries()),
            f"5 the journal says so: {session_entries()}")
    held = lambda: sum(m.startswith("Allowed hours 'night' keep kid off the screen") for m in session_entries())
    once = held()
    must("loginctl", "unlock-session", kid)  # the locker sets LockedHint=no, as a person's unlock does
    t.check(wait_for(lambda: held() > once and prop(kid, "LockedHint") == "yes", timeout=4, step=0.1),
            f"5 unlocked in the window, kid's session is locked again: {held()} entries, LockedHint={prop(kid, 'LockedHint')}")
    open_session("bd-kid-bare", KID, locker=False, may_end=True)
    opened = time.monotonic()
    ended = wait_for(lambda: not unit_running("bd-kid-bare"), timeout=20, step=0.1)
    t.figures["bareEndedAfter"] = round(time.monotonic() - opened, 2)
    t.check(ended and time.monotonic() - opened >= 8,
            f"5 kid's desktop without a screen locker (nothing sets LockedHint) is ended about 10 s after logind was asked to lock it: {t.figures['bareEndedAfter']} s")
    text = open_session("bd-kid-tty", KID, kind="tty", may_end=True)
    t.check(wait_for(lambda: not unit_running("bd-kid-tty") and (text is None or not alive(text)), timeout=4, step=0.05),
            "5 kid's text session opened in the window is ended (it has no screen lock)")
    # The login check: pam-auth-update's blockd-screen profile, as an administrator enables it.
    r = run("env", "DEBIAN_FRONTEND=noninteractive", "pam-auth-update", "--enable", "blockd-screen")
    account = rig.read("/etc/pam.d/common-account").decode(errors="replace")
    t.check(r.rc == 0 and "screen --pam" in account, f"7 pam-auth-update --enable blockd-screen puts blockc screen --pam in common-account: {r.out} {account}")
    r = blockc("screen", "--user", KID)
    t.check(r.rc == 0 and "Allowed hours 'night' keep kid off the screen" in r.stdout, f"7 blockc screen --user kid says what keeps kid off: {r.out}")
    login = open_session("bd-kid-refused", KID, may_end=True)
    refused = wait_for(lambda: not unit_running("bd-kid-refused"), timeout=5, step=0.05)
    said = run("journalctl", "-u", "bd-kid-refused", "--no-pager").stdout
    t.figures["refusedLogin"] = said[-600:]
    t.check(login is None and refused and "PAM" in said, f"7 kid's login in the window is refused by PAM (no session opened): {login} {said[-600:]}")
    other = open_session("bd-kid2-login", KID2)
    t.check(alive(other), "7 kid2's login goes through")
    run("systemctl", "stop", "bd-kid2-login")
    r = run("env", "DEBIAN_FRONTEND=noninteractive", "pam-auth-update", "--disable", "blockd-screen")
    t.check(r.rc == 0 and "screen --pam" not in rig.read("/etc/pam.d/common-account").decode(errors="replace"), f"7 and disabled again: {r.out}")
    r = blockc("more", "night", "2m", "--json", user=KID)
    rid = request_id(r)
    t.check(r.rc == 0 and rid and (r.json() or {}).get("expires"), f"6 kid's blockc more night 2m asks an administrator (root set it for kid): {r.rc} {r.out}")
    r = blockc("approve", str(rid), "2m")
    t.check(r.rc == 0, f"6 root's blockc approve {rid} 2m: {r.rc} {r.out}")
    must("loginctl", "unlock-session", kid)
    t.check(wait_for(lambda: prop(kid, "LockedHint") == "no", timeout=4, step=0.1), "6 kid unlocks")
    time.sleep(3)
    t.check(prop(kid, "LockedHint") == "no" and alive(kid), f"6 with more time, kid's session stays unlocked 3 s on: {prop(kid, 'LockedHint')}")


ITEMS = [("1 counted", counted), ("2-4 limit", limit), ("5-6 allowed hours", hours)]

suite.run_items(t, rig, setup, ITEMS)
