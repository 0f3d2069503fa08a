#!/usr/bin/env python3
"""The fleet guide's playbook (docs/FLEET.md, docs/fleet/) run by the real ansible-playbook,
as an administrator would run it against a machine, in a throwaway systemd booted as PID 1 on
an overlay of this machine (torture/sysrig.py says how, and why that way), root only:

    python3 torture/fleet.py BIN_DIR    (BIN_DIR: blockd, blockc, blockc-agent; the NSS module is
                                         the repository's .build/nss/libnss_blockd.so.2, `make nss`)

Outside the rig, scripts/deb builds the package from BIN_DIR into a temp dir (DEB_COMPRESS=none,
as torture/deb.py does). That dir and the repository are bound read-only into the rig. Inside,
Docker's /usr/sbin/policy-rc.d and man-db's auto-update are removed from the overlay (as in
deb.py), and so is Docker's /etc/apt/apt.conf.d/docker-clean, which keeps apt from caching its
package index (each apt task of the play would build it again); the machine's accounts are
made: group kids with one member, whom the guide's schedule names (Users=@kids). Then
ansible-playbook, from ansible-core, runs docs/fleet/site.yml with --connection=local on an
inventory that puts localhost in group blockd, with the guide's own group_vars; only the
package's path is given (-e blockd_deb=).
Each a named check:
  1 the first run installs and configures: the play succeeds with changes; dpkg says
    installed; blockd.service and blockd.socket are active; /etc/blockd/blockd.conf is the
    template rendered from group_vars; `blockc selections` has the guide's selection;
    `blockc status --json --all --all-users` has the schedule from its file, for @kids (the
    member's uid), MaxActivities= from blockd.conf in force, and no failure; blockd.prom is
    in node_exporter's textfile directory, written by blockd under the shipped unit, and
    node_exporter's own /metrics serves it;
  2 the alert rules (docs/fleet/blockd.rules.yml) are YAML Prometheus loads (groups of rules,
    each with alert, expr, labels.severity, annotations.summary) and name only metrics that
    exist: blockd's in blockd.prom's TYPE lines, node_exporter's in its /metrics; FLEET.md's
    section Alerts describes exactly those rules;
  3 a second run changes nothing: the play says changed=0, blockd keeps its MainPID;
  4 a broken file pushed through the same playbook (a schedule with Window=25:00-07:00, a
    selection with a port in Domains=, a blockd.conf with KillGrace=5 without a unit) is
    refused by the validate step: the play fails at that task with blockd's message and no
    change, and nothing on the machine changed: every file under /etc/blockd byte for byte, blockd the
    same process (no restart) with the old configuration (status), no failure recorded.
Figures: the seconds of each step. The machine's /etc, systemd and network are untouched; the
rig is stopped and its scratch dir removed whatever happens (SUITE_SECONDS bounds the run).
Without root: skipped, unless BLOCKD_PRIVILEGED_TESTS=1, then failed."""
import json, os, re, shutil, subprocess, sys, tempfile, time
import suite
from lib import Tally, wait_for
from sysrig import SystemRig

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SRC, DEBS = "/blockd/src", "/blockd/debs"  # the repository and the package, in the rig
PLAYBOOK = f"{SRC}/docs/fleet/site.yml"
RULES = "docs/fleet/blockd.rules.yml"
INVENTORY = "/tmp/fleet-inventory.ini"
TEXTFILE_DIR = "/var/lib/prometheus/node-exporter"
KID, GROUP = "bdfleetkid", "kids"
SCHEDULE = "/etc/blockd/schedules.d/school-nights.conf"
SUITE_SECONDS = 240
ANSIBLE_ENV = ["env", "ANSIBLE_NOCOLOR=1", "ANSIBLE_RETRY_FILES_ENABLED=0", "ANSIBLE_LOCALHOST_WARNING=0"]

