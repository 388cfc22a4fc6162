#!/usr/bin/python3
"""System tests of `rocehil analyze`: the real binary on captures built with scapy, every count
checked twice, against what the test built (ground truth) and against tshark on the same file.

Run:  /usr/bin/python3 harness/cli/tests/system/analyze_cli_test.py BUILD/harness/rocehil [-v] [-k NAME]
(or set ROCEHIL_BIN). Needs Debian's python3-scapy (only /usr/bin/python3 has it) and tshark.
"""

import collections
import functools
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
from fractions import Fraction
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
import captures as cap  # noqa: E402  (needs the path above)

from scapy.compat import raw  # noqa: E402
from scapy.contrib.roce import BTH  # noqa: E402
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.inet6 import IPv6  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.packet import Raw  # noqa: E402
from scapy.utils import rdpcap  # noqa: E402


def _binary_from_argv():
    """argv[1] is the rocehil binary when it is not an option; it is removed before unittest
    parses the rest."""
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        return os.path.abspath(sys.argv.pop(1))
    return os.environ.get("ROCEHIL_BIN", "")


ROCEHIL = _binary_from_argv()
# bench/CMakeLists.txt puts the generator at BUILD/bench/, next to BUILD/harness/rocehil.
SYNTH = str(Path(ROCEHIL).resolve().parent.parent / "bench" / "rocehil-synth-capture") if ROCEHIL else ""
TSHARK = shutil.which("tshark")
T0 = 1_700_000_000 * 10**9  # a round second, in ns
PRIORITY_KEYS = ("frames", "xoff", "xon", "quanta")


# --- running things -----------------------------------------------------------------------------

def run_rocehil(*args, stdin=None, progress=False):
    argv = [ROCEHIL, "analyze", *map(str, args)] + ([] if progress else ["--no-progress"])
    return subprocess.run(argv, input=stdin if stdin is not None else b"", capture_output=True, timeout=60)


def tshark_rows(path, display_filter, *fields, occurrence="f"):
    """tshark's decode of `path`: one tuple of `fields` (first occurrence; with occurrence="a",
    every occurrence joined by commas) per matching frame."""
    cmd = [TSHARK, "-n", "-r", str(path), "-Y", display_filter, "-T", "fields",
           "-E", "separator=\t", "-E", f"occurrence={occurrence}"]
    for f in fields or ("frame.number",):
        cmd += ["-e", f]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise AssertionError(f"tshark -Y '{display_filter}' failed ({p.returncode}): {p.stderr.strip()}")
    return [tuple(line.split("\t")) for line in p.stdout.splitlines() if line.strip()]


def tshark_rows_all(path, display_filter, *fields):
    """tshark_rows with every occurrence of each field: a tunnel's outer and inner headers."""
    return tshark_rows(path, display_filter, *fields, occurrence="a")


def tshark_count(path, display_filter):
    return len(tshark_rows(path, display_filter))


# tshark display filters for the definitions (field names checked with `tshark -G fields`). tshark
# hands UDP 4791 in either direction to its "infiniband" (RRoCE) dissector; the definitions count
# the destination port only, so every filter names udp.dstport. infiniband.bth.psn is the last BTH
# field: present exactly when the whole BTH was decoded.
BTH_FILTER = "udp.dstport == 4791 && infiniband.bth.psn"
CNP_FILTER = "udp.dstport == 4791 && infiniband.bth.opcode == 0x81"
CE_FILTER = BTH_FILTER + " && (ip.dsfield.ecn == 3 || ipv6.tclass.ecn == 3)"
MALFORMED_FILTER = "udp.dstport == 4791 && udp.length && !infiniband.bth.psn"
NAK_FILTER = (BTH_FILTER + " && infiniband.bth.opcode == 0x11 && infiniband.aeth.syndrome >= 0x60"
              " && infiniband.aeth.syndrome <= 0x7f")
PFC_FILTER = "macc.opcode == 0x0101"
PAUSE_FILTER = "macc.opcode == 0x0001"
FLOW_FIELDS = ("ip.src", "ip.dst", "ipv6.src", "ipv6.dst", "infiniband.bth.destqp", "frame.len",
               "ip.dsfield.ecn", "ipv6.tclass.ecn", "infiniband.bth.opcode", "infiniband.aeth.syndrome")


def tshark_flows(path):
    """(src, dst, dest QP) -> {packets, bytes, ecn_ce, naks}, from tshark's decode."""
    flows = collections.defaultdict(lambda: collections.Counter())
    for row in tshark_rows(path, BTH_FILTER + " && infiniband.bth.opcode != 0x81", *FLOW_FIELDS):
        src4, dst4, src6, dst6, qp, frame_len, ecn4, ecn6, opcode, syndrome = row
        key = (src4 or src6, dst4 or dst6, int(qp, 0))
        flows[key]["packets"] += 1
        flows[key]["bytes"] += int(frame_len)
        flows[key]["ecn_ce"] += (ecn4 or ecn6) in ("3", "0x3", "0x03")
        flows[key]["naks"] += int(opcode, 0) == 0x11 and 0x60 <= int(syndrome or "0", 0) <= 0x7F
    return {k: dict(v) for k, v in flows.items()}


def tshark_first_sports(path):
    """(src, dst, dest QP) -> the UDP source port of the flow's first packet, from tshark."""
    sports = {}
    for row in tshark_rows(path, BTH_FILTER + " && infiniband.bth.opcode != 0x81", "ip.src",
                           "ip.dst", "ipv6.src", "ipv6.dst", "infiniband.bth.destqp",
                           "udp.srcport"):
        src4, dst4, src6, dst6, qp, sport = row
        sports.setdefault((src4 or src6, dst4 or dst6, int(qp, 0)), int(sport))
    return sports


def tshark_pfc_priorities(path):
    """Per priority {frames, xoff, xon, quanta} computed from tshark's class-enable vector and
    per-class pause times of every PFC frame."""
    fields = ["macc.cbfc.enbv"] + [f"macc.cbfc.pause_time.c{p}" for p in range(8)]
    out = [dict.fromkeys(PRIORITY_KEYS, 0) for _ in range(8)]
    for row in tshark_rows(path, PFC_FILTER, *fields):
        enable = int(row[0], 0)
        for p in range(8):
            if enable & (1 << p):
                q = int(row[1 + p], 0)
                out[p]["frames"] += 1
                out[p]["xoff" if q else "xon"] += 1
                out[p]["quanta"] += q
    return out


def json_flows(j):
    return {(f["src"], f["dst"], f["dest_qp"]): f for f in j["flows"]}


def without_file(j):
    return {k: v for k, v in j.items() if k != "file"}


def priorities(j, keys=PRIORITY_KEYS):
    return [{k: p[k] for k in keys} for p in j["pfc"]["priorities"]]


# --- the captures -------------------------------------------------------------------------------

class Capture:
    """Frames in order with ground truth tracked as they are added."""

    def __init__(self, start_ns=T0, step_ns=7_000):
        self.records, self.ts, self.step = [], start_ns, step_ns
        self.wire = collections.Counter()  # flow key -> wire bytes

    def add(self, frame, flow=None, ts_ns=None, caplen=None):
        ts = self.ts if ts_ns is None else ts_ns
        self.records.append(cap.record(ts, frame, caplen))
        self.ts = max(self.ts, ts) + self.step
        if flow:
            self.wire[flow] += self.records[-1].wire_len
        return self.records[-1]


@functools.lru_cache(maxsize=None)
def mixed_capture():
    """What a mirror port sees: three data flows (one IPv6, one partly VLAN/QinQ-tagged), ACKs with
    a NAK, a UD send, CNPs to three QPs, PFC and PAUSE frames and unrelated traffic. Timestamps are
    whole microseconds so every file format holds them exactly."""
    c = Capture()
    a, b, v6, d, ud = (("198.18.0.1", "198.18.0.2", 0x101), ("198.18.0.3", "198.18.0.2", 0x202),
                       ("2001:db8::1", "2001:db8::2", 0x303), ("198.18.0.2", "198.18.0.1", 0x111),
                       ("198.18.0.5", "198.18.0.6", 0x404))
    c.add(cap.roce(*a[:2], cap.WRITE_FIRST, a[2], 10, cap.reth(dma_len=2560), 1024), a)
    c.add(cap.roce(*a[:2], cap.WRITE_MIDDLE, a[2], 11, payload=1024, ecn=3), a)
    c.add(cap.cnp_frame("198.18.0.2", "198.18.0.1", 0x101))
    c.add(cap.roce(*a[:2], cap.WRITE_LAST, a[2], 12, payload=512), a)
    c.add(cap.roce(*d[:2], cap.ACKNOWLEDGE, d[2], 10, cap.aeth(0x00, 1)), d)
    c.add(cap.roce(*b[:2], cap.SEND_ONLY, b[2], 0, payload=256), b)
    c.add(cap.pfc_frame(0x40, {6: 0xFFFF}))
    c.add(cap.roce(*b[:2], cap.SEND_ONLY, b[2], 1, payload=256, ecn=3, vlans=[(0x8100, 100)]), b)
    c.add(cap.cnp_frame("198.18.0.2", "198.18.0.1", 0x101, ecn=3))
    c.add(cap.arp_frame())
    c.add(cap.roce(*b[:2], cap.SEND_ONLY, b[2], 2, payload=256, vlans=[(0x88A8, 10), (0x8100, 20)]), b)
    c.add(cap.cnp_frame("198.18.0.2", "198.18.0.3", 0x202))
    c.add(cap.roce(*v6[:2], cap.WRITE_ONLY_IMM, v6[2], 0, cap.reth(dma_len=128) + cap.immdt(7), 128), v6)
    c.add(cap.tcp_frame(dport=4791))
    c.add(cap.roce(*d[:2], cap.ACKNOWLEDGE, d[2], 11, cap.aeth(0x60, 1)), d)
    c.add(cap.pfc_frame(0x40, {6: 0}))
    c.add(cap.roce(*v6[:2], cap.WRITE_ONLY_IMM, v6[2], 1, cap.reth(dma_len=128) + cap.immdt(8), 128, ecn=3), v6)
    c.add(cap.cnp_frame("2001:db8::2", "2001:db8::1", 0x303))
    c.add(cap.udp_frame(dport=53))
    c.add(cap.roce(*b[:2], cap.SEND_ONLY, b[2], 3, payload=256, ecn=3), b)
    c.add(cap.pause_frame(0xFFFF))
    c.add(cap.cnp_frame("198.18.0.2", "198.18.0.3", 0x202))
    c.add(cap.pfc_frame(0x48, {3: 10, 6: 20}))
    c.add(cap.udp_frame(sport=4791, dport=5000, payload=20))  # RoCE by tshark's port rule, not ours
    c.add(cap.roce(*d[:2], cap.ACKNOWLEDGE, d[2], 12, cap.aeth(0x1F, 2)), d)
    c.add(cap.cnp_frame("198.18.0.2", "198.18.0.1", 0x101))
    c.add(cap.roce(*ud[:2], cap.UD_SEND_ONLY, ud[2], 5, cap.deth(), 64), ud)
    c.add(cap.pfc_frame(0x08, {3: 0}))
    c.add(cap.pause_frame(0))
    return c


