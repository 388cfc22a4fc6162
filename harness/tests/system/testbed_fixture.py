"""A default testbed for system tests (4 hosts in 2 racks, 2 spines), brought up in a temporary
directory and taken down again. Shared by the test scripts in this folder."""
import json
import shutil
import subprocess
import tempfile


def testbed_up(rocehil, prefix):
    """Brings a testbed up; returns (directory, testbed id, {name: namespace status})."""
    directory = tempfile.mkdtemp(prefix=prefix)
    up = subprocess.run([rocehil, "testbed", "up", "--dir", directory, "--json", "--quiet"],
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
