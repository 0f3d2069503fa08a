"""R1/R2 end to end (root only): real processes of throwaway users run for measured seconds, and
`blockc report --json` says the same within a second. Inside the private mount + network + PID
namespace of torture/rig.py: an overlay over /etc holds the throwaway users and the group
blockd; the apps are copies of sleep in the work directory.

    python3 torture/report.py BIN_DIR

- Copies of /bin/sleep in the work directory: bd-game and bd-chat. Selections of the rig's
  config dir: `games` (Apps=bd-game) and `chat` (Apps=bd-chat).
- Throwaway users in the overlay's /etc/passwd, refused if the machine has users of those
  names: `bdreport-kid` (member of group blockd, created there if missing) and
  `bdreport-other`, login users (uid 1000 or more). Their apps run as from their own login:
  setpriv with their uid and groups, the login uid written as theirs (as pam_loginuid does).
- The real blockd with a scratch hosts file and tables. Activities that name both selections,
  so that the usage monitor follows their apps (§9, R1): `blockc limit add games 1h games` and
  a daily schedule `chatnight` of chat a minute long, twelve hours from now (not active).
  `blockc status --json` says the usage monitor's mode (fanotify as root).
- Each app's time is measured with time.monotonic() from just before its Popen to just after
  its wait: kid's bd-game twice with a gap while other's bd-chat runs across both; then kid's
  bd-game twice at once, staggered (3 s each, 1 s apart: their union, 4 s, not their sum, is
  the selection's time and the app's, "at least one process of it").
- `blockc report --json --last 2` (two days, so that a run across local midnight, which T7
  splits into two days, still adds up; the figures are summed over the days) as root with
  `--user` for each, and `--all-users`: kid's `apps` for bd-game and `used["games"]` equal
  kid's measured time, the limit games's `used` too, with its allowance (in other's view the
  limit for everyone is there with other's own use, none: each person has their own
  allowance, §9); other's bd-chat time is other's alone; the machine's view
  has both apps and each uid in `users`. Each within 1 s: the figures are whole seconds, and
  the monitor sees a start at the app's exec (a few ms after the Popen, through fanotify) and
  an exit at once (through a pidfd). The text report for kid draws the `games` chart with the
  limit. As kid (a member of group blockd, so the socket is theirs to connect to): `blockc
  report --json` is kid's own view with the same figures; `--all-users` and `--user
  bdreport-other` are refused.
- Then T8: kid's bd-game runs 2 s, blockd stops (SIGTERM), is down 2 s while it runs on, and
  starts again on the same state directory; the app runs 2 s more. While it runs the report
  counts it up to the instant asked; what was counted up to the SIGTERM stays counted (apps,
  used, the limit's used), what had ended stays exactly, and the app counts again from
  blockd's start (its scan sees it), not for the time blockd was down.
About 20 s. Without root this prints a skipped RESULT; with BLOCKD_PRIVILEGED_TESTS=1 anything
missing fails."""
import grp, os, pwd, shutil, signal, subprocess, sys, time
from lib import Tally, as_user, sh, stop
from rig import Rig, enter

t = Tally("report")
bindir = os.path.abspath(sys.argv[1])
enter(t, ["dnsmasq", "ip", "unshare", "setpriv", "useradd", "groupadd", "findmnt"],
      "needs root for a private mount namespace and throwaway users")

began = time.monotonic()
KID, OTHER = "bdreport-kid", "bdreport-other"
TOLERANCE = 1.0  # seconds: each figure is whole (rounded) and starts at the exec the monitor sees
procs = []  # every app started, killed on every path (and with the namespace anyway)


