"""System test of QP scaling on a real testbed: a soft bw case with 4096 QPs on one connection
(the SONiC RoCEv2 plan's 4K+ endpoints per port) between two hosts of one rack, each QP sending
16K by volume. run.json must list 4096 QPs, each with its own UDP source port and its whole
volume, and the leaf's port toward the sender (IF-MIB ifHCInOctets by SNMP, an independent
count) must have carried at least the 64M asked. Then a ring allreduce of the same two hosts with
1024 QPs per connection (past the 256 an 8-bit share field in the RDMA immediate held): every
QP must carry its share and the data check must pass on both ranks.

Usage: python3 qp_scale_cli_test.py PATH/TO/rocehil   (as root)
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
QPS = 4096
PER_QP = 16 << 10


def rocehil(*args, timeout=300):
    return subprocess.run([ROCEHIL, *args], capture_output=True, text=True, timeout=timeout)


def setUpModule():
    module_testbed_up(ROCEHIL, "rhqps", TB)


def tearDownModule():
    module_testbed_down(ROCEHIL, TB)


class QpScale(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fabric = Fabric(TB["inventory"])

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="rhqpswork")

    def tearDown(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def test_four_thousand_qps_each_with_its_own_source_port(self):
        f = self.fabric
        suite = os.path.join(self.work, "suite.yaml")
        with open(suite, "w") as fh:
            fh.write("schema_version: 1\nname: qpscale\ntests:\n"
                     "  - name: many_qps\n    workload: bw\n    provider: soft\n"
                     f"    hosts: {f.sender},{f.receiver}\n"
                     f"    qps: {QPS}\n    size: 4K\n    mtu: 4096\n    tx_depth: 4\n"
                     "    bytes: 16K\n")
        reports = os.path.join(self.work, "reports")
        before = f.in_octets()
        r = rocehil("run", suite, "--inventory", TB["inventory"], "--reports", reports,
                    "--no-switches")
        after = f.in_octets()
        run_dir = newest_run_dir(reports)
        with open(os.path.join(run_dir, "run.json")) as fh:
            run = json.load(fh)
        case = run["cases"][0]["attempts"][-1]
        self.assertIsNone(case.get("error"), r.stdout[-3000:] + r.stderr[-3000:])
        traffic = case["raw"]["traffic"]
        per_qp = traffic["client"]["results"]["per_qp"]
        ports = {q["udp_sport"] for q in per_qp}
        print(f"\n{len(per_qp)} QPs, {len(ports)} distinct UDP source ports; switch port "
              f"{f.leaf_port} saw {after - before} octets for {QPS * PER_QP} payload bytes",
              file=sys.stderr)
        self.assertEqual(len(per_qp), QPS)
        self.assertEqual(len(ports), QPS)
        self.assertEqual([q["bytes"] for q in per_qp], [PER_QP] * QPS)
        self.assertTrue(traffic["volume"]["complete"])
        self.assertGreaterEqual(after - before, QPS * PER_QP)

    def test_a_collective_with_a_thousand_qps_per_connection_checks_its_data(self):
        f = self.fabric
        qps = 1024
        r = rocehil("traffic", "collective", TB["inventory"], "--json", "--hosts",
                    f"{f.sender},{f.receiver}", "--pattern", "allreduce", "--sizes", "1M",
                    "--qps", str(qps), "--iterations", "2", "--warmup", "1")
        self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-3000:])
        case = json.loads(r.stdout)["cases"][0]
        self.assertTrue(case["verified"], case["problems"])
        self.assertEqual(case["wrong"], 0, case["problems"])
        self.assertEqual(case["errors"], 0, case["first_error"])
        self.assertEqual(len(case["per_rank"]), 2)
        for rank in case["per_rank"]:
            per_qp = rank["per_qp"]
            # Two ranks: each is the other's next and previous, one connection of 1024 QPs.
            self.assertEqual(len(per_qp), qps)
            self.assertEqual(len({q["udp_sport"] for q in per_qp}), qps)
            # split: every chunk (512K) goes out in 1024 shares, one per QP.
            self.assertTrue(all(q["bytes"] > 0 for q in per_qp), rank)
            self.assertEqual(sum(q["bytes"] for q in per_qp), rank["bytes_sent"])


if __name__ == "__main__":
    ROCEHIL = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
