"""Shared by the torture scripts: the bench sandbox (temp dir, own --hosts-file, loopback Unix
socket only) and a pass/fail tally. Each script ends with one line
`RESULT <suite> <passed> <failed> <figures as JSON>` that torture/run sums up."""
import json, os, sys
from datetime import datetime
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from sandbox import Sandbox, Client, fd_count  # noqa: E402,F401

BEGIN = b"# BEGIN blockd:"
END = b"# END blockd\n"


class Tally:
    def __init__(self, suite):
        self.suite = suite
        self.passed = 0
        self.failed = 0
        self.figures = {}
        self.failures = []

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            if len(self.failures) < 20:
                self.failures.append(what)
            print(f"FAIL [{self.suite}] {what}", flush=True)
        return ok

    def cannot_run(self, why):
        """Ends a suite that cannot run here: failed with BLOCKD_PRIVILEGED_TESTS=1, else skipped
        with the reason."""
        if os.environ.get("BLOCKD_PRIVILEGED_TESTS") == "1":
            self.check(False, f"cannot run: {why}")
        else:
            print(f"{self.suite}: skipped ({why}; set BLOCKD_PRIVILEGED_TESTS=1 as root to run it)")
            self.figures["skipped"] = why
        self.done()

    def done(self):
        print(f"RESULT {self.suite} {self.passed} {self.failed} {json.dumps(self.figures)}", flush=True)
        sys.exit(1 if self.failed else 0)


def outside_section(data):
    """The hosts file's bytes with blockd's managed section cut out."""
    b = data.find(BEGIN)
    if b < 0:
        return data
    e = data.find(END, b)
    return data[:b] + (data[e + len(END):] if e >= 0 else b"")


def section_domains(data):
    b = data.find(BEGIN)
    if b < 0:
        return set()
    e = data.find(END, b)
    out = set()
    for line in data[b:e].split(b"\n")[1:]:
        if line.startswith(b"0.0.0.0 "):
            out.add(line[8:].decode())
    return out


def iso(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
