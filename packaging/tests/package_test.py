"""System test of the Debian packages (make package): lintian on rocehil and rocehil-dpdk; both
deployed onto a testbed's hosts by `inventory check --deploy`; rocehil installed with apt as an
operator would, its binary, manual page and bash completion used, the smoke suite from /usr/share
run on a testbed by the installed binary; the binary run where DPDK's libraries cannot load (pcap
capture works, DPDK says what to install); rocehil-dpdk added and a file replayed through DPDK;
both removed with nothing left.

Usage: python3 package_test.py BUILD_DIR   (as root; installs and removes rocehil, rocehil-dpdk)
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

BUILD = None
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "harness", "cli", "tests", "system"))
from testbed_fixture import testbed_down, testbed_up  # noqa: E402


def sh(*argv, check=True, timeout=600, **kwargs):
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kwargs)
    if check and r.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {r.returncode}: {r.stdout}{r.stderr}")
    return r


def installed(package):
    return sh("dpkg-query", "-W", "-f=${Status}", package, check=False).stdout.startswith(
        "install ok")


def dpkg_log_installs(package, since):
    """'install' lines of /var/log/dpkg.log for `package` after byte offset `since`."""
    with open("/var/log/dpkg.log") as f:
        f.seek(since)
        return [line for line in f.read().splitlines()
                if re.search(rf" install {re.escape(package)}:\S+ ", line)]


DPDK_CAPTURE = ("/usr/bin/rocehil capture --backend dpdk --no-progress --dpdk-args "
                "'--no-huge --no-pci --vdev=net_null0' --duration 1 || echo \"dpdk exit $?\"")


def without_dpdk_libraries(script):
    """Runs `script` where DPDK's libraries cannot load: in a mount namespace of its own, every
    librte file is covered by an empty one (as on a host without them)."""
    return sh("unshare", "--mount", "--propagation", "private", "sh", "-c",
              "set -e; for f in /usr/lib/x86_64-linux-gnu/librte_*.so*; do "
              "[ -L \"$f\" ] || mount --bind /dev/null \"$f\"; done; " + script, check=False)


class Package(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if installed("rocehil") or installed("rocehil-dpdk"):
            raise unittest.SkipTest("a rocehil package is installed already; this test would "
                                    "replace it")
        cls.out = tempfile.mkdtemp(prefix="rhpkg")
        sh("cpack", "-G", "DEB", "--config", os.path.join(BUILD, "CPackConfig.cmake"), "-B",
           cls.out)
        debs = glob.glob(os.path.join(cls.out, "rocehil_*_amd64.deb"))
        assert len(debs) == 1, debs
        cls.deb = debs[0]
        dpdk = glob.glob(os.path.join(cls.out, "rocehil-dpdk_*_amd64.deb"))
        assert len(dpdk) == 1, dpdk
        cls.dpdk_deb = dpdk[0]
        cls.version = os.path.basename(cls.deb).split("_")[1]

    @classmethod
    def tearDownClass(cls):
        sh("apt-get", "remove", "-y", "--purge", "rocehil-dpdk", "rocehil", check=False)
        shutil.rmtree(cls.out, ignore_errors=True)

    def test_1_lintian_finds_no_error_or_warning(self):
        for deb in (self.deb, self.dpdk_deb):
            r = sh("lintian", "--tag-display-limit", "0", deb, check=False)
            tags = [line for line in r.stdout.splitlines() if re.match(r"^[EW]: ", line)]
            self.assertEqual(tags, [], r.stdout)
        # DPDK is rocehil-dpdk's alone: rocehil's Depends (from dpkg-shlibdeps) and its binary's
        # libraries name none of it; rocehil-dpdk depends on rocehil of its own version.
        depends = sh("dpkg-deb", "-f", self.deb, "Depends").stdout
        self.assertIn("libpcap", depends)
        self.assertNotIn("librte", depends)
        dpdk_depends = sh("dpkg-deb", "-f", self.dpdk_deb, "Depends").stdout
        self.assertIn("librte-ethdev", dpdk_depends)
        self.assertIn(f"rocehil (= {self.version})", dpdk_depends)

    def test_2_deploy_installs_the_packages_on_each_host_once(self):
        # Hosts whose inventory agent is the package's /usr/bin/rocehil, which is not there yet;
        # the controller is the build tree's binary.
        controller = os.path.join(BUILD, "harness", "rocehil")
        directory, _, _ = testbed_up(controller, "rhpkgdep")
        try:
            with open(os.path.join(directory, "inventory.yaml")) as f:
                text = re.sub(r"(?m)^  agent: .*$", "  agent: /usr/bin/rocehil", f.read())
            inventory = os.path.join(directory, "deploy.yaml")
            with open(inventory, "w") as f:
                f.write(text)
            hosts = "h1,h2,h3,h4"
            check = [controller, "inventory", "check", inventory, "--hosts", hosts, "--json"]
            r = sh(*check, check=False)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)  # the agent is missing
            with open("/var/log/dpkg.log") as f:
                log_start = f.seek(0, os.SEEK_END)
            # The packages named relative to the working folder, as a person types them.
            here = os.path.dirname(self.out)
            r = sh(*check, "--deploy", "--package", os.path.relpath(self.deb, here),
                   "--package", os.path.relpath(self.dpdk_deb, here), check=False, cwd=here)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            report = json.loads(r.stdout)
            self.assertEqual(sorted(h["name"] for h in report["hosts"]), hosts.split(","))
            for h in report["hosts"]:
                checks = {c["name"]: c for c in h["checks"]}
                # What ran on this host: its own apt-get, then its own probe of the agent.
                self.assertEqual(checks["deploy"]["status"], "info", h)
                self.assertIn(f"rocehil {self.version}, rocehil-dpdk {self.version}",
                              checks["deploy"]["detail"])
                self.assertEqual(checks["agent"]["status"], "ok", h)
                self.assertEqual(checks["agent"]["detail"], "rocehil " + self.version)
                self.assertEqual(h["facts"]["packages"],
                                 {"rocehil": self.version, "rocehil-dpdk": self.version})
            # The hosts share one dpkg: the first installed, the others found it there (one
            # install each in dpkg's log), and each said which it was.
            self.assertEqual(len(dpkg_log_installs("rocehil", log_start)), 1)
            self.assertEqual(len(dpkg_log_installs("rocehil-dpdk", log_start)), 1)
            summaries = [next(c for c in h["checks"] if c["name"] == "deploy")["detail"]
                         for h in report["hosts"]]
            installed = [d for d in summaries if d.startswith("installed ")]
            self.assertEqual(len(installed), 1, summaries)
            self.assertIn("2 newly installed", installed[0])
            for d in summaries:  # the others: apt-get found it, or (probed late) nothing to do
                if d not in installed:
                    self.assertTrue("another host sharing this dpkg database installed it" in d
                                    or d.endswith("installed already; nothing to do"), d)
            # Again: every host has it, nothing is done.
            r = sh(*check, "--deploy", "--package", self.deb, check=False)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            for h in json.loads(r.stdout)["hosts"]:
                deploy = next(c for c in h["checks"] if c["name"] == "deploy")
                self.assertEqual(deploy["detail"],
                                 f"rocehil {self.version} installed already; nothing to do")
            # A package of another version is refused before any host is touched.
            r = sh(controller, "inventory", "check", inventory, "--deploy", check=False)
            self.assertEqual(r.returncode, 2)
            self.assertIn("--package", r.stderr)
        finally:
            testbed_down(controller, directory)
            sh("apt-get", "remove", "-y", "--purge", "rocehil-dpdk", "rocehil", check=False)

    def test_3_installed_it_works_and_removed_nothing_is_left(self):
        files = [f for f in sh("dpkg-deb", "-c", self.deb).stdout.split()
                 if f.startswith("./usr/") and not f.endswith("/")]
        self.assertIn("./usr/bin/rocehil", files)
        sh("apt-get", "install", "-y", "--no-install-recommends", self.deb,
           env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
        version = sh("/usr/bin/rocehil", "--version").stdout.strip()
        self.assertEqual(version, "rocehil " + os.path.basename(self.deb).split("_")[1])
        # The manual page is every command's --help.
        page = sh("man", "-P", "cat", "rocehil",
                  env=dict(os.environ, MANWIDTH="120", LC_ALL="C")).stdout  # ASCII quotes
        for command in ("rocehil traffic client", "rocehil calibrate", "rocehil run"):
            self.assertIn(command, page)
        self.assertIn(sh("/usr/bin/rocehil", "calibrate", "--help").stdout.splitlines()[0][:60],
                      " ".join(page.split()))
        # The completion, in bash, completes a command and an option.
        script = ("source /usr/share/bash-completion/completions/rocehil\n"
                  "COMP_WORDS=(rocehil cali); COMP_CWORD=1; _rocehil; echo \"${COMPREPLY[*]}\"\n"
                  "COMP_WORDS=(rocehil traffic client --eng); COMP_CWORD=3; _rocehil; "
                  "echo \"${COMPREPLY[*]}\"\n")
        self.assertEqual(sh("bash", "-c", script).stdout.splitlines(), ["calibrate", "--engine"])
        # The smoke suite from /usr/share, run by the installed binary on a testbed whose agents
        # are that binary too.
        directory, _, _ = testbed_up("/usr/bin/rocehil", "rhpkgtb")
        try:
            with open(os.path.join(directory, "inventory.yaml")) as f:
                self.assertIn("/usr/bin/rocehil", f.read())
            reports = os.path.join(directory, "reports")
            # make demo's suite, its cases whose id starts with p: the installed agents' traffic
            # both ways, a mirror port's capture, and the PFC storm injected from a switch that
            # the suite expects the harness to catch. The collectives are the same agents and
            # captures (run_cli runs the whole suite on the build's binary).
            r = sh("/usr/bin/rocehil", "run", "/usr/share/rocehil/suites/smoke.yaml", "--inventory",
                   os.path.join(directory, "inventory.yaml"), "--reports", reports, "--json",
                   "--only", "p*", check=False)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            outcomes = {c["id"]: c["outcome"] for c in json.loads(r.stdout)["cases"]}
            self.assertEqual(outcomes.pop("pfc_storm"), "expected_fail", outcomes)
            self.assertEqual(sorted(outcomes), ["p2p_bw", "p2p_lat"], outcomes)
            self.assertTrue(set(outcomes.values()) <= {"pass", "warn"}, outcomes)
        finally:
            testbed_down("/usr/bin/rocehil", directory)
        self.check_without_dpdk_libraries()
        self.check_dpdk_backend_installed()
        dpdk_files = [f for f in sh("dpkg-deb", "-c", self.dpdk_deb).stdout.split()
                      if f.startswith("./usr/") and not f.endswith("/")]
        sh("apt-get", "remove", "-y", "--purge", "rocehil-dpdk", "rocehil")
        left = [f[1:] for f in files + dpdk_files if os.path.lexists(f[1:])]
        self.assertEqual(left, [])
        for directory in ("/usr/share/rocehil", "/usr/share/doc/rocehil",
                          "/usr/share/doc/rocehil-dpdk", "/usr/lib/x86_64-linux-gnu/rocehil"):
            self.assertFalse(os.path.exists(directory), directory)

    def test_4_cmake_install_under_a_prefix_finds_its_dpdk_backend(self):
        """The same install rules under any prefix, for machines without dpkg: the binary finds
        the DPDK module relative to itself."""
        prefix = os.path.join(self.out, "prefix")
        sh("cmake", "--install", BUILD, "--prefix", prefix)
        self.assertTrue(os.path.exists(os.path.join(
            prefix, "lib/x86_64-linux-gnu/rocehil/librocehil-dpdk.so")))
        r = sh(os.path.join(prefix, "bin", "rocehil"), "capture", "--backend", "dpdk", "--json",
               "--no-progress", "--duration", "0.2", "--dpdk-args",
               "--no-huge --no-pci -m 128 --vdev=net_null0")
        self.assertGreater(json.loads(r.stdout)["capture"]["frames"], 0)

    def check_without_dpdk_libraries(self):
        """rocehil alone, on a host where DPDK's libraries cannot load: in a mount namespace each
        librte file is covered by an empty one. The binary starts, pcap capture works, and the
        DPDK backend is refused with the package to install."""
        libraries = glob.glob("/usr/lib/x86_64-linux-gnu/librte_*.so*")
        self.assertTrue(libraries)
        needed = sh("readelf", "-d", "/usr/bin/rocehil").stdout
        self.assertNotIn("librte", needed)
        capture = os.path.join(self.out, "lo.pcapng")
        r = without_dpdk_libraries(
            "/usr/bin/rocehil --version; "
            f"/usr/bin/rocehil capture --iface lo --duration 1 --no-progress --json "
            f"--write {capture} > {self.out}/lo.json; " + DPDK_CAPTURE)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("rocehil " + self.version, r.stdout)
        self.assertIn("dpdk exit 2", r.stdout)
        self.assertIn("the DPDK backend is not installed", r.stderr)
        self.assertIn("apt-get install rocehil-dpdk", r.stderr)
        with open(os.path.join(self.out, "lo.json")) as f:
            self.assertIn("frames", json.load(f)["capture"])
        self.assertTrue(os.path.getsize(capture) > 0)

    def check_dpdk_backend_installed(self):
        """rocehil-dpdk added: a file of scapy-built RoCE frames replayed through DPDK's net_pcap
        gives what `rocehil analyze` reads from the file itself."""
        sh("apt-get", "install", "-y", "--no-install-recommends", self.dpdk_deb,
           env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
        module = "/usr/lib/x86_64-linux-gnu/rocehil/librocehil-dpdk.so"
        self.assertTrue(os.path.exists(module))
        # Installed, but its libraries gone: dlopen's reason, and the package that brings them.
        r = without_dpdk_libraries(DPDK_CAPTURE)
        self.assertIn("dpdk exit 2", r.stdout)
        self.assertIn(f"the DPDK backend {module} does not load: ", r.stderr)
        self.assertIn("librte_", r.stderr)
        self.assertIn("apt-get install rocehil-dpdk", r.stderr)
        src = os.path.join(self.out, "replay.pcap")
        sh("/usr/bin/python3", "-c",
           "from scapy.all import Ether, IP, UDP, Raw, wrpcap\n"
           "from scapy.contrib.roce import BTH\n"
           "wrpcap('" + src + "', [Ether() / IP(src='198.18.0.1', dst='198.18.0.2') / "
           "UDP(sport=49152 + i % 3, dport=4791) / BTH(opcode=10, dqpn=0x100 + i % 3, psn=i) / "
           "Raw(b'x' * 100) for i in range(90)])\n")
        r = sh("/usr/bin/rocehil", "capture", "--backend", "dpdk", "--json", "--no-progress",
               "--dpdk-args", f"--no-huge --no-pci -m 256 --vdev=net_pcap0,rx_pcap={src}")
        replay = json.loads(r.stdout)
        offline = json.loads(sh("/usr/bin/rocehil", "analyze", src, "--json").stdout)
        self.assertEqual(replay["capture"]["frames"], 90)
        for key in ("frames", "bytes", "roce", "flows"):
            self.assertEqual(replay[key], offline[key], key)


if __name__ == "__main__":
    BUILD = sys.argv.pop(1)
    unittest.main(verbosity=2)
