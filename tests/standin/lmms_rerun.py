"""A stand-in for re-running one lmms-eval run (tests/phase_floor.rs), with no model.

It re-runs a run that lmms-eval 0.7.3 wrote (``{date}_results.json`` and
``{date}_samples_videomme.jsonl``) the way lmms-eval's ``llava_vid`` wrapper loads video
with its decord backend (``load_video``, video_fps 1): for each sample, ``decord.VideoReader``
on the item's video; one frame every ``round(fps)`` frames, or
``np.linspace(0, len(vr) - 1, max_frames_num, dtype=int)`` when that gives more than
``max_frames_num``; then ``get_batch`` of those, the call the frame recorder steers under a
plan. The "model" answers from the pixels it was given: the run's own
answer, unless the mean of the frames' pixels, to three decimals, is a multiple of 3, when it
answers the next letter instead. The run is written again under ``--out`` with a new date,
as lmms-eval lays it out (``{model}/{date}_results.json``, ``{date}_samples_videomme.jsonl``).

    python3 lmms_rerun.py --run RESULTS_JSON --videos DIR --out DIR --date DATE
"""

import argparse
import json
import os

import decord
import numpy as np


def frames_of(model_args):
    """max_frames_num=N from lmms-eval's model_args string."""
    for part in model_args.split(","):
        key, _, value = part.partition("=")
        if key == "max_frames_num":
            return int(value)
    raise SystemExit("model_args has no max_frames_num")


def answer(own, frames):
    """The run's answer, or the next letter when the pixels say so."""
    if int(round(float(frames.mean()) * 1000)) % 3 != 0:
        return own
    return "ABCD"[("ABCD".index(own) + 1) % 4] if own in "ABCD" else own


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True)
    ap.add_argument("--videos", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--date", required=True)
    a = ap.parse_args()
    with open(a.run) as f:
        results = json.load(f)
    n = frames_of(results["config"]["model_args"])
    folder = os.path.dirname(a.run)
    date = os.path.basename(a.run)[: -len("_results.json")]
    out = os.path.join(a.out, os.path.basename(folder))
    os.makedirs(out, exist_ok=True)
    lines = []
    with open(os.path.join(folder, f"{date}_samples_videomme.jsonl")) as f:
        for line in f:
            s = json.loads(line)
            score = s["videomme_perception_score"]
            vr = decord.VideoReader(os.path.join(a.videos, score["videoID"] + ".mp4"))
            total = len(vr)
            asked = list(range(0, total, round(vr.get_avg_fps())))
            if len(asked) > n:
                asked = np.linspace(0, total - 1, n, dtype=int).tolist()
            frames = vr.get_batch(asked).asnumpy()
            pred = answer(score["pred_answer"], frames)
            s["filtered_resps"] = pred + "."
            s["resps"] = [[pred + "."]]
            score["pred_answer"] = pred
            score["score"] = 1.0 if pred == score["answer"] else 0.0
            lines.append(json.dumps(s))
    with open(os.path.join(out, f"{a.date}_samples_videomme.jsonl"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out, f"{a.date}_results.json"), "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main()
