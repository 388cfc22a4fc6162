"""System test of `rocehil testbed up --vm --lossless`: QEMU guests with kernel soft-RoCE behind
guest NIC processes (testbed/src/guest_nic/nic_loop.hpp) that obey the leaf's PFC and hold the
guest back instead of dropping. Three guests under one leaf; h2 and h3 send into h1 (rank 0) on
DSCP 26, priority 3, lossless, ECN off: l1's port to h1 is oversubscribed 2:1, so only PFC keeps
the class lossless.

The links run at 30 Mbit/s with XOFF at 16 KB: an emulated guest's rxe receives a few tens of
Mbit/s at most, and every byte queued is delay an ACK waits behind (rxe's timer is 67 ms). At
50 Mbit/s and SONiC's 250 KB XOFF the receiving guest fell behind its link, its NIC held XOFF
for over 200 ms and l1's watchdog rightly called it a storm and dropped (docs/rehearsal.md).

Held to what is not rocehil's: tcpdump and tshark on the senders' wires (the PFC frames the leaf
sent, priority 3 enabled), the guests' own virtio and rxe counters read over ssh, and the
switches' and NICs' counters files read with testbed_lossless_test.py's own copy of their layout.
rxe's retries are reported, not asserted: emulated guests on two shared cores miss its 67 ms ACK
timer with nothing lost (the receiver counts the resent packets as duplicates). A case that ends
on RNR (the receiving guest reposted its receives slower than a ConnectX host's RNR budget, 2 runs
in 5) is said and run again, 3 times at most; a loss would end it on retry_exceeded, which fails
the test at once.

Usage: python3 testbed_vm_lossless_test.py PATH/TO/rocehil   (as root)
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testbed_lossless_test as lossless  # noqa: E402
import testbed_vm_test as vm  # noqa: E402

ROCEHIL = None
# rxe's counters (drivers/infiniband/sw/rxe/rxe_hw_counters.c) of retries and what they resent.
RXE_RETRY_COUNTERS = ["completer_retry_err", "retry_exceeded_err", "duplicate_request",
                      "rcvd_seq_err", "out_of_seq_request"]

SUITE = """schema_version: 1
name: vm-lossless
tests:
  - name: incast
    workload: incast
    hosts: h1,h2,h3
    size: 64K
    iterations: 40
    qps: 1
    traffic_class: 106
    thresholds:
      - errors == 0
