#!/usr/bin/env python3
"""Independent reference implementation of "traj-metrics/2.1" (docs/measures.md), standard
library only.

Reads a cells JSONL file (docs/measures.md §1.1) or a per-item CSV (docs/measures.md §1.7)
and prints the report JSON of docs/measures.md §12 on stdout.  Written only from the
specification (restated in docs/measures.md and docs/formats.md) and the conformance files;
it is meant to cross-check another implementation, so it follows the text as literally as
possible.
Every place where the text admits more than one reading is marked `# AMBIGUITY:`.
"""
import argparse
import json
import math
import re
import sys
from collections import Counter
from fractions import Fraction

SPEC_VERSION = "traj-metrics/2.1"
M64 = (1 << 64) - 1


class InputError(Exception):
    """Input violating docs/measures.md §1.5 / 1.7 (or a malformed annotations file): reject the
    whole input."""


# --------------------------------------------------------------------------------------------
# small helpers

# Unicode White_Space property (not Python's str.isspace, which also contains U+001C..U+001F).
_WS = set("\u0009\u000a\u000b\u000c\u000d\u0020\u0085\u00a0\u1680"
          "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
          "\u2028\u2029\u202f\u205f\u3000")


def ustrip(s):
    i, j = 0, len(s)
    while i < j and s[i] in _WS:
        i += 1
    while j > i and s[j - 1] in _WS:
        j -= 1
    return s[i:j]


def norm(s):
    """docs/measures.md §1.3: strip Unicode whitespace, upper-case; empty -> None."""
    if s is None:
        return None
    t = ustrip(s).upper()
    return t if t != "" else None


def seqsum(values):
    """Left-to-right binary64 summation (Python >= 3.12 sum() is compensated; avoid it)."""
    acc = 0.0
    for v in values:
        acc += v
    return acc


