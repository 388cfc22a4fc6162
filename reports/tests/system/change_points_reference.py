"""Checks rocehil's E-divisive means against a reference written here from the paper
(Matteson and James 2014, arXiv:1306.4933, section 2, alpha = 1), the slow way: every pair
summed for every split, the same windowed search as MongoDB's nightly runs use, and the same
splitmix64 permutations. A split is kept when twice the smaller of the permutation p-value and
Student's t-test's (SciPy's ttest_ind with equal_var=True, on logarithms when every value is positive,
times the window's number of splits) is at most max_p. On random series with and without
planted steps, both give the same divergence for every split and the same change points with
the same p-values.

Usage: python3 change_points_reference.py CHANGE_POINTS_CLI
"""
import math
import random
import subprocess
import sys
import unittest

from scipy.stats import ttest_ind

CLI = None
MASK = (1 << 64) - 1


def divergence(w, t):
    """Q of the split of w at t: E scaled by m k / (m + k)."""
    left, right = w[:t], w[t:]
    m, k = len(left), len(right)
    across = sum(abs(a - b) for a in left for b in right)
    within_left = sum(abs(left[i] - left[j]) for i in range(m) for j in range(i + 1, m))
    within_right = sum(abs(right[i] - right[j]) for i in range(k) for j in range(i + 1, k))
    e = 2 * across / (m * k) - within_left / (m * (m - 1) / 2) - within_right / (k * (k - 1) / 2)
    return m * k / (m + k) * e


def divergences(w, min_segment):
    n = len(w)
    q = [0.0] * n
    if n >= 2 * min_segment:
        for t in range(min_segment, n - min_segment + 1):
            q[t] = divergence(w, t)
    return q


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)


def best(q, n):
    # The first largest, over every entry (as the C++ takes max_element over n + 1 entries, the
    # last of which is never a split and stays 0).
    entries = q + [0.0]
    top = max(entries)
    return entries.index(top), top


def t_test(window, split, min_segment):
    values = window
    if all(v > 0 for v in window):
        values = [math.log(v) for v in window]
    left, right = values[:split], values[split:]
    if len(set(left)) == 1 and len(set(right)) == 1:
        p = 1.0 if left[0] == right[0] else 0.0  # SciPy answers nan when neither side varies
    else:
        p = ttest_ind(left, right, equal_var=True).pvalue
    return min(1.0, (len(window) - 2 * min_segment + 1) * p)


def search(series, begin, end, min_segment, permutations, seed, max_p, found):
    n = end - begin
    if n < 2 * min_segment:
        return
    window = series[begin:end]
    split, observed = best(divergences(window, min_segment), n)
    if not observed > 0:
        return
    p_t = t_test(window, split, min_segment)
    rng = SplitMix64(seed ^ ((begin << 32 | end) & MASK))
    tie = observed * (1 - 1e-12)
    limit = max_p / 2 * (permutations + 1)
    values = list(window)
    as_large = 0
    p_permutation = None
    for _ in range(permutations):
        for i in range(n - 1, 0, -1):
            j = rng.next() % (i + 1)
            values[i], values[j] = values[j], values[i]
        _, top = best(divergences(values, min_segment), n)
        if top >= tie:
            as_large += 1
            if as_large + 1 > limit:
                break
    else:
        p_permutation = (as_large + 1) / (permutations + 1)
    p = min(1.0, 2 * min(1.0 if p_permutation is None else p_permutation, p_t))
    if not p <= max_p:
        return
    found.append((begin + split, p))
    search(series, begin, begin + split, min_segment, permutations, seed, max_p, found)
    search(series, begin + split, end, min_segment, permutations, seed, max_p, found)


class AgainstReference(unittest.TestCase):
    def test_same_divergences_and_change_points(self):
        rng = random.Random(20261129)
        cases = []
        for c in range(60):
            n = rng.randint(4, 24)
            series = [rng.gauss(0, 1) for _ in range(n)]
            steps = rng.choice([0, 1, 2]) if n >= 12 else 0
            for _ in range(steps):
                at = rng.randint(3, n - 3)
                shift = rng.choice([-4, -2, -1.5, 1.2, 2, 5])
                series = series[:at] + [v + shift for v in series[at:]]
            cases.append((rng.choice([2, 3, 4]), 199, c + 1, 0.05, series))
        # Short clear steps, which the t-test finds and the permutations cannot.
        for c in range(20):
            before, after = rng.randint(3, 6), rng.randint(3, 4)
            level = rng.choice([1.0, 50.0, 1e4])
            drop = rng.choice([0.03, 0.3, 0.5, 0.9])
            series = ([level * rng.uniform(0.97, 1.03) for _ in range(before)] +
                      [level * drop * rng.uniform(0.97, 1.03) for _ in range(after)])
            cases.append((3, 99, 100 + c, 0.01, series))
        text = "".join(f"{m} {p} {s} {a} | " + " ".join(map(repr, v)) + "\n"
                       for m, p, s, a, v in cases)
        out = subprocess.run([CLI], input=text, capture_output=True, text=True, check=True)
        lines = out.stdout.splitlines()
        self.assertEqual(len(lines), 2 * len(cases))
        with_points = counted = 0
        for i, (min_segment, permutations, seed, max_p, series) in enumerate(cases):
            q = [float(x) for x in lines[2 * i].split()[1:]]
            want_q = divergences(series, min_segment)
            self.assertEqual(len(q), len(want_q))
            for got, want in zip(q, want_q):
                self.assertAlmostEqual(got, want, delta=1e-9 * max(1.0, abs(want)), msg=series)
            got_points = [(int(a), float(b)) for a, b in
                          (x.split(":") for x in lines[2 * i + 1].split()[1:])]
            want_points = []
            search(series, 0, len(series), min_segment, permutations, seed, max_p, want_points)
            want_points.sort()
            self.assertEqual([a for a, _ in got_points], [a for a, _ in want_points], msg=series)
            for (_, p), (_, want_p) in zip(got_points, want_points):
                self.assertAlmostEqual(p, want_p, delta=1e-9 * max(1e-300, want_p) + 1e-15)
                counted += want_p >= 1e-3
            with_points += bool(want_points)
        # Both outcomes were exercised, and p-values near the limit, where the permutations'
        # draws and the t-test's tail both decide (the same on both sides).
        self.assertGreater(with_points, 5)
        self.assertLess(with_points, len(cases) - 5)
        self.assertGreater(counted, 2)


if __name__ == "__main__":
    CLI = sys.argv.pop(1)
    unittest.main(verbosity=2)
