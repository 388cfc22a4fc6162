"""System tests of `rocehil inventory validate|show|check|discover` against a real testbed: real
sshd in network namespaces, real ssh, and the answers compared with what the kernel says about
the same interfaces (sysfs read through `ip netns exec`, not through rocehil).

Usage: python3 inventory_cli_test.py PATH/TO/rocehil   (as root)
"""
import filecmp
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

from testbed_fixture import testbed_down, testbed_up

ROCEHIL = None
TB = {}


def rocehil(*args, timeout=180):
    return subprocess.run([ROCEHIL, *args], capture_output=True, text=True, timeout=timeout)


def netns_read(netns, path):
    r = subprocess.run(["ip", "netns", "exec", netns, "cat", path], capture_output=True,
                       text=True, check=True)
    return r.stdout.strip()


def check_json(inventory, *args):
    r = rocehil("inventory", "check", inventory, "--json", *args)
    return r.returncode, json.loads(r.stdout) if r.stdout.strip() else None, r.stderr


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def setUpModule():
    directory, testbed_id, namespaces = testbed_up(ROCEHIL, "rhinv")
    TB.update(dir=directory, id=testbed_id, namespaces=namespaces,
              inventory=os.path.join(directory, "inventory.yaml"))


def tearDownModule():
    if TB:
        testbed_down(ROCEHIL, TB["dir"])


def version():
    return rocehil("--version").stdout.strip()


