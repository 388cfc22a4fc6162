"""System tests of `rocehil capture` (pcap and dpdk backends), `rocehil inject` as the source of
PFC, and capture tasks in `rocehil agent`: the real binary on a veth pair in a namespace of its
own, and on a testbed's mirror port. What rocehil reports is checked with what is not rocehil:
the kernel's interface counters, tshark's reading of the pcapng it wrote, capinfos, and a pause
model written here from the 802.1Qbb rules.

Usage: python3 capture_cli_test.py PATH/TO/rocehil   (as root)
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
from fractions import Fraction

from testbed_fixture import testbed_down, testbed_up

ROCEHIL = None
NETNS = f"rocehil-cap-{os.getpid()}"
SEND, LISTEN = "rhcs0", "rhcs1"  # the veth pair: frames go in at SEND and arrive at LISTEN
PFC_DST = "01:80:c2:00:00:01"


def in_netns(*argv, timeout=120, netns=NETNS):
    return subprocess.run(["ip", "netns", "exec", netns, *argv], capture_output=True, text=True,
                          timeout=timeout)


def counter(iface, name, netns=NETNS):
    r = in_netns("cat", f"/sys/class/net/{iface}/statistics/{name}", netns=netns)
    return int(r.stdout)


def tshark_fields(path, display_filter, *fields):
    """Rows of tshark's fields for the frames matching `display_filter` (one row per frame)."""
    fields = fields or ("frame.number",)
    args = ["tshark", "-r", path, "-n", "-T", "fields", "-E", "separator=|"]
    if display_filter:
        args += ["-Y", display_filter]
    for f in fields:
        args += ["-e", f]
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise AssertionError(f"tshark failed on {path}: {r.stderr}")
    return [line.split("|") for line in r.stdout.splitlines() if line]


def pause_model(frames, link_gbps, storm_ms):
    """Time paused per priority, from (ts_ns, src_mac, {priority: quanta}) in capture order: an
    XOFF reloads the sender's pause timer for the priority, quanta 0 (XON) ends it; pauses of one
    sender that overlap or touch are one continuous pause. Returns {priority: (paused_ns,
    longest_ns, storms)}."""
    # Exact arithmetic: epoch nanoseconds (~1.8e18) plus a float pause would round to 256 ns,
    # which shows whenever a pause expires mid-storm (a late refresh on a loaded machine).
    quantum_ns = Fraction(512) / Fraction(link_gbps)
    state = {}  # (mac, prio) -> [start, end]
    done = {}   # prio -> list of (start, end)
    for ts, mac, quanta in frames:
        for prio, q in quanta.items():
            key = (mac, prio)
            cur = state.get(key)
            if cur is not None and ts >= cur[1]:  # the previous pause expired before this frame
                done.setdefault(prio, []).append(tuple(cur))
                cur = None
            if q == 0:
                if cur is not None:
                    done.setdefault(prio, []).append((cur[0], ts))
                state.pop(key, None)
                continue
            end = ts + q * quantum_ns
            state[key] = [cur[0] if cur else ts, end]
    for (mac, prio), cur in state.items():
        done.setdefault(prio, []).append(tuple(cur))
    out = {}
    for prio, pauses in done.items():
        lengths = [e - s for s, e in pauses]
        out[prio] = (float(sum(lengths)), float(max(lengths)),
                     sum(1 for x in lengths if x > storm_ms * 1_000_000))
    return out


