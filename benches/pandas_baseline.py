#!/usr/bin/env python3
"""Vectorised pandas/numpy speed baseline for the per-item CSV trajectory measures.

Reads a per-item CSV (docs/measures.md §1.7) and computes, for every model, per split and for the
pooled "ALL" scope (§2.1–2.3, per-model grids, no filters, zero-frame configurations
included), the measures of §3.1–3.3, §3.5, §3.7 and §4.1:

  curve (accuracy per configuration), best fixed configuration, item-level oracle accuracy,
  headroom, harmful (visual confusion) rate, terminal regression rate, text overwrite rate.

Simplification of the spec (deliberate, as the baseline's brief asks): grid order is
(frame_count, config id) for all configurations, comparability is "strictly smaller
frame_count", and the top configuration is the last one in that order. The spec's split of
the grid into a ladder and resolution variants (§2.4: variants sort after the ladder and are
never the top configuration) is NOT applied; on grids without resolution variants the two
agree exactly.

Usage:
  python3 benches/pandas_baseline.py FILE.csv [--repeat N] [--check]
  python3 benches/pandas_baseline.py --gen-synthetic OUT.csv [--seed S]

Timing covers read_csv through the end of the computation (imports, printing and --check
excluded). With --repeat N, the median of N runs of each phase is reported. The last line
of output (for an accepted input) is:
  pandas_baseline: load X.XXX s, compute Y.YYY s, total Z.ZZZ s, runs S.SSS s
where "runs" is the sum over the N runs (the process's wall time less it is its start-up:
the interpreter, the imports, the printing).

--check recomputes everything with a slow, pure-Python, loop-per-definition implementation
(its own csv-module parser, explicit pairwise loops) and compares: integers exactly, floats
within 1e-9. Exit status 1 on any mismatch.
"""

import argparse
import signal
import statistics
import sys
import time

import numpy as np
import pandas as pd

COLUMNS = ["sample_id", "model", "split", "config", "frame_count", "pixel_count",
           "predicted_option", "ground_truth_option", "correct"]
REQUIRED = ["sample_id", "model", "config", "frame_count"]


class InputError(Exception):
    pass


# ----------------------------------------------------------------------------------------
# Loading (vectorised)
# ----------------------------------------------------------------------------------------

IDENTITY = {"sample_id", "model", "split", "config", "predicted_option", "ground_truth_option"}


def _merge_stripped(codes, values):
    """Strip whitespace on the (few) distinct values, not on the rows; values equal after
    stripping are merged. codes: int array (-1 = missing field). Returns (codes, names)."""
    if len(values) == 0:
        return codes.astype(np.int64), np.array([], dtype=object)
    stripped = np.array([v.strip() for v in values], dtype=object)
    names, inv = np.unique(stripped, return_inverse=True)
    out = np.where(codes >= 0, inv[np.maximum(codes, 0)], -1)
    return out.astype(np.int64), names


def _category_codes(col, s: pd.Series):
    """Categorical column (read_csv dtype="category") -> (codes, stripped names) or None.

    read_csv converts the categories of an all-numeric column to numbers. That is harmless
    for integer columns (frame_count, pixel_count, correct), whose integers are turned back
    into decimal text; non-integral numbers mark the column malformed. An identity column
    (e.g. purely numeric sample ids, where "007" != "7") returns None: it is re-read as text."""
    cats = s.cat.categories
    codes = s.cat.codes.to_numpy()
    if cats.dtype == object or pd.api.types.is_string_dtype(cats.dtype):
        return _merge_stripped(codes, [str(v) for v in cats])
    if col in IDENTITY:
        return None
    if pd.api.types.is_integer_dtype(cats.dtype):
        return _merge_stripped(codes, [str(int(v)) for v in cats])
    return _merge_stripped(codes, [repr(v) + " (non-integer)" for v in cats])


