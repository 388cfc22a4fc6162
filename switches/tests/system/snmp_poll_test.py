"""System tests of rocehil's SNMP poller against real agents: Debian's snmpd (net-snmp) serving
the kernel's interface counters inside a network namespace, and agents that misbehave on
purpose (garbage, slow, absent). Every number rocehil reports is compared with what the kernel
says (`ip -s -j link`) or with net-snmp's own `snmpbulkwalk` of the same table.

Usage: python3 snmp_poll_test.py PATH/TO/rocehil   (as root)
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import snmpd_agent

ROCEHIL = None
NS = f"rhsnmp{os.getpid()}"
DIR = None
COMMUNITY = "c0mmunity-for-tests"
AUTH_KEY = "auth-key-for-tests"
PRIV_KEY = "priv-key-for-tests"
PORTS = {"snmpd": 1161, "garbage": 1162, "slow": 1163, "down": 1164}


def ns(*argv, **kw):
    return subprocess.run(["ip", "netns", "exec", NS, *argv], capture_output=True, text=True,
                          **kw)


def rocehil(*args, timeout=60):
    start = time.monotonic()
    r = ns(ROCEHIL, *args, timeout=timeout)
    r.seconds = time.monotonic() - start
    return r


def write(name, text, mode=0o600):
    path = os.path.join(DIR, name)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    return path


def kernel_counters(dev):
    link = json.loads(ns("ip", "-s", "-j", "link", "show", "dev", dev, check=True).stdout)[0]
    return link["stats64"]


def inventory(switches, links=""):
    """An inventory with one soft host and the given switch entries (YAML lines)."""
    return write("inventory.yaml", f"""schema_version: 1
hosts:
  - {{name: h1, provider: soft, launcher: local}}
switches:
{switches}
{links}""")


def v2c(name, port, community_file=None, timeout_ms=300):
    return (f"  - {{name: {name}, role: leaf, address: 127.0.0.1, snmp: {{version: 2c, "
            f"community_file: {community_file or os.path.join(DIR, 'community')}, port: {port}, "
            f"timeout_ms: {timeout_ms}, retries: 1}}}}")


def v3(name, auth_file):
    return (f"  - {{name: {name}, role: spine, address: 127.0.0.1, snmp: {{version: 3, "
            f"user: rocehil, auth: sha, auth_key_file: {auth_file}, priv: aes, "
            f"priv_key_file: {os.path.join(DIR, 'priv')}, port: {PORTS['snmpd']}, "
            f"timeout_ms: 300, retries: 1}}}}")


class Garbage(threading.Thread):
    """Answers every datagram with bytes that are not SNMP."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", port))

    def run(self):
        while True:
            data, peer = self.sock.recvfrom(65535)
            self.sock.sendto(b"\x30\x82\xff\xffnot snmp at all" + data[:7], peer)


class Slow(threading.Thread):
    """Relays to snmpd, holding each answer back: a switch whose agent is overloaded."""

    def __init__(self, port, delay):
        super().__init__(daemon=True)
        self.delay = delay
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", port))

    def run(self):
        while True:
            data, peer = self.sock.recvfrom(65535)
            threading.Thread(target=self.relay, args=(data, peer), daemon=True).start()

    def relay(self, data, peer):
        up = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        up.settimeout(2)
        up.sendto(data, ("127.0.0.1", PORTS["snmpd"]))
        try:
            answer = up.recv(65535)
        except socket.timeout:
            return
        time.sleep(self.delay)
        self.sock.sendto(answer, peer)


def setUpModule():
    global DIR
    DIR = tempfile.mkdtemp(prefix="rocehil-snmp-")
    subprocess.run(["ip", "netns", "add", NS], check=True)
    for cmd in (["ip", "link", "set", "lo", "up"],
                ["sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1"],
                ["sysctl", "-q", "-w", "net.ipv6.conf.default.disable_ipv6=1"],
                ["ip", "link", "add", "swp1", "type", "veth", "peer", "name", "peer1"],
                ["ip", "link", "set", "swp1", "up"], ["ip", "link", "set", "peer1", "up"]):
        ns(*cmd, check=True)
    write("community", COMMUNITY + "\n")
    write("auth", AUTH_KEY + "\n")
    write("wrong_auth", "not-the-auth-key\n")
    write("priv", PRIV_KEY + "\n")
    conf = write("snmpd.conf", f"""agentaddress udp:127.0.0.1:{PORTS['snmpd']}
rocommunity {COMMUNITY} 127.0.0.1
createUser rocehil SHA "{AUTH_KEY}" AES "{PRIV_KEY}"
rouser rocehil priv
""")
    snmpd_agent.start(NS, DIR, conf, PORTS['snmpd'], COMMUNITY)


