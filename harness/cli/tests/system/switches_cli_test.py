"""System tests of the switches' view on a real testbed: every leaf and spine namespace runs
Debian's snmpd (IF-MIB from the kernel, PFC and queue counters from the testbed's own counters
under the MIBs SONiC serves) and lldpd. What rocehil reads over SNMP is held against the kernel's
counters of the same interfaces (`ip -s -j link`, read by this test) and against what
`rocehil inject` says it sent; the cabling check against a deliberately wrong inventory.

Usage: python3 switches_cli_test.py PATH/TO/rocehil   (as root)
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from testbed_fixture import testbed_down, testbed_up, wait_for

ROCEHIL = None
TB = {}


def rocehil(*args, timeout=300):
    return subprocess.run([ROCEHIL, *args], capture_output=True, text=True, timeout=timeout)


def kernel_rx_bytes(testbed_id, namespace, ifname):
    r = subprocess.run(["ip", "-n", f"rocehil-{testbed_id}-{namespace}", "-s", "-j", "link",
                        "show", "dev", ifname], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)[0]["stats64"]["rx"]["bytes"]


def setUpModule():
    directory, testbed_id, _ = testbed_up(ROCEHIL, "rhsw")
    TB.update(dir=directory, id=testbed_id, inventory=os.path.join(directory, "inventory.yaml"))


def tearDownModule():
    if TB:
        testbed_down(ROCEHIL, TB["dir"])


class Switches(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="rhswwork")

    def tearDown(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def write(self, name, text):
        path = os.path.join(self.work, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def run_suite(self, tests):
        suite = self.write("suite.yaml", "schema_version: 1\nname: switches\ndefaults:\n"
                           "  provider: soft\ncapture: {filter: all, snaplen: 128}\ntests:\n"
                           + tests)
        reports = os.path.join(self.work, "reports")
        r = rocehil("run", suite, "--inventory", TB["inventory"], "--reports", reports)
        run_dir = sorted(d for d in glob.glob(os.path.join(reports, "*")) if os.path.isdir(d))[-1]
        with open(os.path.join(run_dir, "run.json")) as f:
            return r, json.load(f), run_dir

    def test_the_testbeds_cabling_is_as_designed_and_a_swap_names_both_links(self):
        r = rocehil("inventory", "check", TB["inventory"], "--json")
        self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr)
        switches = json.loads(r.stdout)["switches"]
        self.assertEqual(len(switches["switches"]), 4)
        for s in switches["switches"]:
            self.assertTrue(s["answered"], s)
            self.assertEqual(s["unknown_ports"], [], s)
            self.assertTrue(s["pfc_mib"], s)
        # Every host link and uplink seen from its switch end(s), and nothing more.
        statuses = {c["status"] for c in switches["cabling"]}
        self.assertEqual(statuses, {"ok"}, switches["cabling"])
        self.assertEqual(len(switches["cabling"]), 8)  # 4 host links + 4 uplinks

        # Swap the spine ends of l1-s1 and l1-s2 in a copy of the inventory.
        with open(TB["inventory"]) as f:
            text = f.read()
        tid = TB["id"]
        a = f"{{name: l1-s1, a: l1:{tid}-s1, b: s1:{tid}-l1"
        b = f"{{name: l1-s2, a: l1:{tid}-s2, b: s2:{tid}-l1"
        self.assertIn(a, text)
        self.assertIn(b, text)
        swapped = text.replace(a, "@A@").replace(b, "@B@")
        swapped = swapped.replace("@A@", f"{{name: l1-s1, a: l1:{tid}-s2, b: s1:{tid}-l1")
        swapped = swapped.replace("@B@", f"{{name: l1-s2, a: l1:{tid}-s1, b: s2:{tid}-l1")
        r = rocehil("inventory", "check", self.write("swapped.yaml", swapped))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"cabling miscabled: link 'l1-s1': .* \(an end of link "
                                   r"'l1-s2': the two are swapped\)")
        self.assertRegex(r.stdout, r"cabling miscabled: link 'l1-s2': .* \(an end of link "
                                   r"'l1-s1': the two are swapped\)")

    def test_links_discovered_from_lldp_are_the_testbeds_links(self):
        r = rocehil("inventory", "discover", "--links-from", TB["inventory"], "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        found = {tuple(sorted((l["a"], l["b"]))) for l in json.loads(r.stdout)["links"]}
        with open(TB["inventory"]) as f:
            designed = {tuple(sorted(m.groups())) for m in
                        re.finditer(r"\{name: [^,]+, a: ([^,]+), b: ([^,]+), gbps", f.read())}
        self.assertEqual(len(designed), 8)
        self.assertEqual(found, designed)

    def test_a_switch_that_does_not_answer_loses_only_its_metrics(self):
        with open(TB["inventory"]) as f:
            text = f.read()
        # s2's agent is asked on a port where nothing listens.
        dead, n = re.subn(r"(\{name: s2, .*snmp: \{version: 2c, community_file: [^}]+)\}",
                          r"\1, port: 1611, timeout_ms: 200, retries: 0}", text)
        self.assertEqual(n, 1)
        inventory = self.write("dead.yaml", dead)
        suite = self.write("suite.yaml", """schema_version: 1
