"""System tests of `rocehil run` on a real testbed: the smoke suite end to end, and the faults a
run must survive (an agent killed, a link down, a host unreachable, Ctrl-C).

What the run reports is held against independent sources: CNPs the QPs handled against CNPs
the mirror ports saw; ECMP imbalance against the spines' own interface counters; bus bandwidth
against nccl-tests' formula; junit.xml read back with Python's XML parser and with junitparser;
the OpenMetrics export parsed by the Prometheus client; report.html rendered by headless
Chromium; `rocehil compare` of runs with the testbed's bottleneck changed between them.

Usage: python3 run_cli_test.py PATH/TO/rocehil   (as root)
"""
import glob
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

from junitparser import Error as JUnitError, Failure as JUnitFailure, JUnitXml
from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics
from prometheus_client.parser import text_string_to_metric_families as prometheus_text

from report_render import render_report
from testbed_fixture import spine_tx_bytes, testbed_down, testbed_up, wait_for

ROCEHIL = None
# The queue behind h1's NIC when a test shapes it: 200 ms at the shaped rate, deeper than the soft
# provider's window (2 QPs x 64 WRs x 64 KiB), so the rate is the shaped rate with no drop. With
# the testbed's 5 ms, every burst overflows the tbf and go-back-N retransmits the sender into a
# collapse whose depth varies with the machine (0.02 to 0.29 Gbit/s at 300 Mbit/s, measured on
# this machine kind with this rocehil and the one before it, alike); at 200 ms: 0.284 Gbit/s at
# 300 Mbit/s, 0.227 at 240, no retransmission.
SHAPED_QUEUE = "200ms"
SUITES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "suites")
SMOKE = os.path.join(SUITES, "smoke.yaml")
TB = {}


