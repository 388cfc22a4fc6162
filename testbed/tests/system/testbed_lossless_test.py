"""System tests of `rocehil testbed up --lossless`: the switches' forwarding processes with
per-class queues, WRED/ECN by queue depth, PFC sent and obeyed, and the PFC watchdog, held to
what tshark sees on the wire, to the switches' counters file read with this file's own copy of
its layout, and to what the soft provider's QPs report in run.json.

Each scenario brings up its own small fabric (4 hosts in 2 racks, 2 spines: h1 and h2 behind l1,
h3 and h4 behind l2) and takes it down: counters start at zero, and `up` takes two seconds.
The incast is h2 and h3 into h1 (rank 0): h2 at its 1 Gbit/s NIC, h3 through a 400 Mbit/s
uplink, so l1's port to h1 is oversubscribed 1.4:1 and PFC travels back over the spine.

The hosts keep ConnectX's default trust map (priority = DSCP >> 3), so DSCP 26 (rocehil's default
traffic_class 106) is priority 3; the switches run SONiC's map with 26:3 added (--switch), as a
fabric team aligns the two. DSCP 0 is lossy on both.

Usage: python3 testbed_lossless_test.py PATH/TO/rocehil   (as root)
"""
import glob
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest

ROCEHIL = None
HERE = os.path.dirname(os.path.abspath(__file__))
TRAFFIC = os.path.join(HERE, "traffic.py")

# The counters file (testbed/src/dataplane/shared_counters.hpp, layout version 2): a 64-byte
# header, then per port a 16-byte name and little-endian uint64s: 7 port counters, 8 queues of 7,
# 8 priorities of 11, 8 WRED ramps of 16 seen and 16 marked.
HEADER = struct.Struct("<8sIIII40x")
QUEUE = ["packets", "bytes", "dropped", "dropped_bytes", "ecn_marked", "depth_bytes",
         "peak_depth_bytes"]
PRIORITY = ["pfc_sent", "pfc_received", "xon_sent", "xon_received", "paused_ns", "ingress_bytes",
            "peak_ingress_bytes", "lossless_drops", "storms_detected", "storms_restored",
            "storm_drops"]
PORT_VALUES = 7 + 8 * 7 + 8 * 11 + 8 * 32 + 1


def read_counters(path):
    """{ifname: {"queue": [8 dicts], "priority": [8 dicts], "wred": [8 (seen, marked)]}}"""
    with open(path, "rb") as f:
        data = f.read()
    magic, version, header_size, port_size, ports = HEADER.unpack_from(data)
    assert magic == b"RHILCNTS" and version == 3 and port_size == 16 + 8 * PORT_VALUES, \
        (magic, version, port_size)
    out = {}
    for p in range(ports):
        at = header_size + p * port_size
        name = data[at:at + 16].split(b"\0")[0].decode()
        v = struct.unpack_from(f"<{PORT_VALUES}Q", data, at + 16)
        queues = [dict(zip(QUEUE, v[7 + q * 7:14 + q * 7])) for q in range(8)]
        base = 7 + 56
        priorities = [dict(zip(PRIORITY, v[base + q * 11:base + q * 11 + 11])) for q in range(8)]
        base += 88
        wred = [(v[base + q * 32:base + q * 32 + 16], v[base + q * 32 + 16:base + q * 32 + 32])
                for q in range(8)]
        out[name] = {"ifindex": v[0], "queue": queues, "priority": priorities, "wred": wred,
                     "socket_drops": v[base + 8 * 32]}
    return out