name: dead_switch
defaults: {provider: soft}
tests:
  - name: bw
    workload: bw
    hosts: h1,h3
    size: 64K
    duration_s: 1
    thresholds:
      - busbw_gbps > 0
      - switch_drops == 0
""")
        reports = os.path.join(self.work, "reports")
        r = rocehil("run", suite, "--inventory", inventory, "--reports", reports)
        run_dir = sorted(d for d in glob.glob(os.path.join(reports, "*")) if os.path.isdir(d))[-1]
        with open(os.path.join(run_dir, "run.json")) as f:
            attempt = json.load(f)["cases"][0]["attempts"][0]
        self.assertIsNone(attempt["error"])
        self.assertGreater(attempt["metrics"]["busbw_gbps"], 0)  # nothing else lost
        self.assertNotIn("switch_drops", attempt["metrics"])
        self.assertIn("switch s2 gave no counters", attempt["unmeasured"]["switch_drops"])
        self.assertIn("no answer from", attempt["unmeasured"]["switch_drops"])
        verdicts = [t["verdict"] for t in attempt["grade"]["thresholds"]]
        self.assertEqual(verdicts, ["pass", "error"])
        answered = {s["switch"]: s["answered"] for s in attempt["raw"]["switches"]}
        self.assertEqual(answered, {"l1": True, "l2": True, "s1": True, "s2": False})

    def test_cross_rack_bw_spine_octets_match_the_kernels_counters(self):
        tid = TB["id"]
        spine_ports = [(s, f"{tid}-l{r}") for s in ("s1", "s2") for r in (1, 2)]
        before = {p: kernel_rx_bytes(tid, *p) for p in spine_ports}
        r, record, _ = self.run_suite("""  - name: cross_rack_bw
    workload: bw
    hosts: h1,h3
    size: 64K
    qps: 4
    duration_s: 2
    thresholds:
      - busbw_gbps > 0
      - switch_drops >= 0