def tearDownModule():
    snmpd_agent.stop(NS, DIR)


def send_frames(count, size):
    """Sends `count` Ethernet frames of `size` bytes out of peer1, so swp1 receives them."""
    script = ("from scapy.all import Ether, Raw, sendp\n"
              f"f = Ether(dst='02:00:00:00:00:02', src='02:00:00:00:00:01', type=0x88b5)"
              f"/Raw(b'x' * {size - 14})\n"
              f"sendp([f] * {count}, iface='peer1', verbose=False)\n")
    ns("/usr/bin/python3", "-c", script, check=True)


class Poll(unittest.TestCase):
    def poll(self, inv, *extra):
        r = rocehil("switches", "poll", "-i", inv, "--json", "--all", *extra)
        return r, json.loads(r.stdout) if r.stdout.strip() else None

    def test_octets_and_packets_equal_the_kernels_counters(self):
        inv = inventory(v2c("sw1", PORTS["snmpd"]))
        r, before = self.poll(inv)
        self.assertEqual(r.returncode, 0, r.stderr)
        kernel_before = kernel_counters("swp1")
        send_frames(250, 300)
        kernel_after = kernel_counters("swp1")
        # net-snmp's ifTable keeps what it read from the kernel for 3 s (IFTABLE_CACHE_TIMEOUT):
        # a switch's counters lag as a real switch's do.
        time.sleep(3.2)
        r, after = self.poll(inv)
        self.assertEqual(r.returncode, 0, r.stderr)

        def port(doc):
            return next(p for p in doc["switches"][0]["ports"] if p["name"] == "swp1")
        self.assertEqual(port(after)["in_octets"] - port(before)["in_octets"],
                         kernel_after["rx"]["bytes"] - kernel_before["rx"]["bytes"])
        self.assertEqual(kernel_after["rx"]["packets"] - kernel_before["rx"]["packets"], 250)
        self.assertEqual(port(after)["in_ucast_pkts"] - port(before)["in_ucast_pkts"], 250)
        # net-snmp's own walker agrees on the port's ifIndex and name.
        walk = ns("snmpbulkwalk", "-v2c", "-c", COMMUNITY, "-On", "-Oq",
                  f"127.0.0.1:{PORTS['snmpd']}", "1.3.6.1.2.1.31.1.1.1.1", check=True).stdout
        names = {line.split()[0].rsplit(".", 1)[1]: line.split()[1].strip('"')
                 for line in walk.splitlines()}
        self.assertEqual(names[str(port(after)["if_index"])], "swp1")
        # A Linux agent serves no PFC or queue MIB: absent (null), never 0.
        self.assertFalse(after["switches"][0]["pfc_mib"])
        self.assertIsNone(port(after)["pfc_rx"][3])
        self.assertIsNone(port(after)["queue_drops"])

    def test_v3_with_the_right_keys_answers_and_a_wrong_key_is_one_line(self):
        r, doc = self.poll(inventory(v3("sw1", os.path.join(DIR, "auth"))))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(doc["switches"][0]["answered"])
        r, doc = self.poll(inventory(v3("sw1", os.path.join(DIR, "wrong_auth"))))
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        error = doc["switches"][0]["error"]
        self.assertIn("refused the request", error)
        self.assertIn("Authentication failure", error)
        self.assertNotIn("\n", error)
        self.assertNotIn(AUTH_KEY, r.stdout + r.stderr)
        self.assertLess(r.seconds, 10)

    def test_bad_agents_are_one_line_each_in_bounded_time_and_the_good_one_still_answers(self):
        # The relays must listen inside the namespace: this part runs in a child that entered it.
        child = subprocess.run(
            ["ip", "netns", "exec", NS, "/usr/bin/python3", __file__, ROCEHIL, "--bad-agents",
             DIR], capture_output=True, text=True, timeout=120)
        self.assertEqual(child.returncode, 0, child.stdout + child.stderr)

    def test_a_wrong_community_is_a_timeout_naming_the_community(self):
        wrong = write("wrong_community", "not-it\n")
        r, doc = self.poll(inventory(v2c("sw1", PORTS["snmpd"], wrong)))
        self.assertEqual(r.returncode, 3)
        self.assertIn("community", doc["switches"][0]["error"])
        self.assertNotIn("not-it", r.stdout + r.stderr)
        self.assertLess(r.seconds, 5)

    def test_a_missing_secret_file_stops_before_polling(self):
        r = rocehil("switches", "poll", "-i",
                    inventory(v2c("sw1", PORTS["snmpd"], "/nonexistent/community")))
        self.assertEqual(r.returncode, 2)
        self.assertIn("switch 'sw1': snmp community_file /nonexistent/community", r.stderr)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)