class VethPair(unittest.TestCase):
    """A veth pair in a namespace of its own, IPv6 off so nothing but the test's frames flows."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="rocehil-capture-")
        subprocess.run(["ip", "netns", "add", NETNS], check=True)
        for cmd in (["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"],
                    ["sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"],
                    ["ip", "link", "add", "name", SEND, "type", "veth", "peer", "name", LISTEN],
                    ["ip", "link", "set", SEND, "up"], ["ip", "link", "set", LISTEN, "up"],
                    ["ip", "link", "set", "lo", "up"]):
            r = in_netns(*cmd)
            if r.returncode != 0:
                raise AssertionError(f"{cmd}: {r.stderr}")

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["ip", "netns", "del", NETNS])
        shutil.rmtree(cls.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    # ---- helpers ----

    def start_capture(self, *args):
        """`rocehil capture --json` in the namespace, running until stopped; waits until the
        capture is listening (its first line on stderr)."""
        p = subprocess.Popen(["ip", "netns", "exec", NETNS, ROCEHIL, "capture", "--json",
                              "--no-progress", *args], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        ready, _, _ = select.select([p.stderr], [], [], 60)
        if not ready:
            p.kill()
            raise AssertionError("rocehil capture did not start")
        line = p.stderr.readline()
        self.assertIn("Ctrl-C to stop", line)
        time.sleep(0.3)  # the ring is open before the line; give the EAL's port a moment
        return p

    def stop_capture(self, p):
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err)
        report = json.loads(out)
        self.assertEqual(report["schema_version"], 1)
        return report, err

    def send_scapy(self, frames_expr):
        """Sends the frames a scapy expression builds, out of SEND."""
        script = ("from scapy.all import *\n"
                  "from scapy.contrib.roce import BTH, CNPPadding\n"
                  f"frames = {frames_expr}\n"
                  f"sendp(frames, iface='{SEND}', verbose=0)\n"
                  "print(len(frames))\n")
        r = in_netns(sys.executable, "-c", script)
        self.assertEqual(r.returncode, 0, r.stderr)
        return int(r.stdout.split()[-1])

    def inject(self, *args):
        r = in_netns(ROCEHIL, "inject", *args, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    # ---- tests ----

    def test_roce_counts_match_the_kernel_and_tshark(self):
        rx_before = counter(LISTEN, "rx_packets")
        p = self.start_capture("--iface", LISTEN, "--write", self.path("roce.pcapng"),
                               "--link-gbps", "100")
        sent = self.send_scapy(
            "[Ether(src='02:00:00:00:00:01', dst='02:00:00:00:00:02') / "
            "IP(src='198.18.0.1', dst='198.18.0.2', tos=0x6a) / UDP(sport=49152 + i % 4, "
            "dport=4791) / BTH(opcode=10, dqpn=0x100 + i % 4, psn=i) / Raw(b'x' * 64) "
            "for i in range(400)] + "
            "[Ether(src='02:00:00:00:00:02', dst='02:00:00:00:00:01') / "
            "IP(src='198.18.0.2', dst='198.18.0.1', tos=0xc0) / UDP(sport=49999, dport=4791) / "
            "BTH(opcode=0x81, dqpn=0x200 + i % 3, becn=1) / CNPPadding() for i in range(30)] + "
            "[Ether(src='02:00:00:00:00:01', dst='02:00:00:00:00:02') / IP(src='198.18.0.1', "
            "dst='198.18.0.2') / UDP(sport=5000, dport=53) / Raw(b'q' * 20) for i in range(25)]")
        time.sleep(0.5)
        report, err = self.stop_capture(p)
        rx = counter(LISTEN, "rx_packets") - rx_before
        cap = report["capture"]
        self.assertEqual(sent, 455)
        self.assertEqual(rx, sent, "the veth received what scapy sent")
        self.assertEqual(cap["frames"], rx)
        self.assertEqual(cap["dropped"], 0)
        self.assertEqual(cap["coverage"], 1.0)
        self.assertEqual(report["frames"], rx)
        self.assertEqual(report["roce"]["packets"], 430)
        self.assertEqual(report["cnp"]["count"], 30)
        path = cap["files"][0]
        self.assertEqual(len(tshark_fields(path, "")), rx)
        # CNPs per QP as tshark decodes them (its dissector knows RoCEv2 on UDP 4791).
        tshark_cnp = {}
        for (qp,) in tshark_fields(path, "infiniband.bth.opcode == 0x81", "infiniband.bth.destqp"):
            tshark_cnp[int(qp, 0)] = tshark_cnp.get(int(qp, 0), 0) + 1
        ours = {int(k, 0) if isinstance(k, str) else k: v
                for k, v in _cnp_by_qp(report).items()}
        self.assertEqual(ours, tshark_cnp)
        # The file is an honest pcapng: it names the interface and records the (zero) drops.
        info = subprocess.run(["capinfos", path], capture_output=True, text=True).stdout
        self.assertIn(f"Name = {LISTEN}", info)
        self.assertRegex(info, r"Number of stat entries = 1")
        # A later `rocehil analyze` of the file reports what the live capture did.
        offline = json.loads(subprocess.run([ROCEHIL, "analyze", path, "--json", "--link-gbps",
                                             "100"], capture_output=True, text=True).stdout)
        for key in ("frames", "bytes", "roce", "cnp", "flows"):
            self.assertEqual(offline[key], report[key], key)

    def check_workers(self, backend_args):
        """Two workers on the veth: together they see what the kernel received, each flow
        stays with one of them, and the joined analysis is the frames' own."""
        rx_before = counter(LISTEN, "rx_packets")
        p = self.start_capture(*backend_args, "--workers", "2", "--write", self.path("fan.pcapng"))
        sent = self.send_scapy(
            "[Ether(src='02:00:00:00:00:01', dst='02:00:00:00:00:02') / "
            "IP(src='198.18.0.1', dst='198.18.0.2') / UDP(sport=49152 + i % 16, dport=4791) / "
            "BTH(opcode=10, dqpn=0x100 + i % 16, psn=i // 16) / Raw(b'x' * 64) for i in range(480)] + "
            "[Ether(src='02:00:00:00:00:02', dst='02:00:00:00:00:01') / "
            "IP(src='198.18.0.2', dst='198.18.0.1', tos=0xc0) / UDP(sport=50000 + i % 5, dport=4791) / "
            "BTH(opcode=0x81, dqpn=0x200 + i % 5, becn=1) / CNPPadding() for i in range(40)]")
        time.sleep(0.5)
        report, _ = self.stop_capture(p)
        rx = counter(LISTEN, "rx_packets") - rx_before
        cap = report["capture"]
        self.assertEqual(rx, sent, "the veth received what scapy sent")
        self.assertEqual(cap["frames"], rx, "the workers together saw every frame the kernel counted")
        self.assertEqual(len(cap["workers"]), 2)
        self.assertEqual(sum(w["frames"] for w in cap["workers"]), cap["frames"])
        self.assertTrue(all(w["frames"] > 0 for w in cap["workers"]),
                        f"21 flows hashed over 2 sockets: both get some ({cap['workers']})")
        self.assertEqual(cap["dropped"], 0)
        self.assertEqual(cap["moved"], 0, "no worker's ring filled up, so no flow was split")
        self.assertEqual((report["frames"], report["roce"]["packets"], report["cnp"]["count"]),
                         (rx, 520, 40))
        self.assertEqual(len(report["flows"]), 16)
        self.assertTrue(all(f["packets"] == 30 and f["psn_gaps"] == 0 and f["retransmits"] == 0
                            for f in report["flows"]), report["flows"])
        # Each worker wrote its own file, and every flow is in exactly one of them.
        self.assertEqual([os.path.basename(f) for f in cap["files"]], ["fan-w1.pcapng", "fan-w2.pcapng"])
        per_file = [json.loads(subprocess.run([ROCEHIL, "analyze", f, "--json"], capture_output=True,
                                              text=True, check=True).stdout) for f in cap["files"]]
        self.assertEqual([j["frames"] for j in per_file], [w["frames"] for w in cap["workers"]])
        flows = [{(f["src"], f["dst"], f["dest_qp"]) for f in j["flows"]} for j in per_file]
        self.assertEqual(flows[0] & flows[1], set(), "a flow stays with one worker")
        self.assertEqual(len(flows[0] | flows[1]), 16)
        self.assertEqual(sum(len(tshark_fields(f, "")) for f in cap["files"]), rx)

    def test_workers_share_the_flows_and_add_up_to_the_kernel_count(self):
        self.check_workers(["--iface", LISTEN])

    def test_dpdk_workers_read_a_queue_each_and_add_up_to_the_kernel_count(self):
        # net_af_packet with qpairs=2: a socket per queue in the kernel's fanout hash group.
        self.check_workers(["--backend", "dpdk", "--dpdk-args",
                            f"--no-huge --no-pci -m 256 "
                            f"--vdev=net_af_packet0,iface={LISTEN},qpairs=2,framecnt=8192"])

    def test_dpdk_workers_say_when_a_full_ring_moved_frames_to_another(self):
        # net_af_packet's fanout group rolls a frame over to another queue's socket when its
        # own ring is nearly full; a stalled capture with 64-frame rings makes that happen.
        sent, report, err = self.capture_stalled(
            ["--backend", "dpdk", "--workers", "2", "--dpdk-args",
             f"--no-huge --no-pci -m 256 --vdev=net_af_packet0,iface={LISTEN},qpairs=2,framecnt=64"],
            pps=100000, count=3000)
        cap = report["capture"]
        print(f"  sent {sent}: captured {cap['frames']}, dropped {cap['dropped']}, moved "
              f"{[w['moved'] for w in cap['workers']]}", file=sys.stderr)
        self.assertGreater(cap["moved"], 0, cap)
        self.assertEqual(cap["moved"], sum(w["moved"] for w in cap["workers"]))
        self.assertEqual(cap["frames"] + cap["dropped"], sent, cap)
        self.assertIn("went to another worker's queue because their own was nearly full", err)

    def test_dpdk_workers_need_as_many_queues(self):
        for qpairs, workers, says in ((1, 2, "--workers 2: the device net_af_packet0 has qpairs=1; "
                                              "give it qpairs=2"),
                                      (2, 1, "qpairs=2 spreads the frames over several queues")):
            with self.subTest(qpairs=qpairs, workers=workers):
                r = subprocess.run(["ip", "netns", "exec", NETNS, ROCEHIL, "capture",
                                    "--backend", "dpdk", "--workers",
                                    str(workers), "--duration", "1", "--dpdk-args",
                                    f"--no-huge --no-pci -m 256 "
                                    f"--vdev=net_af_packet0,iface={LISTEN},qpairs={qpairs}"],
                                   capture_output=True, text=True, timeout=60)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(says, r.stderr)

    def test_filters_keep_exactly_what_they_name(self):
        mix = ("[Ether(src='02:00:00:00:00:01', dst='02:00:00:00:00:02') / IP(src='198.18.0.1', "
               "dst='198.18.0.2') / UDP(sport=49152, dport=4791) / BTH(opcode=10, dqpn=0x100) / "
               "Raw(b'x' * 32) for i in range(50)] + "
               "[Ether(src='02:00:00:00:00:02', dst='02:00:00:00:00:01') / IP(src='198.18.0.2', "
               "dst='198.18.0.1') / UDP(sport=49999, dport=4791) / BTH(opcode=0x81, dqpn=0x100, "
               "becn=1) / CNPPadding() for i in range(7)] + "
               "[Ether(src='02:00:00:00:00:01', dst='02:00:00:00:00:02') / IP(src='198.18.0.1', "
               "dst='198.18.0.2') / UDP(sport=5000, dport=53) for i in range(11)]")
        for name, expected in (("roce", 57), ("cnp-pfc", 7), ("all", 68)):
            with self.subTest(filter=name):
                p = self.start_capture("--iface", LISTEN, "--filter", name)
                self.send_scapy(mix)
                time.sleep(0.4)
                report, _ = self.stop_capture(p)
                self.assertEqual(report["capture"]["frames"], expected)
                self.assertEqual(report["capture"]["filter"], name)

    def check_injected_pfc(self, backend_args):
        """Injects a PFC storm on priority 3 and a short pause on priority 5, then checks the
        capture against what was injected and against the pause model over tshark's reading."""
        # 65535 quanta at 1 Gbit/s hold 33.6 ms: a 1 kHz refresh keeps the pause continuous even
        # when a loaded machine delays the injector by many ms (at 10 Gbit/s, 3.4 ms, it did not).
        link_gbps = 1
        p = self.start_capture(*backend_args, "--write", self.path("pfc.pcapng"),
                               "--link-gbps", str(link_gbps))
        storm = self.inject("pfc", "--iface", SEND, "--priority", "3", "--quanta", "65535",
                            "--pps", "1000", "--count", "300", "--xon-at-end")
        short = self.inject("pfc", "--iface", SEND, "--priority", "5", "--quanta", "1000",
                            "--pps", "100", "--count", "5")
        pause = self.inject("pause", "--iface", SEND, "--quanta", "200", "--pps", "100",
                            "--count", "3")
        time.sleep(0.5)
        report, _ = self.stop_capture(p)
        self.assertEqual(storm["frames_sent"], 300)
        self.assertEqual(storm["xon_sent"], 1)
        self.assertEqual(short["frames_sent"], 5)
        self.assertEqual(pause["frames_sent"], 3)
        cap = report["capture"]
        print(f"  frames per worker: {[w['frames'] for w in cap['workers']]}", file=sys.stderr)
        self.assertEqual(cap["dropped"], 0)
        self.assertEqual(cap["frames"], 300 + 1 + 5 + 3)
        pfc = report["pfc"]
        self.assertEqual(pfc["frames"], 306)
        p3, p5 = pfc["priorities"][3], pfc["priorities"][5]
        self.assertEqual((p3["frames"], p3["xoff"], p3["xon"], p3["quanta"]), (301, 300, 1,
                                                                               300 * 65535))
        self.assertEqual((p5["frames"], p5["xoff"], p5["xon"], p5["quanta"]), (5, 5, 0, 5000))
        self.assertEqual(report["pause_8023x"]["frames"], 3)
        self.assertEqual(report["pause_8023x"]["quanta"], 600)

        # The pause model over tshark's timestamps and fields of the same file.
        # With workers, every worker's file, in time order.
        frames = []
        for file in cap["files"]:
            for ts, src, cev, *quanta in tshark_fields(
                    file, "macc.opcode == 0x0101", "frame.time_epoch", "eth.src",
                    "macc.cbfc.enbv", *[f"macc.cbfc.pause_time.c{i}" for i in range(8)]):
                cev = int(cev, 0)
                frames.append((_ns(ts), src, {i: int(quanta[i] or 0) for i in range(8)
                                              if cev & (1 << i)}))
        frames.sort(key=lambda f: f[0])
        self.assertEqual(len(frames), 306)
        model = pause_model(frames, link_gbps, storm_ms=100)
        for prio, (paused, longest, storms) in model.items():
            ours = pfc["priorities"][prio]
            self.assertAlmostEqual(ours["paused_ns"], paused, delta=2, msg=f"priority {prio}")
            self.assertAlmostEqual(ours["longest_pause_ns"], longest, delta=2)
            self.assertEqual(ours["storms"], storms, f"priority {prio}")
        self.assertGreaterEqual(pfc["priorities"][3]["storms"], 1)
        self.assertEqual(pfc["priorities"][5]["storms"], 0)
        listed = [s for s in pfc["storms"] if s["priority"] == 3]
        self.assertEqual(len(listed), p3["storms"])
        mac = in_netns("cat", f"/sys/class/net/{SEND}/address").stdout.strip()
        self.assertTrue(all(s["source_mac"] == mac for s in listed), listed)

    def test_injected_pfc_comes_out_as_injected_with_pcap(self):
        self.check_injected_pfc(["--iface", LISTEN])

    def test_injected_pfc_comes_out_as_injected_with_pcap_workers(self):
        # Each worker accounts the pause frames it gets (PFC has no IP header: the fanout hash
        # gives them all to one), and the joined analysis equals the model of all of them.
        self.check_injected_pfc(["--iface", LISTEN, "--workers", "3"])

    def test_injected_pfc_comes_out_as_injected_with_dpdk_af_packet(self):
        self.check_injected_pfc(["--backend", "dpdk", "--dpdk-args",
                                 f"--no-huge --no-pci -m 256 --vdev=net_af_packet0,iface={LISTEN}"])

    def capture_stalled(self, capture_args, pps, count):
        """A capture whose process is stopped while `count` PFC frames arrive: returns the
        frames sent, the report and stderr."""
        p = self.start_capture(*capture_args)
        rocehil_pid = _rocehil_child(p.pid)
        os.kill(rocehil_pid, signal.SIGSTOP)
        try:
            sent = self.inject("pfc", "--iface", SEND, "--priority", "0", "--quanta", "1",
                               "--pps", str(pps), "--count", str(count))["frames_sent"]
        finally:
            os.kill(rocehil_pid, signal.SIGCONT)
        time.sleep(0.5)
        return (sent, *self.stop_capture(p))

    def test_a_stalled_reader_loses_frames_and_says_so(self):
        # A 1 MiB ring and a reader that cannot read (stopped): the kernel must drop, and every
        # frame is either captured or counted as dropped.
        sent, report, err = self.capture_stalled(["--iface", LISTEN, "--buffer-mb", "1"],
                                                 pps=200000, count=60000)
        cap = report["capture"]
        self.assertGreater(cap["dropped_buffer"], 0)
        self.assertLess(cap["coverage"], 1.0)
        self.assertEqual(cap["frames"] + cap["dropped"], sent)
        self.assertAlmostEqual(cap["coverage"], cap["frames"] / sent)
        self.assertIn("the capture lost", err)

    def test_ring_files_keep_the_newest(self):
        base = self.path("ring.pcapng")
        p = self.start_capture("--iface", LISTEN, "--write", base, "--ring-files", "2",
                               "--ring-mb", "1", "--snaplen", "1024")
        sent = self.inject("pfc", "--iface", SEND, "--priority", "1", "--quanta", "1",
                           "--pps", "100000", "--count", "60000")["frames_sent"]
        time.sleep(0.5)
        report, _ = self.stop_capture(p)
        cap = report["capture"]
        self.assertEqual(cap["frames"], sent)
        self.assertEqual(len(cap["files"]), 2)
        self.assertGreater(cap["files_deleted"], 0)
        on_disk = sorted(f for f in os.listdir(self.dir) if f.startswith("ring-"))
        self.assertEqual([os.path.join(self.dir, f) for f in on_disk], cap["files"])
        kept = sum(len(tshark_fields(f, "")) for f in cap["files"])
        self.assertLess(kept, sent)
        self.assertGreater(kept, 0)

    def test_duration_ends_the_capture_with_the_summary(self):
        r = in_netns(ROCEHIL, "capture", "--iface", LISTEN, "--duration", "0.5", "--write",
                     self.path("timed.pcapng"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("coverage  100.0000%", r.stdout)
        self.assertIn(f"written   {self.path('timed.pcapng')}", r.stdout)

    def test_bad_usage_is_one_line_and_exit_2(self):
        for args, expected in (
                (["--iface", "rh-nothere"], "--iface rh-nothere: no such interface"),
                (["--backend", "dpdk"], "--backend dpdk needs --dpdk-args"),
                (["--iface", LISTEN, "--ring-mb", "4", "--write", "x.pcapng"],
                 "--ring-mb needs --ring-files"),
                (["--iface", LISTEN, "--filter", "tcp"], "--filter"),
                (["--iface", LISTEN, "--snaplen", "10"], "--snaplen")):
            with self.subTest(args=args):
                r = in_netns(ROCEHIL, "capture", *args, "--duration", "0.2")
                self.assertEqual(r.returncode, 2, r.stderr)
                lines = r.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, r.stderr)
                self.assertIn(expected, lines[0])

    def test_dpdk_replay_of_a_file_equals_rocehil_analyze(self):
        # A capture written by tcpdump (another writer), replayed through DPDK's net_pcap. Whole
        # frames: net_pcap reports a record's captured length as the frame's length, so a file cut
        # by a snap length would replay with smaller byte counts (a DPDK 22.11 limit).
        src = self.path("replay-src.pcap")
        dump = subprocess.Popen(["ip", "netns", "exec", NETNS, "tcpdump", "-i", LISTEN, "-nn",
                                 "-s", "0", "--immediate-mode", "-U", "-Q", "in", "-w", src],
                                stderr=subprocess.PIPE, text=True)
        self.assertIn("listening on", dump.stderr.readline())
        self.send_scapy(
            "[Ether(src='02:00:00:00:00:01', dst='02:00:00:00:00:02') / IP(src='198.18.0.1', "
            "dst='198.18.0.2', tos=0x6b if i % 5 == 0 else 0x6a) / UDP(sport=49152 + i % 3, "
            "dport=4791) / BTH(opcode=10, dqpn=0x100 + i % 3, psn=i // 3 + (i % 7 == 0)) / "
            "Raw(b'x' * 200) for i in range(300)]")
        self.inject("pfc", "--iface", SEND, "--priority", "3", "--quanta", "65535", "--pps",
                    "500", "--count", "40")
        time.sleep(0.5)
        dump.send_signal(signal.SIGINT)
        dump.communicate(timeout=10)
        r = subprocess.run([ROCEHIL, "capture", "--backend", "dpdk", "--json", "--no-progress",
                            "--link-gbps", "100", "--dpdk-args",
                            f"--no-huge --no-pci -m 256 --vdev=net_pcap0,rx_pcap={src}"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        replay = json.loads(r.stdout)
        offline = json.loads(subprocess.run([ROCEHIL, "analyze", src, "--json", "--link-gbps",
                                             "100"], capture_output=True, text=True).stdout)
        self.assertEqual(replay["capture"]["frames"], 340)
        for key in ("frames", "bytes", "roce", "cnp", "flows", "first_ns", "last_ns"):
            self.assertEqual(replay[key], offline[key], key)
        for prio in range(8):
            for key in ("frames", "xoff", "quanta", "paused_ns", "longest_pause_ns", "storms"):
                self.assertEqual(replay["pfc"]["priorities"][prio][key],
                                 offline["pfc"]["priorities"][prio][key], (prio, key))

    def test_agent_capture_task(self):
        agent = subprocess.Popen(["ip", "netns", "exec", NETNS, ROCEHIL, "agent"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

        def ask(message):
            agent.stdin.write(json.dumps(message) + "\n")
            agent.stdin.flush()
            ready, _, _ = select.select([agent.stdout], [], [], 60)
            self.assertTrue(ready, "the agent did not answer")
            return json.loads(agent.stdout.readline())

        try:
            hello = ask({"v": 1, "op": "hello", "id": 1})
            self.assertIn("pcap", hello["capture_backends"])
            # The DPDK backend module beside the build tree's binary is found (loaded at the first
            # DPDK capture, not for a hello).
            self.assertIn("dpdk", hello["capture_backends"])
            bad = ask({"v": 1, "op": "capture_start", "id": 2, "iface": "rh-nothere"})
            self.assertEqual(bad["op"], "error")
            self.assertIn("rh-nothere", bad["error"])
            started = ask({"v": 1, "op": "capture_start", "id": 3, "iface": LISTEN,
                           "filter": "cnp-pfc", "write": self.path("agent.pcapng"),
                           "link_gbps": 100, "direction": "spine-to-leaf", "storm_ms": 20})
            self.assertEqual(started["op"], "capture_started", started)
            again = ask({"v": 1, "op": "capture_start", "id": 4, "iface": LISTEN})
            self.assertEqual(again["op"], "error")
            self.assertIn("already running", again["error"])
            time.sleep(0.3)
            sent = self.inject("pfc", "--iface", SEND, "--priority", "3,4", "--quanta", "100",
                               "--pps", "1000", "--count", "50")["frames_sent"]
            time.sleep(0.3)
            summary = ask({"v": 1, "op": "capture_stop", "id": 5})
            self.assertEqual(summary["op"], "capture_summary", summary)
            self.assertEqual(summary["id"], 5)
            self.assertTrue(summary["stopped"])
            self.assertEqual(summary["frames"], sent)
            self.assertEqual(summary["coverage"], 1.0)
            self.assertEqual(summary["analysis"]["pfc"]["priorities"][4]["xoff"], sent)
            # The pause options reached the analysis: every frame counts as from the spine.
            self.assertEqual(summary["analysis"]["pfc"]["from_spine"]["frames"], sent)
            self.assertEqual(summary["analysis"]["options"]["storm_ms"], 20)
            self.assertEqual(len(tshark_fields(summary["files"][0], "")), sent)
            # A timed capture reports by itself, under the id of its capture_start.
            timed = ask({"v": 1, "op": "capture_start", "id": 6, "iface": LISTEN, "seconds": 0.5})
            self.assertEqual(timed["op"], "capture_started")
            ready, _, _ = select.select([agent.stdout], [], [], 30)
            self.assertTrue(ready)
            done = json.loads(agent.stdout.readline())
            self.assertEqual((done["op"], done["id"], done["stopped"]), ("capture_summary", 6,
                                                                         False))
        finally:
            agent.stdin.close()
            self.assertEqual(agent.wait(timeout=30), 0)


class Testbed(unittest.TestCase):
    """RoCE traffic between racks of a default testbed, captured on both spines' mirror ports:
    what rocehil captured equals the mirror interfaces' kernel counters and tshark's count."""

    @classmethod
    def setUpClass(cls):
        cls.dir, cls.id, cls.ns = testbed_up(ROCEHIL, "rocehil-capture-tb-")

    @classmethod
    def tearDownClass(cls):
        testbed_down(ROCEHIL, cls.dir)

    def test_mirror_port_captures_match_kernel_counters_and_tshark(self):
        cap_ns = self.ns["cap"]["netns"]
        mirrors = [f"{self.id}-m{s}" for s in (1, 2)]
        before = {m: counter(m, "rx_packets", cap_ns) for m in mirrors}
        captures = []
        # Spine 1's mirror through libpcap, spine 2's through DPDK (the af_packet vdev).
        backends = [["--iface", mirrors[0]],
                    ["--backend", "dpdk", "--dpdk-args", "--no-huge --no-pci -m 256 "
                     f"--vdev=net_af_packet0,iface={mirrors[1]},qpairs=1,framecnt=8192"]]
        for m, backend in zip(mirrors, backends):
            p = subprocess.Popen(["ip", "netns", "exec", cap_ns, ROCEHIL, "capture", *backend,
                                  "--json", "--no-progress", "--write",
                                  os.path.join(self.dir, f"{m}.pcapng")],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.assertIn("Ctrl-C to stop", p.stderr.readline())
            captures.append(p)
        time.sleep(0.3)
        r = subprocess.run(["ip", "netns", "exec", self.ns["h1"]["netns"], ROCEHIL, "traffic",
                            "client", "--json", "--stats-ms", "0", "--server", "h3",
                            "--ssh-config", os.path.join(self.dir, "ssh", "config"),
                            "--remote-rocehil", ROCEHIL, "--server-address",
                            self.ns["h3"]["fabric_address"], "--qps", "4", "--duration", "1",
                            "--udp-sport", "50000"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        time.sleep(0.5)
        total_roce = 0
        for m, p in zip(mirrors, captures):
            at_stop = counter(m, "rx_packets", cap_ns) - before[m]
            p.send_signal(signal.SIGINT)
            out, err = p.communicate(timeout=60)
            self.assertEqual(p.returncode, 0, err)
            report = json.loads(out)
            cap = report["capture"]
            rx = counter(m, "rx_packets", cap_ns) - before[m]
            with self.subTest(mirror=m):
                self.assertEqual(cap["dropped"], 0)
                # Every frame the kernel had received when the capture was told to stop was
                # captured, and nothing else. A frame of the fabric's own (ARP, ND) may reach
                # the mirror while the capture stops: then it is in the kernel's count and need
                # not be in the capture (seen once: 116858 captured, 116860 by the kernel).
                self.assertGreaterEqual(cap["frames"], at_stop)
                self.assertLessEqual(cap["frames"], rx)
                path = cap["files"][0]
                self.assertEqual(len(tshark_fields(path, "")), cap["frames"])
                self.assertEqual(len(tshark_fields(path, "udp.dstport == 4791")),
                                 report["roce"]["packets"] + report["roce"]["malformed"]
                                 + report["roce"]["truncated"])
                self.assertEqual(len(tshark_fields(path, "infiniband.bth.opcode == 0x81")),
                                 report["cnp"]["count"])
            total_roce += report["roce"]["packets"]
            print(f"\n  {m} ({cap['backend']}): {cap['frames']} frames (kernel rx {rx}), RoCE "
                  f"{report['roce']['packets']}, CNPs {report['cnp']['count']}, coverage "
                  f"{cap['coverage']}", file=sys.stderr)
        # The traffic crossed the spines (what the leaves' queues dropped before a spine never
        # reaches a mirror, so the client's packet count is an upper bound, not an equality).
        sent = sum(q["counters"]["packets_sent"]
                   for q in json.loads(r.stdout)["client"]["results"]["per_qp"])
        self.assertGreater(total_roce, 0)
        self.assertLess(total_roce, 4 * sent)


def _ns(epoch_text):
    """tshark's frame.time_epoch ("1795337240.767890091") as integer ns, without float loss."""
    sec, _, frac = epoch_text.partition(".")
    return int(sec) * 1_000_000_000 + int((frac + "000000000")[:9])


def _cnp_by_qp(report):
    by = report["cnp"]["by_dest_qp"]
    return by if isinstance(by, dict) else {e["qp"]: e["count"] for e in by}


def _rocehil_child(pid):
    """The rocehil process under `ip netns exec` (which execs it, so usually `pid` itself)."""
    r = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    children = r.stdout.split()
    return int(children[0]) if children else pid


def main():
    global ROCEHIL
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    ROCEHIL = os.path.abspath(sys.argv.pop(1))
    if os.geteuid() != 0:
        print("skipped: needs root (network namespaces, raw sockets)")
        sys.exit(0)
    unittest.main(verbosity=2)


if __name__ == "__main__":
    main()
