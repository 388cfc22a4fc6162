#!/usr/bin/python3
"""System tests of `rocehil analyze` on remote mirror captures (issue 36): the held-in analyzer
inputs of analyze_cli_test.py, wrapped by scapy as switches send them (ERSPAN II, ERSPAN III,
GRE TEB; over IPv4 and IPv6; with and without GRE sequence numbers), give the figures of the
same frames unwrapped; tshark's reading of the wrapped files agrees frame by frame on the inner
5-tuple and opcode; sequence gaps are frames lost upstream; hostile tunnel headers are counted
as malformed.

Run:  /usr/bin/python3 harness/cli/tests/system/remote_mirror_cli_test.py BUILD/harness/rocehil [-v]
(or set ROCEHIL_BIN). Needs Debian's python3-scapy and tshark.
"""

import collections
import json
import sys
import unittest
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))
import analyze_cli_test as act  # noqa: E402  (takes the binary from argv first)
import captures as cap  # noqa: E402

from scapy.compat import raw  # noqa: E402
from scapy.contrib.erspan import ERSPAN_II, ERSPAN_III, ERSPAN_PlatformSpecific  # noqa: E402
from scapy.layers.inet import IP  # noqa: E402
from scapy.layers.inet6 import IPv6  # noqa: E402
from scapy.layers.l2 import GRE, Ether  # noqa: E402
from scapy.packet import Raw  # noqa: E402

SWITCH_V4, COLLECTOR_V4 = "198.19.1.201", "198.19.0.2"
SWITCH_V6, COLLECTOR_V6 = "2001:db8::5e", "2001:db8::c0"

# (name, kind, outer IPv6, GRE sequence numbers)
WRAPS = [
    ("erspan2-v4", "erspan2", False, True),
    ("erspan2-v6", "erspan2", True, True),
    ("erspan3-v4-noseq", "erspan3", False, False),
    ("erspan3-v6", "erspan3", True, True),
    ("teb-v4", "teb", False, True),
    ("teb-v6-noseq", "teb", True, False),
]


def tunnel(kind, v6, seq, number, session, ts_ns):
    """The headers a switch puts before frame `number` of its session."""
    outer = Ether(src="02:00:00:00:00:5e", dst="02:00:00:00:00:c0")
    outer /= IPv6(src=SWITCH_V6, dst=COLLECTOR_V6) if v6 else IP(src=SWITCH_V4, dst=COLLECTOR_V4, flags="DF")
    if kind == "erspan2":  # type II always has the sequence number: it is what marks it type II
        return outer / GRE(seqnum_present=1, sequence_number=number) / ERSPAN_II(ver=1, session_id=session)
    gre = GRE(seqnum_present=int(seq), sequence_number=number if seq else None)
    if kind == "erspan3":  # IEEE 1588 time of the switch, seconds in platform subheader 3
        sec, ns = divmod(ts_ns, 10**9)
        return (outer / gre / ERSPAN_III(session_id=session, timestamp=ns, gra=2, o=1)
                / ERSPAN_PlatformSpecific(platf_id=3, info2=sec))
    gre.key_present, gre.key, gre.proto = 1, session, 0x6558
    return outer / gre


def wrap(records, kind, v6, seq, session=3, lost=(), jitter_ns=0):
    """The records as a collector receives them: each frame's bytes on the wire (its captured
    bytes, then zeros for what the capture cut) inside the tunnel, cut again to what was captured.
    With ERSPAN III the collector stamps each frame up to `jitter_ns` late."""
    out = []
    for i, r in enumerate(records):
        if i in lost:
            continue
        head = tunnel(kind, v6, seq, i, session, r.ts_ns)
        whole = raw(head / Raw(r.data + bytes(r.wire_len - len(r.data))))
        overhead = len(whole) - r.wire_len
        late = (i * 7919) % jitter_ns if jitter_ns and kind == "erspan3" else 0
        out.append(cap.Record(r.ts_ns + late, whole[:overhead + len(r.data)], len(whole)))
    return out


def held_in_records():
    """analyze_cli_test's mixed capture, then the PSN scenarios' packets after it."""
    records = list(act.mixed_capture().records)
    psn = act.Capture(start_ns=records[-1].ts_ns + 1_000_000)
    for (src, dst), qp, packets, *_ in act.PsnSemantics.scenarios().values():
        for opcode, number, ext in packets:
            psn.add(cap.roce(src, dst, opcode, qp, number, ext, payload=64))
    return records + psn.records


def figures(j):
    """What must not change when frames arrive through a tunnel."""
    return {k: v for k, v in j.items() if k not in ("bytes", "mirror", "file", "options")}


