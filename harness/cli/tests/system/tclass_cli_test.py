"""System test of classes per QP (issue 62: the SONiC RoCEv2 plan puts the QPs of one pair on
several DSCPs): `rocehil run` of a bw case from h1 to h3 (across the spines) with qps 4 and
traffic_class {per_qp: [106, 98]}, both spines' mirror ports captured and kept (keep: always,
filter: roce); and an allreduce between the same hosts with qps 2 and the same classes.

What run.json says is held against tshark on the kept pcapng files: the client's RoCE frames
carry DSCP 26 and DSCP 24, and each QP's (told apart by its UDP source port and the BTH
destination QP of its peer) carry only the DSCP of the class run.json lists for it, QP i
having item i % 2 (a collective's QP k: QP k % qps of its connection). No time is asserted.

Usage: python3 tclass_cli_test.py PATH/TO/rocehil   (as root)
"""
import json
import os
import shutil
import subprocess
import sys
import unittest

from testbed_fixture import SuiteRun, module_testbed_down, module_testbed_up

ROCEHIL = None
TB = {}
CLASSES = [106, 98]
SUITE = """schema_version: 1
name: tclass
capture:
  filter: roce
  keep: always
tests:
  - name: spread
    workload: bw
    hosts: h1,h3
    qps: 4
    size: 64K
    duration_s: 1
    traffic_class: {per_qp: [106, 98]}
    captures: [s1-mirror, s2-mirror]
    thresholds:
      - busbw_gbps > 0
      - mirror_packets[dscp=26] > 0
      - mirror_packets[dscp=24] > 0
      - mirror_packets[dscp=46] == 0
      - mirror_cnps == mirror_cnps[dscp=48]
      - mirror_acks == mirror_acks[dscp=26] + mirror_acks[dscp=24]
      - pfc_frames[prio=3] <= 0.1 * mirror_packets
  - name: ring
    workload: allreduce
    hosts: h1,h3
    qps: 2
    size: 64K
    iterations: 5
    warmup: 1
    traffic_class: {per_qp: [106, 98]}
    captures: [s1-mirror, s2-mirror]
    thresholds:
      - busbw_gbps > 0
"""


def setUpModule():
    module_testbed_up(ROCEHIL, "rhtclass", TB)


def tearDownModule():
    module_testbed_down(ROCEHIL, TB)


def frames_by_flow(pcapng, src):
    """(UDP source port, BTH dest QP, DSCP) -> RoCE frames from `src` that are not CNPs, by
    tshark."""
    out = subprocess.run(
        ["tshark", "-r", pcapng, "-Y",
         f"ip.src=={src} && udp.dstport==4791 && infiniband.bth.opcode != 129",
         "-T", "fields", "-e", "udp.srcport", "-e", "infiniband.bth.destqp", "-e",
         "ip.dsfield.dscp"],
        capture_output=True, text=True, check=True).stdout
    counts = {}
    for line in out.splitlines():
        sport, destqp, dscp = line.split()
        key = (int(sport), int(destqp, 0), int(dscp))
        counts[key] = counts.get(key, 0) + 1
    return counts


def kept_frames(run_dir, attempt, src):
    """frames_by_flow summed over every file the attempt's captures kept."""
    totals = {}
    for k in attempt["captures_kept"]:
        for f in k["files"]:
            for key, n in frames_by_flow(os.path.join(run_dir, f), src).items():
                totals[key] = totals.get(key, 0) + n
    return totals


