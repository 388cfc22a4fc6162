"""System tests of the testbed's switches as a poller sees them: snmpd in every leaf and spine,
lldpd everywhere, the testbed's PFC and queue counters. Everything is read with net-snmp's own
snmpbulkwalk and snmpget (not rocehil), and compared with the kernel's counters, with frames
scapy sent, and with the topology the testbed reports.

Usage: python3 testbed_snmp_test.py PATH/TO/rocehil   (as root)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import yaml

ROCEHIL = None
PYTHON = "/usr/bin/python3"
# The MIB tables, by number (Debian ships no MIB files).
IF_NAME = "1.3.6.1.2.1.31.1.1.1.1"
IF_HC_OUT_OCTETS = "1.3.6.1.2.1.31.1.1.1.10"
SYS_NAME = "1.3.6.1.2.1.1.5.0"
PFC_MIB = "1.3.6.1.4.1.9.9.813"
PFC_IF_INDICATIONS = "1.3.6.1.4.1.9.9.813.1.1.1.2"
PFC_PRIORITY_REQUESTS = "1.3.6.1.4.1.9.9.813.1.2.1.2"
PFC_PRIORITY_INDICATIONS = "1.3.6.1.4.1.9.9.813.1.2.1.3"
QUEUE_STATS = "1.3.6.1.4.1.9.9.580.1.5.5.1.4"
LLDP_LOC_PORT_ID = "1.0.8802.1.1.2.1.3.7.1.3"
LLDP_REM_PORT_ID = "1.0.8802.1.1.2.1.4.1.1.7"
LLDP_REM_SYS_NAME = "1.0.8802.1.1.2.1.4.1.1.9"

# scapy, in a host namespace: N PFC frames (802.1Qbb) pausing one priority, on one interface.
SEND_PFC = """
import sys
from scapy.all import Ether, Raw, get_if_hwaddr, sendp
iface, priority, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
quanta = [0] * 8
quanta[priority] = 0xffff
payload = (0x0101).to_bytes(2, "big") + (1 << priority).to_bytes(2, "big")
payload += b"".join(q.to_bytes(2, "big") for q in quanta)
frame = Ether(dst="01:80:c2:00:00:01", src=get_if_hwaddr(iface), type=0x8808) / Raw(payload)
sendp(frame / Raw(b"\\0" * (60 - len(frame))), iface=iface, count=count, verbose=False)
"""


def rocehil(*args, check=True):
    result = subprocess.run([ROCEHIL, *args], capture_output=True, text=True, timeout=120)
    if check and result.returncode != 0:
        raise AssertionError(f"rocehil {' '.join(args)} exited {result.returncode}: {result.stderr}")
    return result


class Snmp:
    """net-snmp's command-line tools, with their own state directory (never /var/lib/snmp) and
    no MIB files to look for."""

    def __init__(self, state_dir):
        self.env = dict(os.environ, MIBS="", SNMP_PERSISTENT_DIR=state_dir)

    def run(self, tool, auth, address, *oids, timeout_s=2, retries=1):
        return subprocess.run([tool, *auth, "-On", "-Oq", "-t", str(timeout_s), "-r",
                               str(retries), address, *oids],
                              capture_output=True, text=True, env=self.env, timeout=60)

    def walk(self, auth, address, oid):
        """{oid: value} of the subtree; values as snmpbulkwalk -Oq prints them, unquoted."""
        r = self.run("snmpbulkwalk", auth, address, oid)
        if r.returncode != 0:
            raise AssertionError(f"snmpbulkwalk {address} {oid}: {r.stderr}")
        out = {}
        for line in r.stdout.splitlines():
            key, _, value = line.partition(" ")
            if key.startswith(".") and "No Such" not in value:
                out[key[1:]] = value.strip().strip('"')
        return out


def ifindex(netns, ifname):
    out = subprocess.run(["ip", "-n", netns, "-j", "link", "show", "dev", ifname],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)[0]["ifindex"]


def tx_bytes(netns, ifname):
    out = subprocess.run(["ip", "-n", netns, "-j", "-s", "link", "show", "dev", ifname],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)[0]["stats64"]["tx"]["bytes"]


class Switches(unittest.TestCase):
    """One default testbed (4 hosts, 2 racks, 2 spines) polled as a fabric."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="rocehil-tb-snmp-")
        try:
            up = rocehil("testbed", "up", "--dir", cls.dir, "--json", "--quiet")
        except AssertionError:
            shutil.rmtree(cls.dir, ignore_errors=True)  # tearDownClass does not run
            raise
        cls.up = json.loads(up.stdout)
        cls.id = cls.up["id"]
        cls.status = json.loads(rocehil("testbed", "status", "--dir", cls.dir, "--json").stdout)
        cls.ns = {n["name"]: n for n in cls.status["namespaces"]}
        snmp = cls.up["snmp"]
        with open(snmp["community_file"]) as f:
            cls.community = f.read().strip()
        cls.v3 = {}
        for key in ("user_file", "auth_key_file", "priv_key_file"):
            with open(snmp["v3"][key]) as f:
                cls.v3[key] = f.read().strip()
        cls.snmp = Snmp(os.path.join(cls.dir, "snmp-client"))
        cls.v2c = ["-v2c", "-c", cls.community]

    @classmethod
    def tearDownClass(cls):
        rocehil("testbed", "down", "--dir", cls.dir, check=False)
        shutil.rmtree(cls.dir, ignore_errors=True)

    def address(self, switch):
        return self.ns[switch]["snmpd"]["address"]

    def netns(self, name):
        return self.ns[name]["netns"]

    def fabric_ports(self, switch):
        """The switch's host links and uplinks, as status names them."""
        return [i["name"] for i in self.ns[switch]["interfaces"]
                if not i["link"].startswith("mgmt-") and not i["link"].endswith("-cap")]

    def v3_auth(self, auth_key):
        return ["-v3", "-l", "authPriv", "-u", self.v3["user_file"], "-a", "SHA", "-A", auth_key,
                "-x", "AES", "-X", self.v3["priv_key_file"]]

    def test_status_and_inventory_show_every_switch_answering(self):
        self.assertTrue(self.status["healthy"])
        with open(os.path.join(self.dir, "inventory.yaml")) as f:
            inventory = yaml.safe_load(f)
        switches = {s["name"]: s for s in inventory["switches"]}
        for name in ("l1", "l2", "s1", "s2"):
            self.assertTrue(self.ns[name]["snmpd"]["answers"], self.ns[name]["snmpd"])
            self.assertEqual(self.ns[name]["snmpd"]["detail"], f"sysName {name}")
            self.assertNotIn("sshd", self.ns[name])  # switches run no sshd
            self.assertEqual(switches[name]["address"], self.address(name))
            self.assertEqual(switches[name]["snmp"]["community_file"],
                             self.up["snmp"]["community_file"])
        for name in ("h1", "h2", "h3", "h4", "l1", "l2", "s1", "s2"):
            self.assertTrue(self.ns[name]["lldpd"]["runs"], self.ns[name]["lldpd"])
        self.assertNotIn("lldpd", self.ns["cap"])
        mode = os.stat(self.up["snmp"]["community_file"]).st_mode & 0o777
        self.assertEqual(mode, 0o600)

    def test_if_mib_names_every_fabric_port_of_every_switch(self):
        for switch in ("l1", "l2", "s1", "s2"):
            names = set(self.snmp.walk(self.v2c, self.address(switch), IF_NAME).values())
            ports = self.fabric_ports(switch)
            self.assertEqual(len(ports), 4 if switch.startswith("l") else 2)
            self.assertLessEqual(set(ports), names, switch)

    def test_hc_out_octets_of_a_spine_port_is_the_kernels_count(self):
        port = f"{self.id}-l2"
        spines = {s: self.netns(s) for s in ("s1", "s2")}
        start = {s: tx_bytes(netns, port) for s, netns in spines.items()}
        # Traffic from rack 1 to rack 2: each ping takes one spine (ICMP hashes on addresses).
        for host in ("h1", "h2"):
            subprocess.run(["ip", "netns", "exec", self.netns(host), "ping", "-q", "-c", "20",
                            "-i", "0.01", "-s", "1400", self.ns["h3"]["fabric_address"]],
                           capture_output=True, timeout=30)
        spine = max(spines, key=lambda s: tx_bytes(spines[s], port) - start[s])
        index = ifindex(spines[spine], port)
        # snmpd caches the interface table for a few seconds: let it expire.
        time.sleep(5)
        before = tx_bytes(spines[spine], port)
        r = self.snmp.run("snmpget", self.v2c, self.address(spine),
                          f"{IF_HC_OUT_OCTETS}.{index}")
        after = tx_bytes(spines[spine], port)
        self.assertEqual(r.returncode, 0, r.stderr)
        value = int(r.stdout.split()[1])
        print(f"\n  {spine} {port}: ifHCOutOctets {value}, kernel tx_bytes {before}..{after} "
              f"(before the pings {start[spine]})", file=sys.stderr)
        self.assertGreater(before - start[spine], 20 * 1400)  # the pings crossed this port
        # Within an LLDP frame or two (one every 30 s) of what the kernel counts around the GET.
        self.assertLessEqual(before - 600, value)
        self.assertLessEqual(value, after)

    def test_v3_with_the_users_keys_answers_and_a_wrong_key_does_not(self):
        r = self.snmp.run("snmpget", self.v3_auth(self.v3["auth_key_file"]), self.address("s2"),
                          SYS_NAME)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(None, 1)[1].strip().strip('"'), "s2")
        wrong = self.snmp.run("snmpget", self.v3_auth("not-the-key-1234"), self.address("s2"),
                              SYS_NAME, timeout_s=1, retries=0)
        self.assertNotEqual(wrong.returncode, 0)
        self.assertIn("Authentication failure", wrong.stderr)
        # A wrong v2c community gets no answer at all.
        silent = self.snmp.run("snmpget", ["-v2c", "-c", "wrong-community"], self.address("s2"),
                               SYS_NAME, timeout_s=1, retries=0)
        self.assertNotEqual(silent.returncode, 0)
        self.assertIn("Timeout", silent.stderr)

    def test_pfc_frames_a_host_sends_count_at_its_leaf_port_and_priority(self):
        leaf, port = self.netns("l1"), f"{self.id}-h1"
        index = ifindex(leaf, port)
        before = self.snmp.walk(self.v2c, self.address("l1"), PFC_MIB)
        count = 7
        r = subprocess.run(["ip", "netns", "exec", self.netns("h1"), PYTHON, "-c", SEND_PFC,
                            f"{self.id}-nic0", "3", str(count)],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        time.sleep(0.3)  # the handler reads the counters again after 100 ms
        after = self.snmp.walk(self.v2c, self.address("l1"), PFC_MIB)
        self.assertEqual(set(after), set(before))
        changed = {oid: int(after[oid]) - int(before[oid]) for oid in after
                   if after[oid] != before[oid]}
        print(f"\n  {count} PFC frames h1 -> l1 (priority 3): changed {changed}", file=sys.stderr)
        # Received by l1 on its port to h1, at priority 3, and in the port's total: nothing else.
        self.assertEqual(changed, {f"{PFC_PRIORITY_INDICATIONS}.{index}.3": count,
                                   f"{PFC_IF_INDICATIONS}.{index}": count})
        # Every fabric port has its rows: 2 per port, 16 per port and priority; nothing for the
        # management port.
        ports = self.fabric_ports("l1")
        self.assertEqual(len(after), len(ports) * (2 + 16))
        mgmt = ifindex(leaf, f"{self.id}-mgmt")
        self.assertNotIn(f"{PFC_PRIORITY_REQUESTS}.{mgmt}.0", after)

    def test_queue_counters_are_the_shapers(self):
        leaf, port = self.netns("l2"), f"{self.id}-h3"
        index = ifindex(leaf, port)
        rows = self.snmp.walk(self.v2c, self.address("l2"), QUEUE_STATS)
        # Four shaped fabric ports, three values each: packets, bytes, drops of egress queue 1.
        self.assertEqual(len(rows), 4 * 3, rows)
        tc = json.loads(subprocess.run(["tc", "-n", leaf, "-s", "-j", "qdisc", "show", "dev", port],
                                       capture_output=True, text=True, check=True).stdout)
        tbf = next(q for q in tc if q["kind"] == "tbf")
        packets = int(rows[f"{QUEUE_STATS}.{index}.2.1.1"])
        self.assertLessEqual(abs(tbf["packets"] - packets), 2)  # an LLDP frame in between
        self.assertEqual(int(rows[f"{QUEUE_STATS}.{index}.2.1.5"]), tbf["drops"])

    def test_lldp_rem_table_of_each_leaf_names_its_hosts_and_spines(self):
        for leaf in ("l1", "l2"):
            address = self.address(leaf)
            local = self.snmp.walk(self.v2c, address, LLDP_LOC_PORT_ID)
            names = self.snmp.walk(self.v2c, address, LLDP_REM_SYS_NAME)
            ports = self.snmp.walk(self.v2c, address, LLDP_REM_PORT_ID)
            seen = set()
            for oid, name in names.items():
                # Index: lldpRemTimeMark.lldpRemLocalPortNum.lldpRemIndex.
                time_mark, local_port, rem_index = oid[len(LLDP_REM_SYS_NAME) + 1:].split(".")
                local_name = local[f"{LLDP_LOC_PORT_ID}.{local_port}"]
                remote_port = ports[f"{LLDP_REM_PORT_ID}.{time_mark}.{local_port}.{rem_index}"]
                seen.add((local_name, name, remote_port))
            rack = self.ns[leaf]["rack"]
            hosts = [n for n in self.ns.values() if n["role"] == "host" and n["rack"] == rack]
            expected = {(f"{self.id}-{h['name']}", h["name"], f"{self.id}-nic0") for h in hosts}
            expected |= {(f"{self.id}-{s}", s, f"{self.id}-{leaf}") for s in ("s1", "s2")}
            self.assertEqual(seen, expected, leaf)

    def test_the_write_community_takes_a_port_down_and_up_and_writes_nothing_else(self):
        # Named to run after the LLDP test: a port down makes lldpd forget its neighbour.
        write_file = self.up["snmp"]["write_community_file"]
        self.assertEqual(os.stat(write_file).st_mode & 0o777, 0o600)
        with open(write_file) as f:
            write = f.read().strip()
        self.assertNotEqual(write, self.community)
        inventory = os.path.join(self.dir, "inventory.yaml")
        with open(inventory) as f:
            l1 = next(s for s in yaml.safe_load(f)["switches"] if s["name"] == "l1")
        self.assertEqual(l1["snmp"]["write_community_file"], write_file)
        port, netns = f"{self.id}-s1", self.netns("l1")

        def flags():
            out = subprocess.run(["ip", "-n", netns, "-j", "link", "show", "dev", port],
                                 capture_output=True, text=True, check=True).stdout
            return json.loads(out)[0]["flags"]
        try:
            r = rocehil("switches", "port", "l1", port, "down", "-i", inventory, "--json")
            self.assertNotIn("UP", flags())
            self.assertEqual(json.loads(r.stdout)["if_index"], ifindex(netns, port))
            rocehil("switches", "port", "l1", port, "up", "-i", inventory)
            self.assertIn("UP", flags())
        finally:
            subprocess.run(["ip", "-n", netns, "link", "set", "dev", port, "up"])
        # ifAdminStatus alone: sysName is not writable with it.
        refused = self.snmp.run("snmpset", ["-v2c", "-c", write], self.address("l1"),
                                SYS_NAME, "s", "renamed", timeout_s=1, retries=0)
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("noAccess", refused.stderr)
        self.assertEqual(self.snmp.walk(self.v2c, self.address("l1"), SYS_NAME).popitem()[1],
                         "l1")


class Lifecycle(unittest.TestCase):
    def test_down_stops_every_agent_and_handler(self):
        directory = tempfile.mkdtemp(prefix="rocehil-tb-snmp-life-")
        try:
            up = json.loads(rocehil("testbed", "up", "--dir", directory, "--hosts", "2",
                                    "--racks", "1", "--spines", "1", "--json", "--quiet").stdout)
            tid = up["id"]
            with open(up["snmp"]["community_file"]) as f:
                community = f.read().strip()
            snmp = Snmp(os.path.join(directory, "snmp-client"))
            # The counters handlers start with the first request for their subtree.
            for agent in up["snmp"]["agents"]:
                snmp.walk(["-v2c", "-c", community], agent["address"], PFC_MIB)
            agents = {}
            for name in ("h1", "h2", "l1", "s1"):
                pids = subprocess.run(["ip", "netns", "pids", f"rocehil-{tid}-{name}"],
                                      capture_output=True, text=True).stdout.split()
                for pid in pids:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        agents[pid] = f.read().replace(b"\0", b" ").decode()
            kinds = " ".join(agents.values())
            self.assertIn("snmpd", kinds)
            self.assertIn("lldpd", kinds)
            self.assertIn("snmp-counters", kinds)
            down = json.loads(rocehil("testbed", "down", "--dir", directory, "--json").stdout)
            self.assertGreaterEqual(down["processes_stopped"], len(agents))
            for pid, cmdline in agents.items():
                try:
                    with open(f"/proc/{pid}/stat") as f:
                        state = f.read().rsplit(")", 1)[1].split()[0]
                except FileNotFoundError:
                    continue
                self.assertEqual(state, "Z", f"{cmdline} (pid {pid}) still runs after down")
            left = [f for f in os.listdir("/run/rocehil") if f.startswith(f"rocehil-{tid}-")]
            self.assertEqual(left, [])
            procs = subprocess.run(["pgrep", "-af", f"rocehil-{tid}-"], capture_output=True,
                                   text=True).stdout
            self.assertEqual([p for p in procs.splitlines() if "pgrep" not in p], [])
        finally:
            rocehil("testbed", "down", "--dir", directory, check=False)
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    ROCEHIL = os.path.abspath(sys.argv.pop(1))
    if os.geteuid() != 0:
        print("testbed system tests need root", file=sys.stderr)
        sys.exit(1)
    unittest.main(verbosity=2)