def load(path):
    """read_csv + cleaning. Returns a DataFrame of valid MCQ cells with integer codes:
    model, split, sid, config (codes into the returned name arrays), frames, y (0/1)."""
    raw_cols = pd.read_csv(path, nrows=0, encoding="utf-8-sig").columns
    name_of = {str(rc).strip(): rc for rc in raw_cols}
    missing = [c for c in REQUIRED if c not in name_of]
    if missing:
        raise InputError(f"missing required column(s): {missing}")
    use = [c for c in COLUMNS if c in name_of]
    opts = dict(keep_default_na=False,      # "" stays "", "NA" stays a string
                na_values=[], skip_blank_lines=True, encoding="utf-8-sig", engine="c")
    df = pd.read_csv(path, usecols=[name_of[c] for c in use], dtype="category", **opts)
    df.columns = [c.strip() for c in df.columns]

    codes, names, reread = {}, {}, []
    for c in use:
        r = _category_codes(c, df[c])
        if r is None:
            reread.append(c)
        else:
            codes[c], names[c] = r
    if reread:                               # numeric-looking identity columns, as text
        df2 = pd.read_csv(path, usecols=[name_of[c] for c in reread], dtype=str, **opts)
        df2.columns = [c.strip() for c in df2.columns]
        for c in reread:
            k, u = pd.factorize(df2[c], use_na_sentinel=True)
            codes[c], names[c] = _merge_stripped(k, [str(v) for v in u])
    n_rows = len(df)

    for c in REQUIRED:                      # non-empty, and present (short rows give NaN)
        bad_vals = np.array([v == "" for v in names[c]], dtype=bool)
        bad = (codes[c] < 0) | (bad_vals[np.maximum(codes[c], 0)] if len(bad_vals) else True)
        if n_rows and bad.any():
            raise InputError(f"line {int(np.argmax(bad)) + 2}: empty or missing '{c}'")

    # frame_count: decimal digits only
    fvals = names["frame_count"]
    f_ok = np.array([v.isascii() and v.isdigit() for v in fvals], dtype=bool)
    if len(fvals) and not f_ok.all():
        raise InputError(f"malformed frame_count value(s): {list(fvals[~f_ok])[:5]}")
    frames = np.array([int(v) for v in fvals], dtype=np.int64)[codes["frame_count"]]

    # split: empty or absent -> "default"
    if "split" in codes:
        sn = np.array(["default" if v == "" else v for v in names["split"]], dtype=object)
        sp_names, sp_inv = np.unique(sn, return_inverse=True)
        split_codes = np.where(codes["split"] >= 0, sp_inv[np.maximum(codes["split"], 0)], 0)
        if (codes["split"] < 0).any():
            raise InputError("row with too few fields (split)")
    else:
        sp_names, split_codes = np.array(["default"], dtype=object), np.zeros(n_rows, np.int64)

    # pixel_count: digits or empty (null); only needed for the per-configuration consistency check
    if "pixel_count" in codes:
        pvals = names["pixel_count"]
        p_ok = np.array([v == "" or (v.isascii() and v.isdigit()) for v in pvals], dtype=bool)
        if len(pvals) and not p_ok.all():
            raise InputError(f"malformed pixel_count value(s): {list(pvals[~p_ok])[:5]}")
        pix = np.array([-1 if v == "" else int(v) for v in pvals], dtype=np.int64)[codes["pixel_count"]]
    else:
        pix = np.full(n_rows, -1, np.int64)

    # correctness: recorded value, else derived from norm(pred) == norm(gold); else invalid (-1)
    y = np.full(n_rows, -1, np.int8)
    if "correct" in codes:
        lut = {"1": 1, "true": 1, "0": 0, "false": 0, "": -1}
        cv = [v.lower() for v in names["correct"]]
        badc = [v for v in cv if v not in lut]
        if badc:
            raise InputError(f"malformed correct value(s): {badc[:5]}")
        clut = np.array([lut[v] for v in cv], dtype=np.int8)
        y = clut[codes["correct"]] if len(clut) else y
    need = y < 0
    if need.any() and "ground_truth_option" in codes:
        # norm() on the categories of both columns, in one shared vocabulary (null -> -1)
        def normed(col):
            if col not in codes:
                return np.full(n_rows, -1, np.int64), []
            return codes[col], [v.strip().upper() for v in names[col]]
        pc, pn = normed("predicted_option")
        gc, gn = normed("ground_truth_option")
        vocab = {v: i for i, v in enumerate(sorted((set(pn) | set(gn)) - {""}))}
        p_lut = np.array([vocab.get(v, -1) if v else -1 for v in pn] or [-1], dtype=np.int64)
        g_lut = np.array([vocab.get(v, -1) if v else -1 for v in gn] or [-1], dtype=np.int64)
        pv = np.where(pc >= 0, p_lut[np.maximum(pc, 0)], -1)
        gv = np.where(gc >= 0, g_lut[np.maximum(gc, 0)], -1)
        derived = np.where(gv >= 0, ((pv >= 0) & (pv == gv)).astype(np.int8), -1)
        y = np.where(need, derived, y).astype(np.int8)

    cells = pd.DataFrame({
        "model": codes["model"], "split": split_codes, "sid": codes["sample_id"],
        "config": codes["config"], "frames": frames, "pixels": pix, "y": y,
    })

    # §1.5: one configuration has one frame_count / pixel_count
    per_cfg = cells.groupby("config", sort=False)[["frames", "pixels"]].nunique()
    if (per_cfg > 1).any(axis=None):
        badcfg = names["config"][per_cfg.index[(per_cfg > 1).any(axis=1)].to_numpy()]
        raise InputError(f"configuration(s) with differing frame_count/pixel_count: {list(badcfg)[:5]}")
    # §1.5: duplicate cell key (model, split, sample_id, config), valid or not
    if cells.duplicated(["model", "split", "sid", "config"]).any():
        raise InputError("duplicate cell key (model, split, sample_id, config)")

    invalid = int((cells["y"] < 0).sum())
    cells = cells[cells["y"] >= 0]
    meta = {"models": names["model"], "splits": sp_names, "configs": names["config"],
            "cells_invalid": invalid, "rows": n_rows}
    return cells, meta