t = Tally("fleet")
bindir, NSS = suite.begin(t, ["dpkg-deb", "dpkg-gencontrol", "dpkg-shlibdeps", "strip", "ansible-playbook", "prometheus-node-exporter",
            "groupadd", "useradd"], SUITE_SECONDS, REPO)
outdir = tempfile.mkdtemp(prefix="blockd-fleet.", dir="/var/tmp")
rig = SystemRig(binds={SRC: REPO, DEBS: outdir})
deb = None


def timed(name):
    """Records the seconds of a step under figures[name]."""
    return suite.timed(t, name)


def run(*argv, **kw):
    return rig.run(*argv, check=False, **kw)


def active(unit):
    return run("systemctl", "is-active", unit).stdout.strip()


def blockc_json(*args):
    return run("blockc", *args, "--json").json()


def play(name, *extra):
    """ansible-playbook on the guide's playbook: (exit status, output, the recap's counts)."""
    with timed(f"{name} s"):
        p = run(*ANSIBLE_ENV, "ansible-playbook", "-i", INVENTORY, "--connection=local", PLAYBOOK,
                "-e", f"blockd_deb={DEBS}/{os.path.basename(deb)}", *extra, timeout=180)
    recap = re.search(r"^localhost\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", p.stdout, re.M)
    counts = dict(zip(("ok", "changed", "unreachable", "failed"), map(int, recap.groups()))) if recap else {}
    return p.rc, p.out, counts


def build():
    """The package, outside the rig, from BIN_DIR (scripts/deb; DEB_COMPRESS=none)."""
    global deb
    env = dict(os.environ, BINDIR_SRC=bindir, NSS_SRC=NSS, OUTDIR=outdir, DEB_COMPRESS="none")
    with timed("build s"):
        p = subprocess.run([f"{REPO}/scripts/deb"], env=env, capture_output=True, text=True, timeout=120)
    if not t.check(p.returncode == 0, f"scripts/deb: {p.stdout[-1500:]}{p.stderr[-1500:]}"):
        raise RuntimeError("scripts/deb failed: nothing to install")
    deb = p.stdout.strip().splitlines()[-1]
    t.figures["version"] = re.sub(r"^blockd_([^_]+)_.*", r"\1", os.path.basename(deb))


def prepare():
    """Inside the rig, before the play: services may start, and the accounts the policy names exist."""
    run("rm", "-f", "/var/lib/man-db/auto-update", "/usr/sbin/policy-rc.d", "/etc/apt/apt.conf.d/docker-clean")
    p = run("sh", "-c", f"groupadd -f {GROUP} && useradd --system --no-create-home --shell /usr/sbin/nologin -G {GROUP} {KID}")
    t.check(p.rc == 0, f"0 group {GROUP} with member {KID} in the rig: {p.out}")
    rig.write(INVENTORY, "[blockd]\nlocalhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n")
    t.check(run("test", "-e", "/usr/bin/blockd").rc != 0, "0 no blockd in the rig before the play")