def run(*args, reports, timeout=300):
    r = subprocess.run([ROCEHIL, "run", *args, "--reports", reports], capture_output=True,
                       text=True, timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def calibrate(*args, env=None, timeout=300):
    r = subprocess.run([ROCEHIL, "calibrate", "--json", *args], capture_output=True, text=True,
                       timeout=timeout, env=env)
    return r.returncode, r.stdout, r.stderr


def run_record(reports):
    """The newest run directory's run.json and junit.xml."""
    newest = sorted(d for d in glob.glob(os.path.join(reports, "*")) if os.path.isdir(d))[-1]
    with open(os.path.join(newest, "run.json")) as f:
        record = json.load(f)
    junit = ET.parse(os.path.join(newest, "junit.xml")) \
        if os.path.exists(os.path.join(newest, "junit.xml")) else None
    return record, junit


def cases(record):
    return {c["id"]: c for c in record["cases"]}


def host_pids(testbed_id, match):
    """Processes in the testbed's namespaces whose command line contains `match`, but the
    testbed's own (`rocehil testbed snmp-counters`, the switches' counter handlers under snmpd)."""
    found = []
    for ns in subprocess.run(["ip", "netns", "list"], capture_output=True,
                             text=True).stdout.split("\n"):
        name = ns.split(" ")[0]
        if not name.startswith(f"rocehil-{testbed_id}-"):
            continue
        pids = subprocess.run(["ip", "netns", "pids", name], capture_output=True,
                              text=True).stdout.split()
        for pid in pids:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if match in cmd and " testbed snmp-counters " not in cmd:
                found.append((name, pid, cmd))
    return found


def session_leader(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[3] == str(pid)
    except OSError:
        return False


class shaped_nic:
    """A host's NIC shaped to `mbps` (its tbf's rate) while the block runs, then as it was."""

    def __init__(self, testbed_id, host, mbps):
        self.ns, self.dev = f"rocehil-{testbed_id}-{host}", f"{testbed_id}-nic0"
        self.mbps = mbps

    def tbf(self, rate, burst, latency):
        subprocess.run(["ip", "netns", "exec", self.ns, "tc", "qdisc", "change", "dev", self.dev,
                        "root", "tbf", "rate", rate, "burst", str(burst), "latency", latency],
                       check=True)

    def __enter__(self):
        shown = subprocess.run(["ip", "netns", "exec", self.ns, "tc", "-j", "qdisc", "show",
                                "dev", self.dev], capture_output=True, text=True, check=True)
        tbf = next(q for q in json.loads(shown.stdout) if q["kind"] == "tbf")["options"]
        self.was = (f"{tbf['rate'] * 8}bit", tbf["burst"])  # tc -j: bytes per second, bytes
        # The uplinks' 50 KB bucket, and a queue the window fits in (SHAPED_QUEUE).
        self.tbf(f"{self.mbps}mbit", 50000, SHAPED_QUEUE)
        return self

    def __exit__(self, *_):
        self.tbf(*self.was, "5ms")


def setUpModule():
    directory, testbed_id, _ = testbed_up(ROCEHIL, "rhrun")
    TB.update(dir=directory, id=testbed_id, inventory=os.path.join(directory, "inventory.yaml"))


def tearDownModule():
    if TB:
        testbed_down(ROCEHIL, TB["dir"])


class RunTest(unittest.TestCase):
    def setUp(self):
        self.reports = tempfile.mkdtemp(prefix="rhreports")

    def tearDown(self):
        shutil.rmtree(self.reports, ignore_errors=True)

    def write_file(self, name, text):
        path = os.path.join(self.reports, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_the_smoke_suite_qualifies_and_catches_the_pfc_storm(self):
        code, out, err = run(SMOKE, "--inventory", TB["inventory"], reports=self.reports)
        self.assertEqual(code, 0, out + err)
        record, junit = run_record(self.reports)
        self.assertEqual(record["schema_version"], 1)
        self.assertEqual(record["exit_code"], 0)
        self.assertFalse(record["interrupted"])
        self.assertIsNotNone(record["finished_at"])
        self.assertIn("smoke", record["suite"]["text"])
        self.assertEqual(len(record["inventory"]["preflight"]["hosts"]), 5)
        by_id = cases(record)
        self.assertEqual(list(by_id), ["p2p_bw", "p2p_lat", "allreduce/qps=1", "allreduce/qps=4",
                                       "allreduce/qps=8", "alltoall", "incast", "pfc_storm"])
        for case_id, c in by_id.items():
            self.assertIn(c["outcome"], ("pass", "warn", "expected_fail"), (case_id, c))
            last = c["attempts"][-1]
            self.assertIsNone(last["error"], case_id)
            # Every threshold's verdict carries the measured value and the limit it met.
            for t in last["grade"]["thresholds"]:
                self.assertIsNotNone(t["measured"], (case_id, t))
        storm = by_id["pfc_storm"]
        self.assertEqual(storm["outcome"], "expected_fail")
        self.assertGreaterEqual(storm["attempts"][-1]["metrics"]["pfc_storms"], 1)
        inject = storm["attempts"][-1]["raw"]["inject"]
        self.assertEqual(inject["exit_code"], 0)
        # after_s (0.5) counts from the traffic's agreed start: the storm the mirror port saw
        # (its own capture timestamps) begins no earlier, never before the traffic does.
        self.assertGreaterEqual(inject["started_ns"] - inject["traffic_start_ns"], 0.5e9)
        storms = [s for c in storm["attempts"][-1]["raw"]["captures"]
                  for s in c["analysis"]["pfc"]["storms"]]
        self.assertTrue(storms, storm["attempts"][-1]["raw"]["captures"])
        self.assertGreaterEqual(min(s["start_ns"] for s in storms),
                                inject["traffic_start_ns"] + 0.5e9 - 5e6, storms)
        for case_id in ("allreduce/qps=1", "allreduce/qps=4", "allreduce/qps=8"):
            m = by_id[case_id]["attempts"][-1]["metrics"]
            traffic = by_id[case_id]["attempts"][-1]["raw"]["traffic"]["cases"][0]
            n = by_id[case_id]["names"]["n"]
            # nccl-tests' formula from the reported time.
            busbw = traffic["bytes"] / (traffic["time_us"] / 1e6) * 2 * (n - 1) / n * 8 / 1e9
            self.assertAlmostEqual(m["busbw_gbps"], busbw, places=9)
            # The fragmented ring crosses the spines on every hop: the CNPs the senders' QPs
            # handled are the CNPs the spines' mirror ports saw.
            self.assertLessEqual(abs(m["cnps"] - m["mirror_cnps"]), 0.01 * m["cnps"] + 5,
                                 (case_id, m))
            # Capture = counters: the CNPs the notification points sent across racks (every
            # spine link is mirrored spine-to-leaf, so each is seen once) against the mirrors.
            sides = by_id[case_id]["attempts"][-1]["raw"]["reconciliation"]["cnp"]
            self.assertEqual(sides["mirror"], m["mirror_cnps"])
            self.assertLessEqual(abs(sides["mirror"] - sides["nics"]), 0.01 * sides["nics"] + 5,
                                 (case_id, sides))
            self.assertAlmostEqual(m["cnp_reconciliation"], sides["mirror"] / sides["nics"])
            self.assertEqual(m["pfc_storms"], 0)
            # Each rank's agent sampled the bytes it received, share by share: the timeline
            # ends at its warm-up and measured iterations' bytes (the measured ones as the rank
            # reported them), and the longest stall is read from it.
            raw = by_id[case_id]["attempts"][-1]["raw"]
            senders = raw["timeline"]["senders"]
            self.assertEqual([s["sender"] for s in senders],
                             [f"rank {r['rank']} ({r['host']})" for r in raw["traffic"]["ranks"]])
            runs = raw["traffic"]["warmup_iterations"] + raw["traffic"]["iterations"]
            for sender, rank in zip(senders, traffic["per_rank"]):
                self.assertEqual(sender["bytes"], sorted(sender["bytes"]), sender["sender"])
                self.assertEqual(sender["bytes"][-1] * traffic["iterations"],
                                 rank["bytes_received"] * runs, sender["sender"])
            self.assertGreaterEqual(m["max_stall_ms"], 0)
            self.assertGreaterEqual(m["ecmp_imbalance"], 1.0)
            self.assertLessEqual(m["ecmp_imbalance"], 2.0)
        self.assertGreater(by_id["incast"]["attempts"][-1]["metrics"]["cnps"], 0)
        # junit.xml as a JUnit reader sees it.
        suite = junit.getroot().find("testsuite")
        testcases = suite.findall("testcase")
        self.assertEqual(len(testcases), 8)
        self.assertEqual(suite.get("failures"), "0")
        self.assertEqual(suite.get("errors"), "0")
        self.assertEqual([t.get("name") for t in testcases], list(by_id))
        self.assertIn("failed as expected", testcases[-1].find("system-out").text)
        self.assertIn("smoke: ", out)
        self.assertIn("failed as expected", out)
        # The run history, read with Python's own sqlite3.
        db = sqlite3.connect(os.path.join(self.reports, "history.db"))
        self.assertEqual(db.execute("SELECT run_id, exit_code FROM runs").fetchall(),
                         [(record["run_id"], 0)])
        self.assertEqual(dict(db.execute("SELECT case_id, outcome FROM cases").fetchall()),
                         {k: c["outcome"] for k, c in by_id.items()})
        busbw = db.execute("SELECT value FROM samples WHERE case_id = 'allreduce/qps=8' "
                           "AND metric = 'busbw_gbps'").fetchall()
        self.assertEqual(busbw, [(by_id["allreduce/qps=8"]["attempts"][-1]["metrics"]
                                  ["busbw_gbps"],)])
        db.close()
        listed = json.loads(subprocess.run(
            [ROCEHIL, "history", "--db", os.path.join(self.reports, "history.db"), "--json"],
            capture_output=True, text=True, check=True).stdout)
        self.assertEqual([(r["run_id"], r["cases"], r["passed"], r["failed"])
                          for r in listed["runs"]], [(record["run_id"], 8, 8, 0)])
        # Headlines: the lowest busbw of any case, the highest p99, the sum of CNPs.
        headline = listed["runs"][0]["headline"]
        measured = [c["attempts"][-1]["metrics"] for c in record["cases"]]
        self.assertAlmostEqual(headline["busbw_gbps_lowest"],
                               min(m["busbw_gbps"] for m in measured if "busbw_gbps" in m))
        self.assertAlmostEqual(headline["lat_p99_us_highest"],
                               max(m["lat_p99_us"] for m in measured if "lat_p99_us" in m))
        self.assertAlmostEqual(headline["cnps"], sum(m.get("cnps", 0) for m in measured))
        self.check_junit_with_junitparser(record)
        self.check_openmetrics_export(record)
        self.check_report_renders(record)

    def newest_run_dir(self):
        return sorted(d for d in glob.glob(os.path.join(self.reports, "*")) if os.path.isdir(d))[-1]

    def check_junit_with_junitparser(self, record):
        xml = JUnitXml.fromfile(os.path.join(self.newest_run_dir(), "junit.xml"))
        suites = list(xml)
        self.assertEqual(len(suites), 1)
        seen = {case.name: case for case in suites[0]}
        self.assertEqual(list(seen), [c["id"] for c in record["cases"]])
        for c in record["cases"]:
            results = seen[c["id"]].result
            bad = [r for r in results if isinstance(r, (JUnitFailure, JUnitError))]
            self.assertEqual(bad, [], c["id"])  # pass, warn and expected_fail are successes
            self.assertEqual(seen[c["id"]].classname, f"smoke.{c['test']}")
        self.assertEqual((suites[0].tests, suites[0].failures, suites[0].errors), (8, 0, 0))

    def check_openmetrics_export(self, record):
        db = os.path.join(self.reports, "history.db")
        text = subprocess.run([ROCEHIL, "export", "openmetrics", record["run_id"][:16], "--db",
                               db], capture_output=True, text=True, check=True).stdout
        # Both of the Prometheus client's parsers: strict OpenMetrics and the text format
        # node_exporter's textfile collector reads.
        families = {f.name: f for f in openmetrics(text)}
        self.assertEqual({f.name for f in prometheus_text(text)}, set(families))
        busbw = {s.labels["case"]: s.value for s in families["rocehil_busbw_gbps"].samples}
        for c in record["cases"]:
            m = c["attempts"][-1]["metrics"]
            if "busbw_gbps" in m:  # one repeat: the median is the value
                self.assertAlmostEqual(busbw[c["id"]], m["busbw_gbps"], places=9)
        outcomes = {s.labels["case"]: s.labels["outcome"]
                    for s in families["rocehil_case_outcome"].samples}
        self.assertEqual(outcomes, {c["id"]: c["outcome"] for c in record["cases"]})
        exit_code = families["rocehil_run_exit_code"].samples[0]
        self.assertEqual((exit_code.value, exit_code.labels), (0, {"suite": "smoke"}))
        pause = [s for s in families["rocehil_pfc_pause_fraction"].samples
                 if s.labels["case"] == "pfc_storm" and s.labels["priority"] == "3"]
        self.assertEqual(len(pause), 1)

    def check_report_renders(self, record):
        path = os.path.join(self.newest_run_dir(), "report.html")
        with open(path) as f:
            html = f.read()
        for c in record["cases"]:
            self.assertIn(f">{c['id']}<", html)
        # One chart at least per kind the smoke suite has data for (the pairwise heatmap needs
        # the pairwise pattern; the unit tests draw it).
        for title in ("busbw by case", "iteration time", "RoCE bytes per capture point",
                      "CNP and PFC over time", "per-QP rate"):
            self.assertTrue(title in html, title)
        # Self-contained: no link, image or script leaves the file (anchors within it only).
        self.assertEqual(re.findall(r'(?:src|href)="(?!#)[^"]*"', html), [])
        self.assertNotIn("<script", html)
        rendered = render_report(path, os.path.join(self.reports, "report.png"))
        self.assertEqual(rendered.console, [], "Chromium's console")
        self.assertEqual(rendered.svg_count, html.count("<svg "))  # every chart parsed as SVG
        self.assertGreater(rendered.svg_count, 10)
        self.assertGreater(rendered.colours, 8)  # charts and badges, not a blank page
        # The console check can fail: the page with a script error in it is caught.
        broken = os.path.join(self.reports, "broken.html")
        with open(broken, "w") as f:
            f.write(html.replace("</body>", "<script>undefined_call();</script></body>"))
        self.assertTrue(render_report(broken, os.path.join(self.reports, "b.png")).console)

    def test_compare_flags_a_changed_bottleneck_and_not_jitter(self):
        # Six repeats of 1 s of bw from h1 to h3 with h1's NIC the bottleneck (every QP crosses
        # it, whichever spine ECMP picks): runs A and B at 300 Mbit/s (jitter only), run C at
        # 240 Mbit/s, 20 % less.
        suite = self.write_file(
            "cmp.yaml",
            "schema_version: 1\nname: cmp\ndefaults: {provider: soft}\ntests:\n"
            "  - name: bw\n    workload: bw\n    hosts: h1,h3\n    size: 64K\n"
            "    qps: 2\n    duration_s: 1\n    repeats: 6\n"
            "    thresholds: [busbw_gbps > 0]\n")
        ids = []
        for mbps in (300, 300, 240):
            # The switches' counters play no part in this: not polling them takes two polls off
            # each of the 18 attempts.
            with shaped_nic(TB["id"], "h1", mbps):
                code, out, err = run(suite, "--inventory", TB["inventory"], "--no-switches",
                                     reports=self.reports)
            self.assertEqual(code, 0, out + err)
            with open(os.path.join(self.newest_run_dir(), "run.json")) as f:
                ids.append(json.load(f)["run_id"])
        db = os.path.join(self.reports, "history.db")

        # Two runs at the same rate differ here by up to 5 % (A->B -4.5 %, p=0.026, in one CI
        # run: soft RoCE on 2 shared cores), more than compare's 2 % default allows for a real
        # fabric; 10 % still calls the 20 % drop.
        def busbw_row(a, b):
            c = json.loads(subprocess.run([ROCEHIL, "compare", a, b, "--db", db, "--json",
                                           "--min-change", "10"],
                                          capture_output=True, text=True, check=True).stdout)
            return next(m for m in c["metrics"] if m["metric"] == "busbw_gbps")

        jitter, drop = busbw_row(ids[0], ids[1]), busbw_row(ids[0], ids[2])
        print(f"\n  busbw A {jitter['a']}\n  busbw B {jitter['b']}\n  busbw C {drop['b']}\n"
              f"  A->B {jitter['change_pct']:+.1f}% p={jitter['p_value']:.3g}; "
              f"A->C {drop['change_pct']:+.1f}% p={drop['p_value']:.3g}", file=sys.stderr)
        self.assertEqual(len(drop["a"]), 6)
        self.assertTrue(drop["significant"], drop)
        self.assertLess(drop["change_pct"], -15)
        self.assertFalse(jitter["significant"], jitter)
        text = subprocess.run([ROCEHIL, "compare", ids[0], ids[2], "--db", db,
                               "--min-change", "10"],
                              capture_output=True, text=True, check=True).stdout
        self.assertRegex(text, r"bw\s+busbw_gbps\s.*significant")

    def test_ecmp_imbalance_matches_the_spines_counters(self):
        before = {s: spine_tx_bytes(TB["id"], s) for s in ("s1", "s2")}
        code, out, err = run(SMOKE, "--inventory", TB["inventory"], "--only", "allreduce/qps=1",
                             reports=self.reports)
        after = {s: spine_tx_bytes(TB["id"], s) for s in ("s1", "s2")}
        self.assertIn(code, (0, 1), out + err)
        record, _ = run_record(self.reports)
        m = record["cases"][0]["attempts"][-1]["metrics"]
        sent = [after[s] - before[s] for s in ("s1", "s2")]
        kernel = max(sent) / (sum(sent) / 2)
        # The mirror ports copy what each spine sends to the leaves; the kernel counts the same
        # frames (and the odd ARP).
        self.assertAlmostEqual(m["ecmp_imbalance"], kernel, delta=0.05 * kernel, msg=(sent, m))

    def test_nic_counters_are_the_kernels_and_what_a_nic_lacks_grades_error(self):
        suite = self.write_file(
            "nic.yaml",
            "schema_version: 1\nname: nic\ntests:\n"
            "  - {name: bw, workload: bw, hosts: 'h1,h3', size: 64K, duration_s: 1,\n"
            "     thresholds: ['nic_tx_bytes > 0', 'nic_rx_bytes > 0',"
            " 'nic_rx_pause[3] == 0', 'nic_tx_pause[3] == 0', 'retransmits >= 0']}\n"
            "  - {name: verbs, workload: bw, hosts: 'h1,h3', provider: verbs,"
            " duration_s: 1, thresholds: ['nic_tx_bytes > 0']}\n")
        nic = f"{TB['id']}-nic0"

        def kernel(host):
            out = subprocess.run(["ip", "-n", f"rocehil-{TB['id']}-{host}", "-s", "-j", "link",
                                  "show", nic], capture_output=True, text=True, check=True).stdout
            s = json.loads(out)[0]["stats64"]
            return {"rx_bytes": s["rx"]["bytes"], "tx_bytes": s["tx"]["bytes"],
                    "rx_packets": s["rx"]["packets"], "tx_packets": s["tx"]["packets"]}

        before = {h: kernel(h) for h in ("h1", "h3")}
        code, out, err = run(suite, "--inventory", TB["inventory"], reports=self.reports)
        after = {h: kernel(h) for h in ("h1", "h3")}
        self.assertEqual(code, 3, out + err)  # both cases could not be graded, nothing failed
        record, _ = run_record(self.reports)
        by_id = cases(record)
        attempt = by_id["bw"]["attempts"][-1]
        self.assertIsNone(attempt["error"], attempt)
        nics = {n["host"]: n for n in attempt["raw"]["nics"]}
        self.assertEqual(set(nics), {"h1", "h3"})
        for host in ("h1", "h3"):
            n = nics[host]
            self.assertEqual(n["netdev"], nic)
            self.assertEqual(n["problems"], [])  # the ETHTOOL_GSTATS ioctl worked on the veth
            for key, value in after[host].items():
                # The kernel's own counters over the whole run: the case's traffic and, at most,
                # two frames outside its window: a neighbour probe (~90 bytes) or an LLDP frame
                # from the leaf's lldpd (one of 183 bytes was seen here).
                delta = value - before[host][key]
                ours = n["deltas"].get(f"statistics/{key}", 0)
                print(f"  {host} {key}: kernel {delta}, rocehil {ours}", file=sys.stderr)
                slack = 2 if key.endswith("packets") else 2 * 400
                self.assertLessEqual(abs(delta - ours), slack, (host, key, delta, ours))
                self.assertGreater(ours, 0, (host, key))
            self.assertEqual(n["metrics"]["nic_tx_bytes"], n["deltas"]["statistics/tx_bytes"])
        m = attempt["metrics"]
        self.assertEqual(m["nic_tx_bytes"], sum(nics[h]["metrics"]["nic_tx_bytes"] for h in nics))
        # soft counts per QP: measured, whatever it is (a loaded machine's shaped fabric drops a
        # few: 18 in one fresh-clone run, which once failed this case).
        self.assertGreaterEqual(m["retransmits"], 0)
        verdicts = {t["threshold"]: t for t in attempt["grade"]["thresholds"]}
        self.assertEqual(verdicts["retransmits >= 0"]["verdict"], "pass")
        self.assertEqual(verdicts["nic_tx_bytes > 0"]["verdict"], "pass")
        self.assertEqual(verdicts["nic_rx_bytes > 0"]["verdict"], "pass")
        # The soft NIC counts the pause frames it obeys (none came): measured, 0.
        t = verdicts["nic_rx_pause[3] == 0"]
        self.assertEqual(t["verdict"], "pass", t)
        self.assertEqual(t["measured"], 0)
        # A counter this NIC lacks (the soft NIC never sends PFC, a veth counts none) is absent,
        # and its threshold an error with the reason, never a 0.
        t = verdicts["nic_tx_pause[3] == 0"]
        self.assertEqual(t["verdict"], "error", t)
        self.assertIsNone(t["measured"])
        self.assertIn("has no counter ethtool/tx_prio3_pause", t["detail"])
        self.assertIn("nic_cnps_sent", attempt["unmeasured"])
        self.assertIn("its provider uses no RDMA device", attempt["unmeasured"]["nic_cnps_sent"])
        # A verbs host without an RNIC cannot measure a case: the case is an error.
        self.assertEqual(by_id["verbs"]["outcome"], "error")

    def test_a_threshold_the_provider_or_workload_never_measures_is_refused_before_running(self):
        # What a provider can never give is refused by run and by validate --inventory, at the
        # threshold's line and column; what the workload can never give by validate alone.
        suite = self.write_file(
            "never.yaml",
            "schema_version: 1\nname: never\ntests:\n"
            "  - name: soft_cnps\n    workload: bw\n    hosts: h1,h3\n"
            "    thresholds: ['nic_cnps_sent > 0']\n"
            "  - name: verbs_retx\n    workload: bw\n    hosts: h1,h3\n    provider: verbs\n"
            "    thresholds:\n      - retransmits == 0\n")
        code, out, err = run(suite, "--inventory", TB["inventory"], reports=self.reports)
        self.assertEqual(code, 2, out + err)
        lines = err.strip().splitlines()
        self.assertEqual(len(lines), 2, err)
        self.assertIn(f"{suite}:7:19: test 'soft_cnps': threshold 'nic_cnps_sent > 0': the soft "
                      "provider never measures nic_cnps_sent: not measured (soft uses no RDMA "
                      "device) (hosts h1, h3 use it)", lines[0])
        self.assertIn(f"{suite}:13:9: test 'verbs_retx': threshold 'retransmits == 0': the verbs "
                      "provider never measures retransmits", lines[1])
        self.assertEqual(os.listdir(self.reports), ["never.yaml"])  # nothing ran
        v = subprocess.run([ROCEHIL, "suite", "validate", suite, "--inventory", TB["inventory"],
                            "--json"], capture_output=True, text=True, timeout=60)
        self.assertEqual(v.returncode, 2, v.stderr)
        errors = json.loads(v.stdout)["errors"]
        self.assertEqual([(e["line"], e["column"]) for e in errors], [(7, 19), (13, 9)])
        # Without the inventory: what the file's own `provider: verbs` never measures is refused
        # as run refuses it; soft_cnps's provider is the inventory's, so it is not known yet.
        v = subprocess.run([ROCEHIL, "suite", "validate", suite, "--json"], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(v.returncode, 2, v.stderr)
        self.assertEqual([(e["line"], e["column"]) for e in json.loads(v.stdout)["errors"]],
                         [(13, 9)])
        bw_lat = self.write_file(
            "bwlat.yaml", "schema_version: 1\nname: bwlat\ntests:\n"
            "  - {name: bw, workload: bw, thresholds: ['lat_p99_us <= 10']}\n")
        v = subprocess.run([ROCEHIL, "suite", "validate", bw_lat], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(v.returncode, 2, v.stderr)
        self.assertIn(f"{bw_lat}:4:44: test 'bw': threshold 'lat_p99_us <= 10': workload bw "
                      "never measures lat_p99_us; this test measures busbw_gbps", v.stderr)

    def test_a_baseline_is_named_read_from_the_history_and_recorded(self):
        suite = self.write_file(
            "base.yaml", "schema_version: 1\nname: base\ntests:\n"
            "  - name: bw\n    workload: bw\n    hosts: h1,h3\n    size: 64K\n"
            "    duration_s: 0.5\n    thresholds:\n"
            "      - busbw_gbps >= 0.01 * baseline.busbw_gbps\n")
        # Without a baseline run named, refused before anything runs, saying how to name one.
        code, out, err = run(suite, "--inventory", TB["inventory"], reports=self.reports)
        self.assertEqual(code, 2, out + err)
        self.assertIn(f"{suite}:10:9: test 'bw': threshold 'busbw_gbps >= 0.01 * "
                      "baseline.busbw_gbps' compares with a baseline run, and none is named: give "
                      "--baseline last-qualified", err)
        # No run of the suite qualified yet: said, nothing run.
        code, out, err = run(suite, "--inventory", TB["inventory"], "--baseline", "last-qualified",
                             reports=self.reports)
        self.assertEqual(code, 2, out + err)
        self.assertIn("no run history at", err)
        # The same suite (by name) without the baseline: a run that qualifies, to compare with.
        with open(suite) as f:
            text = f.read()
        first = self.write_file("first.yaml", text.replace(
            "busbw_gbps >= 0.01 * baseline.busbw_gbps", "busbw_gbps > 0"))
        code, out, err = run(first, "--inventory", TB["inventory"], reports=self.reports)
        self.assertEqual(code, 0, out + err)
        baseline, _ = run_record(self.reports)
        baseline_bw = baseline["cases"][0]["attempts"][-1]["metrics"]["busbw_gbps"]
        # An --only run that qualified after it is not the suite's night: last-qualified skips it.
        code, out, err = run(first, "--inventory", TB["inventory"], "--only", "bw",
                             reports=self.reports)
        self.assertEqual(code, 0, out + err)
        only, _ = run_record(self.reports)
        self.assertNotEqual(only["run_id"], baseline["run_id"])
        self.assertEqual((baseline["kind"], only["kind"], only["only"]), ("full", "only", "bw"))
        code, out, err = run(suite, "--inventory", TB["inventory"], "--baseline", "last-qualified",
                             reports=self.reports)
        self.assertEqual(code, 0, out + err)
        self.assertIn(f"baseline: run {baseline['run_id']} (last-qualified from --baseline)", out)
        record, _ = run_record(self.reports)
        self.assertEqual(record["baseline"]["run_id"], baseline["run_id"])
        self.assertEqual(record["baseline"]["asked"], "last-qualified")
        case = record["cases"][0]
        self.assertAlmostEqual(case["names"]["baseline.busbw_gbps"], baseline_bw, places=9)
        limit = case["attempts"][-1]["grade"]["thresholds"][0]["limit"]
        self.assertAlmostEqual(limit, 0.01 * baseline_bw, places=9)
        with open(os.path.join(self.reports, record["run_id"], "report.html")) as f:
            self.assertIn(f"run {baseline['run_id']} of", f.read())
        # A run id prefix from the suite's own baseline: works the same.
        by_id = self.write_file("byid.yaml", text.replace(
            "name: base\n", f"name: base\nbaseline: {baseline['run_id']}\n"))
        code, out, err = run(by_id, "--inventory", TB["inventory"], reports=self.reports)
        self.assertEqual(code, 0, out + err)
        self.assertIn(f"baseline: run {baseline['run_id']} ({by_id}: baseline)", out)
        # A suite name mistyped in history gets the suites there, not an empty table.
        h = subprocess.run([ROCEHIL, "history", "--db", os.path.join(self.reports, "history.db"),
                            "--suite", "bse"], capture_output=True, text=True, timeout=60)
        self.assertEqual(h.returncode, 0, h.stderr)
        self.assertIn("no run of suite 'bse' in", h.stdout)
        self.assertIn("it holds runs of base (4): did you mean 'base'?", h.stdout)
        # Every run listed with its kind; --kind only shows those.
        h = subprocess.run([ROCEHIL, "history", "--db", os.path.join(self.reports, "history.db"),
                            "--json"], capture_output=True, text=True, timeout=60, check=True)
        kinds = {r["run_id"]: (r["kind"], r["only"]) for r in json.loads(h.stdout)["runs"]}
        self.assertEqual(kinds[baseline["run_id"]], ("full", None))
        self.assertEqual(kinds[only["run_id"]], ("only", "bw"))
        h = subprocess.run([ROCEHIL, "history", "--db", os.path.join(self.reports, "history.db"),
                            "--kind", "only"], capture_output=True, text=True, timeout=60)
        self.assertEqual(h.returncode, 0, h.stderr)
        self.assertIn(f"{only['run_id']} ", h.stdout)
        self.assertNotIn(f"{baseline['run_id']} ", h.stdout)
        self.assertIn("1 run(s) in", h.stdout)

    def test_a_failed_cases_captures_are_kept_by_case_and_nothing_stays_on_the_capture_host(self):
        bw = ("    workload: bw\n    hosts: h1,h3\n    size: 64K\n    duration_s: 0.5\n"
              "    captures: [s1-mirror, s2-mirror]\n    thresholds:\n")
        suite = self.write_file(
            "keep.yaml", "schema_version: 1\nname: keep\ncapture:\n  keep: failed\ntests:\n"
            "  - name: passes\n" + bw + "      - busbw_gbps > 0\n"
            "  - name: fails\n" + bw + "      - busbw_gbps > 1000\n")
        code, out, err = run(suite, "--inventory", TB["inventory"], reports=self.reports)
        self.assertEqual(code, 1, out + err)
        record, _ = run_record(self.reports)
        run_dir = os.path.join(self.reports, record["run_id"])
        passes, fails = record["cases"][0]["attempts"][-1], record["cases"][1]["attempts"][-1]
        self.assertEqual(passes["captures_kept"], [])
        kept = {k["point"]: k for k in fails["captures_kept"]}
        self.assertEqual(set(kept), {"s1-mirror", "s2-mirror"})
        with open(os.path.join(run_dir, "report.html")) as f:
            html = f.read()
        for capture in fails["raw"]["captures"]:
            k = kept[capture["point"]]
            self.assertNotIn("not_kept", k)
            self.assertEqual(k["files"], [f"captures/fails/a1-{capture['point']}.pcapng"])
            path = os.path.join(run_dir, k["files"][0])
            self.assertEqual(os.path.getsize(path), k["bytes"])
            # Every frame the capture counted is in the file, by capinfos; rocehil analyze of the
            # file finds what the run's analysis found.
            info = subprocess.run(["capinfos", "-M", "-c", path], capture_output=True, text=True,
                                  check=True).stdout
            self.assertIn(f"Number of packets:   {capture['frames']}\n", info)
            analyzed = json.loads(subprocess.run([ROCEHIL, "analyze", "--json", path],
                                                 capture_output=True, text=True,
                                                 check=True).stdout)
            self.assertEqual(analyzed["roce"]["packets"], capture["analysis"]["roce"]["packets"])
            self.assertIn(f'<a href="{k["files"][0]}">', html)
        self.assertIn(f"captures kept: 2 files, ", out)
        # The files were written on the capture host (this machine's /var/tmp, the namespace's
        # too) and none is left there, kept or not.
        self.assertEqual(len(passes["raw"]["captures"][0]["written_on_host"]), 1)
        self.assertEqual(glob.glob(f"/var/tmp/rocehil-{record['run_id']}-*"), [])
        # --keep-captures never over the suite's keep: nothing written, nothing kept.
        code, out, err = run(suite, "--inventory", TB["inventory"], "--only", "fails",
                             "--keep-captures", "never", reports=self.reports)
        self.assertEqual(code, 1, out + err)
        record, _ = run_record(self.reports)
        attempt = record["cases"][0]["attempts"][-1]
        self.assertEqual(attempt["captures_kept"], [])
        self.assertEqual(attempt["raw"]["captures"][0]["written_on_host"], [])
        self.assertFalse(os.path.exists(os.path.join(self.reports, record["run_id"], "captures")))
        self.assertNotIn("captures kept", out)

    def test_a_switch_agent_that_answers_late_is_waited_for_not_called_silent(self):
        suite = self.write_file(
            "late.yaml", "schema_version: 1\nname: late\ntests:\n  - name: bw\n    workload: bw\n"
            "    hosts: h1,h3\n    size: 64K\n    duration_s: 0.5\n    thresholds:\n"
            "      - busbw_gbps > 0\n")
        # l1's snmpd stopped (alive, answering nothing, as an agent still starting) until 3 s
        # after the preflight, when the first case polls: past the poller's timeout and tries.
        stopped = [int(pid) for ns, pid, cmd in host_pids(TB["id"], "snmpd")
                   if ns == f"rocehil-{TB['id']}-l1" and "snmpd" in cmd.split(" ")[0]]
        self.assertTrue(stopped, "l1's snmpd")
        for pid in stopped:
            os.kill(pid, signal.SIGSTOP)
        try:
            p = subprocess.Popen([ROCEHIL, "run", suite, "--inventory", TB["inventory"],
                                  "--reports", self.reports], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            lines = []
            for line in p.stdout:
                lines.append(line)
                if line.startswith("preflight:"):
                    break
            time.sleep(3)
        finally:
            for pid in stopped:
                os.kill(pid, signal.SIGCONT)
        out, err = p.communicate(timeout=300)
        out = "".join(lines) + out
        self.assertEqual(p.returncode, 0, out + err)
        record, _ = run_record(self.reports)
        switches = record["cases"][0]["attempts"][-1]["raw"]["switches"]
        self.assertIn("l1", [s["switch"] for s in switches])
        self.assertEqual([s["switch"] for s in switches if not s["answered"]], [], switches)
        self.assertNotIn("no counters", out)

    def selftest(self, *args):
        r = subprocess.run([ROCEHIL, "selftest", "--inventory", TB["inventory"], "--hosts",
                            "h1,h3", "--reports", self.reports, "--json", *args],
                           capture_output=True, text=True, timeout=300)
        return r.returncode, json.loads(r.stdout) if r.stdout.strip() else None, r.stderr

    def test_selftest_passes_what_soft_can_and_skips_each_hardware_check_with_its_reason(self):
        code, report, err = self.selftest("--captures", "s1-mirror,s2-mirror")
        self.assertEqual(code, 0, err)
        checks = {c["name"]: c for c in report["checks"]}
        print("  " + "\n  ".join(f"{c['name']}: {c['verdict']}: {c['detail']}"
                                 for c in report["checks"]), file=sys.stderr)
        self.assertEqual(report["verdict"], "pass")
        for name in ("preflight", "rc_write", "rc_read", "rc_send", "latency", "qp_scaling"):
            self.assertEqual(checks[name]["verdict"], "pass", checks[name])
        for name in ("ud_send", "ecn_cnp", "gpu_memory", "calibration"):
            self.assertEqual(checks[name]["verdict"], "skip", checks[name])
            self.assertTrue(checks[name]["detail"], name)
        self.assertIn("hw_counters/np_cnp_sent", checks["ecn_cnp"]["detail"])
        # The file to attach is the one printed, beside an ordinary run's files.
        run_dir = os.path.join(self.reports, report["run"]["run_id"])
        with open(os.path.join(run_dir, "selftest.json")) as f:
            self.assertEqual(json.load(f), report)
        for name in ("run.json", "junit.xml", "report.html"):
            self.assertTrue(os.path.exists(os.path.join(run_dir, name)), name)
        # Every file says what the command said and its exit status: the hardware checks are
        # skipped in run.json, junit.xml and the history too, with the same reasons.
        with open(os.path.join(run_dir, "run.json")) as f:
            record = json.load(f)
        self.assertEqual(record["exit_code"], 0)
        skipped = {c["test"]: c["skip_reason"] for c in record["cases"]
                   if c["outcome"] == "skipped"}
        self.assertEqual(set(skipped), {"ud_send", "ecn_cnp", "gpu_memory", "calibration_bw",
                                        "calibration_lat"})
        self.assertEqual(skipped["ud_send"], checks["ud_send"]["detail"])
        suite = ET.parse(os.path.join(run_dir, "junit.xml")).getroot().find("testsuite")
        self.assertEqual((suite.get("errors"), suite.get("failures"), suite.get("skipped")),
                         ("0", "0", "5"))
        self.assertEqual(sorted(s.get("message") for s in suite.findall("testcase/skipped")),
                         sorted(skipped.values()))
        history = subprocess.run(
            [ROCEHIL, "history", "--db", os.path.join(self.reports, "history.db"), "--json"],
            capture_output=True, text=True, timeout=60)
        rows = [r for r in json.loads(history.stdout)["runs"]
                if r["run_id"] == record["run_id"]]
        self.assertEqual((rows[0]["exit_code"], rows[0]["errors"], rows[0]["skipped"]), (0, 0, 5))
        self.assertEqual((rows[0]["kind"], record["kind"]), ("selftest", "selftest"))
        by_test = {c["test"]: c for c in report["run"]["cases"]}
        write = by_test["rc_write"]["attempts"][-1]["metrics"]
        self.assertEqual(write["data_errors"], 0)
        self.assertIn(f"{write['busbw_gbps']:.4g} Gbit/s", checks["rc_write"]["detail"])
        # The source ports the mirrors saw, counted here from the analyses in run.json, are the
        # ones the ranks' QPs reported they were pinned to, each QP's its own.
        raw = by_test["qp_scaling"]["attempts"][-1]["raw"]
        pinned = {q["udp_sport"] for r in raw["traffic"]["cases"][0]["per_rank"]
                  for q in r["per_qp"]}
        self.assertEqual(len(pinned), 16, raw["traffic"])
        seen = {f["udp_sport"] for p in raw["captures"] for f in p["analysis"]["flows"]
                if f["packets"] > 0}
        self.assertLessEqual(seen, pinned)
        self.assertGreaterEqual(len(seen), 8)
        self.assertIn(f"the mirrors saw {len(seen)} of the 16 pinned source ports and no other",
                      checks["qp_scaling"]["detail"])

    def test_selftest_fails_a_check_whose_threshold_fails(self):
        with open(os.path.join(SUITES, "acceptance.yaml")) as f:
            text = f.read()
        changed = text.replace(
            "  - name: rc_write\n    workload: bw\n    opcode: write\n    thresholds:\n"
            "      - busbw_gbps > 0\n",
            "  - name: rc_write\n    workload: bw\n    opcode: write\n    thresholds:\n"
            "      - busbw_gbps > 1000\n")
        self.assertNotEqual(changed, text)
        strict = self.write_file("strict.yaml", changed)
        code, report, err = self.selftest("--suite", strict)
        self.assertEqual(code, 1, err)
        checks = {c["name"]: c for c in report["checks"]}
        self.assertEqual(report["verdict"], "fail")
        self.assertEqual(checks["rc_write"]["verdict"], "fail")
        self.assertIn("busbw_gbps > 1000 (measured ", checks["rc_write"]["detail"])
        self.assertEqual(checks["rc_read"]["verdict"], "pass")

    def test_gpu_memory_is_the_nics_gpu_and_soft_says_it_has_none(self):
        suite = self.write_file(
            "gpu.yaml", "schema_version: 1\nname: gpu\ntests:\n"
            "  - {name: g, workload: bw, hosts: 'h1,h3', memory: gpu, duration_s: 1,\n"
            "     thresholds: ['data_errors == 0']}\n")
        # Without a GPU paired with the NICs the suite is refused before anything runs.
        code, out, err = run(suite, "--inventory", TB["inventory"], reports=self.reports)
        self.assertEqual(code, 2, out + err)
        self.assertIn("memory gpu, but", err)
        self.assertIn("pairs no GPU with h1's NIC", err)
        with open(TB["inventory"]) as f:
            text = f.read()
        nic = f"      - netdev: {TB['id']}-nic0\n"
        self.assertIn(nic, text)
        with_gpus = self.write_file("gpus.yaml", text.replace(nic, nic + "        gpu: 2\n"))
        code, out, err = run(suite, "--inventory", with_gpus, reports=self.reports)
        self.assertEqual(code, 3, out + err)
        record, _ = run_record(self.reports)
        error = record["cases"][0]["attempts"][-1]["error"]
        # GPU 2 travelled from the inventory to the agent, whose provider has no GPU memory.
        self.assertIn("the soft provider has no GPU memory (GPU 2 asked for)", error["message"])
        self.assertEqual(error["host"], "h1")

    def test_engine_perftest_fails_in_perftests_words_and_the_run_goes_on(self):
        if shutil.which("ib_write_bw") is None:
            self.skipTest("perftest is not installed (scripts/install-deps.sh installs it)")
        suite = self.write_file(
            "perftest.yaml", "schema_version: 1\nname: perftest\ntests:\n"
            "  - {name: pt, workload: bw, hosts: 'h1,h3', engine: perftest, duration_s: 1,\n"
            "     thresholds: ['busbw_gbps >= 0.1']}\n"
            "  - {name: own, workload: bw, hosts: 'h1,h3', duration_s: 0.5,\n"
            "     thresholds: ['busbw_gbps >= 0.01']}\n")
        code, out, err = run(suite, "--inventory", TB["inventory"], reports=self.reports)
        self.assertEqual(code, 3, out + err)
        record, _ = run_record(self.reports)
        perftest, own = record["cases"]
        self.assertEqual(perftest["outcome"], "error")
        error = perftest["attempts"][-1]["error"]
        # The server side (h3) goes first, and stops at perftest's device check: no RDMA here.
        self.assertEqual((error["host"], error["phase"]), ("h3", "perftest"), error)
        self.assertIn("ib_write_bw on h3: Did not detect devices", error["message"])
        raw = perftest["attempts"][-1]["raw"]["traffic"]
        self.assertEqual(raw["engine"], "perftest")
        self.assertEqual(raw["server"]["results"]["command"][0], "ib_write_bw")
        self.assertIsNone(raw["client"]["results"])
        self.assertIn("busbw_gbps", perftest["attempts"][-1]["unmeasured"])
        self.assertEqual(own["outcome"], "pass", own)

    def test_calibrate_says_why_perftest_cannot_run_and_exits_3(self):
        code, out, err = calibrate("--inventory", TB["inventory"], "--hosts", "h1,h3",
                                   "--sizes", "64K", "--reports", self.reports)
        self.assertEqual(code, 3, out + err)
        rows = json.loads(out)["rows"]
        self.assertEqual([(r["workload"], r["outcome"]) for r in rows],
                         [("bw", "error"), ("lat", "error")])
        self.assertIn("h3: perftest: ib_write_bw on h3: Did not detect devices", rows[0]["detail"])
        self.assertIn("ib_send_lat on h3", rows[1]["detail"])

    def test_calibrate_interleaves_the_engines_and_grades_their_ratio(self):
        # Agents started locally in the hosts' namespaces inherit this PATH, where a stand-in
        # perftest does the handshake and prints real tables (perftest_stand_in.py): rocehil's
        # runs are real (soft), perftest's numbers are the tables', so the two disagree and the
        # calibration must say so; the ratio is recomputed here from the rounds in run.json.
        with open(TB["inventory"]) as f:
            text = f.read()
        local = self.write_file("local.yaml", text.replace("  provider: soft\n",
                                                           "  provider: soft\n  launcher: local\n",
                                                           1))
        here = os.path.dirname(os.path.abspath(__file__))
        data = os.path.join(here, "..", "..", "..", "..", "perftest", "tests", "data")
        bin_dir = tempfile.mkdtemp(prefix="rhbin")
        self.addCleanup(shutil.rmtree, bin_dir, ignore_errors=True)
        for tool in ("ib_write_bw", "ib_send_lat"):
            os.symlink(os.path.join(here, "perftest_stand_in.py"), os.path.join(bin_dir, tool))
        env = dict(os.environ, PATH=bin_dir + ":" + os.environ["PATH"],
                   ROCEHIL_STAND_IN_TABLE_ib_write_bw=os.path.join(data, "write_bw_gbps_cx7.txt"),
                   ROCEHIL_STAND_IN_TABLE_ib_send_lat=os.path.join(data, "send_lat_rc_cx7.txt"))
        code, out, err = calibrate("--inventory", local, "--hosts", "h1,h3", "--sizes", "64K",
                                   "--rounds", "2", "--duration", "1", "--lat-iterations", "200",
                                   "--reports", self.reports, env=env)
        self.assertEqual(code, 1, out + err)
        bw, lat = json.loads(out)["rows"]
        for row in (bw, lat):
            self.assertEqual(row["outcome"], "fail", row)
            self.assertEqual(len(row["rocehil"]), 2)
            self.assertTrue(all(v > 0 for v in row["rocehil"]), row)
            median = sum(row["rocehil"]) / 2
            self.assertAlmostEqual(row["ratio"], median / row["perftest_median"], places=9)
        self.assertEqual(bw["perftest"], [392.34, 392.34])  # the fixture's BW average
        self.assertLess(bw["ratio"], 0.95)
        record, _ = run_record(self.reports)
        runs = record["cases"][0]["attempts"][-1]["raw"]["traffic"]["calibration"]["runs"]
        self.assertEqual([(r["round"], r["engine"]) for r in runs],
                         [(1, "perftest"), (1, "rocehil"), (2, "rocehil"), (2, "perftest")])
        # Both engines ran the same test: size, QPs, TX depth and MTU.
        pt = runs[0]["traffic"]["client"]["request"]
        own = runs[1]["traffic"]["test"]
        self.assertEqual((pt["size"], pt["qps"], pt["tx_depth"], pt["mtu"]),
                         (own["message_bytes"], own["qps"], own["tx_depth"], own["mtu"]))

    def test_a_killed_agent_makes_its_case_an_error_and_the_run_goes_on(self):
        proc = subprocess.Popen([ROCEHIL, "run", SMOKE, "--inventory", TB["inventory"],
                                 "--only", "allreduce/*", "--reports", self.reports],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        victim = wait_for(lambda: [p for p in host_pids(TB["id"], "rocehil agent")
                                   if p[0].endswith("-h2")], 60)
        self.assertTrue(victim, "no agent appeared on h2")
        os.kill(int(victim[0][1]), signal.SIGKILL)
        out, err = proc.communicate(timeout=300)
        self.assertEqual(proc.returncode, 3, out + err)
        record, junit = run_record(self.reports)
        outcomes = [c["outcome"] for c in record["cases"]]
        self.assertEqual(outcomes.count("error"), 1, outcomes)
        self.assertEqual(len([o for o in outcomes if o in ("pass", "warn")]), 2, outcomes)
        failed = [c for c in record["cases"] if c["outcome"] == "error"][0]
        self.assertEqual(failed["attempts"][-1]["error"]["host"], "h2")
        self.assertIn(failed["attempts"][-1]["error"]["phase"], ("traffic", "hello", "launch"))
        errors = junit.getroot().find("testsuite").findall("testcase/error")
        self.assertEqual(len(errors), 1)
        self.assertTrue(errors[0].get("message").startswith("h2: "), errors[0].get("message"))

    def test_a_run_opens_one_ssh_connection_to_each_host(self):
        # The preflight's probe, the settings' reads and the agents share one connection a host
        # (ControlMaster): each host's sshd logs one login for the whole run.
        def logins(host):
            path = os.path.join(TB["dir"], "run", f"rocehil-{TB['id']}-{host}.sshd.log")
            with open(path) as f:
                return f.read().count("Accepted publickey")
        before = {h: logins(h) for h in ("h1", "h3")}
        code, out, err = run(SMOKE, "--inventory", TB["inventory"], "--only", "p2p_lat",
                             "--no-switches", reports=os.path.join(self.reports, "r"))
        self.assertEqual(code, 0, out + err)
        self.assertEqual({h: logins(h) - n for h, n in before.items()}, {"h1": 1, "h3": 1})

    def test_a_link_set_down_makes_its_case_an_error_naming_the_host(self):
        ns, nic = f"rocehil-{TB['id']}-h3", f"{TB['id']}-nic0"
        routes = subprocess.run(["ip", "netns", "exec", ns, "ip", "route", "show", "dev", nic],
                                capture_output=True, text=True).stdout.splitlines()
        # The smoke suite's allreduce over 8 QPs, run 20 times as long: with its 10 iterations
        # the link went down near the end of the traffic on a slow run, after h3's rank had
        # finished and read its counters while h1 still waited for h3's last ACKs.
        suite = self.write_file(
            "linkdown.yaml",
            "schema_version: 1\nname: linkdown\ndefaults: {provider: soft, iterations: 200}\n"
            "tests:\n  - name: allreduce\n    workload: allreduce\n    size: 1M\n    qps: 8\n"
            "    placement: fragmented\n    thresholds: [busbw_gbps > 0]\n")
        proc = subprocess.Popen([ROCEHIL, "run", suite, "--inventory", TB["inventory"],
                                 "--reports", self.reports],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        def tx_packets():
            return int(subprocess.run(["ip", "netns", "exec", ns, "cat",
                                       f"/sys/class/net/{nic}/statistics/tx_packets"],
                                      capture_output=True, text=True).stdout or 0)
        def h3_agents():
            pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True,
                                  text=True).stdout.split()
            found = set()
            for pid in pids:
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        if b"rocehil\0agent" in f.read():
                            found.add(pid)
                except OSError:
                    pass
            return found

        earlier = h3_agents()  # an earlier test's leftovers, if any, are not this run's rank
        try:
            # The link goes down once the measured allreduce is moving data through it (not
            # after a fixed time: setting up 8 QPs per rank takes longer on a loaded machine).
            # The run first checks every rank's data on one iteration, and the NIC counters'
            # window opens at the measured run's start, after it: that one iteration made h3's
            # NIC send 2056 packets here, so a trigger at 2000 could set the link down between
            # the two and leave the measured window nothing to count. 20000 packets is about 8
            # of the 200 measured iterations (2580 packets each here).
            self.assertTrue(wait_for(lambda: h3_agents() - earlier, 60))
            before = tx_packets()
            self.assertTrue(wait_for(lambda: tx_packets() > before + 20000, 60))
            subprocess.run(["ip", "netns", "exec", ns, "ip", "link", "set", nic, "down"],
                           check=True)
            down_ns = time.time_ns()
            out, err = proc.communicate(timeout=300)
        finally:
            subprocess.run(["ip", "netns", "exec", ns, "ip", "link", "set", nic, "up"])
            for route in routes:  # the kernel drops a downed link's routes
                subprocess.run(["ip", "netns", "exec", ns, "ip", "route", "replace",
                                *route.split(), "dev", nic], check=True)
        self.assertEqual(proc.returncode, 3, out + err)
        record, _ = run_record(self.reports)
        error = record["cases"][0]["attempts"][-1]["error"]
        self.assertEqual(record["cases"][0]["outcome"], "error")
        self.assertEqual(error["host"], "h3", error)
        self.assertEqual(error["phase"], "traffic")
        self.assertIn("h3: traffic:", out)
        # The evidence: h3's NIC counted the carrier loss, and no other NIC did.
        attempt = record["cases"][0]["attempts"][-1]
        nics = {n["host"]: n["deltas"].get("netdev/carrier_down_count", 0)
                for n in attempt["raw"]["nics"]}
        print(f"  carrier losses {nics}; {error['message']}", file=sys.stderr)
        # What a failure needs to be understood: when the link went down in the attempt, and
        # what h3's NIC counted.
        h3 = [n for n in attempt["raw"]["nics"] if n["host"] == "h3"]
        why = (f"{nics}; link down {(down_ns - attempt['start_ns']) / 1e9:.2f} s into an "
               f"attempt of {attempt['seconds']:.2f} s; h3's NIC: {h3}")
        self.assertGreaterEqual(nics["h3"], 1, why)
        self.assertEqual(sum(nics.values()), nics["h3"], why)
        # And h3's soft NIC raised the port event, as an RNIC raises IBV_EVENT_PORT_ERR; the
        # error says so.
        events = attempt["raw"].get("device_events", [])
        downs = [e for e in events if e["kind"] == "port_error"]
        self.assertEqual({e["host"] for e in downs}, {"h3"}, f"{why}; events {events}")
        self.assertEqual(downs[0]["detail"], "link set down", events)
        self.assertGreaterEqual(downs[0]["at_ns"], attempt["start_ns"], events)
        self.assertIn("h3: " + downs[0]["device"] + " reported port_error", error["message"])

    def test_an_unreachable_host_fails_the_preflight(self):
        with open(TB["inventory"]) as f:
            text = f.read()
        h3 = text.index("- name: h3")
        address = text.index("address: ", h3)
        end = text.index("\n", address)
        broken = os.path.join(self.reports, "unreachable.yaml")
        with open(broken, "w") as f:
            # 198.19.0.0/16's far end: an address nothing in the testbed answers.
            f.write(text[:address] + "address: 198.19.255.254" + text[end:])
        started = time.monotonic()
        code, out, err = run(SMOKE, "--inventory", broken, "--only", "p2p_*",
                             reports=os.path.join(self.reports, "r"))
        self.assertLess(time.monotonic() - started, 60)
        self.assertEqual(code, 3, out + err)
        self.assertIn("preflight failed for 1 of 2 host(s); nothing was run", err)
        self.assertIn("h3: unreachable", err)
        record, _ = run_record(os.path.join(self.reports, "r"))
        self.assertEqual([c["outcome"] for c in record["cases"]], ["not_run", "not_run"])
        verdicts = {h["name"]: h["verdict"] for h in record["inventory"]["preflight"]["hosts"]}
        self.assertEqual(verdicts["h3"], "unreachable")

    def test_the_local_launcher_runs_agents_in_the_hosts_namespaces_without_ssh(self):
        with open(TB["inventory"]) as f:
            text = f.read()
        # Every host local, and ssh pointed at a closed port: nothing may go through ssh.
        text = text.replace("  provider: soft\n", "  provider: soft\n  launcher: local\n", 1)
        text = text.replace("    port: 22\n", "    port: 1\n", 1)
        local = self.write_file("local.yaml", text)
        code, out, err = run(SMOKE, "--inventory", local, "--only", "alltoall",
                             reports=os.path.join(self.reports, "r"))
        self.assertEqual(code, 0, out + err)
        record, _ = run_record(os.path.join(self.reports, "r"))
        self.assertEqual(record["cases"][0]["outcome"], "pass")
        hosts = record["cases"][0]["attempts"][0]["raw"]["traffic"]["ranks"]
        self.assertEqual(sorted(r["host"] for r in hosts), ["h1", "h2", "h3", "h4"])

    def test_sigint_stops_everything_and_keeps_what_was_measured(self):
        proc = subprocess.Popen([ROCEHIL, "run", SMOKE, "--inventory", TB["inventory"],
                                 "--reports", self.reports],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # Mid-run: once the collectives' agents are up on every host.
        self.assertTrue(wait_for(lambda: len(host_pids(TB["id"], "rocehil agent")) >= 6, 120))
        proc.send_signal(signal.SIGINT)
        started = time.monotonic()
        out, err = proc.communicate(timeout=60)
        self.assertLess(time.monotonic() - started, 15)
        self.assertEqual(proc.returncode, 3, out + err)
        record, junit = run_record(self.reports)
        self.assertTrue(record["interrupted"])
        self.assertEqual(record["exit_code"], 3)
        outcomes = [c["outcome"] for c in record["cases"]]
        self.assertIn("not_run", outcomes)
        self.assertIn(outcomes[0], ("pass", "warn"))  # p2p_bw ran before the signal
        self.assertEqual(len(junit.getroot().findall("testsuite/testcase/skipped")),
                         outcomes.count("not_run"))
        # Nothing of the run is left on any host, nor ssh's shared connections here.
        self.assertEqual(wait_for(lambda: not host_pids(TB["id"], ROCEHIL), 10), True,
                         host_pids(TB["id"], ROCEHIL))
        masters = subprocess.run(["pgrep", "-f", "rocehil-ssh-"], capture_output=True,
                                 text=True).stdout
        self.assertEqual(masters, "")

    # ---- agents that dial home: the inventory names the controller ----

    @staticmethod
    def controller_address():
        """This machine's address on the testbed's management network, where hosts reach it."""
        shown = subprocess.run(["ip", "-4", "-o", "addr", "show", "dev", f"{TB['id']}-br"],
                               capture_output=True, text=True, check=True).stdout
        return shown.split("inet ")[1].split("/")[0]

    def dialing_inventory(self, name="dial.yaml", port=0, join_timeout_s=30, more=""):
        """The testbed's inventory with a controller on the management address."""
        with open(TB["inventory"]) as f:
            text = f.read()
        return self.write_file(name, text + f"controller: {{address: {self.controller_address()}, "
                               f"port: {port}, join_timeout_s: {join_timeout_s}{more}}}\n")

    def test_agents_that_dial_home_give_the_smoke_suites_verdicts_one_agent_a_host(self):
        proc = subprocess.Popen([ROCEHIL, "run", SMOKE, "--inventory", self.dialing_inventory(),
                                 "--reports", self.reports],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # While it runs: one agent per host, started once (the run's id on its command line, its
        # secret nowhere there), and never a second.
        # (An agent leads its own session; its launcher, gone once it joined, does not.)
        seen = set()
        while proc.poll() is None:
            counts = {}
            for ns, pid, cmd in host_pids(TB["id"], " agent --connect "):
                self.assertNotIn("SECRET", cmd)
                if session_leader(pid):
                    counts[ns] = counts.get(ns, 0) + 1
            self.assertTrue(all(n == 1 for n in counts.values()), counts)
            seen.update(counts)
            time.sleep(0.2)
        out, err = proc.communicate()
        self.assertEqual(proc.returncode, 0, out + err)
        self.assertEqual(len(seen), 5, seen)  # h1-h4 and the capture host
        self.assertIn("agents: 5 hosts dialed in within ", out)
        record, _ = run_record(self.reports)
        by_id = cases(record)
        self.assertEqual(len(by_id), 8)
        for case_id, c in by_id.items():
            expected = ("expected_fail",) if case_id == "pfc_storm" else ("pass", "warn")
            self.assertIn(c["outcome"], expected, (case_id, c["attempts"][-1]["error"]))
        self.assertNotIn("secret", json.dumps(record).lower())
        # The run over, its connections closed: every agent has ended.
        self.assertEqual(wait_for(lambda: not host_pids(TB["id"], " agent --connect "), 15), True,
                         host_pids(TB["id"], " agent --connect "))

    def test_a_sigkilled_controller_leaves_no_agent_on_any_host(self):
        proc = subprocess.Popen([ROCEHIL, "run", SMOKE, "--inventory", self.dialing_inventory(),
                                 "--only", "allreduce/*", "--reports", self.reports],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertTrue(wait_for(lambda: len(host_pids(TB["id"], " agent --connect ")) >= 4, 60))
        time.sleep(1)  # into a case: sessions set up, traffic running
        proc.kill()
        proc.communicate()
        # The kernel closes a killed process's connections: each agent sees its controller go,
        # stops its traffic and exits.
        self.assertEqual(wait_for(lambda: not host_pids(TB["id"], " agent --connect "), 30), True,
                         host_pids(TB["id"], " agent --connect "))

    def test_a_stranger_at_the_controllers_port_is_refused_and_the_run_goes_on(self):
        import socket
        with socket.socket() as probe:
            probe.bind(("", 0))
            port = probe.getsockname()[1]
        proc = subprocess.Popen([ROCEHIL, "run", SMOKE, "--inventory",
                                 self.dialing_inventory(port=port), "--only", "p2p_bw",
                                 "--reports", self.reports],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertTrue(wait_for(lambda: len(host_pids(TB["id"], " agent --connect ")) >= 2, 60))
        address = self.controller_address()
        with socket.create_connection((address, port), timeout=10) as stranger:
            stranger.sendall(b"GET / HTTP/1.0\r\n\r\n")
            try:
                self.assertEqual(stranger.recv(100), b"")  # the controller closes it
            except ConnectionResetError:
                pass  # closed with what it sent unread
        out, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 0, out + err)
        refused = [l for l in err.splitlines() if "refused a connection" in l]
        self.assertEqual(len(refused), 1, err)
        self.assertTrue(refused[0].startswith(f"rocehil run: refused a connection from {address}: "),
                        refused[0])
        record, _ = run_record(self.reports)
        # warn: p2p_bw's warn-level "retransmits == 0" on a busy machine
        self.assertIn(record["cases"][0]["outcome"], ("pass", "warn"))

    def test_agents_pdsh_starts_join_a_fleet_and_run_the_case(self):
        # agents: external: rocehil starts nothing; pdsh starts each host's agent with the
        # fleet's key in a file, and the agents, giving the machine's name rather than the
        # inventory's, are known by their NIC addresses.
        if shutil.which("pdsh") is None:
            self.skipTest("pdsh is not installed")
        import socket
        with socket.socket() as probe:
            probe.bind(("", 0))
            port = probe.getsockname()[1]
        key = self.write_file("fleet.key", subprocess.run(
            ["openssl", "rand", "-hex", "32"], capture_output=True, text=True, check=True).stdout)
        os.chmod(key, 0o600)
        inventory = self.dialing_inventory(
            port=port, join_timeout_s=60,
            more=f", agents: external, fleet: nightly, secret_file: {key}")
        proc = subprocess.Popen([ROCEHIL, "run", SMOKE, "--inventory", inventory, "--only",
                                 "p2p_bw", "--reports", self.reports],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            env = dict(os.environ, PDSH_SSH_ARGS=f"-F {TB['dir']}/ssh/config -T %h")
            pdsh = subprocess.run(
                # -S: pdsh's status is the worst of the hosts'. --wait: the run may not be
                # listening yet (it does after its preflight).
                ["pdsh", "-S", "-R", "ssh", "-w", "h1,h3",
                 f"{ROCEHIL} agent --connect {self.controller_address()}:{port} "
                 f"--run-id nightly --secret-file {key} --wait 60 --detach"],
                env=env, capture_output=True, text=True, timeout=60)
            self.assertEqual(pdsh.returncode, 0, pdsh.stdout + pdsh.stderr)
            out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        self.assertEqual(proc.returncode, 0, out + err)
        self.assertIn("agents: 2 hosts dialed in within ", out)
        record, _ = run_record(self.reports)
        # warn: p2p_bw's warn-level "retransmits == 0" on a busy machine
        self.assertIn(record["cases"][0]["outcome"], ("pass", "warn"))
        self.assertEqual(record["cases"][0]["hosts"], ["h1", "h3"])
        with open(key) as f:
            self.assertNotIn(f.read().strip(), json.dumps(record))
        self.assertEqual(wait_for(lambda: not host_pids(TB["id"], " agent --connect "), 15), True)

    def test_a_host_whose_agent_never_dials_in_is_named_and_nothing_runs(self):
        # h3's rocehil starts no dialing agent (and says it did): the run waits its join timeout,
        # names h3, and runs nothing. (p2p_bw runs on h1 and h3: only they are started.)
        stand_in = self.write_file("mute-rocehil", "#!/bin/sh\n"
                                   "case \"$*\" in *--connect*) exit 0;; esac\n"
                                   f"exec {ROCEHIL} \"$@\"\n")
        os.chmod(stand_in, 0o755)
        inventory = self.dialing_inventory(join_timeout_s=3)
        with open(inventory) as f:
            text = f.read()
        text = text.replace("  - name: h3\n", f"  - name: h3\n    agent: {stand_in}\n", 1)
        with open(inventory, "w") as f:
            f.write(text)
        code, out, err = run(SMOKE, "--inventory", inventory, "--only", "p2p_bw",
                             reports=self.reports)
        self.assertEqual(code, 3, out + err)
        self.assertIn("rocehil run: 1 of 2 host(s) did not dial in within ", err)
        self.assertRegex(err, r"\n  h3: its agent started but did not dial in to [0-9.]+:[0-9]+ "
                              r"within 3 s\n")
        record, _ = run_record(self.reports)
        self.assertEqual([c["outcome"] for c in record["cases"]], ["not_run"])
        self.assertEqual(wait_for(lambda: not host_pids(TB["id"], " agent --connect "), 15), True)

    def test_bisect_finds_the_first_bad_candidate_in_log2_runs_and_resumes_after_a_kill(self):
        # Candidates: rates of h1's NIC (its tbf), good to bad. The suite's bw test from h1 to
        # h3 passes at 300 Mbit/s and more (0.284 Gbit/s measured) and fails at 240 and less
        # (0.227). Nine candidates, the ends known:
        # 3 runs, and the only good one the search tries is 300.
        ns, dev = f"rocehil-{TB['id']}-h1", f"{TB['id']}-nic0"
        suite = self.write_file(
            "bis.yaml",
            "schema_version: 1\nname: bis\ndefaults: {provider: soft}\ntests:\n"
            "  - name: bw\n    workload: bw\n    hosts: h1,h3\n    size: 64K\n"
            "    qps: 2\n    duration_s: 1\n    thresholds: [busbw_gbps > 0.27]\n")
        candidates = os.path.join(self.reports, "rates.txt")
        with open(candidates, "w") as f:
            f.write("# h1's NIC rate (Mbit/s), the known good first\n600\n500\n400\n350\n300\n"
                    "240\n200\n150\n100\n")
        db = os.path.join(self.reports, "history.db")
        command = [ROCEHIL, "bisect", "--suite", suite, "--inventory", TB["inventory"],
                   "--candidates", candidates, "--reports", self.reports,
                   "--apply", f"ip netns exec {ns} tc qdisc change dev {dev} root tbf rate "
                              "{candidate}mbit burst 50000 latency " + SHAPED_QUEUE]
        shown = subprocess.run(["ip", "netns", "exec", ns, "tc", "-j", "qdisc", "show", "dev",
                                dev], capture_output=True, text=True, check=True)
        tbf = next(q for q in json.loads(shown.stdout) if q["kind"] == "tbf")["options"]

        def steps():
            if not os.path.exists(db):
                return []
            with sqlite3.connect(db) as c:
                try:
                    return c.execute("SELECT step, candidate, run_id, bad FROM bisect_steps "
                                     "ORDER BY step").fetchall()
                except sqlite3.OperationalError:  # the tables are not made yet
                    return []

        try:
            first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, start_new_session=True)
            self.assertTrue(wait_for(steps, 120), "no step was recorded")
            os.killpg(first.pid, signal.SIGKILL)  # mid-way through the second step's run
            first.communicate(timeout=30)
            # A killed controller cannot close its ssh masters; ControlPersist would end them in
            # 60 s. The test does not wait.
            subprocess.run(["pkill", "-f", "rocehil-ssh-"])
            self.assertEqual(len(steps()), 1)
            resumed = subprocess.run(command + ["--json"], capture_output=True, text=True,
                                     timeout=300)
        finally:
            subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "change", "dev", dev,
                            "root", "tbf", "rate", f"{tbf['rate'] * 8}bit", "burst",
                            str(tbf["burst"]), "latency", "5ms"], check=True)
        self.assertEqual(resumed.returncode, 0, resumed.stdout + resumed.stderr)
        result = json.loads(resumed.stdout)
        recorded = steps()
        print(f"\n  bisect steps {recorded}", file=sys.stderr)
        self.assertEqual((result["first_bad"], result["last_good"]), ("240", "300"))
        self.assertEqual(result["runs"], 3)  # ceil(log2(9 - 1)), the killed step run again
        self.assertEqual([(s, c, bad) for s, c, _, bad in recorded],
                         [(1, "300", 0), (2, "200", 1), (3, "240", 1)])
        with sqlite3.connect(db) as c:
            runs = {r for (r,) in c.execute("SELECT run_id FROM runs")}
            self.assertEqual(c.execute("SELECT first_bad FROM bisects").fetchall(), [("240",)])
        for _, _, run_id, _ in recorded:
            self.assertIn(run_id, runs)  # every step's run is in the history

    def test_a_suite_that_does_not_fit_the_inventory_is_refused_with_its_lines(self):
        suite = self.write_file(
            "bad.yaml",
            "schema_version: 1\nname: bad\ntests:\n"
            "  - name: a\n    workload: allreduce\n    captures: [nowhere]\n"
            "  - name: b\n    workload: bw\n    hosts: h1\n"
            "    inject: {from: h9, link: l1-s1}\n")
        code, out, err = run(suite, "--inventory", TB["inventory"], reports=self.reports)
        self.assertEqual(code, 2, out + err)
        lines = err.strip().splitlines()
        self.assertEqual(len(lines), 3, err)
        # Each at the line where it is fixed: the capture point's name in `captures:`, the
        # `hosts:` line, not the test's first line.
        self.assertTrue(lines[0].startswith(f"rocehil: error: {suite}:6:16: test 'a': capture "
                                            "point 'nowhere' is not in"), lines[0])
        self.assertIn(f"{suite}:9:12: test 'b': hosts 'h1' select 1 host(s)", lines[1])
        self.assertIn(f"{suite}:10:13: inject: 'h9' is not an end of link 'l1-s1'", lines[2])
        self.assertEqual(os.listdir(self.reports), ["bad.yaml"])  # nothing ran, nothing written


if __name__ == "__main__":
    ROCEHIL = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
