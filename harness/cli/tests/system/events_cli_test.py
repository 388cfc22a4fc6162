"""System tests of a suite's `events:` on a real testbed: a link between a leaf and a spine taken
down at 2 s and brought up at 6 s of an 8 s bw case between racks, and a run killed (SIGKILL) with
that link down, whose journal `rocehil settings restore`, or the next `rocehil run`, puts back.

What rocehil says it did is held against the kernel: the link's two ends read with
`ip -j link show` in their namespaces (the UP flag) and the leaf end's tx_bytes in
/sys/class/net/IF/statistics, sampled while the case runs; the journal read from
/run/rocehil/settings. The testbed routes statically: traffic hashed onto the downed link is lost,
not rerouted, so the QPs that the leaf's tx_bytes showed on it end in retry_exceeded and the case
fails naming them, and the switches' ports polled through the case show the link carrying traffic
before the event and nothing after.

Usage: python3 events_cli_test.py PATH/TO/rocehil   (as root)
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import yaml

from testbed_fixture import testbed_down, testbed_up, wait_for

ROCEHIL = None
TB = {}
JOURNALS = "/run/rocehil/settings"
LINK = "l1-s1"
FLAP_SUITE = (
    "schema_version: 1\nname: events\ndefaults: {provider: soft}\n"
    "tests:\n  - name: flap\n    workload: bw\n    hosts: h1,h3\n    qps: 4\n"
    "    duration_s: 8\n    events:\n"
    f"      - {{at_s: 2, action: link_down, link: {LINK}}}\n"
    f"      - {{at_s: 6, action: link_up, link: {LINK}}}\n")
CALM_SUITE = (
    "schema_version: 1\nname: calm\ndefaults: {provider: soft}\n"
    "tests:\n  - name: bw\n    workload: bw\n    hosts: h1,h3\n    duration_s: 1\n")


def setUpModule():
    # A testbed of its own (its id comes from its temporary directory): another engineer's test
    # on this machine never shares its namespaces or journals.
    directory, testbed_id, namespaces = testbed_up(ROCEHIL, "rhevents")
    ends = []
    for name in ("l1", "s1"):
        ns = namespaces[name]
        iface = next(i["name"] for i in ns["interfaces"] if i["link"] == LINK)
        ends.append((ns["netns"], iface))
    TB.update(dir=directory, id=testbed_id, ends=ends,
              inventory=os.path.join(directory, "inventory.yaml"))


def tearDownModule():
    if TB:
        testbed_down(ROCEHIL, TB["dir"])


def admin_up(netns, iface):
    out = subprocess.run(["ip", "-n", netns, "-j", "link", "show", "dev", iface],
                         capture_output=True, text=True, check=True).stdout
    return "UP" in json.loads(out)[0]["flags"]


def link_up():
    """Both ends of the link up (True), both down (False), or they disagree (None)."""
    states = {admin_up(netns, iface) for netns, iface in TB["ends"]}
    return states.pop() if len(states) == 1 else None


def tx_bytes(netns, iface):
    r = subprocess.run(["ip", "netns", "exec", netns, "cat",
                        f"/sys/class/net/{iface}/statistics/tx_bytes"],
                       capture_output=True, text=True, check=True)
    return int(r.stdout)


def journal_path():
    return os.path.join(JOURNALS, f"testbed-{TB['id']}", "@down.json")


def journal():
    try:
        with open(journal_path()) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


class Sampler:
    """The link's state and the leaf end's tx_bytes, read every 50 ms on its own thread, each
    with the wall clock (ns) before and after it was read: (began, up, tx_bytes, ended)."""

    def __init__(self):
        self.samples = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self):
        netns, iface = TB["ends"][0]
        while not self.stop.is_set():
            # The clock before and after the reads: `ip` takes milliseconds, and a read that
            # began before an event may see its result.
            began = time.time_ns()
            state, sent = link_up(), tx_bytes(netns, iface)
            self.samples.append((began, state, sent, time.time_ns()))
            time.sleep(0.05)

    def end(self):
        self.stop.set()
        self.thread.join()
        return self.samples


class EventsTest(unittest.TestCase):
    def setUp(self):
        self.assertTrue(link_up(), "the link was down before the test")
        self.assertIsNone(journal(), "a journal was left before the test")
        self.work = tempfile.mkdtemp(prefix="rhevents")

    def tearDown(self):
        subprocess.run([ROCEHIL, "settings", "restore", "-i", TB["inventory"]],
                       capture_output=True, timeout=120)
        shutil.rmtree(self.work, ignore_errors=True)

    def write_file(self, name, text):
        path = os.path.join(self.work, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def start_run(self, suite_text, name):
        suite = self.write_file(f"{name}.yaml", suite_text)
        reports = os.path.join(self.work, f"reports-{name}")
        proc = subprocess.Popen([ROCEHIL, "run", suite, "-i", TB["inventory"], "--reports",
                                 reports],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        return proc, reports

    def run_json(self, reports):
        [run_id] = [d for d in os.listdir(reports) if os.path.isdir(os.path.join(reports, d))]
        with open(os.path.join(reports, run_id, "run.json")) as f:
            return json.load(f)

    def test_a_link_down_at_2_s_and_up_at_6_s_is_down_between_and_recorded(self):
        sampler = Sampler()
        proc, reports = self.start_run(FLAP_SUITE, "flap")
        out, err = proc.communicate(timeout=300)
        samples = sampler.end()
        self.assertIn(proc.returncode, (0, 1, 3), out + err)
        attempt = self.run_json(reports)["cases"][0]["attempts"][0]
        fabric = attempt["raw"]["fabric_events"]
        events = fabric["events"]
        self.assertEqual([(e["action"], e["target"], e["at_s"]) for e in events],
                         [("link_down", f"link {LINK}", 2), ("link_up", f"link {LINK}", 6)])
        for e in events:
            self.assertTrue(e["happened"], e)
            self.assertTrue(e["ok"], e)
            # Really happened when asked (from the agreed start), within half a second.
            self.assertLess(abs(e["offset_s"] - e["at_s"]), 0.5, e)
            self.assertAlmostEqual((e["started_ns"] - fabric["traffic_start_ns"]) / 1e9,
                                   e["offset_s"], places=6)
        self.assertEqual(fabric["brought_up_at_end"], [])
        down, up = events
        # The kernel read the link down only between the two events' own times, and down
        # throughout, and both ends alike.
        read_down = [s for s in samples if s[1] is False]
        self.assertGreater(len(read_down), 10, "the link was never read down")
        self.assertGreaterEqual(read_down[0][3], down["started_ns"])
        self.assertLessEqual(read_down[-1][0], up["ended_ns"])
        inside = [s for s in samples if down["ended_ns"] < s[0] and s[3] < up["started_ns"]]
        self.assertTrue(inside and all(s[1] is False for s in inside), inside[:3])
        # Nothing left the leaf's end of it while it was down; it carried traffic before.
        self.assertEqual(len({s[2] for s in inside}), 1, "tx_bytes moved while the link was down")
        before = [s for s in samples if s[3] < down["started_ns"]]
        self.assertGreater(before[-1][2], before[0][2])
        # The switches' side: l1 sent s1 traffic in the second before the link went down, and
        # its counter stood still from the first poll after that to the link's return.
        timeline = attempt["raw"]["switch_timeline"]
        switch_down = timeline["events"][0]
        self.assertIn("l1->s1", {f"{c['switch']}->{c['to']}" for c in switch_down["before"]},
                      switch_down)
        (port,) = [p for p in timeline["ports"] if (p["switch"], p["to"]) == ("l1", "s1")]
        at_ns = [timeline["start_ns"] + t * 1e6 for t in port["t_ms"]]
        while_down = [b for t, b in zip(at_ns, port["sent_bytes"])
                      if down["ended_ns"] < t < up["started_ns"]]
        self.assertGreater(len(while_down), 10)
        self.assertEqual(len(set(while_down)), 1, while_down)
        # Static routes: l1 sends the data on by s2 at once (its own nexthop is down), while l2
        # goes on hashing ACKs onto s1, which has no way back to l1. A QP whose ACKs went by s1
        # (l2's port to s1 sent in the second before; its hash is the reverse flow's, not the
        # data's) runs out of retries, and the case fails naming the first such QP with its hosts.
        (acks,) = [p for p in timeline["ports"] if (p["switch"], p["to"]) == ("l2", "s1")] or [None]
        acks_on_s1 = False
        if acks is not None:
            sent = [b for t, b in zip(at_ns, acks["sent_bytes"])
                    if down["started_ns"] - 1e9 <= t <= down["started_ns"]]
            acks_on_s1 = sent[-1] - sent[0] > 50_000
        print(f"\n  ACKs by s1 before the link went down: {acks_on_s1}; "
              f"error: {attempt.get('error')}", file=sys.stderr)
        if acks_on_s1:
            self.assertEqual(proc.returncode, 1, out + err)
            self.assertRegex(attempt["error"]["message"],
                             r"QP 0x[0-9a-f]+: retry_exceeded \(client \(h1\) -> server \(h3\)\)")
        else:
            self.assertNotIn("retry_exceeded", json.dumps(attempt.get("error")))
        self.assertTrue(link_up())
        self.assertIsNone(journal())

    def kill_with_the_link_down(self):
        """A flap run killed (SIGKILL) once the link is down: its journal and the link left so."""
        proc, _ = self.start_run(FLAP_SUITE, "killed")
        try:
            self.assertTrue(wait_for(lambda: link_up() is False, 120), "the link never went down")
            journaled = journal()
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=30)
        # Written before the link went down, so it was there as soon as it was down.
        self.assertIsNotNone(journaled)
        self.assertEqual([(e["setting"], e["netdev"], e["before"], e["wanted"])
                          for e in journaled["entries"]], [("link", LINK, "up", "down")])
        self.assertEqual(journaled["fabric"], f"testbed-{TB['id']}")
        self.assertEqual(journaled["owner"]["pid"], proc.pid)
        time.sleep(5)  # past the link_up's 6 s: nobody brings it up now
        self.assertIs(link_up(), False)
        self.assertIsNotNone(journal())
        return journaled["run"]

    def test_a_killed_run_leaves_the_link_down_and_journaled_until_settings_restore(self):
        run_id = self.kill_with_the_link_down()
        r = subprocess.run([ROCEHIL, "settings", "restore", "-i", TB["inventory"], "--json"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        restored = json.loads(r.stdout)["restored"]
        self.assertIn({"host": f"link {LINK}", "left_by": run_id,
                       "changes": [{"netdev": "", "name": "admin_state", "was": "down",
                                    "put_back": "up"}]}, restored)
        self.assertTrue(link_up())
        self.assertIsNone(journal())

    def test_the_next_run_brings_a_killed_runs_link_up_first_and_says_so(self):
        run_id = self.kill_with_the_link_down()
        proc, reports = self.start_run(CALM_SUITE, "next")
        out, err = proc.communicate(timeout=300)
        self.assertEqual(proc.returncode, 0, out + err)
        self.assertIn(f"rocehil run: settings left changed by run {run_id} on link {LINK} put "
                      f"back: admin_state down -> up", err)
        self.assertTrue(link_up())
        self.assertIsNone(journal())

    def test_a_switch_without_netns_or_link_down_takes_the_link_down_by_snmp_set(self):
        # The testbed's inventory elsewhere (so no testbed is found beside it) and its switches
        # without netns: what is left to take a link down is the snmp write community.
        with open(TB["inventory"]) as f:
            inv = yaml.safe_load(f)
        for sw in inv["switches"]:
            sw.pop("netns", None)
            self.assertIn("write_community_file", sw["snmp"])
        [link] = [l for l in inv["links"] if l["name"] == LINK]
        switch, port = link["a"].split(":")
        [(netns, _)] = [e for e in TB["ends"] if e[1] == port]
        inventory = self.write_file("inventory.yaml", yaml.safe_dump(inv))
        # Down for half a second only: the leaf's end alone goes down, and traffic hashed onto it
        # for long ends the case (RC retries run out) before a later link_up would happen.
        suite = self.write_file("flap.yaml", FLAP_SUITE.replace("at_s: 6,", "at_s: 2.5,"))
        reports = os.path.join(self.work, "reports-snmp")
        samples = []
        stop = threading.Event()

        def sample():
            while not stop.is_set():
                began = time.time_ns()
                state = admin_up(netns, port)
                samples.append((began, state, time.time_ns()))
                time.sleep(0.05)
        sampler = threading.Thread(target=sample)
        sampler.start()
        try:
            r = subprocess.run([ROCEHIL, "run", suite, "-i", inventory, "--reports", reports],
                               capture_output=True, text=True, timeout=300)
        finally:
            stop.set()
            sampler.join()
        self.assertIn(r.returncode, (0, 1, 3), r.stdout + r.stderr)
        fabric = self.run_json(reports)["cases"][0]["attempts"][0]["raw"]["fabric_events"]
        down, up = fabric["events"]
        self.assertTrue(down.get("ok") and up.get("ok"), fabric)
        self.assertEqual(down["did"], f"{switch}: SNMP SET ifAdminStatus {port} down")
        self.assertEqual(up["did"], f"{switch}: SNMP SET ifAdminStatus {port} up")
        # The kernel read the port down between the events, as rocehil read it back.
        inside = [s for s in samples if down["ended_ns"] < s[0] and s[2] < up["started_ns"]]
        self.assertTrue(inside and all(s[1] is False for s in inside), samples[:3])
        self.assertTrue(admin_up(netns, port))


if __name__ == "__main__":
    ROCEHIL = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
