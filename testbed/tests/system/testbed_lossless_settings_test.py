"""System tests of the lossless switches' knobs as settings on a real `testbed up --lossless`:
`rocehil testbed set` and `testbed settings`, and `rocehil run --set`, held against what each
switch's configuration file holds (read here with json), each forwarding process's own log ("knobs
read again"), the hosts' tbf as tc prints it, and the state file.

Usage: python3 testbed_lossless_settings_test.py PATH/TO/rocehil   (as root)
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

ROCEHIL = None
TESTBED_ID = "tblset"  # no other test's: two testbeds may be up at once
DEFAULTS = {"switch.uplink_mbps": "400", "switch.host_mbps": "1000", "switch.ecn_enable": "1",
            "switch.pfc_priorities": "3,4", "switch.wred_kmin_kb": "50",
            "switch.wred_kmax_kb": "200", "switch.wred_pmax_percent": "20",
            "switch.xoff_kb": "250", "switch.dscp_to_tc": "default",
            "switch.pfc_watchdog_detection_ms": "200", "switch.pfc_watchdog_restoration_ms": "200"}
# The same defaults as each configuration file writes them (its "knobs" object).
DEFAULT_KNOBS = {"ecn_enable": True, "pfc_priorities": [3, 4], "wred_kmin_kb": 50,
                 "wred_kmax_kb": 200, "wred_pmax_percent": 20, "xoff_kb": 250, "dscp_to_tc": "",
                 "pfc_watchdog_detection_ms": 200, "pfc_watchdog_restoration_ms": 200}
SUITE = ("schema_version: 1\nname: lossless-settings\ndefaults: {provider: soft}\n"
         "tests:\n  - name: bw\n    workload: bw\n    size: 64K\n"
         "    thresholds: [errors == 0]\n")


def rocehil(*args, check=True, timeout=120):
    result = subprocess.run([ROCEHIL, *args], capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(
            f"rocehil {' '.join(args)} exited {result.returncode}: {result.stderr}")
    return result


def tool(*argv):
    return subprocess.run(argv, capture_output=True, text=True, check=True, timeout=30).stdout


class LosslessSettings(unittest.TestCase):
    """One small --lossless testbed (2 hosts, 2 racks, 1 spine); every test leaves its settings
    as it found them."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="rocehil-tb-lset-")
        rocehil("testbed", "up", "--lossless", "--dir", cls.dir, "--id", TESTBED_ID, "--hosts",
                "2", "--racks", "2", "--spines", "1", "--json", "--quiet", timeout=300)
        status = json.loads(rocehil("testbed", "status", "--dir", cls.dir, "--json").stdout)
        cls.namespaces = status["namespaces"]

    @classmethod
    def tearDownClass(cls):
        rocehil("testbed", "down", "--dir", cls.dir, "--quiet", check=False, timeout=300)
        shutil.rmtree(cls.dir, ignore_errors=True)

    def settings(self):
        out = json.loads(rocehil("testbed", "settings", "--dir", self.dir, "--json").stdout)
        self.assertEqual(out["schema_version"], 1)
        return out["settings"]

    def switches(self):
        return [n for n in self.namespaces if n["role"] in ("leaf", "spine")]

    def hosts(self):
        return [n for n in self.namespaces if n["role"] == "host"]

    def configs(self):
        """Every switch's configuration file, parsed, by namespace."""
        out = {}
        for ns in self.switches():
            with open(os.path.join(self.dir, "switchd", ns["netns"] + ".json")) as f:
                out[ns["netns"]] = json.load(f)
        return out

    def config_bytes(self):
        out = {}
        for path in sorted(glob.glob(os.path.join(self.dir, "switchd", "*.json"))):
            with open(path, "rb") as f:
                out[path] = f.read()
        return out

    def reloads(self):
        """How many times each switch's forwarding process has said it read its knobs again."""
        out = {}
        for ns in self.switches():
            with open(os.path.join(self.dir, "run", ns["netns"] + ".switchd.log")) as f:
                out[ns["netns"]] = f.read().count("knobs read again")
        return out

    def wait_for_reloads(self, before):
        """Each process logs the reload once it has read the file (after `set` returned)."""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            now = self.reloads()
            if all(now[n] > before[n] for n in before):
                return now
            time.sleep(0.1)
        self.fail(f"not every forwarding process read its knobs again: {before} -> "
                  f"{self.reloads()}")

    def host_tbf(self):
        """(rate as tc prints it, latency) of each host's fabric port's root tbf; None unshaped."""
        out = {}
        for ns in self.hosts():
            for i in ns["interfaces"]:
                if not re.match(r"^h\d+-l\d+$", i["link"]):
                    continue
                text = tool("tc", "-n", ns["netns"], "qdisc", "show", "dev", i["name"])
                shown = re.search(r"qdisc tbf \S+ root .*rate (\S+) .*lat(?:ency)? (\S+)", text)
                out[(ns["netns"], i["name"])] = shown.groups() if shown else None
        return out

    def port_rates(self):
        """Each switch port's pacing in its configuration: {(netns, ifname): mbps}."""
        return {(netns, p["ifname"]): p["mbps"] for netns, c in self.configs().items()
                for p in c["ports"]}

    def ports_of(self, kind):
        pattern = r"^h\d+-l\d+$" if kind == "host" else r"^l\d+-s\d+$"
        return {(n["netns"], i["name"]) for n in self.switches() for i in n["interfaces"]
                if re.match(pattern, i["link"])}

    def test_1_defaults_read_back_from_the_switches_and_hosts(self):
        self.assertEqual(self.settings(), DEFAULTS)
        for netns, config in self.configs().items():
            self.assertEqual(config["knobs"], DEFAULT_KNOBS, netns)
        rates = self.port_rates()
        for port in self.ports_of("host"):
            self.assertEqual(rates[port], 1000, port)
        for port in self.ports_of("uplink"):
            self.assertEqual(rates[port], 400, port)
        for port, tbf in self.host_tbf().items():
            self.assertEqual(tbf, ("1Gbit", "1ms"), port)
        text = rocehil("testbed", "settings", "--dir", self.dir).stdout
        self.assertEqual(text.splitlines(), [f"{k}={v}" for k, v in DEFAULTS.items()])

    def test_2_set_knobs_rewrites_every_switch_and_each_process_reads_them(self):
        before = self.reloads()
        r = rocehil("testbed", "set", "switch.xoff_kb=300", "switch.ecn_enable=0", "--dir",
                    self.dir)
        self.assertEqual(r.stdout, "switch.ecn_enable=0\nswitch.xoff_kb=300\n")
        for netns, config in self.configs().items():
            self.assertEqual(config["knobs"], {**DEFAULT_KNOBS, "xoff_kb": 300,
                                               "ecn_enable": False}, netns)
        self.wait_for_reloads(before)
        self.assertEqual(self.settings(), {**DEFAULTS, "switch.xoff_kb": "300",
                                           "switch.ecn_enable": "0"})
        with open(os.path.join(self.dir, "testbed.json")) as f:
            knobs = json.load(f)["options"]["knobs"]
        self.assertEqual((knobs["xoff_kb"], knobs["ecn_enable"]), (300, False))

        # Lists and maps, and WRED's kmin past the old kmax together with kmax.
        rocehil("testbed", "set", "switch.pfc_priorities=none", "switch.dscp_to_tc=46:5,26:3",
                "switch.wred_kmin_kb=600", "switch.wred_kmax_kb=800", "--dir", self.dir)
        for netns, config in self.configs().items():
            k = config["knobs"]
            self.assertEqual((k["pfc_priorities"], k["dscp_to_tc"], k["wred_kmin_kb"],
                              k["wred_kmax_kb"]), ([], "26:3,46:5", 600, 800), netns)
        now = self.settings()
        self.assertEqual((now["switch.pfc_priorities"], now["switch.dscp_to_tc"]),
                         ("none", "26:3,46:5"))

        rocehil("testbed", "set", *(f"{k}={v}" for k, v in DEFAULTS.items()), "--dir", self.dir)
        self.assertEqual(self.settings(), DEFAULTS)
        for netns, config in self.configs().items():
            self.assertEqual(config["knobs"], DEFAULT_KNOBS, netns)

    def test_3_rates_change_the_pacing_and_the_hosts_tbf(self):
        before = self.reloads()
        r = rocehil("testbed", "set", "switch.uplink_mbps=200", "switch.host_mbps=500", "--dir",
                    self.dir)
        self.assertEqual(r.stdout, "switch.uplink_mbps=200\nswitch.host_mbps=500\n")
        rates = self.port_rates()
        for port in self.ports_of("host"):
            self.assertEqual(rates[port], 500, port)
        for port in self.ports_of("uplink"):
            self.assertEqual(rates[port], 200, port)
        for port, tbf in self.host_tbf().items():
            self.assertEqual(tbf, ("500Mbit", "1ms"), port)  # 1 ms of queue, as up writes it
        self.wait_for_reloads(before)
        # No switch port grew a tbf: the processes pace them.
        for ns in self.switches():
            self.assertNotIn("tbf", tool("tc", "-n", ns["netns"], "qdisc", "show"), ns["netns"])
        rocehil("testbed", "set", "switch.uplink_mbps=400", "switch.host_mbps=1000", "--dir",
                self.dir)
        self.assertEqual(self.settings(), DEFAULTS)

    def test_4_bad_values_are_refused_naming_the_setting_and_change_nothing(self):
        files, reloads = self.config_bytes(), self.reloads()
        with open(os.path.join(self.dir, "testbed.json"), "rb") as f:
            state = f.read()
        for args, expected in (
                (["switch.xoff_kb=5"], "switch.xoff_kb=5 is out of range: give 10 to 1000000"),
                (["switch.xoff_kb=300", "switch.pfc_priorities=3,9"],
                 "switch.pfc_priorities: priority 9 is outside 0-7"),
                (["switch.wred_kmin_kb=600"], "switch.wred_kmin_kb=600 is above "
                                              "switch.wred_kmax_kb=200"),
                (["switch.dscp_to_tc=3:3,3:4"], "switch.dscp_to_tc: DSCP 3 is given twice"),
                (["switch.ecn_enable=yes"], "switch.ecn_enable=yes: give 0"),
                (["switch.ecn_mark_mbps=150"], "marking is by queue depth: set "
                                               "switch.wred_kmin_kb/kmax_kb/pmax_percent")):
            r = rocehil("testbed", "set", *args, "--dir", self.dir, check=False)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(expected, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertEqual(self.config_bytes(), files)
        with open(os.path.join(self.dir, "testbed.json"), "rb") as f:
            self.assertEqual(f.read(), state)
        self.assertEqual(self.reloads(), reloads)
        self.assertEqual(self.settings(), DEFAULTS)

    def test_5_a_switch_changed_by_hand_is_named(self):
        spine = [n["netns"] for n in self.switches() if n["role"] == "spine"][0]
        path = os.path.join(self.dir, "switchd", spine + ".json")
        with open(path) as f:
            config = json.load(f)
        config["knobs"]["xoff_kb"] = 999
        with open(path, "w") as f:
            json.dump(config, f)
        r = rocehil("testbed", "settings", "--dir", self.dir, check=False)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn(f"switch.xoff_kb is not the same on every switch: {spine} ({path}) has 999",
                      r.stderr)
        self.assertIn("has 250 (as 2 of 3 switches do)", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        rocehil("testbed", "set", "switch.xoff_kb=250", "--dir", self.dir)
        self.assertEqual(self.settings(), DEFAULTS)

    def test_6_run_set_applies_knobs_records_them_and_puts_them_back(self):
        work = tempfile.mkdtemp(prefix="rocehil-lset-run-")
        try:
            suite = os.path.join(work, "s.yaml")
            with open(suite, "w") as f:
                f.write(SUITE)
            seen = []  # the spine's xoff_kb while the run held it, read from its file
            # Its output goes to files: the run record (--json) is larger than a pipe holds, and
            # nobody reads the pipe while the loop below watches the spine.
            stdout, stderr = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
            r = subprocess.Popen(
                [ROCEHIL, "run", suite, "-i", os.path.join(self.dir, "inventory.yaml"),
                 "--reports", os.path.join(work, "reports"), "--set", "switch.xoff_kb=300",
                 "--set", "switch.wred_kmin_kb=600", "--set", "switch.wred_kmax_kb=800",
                 "--json"], stdout=stdout, stderr=stderr, text=True)
            spine = [n["netns"] for n in self.switches() if n["role"] == "spine"][0]
            while r.poll() is None:
                try:
                    with open(os.path.join(self.dir, "switchd", spine + ".json")) as f:
                        value = json.load(f)["knobs"]["xoff_kb"]
                    if not seen or seen[-1] != value:
                        seen.append(value)
                except (OSError, ValueError):
                    pass  # between a write's truncation and its end
                time.sleep(0.02)
            r.wait(timeout=300)
            stdout.seek(0)
            stderr.seek(0)
            out, err = stdout.read(), stderr.read()
            self.assertEqual(r.returncode, 0, out + err)
            record = json.loads(out)
            in_force = {v["name"]: v["value"] for v in record["settings"]["in_force"]
                        if v["host"] == ""}
            self.assertEqual(in_force, {"switch.xoff_kb": "300", "switch.wred_kmin_kb": "600",
                                        "switch.wred_kmax_kb": "800"})
            changes = {c["name"]: (c["before"], c["after"]) for c in record["settings"]["changes"]}
            self.assertEqual(changes["switch.xoff_kb"], ("250", "300"))
            self.assertTrue(record["settings"]["restored"])
            self.assertIn(300, seen)
            # Put back: every file and the read-back as before the run.
            self.assertEqual(self.settings(), DEFAULTS)
            for netns, config in self.configs().items():
                self.assertEqual(config["knobs"], DEFAULT_KNOBS, netns)
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    ROCEHIL = os.path.abspath(sys.argv.pop(1))
    if os.geteuid() != 0:
        print("testbed system tests need root", file=sys.stderr)
        sys.exit(1)
    unittest.main(verbosity=2)