# ----------------------------------------------------------------------------------------
# Computation (vectorised)
# ----------------------------------------------------------------------------------------

def grid_metrics(Y, frames, cfg_names):
    """Y: (n, K) 0/1 matrix, columns in grid order (frame_count, config id)."""
    n, K = Y.shape
    Yb = Y.astype(bool)
    correct = Yb.sum(axis=0)
    kstar = int(np.argmax(correct))                     # first max = earliest in grid order
    oracle = int(Yb.any(axis=1).sum())
    # harmful: right at a, wrong at b, frames[a] < frames[b]
    #   <=> min frame among right configs < max frame among wrong configs
    big = np.iinfo(np.int64).max
    min_right = np.where(Yb, frames, big).min(axis=1)
    max_wrong = np.where(Yb, -1, frames).max(axis=1)
    harmful = int((min_right < max_wrong).sum())
    top = K - 1
    terminal = int(((~Yb[:, top]) & (min_right < frames[top])).sum())
    zero = frames == 0
    if zero.any():
        text_ow = int((Yb[:, zero].any(axis=1) & (~Yb[:, ~zero]).any(axis=1)).sum())
    else:
        text_ow = 0
    return {
        "n": n, "K": K,
        "configs": list(cfg_names), "frames": [int(f) for f in frames],
        "correct": [int(c) for c in correct],
        "acc": [100 * int(c) / n for c in correct],
        "best_config": cfg_names[kstar], "best_fixed": 100 * int(correct[kstar]) / n,
        "top_config": cfg_names[top], "top_acc": 100 * int(correct[top]) / n,
        "oracle_items": oracle, "oracle_accuracy": 100 * oracle / n,
        "headroom": 100 * (oracle - int(correct[kstar])) / n,
        "harmful_items": harmful, "harmful_rate": 100 * harmful / n,
        "terminal_regressions": terminal, "terminal_regression_rate": 100 * terminal / n,
        "text_overwrite_items": text_ow, "text_overwrite_rate": 100 * text_ow / n,
    }