"""


# testbed_vm_test's: the same call, with the tail of its output in a failure.
rocehil = vm.rocehil


class GuestsOnALosslessFabric(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        why = vm.missing_prerequisite()
        if why:
            raise unittest.SkipTest(why)
        cls.dir = tempfile.mkdtemp(prefix="rocehil-vm-lossless-")
        cls.tb = os.path.join(cls.dir, "tb")
        cls.id = f"vl{os.getpid() % 1000:03d}"
        cls.up = json.loads(rocehil(
            "testbed", "up", "--dir", cls.tb, "--id", cls.id, "--vm", "--lossless", "--hosts",
            "3", "--racks", "1", "--spines", "1", "--host-mbps", "30", "--switch",
            "switch.dscp_to_tc=26:3", "--switch", "switch.ecn_enable=0", "--switch",
            "switch.xoff_kb=16", "--quiet",
            "--json").stdout)
        cls.ssh_config = os.path.join(cls.tb, "ssh", "config")

    @classmethod
    def tearDownClass(cls):
        rocehil("testbed", "down", "--dir", cls.tb, check=False)
        left = subprocess.run(["pgrep", "-af", f"rocehil-{cls.id}-"], capture_output=True,
                              text=True).stdout
        shutil.rmtree(cls.dir, ignore_errors=True)
        if left.strip():
            raise AssertionError(f"processes left running after down: {left}")

    def netns(self, name):
        return f"rocehil-{self.id}-{name}"

    def nic(self, host):
        """A host's fabric veth, in its namespace: the guest's wire (lossless.Capture's name)."""
        return f"{self.id}-nic0"

    def counters(self, name):
        return lossless.read_counters(f"/run/rocehil/{self.netns(name)}.counters")

    def guest_counters(self, host):
        """rxe's hw_counters and the virtio NIC's own (ethtool -S eth0), inside the guest."""
        out = subprocess.run(
            ["ssh", "-F", self.ssh_config, host,
             "cd /sys/class/infiniband/rxe0/ports/1/hw_counters && grep . *; "
             "ethtool -S eth0 | sed -n 's/^ *\\([a-z0-9_]*\\): /\\1:/p'"],
            capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        return {k: int(v) for k, v in (line.split(":", 1) for line in out.stdout.split())}

    def incast(self, work, attempt):
        """One run of SUITE with the senders' wires captured: (case, {host: PFC frames})."""
        captures = {h: lossless.Capture(self, h, work) for h in ("h2", "h3")}
        suite = os.path.join(work, "suite.yaml")
        with open(suite, "w") as f:
            f.write(SUITE)
        reports = os.path.join(work, f"reports-{attempt}")
        result = subprocess.run([ROCEHIL, "run", suite, "-i", f"{self.tb}/inventory.yaml",
                                 "--reports", reports],
                                capture_output=True, text=True, timeout=600, cwd=work)
        frames = {h: c.frames() for h, c in captures.items()}
        runs = sorted(glob.glob(os.path.join(reports, "*", "run.json")))
        self.assertTrue(runs, f"no run.json: {result.stdout}{result.stderr}")
        with open(runs[-1]) as f:
            return json.load(f)["cases"][0], frames

    def test_a_guest_incast_on_a_lossless_class_is_paused_not_dropped(self):
        work = tempfile.mkdtemp(prefix="rocehil-vm-lossless-run-")
        ended_on_rnr = []
        try:
            before = {h: self.guest_counters(h) for h in ("h1", "h2", "h3")}
            # The case passes, or ends on the one error that is not the fabric's: the receiving
            # guest reposting its receives slower than rocehil's RNR budget (6 retries of
            # 0.64 ms, a ConnectX host's) under full emulation, 2 runs in 5 here, and on a slow
            # day all of them. That run is said and the case run again, 5 times at most; a loss
            # would be retry_exceeded, and any error other than RNR fails at once.
            # The NICs' and switches' counters add up over the runs, so the frames tshark saw
            # are summed over them too (a run that ended on RNR early may have had no pause).
            frames = {"h2": [], "h3": []}
            for attempt in range(5):
                case, seen = self.incast(work, attempt)
                for h, got in seen.items():
                    frames[h] += got
                if case["outcome"] == "pass":
                    break
                message = case.get("summary", {}).get("error", {}).get("message", "")
                self.assertIn("rnr_retry_exceeded", message, case.get("summary"))
                self.assertNotIn(" retry_exceeded", message, case.get("summary"))
                ended_on_rnr.append(message)
            after = {h: self.guest_counters(h) for h in ("h1", "h2", "h3")}
            l1 = self.counters("l1")
            nics = {h: self.counters(h) for h in ("h1", "h2", "h3")}
        finally:
            shutil.rmtree(work, ignore_errors=True)
        metrics = case["attempts"][-1]["metrics"]
        nic = f"{self.id}-nic0"
        print(f"\n  incast: {case['outcome']} (runs that ended on RNR first: {ended_on_rnr}), "
              f"busbw {metrics.get('busbw_gbps')} Gbit/s; "
              f"PFC frames at h2 {len(frames['h2'])}, h3 {len(frames['h3'])}; "
              f"paused ms h2 {nics['h2'][nic]['priority'][3]['paused_ns'] / 1e6:.0f}, "
              f"h3 {nics['h3'][nic]['priority'][3]['paused_ns'] / 1e6:.0f}", file=sys.stderr)
        # Every run may end on RNR on a slow day (5 of 5 in one CI): that is the receiving
        # guest's speed, not the fabric's, and what follows is the fabric's, which holds all the
        # same; a run that ended on anything else has already failed above.
        if case["outcome"] != "pass":
            self.assertEqual(len(ended_on_rnr), 5, ended_on_rnr)
            print("  every run ended on RNR: the fabric's part is checked all the same",
                  file=sys.stderr)

        # The leaf paused the senders on priority 3: tshark on their wires (every run), and the
        # NICs' counters. A run that passed paused both; runs that all ended on RNR early may
        # have congested l1 for one sender only (h2 unpaused in all 5 of one CI's), so there
        # each sender l1 sent XOFF to must have had it reach it and hold it, and one at least.
        paused = []
        for h in ("h2", "h3"):
            on_three = [f for f in frames[h] if f[0] >> 3 & 1 and f[1][3] > 0]
            sent_to_h = l1[f"{self.id}-{h}"]["priority"][3]["pfc_sent"]
            if case["outcome"] != "pass" and sent_to_h == 0:
                self.assertEqual(on_three, [], f"XOFF reached {h}, which l1 never sent it")
                continue
            paused.append(h)
            self.assertGreater(len(on_three), 0, f"no XOFF for priority 3 reached {h}")
            got = nics[h][nic]["priority"][3]
            self.assertGreater(got["pfc_received"], 0, got)
            self.assertGreater(got["paused_ns"], 0, f"{h}'s NIC never held priority 3: {got}")
        self.assertTrue(paused, "l1 paused neither sender")

        # Nothing of the class was dropped anywhere: the leaf, the NICs' queues both ways.
        where = {name: {k: port["priority"][3][k] for k in
                        ("lossless_drops", "peak_ingress_bytes", "pfc_sent", "pfc_received")}
                 for name, port in l1.items()}
        self.assertEqual(lossless.total({"l1": l1}, "priority", "lossless_drops"), 0, where)
        self.assertEqual(lossless.total({"l1": l1}, "queue", "dropped", 3), 0)
        for h, ports in nics.items():
            for name, port in ports.items():
                self.assertEqual(sum(q["dropped"] for q in port["queue"]), 0, f"{h} {name}")
        # What the senders' NICs put on the wire on priority 3 reached h1's guest: l1's port to
        # h1 sent as many class-3 frames as the two NICs did (all of them) and h1's NIC took
        # them all (its own frames to its guest include the senders' ACK-less writes' data).
        from_senders = sum(nics[h][nic]["queue"][3]["packets"] for h in ("h2", "h3"))
        self.assertGreater(from_senders, 0)
        to_h1 = sum(p["queue"][3]["packets"] for n, p in l1.items() if n == f"{self.id}-h1")
        self.assertEqual(to_h1, from_senders, "l1 lost or gained class-3 frames on the way")

        # Nor inside h1's guest: its virtio NIC dropped nothing it was handed.
        self.assertEqual(after["h1"].get("rx_queue_0_drops", 0) -
                         before["h1"].get("rx_queue_0_drops", 0), 0)
        self.assertGreaterEqual(nics["h1"]["guest"]["queue"][0]["packets"], to_h1)
        retries = {h: {c: after[h].get(c, 0) - before[h].get(c, 0) for c in RXE_RETRY_COUNTERS
                       if after[h].get(c, 0) - before[h].get(c, 0)} for h in after}
        print(f"  rxe retries (reported, not asserted): {retries}", file=sys.stderr)

    def test_status_shows_each_guests_nic_and_a_reload_reaches_it(self):
        status = json.loads(rocehil("testbed", "status", "--dir", self.tb, "--json").stdout)
        hosts = [ns for ns in status["namespaces"] if ns["name"] in ("h1", "h2", "h3")]
        self.assertEqual(len(hosts), 3)
        for ns in hosts:
            ports = [p["name"] for p in ns["dataplane"]["ports"]]
            self.assertEqual(ports, [f"{self.id}-nic0", "guest"], ns["dataplane"])
        rocehil("testbed", "set", "--dir", self.tb, "switch.pfc_priorities=3")
        try:
            with open(os.path.join(self.tb, "vm", f"{self.netns('h2')}.nic.json")) as f:
                self.assertEqual(json.load(f)["pfc_priorities"], [3])
            log_file = os.path.join(self.tb, "run", f"{self.netns('h2')}.guest-nic.log")
            for _ in range(50):
                with open(log_file) as f:
                    log = f.read()
                if "PFC mask 0x08" in log:
                    break
                time.sleep(0.1)
            self.assertIn("QEMU connected", log)
            self.assertIn("settings read again", log)
            self.assertIn("PFC mask 0x08", log)
        finally:
            rocehil("testbed", "set", "--dir", self.tb, "switch.pfc_priorities=3,4")


if __name__ == "__main__":
    ROCEHIL = os.path.abspath(sys.argv.pop(1))
    lossless.ROCEHIL = ROCEHIL
    vm.ROCEHIL = ROCEHIL
    unittest.main(verbosity=2)
