"""System tests of `rocehil inject pfc|pause`: the real binary sends on one end of a veth pair in
a network namespace of the test's own, and what it says it sent is checked with tools that are not
rocehil: tcpdump captures the other end, tshark decodes the MAC control fields, and the kernel's
interface counters count the frames that left.

Counts and contents only: nothing here depends on how fast or how evenly the frames went out.

Usage: python3 inject_cli_test.py PATH/TO/rocehil   (as root)
"""
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

ROCEHIL = None
PREFIX = f"rhinj{os.getpid()}"
NETNS = PREFIX
SENDER = PREFIX + "a"    # rocehil sends here
RECEIVER = PREFIX + "b"  # tcpdump listens here
SPARE = PREFIX + "d"     # a veth left down
PFC_DST = "01:80:c2:00:00:01"


def in_netns(*argv, timeout=120):
    return subprocess.run(["ip", "netns", "exec", NETNS, *argv], capture_output=True, text=True,
                          timeout=timeout)


def sysfs(iface, name):
    r = in_netns("cat", f"/sys/class/net/{iface}/{name}")
    if r.returncode != 0:
        raise AssertionError(f"cannot read {name} of {iface}: {r.stderr}")
    return r.stdout.strip()


def tx_counters(iface):
    return (int(sysfs(iface, "statistics/tx_packets")),
            int(sysfs(iface, "statistics/tx_bytes")))


def inject(kind, *args):
    """Runs `rocehil inject KIND --json ...` on SENDER; returns (exit code, summary or None,
    stderr)."""
    r = in_netns(ROCEHIL, "inject", kind, "--iface", SENDER, "--json", "--no-progress", *args)
    summary = json.loads(r.stdout) if r.stdout.strip() else None
    return r.returncode, summary, r.stderr


