#!/usr/bin/env python3
"""Self-test of the reference implementation (python3 selftest.py; exit 0 = all passed).

1. worked examples of /work/shared/conformance/worked reproduced exactly (compare.py rules);
2. Token-F1 vectors (all of token_f1_vectors.jsonl) and the docs/measures.md §7 examples,
   within 1e-9;
3. SplitMix64 check values (docs/measures.md §9) and Krippendorff's alpha check value
   (docs/measures.md §8.2) through an annotations file on the CLI;
4. the numbers stated in the docs/measures.md §13 prose;
5. compare.py itself (a few mutations must be caught, 8 == 8.0 must not);
6. gen_matrix.py seeds 1..200 (or --seeds A B): no crash, each run < 2 s, invalid inputs
   rejected with exit 1 and valid ones accepted, docs/measures.md §3.10 identities on every report.
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # keep the directory to its five files
sys.path.insert(0, HERE)
import compare  # noqa: E402
import traj_metrics as tm  # noqa: E402

SHARED = "/work/shared/conformance"
WORKED = os.path.join(SHARED, "worked")
REF = os.path.join(HERE, "traj_metrics.py")
GEN = os.path.join(HERE, "gen_matrix.py")

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def check(cond, msg):
    if not cond:
        fail(msg)


def run_ref(args, timeout=60):
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, REF] + args, capture_output=True, timeout=timeout)
    dt = time.monotonic() - t0
    return p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8"), dt


def report_of(args):
    rc, out, err, _ = run_ref(args)
    if rc != 0:
        fail("run %r failed: %s" % (args, err.strip()))
        return None
    return json.loads(out)


# ---------------------------------------------------------------------------------------------

def test_worked():
    cases = [
        ("example_13_1.jsonl", [], "example_13_1.report.json"),
        ("example_13_1.jsonl", ["--grid", "joint"], "example_13_1.joint.report.json"),
        ("example_13_2.csv", [], "example_13_2.report.json"),
        ("example_13_2.csv", ["--variant-budget", "zero"], "example_13_2.zero.report.json"),
    ]
    for inp, args, exp in cases:
        rep = report_of([os.path.join(WORKED, inp)] + args)
        if rep is None:
            continue
        with open(os.path.join(WORKED, exp), encoding="utf-8") as fh:
            expected = json.load(fh)
        diffs = compare.compare_reports(expected, rep)
        check(not diffs, "worked %s %s: %s" % (inp, args, diffs[:5]))
    print("worked examples: done")


def test_token_f1():
    n = 0
    with open(os.path.join(SHARED, "token_f1_vectors.jsonl"), encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            v = json.loads(line)
            got = tm.token_f1_score(v["pred"], v["gold"])
            check(abs(got - v["score"]) <= 1e-9, "token-f1 %r: %r != %r" % (v, got, v["score"]))
            n += 1
    check(n == 56, "expected 56 Token-F1 vectors, found %d" % n)
    prose = [("The cat sat on the mat.", "a cat on a mat", 600 / 7), ("the", "a", 100.0),
             ("", "something", 0.0), ("red red blue", "red blue blue", 200 / 3),
             ("don't", "do not", 0.0), ("A man-made lake", "man made lake", 40.0),
             ("Paris", ["paris, France", "Paris"], 100.0), (None, "", 100.0)]
    for p, g, e in prose:
        got = tm.token_f1_score(p, g)
        check(abs(got - e) <= 1e-9, "token-f1 prose %r %r: %r != %r" % (p, g, got, e))
    print("token-f1: %d vectors" % n)


def test_splitmix():
    r = tm.SplitMix64(0)
    got = [r.next() for _ in range(3)]
    check(got == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F],
          "splitmix64 seed 0: %s" % [hex(x) for x in got])
    idx, _ = tm.draw_indices(0, 3)
    check(idx == [x % 3 for x in got], "draw_indices disagrees with SplitMix64")


def test_alpha(tmp):
    units = [[1, 1, None, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2],
             [1, 2, 3, 4], [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [None, 5, 5, 5],
             [None, None, 1, 1], [None, None, 3, None]]
    path = os.path.join(tmp, "kripp.jsonl")
    with open(path, "w", encoding="utf-8") as fh:
        for u, vals in enumerate(units):
            for coder, v in enumerate(vals):
                if v is None:
                    continue
                fh.write(json.dumps({"item_id": "u%02d" % u, "annotator": "coder%d" % coder,
                                     "tags": [], "primary": str(v)}) + "\n")
    rep = report_of([os.path.join(WORKED, "example_13_1.jsonl"), "--boot", "0",
                     "--annotations", path])
    if rep is None:
        return
    ag = rep["agreement"]
    check(ag is not None and ag["primary_alpha"] is not None
          and abs(ag["primary_alpha"] - 0.743421052631579) <= 1e-12,
          "Krippendorff alpha: %r" % (ag and ag["primary_alpha"]))
    check(ag["primary_units_pairable"] == 11, "alpha pairable units %r" % ag["primary_units_pairable"])
    check(abs(ag["primary_pairable_values"] - 40) <= 1e-9,
          "alpha pairable values %r" % ag["primary_pairable_values"])
    check(ag["annotators"] == ["coder0", "coder1", "coder2", "coder3"] and len(ag["pairs"]) == 6,
          "agreement annotators/pairs")
    # duplicate (unit, annotator) must be rejected
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"item_id": "u00", "annotator": "coder0", "tags": [], "primary": "1"}) + "\n")
    rc, _, err, _ = run_ref([os.path.join(WORKED, "example_13_1.jsonl"), "--boot", "0",
                             "--annotations", path])
    check(rc == 1 and err.strip(), "duplicate annotation not rejected")
    print("krippendorff: alpha = %r" % ag["primary_alpha"])


# ---------------------------------------------------------------------------------------------

def approx(a, b, tol):
    return a is not None and b is not None and abs(a - b) <= tol


def find(rep, protocol, task, scope):
    for a in rep["analyses"]:
        if (a["protocol"], a["task"], a["scope"]) == (protocol, task, scope):
            return a
    return None


def test_prose():
    R3 = 5e-4  # numbers quoted with 3 decimals
    ex1 = os.path.join(WORKED, "example_13_1.jsonl")
    ex2 = os.path.join(WORKED, "example_13_2.csv")
    rep = report_of([ex1])
    M = find(rep, "main", "mcq", "toy-mcq")["models"]["M"]
    g = M["grid"]
    check(g["configs"] == ["textonly", "8f", "16f", "32f"] and g["ladder"] == g["configs"]
          and g["top"] == "32f" and g["comparable_pairs"] == 6, "13.1 grid")
    check(M["correct_counts"] == [3, 3, 4, 4], "13.1 curve counts")
    for got, e in zip(M["accuracy"], [42.857, 42.857, 57.143, 57.143]):
        check(approx(got, e, R3), "13.1 curve %r" % got)
    check(M["best_fixed"]["config"] == "16f", "13.1 best fixed")
    check(M["oracle_count"] == 6 and approx(M["oracle_accuracy"], 85.714, R3), "13.1 oracle")
    check(approx(M["headroom"], 28.571, R3), "13.1 headroom")
    check([M["classes"][c] for c in tm.CLASSES] == [1, 1, 2, 1, 2], "13.1 classes")
    check(M["best_config_counts"] == {"textonly": 4, "8f": 1, "16f": 1, "32f": 1}, "13.1 best cfg")
    check(M["harmful_items"] == 3 and approx(M["harmful_rate"], 42.857, R3), "13.1 harmful")
    check(M["harmful_pairs"] == 7 and M["pairs_total"] == 42
          and approx(M["harmful_pair_rate"], 16.667, R3), "13.1 harmful pairs")
    check(M["classes"]["monotonic_decreasing"] + M["classes"]["oscillating"] == 3, "13.1 chain")
    ch = [(e["from"], e["to"], e["wrong_to_correct"], e["correct_to_wrong"], e["stable_correct"],
           e["stable_wrong"]) for e in M["churn"]]
    check(ch == [("textonly", "8f", 1, 1, 2, 3), ("8f", "16f", 2, 1, 2, 2),
                 ("16f", "32f", 2, 2, 2, 1)], "13.1 churn %r" % ch)
    check(M["churn_totals"] == {"wrong_to_correct": 5, "correct_to_wrong": 4}, "13.1 churn totals")
    check(M["terminal_regressions"] == 2 and approx(M["terminal_regression_rate"], 28.571, R3),
          "13.1 terminal")
    exp_rw = [[0, 14.286, 0, 28.571], [14.286, 0, 14.286, 14.286], [14.286, 28.571, 0, 28.571],
              [42.857, 28.571, 28.571, 0]]
    rw = M["complementarity"]["right_wrong"]
    check(all(approx(rw[a][b], exp_rw[a][b], R3) for a in range(4) for b in range(4)),
          "13.1 right_wrong")
    pog = M["complementarity"]["pair_oracle_gain"]
    exp_pog = {(0, 1): 14.286, (0, 2): 0, (0, 3): 28.571, (1, 2): 14.286, (1, 3): 14.286,
               (2, 3): 28.571}
    check(all(approx(pog[a][b], v, R3) and approx(pog[b][a], v, R3)
              for (a, b), v in exp_pog.items()), "13.1 pair oracle gain")
    to = M["text_overwrite"]
    check(to["items"] == 2 and to["text_correct_items"] == 3 and approx(to["rate"], 28.571, R3)
          and approx(to["conditional_rate"], 66.667, R3), "13.1 text overwrite")
    pf = M["prior_fallback"]
    check((pf["harmful_pairs"], pf["fallback_pairs"], pf["rate"], pf["terminal_regressions"],
           pf["terminal_fallbacks"], pf["terminal_rate"], pf["wrong_cells"],
           pf["wrong_cells_matching_blind"], pf["baseline_rate"])
          == (4, 1, 25.0, 2, 0, 0.0, 10, 5, 50.0), "13.1 prior fallback %r" % pf)
    cs = M["cascade"]
    check(cs["stages"] == ["8f", "16f", "32f"], "13.1 cascade stages")
    sw = {round(e["tau"], 2): e for e in cs["sweep"]}
    check(len(cs["sweep"]) == 101, "13.1 sweep length")
    check(sw[0.30]["correct"] == 3, "13.1 cascade tau .30")
    for t in (0.31, 0.32, 0.33, 0.34, 0.35):
        e = sw[t]
        check(e["correct"] == 4 and e["stop_counts"] == [4, 2, 1] and e["shared_cost_total"] == 96
              and approx(e["mean_shared_cost"], 13.714, R3)
              and approx(e["mean_no_share_cost"], 19.429, R3), "13.1 cascade tau %r" % t)
        check(approx(e["mean_no_share_cost"] * 7, 136, 1e-9), "13.1 no-share cost 136")
    check(cs["baseline"]["correct"] == 4 and cs["baseline"]["config"] == "32f", "13.1 baseline")
    check(cs["selected"]["tau"] == 0.31 and approx(cs["selected"]["cost_reduction_pct"], 57.143, R3),
          "13.1 selected")
    bs = M["bootstrap"]
    check(bs["B"] == 1000 and bs["seed"] == 12345, "13.1 bootstrap params")
    check(bs["headroom"] == {"lo": 0.0, "hi": 42.857142857142854}, "13.1 headroom CI %r" % bs)
    check(approx(bs["harmful_rate"]["lo"], 0.0, 1e-9)
          and approx(bs["harmful_rate"]["hi"], 71.78571428571396, 1e-9), "13.1 harmful CI")
    comp = [c for c in rep["protocol_comparisons"] if c["scope"] == "toy-mcq"]
    check(len(comp) == 1, "13.1 one protocol comparison")
    c = comp[0]
    check((c["protocol_a"], c["protocol_b"], c["both"], c["only_a"], c["only_b"])
          == ("main", "cached", 3, 0, 1) and approx(c["jaccard"], 0.75, 1e-12)
          and approx(c["kappa"], 0.72, 1e-9) and approx(c["p_o"], 6 / 7, 1e-12),
          "13.1 protocol comparison %r" % c)
    C = find(rep, "cached", "mcq", "toy-mcq")["models"]["M"]
    check(C["patterns"] == {"1111": 1, "0011": 1, "0100": 1, "1110": 1, "0101": 1, "0000": 1,
                            "1011": 1}, "13.1 cached patterns")
    iv = M["intervention"]
    check(iv["terminal_regressions"] == 2 and iv["recovered"] == 1 and iv["recovery_rate"] == 50.0
          and iv["top_correct_items"] == 4 and iv["broken"] == 1 and iv["broken_rate"] == 25.0,
          "13.1 intervention %r" % iv)
    O = find(rep, "main", "open", "toy-open")["models"]["M"]
    check(all(approx(a, b, R3) for a, b in zip(O["mean_score"], [46.667, 58.333, 63.333])),
          "13.1 open means")
    check(O["best_fixed"]["config"] == "32f" and approx(O["oracle_mean"], 66.667, R3)
          and approx(O["oracle_gap"], 3.333, R3), "13.1 open oracle")
    check(O["regression_items"] == 1 and approx(O["regression_rate"], 33.333, R3)
          and O["terminal_regressions"] == 0, "13.1 open regression")
    ob = O["bootstrap"]
    check(approx(ob["oracle_gap"]["lo"], 0.0, 1e-6) and approx(ob["oracle_gap"]["hi"], 3.3333333333333335, 1e-6)
          and ob["regression_rate"] == {"lo": 0.0, "hi": 100.0}, "13.1 open bootstrap %r" % ob)
    # include_zero_frame = false
    rep = report_of([ex1, "--no-zero-frame", "--boot", "0"])
    M = find(rep, "main", "mcq", "toy-mcq")["models"]["M"]
    check(M["grid"]["configs"] == ["8f", "16f", "32f"], "13.1 nzf grid")
    check(M["harmful_items"] == 3 and M["harmful_pairs"] == 4 and M["pairs_total"] == 21,
          "13.1 nzf harmful")
    to = M["text_overwrite"]
    check(to["items"] == 0 and to["zero_frame_configs"] == [] and to["rate"] == 0.0,
          "13.1 nzf text overwrite")
    check((M["prior_fallback"]["harmful_pairs"], M["prior_fallback"]["fallback_pairs"])
          == (4, 1), "13.1 nzf prior fallback unchanged")
    # 13.2, variant_budget = zero
    rep = report_of([ex2, "--variant-budget", "zero", "--boot", "0"])
    V = find(rep, "main", "mcq", "toy-var")["models"]["V"]
    g = V["grid"]
    check(g["reference_pixels"] == 151200 and g["variants"] == ["16f-hr"], "13.2 P_ref/variants")
    check(g["budgets"] == [0, 16, 32, 32, 0]
          and g["configs"] == ["textonly", "16f", "32f", "32f-b", "16f-hr"]
          and g["top"] == "32f-b" and g["comparable_pairs"] == 8, "13.2 zero grid")
    check(V["patterns"] == {"01101": 1, "11011": 1, "00111": 1}, "13.2 patterns")
    check(V["harmful_items"] == 3 and V["harmful_pairs"] == 6 and V["pairs_total"] == 24
          and V["terminal_regressions"] == 1 and V["text_overwrite"]["items"] == 1, "13.2 zero totals")
    check(V["classes"]["oscillating"] == 2 and V["classes"]["monotonic_increasing"] == 1, "13.2 classes")
    check(V["best_config_counts"] == {"textonly": 1, "16f": 1, "32f": 1}, "13.2 best configs")
    check([(e["from"], e["to"]) for e in V["churn"]]
          == [("textonly", "16f"), ("16f", "32f"), ("32f", "32f-b")], "13.2 churn edges")
    # 13.2, default own
    rep = report_of([ex2, "--boot", "0"])
    V = find(rep, "main", "mcq", "toy-var")["models"]["V"]
    check(V["grid"]["budgets"] == [0, 16, 32, 32, 16] and V["grid"]["comparable_pairs"] == 8
          and V["harmful_pairs"] == 5 and V["harmful_items"] == 2, "13.2 own")
    check(V["grid"]["configs"] == ["textonly", "16f", "32f", "32f-b", "16f-hr"], "13.2 own order")
    print("docs/measures.md §13 prose: done")


# ---------------------------------------------------------------------------------------------

def test_compare_tool():
    base = {"a": 8, "b": [1.0, None], "task": "mcq", "c": {"x": 1.5}}
    check(compare.compare_reports(base, json.loads(json.dumps(base))) == [], "compare: self")
    check(compare.compare_reports(base, dict(base, a=8.0)) == [], "compare: 8 == 8.0")
    check(compare.compare_reports(base, dict(base, a=9)), "compare: int diff")
    check(compare.compare_reports(base, dict(base, b=[1.0 + 2e-9, None])), "compare: 2e-9")
    check(not compare.compare_reports(base, dict(base, b=[1.0 + 5e-10, None])), "compare: 5e-10")
    check(compare.compare_reports(base, dict(base, b=[1.0, 0])), "compare: null vs number")
    check(compare.compare_reports(base, dict(base, d=1)), "compare: extra key")
    check(compare.compare_reports(base, {k: v for k, v in base.items() if k != "c"}), "compare: missing key")
    check(compare.compare_reports(base, dict(base, b=[None, 1.0])), "compare: list order")
    check(compare.compare_reports({"x": True}, {"x": 1}), "compare: bool vs int")
    op = {"task": "open", "oracle_gap": 1.0, "regression_rate": 1.0}
    check(not compare.compare_reports(op, dict(op, oracle_gap=1.0 + 5e-7)), "compare: open 1e-6")
    check(compare.compare_reports(op, dict(op, regression_rate=1.0 + 5e-7)), "compare: open rate 1e-9")
    print("compare.py: done")


# ---------------------------------------------------------------------------------------------

def identities(rep, items):
    """docs/measures.md §3.10 identities and a few internal consistency checks of one report."""
    errs = []
    harmful_by = {}
    for a in rep["analyses"]:
        for m, M in a["models"].items():
            tag = "%s/%s/%s/%s" % (a["protocol"], a["task"], a["scope"], m)
            g = M["grid"]
            K = len(g["configs"])
            n = M["n_items"]
            if n != g["n_items"] or n <= 0 or K <= 0:
                errs.append(tag + ": empty grid with metrics")
            if a["task"] == "open":
                harmful_by[(a["protocol"], a["task"], a["scope"], m)] = M["regression_items"]
                continue
            harmful_by[(a["protocol"], a["task"], a["scope"], m)] = M["harmful_items"]
            if sum(M["classes"].values()) != n:
                errs.append(tag + ": classes do not sum to n")
            if sum(M["patterns"].values()) != n or sum(M["best_config_counts"].values()) != n:
                errs.append(tag + ": patterns/best configs do not sum to n")
            cc = dict(zip(g["configs"], M["correct_counts"]))
            for e in M["churn"]:
                if e["wrong_to_correct"] - e["correct_to_wrong"] != cc[e["to"]] - cc[e["from"]]:
                    errs.append(tag + ": churn identity")
                if e["wrong_to_correct"] + e["correct_to_wrong"] + e["stable_correct"] + e["stable_wrong"] != n:
                    errs.append(tag + ": churn sum")
            rw = M["complementarity"]["right_wrong"]
            pog = M["complementarity"]["pair_oracle_gain"]
            for x in range(K):
                for y in range(K):
                    if pog[x][y] != min(rw[x][y], rw[y][x]) and x != y:
                        errs.append(tag + ": pair-oracle identity")
            if M["terminal_regressions"] > M["harmful_items"]:
                errs.append(tag + ": terminal > harmful")
            b = g["budgets"]
            strict = not g["variants"] and len(set(b)) == len(b)
            if strict:
                if M["harmful_items"] != M["classes"]["monotonic_decreasing"] + M["classes"]["oscillating"]:
                    errs.append(tag + ": strict chain harmful != MD+OSC")
                if M["comparable_pairs"] != K * (K - 1) // 2:
                    errs.append(tag + ": strict chain comparable pairs")
                hp = sum(v for p, v in M["patterns"].items() if "10" in p)
                if hp != M["harmful_items"]:
                    errs.append(tag + ": strict chain '10' substring")
            ti = g["configs"].index(g["top"])
            unique_top = sum(1 for x in b if x == max(b)) == 1 and b[ti] == max(b)
            if unique_top and M["best_fixed"]["index"] == ti:
                if abs(M["headroom"] - M["terminal_regression_rate"]) > 1e-9:
                    errs.append(tag + ": headroom != terminal rate")
            to = M["text_overwrite"]
            if to["items"] > to["text_correct_items"]:
                errs.append(tag + ": text overwrite > text correct")
            if M["cascade"] is not None and len(M["cascade"]["sweep"]) != 101:
                errs.append(tag + ": sweep length")
            if M["bootstrap"] is not None:
                for k in ("headroom", "harmful_rate"):
                    if M["bootstrap"][k]["lo"] > M["bootstrap"][k]["hi"]:
                        errs.append(tag + ": CI lo > hi")
    # per-item export vs report
    cnt = {}
    for rec in items:
        key = (rec["protocol"], rec["task"], rec["scope"], rec["model"])
        flag = rec["has_harmful"] if rec["task"] == "mcq" else rec["has_regression"]
        cnt[key] = cnt.get(key, 0) + (1 if flag else 0)
        if rec["task"] == "mcq" and rec["terminal_regression"] and not rec["has_harmful"]:
            errs.append("item %r: terminal regression without harmful transition" % (key,))
    for key, v in harmful_by.items():
        if key[2] != "ALL" and cnt.get(key, 0) != v:
            errs.append("items export disagrees with report for %r" % (key,))
    return errs


def test_generated(lo, hi, tmp):
    slow = []
    for seed in range(lo, hi + 1):
        d = os.path.join(tmp, "case%d" % seed)
        p = subprocess.run([sys.executable, GEN, str(seed), d], capture_output=True)
        if p.returncode != 0:
            fail("gen_matrix %d crashed: %s" % (seed, p.stderr.decode()[-500:]))
            continue
        inp = os.path.join(d, "cells.csv")
        if not os.path.exists(inp):
            inp = os.path.join(d, "cells.jsonl")
        with open(os.path.join(d, "args.json"), encoding="utf-8") as fh:
            args = json.load(fh)
        items_path = os.path.join(d, "items.jsonl")
        rc, out, err, dt = run_ref([inp] + args + ["--items-out", items_path])
        reject = os.path.exists(os.path.join(d, "expect_reject"))
        if dt > 2.0:
            slow.append((seed, dt))
        if reject:
            check(rc == 1 and err.strip() != "" and out == "",
                  "seed %d: invalid input not rejected (rc %d)" % (seed, rc))
            continue
        if rc != 0:
            fail("seed %d: rc %d: %s" % (seed, rc, err.strip()[-500:]))
            continue
        rep = json.loads(out)
        with open(items_path, encoding="utf-8") as fh:
            items = [json.loads(line) for line in fh if line.strip()]
        for e in identities(rep, items):
            fail("seed %d: %s" % (seed, e))
        check(compare.compare_reports(rep, json.loads(out)) == [], "seed %d: self-compare" % seed)
    check(not slow, "slow runs (> 2 s): %r" % slow)
    print("generated cases %d..%d: done" % (lo, hi))


def main(argv):
    lo, hi = 1, 200
    if len(argv) == 3 and argv[0] == "--seeds":
        lo, hi = int(argv[1]), int(argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        test_worked()
        test_token_f1()
        test_splitmix()
        test_alpha(tmp)
        test_prose()
        test_compare_tool()
        test_generated(lo, hi, tmp)
    if failures:
        print("%d FAILURE(S)" % len(failures))
        return 1
    print("all self-tests passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
