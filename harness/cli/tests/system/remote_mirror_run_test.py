#!/usr/bin/python3
"""`rocehil run` on the virtual fabric with remote mirrors (issue 36): the spines send their mirror
copies as ERSPAN III sessions across the management network to the capture server, whose capture
points take one session each from the same interface. The suite's verdicts are those the local
mirror ports give, the mirrors' CNPs are the NICs' (as with local mirrors), the injected PFC storm
is caught, and the capture points report their sessions.

Run:  /usr/bin/python3 harness/cli/tests/system/remote_mirror_run_test.py BUILD/harness/rocehil
"""

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testbed_fixture import testbed_down, testbed_up  # noqa: E402

ROCEHIL = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 and not sys.argv[1].startswith("-") \
    else os.environ.get("ROCEHIL_BIN", "")

# The smoke suite's cases that read the mirrors: the collective graded from both spines' mirror
# ports, and the PFC storm the harness must catch on one of them.
SUITE = """\
schema_version: 1
name: remote-mirrors
defaults: {provider: soft, hosts: all, iterations: 10, warmup: 2}
capture: {filter: roce, snaplen: 128}
tests:
  - name: allreduce
    workload: allreduce
    size: 1M
    qps: 4
    placement: fragmented
    captures: [s1-mirror, s2-mirror]
    thresholds:
      - busbw_gbps > 0.05 * link_gbps
      - capture_coverage >= 0.999
      - {check: "ecmp_imbalance <= 1.5", level: warn}
  - name: pfc_storm
    workload: bw
    hosts: h1,h3
    size: 64K
    duration_s: 2
    captures: [s1-mirror]
    inject: {from: s1, link: l1-s1, priority: 3, duration_s: 0.5, after_s: 0.5}
    expect: fail
    thresholds:
      - pfc_storms == 0
"""


def run_suite(mode):
    """Brings a testbed up with `--mirror-mode mode`, runs the suite, takes it down; returns the
    run record and the inventory's capture points."""
    directory, _, _ = testbed_up(ROCEHIL, f"rocehil-remote-run-{mode}-", "--mirror-mode", mode)
    reports = tempfile.mkdtemp(prefix="rocehil-remote-run-reports-")
    try:
        suite = os.path.join(reports, "suite.yaml")
        with open(suite, "w") as f:
            f.write(SUITE)
        inventory = os.path.join(directory, "inventory.yaml")
        r = subprocess.run([ROCEHIL, "run", suite, "--inventory", inventory, "--reports", reports],
                           capture_output=True, text=True, timeout=400)
        newest = sorted(d for d in glob.glob(os.path.join(reports, "*")) if os.path.isdir(d))[-1]
        with open(os.path.join(newest, "run.json")) as f:
            record = json.load(f)
        points = json.loads(subprocess.run([ROCEHIL, "inventory", "show", inventory, "--json"],
                                           capture_output=True, text=True).stdout or "{}")
        return r, record, points
    finally:
        testbed_down(ROCEHIL, directory)
        shutil.rmtree(reports, ignore_errors=True)


class RemoteMirrorRun(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.local = run_suite("local")
        cls.remote = run_suite("erspan")

    def verdicts(self, record):
        return {c["id"]: (c["outcome"], [(t["threshold"], t["verdict"])
                                         for t in c["attempts"][-1]["grade"]["thresholds"]])
                for c in record["cases"]}

    def test_the_verdicts_are_the_local_mirrors(self):
        (r_local, local, _), (r_remote, remote, _) = self.local, self.remote
        self.assertEqual(r_remote.returncode, 0, r_remote.stdout + r_remote.stderr)
        self.assertEqual(r_local.returncode, 0, r_local.stdout + r_local.stderr)
        self.assertEqual(self.verdicts(remote), self.verdicts(local))
        by_id = {c["id"]: c for c in remote["cases"]}
        self.assertEqual(by_id["allreduce"]["outcome"] in ("pass", "warn"), True)
        self.assertEqual(by_id["pfc_storm"]["outcome"], "expected_fail")

    def test_the_mirrors_see_what_the_nics_and_the_injector_did(self):
        _, remote, _ = self.remote
        by_id = {c["id"]: c for c in remote["cases"]}
        m = by_id["allreduce"]["attempts"][-1]["metrics"]
        # As with local mirrors (run_cli_test): the CNPs crossing the spines are the NICs'.
        self.assertLessEqual(abs(m["cnps"] - m["mirror_cnps"]), 0.01 * m["cnps"] + 5, m)
        self.assertEqual(m["capture_coverage"], 1.0)
        storm = by_id["pfc_storm"]["attempts"][-1]
        self.assertGreaterEqual(storm["metrics"]["pfc_storms"], 1)
        self.assertEqual(storm["raw"]["inject"]["exit_code"], 0)
        # Every injected frame reached the collector through the tunnel (and the XON after them).
        injected = json.loads(storm["raw"]["inject"]["output"])
        self.assertEqual(storm["metrics"]["pfc_frames"], injected["frames_sent"] + 1, injected)

    def test_each_capture_point_reports_its_own_session(self):
        _, remote, _ = self.remote
        by_id = {c["id"]: c for c in remote["cases"]}
        captures = by_id["allreduce"]["attempts"][-1]["raw"]["captures"]
        self.assertEqual(sorted(c["point"] for c in captures), ["s1-mirror", "s2-mirror"])
        for c in captures:
            sessions = c["analysis"]["mirror"]["sessions"]
            spine = int(c["point"][1])
            self.assertEqual([s["id"] for s in sessions], [spine], c["point"])
            self.assertEqual(sessions[0]["kind"], "erspan3")
            # The suite's `roce` filter ran inside the tunnel: the capture numbered every frame of
            # the session before it and found none lost; the analysis leaves the numbers alone.
            self.assertEqual(c["lost_upstream"], 0)
            self.assertEqual(c["coverage"], 1.0)
            self.assertIsNone(sessions[0]["lost"])
            self.assertGreater(sessions[0]["switch_timed"], 0)
            self.assertEqual(c["analysis"]["mirror"]["malformed"], 0)


if __name__ == "__main__":
    if not ROCEHIL or not os.access(ROCEHIL, os.X_OK):
        sys.exit(f"usage: {sys.argv[0]} PATH/TO/rocehil (or set ROCEHIL_BIN)")
    unittest.main()
