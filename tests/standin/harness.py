"""A stand-in harness for the intervention loop test (tests/intervention_loop.rs).

It does what a harness's video wrapper does, without a model: opens each item's video
with decord, decodes the frames of its budget with ``VideoReader.get_batch`` (the call the
frame recorder steers under a plan), and answers from the pixels it was given. The test
clips are 64x64 and frame-coded: the top half (rows 0-31) is grey, white on one frame (the
event that answers the question) and, for most items, red on another (a distractor);
rows 40-55 are a black strip holding the frame's own index in six 8-pixel-wide bit
blocks, bit ``b`` white at columns ``8 + 8b`` to ``15 + 8b``. Seeing red in the top half,
the stand-in is misled (answers B); else seeing white, it answers right (A); else it
guesses wrong (C). It writes a wide table, one row per item and one column for its
configuration, as multi-budget studies release them.

With ``--seen FILE`` it also writes what it was given, read from the pixels: a JSON object
``{item_id: [frame index read from each decoded frame's bit strip, in decode order]}``.
A bit block that is neither clearly black nor clearly white stops the run, so a misread
index never passes for a steered one.

    python3 harness.py --videos DIR --items ITEMS.jsonl --frames N --config LABEL --out CSV \
        [--seen JSON]
"""

import argparse
import csv
import json
import os
import sys

import decord
import numpy as np

BITS = 6
STRIP_ROW = 48  # the middle of the strip's rows 40-55


def answer(frames):
    """B when a red frame was given, else A when a white one was, else C."""
    means = frames[:, :32].reshape(frames.shape[0], -1, 3).mean(axis=1)
    red = any(r > 150 and g < 90 and b < 90 for r, g, b in means)
    white = any(min(r, g, b) > 200 for r, g, b in means)
    return "B" if red else "A" if white else "C"


def index_of(frame, where):
    """The frame index a frame's bit strip shows (the centre pixel of each block)."""
    n = 0
    for b in range(BITS):
        level = frame[STRIP_ROW, 12 + 8 * b].mean()
        if 64 < level < 192:
            sys.exit(f"harness.py: {where}: bit {b} of the strip reads {level:.0f}, neither black nor white")
        n |= int(level >= 192) << b
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--videos", required=True)
    ap.add_argument("--items", required=True)
    ap.add_argument("--frames", type=int, required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seen")
    a = ap.parse_args()
    rows = []
    seen = {}
    with open(a.items) as f:
        for line in f:
            item = json.loads(line)
            vr = decord.VideoReader(os.path.join(a.videos, item["video"] + ".mp4"))
            # The harness's own frames: N spread over the video, as np.linspace gives them.
            asked = np.linspace(0, len(vr) - 1, a.frames).astype(int).tolist()
            frames = vr.get_batch(asked).asnumpy()
            rows.append((item["item_id"], answer(frames)))
            seen[item["item_id"]] = [
                index_of(fr, f"{item['item_id']} decoded frame {k}") for k, fr in enumerate(frames)
            ]
    with open(a.out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["question_id", a.config])
        w.writerows(rows)
    if a.seen:
        with open(a.seen, "w") as f:
            json.dump(seen, f)


if __name__ == "__main__":
    main()
