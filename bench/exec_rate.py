#!/usr/bin/env python3
"""E2's promise that unrelated programs pay nothing: the exec rate of /bin/true with the app
shield inactive and active (a blocked app's inode marked with FAN_OPEN_EXEC_PERM), measured
in alternating rounds in the same run. Needs root (fanotify).
Usage: bench/exec_rate.py BLOCKD_BINARY [EXECS_PER_ROUND] [ROUNDS]
"""
import json, os, shutil, socket, statistics, subprocess, sys, tempfile, time

blockd = os.path.abspath(sys.argv[1])
n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 4
work = tempfile.mkdtemp(prefix="bd-exec-")
app = f"{work}/blockd-bench-app"
shutil.copy("/bin/sleep", app)
os.makedirs(f"{work}/etc/selections.d")
open(f"{work}/etc/selections.d/benchapp.conf", "w").write(f"[Selection]\nName=benchapp\nApps={app}\n")
open(f"{work}/hosts", "w").write("127.0.0.1 localhost\n")
sock = f"{work}/s.sock"
proc = subprocess.Popen([blockd, "--socket", sock, "--state-dir", f"{work}/state", "--config-dir", f"{work}/etc", "--policy-root", f"{work}/root",
                         "--hosts-file", f"{work}/hosts", "--log-target", "console", "--firewall", "no", "--cut-sockets", "no"],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    while not os.path.exists(sock):
        time.sleep(0.01)
    c = socket.socket(socket.AF_UNIX)
    c.connect(sock)
    f = c.makefile("rwb")

    def req(line):
        f.write(line.encode() + b"\n"); f.flush()
        r = f.readline().decode()
        assert r.startswith("OK "), r
        return r

    def rate():
        t = time.perf_counter()
        for _ in range(n):
            pid = os.posix_spawn("/bin/true", ["/bin/true"], {})
            os.waitpid(pid, 0)
        return n / (time.perf_counter() - t)

    status = json.loads(req("status")[3:])
    inactive, active = [], []
    for _ in range(rounds):
        inactive.append(rate())
        req('start {"selections":["benchapp"],"seconds":3600}')
        try:
            os.posix_spawn(app, [app, "0"], {})
            sys.exit("the blocked app was launched: the shield is not active")
        except PermissionError:
            pass
        active.append(rate())
        req('stop {"name":"benchapp"}')
    mode = json.loads(req("status")[3:])["enforcement"].get("apps")
    result = {"execsPerRound": n, "rounds": rounds, "shieldMode": mode,
              "inactivePerSecond": round(statistics.median(inactive)), "activePerSecond": round(statistics.median(active))}
    result["activeVsInactive"] = round(result["activePerSecond"] / result["inactivePerSecond"], 3)
    print(f"exec of /bin/true, {n} per round, {rounds} rounds each (shield mode {mode}):")
    print(f"  shield inactive: {result['inactivePerSecond']}/s   active: {result['activePerSecond']}/s   ratio {result['activeVsInactive']}")
    print("JSON " + json.dumps(result))
finally:
    proc.terminate()
    proc.wait()
    shutil.rmtree(work)
