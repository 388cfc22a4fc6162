"""System test of a bw case by volume (`bytes:`, docs/suites.md "Volume") on a real testbed: a
soft sender between two hosts of one rack sends 32M per QP over 4 QPs, and its leaf switch's
port toward the sender counts by SNMP (IF-MIB ifHCInOctets, read with Debian's snmpget before
and after the case) what went on the wire: an independent count that must hold the 128M asked
plus the packets' headers and no more than a few percent beyond. run.json must say the volume
was moved in full, each QP its 32M. A test writing both bytes and duration_s is refused at its
line.

Usage: python3 volume_cli_test.py PATH/TO/rocehil   (as root)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from pacing_cli_test import Fabric  # the rack's two hosts and its leaf's SNMP counters
from testbed_fixture import module_testbed_down, module_testbed_up, newest_run_dir

ROCEHIL = None
TB = {}
PER_QP = 32 << 20
QPS = 4


def rocehil(*args, timeout=300):
    return subprocess.run([ROCEHIL, *args], capture_output=True, text=True, timeout=timeout)


def setUpModule():
    module_testbed_up(ROCEHIL, "rhvol", TB)


def tearDownModule():
    module_testbed_down(ROCEHIL, TB)


class Volume(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fabric = Fabric(TB["inventory"])

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="rhvolwork")

    def tearDown(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def suite(self, extra=""):
        path = os.path.join(self.work, "suite.yaml")
        with open(path, "w") as f:
            f.write("schema_version: 1\nname: volume\ntests:\n"
                    "  - name: by_volume\n    workload: bw\n    provider: soft\n"
                    f"    hosts: {self.fabric.sender},{self.fabric.receiver}\n"
                    f"    qps: {QPS}\n    size: 64K\n    mtu: 4096\n    bytes: 32M\n{extra}")
        return path

    def test_the_volume_asked_is_what_the_switch_saw(self):
        f = self.fabric
        reports = os.path.join(self.work, "reports")
        before = f.in_octets()
        r = rocehil("run", self.suite(), "--inventory", TB["inventory"], "--reports", reports,
                    "--no-switches")
        after = f.in_octets()
        run_dir = newest_run_dir(reports)
        with open(os.path.join(run_dir, "run.json")) as fh:
            run = json.load(fh)
        case = run["cases"][0]["attempts"][-1]
        self.assertIsNone(case.get("error"), r.stdout[-3000:] + r.stderr[-3000:])
        traffic = case["raw"]["traffic"]
        volume = traffic["volume"]
        self.assertEqual(volume["bytes_per_qp"], PER_QP)
        self.assertEqual(volume["qps"], QPS)
        self.assertEqual(volume["bytes_asked"], PER_QP * QPS)
        self.assertEqual(volume["bytes_moved"], PER_QP * QPS)
        self.assertTrue(volume["complete"])
        per_qp = traffic["client"]["results"]["per_qp"]
        self.assertEqual([q["bytes"] for q in per_qp], [PER_QP] * QPS)
        wire = after - before
        print(f"\nbytes 32M x {QPS} QPs: switch {f.leaf_address} port {f.leaf_port} saw {wire} "
              f"octets for {PER_QP * QPS} payload bytes asked", file=sys.stderr)
        # Every payload byte crossed the port once, with its headers (a 4096-byte packet carries
        # ~70 bytes of Ethernet/IP/UDP/BTH/RETH/ICRC: under 2 %), and nothing like a second volume.
        self.assertGreaterEqual(wire, PER_QP * QPS)
        self.assertLessEqual(wire, PER_QP * QPS * 1.05)

    def test_bytes_beside_duration_is_refused_at_its_line(self):
        r = rocehil("suite", "validate", self.suite("    duration_s: 3\n"), "--inventory",
                    TB["inventory"])
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn(":11:12: test 'by_volume': bytes: give bytes (send that much per QP) or "
                      "duration_s (send for that long), not both", r.stdout + r.stderr)


if __name__ == "__main__":
    ROCEHIL = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
