#!/usr/bin/env python3
"""§8 under abuse: CONNS garbage, over-long, half-open and slow-loris connections (in
waves of at most 40 at a time, under the server's limit of 64) while a normal client keeps
asking `status` on its own connection. Checks: every normal request is answered (OK, within
the 10 s client timeout), garbage lines get ERR lines, over-long lines get ERR line-too-long,
the daemon survives, and its open file descriptors return to the baseline afterwards.
Then the slot finding: LORIS connections that trickle one byte now and then (never a full line)
are not closed by the idle timeout, so once they hold every slot a new client gets `busy`.
Usage: torture/abuse.py BLOCKD CONNS [SEED] [--loris-slots]
"""
import random, socket, sys, threading, time
from lib import Sandbox, Tally, fd_count, wait_for

blockd, conns = sys.argv[1], int(sys.argv[2])
seed = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3].isdigit() else int(time.time())
loris_slots = "--loris-slots" in sys.argv
rng = random.Random(seed)
t = Tally("abuse")
t.figures.update(seed=seed, connections=conns)
counts = dict(garbage=0, garbageErrLines=0, overlong=0, lineTooLong=0, halfOpen=0, slowLoris=0, busy=0,
              normalAnswers=0, normalErrors=0)
lock = threading.Lock()
sb = Sandbox(blockd, prefix="bd-ab-")


def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(sb.socket)
    return s


def read_all(s, limit=1 << 20):
    data = b""
    try:
        while len(data) < limit:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    return data


def bump(key, n=1):
    with lock:
        counts[key] += n


def garbage(r):
    s = connect()
    lines = r.randrange(1, 20)
    payload = b"".join(bytes(r.randrange(256) for _ in range(r.randrange(0, 200))).replace(b"\n", b" ") + b"\n"
                       for _ in range(lines))
    s.sendall(payload)
    data = b""
    try:
        while data.count(b"\n") < lines and not data.startswith(b"ERR busy"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    s.close()
    got = data.count(b"\n")
    if data.startswith(b"ERR busy"):
        bump("busy")
        return
    bump("garbage")
    bump("garbageErrLines", sum(1 for l in data.split(b"\n") if l.startswith(b"ERR ") or l.startswith(b"OK ")))
    t.check(got == lines, f"garbage: {lines} lines sent, {got} answers")


def overlong(r):
    s = connect()
    try:
        s.sendall(b"status " + b"x" * r.randrange(4097, 20000))
    except OSError:
        pass
    data = read_all(s)
    s.close()
    if data.startswith(b"ERR busy"):
        bump("busy")
        return
    bump("overlong")
    ok = data.startswith(b"ERR line-too-long")
    bump("lineTooLong", ok)
    t.check(ok, f"over-long line answered {data[:60]!r}")


def half_open(r):
    s = connect()
    choice = r.randrange(3)
    if choice == 0:
        s.sendall(b"sta")                # a partial line, then gone
    elif choice == 1:
        s.sendall(b"status\nstatus\n")  # requests, then gone without reading (reset)
    s.close()
    bump("halfOpen")


def slow_loris(r):
    s = connect()
    for ch in b"status":
        time.sleep(r.random() * 0.3)
        try:
            s.sendall(bytes([ch]))
        except OSError:
            break
    s.close()
    bump("slowLoris")


stop = threading.Event()
latencies = []


def normal():
    c = sb.client(timeout=10)
    while not stop.is_set():
        t0 = time.perf_counter()
        try:
            r = c.request("status")
        except OSError as e:
            bump("normalErrors")
            t.check(False, f"normal client: {e}")
            c = sb.client(timeout=10)
            continue
        latencies.append(time.perf_counter() - t0)
        if r.startswith("OK "):
            bump("normalAnswers")
        else:
            bump("normalErrors")
            t.check(False, f"normal client got {r[:100]}")
        time.sleep(0.005)
    c.close()


try:
    sb.start()
    time.sleep(3)
    baseline = fd_count(sb.pid)
    # FINDING half-close: a client that sends its requests and then shuts down its writing
    # side (nc -N, socat, `printf 'status\n' | ...`) must still get one answer per request.
    s = connect()
    s.sendall(b"hello\nstatus\n")
    s.shutdown(socket.SHUT_WR)
    got = read_all(s).count(b"\n")
    s.close()
    t.figures["answersAfterHalfClose"] = got
    t.check(got == 2, f"half-close: 2 requests sent, then shutdown(SHUT_WR): {got} answers (each request must be "
                      "answered before the connection closes)")
    normal_thread = threading.Thread(target=normal)
    normal_thread.start()
    kinds = [garbage, overlong, half_open, slow_loris]
    done = 0
    while done < conns:
        wave = min(40, conns - done)
        threads = [threading.Thread(target=lambda f, r: (f(r)), args=(rng.choice(kinds), random.Random(rng.random())))
                   for _ in range(wave)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        done += wave
    stop.set()
    normal_thread.join()
    t.check(sb.proc.poll() is None, "blockd died under abuse")
    wait_for(lambda: fd_count(sb.pid) <= baseline, 15, 0.1)
    after = fd_count(sb.pid)
    t.check(after <= baseline, f"file descriptors: {after} after the abuse, {baseline} before")
    t.check(counts["normalAnswers"] > 0 and counts["normalErrors"] == 0, "the normal client stopped getting answers")
    latencies.sort()
    t.figures.update(fdBaseline=baseline, fdAfter=after, normalMaxMs=round(latencies[-1] * 1000, 1) if latencies else None,
                     normalP99Ms=round(latencies[int(len(latencies) * 0.99)] * 1000, 1) if latencies else None)
    print(f"abuse: {conns} hostile connections (seed {seed}): {counts['garbage']} garbage ({counts['garbageErrLines']} answers),"
          f" {counts['overlong']} over-long ({counts['lineTooLong']} line-too-long), {counts['halfOpen']} half-open,"
          f" {counts['slowLoris']} slow-loris, {counts['busy']} refused busy; normal client: {counts['normalAnswers']} answers,"
          f" {counts['normalErrors']} errors, p99 {t.figures['normalP99Ms']} ms, max {t.figures['normalMaxMs']} ms;"
          f" fds {baseline} before, {after} after")

    if loris_slots:
        # FINDING: a byte every few seconds keeps a connection alive forever (the idle timeout
        # counts from the last byte, not the last complete request), so 64 such connections
        # from any local user lock every other client out with `busy`.
        held = []
        for _ in range(64):
            s = connect()
            s.sendall(b"s")
            held.append(s)
        time.sleep(0.5)
        trickle_until = time.monotonic() + 65  # past the 60 s idle timeout
        while time.monotonic() < trickle_until:
            for s in held:
                try:
                    s.sendall(b"t")
                except OSError:
                    pass
            time.sleep(5)
        try:
            r = sb.client(timeout=10).request("hello")
        except OSError as e:
            r = f"error {e}"
        t.figures["freshClientWith64Loris"] = r[:60]
        print(f"slot finding: after 65 s of 64 trickling connections, a fresh client's hello got: {r[:80]}")
        t.check(r.startswith("OK "), "FINDING slow-loris slots: 64 connections trickling a byte every 5 s (never a full line) "
                                     "outlive the 60 s idle timeout and hold every slot; a new client gets " + r[:40])
        for s in held:
            s.close()
except Exception as e:
    t.check(False, f"harness: {type(e).__name__}: {e}; daemon log tail:\n{sb.read_log()[-2000:]}")
finally:
    stop.set()
    sb.close()
t.figures.update(counts)
t.done()
