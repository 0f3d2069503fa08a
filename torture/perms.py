#!/usr/bin/env python3
"""§5 with real users (root only; clients run under setpriv).
- A user outside group blockd cannot connect to the socket (mode 0660, group blockd).
- Even where the socket is opened up (0666 in the sandbox), an outsider may read but not
  modify: start and stop are refused with permission-denied.
- With BLOCKD_PRIVILEGED_TESTS=1: two throwaway members of group blockd (created here, with the
  group if it does not exist, and removed at the end): a member cannot stop another member's
  block, locked or not, and is told only that no block has that name (A1); no member (nor the creator) can stop a --lock block early, nor root one root locked;
  a member's lock binds members only, so root stops it (A1); the creator can stop their own.
- M1 with three throwaway users (and group blockd-admin, created here if missing): a member's
  request for more time under a block root set for them (A1: approval by default) waits; the asker and another plain member
  cannot approve it; a member of blockd-admin can; the grant lifts the selection for exactly
  what was granted, then it is blocked again.
Usage: torture/perms.py BLOCKD
"""
import fcntl, grp, json, os, pwd, subprocess, sys
from lib import Sandbox, Tally, wait_for

blockd = sys.argv[1]
t = Tally("perms")
CLIENT = ("import socket,sys\n"
          "s=socket.socket(socket.AF_UNIX)\n"
          "try:\n s.connect(sys.argv[1])\nexcept OSError as e:\n print('CONNECT-ERROR', e.errno); sys.exit(0)\n"
          "f=s.makefile('rwb'); f.write(sys.argv[2].encode()+b'\\n'); f.flush(); print(f.readline().decode().strip()[:4000])\n")


def as_user(user, sock, line):
    argv = ["setpriv", f"--reuid={user}"]
    pw = pwd.getpwnam(user)
    argv += [f"--regid={pw.pw_gid}", "--init-groups"]
    p = subprocess.run(argv + ["python3", "-c", CLIENT, sock, line], capture_output=True, text=True, timeout=30)
    return (p.stdout + p.stderr).strip()


def approval_round_trip(c, a, b, admin):
    """M1: ask as one user, refused to the asker and a plain member, approved by an admin."""
    # A1: a block for everyone cannot be lifted for one member; root's block for the asker asks.
    c.ok('start {"selections":["more.example.com"],"seconds":3600,"name":"ask","users":[%s]}' % json.dumps(a))
    r = as_user(a, sb.socket, 'more {"selection":"more.example.com","seconds":3,"reason":"homework"}')
    t.check(r.startswith("OK ") and '"pending"' in r, f"M1: a member's request under MoreTime=approval did not wait: {r}")
    rid = json.loads(r[3:]).get("id", "?") if r.startswith("OK ") else "?"
    for who in (a, b):
        r = as_user(who, sb.socket, "approve " + json.dumps({"id": rid}))
        t.check(r.startswith("ERR permission-denied"), f"M1: {who}, not in blockd-admin, approved a request: {r}")
    r = as_user(admin, sb.socket, "approve " + json.dumps({"id": rid}))
    t.check(r.startswith("OK ") and '"granted"' in r, f"M1: a blockd-admin member could not approve: {r}")
    blocked = lambda: {x["selection"] for x in c.ok('status {"allUsers":true}')["blocked"]}
    t.check("more.example.com" not in blocked(), "M3: the grant did not lift the selection")
    grants = c.ok("status")["grants"]
    t.check(grants and grants[0]["grantedBy"] == pwd.getpwnam(admin).pw_uid, f"M3: status does not say who granted it: {grants}")
    t.check(wait_for(lambda: "more.example.com" in blocked()), "M3: the selection was not blocked again at the grant's end")


if os.geteuid() != 0:
    print("perms: skipped (needs root to run clients as other users)")
    t.figures["skipped"] = "not root"
    t.done()

