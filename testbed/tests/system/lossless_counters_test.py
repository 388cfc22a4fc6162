"""System test of a lossless switch's queue counters as a poller sees them: a counters file
written here by an independent implementation of its layout (src/dataplane/shared_counters.hpp),
served by a real snmpd through rocehil's pass_persist handler, read with net-snmp's own
snmpbulkwalk. No testbed is needed: the handler reads nothing but the file for the queues.

Usage: python3 lossless_counters_test.py PATH/TO/rocehil   (as root)
"""
import mmap
import os
import random
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest

ROCEHIL = None
QUEUE_STATS = "1.3.6.1.4.1.9.9.580.1.5.5.1.4"

# The file: a 64-byte header (magic, layout version, header size, port size, port count), then
# per port a 16-byte name and 408 little-endian uint64 counters: ifindex, rx_packets, rx_bytes,
# forwarded, no_route, unresolved, ttl_expired; 8 queues of 7 (packets, bytes, dropped,
# dropped_bytes, ecn_marked, depth_bytes, peak_depth_bytes); 8 priorities of 11; 8 queues' WRED
# ramps of 16 seen and 16 marked; the frames the port's socket dropped (layout version 3).
HEADER = struct.Struct("<8sIIII40x")
PORT_COUNTERS = 7 + 8 * 7 + 8 * 11 + 8 * 32 + 1
PORT_SIZE = 16 + 8 * PORT_COUNTERS
QUEUE_FIELDS = ["packets", "bytes", "dropped", "dropped_bytes", "ecn_marked", "depth_bytes",
                "peak_depth_bytes"]


def queue_offset(port, tc, field):
    """Where a queue counter of port `port` lies in the file."""
    return (HEADER.size + port * PORT_SIZE + 16 + 8 * (7 + tc * 7 + QUEUE_FIELDS.index(field)))


def counters_file(ports):
    """ports: [(ifname, ifindex, {(tc, field): value})] -> the file's bytes."""
    out = HEADER.pack(b"RHILCNTS", 3, HEADER.size, PORT_SIZE, len(ports))
    for ifname, ifindex, queues in ports:
        values = [0] * PORT_COUNTERS
        values[0] = ifindex
        for (tc, field), v in queues.items():
            values[7 + tc * 7 + QUEUE_FIELDS.index(field)] = v
        out += ifname.encode().ljust(16, b"\0") + struct.pack(f"<{PORT_COUNTERS}Q", *values)
    return out


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LosslessQueuesOverSnmp(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="rocehil-lossless-counters-")
        cls.id = "lc%04d" % random.randrange(10000)
        cls.netns = f"rocehil-{cls.id}-l1"
        cls.path = f"/run/rocehil/{cls.netns}.counters"
        os.makedirs("/run/rocehil", exist_ok=True)
        # Two ports; every queue's four served counters distinct, so a row under the wrong
        # index reads wrong: port digit, class digit, statType.
        cls.expected = {}
        ports = []
        for port, (ifname, ifindex) in enumerate([("lc-h1", 12), ("lc-s1", 5)]):
            queues = {}
            for tc in range(8):
                base = 1000 * (port + 1) + 10 * tc
                for stat, field in [(1, "packets"), (2, "bytes"), (5, "dropped"),
                                    (6, "dropped_bytes")]:
                    queues[(tc, field)] = base + stat
                    cls.expected[f"{QUEUE_STATS}.{ifindex}.2.{tc + 1}.{stat}"] = str(base + stat)
                queues[(tc, "ecn_marked")] = 77  # no column in the MIB: never served
            ports.append((ifname, ifindex, queues))
        with open(cls.path, "wb") as f:
            f.write(counters_file(ports))
        cls.port = free_udp_port()
        cls.community = "lc" + "".join(random.choice("abcdefgh") for _ in range(12))
        conf = os.path.join(cls.tmp, "snmpd.conf")
        with open(conf, "w") as f:
            f.write(f"agentAddress udp:127.0.0.1:{cls.port}\n"
                    f"rocommunity {cls.community} 127.0.0.1\n"
                    f"pass_persist .1.3.6.1.4.1.9.9.580.1.5.5 {ROCEHIL} testbed snmp-counters "
                    f"--netns {cls.netns} --mib qos\n")
        os.chmod(conf, 0o600)
        cls.env = dict(os.environ, MIBS="", SNMP_PERSISTENT_DIR=os.path.join(cls.tmp, "state"))
        cls.snmpd = subprocess.Popen(
            ["snmpd", "-f", "-C", "-c", conf, "-m", "", "-Lf", os.path.join(cls.tmp, "log"),
             "-u", "root"], env=cls.env)

    @classmethod
    def tearDownClass(cls):
        cls.snmpd.terminate()
        cls.snmpd.wait(timeout=10)
        if os.path.exists(cls.path):
            os.remove(cls.path)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def walk(self):
        # The community goes in a file net-snmp reads (-c on a command line is visible in ps).
        conf = os.path.join(self.tmp, "snmp.conf")
        with open(conf, "w") as f:
            f.write(f"defCommunity {self.community}\ndefVersion 2c\n")
        r = subprocess.run(["snmpbulkwalk", "-On", "-Oq", "-t", "2", "-r", "1",
                            f"127.0.0.1:{self.port}", QUEUE_STATS],
                           capture_output=True, text=True, timeout=60,
                           env=dict(self.env, SNMPCONFPATH=self.tmp))
        rows = {}
        for line in r.stdout.splitlines():
            key, _, value = line.partition(" ")
            if key.startswith(".") and "No Such" not in value:
                rows[key[1:]] = value.strip()
        return rows

    def walk_until(self, wanted, tries=50):
        """The walk once it equals `wanted` (snmpd starting, the handler's 100 ms reading), or
        the last one."""
        rows = self.walk()
        for _ in range(tries):
            if rows == wanted:
                break
            time.sleep(0.2)
            rows = self.walk()
        return rows

    def test_1_every_queue_of_every_port_is_served(self):
        self.assertEqual(self.walk_until(self.expected), self.expected)

    def test_2_a_count_is_served_as_soon_as_it_is_made(self):
        # As the forwarding process counts: a store into the mapped file, nothing else.
        with open(self.path, "r+b") as f, mmap.mmap(f.fileno(), 0) as m:
            offset = queue_offset(1, 3, "dropped")
            m[offset:offset + 8] = struct.pack("<Q", 123456789)
        wanted = dict(self.expected)
        wanted[f"{QUEUE_STATS}.5.2.4.5"] = "123456789"
        self.assertEqual(self.walk_until(wanted), wanted)

    def test_3_without_the_file_the_queues_are_gone_not_zero(self):
        os.remove(self.path)
        # No file and no nftables table of this testbed: the handler has nothing to serve.
        self.assertEqual(self.walk_until({}), {})


if __name__ == "__main__":
    if os.geteuid() != 0:
        print("skipped: needs root (snmpd, /run/rocehil)")
        sys.exit(0)
    ROCEHIL = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
