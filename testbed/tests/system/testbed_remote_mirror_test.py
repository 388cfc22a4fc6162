"""System tests of remote mirrors (`rocehil testbed up --mirror-mode erspan|erspan2|gre`): each
spine's relay encapsulates what the spine sends to its leaves and routes it to the capture
namespace's management interface. Checked with tools that are not rocehil: tshark decodes the
headers and the frames inside them, tcpdump on the spine's own ports shows what a local mirror
would have copied, and the pcap records are read here byte by byte.

Usage: python3 testbed_remote_mirror_test.py PATH/TO/rocehil   (as root)
"""
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import unittest

import yaml

ROCEHIL = None
PYTHON = "/usr/bin/python3"
ROCE_PORT = 4791
PAYLOAD = 300        # bytes after the BTH: a 358-byte frame with the ICRC
JUMBO_PAYLOAD = 4000  # more than one packet on the 1500-byte management network holds
TOS = 0x68           # DSCP 26 (RoCE data) and ECT(0): ERSPAN's COS is the precedence, 3

# In a host namespace: from each of PORTS source ports, COUNT RoCEv2 SEND_ONLY packets with a
# BTH of our own (destination QP 0x100 + port offset, PSN counting up), then one jumbo frame.
SEND_ROCE = """
import socket, struct, sys
src, dst, first, ports, count, payload, jumbo, tos = sys.argv[1:9]
first, ports, count, payload, jumbo = map(int, (first, ports, count, payload, jumbo))
def bth(qp, psn):
    return struct.pack("!BBHI", 0x04, 0, 0xffff, qp) + struct.pack("!I", 0x80000000 | psn)
for p in range(ports + 1):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, int(tos, 0))
    s.bind((src, first + p))
    sizes = [payload] * count if p < ports else [jumbo]
    for k, size in enumerate(sizes):
        s.sendto(bth(0x100 + p, p * 1000 + k) + bytes(size) + b"ICRC", (dst, 4791))
"""


def rocehil(*args, check=True):
    result = subprocess.run([ROCEHIL, *args], capture_output=True, text=True, timeout=120)
    if check and result.returncode != 0:
        raise AssertionError(f"rocehil {' '.join(args)} exited {result.returncode}: {result.stderr}")
    return result


class Capture:
    """tcpdump in a namespace, writing every byte of each frame to a pcap."""

    def __init__(self, netns, ifname, path, bpf, outbound_only=False):
        self.path = path
        # Immediate mode gives every frame a slot of the snap length: 10000 bytes hold the
        # fabric's largest, and 32 MiB of them a burst.
        argv = ["ip", "netns", "exec", netns, "tcpdump", "-i", ifname, "-nn", "-s", "10000",
                "-B", "32768", "--immediate-mode", "-U", "-Z", "root", "-w", path]
        if outbound_only:
            argv += ["-Q", "out"]
        self.process = subprocess.Popen(argv + [bpf], stderr=subprocess.PIPE, text=True)
        line = self.process.stderr.readline()
        if "listening on" not in line:
            raise AssertionError(f"tcpdump on {netns}:{ifname}: {line}")

    def stop(self):
        if self.process.poll() is not None:
            return self.path
        self.process.send_signal(signal.SIGINT)
        _, stats = self.process.communicate(timeout=10)
        if "0 packets dropped by kernel" not in stats:
            raise AssertionError(f"tcpdump on {self.path} lost frames: {stats}")
        return self.path


