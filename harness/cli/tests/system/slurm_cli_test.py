"""System tests of the Slurm launcher on a real Slurm cluster: `testbed up --slurm` runs Debian's
munged, slurmctld and a slurmd in every host namespace; rocehil runs inside an allocation and
starts each agent as a job step with srun.

What Slurm says is checked with Slurm's own tools: sinfo for drained nodes and their reasons,
squeue for job steps left behind, scontrol for the hostlist expansion.

Usage: python3 slurm_cli_test.py PATH/TO/rocehil   (as root)
"""
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

from testbed_fixture import testbed_down, testbed_up, wait_for

ROCEHIL = None
SMOKE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..",
                     "suites", "smoke.yaml")
TB = {}


def slurm_env():
    env = dict(os.environ, SLURM_CONF=TB["conf"])
    for name in ("SLURM_JOB_ID", "SLURM_JOBID", "SLURM_JOB_NODELIST", "SLURM_NODELIST"):
        env.pop(name, None)
    return env


def slurm(*argv):
    return subprocess.run(list(argv), capture_output=True, text=True, env=slurm_env(),
                          timeout=60)


def node_states():
    """sinfo's view: {node: (state, reason)}."""
    out = slurm("sinfo", "--noheader", "--Node", "--format=%N|%t|%E").stdout
    states = {}
    for line in out.splitlines():
        node, state, reason = line.split("|", 2)
        states[node] = (state, reason)
    return states


def newest_record(reports):
    runs = sorted(d for d in os.listdir(reports) if os.path.isdir(os.path.join(reports, d)))
    with open(os.path.join(reports, runs[-1], "run.json")) as f:
        return json.load(f)


def outcomes(record):
    return {c["id"]: c["outcome"] for c in record["cases"]}


def agents_with_command_lines(host):
    """(pid, command line) of each rocehil agent in the host's namespace."""
    ns = f"rocehil-{TB['id']}-{host}"
    pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout
    found = []
    for pid in pids.split():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read()
        except OSError:
            continue
        if b"rocehil\0agent" in argv:
            found.append((int(pid), argv))
    return found


def agent_command_lines(host):
    return [argv for _, argv in agents_with_command_lines(host)]


def agents_on(host):
    return [pid for pid, _ in agents_with_command_lines(host)]


def setUpModule():
    directory, testbed_id, _ = testbed_up(ROCEHIL, "rhslurm", "--slurm")
    TB.update(dir=directory, id=testbed_id, inventory=os.path.join(directory, "inventory.yaml"),
              conf=os.path.join(directory, "slurm", "slurm.conf"))


def tearDownModule():
    if TB:
        testbed_down(ROCEHIL, TB["dir"])


