"""System test of the verbs path on real kernel RDMA: `rocehil testbed up --vm` boots two QEMU
guests with Debian 12's kernel and soft-RoCE (rdma_rxe), and rocehil runs through libibverbs on
them. Checked with what is not rocehil: the guests' own sysfs and `rdma`, tshark counting the
spine mirror's RoCEv2 frames against rxe's sent_pkts, scapy checking the kernel's ICRCs, and the
verbs hw tests run inside a guest.

Usage: python3 testbed_vm_test.py PATH/TO/rocehil [PATH/TO/verbs_hw_tests]   (as root)
"""
import glob
import ipaddress
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import yaml

ROCEHIL = None
HW_TESTS = None
KERNEL_CACHE = "/var/cache/rocehil/guest-kernel"


def rocehil(*args, check=True, timeout=600):
    result = subprocess.run([ROCEHIL, *args], capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"rocehil {' '.join(args)} exited {result.returncode}:\n"
                             f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result


def missing_prerequisite():
    if os.geteuid() != 0:
        return "needs root"
    if shutil.which("qemu-system-x86_64") is None:
        return "no qemu-system-x86_64 (make deps installs qemu-system-x86)"
    if not glob.glob(os.path.join(KERNEL_CACHE, "*", ".complete")):
        return f"no guest kernel in {KERNEL_CACHE} (make deps runs scripts/guest-kernel.sh)"
    if shutil.which("slurmd") is None:
        return "no slurmd (make deps installs slurmd, slurmctld and munge)"
    return None


def mapped_gid(address):
    """::ffff:a.b.c.d as sysfs prints a GID: eight groups of four hex digits."""
    packed = ipaddress.IPv6Address(f"::ffff:{address}").packed
    return ":".join(packed[i:i + 2].hex() for i in range(0, 16, 2))


SUITE = {
    "schema_version": 1,
    "name": "vm",
    "defaults": {"hosts": "all", "iterations": 3, "warmup": 1},
    # Whole frames: scapy checks the ICRC at their end.
    "capture": {"filter": "roce", "snaplen": 9216, "keep": "always"},
    "tests": [
        {"name": "p2p_bw", "workload": "bw", "hosts": "h1,h2", "size": "16K", "qps": 2,
         "duration_s": 2, "captures": ["s1-mirror"],
         "thresholds": ["busbw_gbps > 0", "data_errors == 0", "nic_tx_bytes > 0"]},
        {"name": "p2p_lat", "workload": "lat", "hosts": "h1,h2", "size": 8, "iterations": 200,
         "thresholds": ["lat_p99_us > 0"]},
        {"name": "allreduce", "workload": "allreduce", "size": "64K", "qps": 2,
         "thresholds": ["busbw_gbps > 0", "data_errors == 0"]},
        # Half the guests' 300 Mbit/s link, through libibverbs: rxe has no packet pacing, so the
        # engine's token bucket holds it, and run.json says whether it held within 10%.
        {"name": "p2p_paced", "workload": "bw", "hosts": "h1,h2", "size": "16K", "qps": 2,
         "duration_s": 3, "rate": "50%", "thresholds": ["errors == 0"]},
    ],
}

# suites/acceptance.yaml's tests, made small for emulated guests.
SELFTEST_SUITE = """schema_version: 1
name: acceptance
defaults:
  hosts: '$HOSTS'
  size: 16K
  duration_s: 1
  iterations: 2
  warmup: 1
tests:
  - {name: rc_write, workload: bw, opcode: write, thresholds: [busbw_gbps > 0, data_errors == 0]}
  - {name: rc_read, workload: bw, opcode: read, thresholds: [busbw_gbps > 0, data_errors == 0]}
  - {name: rc_send, workload: bw, opcode: send, thresholds: [busbw_gbps > 0, data_errors == 0]}
  - {name: ud_send, workload: bw, transport: ud, opcode: send, size: 1K,
     thresholds: [busbw_gbps > 0, data_errors == 0]}
  - {name: latency, workload: lat, size: 8, iterations: 100, thresholds: [lat_p50_us > 0]}
  - name: qp_scaling
    workload: allreduce
    size: 64K
    qps: 4
    captures: []  # $CAPTURES
    thresholds: [busbw_gbps > 0]
  - {name: ecn_cnp, workload: incast, size: 64K, qps: 2, thresholds: [errors == 0, nic_cnps_sent > 0]}
  - {name: gpu_memory, workload: bw, opcode: write, memory: gpu, thresholds: [busbw_gbps > 0]}
  - {name: calibration_bw, workload: calibrate_bw, opcode: write, size: 64K, rounds: 1,
     thresholds: [calibration_ratio > 0]}
  - {name: calibration_lat, workload: calibrate_lat, size: 8, rounds: 1, iterations: 100,
     thresholds: [calibration_ratio > 0]}
"""


class Guests(unittest.TestCase):
    """Two guests in two racks under one spine, links fast enough that nothing is dropped: every
    packet a guest sends crosses s1 and its mirror once."""

    @classmethod
    def setUpClass(cls):
        why = missing_prerequisite()
        if why:
            raise unittest.SkipTest(why)
        cls.dir = tempfile.mkdtemp(prefix="rocehil-vm-")
        cls.tb = os.path.join(cls.dir, "tb")
        started = time.monotonic()
        cls.up = json.loads(rocehil("testbed", "up", "--dir", cls.tb, "--vm", "--slurm",
                                    "--hosts", "2", "--racks", "2", "--spines", "1",
                                    "--host-mbps", "300", "--uplink-mbps", "300", "--quiet",
                                    "--json").stdout)
        cls.boot_s = time.monotonic() - started
        with open(os.path.join(cls.tb, "inventory.yaml")) as f:
            cls.inventory = yaml.safe_load(f)
        cls.ssh_config = os.path.join(cls.tb, "ssh", "config")

    @classmethod
    def tearDownClass(cls):
        rocehil("testbed", "down", "--dir", cls.tb, check=False)
        left = subprocess.run(["pgrep", "-af", "qemu-system.*rocehil-"], capture_output=True,
                              text=True).stdout
        shutil.rmtree(cls.dir, ignore_errors=True)
        if any(cls.up["id"] in line for line in left.splitlines()):
            raise AssertionError(f"guests left running after down: {left}")

    def ssh(self, host, command, timeout=120):
        r = subprocess.run(["ssh", "-F", self.ssh_config, host, command], capture_output=True,
                           text=True, timeout=timeout)
        self.assertEqual(r.returncode, 0, f"ssh {host} {command}: {r.stderr}")
        return r.stdout

    def host(self, name):
        return next(h for h in self.inventory["hosts"] if h["name"] == name)

    def test_guests_are_up_small_and_named_in_the_inventory(self):
        # How long the boot took is said, not asserted: a test holds no clock.
        print(f"\n  testbed up --vm: {self.boot_s:.1f} s", file=sys.stderr)
        status = json.loads(rocehil("testbed", "status", "--dir", self.tb, "--json").stdout)
        guests = [ns["guest"] for ns in status["namespaces"] if "guest" in ns]
        self.assertEqual(len(guests), 2)
        for g in guests:
            self.assertEqual(g["state"], "ready", g)
            self.assertTrue(g["running"])
            self.assertLess(g["resident_kib"], 600 * 1024, "a guest over 600 MB")
        self.assertEqual(self.inventory["defaults"]["provider"], "verbs")
        nic = self.host("h1")["nics"][0]
        self.assertEqual((nic["device"], nic["gid_index"], nic["netdev"]), ("rxe0", 1, "eth0"))
        self.assertNotIn("netns", self.host("h1"))
        # rocehil's build tree is mounted live, outside the overlay: a rebuild while the guests
        # run is what they run next (through the overlay, a relinked agent crashed there).
        build_tree = os.path.dirname(os.path.dirname(ROCEHIL))
        self.assertIn(f"live {build_tree} 9p ", self.ssh("h1", "cat /proc/mounts"))

    def test_each_guest_has_soft_roce_on_its_fabric_address(self):
        for name in ("h1", "h2"):
            nic = self.host(name)["nics"][0]
            out = self.ssh(name, "rdma link show; cat /sys/class/infiniband/rxe0/ports/1/gids/1; "
                                 "ip -j addr show dev eth0")
            self.assertIn("link rxe0/1 state ACTIVE", out)
            self.assertIn("netdev eth0", out)
            # The GID is the fabric address's own (a point-to-point address would give the
            # peer's: rxe reads ifa_address).
            self.assertIn(mapped_gid(nic["ip"]), out)

    def test_verbs_hw_tests_pass_inside_a_guest(self):
        if not HW_TESTS:
            self.skipTest("no verbs_hw_tests binary given (built only with libibverbs)")
        out = self.ssh("h2", f"ROCEHIL_VERBS_DEVICE=rxe0 ROCEHIL_VERBS_GID_INDEX=1 {HW_TESTS} "
                             "--gtest_brief=1 2>&1; echo exit=$?", timeout=300)
        self.assertIn("exit=0", out, out[-3000:])
        self.assertNotIn("FAILED", out)
        # Everything but GPU memory ran: RC WRITE/READ/SEND, UD, a bad rkey, the counters.
        skipped = re.findall(r"\[  SKIPPED \] (\w+\.\w+)", out)
        self.assertTrue(all("Gpu" in s or "Cuda" in s for s in skipped), skipped)

    def test_a_suite_runs_through_verbs_and_rxe_counts_what_the_mirror_saw(self):
        suite = os.path.join(self.dir, "vm.yaml")
        with open(suite, "w") as f:
            yaml.safe_dump(SUITE, f)
        reports = os.path.join(self.dir, "reports")
        r = rocehil("run", suite, "-i", os.path.join(self.tb, "inventory.yaml"), "--reports",
                    reports, check=False)
        self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-2000:])
        run_dir = glob.glob(os.path.join(reports, "*-vm"))[0]
        with open(os.path.join(run_dir, "run.json")) as f:
            run = json.load(f)
        cases = {c["id"]: c for c in run["cases"]}
        self.assertEqual(sorted(cases), ["allreduce", "p2p_bw", "p2p_lat", "p2p_paced"])
        for c in cases.values():
            self.assertEqual(c["outcome"], "pass", c["id"])
        bw = cases["p2p_bw"]["attempts"][-1]
        nics = {n["host"]: n for n in bw["raw"]["nics"]}
        self.assertEqual({n["device"] for n in nics.values()}, {"rxe0"})
        self.assertIn("nic_retransmits", bw["metrics"])  # rxe's completer_retry_err
        self.assertNotIn("nic_cnps_sent", bw["metrics"])  # rxe has no CNPs: absent, not 0
        sent = sum(n["deltas"].get("hw_counters/sent_pkts", 0) for n in nics.values())
        self.assertGreater(sent, 100)
        # The capture point's ring: one or more files.
        kept = sorted(glob.glob(os.path.join(run_dir, "captures", "p2p_bw", "*.pcapng")))
        self.assertTrue(kept)
        # tshark, not rocehil: every RoCEv2 frame both guests' rxe sent crossed s1 once.
        frames = 0
        for path in kept:
            frames += len(subprocess.run(["tshark", "-r", path, "-Y", "udp.dstport == 4791",
                                          "-T", "fields", "-e", "frame.number"],
                                         capture_output=True, text=True,
                                         check=True).stdout.split())
        self.assertEqual(frames, sent, "mirror frames against rxe's sent_pkts")
        # scapy, not rocehil: the kernel's ICRCs.
        from scapy.all import rdpcap  # noqa: E402 (scapy is slow to import)
        from scapy.contrib.roce import BTH
        checked = 0
        for pkt in rdpcap(kept[0])[:200]:
            if BTH in pkt:
                self.assertEqual(bytes(pkt)[-4:], pkt[BTH].compute_icrc(None))
                checked += 1
        self.assertGreater(checked, 50)
        self.check_pacing(cases["p2p_paced"]["attempts"][-1])
        self.check_max_qp(run)

    def check_pacing(self, attempt):
        """rate: 50% through verbs on rxe: held by the engine (rxe refuses packet pacing), and
        within 10% of the rate asked or run.json says why not."""
        sender = attempt["raw"]["traffic"]["pacing"]["senders"][0]
        self.assertEqual(sender["host"], "h1")
        self.assertEqual(sender["method"], "engine")
        self.assertIn("packet pacing", sender["nic_refused"])
        link_bps = self.host("h1")["nics"][0]["link_gbps"] * 1e9
        self.assertAlmostEqual(sender["asked_bps"], link_bps / 2, delta=1)
        ratio = sender["reached_bps"] / sender["asked_bps"]
        self.assertAlmostEqual(sender["reached_ratio"], ratio, places=6)
        self.assertEqual(sender["held"], 0.9 <= ratio <= 1.1, sender)
        self.assertEqual("why_not_held" in sender, not sender["held"], sender)
        self.assertGreaterEqual(sender["held_back_s"], 0)
        print(f"p2p_paced: asked {sender['asked_bps'] / 1e6:.0f} Mbit/s, reached "
              f"{sender['reached_bps'] / 1e6:.1f} ({ratio:.0%}), held back "
              f"{sender['held_back_s']:.2f} s, lost to a full bucket "
              f"{sender['lost_to_full_bucket_s']:.2f} s; {sender.get('why_not_held', 'held')}",
              file=sys.stderr)

    def check_max_qp(self, run):
        """The preflight's max_qp of each guest's rxe0 is what the guest's own ibv_devinfo -v says,
        and the run's largest case fit in it."""
        for host in run["inventory"]["preflight"]["hosts"]:
            if not (host["facts"] or {}).get("rdma"):
                continue  # the capture host: no RDMA device
            devinfo = self.ssh(host["name"], "ibv_devinfo -v -d rxe0")
            max_qp = int(re.search(r"^\s*max_qp:\s*(\d+)$", devinfo, re.M).group(1))
            rxe0 = next(d for d in host["facts"]["rdma"] if d["name"] == "rxe0")
            self.assertEqual(rxe0["max_qp"], max_qp)
            item = next(c for c in host["checks"] if c["name"] == "qps rxe0")
            self.assertEqual(item["status"], "ok", item)

    def start_bw_case(self, name):
        """A 60 s bw case h1 -> h2 under `rocehil run`, once h2's rxe0 has acknowledged a few
        hundred packets; the process and where its run.json will be. The fault each test then
        causes ends the case within seconds: the length is margin for guests that QEMU emulates
        on a shared machine (once, 2,000 acknowledgements took most of a 20 s case)."""
        suite = os.path.join(self.dir, f"{name}.yaml")
        with open(suite, "w") as f:
            yaml.safe_dump({"schema_version": 1, "name": name,
                            "tests": [{"name": name, "workload": "bw", "hosts": "h1,h2",
                                       "size": "16K", "duration_s": 60,
                                       "thresholds": ["errors == 0"]}]}, f)
        reports = os.path.join(self.dir, name)
        sent = "cat /sys/class/infiniband/rxe0/ports/1/hw_counters/sent_pkts"
        before = int(self.ssh("h2", sent))
        proc = subprocess.Popen([ROCEHIL, "run", suite, "-i",
                                 os.path.join(self.tb, "inventory.yaml"), "--reports", reports],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and int(self.ssh("h2", sent)) < before + 300:
            time.sleep(1)
        return proc, os.path.join(reports, f"*-{name}", "run.json")

    def finished_case(self, proc, run_json, code=1, outcome="fail"):
        """The case's run.json entry and the terminal output, once `rocehil run` has ended, as it
        must, with exit status `code` (1: a case failed; 3: one could not be judged)."""
        out, err = proc.communicate(timeout=300)
        self.assertEqual(proc.returncode, code, out[-2000:] + err[-2000:])
        with open(glob.glob(run_json)[0]) as f:
            case = json.load(f)["cases"][0]
        self.assertEqual(case["outcome"], outcome)
        return case, out

    def test_a_guest_whose_link_goes_down_mid_case_is_named_with_its_devices_words(self):
        nic = self.host("h2")["nics"][0]
        gateway = ".".join(nic["ip"].split(".")[:3]) + ".1"  # its leaf: 198.18.RACK.1
        proc, run_json = self.start_bw_case("flap")
        try:
            self.ssh("h2", "ip link set eth0 down")
            case, _ = self.finished_case(proc, run_json, code=3, outcome="error")
        finally:
            proc.kill()
            # Up again, with the routes the kernel dropped with the link.
            self.ssh("h2", f"ip link set eth0 up; ip route replace {gateway}/32 dev eth0 scope "
                           f"link; ip route replace 198.18.0.0/16 via {gateway} dev eth0")
        attempt = case["attempts"][-1]
        events = attempt["raw"].get("device_events", [])
        # rxe raised IBV_EVENT_PORT_ERR through libibverbs' async events, on h2 only.
        downs = [e for e in events if e["kind"] == "port_error"]
        self.assertEqual({(e["host"], e["device"]) for e in downs}, {("h2", "rxe0")}, events)
        # h1's rxe gave up on the QP toward h2 in its own words (its retry_cnt is 6: at 7 rxe
        # retries for ever), the send queue's other requests flushed behind it. h2's port went
        # down: the case is an error naming h2 and its device's event (not the fabric's fault).
        client = attempt["raw"]["traffic"]["client"]["results"]
        self.assertGreaterEqual(client["errors"], 1, client)
        self.assertRegex(client["first_error"], r"^QP 0x[0-9a-f]+: retry_exceeded \(the NIC: "
                                                r"transport retry counter exceeded\)")
        self.assertEqual(attempt["error"]["host"], "h2", attempt["error"])
        self.assertEqual(attempt["error"]["fault"], "infrastructure", attempt["error"])
        self.assertIn("QP 0x", attempt["error"]["message"])
        self.assertIn("host h2: rxe0 reported port_error", attempt["error"]["message"])
        nics = {n["host"]: n["deltas"] for n in attempt["raw"]["nics"]}
        self.assertEqual(nics["h2"].get("hw_counters/link_downed"), 1, nics)
        self.assertEqual(nics["h1"].get("hw_counters/retry_exceeded_err"), 1, nics)

    def test_a_peer_that_vanishes_mid_case_is_retry_exceeded_on_the_side_left_waiting(self):
        with open(os.path.join(self.tb, "run", f"rocehil-{self.up['id']}-h2.qemu.pid")) as f:
            qemu = int(f.read())
        proc, run_json = self.start_bw_case("vanish")
        try:
            # h2 vanishes: its whole machine stops (a hung host) for a while.
            os.kill(qemu, signal.SIGSTOP)
            time.sleep(5)
        finally:
            os.kill(qemu, signal.SIGCONT)
        case, out = self.finished_case(proc, run_json)
        attempt = case["attempts"][-1]
        # The fabric (as far as h1 can tell) did not carry its writes: a failure, and graded.
        self.assertEqual(attempt["error"]["fault"], "fabric", attempt["error"])
        # The verdict says whose requests went unanswered on which QP, in the NIC's words: h1's
        # rxe gave up on its writes (retry_cnt 6; at 7 rxe retries for ever, and only requests
        # left without a completion would have named it), in run.json and on the terminal.
        detail = attempt["grade"]["thresholds"][0]["detail"]
        self.assertRegex(detail, r"at h1: QP 0x[0-9a-f]+: retry_exceeded \(the NIC: transport "
                                 r"retry counter exceeded\)")
        # On the terminal: the fabric's fault, the QP and the side whose requests went unanswered.
        self.assertRegex(out, r"the fabric: QP 0x[0-9a-f]+: retry_exceeded .*\(client \(h1\) -> "
                              r"server \(h2\)\)")
        nics = {n["host"]: n["deltas"] for n in attempt["raw"]["nics"]}
        self.assertEqual(nics["h1"].get("hw_counters/retry_exceeded_err"), 1, nics)
        # No port event: nothing went down that h1 or h2 could see.
        self.assertFalse([e for e in attempt["raw"].get("device_events", [])
                          if e["kind"] == "port_error"])

    def test_slurm_runs_the_agents_inside_the_guests(self):
        env = dict(os.environ, SLURM_CONF=os.path.join(self.tb, "slurm", "slurm.conf"))
        nodes = subprocess.run(["sinfo", "--noheader", "--Node", "--format=%N %t"], env=env,
                               capture_output=True, text=True, check=True).stdout.split("\n")
        self.assertIn("h1 idle", nodes)
        self.assertIn("h2 idle", nodes)
        # A job step's hostname is the guest's own (stage 2 named it), not this machine's.
        r = subprocess.run(["srun", "-N", "2", "--nodelist=h1,h2", "cat",
                            "/proc/sys/kernel/hostname",
                            "/sys/class/infiniband/rxe0/ports/1/gids/1"],
                           env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(line for line in r.stdout.split() if line.startswith("h")),
                         ["h1", "h2"])
        suite = os.path.join(self.dir, "slurm.yaml")
        with open(suite, "w") as f:
            yaml.safe_dump({"schema_version": 1, "name": "slurm",
                            "tests": [{"name": "p2p_lat", "workload": "lat", "hosts": "h1,h2",
                                       "size": 8, "iterations": 500,
                                       "thresholds": ["errors == 0"]}]}, f)
        reports = os.path.join(self.dir, "slurm-reports")
        r = subprocess.run(["salloc", "-N", "2", "--nodelist=h1,h2", "--quiet", ROCEHIL, "run",
                            suite, "-i", os.path.join(self.tb, "inventory.yaml"), "--hosts",
                            "slurm", "--launcher", "slurm", "--reports", reports],
                           env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr[-2000:])
        with open(glob.glob(os.path.join(reports, "*-slurm", "run.json"))[0]) as f:
            run = json.load(f)
        self.assertEqual(run["cases"][0]["outcome"], "pass")
        client = run["cases"][0]["attempts"][-1]["raw"]["traffic"]["client"]
        self.assertEqual((client["host"], client["provider"]), ("h1", "verbs"))

    def test_selftest_passes_what_rxe_does_and_says_why_for_what_it_cannot(self):
        suite = os.path.join(self.dir, "acceptance.yaml")
        with open(suite, "w") as f:
            f.write(SELFTEST_SUITE)
        reports = os.path.join(self.dir, "selftest")
        rocehil("selftest", "-i", os.path.join(self.tb, "inventory.yaml"), "--hosts", "h1,h2",
                "--captures", "s1-mirror", "--suite", suite, "--reports", reports, check=False)
        path = glob.glob(os.path.join(reports, "*", "selftest.json"))[0]
        with open(path) as f:
            checks = {c["name"]: c for c in json.load(f)["checks"]}
        for name in ("preflight", "rc_write", "rc_read", "rc_send", "ud_send", "latency"):
            self.assertEqual(checks[name]["verdict"], "pass", checks[name])
        # rxe has no CNP code: never a pass it did not earn, and the reason names the counter.
        self.assertEqual(checks["ecn_cnp"]["verdict"], "error", checks["ecn_cnp"])
        self.assertIn("np_cnp_sent", checks["ecn_cnp"]["detail"])
        self.assertEqual(checks["gpu_memory"]["verdict"], "skip")
        # perftest ran on both guests beside rocehil: both numbers are there, whatever they say.
        self.assertIn(checks["calibration"]["verdict"], ("pass", "fail"), checks["calibration"])


if __name__ == "__main__":
    ROCEHIL = os.path.abspath(sys.argv.pop(1))
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        HW_TESTS = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
