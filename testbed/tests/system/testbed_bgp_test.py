"""System tests of `rocehil testbed up --routing bgp`: FRR's zebra, bgpd and bfdd in every switch,
held to what FRR itself says (vtysh's JSON) and to the kernel's routes (`ip -j route`), with
UDP datagrams and ping between racks and a bw case through a link taken down: its switch ports,
polled through the case, show the traffic leaving the spine and coming back, and the fabric's
recovery read from them agrees with the agents' within a polling interval.

One testbed of 4 hosts in 2 racks with 2 spines: h1 and h2 behind l1, h3 and h4 behind l2.

Usage: python3 testbed_bgp_test.py PATH/TO/rocehil   (as root)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

ROCEHIL = None
HERE = os.path.dirname(os.path.abspath(__file__))
TRAFFIC = os.path.join(HERE, "traffic.py")
TB = {}
LINK = "l1-s1"
RACK2 = "198.18.2.0/24"
# Leaf r's end of the link to spine s is 198.18.(100+s).(2r), the spine's .(2r+1).
L1_VIA_S1, L1_VIA_S2 = "198.18.101.3", "198.18.102.3"
S1_TO_L1 = "198.18.101.2"
# BFD is 100 ms x 3 and the link's interfaces go down at once; the bound is ten times that, so
# a machine busy with other tests does not fail it, while a session left to its hold timer
# (9 s) or a route that never moves still does.
DETECTION_BOUND_S = 3.0


def fabric_recovery_ms(timeline, event_ns, share=0.9):
    """The switch_timeline's recovery after an event, worked out here from its ports' raw
    bytes: the ports toward the case's hosts summed; their rate over the polls in the second
    before the event; the first interval between polls after it at `share` of that."""
    ports = [p for p in timeline["ports"] if p["to_case_host"]]
    at = [timeline["start_ns"] + round(t * 1e6) for t in ports[0]["t_ms"]]
    sent = [sum(p["sent_bytes"][i] for p in ports) for i in range(len(at))]
    before = [i for i in range(len(at)) if event_ns - 1e9 <= at[i] <= event_ns]
    a, b = before[0], before[-1]
    rate = (sent[b] - sent[a]) / (at[b] - at[a])
    for i in range(b + 1, len(at) - 1):
        if (sent[i + 1] - sent[i]) / (at[i + 1] - at[i]) >= share * rate:
            return (at[i] - event_ns) / 1e6
    return None


def uplinks(carried):
    """The leaf-to-spine links a window of the switch timeline says carried traffic."""
    return {f"{c['switch']}->{c['to']}" for c in carried
            if c["switch"].startswith("l") and c["to"].startswith("s")}


def rocehil(*args, check=True, timeout=120):
    result = subprocess.run([ROCEHIL, *args], capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(
            f"rocehil {' '.join(args)} exited {result.returncode}: {result.stderr}")
    return result


def netns(name):
    return f"rocehil-{TB['id']}-{name}"


def vtysh(switch, daemon, command):
    """FRR's own answer, through the switch's vty sockets."""
    out = subprocess.run(["vtysh", "--vty_socket", f"/run/rocehil/{netns(switch)}.frr", "-d",
                          daemon, "-c", command],
                         capture_output=True, text=True, check=True, timeout=30).stdout
    return json.loads(out)


def sessions(switch):
    """{peer address: state} from bgpd."""
    peers = vtysh(switch, "bgpd", "show bgp summary json")["ipv4Unicast"]["peers"]
    return {address: p["state"] for address, p in peers.items()}


def bfd(switch):
    """{peer address: status} from bfdd."""
    return {p["peer"]: p["status"] for p in vtysh(switch, "bfdd", "show bfd peers json")}


def kernel_next_hops(switch, prefix):
    """The gateways of the kernel's route to `prefix` in the switch's namespace, sorted; a route
    through a nexthop object is followed to its group's members."""
    routes = json.loads(subprocess.run(
        ["ip", "-n", netns(switch), "-j", "route", "show", "exact", prefix],
        capture_output=True, text=True, check=True).stdout or "[]")
    if not routes:
        return []
    [route] = routes
    if "nexthops" in route:
        return sorted(h["gateway"] for h in route["nexthops"])
    if "gateway" in route:
        return [route["gateway"]]
    objects = {n["id"]: n for n in json.loads(subprocess.run(
        ["ip", "-n", netns(switch), "-j", "nexthop", "show"], capture_output=True, text=True,
        check=True).stdout or "[]")}
    group = objects[route["nhid"]]
    members = [objects[m["id"]] for m in group.get("group", [])] or [group]
    return sorted(m["gateway"] for m in members)


