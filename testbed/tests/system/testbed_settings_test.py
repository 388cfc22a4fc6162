"""System tests of `rocehil testbed settings` and `rocehil testbed set`: a real fabric's switch
settings changed while it runs, read back by rocehil and checked with nft's and tc's own text.

Usage: python3 testbed_settings_test.py PATH/TO/rocehil   (as root)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROCEHIL = None
DEFAULTS = {"switch.ecn_mark_mbps": "300", "switch.uplink_mbps": "400", "switch.host_mbps": "1000"}


def rocehil(*args, check=True):
    result = subprocess.run([ROCEHIL, *args], capture_output=True, text=True, timeout=60)
    if check and result.returncode != 0:
        raise AssertionError(
            f"rocehil {' '.join(args)} exited {result.returncode}: {result.stderr}")
    return result


def tool(*argv):
    return subprocess.run(argv, capture_output=True, text=True, check=True, timeout=30).stdout


def packets_per_second(mbps):
    """The marking rule's rate: packets of 1068 bytes (a RoCEv2 packet with 1024 bytes of
    payload, scripts.hpp), rounded to the nearest."""
    return max(1, round(mbps * 1_000_000 / 8 / 1068))


class Settings(unittest.TestCase):
    """One small testbed (2 hosts, 2 racks, 1 spine) with the default rates; every test leaves
    them as it found them."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="rocehil-tb-settings-")
        up = json.loads(rocehil("testbed", "up", "--dir", cls.dir, "--hosts", "2", "--racks", "2",
                                "--spines", "1", "--json", "--quiet").stdout)
        cls.id = up["id"]
        status = json.loads(rocehil("testbed", "status", "--dir", cls.dir, "--json").stdout)
        cls.namespaces = status["namespaces"]

    @classmethod
    def tearDownClass(cls):
        rocehil("testbed", "down", "--dir", cls.dir, "--quiet", check=False)
        shutil.rmtree(cls.dir, ignore_errors=True)

    def settings(self):
        out = json.loads(rocehil("testbed", "settings", "--dir", self.dir, "--json").stdout)
        self.assertEqual(out["schema_version"], 1)
        return out["settings"]

    def ports(self, kind):
        """(netns, interface) of every host-leaf ("host") or leaf-spine ("uplink") port."""
        pattern = r"^h\d+-l\d+$" if kind == "host" else r"^l\d+-s\d+$"
        return [(n["netns"], i["name"]) for n in self.namespaces for i in n["interfaces"]
                if re.match(pattern, i["link"])]

    def switches(self):
        return [n for n in self.namespaces if n["role"] in ("leaf", "spine")]

    def assert_kernel_holds(self, ecn_mbps, uplink_mbps, host_mbps):
        """What nft and tc print, in their own text, in every namespace."""
        pps = packets_per_second(ecn_mbps)
        for ns in self.switches():
            text = tool("ip", "netns", "exec", ns["netns"], "nft", "list", "table", "ip",
                        f"rocehil_{self.id}")
            rates = re.findall(r'oifname "([^"]+)" .* limit rate over (\d+)/second', text)
            fabric = [i["name"] for i in ns["interfaces"]
                      if re.match(r"^[hl]\d+-[ls]\d+$", i["link"])]
            self.assertEqual(sorted(r[0] for r in rates), sorted(fabric), text)
            self.assertEqual({int(r[1]) for r in rates}, {pps}, text)
        for kind, mbps in (("uplink", uplink_mbps), ("host", host_mbps)):
            for netns, ifname in self.ports(kind):
                text = tool("tc", "-n", netns, "qdisc", "show", "dev", ifname)
                shown = re.search(r"qdisc tbf \S+ root .*rate (\S+)", text)
                if mbps == 0:
                    self.assertIsNone(shown, f"{netns} {ifname}: {text}")
                else:
                    self.assertIsNotNone(shown, f"{netns} {ifname}: {text}")
                    expected = f"{mbps // 1000}Gbit" if mbps % 1000 == 0 else f"{mbps}Mbit"
                    self.assertEqual(shown.group(1), expected, f"{netns} {ifname}: {text}")

    def test_1_defaults_read_back_as_up_set_them(self):
        self.assertEqual(self.settings(), DEFAULTS)
        self.assert_kernel_holds(300, 400, 1000)
        text = rocehil("testbed", "settings", "--dir", self.dir).stdout
        self.assertEqual(text, "switch.ecn_mark_mbps=300\nswitch.uplink_mbps=400\n"
                               "switch.host_mbps=1000\n")

    def test_2_set_changes_every_namespace_and_reads_back(self):
        r = rocehil("testbed", "set", "switch.ecn_mark_mbps=150", "switch.uplink_mbps=200",
                    "switch.host_mbps=0", "--dir", self.dir)
        self.assertEqual(r.stdout, "switch.ecn_mark_mbps=150\nswitch.uplink_mbps=200\n"
                                   "switch.host_mbps=0\n")
        self.assertEqual(self.settings(), {"switch.ecn_mark_mbps": "150",
                                           "switch.uplink_mbps": "200", "switch.host_mbps": "0"})
        self.assertEqual(packets_per_second(150), 17556)
        self.assert_kernel_holds(150, 200, 0)
        # The state file, and so `status`, know the new rates.
        with open(os.path.join(self.dir, "testbed.json")) as f:
            options = json.load(f)["options"]
        self.assertEqual((options["ecn_mark_mbps"], options["uplink_mbps"], options["host_mbps"]),
                         (150, 200, 0))
        status = json.loads(rocehil("testbed", "status", "--dir", self.dir, "--json").stdout)
        self.assertTrue(status["healthy"])
        shaped = {(n["netns"], i["name"]): i["shaped_mbps"] for n in status["namespaces"]
                  for i in n["interfaces"]}
        for port in self.ports("uplink"):
            self.assertEqual(shaped[port], 200, port)
        for port in self.ports("host"):
            self.assertEqual(shaped[port], 0, port)

        rocehil("testbed", "set", *(f"{k}={v}" for k, v in DEFAULTS.items()), "--dir", self.dir)
        self.assertEqual(self.settings(), DEFAULTS)
        self.assert_kernel_holds(300, 400, 1000)

    def test_3_a_port_changed_by_hand_is_named(self):
        netns, ifname = self.ports("uplink")[0]
        tool("tc", "-n", netns, "qdisc", "replace", "dev", ifname, "root", "tbf", "rate",
             "250mbit", "burst", "31250", "latency", "5ms")
        r = rocehil("testbed", "settings", "--dir", self.dir, check=False)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn(f"switch.uplink_mbps is not the same on every port: {netns} {ifname} has "
                      "250", r.stderr)
        self.assertIn("has 400", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        # Setting it again puts every port back in line.
        rocehil("testbed", "set", "switch.uplink_mbps=400", "--dir", self.dir)
        self.assertEqual(self.settings(), DEFAULTS)

    def test_4_bad_settings_are_refused_before_anything_changes(self):
        for args, expected in ((["switch.uplink_mbps=200", "switch.mtu=1500"],
                                "'switch.mtu' is not a testbed switch setting"),
                               (["switch.host_mbps=200", "switch.ecn_mark_mbps=0"],
                                "switch.ecn_mark_mbps=0: out of range"),
                               (["switch.uplink_mbps=fast"], "'fast' is not a whole number"),
                               (["switch.uplink_mbps"], "is not KEY=VALUE"),
                               # The lossless switches' knobs need a testbed that has them.
                               (["switch.uplink_mbps=200", "switch.xoff_kb=300"],
                                "switch.xoff_kb: a knob of the lossless switches, and testbed "
                                f"{self.id} has none; bring it up with 'rocehil testbed up "
                                "--lossless")):
            r = rocehil("testbed", "set", *args, "--dir", self.dir, check=False)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(expected, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertEqual(self.settings(), DEFAULTS)


if __name__ == "__main__":
    ROCEHIL = os.path.abspath(sys.argv.pop(1))
    if os.geteuid() != 0:
        print("testbed system tests need root", file=sys.stderr)
        sys.exit(1)
    unittest.main(verbosity=2)