MIXED = {
    "frames": 29, "packets": 19, "ecn_ce": 5, "cnp": 6, "cnp_by_qp": {"257": 3, "514": 2, "771": 1},
    "pfc": 4, "pause": 2, "naks": 1,
    "priorities": {3: {"frames": 2, "xoff": 1, "xon": 1, "quanta": 10},
                   6: {"frames": 3, "xoff": 2, "xon": 1, "quanta": 0xFFFF + 20}},
    # flow -> packets, ecn_ce, naks
    "flows": {("198.18.0.1", "198.18.0.2", 0x101): (3, 1, 0), ("198.18.0.3", "198.18.0.2", 0x202): (4, 2, 0),
              ("2001:db8::1", "2001:db8::2", 0x303): (2, 1, 0), ("198.18.0.2", "198.18.0.1", 0x111): (3, 0, 1),
              ("198.18.0.5", "198.18.0.6", 0x404): (1, 0, 0)},
}


def expected_priorities(nonzero):
    return [dict(nonzero.get(p, dict.fromkeys(PRIORITY_KEYS, 0))) for p in range(8)]


class AnalyzeTest(unittest.TestCase):
    maxDiff = None

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="rocehil-analyze-test-")
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)

    def file(self, name, data):
        return cap.write(self.dir / name, data)

    def analyze(self, path, *opts, stdin=None):
        """Runs `rocehil analyze PATH --json OPTS`, expects exit 0 and a quiet stderr."""
        p = run_rocehil(path, "--json", *opts, stdin=stdin)
        self.assertEqual(p.returncode, 0, f"rocehil analyze {path} {opts}: stderr: {p.stderr.decode()}")
        self.assertEqual(p.stderr.decode(), "", "stderr of a clean run")
        j = json.loads(p.stdout)
        self.assertEqual(j["schema_version"], 1)
        return j

    def assert_error(self, p, code, *needles):
        """Exit `code`, stdout empty, stderr one line 'rocehil: error: ...' holding every needle."""
        err = p.stderr.decode()
        self.assertEqual(p.returncode, code, f"exit code; stderr: {err!r}")
        lines = err.splitlines()
        self.assertEqual(len(lines), 1, f"one line on stderr, got {err!r}")
        self.assertTrue(lines[0].startswith("rocehil: error: "), lines[0])
        for n in needles:
            self.assertIn(n, lines[0])
        self.assertEqual(p.stdout, b"", "nothing on stdout after an error")
        return lines[0]


@unittest.skipUnless(TSHARK, "tshark is not installed (apt-get install tshark)")
class CountsAgainstTshark(AnalyzeTest):
    """1. Counts equal tshark's and the ground truth on one mixed capture."""

    def setUp(self):
        super().setUp()
        self.capture = mixed_capture()
        self.path = self.file("mixed.pcapng", cap.pcapng_bytes(self.capture.records))
        self.j = self.analyze(self.path)

    def test_frames(self):
        self.assertEqual(tshark_count(self.path, "frame"), MIXED["frames"])
        self.assertEqual(self.j["frames"], MIXED["frames"])

    def test_bth_packets(self):
        self.assertEqual(tshark_count(self.path, BTH_FILTER), MIXED["packets"])
        self.assertEqual(self.j["roce"]["packets"], MIXED["packets"])
        self.assertEqual(self.j["roce"]["malformed"], 0)

    def test_cnps_and_cnps_per_qp(self):
        rows = tshark_rows(self.path, CNP_FILTER, "infiniband.bth.destqp")
        by_qp = collections.Counter(str(int(qp, 0)) for (qp,) in rows)
        self.assertEqual(dict(by_qp), MIXED["cnp_by_qp"])
        self.assertEqual(self.j["cnp"]["count"], MIXED["cnp"])
        self.assertEqual(self.j["cnp"]["by_dest_qp"], MIXED["cnp_by_qp"])

    def test_ecn_ce_among_roce(self):
        self.assertEqual(tshark_count(self.path, CE_FILTER), MIXED["ecn_ce"])
        self.assertEqual(self.j["roce"]["ecn_ce"], MIXED["ecn_ce"])

    def test_pfc_frames_and_priorities(self):
        self.assertEqual(tshark_count(self.path, PFC_FILTER), MIXED["pfc"])
        self.assertEqual(self.j["pfc"]["frames"], MIXED["pfc"])
        expected = expected_priorities(MIXED["priorities"])
        self.assertEqual(tshark_pfc_priorities(self.path), expected)
        self.assertEqual([p["priority"] for p in self.j["pfc"]["priorities"]], list(range(8)))
        self.assertEqual(priorities(self.j), expected)

    def test_pause_frames(self):
        self.assertEqual(tshark_count(self.path, PAUSE_FILTER), MIXED["pause"])
        self.assertEqual(self.j["pause_8023x"]["frames"], MIXED["pause"])

    def test_naks(self):
        self.assertEqual(tshark_count(self.path, NAK_FILTER), MIXED["naks"])
        self.assertEqual(self.j["roce"]["naks"], MIXED["naks"])

    def test_flows(self):
        ours = json_flows(self.j)
        expected = {k: {"packets": n, "bytes": self.capture.wire[k], "ecn_ce": ce, "naks": naks}
                    for k, (n, ce, naks) in MIXED["flows"].items()}
        self.assertEqual(tshark_flows(self.path), expected)
        self.assertEqual({k: {x: f[x] for x in ("packets", "bytes", "ecn_ce", "naks")} for k, f in ours.items()},
                         expected)
        self.assertEqual({k: f["udp_sport"] for k, f in ours.items()}, tshark_first_sports(self.path))
        for f in ours.values():
            self.assertEqual((f["psn_gaps"], f["retransmits"]), (0, 0), f)
        self.assertEqual(list(ours), sorted(ours, key=lambda k: -expected[k]["bytes"]),
                         "flows by bytes, biggest first")


def by_dscp_capture():
    """Several traffic classes on one mirror port, as a lossless fabric carries them: data on
    DSCP 26 (some CE), CNPs on 48 and one on 26 (a NIC whose cnp_dscp is left at the data's),
    ACKs and a NAK on 46, lossy data on 0, an IPv6 flow on 10 (DSCP spans both bytes of its
    traffic class there) and an RNR NAK on 63. Ground truth: DSCP -> field -> count."""
    c = Capture()
    truth = collections.defaultdict(collections.Counter)

    def add(frame, dscp, **counts):
        record = c.add(frame)
        truth[str(dscp)].update({"packets": 1, "bytes": record.wire_len, **counts})

    for psn in range(6):
        ce = psn % 3 == 0
        add(cap.roce(psn=psn, payload=512, dscp=26, ecn=3 if ce else 2), 26, ecn_ce=int(ce))
    for n in range(3):
        add(cap.cnp_frame(qp=0x101 + n), 48, cnps=1)
    add(cap.cnp_frame(qp=0x101, dscp=26, ecn=3), 26, cnps=1, ecn_ce=1)
    for psn, syndrome in ((0, 0x00), (1, 0x1F), (2, 0x60)):
        add(cap.roce("198.18.0.2", "198.18.0.1", cap.ACKNOWLEDGE, 0x111, psn, cap.aeth(syndrome, 1),
                     dscp=46), 46, **({"naks": 1} if syndrome >= 0x60 else {"acks": 1}))
    add(cap.roce("198.18.0.2", "198.18.0.1", cap.ACKNOWLEDGE, 0x111, 3, cap.aeth(0x21, 1),
                 dscp=63), 63, rnr_naks=1)
    for psn in range(2):
        add(cap.roce(psn=psn, qp=0x222, payload=64, dscp=0, ecn=3), 0, ecn_ce=1)
    for psn in range(3):
        add(cap.roce("2001:db8::1", "2001:db8::2", cap.SEND_ONLY, 0x303, psn, payload=128,
                     dscp=10), 10)
    c.add(cap.udp_frame(dport=53))  # not RoCE: in no class
    c.add(cap.pfc_frame(0x08, {3: 100}))
    fields = ("packets", "bytes", "ecn_ce", "cnps", "acks", "naks", "rnr_naks")
    return c, {d: {f: n[f] for f in fields} for d, n in truth.items()}