INNER_FIELDS = ("ip.src", "ip.dst", "ipv6.src", "ipv6.dst", "udp.srcport", "udp.dstport",
                "infiniband.bth.opcode", "infiniband.bth.destqp")


def tshark_inner(path, outer_v6=None):
    """Per frame, tshark's inner (src, dst, UDP ports, BTH opcode, dest QP): every occurrence of
    each field, less the outer header's address (the first of its family) when wrapped."""
    rows = []
    for number, *row in act.tshark_rows_all(path, "frame", "frame.number", *INNER_FIELDS):
        v = dict(zip(INNER_FIELDS, (f.split(",") if f else [] for f in row)))
        if outer_v6 is not None:
            family = "ipv6" if outer_v6 else "ip"
            v[family + ".src"], v[family + ".dst"] = v[family + ".src"][1:], v[family + ".dst"][1:]
        src = (v["ip.src"] or v["ipv6.src"] or [""])[0]
        dst = (v["ip.dst"] or v["ipv6.dst"] or [""])[0]
        rows.append((src, dst) + tuple((v[f] or [""])[0] for f in INNER_FIELDS[4:]))
    return rows


class RemoteMirrors(act.AnalyzeTest):

    @classmethod
    def setUpClass(cls):
        cls.records = held_in_records()

    def plain(self):
        return self.file("plain.pcap", cap.pcap_bytes(self.records, nano=True))

    def test_every_wrap_gives_the_unwrapped_figures(self):
        plain = self.analyze(self.plain())
        for name, kind, v6, seq in WRAPS:
            with self.subTest(name):
                wrapped = wrap(self.records, kind, v6, seq, jitter_ns=40_000)
                path = self.file(name + ".pcap", cap.pcap_bytes(wrapped, nano=True))
                j = self.analyze(path)
                self.assertEqual(figures(j), figures(plain))
                m = j["mirror"]
                numbered = seq or kind == "erspan2"  # losses known only from sequence numbers
                self.assertEqual((m["frames"], m["malformed"], m["lost"], m["coverage"]),
                                 (len(self.records), 0, 0, 1.0) if numbered
                                 else (len(self.records), 0, None, None))
                (s,) = m["sessions"]
                self.assertEqual(s["kind"], {"teb": "gre-teb"}.get(kind, kind))
                self.assertEqual(s["id"], 3)
                self.assertEqual(s["source"], SWITCH_V6 if v6 else SWITCH_V4)
                self.assertEqual(s["sequenced"], len(self.records) if seq or kind == "erspan2" else 0)
                self.assertEqual(s["switch_timed"], len(self.records) if kind == "erspan3" else 0)
                self.assertEqual(s["bytes"], sum(r.wire_len for r in wrapped))

    @unittest.skipUnless(act.TSHARK, "tshark is not installed")
    def test_tshark_reads_the_same_inner_frames(self):
        plain_rows = tshark_inner(self.plain())
        self.assertEqual(len(plain_rows), len(self.records))
        for name, kind, v6, seq in WRAPS:
            with self.subTest(name):
                wrapped = wrap(self.records, kind, v6, seq)
                path = self.file(name + ".pcap", cap.pcap_bytes(wrapped, nano=True))
                self.assertEqual(tshark_inner(path, outer_v6=v6), plain_rows)
                # tshark's session IDs and sequence numbers are the ones sent
                if kind != "teb":
                    ids = {r[0] for r in act.tshark_rows(path, "erspan", "erspan.spanid")}
                    self.assertEqual(ids, {"3"})
                if seq or kind == "erspan2":
                    numbers = [int(r[0]) for r in act.tshark_rows(path, "gre", "gre.sequence_number")]
                    self.assertEqual(numbers, list(range(len(self.records))))
                # rocehil's flows and opcodes are tshark's, read inside the tunnel
                j = self.analyze(path)
                flows = collections.Counter()
                opcodes = collections.Counter()
                for src, dst, sport, dport, opcode, qp in tshark_inner(path, outer_v6=v6):
                    if dport != "4791" or not opcode:
                        continue
                    opcodes[int(opcode, 0)] += 1
                    if int(opcode, 0) != 0x81:
                        flows[(src, dst, int(qp, 0))] += 1
                self.assertEqual({k: f["packets"] for k, f in act.json_flows(j).items()}, dict(flows))
                self.assertEqual(sum(j["roce"]["by_opcode"].values()), sum(opcodes.values()))

    def test_a_gap_in_sequence_numbers_is_coverage_below_one(self):
        lost = {3, 4, 5, 17}
        kept = [r for i, r in enumerate(self.records) if i not in lost]
        j_kept = self.analyze(self.file("kept.pcap", cap.pcap_bytes(kept, nano=True)))
        wrapped = wrap(self.records, "erspan2", False, True, lost=lost)
        j = self.analyze(self.file("gaps.pcap", cap.pcap_bytes(wrapped, nano=True)))
        self.assertEqual(figures(j), figures(j_kept))
        (s,) = j["mirror"]["sessions"]
        n = len(self.records) - len(lost)
        self.assertEqual((s["sequenced"], s["lost"], s["late"]), (n, 4, 0))
        self.assertAlmostEqual(s["coverage"], n / (n + 4))
        self.assertAlmostEqual(j["mirror"]["coverage"], n / (n + 4))
        # The text report says it too.
        p = act.run_rocehil(self.dir / "gaps.pcap")
        self.assertIn("4 lost on the way", p.stdout.decode())

    def test_workers_and_parts_give_the_same_analysis(self):
        wrapped = wrap(self.records * 4, "erspan3", True, True, lost={10, 11, 60})
        path = self.file("many.pcap", cap.pcap_bytes(wrapped, nano=True))
        runs = {}
        for workers in (1, 2, 4):
            p = act.run_rocehil(path, "--json", "--workers", workers, "--min-part-bytes", 256)
            self.assertEqual(p.returncode, 0, p.stderr.decode())
            j = json.loads(p.stdout)
            j.pop("file")
            runs[workers] = j
        self.assertEqual(runs[2], runs[1])
        self.assertEqual(runs[4], runs[1])
        self.assertEqual(runs[1]["mirror"]["lost"], 3)

    def test_a_truncating_session_counts_whole_headers_and_cut_ones_as_truncated(self):
        full = raw(cap.roce(opcode=cap.WRITE_ONLY, qp=7, ext=cap.reth(dma_len=4000), payload=4000))
        records = [cap.Record(act.T0, full, len(full))]
        wrapped = []
        for cut in (128, 14 + 20 + 8 + 6):  # the session keeps 128 bytes; then one cut in the BTH
            head = raw(GRE(seqnum_present=1, sequence_number=len(wrapped)) / ERSPAN_II(ver=1, session_id=3, t=1))
            outer = raw(Ether(src="02:00:00:00:00:5e", dst="02:00:00:00:00:c0")
                        / IP(src=SWITCH_V4, dst=COLLECTOR_V4, proto=47) / Raw(head + full[:cut]))
            wrapped.append(cap.Record(act.T0 + len(wrapped), outer, len(outer)))
        j = self.analyze(self.file("truncated.pcap", cap.pcap_bytes(wrapped, nano=True)))
        self.assertEqual((j["roce"]["packets"], j["roce"]["truncated"], j["roce"]["malformed"]), (1, 1, 0))
        self.assertEqual(j["mirror"]["sessions"][0]["truncated"], 2)
        # The packet counted has the wire length its IP header gives, not the 128 bytes carried.
        self.assertEqual(act.json_flows(j)[("198.18.0.1", "198.18.0.2", 7)]["bytes"], len(full))
        del records

    def test_hostile_tunnels_are_malformed(self):
        inner = raw(cap.roce(qp=9))
        ether = Ether(src="02:00:00:00:00:5e", dst="02:00:00:00:00:c0")
        ip = IP(src=SWITCH_V4, dst=COLLECTOR_V4, proto=47)
        erspan = raw(GRE(seqnum_present=1) / ERSPAN_II(ver=1, session_id=3))
        frames = [
            # GRE says key and sequence follow; the IP packet ends after 6 bytes of GRE
            raw(ether / IP(src=SWITCH_V4, dst=COLLECTOR_V4, proto=47, len=26)
                / Raw(bytes.fromhex("300088be0000") + bytes(40))),
            # a mirror inside a mirror
            raw(ether / ip / Raw(erspan + raw(ether / ip / Raw(erspan + inner)))),
            # a zero-length ERSPAN payload
            raw(ether / ip / Raw(erspan)),
        ]
        records = [cap.Record(act.T0 + i, f, len(f)) for i, f in enumerate(frames)]
        j = self.analyze(self.file("hostile.pcap", cap.pcap_bytes(records, nano=True)))
        self.assertEqual((j["frames"], j["mirror"]["malformed"], j["mirror"]["frames"]), (3, 3, 0))
        self.assertEqual(j["roce"]["packets"], 0)


if __name__ == "__main__":
    act.main()