""")
        after = {p: kernel_rx_bytes(tid, *p) for p in spine_ports}
        attempt = record["cases"][0]["attempts"][0]
        self.assertIsNone(attempt["error"], attempt["error"])
        by_switch = {s["switch"]: s for s in attempt["raw"]["switches"]}
        self.assertEqual(set(by_switch), {"l1", "l2", "s1", "s2"})
        snmp_total = kernel_total = 0
        for spine, port in spine_ports:
            ports = {p["port"]: p for p in by_switch[spine]["ports"]}
            snmp_total += ports[port]["in_octets"] if port in ports else 0
            kernel_total += after[(spine, port)] - before[(spine, port)]
        print(f"spines' leaf-facing ports, bytes in: SNMP {snmp_total}, kernel {kernel_total}",
              file=sys.stderr)
        self.assertGreater(kernel_total, 1_000_000)  # the case moved megabytes across spines
        self.assertLess(abs(snmp_total - kernel_total), 0.05 * kernel_total,
                        f"SNMP {snmp_total} vs kernel {kernel_total}")
        self.assertIn("switch_spine_imbalance", attempt["metrics"])
        # LLDP frames are received, not discarded, on every port, the spines' mirrored ones too:
        # their copies are taken by nftables' dup at egress, not by a tc classifier whose ingress
        # hook made the kernel count each LLDP frame as a discard. switch_drops is honestly 0.
        discards = sum(p["in_discards"] or 0 for s in by_switch.values() for p in s["ports"])
        self.assertEqual(discards, 0)
        self.assertEqual(attempt["metrics"]["switch_drops"], 0)
        # By the kernel: the leaves send LLDP again, it arrives on the spines' leaf-facing ports,
        # and none of it is dropped there. (A frame that came before the spine's lldpd listened,
        # as the testbed started, was: that one is a discard a real switch counts too.)
        def rx(spine, port):
            r = subprocess.run(["ip", "-n", f"rocehil-{tid}-{spine}", "-s", "-j", "link", "show",
                                "dev", port], capture_output=True, text=True, check=True)
            s = json.loads(r.stdout)[0]["stats64"]["rx"]
            return s["packets"], s["dropped"]
        before_lldp = {p: rx(*p) for p in spine_ports}
        for leaf in ("l1", "l2"):
            subprocess.run(["lldpcli", "-u", f"/run/rocehil/rocehil-{tid}-{leaf}.lldpd.socket",
                            "update"], capture_output=True, check=True)
        for p in spine_ports:
            arrived = wait_for(lambda: rx(*p)[0] > before_lldp[p][0], 5)
            self.assertTrue(arrived, p)
            self.assertEqual(rx(*p)[1], before_lldp[p][1], p)

    def test_an_injected_pfc_storm_shows_on_the_leaf_port_it_entered(self):
        r, record, run_dir = self.run_suite("""  - name: storm
    workload: bw
    hosts: h1,h3
    size: 64K
    duration_s: 2
    captures: [s1-mirror]
    inject: {from: s1, link: l1-s1, priority: 3, duration_s: 0.5, after_s: 0.5}
    thresholds:
      - switch_pfc_rx[3] == 0
""")
        attempt = record["cases"][0]["attempts"][0]
        self.assertIsNone(attempt["error"], attempt["error"])
        injected = json.loads(attempt["raw"]["inject"]["output"])
        # The XON that ends the storm is a PFC frame of priority 3 too (class bit set, quanta 0).
        sent = injected["frames_sent"] + (1 if injected["xon_sent"] else 0)
        self.assertGreater(sent, 10)
        self.assertEqual(attempt["metrics"]["switch_pfc_rx[3]"], sent)
        self.assertEqual(attempt["metrics"]["switch_pfc_tx[3]"], sent)
        for prio in (0, 1, 2, 4, 5, 6, 7):
            self.assertEqual(attempt["metrics"][f"switch_pfc_rx[{prio}]"], 0)
        tid = TB["id"]
        l1 = {p["port"]: p for p in next(s for s in attempt["raw"]["switches"]
                                         if s["switch"] == "l1")["ports"]}
        self.assertEqual(l1[f"{tid}-s1"]["pfc_rx"][3], sent)
        # What s1's mirror port kept (filter all) against the octets s1's mirrored ports sent.
        mirror = attempt["raw"]["reconciliation"]["switch_mirror"]
        print(f"switch_mirror_reconciliation: mirror {mirror.get('mirror')} bytes, switch "
              f"{mirror.get('switches')} octets", file=sys.stderr)
        self.assertAlmostEqual(attempt["metrics"]["switch_mirror_reconciliation"], 1.0,
                               delta=0.05)
        # The failed threshold names the switch and port, and so does the report.
        grade = attempt["grade"]["thresholds"][0]
        self.assertEqual(grade["verdict"], "fail")
        self.assertIn(f"at l1:{tid}-s1 {sent}", grade["detail"])
        with open(os.path.join(run_dir, "report.html")) as f:
            html = f.read()
        self.assertIn(f"<td>l1</td><td>{tid}-s1</td>", html)
        self.assertEqual(r.returncode, 1, r.stdout[-2000:] + r.stderr)


if __name__ == "__main__":
    ROCEHIL = os.path.abspath(sys.argv[1])
    unittest.main(argv=[sys.argv[0], "-v"])