class TclassRun(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        run = SuiteRun(ROCEHIL, TB["inventory"], SUITE, "rhtclass-run")
        cls.tmp, cls.reports, cls.run_dir = run.tmp, run.reports, run.run_dir
        cls.code, cls.out, cls.err = run.code, run.out, run.err
        with open(os.path.join(cls.run_dir, "run.json")) as f:
            cls.record = json.load(f)
        cls.cases = {c["id"]: c for c in cls.record["cases"]}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_the_run_passes(self):
        self.assertEqual(self.code, 0, self.out + self.err)

    def test_each_qp_sends_with_the_class_run_json_lists_for_it(self):
        case = self.cases["spread/tclass=106,98"]
        self.assertEqual(case["parameters"]["traffic_class_per_qp"], CLASSES)
        self.assertEqual(case["parameters"]["traffic_class"], CLASSES[0])
        attempt = case["attempts"][-1]
        self.assertIsNone(attempt.get("error"), json.dumps(attempt.get("error")))
        traffic = attempt["raw"]["traffic"]
        client, server = traffic["client"], traffic["server"]
        client_qps = client["results"]["per_qp"]
        server_qps = server["results"]["per_qp"]
        self.assertEqual(len(client_qps), 4)
        self.assertEqual(len(server_qps), 4)
        # run.json: QP i of each side has item i % 2.
        for i, (c, s) in enumerate(zip(client_qps, server_qps)):
            self.assertEqual(c["traffic_class"], CLASSES[i % 2], c)
            self.assertEqual(s["traffic_class"], CLASSES[i % 2], s)

        # The wire: every frame of client QP i (its source port, to server QP i) has the DSCP
        # of QP i's class, and both DSCPs are there.
        kept = attempt["captures_kept"]
        self.assertEqual({k["point"] for k in kept}, {"s1-mirror", "s2-mirror"})
        totals = {}
        for k in kept:
            for f in k["files"]:
                for key, n in frames_by_flow(os.path.join(self.run_dir, f),
                                             client["address"]).items():
                    totals[key] = totals.get(key, 0) + n
        self.assertTrue(totals, "no RoCE frames from the client in the kept captures")
        flows = {(c["udp_sport"], s["qpn"]): CLASSES[i % 2] >> 2
                 for i, (c, s) in enumerate(zip(client_qps, server_qps))}
        seen = {}
        for (sport, destqp, dscp), n in totals.items():
            self.assertIn((sport, destqp), flows, (totals, flows))
            self.assertEqual(dscp, flows[(sport, destqp)], (sport, destqp, totals))
            seen[dscp] = seen.get(dscp, 0) + n
        self.assertEqual(set(seen), {26, 24}, totals)
        # Every QP carried frames.
        self.assertEqual({(sport, destqp) for (sport, destqp, _) in totals}, set(flows), totals)

    def test_the_counts_by_dscp_are_tsharks_over_the_kept_files(self):
        """mirror_packets[dscp=d] and mirror_acks[dscp=d] in run.json equal tshark's count of
        the same definitions, by the DSCP it decodes, over every file the captures kept; the
        thresholds on them were graded, not skipped."""
        attempt = self.cases["spread/tclass=106,98"]["attempts"][-1]
        packets, acks = {}, {}
        for k in attempt["captures_kept"]:
            for f in k["files"]:
                out = subprocess.run(
                    ["tshark", "-r", os.path.join(self.run_dir, f), "-Y",
                     "udp.dstport==4791 && infiniband.bth.psn", "-T", "fields", "-e",
                     "ip.dsfield.dscp", "-e", "infiniband.bth.opcode", "-e",
                     "infiniband.aeth.syndrome"],
                    capture_output=True, text=True, check=True).stdout
                for line in out.splitlines():
                    fields = line.split("\t")
                    dscp = int(fields[0])
                    packets[dscp] = packets.get(dscp, 0) + 1
                    if int(fields[1], 0) == 0x11 and int(fields[2], 0) < 0x20:
                        acks[dscp] = acks.get(dscp, 0) + 1
        metrics = attempt["metrics"]
        ours = {int(k.split("=")[1][:-1]): v for k, v in metrics.items()
                if k.startswith("mirror_packets[dscp=")}
        self.assertEqual(ours, packets)
        # The data's two classes, and CNPs (where the testbed marked) on the soft NIC's cnp_dscp.
        self.assertLessEqual({24, 26}, set(packets), packets)
        self.assertLessEqual(set(packets), {24, 26, 48}, packets)
        self.assertEqual(packets.get(48, 0), metrics["mirror_cnps"])
        self.assertEqual({int(k.split("=")[1][:-1]): v for k, v in metrics.items()
                          if k.startswith("mirror_acks[dscp=")}, acks)
        self.assertEqual(metrics["mirror_packets"], sum(packets.values()))
        graded = {t["threshold"]: t["verdict"] for t in attempt["grade"]["thresholds"]}
        self.assertEqual(graded["mirror_packets[dscp=46] == 0"], "pass", graded)
        self.assertEqual(graded["pfc_frames[prio=3] <= 0.1 * mirror_packets"], "pass", graded)
        self.assertEqual(set(graded.values()), {"pass"}, graded)

    def test_fairness_over_the_qps_is_what_the_mirrors_saw_each_qp_carry(self):
        """fairness_jain and rate_deviation of the spread case (its sender's 4 QPs) against the
        same formulas over the bytes each QP carried across the spines by tshark (one duration
        for all, so bytes stand for rates): within 5%."""
        attempt = self.cases["spread/tclass=106,98"]["attempts"][-1]
        client = attempt["raw"]["traffic"]["client"]
        carried = {}
        for k in attempt["captures_kept"]:
            for f in k["files"]:
                out = subprocess.run(
                    ["tshark", "-r", os.path.join(self.run_dir, f), "-Y",
                     f"ip.src=={client['address']} && udp.dstport==4791 && "
                     "infiniband.bth.opcode != 129", "-T", "fields", "-e", "udp.srcport",
                     "-e", "frame.len"], capture_output=True, text=True, check=True).stdout
                for line in out.splitlines():
                    sport, length = line.split()
                    carried[int(sport)] = carried.get(int(sport), 0) + int(length)
        self.assertEqual(len(carried), 4, carried)
        x = list(carried.values())
        jain = sum(x) ** 2 / (len(x) * sum(v * v for v in x))
        mean = sum(x) / len(x)
        deviation = max(abs(v - mean) for v in x) / mean
        metrics = attempt["metrics"]
        print(f"\nfairness over 4 QPs: rocehil jain {metrics['fairness_jain']:.4f} deviation "
              f"{metrics['rate_deviation']:.4f}; mirrors jain {jain:.4f} deviation "
              f"{deviation:.4f}", flush=True)
        self.assertAlmostEqual(metrics["fairness_jain"], jain, delta=0.05 * jain)
        self.assertAlmostEqual(metrics["rate_deviation"], deviation, delta=0.05)

    def test_a_collectives_qps_each_send_with_the_class_run_json_lists_for_it(self):
        case = self.cases["ring/tclass=106,98"]
        self.assertEqual(case["parameters"]["traffic_class_per_qp"], CLASSES)
        attempt = case["attempts"][-1]
        self.assertIsNone(attempt.get("error"), json.dumps(attempt.get("error")))
        report = attempt["raw"]["traffic"]
        per_rank = report["cases"][0]["per_rank"]
        self.assertEqual(len(per_rank), 2)
        seen = {}
        for rank in per_rank:
            address = report["ranks"][rank["rank"]]["address"]
            # QP k of a rank is QP k % qps of its connection (peer by peer): class k % 2.
            expected = {}
            for k, qp in enumerate(rank["per_qp"]):
                self.assertEqual(qp["traffic_class"], CLASSES[k % 2], qp)
                expected[qp["udp_sport"]] = CLASSES[k % 2] >> 2
            totals = kept_frames(self.run_dir, attempt, address)
            self.assertTrue(totals, f"no RoCE frames from {address} in the kept captures")
            for (sport, _, dscp), n in totals.items():
                self.assertIn(sport, expected, (address, totals, expected))
                self.assertEqual(dscp, expected[sport], (address, sport, totals))
                seen[dscp] = seen.get(dscp, 0) + n
        self.assertEqual(set(seen), {26, 24}, seen)


if __name__ == "__main__":
    ROCEHIL = sys.argv.pop(1)
    unittest.main()