class InventoryCheck(unittest.TestCase):
    def test_a_port_the_switch_lacks_is_named_with_the_nearest_one(self):
        inv = inventory(v2c("sw1", PORTS["snmpd"]),
                        "links:\n  - {name: h1-sw1, a: 'h1:eth0', b: 'sw1:swp2'}\n")
        r = rocehil("inventory", "check", inv, "--json", timeout=120)
        doc = json.loads(r.stdout)
        sw = doc["switches"]["switches"][0]
        self.assertTrue(sw["answered"], sw)
        self.assertEqual(len(sw["unknown_ports"]), 1)
        self.assertIn("switch 'sw1': port 'swp2' (link 'h1-sw1', inventory line", sw["unknown_ports"][0])
        self.assertIn("did you mean 'swp1'?", sw["unknown_ports"][0])
        self.assertEqual(r.returncode, 1, r.stderr)
        # LLDP-MIB is not served by this agent: the links are not verified, and it says so.
        self.assertIn("LLDP-MIB", sw["lldp_error"])
        self.assertEqual(doc["switches"]["cabling"][0]["status"], "unverified")


def bad_agents_child(directory):
    """Runs inside the namespace: the misbehaving agents, and rocehil polling them and the good
    snmpd at once."""
    global DIR
    DIR = directory
    Garbage(PORTS["garbage"]).start()
    # Slower than the poll's deadline, within its own request timeout: only the deadline ends it.
    Slow(PORTS["slow"], 1.0).start()
    inv = inventory("\n".join([
        v2c("good", PORTS["snmpd"]), v2c("garbage", PORTS["garbage"], timeout_ms=200),
        v2c("slow", PORTS["slow"], timeout_ms=3000), v2c("down", PORTS["down"], timeout_ms=200)]))
    start = time.monotonic()
    r = subprocess.run([ROCEHIL, "switches", "poll", "-i", inv, "--json", "--deadline-ms", "700"],
                       capture_output=True, text=True, timeout=60)
    seconds = time.monotonic() - start
    doc = json.loads(r.stdout)
    by_name = {s["name"]: s for s in doc["switches"]}
    problems = []
    if r.returncode != 3:
        problems.append(f"exit {r.returncode}, expected 3")
    if not by_name["good"]["answered"]:
        problems.append("the good switch did not answer: " + by_name["good"].get("error", ""))
    for name, words in (("garbage", "no answer"), ("down", "no answer"),
                        ("slow", "did not finish answering within 700 ms")):
        error = by_name[name].get("error", "")
        if words not in error or "\n" in error:
            problems.append(f"{name}: {error!r} lacks {words!r}")
    if seconds > 5:
        problems.append(f"took {seconds:.1f} s for a 0.7 s deadline")
    if problems:
        print("\n".join(problems), json.dumps(doc, indent=1)[:3000])
        sys.exit(1)
    sys.exit(0)


if __name__ == "__main__":
    ROCEHIL = os.path.abspath(sys.argv[1])
    if len(sys.argv) > 3 and sys.argv[2] == "--bad-agents":
        bad_agents_child(sys.argv[3])
    unittest.main(argv=[sys.argv[0], "-v"])
