"""System tests of the soft provider's wire: real packets between two local addresses, captured
with tcpdump and checked with tools that are not rocehil — tshark decodes them, scapy recomputes
every ICRC, nftables drops packets for go-back-N to recover, and `rocehil analyze` of the capture
must agree with the providers' own counters.

Usage: python3 soft_wire_test.py SOFT_TRANSFER ROCEHIL CAPTURES_PY_DIR   (as root)
"""
import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from scapy.all import raw, rdpcap
from scapy.contrib.roce import BTH

TRANSFER = ROCEHIL = None
NETNS = f"rocehil-softwire-{os.getpid()}"
WIRESHARK_PI_WARN = 0x00600000  # epan/proto.h expert severities: chat 0x200000, note 0x400000


def ns(*argv, **kwargs):
    return subprocess.run(["ip", "netns", "exec", NETNS, *argv], capture_output=True, text=True,
                          timeout=120, **kwargs)


def settle_file(path, still_s=0.3, limit_s=10):
    """Returns once `path` has not grown for `still_s` seconds (or after `limit_s`)."""
    last, since, start = -1, time.monotonic(), time.monotonic()
    while time.monotonic() - start < limit_s:
        size = os.path.getsize(path) if os.path.exists(path) else 0
        if size != last:
            last, since = size, time.monotonic()
        elif time.monotonic() - since >= still_s:
            return
        time.sleep(0.05)


