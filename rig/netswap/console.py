"""Parse a guest's serial console: the lines our guest tools print and the
kernel messages that matter. Works incrementally (live, for the watchdog) and
on a saved log."""

import re

from . import kmsg

MARK = re.compile(r"(NETSWAP|swapstress|vmwatch|udpsink): (\S+)(.*)$")
SQUEEZE = re.compile(r"netswap_squeeze: (hold|done) (.*)$")
KV = re.compile(r"([A-Za-z_][\w.]*)=(\S*)")
# a kernel record's prefix on the console (CONFIG_PRINTK_TIME)
KTIME = re.compile(r"\[ *\d+\.\d{6}\] ")


class Unsplicer:
    """Undo the one way the serial console mixes lines. The kernel writes a
    record to the UART whole, under the port lock, but a line a guest program
    wrote to the tty leaves in FIFO-sized pieces, so a record can land inside
    it: "NETSWAP: ktap ok 1[   21.17] nbd0: ...", then "7 name" on the next
    line. A timestamp that does not start the line marks that: the record is
    given out as a line of its own and the fragment before it is kept, to be
    joined to the start of the next line that is not itself a record."""

    def __init__(self):
        self.pending = None

    def push(self, line):
        if self.pending is not None:
            if KTIME.match(line):
                return [line]
            line, self.pending = self.pending + line, None
        m = KTIME.search(line, 1)
        if m and not KTIME.match(line):
            self.pending = line[:m.start()]
            return [line[m.start():]]
        return [line]

    def flush(self):
        rest, self.pending = self.pending, None
        return [] if rest is None else [rest]


def kv(text):
    return {k: v for k, v in KV.findall(text)}


def num(v):
    try:
        return int(v)
    except (TypeError, ValueError):
        try:
            return float(v)
        except (TypeError, ValueError):
            return None


class ConsoleState:
    """Accumulates what the console has said so far."""

    def __init__(self):
        self.phase = "boot"
        self.phases = {}          # phase -> host time first seen
        self.info = {}
        self.errors = []
        self.ktap = []            # KTAP lines of a guest test script (guest/lib.sh)
        self.exit_rc = None
        self.done_rc = None
        self.start = None         # swapstress start fields
        self.progress = None      # last swapstress progress fields
        self.progress_count = 0
        self.work = 0             # verified + filled: the progress measure
        self.last_work_time = None
        self.last_work_guest_t = None
        self.result = None        # swapstress done fields
        self.corrupt_lines = []
        self.vm_begin = None
        self.vm_end = None
        self.vm_last = None
        self.vm_ticks = []
        self.klog = kmsg.KernelLog()
        self.udp_received = None
        self.squeeze = []         # netswap_squeeze fixture reports (kernel lines)
        self.lines = 0
        self.kernel_seen = False
        self.unsplice = Unsplicer()

    def feed(self, line, now=None):
        """Feed one console line; `now` is the host's monotonic time."""
        r = None
        for logical in self.unsplice.push(line):
            r = self._feed(logical, now)
        return r

    def flush(self, now=None):
        """The console ended: a fragment still waiting is a line."""
        for logical in self.unsplice.flush():
            self._feed(logical, now)

    def _feed(self, line, now):
        self.lines += 1
        if not self.kernel_seen and ("Linux version" in line or line.startswith("[    ")):
            self.kernel_seen = True
        self.klog.feed(line)
        q = SQUEEZE.search(line)
        if q:
            f = {k: num(v) for k, v in kv(q.group(2)).items()}
            f["kind"] = q.group(1)
            f["kt"] = kmsg.printk_time(line)
            self.squeeze.append(f)
            return None
        m = MARK.search(line)
        if not m:
            return None
        who, what, rest = m.group(1), m.group(2), m.group(3)
        fields = kv(rest)
        if who == "NETSWAP":
            if what.startswith("phase="):
                self.phase = what.split("=", 1)[1]
                self.phases.setdefault(self.phase, now)
                if self.phase == "run":
                    self.last_work_time = now
                if self.phase == "done":
                    self.done_rc = num(fields.get("rc"))
            elif what == "info":
                self.info.update(fields)
            elif what == "squeeze" and rest.strip().startswith("begin"):
                self.phases.setdefault("squeeze", now)     # the hold starts now
            elif what == "ktap":
                self.ktap.append(rest.strip())
            elif what == "error":
                self.errors.append(rest.strip())
            elif what.startswith("exit"):
                self.exit_rc = num(kv(what + rest).get("rc"))
            elif what == "progress":
                self._work(num(fields.get("n")) or 0, now, num(fields.get("t")))
        elif who == "swapstress":
            if what == "start":
                self.start = fields
            elif what == "progress":
                self.progress = fields
                self.progress_count += 1
                # every page written once: the workload only reads back now
                total = (num((self.start or {}).get("procs")) or 0) * \
                    (num((self.start or {}).get("pages_per_proc")) or 0)
                if total and (num(fields.get("filled")) or 0) >= total:
                    self.phases.setdefault("verify", now)
                w = (num(fields.get("verified")) or 0) + (num(fields.get("filled")) or 0)
                self._work(w, now, num(fields.get("t")))
            elif what == "corrupt":
                self.corrupt_lines.append(line.strip())
            elif what == "done":
                self.result = fields
        elif who == "udpsink":
            fields = kv(what + rest)
            if "received" in fields:
                self.udp_received = num(fields["received"])
        elif who == "vmwatch":
            fields = kv(what + rest)
            tag = fields.get("tag")
            if tag == "begin":
                self.vm_begin = fields
            elif tag == "end":
                self.vm_end = fields
            else:
                self.vm_ticks.append(fields)
            self.vm_last = fields
        return who, what, fields

    @property
    def kernel(self):
        """Count of every kind of kernel report (0 for kinds not seen)."""
        return {k.name: self.klog.count(k.name) for k in kmsg.KINDS}

    def _work(self, w, now, guest_t):
        if w > self.work or self.last_work_time is None:
            self.work = max(w, self.work)
            self.last_work_time = now
            self.last_work_guest_t = guest_t

    def vm_delta(self, key):
        """Counter increase from the begin snapshot to the last one seen."""
        if not self.vm_begin or not self.vm_last:
            return None
        a, b = num(self.vm_begin.get(key)), num(self.vm_last.get(key))
        if a is None or b is None:
            return None
        return b - a


