"""System tests of `rocehil switches port`: a switch port taken down and up by an SNMP SET of
IF-MIB ifAdminStatus, against Debian's snmpd (net-snmp sets IFF_UP through it) serving the
interfaces of a network namespace. What rocehil reports is compared with the kernel (`ip -j
link`): the port's flags and its ifindex.

Usage: python3 snmp_port_test.py PATH/TO/rocehil   (as root)
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import snmpd_agent

ROCEHIL = None
NS = f"rhsnmpset{os.getpid()}"
DIR = None
PORT = 1165
READ = "read-c0mmunity"
WRITE = "wr1te-c0mmunity"
AUTH_KEY = "auth-key-for-tests"
PRIV_KEY = "priv-key-for-tests"
ADMIN_STATUS = ".1.3.6.1.2.1.2.2.1.7"


def ns(*argv, **kw):
    return subprocess.run(["ip", "netns", "exec", NS, *argv], capture_output=True, text=True,
                          **kw)


def rocehil(*args):
    return ns(ROCEHIL, *args, timeout=60)


def write(name, text):
    path = os.path.join(DIR, name)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o600)
    return path


def kernel_link(dev):
    return json.loads(ns("ip", "-j", "link", "show", "dev", dev, check=True).stdout)[0]


def is_up(dev):
    """Administratively up: the UP flag (IFF_UP), whatever the carrier."""
    return "UP" in kernel_link(dev)["flags"]


def inventory(snmp):
    """An inventory with one switch, its snmp settings the YAML flow map given."""
    return write("inventory.yaml", f"""schema_version: 1
hosts:
  - {{name: h1, provider: soft, launcher: local}}
switches:
  - {{name: sw, role: leaf, address: 127.0.0.1, snmp: {snmp}}}
""")


def v2c(write_file=None, timeout_ms=300):
    extra = f", write_community_file: {write_file}" if write_file else ""
    return (f"{{version: 2c, community_file: {os.path.join(DIR, 'read')}{extra}, port: {PORT}, "
            f"timeout_ms: {timeout_ms}, retries: 1}}")


def v3(user, writable=True):
    return (f"{{version: 3, user: {user}, auth: sha, auth_key_file: {os.path.join(DIR, 'auth')}, "
            f"priv: aes, priv_key_file: {os.path.join(DIR, 'priv')}, port: {PORT}, "
            f"timeout_ms: 300, retries: 1, writable: {'true' if writable else 'false'}}}")


def setUpModule():
    global DIR
    DIR = tempfile.mkdtemp(prefix="rocehil-snmpset-")
    subprocess.run(["ip", "netns", "add", NS], check=True)
    for cmd in (["ip", "link", "set", "lo", "up"],
                ["ip", "link", "add", "swp1", "type", "veth", "peer", "name", "peer1"],
                ["ip", "link", "set", "swp1", "up"], ["ip", "link", "set", "peer1", "up"]):
        ns(*cmd, check=True)
    write("read", READ + "\n")
    write("write", WRITE + "\n")
    write("not_known", "no-agent-knows-this\n")
    write("auth", AUTH_KEY + "\n")
    write("priv", PRIV_KEY + "\n")
    # As the testbed writes it: the write community may SET ifAdminStatus and nothing else.
    conf = write("snmpd.conf", f"""agentaddress udp:127.0.0.1:{PORT}
