"""System test of a test with parts on a real testbed (6 hosts, 2 racks): an incast (2:1) on one
traffic class, a pair on another and iperf3 UDP background traffic on a third run in one case, at
one agreed time, the pair half a second later as asked. Their windows overlap in run.json, each part's metrics are its own (the pair's
bytes against its receiver's kernel interface counters, a host no other part sends to), and a
threshold on one part grades by that part's number.

Usage: python3 parts_cli_test.py PATH/TO/rocehil   (as root)
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from testbed_fixture import module_testbed_down, module_testbed_up

ROCEHIL = None
TB = {}
SUITE = """schema_version: 1
name: parts
defaults: {provider: soft}
tests:
  - name: mix
    duration_s: 3
    captures: [s1-mirror, s2-mirror]
    parts:
      - {name: roce, workload: incast, hosts: 'h1,h2,h4', traffic_class: 106, size: 256K}
      - {name: pair, workload: bw, hosts: 'h5,h3', traffic_class: 98, size: 64K,
         start_after_s: 0.5}
      - {name: bg, workload: iperf3, hosts: 'h6,h2', protocol: udp, rate: 50Mbit/s,
         traffic_class: 40}
    thresholds:
      - roce.busbw_gbps > 0
      - pair.errors == 0
      - bg.iperf_loss_ratio < 0.5
      - {check: pair.busbw_gbps > 100, level: warn}
"""
# Two bw parts into one host on two lossless classes, as the RoCEv2 test plan's 2:1 incast with
# two classes has them: two agent sessions on h4, whose soft providers share its RoCEv2 port as
# two processes share a NIC.
SHARED = """schema_version: 1
name: shared
defaults: {provider: soft}
tests:
  - name: two-into-one
    duration_s: 2
    captures: [s1-mirror, s2-mirror]
    parts:
      - {name: rank0, workload: bw, hosts: 'h1,h4', traffic_class: 104, size: 128K, qps: 2}
      - {name: rank1, workload: bw, hosts: 'h2,h4', traffic_class: 136, size: 128K, qps: 2}
    thresholds:
      - rank0.errors == 0
      - rank1.errors == 0
      - mirror_packets[dscp=26] > 0
      - mirror_packets[dscp=34] > 0
  # The plan's case 11: an incast and a broadcast among the same hosts, their QPs' source ports
  # chosen alike; the incast ends first, and its providers, idle, hold back none of the
  # broadcast's packets.
  - name: two-collectives-on-one-host-set
    duration_s: 2
    parts:
      - {name: incast, workload: incast, hosts: 'h2,h1', size: 128K, traffic_class: 106}
      - {name: bcast, workload: broadcast, hosts: 'h2,h1', size: 128K, traffic_class: 138}
    thresholds:
      - incast.errors == 0
      - bcast.errors == 0
"""

# The plan's fairness between ranks, each rank a part, against planted truth: two senders paced
# at 25 and 75 Mbit/s (Jain's index 0.8, the largest deviation 0.5), read by the switches' ports
# toward their receivers as well as by the agents.
PACED = """schema_version: 1
name: paced
defaults: {provider: soft}
tests:
  - name: paced-ranks
    duration_s: 2
    parts:
      - {name: rank0, workload: bw, hosts: 'h1,h4', size: 64K, rate: 25Mbit/s}
      - {name: rank1, workload: bw, hosts: 'h2,h5', size: 64K, rate: 75Mbit/s}
    thresholds:
      - rate_deviation > 0.25
      - fairness_jain < 0.95