def compute(cells, meta):
    cfg_names = meta["configs"]
    frames_of_cfg = cells.groupby("config")["frames"].first()
    # global pivot: rows = (model, split, sample_id), columns = config, values y (NaN = missing)
    wide = cells.pivot(index=["model", "split", "sid"], columns="config", values="y")
    cols = wide.columns.to_numpy()
    M = wide.to_numpy(dtype=np.float32)                 # NaN where the cell is missing
    present = ~np.isnan(M)
    row_model = wide.index.get_level_values("model").to_numpy()
    row_split = wide.index.get_level_values("split").to_numpy()
    col_frames = frames_of_cfg.loc[cols].to_numpy()
    # grid order of all configurations: (frame_count, config id)
    order_all = np.lexsort((cfg_names[cols].astype(str), col_frames))

    # group boundaries of (model, split) in the sorted index
    ms = row_model * (len(meta["splits"]) + 1) + row_split
    starts = np.flatnonzero(np.r_[True, ms[1:] != ms[:-1]])
    ends = np.r_[starts[1:], len(ms)]

    def run(rows_slice_or_mask, avail):
        cols_sel = order_all[avail[order_all]]          # available configs, in grid order
        if len(cols_sel) == 0:
            return None
        sub_present = present[rows_slice_or_mask][:, cols_sel]
        keep = sub_present.all(axis=1)
        if not keep.any():
            return None
        Y = M[rows_slice_or_mask][:, cols_sel][keep].astype(np.int8)
        return grid_metrics(Y, col_frames[cols_sel], cfg_names[cols[cols_sel]])

    results = []
    model_rows = {}
    for s, e in zip(starts, ends):                       # one iteration per (model, split)
        m, sp = int(row_model[s]), int(row_split[s])
        avail = present[s:e].any(axis=0)
        model_rows.setdefault(m, []).append((s, e, avail))
        results.append((meta["models"][m], meta["splits"][sp], run(slice(s, e), avail)))
    for m, parts in model_rows.items():                  # pooled "ALL" scope per model
        avail = np.logical_and.reduce([a for _, _, a in parts])
        s, e = parts[0][0], parts[-1][1]                 # a model's rows are contiguous
        results.append((meta["models"][m], "ALL", run(slice(s, e), avail)))
    results.sort(key=lambda r: (r[0], r[1] != "ALL", r[1]))
    return results


# ----------------------------------------------------------------------------------------
# Slow reference: pure-Python loops over the definitions
# ----------------------------------------------------------------------------------------

