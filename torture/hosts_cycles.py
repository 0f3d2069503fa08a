#!/usr/bin/env python3
"""E1 under churn: CYCLES block/unblock cycles through the real daemon on a sandbox hosts file,
with user edits interleaved (in place and by rename, CRLF lines, bytes that are not UTF-8, a
missing final newline, lines removed; now and then the user deletes blockd's section while a
block is active, which the daemon must repair without losing the user's other edits).
After every step: the bytes outside the section are exactly the user's; the section holds the
blocked domain while blocked; after an unblock the file is byte-identical to the user's.
Usage: torture/hosts_cycles.py BLOCKD CYCLES [SEED]
"""
import os, random, sys, time
from lib import BEGIN, END, Sandbox, Tally, outside_section, section_domains, wait_for

blockd, cycles = sys.argv[1], int(sys.argv[2])
seed = int(sys.argv[3]) if len(sys.argv) > 3 else int(time.time())
rng = random.Random(seed)
t = Tally("hosts")
t.figures.update(seed=seed, cycles=cycles)
counts = dict(edits=0, renames=0, inPlace=0, sectionDeletions=0, repairs=0)
sb = Sandbox(blockd, prefix="bd-hc-")
user = open(sb.hosts, "rb").read()   # what the user's part must be, byte for byte
added = []


def write_file(data):
    if rng.random() < 0.5:
        tmp = sb.hosts + ".edit~"
        with open(tmp, "wb") as f:
            f.write(data)
        os.rename(tmp, sb.hosts)
        counts["renames"] += 1
    else:
        with open(sb.hosts, "r+b") as f:
            f.write(data)
            f.truncate()
        counts["inPlace"] += 1


def edit(i, blocked):
    global user
    kind = rng.random()
    if kind < 0.4 or not added:
        line = rng.choice([f"10.1.{i % 250}.{i % 7} host{i}\n".encode(), f"10.2.0.{i % 250} crlf{i}\r\n".encode(),
                           b"\xff\xfe not utf-8 " + str(i).encode() + b"\n", f"# comment {i}\n".encode()])
        if not user.endswith(b"\n"):
            user += b"\n"
        user += line
        added.append(line)
    elif kind < 0.7:
        line = added.pop(rng.randrange(len(added)))
        user = user.replace(line, b"", 1)
    elif kind < 0.85:
        user = user.rstrip(b"\n") if user.endswith(b"\n") else user + b"\n"
    else:
        user = user + f"10.3.0.1 tail{i}".encode()  # no final newline
    data = open(sb.hosts, "rb").read()
    if blocked:
        e = data.find(END)
        t.check(data.startswith(BEGIN) and e >= 0, f"cycle {i}: the section is not at the top while blocked")
        write_file(data[:e + len(END)] + user)
    else:
        write_file(user)
    counts["edits"] += 1


try:
    sb.start()
    c = sb.client()
    for i in range(cycles):
        dom = f"c{i % 97}.example.com"
        if rng.random() < 0.3:
            edit(i, False)
        c.ok("start {\"selections\":[\"%s\"],\"seconds\":3600,\"name\":\"cyc\"}" % dom)
        data = open(sb.hosts, "rb").read()
        t.check(outside_section(data) == user, f"cycle {i}: bytes outside the section changed after block")
        site = {dom, f"www.{dom}", f"m.{dom}"}  # W1: the name with its www. and m. forms
        t.check(section_domains(data) == site, f"cycle {i}: section holds {section_domains(data)} instead of {sorted(site)}")
        if rng.random() < 0.3:
            edit(i, True)
        if rng.random() < 0.01:
            # The user deletes the section while the block is active, and adds a line: the
            # daemon repairs the section (tamper) and keeps the line.
            user += f"10.4.0.1 during-tamper{i}\n".encode()
            write_file(user)
            counts["sectionDeletions"] += 1
            wait_for(lambda: dom in section_domains(open(sb.hosts, "rb").read()), 5, 0.01)
            data = open(sb.hosts, "rb").read()
            if t.check(dom in section_domains(data), f"cycle {i}: a deleted section was not repaired within 5 s"):
                counts["repairs"] += 1
            t.check(outside_section(data) == user, f"cycle {i}: the repair lost a user edit")
        c.ok('stop {"name":"cyc"}')
        data = open(sb.hosts, "rb").read()
        t.check(data == user, f"cycle {i}: after unblock the file differs from the user's bytes "
                              f"({len(data)} vs {len(user)} bytes)")
    c.close()
    print(f"hosts: {cycles} block/unblock cycles (seed {seed}), {counts['edits']} user edits "
          f"({counts['renames']} by rename, {counts['inPlace']} in place), {counts['sectionDeletions']} section deletions, "
          f"{counts['repairs']} repaired; final file {len(user)} bytes")
except Exception as e:
    t.check(False, f"harness: {type(e).__name__}: {e}; daemon log tail:\n{sb.read_log()[-2000:]}")
finally:
    sb.close()
t.figures.update(counts)
t.done()
