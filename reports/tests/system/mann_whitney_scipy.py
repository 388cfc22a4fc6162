"""Checks rocehil's Mann-Whitney U test against SciPy's mannwhitneyu (method auto, continuity
correction, two-sided) on random samples: sizes 1-12 against 1-12, with and without ties, and
shifted so p-values cover the whole range.

Usage: python3 mann_whitney_scipy.py MANN_WHITNEY_CLI
"""
import random
import subprocess
import sys
import unittest

from scipy.stats import mannwhitneyu

CLI = None


class AgainstScipy(unittest.TestCase):
    def test_u_and_p_agree_on_random_samples(self):
        rng = random.Random(20261122)
        cases = []
        for _ in range(600):
            n1, n2 = rng.randint(1, 12), rng.randint(1, 12)
            tied = rng.random() < 0.4
            shift = rng.choice([0, 0.5, 1, 3])
            draw = ((lambda: float(rng.randint(0, 6))) if tied else (lambda: rng.gauss(0, 1)))
            cases.append(([draw() + shift for _ in range(n1)], [draw() for _ in range(n2)]))
        text = "".join(" ".join(map(repr, a)) + " | " + " ".join(map(repr, b)) + "\n"
                       for a, b in cases)
        out = subprocess.run([CLI], input=text, capture_output=True, text=True, check=True)
        lines = out.stdout.splitlines()
        self.assertEqual(len(lines), len(cases))
        exact_seen = significant_seen = 0
        for (a, b), line in zip(cases, lines):
            u, p, exact = line.split()
            ref = mannwhitneyu(a, b, alternative="two-sided", method="auto")
            self.assertAlmostEqual(float(u), ref.statistic, places=9, msg=(a, b))
            self.assertAlmostEqual(float(p), ref.pvalue, places=9, msg=(a, b))
            exact_seen += exact == "1"
            significant_seen += ref.pvalue < 0.05
        # Both of the methods and both sides of 0.05 were exercised.
        self.assertGreater(exact_seen, 100)
        self.assertLess(exact_seen, 500)
        self.assertGreater(significant_seen, 50)


if __name__ == "__main__":
    CLI = sys.argv.pop(1)
    unittest.main(verbosity=2)
