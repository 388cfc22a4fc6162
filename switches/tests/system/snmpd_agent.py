"""Debian's snmpd (net-snmp) in a network namespace, as the SNMP system tests run it: started
with only the given configuration (-C, no MIB files), its own persistent directory, and stopped
with the namespace."""
import os
import shutil
import subprocess
import time


def start(netns, directory, conf, port, community):
    """Starts snmpd in `netns` with the configuration file `conf`, its pid and log in
    `directory`, and waits (10 s at most) until it answers sysName.0 on 127.0.0.1:`port`."""
    persistent = os.path.join(directory, "persistent")
    os.makedirs(persistent, exist_ok=True)
    env = dict(os.environ, MIBS="", SNMP_PERSISTENT_DIR=persistent)
    subprocess.run(["ip", "netns", "exec", netns, "snmpd", "-C", "-c", conf, "-p",
                    os.path.join(directory, "snmpd.pid"), "-Lf",
                    os.path.join(directory, "snmpd.log"), "-u", "root"], check=True, env=env)
    deadline = time.monotonic() + 10
    while subprocess.run(["ip", "netns", "exec", netns, "snmpget", "-v2c", "-c", community,
                          "-On", f"127.0.0.1:{port}", "1.3.6.1.2.1.1.5.0"],
                         capture_output=True).returncode != 0:
        if time.monotonic() > deadline:
            raise RuntimeError("snmpd did not answer; see " + os.path.join(directory, "snmpd.log"))
        time.sleep(0.1)


def stop(netns, directory):
    """Stops the snmpd `start` ran, deletes the namespace and the directory."""
    pid_file = os.path.join(directory, "snmpd.pid")
    if os.path.exists(pid_file):
        with open(pid_file) as f:
            try:
                os.kill(int(f.read().strip()), 15)
            except (ValueError, ProcessLookupError):
                pass
    subprocess.run(["ip", "netns", "del", netns])
    shutil.rmtree(directory, ignore_errors=True)