def kernel_protocols(switch):
    """{prefix: protocol} of the namespace's routes to the racks."""
    routes = json.loads(subprocess.run(["ip", "-n", netns(switch), "-j", "route", "show"],
                                       capture_output=True, text=True, check=True).stdout)
    return {r["dst"]: r.get("protocol") for r in routes if r["dst"].endswith(".0/24")}


def wait_until(predicate, seconds):
    """The monotonic time at which predicate() was first seen true (polled every 20 ms), or
    None when it was not within `seconds`."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if predicate():
            return time.monotonic()
        time.sleep(0.02)
    return None


def udp_between_racks(src_host, src, dst_host, dst, ports=16, count=20):
    """Datagrams from `ports` source ports (so ECMP hashes them over every spine), counted at
    the receiver: (sent, received)."""
    recv = subprocess.Popen(["ip", "netns", "exec", netns(dst_host), sys.executable, TRAFFIC,
                             "recv", dst, "1000"], stdout=subprocess.PIPE, text=True)
    assert json.loads(recv.stdout.readline())["ready"]
    port_list = ",".join(str(40000 + p) for p in range(ports))
    sent = json.loads(subprocess.run(
        ["ip", "netns", "exec", netns(src_host), sys.executable, TRAFFIC, "send", src, dst,
         port_list, str(count), "200", "0", "500"],
        capture_output=True, text=True, check=True, timeout=60).stdout)["sent"]
    received = json.loads(recv.communicate(timeout=60)[0])["received"]
    return sent, received


def ping(src_host, dst):
    return subprocess.run(["ip", "netns", "exec", netns(src_host), "ping", "-c", "3", "-i",
                           "0.2", "-W", "1", dst], capture_output=True, text=True).returncode


def setUpModule():
    directory = tempfile.mkdtemp(prefix="rocehil-tb-bgp-")
    up = rocehil("testbed", "up", "--dir", directory, "--hosts", "4", "--racks", "2",
                 "--spines", "2", "--routing", "bgp", "--json", "--quiet", check=False,
                 timeout=300)
    if up.returncode != 0:
        rocehil("testbed", "down", "--dir", directory, check=False)
        shutil.rmtree(directory, ignore_errors=True)
        raise AssertionError(f"testbed up --routing bgp failed: {up.stderr}")
    TB.update(dir=directory, id=json.loads(up.stdout)["id"])
    status = json.loads(rocehil("testbed", "status", "--dir", directory, "--json").stdout)
    TB["hosts"] = {n["name"]: n["fabric_address"] for n in status["namespaces"]
                   if n["role"] == "host"}


def tearDownModule():
    if not TB:
        return
    down = rocehil("testbed", "down", "--dir", TB["dir"], "--json", check=False)
    shutil.rmtree(TB["dir"], ignore_errors=True)
    # No routing daemon of the testbed is left behind.
    left = subprocess.run(["pgrep", "-af", f"/usr/lib/frr/.*rocehil-{TB['id']}-"],
                          capture_output=True, text=True).stdout
    assert down.returncode == 0, down.stderr
    assert left == "", f"FRR daemons left after down: {left}"


class Bgp(unittest.TestCase):
    def test_1_every_session_is_established_and_bfd_is_up(self):
        expected = {"l1": {L1_VIA_S1, L1_VIA_S2}, "l2": {"198.18.101.5", "198.18.102.5"},
                    "s1": {S1_TO_L1, "198.18.101.4"}, "s2": {"198.18.102.2", "198.18.102.4"}}
        for switch, peers in expected.items():
            self.assertEqual(sessions(switch), {p: "Established" for p in peers}, switch)
            self.assertEqual(bfd(switch), {p: "up" for p in peers}, switch)
        # rocehil's reading agrees with FRR's, and calls the fabric healthy.
        status = json.loads(rocehil("testbed", "status", "--dir", TB["dir"], "--json").stdout)
        self.assertTrue(status["healthy"])
        self.assertEqual(status["routing"], {"mode": "bgp",
                                             "bfd": {"interval_ms": 100, "multiplier": 3}})
        for ns in status["namespaces"]:
            if ns["role"] not in ("leaf", "spine"):
                self.assertNotIn("routing", ns)
                continue
            r = ns["routing"]
            self.assertEqual(r["asn"], 65000 if ns["role"] == "spine" else 65100 + ns["rack"])
            self.assertEqual({s["peer"]: s["state"] for s in r["sessions"]},
                             {p: "Established" for p in expected[ns["name"]]})
            for s in r["sessions"]:
                self.assertEqual(s["bfd"], "up", s)
                self.assertGreaterEqual(s["prefixes_received"], 1, s)
            self.assertEqual(r["problems"], [])
        text = rocehil("testbed", "status", "--dir", TB["dir"]).stdout
        self.assertIn("routing bgp (eBGP per uplink, BFD 100 ms x 3)", text)

    def test_2_leaves_multipath_over_both_spines_in_the_kernel(self):
        self.assertEqual(kernel_next_hops("l1", RACK2), sorted([L1_VIA_S1, L1_VIA_S2]))
        self.assertEqual(kernel_next_hops("l2", "198.18.1.0/24"),
                         sorted(["198.18.101.5", "198.18.102.5"]))
        self.assertEqual(kernel_next_hops("s1", "198.18.1.0/24"), [S1_TO_L1])
        # zebra wrote them: no static fabric route is left in a switch.
        for switch in ("l1", "l2", "s1", "s2"):
            self.assertEqual(set(kernel_protocols(switch).values()), {"bgp"}, switch)
        sent, received = udp_between_racks("h1", TB["hosts"]["h1"], "h3", TB["hosts"]["h3"])
        self.assertEqual(received, sent)

    def test_3_a_link_down_moves_the_routes_to_the_other_spine_and_back(self):
        rocehil("testbed", "link", LINK, "down", "--dir", TB["dir"])
        # From when the command returned: both ends were down by then.
        down_at = time.monotonic()
        try:
            bfd_down = wait_until(lambda: bfd("s1").get(S1_TO_L1) == "down", 10)
            one_hop = wait_until(lambda: kernel_next_hops("l1", RACK2) == [L1_VIA_S2], 10)
            self.assertIsNotNone(bfd_down, f"s1's BFD: {bfd('s1')}")
            self.assertIsNotNone(one_hop, kernel_next_hops("l1", RACK2))
            print(f"\nlink down: s1's BFD read down within {bfd_down - down_at:.2f} s, l1's "
                  f"route on s2 alone within {one_hop - down_at:.2f} s", file=sys.stderr)
            self.assertLess(bfd_down - down_at, DETECTION_BOUND_S)
            self.assertLess(one_hop - down_at, DETECTION_BOUND_S)
            self.assertNotEqual(sessions("s1")[S1_TO_L1], "Established")
            self.assertEqual(vtysh("l1", "zebra", f"show ip route {RACK2} json")[RACK2][0]
                             ["nexthops"][0]["ip"], L1_VIA_S2)
            # The far leaf hears s1 withdraw rack 1, and keeps only s2.
            self.assertIsNotNone(
                wait_until(lambda: kernel_next_hops("l2", "198.18.1.0/24") == ["198.18.102.5"],
                           10), kernel_next_hops("l2", "198.18.1.0/24"))
            self.assertEqual(ping("h1", TB["hosts"]["h3"]), 0)
            sent, received = udp_between_racks("h1", TB["hosts"]["h1"], "h3", TB["hosts"]["h3"])
            self.assertEqual(received, sent)
            status = json.loads(rocehil("testbed", "status", "--dir", TB["dir"], "--json",
                                        check=False).stdout)
            self.assertFalse(status["healthy"])
        finally:
            rocehil("testbed", "link", LINK, "up", "--dir", TB["dir"])
        self.assertIsNotNone(
            wait_until(lambda: kernel_next_hops("l1", RACK2) == sorted([L1_VIA_S1, L1_VIA_S2]),
                       30), kernel_next_hops("l1", RACK2))
        self.assertEqual(sessions("s1")[S1_TO_L1], "Established")
        self.assertIsNotNone(wait_until(lambda: bfd("s1").get(S1_TO_L1) == "up", 10))
        # `link up` wrote no route itself: the one there is zebra's.
        self.assertEqual(kernel_protocols("l1")[RACK2], "bgp")

    def test_4_a_host_link_down_and_up_gets_the_host_its_route_back(self):
        rocehil("testbed", "link", "h1-l1", "down", "--dir", TB["dir"])
        rocehil("testbed", "link", "h1-l1", "up", "--dir", TB["dir"])
        # The host's route is static under bgp too, and written again; the leaf's routes are
        # zebra's, untouched.
        routes = json.loads(subprocess.run(["ip", "-n", netns("h1"), "-j", "route", "show"],
                                           capture_output=True, text=True, check=True).stdout)
        self.assertIn("198.18.0.0/16", [r["dst"] for r in routes])
        self.assertEqual(set(kernel_protocols("l1").values()), {"bgp"})
        self.assertEqual(ping("h1", TB["hosts"]["h3"]), 0)

    def test_5_a_bw_case_between_racks_rides_through_a_spine_link_going_down(self):
        if wait_until(lambda: json.loads(rocehil("testbed", "status", "--dir", TB["dir"],
                                                 "--json", check=False).stdout)["healthy"],
                      60) is None:
            self.fail("the fabric is not healthy before the case")
        work = tempfile.mkdtemp(prefix="rocehil-bgp-run-")
        try:
            suite = os.path.join(work, "flap.yaml")
            with open(suite, "w") as f:
                # flap: 8 QPs spread over both spines; one_qp: a single flow, whose bytes on
                # the wire are its completed bytes (retransmissions aside), so the agents' and
                # the switches' recoveries measure the same thing.
                f.write("schema_version: 1\nname: bgp_flap\ndefaults: {provider: soft}\n"
                        "tests:\n"
                        + "".join(f"  - name: {name}\n    workload: bw\n    hosts: h1,h3\n"
                                  f"    qps: {qps}\n    duration_s: 6\n    events:\n"
                                  f"      - {{at_s: 2, action: link_down, link: {LINK}}}\n"
                                  f"      - {{at_s: 4, action: link_up, link: {LINK}}}\n"
                                  for name, qps in (("flap", 8), ("one_qp", 1))))
            reports = os.path.join(work, "reports")
            r = rocehil("run", suite, "-i", os.path.join(TB["dir"], "inventory.yaml"),
                        "--reports", reports, check=False, timeout=180)
            [run_id] = [d for d in os.listdir(reports)
                        if os.path.isdir(os.path.join(reports, d))]
            with open(os.path.join(reports, run_id, "run.json")) as f:
                flap, one_qp = [c["attempts"][-1] for c in json.load(f)["cases"]]
            for attempt in (flap, one_qp):
                events = attempt["raw"]["fabric_events"]["events"]
                self.assertEqual([(e["action"], e["ok"]) for e in events],
                                 [("link_down", True), ("link_up", True)])
                # Traffic on s1 when l1-s1 went down moved to s2 within BFD's time, inside the
                # QPs' retry budget: no QP ends in error.
                self.assertIsNone(attempt.get("error"), r.stdout[-3000:] + r.stderr[-3000:])
            self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-3000:])
            # The switches' ports, polled every 100 ms through the case: the traffic l1 sent
            # s1 (8 QPs hashed over both spines) left it for s2 and came back when the link did.
            timeline = flap["raw"]["switch_timeline"]
            down, up = timeline["events"]
            self.assertIn("l1->s1", uplinks(down["before"]), down)
            self.assertNotIn("l1->s1", uplinks(down["after"]), down)
            self.assertIn("l1->s2", uplinks(down["after"]), down)
            self.assertIn("l1->s1", uplinks(up["after"]), up)
            # The fabric's recovery, worked out here from the ports' bytes, is run.json's.
            for attempt in (flap, one_qp):
                timeline = attempt["raw"]["switch_timeline"]
                for switch_event in timeline["events"]:
                    mine = fabric_recovery_ms(timeline, switch_event["at_ns"])
                    self.assertIsNotNone(mine, switch_event)
                    self.assertAlmostEqual(switch_event["recovery_ms"], mine, places=3)
                self.assertEqual(attempt["metrics"]["switch_recovery_ms"],
                                 max(e["recovery_ms"] for e in timeline["events"]))
            # One flow: the agents' recovery (its completed bytes every 10 ms) is within one
            # polling interval of the switches' (and two of the agents' samples for their own
            # steps). With 8 QPs the wire came back at once while the QPs that lost packets
            # resent them: the agents' recovery is the longer, by the resending.
            timeline = one_qp["raw"]["switch_timeline"]
            for switch_event, agent_event in zip(timeline["events"],
                                                 one_qp["raw"]["timeline"]["events"]):
                (sender,) = agent_event["senders"]
                print(f"\n  one QP, {switch_event['what']}: agents {sender['recovery_ms']:.0f} "
                      f"ms, switches {switch_event['recovery_ms']:.0f} ms", file=sys.stderr)
                self.assertLessEqual(abs(sender["recovery_ms"] - switch_event["recovery_ms"]),
                                     timeline["period_ms"] + 20, (sender, switch_event))
            # BFD at 100 ms x 3 held through the case's load: no session but l1-s1's ever
            # dropped, on any switch, since up.
            for switch in ("l1", "l2", "s1", "s2"):
                peers = vtysh(switch, "bgpd", "show bgp summary json")["ipv4Unicast"]["peers"]
                for address, p in peers.items():
                    if address not in (S1_TO_L1, L1_VIA_S1):
                        self.assertEqual(p["connectionsDropped"], 0, (switch, address, p))
        finally:
            shutil.rmtree(work, ignore_errors=True)
            if wait_until(lambda: sessions("s1").get(S1_TO_L1) == "Established", 30) is None:
                rocehil("testbed", "link", LINK, "up", "--dir", TB["dir"], check=False)


if __name__ == "__main__":
    ROCEHIL = sys.argv.pop(1)
    unittest.main(verbosity=2)