def slow_reference(path):
    import csv
    with open(path, encoding="utf-8-sig", newline="") as fh:
        rd = csv.reader(fh)
        header = [h.strip() for h in next(rd)]
        idx = {h: i for i, h in enumerate(header)}
        cells = {}                       # (model, split, sid, config) -> y
        frames_of = {}
        for row in rd:
            if not row or all(f.strip() == "" for f in row) and len(row) <= 1:
                continue
            row = [f.strip() for f in row]
            get = lambda c: row[idx[c]] if c in idx else ""
            model, sid, config = get("model"), get("sample_id"), get("config")
            split = get("split") or "default"
            fr = int(get("frame_count"))
            frames_of[config] = fr
            corr = get("correct").lower()
            if corr in ("1", "true"):
                y = 1
            elif corr in ("0", "false"):
                y = 0
            else:
                pred = get("predicted_option").strip().upper() or None
                gold = get("ground_truth_option").strip().upper() or None
                if gold is None:
                    continue             # invalid cell = missing
                y = 1 if (pred is not None and pred == gold) else 0
            cells[(model, split, sid, config)] = y

    def metrics(items, cfgs, lookup):
        cfgs = sorted(cfgs, key=lambda c: (frames_of[c], c))
        n, K = len(items), len(cfgs)
        correct = [0] * K
        oracle = harmful = terminal = text_ow = 0
        top = cfgs[-1]
        for it in items:
            ys = [lookup(it, c) for c in cfgs]
            for k in range(K):
                correct[k] += ys[k]
            if any(ys):
                oracle += 1
            h = False
            for a in range(K):
                for b in range(K):
                    if frames_of[cfgs[a]] < frames_of[cfgs[b]] and ys[a] == 1 and ys[b] == 0:
                        h = True
            harmful += h
            if ys[K - 1] == 0 and any(ys[a] == 1 and frames_of[cfgs[a]] < frames_of[top]
                                      for a in range(K)):
                terminal += 1
            t_right = any(ys[k] == 1 for k in range(K) if frames_of[cfgs[k]] == 0)
            v_wrong = any(ys[k] == 0 for k in range(K) if frames_of[cfgs[k]] > 0)
            text_ow += t_right and v_wrong
        best = 0
        for k in range(K):
            if correct[k] > correct[best]:
                best = k
        return {
            "n": n, "K": K, "configs": cfgs, "frames": [frames_of[c] for c in cfgs],
            "correct": correct, "acc": [100 * c / n for c in correct],
            "best_config": cfgs[best], "best_fixed": 100 * correct[best] / n,
            "top_config": top, "top_acc": 100 * correct[K - 1] / n,
            "oracle_items": oracle, "oracle_accuracy": 100 * oracle / n,
            "headroom": 100 * (oracle - correct[best]) / n,
            "harmful_items": harmful, "harmful_rate": 100 * harmful / n,
            "terminal_regressions": terminal, "terminal_regression_rate": 100 * terminal / n,
            "text_overwrite_items": text_ow, "text_overwrite_rate": 100 * text_ow / n,
        }

    by_ms = {}
    for (model, split, sid, config), y in cells.items():
        by_ms.setdefault((model, split), {}).setdefault(sid, {})[config] = y
    results = []
    for (model, split), items in by_ms.items():
        cfgs = set()
        for d in items.values():
            cfgs |= set(d)
        grid_items = [sid for sid, d in items.items() if all(c in d for c in cfgs)]
        res = metrics(grid_items, cfgs, lambda it, c, items=items: items[it][c]) \
            if cfgs and grid_items else None
        results.append((model, split, res))
    for model in sorted({m for m, _ in by_ms}):
        splits = [s for (m, s) in by_ms if m == model]
        avail = None
        for s in splits:
            cs = set()
            for d in by_ms[(model, s)].values():
                cs |= set(d)
            avail = cs if avail is None else avail & cs
        grid_items = [(s, sid) for s in splits for sid, d in by_ms[(model, s)].items()
                      if all(c in d for c in avail)]
        res = metrics(grid_items, avail, lambda it, c: by_ms[(model, it[0])][it[1]][c]) \
            if avail and grid_items else None
        results.append((model, "ALL", res))
    results.sort(key=lambda r: (r[0], r[1] != "ALL", r[1]))
    return results


def compare(fast, slow):
    problems = []
    fk = {(m, s): r for m, s, r in fast}
    sk = {(m, s): r for m, s, r in slow}
    if set(fk) != set(sk):
        problems.append(f"scopes differ: {sorted(set(fk) ^ set(sk))}")
    for key in sorted(set(fk) & set(sk)):
        a, b = fk[key], sk[key]
        if (a is None) != (b is None):
            problems.append(f"{key}: one side has no grid")
            continue
        if a is None:
            continue
        for f in b:
            va, vb = a[f], b[f]
            if isinstance(vb, list):
                ok = len(va) == len(vb) and all(
                    (abs(x - z) <= 1e-9) if isinstance(z, float) else (x == z)
                    for x, z in zip(va, vb))
            elif isinstance(vb, float):
                ok = abs(va - vb) <= 1e-9
            else:
                ok = va == vb
            if not ok:
                problems.append(f"{key} {f}: fast={va!r} slow={vb!r}")
    return problems


# ----------------------------------------------------------------------------------------
# Output
# ----------------------------------------------------------------------------------------

def print_table(results, meta):
    print(f"rows {meta['rows']}, invalid cells {meta['cells_invalid']}; "
          "grid order (frame_count, config); rates in %, headroom in points")
    hdr = (f"{'model':<22} {'scope':<10} {'K':>2} {'n':>6} {'best fixed':<18} "
           f"{'top':<16} {'oracle':>6} {'headrm':>6} {'harmf':>6} {'term':>6} {'textow':>6}")
    print(hdr)
    print("-" * len(hdr))
    for model, scope, r in results:
        if r is None:
            print(f"{model:<22} {scope:<10}  (empty grid)")
            continue
        print(f"{model:<22} {scope:<10} {r['K']:>2} {r['n']:>6} "
              f"{r['best_config'] + ' ' + format(r['best_fixed'], '.2f'):<18} "
              f"{r['top_config'] + ' ' + format(r['top_acc'], '.2f'):<16} "
              f"{r['oracle_accuracy']:>6.2f} {r['headroom']:>6.2f} {r['harmful_rate']:>6.2f} "
              f"{r['terminal_regression_rate']:>6.2f} {r['text_overwrite_rate']:>6.2f}")
    print()
    print("curves (accuracy % per configuration, grid order):")
    for model, scope, r in results:
        if r is not None:
            print(f"  {model} {scope}: " +
                  " ".join(f"{c}={a:.2f}" for c, a in zip(r["configs"], r["acc"])))