rocommunity {READ} 127.0.0.1
rwcommunity {WRITE} 127.0.0.1 {ADMIN_STATUS}
createUser reader SHA "{AUTH_KEY}" AES "{PRIV_KEY}"
createUser writer SHA "{AUTH_KEY}" AES "{PRIV_KEY}"
rouser reader priv
# As docs/inventory.md gives it: the v3 user reads everything, writes ifAdminStatus alone.
group writerGroup usm writer
view writerAll included .1
view writerAdminStatus included {ADMIN_STATUS}
access writerGroup "" usm priv exact writerAll writerAdminStatus none
""")
    snmpd_agent.start(NS, DIR, conf, PORT, READ)


def tearDownModule():
    snmpd_agent.stop(NS, DIR)


class Port(unittest.TestCase):
    def setUp(self):
        # Each test starts from an administratively up port.
        ns("ip", "link", "set", "swp1", "up", check=True)
        self.assertTrue(is_up("swp1"))

    def test_down_and_up_reach_the_kernel_at_the_port_the_kernel_numbers(self):
        inv = inventory(v2c(os.path.join(DIR, "write")))
        r = rocehil("switches", "port", "sw", "swp1", "down", "-i", inv, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertFalse(is_up("swp1"), kernel_link("swp1"))
        self.assertEqual(doc["if_index"], kernel_link("swp1")["ifindex"])
        self.assertEqual(doc["admin_status"], "down")
        self.assertEqual((doc["switch"], doc["port"], doc["read_back"]), ("sw", "swp1", True))
        # The other end of the veth was not touched.
        self.assertTrue(is_up("peer1"))
        r = rocehil("switches", "port", "sw", "swp1", "up", "-i", inv)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(is_up("swp1"), kernel_link("swp1"))
        self.assertEqual(r.stdout, f"sw swp1 is up (ifIndex {kernel_link('swp1')['ifindex']}, "
                                   "ifAdminStatus read back)\n")
        self.assertNotIn(WRITE, r.stdout + r.stderr)

    def test_a_v3_user_with_write_access_sets_and_a_read_only_one_is_refused(self):
        r = rocehil("switches", "port", "sw", "swp1", "down", "-i", inventory(v3("writer")))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(is_up("swp1"))
        r = rocehil("switches", "port", "sw", "swp1", "up", "-i", inventory(v3("reader")))
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("give the SNMPv3 user 'reader' write access to ifAdminStatus (net-snmp: a "
                      "write view", r.stderr)
        self.assertFalse(is_up("swp1"))
        r = rocehil("switches", "port", "sw", "swp1", "up", "-i",
                    inventory(v3("writer", writable=False)))
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("add writable: true", r.stderr)
        self.assertFalse(is_up("swp1"))

    def test_the_read_only_community_as_write_credential_is_refused_and_the_link_unchanged(self):
        r = rocehil("switches", "port", "sw", "swp1", "down", "-i",
                    inventory(v2c(os.path.join(DIR, "read"))))
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertIn("switch 'sw' port 'swp1': 127.0.0.1 refused SET ifAdminStatus.", r.stderr)
        self.assertIn("noAccess", r.stderr)
        self.assertIn("give a write community (write_community_file) the agent accepts for "
                      "ifAdminStatus", r.stderr)
        self.assertNotIn(READ, r.stderr)
        self.assertTrue(is_up("swp1"))

    def test_a_community_the_agent_does_not_know_is_no_answer_and_the_link_unchanged(self):
        r = rocehil("switches", "port", "sw", "swp1", "down", "-i",
                    inventory(v2c(os.path.join(DIR, "not_known"), timeout_ms=200)))
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("no answer to SET ifAdminStatus.", r.stderr)
        self.assertIn("does not answer a community it does not know: check the address, that "
                      "the agent runs, and the write community (write_community_file)", r.stderr)
        self.assertTrue(is_up("swp1"))

    def test_a_port_the_switch_lacks_is_named_with_those_it_has(self):
        r = rocehil("switches", "port", "sw", "swp9", "down", "-i",
                    inventory(v2c(os.path.join(DIR, "write"))))
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("switch 'sw' has no port 'swp9'", r.stderr)
        self.assertIn("its ports: lo, ", r.stderr)
        self.assertIn("swp1", r.stderr)
        self.assertTrue(is_up("swp1"))

    def test_no_write_credential_or_an_unreadable_one_stops_before_anything_is_sent(self):
        r = rocehil("switches", "port", "sw", "swp1", "down", "-i", inventory(v2c()))
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("switch 'sw': its snmp settings give no write credential; add "
                      "write_community_file", r.stderr)
        r = rocehil("switches", "port", "sw", "swp1", "down", "-i",
                    inventory(v2c("/nonexistent/write")))
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("switch 'sw': snmp write_community_file /nonexistent/write", r.stderr)
        r = rocehil("switches", "port", "nosuch", "swp1", "down", "-i", inventory(v2c()))
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("switch 'nosuch' is not in", r.stderr)
        self.assertTrue(is_up("swp1"))


if __name__ == "__main__":
    ROCEHIL = os.path.abspath(sys.argv[1])
    unittest.main(argv=[sys.argv[0], "-v"])