def first():
    code, text, counts = play("first run")
    if not t.check(code == 0 and counts.get("failed") == 0 and counts.get("changed", 0) > 0,
                   f"1 the first run succeeds with changes: exit {code}, {counts}: {text[-3000:]}"):
        raise RuntimeError("the first run failed: nothing else can be checked")
    t.figures["firstRun"] = counts
    p = run("dpkg-query", "-W", "-f", "${Status}|${Version}", "blockd")
    t.check(p.stdout == f"install ok installed|{t.figures['version']}", f"1 dpkg: blockd is installed: {p.out}")
    t.check(active("blockd.service") == "active" and active("blockd.socket") == "active",
            f"1 blockd.service and blockd.socket are active: {active('blockd.service')}, {active('blockd.socket')}")
    conf = rig.read("/etc/blockd/blockd.conf").decode()
    body = [line for line in conf.splitlines() if not line.startswith("#")]
    t.check(body == ["[Daemon]", "MaxActivities=200", "KillGrace=5s", f"MetricsDirectory={TEXTFILE_DIR}"],
            f"1 /etc/blockd/blockd.conf is the template rendered from group_vars: {conf!r}")
    selections = blockc_json("selections")
    games = [s for s in selections if isinstance(s, dict) and s.get("name") == "games"] if isinstance(selections, list) else []
    t.check(games and "roblox.com" in games[0].get("domains", []) and "steam" in games[0].get("apps", []),
            f"1 blockc selections has the guide's selection games: {games or selections}")
    kid_uid = int(run("id", "-u", KID).stdout.strip() or -1)
    s = blockc_json("status", "--all", "--all-users")
    schedules = [a for a in s.get("activities", []) if a.get("name") == "school-nights"]
    a = schedules[0] if schedules else {}
    t.check(s.get("schema") == 1 and a.get("kind") == "schedule" and a.get("origin") == "config"
            and a.get("file") == SCHEDULE and a.get("window") == "20:30-07:00" and a.get("selections") == ["games", "youtube"],
            f"1 blockc status --json --all --all-users has the schedule school-nights from {SCHEDULE}: {a or s}")
    t.check(a.get("users") == [f"@{GROUP}"] and a.get("userIds") == [kid_uid],
            f"1 the schedule is for @{GROUP}, that is {KID} (uid {kid_uid}): {a}")
    t.check(s.get("maxActivities") == 200 and s.get("counts", {}).get("schedules") == 1 and not s.get("failures"),
            f"1 blockd.conf is in force (maxActivities 200), one schedule, no failure: "
            f"{s.get('maxActivities')}, {s.get('counts')}, {s.get('failures')}")
    prom = ""
    if wait_for(lambda: run("test", "-s", f"{TEXTFILE_DIR}/blockd.prom").rc == 0, step=0.1):
        prom = rig.read(f"{TEXTFILE_DIR}/blockd.prom").decode()
    t.check(f'blockd_info{{version="{t.figures["version"]}"}} 1' in prom and 'blockd_activities{kind="schedule"} 1' in prom,
            f"1 F3: blockd wrote {TEXTFILE_DIR}/blockd.prom under the shipped unit: {prom[:600]!r}")
    t.check(active("prometheus-node-exporter") == "active", "1 the play started node_exporter")
    get = ("python3", "-c", "import urllib.request as u; print(u.urlopen('http://127.0.0.1:9100/metrics', timeout=5).read().decode())")
    scrape = ""
    if wait_for(lambda: run(*get).rc == 0, step=0.1):
        scrape = run(*get).stdout
    textfile = [x for x in scrape.splitlines() if x.startswith("node_textfile_mtime_seconds") and "blockd.prom" in x]
    t.figures["textfile"] = textfile[0] if textfile else None
    t.check("blockd_info{" in scrape and textfile, f"1 node_exporter serves blockd.prom through its textfile collector: {textfile}")
    return prom, scrape


