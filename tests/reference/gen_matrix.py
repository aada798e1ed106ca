#!/usr/bin/env python3
"""Random response-matrix generator for cross-checking traj-metrics/2.0 implementations.

    python3 gen_matrix.py SEED OUTDIR

Writes OUTDIR/cells.jsonl (or OUTDIR/cells.csv, per-item CSV of docs/measures.md §1.7, for
some seeds), OUTDIR/args.json (a JSON list of CLI flags, INPUT excluded) and, for some seeds,
OUTDIR/annotations.jsonl (args then contain --annotations with its absolute path).  For some
seeds the input violates exactly one rule of docs/measures.md §1.5 / 1.7 and
OUTDIR/expect_reject (empty)
is written: a conforming implementation must reject the input with exit status 1.
Everything is a deterministic function of SEED (Python's random.Random).
"""
import json
import math
import os
import random
import sys

MODEL_POOL = ["M", "llava-ov-7b", "Qwen2-VL", "\u00e4model", "m_b", "m-b", "Z9", "m\u00e9"]
MCQ_BENCH_POOL = ["videomme", "toy-mcq", "mc_\u00fc", "V1_short", "V1-short"]
OPEN_BENCH_POOL = ["open-qa", "caption_\u00e9", "toy-open", "Open"]
WORDS = ["cat", "dog", "red", "blue", "man", "woman", "holds", "runs", "door", "lamp", "river",
         "caf\u00e9", "na\u00efve", "green", "box", "x_y", "don't", "man-made", "lake", "Paris",
         "France", "two", "three", "3.5", "km"]
ARTICLES = ["a", "an", "the", "The", "A", "An"]
TAGS = ["evidence_dropped", "distractor", "temporal", "prior", "ocr"]
PIXELS_POOL = [151200, 76800, 200704, 50176]


