"""A default testbed for system tests (4 hosts in 2 racks, 2 spines), brought up in a temporary
directory and taken down again. Shared by the test scripts in this folder."""
import glob
import json
import os
import shutil
import subprocess
import tempfile
import time


def testbed_up(rocehil, prefix, *options):
    """Brings a testbed up (`options`: more `testbed up` options, such as "--hosts", "8");
    returns (directory, testbed id, {name: namespace status})."""
    directory = tempfile.mkdtemp(prefix=prefix)
    up = subprocess.run([rocehil, "testbed", "up", "--dir", directory, "--json", "--quiet",
                         *options],
                        capture_output=True, text=True, timeout=300)
    if up.returncode != 0:
        shutil.rmtree(directory, ignore_errors=True)
        raise AssertionError(f"testbed up failed: {up.stderr}")
    testbed_id = json.loads(up.stdout)["id"]
    status = json.loads(subprocess.run([rocehil, "testbed", "status", "--dir", directory,
                                        "--json"], capture_output=True, text=True).stdout)
    return directory, testbed_id, {n["name"]: n for n in status["namespaces"]}


def testbed_down(rocehil, directory):
    subprocess.run([rocehil, "testbed", "down", "--dir", directory], capture_output=True)
    shutil.rmtree(directory, ignore_errors=True)


def module_testbed_up(rocehil, prefix, into, *options):
    """For setUpModule: a testbed up, its dir, id and inventory path put in the dict `into`."""
    directory, testbed_id, _ = testbed_up(rocehil, prefix, *options)
    into.update(dir=directory, id=testbed_id,
                inventory=os.path.join(directory, "inventory.yaml"))


def module_testbed_down(rocehil, testbed):
    """For tearDownModule: down, if module_testbed_up put one in `testbed`."""
    if testbed:
        testbed_down(rocehil, testbed["dir"])


def spine_tx_bytes(testbed_id, spine):
    """Bytes a spine sent to its leaves, by the kernel's counters: every interface but loopback,
    the mirror port and the management port (where its SNMP agent answers)."""
    r = subprocess.run(["ip", "netns", "exec", f"rocehil-{testbed_id}-{spine}", "sh", "-c",
                        "for i in /sys/class/net/*; do echo $(basename $i) "
                        "$(cat $i/statistics/tx_bytes); done"],
                       capture_output=True, text=True, check=True)
    total = 0
    for line in r.stdout.splitlines():
        name, value = line.split()
        if name != "lo" and not name.startswith(f"{testbed_id}-m"):  # -m1.., -mgmt
            total += int(value)
    return total


def wait_for(predicate, seconds):
    """The predicate's first true value within `seconds` (polled every 50 ms), or None."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    return None


def newest_run_dir(reports):
    """The newest run directory `rocehil run --reports REPORTS` wrote (run ids sort by time)."""
    return sorted(d for d in glob.glob(os.path.join(reports, "*")) if os.path.isdir(d))[-1]


class SuiteRun:
    """`rocehil run` of a suite text on a testbed's inventory, in a fresh temporary directory:
    its `tmp`, `reports`, exit `code`, `out`, `err` and the run directory it wrote."""

    def __init__(self, rocehil, inventory, suite_text, prefix, timeout=240):
        self.tmp = tempfile.mkdtemp(prefix=prefix)
        suite = os.path.join(self.tmp, "suite.yaml")
        with open(suite, "w") as f:
            f.write(suite_text)
        self.reports = os.path.join(self.tmp, "reports")
        r = subprocess.run([rocehil, "run", suite, "--inventory", inventory, "--reports",
                            self.reports], capture_output=True, text=True, timeout=timeout)
        self.code, self.out, self.err = r.returncode, r.stdout, r.stderr
        self.run_dir = newest_run_dir(self.reports)