def rules(prom, scrape):
    families = set(re.findall(r"^# TYPE (\S+) ", prom, re.M))
    served = {m for m in re.findall(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)", scrape, re.M)}
    p = run("python3", "-c", "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))", f"{SRC}/{RULES}")
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = None
    alerts = [r for g in (doc or {}).get("groups", []) for r in g.get("rules", [])]
    shaped = [r for r in alerts if r.get("alert") and r.get("expr") and r.get("labels", {}).get("severity")
              and r.get("annotations", {}).get("summary")]
    t.check(alerts and shaped == alerts, f"2 {RULES}: groups of rules, each with alert, expr, labels.severity and "
            f"annotations.summary: {p.out[:600] if doc is None else [r.get('alert') for r in alerts]}")
    t.figures["alerts"] = [r["alert"] for r in shaped]
    named = set()
    for r in alerts:
        named |= set(re.findall(r"\b((?:blockd|node)_[a-z_]+)\b", str(r.get("expr", ""))))
    unknown = sorted(n for n in named if n not in (families if n.startswith("blockd_") else served))
    t.check(named and not unknown, f"2 the alert rules name only metrics blockd and node_exporter have: unknown {unknown}")
    with open(f"{REPO}/docs/FLEET.md") as f:
        page = f.read()
    listed = re.findall(r"^- `(Blockd[A-Za-z]+)` — ", page[page.find("\n## Alerts"):], re.M)
    t.check(listed == t.figures["alerts"], f"2 FLEET.md's Alerts section describes exactly the rules, in their order: "
            f"{listed} vs {t.figures['alerts']}")


def second():
    pid = rig.show("blockd.service", "MainPID").get("MainPID")
    code, text, counts = play("second run")
    t.check(code == 0 and counts.get("changed") == 0 and counts.get("failed") == 0,
            f"3 a second run changes nothing: exit {code}, {counts}: {text[-2000:]}")
    t.check(rig.show("blockd.service", "MainPID").get("MainPID") == pid, "3 blockd was not restarted")


def machine():
    """What a refused file must leave as it was."""
    files = run("sh", "-c", "find /etc/blockd -printf '%p %y %m\\n' | sort; find /etc/blockd -type f -exec sha256sum {} + | sort").stdout
    s = blockc_json("status", "--all", "--all-users")
    activities = [{k: v for k, v in a.items() if k not in ("active", "remaining", "start", "end")} for a in s.get("activities", [])]
    return {"files": files, "pid": rig.show("blockd.service", "MainPID").get("MainPID"), "active": active("blockd.service"),
            "activities": activities, "maxActivities": s.get("maxActivities"), "failures": blockc_json("failures")}


def broken(name, task, message, extra, file=None):
    before = machine()
    if file:
        run("mkdir", "-p", os.path.dirname(file[0]))
        rig.write(file[0], file[1])
    rig.write("/tmp/fleet-broken.json", json.dumps(extra))
    code, text, counts = play(f"broken {name}", "-e", "@/tmp/fleet-broken.json")
    failed_task = re.findall(r"^TASK \[blockd : ([^\]]+)\]", text.split("fatal:")[0], re.M)
    t.check(code != 0 and counts.get("failed") == 1 and counts.get("changed") == 0 and "failed to validate" in text
            and message in text and failed_task and failed_task[-1] == task,
            f"4 a broken {name} is refused by the validate step of '{task}', with blockd's message ({message!r}): "
            f"exit {code}, {counts}, last task {failed_task[-1:]}: {text[-2500:]}")
    after = machine()
    changed = {k: (before[k], after[k]) for k in before if before[k] != after[k]}
    t.check(not changed and after["active"] == "active",
            f"4 after the refused {name}, nothing changed: /etc/blockd byte for byte, blockd the same process "
            f"with the old configuration, no failure: {changed}")


def broken_files():
    broken("schedule", "Schedules", "'25:00' is not a time of day",
           {"blockd_schedules": [{"Name": "school-nights", "Window": "25:00-07:00", "Days": "sun-thu",
                                  "Selections": ["games", "youtube"], "Users": f"@{GROUP}"}]})
    broken("selection", "Selections", "'roblox.com:443' is not a domain",
           {"blockd_selection_files": ["/tmp/fleet-broken/games.conf"]},
           file=("/tmp/fleet-broken/games.conf", "[Selection]\nName=games\nDomains=roblox.com:443\n"))
    broken("blockd.conf", "blockd.conf", "KillGrace= must be a duration",
           {"blockd_daemon": {"MaxActivities": 200, "KillGrace": 5, "MetricsDirectory": TEXTFILE_DIR}})


started = time.monotonic()
try:
    build()
    with timed("boot s"):
        rig.boot()
    prepare()
    prom, scrape = first()
    rules(prom, scrape)
    second()
    broken_files()
except Exception as e:  # a broken rig or a timeout is a failure with its reason
    suite.fail(t, rig, e)
finally:
    suite.stop(t, rig)
    shutil.rmtree(outdir, ignore_errors=True)
    t.figures["seconds"] = round(time.monotonic() - started, 1)
t.done()