def mcnemar_p(b, c):
    """Section 16.3: exact two-sided McNemar p, summed over exact integers."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, x) for x in range(min(b, c) + 1))
    return min(1.0, float(Fraction(2 * tail, 2 ** n)))


def bh_q(family):
    """Section 16.3: Benjamini-Hochberg q of (p, model, edge) members, in the given order;
    ranked by (p, model, edge), q_(r) = min over s >= r of min(1, p_(s) * m / s)."""
    order = sorted(range(len(family)), key=lambda i: family[i])
    m = len(family)
    q = [None] * m
    running = math.inf
    for r in range(m - 1, -1, -1):
        i = order[r]
        running = min(running, min(1.0, family[i][0] * m / (r + 1)))
        q[i] = running
    return q


def rate(count, den):
    """docs/measures.md §0: 100 * count / den, null for a zero denominator."""
    if den == 0:
        return None
    return 100 * count / den


def is_num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def is_int_value(x):
    # AMBIGUITY: "integer" for `frames` / `pixels`: a JSON number with an integral value
    # (JSON Schema semantics) is accepted, so 8.0 counts as 8; 8.5 is rejected.
    if isinstance(x, bool):
        return False
    if isinstance(x, int):
        return True
    return isinstance(x, float) and math.isfinite(x) and x.is_integer()


# --------------------------------------------------------------------------------------------
# Token-F1 (docs/measures.md §7)

_PUNCT = set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~')
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def f1_tokens(s):
    s = s.lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return s.split()


def f1_pair(pred, gold):
    p = f1_tokens(pred)
    g = f1_tokens(gold)
    if not p or not g:
        return 1.0 if (not p and not g) else 0.0
    cp = Counter(p)
    cg = Counter(g)
    common = 0
    for t, c in cp.items():
        common += min(c, cg.get(t, 0))
    if common == 0:
        return 0.0
    P = common / len(p)
    R = common / len(g)
    return (2 * P * R) / (P + R)


def token_f1_score(pred, gold):
    if pred is None:
        pred = ""
    golds = [gold] if isinstance(gold, str) else list(gold)
    return 100 * max(f1_pair(pred, g) for g in golds)


# --------------------------------------------------------------------------------------------
# SplitMix64 and percentiles (docs/measures.md §9)

class SplitMix64:
    __slots__ = ("state",)

    def __init__(self, seed):
        self.state = seed & M64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & M64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)


def draw_units(state, n, groups):
    """One resample: n items (groups None), or len(groups) clusters drawn as next() mod G
    and every item of each (section 16.6); returns (item indices, new state)."""
    if groups is None:
        return draw_indices(state, n)
    picks, state = draw_indices(state, len(groups))
    return [i for g in picks for i in groups[g]], state


def cluster_groups(ctx, items):
    """Section 16.6: the grid items (indices) by cluster, clusters in order of their first
    item; an item without a cluster is one of its own. None without the cluster bootstrap."""
    if not ctx.params.cluster_bootstrap:
        return None
    groups = []
    index = {}
    for i, it in enumerate(items):
        c = ctx.cluster_of.get(it)
        if c is None:
            groups.append([i])
        elif c in index:
            groups[index[c]].append(i)
        else:
            index[c] = len(groups)
            groups.append([i])
    return groups


def draw_indices(state, n):
    """n draws of next() mod n from a SplitMix64 state; returns (indices, new state)."""
    out = []
    append = out.append
    for _ in range(n):
        state = (state + 0x9E3779B97F4A7C15) & M64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        append((z ^ (z >> 31)) % n)
    return out, state


def percentile7(sorted_vals, p):
    B = len(sorted_vals)
    h = (B - 1) * p
    f = math.floor(h)
    if f + 1 >= B:
        return sorted_vals[B - 1]
    return sorted_vals[f] + (h - f) * (sorted_vals[f + 1] - sorted_vals[f])


def interval(vals):
    xs = sorted(vals)
    return {"lo": percentile7(xs, 0.025), "hi": percentile7(xs, 0.975)}


# --------------------------------------------------------------------------------------------
# Input (docs/measures.md §1)

class Cell:
    __slots__ = ("model", "item_id", "benchmark", "config", "frames", "budget", "pixels",
                 "protocol", "task", "pred", "gold", "correct", "score", "confidence", "blind",
                 "line", "valid", "y", "s", "npred", "replicate", "nuisance", "cluster")


def _reject(where, msg):
    raise InputError("%s: %s" % (where, msg))


def _opt_str(obj, key, where):
    v = obj.get(key)
    if v is not None and not isinstance(v, str):
        # AMBIGUITY: docs/measures.md §1.5 lists only ill-typed *required* fields; an ill-typed
        # optional string field (benchmark/protocol/pred/blind) is rejected here as well.
        _reject(where, "field '%s' must be a string or null" % key)
    return v


def _bad_constant(name):
    raise ValueError("invalid JSON constant " + name)


def cell_from_json(obj, where):
    if not isinstance(obj, dict):
        _reject(where, "line is not a JSON object")
    c = Cell()
    c.line = where
    for key in ("model", "item_id", "config"):
        v = obj.get(key)
        if not isinstance(v, str) or v == "":
            _reject(where, "required field '%s' missing or not a non-empty string" % key)
    c.model = obj["model"]
    c.item_id = obj["item_id"]
    c.config = obj["config"]
    if "frames" not in obj:
        _reject(where, "required field 'frames' missing")
    fr = obj["frames"]
    if not is_int_value(fr) or fr < 0:
        _reject(where, "field 'frames' must be an integer >= 0")
    c.frames = int(fr)
    # AMBIGUITY: an explicit null for the optional non-nullable fields benchmark / budget /
    # protocol / task is treated as absent (their default applies).
    b = _opt_str(obj, "benchmark", where)
    c.benchmark = "default" if b is None else b
    bud = obj.get("budget")
    if bud is None:
        c.budget = c.frames
    else:
        if not is_num(bud):
            _reject(where, "field 'budget' must be a number")
        c.budget = bud
    px = obj.get("pixels")
    if px is None:
        c.pixels = None
    else:
        if not is_int_value(px) or px < 0:
            _reject(where, "field 'pixels' must be an integer >= 0 or null")
        c.pixels = int(px)
    p = _opt_str(obj, "protocol", where)
    c.protocol = "main" if p is None else p
    c.pred = _opt_str(obj, "pred", where)
    c.blind = _opt_str(obj, "blind", where)
    g = obj.get("gold")
    if g is not None and not isinstance(g, str):
        if not (isinstance(g, list) and all(isinstance(x, str) for x in g)):
            # AMBIGUITY: a gold that is neither a string nor a list of strings is rejected as
            # ill-typed (an empty list, or a list in an MCQ cell, only makes the cell invalid).
            _reject(where, "field 'gold' must be a string, a list of strings or null")
    c.gold = g
    cor = obj.get("correct")
    if cor is not None and not isinstance(cor, bool):
        _reject(where, "field 'correct' must be a boolean or null")
    c.correct = cor
    sc = obj.get("score")
    if sc is not None:
        if not is_num(sc):
            _reject(where, "field 'score' must be a number or null")
        if sc < 0 or sc > 100:
            _reject(where, "field 'score' outside [0,100]")
    c.score = sc
    cf = obj.get("confidence")
    if cf is not None:
        if not is_num(cf):
            _reject(where, "field 'confidence' must be a number or null")
        if cf < 0 or cf > 1:
            _reject(where, "field 'confidence' outside [0,1]")
    c.confidence = cf
    # `frame_idx`, `source_tag`, `protocol_note` are informational and not validated.
    t = obj.get("task")
    if t is None:
        c.task = "open" if sc is not None else "mcq"
    elif t in ("mcq", "open"):
        c.task = t
    else:
        _reject(where, "field 'task' must be \"mcq\" or \"open\"")
    # section 16.1: null and "" are absent
    for key in ("replicate", "nuisance", "cluster"):
        v = _opt_str(obj, key, where)
        setattr(c, key, v if v else None)
    if (c.replicate is None) != (c.nuisance is None):
        _reject(where, "field 'nuisance' must be given exactly when 'replicate' is")
    o = obj.get("order")
    if o is not None:
        ok = isinstance(o, list) and all(is_int_value(x) and x >= 0 for x in o)
        if not ok or sorted(int(x) for x in o) != list(range(len(o))):
            _reject(where, "field 'order' must hold each option index 0..m-1 once")
    return c


def read_jsonl(path):
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError("%s: not UTF-8 (%s)" % (path, e))
    except OSError as e:
        raise InputError("%s: %s" % (path, e))
    cells = []
    records = 0
    # split on LF only: str.splitlines() would also split on U+2028 etc. inside strings
    for lineno, line in enumerate(text.split("\n"), 1):
        if line.strip() == "":
            continue
        records += 1
        where = "%s:%d" % (path, lineno)
        try:
            obj = json.loads(line, parse_constant=_bad_constant)
        except ValueError as e:
            raise InputError("%s: malformed JSON (%s)" % (where, e))
        cells.append(cell_from_json(obj, where))
    return cells, records


_DIGITS = re.compile(r"[0-9]+\Z")


def parse_csv_records(text, path):
    """RFC 4180 with whitespace around fields ignored; returns [(line, [fields])], blanks skipped."""
    rows = []
    i = 0
    n = len(text)
    line = 1
    while i < n:
        start_line = line
        fields = []
        quoted_any = False
        while True:
            j = i
            while j < n and text[j] in " \t\r":
                j += 1
            if j < n and text[j] == '"':
                quoted_any = True
                j += 1
                buf = []
                while True:
                    if j >= n:
                        raise InputError("%s:%d: unterminated quoted field" % (path, start_line))
                    ch = text[j]
                    if ch == '"':
                        if j + 1 < n and text[j + 1] == '"':
                            buf.append('"')
                            j += 2
                            continue
                        j += 1
                        break
                    if ch == "\n":
                        line += 1
                    buf.append(ch)
                    j += 1
                while j < n and text[j] in " \t\r":
                    j += 1
                if j < n and text[j] not in ",\n":
                    raise InputError("%s:%d: characters after a closing quote" % (path, line))
                # AMBIGUITY: "whitespace around every field is ignored" is also applied to the
                # content of a quoted field.
                value = "".join(buf).strip()
            else:
                k = j
                while k < n and text[k] not in ",\n":
                    if text[k] == '"':
                        raise InputError("%s:%d: quote inside an unquoted field" % (path, line))
                    k += 1
                value = text[j:k].strip()
                j = k
            fields.append(value)
            if j < n and text[j] == ",":
                i = j + 1
                continue
            if j < n and text[j] == "\n":
                j += 1
            i = j
            line += 1
            break
        if len(fields) == 1 and fields[0] == "" and not quoted_any:
            continue  # blank line
        rows.append((start_line, fields))
    return rows


def read_csv(path):
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError("%s: not UTF-8 (%s)" % (path, e))
    except OSError as e:
        raise InputError("%s: %s" % (path, e))
    if text.startswith("\ufeff"):
        text = text[1:]
    rows = parse_csv_records(text, path)
    if not rows:
        raise InputError("%s: no header row" % path)
    hline, header = rows[0]
    col = {}
    for idx, name in enumerate(header):
        if name in col:
            # AMBIGUITY: a column named twice in the header is rejected.
            raise InputError("%s:%d: duplicate column '%s'" % (path, hline, name))
        col[name] = idx
    for req in ("sample_id", "model", "config", "frame_count"):
        if req not in col:
            raise InputError("%s:%d: missing required column '%s'" % (path, hline, req))
    cells = []
    records = 0
    for lineno, fields in rows[1:]:
        records += 1
        where = "%s:%d" % (path, lineno)
        if len(fields) != len(header):
            _reject(where, "row has %d fields, header has %d" % (len(fields), len(header)))

        def get(name):
            k = col.get(name)
            return fields[k] if k is not None else ""

        c = Cell()
        c.line = where
        # section 16.1: the optional replicate, nuisance and cluster columns
        for name in ("replicate", "nuisance", "cluster"):
            setattr(c, name, get(name).strip() or None)
        if (c.replicate is None) != (c.nuisance is None):
            _reject(where, "column 'nuisance' must be given exactly when 'replicate' is")
        for name in ("sample_id", "model", "config"):
            if get(name) == "":
                _reject(where, "required column '%s' is empty" % name)
        c.item_id = get("sample_id")
        c.model = get("model")
        c.config = get("config")
        sp = get("split")
        c.benchmark = sp if sp != "" else "default"
        fc = get("frame_count")
        if not _DIGITS.match(fc):
            _reject(where, "frame_count '%s' is not decimal digits" % fc)
        c.frames = int(fc)
        c.budget = c.frames
        pc = get("pixel_count")
        if pc == "":
            c.pixels = None
        elif _DIGITS.match(pc):
            c.pixels = int(pc)
        else:
            _reject(where, "pixel_count '%s' is not decimal digits" % pc)
        po = get("predicted_option")
        c.pred = po if po != "" else None
        go = get("ground_truth_option")
        c.gold = go if go != "" else None
        co = get("correct").lower()
        if co in ("1", "true"):
            c.correct = True
        elif co in ("0", "false"):
            c.correct = False
        elif co == "":
            c.correct = None
        else:
            _reject(where, "malformed correct value '%s'" % get("correct"))
        c.task = "mcq"
        c.protocol = "main"
        c.score = None
        c.confidence = None
        c.blind = None
        cells.append(c)
    return cells, records


def evaluate(c):
    """docs/measures.md section 1.3: a cell's value and validity."""
    c.npred = norm(c.pred)
    c.y = None
    c.s = None
    if c.task == "mcq":
        if c.correct is not None:
            c.y = 1 if c.correct else 0
            c.valid = True
        elif isinstance(c.gold, str):
            ng = norm(c.gold)
            c.y = 1 if (c.npred is not None and c.npred == ng) else 0
            c.valid = True
        else:
            c.valid = False
    else:
        if c.score is not None:
            c.s = float(c.score)
            c.valid = True
        elif isinstance(c.gold, str) or (isinstance(c.gold, list) and len(c.gold) > 0):
            c.s = token_f1_score(c.pred, c.gold)
            c.valid = True
        else:
            c.valid = False