class ValidateAndShow(unittest.TestCase):
    def test_testbed_inventory_is_valid(self):
        r = rocehil("inventory", "validate", TB["inventory"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("valid: 5 hosts, 4 NICs, 2 racks, 4 switches, 8 links, 2 capture points",
                      r.stdout)

    def test_show_selects_by_expression(self):
        r = rocehil("inventory", "show", TB["inventory"], "--hosts", "label:gpu@1/rack", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([h["name"] for h in json.loads(r.stdout)["hosts"]], ["h1", "h3"])
        r = rocehil("inventory", "show", TB["inventory"], "--hosts", "rack:r9")
        self.assertEqual(r.returncode, 2)
        self.assertIn("matches no host", r.stderr)

    def test_hostile_values_are_refused_and_nothing_runs(self):
        marks = [f"/tmp/rhinv-{os.getpid()}-{n}" for n in ("name", "address", "user")]
        path = write(os.path.join(TB["dir"], "hostile.yaml"), f"""schema_version: 1
hosts:
  - name: "h1;touch {marks[0]}"
    address: 198.19.0.1
    provider: soft
  - name: h2
    address: "$(touch {marks[1]})"
    provider: soft
  - name: h3
    address: 198.19.0.3
    provider: soft
    ssh: {{user: "root`touch {marks[2]}`"}}
""")
        for command in ("validate", "check", "show"):
            r = rocehil("inventory", command, path)
            self.assertEqual(r.returncode, 2, (command, r.stdout, r.stderr))
            places = re.findall(rf"(?m)^(?:rocehil: error: )?{re.escape(path)}:(\d+):(\d+): ", r.stderr)
            self.assertEqual(places, [("3", "11"), ("7", "14"), ("12", "17")], r.stderr)
            self.assertIn("3 errors; nothing was run", r.stderr)
        for mark in marks:
            self.assertFalse(os.path.exists(mark), mark)

    def test_a_64_host_range_expands_and_validates(self):
        path = write(os.path.join(TB["dir"], "range64.yaml"), """schema_version: 1
defaults: {provider: verbs, gid_index: 3, link_gbps: 400}
hosts:
  - name: gpu[001-064]
    address: 10.0.0.[1-64]
    labels: [gpu]
    nics:
      - {device: mlx5_0, netdev: ens1f0np0, ip: "10.10.0.[1-64]", rail: 0}
      - {device: mlx5_1, netdev: ens2f0np0, ip: "10.11.0.[1-64]", rail: 1}
""")
        start = time.monotonic()
        r = rocehil("inventory", "validate", path)
        elapsed = time.monotonic() - start
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("64 hosts, 128 NICs", r.stdout)
        print(f"\n  validate of a 64-host range: {elapsed * 1000:.0f} ms (binary start included)",
              file=sys.stderr)
        hosts = json.loads(rocehil("inventory", "show", path, "--hosts", "gpu[010-012]",
                                   "--json").stdout)["hosts"]
        self.assertEqual([(h["name"], h["address"], h["nics"][1]["ip"]) for h in hosts],
                         [("gpu010", "10.0.0.10", "10.11.0.10"),
                          ("gpu011", "10.0.0.11", "10.11.0.11"),
                          ("gpu012", "10.0.0.12", "10.11.0.12")])


class Check(unittest.TestCase):
    def test_every_testbed_host_is_reachable_and_soft_only(self):
        code, report, err = check_json(TB["inventory"])
        self.assertEqual(code, 0, err)
        self.assertEqual(report["schema_version"], 1)
        self.assertEqual(report["summary"], {"ok": 0, "soft_only": 5, "failed": 0,
                                             "unreachable": 0})
        for host in report["hosts"]:
            self.assertEqual(host["verdict"], "soft only", host)
            checks = {c["name"]: c for c in host["checks"]}
            self.assertEqual(checks["agent"]["status"], "ok", checks["agent"])
            self.assertEqual(host["facts"]["agent_version"], version())
            if host["name"] == "cap":
                continue
            netns = TB["namespaces"][host["name"]]["netns"]
            nic = f"{TB['id']}-nic0"
            self.assertEqual(checks[f"netdev {nic}"]["status"], "ok", checks)
            facts = {n["name"]: n for n in host["facts"]["netdevs"]}[nic]
            # The kernel's own view of the same interface.
            self.assertEqual(facts["mtu"], int(netns_read(netns, f"/sys/class/net/{nic}/mtu")))
            self.assertEqual(facts["mac"], netns_read(netns, f"/sys/class/net/{nic}/address"))
            ip = subprocess.run(["ip", "netns", "exec", netns, "ip", "-o", "-4", "addr", "show",
                                 "dev", nic], capture_output=True, text=True).stdout.split()[3]
            self.assertIn(ip, facts["addresses"])

    def test_text_report_has_a_row_per_host_and_the_summary(self):
        r = rocehil("inventory", "check", TB["inventory"], "--hosts", "rack:r1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"(?m)^\s*h1\s+198\.19\.\d+\.11\s+soft only")
        self.assertNotRegex(r.stdout, r"(?m)^\s*h3\s")
        self.assertIn("2 hosts: 0 ok, 2 soft only, 0 failed, 0 unreachable", r.stdout)

    def test_a_stopped_sshd_is_named_and_the_others_still_checked(self):
        netns = TB["namespaces"]["h4"]["netns"]
        pid_file = os.path.join(TB["dir"], "run", netns + ".sshd.pid")
        with open(pid_file) as f:
            os.kill(int(f.read().strip()), signal.SIGTERM)
        time.sleep(0.3)
        try:
            self.check_with_h4_down()
        finally:
            # The other tests want h4 back: the same sshd, started as the testbed starts it.
            subprocess.run(["ip", "netns", "exec", netns, "/usr/sbin/sshd", "-f",
                            os.path.join(TB["dir"], "ssh", netns + ".sshd_config"), "-E",
                            os.path.join(TB["dir"], "run", netns + ".sshd.log")], check=True)
            time.sleep(0.3)

    def check_with_h4_down(self):
        code, report, err = check_json(TB["inventory"], "--hosts", "label:gpu")
        self.assertEqual(code, 3, err)
        verdicts = {h["name"]: h for h in report["hosts"]}
        self.assertEqual(verdicts["h4"]["verdict"], "unreachable")
        self.assertIn("Connection refused", verdicts["h4"]["unreachable"])
        for name in ("h1", "h2", "h3"):
            self.assertEqual(verdicts[name]["verdict"], "soft only")
        self.assertEqual(report["summary"]["unreachable"], 1)

    def test_deploy_copies_the_agent_where_it_is_missing(self):
        folder = tempfile.mkdtemp(prefix="rhinv-deploy")
        self.addCleanup(shutil.rmtree, folder, True)
        target = folder + "/bin/rocehil"
        with open(TB["inventory"]) as f:
            text = f.read()
        text = re.sub(r"(?m)^  agent: .*$", f"  agent: {target}", text)
        path = write(os.path.join(TB["dir"], "deploy.yaml"), text)
        code, report, err = check_json(path, "--hosts", "h1")
        self.assertEqual(code, 1, err)
        agent = {c["name"]: c for c in report["hosts"][0]["checks"]}["agent"]
        self.assertEqual(agent["status"], "fail")
        self.assertIn("--deploy", agent["detail"])
        code, report, err = check_json(path, "--hosts", "h1", "--deploy=binary")
        self.assertEqual(code, 0, err)
        checks = {c["name"]: c for c in report["hosts"][0]["checks"]}
        self.assertIn("copied", checks["deploy"]["detail"])
        self.assertEqual(checks["agent"]["status"], "ok")
        self.assertTrue(filecmp.cmp(target, ROCEHIL, shallow=False))
        self.assertTrue(os.access(target, os.X_OK))
        # Once there, nothing is copied again, and the host is told so.
        code, report, err = check_json(path, "--hosts", "h1", "--deploy=binary")
        self.assertEqual(code, 0, err)
        checks = {c["name"]: c for c in report["hosts"][0]["checks"]}
        self.assertIn("nothing copied", checks["deploy"]["detail"])

    def test_deploy_usage_errors_name_the_fix(self):
        for args, words in ((["--deploy"], "--package"),
                            (["--deploy=binary", "--package", ROCEHIL], "--package is for"),
                            (["--package", ROCEHIL], "goes with --deploy"),
                            (["--deploy", "--package", ROCEHIL], "not a Debian package"),
                            (["--deploy=rsync"], "rsync")):
            r = rocehil("inventory", "check", TB["inventory"], "--hosts", "h1", *args)
            self.assertEqual(r.returncode, 2, (args, r.stdout, r.stderr))
            self.assertIn(words, r.stderr.strip().splitlines()[0], args)


class Discover(unittest.TestCase):
    def test_skeleton_validates_and_matches_the_testbed(self):
        config = os.path.join(TB["dir"], "ssh", "config")
        r = rocehil("inventory", "discover", "h1", "h3", "cap", "--ssh-config", config)
        self.assertEqual(r.returncode, 0, r.stderr)
        path = write(os.path.join(TB["dir"], "discovered.yaml"), r.stdout)
        v = rocehil("inventory", "validate", path, "--json")
        self.assertEqual(v.returncode, 0, v.stdout + v.stderr + r.stdout)
        found = {h["name"]: h for h in json.loads(v.stdout)["inventory"]["hosts"]}
        self.assertEqual(sorted(found), ["cap", "h1", "h3"])
        for name in ("h1", "h3"):
            nics = found[name]["nics"]
            self.assertEqual(len(nics), 1, nics)
            self.assertEqual(nics[0]["netdev"], f"{TB['id']}-nic0")
            self.assertEqual(nics[0]["ip"], TB["namespaces"][name]["fabric_address"])
            self.assertEqual(found[name]["address"], TB["namespaces"][name]["sshd"]["address"])
        self.assertEqual(found["cap"]["nics"], [])

    def test_unreachable_host_is_reported_not_fatal(self):
        config = os.path.join(TB["dir"], "ssh", "config")
        r = rocehil("inventory", "discover", "h1", "198.19.255.254", "--ssh-config", config,
                    "--timeout", "3")
        self.assertEqual(r.returncode, 3)
        self.assertIn("198.19.255.254: not reachable", r.stderr)
        self.assertIn("- name: h1", r.stdout)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    ROCEHIL = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
