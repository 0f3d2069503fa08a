"""E2's promise that unrelated programs pay nothing: the exec rate of /bin/true with the app
shield inactive and active (a blocked app's inode marked with FAN_OPEN_EXEC_PERM), measured
in alternating rounds in the same run. Needs root (fanotify).
Usage, from the repository's root: python3 -m bench.exec_rate BLOCKD_BINARY [EXECS_PER_ROUND] [ROUNDS]
"""
import json, os, shutil, statistics, sys, time
from torture.lib import Sandbox

blockd = os.path.abspath(sys.argv[1])
n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 4
sb = Sandbox(blockd, prefix="bd-exec-")
app = f"{sb.dir}/blockd-bench-app"
shutil.copy("/bin/sleep", app)
open(f"{sb.config_dir}/selections.d/benchapp.conf", "w").write(f"[Selection]\nName=benchapp\nApps={app}\n")
try:
    sb.start()
    c = sb.client()

    def req(line):
        r = c.request(line)
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
    sb.close()
