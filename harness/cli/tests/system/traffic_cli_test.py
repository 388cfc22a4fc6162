"""System tests of `rocehil agent` and `rocehil traffic client|server`: the real binary, over
loopback in a namespace of its own and between testbed hosts over the testbed's real sshd. What
rocehil reports is checked with tools that are not rocehil: nftables drop counters, tcpdump on the
testbed's mirror ports, tshark's decoding of the captures, and the kernel's routing.

Usage: python3 traffic_cli_test.py PATH/TO/rocehil   (as root)
"""
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from testbed_fixture import testbed_down, testbed_up

ROCEHIL = None
NETNS = f"rocehil-traffic-{os.getpid()}"
PERFTEST_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..",
                             "perftest", "tests", "data")


def in_netns(netns, *argv, timeout=120):
    return subprocess.run(["ip", "netns", "exec", netns, *argv], capture_output=True, text=True,
                          timeout=timeout)


def client(netns, *args):
    """Runs `traffic client --json` in `netns`; returns (exit code, report or None, stderr)."""
    r = in_netns(netns, ROCEHIL, "traffic", "client", "--json", "--stats-ms", "0", *args)
    report = json.loads(r.stdout) if r.stdout.strip() else None
    return r.returncode, report, r.stderr


def total(report, side, counter):
    return sum(q["counters"][counter] for q in report[side]["results"]["per_qp"])