def squeeze_summary(reports):
    """Writebacks completed and packets received while free memory was held
    below the GFP_ATOMIC floor: in all, and in the second half of the hold
    (after whatever the rings held when it began was used up)."""
    holds = [r for r in reports if r.get("kind") == "hold"]
    done = [r for r in reports if r.get("kind") == "done"]
    if not holds:
        return None
    last = done[-1] if done else holds[-1]
    span = last.get("t") or 0
    late = [r for r in holds + done if (r.get("t") or 0) > span / 2]
    return {
        "squeeze_seconds": span,
        # printk times of the hold: its first line is printed 1 s (t=1) into it
        "squeeze_begin_kt": (round(holds[0]["kt"] - holds[0]["t"], 6)
                             if holds[0].get("kt") is not None and holds[0].get("t") is not None
                             else holds[0].get("kt")),
        "squeeze_end_kt": done[-1].get("kt") if done else None,
        "squeeze_written": (done[-1] if done else holds[-1]).get("written"),
        "squeeze_rx_packets": (done[-1] if done else holds[-1]).get("rx_packets"),
        "squeeze_written_late": sum(r.get("d_written") or 0 for r in late),
        "squeeze_rx_late": sum(r.get("d_rx") or 0 for r in late),
        "squeeze_min_free": min(r.get("free") or 0 for r in holds),
        "squeeze_below_ms": last.get("below_ms"),
        # [printk time, ms below the floor so far] of every second of the hold
        "squeeze_below_by_kt": [[r.get("kt"), r.get("below_ms")] for r in holds + done
                                if r.get("kt") is not None and r.get("below_ms") is not None],
        "squeeze_written_below": last.get("written_below"),
        "squeeze_rx_below": last.get("rx_below"),
    }


def parse_log(text):
    st = ConsoleState()
    for line in text.splitlines():
        st.feed(line)
    st.flush()
    return st