def tshark_by_dscp(path):
    """DSCP -> counts, from tshark's decode of the same file and the definitions' filters."""
    out = collections.defaultdict(collections.Counter)
    fields = ("ip.dsfield.dscp", "ipv6.tclass.dscp", "frame.len", "ip.dsfield.ecn",
              "ipv6.tclass.ecn", "infiniband.bth.opcode", "infiniband.aeth.syndrome")
    for row in tshark_rows(path, BTH_FILTER, *fields):
        dscp4, dscp6, length, ecn4, ecn6, opcode, syndrome = row
        n = out[str(int(dscp4 or dscp6, 0))]
        n.update({"packets": 1, "bytes": int(length), "ecn_ce": int(int(ecn4 or ecn6, 0) == 3),
                  "cnps": int(int(opcode, 0) == 0x81)})
        if int(opcode, 0) == 0x11 and syndrome:
            s = int(syndrome, 0)
            n.update({"acks": int(s < 0x20), "rnr_naks": int(0x20 <= s < 0x40),
                      "naks": int(0x60 <= s < 0x80)})
    fields = ("packets", "bytes", "ecn_ce", "cnps", "acks", "naks", "rnr_naks")
    return {d: {f: n[f] for f in fields} for d, n in out.items()}


@unittest.skipUnless(TSHARK, "tshark is not installed (apt-get install tshark)")
class CountsByDscp(AnalyzeTest):
    """by_dscp: each traffic class's packets, bytes, CE marks, CNPs, ACKs and NAKs equal the
    planted truth and tshark's count by the DSCP it decodes, and sum to the totals."""

    def test_each_class_counts_what_it_carried(self):
        capture, truth = by_dscp_capture()
        path = self.file("classes.pcapng", cap.pcapng_bytes(capture.records))
        j = self.analyze(path)
        self.assertEqual(tshark_by_dscp(path), truth)
        self.assertEqual(j["by_dscp"], truth)
        for field, total in (("packets", j["roce"]["packets"]), ("ecn_ce", j["roce"]["ecn_ce"]),
                             ("cnps", j["cnp"]["count"]), ("acks", j["roce"]["acks"]),
                             ("naks", j["roce"]["naks"]), ("rnr_naks", j["roce"]["rnr_naks"]),
                             ("bytes", j["roce"]["bytes"])):
            self.assertEqual(sum(c[field] for c in j["by_dscp"].values()), total, field)


class Formats(AnalyzeTest):
    """2. pcap us/ns in both byte orders, pcapng (ns, us, two interfaces, if_tsoffset), stdin."""

    def test_every_format_gives_the_same_analysis(self):
        recs = mixed_capture().records
        files = {
            "us-le.pcap": (cap.pcap_bytes(recs), "pcap-us"),
            "us-be.pcap": (cap.pcap_bytes(recs, big_endian=True), "pcap-us"),
            "ns-le.pcap": (cap.pcap_bytes(recs, nano=True), "pcap-ns"),
            "ns-be.pcap": (cap.pcap_bytes(recs, nano=True, big_endian=True), "pcap-ns"),
            "ns-le.pcapng": (cap.pcapng_bytes(recs), "pcapng"),
            "us-be.pcapng": (cap.pcapng_bytes(recs, tsresols=(6,), big_endian=True), "pcapng"),
            "two-ifaces.pcapng": (cap.pcapng_bytes(recs, tsresols=(9, 6)), "pcapng"),
        }
        reference = None
        for name, (data, fmt) in files.items():
            with self.subTest(file=name):
                path = self.file(name, data)
                if TSHARK:  # the test's own writers, checked by an independent reader
                    self.assertEqual(tshark_count(path, "frame"), MIXED["frames"])
                j = self.analyze(path)
                self.assertEqual(j["file"]["problems"], [])
                self.assertEqual(j["frames"], MIXED["frames"])
                self.assertEqual(j["roce"]["packets"], MIXED["packets"])
                self.assertEqual(j["cnp"]["by_dest_qp"], MIXED["cnp_by_qp"])
                reference = reference or without_file(j)
                self.assertEqual(without_file(j), reference)
                self.assertEqual(j["file"]["format"], fmt)
        for name in ("ns-be.pcap", "ns-le.pcapng"):
            with self.subTest(stdin=name):
                j = self.analyze("-", stdin=files[name][0])
                self.assertEqual(without_file(j), reference)
                self.assertEqual(j["file"]["format"], files[name][1])

    def test_timestamps_are_preserved(self):
        a, b, c = T0 + 123_456_789, T0 + 123_457_790, T0 + 987_654_321
        recs = [cap.record(ts, cap.roce(ext=cap.reth(dma_len=64), payload=64, psn=i))
                for i, ts in enumerate((b, a, c))]  # a mirror port may deliver out of order
        us = lambda ns: ns // 1000 * 1000  # noqa: E731
        cases = {
            "ns.pcap": (cap.pcap_bytes(recs, nano=True), a, c),
            "ns-be.pcap": (cap.pcap_bytes(recs, nano=True, big_endian=True), a, c),
            "ns.pcapng": (cap.pcapng_bytes(recs), a, c),
            "ns-be.pcapng": (cap.pcapng_bytes(recs, big_endian=True), a, c),
            "tsoffset.pcapng": (cap.pcapng_bytes(recs, tsoffset_s=1_000_000), a, c),
            "us.pcapng": (cap.pcapng_bytes(recs, tsresols=(6,)), us(a), us(c)),
            "us.pcap": (cap.pcap_bytes(recs), us(a), us(c)),
            "us-be.pcap": (cap.pcap_bytes(recs, big_endian=True), us(a), us(c)),
        }
        for name, (data, first, last) in cases.items():
            with self.subTest(file=name):
                path = self.file(name, data)
                if TSHARK:
                    epoch = tshark_rows(path, "frame", "frame.time_epoch")
                    self.assertEqual(len(epoch), 3)
                j = self.analyze(path)
                (flow,) = j["flows"]
                self.assertEqual((flow["first_ns"], flow["last_ns"]), (first, last))
                self.assertEqual((j["first_ns"], j["last_ns"]), (first, last))

    def test_stdin_pcap_us(self):
        recs = mixed_capture().records
        j = self.analyze("-", stdin=cap.pcap_bytes(recs))
        self.assertEqual((j["frames"], j["roce"]["packets"], j["cnp"]["count"], j["pfc"]["frames"]),
                         (MIXED["frames"], MIXED["packets"], MIXED["cnp"], MIXED["pfc"]))
        self.assertEqual(j["file"]["format"], "pcap-us")

    def test_progress_never_touches_stdout(self):
        path = self.file("mixed.pcap", cap.pcap_bytes(mixed_capture().records))
        quiet = self.analyze(path)
        p = run_rocehil(path, "--json", progress=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout), quiet)


class LinkAndNetworkLayers(AnalyzeTest):
    """3. 802.1Q, 802.1ad QinQ, IPv4, IPv6, IPv4 options; other traffic is not RoCE."""

    def test_l2_l3_variety(self):
        v4, v6 = ("198.18.1.1", "198.18.1.2"), ("2001:db8::a", "2001:db8::b")
        w = dict(opcode=cap.WRITE_ONLY, ext=cap.reth(dma_len=100), payload=100)
        c = Capture()
        c.add(cap.roce(*v4, qp=1, **w))
        c.add(cap.roce(*v4, qp=2, vlans=[(0x8100, 10)], **w))
        c.add(cap.roce(*v4, qp=3, vlans=[(0x88A8, 20), (0x8100, 30)], **w))
        c.add(cap.roce(*v6, qp=4, ecn=3, **w))
        c.add(cap.roce(*v6, qp=5, vlans=[(0x8100, 40)], **w))
        c.add(cap.roce(*v4, qp=6, ecn=3, ip_options=cap.router_alert(), **w))
        c.add(cap.udp_frame(dport=53))
        c.add(cap.tcp_frame(dport=4791))
        c.add(cap.arp_frame())
        c.add(cap.udp_frame(sport=4791, dport=5000, payload=20))
        c.add(cap.ipv4_later_fragment())
        path = self.file("l2l3.pcap", cap.pcap_bytes(c.records, nano=True))
        expected_flows = {(*v4, 1), (*v4, 2), (*v4, 3), (*v6, 4), (*v6, 5), (*v4, 6)}
        if TSHARK:
            self.assertEqual(tshark_count(path, BTH_FILTER), 6)
            self.assertEqual(tshark_count(path, CE_FILTER), 2)
            self.assertEqual(set(tshark_flows(path)), expected_flows)
            self.assertEqual(tshark_count(path, "ip.opt.type"), 1, "the IPv4-options frame really has one")
        j = self.analyze(path)
        self.assertEqual(j["frames"], 11)
        self.assertEqual((j["roce"]["packets"], j["roce"]["malformed"], j["roce"]["ecn_ce"]), (6, 0, 2))
        self.assertEqual(set(json_flows(j)), expected_flows)
        for f in j["flows"]:
            self.assertEqual((f["packets"], f["bytes"]), (1, c.records[f["dest_qp"] - 1].wire_len), f)
        self.assertEqual((j["vlan_tagged"], j["ipv4"], j["ipv6"]), (3, 8, 2))
        self.assertEqual((j["cnp"]["count"], j["pfc"]["frames"], j["pause_8023x"]["frames"]), (0, 0, 0))


