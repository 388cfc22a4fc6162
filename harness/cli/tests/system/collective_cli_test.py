"""System tests of `rocehil traffic collective` on real testbeds: one agent per host over real
ssh, the soft provider's RoCEv2 on veth links through leaf and spine routers.

Every number is held against an independent source: bus bandwidth against nccl-tests' formula
recomputed here from the reported time; bytes against the kernel's counters of each host's
fabric interface (what left the NIC, frame by frame); ECMP balance against the spines' own
interface counters.

Usage: python3 collective_cli_test.py PATH/TO/rocehil   (as root)
"""
import json
import os
import subprocess
import sys
import unittest

from testbed_fixture import spine_tx_bytes, testbed_down, testbed_up

ROCEHIL = None
FOUR = {}
ETH_IP_UDP = 14 + 20 + 8  # what a veth frame adds to a RoCEv2 UDP payload (no FCS)
CNP_FRAME = ETH_IP_UDP + 12 + 16 + 4  # BTH, 16 reserved bytes, ICRC


def rocehil(*args, timeout=300):
    return subprocess.run([ROCEHIL, *args], capture_output=True, text=True, timeout=timeout)


def collective(inventory, *args):
    r = rocehil("traffic", "collective", inventory, "--json", *args)
    report = json.loads(r.stdout) if r.stdout.strip() else None
    return r.returncode, report, r.stderr


def inventory_nics(inventory):
    """{host: (netns, netdev, link_gbps)} from `rocehil inventory show --json`."""
    shown = json.loads(rocehil("inventory", "show", inventory, "--json").stdout)
    return {h["name"]: (h["netns"], h["nics"][0]["netdev"], h["nics"][0]["link_gbps"])
            for h in shown["hosts"] if h["nics"]}


def netns_counter(netns, netdev, counter):
    r = subprocess.run(["ip", "netns", "exec", netns, "cat",
                        f"/sys/class/net/{netdev}/statistics/{counter}"],
                       capture_output=True, text=True, check=True)
    return int(r.stdout)


def nccl_busbw_gbps(pattern, ranks, size, time_us):
    """nccl-tests' PERFORMANCE.md: algbw = size / time; busbw = algbw x factor."""
    factor = {"allreduce": 2 * (ranks - 1) / ranks, "alltoall": (ranks - 1) / ranks,
              "allgather": (ranks - 1) / ranks, "reduce_scatter": (ranks - 1) / ranks,
              "tree_allreduce": 2 * (ranks - 1) / ranks, "broadcast": 1.0}[pattern]
    return size / (time_us / 1e6) * factor * 8 / 1e9


def setUpModule():
    directory, testbed_id, _ = testbed_up(ROCEHIL, "rhcol")
    FOUR.update(dir=directory, id=testbed_id,
                inventory=os.path.join(directory, "inventory.yaml"))


def tearDownModule():
    if FOUR:
        testbed_down(ROCEHIL, FOUR["dir"])