created_users, created_group, created_admin = [], False, False
sb = None
try:
    privileged = os.environ.get("BLOCKD_PRIVILEGED_TESTS") == "1"
    if privileged:
        # The machine's users and groups are shared by every suite running on it: one perms
        # run at a time creates, uses and removes them (held until this process exits).
        users_lock = open(("/run/lock" if os.path.isdir("/run/lock") else "/tmp") + "/blockd-torture-perms.lock", "w")
        fcntl.flock(users_lock, fcntl.LOCK_EX)
        try:
            grp.getgrnam("blockd")
        except KeyError:
            subprocess.run(["groupadd", "--system", "blockd"], check=True)
            created_group = True
        try:
            grp.getgrnam("blockd-admin")
        except KeyError:
            subprocess.run(["groupadd", "--system", "blockd-admin"], check=True)
            created_admin = True
        for u, groups in (("bdtort-a", "blockd"), ("bdtort-b", "blockd"), ("bdtort-c", "blockd,blockd-admin")):
            subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "-G", groups, u], check=True)
            created_users.append(u)
    sb = Sandbox(blockd, prefix="bd-pm-")
    os.chmod(sb.dir, 0o711)  # the socket's own mode decides, not the temp dir's
    sb.start()
    st = os.stat(sb.socket)
    t.check(oct(st.st_mode & 0o777) == "0o660", f"socket mode {oct(st.st_mode & 0o777)}, expected 0660")
    r = as_user("nobody", sb.socket, "status")
    t.check(r.startswith("CONNECT-ERROR 13"), f"§5: nobody (not in group blockd) connected to the 0660 socket: {r}")

    c = sb.client()
    c.ok('start {"selections":["root.example.com"],"seconds":3600,"name":"rootblock"}')
    c.ok('start {"selections":["locked.example.com"],"seconds":3600,"name":"locked","lock":true}')
    os.chmod(sb.socket, 0o666)
    r = as_user("nobody", sb.socket, "status")
    t.check(r.startswith("OK "), f"§5: an outsider who can connect may read: {r}")
    for line in ('start {"selections":["x.example.com"],"seconds":60}', 'stop {"name":"rootblock"}',
                 'schedule-add {"name":"n","window":"01:00-02:00","selections":["x.example.com"]}', "reload"):
        r = as_user("nobody", sb.socket, line)
        t.check(r.startswith("ERR permission-denied"), f"§5: nobody's {line.split()[0]} was not refused: {r}")
    os.chmod(sb.socket, 0o660)

    if privileged:
        a, b, admin = created_users
        r = as_user(a, sb.socket, 'start {"selections":["a.example.com"],"seconds":3600,"name":"a-block"}')
        t.check(r.startswith("OK "), f"§5: a member may start a block: {r}")
        # A1: a member's block is theirs alone, so to another member it is a name nobody holds.
        r = as_user(b, sb.socket, 'stop {"name":"a-block"}')
        t.check(r.startswith("ERR not-found no block named 'a-block'"), f"§5, A1: a member stopped another member's block, or was told it is theirs: {r}")
        r = as_user(b, sb.socket, 'stop {"name":"rootblock"}')
        t.check(r.startswith("ERR permission-denied"), f"§5: a member stopped root's block: {r}")
        for who in (a, b):
            r = as_user(who, sb.socket, 'stop {"name":"locked"}')
            t.check(r.startswith("ERR locked"), f"§5: {who} stopped a --lock block: {r}")
        r = as_user(a, sb.socket, 'start {"selections":["alock.example.com"],"seconds":3600,"name":"a-locked","lock":true}')
        t.check(r.startswith("OK "), f"§5: a member may start a --lock block: {r}")
        r = as_user(a, sb.socket, 'stop {"name":"a-locked"}')
        t.check(r.startswith("ERR locked"), f"§5: the creator stopped their own --lock block: {r}")
        t.check(c.request('stop {"name":"locked"}').startswith("ERR locked"), "§5: root stopped root's own --lock block")
        # A1: a member's lock binds members, not root.
        r = as_user(b, sb.socket, 'stop {"name":"a-locked"}')
        t.check(r.startswith("ERR not-found no block named 'a-locked'"), f"A1: another member stopped a member's --lock block, or was told it is locked: {r}")
        r = as_user(a, sb.socket, 'stop {"name":"a-block"}')
        t.check(r.startswith("OK "), f"§5: the creator may stop their own block: {r}")
        # U1: a member's own blocks are theirs alone, so root sees them in everyone's view.
        names = {x["name"] for x in c.ok('status {"allUsers":true}')["activities"]}
        t.check(names == {"rootblock", "locked", "a-locked"}, f"activities after the permission checks: {names}")
        r = c.request('stop {"name":"a-locked"}')
        t.check(r.startswith("OK "), f"A1: root could not stop a member's --lock block: {r}")
        approval_round_trip(c, a, b, admin)
    else:
        print("perms: member checks skipped (set BLOCKD_PRIVILEGED_TESTS=1 to create throwaway users)")
        t.figures["memberChecks"] = "skipped"
    c.close()
    print(f"perms: {t.passed} checks passed, {t.failed} failed")
except Exception as e:
    t.check(False, f"harness: {type(e).__name__}: {e}; daemon log tail:\n{sb.read_log()[-2000:] if sb else ''}")
finally:
    if sb:
        sb.close()
    for u in created_users:
        subprocess.run(["userdel", u], check=False)
    if created_group:
        subprocess.run(["groupdel", "blockd"], check=False)
    if created_admin:
        subprocess.run(["groupdel", "blockd-admin"], check=False)
t.done()
