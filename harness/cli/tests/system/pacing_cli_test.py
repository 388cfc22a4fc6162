"""System test of pacing (`rate:`, docs/suites.md "Pacing") on a real testbed: a soft bw sender
asked for 50% of its 1 Gbit/s link, between two hosts of one rack (so the 400 Mbit/s spine
uplinks are not on the path), is measured at its leaf switch's port by SNMP (IF-MIB
ifHCInOctets of the leaf's interface toward the sender, read with Debian's snmpget before and
after the case): an independent count of what the sender put on the wire. It must be 0.45-0.55
Gbit/s over the case's measured interval (unpaced, the link's shaper lets ~0.95 through), and
run.json's reached rate must agree with it within 10%. A rate above the link is refused before
anything runs, at the rate's line.

Usage: python3 pacing_cli_test.py PATH/TO/rocehil   (as root)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import yaml

from testbed_fixture import module_testbed_down, module_testbed_up, newest_run_dir

ROCEHIL = None
TB = {}
IF_NAME = "1.3.6.1.2.1.31.1.1.1.1"  # IF-MIB ifName
IF_HC_IN_OCTETS = "1.3.6.1.2.1.31.1.1.1.6"  # IF-MIB ifHCInOctets (Counter64)


def rocehil(*args, timeout=300):
    return subprocess.run([ROCEHIL, *args], capture_output=True, text=True, timeout=timeout)


def setUpModule():
    module_testbed_up(ROCEHIL, "rhpace", TB)


def tearDownModule():
    module_testbed_down(ROCEHIL, TB)


class Fabric:
    """Two hosts of one rack, the leaf that joins them, and how to reach its SNMP agent."""

    def __init__(self, inventory_path):
        with open(inventory_path) as f:
            inv = yaml.safe_load(f)
        rack = next(r for r in inv["racks"] if len(r["hosts"]) >= 2)
        self.sender, self.receiver = rack["hosts"][0], rack["hosts"][1]
        leaf = next(s for s in inv["switches"] if s["name"] == rack["leaf"])
        self.leaf_address = leaf["snmp"].get("address", leaf.get("address"))
        with open(leaf["snmp"]["community_file"]) as f:
            self.community = f.read().strip()
        host = next(h for h in inv["hosts"] if h["name"] == self.sender)
        link = next(l for l in inv["links"] if l["name"] == host["nics"][0]["link"])
        end = link["a"] if link["a"].startswith(rack["leaf"] + ":") else link["b"]
        self.leaf_port = end.split(":", 1)[1]
        self.link_gbps = host["nics"][0].get("link_gbps", inv["defaults"]["link_gbps"])
        self.if_index = self._if_index()

    def _snmp(self, tool, oid):
        r = subprocess.run([tool, "-v2c", "-c", self.community, "-On", "-Oqv", "-t", "2", "-r",
                            "2", self.leaf_address, oid], capture_output=True, text=True,
                           timeout=30)
        if r.returncode != 0:
            raise AssertionError(f"{tool} {self.leaf_address} {oid}: {r.stderr}")
        return r.stdout

    def _if_index(self):
        r = subprocess.run(["snmpwalk", "-v2c", "-c", self.community, "-On", "-Oq",
                            self.leaf_address, IF_NAME], capture_output=True, text=True,
                           timeout=30, check=True)
        for line in r.stdout.splitlines():
            oid, _, name = line.partition(" ")
            if name.strip().strip('"') == self.leaf_port:
                return int(oid.rsplit(".", 1)[1])
        raise AssertionError(f"no ifName {self.leaf_port} on {self.leaf_address}: {r.stdout}")

    def in_octets(self):
        return int(self._snmp("snmpget", f"{IF_HC_IN_OCTETS}.{self.if_index}").strip())


class Pacing(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fabric = Fabric(TB["inventory"])

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="rhpacework")

    def tearDown(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def suite(self, rate, seconds=10):
        path = os.path.join(self.work, "suite.yaml")
        with open(path, "w") as f:
            f.write("schema_version: 1\nname: pacing\ntests:\n"
                    "  - name: paced\n    workload: bw\n    provider: soft\n"
                    f"    hosts: {self.fabric.sender},{self.fabric.receiver}\n"
                    f"    qps: 2\n    size: 64K\n    mtu: 4096\n    duration_s: {seconds}\n"
                    f"    rate: {rate}\n")
        return path

    def test_half_the_link_is_half_the_link_at_the_switch(self):
        f = self.fabric
        self.assertEqual(f.link_gbps, 1)  # the testbed's host links: 1 Gbit/s
        suite = self.suite("50%")
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
        seconds = traffic["client"]["results"]["seconds"]
        self.assertGreater(seconds, 0, traffic)
        pacing = traffic["pacing"]
        sender = pacing["senders"][0]
        self.assertEqual(pacing["rate"], "50%")
        self.assertEqual(sender["host"], f.sender)
        # soft: its NIC's packet pacer on each of the 2 QPs, as a ConnectX's.
        self.assertEqual(sender["method"], "nic")
        self.assertAlmostEqual(sender["asked_bps"], 0.5e9)
        self.assertEqual(traffic["client"]["results"]["pacing"]["method"], "nic")
        self.assertAlmostEqual(traffic["client"]["results"]["pacing"]["per_qp_bps"], 0.25e9)
        # The switch's count, over the case's measured interval: the wire's bytes (headers
        # included, and the 0.2 s warm-up's), which the payload rate must match within 10%.
        switch_gbps = (after - before) * 8 / seconds / 1e9
        reached_gbps = sender["reached_bps"] / 1e9
        print(f"\nrate 50% of {f.link_gbps} Gbit/s: switch {f.leaf_address} port {f.leaf_port} "
              f"saw {switch_gbps:.4f} Gbit/s over {seconds:.3f} s; run.json reached "
              f"{reached_gbps:.4f} Gbit/s", file=sys.stderr)
        self.assertGreaterEqual(switch_gbps, 0.45)
        self.assertLessEqual(switch_gbps, 0.55)
        self.assertLessEqual(abs(reached_gbps - switch_gbps), 0.1 * switch_gbps)
        # Held within 10% of the rate asked, and so no why.
        self.assertAlmostEqual(sender["reached_ratio"], reached_gbps / 0.5, places=6)
        self.assertEqual(sender["held"], 0.9 <= sender["reached_ratio"] <= 1.1, sender)
        self.assertEqual("why_not_held" in sender, not sender["held"], sender)
        # The engine's bucket is not used: nothing of it is reported.
        self.assertNotIn("held_back_s", sender)

    def test_a_rate_above_the_senders_link_is_refused_at_its_line(self):
        r = rocehil("suite", "validate", self.suite("2Gbit/s"), "--inventory", TB["inventory"])
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn(":12:11: test 'paced': rate '2Gbit/s': above "
                      f"{self.fabric.sender}'s link of 1 Gbit/s", r.stdout + r.stderr)


if __name__ == "__main__":
    ROCEHIL = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