class MalformedAndTruncated(AnalyzeTest):
    """4. A BTH the UDP length leaves no room for is malformed, one cut by the snap length truncated
    (tshark calls both malformed); flow bytes are wire lengths."""

    def test_malformed_and_cut_frames(self):
        full = raw(cap.roce(qp=7, ext=cap.reth(dma_len=1000), payload=1000))
        v6 = raw(cap.roce("2001:db8::1", "2001:db8::2", qp=8, ext=cap.reth(dma_len=0)))
        tagged = raw(cap.roce(qp=9, ext=cap.reth(dma_len=0), vlans=[(0x8100, 5)]))
        udp = cap.ether() / IP(src="198.18.0.1", dst="198.18.0.2") / UDP(sport=49152, dport=4791)
        short = raw(udp / Raw(bytes(8)))
        short += bytes(60 - len(short))  # Ethernet padding: 12+ bytes follow UDP, but UDP says 8
        c = Capture()
        c.add(full)                        # counted
        c.add(full, caplen=14 + 20 + 8 + 6)  # cut inside the BTH: truncated
        c.add(short)                       # UDP payload of 8 bytes: malformed
        c.add(raw(udp))                    # empty UDP payload: malformed
        c.add(full, caplen=14 + 20 + 4)    # cut inside the UDP header: neither
        c.add(full, caplen=14 + 10)        # cut inside the IP header: neither
        c.add(v6, caplen=14 + 40 + 8 + 11)  # IPv6, cut inside the BTH: truncated
        c.add(tagged, caplen=14 + 2)       # cut inside the VLAN tag: neither
        path = self.file("cut.pcap", cap.pcap_bytes(c.records, nano=True))
        if TSHARK:
            self.assertEqual(tshark_count(path, BTH_FILTER), 1)
            self.assertEqual(tshark_count(path, MALFORMED_FILTER), 4)
        j = self.analyze(path)
        self.assertEqual(j["frames"], 8)
        self.assertEqual((j["roce"]["packets"], j["roce"]["malformed"], j["roce"]["truncated"]), (1, 2, 2))
        (flow,) = j["flows"]
        self.assertEqual((flow["dest_qp"], flow["packets"], flow["bytes"]), (7, 1, len(full)))
        self.assertEqual(j["file"]["problems"], [])

    def test_snaplen_128_loses_no_bytes(self):
        recs = mixed_capture().records
        cut = cap.snap(recs, 128)
        self.assertTrue(any(len(r.data) < r.wire_len for r in cut), "some records must really be cut")
        j_full = self.analyze(self.file("full.pcap", cap.pcap_bytes(recs, nano=True)))
        j_cut = self.analyze(self.file("cut.pcap", cap.pcap_bytes(cut, nano=True, snaplen=128)))
        self.assertEqual(j_cut["flows"], j_full["flows"])
        self.assertEqual(j_cut["roce"], j_full["roce"])
        self.assertEqual(j_cut["timeline"], j_full["timeline"])
        self.assertEqual(without_file(j_cut), without_file(j_full))
        self.assertEqual(sum(f["bytes"] for f in j_cut["flows"]), sum(mixed_capture().wire.values()))


class PsnSemantics(AnalyzeTest):
    """5. PSN gaps, retransmits, 24-bit wrap, READ REQUEST allowance, NAK syndromes, CNPs."""

    REQ, RSP = ("198.18.2.1", "198.18.2.2"), ("198.18.2.2", "198.18.2.1")

    @classmethod
    def scenarios(cls):
        wr = lambda psn: (cap.WRITE_ONLY, psn, cap.reth(dma_len=256))  # noqa: E731
        read = lambda psn, n: (cap.READ_REQUEST, psn, cap.reth(dma_len=n))  # noqa: E731
        ack = lambda psn, syn: (cap.ACKNOWLEDGE, psn, cap.aeth(syn))  # noqa: E731
        return {
            # name: ((src, dst), dest QP, [(opcode, psn, extended headers)], psn_gaps, retransmits, naks)
            "skipped PSN": (cls.REQ, 0x10, [(cap.WRITE_FIRST, 100, cap.reth(dma_len=4096)),
                                             (cap.WRITE_MIDDLE, 101, b""), (cap.WRITE_MIDDLE, 103, b""),
                                             (cap.WRITE_LAST, 104, b"")], 1, 0, 0),
            "go-back-N": (cls.REQ, 0x11, [(cap.SEND_FIRST, 10, b""), (cap.SEND_MIDDLE, 11, b""),
                                           (cap.SEND_MIDDLE, 12, b""), (cap.SEND_MIDDLE, 13, b""),
                                           (cap.SEND_MIDDLE, 14, b""), (cap.SEND_MIDDLE, 12, b""),
                                           (cap.SEND_MIDDLE, 13, b""), (cap.SEND_MIDDLE, 14, b""),
                                           (cap.SEND_LAST, 15, b"")], 0, 3, 0),
            "24-bit wrap": (cls.REQ, 0x12, [wr(0xFFFFFE), wr(0xFFFFFF), wr(0), wr(1)], 0, 0, 0),
            "gap across the wrap": (cls.REQ, 0x13, [wr(0xFFFFFF), wr(1)], 1, 0, 0),
            "retransmit across the wrap": (cls.REQ, 0x14, [wr(0xFFFFFF), wr(0), wr(0xFFFFFF)], 0, 1, 0),
            "READ 64 KiB then +16": (cls.REQ, 0x15, [read(500, 65536), wr(516), wr(517)], 0, 0, 0),
            "READ 64 KiB then +256": (cls.REQ, 0x16, [read(1000, 65536), wr(1256)], 0, 0, 0),
            "READ 64 KiB then +257": (cls.REQ, 0x17, [read(1000, 65536), wr(1257)], 1, 0, 0),
            "READ 1000 B then +4": (cls.REQ, 0x18, [read(2000, 1000), wr(2004)], 0, 0, 0),
            "READ 1000 B then +5": (cls.REQ, 0x19, [read(2000, 1000), wr(2005)], 1, 0, 0),
            "duplicate PSN": (cls.REQ, 0x1B, [wr(7), wr(7)], 0, 1, 0),
            "ACKs and NAKs": (cls.RSP, 0x20, [ack(9, 0x00), ack(3, 0x1F), ack(8, 0x20), ack(100, 0x60),
                                              ack(1, 0x61), ack(50, 0x62), ack(2, 0x63)], 0, 0, 4),
            "READ responses": (cls.RSP, 0x21, [(cap.READ_RESPONSE_ONLY, 5, cap.aeth(0x60)),
                                               (cap.READ_RESPONSE_ONLY, 50, cap.aeth(0x00)),
                                               (cap.READ_RESPONSE_ONLY, 3, cap.aeth(0x00))], 0, 0, 0),
        }

    def test_psn_and_nak_definitions(self):
        c = Capture()
        scenarios = self.scenarios()
        for (src, dst), qp, packets, *_ in scenarios.values():
            for opcode, psn, ext in packets:
                c.add(cap.roce(src, dst, opcode, qp, psn, ext, payload=256 if opcode != cap.ACKNOWLEDGE else 0))
            # CNPs on the same addresses and QP, both directions: never part of a flow
            c.add(cap.cnp_frame(dst, src, qp))
            c.add(cap.cnp_frame(src, dst, qp))
        path = self.file("psn.pcap", cap.pcap_bytes(c.records, nano=True))
        j = self.analyze(path)
        flows = json_flows(j)
        self.assertEqual(len(flows), len(scenarios), sorted(flows))
        for name, ((src, dst), qp, packets, gaps, retrans, naks) in scenarios.items():
            with self.subTest(name):
                f = flows.get((src, dst, qp))
                self.assertIsNotNone(f, f"flow {src} -> {dst} QP {qp:#x}")
                self.assertEqual({k: f[k] for k in ("packets", "psn_gaps", "retransmits", "naks")},
                                 {"packets": len(packets), "psn_gaps": gaps, "retransmits": retrans, "naks": naks})
        self.assertEqual(j["cnp"]["count"], 2 * len(scenarios))
        self.assertEqual((j["roce"]["naks"], j["roce"]["rnr_naks"], j["roce"]["acks"]), (4, 1, 2))
        if TSHARK:
            self.assertEqual(tshark_count(path, NAK_FILTER), 4)


class Pfc(AnalyzeTest):
    """6. PFC per priority, PAUSE apart, pause time at the given link speed."""

    FRAMES = [
        (0x01, {0: 0xFFFF}),            # p0 XOFF
        (0x01, {0: 0}),                 # p0 XON
        (0x88, {3: 100, 7: 0}),         # p3 XOFF, p7 XON in one frame
        (0x08, {3: 50, 5: 999}),        # p3 XOFF; p5's quanta ignored, its bit is clear
        (0x00, dict.fromkeys(range(8), 7)),  # no class enabled: a PFC frame for no priority
        (0xFF02, {1: 5, 2: 0}),         # high byte of the vector unused: p1 XOFF only
        (0xFF, dict.fromkeys(range(8), 0xFFFF)),  # every priority XOFF
    ]
    EXPECTED = [
        {"frames": 3, "xoff": 2, "xon": 1, "quanta": 2 * 0xFFFF},
        {"frames": 2, "xoff": 2, "xon": 0, "quanta": 5 + 0xFFFF},
        {"frames": 1, "xoff": 1, "xon": 0, "quanta": 0xFFFF},
        {"frames": 3, "xoff": 3, "xon": 0, "quanta": 100 + 50 + 0xFFFF},
        {"frames": 1, "xoff": 1, "xon": 0, "quanta": 0xFFFF},
        {"frames": 1, "xoff": 1, "xon": 0, "quanta": 0xFFFF},
        {"frames": 1, "xoff": 1, "xon": 0, "quanta": 0xFFFF},
        {"frames": 2, "xoff": 1, "xon": 1, "quanta": 0xFFFF},
    ]

    def test_each_interface_is_timed_at_its_own_if_speed(self):
        # A file merged from a 10G and a 100G mirror port (mergecap keeps each one's if_speed):
        # the same XOFF pauses ten times longer on the 10G link. Interfaces take frames in turn.
        c = Capture()
        c.add(cap.pfc_frame(0x08, {3: 0xFFFF}), ts_ns=T0)
        c.add(cap.pfc_frame(0x08, {3: 0xFFFF}), ts_ns=T0 + 1)
        c.add(cap.pause_frame(1000), ts_ns=T0 + 2)
        path = self.file("merged.pcapng", cap.pcapng_bytes(
            c.records, tsresols=(9, 9), speeds_bps=(10 * 10**9, 100 * 10**9)))
        j = self.analyze(path)
        self.assertEqual(j["file"]["link_gbps_source"],
                         "each interface's if_speed: interface 0 10 Gb/s, interface 1 100 Gb/s")
        self.assertEqual(j["options"]["interface_link_gbps"], [10.0, 100.0])
        self.assertTrue(math.isclose(j["pfc"]["priorities"][3]["pause_ns"],
                                     0xFFFF * 512 / 10 + 0xFFFF * 512 / 100, rel_tol=1e-12))
        self.assertTrue(math.isclose(j["pause_8023x"]["pause_ns"], 1000 * 512 / 10, rel_tol=1e-12))
        text = run_rocehil(path).stdout.decode()
        self.assertIn("pause time at each interface's speed (each interface's if_speed: "
                      "interface 0 10 Gb/s, interface 1 100 Gb/s)", text)
        # --link-gbps is every interface's.
        j = self.analyze(path, "--link-gbps", "25")
        self.assertEqual(j["options"]["interface_link_gbps"], [])
        self.assertTrue(math.isclose(j["pfc"]["priorities"][3]["pause_ns"], 2 * 0xFFFF * 512 / 25,
                                     rel_tol=1e-12))

    def test_priorities_pause_and_link_speed(self):
        c = Capture()
        for enable, quanta in self.FRAMES:
            c.add(cap.pfc_frame(enable, quanta))
        c.add(cap.pause_frame(0xFFFF))
        c.add(cap.pause_frame(0))
        path = self.file("pfc.pcap", cap.pcap_bytes(c.records))
        if TSHARK:
            self.assertEqual(tshark_count(path, PFC_FILTER), 7)
            self.assertEqual(tshark_count(path, PAUSE_FILTER), 2)
            self.assertEqual(tshark_pfc_priorities(path), self.EXPECTED)
        for gbps_args, gbps in (((), 100), (("--link-gbps", "400"), 400), (("--link-gbps", "25"), 25)):
            with self.subTest(link_gbps=gbps):
                j = self.analyze(path, *gbps_args)
                self.assertEqual(j["pfc"]["frames"], 7)
                self.assertEqual(j["pause_8023x"]["frames"], 2)
                self.assertEqual(priorities(j), self.EXPECTED)
                for p, e in zip(j["pfc"]["priorities"], self.EXPECTED):
                    self.assertTrue(math.isclose(p["pause_ns"], e["quanta"] * 512 / gbps, rel_tol=1e-12),
                                    f"priority {p['priority']}: pause_ns {p['pause_ns']}, "
                                    f"expected {e['quanta']} x 512 / {gbps}")
                self.assertEqual(sum(b["pfc_xoff"] for b in j["timeline"]["bins"]), 5)