def setup(rig):
    """The binaries, the users, the group, the selections: all in the work directory or the namespace."""
    for name in (KID, OTHER):
        try:
            pwd.getpwnam(name)
            raise RuntimeError(f"a user named {name} exists on this machine: the test needs the name for its throwaway user")
        except KeyError:
            pass
    try:
        grp.getgrnam("blockd")
    except KeyError:
        sh("groupadd", "--system", "blockd")
    os.chmod(rig.work, 0o711)  # the socket's own mode and group decide who connects
    sh("useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", "-G", "blockd", KID)
    sh("useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", OTHER)
    uids = {name: pwd.getpwnam(name).pw_uid for name in (KID, OTHER)}
    probe = sh("sh", "-c", f"echo {uids[KID]} > /proc/self/loginuid && cat /proc/self/loginuid", check=False)
    if probe.stdout.strip() != str(uids[KID]):
        raise RuntimeError(f"cannot write a process's login uid (CAP_AUDIT_CONTROL): the apps would count for this "
                           f"script's login uid, not their users': {probe.stdout}{probe.stderr}")
    t.check(all(u >= 1000 for u in uids.values()), f"the throwaway users are login users (uid 1000 or more): {uids}")
    rig.mkdir("bin")
    os.chmod(f"{rig.work}/bin", 0o755)
    bins = {}
    for name in ("game", "chat"):
        bins[name] = f"{rig.work}/bin/bd-{name}"
        shutil.copyfile("/bin/sleep", bins[name])
        os.chmod(bins[name], 0o755)
    rig.configure("", {"games": f"[Selection]\nName=games\nApps={bins['game']}\n",
                       "chat": f"[Selection]\nName=chat\nApps={bins['chat']}\n"})
    open(f"{rig.work}/hosts", "w").close()
    return bins, uids


def login_uid(uid):
    """For preexec_fn: the login uid of a session of `uid` (as pam_loginuid writes it): the person
    the usage monitor counts the process for (R1), whoever runs this script."""
    def write():
        with open("/proc/self/loginuid", "w") as f:
            f.write(str(uid))
    return write


