"""System test of issue 61 item 10: a case whose agent was starved of CPU says so.

h1's agent is pinned to one CPU (a wrapper named as h1's `agent:` in the inventory runs
`taskset -c CPU rocehil ...`) and three busy loops on the same CPU, created by this test, compete
with it for the bandwidth case's 2 seconds. The flag is asserted under the load the test
created, never a time: run.json must carry h1's scheduling section with its threads' wait, the
attempt's cpu_starved reason naming h1 and the grade's; the threshold that passed keeps its pass,
the one no testbed can meet (1000 Gbit/s) fails (exit 1) and says the CPU may explain it;
junit.xml carries the cpu_starved property and the console the reason. Keeping it short: one 2 s
case on a testbed of 4 hosts.

Usage: python3 starve_cli_test.py PATH/TO/rocehil   (as root)
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

from testbed_fixture import module_testbed_down, module_testbed_up

ROCEHIL = None
TB = {}
SUITE = """schema_version: 1
name: starve
tests:
  - name: bw
    workload: bw
    provider: soft
    hosts: h1,h2
    size: 64K
    qps: 2
    duration_s: 2
    thresholds:
      - busbw_gbps > 0
      - busbw_gbps >= 1000
"""


def setUpModule():
    module_testbed_up(ROCEHIL, "rhstarve", TB)


def tearDownModule():
    module_testbed_down(ROCEHIL, TB)


class busy_loops:
    """`n` processes spinning on `cpu` while the block runs: the load the test starves h1 with."""

    def __init__(self, cpu, n):
        self.cpu, self.n, self.procs = cpu, n, []

    def __enter__(self):
        for _ in range(self.n):
            self.procs.append(subprocess.Popen(
                ["taskset", "-c", str(self.cpu), sys.executable, "-c", "while True: pass"]))
        return self

    def __exit__(self, *_):
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait()


class StarveTest(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="rhstarve")

    def tearDown(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def inventory_with_pinned_h1(self, cpu):
        """The testbed's inventory with h1's agent started pinned to `cpu`."""
        wrapper = os.path.join(self.work, "pinned-agent")
        with open(wrapper, "w") as f:
            f.write(f"#!/bin/sh\nexec taskset -c {cpu} {os.path.abspath(ROCEHIL)} \"$@\"\n")
        os.chmod(wrapper, 0o755)
        with open(TB["inventory"]) as f:
            text = f.read()
        marker = "  - name: h1\n"
        self.assertIn(marker, text)
        text = text.replace(marker, marker + f"    agent: {wrapper}\n", 1)
        path = os.path.join(self.work, "inventory.yaml")
        with open(path, "w") as f:
            f.write(text)
        return path

    def run_suite(self, inventory):
        suite = os.path.join(self.work, "starve.yaml")
        with open(suite, "w") as f:
            f.write(SUITE)
        reports = os.path.join(self.work, "reports")
        r = subprocess.run([ROCEHIL, "run", suite, "--inventory", inventory, "--reports", reports],
                           capture_output=True, text=True, timeout=120)
        newest = sorted(d for d in glob.glob(os.path.join(reports, "*")) if os.path.isdir(d))[-1]
        with open(os.path.join(newest, "run.json")) as f:
            record = json.load(f)
        return r, record, ET.parse(os.path.join(newest, "junit.xml"))

    def test_an_agent_starved_by_busy_loops_on_its_cpu_flags_its_case(self):
        cpu = os.cpu_count() - 1
        inventory = self.inventory_with_pinned_h1(cpu)
        with busy_loops(cpu, 3):
            r, record, junit = self.run_suite(inventory)
        out = r.stdout + r.stderr
        # The rate 1000 Gbit/s asked for fails, flagged: a bisection still sees a bad run.
        self.assertEqual(r.returncode, 1, out)
        attempt = record["cases"][0]["attempts"][0]
        cpu_seen = attempt["cpu"]
        self.assertIn("h1", cpu_seen, json.dumps(attempt["cpu"]))
        self.assertIn("h2", cpu_seen)
        self.assertIn("controller", cpu_seen)
        # Three spinning loops on h1's one CPU: its worker waited for it most of the traffic.
        h1 = cpu_seen["h1"]
        self.assertGreater(h1["wakeups"], 0)
        self.assertGreater(h1["thread_wait_max_ms"] / 1000 / h1["seconds"], 0.05, json.dumps(h1))
        starved = attempt["cpu_starved"]
        self.assertTrue(any(s.startswith("h1: ") for s in starved), starved)
        grade = attempt["grade"]
        self.assertEqual(grade["starved"], starved)
        self.assertEqual([t["verdict"] for t in grade["thresholds"]], ["pass", "fail"])
        self.assertIn("the case was CPU-starved, which may explain it (h1: ",
                      grade["thresholds"][1]["detail"])
        self.assertEqual(grade["verdict"], "fail")
        self.assertEqual(record["cases"][0]["outcome"], "fail")
        self.assertIn("CPU-starved", r.stdout)
        props = {p.get("name"): p.get("value") for p in junit.iter("property")}
        self.assertIn("cpu_starved", props)
        self.assertIn("h1: ", props["cpu_starved"])
        self.assertIn("CPU-starved", "".join(e.text or "" for e in junit.iter("system-out")))


if __name__ == "__main__":
    ROCEHIL = sys.argv.pop(1)
    unittest.main()
