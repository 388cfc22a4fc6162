#!/usr/bin/python3
"""rocehil(1) as a reader meets it: installed by the build's install rules (what `make install`
and the package run) where man looks, found by `man rocehil`, rendered by man-db and groff at
80 columns with no line longer and no groff warning, and pointed to from `rocehil --help`.

Run:  /usr/bin/python3 harness/cli/tests/system/manual_cli_test.py BUILD/harness/rocehil BUILD
Needs man-db (scripts/install-deps.sh installs it).
"""

import gzip
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True

ROCEHIL = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 2 else "rocehil"
BUILD = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 and not sys.argv[1].startswith("-") \
    else os.path.dirname(os.path.dirname(ROCEHIL))


def sh(*args, env=None, check=True):
    return subprocess.run(args, capture_output=True, text=True, check=check,
                          env=dict(os.environ, **(env or {})))


class Manual(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.prefix = tempfile.mkdtemp(prefix="rocehil-man-")
        sh("cmake", "--install", BUILD, "--prefix", cls.prefix, "--component", "rocehil")
        cls.manpath = {"MANPATH": os.path.join(cls.prefix, "share", "man"), "LC_ALL": "C"}

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["rm", "-rf", cls.prefix], check=True)

    def render(self, width):
        r = sh("man", "--warnings", "rocehil",
               env=dict(self.manpath, MANWIDTH=str(width), MAN_KEEP_FORMATTING=""))
        return r.stdout, r.stderr

    def test_man_finds_the_installed_page(self):
        where = sh("man", "-w", "rocehil", env=self.manpath).stdout.strip()
        self.assertEqual(where, os.path.join(self.prefix, "share/man/man1/rocehil.1.gz"))
        with gzip.open(where, "rt") as f:
            self.assertIn(".TH ROCEHIL 1", f.read())

    def test_80_columns_no_line_longer_and_no_warning(self):
        page, warnings = self.render(80)
        self.assertEqual(warnings, "")
        long_lines = [line for line in page.splitlines() if len(line) > 80]
        self.assertEqual(long_lines, [], "lines over 80 columns")
        self.assertGreater(len(page.splitlines()), 1000)

    def test_the_page_is_every_commands_help(self):
        page, _ = self.render(100)
        narrow, _ = self.render(80)
        words = " ".join(page.split())
        for command in ("rocehil traffic client", "rocehil run", "rocehil calibrate"):
            self.assertIn("\n   " + command + "\n", page)
            help_text = sh(ROCEHIL, *command.split()[1:], "--help").stdout
            description = " ".join(help_text.splitlines()[0].split())
            self.assertIn(description, words)
            # Every option --help lists, by its long name.
            for line in help_text.splitlines():
                name = line.strip().split(" ")[0]
                if line.startswith("  -") and "--" in name:
                    self.assertIn(name.split(",")[-1], page, command)
        # An example cut to fit still reads as one shell command.
        self.assertTrue(re.search(r"rocehil capture --iface mirror0 .*\\\n +--ring-files 10 --ring-mb 512",
                                  narrow), "the cut example is not one command")

    def test_help_says_where_the_manual_is(self):
        text = sh(ROCEHIL, "--help").stdout
        self.assertIn("man rocehil", text)
        self.assertIn("rocehil man-page", text)


if __name__ == "__main__":
    unittest.main()
