"""System tests of `rocehil testbed`: a real fabric of namespaces, checked with tools that are not
rocehil (ping, ssh, kernel interface counters, tcpdump, sockets reading IP_RECVTOS).

Usage: python3 testbed_cli_test.py PATH/TO/rocehil   (as root)
"""
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import yaml

ROCEHIL = None
HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = "/usr/bin/python3"
TRAFFIC = os.path.join(HERE, "traffic.py")


def rocehil(*args, check=True, env=None):
    result = subprocess.run([ROCEHIL, *args], capture_output=True, text=True, env=env, timeout=120)
    if check and result.returncode != 0:
        raise AssertionError(f"rocehil {' '.join(args)} exited {result.returncode}: {result.stderr}")
    return result


def in_netns(netns, *argv, **kwargs):
    return subprocess.run(["ip", "netns", "exec", netns, *argv], capture_output=True, text=True,
                          timeout=60, **kwargs)


def tx_packets(netns, ifname):
    out = subprocess.run(["ip", "-n", netns, "-j", "-s", "link", "show", "dev", ifname],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)[0]["stats64"]["tx"]["packets"]


def leftovers(testbed_id):
    """Everything on the machine that still carries the id."""
    found = []
    netns = subprocess.run(["ip", "-j", "netns", "list"], capture_output=True, text=True).stdout
    found += [n["name"] for n in json.loads(netns or "[]") if f"-{testbed_id}-" in n["name"]]
    links = json.loads(subprocess.run(["ip", "-j", "link", "show"], capture_output=True,
                                      text=True).stdout)
    found += [l["ifname"] for l in links if l["ifname"].startswith(testbed_id + "-")]
    procs = subprocess.run(["pgrep", "-af", f"rocehil-{testbed_id}-"], capture_output=True,
                           text=True).stdout
    found += [p for p in procs.splitlines() if "pgrep" not in p]
    tables = subprocess.run(["nft", "list", "tables"], capture_output=True, text=True).stdout
    found += [t for t in tables.splitlines() if f"rocehil_{testbed_id}" in t]
    # lldpd rewrites its command line: it, and anything else left in a namespace of the testbed
    # whose name is gone, shows by the testbed's sockets in its network namespace.
    sockets = f"/run/rocehil/rocehil-{testbed_id}-"
    own = os.readlink("/proc/self/ns/net")
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/ns/net") == own:
                continue
            with open(f"/proc/{pid}/net/unix") as f:
                if sockets in f.read():
                    with open(f"/proc/{pid}/comm") as c:
                        found.append(f"pid {pid} ({c.read().strip()})")
        except OSError:
            pass  # gone, or a zombie
    if os.path.isdir("/run/rocehil"):
        found += [f for f in os.listdir("/run/rocehil") if f.startswith(f"rocehil-{testbed_id}-")]
    return found