class Agent:
    """`rocehil agent` in a namespace, driven line by line as a controller would."""

    def __init__(self, netns):
        self.p = subprocess.Popen(["ip", "netns", "exec", netns, ROCEHIL, "agent"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def send(self, line):
        self.p.stdin.write(line if isinstance(line, str) else json.dumps(line))
        self.p.stdin.write("\n")
        self.p.stdin.flush()

    def reply(self, timeout=30):
        ready, _, _ = select.select([self.p.stdout], [], [], timeout)
        if not ready:
            raise AssertionError("the agent did not answer")
        return json.loads(self.p.stdout.readline())

    def ask(self, message, timeout=30):
        self.send(message)
        return self.reply(timeout)

    def until(self, op, timeout=60):
        """Replies up to the first `op`, stats skipped."""
        deadline = time.monotonic() + timeout
        while True:
            r = self.reply(max(0.1, deadline - time.monotonic()))
            if r["op"] == op:
                return r
            if r["op"] not in ("stats",):
                raise AssertionError(f"waiting for {op}, got {r}")

    def close(self):
        self.p.stdin.close()
        return self.p.wait(timeout=10)


class Loopback(unittest.TestCase):
    """Both sides on one machine, in a namespace with only loopback: 127.0.0.1 -> 127.0.0.2."""

    @classmethod
    def setUpClass(cls):
        subprocess.run(["ip", "netns", "add", NETNS], check=True)
        subprocess.run(["ip", "-n", NETNS, "link", "set", "lo", "up"], check=True)

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["ip", "netns", "del", NETNS])

    def run_client(self, *args):
        code, report, err = client(NETNS, "--server-local", "--server-address", "127.0.0.2",
                                   "--address", "127.0.0.1", *args)
        self.assertEqual(code, 0, err)
        self.assertEqual(report["schema_version"], 1)
        return report

    def test_every_operation_moves_data_intact(self):
        for opcode in ("write", "write_with_imm", "send", "read"):
            with self.subTest(opcode=opcode):
                r = self.run_client("--opcode", opcode, "--qps", "3", "--size", "20000",
                                    "--duration", "0.5", "--warmup", "0.1")
                c = r["client"]["results"]
                self.assertEqual(len(c["per_qp"]), 3)
                self.assertEqual(c["errors"], 0, c["first_error"])
                self.assertGreater(c["messages"], 10)
                self.assertEqual(c["bytes"], c["messages"] * 20000)
                self.assertEqual(r["data"], {"checked": True, "transfers": 3, "intact": 3,
                                             "problems": []})
                # Every message a receive-consuming opcode carried was placed on the server.
                s = r["server"]["results"]
                if opcode in ("send", "write_with_imm"):
                    self.assertGreaterEqual(s["messages"], c["messages"])
                else:
                    self.assertEqual(s["messages"], 0)

    def test_iterations_send_exactly_that_many_measured_messages(self):
        r = self.run_client("--qps", "2", "--size", "4096", "--iterations", "3000", "--warmup", "0")
        self.assertEqual(r["client"]["results"]["messages"], 3000)

    def test_bidirectional_moves_data_both_ways(self):
        r = self.run_client("--bidirectional", "--opcode", "send", "--qps", "2", "--size", "8192",
                            "--duration", "0.5")
        self.assertGreater(r["client"]["results"]["messages"], 0)
        self.assertGreater(r["server"]["results"]["messages"], 0)
        self.assertEqual(r["data"]["transfers"], 4)
        self.assertEqual(r["data"]["intact"], 4)

    def test_lat_reports_percentiles_in_order(self):
        r = self.run_client("--test", "lat", "--iterations", "2000")
        lat = r["client"]["results"]["latency"]
        self.assertEqual(lat["samples"], 2000)
        self.assertEqual(sum(count for _, count in lat["histogram"]), 2000)
        self.assertLessEqual(lat["min_us"], lat["p50_us"])
        self.assertLessEqual(lat["p50_us"], lat["p99_us"])
        self.assertLessEqual(lat["p99_us"], lat["p999_us"])
        self.assertLessEqual(lat["p999_us"], lat["max_us"])
        self.assertEqual(r["data"]["intact"], 2)

    def test_human_output_names_the_result(self):
        r = in_netns(NETNS, ROCEHIL, "traffic", "client", "--server-local", "--server-address",
                     "127.0.0.2", "--duration", "0.3")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("bw write: 1 QP x 65536 B messages", r.stdout)
        self.assertIn("data: intact, 1 of 1 transfers", r.stdout)

    def perftest_client(self, *args, env=None):
        r = subprocess.run(["ip", "netns", "exec", NETNS, ROCEHIL, "traffic", "client", "--json",
                            "--engine", "perftest", "--server-local", "--server-address",
                            "127.0.0.2", *args], capture_output=True, text=True, timeout=120,
                           env=env)
        return r.returncode, json.loads(r.stdout) if r.stdout.strip() else None, r.stderr

    def test_perftest_without_a_device_fails_in_perftests_own_words(self):
        if shutil.which("ib_write_bw") is None:
            self.skipTest("perftest is not installed (scripts/install-deps.sh installs it)")
        code, report, err = self.perftest_client("--qps", "2", "--duration", "1")
        self.assertEqual(code, 3, err)
        server = report["server"]["results"]
        self.assertIsNone(report["client"]["results"])  # nothing to connect to
        self.assertEqual(server["command"][0], "ib_write_bw")
        self.assertIn("--report_gbits", server["command"])
        self.assertEqual(server["command"][server["command"].index("-q") + 1], "2")
        self.assertNotEqual(server["exit_code"], 0)
        self.assertRegex(server["version"], r"^\d+\.\d+")
        # Debian 12's perftest 6.06 without an RDMA device (perftest_resources.c).
        self.assertIn("Did not detect devices", report["failure"]["message"])
        self.assertNotIn("report", server)

    def test_perftest_counts_iterations_per_qp_and_gets_the_same_messages_in_all(self):
        if shutil.which("ib_write_bw") is None:
            self.skipTest("perftest is not installed (scripts/install-deps.sh installs it)")
        code, report, err = self.perftest_client("--qps", "3", "--iterations", "300")
        self.assertEqual(code, 3, err)  # no RDMA device here: perftest says so
        command = report["server"]["results"]["command"]
        self.assertEqual(command[command.index("-q") + 1], "3")
        self.assertEqual(command[command.index("-n") + 1], "100")
        code, report, err = self.perftest_client("--qps", "3", "--iterations", "301")
        self.assertEqual(code, 2, err)
        self.assertIn("--iterations 301 over --qps 3: rocehil counts messages over all QPs, "
                      "perftest's -n per QP, so with --engine perftest give a multiple of 3 "
                      "(300 or 303)", err)

    def test_perftest_numbers_are_the_ones_perftest_printed(self):
        # A stand-in perftest (perftest_stand_in.py) does the handshake and prints a real table,
        # since nothing can measure here; the table is read back by this test's own parser.
        fixture = os.path.join(PERFTEST_DATA, "write_bw_gbps_cx7.txt")
        stand_in = os.path.join(os.path.dirname(os.path.abspath(__file__)), "perftest_stand_in.py")
        with tempfile.TemporaryDirectory() as bin_dir:
            os.symlink(stand_in, os.path.join(bin_dir, "ib_write_bw"))
            env = dict(os.environ, PATH=bin_dir + ":" + os.environ["PATH"],
                       ROCEHIL_STAND_IN_TABLE=fixture)
            code, report, err = self.perftest_client("--duration", "1", env=env)
        self.assertEqual(code, 0, err)
        self.assertIsNone(report["failure"])
        client, server = report["client"]["results"], report["server"]["results"]
        port = server["command"][server["command"].index("-p") + 1]
        self.assertEqual(client["command"][client["command"].index("-p") + 1], port)
        self.assertEqual(client["command"][-1], "127.0.0.2")
        with open(fixture) as f:
            lines = f.read().splitlines()
        header = next(i for i, line in enumerate(lines) if "BW average[Gb/sec]" in line)
        row = next(line.split() for line in lines[header + 1:]
                   if line.split() and line.split()[0].isdigit())
        bw = client["report"]["bw"]
        self.assertEqual((bw["bytes"], bw["iterations"]), (int(row[0]), int(row[1])))
        self.assertEqual((bw["peak_gbps"], bw["average_gbps"], bw["msg_rate_mpps"]),
                         (float(row[2]), float(row[3]), float(row[4])))

    def test_a_wrong_rkey_is_a_remote_access_error(self):
        a, b = Agent(NETNS), Agent(NETNS)
        try:
            setup = {"v": 1, "op": "setup", "qps": 2, "message_bytes": 4096}
            ea = a.ask({**setup, "id": 1, "address": "127.0.0.1", "role": "client"})["endpoints"]
            eb = b.ask({**setup, "id": 1, "address": "127.0.0.2", "role": "server"})["endpoints"]
            wrong = [dict(e) for e in eb]
            wrong[1]["rkey"] = (wrong[1]["rkey"] + 1) % (1 << 32)
            self.assertEqual(a.ask({"v": 1, "op": "connect", "peers": wrong})["op"], "connected")
            self.assertEqual(b.ask({"v": 1, "op": "connect", "peers": ea})["op"], "connected")
            start = {"v": 1, "op": "start", "seconds": 0.3, "warmup_seconds": 0, "stats_ms": 0}
            self.assertEqual(b.ask(start)["op"], "started")
            self.assertEqual(a.ask({**start, "id": 7})["op"], "started")
            results = a.until("results")
            self.assertEqual(results["id"], 7)
            self.assertGreater(results["errors"], 0)
            self.assertIn("remote_access_error", results["first_error"])
            self.assertIn(f"{ea[1]['qpn']:#x}", results["first_error"])
            self.assertGreater(results["per_qp"][0]["messages"], 0)  # the other QP went on
            server = b.ask({"v": 1, "op": "stop", "id": 8})
            self.assertEqual(server["op"], "results")
            self.assertEqual(server["per_qp"][1]["counters"]["naks_sent"], 1)
            self.assertEqual(server["per_qp"][0]["counters"]["naks_sent"], 0)
        finally:
            a.close()
            b.close()

    def test_hostile_lines_get_errors_and_the_agent_reads_on(self):
        a = Agent(NETNS)
        try:
            hostile = [
                "not json",
                "[1,2,3]",
                '{"v":1,"op":"frobnicate"}',
                '{"v":2,"op":"hello"}',
                '{"v":1,"op":"setup","address":"127.0.0.1","qps":"many"}',
                '{"v":1,"op":"setup","address":"127.0.0.1","qps":1e300}',
                '{"v":1,"op":"setup","address":"127.0.0.1","qps":18446744073709551616}',
                '{"v":1,"op":"setup","address":"h1;touch /tmp/rocehil-pwned"}',
                '{"v":1,"op":"setup","address":"127.0.0.1","qsp":4}',
                '{"v":1,"op":"connect","id":5}',
                '{"v":1,"op":"start"}',
                "[" * 100000,
                '{"v":1,"op":"hello","pad":"' + "x" * (2 << 20) + '"}',
            ]
            for line in hostile:
                with self.subTest(line=line[:40]):
                    r = a.ask(line)
                    self.assertEqual(r["op"], "error", r)
                    self.assertNotIn("\n", r["error"])
            self.assertFalse(os.path.exists("/tmp/rocehil-pwned"))
            # Still alive and still speaking the protocol.
            self.assertEqual(a.ask({"v": 1, "op": "hello", "id": 3})["id"], 3)
        finally:
            self.assertEqual(a.close(), 0)

    def test_the_agent_stops_its_traffic_when_stdin_closes(self):
        a, b = Agent(NETNS), Agent(NETNS)
        setup = {"v": 1, "op": "setup", "qps": 1, "message_bytes": 65536}
        ea = a.ask({**setup, "address": "127.0.0.1"})["endpoints"]
        eb = b.ask({**setup, "address": "127.0.0.2", "role": "server"})["endpoints"]
        a.ask({"v": 1, "op": "connect", "peers": eb})
        b.ask({"v": 1, "op": "connect", "peers": ea})
        b.ask({"v": 1, "op": "start", "stats_ms": 0})
        a.ask({"v": 1, "op": "start", "seconds": 3600, "stats_ms": 100})
        self.assertEqual(a.reply()["op"], "stats")  # traffic is flowing
        started = time.monotonic()
        self.assertEqual(a.close(), 0)
        self.assertEqual(b.close(), 0)
        self.assertLess(time.monotonic() - started, 10)


class Testbed(unittest.TestCase):
    """A default testbed (4 hosts in 2 racks, 2 spines at 400 Mb/s marking CE above 300 Mb/s):
    the client runs in h1, the server in h3 (the other rack) started over the testbed's sshd."""

    @classmethod
    def setUpClass(cls):
        cls.dir, cls.id, cls.ns = testbed_up(ROCEHIL, "rocehil-traffic-tb-")

    @classmethod
    def tearDownClass(cls):
        testbed_down(ROCEHIL, cls.dir)

    def tearDown(self):
        subprocess.run(["ip", "netns", "exec", self.netns("h3"), "nft", "delete", "table", "inet",
                        "rocehil_test_drop"], capture_output=True)

    def netns(self, name):
        return self.ns[name]["netns"]

    def address(self, name):
        return self.ns[name]["fabric_address"]

    def run_client(self, server, *args, expect=0):
        code, report, err = client(self.netns("h1"), "--server", server, "--ssh-config",
                                   os.path.join(self.dir, "ssh", "config"), "--remote-rocehil",
                                   ROCEHIL, "--server-address", self.address(server), *args)
        self.assertEqual(code, expect, err)
        return report

    def test_bw_across_racks_over_ssh_is_intact_and_bounded_by_the_links(self):
        r = self.run_client("h3", "--qps", "4", "--size", "65536", "--duration", "1",
                            "--tclass", "104")  # DSCP 26, not ECN-capable: no marking
        c = r["client"]["results"]
        self.assertEqual(r["server"]["agent_version"], r["client"]["agent_version"])
        self.assertEqual(r["client"]["address"], self.address("h1"))  # the kernel's choice
        self.assertEqual(r["data"]["intact"], 4)
        self.assertGreater(c["gbps"], 0.01)
        # Payload cannot beat the 1 Gb/s host link (nor 2 x 400 Mb/s of spine uplinks).
        self.assertLess(c["gbps"], 0.8 * 1.05)
        self.assertEqual(total(r, "server", "ce_received"), 0)
        self.assertEqual(total(r, "client", "cnps_handled"), 0)

    def test_lat_within_a_rack(self):
        r = self.run_client("h2", "--test", "lat", "--iterations", "500")
        lat = r["client"]["results"]["latency"]
        self.assertEqual(lat["samples"], 500)
        self.assertGreater(lat["p50_us"], 0)

    def test_dropped_packets_are_recovered_by_go_back_n_and_counted(self):
        # Every 400th RoCE packet arriving at h3 from h1 is dropped, counted by nftables. 16
        # messages (64 packets) in flight per QP: go-back-N resends all it had in flight after a
        # loss, and the resent packets count toward the next drop, so with the default depth
        # (about 500 packets) most rounds lost a packet again and a run took 4 s or over 30.
        h3 = self.netns("h3")
        rules = f"""
table inet rocehil_test_drop {{
  chain input {{
    type filter hook input priority -10;
    ip saddr {self.address("h1")} udp dport 4791 numgen inc mod 400 == 0 counter drop
  }}
}}"""
        subprocess.run(["ip", "netns", "exec", h3, "nft", "-f", "-"], input=rules, text=True,
                       check=True)
        r = self.run_client("h3", "--qps", "2", "--size", "16384", "--iterations", "2000",
                            "--tx-depth", "16", "--warmup", "0", "--tclass", "104")
        listing = subprocess.run(["ip", "netns", "exec", h3, "nft", "-j", "list", "table", "inet",
                                  "rocehil_test_drop"], capture_output=True, text=True).stdout
        dropped = next(e["counter"]["packets"] for rule in json.loads(listing)["nftables"]
                       if "rule" in rule for e in rule["rule"]["expr"] if "counter" in e)
        retransmitted = total(r, "client", "retransmitted_packets")
        print(f"\n  nft dropped {dropped}; client retransmitted {retransmitted}, "
              f"{total(r, 'client', 'naks_received')} NAKs, {total(r, 'client', 'timeouts')} "
              f"timeouts", file=sys.stderr)
        self.assertGreater(dropped, 0)
        self.assertGreaterEqual(retransmitted, dropped)
        self.assertGreater(total(r, "server", "out_of_sequence") + total(r, "client", "timeouts"),
                           0)
        self.assertEqual(r["client"]["results"]["errors"], 0)
        self.assertEqual(r["client"]["results"]["messages"], 2000)
        self.assertEqual(r["data"]["intact"], 2)

    def capture(self, spine, path):
        p = subprocess.Popen(["ip", "netns", "exec", self.netns("cap"), "tcpdump", "-i",
                              f"{self.id}-m{spine}", "-nn", "-s", "128", "--immediate-mode", "-U",
                              "-Z", "root", "-w", path], stderr=subprocess.PIPE, text=True)
        self.assertIn("listening on", p.stderr.readline())
        return p

    def test_ce_marks_bring_cnps_and_a_rate_cut_that_the_mirror_ports_confirm(self):
        paths = [os.path.join(self.dir, f"ecn-s{s}.pcap") for s in (1, 2)]
        dumps = [self.capture(s, p) for s, p in zip((1, 2), paths)]
        r = self.run_client("h3", "--qps", "4", "--size", "65536", "--duration", "2",
                            "--udp-sport", "50000")  # DSCP 26 ECT(0): marked above 300 Mb/s
        for p in dumps:
            p.send_signal(signal.SIGINT)
            _, stats = p.communicate(timeout=10)
            self.assertRegex(stats, r"(?m)^0 packets dropped by kernel$")
        ce = total(r, "server", "ce_received")
        # Both ends are notification points: CE on data at the server, and on ACKs (sent in the
        # same ECN-capable class) at the client.
        cnps_sent = total(r, "server", "cnps_sent") + total(r, "client", "cnps_sent")
        rates = [q["counters"]["rate_gbps"] for q in r["client"]["results"]["per_qp"]]
        print(f"\n  CE {ce}, CNPs sent {cnps_sent}, handled by the client "
              f"{total(r, 'client', 'cnps_handled')}, DCQCN rate cuts "
              f"{[q['counters']['rate_cuts'] for q in r['client']['results']['per_qp']]}, "
              f"rates at the end {rates}", file=sys.stderr)
        self.assertGreater(ce, 0)
        self.assertGreater(total(r, "server", "cnps_sent"), 0)
        # Nothing drops CNPs on the way back: each side handled what the other sent.
        self.assertEqual(total(r, "client", "cnps_handled"), total(r, "server", "cnps_sent"))
        self.assertEqual(total(r, "server", "cnps_handled"), total(r, "client", "cnps_sent"))
        # The reaction point cut its rate (below the 100 Gb/s line rate it starts from), on every
        # QP that handled CNPs; the rate at the end may have recovered already.
        for q in r["client"]["results"]["per_qp"]:
            if q["counters"]["cnps_handled"] > 0:
                self.assertGreater(q["counters"]["rate_cuts"], 0, q)

        # The mirror ports saw every CNP cross a spine: rocehil analyze and tshark agree, in
        # total and per destination QP.
        analyzed = tshark_cnps = 0
        by_qp = {}
        for path in paths:
            a = subprocess.run([ROCEHIL, "analyze", path, "--json", "--no-progress"],
                               capture_output=True, text=True)
            self.assertEqual(a.returncode, 0, a.stderr)
            cnp = json.loads(a.stdout)["cnp"]
            analyzed += cnp["count"]
            for qpn, n in cnp["by_dest_qp"].items():
                by_qp[int(qpn)] = by_qp.get(int(qpn), 0) + n
            t = subprocess.run(["tshark", "-r", path, "-Y", "infiniband.bth.opcode == 129", "-T",
                                "fields", "-e", "frame.number"], capture_output=True, text=True)
            tshark_cnps += len(t.stdout.split())
        self.assertEqual(tshark_cnps, cnps_sent)
        self.assertEqual(analyzed, cnps_sent)
        for side in ("client", "server"):
            for q in r[side]["results"]["per_qp"]:
                self.assertEqual(by_qp.get(q["qpn"], 0), q["counters"]["cnps_handled"],
                                 f"{side} QP {q['qpn']:#x}")
        self.assertEqual(r["data"]["intact"], 4)

    def test_a_host_name_that_is_not_one_is_refused_before_ssh_runs(self):
        code, _, err = client(self.netns("h1"), "--server", "-oProxyCommand=touch /tmp/x",
                              "--server-address", self.address("h3"))
        self.assertEqual(code, 2)
        self.assertIn("is not a host name", err)

    def test_a_server_without_rocehil_on_its_path_says_which_flag_fixes_it(self):
        # The README's example as a new user types it: ssh works, but the login shell on h3 has
        # no rocehil on its PATH.
        code, _, err = client(self.netns("h1"), "--server", "h3", "--ssh-config",
                              os.path.join(self.dir, "ssh", "config"), "--remote-rocehil",
                              "rocehil-not-installed-here", "--server-address",
                              self.address("h3"))
        self.assertEqual(code, 3, err)
        self.assertIn("not found", err)
        self.assertIn("'rocehil-not-installed-here' is not a program on h3: give "
                      "--remote-rocehil PATH", err)
        self.assertIn(f"here: --remote-rocehil {ROCEHIL})", err)
        self.assertIn("--server-netns", err)

    def test_an_unreachable_server_is_an_infrastructure_error(self):
        code, _, err = client(self.netns("h1"), "--server", "198.19.255.254", "--server-address",
                              self.address("h3"))
        self.assertEqual(code, 3, err)
        self.assertIn("agent on 198.19.255.254", err)


if __name__ == "__main__":
    ROCEHIL = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