class SlurmTest(unittest.TestCase):
    def setUp(self):
        self.reports = tempfile.mkdtemp(prefix="rhslurmreports")

    def tearDown(self):
        shutil.rmtree(self.reports, ignore_errors=True)

    def test_status_shows_every_host_as_an_idle_node(self):
        status = json.loads(subprocess.run([ROCEHIL, "testbed", "status", "--dir", TB["dir"],
                                            "--json"], capture_output=True, text=True).stdout)
        self.assertTrue(status["healthy"], status)
        self.assertEqual(status["slurm"]["conf"], TB["conf"])
        nodes = {n["name"]: n["slurm_state"] for n in status["namespaces"] if "slurm_state" in n}
        self.assertEqual(nodes, {h: "idle" for h in ("h1", "h2", "h3", "h4", "cap")})
        self.assertEqual({n: s for n, (s, _) in node_states().items()}, nodes)

    def test_the_allocations_nodes_are_the_hosts_as_scontrol_expands_them(self):
        # SLURM_JOB_NODELIST is compressed ("cap,h[1-4]"); rocehil's expansion is held against
        # scontrol's, and the run's hosts are the allocation's.
        r = subprocess.run(["salloc", "-N", "3", "--nodelist=h1,h2,h4", "--quiet", "sh", "-c",
                            'echo "$SLURM_JOB_NODELIST"; scontrol show hostnames'],
                           capture_output=True, text=True, env=slurm_env(), timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.split()
        self.assertEqual(lines[0], "h[1-2,4]")
        self.assertEqual(lines[1:], ["h1", "h2", "h4"])
        r = subprocess.run(
            ["salloc", "-N", "2", "--nodelist=h1,h3", "--quiet", ROCEHIL, "run", SMOKE,
             "--inventory", TB["inventory"], "--only", "p2p_lat", "--hosts", "slurm",
             "--launcher", "slurm", "--reports", self.reports],
            capture_output=True, text=True, env=slurm_env(), timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        record = newest_record(self.reports)
        self.assertEqual(record["cases"][0]["hosts"], ["h1", "h3"])
        self.assertIn("'--hosts' 'h1,h3' '--launcher' 'slurm'", record["command_line"])

    def test_the_smoke_suite_through_slurm_gives_the_verdicts_it_gives_over_ssh(self):
        ssh = subprocess.run([ROCEHIL, "run", SMOKE, "--inventory", TB["inventory"], "--reports",
                              os.path.join(self.reports, "ssh")],
                             capture_output=True, text=True, env=slurm_env(), timeout=300)
        slurm_run = subprocess.run(
            ["salloc", "-N", "5", "--quiet", ROCEHIL, "run", SMOKE, "--inventory",
             TB["inventory"], "--hosts", "slurm", "--launcher", "slurm", "--reports",
             os.path.join(self.reports, "slurm")],
            capture_output=True, text=True, env=slurm_env(), timeout=300)
        self.assertEqual(slurm_run.returncode, ssh.returncode, slurm_run.stdout + slurm_run.stderr)
        over_ssh = outcomes(newest_record(os.path.join(self.reports, "ssh")))
        over_slurm = outcomes(newest_record(os.path.join(self.reports, "slurm")))
        print(f"  ssh {over_ssh}\n  slurm {over_slurm}", file=sys.stderr)
        # pass and warn differ only in a warn-level threshold (an ECMP imbalance that depends on
        # the source ports the QPs drew); a failure or an error must be the same on both.
        severity = {"pass": "ok", "warn": "ok"}
        self.assertEqual({c: severity.get(o, o) for c, o in over_slurm.items()},
                         {c: severity.get(o, o) for c, o in over_ssh.items()})
        self.assertEqual(over_slurm["pfc_storm"], "expected_fail")
        self.assertNotIn("error", over_slurm.values())

    def test_agents_dialing_home_from_one_step_give_the_smoke_suites_verdicts(self):
        # The inventory names a controller: one srun step starts every node's agent for the
        # whole run, and every case opens sessions on them.
        shown = subprocess.run(["ip", "-4", "-o", "addr", "show", "dev", f"{TB['id']}-br"],
                               capture_output=True, text=True, check=True).stdout
        address = shown.split("inet ")[1].split("/")[0]
        with open(TB["inventory"]) as f:
            text = f.read()
        inventory = os.path.join(self.reports, "dial.yaml")
        with open(inventory, "w") as f:
            f.write(text + f"controller: {{address: {address}, join_timeout_s: 60}}\n")
        proc = subprocess.Popen(
            ["salloc", "-N", "5", "--quiet", ROCEHIL, "run", SMOKE, "--inventory", inventory,
             "--hosts", "slurm", "--launcher", "slurm", "--reports", self.reports],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=slurm_env())
        # Once the agents have dialed in, no case starts an agent of its own (the preflight's
        # probes, before, are steps of their own).
        most, dialing, stdio_after = 0, False, []
        while proc.poll() is None:
            steps = subprocess.run(["squeue", "-s", "-h", "-o", "%i %j"], capture_output=True,
                                   text=True, env=slurm_env()).stdout.split("\n")
            names = [line.split()[1] for line in steps if line.strip()]
            most = max(most, names.count("rocehil-agents"))
            for host in ("h1", "h2", "h3", "h4", "cap"):
                for argv in agent_command_lines(host):
                    if b"--connect" in argv:
                        dialing = True
                    elif dialing:
                        stdio_after.append((host, argv))
            time.sleep(0.3)
        out, err = proc.communicate()
        self.assertEqual(proc.returncode, 0, out + err)
        self.assertIn("agents: 5 hosts dialed in within ", out)
        # One step for every agent, never a step per agent.
        self.assertTrue(dialing)
        self.assertEqual(most, 1)
        self.assertEqual(stdio_after, [])
        over_dial = outcomes(newest_record(self.reports))
        self.assertEqual(over_dial["pfc_storm"], "expected_fail")
        self.assertEqual({o for c, o in over_dial.items() if c != "pfc_storm"} - {"pass", "warn"},
                         set(), over_dial)
        # The run over: no agent on any node, and no step left.
        self.assertEqual(wait_for(lambda: not any(agents_on(h) for h in
                                                   ("h1", "h2", "h3", "h4", "cap")), 30), True)
        self.assertEqual(subprocess.run(["squeue", "-s", "-h"], capture_output=True, text=True,
                                        env=slurm_env()).stdout.strip(), "")

    def test_a_killed_agent_is_an_error_naming_the_node_and_only_that_node_is_drained(self):
        before = node_states()
        self.assertEqual({s for s, _ in before.values()}, {"idle"}, before)
        proc = subprocess.Popen(
            ["salloc", "-N", "5", "--quiet", ROCEHIL, "run", SMOKE, "--inventory",
             TB["inventory"], "--only", "allreduce/*", "--hosts", "slurm", "--launcher", "slurm",
             "--drain-failed", "nightly", "--reports", self.reports],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=slurm_env())
        try:
            victim = wait_for(lambda: agents_on("h2"), 60)
            self.assertTrue(victim, "no agent appeared on h2")
            os.kill(victim[0], signal.SIGKILL)
            out, err = proc.communicate(timeout=300)
            self.assertEqual(proc.returncode, 3, out + err)
            record = newest_record(self.reports)
            failed = [c for c in record["cases"] if c["outcome"] == "error"]
            self.assertEqual(len(failed), 1, outcomes(record))
            self.assertEqual(failed[0]["attempts"][-1]["error"]["host"], "h2")
            self.assertIn("rocehil run: drained h2 (Reason=rocehil: nightly: " + failed[0]["id"],
                          err)
            after = wait_for(lambda: (lambda s: s if s["h2"][0] == "drain" else None)(
                node_states()), 30)
            self.assertTrue(after, node_states())
            print(f"  sinfo after: {after}", file=sys.stderr)
            self.assertEqual({n: s for n, (s, _) in after.items() if s != "idle"},
                             {"h2": "drain"})
            self.assertTrue(after["h2"][1].startswith(f"rocehil: nightly: {failed[0]['id']}:"),
                            after["h2"])
        finally:
            if proc.poll() is None:
                proc.kill()
            slurm("scontrol", "update", "NodeName=h2", "State=RESUME")

    def test_a_node_whose_agent_never_dials_in_is_drained_with_why(self):
        # h3's rocehil starts no dialing agent (its step ends at once): the run names h3 and
        # runs nothing (p2p_bw runs on h1 and h3), and --drain-failed drains h3 alone, saying why.
        # (A node another test killed an agent on may still read "idle*", not responding, for
        # a while: only h3 matters here.)
        before = node_states()
        self.assertEqual(before["h3"][0], "idle", before)
        stand_in = os.path.join(self.reports, "mute-rocehil")
        with open(stand_in, "w") as f:
            f.write("#!/bin/sh\ncase \"$*\" in *--connect*) exit 0;; esac\n"
                    f"exec {ROCEHIL} \"$@\"\n")
        os.chmod(stand_in, 0o755)
        shown = subprocess.run(["ip", "-4", "-o", "addr", "show", "dev", f"{TB['id']}-br"],
                               capture_output=True, text=True, check=True).stdout
        address = shown.split("inet ")[1].split("/")[0]
        with open(TB["inventory"]) as f:
            text = f.read().replace("  - name: h3\n", f"  - name: h3\n    agent: {stand_in}\n", 1)
        inventory = os.path.join(self.reports, "dial.yaml")
        with open(inventory, "w") as f:
            f.write(text + f"controller: {{address: {address}, join_timeout_s: 5}}\n")
        try:
            r = subprocess.run(
                ["salloc", "-N", "5", "--quiet", ROCEHIL, "run", SMOKE, "--inventory", inventory,
                 "--only", "p2p_bw", "--hosts", "slurm", "--launcher", "slurm",
                 "--drain-failed", "nightly", "--reports", self.reports],
                capture_output=True, text=True, env=slurm_env(), timeout=300)
            self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
            self.assertRegex(r.stderr, r"\n  h3: the Slurm step ended: ")
            record = newest_record(self.reports)
            self.assertEqual([c["outcome"] for c in record["cases"]], ["not_run"])
            missing = record["inventory"]["preflight"]["agents"]["missing"]
            self.assertEqual([m["host"] for m in missing], ["h3"])
            self.assertIn("rocehil run: drained h3 (Reason=rocehil: nightly: its agent did not "
                          "dial in: the Slurm step ended", r.stderr)
            after = wait_for(lambda: (lambda s: s if s["h3"][0] == "drain" else None)(
                node_states()), 30)
            self.assertTrue(after, node_states())
            self.assertEqual([n for n, (s, _) in after.items() if s.startswith("drain")],
                             ["h3"], after)
            self.assertTrue(after["h3"][1].startswith("rocehil: nightly: its agent did not dial "
                                                      "in: "), after["h3"])
        finally:
            slurm("scontrol", "update", "NodeName=h3", "State=RESUME")

    def test_sigint_ends_the_job_steps_and_exits_3(self):
        granted = slurm("salloc", "-N", "5", "--no-shell")
        self.assertEqual(granted.returncode, 0, granted.stderr)
        job = re.search(r"Granted job allocation (\d+)", granted.stderr).group(1)
        try:
            nodelist = slurm("squeue", "-h", "-j", job, "-o", "%N").stdout.strip()
            env = dict(slurm_env(), SLURM_JOB_ID=job, SLURM_JOB_NODELIST=nodelist)
            proc = subprocess.Popen(
                [ROCEHIL, "run", SMOKE, "--inventory", TB["inventory"], "--only", "allreduce/*",
                 "--hosts", "slurm", "--launcher", "slurm", "--reports", self.reports],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            steps = lambda: slurm("squeue", "-h", "-s", "-j", job).stdout.split("\n")
            self.assertTrue(wait_for(lambda: agents_on("h3"), 60), "no agent on h3")
            running = [s for s in steps() if "rocehil-" in s]
            self.assertTrue(running, steps())
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=120)
            self.assertEqual(proc.returncode, 3, out + err)
            self.assertTrue(newest_record(self.reports)["interrupted"])
            # The allocation is still there; what rocehil started in it is not.
            self.assertIn(job, slurm("squeue", "-h", "-o", "%i").stdout.split())
            left = wait_for(lambda: not [s for s in steps() if "rocehil-" in s], 15)
            self.assertTrue(left, steps())
            self.assertEqual([h for h in ("h1", "h2", "h3", "h4", "cap") if agents_on(h)], [])
        finally:
            slurm("scancel", job)

    def test_outside_an_allocation_it_says_how_to_get_one(self):
        r = subprocess.run([ROCEHIL, "run", SMOKE, "--inventory", TB["inventory"], "--hosts",
                            "slurm", "--reports", self.reports],
                           capture_output=True, text=True, env=slurm_env(), timeout=60)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("--hosts slurm needs a Slurm allocation, and SLURM_JOB_ID is not set",
                      r.stderr)
        self.assertIn("salloc -N 4 rocehil run", r.stderr)
        self.assertEqual(os.listdir(self.reports), [])  # nothing ran, nothing written


if __name__ == "__main__":
    ROCEHIL = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
