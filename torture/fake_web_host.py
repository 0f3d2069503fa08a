#!/usr/bin/env python3
"""A stand-in for blockd's native-messaging host com.blockd.host, for torture/browser_ext.py: it
speaks the browsers' framing (a 32-bit length in native byte order, then UTF-8 JSON, both ways)
and the extension's side of the contract in docs/BROWSER.md, without blockd behind it.

Everything happens in the directory $BLOCKD_FAKE_HOST_DIR, which the test writes and reads:
  received.jsonl  each message from the extension, one JSON line {"pid", "origin", "message"}
  state.json      what to send as the state ({"blocked": [...], ...}; "connected": true is
                  added unless it says false): after hello, after each site message, and
                  whenever the file changes
  warning.json    a warning to send once; renamed to warning.json.sent when sent
A "more" message is answered as blockd answers a request that waits for an administrator
({"type": "more", "ok": true, "answer": "asked", ...}), and a second later with the approval
as a "more-time" event."""
import json, os, struct, sys, threading, time

DIR = os.environ.get("BLOCKD_FAKE_HOST_DIR") or sys.exit("BLOCKD_FAKE_HOST_DIR is not set")
ORIGIN = next((a for a in sys.argv[1:] if "://" in a or "@" in a), sys.argv[1] if len(sys.argv) > 1 else "")
out_lock = threading.Lock()
asked = [0]


def log(message):
    line = json.dumps({"pid": os.getpid(), "origin": ORIGIN, "message": message}) + "\n"
    with open(os.path.join(DIR, "received.jsonl"), "a") as f:
        f.write(line)


def read():
    head = sys.stdin.buffer.read(4)
    if len(head) < 4:
        return None
    (n,) = struct.unpack("=I", head)
    return json.loads(sys.stdin.buffer.read(n))


def write(message):
    data = json.dumps(message).encode()
    with out_lock:
        sys.stdout.buffer.write(struct.pack("=I", len(data)) + data)
        sys.stdout.buffer.flush()


def state():
    try:
        with open(os.path.join(DIR, "state.json")) as f:
            body = json.load(f)
    except (OSError, ValueError):
        body = {"blocked": []}
    body.setdefault("connected", True)  # a state.json with "connected": false stands for blockd gone
    return dict(body, type="state")


def watch():
    """Sends the state again when state.json changes, and a waiting warning."""
    seen = None
    while True:
        try:
            stamp = os.stat(os.path.join(DIR, "state.json")).st_mtime_ns
        except OSError:
            stamp = None
        if stamp != seen:
            if seen is not None:
                write(state())
            seen = stamp
        warning = os.path.join(DIR, "warning.json")
        if os.path.exists(warning):
            try:
                with open(warning) as f:
                    body = json.load(f)
                os.rename(warning, warning + ".sent")
                write(dict(body, type="warning"))
            except (OSError, ValueError):
                pass
        time.sleep(0.1)


def approve(selection, request_id):
    time.sleep(1)
    write({"type": "more-time", "event": {"event": "more-time", "kind": "granted", "activity": request_id,
                                          "selection": selection, "until": None, "message": "granted"},
           "text": f"Your request for {selection} was approved"})


threading.Thread(target=watch, daemon=True).start()
while (m := read()) is not None:
    log(m)
    kind = m.get("type")
    if kind in ("hello", "site", "refresh"):
        write(state())
    elif kind == "more":
        asked[0] += 1
        request_id = f"m{os.getpid()}x{asked[0]}"
        write({"type": "more", "ok": True, "answer": "asked", "id": request_id, "until": None,
               "text": f"Asked for more time for {m.get('selection')}"})
        threading.Thread(target=approve, args=(m.get("selection"), request_id), daemon=True).start()