def check_replicates(ctx, cells, reps, cfgprops, bench_task):
    """Section 16.1: the rules that span replicates, their values, orphans, the nuisance
    selection and the clusters; fills ctx.reps, ctx.selected, ctx.nuisance_names,
    ctx.cluster_of and ctx.orphaned."""
    P = ctx.params
    keys = set()
    props = {}
    tasks = {}
    nuis = {}
    for r in reps:
        key = (r.protocol, r.model, r.benchmark, r.item_id, r.config, r.replicate)
        if key in keys:
            _reject(r.line, "duplicate replicate cell %r" % (key,))
        keys.add(key)
        pk = (r.protocol, r.config)
        want = cfgprops.get(pk, props.setdefault(pk, (r.frames, r.budget, r.pixels)))
        if want != (r.frames, r.budget, r.pixels):
            _reject(r.line, "configuration %r: differing frames, budget or pixels" % (pk,))
        t = bench_task.get(r.benchmark, tasks.setdefault(r.benchmark, r.task))
        if t != r.task:
            _reject(r.line, "benchmark %r has mixed tasks" % r.benchmark)
        n = nuis.setdefault((r.protocol, r.config, r.replicate), r.nuisance)
        if n != r.nuisance:
            _reject(r.line, "replicate %r of %r has two nuisances" % (r.replicate, r.config))
    cluster_of = {}
    for c in cells + reps:
        if c.cluster is not None:
            it = (c.benchmark, c.item_id)
            if cluster_of.setdefault(it, c.cluster) != c.cluster:
                _reject(c.line, "item %r has two clusters" % (it,))
    ctx.cluster_of = cluster_of
    canon = {(c.protocol, c.model, c.benchmark, c.item_id, c.config): c for c in cells}
    ctx.reps = {}
    ctx.orphaned = 0
    for r in reps:
        evaluate(r)
        key = (r.protocol, r.model, r.benchmark, r.item_id, r.config)
        c = canon.get(key)
        if c is None or not c.valid:
            ctx.orphaned += 1
        else:
            ctx.reps.setdefault(key, []).append(r)
    if P.nuisances is None:
        names = sorted(set(r.nuisance for r in reps))
    else:
        names = sorted(set(P.nuisances))
    ctx.nuisance_names = names
    ctx.selected = set(names)


def fisher_greater(b, n, neg, pairs):
    """Section 16.3: Fisher's exact one-sided p over exact integers; None without pairs."""
    if pairs == 0:
        return None
    k = b + neg
    if b <= max(0, k - pairs):
        return 1.0
    num = sum(math.comb(n, x) * math.comb(pairs, k - x) for x in range(b, min(n, k) + 1))
    return float(Fraction(num, math.comb(n + pairs, k)))


def floor_json(f):
    pairs, neg, pos = f
    return {"pairs": pairs, "disagree": neg + pos, "neg": neg, "pos": pos,
            "disagreement_rate": rate(neg + pos, pairs), "negative_flip_floor": rate(neg, pairs)}


def replicates_block(ctx, g, m, rows, Y, hp_i, churn, per_item):
    """Sections 16.2-16.4 for one model's grid; None without a replicate pair. Sets the
    per-item min_outcomes and stable_harmful."""
    if not ctx.reps:
        return None
    P = ctx.params
    cfgs = g.configs
    K = len(cfgs)
    n = len(g.items)
    ti = g.top_idx
    lower = g.lower
    lower_to_top = [a for (a, b) in lower if b == ti]
    pc = [[0, 0, 0] for _ in range(K)]
    bn = {}
    mins = []
    stable = []
    st = {"replicated_items": 0, "harmful_replicated": 0, "stable_harmful_replicated": 0,
          "stable_harmful_items": 0, "stable_terminal_items": 0}
    for i, it in enumerate(g.items):
        sr = [False] * K
        sw = [False] * K
        mo = None
        for k in range(K):
            cell = rows[i][k]
            outs = [Y[i][k]]
            for r in ctx.reps.get((cell.protocol, m, it[0], it[1], cfgs[k]), []):
                if not r.valid or r.nuisance not in ctx.selected:
                    continue
                neg = 1 if (Y[i][k] == 1 and r.y == 0) else 0
                pos = 1 if (Y[i][k] == 0 and r.y == 1) else 0
                for f in (pc[k], bn.setdefault(r.nuisance, [0, 0, 0])):
                    f[0] += 1
                    f[1] += neg
                    f[2] += pos
                outs.append(r.y)
            sr[k] = len(outs) >= 2 and all(o == 1 for o in outs)
            sw[k] = len(outs) >= 2 and all(o == 0 for o in outs)
            mo = len(outs) if mo is None else min(mo, len(outs))
        harm = any(sr[a] and sw[b] for a, b in lower)
        mins.append(mo)
        stable.append(harm)
        st["stable_harmful_items"] += harm
        st["stable_terminal_items"] += sw[ti] and any(sr[a] for a in lower_to_top)
        if mo >= 2:
            st["replicated_items"] += 1
            if hp_i[i] > 0:
                st["harmful_replicated"] += 1
                st["stable_harmful_replicated"] += harm
    total = [sum(f[j] for f in pc) for j in range(3)]
    if total[0] == 0:
        return None
    for d, mo, h in zip(per_item, mins, stable):
        d["min_outcomes"] = mo
        d["stable_harmful"] = h
    edges = []
    for j, c in enumerate(churn):
        a, b = j, j + 1
        pairs = pc[a][0] + pc[b][0]
        neg = pc[a][1] + pc[b][1]
        bad = c["correct_to_wrong"]
        obs = 100 * bad / n
        fl = rate(neg, pairs)
        edges.append({"from": c["from"], "to": c["to"], "n": n, "correct_to_wrong": bad,
                      "wrong_to_correct": c["wrong_to_correct"], "observed_nfr": obs,
                      "floor_nfr": fl, "excess_nfr": None if fl is None else obs - fl,
                      "excess_p": fisher_greater(bad, n, neg, pairs), "excess_q": None,
                      "beyond_noise": False})
    st = {
        "replicated_items": st["replicated_items"],
        "harmful_replicated": st["harmful_replicated"],
        "stable_harmful_replicated": st["stable_harmful_replicated"],
        "lottery_rate": rate(st["harmful_replicated"] - st["stable_harmful_replicated"],
                             st["harmful_replicated"]),
        "stable_harmful_items": st["stable_harmful_items"],
        "stable_harmful_rate": rate(st["stable_harmful_items"], n),
        "stable_terminal_items": st["stable_terminal_items"],
    }
    return {"nuisances": ctx.nuisance_names, "alpha": P.alpha,
            "floor": {"all": floor_json(total),
                      "by_nuisance": {k: floor_json(bn[k]) for k in sorted(bn)},
                      "per_config": [floor_json(f) for f in pc]},
            "edges": edges, "stable": st}


def validate_and_evaluate(cells):
    """docs/measures.md §1.2-1.5: global checks, cell values, blind answers."""
    keys = set()
    cfgprops = {}
    bench_task = {}
    blind_field = {}
    for c in cells:
        key = (c.protocol, c.model, c.benchmark, c.item_id, c.config)
        if key in keys:
            _reject(c.line, "duplicate cell key %r" % (key,))
        keys.add(key)
        pk = (c.protocol, c.config)
        props = (c.frames, c.budget, c.pixels)
        old = cfgprops.get(pk)
        if old is None:
            cfgprops[pk] = props
        else:
            if old[0] != props[0]:
                _reject(c.line, "configuration %r: differing frames" % (pk,))
            if old[1] != props[1]:
                _reject(c.line, "configuration %r: differing budget" % (pk,))
            if old[2] != props[2]:
                _reject(c.line, "configuration %r: differing pixels" % (pk,))
        t = bench_task.get(c.benchmark)
        if t is None:
            bench_task[c.benchmark] = c.task
        elif t != c.task:
            _reject(c.line, "benchmark %r has mixed tasks" % c.benchmark)
        if c.blind is not None:
            nb = norm(c.blind)
            if nb is not None:
                bk = (c.protocol, c.model, c.benchmark, c.item_id)
                # AMBIGUITY: conflicting `blind` values reject the input even when a zero-frame
                # cell of the key would take precedence over them (1.4 rule 2 vs 1.5).
                ob = blind_field.get(bk)
                if ob is None:
                    blind_field[bk] = nb
                elif ob != nb:
                    _reject(c.line, "conflicting blind values for %r" % (bk,))
    # values
    for c in cells:
        evaluate(c)
    # blind answers
    zero_pred = {}
    for c in cells:
        if c.frames == 0 and c.npred is not None:
            bk = (c.protocol, c.model, c.benchmark, c.item_id)
            cur = zero_pred.get(bk)
            if cur is None or c.config < cur[0]:
                zero_pred[bk] = (c.config, c.npred)
    allkeys = set((c.protocol, c.model, c.benchmark, c.item_id) for c in cells)
    blind = {}
    for bk in allkeys:
        if bk in zero_pred:
            blind[bk] = zero_pred[bk][1]
        elif bk in blind_field:
            blind[bk] = blind_field[bk]
    return cfgprops, bench_task, blind


