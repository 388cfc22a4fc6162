"""System test of the Debian package (make package): lintian, then the package installed with
apt as an operator would, its binary, manual page and bash completion used, the smoke suite from
/usr/share run on a testbed by the installed binary, and the package removed with nothing left.

Usage: python3 package_test.py BUILD_DIR   (as root; installs and removes the package 'rocehil')
"""
import glob
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


class Package(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if sh("dpkg-query", "-W", "-f=${Status}", "rocehil", check=False).stdout.startswith(
                "install ok"):
            raise unittest.SkipTest("a rocehil package is installed already; this test would "
                                    "replace it")
        cls.out = tempfile.mkdtemp(prefix="rhpkg")
        sh("cpack", "-G", "DEB", "--config", os.path.join(BUILD, "CPackConfig.cmake"), "-B",
           cls.out)
        debs = glob.glob(os.path.join(cls.out, "rocehil_*_amd64.deb"))
        assert len(debs) == 1, debs
        cls.deb = debs[0]

    @classmethod
    def tearDownClass(cls):
        sh("apt-get", "remove", "-y", "--purge", "rocehil", check=False)
        shutil.rmtree(cls.out, ignore_errors=True)

    def test_1_lintian_finds_no_error_or_warning(self):
        r = sh("lintian", "--tag-display-limit", "0", self.deb, check=False)
        tags = [line for line in r.stdout.splitlines() if re.match(r"^[EW]: ", line)]
        self.assertEqual(tags, [], r.stdout)

    def test_2_installed_it_works_and_removed_nothing_is_left(self):
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
            r = sh("/usr/bin/rocehil", "run", "/usr/share/rocehil/suites/smoke.yaml", "--inventory",
                   os.path.join(directory, "inventory.yaml"), "--only", "p2p_*", "--reports",
                   reports, check=False)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("smoke", r.stdout)
        finally:
            testbed_down("/usr/bin/rocehil", directory)
        sh("apt-get", "remove", "-y", "--purge", "rocehil")
        left = [f[1:] for f in files if os.path.lexists(f[1:])]
        self.assertEqual(left, [])
        for directory in ("/usr/share/rocehil", "/usr/share/doc/rocehil"):
            self.assertFalse(os.path.exists(directory), directory)


if __name__ == "__main__":
    BUILD = sys.argv.pop(1)
    unittest.main(verbosity=2)