class FourRanks(unittest.TestCase):
    def check_case(self, report, case, link_gbps):
        n = len(report["ranks"])
        self.assertTrue(case["verified"], case)
        self.assertEqual(case["wrong"], 0, case["problems"])
        self.assertEqual(case["errors"], 0, case["first_error"])
        self.assertEqual(case["iterations"], report["iterations"])
        self.assertGreater(case["busbw_gbps"], 0)
        self.assertLessEqual(case["busbw_gbps"], link_gbps)
        self.assertAlmostEqual(
            case["busbw_gbps"],
            nccl_busbw_gbps(report["pattern"], n, case["bytes"], case["time_us"]), places=9)
        self.assertLessEqual(case["time_p50_us"], case["time_max_us"])
        self.assertLessEqual(case["time_p99_us"], case["time_max_us"])

    def test_allreduce_bytes_match_the_kernel_counters(self):
        nics = inventory_nics(FOUR["inventory"])
        hosts = sorted(nics)
        before = {h: (netns_counter(nics[h][0], nics[h][1], "tx_bytes"),
                      netns_counter(nics[h][0], nics[h][1], "tx_packets")) for h in hosts}
        code, report, err = collective(FOUR["inventory"], "--sizes", "256K", "--qps", "4",
                                       "--iterations", "6", "--warmup", "2")
        self.assertEqual(code, 0, err)
        after = {h: (netns_counter(nics[h][0], nics[h][1], "tx_bytes"),
                     netns_counter(nics[h][0], nics[h][1], "tx_packets")) for h in hosts}
        case = report["cases"][0]
        self.check_case(report, case, nics[hosts[0]][2])
        n = len(report["ranks"])
        for rank in case["per_rank"]:
            host = report["ranks"][rank["rank"]]["host"]
            qps = rank["per_qp"]
            sent = sum(q["counters"]["bytes_sent"] for q in qps)
            packets = sum(q["counters"]["packets_sent"] for q in qps)
            cnps = sum(q["counters"]["cnps_sent"] for q in qps)
            # The NIC's frames are the QPs' packets and CNPs with their headers, and at most a
            # few others: ARP the kernel sends on its own (42 bytes), and the LLDP frames the
            # host's lldpd sends every 30 s (about 250 bytes: chassis, port, names, addresses).
            roce_frames = packets + cnps
            roce_bytes = sent + ETH_IP_UDP * packets + CNP_FRAME * cnps
            other_frames = after[host][1] - before[host][1] - roce_frames
            other_bytes = after[host][0] - before[host][0] - roce_bytes
            self.assertTrue(0 <= other_frames <= 4, (host, other_frames))
            self.assertTrue(0 <= other_bytes <= 512 * other_frames, (host, other_bytes))
            # A ring rank sends 2(n-1) chunks of size/n per iteration; the QPs also carried the
            # checked iteration and the warm-up, and BTH/RETH/ImmDt/ICRC and ACKs on top.
            per_iteration = 2 * (n - 1) * (case["bytes"] // n)
            self.assertEqual(rank["bytes_sent"], per_iteration * 6)
            self.assertGreater(sent, per_iteration * (1 + 2 + 6))
            self.assertLess(sent, per_iteration * (1 + 2 + 6) * 1.15)
            # Split: every QP of the connection to the next rank carried a quarter.
            busy = [q for q in qps if q["bytes"] > 0]
            self.assertEqual(len(busy), 4)
            self.assertEqual({q["bytes"] for q in busy}, {rank["bytes_sent"] // 4})
            self.assertEqual(len({q["udp_sport"] for q in qps}), len(qps))

    def test_every_pattern_checks_its_data(self):
        link = inventory_nics(FOUR["inventory"])["h1"][2]
        for pattern in ["allgather", "reduce_scatter", "alltoall", "broadcast", "tree_allreduce",
                        "hierarchical_allreduce", "permutation", "pairwise", "incast"]:
            with self.subTest(pattern=pattern):
                code, report, err = collective(FOUR["inventory"], "--pattern", pattern,
                                               "--sizes", "64K,1M", "--qps", "2",
                                               "--strategy", "round_robin",
                                               "--iterations", "4", "--warmup", "1")
                self.assertEqual(code, 0, err)
                self.assertEqual(len(report["cases"]), 2)
                for case in report["cases"]:
                    self.assertEqual(case["wrong"], 0, case["problems"])
                    self.assertEqual(case["errors"], 0, case["first_error"])
                    # incast's receiver keeps whichever sender landed last: nothing to compare
                    self.assertEqual(case["verified"], pattern != "incast")
                    self.assertGreater(case["busbw_gbps"], 0)
                    if pattern in ("allgather", "reduce_scatter", "alltoall", "broadcast",
                                   "tree_allreduce"):
                        self.assertLessEqual(case["busbw_gbps"], link)
                        self.assertAlmostEqual(
                            case["busbw_gbps"],
                            nccl_busbw_gbps(pattern, 4, case["bytes"], case["time_us"]), places=9)
                if pattern == "pairwise":
                    matrix = report["cases"][0]["pairwise"]["gbps"]
                    for a in range(4):
                        for b in range(4):  # null: a rank with itself is no pair
                            self.assertEqual(matrix[a][b] is not None and matrix[a][b] > 0,
                                             a != b, matrix)

    def test_qp_scaling_spreads_the_ring_over_both_spines(self):
        """Ring allreduce with hosts dealt across the 2 racks, so every hop crosses a spine; the
        testbed's fixed multipath hash seed makes each run's paths repeatable."""
        def imbalance(qps, seed):
            before = [spine_tx_bytes(FOUR["id"], s) for s in ("s1", "s2")]
            code, report, err = collective(FOUR["inventory"], "--sizes", "1M", "--qps", str(qps),
                                           "--sport-seed", str(seed), "--placement",
                                           "fragmented", "--iterations", "4", "--warmup", "1",
                                           "--no-verify")
            self.assertEqual(code, 0, err)
            spines = [spine_tx_bytes(FOUR["id"], s) - b for s, b in zip(("s1", "s2"), before)]
            self.assertGreater(sum(spines), 4 * 1_000_000)
            return max(spines) / (sum(spines) / 2), spines
        one = [imbalance(1, seed) for seed in (1, 2, 3)]
        eight = [imbalance(8, seed) for seed in (1, 2, 3)]
        print(f"\nECMP imbalance (max/mean of per-spine bytes), sport seeds 1-3:\n"
              f"  qps 1: {[round(i, 3) for i, _ in one]}  spine bytes {[s for _, s in one]}\n"
              f"  qps 8: {[round(i, 3) for i, _ in eight]}  spine bytes {[s for _, s in eight]}",
              file=sys.stderr)
        mean_one = sum(i for i, _ in one) / 3
        mean_eight = sum(i for i, _ in eight) / 3
        self.assertLess(mean_eight, mean_one)
        self.assertLess(max(i for i, _ in eight), 1.5)

    def test_bad_options_are_refused_in_one_line(self):
        code, _, err = collective(FOUR["inventory"], "--pattern", "allreduce2")
        self.assertEqual(code, 2)
        self.assertIn("--pattern: unknown pattern 'allreduce2'", err)
        code, _, err = collective(FOUR["inventory"], "--hosts", "h1")
        self.assertEqual(code, 2)
        self.assertIn("gives 1 rank(s); a collective needs at least 2", err)
        code, _, err = collective(FOUR["inventory"], "--sizes", "2G")
        self.assertEqual(code, 2)
        self.assertIn("--sizes: 2G is outside 1 byte .. 1G", err)


class EightRanks(unittest.TestCase):
    def test_eight_hosts_in_two_racks(self):
        directory, _, _ = testbed_up(ROCEHIL, "rhcol8", "--hosts", "8")
        try:
            inventory = os.path.join(directory, "inventory.yaml")
            link = inventory_nics(inventory)["h1"][2]
            for pattern in ("allreduce", "alltoall"):
                code, report, err = collective(inventory, "--pattern", pattern, "--sizes", "512K",
                                               "--qps", "1,4", "--iterations", "4", "--warmup", "1")
                self.assertEqual(code, 0, err)
                self.assertEqual(len(report["ranks"]), 8)
                for case in report["cases"]:
                    self.assertTrue(case["verified"])
                    self.assertEqual(case["wrong"], 0, case["problems"])
                    self.assertEqual(case["errors"], 0, case["first_error"])
                    self.assertGreater(case["busbw_gbps"], 0)
                    self.assertLessEqual(case["busbw_gbps"], link)
                    self.assertAlmostEqual(
                        case["busbw_gbps"],
                        nccl_busbw_gbps(pattern, 8, case["bytes"], case["time_us"]), places=9)
        finally:
            testbed_down(ROCEHIL, directory)


if __name__ == "__main__":
    ROCEHIL = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
