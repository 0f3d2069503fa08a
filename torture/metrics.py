#!/usr/bin/env python3
"""F3 for real, inside the private mount + network + PID namespace of torture/rig.py (root only):
blockd with --metrics-dir keeps blockd.prom, and the real prometheus-node-exporter (Debian's),
with only its textfile collector and --collector.textfile.directory pointed at that directory,
listens on 127.0.0.1:9100 of the namespace's own loopback and is scraped with curl.

A scripted sequence (two blocks started, one stopped, a per-user block of a site for `nobody`,
a shield hit from a denied launch of a test binary, Firewall=no so the `cut` part is off) must
show in the scrape as:
- every metric in docs/FLEET.md's metrics table, with the value the sequence gives, and no
  `blockd_` metric the table does not name;
- node_exporter's own `node_textfile_scrape_error 0` and a `node_textfile_mtime_seconds` for
  blockd.prom (what the fleet guide's staleness alert reads);
- the per-user block counted in `blockd_blocked_per_user`, and neither its site nor its user
  anywhere in the scrape (the file is world-readable);
- no temp file left where the collector reads.
Nothing runs outside the namespace. Without root: skipped, unless BLOCKD_PRIVILEGED_TESTS=1.
Usage: torture/metrics.py BIN_DIR"""
import os, re, shutil, subprocess, sys

from lib import Tally, sh, wait_for
from rig import Rig, enter

bindir = os.path.abspath(sys.argv[1])
t = Tally("metrics")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
enter(t, ["unshare", "ip", "curl", "prometheus-node-exporter"], "needs root for a private mount and network namespace")


def documented():
    """The metric names of docs/FLEET.md's table (`| \\`blockd_...\\` | type | ...`)."""
    with open(f"{REPO}/docs/FLEET.md") as f:
        return {m.group(1): m.group(2) for m in re.finditer(r"^\| `(blockd_[a-z_]+)` \| (gauge|counter) \|", f.read(), re.M)}


def scrape():
    """{(name, labels text): value} of the exporter's answer, and its raw text."""
    p = sh("curl", "-sf", "--max-time", "5", "http://127.0.0.1:9100/metrics", check=False)
    samples = {}
    for line in p.stdout.splitlines():
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$", line)
        if m:
            samples[(m.group(1), m.group(2) or "")] = float(m.group(3))
    return samples, p.stdout


def value(samples, name, labels=""):
    return samples.get((name, labels))


def main():
    with Rig(t, bindir, "bd-metrics-", [], {}) as rig:
        textfile = f"{rig.work}/textfile"
        os.makedirs(textfile)
        # A selection whose app is a copy of `true` in the rig's dir: its denied launch is a shield hit.
        app = f"{rig.work}/game"
        shutil.copy("/usr/bin/true", app)
        rig.configure("", {"game": f"[Selection]\nName=game\nApps={app}\n"})
        d = rig.daemon("--metrics-dir", textfile, "--firewall", "no", "--cut-sockets", "no",
                       "--policy-root", f"{rig.work}/root", "--user-tables-dir", f"{rig.work}/users")
        d.start()
        rig.spawn(["prometheus-node-exporter", "--web.listen-address=127.0.0.1:9100", "--collector.disable-defaults",
                   "--collector.textfile", f"--collector.textfile.directory={textfile}"], "node-exporter.log")
        t.check(wait_for(lambda: scrape()[0].get(("node_textfile_scrape_error", "")) is not None),
                f"node_exporter answers on 127.0.0.1:9100: {scrape()[1][-300:]}")

        d.blockc("start", "--for", "1h", "reddit")
        d.blockc("start", "--for", "1h", "--name", "evening", "youtube", "game")
        try:
            denied = f"ran (exit {subprocess.run([app]).returncode})"
        except PermissionError as e:
            denied = f"denied ({e.strerror})"
        t.check(denied.startswith("denied"), f"the blocked test binary's launch is denied: {denied}")
        d.blockc("stop", "reddit")
        d.blockc("start", "--for", "1h", "--user", "nobody", "--name", "kid-site", "secret-site.example")
        want = {
            ("blockd_info", '{version="%s"}' % d.blockc("--version").stdout.split()[-1]): 1,
            ("blockd_blocked", '{selection="youtube"}'): 1, ("blockd_blocked", '{selection="game"}'): 1,
            ("blockd_blocked_per_user", ""): 1,
            ("blockd_activities", '{kind="block"}'): 2, ("blockd_activities", '{kind="schedule"}'): 0,
            ("blockd_activities", '{kind="limit"}'): 0, ("blockd_activities_active", ""): 2,
            ("blockd_locks_total", ""): 4, ("blockd_unlocks_total", ""): 1,
            ("blockd_shield_hits_total", '{kind="denied-launch"}'): 1, ("blockd_shield_hits_total", '{kind="tamper"}'): 0,
            ("blockd_more_time_total", '{outcome="asked"}'): 0,
            ("blockd_enforcement_degraded", ""): 1, ("blockd_enforcement_part_off", '{part="cut"}'): 1,
            ("blockd_not_enforced", ""): 0,
        }

        def matches():
            samples, _ = scrape()
            return all(value(samples, *key) == v for key, v in want.items())
        ok = wait_for(matches)
        samples, text = scrape()
        for key, v in want.items():
            t.check(value(samples, *key) == v, f"{key[0]}{key[1]} is {v}: {value(samples, *key)}")
        t.check(ok, "the scrape shows the whole scripted sequence at once")
        t.check(value(samples, "blockd_last_enforcement_timestamp_seconds") is not None,
                "blockd_last_enforcement_timestamp_seconds is there after a clean apply")
        t.check(not any(name == "blockd_failures" for name, _ in samples), "no failure recorded, so no blockd_failures sample")
        t.check(value(samples, "node_textfile_scrape_error") == 0, f"node_exporter read the file without error:\n{text[-600:]}")
        t.check(value(samples, "node_textfile_mtime_seconds", '{file="%s/blockd.prom"}' % textfile) is not None
                or value(samples, "node_textfile_mtime_seconds", '{file="blockd.prom"}') is not None,
                "node_textfile_mtime_seconds has blockd.prom (the staleness alert's input)")
        docs = documented()
        scraped = {name for name, _ in samples if name.startswith("blockd_")}
        t.check(len(docs) >= 12, f"docs/FLEET.md's table lists the metrics: {sorted(docs)}")
        t.check(scraped <= set(docs), f"every blockd_ metric scraped is documented: {sorted(scraped - set(docs))}")
        t.check(set(docs) - {"blockd_failures"} <= scraped, f"every documented metric is scraped: {sorted(set(docs) - scraped)}")
        for name, kind in docs.items():
            t.check(f"# TYPE {name} {kind}\n" in text or name == "blockd_failures", f"{name} is a {kind} in the scrape")
        for secret in ("secret-site", "kid-site", "nobody", "65534"):
            t.check(secret not in text, f"the per-user block's {secret!r} is nowhere in the scrape")
        t.check(os.listdir(textfile) == ["blockd.prom"], f"no temp file left where the collector reads: {os.listdir(textfile)}")
        t.figures["blockdMetrics"] = len(scraped)
    t.done()


main()