# --------------------------------------------------------------------------------------------
# Grids (docs/measures.md §2)

class Grid:
    pass


def make_grid(models, cfg_ids, props, params, n_cand, items, dropped):
    """props: config id -> (frames, budget, pixels) of the analysis protocol."""
    g = Grid()
    g.models = list(models)
    visual = [c for c in cfg_ids if props[c][0] > 0]
    rp = params.reference_pixels
    if rp == "auto":
        cnt = Counter(props[c][2] for c in visual if props[c][2] is not None)
        if cnt:
            best = max(cnt.values())
            pref = min(v for v, k in cnt.items() if k == best)
        else:
            pref = None
    elif rp == "none":
        pref = None
    else:
        pref = rp
    if pref is not None and not any(props[c][2] == pref for c in visual):
        pref = None
    variants = []
    ladder = []
    for c in cfg_ids:
        if pref is not None and props[c][0] > 0 and props[c][2] is not None and props[c][2] != pref:
            variants.append(c)
        else:
            ladder.append(c)

    def cmp_budget(c):
        if c in variant_set and params.variant_budget == "zero":
            return 0
        return props[c][1]

    variant_set = set(variants)
    ladder.sort(key=lambda c: (cmp_budget(c), c))
    variants.sort(key=lambda c: (cmp_budget(c), c))
    g.configs = ladder + variants
    g.ladder = ladder
    g.variants = variants
    g.b = [cmp_budget(c) for c in g.configs]
    g.own = [props[c][1] for c in g.configs]
    g.frames = [props[c][0] for c in g.configs]
    g.pixels = [props[c][2] for c in g.configs]
    g.pref = pref
    g.top = ladder[-1] if ladder else None
    g.top_idx = g.configs.index(g.top) if ladder else None
    g.zero = [c for c, f in zip(g.configs, g.frames) if f == 0]
    K = len(g.configs)
    g.lower = [(a, b) for a in range(K) for b in range(K) if g.b[a] < g.b[b]]
    g.dropped = sorted(dropped, key=lambda c: (props[c][1], c))
    g.n_cand = n_cand
    g.items = items
    return g


def grid_json(g):
    return {
        "models": g.models,
        "configs": g.configs,
        "budgets": g.b,
        "own_budgets": g.own,
        "frames": g.frames,
        "pixels": g.pixels,
        "reference_pixels": g.pref,
        "ladder": g.ladder,
        "variants": g.variants,
        "top": g.top,
        "zero_frame_configs": g.zero,
        "dropped_configs": g.dropped,
        "comparable_pairs": len(g.lower),
        "n_items_candidate": g.n_cand,
        "n_items": len(g.items),
    }


# --------------------------------------------------------------------------------------------
# Cascade (docs/measures.md §6)

def cascade_units(g, model_cells, items, stages):
    """(stage ys, stage confs) per item, or None when no confidence on S_1..S_{m-1}."""
    units = []
    any_conf = False
    m = len(stages)
    for it in items:
        row = model_cells[it]
        ys = []
        cs = []
        for j, st in enumerate(stages):
            cell = row[st]
            ys.append(cell.y)
            cf = cell.confidence
            if cf is not None and j < m - 1:
                any_conf = True
            cs.append(0.0 if cf is None else cf)
        units.append((ys, cs))
    return units, any_conf


def cascade_eval(stages, gs, units, sweep_on=True):
    m = len(stages)
    n = len(units)
    shared = []
    noshare = []
    for s in range(m):
        sc = gs[0]
        for j in range(1, s + 1):
            sc += max(0, gs[j] - gs[j - 1])
        shared.append(sc)
        noshare.append(sum(gs[:s + 1]))
    sweep = []
    for j in range(101):
        tau = j / 100
        correct = 0
        sh = 0
        ns = 0
        stops = [0] * m
        for ys, cs in units:
            stop = m - 1
            for k in range(m - 1):
                if cs[k] >= tau:
                    stop = k
                    break
            correct += ys[stop]
            sh += shared[stop]
            ns += noshare[stop]
            stops[stop] += 1
        sweep.append({
            "tau": tau,
            "correct": correct,
            "accuracy": rate(correct, n),
            "shared_cost_total": sh,
            "mean_shared_cost": sh / n if n else None,
            "mean_no_share_cost": ns / n if n else None,
            "stop_counts": stops,
        })
    base_correct = sum(ys[m - 1] for ys, _ in units)
    gm = gs[m - 1]
    best = None
    for e in sweep:
        if e["correct"] >= base_correct:
            key = (e["shared_cost_total"], -e["correct"], e["tau"])
            if best is None or key < best[0]:
                best = (key, e)
    selected = None
    if best is not None:
        e = best[1]
        selected = {
            "tau": e["tau"],
            "correct": e["correct"],
            "accuracy": e["accuracy"],
            "mean_shared_cost": e["mean_shared_cost"],
            "mean_no_share_cost": e["mean_no_share_cost"],
            "cost_reduction_pct": (100 * (1 - e["mean_shared_cost"] / gm)
                                   if gm != 0 and e["mean_shared_cost"] is not None else None),
            "stop_counts": list(e["stop_counts"]),
        }
    out = {
        "stages": list(stages),
        "stage_frames": list(gs),
        "baseline": {"config": stages[m - 1], "correct": base_correct,
                     "accuracy": rate(base_correct, n), "mean_cost": float(gm)},
        "selected": selected,
    }
    if sweep_on:
        out["sweep"] = sweep
    return out


# --------------------------------------------------------------------------------------------
# MCQ measures (docs/measures.md §3, 4, 6, 9, 11)

CLASSES = ("always_correct", "always_wrong", "monotonic_increasing", "monotonic_decreasing",
           "oscillating")


def classify(seq):
    if all(v == 1 for v in seq):
        return "always_correct"
    if all(v == 0 for v in seq):
        return "always_wrong"
    if all(seq[k] <= seq[k + 1] for k in range(len(seq) - 1)):
        return "monotonic_increasing"
    if all(seq[k] >= seq[k + 1] for k in range(len(seq) - 1)):
        return "monotonic_decreasing"
    return "oscillating"


