"""System test of suites/qualification.yaml, the SONiC RoCEv2 test plan's 11 cases, on the
lossless testbed it is rehearsed on (docs/qualification.md, "Rehearsing it"): 8 hosts in 2
racks, BGP with BFD, DSCP 26 and 34 on lossless queues 3 and 4, 1 Gbit/s uplinks.

It validates with no warning; every case ends as the plan expects (pass, or warn where a
threshold is a warn the plan leaves to the switch chip), a case that does not running once more
alone (the fabric is processes on a shared 2-core machine); and with the switches' ECN off the
DCQCN case fails, and with their PFC off the PFC case fails, each naming the metric that broke.

Usage: python3 qualification_cli_test.py PATH/TO/rocehil   (as root)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

from testbed_fixture import module_testbed_down, module_testbed_up

ROCEHIL = None
TB = {}
SUITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..",
                     "suites", "qualification.yaml")
# Cases whose thresholds include a warn the plan leaves open: ECMP hashing (7, 8) and the ACK
# timeouts case 11 expects with one class.
MAY_WARN = {"tc07-hashing-one-qp", "tc07-hashing-eight-qps", "tc07-hashing-staggered",
            "tc08-spray", "tc11-ack-timeout-one-class"}


def setUpModule():
    module_testbed_up(ROCEHIL, "rhqual", TB, "--lossless", "--hosts", "8", "--routing", "bgp",
                      "--uplink-mbps", "1000", "--switch", "switch.dscp_to_tc=26:3,34:4")


def tearDownModule():
    module_testbed_down(ROCEHIL, TB)


def rocehil(*args, timeout=900):
    r = subprocess.run([ROCEHIL, *args], capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def failed_thresholds(case):
    return [t["threshold"] for t in case["summary"]["thresholds"] if t["verdict"] == "fail"]


class Qualification(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="rocehil-qual-")
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)

    def run_suite(self, *options):
        return rocehil("run", os.path.abspath(SUITE), "-i", TB["inventory"], "--reports",
                       os.path.join(self.dir, "reports"), "--json", *options)

    def test_1_validates_with_no_warning(self):
        code, out, err = rocehil("suite", "validate", os.path.abspath(SUITE), "-i",
                                 TB["inventory"])
        self.assertEqual(code, 0, out + err)
        self.assertNotIn("warning", (out + err).lower())
        self.assertRegex(out, r"suite 'qualification', 16 tests, 16 cases")

    def test_2_every_case_ends_as_the_plan_expects(self):
        start = time.monotonic()
        code, out, err = self.run_suite()
        seconds = time.monotonic() - start
        run = json.loads(out)
        outcomes = {c["test"]: c["outcome"] for c in run["cases"]}
        print(f"\n  qualification on the lossless testbed: {seconds:.0f} s; " +
              ", ".join(f"{t} {o}" for t, o in outcomes.items()), file=sys.stderr)
        self.assertEqual(len(outcomes), 16)
        self.assertEqual(list(outcomes)[0], "tc01-basic-dataplane")  # the plan's order
        for case in run["cases"]:
            allowed = {"pass", "warn"} if case["test"] in MAY_WARN else {"pass"}
            if case["outcome"] in allowed:
                continue
            # This fabric's switches and hosts are processes on a shared 2-core machine: one
            # descheduled long enough drops or pauses what a switch chip would not. A case that
            # did not end as the plan expects runs once more, alone, and must then; its first
            # run is said.
            print(f"  {case['test']} {case['outcome']}: {failed_thresholds(case)} "
                  f"{case['summary']['error']}; once more:", file=sys.stderr)
            again_code, again_out, again_err = self.run_suite("--only", case["test"])
            (again,) = json.loads(again_out)["cases"]
            self.assertIn(again["outcome"], allowed,
                          f"{case['test']}, twice: {failed_thresholds(case)}, then "
                          f"{failed_thresholds(again)} {again['summary']['error']}")
            self.assertEqual(again_code, 0, again_err[-2000:])

    def graded_case(self, *options):
        """The one case `options` select, run until its thresholds were graded: a run that ended
        on an error (a QP of the soft fabric gave up while a process waited for a CPU: once,
        tc03 with ECN off) graded nothing to name, and runs once more; its error is said."""
        code, out, err = self.run_suite(*options)
        (case,) = json.loads(out)["cases"]
        if case["summary"]["error"] is not None:
            print(f"\n  {case['test']} {case['outcome']} on an error: "
                  f"{case['summary']['error']}; once more:", file=sys.stderr)
            code, out, err = self.run_suite(*options)
            (case,) = json.loads(out)["cases"]
        return code, case, err

    def test_3_switches_without_ecn_fail_the_dcqcn_case_on_its_marks(self):
        code, case, err = self.graded_case("--only", "tc03-dcqcn", "--set", "switch.ecn_enable=0")
        self.assertEqual(code, 1, err[-2000:])
        self.assertEqual(case["outcome"], "fail")
        failed = failed_thresholds(case)
        self.assertIn("ecn_marked[dscp=26] > 0", failed, case["summary"])
        self.assertIn("mirror_cnps[dscp=48] > 0", failed, case["summary"])

    def test_4_switches_without_pfc_fail_the_pfc_case_on_its_pauses(self):
        code, case, err = self.graded_case("--only", "tc02-pfc-one-class", "--set",
                                           "switch.pfc_priorities=none")
        self.assertEqual(code, 1, err[-2000:])
        self.assertEqual(case["outcome"], "fail")
        self.assertIn("switch_pfc_tx[prio=3] > 0", failed_thresholds(case), case["summary"])


if __name__ == "__main__":
    ROCEHIL = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