def gen_synthetic(out, seed):
    """5 models x 10 frame budgets (incl. 0) x 20,000 items (2 splits of 10,000) = 1,000,000
    rows, random 0/1 correctness (per-model, per-budget success probability)."""
    rng = np.random.default_rng(seed)
    budgets = [0, 4, 8, 16, 24, 32, 48, 64, 128, 256]
    configs = ["textonly" if b == 0 else f"{b}f_151k" for b in budgets]
    models = [f"Model-{c}" for c in "ABCDE"]
    n_items = 20_000
    split = np.where(np.arange(n_items) < n_items // 2, "S_short", "S_long")
    sids = np.array([f"{i // 3:05d}-{i % 3 + 1}" for i in range(n_items)])
    frames = np.array(budgets)
    cfg = np.array(configs)
    M, I, C = len(models), n_items, len(budgets)
    mi = np.repeat(np.arange(M), I * C)
    ii = np.tile(np.repeat(np.arange(I), C), M)
    ci = np.tile(np.arange(C), M * I)
    p = 0.45 + 0.25 * (ci / (C - 1)) + 0.02 * mi
    corr = (rng.random(len(mi)) < p).astype(np.int8)
    gold = rng.choice(np.array(list("ABCD")), size=len(mi))
    wrong = np.array(list("BCDA"))[np.searchsorted(np.array(list("ABCD")), gold)]
    pred = np.where(corr == 1, gold, wrong)
    pd.DataFrame({
        "sample_id": sids[ii], "model": np.array(models)[mi], "split": split[ii],
        "config": cfg[ci], "frame_count": frames[ci],
        "pixel_count": np.where(frames[ci] == 0, 0, 151000),
        "predicted_option": pred, "ground_truth_option": gold, "correct": corr,
        "source_tag": "synthetic", "protocol_note": "",
    }).to_csv(out, index=False)
    print(f"wrote {len(mi)} rows to {out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", nargs="?")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--check", action="store_true",
                    help="compare with a slow pure-Python reference implementation")
    ap.add_argument("--gen-synthetic", metavar="OUT", help="write the 1M-row synthetic CSV")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if hasattr(signal, "SIGPIPE"):                  # quiet exit when piped into head
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    if args.gen_synthetic:
        gen_synthetic(args.gen_synthetic, args.seed)
        return 0
    if not args.csv:
        ap.error("FILE.csv required")

    loads, comps, totals = [], [], []
    try:
        for _ in range(max(1, args.repeat)):
            t0 = time.perf_counter()
            cells, meta = load(args.csv)
            t1 = time.perf_counter()
            results = compute(cells, meta)
            t2 = time.perf_counter()
            loads.append(t1 - t0)
            comps.append(t2 - t1)
            totals.append(t2 - t0)
    except InputError as e:
        print(f"pandas_baseline: input rejected: {e}", file=sys.stderr)
        return 2

    print_table(results, meta)
    status = 0
    if args.check:
        t = time.perf_counter()
        slow = slow_reference(args.csv)
        problems = compare(results, slow)
        dt = time.perf_counter() - t
        if problems:
            print(f"check: FAILED ({len(problems)} mismatches, reference took {dt:.1f} s)")
            for p in problems[:20]:
                print("  " + p)
            status = 1
        else:
            print(f"check: OK — {len(slow)} scopes agree with the pure-Python reference "
                  f"(reference took {dt:.1f} s)")
    med = statistics.median
    print(f"pandas_baseline: load {med(loads):.3f} s, compute {med(comps):.3f} s, "
          f"total {med(totals):.3f} s, runs {sum(totals):.3f} s")
    return status


if __name__ == "__main__":
    sys.exit(main())
