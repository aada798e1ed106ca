#!/usr/bin/env python3
"""Copies a compact set of harness runs with frame truth into fixtures/harness-runs, for
tests/harness_runs.rs.

The runs were made (outside the repository) by running lmms-eval 0.7.3 through its own command
line and VLMEvalKit at commit e8e78f05 through its own run.py, each under frameaudit_record
(assets/python), with a replay model: a subclass of the real wrapper that runs the wrapper's own
__init__ and video loading (decord on real files) and answers without a model forward. The
frames each item was given come from the recorder's logs. This script keeps, of that work:

- lmms-eval-0.7.3/logs/**: the results and samples files, as lmms-eval wrote them;
- lmms-eval-0.7.3/frames/*.frames.jsonl and vlmevalkit-e8e78f05/frames/*.frames.jsonl: the
  recorder logs;
- vlmevalkit-e8e78f05/outputs*/**: VLMEvalKit's work dirs (prediction files and run.py's links;
  evaluation outputs too, which the importer must skip);
- videos/: the tiny test videos in lmms-eval's cache layout (videomme/data, mvbench_video, mlvu);
- docs/: the task annotation files the lmms-eval tasks were pointed at;
- truth.jsonl: one line per (harness, model, model_args or dataset, task, item) with the frames
  the model was given (`frames`, sorted distinct) and the video's frame count and rate.

Usage: python3 tests/reference/make_harness_fixture.py RUNS_DIR [OUT_DIR]
(RUNS_DIR holds truth.json and the run folders; OUT_DIR defaults to fixtures/harness-runs.)
"""

import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def copy_tree(src, dst, keep=lambda p: True):
    """Copies src into dst, keeping symbolic links as links (VLMEvalKit's layout)."""
    for root, dirs, files in os.walk(src):
        rel = os.path.relpath(root, src)
        os.makedirs(os.path.join(dst, rel), exist_ok=True)
        for f in files:
            s = os.path.join(root, f)
            if not keep(s):
                continue
            d = os.path.join(dst, rel, f)
            if os.path.islink(s):
                os.symlink(os.readlink(s), d)
            else:
                shutil.copyfile(s, d)


def main():
    runs = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(REPO, "fixtures", "harness-runs")
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    copy_tree(os.path.join(runs, "lmms-eval-0.7.3", "logs"), os.path.join(out, "lmms-eval-0.7.3", "logs"))
    copy_tree(os.path.join(runs, "lmms-eval-0.7.3", "frames"), os.path.join(out, "lmms-eval-0.7.3", "frames"))
    for part in ["outputs", "outputs-1fps-alone", "frames"]:
        copy_tree(
            os.path.join(runs, "vlmevalkit-e8e78f05", part),
            os.path.join(out, "vlmevalkit-e8e78f05", part),
            # run.py's own console logs are not inputs of the importer.
            keep=lambda p: "/logs/" not in p,
        )
    for part in ["videomme", "mvbench_video", "mlvu"]:
        copy_tree(os.path.join(runs, "hf_home", part), os.path.join(out, "videos", part))
    copy_tree(os.path.join(runs, "inputs"), os.path.join(out, "docs"), keep=lambda p: p.endswith(".json"))

    truth = json.load(open(os.path.join(runs, "truth.json")))
    with open(os.path.join(out, "truth.jsonl"), "w") as f:
        for run in truth["runs"]:
            lmms = run["harness"].startswith("lmms")
            for it in run["items"]:
                line = {
                    "harness": run["harness"],
                    "model": run["model"],
                    "run": run["config"],
                    "benchmark": run.get("task") or run.get("dataset"),
                    "frames": sorted(set(it["frames_to_model"])),
                    "num_frames": it["video_num_frames"],
                    "fps": it["video_avg_fps"],
                }
                if lmms:
                    line["samples_file"] = run["samples_file"]
                    line["frames_log"] = run["frames_log"]
                    line["doc_id"] = it["doc_id"]
                    line["item_key"] = it["item_key"]
                else:
                    line["prediction_file"] = run["prediction_file"]
                    line["index"] = it["index"]
                    for k in ["question_id", "sub_dataset", "original_index"]:
                        if k in it:
                            line[k] = it[k]
                f.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
