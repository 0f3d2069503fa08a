"""E1 at scale: how long blockd takes to apply (and lift) a 100,000-domain selection in a
hosts file, against copying the same bytes with cp(1) and fsyncing the copy, in the same run
(bench/targets.py: hostsApply100k, hostsLift100k).

Each figure is the round trip of a `start` or `stop` request, which returns after the
daemon has rewritten the hosts file (atomic replace with fsync) and saved its state.
Usage, from the repository's root: python3 -m bench.hosts_apply BLOCKD_BINARY [DOMAINS] [ROUNDS]
"""
import json, os, statistics, subprocess, sys, time
from torture.lib import Sandbox

blockd = os.path.abspath(sys.argv[1])
count = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
sb = Sandbox(blockd, prefix="bd-hosts-")
with open(f"{sb.config_dir}/selections.d/big.conf", "w") as f:
    f.write("[Selection]\nName=big\n")
    for i in range(0, count, 1000):
        f.write("Domains=" + " ".join(f"d{j}.example.com" for j in range(i, min(i + 1000, count))) + "\n")
hosts = sb.hosts
try:
    t0 = time.perf_counter()
    sb.start(timeout=300)
    startup = time.perf_counter() - t0
    c = sb.client(timeout=300)

    def req(line):
        r = c.request(line)
        assert r.startswith("OK "), r[:200]
        return r

    block, unblock = [], []
    for _ in range(rounds):
        t = time.perf_counter(); req('start {"selections":["big"],"seconds":3600}'); block.append(time.perf_counter() - t)
        with open(hosts, "rb") as f:
            blocked_bytes = f.read()  # the file as the block left it: the baseline copies these bytes
        size = len(blocked_bytes)
        t = time.perf_counter(); req('stop {"name":"big"}'); unblock.append(time.perf_counter() - t)
    # The baseline: the same bytes (the hosts file as the block left it) copied with cp(1),
    # alone and followed by an fsync of the copy, as blockd's atomic replace fsyncs its file.
    with open(f"{sb.dir}/same-bytes", "wb") as g:
        g.write(blocked_bytes)
    copies, synced = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        subprocess.run(["cp", f"{sb.dir}/same-bytes", f"{sb.dir}/copy"], check=True)
        copies.append(time.perf_counter() - t)
        t = time.perf_counter()
        subprocess.run(["cp", f"{sb.dir}/same-bytes", f"{sb.dir}/copy-synced"], check=True)
        fd = os.open(f"{sb.dir}/copy-synced", os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
        synced.append(time.perf_counter() - t)
    med = statistics.median
    result = {"domains": count, "hostsBytes": size, "startupSeconds": round(startup, 3),
              "blockMs": round(med(block) * 1000, 1), "unblockMs": round(med(unblock) * 1000, 1),
              "cpMs": round(med(copies) * 1000, 1), "cpFsyncMs": round(med(synced) * 1000, 1)}
    result["blockVsCp"] = round(result["blockMs"] / result["cpMs"], 2)
    result["blockVsCpFsync"] = round(result["blockMs"] / result["cpFsyncMs"], 2)
    result["unblockVsCpFsync"] = round(result["unblockMs"] / result["cpFsyncMs"], 2)
    print(f"{count} domains, hosts file {size / 1e6:.1f} MB (daemon start with the selection loaded: {startup:.2f} s)")
    print(f"  block (apply section): median {result['blockMs']} ms   unblock: {result['unblockMs']} ms   (each of {rounds} rounds: "
          + ", ".join(f"{b * 1000:.0f}/{u * 1000:.0f}" for b, u in zip(block, unblock)) + ")")
    print(f"  cp of the same bytes: median {result['cpMs']} ms; cp and fsync of the copy: {result['cpFsyncMs']} ms")
    print(f"  block / (cp + fsync): {result['blockVsCpFsync']}x   unblock / (cp + fsync): {result['unblockVsCpFsync']}x")
    print("JSON " + json.dumps(result))
finally:
    sb.close()
