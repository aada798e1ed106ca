#!/usr/bin/env python3
"""Compare two traj-metrics/2.1 reports (or two per-item exports) as docs/measures.md §0 says.

    python3 compare.py EXPECTED.json ACTUAL.json
    python3 compare.py --jsonl EXPECTED.jsonl ACTUAL.jsonl

Integers must match exactly (8 and 8.0 are the same number); floats within 1e-9 absolute,
except quantities that sum continuous scores (open-task mean_score, oracle_mean, oracle_gap,
pair_oracle_gain, their bootstrap bounds, open summary values, per-item open scores), which
use 1e-6.  null vs number, missing/extra keys and list length or order differences are
mismatches; key order is ignored.  Exit 0 when equal, else print up to 20 differences and
exit 1.
"""
import json
import math
import sys

TOL = 1e-9
TOL_OPEN = 1e-6
MAX_DIFFS = 20

# keys whose values (and everything below them) sum continuous scores, inside an open context
OPEN_KEYS = {"mean_score", "oracle_mean", "oracle_gap", "pair_oracle_gain", "oracle_gap_min",
             "oracle_gap_max", "scores", "max_score", "variability", "best_fixed", "top"}


def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


class Comparer:
    def __init__(self):
        self.diffs = []

    def add(self, path, msg):
        self.diffs.append("%s: %s" % (path or "$", msg))

    def cmp(self, e, a, path, open_ctx, loose):
        if isinstance(e, dict) and isinstance(a, dict):
            if e.get("task") == "open":
                open_ctx = True
            elif e.get("task") == "mcq":
                open_ctx = False
            for k in sorted(set(e) | set(a)):
                p = "%s.%s" % (path, k) if path else k
                if k not in a:
                    self.add(p, "missing in actual")
                    continue
                if k not in e:
                    self.add(p, "unexpected key in actual")
                    continue
                self.cmp(e[k], a[k], p, open_ctx, loose or (open_ctx and k in OPEN_KEYS))
            return
        if isinstance(e, list) and isinstance(a, list):
            if len(e) != len(a):
                self.add(path, "list length %d != %d" % (len(e), len(a)))
            for i in range(min(len(e), len(a))):
                self.cmp(e[i], a[i], "%s[%d]" % (path, i), open_ctx, loose)
            return
        if is_number(e) and is_number(a):
            if isinstance(e, int) and isinstance(a, int):
                if e != a:
                    self.add(path, "expected %r, got %r" % (e, a))
                return
            ef, af = float(e), float(a)
            if not (math.isfinite(ef) and math.isfinite(af)):
                if not (ef == af):
                    self.add(path, "expected %r, got %r" % (e, a))
                return
            tol = TOL_OPEN if loose else TOL
            if abs(ef - af) > tol:
                self.add(path, "expected %r, got %r (|diff| %.3g > %g)" % (e, a, abs(ef - af), tol))
            return
        if type(e) is not type(a) or e != a:
            self.add(path, "expected %s, got %s" % (json.dumps(e, ensure_ascii=False),
                                                    json.dumps(a, ensure_ascii=False)))


def load_json(path):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def load_jsonl(path):
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                out.append(json.loads(line))
    return out


def compare_reports(expected, actual):
    c = Comparer()
    c.cmp(expected, actual, "", False, False)
    return c.diffs


def compare_lines(expected, actual):
    c = Comparer()
    if len(expected) != len(actual):
        c.add("$", "line count %d != %d" % (len(expected), len(actual)))
    for i in range(min(len(expected), len(actual))):
        c.cmp(expected[i], actual[i], "line%d" % (i + 1), False, False)
    return c.diffs


def main(argv):
    if len(argv) == 3 and argv[0] == "--jsonl":
        diffs = compare_lines(load_jsonl(argv[1]), load_jsonl(argv[2]))
    elif len(argv) == 2:
        diffs = compare_reports(load_json(argv[0]), load_json(argv[1]))
    else:
        sys.stderr.write(__doc__)
        return 2
    if not diffs:
        return 0
    for d in diffs[:MAX_DIFFS]:
        print(d)
    if len(diffs) > MAX_DIFFS:
        print("... %d more differences" % (len(diffs) - MAX_DIFFS))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