def item_ids(R, n):
    style = R.randrange(5)
    out = []
    for i in range(1, n + 1):
        if style == 0:
            out.append("q%d" % i)
        elif style == 1:
            out.append("%03d-%d" % (i // 3, i % 3))
        elif style == 2:
            out.append(R.choice(["\u00e9", "e", "E", "\u00fc", "u", "32f-b", "32f_302k", "a b",
                                 "Q", "q", "_", "-"]) + str(i))
        elif style == 3:
            out.append("%d" % (i * 7 % 23 + i * 100))
        else:
            out.append(R.choice(["item", "Item", "\u00eftem"]) + "-" + str(i))
    # uniqueness
    seen = set()
    res = []
    for x in out:
        while x in seen:
            x = x + "x"
        seen.add(x)
        res.append(x)
    return res


def make_config_table(R, csv_mode):
    """config id -> dict(frames, budget or None, pixels or None)."""
    table = {}
    nlad = R.randint(2, 5)
    frames = sorted(R.sample([1, 2, 4, 8, 16, 32, 64, 128], nlad))
    use_px = R.random() < 0.55
    pref = R.choice(PIXELS_POOL)
    budget_mode = R.choice(["frames", "frames", "tokens", "float"])

    def budget_for(f, px):
        if budget_mode == "frames":
            return None
        if budget_mode == "tokens":
            return f * ((px or pref) // 1000)
        return f * 1.5

    for f in frames:
        px = pref if use_px and R.random() < 0.85 else None
        cid = "%df" % f if px is None else "%df_%dk" % (f, px // 1000)
        if R.random() < 0.15:
            cid = cid.upper() if R.random() < 0.5 else "\u00fc" + cid
        table[cid] = {"frames": f, "budget": budget_for(f, px), "pixels": px}
    if R.random() < 0.75:
        zb = None
        if R.random() < 0.1:
            zb = R.choice([0, 3, 0.5])
        table["textonly"] = {"frames": 0, "budget": zb,
                             "pixels": R.choice([None, None, 0]) if not csv_mode else None}
        if R.random() < 0.25:
            table[R.choice(["0f", "blind", "textonly-b", "Textonly"])] = {
                "frames": 0, "budget": None, "pixels": None}
    if R.random() < 0.35:
        # equal budget: another sampling of an existing ladder configuration
        base = R.choice([c for c in table if table[c]["frames"] > 0])
        d = dict(table[base])
        table[base + "-b"] = d
    if use_px:
        for _ in range(R.choice([0, 1, 1, 2])):
            f = R.choice(frames)
            px = R.choice([p for p in PIXELS_POOL + [302400] if p != pref])
            cid = "%df_%dk" % (f, px // 1000)
            if cid in table:
                continue
            if budget_mode == "frames":
                b = None
            elif R.random() < 0.5:
                b = f * (px // 1000)
            else:
                # equal to some ladder budget
                lb = [table[c]["budget"] if table[c]["budget"] is not None else table[c]["frames"]
                      for c in table if table[c]["frames"] > 0]
                b = R.choice(lb)
            table[cid] = {"frames": f, "budget": b, "pixels": px}
    if csv_mode:
        for c in table:
            table[c]["budget"] = None
    return table


def perturb_text(R, gold):
    words = gold.split()
    out = []
    for w in words:
        r = R.random()
        if r < 0.15:
            continue
        if r < 0.25:
            out.append(R.choice(WORDS))
        if r < 0.35:
            out.append(R.choice(ARTICLES))
        w2 = w
        if R.random() < 0.2:
            w2 = w2.upper()
        if R.random() < 0.1:
            w2 = w2 + R.choice([".", ",", "!", "?"])
        out.append(w2)
    if R.random() < 0.2:
        out.append(R.choice(WORDS))
    sep = R.choice([" ", " ", "  ", "\t"])
    return sep.join(out)


def gen_case(R, csv_mode):
    nmodels = R.randint(1, 5)
    models = R.sample(MODEL_POOL, nmodels)
    if csv_mode:
        if R.random() < 0.15:
            benches = [("", "mcq")]  # empty split (or no split column) -> "default"
        else:
            benches = [(b, "mcq") for b in R.sample(MCQ_BENCH_POOL, R.randint(1, 3))]
            if R.random() < 0.2:
                benches.append(("", "mcq"))
    else:
        nb = R.randint(1, 3)
        benches = []
        for _ in range(nb):
            if R.random() < 0.6:
                b = R.choice(MCQ_BENCH_POOL)
                t = "mcq"
            else:
                b = R.choice(OPEN_BENCH_POOL)
                t = "open"
            if b not in [x[0] for x in benches]:
                benches.append((b, t))
    main_table = make_config_table(R, csv_mode)
    protocols = [("main", main_table)]
    inter_name = None
    if not csv_mode:
        if R.random() < 0.35:
            t2 = {c: dict(v) for c, v in main_table.items()}
            if len(t2) > 2 and R.random() < 0.5:
                del t2[R.choice(sorted(t2))]
            protocols.append(("cached", t2))
        if R.random() < 0.4:
            inter_name = "intervention" if R.random() < 0.7 else "interv"
            fmax = max(v["frames"] for v in main_table.values())
            t3 = {"%df-int" % fmax: {"frames": fmax, "budget": None, "pixels": None}}
            if R.random() < 0.4:
                t3["%df-int2" % fmax] = {"frames": fmax, "budget": None, "pixels": None}
            if R.random() < 0.3:
                t3["%df-lo" % max(1, fmax // 2)] = {"frames": max(1, fmax // 2), "budget": None,
                                                   "pixels": None}
            protocols.append((inter_name, t3))
    ncfg = sum(len(t) for _, t in protocols)
    budget_cells = 4000
    per_bench_items = max(2, min(18, budget_cells // max(1, nmodels * ncfg * len(benches))))
    items = {b: item_ids(R, R.randint(2, per_bench_items)) for b, _ in benches}
    p_miss = R.choice([0.0, 0.0, 0.02, 0.06, 0.15])
    p_invalid = R.choice([0.0, 0.0, 0.02, 0.05])
    p_recorded = R.choice([0.0, 0.0, 0.1, 0.5])
    conf_mode = {m: R.choice(["none", "full", "full", "partial"]) for m in models}
    conf_exact = R.random() < 0.6
    open_mode = {b: R.choice(["score", "f1", "mixed"]) for b, t in benches if t == "open"}
    golds = {}
    for b, t in benches:
        for it in items[b]:
            if t == "mcq":
                golds[(b, it)] = R.choice("ABCD")
            else:
                n = R.randint(1, 5)
                g = " ".join(R.choice(WORDS) for _ in range(n))
                if R.random() < 0.3:
                    g = [g, " ".join(R.choice(WORDS) for _ in range(R.randint(1, 3)))]
                golds[(b, it)] = g
    skill = {m: R.uniform(0.2, 0.8) for m in models}
    cells = []
    for pname, table in protocols:
        is_inter = pname == inter_name
        cfg_ids = sorted(table)
        for m in models:
            if pname != "main" and R.random() < 0.15:
                continue  # model absent from this protocol
            mcfg = list(cfg_ids)
            if len(mcfg) > 2 and R.random() < 0.2:
                mcfg.remove(R.choice(mcfg))
            blind_keys = R.random() < 0.25
            for b, t in benches:
                if is_inter and t != "mcq":
                    continue
                if len(benches) > 1 and R.random() < 0.07:
                    continue
                bcfg = list(mcfg)
                if len(bcfg) > 2 and R.random() < 0.1:
                    bcfg.remove(R.choice(bcfg))  # config missing in one benchmark only
                for it in items[b]:
                    gold = golds[(b, it)]
                    diff = R.uniform(-0.3, 0.3)
                    blind_val = None
                    if blind_keys and t == "mcq" and R.random() < 0.6:
                        blind_val = R.choice("ABCD")
                    for cid in bcfg:
                        if R.random() < p_miss:
                            continue
                        props = table[cid]
                        f = props["frames"]
                        cell = {"model": m, "item_id": it, "config": cid, "frames": f}
                        if b != "default" or R.random() < 0.5:
                            if b != "":
                                cell["benchmark"] = b
                        if props["budget"] is not None:
                            cell["budget"] = props["budget"]
                        if props["pixels"] is not None or R.random() < 0.3:
                            cell["pixels"] = props["pixels"]
                        if pname != "main" or R.random() < 0.2:
                            cell["protocol"] = pname
                        p_right = min(0.95, max(0.05, skill[m] + diff + 0.08 * math.log2(f + 1)
                                                - 0.3 + R.uniform(-0.25, 0.25)))
                        right = R.random() < p_right
                        if t == "mcq":
                            if R.random() < 0.1:
                                cell["task"] = "mcq"
                                if R.random() < 0.3:
                                    cell["score"] = R.choice([0, 50.5, 100])
                            if right:
                                pred = gold
                            else:
                                pred = R.choice([x for x in "ABCD" if x != gold])
                            r = R.random()
                            if r < 0.03:
                                pred = None
                            elif r < 0.05:
                                pred = R.choice(["", "  "])
                            elif r < 0.15:
                                pred = R.choice([" ", "\t", ""]) + pred.lower() + R.choice([" ", "\n", ""])
                            if pred is not None or R.random() < 0.5:
                                cell["pred"] = pred
                            if R.random() < p_invalid:
                                if R.random() < 0.5:
                                    cell["gold"] = None
                            else:
                                cell["gold"] = gold if R.random() < 0.9 else gold.lower() + " "
                                if R.random() < p_recorded:
                                    cell["correct"] = right if R.random() < 0.85 else (not right)
                                elif R.random() < 0.05:
                                    cell["correct"] = None
                            if f > 0 and conf_mode[m] != "none" and not (
                                    conf_mode[m] == "partial" and R.random() < 0.3):
                                if conf_exact:
                                    k = R.randint(0, 100)
                                    if right:
                                        k = max(k, R.randint(0, 100))
                                    cell["confidence"] = k / 100
                                else:
                                    cell["confidence"] = round(R.random(), 3)
                            elif R.random() < 0.05:
                                cell["confidence"] = None
                        else:
                            mode = open_mode[b]
                            use_score = mode == "score" or (mode == "mixed" and R.random() < 0.5)
                            if R.random() < p_invalid:
                                cell["task"] = "open"
                                if R.random() < 0.5:
                                    cell["gold"] = []
                            elif use_score:
                                if R.random() < 0.5:
                                    cell["task"] = "open"
                                sc = R.choice([R.randint(0, 100), round(R.uniform(0, 100), 2),
                                               R.uniform(0, 100)])
                                cell["score"] = sc
                            else:
                                cell["task"] = "open"
                                g = gold if isinstance(gold, str) else R.choice(gold)
                                if right:
                                    pred = perturb_text(R, g)
                                else:
                                    pred = " ".join(R.choice(WORDS) for _ in range(R.randint(0, 4)))
                                if R.random() < 0.05:
                                    pred = None
                                if pred is not None or R.random() < 0.5:
                                    cell["pred"] = pred
                                cell["gold"] = gold
                        if blind_val is not None and R.random() < 0.7:
                            cell["blind"] = R.choice([blind_val, blind_val.lower(), " " + blind_val])
                        elif R.random() < 0.03:
                            cell["blind"] = R.choice([None, "  "])
                        if R.random() < 0.05:
                            cell["frame_idx"] = list(range(0, f * 3, 3))[:f]
                        if R.random() < 0.05:
                            cell["source_tag"] = "run-a"
                        if R.random() < 0.03:
                            cell["unknown_field"] = {"x": 1}
                        cells.append(cell)
    R.shuffle(cells)
    info = {"models": models, "benches": benches, "protocols": protocols, "inter": inter_name,
            "main_table": main_table}
    return cells, info


def gen_args(R, info, cells, outdir):
    args = []
    models = info["models"]
    main_table = info["main_table"]
    if R.random() < 0.35:
        args += ["--grid", "joint"]
    elif R.random() < 0.1:
        args += ["--grid", "per-model"]
    if R.random() < 0.15:
        sub = R.sample(models, R.randint(1, len(models)))
        if R.random() < 0.2:
            sub.append("ghost-model")
        args += ["--models", ",".join(sub)]
    if R.random() < 0.2:
        cids = sorted(main_table)
        sub = R.sample(cids, min(len(cids), R.randint(1, 4)))
        if R.random() < 0.15:
            sub.append("999f")
        args += ["--configs", ",".join(sub)]
    if R.random() < 0.2:
        args += ["--no-zero-frame"]
    r = R.random()
    if r < 0.1:
        args += ["--reference-pixels", "none"]
    elif r < 0.2:
        pxs = sorted(set(v["pixels"] for v in main_table.values() if v["pixels"]))
        args += ["--reference-pixels", str(R.choice(pxs + [12345]))]
    elif r < 0.25:
        args += ["--reference-pixels", "auto"]
    if R.random() < 0.3:
        args += ["--variant-budget", "zero"]
    elif R.random() < 0.05:
        args += ["--variant-budget", "own"]
    if R.random() < 0.15:
        vis = sorted(c for c, v in main_table.items() if v["frames"] > 0)
        st = R.sample(vis, min(len(vis), R.randint(1, 4)))
        if R.random() < 0.2:
            st.append(R.choice(["textonly", "nope"]))
        args += ["--cascade-stages", ",".join(st)]
    if R.random() < 0.3:
        args += ["--delta", R.choice(["0", "5", "12.5", "33.3", "0.5"])]
    ncells = len(cells)
    if ncells < 150 and R.random() < 0.3:
        pass  # default B = 1000
    else:
        args += ["--boot", str(R.choice([0, 1, 50, 200, 200]))]
    r = R.random()
    if r < 0.3:
        args += ["--seed", str(R.randrange(0, 1 << 64))]
    elif r < 0.5:
        args += ["--seed", str(R.randrange(0, 100))]
    protos = [p for p, _ in info["protocols"]]
    if "cached" in protos and R.random() < 0.15:
        args += ["--primary", "cached"]
    if info["inter"] == "interv":
        if R.random() < 0.7:
            args += ["--intervention-protocol", "interv"]
    elif R.random() < 0.05:
        args += ["--intervention-protocol", "intervention"]
    if R.random() < 0.15:
        path = os.path.abspath(os.path.join(outdir, "annotations.jsonl"))
        write_annotations(R, info, cells, path)
        args += ["--annotations", path]
    return args


def write_annotations(R, info, cells, path):
    anns = R.sample(["alice", "bob", "carol", "dave", "\u00e9ve"], R.randint(1, 4))
    units = []
    seen = set()
    for c in cells:
        key = (c["model"], c.get("benchmark"), c["item_id"])
        if key not in seen and R.random() < 0.05:
            seen.add(key)
            units.append(key)
    units = units[:30] or [("M", None, "x1")]
    lines = []
    used = set()
    for (m, b, it) in units:
        keep_model = R.random() < 0.9
        ukey = (m if keep_model else "", b if b is not None else "default", it)
        if ukey in used:
            keep_model = True
            ukey = (m, b if b is not None else "default", it)
        used.add(ukey)
        for a in anns:
            if R.random() < 0.2:
                continue
            tags = sorted(R.sample(TAGS, R.randint(0, 3)))
            prim = R.choice(tags + [None]) if R.random() < 0.8 else R.choice(TAGS)
            rec = {"item_id": it, "annotator": a, "tags": tags, "primary": prim}
            if keep_model:
                rec["model"] = m
            if b is not None:
                rec["benchmark"] = b
            lines.append(rec)
    R.shuffle(lines)
    with open(path, "w", encoding="utf-8") as fh:
        for rec in lines:
            fh.write(json.dumps(rec, ensure_ascii=R.random() < 0.5) + "\n")


# ---------------------------------------------------------------------------------------------
# invalid inputs (exactly one rule of docs/measures.md §1.5 / 1.7 violated)

def corrupt_jsonl(R, cells):
    """Return (cells, extra_raw_lines) with one violation."""
    kinds = ["malformed", "array", "missing_model", "empty_item", "neg_frames", "frac_frames",
             "str_frames", "bad_pixels", "confidence", "score", "correct", "duplicate",
             "cfg_frames", "cfg_budget", "cfg_pixels", "mixed_task", "blind_conflict",
             "model_type", "nan"]
    kind = R.choice(kinds)
    i = R.randrange(len(cells))
    c = cells[i]
    raw = []
    if kind == "malformed":
        raw.append('{"model": "M", "item_id": "q1", ')
    elif kind == "array":
        raw.append("[1, 2, 3]")
    elif kind == "missing_model":
        del c["model"]
    elif kind == "empty_item":
        c["item_id"] = ""
    elif kind == "neg_frames":
        c["frames"] = -1
    elif kind == "frac_frames":
        c["frames"] = c["frames"] + 0.5
    elif kind == "str_frames":
        c["frames"] = str(c["frames"])
    elif kind == "bad_pixels":
        c["pixels"] = R.choice([-5, 1.5, "151200"])
    elif kind == "confidence":
        c["confidence"] = R.choice([1.2, -0.01, 7])
    elif kind == "score":
        c["score"] = R.choice([100.5, -3, 1000])
    elif kind == "correct":
        c["correct"] = R.choice(["true", 1, 0, "yes"])
    elif kind == "duplicate":
        d = dict(c)
        d["pred"] = "Z"
        cells.insert(R.randrange(len(cells) + 1), d)
    elif kind in ("cfg_frames", "cfg_budget", "cfg_pixels"):
        d = dict(c)
        d["item_id"] = c["item_id"] + "-extra-cell"
        if kind == "cfg_frames":
            d["frames"] = c["frames"] + 1
        elif kind == "cfg_budget":
            d["budget"] = c.get("budget", c["frames"]) + 1
        else:
            d["pixels"] = (c.get("pixels") or 0) + 1000
        cells.insert(R.randrange(len(cells) + 1), d)
    elif kind == "mixed_task":
        d = dict(c)
        d["item_id"] = c["item_id"] + "-extra-cell"
        cur = d.get("task", "open" if isinstance(d.get("score"), (int, float)) else "mcq")
        d["task"] = "open" if cur == "mcq" else "mcq"
        cells.insert(R.randrange(len(cells) + 1), d)
    elif kind == "blind_conflict":
        d = dict(c)
        d["config"] = c["config"] + "-extra"
        c["blind"] = "A"
        d["blind"] = "B"
        d.pop("confidence", None)
        cells.insert(R.randrange(len(cells) + 1), d)
    elif kind == "model_type":
        c["model"] = 123
    elif kind == "nan":
        raw.append('{"model": "M", "item_id": "nan-item", "config": "nan-cfg", "frames": 8, '
                   '"pred": "A", "gold": "A", "confidence": NaN}')
    return cells, raw, kind


CSV_COLS = ["sample_id", "model", "split", "config", "frame_count", "pixel_count",
            "predicted_option", "ground_truth_option", "correct", "source_tag", "protocol_note"]


def csv_field(R, v):
    if v is None:
        v = ""
    if any(ch in v for ch in ',"\n') or (v and R.random() < 0.1 and v.strip() == v):
        return '"' + v.replace('"', '""') + '"'
    if R.random() < 0.1:
        return R.choice([" ", "  ", "\t"]) + v + R.choice([" ", ""])
    return v


def write_csv(R, cells, path, corrupt):
    cols = list(CSV_COLS)
    if R.random() < 0.2:
        cols.remove("correct")
    if R.random() < 0.15:
        cols.remove("pixel_count")
    if all(c.get("benchmark", "") == "" for c in cells) and R.random() < 0.5:
        cols.remove("split")
    if R.random() < 0.2:
        cols.append("extra_col")
    if R.random() < 0.3:
        R.shuffle(cols)
    rows = []
    for c in cells:
        cor = c.get("correct")
        if "correct" not in cols:
            cor = None
        row = {
            "sample_id": c["item_id"],
            "model": c["model"],
            "split": c.get("benchmark", ""),
            "config": c["config"],
            "frame_count": str(c["frames"]),
            "pixel_count": "" if c.get("pixels") is None else str(c["pixels"]),
            "predicted_option": (c.get("pred") or "").strip(),
            "ground_truth_option": (c.get("gold") or "").strip() if isinstance(c.get("gold"), str) else "",
            "correct": "" if cor is None else R.choice(
                ["1", "true", "True", "TRUE"] if cor else ["0", "false", "False", "FALSE"]),
            "source_tag": R.choice(["run-a", "", "run, \"b\""]),
            "protocol_note": R.choice(["", "", "fallback input size 448"]),
            "extra_col": "zzz",
        }
        if "split" not in cols:
            row["split"] = ""
        rows.append(row)
    kind = None
    if corrupt:
        kind = R.choice(["missing_col", "field_count", "frame_count", "pixel_count", "correct",
                         "duplicate", "cfg_pixels", "cfg_frames", "empty_id"])
        i = R.randrange(len(rows))
        r = rows[i]
        if kind == "missing_col":
            cols.remove(R.choice(["sample_id", "model", "config", "frame_count"]))
        elif kind == "frame_count":
            r["frame_count"] = R.choice(["1.5", "-1", "x", "", "+4"])
        elif kind == "pixel_count":
            if "pixel_count" not in cols:
                cols.append("pixel_count")
            r["pixel_count"] = R.choice(["abc", "1.5", "-3"])
        elif kind == "correct":
            if "correct" not in cols:
                cols.append("correct")
            r["correct"] = R.choice(["yes", "2", "y"])
        elif kind == "duplicate":
            rows.insert(R.randrange(len(rows) + 1), dict(r))
        elif kind == "cfg_pixels":
            d = dict(r)
            d["sample_id"] = r["sample_id"] + "-extra"
            if "pixel_count" not in cols:
                cols.append("pixel_count")
            d["pixel_count"] = str(int(r["pixel_count"] or "0") + 1000)
            rows.insert(R.randrange(len(rows) + 1), d)
        elif kind == "cfg_frames":
            d = dict(r)
            d["sample_id"] = r["sample_id"] + "-extra"
            d["frame_count"] = str(int(r["frame_count"]) + 1)
            rows.insert(R.randrange(len(rows) + 1), d)
        elif kind == "empty_id":
            r["sample_id"] = ""
    eol = "\r\n" if R.random() < 0.3 else "\n"
    out = []
    if R.random() < 0.2:
        out.append("\ufeff")
    out.append(",".join(cols) + eol)
    for k, r in enumerate(rows):
        fields = [csv_field(R, r[c]) for c in cols]
        if corrupt and kind == "field_count" and k == len(rows) // 2:
            fields.append("surplus")
        out.append(",".join(fields) + eol)
        if R.random() < 0.03:
            out.append(R.choice(["", "   "]) + eol)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("".join(out))
    return kind


def add_replicates(R, cells):
    """Section 16 of docs/measures.md: for some seeds, replicates of some cells (answers
    flipped at times, a `blind` that must be ignored, orphans of a model with no cell),
    clusters on the items, and the options --nuisances, --alpha and --cluster-bootstrap.
    Returns the cells and the options."""
    if R.random() < 0.3:
        return cells, []
    nuisance = {"r1": "rerun", "p1": "phase", "p2": "phase", "o1": "order"}
    names = R.sample(sorted(nuisance), R.randint(1, 4))
    rate = R.choice([0.3, 0.7, 1.0])
    clusters = R.random() < 0.6
    out = []
    for c in cells:
        c = dict(c)
        if clusters and "item_id" in c:
            c["cluster"] = "v%d" % (sum(map(ord, str(c.get("item_id")))) % 3)
        out.append(c)
    canonical = list(out)
    for c in canonical:
        for name in names:
            if R.random() >= rate:
                continue
            r = dict(c)
            r["replicate"] = name
            r["nuisance"] = nuisance[name]
            if R.random() < 0.3:
                if isinstance(r.get("correct"), bool):
                    r["correct"] = not r["correct"]
                else:
                    r["pred"] = R.choice(["A", "B", "C", None])
            if R.random() < 0.1:
                r["blind"] = "Z"
            if R.random() < 0.05:
                r["model"] = "ghost-of-%s-%s" % (r.get("model"), name)
            out.append(r)
    R.shuffle(out)
    args = []
    if R.random() < 0.4:
        args.append("--cluster-bootstrap")
    if R.random() < 0.3:
        args += ["--alpha", R.choice(["0.2", "0.5", "1"])]
    if R.random() < 0.3:
        present = sorted(set(nuisance[n] for n in names))
        args += ["--nuisances", ",".join(R.sample(present, R.randint(1, len(present))))]
    return out, args


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    seed = int(argv[0])
    outdir = argv[1]
    os.makedirs(outdir, exist_ok=True)
    for name in ("cells.jsonl", "cells.csv", "args.json", "annotations.jsonl", "expect_reject"):
        p = os.path.join(outdir, name)
        if os.path.exists(p):
            os.remove(p)
    R = random.Random(seed)
    csv_mode = R.random() < 0.15
    corrupt = R.random() < 0.12
    cells, info = gen_case(R, csv_mode)
    if not cells:
        cells.append({"model": "M", "item_id": "q1", "config": "8f", "frames": 8, "pred": "A",
                      "gold": "A"})
    args = gen_args(R, info, cells, outdir)
    if not csv_mode:
        # Their own stream, so that the rest of a seed's case is what it was before.
        cells, more = add_replicates(random.Random(seed * 7919 + 16), cells)
        args += more
    if csv_mode:
        write_csv(R, cells, os.path.join(outdir, "cells.csv"), corrupt)
    else:
        raw = []
        if corrupt:
            cells, raw, _ = corrupt_jsonl(R, cells)
        lines = [json.dumps(c, ensure_ascii=R.random() < 0.5) for c in cells]
        for r in raw:
            lines.insert(R.randrange(len(lines) + 1), r)
        if R.random() < 0.1:
            lines.insert(R.randrange(len(lines) + 1), "   ")
        with open(os.path.join(outdir, "cells.jsonl"), "w", encoding="utf-8", newline="") as fh:
            fh.write("\n".join(lines) + "\n")
    if corrupt:
        open(os.path.join(outdir, "expect_reject"), "w").close()
    with open(os.path.join(outdir, "args.json"), "w", encoding="utf-8") as fh:
        json.dump(args, fh, ensure_ascii=False)
        fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
