"""Measures T9 precision: how late a timed unlock reaches journald after its deadline, and
status round trips per second on one connection.

Runs blockd next to a real systemd-journald in a private mount+PID namespace (as root; /run
is a tmpfs there, so the host is untouched). Each block ends at an exact instant given with
"until"; lateness = the unlock entry's __REALTIME_TIMESTAMP (journald's receive time) minus
that instant. Usage, from the repository's root:
python3 -m bench.unlock_latency BLOCKD_BINARY [RUNS] [--all-layers]

--all-layers: every enforcement layer on, as on a desktop: a Chromium, a Chrome and a Firefox
under the policy root (so each change rewrites their policy files), the nftables firewall and
socket cutting in a private network namespace as well.
"""
import json, os, socket, subprocess, sys, tempfile, time
from datetime import datetime, timezone
from torture.lib import wait_for

args = [a for a in sys.argv[1:] if a != "--all-layers"]
all_layers = "--all-layers" in sys.argv
blockd = os.path.abspath(args[0])
runs = int(args[1]) if len(args) > 1 else 20
work = tempfile.mkdtemp(prefix="bd-bench-")
journal = os.path.join(work, "journal")
os.makedirs(journal)
sock = os.path.join(work, "s.sock")
script = f"""set -e
mount -t tmpfs tmpfs /run
mkdir -p /run/systemd/journal /run/log/journal
mount --bind '{journal}' /run/log/journal
if [ -d /var/log/journal ]; then mount -t tmpfs tmpfs /var/log/journal; fi
/lib/systemd/systemd-journald &
for i in $(seq 200); do [ -S /run/systemd/journal/socket ] && break; sleep 0.05; done
{"ip link set lo up" if all_layers else ""}
exec '{blockd}' --socket '{sock}' --state-dir '{work}/state' --config-dir '{work}/etc' --policy-root '{work}/root' --hosts-file '{work}/hosts' --log-target journal {"--firewall yes --cut-sockets yes" if all_layers else "--firewall no --cut-sockets no"}
"""
if all_layers:
    for d in ("etc/chromium", "etc/opt/chrome", "etc/firefox/policies"):
        os.makedirs(os.path.join(work, "root", d))
open(os.path.join(work, "run.sh"), "w").write(script)
os.makedirs(os.path.join(work, "etc"))
open(os.path.join(work, "etc", "blockd.conf"), "w").write(f"[Daemon]\nMaxActivities={runs + 10}\n")
open(os.path.join(work, "hosts"), "w").write("127.0.0.1 localhost\n")
proc = subprocess.Popen(["unshare", "--mount", "--pid", "--fork", "--kill-child", "--propagation", "private"] + (["--net"] if all_layers else []) + [
                         "/bin/sh", os.path.join(work, "run.sh")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    wait_for(lambda: os.path.exists(sock), 15, 0.05, what=f"blockd's socket {sock} beside the private journald")
    c = socket.socket(socket.AF_UNIX)
    c.connect(sock)
    f = c.makefile("rwb")

    def req(line):
        f.write(line.encode() + b"\n"); f.flush()
        return f.readline().decode()

    assert req("hello").startswith("OK ")
    # Round trips: status and hello on one connection.
    rates = {}
    for cmd, n in (("hello", 5000), ("status", 5000)):
        t = time.perf_counter()
        for _ in range(n):
            req(cmd)
        rates[cmd] = n / (time.perf_counter() - t)
    # Deadlines 150 ms apart, starting 2 s from now, at whole milliseconds.
    base = time.time() + 2
    deadlines = {}
    for i in range(runs):
        d = round(base + i * 0.15, 3)
        iso = datetime.fromtimestamp(d, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        name = f"b{i}.example.com"
        r = req("start " + json.dumps({"selections": [name], "until": iso}))
        assert r.startswith("OK "), r
        deadlines[name] = d
    def lateness():
        """ms from each deadline to its unlock entry, for the unlocks journald holds now."""
        out = subprocess.run(["journalctl", "-D", journal, "-o", "json", "--no-pager", "BLOCKD_EVENT=unlock"],
                             capture_output=True, text=True).stdout
        entries = [json.loads(line) for line in out.splitlines()]
        return [(int(e["__REALTIME_TIMESTAMP"]) / 1e6 - deadlines[e["BLOCKD_SELECTION"]]) * 1000
                for e in entries if e.get("BLOCKD_SELECTION") in deadlines]

    def every_unlock():
        x = lateness()
        return x if len(x) == runs else None

    # Every unlock entry, looked for once the last deadline has passed (journalctl run meanwhile
    # would load the machine being measured); what is there after 30 s more, if not all.
    time.sleep(max(0.0, max(deadlines.values()) - time.time()))
    late = sorted(wait_for(every_unlock, 30, 0.2) or lateness())
    def pct(p):
        return late[min(len(late) - 1, int(round(p / 100 * (len(late) - 1))))]
    print(f"unlocks measured: {len(late)} of {runs}{' (every layer on: browsers, firewall, socket cutting)' if all_layers else ''}")
    print(f"lateness deadline -> journal entry (ms): min {late[0]:.2f}  p50 {pct(50):.2f}  p99 {pct(99):.2f}  max {late[-1]:.2f}")
    print(f"round trips on one connection: hello {rates['hello']:.0f}/s, status {rates['status']:.0f}/s")
    print("JSON " + json.dumps({"unlocks": len(late), "p50Ms": round(pct(50), 2), "p99Ms": round(pct(99), 2),
                                "maxMs": round(late[-1], 2), "helloPerSecond": round(rates["hello"]),
                                "statusPerSecond": round(rates["status"]), "allLayers": all_layers}))
finally:
    proc.kill()
    proc.wait()
    subprocess.run(["rm", "-rf", work])