def mcq_metrics(ctx, g, m, model_cells):
    P = ctx.params
    cfgs = g.configs
    K = len(cfgs)
    items = g.items
    n = len(items)
    rows = [[model_cells[it][c] for c in cfgs] for it in items]
    Y = [[cell.y for cell in row] for row in rows]
    correct = [sum(Y[i][k] for i in range(n)) for k in range(K)]
    acc = [rate(c, n) for c in correct]
    kstar = 0
    for k in range(1, K):
        if correct[k] > correct[kstar]:
            kstar = k
    ti = g.top_idx
    oracle = [max(r) for r in Y]
    oracle_count = sum(oracle)
    # per item
    patterns = Counter()
    classes = {c: 0 for c in CLASSES}
    best_counts = [0] * K
    hp_i = []
    term_i = []
    per_item = []
    lower = g.lower
    lower_to_top = [a for (a, b) in lower if b == ti]
    zero_idx = [k for k in range(K) if g.frames[k] == 0]
    vis_idx = [k for k in range(K) if g.frames[k] > 0]
    to_i = []
    for i in range(n):
        y = Y[i]
        pat = "".join("1" if v else "0" for v in y)
        patterns[pat] += 1
        cl = classify(y)
        classes[cl] += 1
        bc = 0
        for k in range(K):
            if y[k] == 1:
                bc = k
                break
        best_counts[bc] += 1
        hp = 0
        for a, b in lower:
            if y[a] == 1 and y[b] == 0:
                hp += 1
        hp_i.append(hp)
        term = y[ti] == 0 and any(y[a] == 1 for a in lower_to_top)
        term_i.append(term)
        to = any(y[t] == 1 for t in zero_idx) and any(y[v] == 0 for v in vis_idx)
        to_i.append(to)
        mean_correct = sum(y) / K
        per_item.append({
            "pattern": pat,
            "class": cl,
            "best_config": cfgs[bc],
            "has_harmful": hp > 0,
            "harmful_pairs": hp,
            "terminal_regression": term,
            "text_overwrite": to,
            # AMBIGUITY: oracle_correct is reported as a boolean (oracle_i = max_k y in {0,1}).
            "oracle_correct": oracle[i] == 1,
            "mean_correct": mean_correct,
            "variability": math.sqrt(mean_correct * (1 - mean_correct)),
            "adjacent_flips": sum(1 for k in range(K - 1) if y[k] != y[k + 1]),
            # section 16.4; without replicates: one outcome, no stable harm
            "min_outcomes": 1,
            "stable_harmful": False,
        })
    harmful_items = sum(1 for h in hp_i if h > 0)
    harmful_pairs = sum(hp_i)
    comparable = len(lower)
    pairs_total = n * comparable
    # churn over ladder edges (ladder = first len(g.ladder) grid positions)
    churn = []
    tw = tc = 0
    L = len(g.ladder)
    for j in range(L - 1):
        a, b = j, j + 1
        w2c = c2w = sc = sw = 0
        for i in range(n):
            u, v = Y[i][a], Y[i][b]
            if u == 0 and v == 1:
                w2c += 1
            elif u == 1 and v == 0:
                c2w += 1
            elif u == 1:
                sc += 1
            else:
                sw += 1
        churn.append({"from": cfgs[a], "to": cfgs[b], "wrong_to_correct": w2c,
                      "correct_to_wrong": c2w, "stable_correct": sc, "stable_wrong": sw,
                      "mcnemar_p": mcnemar_p(c2w, w2c), "mcnemar_q": None})
        tw += w2c
        tc += c2w
    term_count = sum(1 for t in term_i if t)
    # complementarity
    rw = [[0.0] * K for _ in range(K)]
    for a in range(K):
        for b in range(K):
            if a != b:
                rw[a][b] = rate(sum(1 for i in range(n) if Y[i][a] == 1 and Y[i][b] == 0), n)
    pog = [[0.0] * K for _ in range(K)]
    for a in range(K):
        for b in range(K):
            if a != b:
                pog[a][b] = min(rw[a][b], rw[b][a])
    # text overwrite
    text_correct = sum(1 for i in range(n) if any(Y[i][t] == 1 for t in zero_idx))
    to_items = sum(1 for t in to_i if t)
    text_overwrite = {
        "zero_frame_configs": list(g.zero),
        "text_correct_items": text_correct,
        "items": to_items,
        "rate": rate(to_items, n),
        "conditional_rate": rate(to_items, text_correct),
    }
    # prior fallback on the visual sub-grid
    vis_lower = [(a, b) for (a, b) in lower if g.frames[a] > 0 and g.frames[b] > 0]
    top_visual = g.frames[ti] > 0
    vis_lower_top = [a for (a, b) in vis_lower if b == ti]
    iwb = 0
    pf_h = pf_f = pf_t = pf_tf = pf_w = pf_wm = 0
    for i, it in enumerate(items):
        z = ctx.blind.get((ctx.protocol, m, it[0], it[1]))
        if z is None:
            continue
        iwb += 1
        y = Y[i]
        for a, b in vis_lower:
            if y[a] == 1 and y[b] == 0:
                pf_h += 1
                if rows[i][b].npred is not None and rows[i][b].npred == z:
                    pf_f += 1
        if top_visual and y[ti] == 0 and any(y[a] == 1 for a in vis_lower_top):
            pf_t += 1
            if rows[i][ti].npred is not None and rows[i][ti].npred == z:
                pf_tf += 1
        for k in vis_idx:
            if y[k] == 0:
                pf_w += 1
                if rows[i][k].npred is not None and rows[i][k].npred == z:
                    pf_wm += 1
    prior = {
        "items_with_blind": iwb,
        "harmful_pairs": pf_h,
        "fallback_pairs": pf_f,
        "rate": rate(pf_f, pf_h),
        "terminal_regressions": pf_t,
        "terminal_fallbacks": pf_tf,
        "terminal_rate": rate(pf_tf, pf_t),
        "wrong_cells": pf_w,
        "wrong_cells_matching_blind": pf_wm,
        "baseline_rate": rate(pf_wm, pf_w),
    }
    # cascade
    cascade, units = None, None
    if P.cascade_stages is not None:
        stages = list(P.cascade_stages)
        ok = all(s in cfgs for s in stages)
    else:
        stages = [c for c in g.ladder if g.frames[cfgs.index(c)] > 0]
        ok = True
    if ok and len(stages) >= 2:
        units, any_conf = cascade_units(g, model_cells, items, stages)
        if any_conf:
            gs = [g.frames[cfgs.index(s)] for s in stages]
            cascade = cascade_eval(stages, gs, units)
        else:
            units = None
    # bootstrap
    boot = None
    groups = cluster_groups(ctx, items)
    if P.boot > 0 and n > 0:
        # a cluster resample may hold up to n * n items
        w = max(1, (n if groups is None else n * n).bit_length() + 1)
        mask = (1 << w) - 1
        packed = []
        for i in range(n):
            v = 0
            for k in range(K):
                if Y[i][k]:
                    v |= 1 << (w * k)
            packed.append(v)
        hflag = [1 if h > 0 else 0 for h in hp_i]
        state = P.seed & M64
        hs = []
        hr = []
        for _ in range(P.boot):
            idx, state = draw_units(state, n, groups)
            nb = len(idx)
            so = 0
            sh = 0
            sp = 0
            for i in idx:
                so += oracle[i]
                sh += hflag[i]
                sp += packed[i]
            mx = 0
            for k in range(K):
                v = (sp >> (w * k)) & mask
                if v > mx:
                    mx = v
            hs.append(100 * (so - mx) / nb)
            hr.append(100 * sh / nb)
        boot = {"B": P.boot, "seed": P.seed, "cluster": groups is not None,
                "clusters": n if groups is None else len(groups),
                "headroom": interval(hs),
                "harmful_rate": interval(hr)}
    # intervention (primary protocol only)
    inter = None
    if ctx.protocol == P.primary:
        sel = []
        for i, it in enumerate(items):
            ic = ctx.inter.get((m, it[0], it[1]))
            if ic is not None:
                sel.append((i, ic))
        if sel:
            ni = len(sel)
            tr = sum(1 for i, _ in sel if term_i[i])
            rec = sum(1 for i, ic in sel if term_i[i] and ic.y == 1)
            topc = sum(1 for i, _ in sel if Y[i][ti] == 1)
            brk = sum(1 for i, ic in sel if Y[i][ti] == 1 and ic.y == 0)
            sint = sum(ic.y for _, ic in sel)
            stop = sum(Y[i][ti] for i, _ in sel)
            inter = {
                "items_with_intervention": ni,
                "terminal_regressions": tr,
                "recovered": rec,
                "recovery_rate": rate(rec, tr),
                "top_correct_items": topc,
                "broken": brk,
                "broken_rate": rate(brk, topc),
                "accuracy_intervention": rate(sint, ni),
                "accuracy_top": rate(stop, ni),
                "accuracy_delta": rate(sint - stop, ni),
            }
    metrics = {
        "grid": grid_json(g),
        "n_items": n,
        "correct_counts": correct,
        "accuracy": acc,
        "best_fixed": {"config": cfgs[kstar], "index": kstar, "accuracy": acc[kstar]},
        "top": {"config": g.top, "index": ti, "accuracy": acc[ti]},
        "oracle_count": oracle_count,
        "oracle_accuracy": rate(oracle_count, n),
        "headroom": rate(oracle_count - correct[kstar], n),
        "classes": classes,
        "patterns": {p: patterns[p] for p in sorted(patterns)},
        "best_config_counts": {cfgs[k]: best_counts[k] for k in range(K) if best_counts[k] > 0},
        "harmful_items": harmful_items,
        "harmful_rate": rate(harmful_items, n),
        "harmful_pairs": harmful_pairs,
        "comparable_pairs": comparable,
        "pairs_total": pairs_total,
        "harmful_pair_rate": rate(harmful_pairs, pairs_total),
        "churn": churn,
        "churn_totals": {"wrong_to_correct": tw, "correct_to_wrong": tc},
        "terminal_regressions": term_count,
        "terminal_regression_rate": rate(term_count, n),
        "complementarity": {"right_wrong": rw, "pair_oracle_gain": pog},
        "text_overwrite": text_overwrite,
        "prior_fallback": prior,
        "cascade": cascade,
        "bootstrap": boot,
        "replicates": replicates_block(ctx, g, m, rows, Y, hp_i, churn, per_item),
        "intervention": inter,
    }
    flags = {it: (hp_i[i] > 0) for i, it in enumerate(items)}
    return metrics, per_item, flags, (units if cascade is not None else None)