"""


def jain(rates):
    return sum(rates) ** 2 / (len(rates) * sum(r * r for r in rates))


def deviation(rates):
    mean = sum(rates) / len(rates)
    return max(abs(r - mean) for r in rates) / mean


def setUpModule():
    module_testbed_up(ROCEHIL, "rhparts", TB, "--hosts", "6")


def tearDownModule():
    module_testbed_down(ROCEHIL, TB)


def rocehil(*args, timeout=300):
    r = subprocess.run([ROCEHIL, *args], capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def rx_bytes(host):
    """What the host's fabric NIC received, by the kernel's counter in its namespace."""
    r = subprocess.run(["ip", "netns", "exec", f"rocehil-{TB['id']}-{host}", "cat",
                        f"/sys/class/net/{TB['id']}-nic0/statistics/rx_bytes"],
                       capture_output=True, text=True, check=True)
    return int(r.stdout)


class PartsTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="rocehil-parts-")
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_two_parts_run_at_once_and_each_measures_its_own(self):
        suite = self.write("parts.yaml", SUITE)
        before = {h: rx_bytes(h) for h in ("h3", "h5")}
        code, out, err = rocehil("run", suite, "-i", TB["inventory"], "--reports",
                                 os.path.join(self.dir, "reports"), "--json")
        after = {h: rx_bytes(h) for h in ("h3", "h5")}
        self.assertEqual(code, 0, out + err)
        (case,) = json.loads(out)["cases"]
        self.assertEqual(case["workload"], "parts")
        self.assertEqual(case["outcome"], "warn", case["summary"])
        (attempt,) = case["attempts"]
        parts = {p["name"]: p for p in attempt["raw"]["traffic"]["parts"]}
        self.assertEqual(set(parts), {"roce", "pair", "bg"})
        roce, pair, bg = parts["roce"], parts["pair"], parts["bg"]
        self.assertEqual((roce["workload"], pair["workload"], bg["workload"]),
                         ("incast", "bw", "iperf3"))
        for p in parts.values():
            self.assertIsNone(p["error"], p["name"])
        # One agreed start, the pair's half a second after it; the windows overlap.
        self.assertEqual(pair["start_ns"] - roce["start_ns"], 500_000_000)
        self.assertEqual(bg["start_ns"], roce["start_ns"])
        self.assertLess(max(p["start_ns"] for p in parts.values()),
                        min(p["end_ns"] for p in parts.values()))
        print(f"\n  roce {roce['start_ns']}..{roce['end_ns']}, "
              f"pair {pair['start_ns']}..{pair['end_ns']}", file=sys.stderr)

        # The incast ran by the test's duration_s: as many iterations as fit in 3 s at the time
        # its verified iteration took (whole, at least one, at most 40000).
        incast = roce["traffic"]
        self.assertEqual(incast["duration_s"], 3)
        self.assertEqual(incast["iterations"],
                         max(1, min(40000, math.floor(3 / incast["timed_iteration_s"]))))
        print(f"  roce: {incast['iterations']} iterations of {incast['timed_iteration_s']:.4f} s",
              file=sys.stderr)
        metrics = attempt["metrics"]
        for key in ("roce.busbw_gbps", "roce.time_us", "pair.busbw_gbps", "pair.errors",
                    "roce.cnp_per_s", "nic_rx_bytes", "bg.iperf_gbps", "bg.iperf_loss_ratio"):
            self.assertIn(key, metrics)
        self.assertNotIn("busbw_gbps", metrics)  # each part's, never the case's
        # iperf3's own receiver said what arrived: about the asked 50 Mbit/s.
        self.assertAlmostEqual(metrics["bg.iperf_gbps"], 0.05, delta=0.01)
        # The pair's number is its own bytes over its own interval: what left its client, and
        # about what its server's NIC took in (no other part sends to h3 or h5; RoCE's headers
        # and the rest of the wire add a few percent).
        sent = pair["traffic"]["client"]["results"]["bytes"]
        server = pair["traffic"]["server"]["name"]
        self.assertIn(server, ("h3", "h5"))
        received = after[server] - before[server]
        self.assertAlmostEqual(metrics["pair.busbw_gbps"] * 1e9 / 8 * pair["seconds"], sent,
                               delta=sent * 0.02)
        print(f"  pair payload {sent} B, its server {server} received {received} B",
              file=sys.stderr)
        self.assertGreaterEqual(received, sent)
        self.assertLess(received, sent * 1.3)  # go-back-N resends under load add some
        # The warn threshold names the part's number; the others passed.
        verdicts = {t["threshold"]: (t["verdict"], t["text"])
                    for t in case["summary"]["thresholds"]}
        self.assertEqual(verdicts["roce.busbw_gbps > 0"][0], "pass")
        self.assertEqual(verdicts["pair.errors == 0"][0], "pass")
        self.assertEqual(verdicts["pair.busbw_gbps > 100"][0], "warn")
        self.assertIn("pair.busbw_gbps = ", verdicts["pair.busbw_gbps > 100"][1])
        self.assertEqual(case["summary"]["headline"]["metric"], "pair.busbw_gbps")

    def test_two_parts_into_one_host_share_its_roce_port(self):
        suite = self.write("shared.yaml", SHARED)
        before = rx_bytes("h4")
        code, out, err = rocehil("run", suite, "-i", TB["inventory"], "--reports",
                                 os.path.join(self.dir, "reports"), "--json")
        received = rx_bytes("h4") - before
        self.assertEqual(code, 0, out + err)
        case, collectives = json.loads(out)["cases"]
        self.assertEqual(collectives["outcome"], "pass", collectives["summary"])
        self.assertEqual(case["outcome"], "pass", case["summary"])
        (attempt,) = case["attempts"]
        parts = {p["name"]: p for p in attempt["raw"]["traffic"]["parts"]}
        sent = 0
        for name in ("rank0", "rank1"):
            p = parts[name]
            self.assertIsNone(p["error"], name)
            ends = {p["traffic"]["client"]["name"], p["traffic"]["server"]["name"]}
            self.assertIn("h4", ends, name)
            if p["traffic"]["server"]["name"] == "h4":
                sent += p["traffic"]["client"]["results"]["bytes"]
            self.assertGreater(p["traffic"]["client"]["results"]["bytes"], 0, name)
        # What h4's kernel counted coming in holds what both parts' clients sent it (the
        # collectives ran after the bw parts: the count is taken over both cases).
        self.assertGreaterEqual(received, sent)
        metrics = attempt["metrics"]
        print(f"\n  into h4: {sent} B sent by the parts, {received} B received by its NIC; "
              f"mirrors: DSCP 26 {metrics['mirror_packets[dscp=26]']:.0f}, "
              f"DSCP 34 {metrics['mirror_packets[dscp=34]']:.0f} packets", file=sys.stderr)

    def test_fairness_between_paced_parts_is_what_the_switch_ports_saw(self):
        suite = self.write("paced.yaml", PACED)
        code, out, err = rocehil("run", suite, "-i", TB["inventory"], "--reports",
                                 os.path.join(self.dir, "reports"), "--json")
        self.assertEqual(code, 0, out + err)
        (case,) = json.loads(out)["cases"]
        (attempt,) = case["attempts"]
        metrics = attempt["metrics"]
        # The rate each receiver's leaf port sent it at (SNMP, polled every 100 ms through the
        # case) over its sender's measured interval (the agent's timeline: past the warm-up,
        # whose 100 messages each sender sends at its pace), the bytes taken between polls
        # linearly.
        timeline = attempt["raw"]["switch_timeline"]
        parts = {p["name"]: p for p in attempt["raw"]["traffic"]["parts"]}
        seen = []
        for part, host in (("rank0", "h4"), ("rank1", "h5")):
            sender = parts[part]["traffic"]["client"]["results"]["timeline"]
            begin = sender["start_ns"] + sender["t_us"][0] * 1000
            end = sender["start_ns"] + sender["t_us"][-1] * 1000
            (port,) = [p for p in timeline["ports"] if (p["switch"], p["to"]) == ("l2", host)]
            at = [timeline["start_ns"] + t * 1e6 for t in port["t_ms"]]
            sent = port["sent_bytes"]
            self.assertTrue(at[0] < begin and end < at[-1], (at[0], begin, end, at[-1]))

            def bytes_at(t):
                i = next(i for i in range(1, len(at)) if at[i] >= t)
                return sent[i - 1] + (sent[i] - sent[i - 1]) * (t - at[i - 1]) / (at[i] - at[i - 1])
            seen.append((bytes_at(end) - bytes_at(begin)) * 8 / (end - begin))
        print(f"\n  retransmits: {metrics.get('rank0.retransmits')}, {metrics.get('rank1.retransmits')} (switch drops {metrics.get('switch_drops')}); "
              f"switch ports: {[round(r, 4) for r in seen]} Gbit/s; agents: "
              f"{attempt['where'].get('rate_deviation')}; jain {metrics['fairness_jain']:.3f} vs "
              f"{jain(seen):.3f}, deviation {metrics['rate_deviation']:.3f} vs "
              f"{deviation(seen):.3f}", file=sys.stderr)
        # Within 5%. The ports count the headers (alike for both) and resent packets (the soft
        # receivers on two shared cores drop a few hundred at times: up to 2% of the bytes).
        self.assertLess(abs(metrics["fairness_jain"] - jain(seen)), 0.05 * jain(seen))
        self.assertLess(abs(metrics["rate_deviation"] - deviation(seen)), 0.05 * deviation(seen))
        # And the paces show: 1:3 is Jain 0.8 and a deviation of 0.5; soft pacers on two shared
        # cores slip (a sender behind its pace catches up 2 ms at most): 0.44 to 0.56 seen.
        self.assertGreater(deviation(seen), 0.25)
        self.assertLess(jain(seen), 0.95)

    def test_a_parts_hosts_are_checked_against_the_inventory_at_its_line(self):
        suite = self.write("bad.yaml", SUITE.replace("hosts: 'h5,h3'", "hosts: 'h5,h9'"))
        code, out, err = rocehil("suite", "validate", suite, "-i", TB["inventory"])
        self.assertEqual(code, 2, out + err)
        self.assertRegex(err, rf"{suite}:10:\d+: test 'mix/pair': .*h9")


if __name__ == "__main__":
    ROCEHIL = sys.argv.pop(1)
    unittest.main(verbosity=2)