def pcap_records(path):
    """[(time in s, bytes)] of a classic pcap file, read without any dissector."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    scale = 1e-9 if magic == 0xa1b23c4d else 1e-6
    out, at = [], 24
    while at + 16 <= len(data):
        sec, frac, caplen, _ = struct.unpack("<IIII", data[at:at + 16])
        out.append((sec + frac * scale, data[at + 16:at + 16 + caplen]))
        at += 16 + caplen
    return out


def roce_key(frame):
    """(source address, UDP source port, PSN) of an Ethernet/IPv4/UDP 4791 frame, else None."""
    if len(frame) < 14 + 20 + 8 + 12 or frame[12:14] != b"\x08\x00":
        return None
    ip = 14
    udp = ip + (frame[ip] & 0x0f) * 4
    if frame[ip + 9] != 17 or struct.unpack("!H", frame[udp + 2:udp + 4])[0] != ROCE_PORT:
        return None
    psn = struct.unpack("!I", frame[udp + 8 + 8:udp + 8 + 12])[0] & 0xffffff
    return (frame[ip + 12:ip + 16], struct.unpack("!H", frame[udp:udp + 2])[0], psn)


def inner_frame(packet):
    """The mirrored frame inside Ethernet/IPv4/GRE[/ERSPAN], from the GRE flags and protocol
    (RFC 2890; ERSPAN II 8 bytes, III 12 and 8 more with its O bit), as any collector cuts it."""
    ip = 14
    gre = ip + (packet[ip] & 0x0f) * 4
    flags, protocol = struct.unpack("!HH", packet[gre:gre + 4])
    at = gre + 4 + (4 if flags & 0x8000 else 0) + (4 if flags & 0x2000 else 0) + \
        (4 if flags & 0x1000 else 0)
    if protocol == 0x88BE:
        at += 8
    elif protocol == 0x22EB:
        at += 12 + (8 if packet[at + 11] & 1 else 0)
    return packet[at:]


def tshark(path, fields, display_filter=""):
    """One dict per packet; every field a list of its occurrences (outer first)."""
    argv = ["tshark", "-r", path, "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=|"]
    if display_filter:
        argv += ["-Y", display_filter]
    for f in fields:
        argv += ["-e", f]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        values = line.split("\t")
        rows.append({f: (v.split("|") if v else []) for f, v in zip(fields, values)})
    return rows


FIELDS = ["frame.time_epoch", "frame.cap_len", "ip.src", "ip.dst", "ip.proto", "gre.proto",
          "gre.flags.key", "gre.key", "gre.flags.sequence_number", "gre.sequence_number",
          "erspan.version", "erspan.spanid", "erspan.truncated", "erspan.cos", "erspan.index",
          "erspan.timestamp", "erspan.pid3.timestamp", "erspan.pid3.port_index",
          "erspan.direction", "erspan.gra", "erspan.o", "erspan.platid", "erspan.p",
          "erspan.ft", "udp.srcport", "udp.dstport", "infiniband.bth.opcode",
          "infiniband.bth.destqp", "infiniband.bth.psn"]


class RemoteMirrorChecks:
    """One small testbed (4 hosts, 2 racks, 2 spines) per mode; RoCEv2-shaped UDP both ways
    between the racks, captured on the capture namespace's management interface and, as a local
    mirror would copy it, on each spine's leaf-facing ports."""

    MODE = None
    TRUNCATE = 0
    HEADER = 0  # GRE and ERSPAN bytes before the frame

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix=f"rocehil-tb-{cls.MODE}-")
        args = ["testbed", "up", "--dir", cls.dir, "--mirror-mode", cls.MODE, "--json", "--quiet"]
        if cls.TRUNCATE:
            args += ["--mirror-truncate", str(cls.TRUNCATE)]
        try:
            cls.up = json.loads(rocehil(*args).stdout)
        except AssertionError:
            shutil.rmtree(cls.dir, ignore_errors=True)  # tearDownClass does not run
            raise
        cls.id = cls.up["id"]
        cls.ns = {n["name"]: n for n in json.loads(
            rocehil("testbed", "status", "--dir", cls.dir, "--json").stdout)["namespaces"]}
        with open(os.path.join(cls.dir, "inventory.yaml")) as f:
            cls.inventory = yaml.safe_load(f)
        cls.spine_of = {m["remote"]["source"]: m["switch"] for m in cls.up["mirrors"]}
        cls.captures = []
        try:
            cls.capture_traffic()
            time.sleep(1.2)  # the relays rewrite their counters every second
            cls.status = json.loads(
                rocehil("testbed", "status", "--dir", cls.dir, "--json").stdout)
        except BaseException:
            for c in cls.captures:
                c.process.kill()
                c.process.wait()
            rocehil("testbed", "down", "--dir", cls.dir, check=False)
            shutil.rmtree(cls.dir, ignore_errors=True)
            raise

    @classmethod
    def tearDownClass(cls):
        relays = [r["pid"] for r in cls.status["mirror"]["relays"] if r["pid"]]
        rocehil("testbed", "down", "--dir", cls.dir, check=False)
        shutil.rmtree(cls.dir, ignore_errors=True)
        for pid in relays:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if b"mirror-relay" in f.read():
                        raise AssertionError(f"mirror relay {pid} runs after down")
            except FileNotFoundError:
                pass

    @classmethod
    def netns(cls, name):
        return cls.ns[name]["netns"]

    @classmethod
    def capture_traffic(cls):
        cap = Capture(cls.netns("cap"), f"{cls.id}-mgmt", os.path.join(cls.dir, "cap.pcap"),
                      "ip proto 47 or icmp")
        cls.captures.append(cap)
        ports = {}
        for spine in ("s1", "s2"):
            for leaf in ("l1", "l2"):
                ports[(spine, leaf)] = Capture(
                    cls.netns(spine), f"{cls.id}-{leaf}",
                    os.path.join(cls.dir, f"{spine}-{leaf}.pcap"), f"udp dst port {ROCE_PORT}",
                    outbound_only=True)
                cls.captures.append(ports[(spine, leaf)])
        cls.sent = 0
        for src, dst, first in (("h1", "h3", 41000), ("h4", "h2", 42000)):
            r = subprocess.run(["ip", "netns", "exec", cls.netns(src), PYTHON, "-c", SEND_ROCE,
                                cls.ns[src]["fabric_address"], cls.ns[dst]["fabric_address"],
                                str(first), "8", "10", str(PAYLOAD), str(JUMBO_PAYLOAD),
                                hex(TOS)], capture_output=True, text=True, timeout=60)
            if r.returncode != 0:
                raise AssertionError(f"sending from {src}: {r.stderr}")
            cls.sent += 8 * 10 + 1
        time.sleep(0.3)
        for c in ports.values():
            c.stop()
        cls.cap_pcap = cap.stop()
        # What a local mirror of each spine would have copied: what left its leaf ports.
        cls.reference = {}  # roce key -> (spine, leaf, frame)
        for (spine, leaf), c in ports.items():
            for _, frame in pcap_records(c.path):
                cls.reference[roce_key(frame)] = (spine, leaf, frame)
        cls.records = pcap_records(cls.cap_pcap)
        cls.rows = tshark(cls.cap_pcap, FIELDS, "gre")
        cls.ifindex = {}
        for spine in ("s1", "s2"):
            links = json.loads(subprocess.run(["ip", "-n", cls.netns(spine), "-j", "link", "show"],
                                              capture_output=True, text=True, check=True).stdout)
            for leaf in ("l1", "l2"):
                cls.ifindex[(spine, leaf)] = next(
                    l["ifindex"] for l in links if l["ifname"] == f"{cls.id}-{leaf}")

    def roce_rows(self):
        """tshark's rows of the copies of our RoCEv2 packets, each with its spine (not the ICMP
        port-unreachable messages the receivers answer them with, which quote them)."""
        out = []
        for row in self.rows:
            if row["ip.proto"] == ["47", "17"] and row["udp.dstport"] == [str(ROCE_PORT)]:
                out.append((self.spine_of[row["ip.src"][0]], row))
        return out

    @staticmethod
    def key_of(row):
        """roce_key() of the frame inside, from tshark's fields."""
        return (bytes(int(o) for o in row["ip.src"][1].split(".")), int(row["udp.srcport"][0]),
                int(row["infiniband.bth.psn"][0]))

    def test_inventory_and_status_name_the_sessions(self):
        self.assertEqual(self.status["mirror"]["mode"], self.MODE)
        self.assertTrue(self.status["healthy"])
        captures = {c["name"]: c for c in self.inventory["captures"]}
        cap_address = self.ns["cap"]["sshd"]["address"]
        for s, spine in ((1, "s1"), (2, "s2")):
            c = captures[f"{spine}-mirror"]
            self.assertEqual(c["host"], "cap")
            self.assertEqual(c["interface"], f"{self.id}-mgmt")
            self.assertEqual(c["mirrors"]["switch"], spine)
            self.assertEqual(c["mirrors"]["links"], [f"l1-{spine}", f"l2-{spine}"])
            self.assertEqual(c["remote"], {"session": s, "source": self.ns[spine]["snmpd"]["address"]})
        relays = {r["switch"]: r for r in self.status["mirror"]["relays"]}
        self.assertEqual(sorted(relays), ["s1", "s2"])
        copies = len(self.roce_rows())
        total = 0
        for spine, r in relays.items():
            self.assertTrue(r["running"], r)
            self.assertEqual(r["session"]["destination"], cap_address)
            c = r["counters"]
            self.assertEqual(c["dropped"], 0, r)
            self.assertEqual(c["send_errors"], 0, r)
            # Every copy took one sequence number.
            self.assertEqual(c["next_sequence"], c["frames"], r)
            total += c["frames"]
        self.assertGreaterEqual(total, copies)
        # No interface of the capture namespace but its management port.
        self.assertEqual([i["name"] for i in self.ns["cap"]["interfaces"]], [f"{self.id}-mgmt"])

    def test_each_spine_sends_its_session_from_its_management_address(self):
        by_spine = {}
        for row in self.rows:
            self.assertEqual(row["ip.dst"][0], self.ns["cap"]["sshd"]["address"])
            spine = self.spine_of[row["ip.src"][0]]
            session = int(spine[1:])
            by_spine[spine] = by_spine.get(spine, 0) + 1
            self.assertEqual(row["gre.flags.sequence_number"], ["1"])
            if self.MODE == "gre":
                self.assertEqual(row["gre.proto"], ["0x6558"])
                self.assertEqual(row["gre.flags.key"], ["1"])
                self.assertEqual(int(row["gre.key"][0], 16), session)
            else:
                self.assertEqual(row["gre.flags.key"], ["0"])
                self.assertEqual(row["erspan.spanid"], [str(session)])
                self.assertEqual(row["gre.proto"],
                                 ["0x22eb" if self.MODE == "erspan" else "0x88be"])
                self.assertEqual(row["erspan.version"], ["2" if self.MODE == "erspan" else "1"])
        self.assertEqual(sorted(by_spine), ["s1", "s2"], "both spines carried traffic")

    def test_sequence_numbers_count_up_by_one_per_session(self):
        sequences = {}
        for row in self.rows:
            sequences.setdefault(row["ip.src"][0], []).append(int(row["gre.sequence_number"][0]))
        for source, seen in sequences.items():
            self.assertEqual(seen, list(range(seen[0], seen[0] + len(seen))), source)

    def test_inner_frames_are_what_the_spine_sent(self):
        copies = {}
        for _, packet in self.records:
            if packet[23] != 47:  # IPv4 protocol: GRE
                continue
            frame = inner_frame(packet)
            key = roce_key(frame)
            if key is not None:
                self.assertNotIn(key, copies, "a frame copied twice")
                copies[key] = frame
        self.assertEqual(len(self.reference), self.sent)
        self.assertEqual(set(copies), set(self.reference))
        kept = self.TRUNCATE or 1500 - 20 - self.HEADER
        truncated = 0
        for key, (_, _, frame) in self.reference.items():
            self.assertEqual(copies[key], frame[:kept], key)
            truncated += len(frame) > kept
        self.assertEqual(truncated, self.sent if self.TRUNCATE else 2)  # else the two jumbos
        # tshark reads the same frames inside: addresses, ports and BTH.
        rows = self.roce_rows()
        self.assertEqual(len(rows), self.sent)
        for spine, row in rows:
            self.assertEqual(row["infiniband.bth.opcode"], ["4"])  # RC SEND_ONLY
            qp = int(row["infiniband.bth.destqp"][0], 16)
            psn = int(row["infiniband.bth.psn"][0])
            self.assertEqual(qp - 0x100, psn // 1000, row)
            source, destination = row["ip.src"][1], row["ip.dst"][1]
            self.assertIn((source, destination),
                          {(self.ns["h1"]["fabric_address"], self.ns["h3"]["fabric_address"]),
                           (self.ns["h4"]["fabric_address"], self.ns["h2"]["fabric_address"])})
            _, _, sent = self.reference[self.key_of(row)]
            self.assertEqual(int(row["frame.cap_len"][0]), 14 + 20 + self.HEADER + min(len(sent), kept))
            if self.MODE != "gre":
                self.assertEqual(row["erspan.truncated"], ["1" if len(sent) > kept else "0"], row)

    def test_erspan_says_which_port_sent_each_copy(self):
        if self.MODE == "gre":
            self.skipTest("GRE carries no port")
        for spine, row in self.roce_rows():
            ref_spine, leaf, _ = self.reference[self.key_of(row)]
            self.assertEqual(ref_spine, spine)
            expected = str(self.ifindex[(spine, leaf)])
            if self.MODE == "erspan":
                self.assertEqual(row["erspan.pid3.port_index"], [expected])
                self.assertEqual(row["erspan.direction"], ["1"])  # the port sent it
                self.assertEqual(row["erspan.cos"], [str(TOS >> 5)])
            else:
                self.assertEqual(row["erspan.index"], [expected])
                self.assertEqual(row["erspan.cos"], [str(TOS >> 5)])

    def test_erspan_type_three_stamps_the_switchs_clock(self):
        if self.MODE != "erspan":
            self.skipTest("only ERSPAN type III carries timestamps")
        for row in self.rows:
            self.assertEqual(row["erspan.gra"], ["2"])  # IEEE 1588: seconds and nanoseconds
            self.assertEqual(row["erspan.o"], ["1"])
            self.assertEqual(row["erspan.platid"], ["3"])
            self.assertEqual(row["erspan.p"], ["1"])
            self.assertEqual(row["erspan.ft"], ["0"])
            nanoseconds = int(row["erspan.timestamp"][0])
            self.assertLess(nanoseconds, 10**9)
            stamped = int(row["erspan.pid3.timestamp"][0]) + nanoseconds / 1e9
            received = float(row["frame.time_epoch"][0])
            # Copied on the spine before the capture namespace received it, and within a second.
            self.assertLessEqual(stamped, received + 0.001, row)
            self.assertLess(received - stamped, 1.0, row)

    def test_the_capture_namespace_answers_no_copy_with_icmp(self):
        unreachable = subprocess.run(["tcpdump", "-r", self.cap_pcap, "-nn",
                                      "icmp[icmptype] == icmp-unreach"],
                                     capture_output=True, text=True).stdout
        self.assertEqual(unreachable, "")
        table = subprocess.run(["ip", "netns", "exec", self.netns("cap"), "nft", "-j", "list",
                                "table", "ip", f"rocehil_{self.id}_mirror"],
                               capture_output=True, text=True, check=True).stdout
        dropped = [e["counter"]["packets"] for rule in json.loads(table)["nftables"]
                   if "rule" in rule for e in rule["rule"]["expr"] if "counter" in e]
        self.assertEqual(len(dropped), 1)
        self.assertGreaterEqual(dropped[0], len(self.rows))


class Erspan(RemoteMirrorChecks, unittest.TestCase):
    MODE = "erspan"
    HEADER = 8 + 12 + 8


class Erspan2Truncated(RemoteMirrorChecks, unittest.TestCase):
    MODE = "erspan2"
    TRUNCATE = 128
    HEADER = 8 + 8


class Gre(RemoteMirrorChecks, unittest.TestCase):
    MODE = "gre"
    HEADER = 12


if __name__ == "__main__":
    ROCEHIL = os.path.abspath(sys.argv.pop(1))
    if os.geteuid() != 0:
        print("testbed system tests need root", file=sys.stderr)
        sys.exit(1)
    unittest.main(verbosity=2)