class Fabric(unittest.TestCase):
    """One default testbed (4 hosts, 2 racks, 2 spines) shared by the read-only checks."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="rocehil-tb-")
        started = time.monotonic()
        cls.up = json.loads(rocehil("testbed", "up", "--dir", cls.dir, "--json", "--quiet").stdout)
        cls.up_seconds = time.monotonic() - started
        cls.id = cls.up["id"]
        cls.status = json.loads(rocehil("testbed", "status", "--dir", cls.dir, "--json").stdout)
        cls.ns = {n["name"]: n for n in cls.status["namespaces"]}
        with open(os.path.join(cls.dir, "inventory.yaml")) as f:
            cls.inventory = yaml.safe_load(f)

    @classmethod
    def tearDownClass(cls):
        rocehil("testbed", "down", "--dir", cls.dir, check=False)
        shutil.rmtree(cls.dir, ignore_errors=True)

    def netns(self, name):
        return self.ns[name]["netns"]

    def hosts(self):
        return [n for n in self.status["namespaces"] if n["role"] == "host"]

    def send(self, src, dst, ports, count, payload=100, tos="0x02", gap_us=0):
        ports = ",".join(str(p) for p in ports)
        r = in_netns(self.netns(src), PYTHON, TRAFFIC, "send", self.ns[src]["fabric_address"],
                     self.ns[dst]["fabric_address"], ports, str(count), str(payload), tos,
                     str(gap_us))
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)["sent"]

    def spine_tx(self, spine, toward_leaf):
        return tx_packets(self.netns(spine), f"{self.id}-{toward_leaf}")

    def test_status_is_healthy_and_describes_every_namespace(self):
        s = self.status
        self.assertTrue(s["healthy"])
        self.assertEqual(s["schema_version"], 1)
        roles = sorted(n["role"] for n in s["namespaces"])
        self.assertEqual(roles, ["capture", "host", "host", "host", "host", "leaf", "leaf",
                                 "spine", "spine"])
        h3 = self.ns["h3"]
        self.assertEqual(h3["rack"], 2)
        self.assertIn("198.18.2.11/32", h3["addresses"])
        nic = next(i for i in h3["interfaces"] if i["link"] == "h3-l2")
        self.assertEqual(nic["links_to"], {"namespace": "l2", "interface": f"{self.id}-h3"})
        self.assertTrue(h3["sshd"]["answers"], h3["sshd"])
        m1 = next(i for i in self.ns["cap"]["interfaces"] if i["name"] == f"{self.id}-m1")
        self.assertEqual(m1["mirrors"]["links"], ["l1-s1", "l2-s1"])
        self.assertEqual(m1["links_to"]["namespace"], "s1")
        for n in s["namespaces"]:
            for a in n["addresses"]:
                first, second = (int(x) for x in a.split(".")[:2])
                self.assertTrue(first == 198 and second in (18, 19), a)  # 198.18.0.0/15 only

    def test_every_host_reaches_every_other(self):
        for src in self.hosts():
            for dst in self.hosts():
                if src is dst:
                    continue
                r = in_netns(src["netns"], "ping", "-c", "1", "-W", "2", dst["fabric_address"])
                self.assertEqual(r.returncode, 0, f"{src['name']} -> {dst['name']}: {r.stdout}")

    def test_ssh_with_the_inventory_key_runs_a_command_in_each_host(self):
        ssh = self.inventory["defaults"]["ssh"]
        for host in self.inventory["hosts"]:
            argv = ["ssh", "-i", ssh["identity"], "-o", f"UserKnownHostsFile={ssh['known_hosts']}",
                    "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "-p", str(ssh["port"])]
            for option in ssh["options"]:
                argv += ["-o", option]
            r = subprocess.run(argv + [f"{ssh['user']}@{host['address']}", "ip netns identify $$"],
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.strip(), host["netns"])
        # The session's shell is not top-level (sshd sets SHLVL=1), so bash does not source
        # root's ~/.bashrc for every command the controller runs (pyenv's init there took half a
        # second of CPU a session). Unset, bash would make it 1.
        if os.path.basename(pwd.getpwnam(ssh["user"]).pw_shell) == "bash":
            r = subprocess.run(argv + [f"{ssh['user']}@{self.inventory['hosts'][0]['address']}",
                                       "echo $SHLVL"],
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(r.stdout.strip(), "2", r.stderr)
        # Key-only: without the key, the server offers nothing else.
        r = subprocess.run(["ssh", "-F", "/dev/null", "-o", "BatchMode=yes", "-o",
                            "PubkeyAuthentication=no", "-o",
                            f"UserKnownHostsFile={ssh['known_hosts']}",
                            f"root@{self.ns['h1']['sshd']['address']}", "true"],
                           capture_output=True, text=True, timeout=30)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("Permission denied (publickey)", r.stderr)

    def test_sshd_listens_only_on_the_management_address(self):
        r = in_netns(self.netns("h1"), "ss", "-Htln")
        listening = [line.split()[3] for line in r.stdout.splitlines()]
        self.assertEqual(listening, [f"{self.ns['h1']['sshd']['address']}:22"])

    def test_ecmp_spreads_source_ports_over_every_spine(self):
        before = {s: self.spine_tx(s, "l2") for s in ("s1", "s2")}
        sent = self.send("h1", "h3", range(40000, 40064), 10)
        delta = {s: self.spine_tx(s, "l2") - before[s] for s in before}
        print(f"\n  64 source ports x 10 packets h1 -> h3: spine deltas {delta}", file=sys.stderr)
        for spine, packets in delta.items():
            self.assertGreater(packets, 0, f"no packet crossed {spine}: {delta}")
        # A few more than sent: ARP refreshes cross the links too.
        self.assertTrue(sent <= sum(delta.values()) <= sent + 6, delta)

    def test_a_fixed_source_port_always_takes_the_same_spine(self):
        for port in (50001, 50002, 50003):
            chosen = set()
            for _ in range(4):
                before = {s: self.spine_tx(s, "l2") for s in ("s1", "s2")}
                self.send("h2", "h4", [port], 20)
                delta = {s: self.spine_tx(s, "l2") - before[s] for s in before}
                busy = [s for s, d in delta.items() if d >= 20]
                self.assertEqual(len(busy), 1, f"port {port}: {delta}")
                chosen.add(busy[0])
            self.assertEqual(len(chosen), 1, f"port {port} moved between spines: {chosen}")

    def test_mirror_interface_sees_what_crossed_its_spine(self):
        cap = self.netns("cap")
        captures = {}
        for spine in ("s1", "s2"):
            path = os.path.join(self.dir, f"{spine}.pcap")
            p = subprocess.Popen(["ip", "netns", "exec", cap, "tcpdump", "-i", f"{self.id}-m{spine[1]}",
                                  "-nn", "-s", "128", "--immediate-mode", "-U", "-Z", "root",
                                  "-w", path],
                                 stderr=subprocess.PIPE, text=True)
            # tcpdump says "listening on" once its socket is bound.
            self.assertIn("listening on", p.stderr.readline())
            captures[spine] = (p, path)
        ports = [f"{self.id}-l1", f"{self.id}-l2"]
        before = {s: sum(tx_packets(self.netns(s), p) for p in ports) for s in captures}
        self.send("h1", "h3", range(41000, 41032), 20)   # rack 1 -> rack 2
        self.send("h4", "h2", range(42000, 42032), 20)   # rack 2 -> rack 1
        time.sleep(0.2)
        after = {s: sum(tx_packets(self.netns(s), p) for p in ports) for s in captures}
        for spine, (p, path) in captures.items():
            p.send_signal(signal.SIGINT)
            _, stats = p.communicate(timeout=10)
            # Frames the capture itself lost would look like frames the mirror never copied.
            self.assertRegex(stats, r"(?m)^0 packets dropped by kernel$")
            counted = subprocess.run(["tcpdump", "-r", path, "-nn"], capture_output=True,
                                     text=True).stdout.count("\n")
            crossed = after[spine] - before[spine]
            print(f"\n  {spine}: {crossed} packets left the spine, mirror captured {counted}",
                  file=sys.stderr)
            self.assertGreater(crossed, 100)
            self.assertLessEqual(abs(counted - crossed), 4, spine)

    def receive_while_sending(self, count, tos, gap_us, payload=1000):
        receiver = subprocess.Popen(
            ["ip", "netns", "exec", self.netns("h3"), PYTHON, TRAFFIC, "recv",
             self.ns["h3"]["fabric_address"], "500"], stdout=subprocess.PIPE, text=True)
        self.assertIn("ready", receiver.stdout.readline())
        self.send("h1", "h3", [43000], count, payload, tos, gap_us)
        out, _ = receiver.communicate(timeout=60)
        self.assertEqual(receiver.returncode, 0)
        return json.loads(out)

    def test_above_the_marking_rate_ecn_capable_packets_arrive_with_ce(self):
        # The marker counts packets (300 Mbit/s is about 34,000 1 KB packets a second), and
        # Python's send loop makes about as many: it once sent 4,000 in 118 ms, under the rate,
        # and nothing was marked. Marking from 100 Mbit/s (about 11,000 a second) leaves a
        # margin of three; the testbed's own rate is put back after.
        rocehil("testbed", "set", "--dir", self.dir, "switch.ecn_mark_mbps=100")
        try:
            fast = self.receive_while_sending(4000, "0x6a", 0)  # DSCP 26, ECT(0), at full speed
            print(f"\n  burst: {fast}", file=sys.stderr)
            self.assertGreater(fast["ecn"]["ce"], 0, fast)
            # 300 packets at one per millisecond (~8 Mb/s) stay below the rate: none marked.
            slow = self.receive_while_sending(300, "0x6a", 1000)
            self.assertEqual(slow["ecn"]["ce"], 0, slow)
            self.assertEqual(slow["received"], 300)
            # Traffic that is not ECN-capable is never marked (RFC 3168).
            plain = self.receive_while_sending(4000, "0x00", 0)
            self.assertEqual(plain["ecn"]["ce"], 0, plain)
            self.assertEqual(plain["ecn"]["not-ect"], plain["received"])
        finally:
            rocehil("testbed", "set", "--dir", self.dir, "switch.ecn_mark_mbps=300")

    def test_the_spine_link_is_the_bottleneck(self):
        # One source port: one path, through one 400 Mb/s uplink, from a host on a 1000 Mb/s link.
        # The shaper bounds the arrival rate whatever this machine's speed; a slow sender can only
        # make it lower, so the bound cannot fail for the wrong reason.
        r = self.receive_while_sending(3000, "0x00", 0, payload=1400)
        span_s = r["arrival_span_ns"] / 1e9
        self.assertGreater(span_s, 0)
        # IP length on the wire: payload + UDP 8 + IPv4 20; tbf counts the Ethernet header too.
        wire_bits = (r["payload_bytes"] + r["received"] * (28 + 14)) * 8
        mbps = wire_bits / span_s / 1e6
        print(f"\n  {r['received']} packets arrived at {mbps:.0f} Mb/s over a 400 Mb/s uplink",
              file=sys.stderr)
        burst_allowance = 50_000 * 8 / span_s / 1e6  # the tbf bucket may pass at once
        self.assertLessEqual(mbps, 400 * 1.05 + burst_allowance)

    def test_inventory_matches_what_status_reads_back(self):
        hosts = {h["name"]: h for h in self.inventory["hosts"]}
        self.assertEqual(sorted(hosts), ["cap", "h1", "h2", "h3", "h4"])
        for name, h in hosts.items():
            self.assertEqual(h["address"], self.ns[name]["sshd"]["address"])
            for nic in h["nics"]:
                self.assertIn(nic["ip"] + "/32", self.ns[name]["addresses"])
        mirrors = {c["interface"]: c["mirrors"] for c in self.inventory["captures"]}
        self.assertEqual(mirrors[f"{self.id}-m2"]["links"], ["l1-s2", "l2-s2"])
        self.assertEqual(mirrors[f"{self.id}-m2"]["direction"], "spine-to-leaf")

    def test_a_second_testbed_does_not_collide(self):
        other = tempfile.mkdtemp(prefix="rocehil-tb2-")
        try:
            up = json.loads(rocehil("testbed", "up", "--dir", other, "--hosts", "2", "--racks",
                                    "1", "--spines", "1", "--json", "--quiet").stdout)
            self.assertNotEqual(up["id"], self.id)
            self.assertNotEqual(up["mgmt_prefix"], self.status["mgmt_prefix"])
            self.assertEqual(rocehil("testbed", "status", "--dir", other).returncode, 0)
            rocehil("testbed", "down", "--dir", other)
            self.assertEqual(leftovers(up["id"]), [])
            # The first testbed is untouched.
            self.assertEqual(rocehil("testbed", "status", "--dir", self.dir).returncode, 0)
        finally:
            rocehil("testbed", "down", "--dir", other, check=False)
            shutil.rmtree(other, ignore_errors=True)


class Lifecycle(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="rocehil-tb-life-")

    def tearDown(self):
        rocehil("testbed", "down", "--dir", self.dir, check=False)
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_up_then_down_takes_seconds_and_leaves_nothing(self):
        started = time.monotonic()
        up = json.loads(rocehil("testbed", "up", "--dir", self.dir, "--json", "--quiet").stdout)
        up_s = time.monotonic() - started
        self.assertTrue(leftovers(up["id"]))  # the check can see a testbed when there is one
        started = time.monotonic()
        down = json.loads(rocehil("testbed", "down", "--dir", self.dir, "--json").stdout)
        down_s = time.monotonic() - started
        print(f"\n  4 hosts, 2 racks, 2 spines: up {up_s:.2f} s, down {down_s:.2f} s",
              file=sys.stderr)
        self.assertEqual(len(down["namespaces_removed"]), 9)
        # 5 sshd (4 hosts and capture), 4 snmpd (2 leaves, 2 spines) and 8 lldpd (hosts and
        # switches) of two processes each (privilege separation); no counters handler, which
        # snmpd starts only when its subtree is first asked for.
        self.assertEqual(down["processes_stopped"], 5 + 4 + 8 * 2)
        self.assertEqual(leftovers(up["id"]), [])
        # Up over an existing testbed is refused, naming the way out.
        up = rocehil("testbed", "up", "--dir", self.dir, check=False)
        self.assertEqual(up.returncode, 0, up.stderr)  # it was down: up works again
        twice = rocehil("testbed", "up", "--dir", self.dir, check=False)
        self.assertEqual(twice.returncode, 2)
        self.assertIn("is already up", twice.stderr)
        self.assertIn("testbed down --dir", twice.stderr)
        rocehil("testbed", "down", "--dir", self.dir)
        again = json.loads(rocehil("testbed", "down", "--dir", self.dir, "--json").stdout)
        self.assertEqual(again["namespaces_removed"], [])
        status = rocehil("testbed", "status", "--dir", self.dir, "--json", check=False)
        self.assertEqual(status.returncode, 3)
        self.assertFalse(json.loads(status.stdout)["healthy"])

    def test_down_cleans_up_after_an_up_killed_part_way(self):
        for delay in (0.02, 0.06, 0.1, 0.14):
            p = subprocess.Popen([ROCEHIL, "testbed", "up", "--dir", self.dir, "--quiet"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(delay)
            p.kill()
            p.wait()
            down = rocehil("testbed", "down", "--dir", self.dir, "--json")
            testbed_id = json.loads(down.stdout)["id"]
            self.assertEqual(leftovers(testbed_id), [], f"killed after {delay} s")

    def test_mirror_both_copies_what_the_spine_sends_and_receives(self):
        up = json.loads(rocehil("testbed", "up", "--dir", self.dir, "--hosts", "2", "--racks", "2",
                                "--spines", "1", "--mirror", "both", "--json", "--quiet").stdout)
        tid = up["id"]
        spine, cap = f"rocehil-{tid}-s1", f"rocehil-{tid}-cap"
        path = os.path.join(self.dir, "both.pcap")
        p = subprocess.Popen(["ip", "netns", "exec", cap, "tcpdump", "-i", f"{tid}-m1", "-nn",
                              "-s", "128", "--immediate-mode", "-U", "-Z", "root", "-w", path],
                             stderr=subprocess.PIPE, text=True)
        self.assertIn("listening on", p.stderr.readline())

        def counters():
            total = 0
            for port in (f"{tid}-l1", f"{tid}-l2"):
                out = subprocess.run(["ip", "-n", spine, "-j", "-s", "link", "show", "dev", port],
                                     capture_output=True, text=True, check=True).stdout
                stats = json.loads(out)[0]["stats64"]
                total += stats["rx"]["packets"] + stats["tx"]["packets"]
            return total

        before = counters()
        r = in_netns(f"rocehil-{tid}-h1", PYTHON, TRAFFIC, "send", "198.18.1.11", "198.18.2.11",
                     "44000,44001", "50", "100", "0x02", "0")
        self.assertEqual(r.returncode, 0, r.stderr)
        time.sleep(0.2)
        crossed_twice = counters() - before
        p.send_signal(signal.SIGINT)
        _, stats = p.communicate(timeout=10)
        self.assertRegex(stats, r"(?m)^0 packets dropped by kernel$")
        counted = subprocess.run(["tcpdump", "-r", path, "-nn"], capture_output=True,
                                 text=True).stdout.count("\n")
        self.assertGreaterEqual(crossed_twice, 200)  # each packet in on l1, out on l2
        self.assertLessEqual(abs(counted - crossed_twice), 4, (counted, crossed_twice))

    def test_status_shows_what_is_missing(self):
        up = json.loads(rocehil("testbed", "up", "--dir", self.dir, "--hosts", "2", "--racks",
                                "1", "--spines", "1", "--json", "--quiet").stdout)
        subprocess.run(["ip", "netns", "del", f"rocehil-{up['id']}-h2"], check=True)
        r = rocehil("testbed", "status", "--dir", self.dir, "--json", check=False)
        self.assertEqual(r.returncode, 3)
        s = json.loads(r.stdout)
        h2 = next(n for n in s["namespaces"] if n["name"] == "h2")
        self.assertFalse(h2["exists"])
        self.assertFalse(h2["sshd"]["answers"])
        text = rocehil("testbed", "status", "--dir", self.dir, check=False).stdout
        self.assertIn("NOT healthy", text)
        self.assertIn("MISSING", text)
        # What ran in the namespace deleted by hand (its lldpd) goes with down all the same.
        rocehil("testbed", "down", "--dir", self.dir)
        self.assertEqual(leftovers(up["id"]), [])


class Errors(unittest.TestCase):
    def test_not_root_is_one_line_and_exit_2(self):
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            ROCEHIL, "testbed", "up", "--dir", "/tmp/rocehil-not-root"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("needs root", r.stderr)

    def test_missing_tool_names_the_package(self):
        with tempfile.TemporaryDirectory() as bin_dir:
            for tool in ("ip", "tc", "sysctl", "sshd", "ssh-keygen"):  # no nft
                os.symlink(shutil.which(tool, path="/usr/sbin:/usr/bin:/sbin:/bin"),
                           os.path.join(bin_dir, tool))
            env = dict(os.environ, PATH=bin_dir)
            r = rocehil("testbed", "up", "--dir", bin_dir + "/tb", check=False, env=env)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("'nft' is not in PATH", r.stderr)
        self.assertIn("nftables", r.stderr)

    def test_bad_options_are_named(self):
        for args, expected in ((["--hosts", "2", "--racks", "3"], "--racks 3 is more than"),
                               (["--id", "Bad-Id"], "--id 'Bad-Id'"),
                               (["--mirror", "sideways"], "--mirror"),
                               (["--mirror-mode", "span"], "--mirror-mode 'span'"),
                               (["--mirror-truncate", "128"], "--mirror-truncate 128 needs"),
                               (["--mirror-mode", "gre", "--mirror-truncate", "8"],
                                "--mirror-truncate 8"),
                               (["--mtu", "100"], "--mtu 100")):
            r = rocehil("testbed", "up", "--dir", "/tmp/rocehil-bad", *args, check=False)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(expected, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)


if __name__ == "__main__":
    ROCEHIL = os.path.abspath(sys.argv.pop(1))
    if os.geteuid() != 0:
        print("testbed system tests need root", file=sys.stderr)
        sys.exit(1)
    unittest.main(verbosity=2)
