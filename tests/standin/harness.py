"""A stand-in harness for the intervention loop test (tests/intervention_loop.rs).

It does what a harness's video wrapper does, without a model: opens each item's video
with decord, decodes the frames of its budget with ``VideoReader.get_batch`` (the call the
frame recorder steers under a plan), and answers from the pixels it was given. The test
clips are grey, with one white frame (the event that answers the question) and, for
most items, one red frame (a distractor). Seeing red, the stand-in is misled (answers B);
else seeing white, it answers right (A); else it guesses wrong (C). It writes a wide table,
one row per item and one column for its configuration, as multi-budget studies release
them.

    python3 harness.py --videos DIR --items ITEMS.jsonl --frames N --config LABEL --out CSV
"""

import argparse
import csv
import json
import os

import decord
import numpy as np


def answer(frames):
    """B when a red frame was given, else A when a white one was, else C."""
    means = frames.reshape(frames.shape[0], -1, 3).mean(axis=1)
    red = any(r > 150 and g < 90 and b < 90 for r, g, b in means)
    white = any(min(r, g, b) > 200 for r, g, b in means)
    return "B" if red else "A" if white else "C"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--videos", required=True)
    ap.add_argument("--items", required=True)
    ap.add_argument("--frames", type=int, required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rows = []
    with open(a.items) as f:
        for line in f:
            item = json.loads(line)
            vr = decord.VideoReader(os.path.join(a.videos, item["video"] + ".mp4"))
            # The harness's own frames: N spread over the video, as np.linspace gives them.
            asked = np.linspace(0, len(vr) - 1, a.frames).astype(int).tolist()
            frames = vr.get_batch(asked).asnumpy()
            rows.append((item["item_id"], answer(frames)))
    with open(a.out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["question_id", a.config])
        w.writerows(rows)


if __name__ == "__main__":
    main()
