"""The README's walk, followed as written: its shell blocks are read from README.md (section "The
walk") and each line is run by bash, in order, on a testbed the walk itself brings up. Two
things differ from a reader's shell, both for the test's sake: `make install` becomes a PATH
entry holding the built binary (the test must not write into /usr/local), and the testbed's
directory is a private one in place of /tmp/tb (two runs on one machine must not collide).
The working directory is an empty one with the source tree's `suites/`, as a checkout's root
has, so `reports/` and `marks.txt` land there.

Usage: python3 readme_walk_test.py PATH/TO/rocehil
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROCEHIL = None
SOURCE = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))


def walk_section():
    """The README's walk: the lines between its heading and the next section's."""
    with open(os.path.join(SOURCE, "README.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.index("\n## The walk")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def shell_blocks(section):
    """Each ```sh block as its lines, with the step number (0 before the first step)."""
    blocks, step, inside, lines = [], 0, False, []
    for line in section.split("\n"):
        stripped = line.strip()
        number = re.match(r"^(\d)\. \*\*", line)
        if number and not inside:
            step = int(number.group(1))
        if stripped.startswith("```"):
            if inside:
                blocks.append((step, lines))
            inside, lines = not inside, []
            continue
        if inside:
            lines.append(stripped)
    return blocks


class ReadmeWalk(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="rocehil-walk-")
        self.testbed = os.path.join(self.work, "tb")
        self.bin = os.path.join(self.work, "bin")
        os.makedirs(self.bin)
        os.symlink(os.path.abspath(ROCEHIL), os.path.join(self.bin, "rocehil"))
        self.cwd = os.path.join(self.work, "checkout")
        os.makedirs(self.cwd)
        os.symlink(os.path.join(SOURCE, "suites"), os.path.join(self.cwd, "suites"))
        self.env = dict(os.environ, PATH=self.bin + ":" + os.environ["PATH"])

    def tearDown(self):
        subprocess.run([ROCEHIL, "testbed", "down", "--dir", self.testbed, "--quiet"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        shutil.rmtree(self.work, ignore_errors=True)

    def run_line(self, line):
        line = line.replace("/tmp/tb", self.testbed)
        done = subprocess.run(["bash", "-c", line], cwd=self.cwd, env=self.env, timeout=600,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.assertEqual(done.returncode, 0, f"README walk: `{line}` exited {done.returncode}:\n"
                         f"{done.stdout[-4000:]}")
        return done.stdout

    def test_the_walk_runs_as_written(self):
        blocks = shell_blocks(walk_section())
        # Before the steps: make install and the testbed; then one block per step, 1 to 5.
        self.assertEqual([step for step, _ in blocks], [0, 1, 2, 3, 4, 5])
        outputs = {}
        for step, lines in blocks:
            commands = [l for l in lines if l and not l.startswith("#")]
            rocehil_lines = [l for l in commands if l.startswith("rocehil ")]
            if step > 0:
                self.assertEqual(len(rocehil_lines), 1, f"step {step} is one rocehil command")
            text = ""
            for line in commands:
                if line.split()[:2] == ["make", "install"]:
                    continue  # the PATH holds the built binary instead
                text += self.run_line(line)
            outputs[step] = text
        # What each step says it does, in its own words.
        self.assertRegex(outputs[1], r"cabling: (\d+) of \1 findings as designed")
        self.assertIn("selftest: PASS", outputs[2])
        self.assertRegex(outputs[3], r"report: reports/\S+-smoke/report\.html")
        runs = [d for d in os.listdir(os.path.join(self.cwd, "reports")) if d.endswith("-smoke")]
        self.assertTrue(any(os.path.isfile(os.path.join(self.cwd, "reports", d, "run.json"))
                            for d in runs))
        self.assertIn("busbw_gbps", outputs[4])
        self.assertRegex(outputs[5], r"first bad: '\d+' \(last good: '\d+'\), \d run\(s\)")


if __name__ == "__main__":
    ROCEHIL = sys.argv.pop(1)
    unittest.main()