def rocehil(*args, check=True, timeout=300):
    result = subprocess.run([ROCEHIL, *args], capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(
            f"rocehil {' '.join(args)} exited {result.returncode}: {result.stderr}{result.stdout}")
    return result


# What `testbed up --lossless` gives its soft hosts
# (harness/cli/src/testbed/testbed_host_settings.hpp): PFC on the switches' lossless priorities,
# trust dscp, DCQCN's timer stretched.
STRETCHED = {"roce_rp.rpg_time_reset": "3000", "roce_rp.rpg_byte_reset": "0", "pfc": "3,4",
             "trust": "dscp"}


def show_host_settings(fabric):
    """{name: value} of STRETCHED's settings on the incast's hosts, as `rocehil settings show`
    reads them through each host's agent, the way a run's agent reads them; hosts that disagree
    give a set of values, which never equals STRETCHED."""
    out = json.loads(rocehil("settings", "show", "-i", f"{fabric.dir}/inventory.yaml", "--hosts",
                             "h1,h2,h3", "--json", *STRETCHED).stdout)
    values = {}
    for v in out["values"]:
        values.setdefault(v["name"], set()).add(v["value"])
    return {k: (v.pop() if len(v) == 1 else v) for k, v in values.items()}


SUITE = """schema_version: 1
name: lossless
defaults:
  provider: soft
tests:
  - name: incast
    workload: incast
    hosts: h1,h2,h3
    size: {size}
    iterations: {iterations}
    qps: {qps}
    traffic_class: {tclass}
    thresholds:
      - errors == 0
"""


class Fabric:
    """A --lossless testbed, its switches' counters and its hosts' NICs."""

    def __init__(self, tag, *knobs, routing="static", host_mbps=None):
        self.dir = tempfile.mkdtemp(prefix=f"rocehil-tb-lossless-{tag}-")
        self.id = f"ll{tag}{os.getpid() % 100:02d}"[:6]
        args = ["testbed", "up", "--lossless", "--dir", self.dir, "--id", self.id, "--routing",
                routing, "--switch", "switch.dscp_to_tc=26:3", "--json", "--quiet"]
        if host_mbps is not None:
            args += ["--host-mbps", str(host_mbps)]
        for k in knobs:
            args += ["--switch", k]
        rocehil(*args)

    def netns(self, name):
        return f"rocehil-{self.id}-{name}"

    def nic(self, host):
        return f"{self.id}-nic0"

    def counters(self):
        """{switch: {ifname: ...}} for every switch."""
        out = {}
        for switch in ("l1", "l2", "s1", "s2"):
            out[switch] = read_counters(f"/run/rocehil/{self.netns(switch)}.counters")
        return out

    def losses_outside_the_switches(self):
        """{where: count} of what the kernel dropped on the way, which no switch counter sees:
        veths' drops (a far end's full backlog), the switches' packet sockets (ss's d), the
        hosts' UDP receive buffers. Reported with each incast, so that retransmits with no
        switch drop can be placed."""
        out = {}
        for name in ("h1", "h2", "h3", "h4", "l1", "l2", "s1", "s2"):
            ns = self.netns(name)
            links = json.loads(subprocess.run(["ip", "-n", ns, "-s", "-j", "link"],
                                              capture_output=True, text=True).stdout or "[]")
            for link in links:
                if not link["ifname"].startswith(self.id):
                    continue
                stats = link.get("stats64", {})
                # A host NIC's rx drops count the MAC control and LLDP frames no protocol takes.
                for side in ("tx",) if name.startswith("h") else ("tx", "rx"):
                    if stats.get(side, {}).get("dropped", 0):
                        out[f"{name} {link['ifname']} {side}"] = stats[side]["dropped"]
            if not name.startswith("h"):
                sockets = subprocess.run(["ip", "netns", "exec", ns, "ss", "-0", "-a", "-m", "-n"],
                                         capture_output=True, text=True).stdout
                dropped = sum(int(d) for d in re.findall(r",d(\d+)\)", sockets))
                if dropped:
                    out[f"{name} packet sockets"] = dropped
            else:
                snmp = subprocess.run(["ip", "netns", "exec", ns, "cat", "/proc/net/snmp"],
                                      capture_output=True, text=True).stdout.splitlines()
                udp = [line.split()[1:] for line in snmp if line.startswith("Udp:")]
                if len(udp) == 2 and int(dict(zip(*udp)).get("RcvbufErrors", 0)):
                    out[f"{name} UDP receive buffer"] = int(dict(zip(*udp))["RcvbufErrors"])
        return out

    def tx_dropped(self, name, ifname):
        """What a veth refused to hand its far end (that end's backlog full): the kernel drops
        it before any capture there sees it, and counts it on this end."""
        out = subprocess.run(["ip", "-n", self.netns(name), "-s", "-j", "link", "show", "dev",
                              ifname], capture_output=True, text=True).stdout
        links = json.loads(out or "[]")
        return links[0].get("stats64", {}).get("tx", {}).get("dropped", 0) if links else 0

    def down(self):
        rocehil("testbed", "down", "--dir", self.dir, "--quiet", check=False)
        shutil.rmtree(self.dir, ignore_errors=True)

    def run_suite(self, tclass, workdir, size, iterations, qps=1, sets=()):
        path = os.path.join(workdir, "suite.yaml")
        with open(path, "w") as f:
            f.write(SUITE.format(tclass=tclass, size=size, iterations=iterations, qps=qps))
        args = [ROCEHIL, "run", path, "-i", f"{self.dir}/inventory.yaml"]
        for s in sets:
            args += ["--set", s]
        result = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=workdir)
        runs = sorted(glob.glob(os.path.join(workdir, "reports", "*", "run.json")))
        if not runs:
            raise AssertionError(f"no run.json: {result.stdout}{result.stderr}")
        case = json.load(open(runs[-1]))["cases"][0]
        return case, case["attempts"][-1]["metrics"]


