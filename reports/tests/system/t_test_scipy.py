"""Checks rocehil's pooled t-test against SciPy's ttest_ind(equal_var=True) on random samples:
sizes 2-12 against 2-12, shifted and scaled so p-values span 1 down to 1e-12, with ties.

Usage: python3 t_test_scipy.py T_TEST_CLI
"""
import random
import subprocess
import sys
import unittest

from scipy.stats import ttest_ind

CLI = None


class AgainstScipy(unittest.TestCase):
    def test_t_and_p_agree_on_random_samples(self):
        rng = random.Random(20261129)
        cases = []
        for _ in range(800):
            n1, n2 = rng.randint(2, 12), rng.randint(2, 12)
            spread_a, spread_b = rng.choice([0.01, 1, 5]), rng.choice([0.01, 1, 5])
            shift = rng.choice([0, 0.3, 1, 4, 20])
            tied = rng.random() < 0.2
            a = [round(rng.gauss(shift, spread_a), 0 if tied else 12) for _ in range(n1)]
            b = [round(rng.gauss(0, spread_b), 0 if tied else 12) for _ in range(n2)]
            if len(set(a)) == 1 and len(set(b)) == 1:
                continue  # SciPy answers nan there; the unit tests cover it
            cases.append((a, b))
        text = "".join(" ".join(map(repr, a)) + " | " + " ".join(map(repr, b)) + "\n"
                       for a, b in cases)
        out = subprocess.run([CLI], input=text, capture_output=True, text=True, check=True)
        lines = out.stdout.splitlines()
        self.assertEqual(len(lines), len(cases))
        small = 0
        for (a, b), line in zip(cases, lines):
            t, df, p = map(float, line.split())
            want = ttest_ind(a, b, equal_var=True)
            self.assertAlmostEqual(t, want.statistic, delta=1e-9 * max(1.0, abs(want.statistic)),
                                   msg=(a, b))
            self.assertAlmostEqual(p, want.pvalue, delta=1e-9 * max(1e-12, want.pvalue),
                                   msg=(a, b, df))
            small += want.pvalue < 1e-6
        self.assertGreater(small, 20)  # the far tail was exercised


if __name__ == "__main__":
    CLI = sys.argv.pop(1)
    unittest.main(verbosity=2)