# --------------------------------------------------------------------------------------------
# Open-task measures (docs/measures.md §5)

def open_metrics(ctx, g, m, model_cells):
    P = ctx.params
    cfgs = g.configs
    K = len(cfgs)
    items = g.items
    n = len(items)
    S = [[model_cells[it][c].s for c in cfgs] for it in items]
    means = [seqsum(S[i][k] for i in range(n)) / n for k in range(K)]
    kstar = 0
    for k in range(1, K):
        if means[k] > means[kstar]:
            kstar = k
    ti = g.top_idx
    mx = [max(r) for r in S]
    oracle_mean = seqsum(mx) / n
    oracle_gap = oracle_mean - means[kstar]
    delta = P.delta
    lower = g.lower
    lower_to_top = [a for (a, b) in lower if b == ti]
    reg_i = []
    term_i = []
    per_item = []
    for i in range(n):
        s = S[i]
        reg = any(s[a] - s[b] > delta for a, b in lower)
        term = any(s[a] - s[ti] > delta for a in lower_to_top)
        reg_i.append(reg)
        term_i.append(term)
        ms = seqsum(s) / K
        var = seqsum((v - ms) * (v - ms) for v in s) / K
        per_item.append({
            "scores": list(s),
            "max_score": mx[i],
            "has_regression": reg,
            "terminal_regression": term,
            "mean_score": ms,
            "variability": math.sqrt(var),
        })
    nreg = sum(1 for r in reg_i if r)
    nterm = sum(1 for t in term_i if t)
    pog = [[0.0] * K for _ in range(K)]
    for a in range(K):
        for b in range(K):
            if a != b:
                pog[a][b] = seqsum(max(S[i][a], S[i][b]) for i in range(n)) / n - max(means[a], means[b])
    boot = None
    groups = cluster_groups(ctx, items)
    if P.boot > 0 and n > 0:
        rflag = [1 if r else 0 for r in reg_i]
        cols = [[S[i][k] for i in range(n)] for k in range(K)]
        state = P.seed & M64
        gaps = []
        rr = []
        for _ in range(P.boot):
            idx, state = draw_units(state, n, groups)
            nb = len(idx)
            smax = 0.0
            sreg = 0
            for i in idx:
                smax += mx[i]
                sreg += rflag[i]
            best = None
            for k in range(K):
                col = cols[k]
                acc = 0.0
                for i in idx:
                    acc += col[i]
                if best is None or acc > best:
                    best = acc
            gaps.append((smax - best) / nb)
            rr.append(100 * sreg / nb)
        boot = {"B": P.boot, "seed": P.seed, "cluster": groups is not None,
                "clusters": n if groups is None else len(groups),
                "oracle_gap": interval(gaps),
                "regression_rate": interval(rr)}
    metrics = {
        "grid": grid_json(g),
        "n_items": n,
        "mean_score": means,
        "best_fixed": {"config": cfgs[kstar], "index": kstar, "mean_score": means[kstar]},
        "top": {"config": g.top, "index": ti, "mean_score": means[ti]},
        "oracle_mean": oracle_mean,
        "oracle_gap": oracle_gap,
        "delta": delta,
        "regression_items": nreg,
        "regression_rate": rate(nreg, n),
        "terminal_regressions": nterm,
        "terminal_regression_rate": rate(nterm, n),
        "complementarity": {"pair_oracle_gain": pog},
        "bootstrap": boot,
    }
    flags = {it: reg_i[i] for i, it in enumerate(items)}
    return metrics, per_item, flags


# --------------------------------------------------------------------------------------------
# Analyses (docs/measures.md §2.1-2.3) and the report (docs/measures.md §12)

class Ctx:
    pass