def app(user, path):
    """`path 300` as `user`, in its own process group; (process, monotonic time just before Popen)."""
    began_at = time.monotonic()
    p = subprocess.Popen(as_user(user, path, "300"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True, preexec_fn=login_uid(pwd.getpwnam(user).pw_uid))
    procs.append(p)
    return p, began_at


def end(p, began_at):
    """Kills an app; its measured seconds, up to just after its wait."""
    p.kill()
    p.wait(10)
    return time.monotonic() - began_at


def report(d, user, *args):
    return d.blockc("report", "--json", "--last", "2", *args, user=user, check=False).json()


def total(o, key, name):
    """The seconds of `name` under each day's `key`, summed over the report's days (None: absent every day)."""
    values = [day.get(key, {}).get(name) for day in o.get("days", [])]
    return sum(v for v in values if v is not None) if any(v is not None for v in values) else None


def limit_total(o, name, field):
    values = [day.get("limits", {}).get(name, {}).get(field) for day in o.get("days", [])]
    return [v for v in values if v is not None]


def near(got, want):
    return got is not None and abs(got - want) <= TOLERANCE


def window_later():
    """A daily window of a minute, twelve hours from now (local time, T7): not active now."""
    now = time.localtime()
    m = (now.tm_hour * 60 + now.tm_min + 720) % 1440
    hhmm = lambda x: f"{(x // 60) % 24:02d}:{x % 60:02d}"
    return f"{hhmm(m)}-{hhmm(m + 1)}"


def activities(d):
    r = d.blockc("limit", "add", "games", "1h", "games", check=False)
    t.check(r.rc == 0, f"blockc limit add games 1h games: {r.out}")
    hours = window_later()
    r = d.blockc("schedule", "add", "chatnight", "--daily", hours, "chat", check=False)
    t.check(r.rc == 0, f"blockc schedule add chatnight --daily {hours} chat: {r.out}")
    status = d.status()
    mode = status.get("enforcement", {}).get("usage")
    t.figures["usageMonitor"] = mode
    print(f"report: the usage monitor's mode: {mode}", flush=True)
    t.check(mode == "fanotify", f"§9: blockc status --json: the usage monitor uses fanotify as root: {mode!r} {status.get('enforcement')}")
    blocked = [b.get("selection") for b in status.get("blocked", [])]
    t.check("chat" not in blocked and "games" not in blocked, f"neither selection is blocked now (chatnight not active, games not used up): {blocked}")


def separate_runs(bins):
    """kid's bd-game twice with a gap, while other's bd-chat runs across both."""
    chat = app(OTHER, bins["chat"])
    time.sleep(0.5)
    runs = []
    for seconds in (4, 3):
        p, at = app(KID, bins["game"])
        time.sleep(seconds)
        runs.append(end(p, at))
        time.sleep(1)
    return runs, end(*chat)


def at_once(bins):
    """Two processes of bd-game for kid at once, staggered: the first 3 s, the second from 1 s
    to 4 s. Their union is the time (4 s), not their sum (6 s)."""
    first = app(KID, bins["game"])
    time.sleep(1)
    second = app(KID, bins["game"])
    time.sleep(2)
    a = end(*first)
    time.sleep(1)
    end(*second)
    union = time.monotonic() - first[1]
    return union, a + (time.monotonic() - second[1])


def across_restart(d, bins, uids, kid_time):
    """After the other checks: kid's bd-game runs 2 s, blockd stops (SIGTERM) and is down 2 s
    while it still runs, then starts again on the same state directory; the app runs 2 s more.
    T8: what was counted up to the stop stays counted, what had ended before stays exactly, and
    the app counts again from when blockd is back (its scan at start sees it), not for the time
    it was down."""
    game = bins["game"]
    p, at = app(KID, game)
    time.sleep(2)
    kid_before = report(d, None, "--user", KID)  # just before the stop
    asked = time.monotonic()
    machine_before = report(d, None, "--all-users")
    running = {"apps": total(kid_before, "apps", game), "used": total(kid_before, "used", "games"),
               "limit": sum(limit_total(kid_before, "games", "used"))}
    ran = asked - at
    stopping = time.monotonic()
    d.proc.send_signal(signal.SIGTERM)
    code = d.proc.wait(10)
    stopped = time.monotonic()
    t.check(code == 0, f"T8: blockd exits 0 on SIGTERM ({code})")
    time.sleep(2)
    restarting = time.monotonic()
    d.start()
    up = time.monotonic()
    kid_after, machine_after = report(d, None, "--user", KID), report(d, None, "--all-users")
    kept = {"apps": total(kid_after, "apps", game), "used": total(kid_after, "used", "games"),
            "limit": sum(limit_total(kid_after, "games", "used"))}
    time.sleep(2)
    mode = d.status().get("enforcement", {}).get("usage")
    t.check(mode == "fanotify", f"§9: after the restart the usage monitor uses fanotify again: {mode!r}")
    wall = end(p, at)
    back = at + wall - up  # seconds from blockd answering again to the app's end
    final = report(d, None, "--user", KID)
    t.figures["restart"] = {"wall": round(wall, 2), "down": round(up - stopping, 2), "sigtermSeconds": round(stopped - stopping, 2),
                            "startSeconds": round(up - restarting, 2), "beforeStop": running, "afterStart": kept,
                            "final": total(final, "apps", game), "measuredUpToStop": round(ran, 2), "measuredBack": round(back, 2)}
    t.check(near(running["apps"], kid_time + ran) and near(running["used"], kid_time + ran) and near(running["limit"], kid_time + ran),
            f"R2: while bd-game runs, the report counts it up to the instant asked: {running}, measured {kid_time + ran:.2f}")
    # Failed before 4df00ad (2 s lost of each figure): the snapshot written on SIGTERM
    # (Engine.saveBeforeExit) kept the running intervals open, unfolded since their start or the
    # last checkpoint, and startUp's forgetRunning() drops open intervals, so a clean stop lost
    # up to a minute of each running app (and of each limit's use) as a crash would.
    t.check(all(near(kept[k], running[k]) for k in kept),
            f"R1, T8: a SIGTERM keeps what was counted up to it: kid's bd-game (`apps`), `used[\"games\"]` and the limit games's "
            f"`used` right after the start again {kept}, just before the stop {running}")
    t.check(total(machine_after, "apps", bins["chat"]) == total(machine_before, "apps", bins["chat"])
            and total(machine_after, "users", str(uids[OTHER])) == total(machine_before, "users", str(uids[OTHER])),
            f"R1, T8: what had ended before the stop stays exactly (other's bd-chat): {total(machine_before, 'apps', bins['chat'])} "
            f"then {total(machine_after, 'apps', bins['chat'])}")
    grew = (total(final, "apps", game) or 0) - (kept["apps"] or 0)
    t.check(near(grew, back), f"R1, T8: the bd-game that ran across the restart counts again from blockd's start, not for the "
            f"{up - stopping:.2f} s blockd was down: {grew} s more after the start, measured {back:.2f} s from the start to its end")
    t.check(near(sum(limit_total(final, "games", "used")) - (kept["limit"] or 0), back) and
            near((total(final, "used", "games") or 0) - (kept["used"] or 0), back),
            f"R1/§9: the same for `used[\"games\"]` and the limit's `used`: {total(final, 'used', 'games')} and {limit_total(final, 'games', 'used')}")


def figures(measured, reported):
    return {"measured": round(measured, 2), "reported": reported}


def check_reports(d, bins, uids, kid_time, chat_time, union, summed):
    game, chat = bins["game"], bins["chat"]
    kid_uid, other_uid = str(uids[KID]), str(uids[OTHER])
    kid = report(d, None, "--user", KID)
    other = report(d, None, "--user", OTHER)
    machine = report(d, None, "--all-users")
    for name, o in (("kid", kid), ("other", other), ("machine", machine)):
        t.check("error" not in o and o.get("schema") == 1 and len(o.get("days", [])) == 2,
                f"R2: blockc report --json --last 2 ({name}'s view) answers schema 1 with two days: {o}")
    t.check(kid.get("user") == uids[KID] and other.get("user") == uids[OTHER] and "user" not in machine,
            f"R2: each view says whose it is: {kid.get('user')} {other.get('user')} {machine.get('user', 'none')}")

    kid_apps, kid_used = total(kid, "apps", game), total(kid, "used", "games")
    t.figures["kidGame"] = figures(kid_time, kid_apps)
    t.figures["kidGamesUsed"] = figures(kid_time, kid_used)
    t.check(near(kid_apps, kid_time), f"R1: kid's `apps` for bd-game is kid's measured time within 1 s: "
            f"reported {kid_apps}, measured {kid_time:.2f}")
    t.check(near(kid_used, kid_time), f"R1: kid's `used[\"games\"]` is the union of kid's bd-game processes within 1 s "
            f"(two at once count once): reported {kid_used}, measured {kid_time:.2f}")
    t.check(summed - union >= 1.5, f"the two processes at once overlap enough for the union to differ from the sum: "
            f"{union:.2f} s and {summed:.2f} s")
    lim_used, lim_allowance = limit_total(kid, "games", "used"), limit_total(kid, "games", "allowance")
    t.figures["gamesLimitUsed"] = figures(kid_time, sum(lim_used) if lim_used else None)
    t.check(lim_used and near(sum(lim_used), kid_time), f"R1/§9: the limit games's `used` in kid's `limits` is kid's measured time "
            f"within 1 s: {lim_used}, measured {kid_time:.2f}")
    t.check(lim_allowance and all(a == 3600 for a in lim_allowance), f"R2: the limit games's allowance is 3600 on the days it limits: {lim_allowance}")
    t.check(all(day.get("limits", {}).get("games", {}).get("selections") in (None, ["games"]) for day in kid.get("days", [])),
            f"R2: the limit's selections: [games]: {[d.get('limits') for d in kid.get('days', [])]}")
    t.check(total(kid, "apps", chat) is None and total(kid, "used", "chat") is None,
            f"R1: kid's report has no chat time (other's): {[(d.get('apps'), d.get('used')) for d in kid.get('days', [])]}")

    other_apps, other_used = total(other, "apps", chat), total(other, "used", "chat")
    t.figures["otherChat"] = figures(chat_time, other_apps)
    t.check(near(other_apps, chat_time) and near(other_used, chat_time),
            f"R1: other's bd-chat time is under other, `apps` and `used[\"chat\"]`, within 1 s: {other_apps} and {other_used}, measured {chat_time:.2f}")
    t.check(total(other, "apps", game) is None and total(other, "used", "games") is None,
            f"R1: other's report has no bd-game time (kid's): {[(d.get('apps'), d.get('used')) for d in other.get('days', [])]}")
    other_limit = limit_total(other, "games", "used")
    t.check(other_limit and sum(other_limit) == 0,
            f"R2, §9: other's view has the limit games, a limit for everyone, with other's own `used` (none of kid's {kid_time} s): {other_limit}")

    users = {uid: total(machine, "users", uid) for uid in (kid_uid, other_uid)}
    t.figures["machineUsers"] = {"kid": figures(kid_time, users[kid_uid]), "other": figures(chat_time, users[other_uid])}
    t.check(near(users[kid_uid], kid_time) and near(users[other_uid], chat_time),
            f"R1: the machine's view has both uids in `users` with their time within 1 s: {users}, measured kid {kid_time:.2f}, other {chat_time:.2f}")
    t.check(near(total(machine, "apps", game), kid_time) and near(total(machine, "apps", chat), chat_time),
            f"R2: the machine's `apps` adds up over users: bd-game {total(machine, 'apps', game)}, bd-chat {total(machine, 'apps', chat)}")
    t.check(near(total(machine, "used", "games"), kid_time) and near(total(machine, "used", "chat"), chat_time),
            f"R2: the machine's `used`: games {total(machine, 'used', 'games')}, chat {total(machine, 'used', 'chat')}")
    extra = set().union(*(day.get("users", {}).keys() for day in machine.get("days", []))) - {kid_uid, other_uid}
    t.check(not extra, f"R1: no one else has time on the machine's view: {extra}")

    r = d.blockc("report", "--last", "2", "--user", KID, check=False)
    lines = (r.stdout + r.stderr).splitlines()
    t.check(r.rc == 0 and "games" in lines and any("limit 1 h" in x for x in lines),
            f"R2: blockc report --user kid (text) draws the games chart with its limit: {r.rc}\n{r.out}")
    t.check(r.rc == 0 and "chat" not in lines, "R2: kid's text report has no chat chart")

    own = report(d, KID)
    t.check(own.get("user") == uids[KID] and total(own, "apps", game) == kid_apps and total(own, "used", "games") == kid_used
            and total(own, "apps", chat) is None,
            f"R2: as kid, blockc report --json is kid's own view with the same figures: {own}")
    for args in (("--all-users",), ("--user", OTHER)):
        r = d.blockc("report", "--json", *args, user=KID, check=False)
        t.check(r.rc != 0 and "only root and members of group 'blockd-admin'" in r.out,
                f"R2: as kid, blockc report {' '.join(args)} is refused: {r.rc} {r.out}")


with Rig(t, bindir, "bd-report-", [], {}) as rig:
    try:
        bins, uids = setup(rig)
        d = rig.daemon("--hosts-file", f"{rig.work}/hosts", "--user-tables-dir", f"{rig.work}/users",
                       "--firewall", "no", "--cut-sockets", "no", "--browser-policies", "no")
        d.start()
        activities(d)
        runs, chat_time = separate_runs(bins)
        union, summed = at_once(bins)
        kid_time = sum(runs) + union
        t.figures["kidRuns"] = [round(x, 2) for x in runs]
        t.figures["atOnce"] = {"union": round(union, 2), "sum": round(summed, 2)}
        check_reports(d, bins, uids, kid_time, chat_time, union, summed)
        across_restart(d, bins, uids, kid_time)
        t.check(d.proc.poll() is None, f"blockd ran through the whole suite (exit {d.proc.poll()}); its log:\n{d.log()}")
    finally:
        for p in procs:
            stop(p, 2)
t.figures["seconds"] = round(time.monotonic() - began, 1)
t.done()
