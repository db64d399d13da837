#!/usr/bin/env python3
"""Compare the bandwidth figures of eager_vs_fused runs: BEFORE logs (the hand-written figures) against
AFTER logs (the figures taken from scopeprof's declared work). Prints, per figure, the median of each side,
the relative difference, and whether it is within the tolerance (1% by default).

    compare-example-rates.py before_1.log before_2.log -- after_1.log after_2.log [--tolerance 0.01]
"""
import re
import statistics
import sys

LINE = re.compile(r"^\s+(device-to-device copy|eager tail|fused tail)\s+([\d.]+) GB/s(?:\s+=\s+([\d.]+)% of copy)?")


def figures(paths):
    out = {}
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = LINE.match(line)
                if not m:
                    continue
                out.setdefault(m.group(1) + " GB/s", []).append(float(m.group(2)))
                if m.group(3):
                    out.setdefault(m.group(1) + " % of copy", []).append(float(m.group(3)))
    return out


def main(argv):
    tolerance = 0.01
    if "--tolerance" in argv:
        i = argv.index("--tolerance")
        tolerance = float(argv[i + 1])
        del argv[i:i + 2]
    if "--" not in argv:
        print(__doc__, file=sys.stderr)
        return 2
    cut = argv.index("--")
    before, after = figures(argv[:cut]), figures(argv[cut + 1:])
    if not before or not after:
        print("compare-example-rates: no bandwidth lines found in %s" % ("the before logs" if not before else "the after logs"))
        return 2
    worst = 0.0
    print("%-28s %10s %10s %8s  (medians of %d and %d runs)" % ("figure", "before", "after", "diff",
                                                                  len(argv[:cut]), len(argv[cut + 1:])))
    for key in before:
        if key not in after:
            print("%-28s %10.1f %10s" % (key, statistics.median(before[key]), "missing"))
            worst = float("inf")
            continue
        b, a = statistics.median(before[key]), statistics.median(after[key])
        diff = (a - b) / b if b else float("inf")
        worst = max(worst, abs(diff))
        print("%-28s %10.1f %10.1f %+7.2f%%" % (key, b, a, 100 * diff))
    verdict = "within" if worst <= tolerance else "NOT within"
    print("largest difference %.2f%%: %s %.0f%%" % (100 * worst, verdict, 100 * tolerance))
    return 0 if worst <= tolerance else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