def run_analysis(ctx, protocol, task, scope, valid_cells):
    P = ctx.params
    ctx.protocol = protocol
    mf = set(P.models) if P.models is not None else None
    sel = []
    for c in valid_cells:
        if c.protocol != protocol or c.task != task:
            continue
        if scope != "ALL" and c.benchmark != scope:
            continue
        if mf is not None and c.model not in mf:
            continue
        if not P.include_zero_frame and c.frames == 0:
            continue
        # AMBIGUITY: the config filter does not remove cells from the selection (2.1 defers to
        # 2.3, which only excludes models and fixes the grid's configurations); cells at other
        # configurations still define avail(m), n_items_candidate and dropped_configs.
        sel.append(c)
    props = ctx.props_by_protocol.get(protocol, {})
    # model -> item -> config -> cell
    mc = {}
    for c in sel:
        mc.setdefault(c.model, {}).setdefault((c.benchmark, c.item_id), {})[c.config] = c
    models = sorted(mc)
    avail = {}
    for m in models:
        per_bench = {}
        for (bench, _), row in mc[m].items():
            per_bench.setdefault(bench, set()).update(row.keys())
        sets = list(per_bench.values())
        a = set(sets[0])
        for s in sets[1:]:
            a &= s
        avail[m] = a
    excluded = []
    live = []
    C = P.configs
    for m in models:
        if C is not None:
            missing = [c for c in C if c not in avail[m]]
            if missing:
                excluded.append({"model": m, "reason": "missing_configs", "configs": missing})
                continue
        live.append(m)
    out_models = {}
    item_lines = {}
    flags = {}
    units_by_model = {}
    grid_out = None
    grids = []
    if P.grid_mode == "per_model":
        for m in live:
            cfgset = set(C) if C is not None else set(avail[m])
            cand = sorted(mc[m])
            items = [it for it in cand if all(cf in mc[m][it] for cf in cfgset)]
            present = set()
            for it in cand:
                present.update(mc[m][it].keys())
            dropped = present - cfgset
            if not items or not cfgset:
                # AMBIGUITY: `configs` of an "empty_grid" exclusion is the empty list.
                excluded.append({"model": m, "reason": "empty_grid", "configs": []})
                continue
            g = make_grid([m], sorted(cfgset), props, P, len(cand), items, dropped)
            grids.append((m, g))
        # AMBIGUITY: the order of excluded_models is not specified; sorted by model id.
        excluded.sort(key=lambda e: e["model"])
    else:
        if live:
            if C is not None:
                cfgset = set(C)
            else:
                cfgset = set(avail[live[0]])
                for m in live[1:]:
                    cfgset &= avail[m]
            cand = sorted(set(it for m in live for it in mc[m]))
            # AMBIGUITY: with K = 0 the "valid cell for every model x configuration" condition
            # is vacuous, so n_items = n_items_candidate (the grid is reported, no metrics).
            items = [it for it in cand
                     if all(all(cf in mc[m].get(it, {}) for cf in cfgset) for m in live)]
            present = set()
            for m in live:
                for it in mc[m]:
                    present.update(mc[m][it].keys())
            dropped = present - cfgset
            g = make_grid(live, sorted(cfgset), props, P, len(cand), items, dropped)
            grid_out = grid_json(g)
            if items and cfgset:
                for m in live:
                    grids.append((m, g))
        # AMBIGUITY: a joint analysis in which no model remains (empty selection or all
        # excluded) reports "grid": null.
        excluded.sort(key=lambda e: e["model"])
    for m, g in grids:
        if task == "mcq":
            met, pi, fl, units = mcq_metrics(ctx, g, m, mc[m])
            units_by_model[m] = units
        else:
            met, pi, fl = open_metrics(ctx, g, m, mc[m])
        out_models[m] = met
        item_lines[m] = (g.items, pi)
        flags[m] = fl
    if task == "mcq":
        # section 16.3: McNemar's q over every churn entry of the analysis, and the excess q
        # over every edge with an excess p, each ranked by (p, model, edge index)
        fam = [(c["mcnemar_p"], m, j, c) for m in out_models
               for j, c in enumerate(out_models[m]["churn"])]
        for q, entry in zip(bh_q([(p, m, j) for p, m, j, _ in fam]), fam):
            entry[3]["mcnemar_q"] = q
        fam = [(e["excess_p"], m, j, e) for m in out_models
               if out_models[m]["replicates"] is not None
               for j, e in enumerate(out_models[m]["replicates"]["edges"])
               if e["excess_p"] is not None]
        for q, entry in zip(bh_q([(p, m, j) for p, m, j, _ in fam]), fam):
            entry[3]["excess_q"] = q
            entry[3]["beyond_noise"] = q <= P.alpha
    summary = None
    if out_models:
        ms = [out_models[m] for m in sorted(out_models)]
        if task == "mcq":
            def mn(f):
                vals = [f(x) for x in ms]
                return min(vals), max(vals)
            h = mn(lambda x: x["headroom"])
            hr = mn(lambda x: x["harmful_rate"])
            tr = mn(lambda x: x["terminal_regression_rate"])
            to = mn(lambda x: x["text_overwrite"]["rate"])
            pooled = None
            if P.grid_mode == "joint" and all(units_by_model.get(m) is not None for m in out_models):
                g = grids[0][1]
                first = out_models[sorted(out_models)[0]]["cascade"]
                allunits = []
                for m in sorted(out_models):
                    allunits.extend(units_by_model[m])
                pooled = {"n": len(allunits)}
                pooled.update(cascade_eval(first["stages"], first["stage_frames"], allunits))
            summary = {"headroom_min": h[0], "headroom_max": h[1],
                       "harmful_rate_min": hr[0], "harmful_rate_max": hr[1],
                       "terminal_regression_rate_min": tr[0], "terminal_regression_rate_max": tr[1],
                       "text_overwrite_rate_min": to[0], "text_overwrite_rate_max": to[1],
                       "pooled_cascade": pooled}
        else:
            og = [x["oracle_gap"] for x in ms]
            rr = [x["regression_rate"] for x in ms]
            summary = {"oracle_gap_min": min(og), "oracle_gap_max": max(og),
                       "regression_rate_min": min(rr), "regression_rate_max": max(rr)}
    analysis = {
        "protocol": protocol,
        "task": task,
        "scope": scope,
        "grid_mode": P.grid_mode,
        "grid": grid_out,
        "excluded_models": excluded,
        "models": {m: out_models[m] for m in sorted(out_models)},
        "summary": summary,
    }
    return analysis, item_lines, flags


def kappa_stats(xs, vs):
    n = len(xs)
    if n == 0:
        return None, None, None, None
    agree = sum(1 for x, v in zip(xs, vs) if x == v)
    p_o = agree / n
    p_a = sum(xs) / n
    p_b = sum(vs) / n
    p_e = p_a * p_b + (1 - p_a) * (1 - p_b)
    kappa = None if p_e == 1 else (p_o - p_e) / (1 - p_e)
    return kappa, p_o, sum(xs), sum(vs)


def agreement(path):
    try:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError("%s: %s" % (path, e))
    recs = {}
    for lineno, line in enumerate(text.split("\n"), 1):
        if line.strip() == "":
            continue
        where = "%s:%d" % (path, lineno)
        try:
            obj = json.loads(line, parse_constant=_bad_constant)
        except ValueError as e:
            raise InputError("%s: malformed JSON (%s)" % (where, e))
        if not isinstance(obj, dict):
            _reject(where, "line is not a JSON object")
        item = obj.get("item_id")
        ann = obj.get("annotator")
        if not isinstance(item, str) or not isinstance(ann, str):
            _reject(where, "item_id and annotator must be strings")
        mdl = obj.get("model")
        bench = obj.get("benchmark")
        if mdl is not None and not isinstance(mdl, str):
            _reject(where, "model must be a string")
        if bench is not None and not isinstance(bench, str):
            _reject(where, "benchmark must be a string")
        tags = obj.get("tags")
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            _reject(where, "tags must be a list of strings")
        prim = obj.get("primary")
        if prim is not None and not isinstance(prim, str):
            _reject(where, "primary must be a string or null")
        unit = (mdl if mdl is not None else "", bench if bench is not None else "default", item)
        if (unit, ann) in recs:
            _reject(where, "duplicate (unit, annotator)")
        recs[(unit, ann)] = (set(tags), prim)
    annotators = sorted(set(a for (_, a) in recs))
    units = sorted(set(u for (u, _) in recs))
    vocab = set()
    for tags, prim in recs.values():
        vocab.update(tags)
        if prim is not None:
            vocab.add(prim)
    vocab = sorted(vocab)
    pairs = []
    for ia in range(len(annotators)):
        for ib in range(ia + 1, len(annotators)):
            A, Bn = annotators[ia], annotators[ib]
            common = [u for u in units if (u, A) in recs and (u, Bn) in recs]
            per_tag = {}
            ks = []
            for t in vocab:
                xs = []
                vs = []
                for u in common:
                    ta, pa = recs[(u, A)]
                    tb, pb = recs[(u, Bn)]
                    xs.append(1 if (t in ta or t == pa) else 0)
                    vs.append(1 if (t in tb or t == pb) else 0)
                k, po, pos_a, pos_b = kappa_stats(xs, vs)
                # AMBIGUITY: pos_a / pos_b are the counts of units where the tag is present for
                # A / B (not the proportions p_A, p_B).
                per_tag[t] = {"kappa": k, "p_o": po,
                              "pos_a": pos_a if pos_a is not None else 0,
                              "pos_b": pos_b if pos_b is not None else 0}
                if k is not None:
                    ks.append(k)
            pairs.append({"annotators": [A, Bn], "n_units": len(common), "per_tag": per_tag,
                          "macro_kappa": (seqsum(ks) / len(ks)) if ks else None})
    # Krippendorff's alpha on primary
    values_by_unit = {}
    for (u, a), (_, prim) in recs.items():
        if prim is not None:
            values_by_unit.setdefault(u, []).append(prim)
    o = {}
    pairable = 0
    for u in sorted(values_by_unit):
        vals = values_by_unit[u]
        mu = len(vals)
        if mu < 2:
            continue
        pairable += 1
        w = 1 / (mu - 1)
        for p in range(mu):
            for q in range(mu):
                if p != q:
                    key = (vals[p], vals[q])
                    o[key] = o.get(key, 0.0) + w
    cats = sorted(set(c for key in o for c in key))
    nc = {c: seqsum(o.get((c, k), 0.0) for k in cats) for c in cats}
    ntot = seqsum(nc[c] for c in cats)
    alpha = None
    if pairable > 0:
        Do = seqsum(o.get((c, k), 0.0) for c in cats for k in cats if c != k)
        De = seqsum(nc[c] * nc[k] for c in cats for k in cats if c != k)
        if De != 0:
            alpha = 1 - (ntot - 1) * Do / De
    return {"annotators": annotators, "n_units": len(units), "tags": vocab, "pairs": pairs,
            "primary_alpha": alpha, "primary_pairable_values": ntot,
            "primary_units_pairable": pairable}