class Capture:
    """tcpdump on a host's NIC, every MAC control frame (PFC, PAUSE) it receives. Immediate
    mode: a frame is handed over as it arrives, not when a ring block fills or times out (1 s),
    so the last frames before the capture stops are in the file."""

    def __init__(self, fabric, host, workdir):
        self.file = os.path.join(workdir, f"{host}.pcap")
        self.process = subprocess.Popen(
            ["ip", "netns", "exec", fabric.netns(host), "tcpdump", "-i", fabric.nic(host), "-Q",
             "in", "-U", "--immediate-mode", "-B", "8192", "-w", self.file, "ether", "proto",
             "0x8808"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # tcpdump says "listening on" once its socket is open.
        line = self.process.stderr.readline().decode()
        assert "listening" in line, line

    def frames(self):
        """[(enable vector, [quanta of 8 priorities])] of the PFC frames, by tshark."""
        time.sleep(0.3)
        self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=10)
        # tcpdump says on exit what its socket could not hold ("N packets dropped by kernel").
        said = self.process.stderr.read().decode()
        self.process.stderr.close()
        dropped = re.search(r"(\d+) packets? dropped by kernel", said)
        self.dropped = int(dropped.group(1)) if dropped else None
        out = subprocess.run(
            ["tshark", "-r", self.file, "-Y", "macc.opcode == 0x0101", "-T", "fields", "-e",
             "macc.cbfc.enbv", *[a for i in range(8) for a in ("-e", f"macc.cbfc.pause_time.c{i}")]],
            capture_output=True, text=True, check=True).stdout
        frames = []
        for line in out.splitlines():
            fields = line.split("\t")
            frames.append((int(fields[0], 0), [int(x) for x in fields[1:9]]))
        return frames


def total(counters, side, field, priority=None):
    n = 0
    for ports in counters.values():
        for port in ports.values():
            rows = port[side] if priority is None else [port[side][priority]]
            n += sum(r[field] for r in rows)
    return n


class LosslessIncast(unittest.TestCase):
    """2:1 incast on a lossless class with ECN off, with ECN on, and on a lossy class."""

    results = {}

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="rocehil-lossless-run-")

    def tearDown(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def incast(self, tag, tclass, *knobs, size="16M", iterations=3, qps=1, sets=(),
               must_pass=True, host_mbps=None):
        fabric = Fabric(tag, *knobs, host_mbps=host_mbps)
        try:
            captures = {h: Capture(fabric, h, self.work) for h in ("h2", "h3")}
            settings = show_host_settings(fabric)
            to_h2 = f"{fabric.id}-h2"
            refused_before = fabric.tx_dropped("l1", to_h2)
            case, metrics = fabric.run_suite(tclass, self.work, size, iterations, qps, sets)
            # The switches' counts just before the captures stop and just after bracket what
            # the captures can have seen: a frame sent in between is in one count, not the other.
            time.sleep(0.3)
            self.counted_before = fabric.counters()
            frames = {h: c.frames() for h, c in captures.items()}
            self.capture_drops = {h: c.dropped for h, c in captures.items()}
            self.refused_to_h2 = fabric.tx_dropped("l1", to_h2) - refused_before
            counters = fabric.counters()
            elsewhere = fabric.losses_outside_the_switches()
            # Each port's counters name the ifIndex its namespace gives it, the one IF-MIB (and
            # so every poller) keys the port by: the queue table is served under it.
            for switch, ports in counters.items():
                links = json.loads(subprocess.run(
                    ["ip", "netns", "exec", fabric.netns(switch), "ip", "-j", "link", "show"],
                    capture_output=True, text=True, check=True).stdout)
                kernel = {l["ifname"]: l["ifindex"] for l in links}
                self.assertEqual({n: p["ifindex"] for n, p in ports.items()},
                                 {n: kernel[n] for n in ports}, switch)
        finally:
            fabric.down()
        self.fabric_id = fabric.id
        self.elsewhere = elsewhere
        print(f"\n[{tag}] tclass {tclass} {knobs}: busbw {metrics.get('busbw_gbps')}, "
              f"PFC XOFF sent {total(counters, 'priority', 'pfc_sent')}, "
              f"ECN marked {total(counters, 'queue', 'ecn_marked')}, "
              f"drops {total(counters, 'queue', 'dropped')}, cnps {metrics.get('cnps')}, "
              f"retransmits {metrics.get('retransmits')}, timeouts {metrics.get('timeouts')}, "
              f"frames seen by tshark {[len(f) for f in frames.values()]}, lossless drops "
              f"{total(counters, 'priority', 'lossless_drops')}, lost outside the switches' "
              f"queues {elsewhere or 'nowhere'}", flush=True)
        if must_pass:
            self.assertEqual(case["outcome"], "pass", case["summary"])
        self.assertEqual(settings, STRETCHED, "the hosts' DCQCN timers are not the testbed's")
        return metrics, frames, counters

    def assert_no_lossless_drop(self, counters):
        for switch, ports in counters.items():
            for name, port in ports.items():
                for p in (3, 4):
                    self.assertEqual(port["priority"][p]["lossless_drops"], 0, (switch, name, p))
                    self.assertEqual(port["queue"][p]["dropped"], 0, (switch, name, p))
                # Nor did the kernel drop a frame before the switch could read it.
                self.assertEqual(port["socket_drops"], 0, (switch, name))

    def assert_frames_match_counters(self, frames, counters):
        """What tshark saw arrive at h2 is what l1 counted out of its port to h2, between its
        counts just before and just after the capture stopped."""
        def sent(snapshot):
            port = snapshot["l1"][f"{self.fabric_id}-h2"]
            return sum(port["priority"][p]["pfc_sent"] + port["priority"][p]["xon_sent"]
                       for p in range(8))
        # A frame l1's veth could not hand h2 (h2's backlog full on a busy CPU) is lost before
        # any capture, and counted on l1's end: one run of ten saw 878 of 913.
        why = (f"l1 counted {sent(self.counted_before)} before the capture stopped and "
               f"{sent(counters)} after, its veth refused {self.refused_to_h2} frames to h2; "
               f"tcpdump's own drops: {self.capture_drops}")
        # What tcpdump's socket could not hold it says on exit, and those frames did arrive.
        self.assertGreaterEqual(len(frames["h2"]) + (self.capture_drops["h2"] or 0),
                                sent(self.counted_before) - self.refused_to_h2, why)
        self.assertLessEqual(len(frames["h2"]), sent(counters), why)

    def test_lossless_ecn_off_pauses_senders_and_drops_nothing(self):
        metrics, frames, counters = self.incast("a", 106, "switch.ecn_enable=0")
        self.assertGreater(len(frames["h2"]), 0, "the leaf sent no PFC to a sender")
        for enable, quanta in frames["h2"] + frames["h3"]:
            self.assertEqual(enable, 1 << 3, "PFC for priority 3 only")
            self.assertEqual(quanta[:3] + quanta[4:], [0] * 7)
        self.assert_frames_match_counters(frames, counters)
        self.assertGreater(metrics["nic_rx_pause[3]"], 0, "the senders saw no PFC")
        self.assertGreater(metrics["nic_pause_duration_us[3]"], 0, "the senders never paused")
        self.assert_no_lossless_drop(counters)
        self.assertEqual(self.elsewhere, {}, "the kernel dropped frames on the way")
        self.assertEqual(total(counters, "queue", "ecn_marked"), 0)
        self.assertEqual(metrics["errors"], 0)
        # Nothing lost, so nothing sent twice: no NAK, no ACK timeout, no retransmission.
        self.assertEqual(metrics["retransmits"], 0)
        self.assertEqual(metrics["timeouts"], 0)
        LosslessIncast.results["ecn_off_pfc"] = total(counters, "priority", "pfc_sent")

    def test_lossless_ecn_on_marks_and_needs_less_pfc(self):
        metrics, frames, counters = self.incast("b", 106)
        self.assert_no_lossless_drop(counters)
        self.assertGreater(total(counters, "queue", "ecn_marked"), 0)
        self.assertGreater(metrics["cnps"], 0, "no CNP came back to the senders")
        self.assertEqual(metrics["errors"], 0)
        LosslessIncast.results["ecn_on_pfc"] = total(counters, "priority", "pfc_sent")
        self.check_wred(counters)
        # DCQCN holds the queues near Kmin..Kmax, under XOFF, most of the time: measured 128 to
        # 304 XOFF against 1,599 to 2,073 with ECN off (docs/rehearsal.md); with the switches'
        # scheduling group raised (they pause sooner, so ECN off needs fewer), 21 to 353 against
        # 480 to 2,369, and once 529 against 1,048. Three quarters is a bound a working reaction
        # point meets, and a missing one (as many XOFF as ECN off) fails.
        if "ecn_off_pfc" not in LosslessIncast.results:
            self.skipTest("the ECN-off incast did not run: nothing to compare with")
        self.assertLess(LosslessIncast.results["ecn_on_pfc"],
                        LosslessIncast.results["ecn_off_pfc"] * 3 / 4,
                        "ECN on did not spare PFC: the senders did not slow on CNPs")

    def check_wred(self, counters):
        """Each sixteenth of the ramp: marked ~ Binomial(seen, p) with p from the knobs (defaults:
        Kmin 50 KB, Kmax 200 KB, Pmax 20%). p varies by at most Pmax/16 inside a sixteenth, so
        the bound is 4 standard deviations at the middle's p plus half that spread times seen."""
        pmax = 0.20
        seen_total = marked_total = 0
        for ports in counters.values():
            for port in ports.values():
                for q in (3, 4):
                    seen, marked = port["wred"][q]
                    for b in range(16):
                        if seen[b] == 0:
                            continue
                        p = pmax * (b + 0.5) / 16
                        bound = 4 * (seen[b] * p * (1 - p)) ** 0.5 + seen[b] * pmax / 32 + 1
                        self.assertLessEqual(abs(marked[b] - seen[b] * p), bound,
                                             (b, seen[b], marked[b]))
                        seen_total += seen[b]
                        marked_total += marked[b]
        print(f"WRED ramp: {seen_total} ECN-capable packets met it, {marked_total} marked",
              flush=True)
        self.assertGreater(seen_total, 100, "the queues never stood between Kmin and Kmax")

    def test_lossy_class_drops_and_sends_no_pfc(self):
        # DSCP 0, ECT(0): class 1, lossy; a short incast is enough to overflow it.
        metrics, frames, counters = self.incast("c", 2, size="1M", iterations=30)
        self.assertEqual(frames["h2"], [])
        self.assertEqual(frames["h3"], [])
        self.assertEqual(total(counters, "priority", "pfc_sent"), 0)
        self.assertGreater(sum(p["queue"][1]["dropped"] for p in counters["l1"].values()), 0,
                           "an oversubscribed lossy queue dropped nothing")
        self.assertGreater(metrics["retransmits"], 0)

    def test_hosts_not_aligned_with_the_switches_ignore_their_pfc_and_the_leaf_drops(self):
        """The hosts' own QoS, as `run --set` gives it to the soft provider: PFC on priority 4
        only, or trust pcp (every QP on priority 0), while the switches pause priority 3 (up
        gave the hosts PFC on 3,4). The
        frames arrive and are counted; no QP stops; past XOFF and its headroom the leaf drops
        lossless packets, the defect a misaligned fabric shows. 8 QPs a sender: one QP's window
        fits in the headroom (25 ms of the fastest port) even unpaused; aligned, 8 drop nothing.
        Host links at 300 Mbit/s: two soft senders on a shared 2-core machine reach twice that
        at any scheduling, so the receiver's port is oversubscribed whatever the CPUs give them
        (at 1 Gbit/s one run delivered 0.42 Gbit/s in all, and its leaf dropped nothing)."""
        slow = 300
        metrics, frames, counters = self.incast("h", 106, "switch.ecn_enable=0", qps=8,
                                                host_mbps=slow)
        self.assert_no_lossless_drop(counters)
        metrics, frames, counters = self.incast("f", 106, "switch.ecn_enable=0", qps=8,
                                                sets=["pfc=4"], must_pass=False, host_mbps=slow)
        self.assertGreater(len(frames["h2"]), 0, "the leaf sent no PFC to a sender")
        self.assertGreater(metrics["nic_rx_pause[3]"], 0, "the PFC did not reach the senders")
        self.assertEqual(metrics["nic_pause_duration_us[3]"], 0, "a host paused without PFC on")
        self.assertGreater(total(counters, "priority", "lossless_drops"), 0)
        metrics, frames, counters = self.incast("g", 106, "switch.ecn_enable=0", qps=8,
                                                sets=["trust=pcp"], must_pass=False,
                                                host_mbps=slow)
        self.assertGreater(metrics["nic_rx_pause[3]"], 0)
        self.assertGreater(total(counters, "priority", "lossless_drops"), 0)

    @classmethod
    def tearDownClass(cls):
        if "ecn_off_pfc" in cls.results and "ecn_on_pfc" in cls.results:
            print(f"PFC XOFF frames: ECN off {cls.results['ecn_off_pfc']}, "
                  f"ECN on {cls.results['ecn_on_pfc']}", flush=True)


def send_xoff(netns, ifname, seconds, interval_s=0.005):
    """A host NIC stuck sending XOFF for priority 3: the PFC frame by hand, from a raw socket in
    the host's namespace (independent of rocehil's own frame builder)."""
    code = f"""
import socket, struct, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(({ifname!r}, 0))
mac = s.getsockname()[4]
frame = bytes.fromhex("0180c2000001") + mac + struct.pack("!HHH", 0x8808, 0x0101, 1 << 3)
frame += struct.pack("!8H", 0, 0, 0, 0xffff, 0, 0, 0, 0)
frame += bytes(60 - len(frame))
end = time.monotonic() + {seconds}
n = 0
while time.monotonic() < end:
    s.send(frame); n += 1
    time.sleep({interval_s})
print(n)
"""
    return subprocess.Popen(["ip", "netns", "exec", netns, sys.executable, "-c", code],
                            stdout=subprocess.PIPE, text=True)


class Watchdog(unittest.TestCase):
    def test_storm_is_detected_dropped_and_restored(self):
        fabric = Fabric("d", "switch.pfc_watchdog_detection_ms=200",
                        "switch.pfc_watchdog_restoration_ms=200")
        try:
            h1_port = f"{fabric.id}-h1"
            # Priority-3 traffic into h1 keeps l1's queue to it non-empty while h1 pauses it.
            receiver = subprocess.Popen(
                ["ip", "netns", "exec", fabric.netns("h1"), sys.executable, TRAFFIC, "recv",
                 "198.18.1.11", "3000"], stdout=subprocess.PIPE, text=True)
            assert json.loads(receiver.stdout.readline())["ready"]
            storm = send_xoff(fabric.netns("h1"), fabric.nic("h1"), 1.5)
            sender = subprocess.Popen(
                ["ip", "netns", "exec", fabric.netns("h2"), sys.executable, TRAFFIC, "send",
                 "198.18.1.12", "198.18.1.11", "50000", "2500", "1000", "0x68", "1000"],
                stdout=subprocess.PIPE, text=True)
            detected_at = None
            start = time.monotonic()
            while storm.poll() is None:
                port = read_counters(f"/run/rocehil/{fabric.netns('l1')}.counters")[h1_port]
                if detected_at is None and port["priority"][3]["storms_detected"] > 0:
                    detected_at = time.monotonic() - start
                time.sleep(0.01)
            frames_sent = int(storm.stdout.read())
            sender.wait(timeout=60)
            time.sleep(1.0)  # past the restoration time, with no PFC
            port = read_counters(f"/run/rocehil/{fabric.netns('l1')}.counters")[h1_port]
            receiver.kill()
            receiver.wait()
            with open(os.path.join(fabric.dir, "run", f"{fabric.netns('l1')}.switchd.log")) as f:
                log = f.read()
        finally:
            fabric.down()
        prio = port["priority"][3]
        print(f"\nstorm: {frames_sent} XOFF frames from h1, detected {detected_at} s after the "
              f"first, {prio['storm_drops']} packets dropped, restored {prio['storms_restored']}",
              flush=True)
        self.assertGreaterEqual(prio["pfc_received"], frames_sent * 0.9)
        self.assertEqual(prio["storms_detected"], 1)
        self.assertIsNotNone(detected_at)
        # Never before its detection time (the queue must have been stuck that long).
        self.assertGreaterEqual(detected_at, 0.2 - 0.02)
        self.assertGreater(prio["storm_drops"], 0)
        self.assertEqual(prio["storms_restored"], 1)
        self.assertIn("PFC storm on", log)
        self.assertEqual(prio["lossless_drops"], 0, "storm drops are the watchdog's, not a defect")


def vtysh(fabric, switch, daemon, command):
    """FRR's own answer, through the switch's vty sockets."""
    out = subprocess.run(["vtysh", "--vty_socket", f"/run/rocehil/{fabric.netns(switch)}.frr",
                          "-d", daemon, "-c", command],
                         capture_output=True, text=True, check=True, timeout=30).stdout
    return json.loads(out)


def run_flap(fabric, work, ack_timeout, thresholds=(), qps=4):
    """A 6 s bw case h1 -> h3 (rack 1 to rack 2, `qps` QPs on DSCP 26) while l1-s1 goes down at
    2 s and up at 4 s: `rocehil run`'s result and the case's last attempt in run.json."""
    suite = os.path.join(work, "flap.yaml")
    with open(suite, "w") as f:
        f.write("schema_version: 1\nname: flap\ndefaults: {provider: soft}\n"
                "tests:\n  - name: flap\n    workload: bw\n    hosts: h1,h3\n"
                f"    qps: {qps}\n    duration_s: 6\n    traffic_class: 106\n"
                f"    ack_timeout: {ack_timeout}\n    events:\n"
                "      - {at_s: 2, action: link_down, link: l1-s1}\n"
                "      - {at_s: 4, action: link_up, link: l1-s1}\n")
        if thresholds:
            f.write("    thresholds:\n" + "".join(f"      - {t}\n" for t in thresholds))
    r = subprocess.run([ROCEHIL, "run", suite, "-i", f"{fabric.dir}/inventory.yaml"],
                       capture_output=True, text=True, timeout=180, cwd=work)
    [path] = glob.glob(os.path.join(work, "reports", "*", "run.json"))
    with open(path) as f:
        return r, json.load(f)["cases"][0]["attempts"][-1]


def rack1_next_hops(fabric):
    """The far leaf's (l2's) next hops to rack 1, as zebra has them."""
    routes = vtysh(fabric, "l2", "zebra", "show ip route 198.18.1.0/24 json")
    return sorted(h["ip"] for r in routes.get("198.18.1.0/24", []) for h in r["nexthops"]
                  if h.get("active"))


def wait_until(predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


class Routed(unittest.TestCase):
    def test_bgp_routes_the_dataplane_around_a_dead_uplink(self):
        fabric = Fabric("e", routing="bgp")
        work = tempfile.mkdtemp(prefix="rocehil-lossless-bgp-")
        try:
            def ping():
                return subprocess.run(
                    ["ip", "netns", "exec", fabric.netns("h1"), "ping", "-c", "5", "-i", "0.2",
                     "-W", "1", "198.18.2.11"], capture_output=True, text=True).stdout

            self.assertIn(" 0% packet loss", ping())
            both = rack1_next_hops(fabric)
            self.assertEqual(len(both), 2, both)  # ECMP over s1 and s2
            before = fabric.counters()["l1"][f"{fabric.id}-s1"]["queue"]
            rocehil("testbed", "link", "l1-s1", "down", "--dir", fabric.dir)
            time.sleep(1.0)  # BFD: 300 ms
            out = ping()
            after = fabric.counters()["l1"]
            self.assertIn(" 0% packet loss", out)
            # Everything after the failure left l1 through s2, and the far leaf knows it.
            self.assertEqual(after[f"{fabric.id}-s1"]["queue"], before)
            self.assertGreater(sum(q["packets"] for q in after[f"{fabric.id}-s2"]["queue"]), 0)
            self.assertEqual(len(rack1_next_hops(fabric)), 1, rack1_next_hops(fabric))
            rocehil("testbed", "link", "l1-s1", "up", "--dir", fabric.dir)
            self.assertTrue(wait_until(lambda: rack1_next_hops(fabric) == both, 30),
                            rack1_next_hops(fabric))

            # A bw case between the racks while the uplink goes down and up again: the switches'
            # forwarding follows the FIB BFD and BGP move, and no QP ends in error. The QPs wait
            # 268 ms for an ACK (ack_timeout 16; NCCL's jobs wait 1-4 s): what was queued for the
            # dead link is resent within 7 x that, however late a loaded machine reroutes (at 67
            # ms, two CIs in a row ran out of retries).
            r, attempt = run_flap(fabric, work, ack_timeout=16)
            events = attempt["raw"]["fabric_events"]["events"]
            said = r.stdout[-3000:] + r.stderr[-3000:]
            self.assertIsNone(attempt.get("error"), said)
            self.assertEqual(r.returncode, 0, said)
            self.assertEqual([(e["action"], e.get("ok")) for e in events],
                             [("link_down", True), ("link_up", True)], (events, said))
            # What was queued for the dead link when it went down is lost, as on any switch:
            # resent by the QPs, within their retry budget.
            print(f"\nbw through l1-s1 down and up: {attempt['metrics'].get('busbw_gbps')} "
                  f"Gbit/s, retransmits {attempt['metrics'].get('retransmits')}", flush=True)
            # Lossless drops are reported here, not asserted: while routes move, a leaf process
            # that the loaded machine deschedules can send XOFF after the sender's headroom is
            # spent (2,381 and 149 in two runs beside a CI). The incast scenarios above hold them
            # to 0; this one is about routing.
            lossless_drops = {(switch, name): port["priority"][p]["lossless_drops"]
                              for switch, ports in fabric.counters().items()
                              for name, port in ports.items() for p in (3, 4)
                              if port["priority"][p]["lossless_drops"]}
            print(f"lossless drops during the flap (reported): {lossless_drops}", flush=True)
            self.check_timeline(attempt, events)
        finally:
            fabric.down()
            shutil.rmtree(work, ignore_errors=True)

    def test_static_routes_do_not_reroute_and_the_failover_fails_naming_the_stalled_qp(self):
        """The same flap with the routes `up` wrote once: the spine whose link to l1 went down
        still routes rack 1 through it, so what is hashed there is lost until the link is back.
        The QPs wait as NCCL's do (ack_timeout 20, 4.3 s: no QP gives up in 2 s); a QP whose
        ACKs were hashed there waits for its timeout while the other QPs carry the sender's
        rate, and the stall threshold of the plan's failover case (suites/qualification.yaml,
        tc10) fails, naming that QP. 8 QPs: that
        none of their packets or ACKs is hashed through s1 has odds of 1 in 256 at most."""
        fabric = Fabric("s")
        work = tempfile.mkdtemp(prefix="rocehil-lossless-static-")
        try:
            r, attempt = run_flap(fabric, work, ack_timeout=20, qps=8,
                                  thresholds=("max_stall_ms < 1000", "recovery_ms < 2000"))
        finally:
            fabric.down()
            shutil.rmtree(work, ignore_errors=True)
        said = r.stdout[-3000:] + r.stderr[-3000:]
        self.assertIsNone(attempt.get("error"), said)
        self.assertEqual(r.returncode, 1, said)
        graded = {t["threshold"]: t for t in attempt["grade"]["thresholds"]}
        stall = graded["max_stall_ms < 1000"]
        print(f"\nstatic routes through the flap: longest stall "
              f"{attempt['metrics']['max_stall_ms']:.0f} ms ({stall['detail']}), recovery "
              f"{attempt['metrics']['recovery_ms']:.0f} ms", flush=True)
        self.assertEqual(stall["verdict"], "fail", graded)
        # The QP whose ACKs went by s1, named: the sender's total kept moving on the other 7.
        qps = {q["qpn"]: q for q in attempt["raw"]["traffic"]["client"]["results"]["per_qp"]}
        named = re.search(r"h1: QP (0x[0-9a-f]+) to h3", stall["detail"])
        self.assertTrue(named, stall)
        self.assertAlmostEqual(qps[int(named.group(1), 16)]["stall_us"] / 1e3,
                               attempt["metrics"]["max_stall_ms"], places=6)

    def check_timeline(self, attempt, events):
        """max_stall_ms and recovery_ms are what this file's own reading of the sender's
        timeline in run.json gives, and of its QPs' longest waits, against the events' times
        run.json records."""
        senders = attempt["raw"]["timeline"]["senders"]
        self.assertEqual(len(senders), 1, senders)  # h1, the bw client
        t, b = senders[0]["t_us"], senders[0]["bytes"]
        self.assertGreater(len(t), 300, "fewer samples than 6 s at 10 ms")
        qps = attempt["raw"]["traffic"]["client"]["results"]["per_qp"]
        self.assertTrue(all("stall_us" in q for q in qps), qps)
        stall = max(longest_stall(t, b), max(q["stall_us"] / 1e3 for q in qps))
        self.assertAlmostEqual(attempt["metrics"]["max_stall_ms"], stall, places=6)
        worst = max(recovery(t, b, senders[0]["start_ns"], e["started_ns"]) for e in events)
        self.assertAlmostEqual(attempt["metrics"]["recovery_ms"], worst, places=6)
        print(f"timeline: {len(t)} samples, longest stall {stall:.0f} ms, recovery after the "
              f"link's events {worst:.0f} ms", flush=True)


def bytes_at(t, b, x):
    if x <= t[0]:
        return b[0]
    if x >= t[-1]:
        return b[-1]
    i = next(k for k in range(len(t)) if t[k] > x)
    return b[i] if t[i] == t[i - 1] else b[i - 1] + (b[i] - b[i - 1]) * (x - t[i - 1]) / (t[i] - t[i - 1])


def longest_stall(t, b):
    """The longest run of samples with the same byte count after the first byte, in ms."""
    first = next(i for i in range(len(b)) if b[i] > b[0])
    best, since = 0.0, first
    for i in range(first + 1, len(b)):
        if b[i] > b[i - 1] or i == len(b) - 1:
            until = i - 1 if b[i] > b[i - 1] else i
            best = max(best, (t[until] - t[since]) / 1e3)
            if b[i] > b[i - 1]:
                since = i
    return best


def recovery(t, b, start_ns, event_ns):
    """From the event to the start of the first 100 ms (beginning at the event or a sample) that
    carried 90% of the rate of the second before; to the end when none did."""
    first = next(i for i in range(len(b)) if b[i] > b[0])
    e = (event_ns - start_ns) / 1e3
    began = t[first - 1]
    frm = max(began, e - 1e6)
    need = 0.9 * (bytes_at(t, b, e) - bytes_at(t, b, frm)) / (e - frm) * 1e5
    for s in [e] + [x for x in t if x > e]:
        if s + 1e5 > t[-1]:
            break
        if bytes_at(t, b, s + 1e5) - bytes_at(t, b, s) >= need:
            return (s - e) / 1e3
    return (t[-1] - e) / 1e3


if __name__ == "__main__":
    ROCEHIL = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