class Capture:
    """tcpdump on RECEIVER for the duration of a `with` block; `frames()` decodes with tshark."""

    def __init__(self, directory):
        self.path = os.path.join(directory, f"capture-{time.monotonic_ns()}.pcap")
        self.stats = ""

    def __enter__(self):
        self.p = subprocess.Popen(
            ["ip", "netns", "exec", NETNS, "tcpdump", "-i", RECEIVER, "-s", "128",
             "--immediate-mode", "-Z", "root", "-w", self.path],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # tcpdump says "listening on" once its socket is bound: frames sent after it are seen.
        ready, _, _ = select.select([self.p.stderr], [], [], 30)
        line = self.p.stderr.readline() if ready else ""
        if "listening on" not in line:
            self.p.kill()
            raise AssertionError(f"tcpdump did not start: {line}")
        return self

    def __exit__(self, *exc):
        # Frames in flight through the veth reach tcpdump's ring within a moment; then stop it.
        time.sleep(0.5)
        self.p.send_signal(signal.SIGINT)
        self.stats = self.p.stderr.read()
        self.p.stderr.close()
        self.p.wait(timeout=30)
        return False

    def dropped(self):
        m = re.search(r"(\d+) packets? dropped by kernel", self.stats)
        if not m:
            raise AssertionError(f"no drop count in tcpdump's statistics: {self.stats}")
        return int(m.group(1))

    def frames(self):
        """Every captured frame as a dict of tshark fields (all of them, not just PFC: the
        namespace has IPv6 off, so nothing else should be on the link)."""
        fields = (["eth.src", "eth.dst", "eth.type", "macc.opcode", "macc.pause_time",
                   "macc.cbfc.enbv"] + [f"macc.cbfc.pause_time.c{p}" for p in range(8)])
        argv = ["tshark", "-r", self.path, "-T", "fields", "-E", "separator=/t"]
        for f in fields:
            argv += ["-e", f]
        r = subprocess.run(argv, capture_output=True, text=True)
        if r.returncode != 0:
            raise AssertionError(f"tshark failed: {r.stderr}")
        return [dict(zip(fields, line.split("\t"))) for line in r.stdout.splitlines()]


def pfc_fields(class_enable, quanta_by_priority):
    """What tshark shows for a PFC frame."""
    fields = {"eth.dst": PFC_DST, "eth.type": "0x8808", "macc.opcode": "0x0101",
              "macc.pause_time": "", "macc.cbfc.enbv": f"0x{class_enable:04x}"}
    for p in range(8):
        fields[f"macc.cbfc.pause_time.c{p}"] = str(quanta_by_priority.get(p, 0))
    return fields


def pause_fields(quanta):
    fields = {"eth.dst": PFC_DST, "eth.type": "0x8808", "macc.opcode": "0x0001",
              "macc.pause_time": str(quanta), "macc.cbfc.enbv": ""}
    for p in range(8):
        fields[f"macc.cbfc.pause_time.c{p}"] = ""
    return fields


class Inject(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # A namespace left by a killed run with this pid goes first; the veths go with it.
        subprocess.run(["ip", "netns", "del", NETNS], stderr=subprocess.DEVNULL)
        subprocess.run(["ip", "netns", "add", NETNS], check=True)
        # Runs even when the rest of setUpClass fails.
        cls.addClassCleanup(subprocess.run, ["ip", "netns", "del", NETNS])
        # Without IPv6 the kernel sends nothing of its own (router solicitations, MLD): every
        # frame on the link and in the tx counters is rocehil's.
        in_netns("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                 "net.ipv6.conf.default.disable_ipv6=1")
        for argv in (["link", "add", SENDER, "type", "veth", "peer", "name", RECEIVER],
                     ["link", "add", SPARE, "type", "veth", "peer", "name", PREFIX + "e"],
                     ["link", "set", SENDER, "up"], ["link", "set", RECEIVER, "up"],
                     ["link", "set", "lo", "up"]):
            subprocess.run(["ip", "-n", NETNS, *argv], check=True)
        cls.tmp = tempfile.mkdtemp(prefix=PREFIX)
        cls.addClassCleanup(shutil.rmtree, cls.tmp, ignore_errors=True)
        cls.sender_mac = sysfs(SENDER, "address")
        # Until both ends are up the veth has no carrier and the injector refuses it.
        deadline = time.monotonic() + 10
        while sysfs(SENDER, "carrier") != "1" and time.monotonic() < deadline:
            time.sleep(0.05)

    def send_and_capture(self, kind, *args):
        """Injects with tcpdump on the far end; returns (summary, frames tshark saw, tx counter
        deltas of the sender)."""
        packets_before, bytes_before = tx_counters(SENDER)
        with Capture(self.tmp) as capture:
            code, summary, err = inject(kind, *args)
        self.assertEqual(code, 0, err)
        self.assertEqual(capture.dropped(), 0, "tcpdump lost frames: the comparison is void")
        packets_after, bytes_after = tx_counters(SENDER)
        return summary, capture.frames(), (packets_after - packets_before,
                                           bytes_after - bytes_before)

    def assert_frames(self, frames, expected, src):
        """`frames` are exactly `expected` (a list of (count, fields)) in that order, from
        `src`."""
        index = 0
        for count, fields in expected:
            for n in range(count):
                self.assertLess(index, len(frames), f"only {len(frames)} frames captured")
                got = frames[index]
                self.assertEqual(got["eth.src"], src, f"frame {index}")
                self.assertEqual({k: got[k] for k in fields}, fields, f"frame {index}")
                index += 1
        self.assertEqual(len(frames), index, "more frames captured than sent")

    def test_pfc_at_a_rate_for_a_time_arrives_exactly_as_injected(self):
        summary, frames, (tx_packets, tx_bytes) = self.send_and_capture(
            "pfc", "--priority", "3,4", "--quanta", "1000", "--pps", "2000", "--duration", "0.5")
        self.assertEqual(summary["schema_version"], 1)
        self.assertEqual(summary["kind"], "pfc")
        self.assertEqual(summary["iface"], SENDER)
        self.assertEqual(summary["priorities"], [3, 4])
        self.assertEqual(summary["quanta"], 1000)
        self.assertEqual(summary["pps"], 2000)
        self.assertEqual(summary["frames_planned"], 1000)
        self.assertEqual(summary["frames_sent"], 1000)
        self.assertEqual(summary["xon_sent"], 0)
        self.assertEqual(summary["frame_bytes"], 60)
        self.assertEqual(summary["src_mac"], self.sender_mac)
        self.assertFalse(summary["interrupted"])
        self.assertIsNone(summary["error"])
        self.assertLess(summary["first_ns"], summary["last_ns"])
        self.assertLessEqual(summary["late_frames"], summary["frames_sent"])
        # 1000 quanta x 512 bit times at 100G.
        self.assertAlmostEqual(summary["pause_ns_per_frame"]["100G"], 5120.0)
        self.assertAlmostEqual(summary["pause_ns_per_frame"]["400G"], 1280.0)

        self.assert_frames(frames, [(1000, pfc_fields(0x18, {3: 1000, 4: 1000}))],
                           self.sender_mac)
        self.assertEqual(len(frames), summary["frames_sent"])
        self.assertEqual(tx_packets, summary["frames_sent"])
        self.assertEqual(tx_bytes, summary["frames_sent"] * summary["frame_bytes"])

    def test_pfc_count_with_given_source_ends_with_one_xon(self):
        src = "02:00:00:00:00:42"
        summary, frames, (tx_packets, tx_bytes) = self.send_and_capture(
            "pfc", "--priority", "0,7", "--priority", "5", "--count", "777", "--pps", "50000",
            "--src-mac", src, "--xon-at-end")
        self.assertEqual(summary["priorities"], [0, 5, 7])
        self.assertEqual(summary["quanta"], 65535)
        self.assertEqual(summary["count"], 777)
        self.assertEqual(summary["frames_sent"], 777)
        self.assertEqual(summary["xon_sent"], 1)
        self.assertEqual(summary["src_mac"], src)
        self.assertAlmostEqual(summary["pause_ns_per_frame"]["100G"], 335539.2)
        self.assert_frames(frames, [(777, pfc_fields(0xa1, {0: 65535, 5: 65535, 7: 65535})),
                                    (1, pfc_fields(0xa1, {}))], src)
        self.assertEqual(len(frames), summary["frames_sent"] + summary["xon_sent"])
        self.assertEqual(tx_packets, 778)
        self.assertEqual(tx_bytes, 778 * 60)

    def test_one_priority_as_a_single_number(self):
        summary, frames, (tx_packets, _) = self.send_and_capture(
            "pfc", "--priority", "6", "--quanta", "0", "--count", "5")
        self.assertEqual(summary["priorities"], [6])
        self.assert_frames(frames, [(5, pfc_fields(0x40, {}))], self.sender_mac)
        self.assertEqual(tx_packets, 5)

    def test_pause_frames_and_their_xon(self):
        summary, frames, (tx_packets, tx_bytes) = self.send_and_capture(
            "pause", "--quanta", "4096", "--count", "300", "--pps", "10000", "--xon-at-end")
        self.assertEqual(summary["kind"], "pause")
        self.assertEqual(summary["priorities"], [])
        self.assertEqual(summary["frames_sent"], 300)
        self.assertEqual(summary["xon_sent"], 1)
        self.assert_frames(frames, [(300, pause_fields(4096)), (1, pause_fields(0))],
                           self.sender_mac)
        self.assertEqual(tx_packets, 301)
        self.assertEqual(tx_bytes, 301 * 60)

    def test_human_summary(self):
        r = in_netns(ROCEHIL, "inject", "pfc", "--iface", SENDER, "--priority", "3", "--count",
                     "50", "--pps", "5000", "--xon-at-end")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"inject on {SENDER} from {self.sender_mac}: PFC priorities 3, quanta "
                      "65535 (335.5 us at 100G, 167.8 us at 200G, 83.88 us at 400G)", r.stdout)
        self.assertIn("sent 50 of 50 frames (60 B each, 5000 per second)", r.stdout)
        self.assertIn("XON sent", r.stdout)

    def test_interrupt_stops_cleanly_sends_the_xon_and_reports(self):
        packets_before, _ = tx_counters(SENDER)
        with Capture(self.tmp) as capture:
            p = subprocess.Popen(["ip", "netns", "exec", NETNS, ROCEHIL, "inject", "pfc",
                                  "--iface", SENDER, "--priority", "2", "--pps", "1000",
                                  "--duration", "600", "--xon-at-end", "--json"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                # Interrupt once frames are leaving (by the kernel's count, not by a clock).
                deadline = time.monotonic() + 30
                while tx_counters(SENDER)[0] - packets_before < 20:
                    self.assertLess(time.monotonic(), deadline, "no frames went out")
                    time.sleep(0.02)
                p.send_signal(signal.SIGINT)
                out, err = p.communicate(timeout=30)
            finally:
                if p.poll() is None:
                    p.kill()
        self.assertEqual(p.returncode, 3, err)
        summary = json.loads(out)
        self.assertTrue(summary["interrupted"])
        self.assertGreaterEqual(summary["frames_sent"], 20)
        self.assertLess(summary["frames_sent"], summary["frames_planned"])
        self.assertEqual(summary["xon_sent"], 1)
        frames = capture.frames()
        self.assert_frames(frames, [(summary["frames_sent"], pfc_fields(0x04, {2: 65535})),
                                    (1, pfc_fields(0x04, {}))], self.sender_mac)
        self.assertEqual(tx_counters(SENDER)[0] - packets_before, summary["frames_sent"] + 1)

    def assert_refused(self, args, message, kind="pfc"):
        """Exit 2, one line on stderr that contains `message`, nothing on stdout, nothing sent."""
        before = tx_counters(SENDER)
        r = in_netns(ROCEHIL, "inject", kind, *args)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stdout, "")
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn(message, lines[0])
        self.assertEqual(tx_counters(SENDER), before)
        return lines[0]

    def test_a_missing_interface_is_one_line_naming_it(self):
        name = PREFIX + "x"
        line = self.assert_refused(["--iface", name, "--priority", "3", "--count", "1"], name)
        self.assertEqual(line, f"rocehil: error: interface '{name}' does not exist "
                               "(see 'ip link show')")

    def test_bad_options_are_one_line_naming_the_option(self):
        cases = [
            (["--priority", "8"], "--priority 8: PFC priorities are 0-7"),
            (["--priority", "x"], "--priority 'x': give PFC priorities 0-7"),
            (["--priority", "3", "--pps", "0"], "--pps 0: give a rate above 0"),
            (["--priority", "3", "--pps", "20000000"], "--pps 20000000: at most 10,000,000"),
            (["--priority", "3", "--quanta", "70000"], "--quanta 70000: quanta are 0-65535"),
            (["--priority", "3", "--duration", "0"], "--duration 0: give seconds above 0"),
            (["--priority", "3", "--count", "0"], "--count 0: give at least one frame"),
            (["--priority", "3", "--count", "5", "--duration", "1"], "--duration excludes --count"),
            (["--priority", "3", "--src-mac", "nonsense"], "--src-mac 'nonsense'"),
            (["--priority", "3", "--src-mac", "01:00:5e:00:00:01"], "must be unicast"),
            ([], "--priority is required"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                self.assert_refused(["--iface", SENDER, *args], message)
        with self.subTest(kind="pause"):
            self.assert_refused(["--iface", SENDER, "--priority", "3"], "not expected", "pause")

    def test_an_interface_down_without_link_or_not_ethernet_is_refused(self):
        self.assert_refused(["--iface", SPARE, "--priority", "3"],
                            f"interface '{SPARE}' is down (bring it up: 'ip link set {SPARE} up')")
        # Up, but its peer is down: no carrier, as a port with nothing plugged in.
        subprocess.run(["ip", "-n", NETNS, "link", "set", SPARE, "up"], check=True)
        try:
            self.assert_refused(["--iface", SPARE, "--priority", "3"],
                                f"interface '{SPARE}' is up but has no link")
        finally:
            subprocess.run(["ip", "-n", NETNS, "link", "set", SPARE, "down"], check=True)
        self.assert_refused(["--iface", "lo", "--priority", "3"],
                            "interface 'lo' is not an Ethernet interface")

    def test_without_root_it_says_what_it_needs(self):
        r = in_netns("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", ROCEHIL,
                     "inject", "pfc", "--iface", SENDER, "--priority", "3", "--count", "1")
        if r.stderr.startswith("setpriv:"):
            self.skipTest(f"cannot run {ROCEHIL} as nobody: {r.stderr.strip()}")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stderr.splitlines(),
                         [f"rocehil: error: interface '{SENDER}': sending raw frames needs root "
                          "or CAP_NET_RAW (run it with sudo)"])


# The exit code ctest's SKIP_RETURN_CODE property turns into "skipped" (as automake's is).
SKIPPED = 77

if __name__ == "__main__":
    ROCEHIL = os.path.abspath(sys.argv.pop(1))
    if os.geteuid() != 0:
        print("skipped: needs root (network namespaces, raw sockets, tcpdump)")
        sys.exit(SKIPPED)
    for tool in ("ip", "tcpdump", "tshark", "setpriv"):
        if shutil.which(tool) is None:
            print(f"skipped: {tool} is not installed")
            sys.exit(SKIPPED)
    unittest.main(verbosity=2)