def build_report(cells, records, params, annotations=None):
    # section 16.1: replicates apart; everything else reads canonical cells only
    reps = [c for c in cells if c.replicate is not None]
    cells = [c for c in cells if c.replicate is None]
    records -= len(reps)
    cfgprops, bench_task, blind = validate_and_evaluate(cells)
    ctx = Ctx()
    ctx.params = params
    ctx.blind = blind
    check_replicates(ctx, cells, reps, cfgprops, bench_task)
    props_by_protocol = {}
    for (p, c), v in cfgprops.items():
        props_by_protocol.setdefault(p, {})[c] = v
    ctx.props_by_protocol = props_by_protocol
    valid = [c for c in cells if c.valid]
    # intervention cells: valid MCQ cells of the intervention protocol, largest (budget, config)
    # AMBIGUITY: the model filter and include_zero_frame do not apply to intervention cells.
    inter = {}
    for c in valid:
        if c.protocol == params.intervention_protocol and c.task == "mcq":
            k = (c.model, c.benchmark, c.item_id)
            cur = inter.get(k)
            if cur is None or (c.budget, c.config) > (cur.budget, cur.config):
                inter[k] = c
    ctx.inter = inter
    protocols = sorted(set(c.protocol for c in cells))
    analysed = [p for p in protocols if p != params.intervention_protocol]
    order = ([params.primary] if params.primary in analysed else []) + \
        [p for p in analysed if p != params.primary]
    analyses = []
    items_out = []
    flag_index = {}
    for p in order:
        # AMBIGUITY: the (task, benchmark) scopes of a protocol are those of all its cells
        # (valid or not, before the model filter / zero-frame switch); an analysis whose
        # selection is empty is still reported with no models.
        benches = {}
        for c in cells:
            if c.protocol == p:
                benches.setdefault(c.task, set()).add(c.benchmark)
        for task in ("mcq", "open"):
            if task not in benches:
                continue
            for scope in ["ALL"] + sorted(benches[task]):
                a, lines, flags = run_analysis(ctx, p, task, scope, valid)
                analyses.append(a)
                flag_index[(p, task, scope)] = flags
                # AMBIGUITY: per-item export lines follow the analysis order, then model id,
                # then item order.
                if scope != "ALL":
                    for m in sorted(lines):
                        its, pis = lines[m]
                        for it, d in zip(its, pis):
                            rec = {"protocol": p, "task": task, "scope": scope, "model": m,
                                   "benchmark": it[0], "item_id": it[1]}
                            rec.update(d)
                            items_out.append(rec)
    # AMBIGUITY: protocol_comparisons are ordered by the primary protocol's analyses (report
    # order), then by the other protocol's name, then by model id.
    comps = []
    for a in analyses:
        if a["protocol"] != params.primary:
            continue
        key = (a["protocol"], a["task"], a["scope"])
        fa = flag_index[key]
        for q in sorted(set(x["protocol"] for x in analyses)):
            if q == params.primary or (q, a["task"], a["scope"]) not in flag_index:
                continue
            fb = flag_index[(q, a["task"], a["scope"])]
            for m in sorted(set(fa) & set(fb)):
                common = sorted(set(fa[m]) & set(fb[m]))
                xs = [1 if fa[m][it] else 0 for it in common]
                vs = [1 if fb[m][it] else 0 for it in common]
                both = sum(1 for x, v in zip(xs, vs) if x and v)
                oa = sum(1 for x, v in zip(xs, vs) if x and not v)
                ob = sum(1 for x, v in zip(xs, vs) if v and not x)
                k, po, _, _ = kappa_stats(xs, vs)
                un = both + oa + ob
                comps.append({"task": a["task"], "scope": a["scope"], "model": m,
                              "protocol_a": params.primary, "protocol_b": q,
                              "n_common": len(common), "rate_a": rate(sum(xs), len(common)),
                              "rate_b": rate(sum(vs), len(common)), "both": both,
                              "only_a": oa, "only_b": ob,
                              "jaccard": (both / un) if un else None,
                              "kappa": k, "p_o": po})
    report = {
        "spec_version": SPEC_VERSION,
        "params": {
            "primary": params.primary,
            "intervention_protocol": params.intervention_protocol,
            "delta": params.delta,
            "seed": params.seed,
            "bootstrap_B": params.boot,
            "tau_grid": "j/100, j=0..100",
            "grid_mode": params.grid_mode,
            "models": params.models,
            "configs": params.configs,
            "include_zero_frame": params.include_zero_frame,
            "reference_pixels": params.reference_pixels,
            "variant_budget": params.variant_budget,
            "cascade_stages": params.cascade_stages,
            "nuisances": params.nuisances,
            "alpha": params.alpha,
            "cluster_bootstrap": params.cluster_bootstrap,
        },
        "input": {
            "records": records,
            "cells_valid": len(valid),
            "cells_invalid": len(cells) - len(valid),
            "zero_frame_cells": sum(1 for c in cells if c.frames == 0),
            "blind_answers": len(blind),
            "replicate_cells": len(reps),
            "replicates_orphaned": ctx.orphaned,
            "protocols": protocols,
            "models": sorted(set(c.model for c in cells)),
            "benchmarks": sorted(set(c.benchmark for c in cells)),
        },
        "analyses": analyses,
        "protocol_comparisons": comps,
        "agreement": agreement(annotations) if annotations else None,
    }
    return report, items_out


class Params:
    pass


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, allow_abbrev=False)
    ap.add_argument("input")
    ap.add_argument("--grid", choices=["per-model", "joint"], default="per-model")
    ap.add_argument("--models")
    ap.add_argument("--configs")
    ap.add_argument("--no-zero-frame", action="store_true")
    ap.add_argument("--reference-pixels", default="auto")
    ap.add_argument("--variant-budget", choices=["own", "zero"], default="own")
    ap.add_argument("--cascade-stages")
    ap.add_argument("--primary", default="main")
    ap.add_argument("--intervention-protocol", default="intervention")
    ap.add_argument("--delta", type=float, default=10.0)
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--nuisances")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--cluster-bootstrap", action="store_true")
    ap.add_argument("--annotations")
    ap.add_argument("--items-out")
    a = ap.parse_args(argv)
    p = Params()
    p.grid_mode = "joint" if a.grid == "joint" else "per_model"
    p.models = a.models.split(",") if a.models is not None else None
    p.configs = a.configs.split(",") if a.configs is not None else None
    p.include_zero_frame = not a.no_zero_frame
    if a.reference_pixels in ("auto", "none"):
        p.reference_pixels = a.reference_pixels
    else:
        if not _DIGITS.match(a.reference_pixels):
            ap.error("--reference-pixels must be auto, none or a non-negative integer")
        p.reference_pixels = int(a.reference_pixels)
    p.variant_budget = a.variant_budget
    p.cascade_stages = a.cascade_stages.split(",") if a.cascade_stages is not None else None
    p.primary = a.primary
    p.intervention_protocol = a.intervention_protocol
    if not math.isfinite(a.delta) or a.delta < 0:
        ap.error("--delta must be a finite number >= 0")
    p.delta = a.delta
    if a.boot < 0:
        ap.error("--boot must be >= 0")
    p.boot = a.boot
    if a.seed < 0 or a.seed > M64:
        ap.error("--seed must be in [0, 2^64)")
    p.seed = a.seed
    p.nuisances = a.nuisances.split(",") if a.nuisances is not None else None
    p.alpha = a.alpha
    p.cluster_bootstrap = a.cluster_bootstrap
    return a, p


def main(argv=None):
    a, params = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        if a.input.lower().endswith(".csv"):
            cells, records = read_csv(a.input)
        else:
            cells, records = read_jsonl(a.input)
        report, items = build_report(cells, records, params, a.annotations)
    except InputError as e:
        sys.stderr.write("error: %s\n" % e)
        return 1
    out = json.dumps(report, ensure_ascii=False, indent=1)
    sys.stdout.buffer.write(out.encode("utf-8") + b"\n")
    if a.items_out:
        with open(a.items_out, "w", encoding="utf-8") as fh:
            for rec in items:
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