class SoftWire(unittest.TestCase):
    """Each test runs in its own network namespace with only a loopback interface."""

    @classmethod
    def setUpClass(cls):
        subprocess.run(["ip", "netns", "add", NETNS], check=True)
        subprocess.run(["ip", "-n", NETNS, "link", "set", "lo", "up"], check=True)
        cls.dir = tempfile.mkdtemp(prefix="rocehil-softwire-")

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["ip", "netns", "del", NETNS])
        shutil.rmtree(cls.dir, ignore_errors=True)

    def tearDown(self):
        ns("nft", "flush", "ruleset")

    def transfer(self, *args, capture=None):
        tcpdump = None
        if capture:
            tcpdump = subprocess.Popen(["ip", "netns", "exec", NETNS, "tcpdump", "-i", "lo", "-nn",
                                        "-s", "0", "-B", "65536", "--immediate-mode", "-U", "-Z",
                                        "root", "-w", capture, "udp port 4791"],
                                       stderr=subprocess.PIPE, text=True)
            self.assertIn("listening on", tcpdump.stderr.readline())
        r = ns(TRANSFER, *args)
        if tcpdump:
            # tcpdump drops what it has not yet read from its ring when SIGINT comes, without
            # counting it as dropped: on a loaded machine it may lag the transfer. Its file grows
            # with each frame (-U), so wait until it has stood still for a while.
            settle_file(capture)
            tcpdump.send_signal(signal.SIGINT)
            _, stats = tcpdump.communicate(timeout=10)
            self.assertRegex(stats, r"(?m)^0 packets dropped by kernel$")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return json.loads(r.stdout)

    def test_every_operation_moves_data_intact_and_decodes_in_tshark(self):
        expected_opcodes = {
            # 10,001 bytes at MTU 1024: FIRST, 8 MIDDLE, LAST (padded: 10001 % 1024 = 785).
            "write": {6: 1, 7: 8, 8: 1},
            "write_imm": {6: 1, 7: 8, 9: 1},
            "send": {0: 1, 1: 8, 2: 1},
            "read": {12: 1, 13: 1, 14: 8, 15: 1},
        }
        for op, per_message in expected_opcodes.items():
            with self.subTest(op=op):
                path = os.path.join(self.dir, f"{op}.pcap")
                out = self.transfer("--op", op, "--bytes", "10001", "--messages", "20",
                                    capture=path)
                self.assertTrue(out["data_intact"])
                self.assertEqual(out["completed"], 20)
                rows = [r.split("\t") for r in subprocess.run(
                    ["tshark", "-r", path, "-T", "fields", "-e", "infiniband.bth.opcode", "-e",
                     "infiniband.bth.destqp", "-e", "infiniband.bth.psn", "-e", "_ws.malformed",
                     "-e", "_ws.expert.severity", "-e", "_ws.expert.message", "-e",
                     "frame.number"],
                    capture_output=True, text=True, check=True).stdout.splitlines() if r]
                opcodes = collections.Counter(int(r[0]) for r in rows)
                # A loaded machine can stall a side past the 20 ms ACK timeout, and go-back-N
                # then sends a range again with the same PSNs: each packet counts once.
                distinct = collections.Counter(int(k[0]) for k in {tuple(r[:3]) for r in rows})
                retransmitted = out["requester"]["counters"]["retransmitted_packets"]
                for opcode, count in per_message.items():
                    self.assertEqual(distinct[opcode], 20 * count,
                                     (op, opcode, distinct, f"{retransmitted} retransmitted"))
                if op == "read":  # READ responses acknowledge; a responder sends no ACK
                    self.assertEqual(opcodes[17], 0)
                else:
                    self.assertGreater(opcodes[17], 0, "acknowledgements")
                # Malformed frames and expert findings of warning level and up fail the test;
                # chat and note level (informational) are shown, not failed on.
                problems, remarks = [], []
                for r in rows:
                    malformed, severities, messages, number = r[3:]
                    worst = max((int(v) for v in severities.split(",") if v), default=0)
                    if malformed or worst >= WIRESHARK_PI_WARN:
                        problems.append(f"frame {number}: {messages or 'malformed'}")
                    elif worst:
                        remarks.append(f"frame {number}: {messages}")
                if remarks:
                    print(f"\n  {op}: tshark remarks {remarks[:3]} ({len(remarks)})",
                          file=sys.stderr)
                self.assertEqual(problems, [], "tshark found malformed packets or warnings")
                sent = (out["requester"]["counters"]["packets_sent"] +
                        out["responder"]["counters"]["packets_sent"])
                self.assertEqual(sum(opcodes.values()), sent)

    def test_scapy_verifies_every_icrc(self):
        path = os.path.join(self.dir, "icrc.pcap")
        self.transfer("--op", "write_imm", "--bytes", "5003", "--messages", "30", "--tos", "0x6b",
                      capture=path)  # CE-marked: CNPs are in the capture too
        checked = collections.Counter()
        for i, pkt in enumerate(rdpcap(path), 1):
            self.assertTrue(pkt.haslayer(BTH), f"packet {i} is not RoCEv2")
            frame = raw(pkt)
            self.assertEqual(frame[-4:].hex(), pkt[BTH].compute_icrc(None).hex(),
                             f"packet {i} (opcode {pkt[BTH].opcode:#x}): ICRC")
            checked[pkt[BTH].opcode] += 1
        self.assertGreater(checked[0x81], 0, "CNPs were captured and checked")
        self.assertGreater(sum(checked.values()), 200)

    def test_analyze_agrees_with_the_provider_counters(self):
        path = os.path.join(self.dir, "analyze.pcap")
        out = self.transfer("--op", "write", "--bytes", "65536", "--messages", "50", "--tos",
                            "0x6b", capture=path)
        a = json.loads(subprocess.run([ROCEHIL, "analyze", path, "--json"], capture_output=True,
                                      text=True, check=True).stdout)
        req, resp = out["requester"]["counters"], out["responder"]["counters"]
        self.assertEqual(a["roce"]["packets"], req["packets_sent"] + resp["packets_sent"])
        self.assertEqual(a["cnp"]["count"], req["cnps_sent"] + resp["cnps_sent"])
        self.assertEqual(a["cnp"]["by_dest_qp"].get(str(out["requester"]["qpn"]), 0),
                         resp["cnps_sent"])
        self.assertEqual(a["roce"]["ecn_ce"], req["ce_received"] + resp["ce_received"])
        flow = next(f for f in a["flows"] if f["dest_qp"] == out["responder"]["qpn"])
        self.assertEqual(flow["packets"], req["packets_sent"] - req["cnps_sent"])
        self.assertEqual(flow["retransmits"], req["retransmitted_packets"])
        self.assertEqual(flow["psn_gaps"], 0)

    def test_dropped_packets_are_recovered_by_go_back_n(self):
        # About one data packet in 50 toward the responder is dropped on arrival (the input hook:
        # the sender cannot see it, as it cannot see a drop in the fabric).
        # Random, not every 50th: a periodic drop whose period equals a retransmission round
        # drops the same first packet of every round, a livelock go-back-N really has.
        rules = ("table inet rocehil_drop {\n chain in {\n"
                 "  type filter hook input priority 0;\n"
                 "  ip daddr 127.0.0.2 udp dport 4791 meta length > 1000 "
                 "numgen random mod 50 == 0 counter drop\n }\n}\n")
        r = ns("nft", "-f", "-", input=rules)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = self.transfer("--op", "write", "--bytes", "65536", "--messages", "20",
                            "--ack-timeout-us", "2000")
        self.assertTrue(out["data_intact"])
        self.assertEqual(out["completed"], 20)
        listing = ns("nft", "list", "ruleset").stdout
        dropped = int(listing.split("counter packets ")[1].split()[0])
        req, resp = out["requester"]["counters"], out["responder"]["counters"]
        print(f"\n  nftables dropped {dropped}; requester retransmitted "
              f"{req['retransmitted_packets']} after {resp['naks_sent']} NAKs and "
              f"{req['timeouts']} timeouts", file=sys.stderr)
        self.assertGreater(dropped, 0)
        self.assertGreaterEqual(req["retransmitted_packets"], dropped)
        self.assertGreater(resp["out_of_sequence"] + req["timeouts"], 0)
        self.assertEqual(req["naks_received"], resp["naks_sent"])


if __name__ == "__main__":
    TRANSFER, ROCEHIL = (os.path.abspath(p) for p in sys.argv[1:3])
    del sys.argv[1:3]
    unittest.main(verbosity=2)
