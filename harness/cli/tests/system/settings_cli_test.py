"""System tests of fabric settings on a real testbed: `rocehil run --set` and a suite's
`settings:`, `rocehil bisect --set` killed after one step and resumed, `rocehil settings
show/restore`, `inventory check` against declared settings, and the bad input that must stop a
run before anything on the fabric changes.

What rocehil says is in force is held against independent reads: the switches' nftables ECN rules
and tc shapers read with `nft -j` and `tc -j` in their namespaces, the soft provider's settings
read from its files directly, the journals from /run/rocehil/settings.

Usage: python3 settings_cli_test.py PATH/TO/rocehil   (as root)
"""
import glob
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import unittest

from testbed_fixture import testbed_down, testbed_up, wait_for

ROCEHIL = None
TB = {}
JOURNALS = "/run/rocehil/settings"
SOFT = "/run/rocehil/soft"
INCAST_SUITE = (
    "schema_version: 1\nname: settings\ndefaults: {provider: soft}\n"
    "settings:\n  roce_rp.rpg_min_dec_fac: 20\n"
    "tests:\n  - name: incast\n    workload: incast\n    size: 1M\n"
    "    thresholds: [cnps > 0, errors == 0]\n")


def rocehil(*args, timeout=300):
    r = subprocess.run([ROCEHIL, *args], capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def kernel_switch_settings():
    """Every leaf and spine port's ECN limit (nft) and every root tbf rate (tc), straight from
    the kernel, by namespace and device."""
    out = {}
    for ns in subprocess.run(["ip", "netns", "list"], capture_output=True,
                             text=True).stdout.split("\n"):
        name = ns.split(" ")[0]
        if not name.startswith(f"rocehil-{TB['id']}-"):
            continue
        tc = subprocess.run(["ip", "netns", "exec", name, "tc", "-j", "qdisc", "show"],
                            capture_output=True, text=True, check=True)
        for q in json.loads(tc.stdout):
            if q.get("kind") == "tbf" and q.get("root"):
                out[f"{name} {q['dev']} tbf"] = q["options"]["rate"]
        nft = subprocess.run(["ip", "netns", "exec", name, "nft", "-j", "list", "ruleset"],
                             capture_output=True, text=True)
        for item in json.loads(nft.stdout or '{"nftables": []}')["nftables"]:
            rule = item.get("rule")
            if not rule:
                continue
            port = limit = None
            for e in rule["expr"]:
                match = e.get("match", {})
                if match.get("left", {}).get("meta", {}).get("key") == "oifname":
                    port = match["right"]
                if "limit" in e:
                    limit = e["limit"]["rate"]
            if port and limit:
                out[f"{name} {port} ecn"] = limit
    return out


def soft_files():
    """The soft provider's settings as its files hold them, by file."""
    out = {}
    # ecn/roce_rp/NAME, and the per-priority enables as a ConnectX has them: ecn/*/enable/P.
    for path in glob.glob(f"{SOFT}/*/sys/class/net/{TB['id']}-nic0/ecn/*/*") + \
            glob.glob(f"{SOFT}/*/sys/class/net/{TB['id']}-nic0/ecn/*/enable/*"):
        if os.path.isfile(path):
            with open(path) as f:
                out[path] = f.read().strip()
    return out


def journals():
    """This testbed's journals on this machine (its fabric's directory, named by its inventory),
    and any of the layout older rocehils wrote, less another testbed's switches'."""
    own = (os.path.basename(p) for p in glob.glob(f"{JOURNALS}/testbed-{TB['id']}/*.json"))
    old = (os.path.basename(p) for p in glob.glob(f"{JOURNALS}/*.json"))
    return sorted([*own, *(n for n in old if not n.startswith("testbed-")
                           or n == f"testbed-{TB['id']}.json")])


def soft_value(host_address, name):
    """One soft setting of a host's NIC as its file holds it."""
    section, leaf = name.split(".")
    path = f"{SOFT}/{host_address}/sys/class/net/{TB['id']}-nic0/ecn/{section}/{leaf}"
    with open(path) as f:
        return f.read().strip()


def setUpModule():
    directory, testbed_id, _ = testbed_up(ROCEHIL, "rhsettings")
    TB.update(dir=directory, id=testbed_id, inventory=os.path.join(directory, "inventory.yaml"))


def tearDownModule():
    if TB:
        testbed_down(ROCEHIL, TB["dir"])


class SettingsTest(unittest.TestCase):
    def setUp(self):
        self.assertEqual(journals(), [], "a journal was left before the test")
        self.work = tempfile.mkdtemp(prefix="rhsettings")
        # The soft provider's files exist once its settings are read: read them all, so the
        # "before" below is complete.
        code, _, err = rocehil("settings", "show", "-i", TB["inventory"], "--json")
        self.assertEqual(code, 0, err)
        self.kernel_before, self.soft_before = kernel_switch_settings(), soft_files()
        self.assertGreater(len(self.kernel_before), 10)
        # 4 hosts: 16 soft settings in a file each, and roce_rp.enable and roce_np.enable in a
        # file per priority, as ConnectX's sysfs has them.
        self.assertEqual(len(self.soft_before), 4 * (16 + 2 * 8))

    def tearDown(self):
        rocehil("settings", "restore", "-i", TB["inventory"])
        shutil.rmtree(self.work, ignore_errors=True)

    def write_file(self, name, text):
        path = os.path.join(self.work, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def assert_fabric_as_before(self):
        self.assertEqual(journals(), [])
        self.assertEqual(kernel_switch_settings(), self.kernel_before)
        self.assertEqual(soft_files(), self.soft_before)

    def test_run_sets_reads_back_records_and_puts_back(self):
        suite = self.write_file("s.yaml", INCAST_SUITE)
        reports = os.path.join(self.work, "reports")
        code, out, err = rocehil("run", suite, "-i", TB["inventory"], "--reports", reports,
                                 "--set", "switch.ecn_mark_mbps=150",
                                 "--set", "roce_np.min_time_between_cnps=50", "--json")
        self.assertEqual(code, 0, out + err)
        record = json.loads(out)
        in_force = {(v["host"], v["name"]): v["value"] for v in record["settings"]["in_force"]}
        self.assertEqual(in_force[("", "switch.ecn_mark_mbps")], "150")
        for h in ("h1", "h2", "h3", "h4"):
            self.assertEqual(in_force[(h, "roce_rp.rpg_min_dec_fac")], "20")  # the suite's
            self.assertEqual(in_force[(h, "roce_np.min_time_between_cnps")], "50")  # --set's
        self.assertTrue(record["settings"]["restored"])
        origins = {a["name"]: a["origin"] for a in record["settings"]["asked"]}
        self.assertEqual(origins["roce_rp.rpg_min_dec_fac"], f"{suite}:5:3")
        self.assertEqual(origins["switch.ecn_mark_mbps"], "--set")
        self.assertIn("settings put back and read back", err)
        self.assertNotIn("cases of", err)  # no progress frames in a log: one line per case
        self.assert_fabric_as_before()

        # compare lists what the runs set: one run with a different --set value.
        code, out2, err = rocehil("run", suite, "-i", TB["inventory"], "--reports", reports,
                                  "--set", "switch.ecn_mark_mbps=200", "--json")
        self.assertEqual(code, 0, out2 + err)
        code, text, err = rocehil("compare", record["run_id"], json.loads(out2)["run_id"],
                                  "--db", os.path.join(reports, "history.db"), "--json")
        self.assertIn(code, (0, 1), err)
        changed = {c["name"]: (c["a"], c["b"]) for c in json.loads(text)["settings"]}
        self.assertEqual(changed["set switches switch.ecn_mark_mbps"], ("150", "200"))
        self.assertEqual(changed["set h1 " + f"{TB['id']}-nic0 roce_np.min_time_between_cnps"],
                         ("50", None))
        self.assert_fabric_as_before()

    def test_a_tests_own_settings_hold_for_its_cases_only_under_set(self):
        # "DCQCN off, then on" as one suite: the first test sets its own values over the suite's,
        # the second runs under the suite's alone. The soft files are read all through the run
        # (an independent read), and each case's fabric_settings in run.json says what it ran under.
        suite = self.write_file("s.yaml", INCAST_SUITE.replace(
            "tests:\n  - name: incast\n",
            "tests:\n  - name: own\n    workload: incast\n    size: 1M\n"
            "    settings: {roce_rp.rpg_min_dec_fac: 30, roce_np.min_time_between_cnps: 9}\n"
            "  - name: incast\n"))
        reports = os.path.join(self.work, "reports")
        seen = {}  # each soft file: the values it held, in order

        def watch():
            while not stop.is_set():
                for path, value in soft_files().items():
                    values = seen.setdefault(path, [])
                    if not values or values[-1] != value:
                        values.append(value)
                stop.wait(0.02)

        stop = threading.Event()
        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            code, out, err = rocehil("run", suite, "-i", TB["inventory"], "--reports", reports,
                                     "--set", "roce_np.min_time_between_cnps=50", "--json")
        finally:
            stop.set()
            watcher.join()
        self.assertEqual(code, 0, out + err)
        record = json.loads(out)
        cases = {c["test"]: c for c in record["cases"]}
        own = cases["own"]["fabric_settings"]
        self.assertIsNotNone(own)
        in_force = {(v["host"], v["name"]): v["value"] for v in own["in_force"]}
        for h in ("h1", "h2", "h3", "h4"):
            self.assertEqual(in_force[(h, "roce_rp.rpg_min_dec_fac")], "30")  # the test's
            self.assertEqual(in_force[(h, "roce_np.min_time_between_cnps")], "50")  # --set's
        origins = {a["name"]: a["origin"] for a in own["asked"]}
        self.assertEqual(origins["roce_rp.rpg_min_dec_fac"], f"{suite}:10:16")
        self.assertEqual(origins["roce_np.min_time_between_cnps"], "--set")
        self.assertIsNone(cases["incast"]["fabric_settings"])  # the run's settings
        run_in_force = {(v["host"], v["name"]): v["value"]
                        for v in record["settings"]["in_force"]}
        self.assertEqual(run_in_force[("h1", "roce_rp.rpg_min_dec_fac")], "20")
        # Each host's file went from the site's value to the run's (20), the first test's (30),
        # the run's again for the second test (20), and back to the site's; --set's 50 outranked
        # the first test's 9 throughout.
        dec = {p: v for p, v in seen.items() if p.endswith("/roce_rp/rpg_min_dec_fac")}
        cnp = {p: v for p, v in seen.items() if p.endswith("/roce_np/min_time_between_cnps")}
        self.assertEqual(len(dec), 4)
        for path, values in dec.items():
            site = self.soft_before[path]
            self.assertEqual([v for v in values if v != site], ["20", "30", "20"], path)
            self.assertEqual(values[-1], site, path)
        for path, values in cnp.items():
            self.assertNotIn("9", values, path)
            self.assertIn("50", values, path)
        self.assert_fabric_as_before()

    def test_bisect_over_the_ecn_marking_rate_resumes_after_a_kill_and_puts_everything_back(self):
        # The incast's 3 senders share one 1000 Mbit/s host link: above a marking rate of 1000
        # Mbit/s no port is ever over it, no packet is marked and there are no CNPs (the
        # threshold cnps > 0 fails). Ends known; the search runs 4000 (bad), then 250 (good).
        suite = self.write_file("s.yaml", INCAST_SUITE)
        candidates = self.write_file("marks.txt", "150\n250\n4000\n8000\n20000\n")
        reports = os.path.join(self.work, "reports")
        db = os.path.join(reports, "history.db")
        command = [ROCEHIL, "bisect", "--suite", suite, "--inventory", TB["inventory"],
                   "--candidates", candidates, "--reports", reports,
                   "--set", "switch.ecn_mark_mbps={candidate}"]

        def steps():
            if not os.path.exists(db):
                return []
            with sqlite3.connect(db) as c:
                try:
                    return c.execute("SELECT step, candidate, run_id, bad FROM bisect_steps "
                                     "ORDER BY step").fetchall()
                except sqlite3.OperationalError:
                    return []

        first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, start_new_session=True)
        # Killed once the second step has changed the fabric: its journals are on the hosts and
        # the switches' settings differ. (A journal is written before its change: killed between
        # the two, the fabric would still be as it was.)
        testbed_journal = f"testbed-{TB['id']}.json"
        self.assertTrue(wait_for(lambda: len(steps()) == 1 and testbed_journal in journals()
                                 and kernel_switch_settings() != self.kernel_before, 180),
                        f"no second step: {steps()} {journals()}")
        os.killpg(first.pid, signal.SIGKILL)
        first.communicate(timeout=30)
        subprocess.run(["pkill", "-f", "rocehil-ssh-"])
        left = journals()
        self.assertIn(testbed_journal, left)
        self.assertEqual(len([j for j in left if ".soft-" in j]), 4, left)
        self.assertNotEqual(kernel_switch_settings(), self.kernel_before)  # left changed
        self.assertNotEqual(soft_files(), self.soft_before)

        resumed = subprocess.run(command + ["--json"], capture_output=True, text=True,
                                 timeout=300)
        self.assertEqual(resumed.returncode, 0, resumed.stdout + resumed.stderr)
        self.assertIn("settings left changed by run", resumed.stderr)
        result = json.loads(resumed.stdout)
        recorded = steps()
        print(f"\n  bisect steps {recorded}", file=sys.stderr)
        self.assertEqual((result["first_bad"], result["last_good"]), ("4000", "250"))
        self.assertEqual([(s, c, bad) for s, c, _, bad in recorded],
                         [(1, "4000", 1), (2, "250", 0)])
        # Each step's run recorded the settings it ran with, as read back.
        for _, candidate, run_id, _ in recorded:
            with open(os.path.join(reports, run_id, "run.json")) as f:
                settings = json.load(f)["settings"]
            in_force = {(v["host"], v["name"]): v["value"] for v in settings["in_force"]}
            self.assertEqual(in_force[("", "switch.ecn_mark_mbps")], candidate)
            self.assertEqual(in_force[("h3", "roce_rp.rpg_min_dec_fac")], "20")
            self.assertTrue(settings["restored"])
        self.assert_fabric_as_before()

    def test_ctrl_c_puts_everything_back(self):
        suite = self.write_file("s.yaml", INCAST_SUITE)
        reports = os.path.join(self.work, "reports")
        proc = subprocess.Popen([ROCEHIL, "run", suite, "-i", TB["inventory"], "--reports",
                                 reports, "--set", "switch.ecn_mark_mbps=150"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertTrue(wait_for(lambda: f"testbed-{TB['id']}.json" in journals(), 120))
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 3, out + err)
        with open(glob.glob(os.path.join(reports, "*", "run.json"))[0]) as f:
            record = json.load(f)
        self.assertTrue(record["interrupted"])
        self.assertTrue(record["settings"]["restored"], record["settings"])
        self.assertIn("settings put back and read back", err)
        self.assert_fabric_as_before()

    def test_a_host_without_the_setting_stops_the_run_before_any_change(self):
        suite = self.write_file("s.yaml", INCAST_SUITE)
        reports = os.path.join(self.work, "reports")
        # The CNPs' VLAN priority is a NIC's; the soft provider sends untagged and has none.
        # The switch setting given with it must not be changed either.
        code, out, err = rocehil("run", suite, "-i", TB["inventory"], "--reports", reports,
                                 "--set", "switch.ecn_mark_mbps=200", "--set",
                                 "roce_np.cnp_802p_prio=3")
        self.assertEqual(code, 2, out + err)
        line = next(l for l in err.splitlines() if "settings:" in l)
        self.assertIn("--set: host 'h1': cannot set roce_np.cnp_802p_prio", line)
        with open(glob.glob(os.path.join(reports, "*", "run.json"))[0]) as f:
            record = json.load(f)
        self.assertEqual({c["outcome"] for c in record["cases"]}, {"not_run"})
        self.assertIn("roce_np.cnp_802p_prio", record["settings"]["error"])
        self.assert_fabric_as_before()

    def test_bad_names_and_values_stop_before_anything(self):
        suite = self.write_file("s.yaml", INCAST_SUITE)
        reports = os.path.join(self.work, "reports")
        for args, expected in [
            (["--set", "roce_rp.rpg_time_rest=5"],
             "--set: unknown setting 'roce_rp.rpg_time_rest' (did you mean "
             "'roce_rp.rpg_time_reset'?)"),
            (["--set", "roce_rp.rpg_gd=16"], "it takes 0..15"),
            (["--set", "switch.ecn_mark_mbps"], "KEY=VALUE"),
        ]:
            code, out, err = rocehil("run", suite, "-i", TB["inventory"], "--reports", reports,
                                     *args)
            self.assertEqual(code, 2, out + err)
            self.assertIn(expected, err)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
        bad = self.write_file("bad.yaml", INCAST_SUITE.replace("rpg_min_dec_fac: 20",
                                                               "rpg_min_dec_fac: 0"))
        code, out, err = rocehil("run", bad, "-i", TB["inventory"], "--reports", reports)
        self.assertEqual(code, 2, out + err)
        self.assertIn(f"{bad}:5:3: settings: roce_rp.rpg_min_dec_fac: '0' is not a value it "
                      "takes; it takes 1..100", err)
        self.assertFalse(os.path.exists(reports) and os.listdir(reports))
        self.assert_fabric_as_before()

    def test_agents_that_dialed_home_put_back_their_hosts_settings_when_the_controller_dies(self):
        # With a controller in the inventory the run's own agents apply the NIC settings; killed
        # controller, no rocehil command after it: each agent sees its connection end and puts
        # back what it applied from its journal. (Only a NIC setting here: the switches' are the
        # controller's own to write, and a killed one leaves their journal for the next run.)
        shown = subprocess.run(["ip", "-4", "-o", "addr", "show", "dev", f"{TB['id']}-br"],
                               capture_output=True, text=True, check=True).stdout
        address = shown.split("inet ")[1].split("/")[0]
        with open(TB["inventory"]) as f:
            inventory = self.write_file(
                "dial.yaml", f.read() + f"controller: {{address: {address}, join_timeout_s: 30}}\n")
        suite = self.write_file("s.yaml", INCAST_SUITE)
        proc = subprocess.Popen([ROCEHIL, "run", suite, "-i", inventory, "--reports",
                                 os.path.join(self.work, "reports")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        soft_journals = lambda: [j for j in journals() if ".soft-" in j]
        self.assertTrue(wait_for(lambda: len(soft_journals()) == 4, 120), journals())
        self.assertTrue(wait_for(lambda: soft_files() != self.soft_before, 30))
        proc.kill()
        out, err = proc.communicate(timeout=30)
        subprocess.run(["pkill", "-f", "rocehil-ssh-"])
        self.assertTrue(wait_for(lambda: soft_journals() == [], 30), (journals(), out, err))
        self.assertEqual(soft_files(), self.soft_before)
        agents = subprocess.run(["pgrep", "-f", " agent --connect "], capture_output=True,
                                text=True).stdout
        self.assertTrue(wait_for(lambda: subprocess.run(
            ["pgrep", "-f", " agent --connect "], capture_output=True).returncode == 1, 30),
            agents)

    def test_another_command_leaves_a_live_runs_settings_alone_and_a_change_under_it_reads_error(
            self):
        # The issue: `run --set roce_np.min_time_between_cnps=7`, then `inventory check --hosts
        # h1,...` put the running run's 7 back to 2 and the run still recorded 7 in force. The
        # run's controller is stopped (SIGSTOP: alive, going nowhere) while other commands try.
        suite = self.write_file("s.yaml", INCAST_SUITE.replace(
            "size: 1M\n", "size: 1M\n    repeats: 5\n"))
        reports = os.path.join(self.work, "reports")
        proc = subprocess.Popen([ROCEHIL, "run", suite, "-i", TB["inventory"], "--reports",
                                 reports, "--set", "roce_np.min_time_between_cnps=7", "--json"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        soft_journals = lambda: [j for j in journals() if ".soft-" in j]
        cnps = lambda: {k: v for k, v in soft_files().items()
                        if k.endswith("/min_time_between_cnps")}
        self.assertTrue(wait_for(lambda: len(soft_journals()) == 4 and len(cnps()) == 4 and
                                 set(cnps().values()) == {"7"}, 120), journals())
        # h1's NIC address, from its journal's name: h1.soft-ADDRESS.json
        h1 = next(j for j in soft_journals() if j.startswith("h1.soft-"))[len("h1.soft-"):-5]
        os.kill(proc.pid, signal.SIGSTOP)
        try:
            code, out, err = rocehil("settings", "restore", "-i", TB["inventory"])
            self.assertEqual(code, 3, out + err)
            self.assertIn("in use by run", err)
            self.assertEqual(soft_value(h1, "roce_np.min_time_between_cnps"), "7")
            self.assertEqual(len(soft_journals()), 4)

            code, out, err = rocehil("inventory", "check", TB["inventory"], "--hosts", "h1,h2",
                                     "--no-switches", "--json")
            settings = json.loads(out)["settings"]
            self.assertEqual(settings["restored"], [], out + err)
            self.assertEqual(sorted(u["host"] for u in settings["in_use"]), ["h1", "h2"])
            self.assertTrue(all(u["alive"] and u["pid"] == proc.pid for u in settings["in_use"]))
            self.assertEqual(settings["errors"], [])
            self.assertEqual(soft_value(h1, "roce_np.min_time_between_cnps"), "7")

            # Forced on h1: the run must notice its setting changed under it.
            code, out, err = rocehil("settings", "restore", "-i", TB["inventory"], "--hosts",
                                     "h1", "--force")
            self.assertEqual(code, 0, out + err)
            self.assertEqual(soft_value(h1, "roce_np.min_time_between_cnps"), "2")
        finally:
            os.kill(proc.pid, signal.SIGCONT)
        out, err = proc.communicate(timeout=300)
        self.assertEqual(proc.returncode, 3, out + err)
        self.assertIn("settings changed under the run", err)
        settings = json.loads(out)["settings"]
        self.assertFalse(settings["held"], settings)
        changed = settings["changed_under_run"]
        # --force put back h1's whole journal: --set's value and the suite's.
        self.assertEqual(sorted((c["host"], c["name"], c["set"], c["found"]) for c in changed),
                         [("h1", "roce_np.min_time_between_cnps", "7", "2"),
                          ("h1", "roce_rp.rpg_min_dec_fac", "20", "50")])
        h1_in_force = [v for v in settings["in_force"]
                       if v["host"] == "h1" and v["name"] == "roce_np.min_time_between_cnps"]
        self.assertEqual([(v["held"], v["found"]) for v in h1_in_force], [(False, "2")])
        # The attempts that ended with it changed are errors saying so, not measurements
        # under 7.
        errors = [a["error"] for c in json.loads(out)["cases"] for a in c["attempts"]
                  if a.get("error")]
        self.assertTrue(errors, out)
        for e in errors:
            self.assertEqual(e["phase"], "settings")
            self.assertRegex(e["message"], r"^setting roce_(np.min_time_between_cnps|"
                             r"rp.rpg_min_dec_fac) on h1 \S+ read (2, not 7|50, not 20) as the "
                             r"run set it \(and 1 more\)")
        self.assert_fabric_as_before()

    def test_inventory_check_restores_a_left_journal_and_lists_hosts_that_differ(self):
        # A journal left as a killed run leaves it: written by `rocehil run` killed mid-case.
        suite = self.write_file("s.yaml", INCAST_SUITE)
        proc = subprocess.Popen([ROCEHIL, "run", suite, "-i", TB["inventory"], "--reports",
                                 os.path.join(self.work, "reports")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        self.assertTrue(wait_for(lambda: len(journals()) == 4, 120), journals())
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
        subprocess.run(["pkill", "-f", "rocehil-ssh-"])
        self.assertNotEqual(soft_files(), self.soft_before)
        # The inventory declares a value h2 does not run with.
        with open(TB["inventory"]) as f:
            text = f.read()
        declared = self.write_file(
            "declared.yaml",
            text.replace("  provider: soft\n",
                         "  provider: soft\n  settings: {roce_rp.rpg_min_dec_fac: 50}\n", 1)
            .replace("  - name: h2\n", "  - name: h2\n    settings: {roce_np.cnp_dscp: 26}\n", 1))
        code, out, err = rocehil("inventory", "check", declared, "--no-switches", "--json")
        self.assertEqual(code, 1, out + err)
        settings = json.loads(out)["settings"]
        self.assertEqual(sorted(r["host"] for r in settings["restored"]),
                         ["h1", "h2", "h3", "h4"])
        self.assertEqual([(d["host"], d["name"], d["declared"], d["in_force"])
                          for d in settings["differences"]],
                         [("h2", "roce_np.cnp_dscp", "26", "48")])
        self.assertEqual(settings["differences"][0]["origin"].split(":")[0], declared)
        self.assert_fabric_as_before()


if __name__ == "__main__":
    ROCEHIL = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
