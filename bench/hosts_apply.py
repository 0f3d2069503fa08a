#!/usr/bin/env python3
"""E1 at scale: how long blockd takes to apply (and lift) a 100,000-domain selection in a
hosts file, against copying a file of the same size with cp(1) in the same run.

Each figure is the round trip of a `start` or `stop` request, which returns after the
daemon has rewritten the hosts file (atomic replace with fsync) and saved its state.
Usage: bench/hosts_apply.py BLOCKD_BINARY [DOMAINS] [ROUNDS]
"""
import json, os, socket, statistics, subprocess, sys, tempfile, time

blockd = os.path.abspath(sys.argv[1])
count = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
work = tempfile.mkdtemp(prefix="bd-hosts-")
os.makedirs(f"{work}/etc/selections.d")
with open(f"{work}/etc/selections.d/big.conf", "w") as f:
    f.write("[Selection]\nName=big\n")
    for i in range(0, count, 1000):
        f.write("Domains=" + " ".join(f"d{j}.example.com" for j in range(i, min(i + 1000, count))) + "\n")
hosts = f"{work}/hosts"
with open(hosts, "w") as f:
    f.write("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
sock = f"{work}/s.sock"
proc = subprocess.Popen([blockd, "--socket", sock, "--state-dir", f"{work}/state", "--config-dir", f"{work}/etc", "--policy-root", f"{work}/root",
                         "--hosts-file", hosts, "--log-target", "console", "--firewall", "no", "--cut-sockets", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    t0 = time.perf_counter()
    while not os.path.exists(sock):
        if proc.poll() is not None:
            sys.exit("blockd exited")
        time.sleep(0.01)
    c = socket.socket(socket.AF_UNIX)
    for _ in range(1000):
        try:
            c.connect(sock)
            break
        except OSError:
            time.sleep(0.01)
    startup = time.perf_counter() - t0
    f = c.makefile("rwb")

    def req(line):
        f.write(line.encode() + b"\n"); f.flush()
        r = f.readline().decode()
        assert r.startswith("OK "), r[:200]
        return r

    block, unblock = [], []
    for _ in range(rounds):
        t = time.perf_counter(); req('start {"selections":["big"],"seconds":3600}'); block.append(time.perf_counter() - t)
        size = os.path.getsize(hosts)
        t = time.perf_counter(); req('stop {"name":"big"}'); unblock.append(time.perf_counter() - t)
    copies = []
    with open(f"{work}/same-size", "wb") as g:
        g.write(os.urandom(size))
    for _ in range(rounds):
        t = time.perf_counter()
        subprocess.run(["cp", f"{work}/same-size", f"{work}/copy"], check=True)
        copies.append(time.perf_counter() - t)
    med = statistics.median
    result = {"domains": count, "hostsBytes": size, "startupSeconds": round(startup, 3),
              "blockMs": round(med(block) * 1000, 1), "unblockMs": round(med(unblock) * 1000, 1),
              "cpMs": round(med(copies) * 1000, 1)}
    result["blockVsCp"] = round(result["blockMs"] / result["cpMs"], 2)
    print(f"{count} domains, hosts file {size / 1e6:.1f} MB (daemon start with the selection loaded: {startup:.2f} s)")
    print(f"  block (apply section): median {result['blockMs']} ms   unblock: {result['unblockMs']} ms")
    print(f"  cp of a same-size file: median {result['cpMs']} ms   ratio block/cp: {result['blockVsCp']}x")
    print("JSON " + json.dumps(result))
finally:
    proc.terminate()
    proc.wait()
    subprocess.run(["rm", "-rf", work])