class Timeline(AnalyzeTest):
    """7. Bins of --bin-ms hold RoCE bytes, CNPs, PFC XOFF frames and CE marks at the right t_ms."""

    def test_one_ms_bins(self):
        ms = 1_000_000
        start = T0 + 500_123
        c = Capture()
        first = c.add(cap.roce(ext=cap.reth(dma_len=40), payload=40), ts_ns=start)
        cnp = c.add(cap.cnp_frame(ecn=3), ts_ns=start + ms // 2)
        c.add(cap.pfc_frame(0x08, {3: 1000}), ts_ns=start + ms - 1)
        second = c.add(cap.roce(ext=cap.reth(dma_len=200), payload=200, ecn=3, psn=1), ts_ns=start + ms)
        c.add(cap.pfc_frame(0x08, {3: 0}), ts_ns=start + ms + ms // 2)  # XON only
        third = c.add(cap.roce(ext=cap.reth(dma_len=300), payload=300, psn=2), ts_ns=start + 3 * ms + 200_000)
        c.add(cap.pfc_frame(0x48, {3: 1, 6: 1}), ts_ns=start + 3 * ms + 300_000)
        c.add(cap.pause_frame(0xFFFF), ts_ns=start + 3 * ms + 400_000)  # PAUSE is not PFC XOFF
        # stamped before the first record (a mirror port reorders a little): bin 0
        late = c.add(cap.roce(ext=cap.reth(dma_len=8), payload=8, psn=3), ts_ns=start - 200_000)
        path = self.file("timeline.pcap", cap.pcap_bytes(c.records, nano=True))
        j = self.analyze(path, "--bin-ms", "1")
        tl = j["timeline"]
        self.assertEqual(tl["bin_ms"], 1)
        keys = ("t_ms", "roce_bytes", "cnp", "pfc_xoff", "ecn_ce")
        self.assertEqual([tuple(b[k] for k in keys) for b in tl["bins"]], [
            (0, first.wire_len + cnp.wire_len + late.wire_len, 1, 1, 1),
            (1, second.wire_len, 0, 0, 1),
            # bin 2 holds nothing and is left out: every bin carries its t_ms
            (3, third.wire_len, 0, 1, 0),
        ])
        if TSHARK:  # the same bins from tshark's timestamps and lengths
            rows = tshark_rows(path, BTH_FILTER, "frame.time_epoch", "frame.len")
            by_bin = collections.Counter()
            for epoch, length in rows:
                sec, frac = epoch.split(".")
                ns = int(sec) * 10**9 + int(frac.ljust(9, "0")[:9])
                by_bin[max(0, (ns - start) // ms)] += int(length)
            self.assertEqual({i: n for i, n in by_bin.items() if n},
                             {b["t_ms"]: b["roce_bytes"] for b in tl["bins"]})

    def test_default_bin_is_10_ms(self):
        c = Capture(step_ns=3 * 1_000_000)
        for psn in range(5):  # 0, 3, 6, 9, 12 ms: two 10 ms bins
            c.add(cap.roce(ext=cap.reth(dma_len=10), payload=10, psn=psn))
        j = self.analyze(self.file("ten.pcap", cap.pcap_bytes(c.records, nano=True)))
        self.assertEqual(j["timeline"]["bin_ms"], 10)
        w = c.records[0].wire_len
        self.assertEqual([(b["t_ms"], b["roce_bytes"]) for b in j["timeline"]["bins"]], [(0, 4 * w), (10, w)])


class Workers(AnalyzeTest):
    """9. --workers 1, 2 and 4 print the same JSON on every capture, the file cut into parts at
    record boundaries (small parts here, so small captures are cut too). Only the members that
    say how it was read differ: file.workers, file.parts and file.read_on."""

    READ_MEMBERS = ("workers", "parts", "read_on")
    PART_BYTES = "256"

    def run_workers(self, path, *opts):
        """{workers: (exit code, stderr, JSON less the read members, file.parts)}."""
        out = {}
        for workers in (1, 2, 4):
            p = run_rocehil(path, "--json", "--workers", workers, "--min-part-bytes", self.PART_BYTES, *opts)
            j = json.loads(p.stdout)
            self.assertEqual(j["file"]["workers"], workers)
            read = {k: j["file"].pop(k) for k in self.READ_MEMBERS}
            out[workers] = (p.returncode, p.stderr.decode(), json.dumps(j, sort_keys=False), read)
        return out

    def assert_same_for_every_worker_count(self, path, *opts, must_cut=True):
        runs = self.run_workers(path, *opts)
        one = runs[1]
        self.assertEqual(one[3]["parts"], 1)
        for workers in (2, 4):
            code, err, text, read = runs[workers]
            self.assertEqual((code, err), one[:2], f"--workers {workers}: exit code and stderr")
            self.assertEqual(text, one[2], f"--workers {workers}: the JSON")
            if must_cut:
                self.assertGreater(read["parts"], 1, f"--workers {workers} cut {path} into parts")
                self.assertLessEqual(read["parts"], workers)
        return json.loads(one[2])

    def test_a_file_of_two_links_at_two_speeds_cut_into_parts(self):
        # Interfaces 0 (10G) and 1 (100G) take the frames in turn: PFC XOFFs of 0xFFFF on both.
        c = Capture()
        for i in range(400):
            c.add(cap.pfc_frame(0x08, {3: 0xFFFF}), ts_ns=T0 + i * 50_000)
        path = self.file("two-speeds.pcapng", cap.pcapng_bytes(
            c.records, tsresols=(9, 9), speeds_bps=(10 * 10**9, 100 * 10**9)))
        j = self.assert_same_for_every_worker_count(path)
        self.assertEqual(j["options"]["interface_link_gbps"], [10.0, 100.0])
        self.assertTrue(math.isclose(j["pfc"]["priorities"][3]["pause_ns"],
                                     200 * 0xFFFF * 512 / 10 + 200 * 0xFFFF * 512 / 100,
                                     rel_tol=1e-12), j["pfc"]["priorities"][3])

    def test_held_in_captures_in_every_format(self):
        records = mixed_capture().records
        psn = Capture()
        for (src, dst), qp, packets, *_ in PsnSemantics.scenarios().values():
            for opcode, number, ext in packets:
                psn.add(cap.roce(src, dst, opcode, qp, number, ext, payload=64))
        files = {
            "mixed.pcap": cap.pcap_bytes(records),
            "mixed-ns-big.pcap": cap.pcap_bytes(records, nano=True, big_endian=True),
            "mixed.pcapng": cap.pcapng_bytes(records),
            "mixed-big.pcapng": cap.pcapng_bytes(records, big_endian=True, tsresols=(6,)),
            "psn.pcap": cap.pcap_bytes(psn.records),
        }
        for name, data in files.items():
            with self.subTest(name):
                j = self.assert_same_for_every_worker_count(self.file(name, data))
                self.assertEqual(j["frames"], len(records) if name.startswith("mixed") else len(psn.records))

    def test_a_pfc_storm_across_the_cuts_is_one_storm(self):
        # Priority 3 held in XOFF for 300 ms by refreshes every 100 us (0xFFFF quanta last
        # 335.5 us at 100G), then an XON: every cut falls inside this one pause.
        c = Capture()
        for i in range(3001):
            c.add(cap.pfc_frame(0x08, {3: 0xFFFF}), ts_ns=T0 + i * 100_000)
        c.add(cap.pfc_frame(0x08, {3: 0}), ts_ns=T0 + 300_050_000)
        path = self.file("storm.pcap", cap.pcap_bytes(c.records, nano=True))
        j = self.assert_same_for_every_worker_count(path)
        self.assertEqual(len(j["pfc"]["storms"]), 1, j["pfc"]["storms"])
        self.assertEqual(j["pfc"]["storms"][0]["duration_ns"], 300_050_000)

    def test_truncated_and_corrupt_files_stop_at_the_same_record(self):
        cases = dict(BadInput._truncated_cases(self))
        recs = mixed_capture().records
        pcap = bytearray(cap.pcap_bytes(recs))
        off = 24 + sum(16 + len(r.data) for r in recs[:20])  # the 21st record's header
        pcap[off + 8:off + 12] = (300_000).to_bytes(4, "little")
        cases["corrupt record 21"] = (bytes(pcap), "pcap-us")
        for name, (data, _) in cases.items():
            with self.subTest(name):
                # A cut of 5 records may be too short to part; the corrupt one is not.
                self.assert_same_for_every_worker_count(self.file("bad.capture", data),
                                                        must_cut=name.startswith("corrupt"))

    @unittest.skipUnless(os.path.exists(SYNTH), "rocehil-synth-capture is not built")
    def test_lossy_traffic_whose_resends_cross_the_cuts(self):
        path = self.dir / "synth.pcap"
        subprocess.run([SYNTH, "--out", str(path), "--frames", "60000", "--qps", "300", "--hosts", "16",
                        "--loss-per-million", "3000", "--ipv6-percent", "20", "--seed", "5"],
                       check=True, capture_output=True, timeout=60)
        j = self.assert_same_for_every_worker_count(path, "--bin-ms", "1")
        self.assertGreater(sum(f["retransmits"] for f in j["flows"]), 100, "go-back-N resends in the capture")
        self.assertGreater(sum(f["psn_gaps"] for f in j["flows"]), 10)

    def test_standard_input_is_read_by_one(self):
        data = cap.pcap_bytes(mixed_capture().records)
        p = run_rocehil("-", "--json", "--workers", "4", "--min-part-bytes", self.PART_BYTES, stdin=data)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout)["file"]["parts"], 1)


class BadInput(AnalyzeTest):
    """8. Exit codes and one-line messages that name the file."""

    def test_missing_file(self):
        path = str(self.dir / "no-such-capture.pcap")
        p = run_rocehil(path, "--json")
        line = self.assert_error(p, p.returncode, path)
        self.assertIn(p.returncode, (2, 3), line)
        self.assertRegex(line, r"(?i)no such file|not found|does not exist", line)

    def test_not_a_capture_file(self):
        path = self.file("notes.txt", b"these are notes about the fabric, not packets\n" * 4)
        self.assert_error(run_rocehil(path, "--json"), 2, path)

    def test_empty_file(self):
        path = self.file("empty.pcap", b"")
        self.assert_error(run_rocehil(path, "--json"), 2, path)

    def test_file_shorter_than_a_header(self):
        path = self.file("stub.pcap", cap.pcap_bytes([])[:10])
        self.assert_error(run_rocehil(path, "--json"), 2, path)

    def test_empty_stdin(self):
        p = run_rocehil("-", "--json", stdin=b"")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertTrue(p.stderr.decode().startswith("rocehil: error: "), p.stderr)

    def test_header_only_capture_is_fine(self):
        for name, data in (("h.pcap", cap.pcap_bytes([])), ("h.pcapng", cap.pcapng_bytes([]))):
            with self.subTest(name):
                j = self.analyze(self.file(name, data))
                self.assertEqual((j["frames"], j["flows"], j["roce"]["packets"]), (0, [], 0))

    def _truncated_cases(self):
        recs = mixed_capture().records[:5]
        whole_pcap, whole_ng = cap.pcap_bytes(recs, nano=True), cap.pcapng_bytes(recs)
        last_len = len(recs[-1].data)
        return {
            "inside the last frame's bytes": (whole_pcap[:-(last_len // 2)], "pcap-ns"),
            "inside the last record header": (whole_pcap[:-(last_len + 8)], "pcap-ns"),
            "inside the last pcapng block": (whole_ng[:-10], "pcapng"),
        }

    def test_truncated_last_record(self):
        for name, (data, fmt) in self._truncated_cases().items():
            with self.subTest(name):
                path = self.file("cut.capture", data)
                p = run_rocehil(path, "--json")
                err = p.stderr.decode()
                self.assertEqual(p.returncode, 0, err)
                self.assertIn("warning", err)
                self.assertIn(path, err)
                j = json.loads(p.stdout)
                self.assertEqual([x["kind"] for x in j["file"]["problems"]], ["truncated"])
                self.assertEqual(j["frames"], 4, "the four whole records before the cut")
                self.assertEqual(j["roce"]["packets"], 4)
                self.assertEqual(j["file"]["format"], fmt)

    def test_corrupt_record_is_exit_2_with_frames_before_it(self):
        recs = mixed_capture().records[:4]
        pcap = bytearray(cap.pcap_bytes(recs))
        off = 24 + sum(16 + len(r.data) for r in recs[:2])  # the third record's header
        pcap[off + 8:off + 12] = (300_000).to_bytes(4, "little")  # caplen beyond libpcap's 262144
        pcapng = bytearray(cap.pcapng_bytes(recs))
        off = len(cap.pcapng_bytes(recs[:2]))  # the third EPB
        pcapng[off + 4:off + 8] = (20).to_bytes(4, "little")  # an EPB shorter than its fixed fields
        for name, data in (("corrupt.pcap", pcap), ("corrupt.pcapng", pcapng)):
            with self.subTest(name):
                path = self.file(name, bytes(data))
                p = run_rocehil(path, "--json")
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(path, p.stderr.decode())
                j = json.loads(p.stdout)
                self.assertEqual(j["frames"], 2, "the records before the corrupt one are reported")
                self.assertEqual([x["kind"] for x in j["file"]["problems"]], ["corrupt"])

    def test_bad_options(self):
        path = self.file("ok.pcap", cap.pcap_bytes(mixed_capture().records))
        for args in (["--link-gbps", "0"], ["--link-gbps", "-100"], ["--link-gbps", "fast"],
                     ["--bin-ms", "0"], ["--bin-ms", "-1"], ["--top", "x"], ["--no-such-option"], []):
            with self.subTest(args=args):
                p = run_rocehil(*([path] if args else []), *args)
                self.assertEqual(p.returncode, 2, f"{args}: stderr {p.stderr.decode()!r}")
                self.assertNotEqual(p.stderr, b"", "says what was wrong")
                self.assertEqual(p.stdout, b"")

    def test_help(self):
        p = subprocess.run([ROCEHIL, "analyze", "--help"], capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        for needle in ("Examples:", "rocehil analyze -", "--link-gbps", "--bin-ms", "--top", "--json"):
            self.assertIn(needle, p.stdout)


class TextOutput(AnalyzeTest):
    """9. Tables for a person: CNPs per QP, PFC per priority, top flows; --top limits the flows."""

    def section(self, text, title):
        """The paragraph of the text output that starts with `title` (paragraphs: blank lines)."""
        chunks = [c for c in text.split("\n\n") if c.startswith(title)]
        self.assertEqual(len(chunks), 1, f"one section '{title}' in:\n{text}")
        return chunks[0]

    def flow_rows(self, text):
        flows = self.section(text, "Flows")
        return [line for line in flows.splitlines() if any(ip in line for ip in ("198.18.0.", "2001:db8::"))]

    def test_tables(self):
        path = self.file("mixed.pcap", cap.pcap_bytes(mixed_capture().records))
        p = run_rocehil(path)
        self.assertEqual(p.returncode, 0, p.stderr)
        text = p.stdout.decode()
        self.assertIn(path, text.splitlines()[0])
        cnps = self.section(text, "CNPs")
        self.assertRegex(cnps.splitlines()[0], r"\b6\b.*\b3 QPs")
        for qp, n in MIXED["cnp_by_qp"].items():
            (row,) = [line.split() for line in cnps.splitlines() if f"({qp})" in line]
            self.assertEqual(row[:3], [f"0x{int(qp):06x}", f"({qp})", str(n)])
        pfc = self.section(text, "PFC")
        prio_rows = [r.split() for r in pfc.splitlines()[1:] if r.split() and r.split()[0] in set("01234567")]
        self.assertEqual([r[0] for r in prio_rows], [str(i) for i in range(8)])
        self.assertEqual(prio_rows[6][1:4], ["3", "2", "1"])
        self.assertEqual(prio_rows[3][1:4], ["2", "1", "1"])
        self.assertEqual(len(self.flow_rows(text)), len(MIXED["flows"]))

    def test_numbers_grouped_by_thousands(self):
        c = Capture()
        for i in range(1234):
            c.add(cap.pfc_frame(0x40, {6: 5}))
        c.add(cap.pfc_frame(0x48, {3: 10, 6: 0xFFFF}))
        p = run_rocehil(self.file("pfc.pcap", cap.pcap_bytes(c.records)))
        self.assertEqual(p.returncode, 0, p.stderr)
        text = p.stdout.decode()
        self.assertIn(": 1,235 frames,", text.splitlines()[0])
        rows = {r.split()[0]: r.split() for r in self.section(text, "PFC").splitlines()[1:] if r.split()}
        self.assertEqual(rows["3"][1:5], ["1", "1", "0", "10"])
        self.assertEqual(rows["6"][1:5], ["1,235", "1,235", "0", f"{1234 * 5 + 0xFFFF:,}"])

    def test_top_limits_flows(self):
        capture = mixed_capture()
        path = self.file("mixed.pcap", cap.pcap_bytes(capture.records))
        biggest = sorted(capture.wire, key=lambda k: -capture.wire[k])[:2]
        p = run_rocehil(path, "--top", "2")
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = self.flow_rows(p.stdout.decode())
        self.assertEqual(len(rows), 2, rows)
        for row, (src, dst, qp) in zip(rows, biggest):
            self.assertIn(src, row)
            self.assertIn(f"({qp})", row)
        j = self.analyze(path, "--top", "2")
        self.assertEqual([(f["src"], f["dst"], f["dest_qp"]) for f in j["flows"]], biggest)
        self.assertEqual(j["flow_count"], len(MIXED["flows"]))
        self.assertEqual(len(self.analyze(path)["flows"]), len(MIXED["flows"]), "JSON lists all by default")


@unittest.skipUnless(SYNTH and os.access(SYNTH, os.X_OK),
                     f"rocehil-synth-capture is not built ({SYNTH or 'no rocehil path'})")
class SynthCapture(AnalyzeTest):
    """10. rocehil's own frame builder, through rocehil-synth-capture: ICRC checked by scapy (IPv4)
    and by this file's Annex A17 implementation (IPv4 and IPv6), decoded cleanly by tshark; and
    the analysis of the generated capture equals tshark's counts and the generator's --truth."""

    ARGS = ["--frames", "3000", "--snaplen", "0", "--payload", "256", "--ipv6-percent", "30",
            "--ce-percent", "5", "--loss-per-million", "20000", "--pfc-per-million", "5000",
            "--pause-per-million", "2000"]

    def synth(self, name, *extra):
        path, truth = str(self.dir / name), str(self.dir / (name + ".truth.json"))
        p = subprocess.run([SYNTH, "--out", path, "--truth", truth, *self.ARGS, *extra],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(truth) as f:
            return path, json.load(f)

    def test_icrc(self):
        path, _ = self.synth("synth.pcap", "--seed", "7")
        checked = collections.Counter()
        for i, pkt in enumerate(rdpcap(path), 1):
            if not (pkt.haslayer(UDP) and pkt[UDP].dport == 4791 and pkt.haslayer(BTH)):
                continue
            frame = raw(pkt)
            l3 = pkt[IP] if pkt.haslayer(IP) else pkt[IPv6]
            self.assertEqual(frame[-4:].hex(), cap.icrc(frame, len(frame) - len(raw(l3))).hex(),
                             f"frame {i}: ICRC by IBTA Annex A17")
            if pkt.haslayer(IP):
                self.assertEqual(frame[-4:].hex(), pkt[BTH].compute_icrc(None).hex(), f"frame {i}: scapy's ICRC")
            checked[l3.version] += 1
        self.assertGreater(checked[4], 500, "enough IPv4 RoCE frames to mean something")
        self.assertGreater(checked[6], 200, "enough IPv6 RoCE frames to mean something")

    @unittest.skipUnless(TSHARK, "tshark is not installed")
    def test_tshark_decodes_cleanly(self):
        path, _ = self.synth("synth.pcap", "--seed", "7")
        rows = tshark_rows(path, "_ws.malformed || _ws.expert.severity >= error", "frame.number", "ipv6.src",
                           "_ws.malformed", "_ws.expert.message", "_ws.expert.severity")
        problems = []
        for number, ipv6_src, malformed, message, severity in rows:
            # RoCEv2 leaves the UDP checksum zero, over IPv6 too (IBTA Annex A17, RFC 6935/6936:
            # the ICRC protects the packet); tshark calls a zero IPv6 UDP checksum illegal.
            if ipv6_src and not malformed and message == "Illegal checksum value (0)":
                continue
            problems.append((number, malformed, message, severity))
        self.assertEqual(problems, [], "tshark: malformed frames or expert errors")

    @unittest.skipUnless(TSHARK, "tshark is not installed")
    def test_analysis_equals_tshark_and_truth(self):
        for name, extra in (("synth.pcap", ["--seed", "7"]),
                            ("synth-vlan.pcapng", ["--seed", "8", "--vlan", "100", "--format", "pcapng"])):
            with self.subTest(name):
                path, truth = self.synth(name, *extra)
                j = self.analyze(path)
                self.assertEqual(j["frames"], tshark_count(path, "frame"))
                self.assertEqual(j["roce"]["packets"], tshark_count(path, BTH_FILTER))
                self.assertEqual(j["roce"]["malformed"], tshark_count(path, MALFORMED_FILTER))
                self.assertEqual(j["cnp"]["count"], tshark_count(path, CNP_FILTER))
                self.assertEqual(j["roce"]["ecn_ce"], tshark_count(path, CE_FILTER))
                self.assertEqual(j["roce"]["naks"], tshark_count(path, NAK_FILTER))
                self.assertEqual(j["pfc"]["frames"], tshark_count(path, PFC_FILTER))
                self.assertEqual(j["pause_8023x"]["frames"], tshark_count(path, PAUSE_FILTER))
                self.assertEqual(priorities(j), tshark_pfc_priorities(path))
                keys = ("packets", "bytes", "ecn_ce", "naks")
                self.assertEqual({k: {x: f[x] for x in keys} for k, f in json_flows(j).items()},
                                 {k: {x: v.get(x, 0) for x in keys} for k, v in tshark_flows(path).items()})
                self.assertEqual({k: f["udp_sport"] for k, f in json_flows(j).items()},
                                 tshark_first_sports(path))
                # the generator's ground truth, PSN gaps and retransmits included
                self.assertEqual(j["frames"], truth["frames"])
                for key in ("packets", "malformed", "ecn_ce", "acks", "naks", "rnr_naks", "by_opcode"):
                    if key in truth["roce"]:
                        self.assertEqual(j["roce"][key], truth["roce"][key], f"roce.{key}")
                self.assertEqual(j["cnp"], truth["cnp"])
                self.assertEqual(priorities(j), priorities(truth))
                self.assertEqual(j["pause_8023x"]["frames"], truth["pause_8023x"]["frames"])
                keys = ("packets", "bytes", "ecn_ce", "psn_gaps", "retransmits", "naks")
                self.assertEqual({k: {x: f[x] for x in keys} for k, f in json_flows(j).items()},
                                 {k: {x: f[x] for x in keys} for k, f in json_flows(truth).items()})
                self.assertGreater(sum(f["psn_gaps"] for f in truth["flows"]), 0, "the loss shows as gaps")
                self.assertGreater(sum(f["retransmits"] for f in truth["flows"]), 0, "and as resends")


# --- pause accounting ---------------------------------------------------------------------------

PAUSE_CLASS = 8  # 802.3x PAUSE, accounted as a ninth class after the eight PFC priorities


def reference_pauses(frames, link_gbps=100, storm_ms=100, window_end_ns=0, spine=lambda mac: False):
    """Pause accounting written here from 802.1Qbb / 802.3x, in exact fractions: `frames` are
    (ts_ns, source MAC, {class: quanta}) in capture order, class 0-7 a PFC priority (its bit set)
    and 8 a PAUSE frame. Per (MAC, class): an XOFF at t holds the class until t + quanta x 512 /
    link_gbps ns; an XOFF before then keeps the same pause going until its own expiry; one at or
    after the expiry begins a new pause; an XON (quanta 0) ends the pause at t. The window runs
    from the first frame to max(last frame, window_end_ns); a pause in force at its end ends there
    and is ongoing. A storm is a pause longer than storm_ms."""
    quantum = Fraction(512) / Fraction(link_gbps)
    start = min(ts for ts, _, _ in frames)
    end = max(max(ts for ts, _, _ in frames), window_end_ns)
    running, pauses = {}, []  # (mac, class) -> [start, expiry]; (class, mac, start, end, ongoing)
    for ts, mac, classes in frames:
        for cls, quanta in classes.items():
            pause = running.get((mac, cls))
            if pause and ts >= pause[1]:  # it ran out before this frame
                pauses.append((cls, mac, pause[0], pause[1], False))
                del running[(mac, cls)]
                pause = None
            if quanta == 0:
                if pause:
                    pauses.append((cls, mac, pause[0], Fraction(ts), False))
                    running.pop((mac, cls))
                continue
            running[(mac, cls)] = [pause[0] if pause else Fraction(ts), ts + quanta * quantum]
    for (mac, cls), (begin, expiry) in running.items():
        pauses.append((cls, mac, begin, min(expiry, Fraction(end)), expiry > end))
    window = end - start
    classes = []
    for cls in range(9):
        lengths = [e - b for c, _, b, e, _ in pauses if c == cls]
        paused = sum(lengths, Fraction(0))
        classes.append({"paused_ns": paused, "longest_pause_ns": max(lengths, default=Fraction(0)),
                        "pause_fraction": paused / window if window else 0,
                        "storms": sum(1 for x in lengths if x > storm_ms * 10**6)})
    storms = sorted((b, c, mac, e, ongoing) for c, mac, b, e, ongoing in pauses if e - b > storm_ms * 10**6)
    storms = [{"priority": c, "source_mac": mac, "start_ns": b, "end_ns": e, "ongoing": ongoing,
               "from_spine": spine(mac)} for b, c, mac, e, ongoing in storms]
    from_spine = {"frames": sum(1 for _, mac, _ in frames if spine(mac)),
                  "xoff": sum(1 for _, mac, q in frames if spine(mac) and any(q.values())),
                  "paused_ns": sum((e - b for _, mac, b, e, _ in pauses if spine(mac)), Fraction(0)),
                  "storms": sum(1 for s in storms if s["from_spine"])}
    return {"window": (start, end), "classes": classes, "storms": storms, "from_spine": from_spine}


def mac_control(src, opcode_body):
    body = opcode_body + bytes(46 - len(opcode_body))
    return raw(Ether(src=src, dst=cap.PFC_MAC, type=0x8808) / Raw(body))


class PauseAccounting(AnalyzeTest):
    """11. Time paused, longest pause, storms and pauses from spines, against reference_pauses()
    over the frames the test built (and tshark's reading of them)."""

    LEAF, SPINE, OTHER_LEAF = "02:00:00:00:0a:01", "02:00:00:00:5b:01", "02:00:00:00:0a:02"

    @classmethod
    def storm_frames(cls):
        """(ts_ns, src MAC, {class: quanta}) in capture order:
        - priority 3 stormed by LEAF: 2000 XOFFs of 0xffff every 100 us (one 200.2 ms pause);
        - priority 5 from OTHER_LEAF: XOFF 1000 ended by an XON after 2 us, then one of 0xffff
          that runs out, then two XOFFs of 1000 (5.12 us) the second exactly at the first's
          expiry (two pauses, not one); priorities 5 and 7 in one frame from SPINE;
        - 802.3x PAUSE from SPINE: 400 of 0xffff every 300 us (a 120 ms pause, refreshed just
          inside each 335.5 us);
        - priority 3 from SPINE from 150 ms on, overlapping LEAF's storm, 3200 XOFFs every 100 us,
          in force when the capture ends at 469.9 ms: a 319.9 ms storm, ongoing."""
        ms, us = 1_000_000, 1_000
        frames = [(T0 + i * 100 * us, cls.LEAF, {3: 0xFFFF}) for i in range(2000)]
        frames += [(T0 + 50 * ms, cls.OTHER_LEAF, {5: 1000}), (T0 + 50 * ms + 2 * us, cls.OTHER_LEAF, {5: 0}),
                   (T0 + 60 * ms, cls.OTHER_LEAF, {5: 0xFFFF}), (T0 + 70 * ms, cls.SPINE, {5: 300, 7: 0}),
                   (T0 + 80 * ms, cls.OTHER_LEAF, {5: 1000}), (T0 + 80 * ms + 5120, cls.OTHER_LEAF, {5: 1000})]
        frames += [(T0 + 210 * ms + i * 300 * us, cls.SPINE, {PAUSE_CLASS: 0xFFFF}) for i in range(400)]
        frames += [(T0 + 150 * ms + i * 100 * us + 50 * us, cls.SPINE, {3: 0xFFFF}) for i in range(3200)]
        return sorted(frames, key=lambda f: f[0])

    def setUp(self):
        super().setUp()
        self.frames = self.storm_frames()
        built = {}  # identical frames are built once: scapy is slow
        records = []
        for ts, mac, classes in self.frames:
            key = (mac, tuple(sorted(classes.items())))
            if key not in built:
                if PAUSE_CLASS in classes:
                    body = struct.pack("!HH", 0x0001, classes[PAUSE_CLASS])
                else:
                    enable = sum(1 << p for p in classes)
                    body = struct.pack("!HH8H", 0x0101, enable, *(classes.get(p, 0) for p in range(8)))
                built[key] = mac_control(mac, body)
            records.append(cap.record(ts, built[key]))
        self.path = self.file("storm.pcap", cap.pcap_bytes(records, nano=True))

    def check(self, j, ref):
        self.assertEqual((j["window"]["start_ns"], j["window"]["end_ns"]), ref["window"])
        ours = j["pfc"]["priorities"] + [j["pause_8023x"]]
        for cls, (got, want) in enumerate(zip(ours, ref["classes"])):
            with self.subTest(cls=cls):
                for key in ("paused_ns", "longest_pause_ns"):
                    self.assertTrue(math.isclose(got[key], want[key], abs_tol=1e-3),
                                    f"class {cls} {key}: {got[key]} != {float(want[key])}")
                self.assertTrue(math.isclose(got["pause_fraction"], want["pause_fraction"], rel_tol=1e-9,
                                             abs_tol=1e-15), f"class {cls}: {got['pause_fraction']}")
                self.assertEqual(got["storms"], want["storms"])
        self.assertEqual(len(j["pfc"]["storms"]), len(ref["storms"]), j["pfc"]["storms"])
        for got, want in zip(j["pfc"]["storms"], ref["storms"]):
            self.assertEqual({k: got[k] for k in ("priority", "source_mac", "start_ns", "ongoing", "from_spine")},
                             {k: want[k] for k in ("priority", "source_mac", "start_ns", "ongoing", "from_spine")})
            self.assertEqual(got["end_ns"], round(want["end_ns"]), "end to the nearest ns")
            self.assertTrue(math.isclose(got["duration_ns"], want["end_ns"] - want["start_ns"], abs_tol=1e-3))

    def test_tshark_reads_the_frames_the_test_built(self):
        if not TSHARK:
            self.skipTest("tshark is not installed")
        rows = tshark_rows(self.path, PFC_FILTER, "frame.time_epoch", "eth.src", "macc.cbfc.enbv",
                           *[f"macc.cbfc.pause_time.c{p}" for p in range(8)])
        read = []
        for epoch, mac, enable, *quanta in rows:
            sec, frac = epoch.split(".")
            ts = int(sec) * 10**9 + int(frac.ljust(9, "0")[:9])
            read.append((ts, mac, {p: int(quanta[p], 0) for p in range(8) if int(enable, 0) & (1 << p)}))
        self.assertEqual(read, [f for f in self.frames if PAUSE_CLASS not in f[2]])
        self.assertEqual(tshark_count(self.path, PAUSE_FILTER), 400)

    def test_paused_time_longest_pause_and_storms(self):
        ref = reference_pauses(self.frames)
        # the scenario is what it says: storms on priority 3 (one of them ongoing) and on PAUSE
        self.assertEqual([(s["priority"], s["source_mac"], s["ongoing"]) for s in ref["storms"]],
                         [(3, self.LEAF, False), (3, self.SPINE, True), (PAUSE_CLASS, self.SPINE, False)])
        j = self.analyze(self.path)
        self.check(j, ref)
        self.assertEqual(j["options"]["storm_ms"], 100)
        self.assertEqual(j["options"]["direction"], "unknown")
        self.assertIsNone(j["pfc"]["from_spine"])
        # the pause requested is still every XOFF's quanta: far more than the time paused
        p3 = j["pfc"]["priorities"][3]
        self.assertTrue(math.isclose(p3["pause_ns"], 5200 * 0xFFFF * 5.12, rel_tol=1e-12))
        self.assertGreater(p3["pause_ns"], 3 * p3["paused_ns"])

    def test_storm_ms_and_link_speed(self):
        # 0.006 ms: the two 5.12 us pauses back to back are no storm, one 10.24 us pause would be;
        # 0.00512 ms: a pause of exactly the threshold is no storm.
        for args, gbps, storm_ms in ((["--storm-ms", "150"], 100, 150), (["--storm-ms", "0.5"], 100, 0.5),
                                     (["--storm-ms", "0.006"], 100, 0.006),
                                     (["--storm-ms", "0.00512"], 100, 0.00512),
                                     (["--link-gbps", "400", "--storm-ms", "120"], 400, 120)):
            with self.subTest(args=args):
                j = self.analyze(self.path, *args)
                self.check(j, reference_pauses(self.frames, gbps, storm_ms))
                self.assertEqual(j["options"]["storm_ms"], storm_ms)

    def test_from_spine_by_mac_and_by_direction(self):
        cases = {
            "by MAC": (["--spine-mac", self.SPINE.upper()], lambda mac: mac == self.SPINE),
            "two MACs": (["--spine-mac", self.SPINE, "--spine-mac", self.OTHER_LEAF.replace(":", "-")],
                         lambda mac: mac in (self.SPINE, self.OTHER_LEAF)),
            "spine to leaf": (["--direction", "spine-to-leaf"], lambda mac: True),
            "leaf to spine": (["--direction", "leaf-to-spine"], lambda mac: False),
        }
        for name, (args, spine) in cases.items():
            with self.subTest(name):
                ref = reference_pauses(self.frames, spine=spine)
                j = self.analyze(self.path, *args)
                self.check(j, ref)
                got = j["pfc"]["from_spine"]
                self.assertEqual({k: got[k] for k in ("frames", "xoff", "storms")},
                                 {k: ref["from_spine"][k] for k in ("frames", "xoff", "storms")})
                self.assertTrue(math.isclose(got["paused_ns"], ref["from_spine"]["paused_ns"], abs_tol=1e-3))
        self.assertEqual(self.analyze(self.path, "--direction", "spine-to-leaf")["options"]["direction"],
                         "spine-to-leaf")
        # one MAC per --spine-mac: the file may follow it
        p = run_rocehil("--spine-mac", self.SPINE, self.path, "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout)["options"]["spine_macs"], [self.SPINE])

    def test_text_lists_the_storms(self):
        p = run_rocehil(self.path, "--spine-mac", self.SPINE)
        self.assertEqual(p.returncode, 0, p.stderr)
        text = p.stdout.decode()
        storms = [line.split() for line in text.split("\n\nPause storms")[1].split("\n\n")[0].splitlines()
                  if line.strip()[:1].isdigit() or line.strip().startswith("802.3x")]
        self.assertEqual([(row[0], row[1]) for row in storms],
                         [("3", self.LEAF), ("3", self.SPINE), ("802.3x", self.SPINE)], text)
        self.assertEqual([row[-1] for row in storms], ["no", "yes", "yes"], "from spine")
        self.assertIn("yes, at the end", text)
        self.assertIn("From spine (toward the leaf): 3,601 PFC/PAUSE frames", text)

    def test_bad_pause_options(self):
        cases = {
            ("--storm-ms", "0"): ("--storm-ms", "milliseconds above 0"),
            ("--storm-ms", "-5"): ("--storm-ms", "milliseconds above 0"),
            ("--storm-ms", "soon"): ("--storm-ms", "'soon'"),
            ("--storm-ms", "nan"): ("--storm-ms", "'nan'"),
            ("--spine-mac", "02:00:00:00:5b"): ("--spine-mac", "'02:00:00:00:5b'", "0c:42:a1:00:00:01"),
            ("--spine-mac", "02:00:00:00:5b:zz"): ("--spine-mac", "six hex pairs"),
            ("--spine-mac", "02:00-00:00:5b:01"): ("--spine-mac", "six hex pairs"),
            ("--direction", "up"): ("--direction", "'up'", "leaf-to-spine", "spine-to-leaf"),
        }
        for args, needles in cases.items():
            with self.subTest(args=args):
                self.assert_error(run_rocehil(self.path, *args), 2, *needles)

    def test_help_teaches_the_pause_options(self):
        p = subprocess.run([ROCEHIL, "analyze", "--help"], capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        for needle in ("--storm-ms", "--direction", "--spine-mac", "leaf-to-spine|spine-to-leaf",
                       "continuous pause", "ongoing"):
            self.assertIn(needle, p.stdout)


def main():
    if not ROCEHIL or not os.access(ROCEHIL, os.X_OK):
        sys.exit(f"usage: {sys.argv[0]} PATH/TO/rocehil [unittest options] (or set ROCEHIL_BIN); "
                 f"got {ROCEHIL or 'nothing'}")
    unittest.main()


if __name__ == "__main__":
    main()
