#!/usr/bin/env python3
"""Writes the fixtures of tests/import_vlm.rs: VLMEvalKit prediction files under
fixtures/formats/vlmevalkit/ and wide tables under fixtures/formats/wide-csv/.

Python 3.11 + openpyxl (only for the .xlsx files). The fixtures are committed, so the tests
never run this; run it to change them: python3 tests/reference/make_vlm_fixtures.py

The files copy the shapes VLMEvalKit writes (docs/formats.md §3.3): one row per question
with `index`, the dataset's columns, `candidates` as the text of a Python list, `answer`
and `prediction`; xlsx sheets with a header row, tab-separated files as pandas writes them
(fields with tabs, newlines or quotes are quoted), and JSON as a list of rows or as pandas'
default {column: {row: value}}. Every prediction's expected reading is listed in
tests/import_vlm.rs.
"""

import csv
import datetime
import json
import os
import sys

import openpyxl

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
VLM = os.path.join(ROOT, "fixtures", "formats", "vlmevalkit")
WIDE = os.path.join(ROOT, "fixtures", "formats", "wide-csv")

# Six Video-MME-like questions on two videos (index, video, task_type, question, candidates,
# answer).
VIDEOMME = [
    (0, "fFjv93ACGo8", "Object Recognition", "What is the man holding?",
     ["A. a cup", "B. a knife", "C. a phone", "D. nothing"], "B"),
    (1, "fFjv93ACGo8", "Counting Problem", "How many people appear?",
     ["A. 1", "B. 2", "C. 3", "D. 4"], "C"),
    (2, "fFjv93ACGo8", "Spatial Perception", "Where does the scene take place?",
     ["A. a kitchen", "B. Tom's garage", "C. a street", "D. a park"], "B"),
    (3, "xK2pLm9QwE0", "Temporal Reasoning", "What happens after the dog jumps?",
     ["A. it runs off", "B. it sits", "C. it barks", "D. it sleeps"], "A"),
    (4, "xK2pLm9QwE0", "Attribute Perception", "What colour is the car?",
     ["A. red", "B. blue", "C. green", "D. white"], "D"),
    (5, "xK2pLm9QwE0", "Action Reasoning", "Why does the woman laugh?",
     ["A. a joke", "B. a fall", "C. a song", "D. a gift"], "A"),
]
COLUMNS = ["index", "video", "duration", "domain", "sub_category", "task_type", "question",
           "candidates", "answer", "prediction"]


def videomme_rows(predictions, candidates_as_list=False):
    rows = []
    for (index, video, task, question, cands, answer), pred in zip(VIDEOMME, predictions):
        rows.append({
            "index": index, "video": video, "duration": "short", "domain": "Knowledge",
            "sub_category": "Humanity & History", "task_type": task, "question": question,
            # pandas keeps a list column of the TSV as the list's Python text.
            "candidates": cands if candidates_as_list else repr(cands),
            "answer": answer, "prediction": pred,
        })
    return rows


def write_xlsx(path, rows, columns):
    book = openpyxl.Workbook()
    fixed = datetime.datetime(2025, 1, 1)
    book.properties.created = fixed
    book.properties.modified = fixed
    sheet = book.active
    sheet.append(columns)
    for r in rows:
        sheet.append([r.get(c) for c in columns])
    book.save(path)


def write_tsv(path, rows, columns, extra_lines=()):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow(["" if r.get(c) is None else r.get(c) for c in columns])
        for line in extra_lines:
            f.write(line + "\n")


def write_json(path, value):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=1, ensure_ascii=False)
        f.write("\n")


def columns_orient(rows, columns):
    return {c: {str(i): r.get(c) for i, r in enumerate(rows)} for c in columns}


def vlmevalkit():
    videomme = os.path.join(VLM, "videomme")
    qwen = os.path.join(videomme, "Qwen2-VL-7B-Instruct")
    os.makedirs(qwen, exist_ok=True)
    # Current names, in the model's folder as VLMEvalKit writes them.
    write_xlsx(os.path.join(qwen, "Qwen2-VL-7B-Instruct_Video-MME_8frame.xlsx"),
               videomme_rows(["B", "The answer is C.", "A", "A", None, "C"]), COLUMNS)
    write_tsv(os.path.join(qwen, "Qwen2-VL-7B-Instruct_Video-MME_64frame.tsv"),
              videomme_rows(["B", "C.\nBecause\tthree people walk in.", "B. Tom's garage",
                             "B", "D", "A"]),
              COLUMNS,
              # A row cut short, and a row without an index.
              extra_lines=["6\tfFjv93ACGo8\tshort",
                           "\tfFjv93ACGo8\tshort\tKnowledge\tx\ty\tq?\t['A. a', 'B. b']\tA\tA"])
    write_json(os.path.join(qwen, "Qwen2-VL-7B-Instruct_Video-MME_8frame_rating.json"),
               {"overall": {"overall": 0.5}})
    # Older names, and a model whose name has underscores.
    write_xlsx(os.path.join(videomme, "llava_onevision_qwen2_7b_ov_Video-MME_8frame_nopack.xlsx"),
               videomme_rows(["A", "C", "B", "(A)", "D", "Failed to obtain answer via API."]),
               COLUMNS)
    write_json(os.path.join(videomme, "llava_onevision_qwen2_7b_ov_Video-MME_64frame.json"),
               videomme_rows(["B", "C", "B", "A", "D", "B"], candidates_as_list=True))
    write_json(os.path.join(videomme, "llava_onevision_qwen2_7b_ov_Video-MME_1fps.json"),
               columns_orient(videomme_rows(["B", "C", "B", "A", "A", "A"]), COLUMNS))
    write_json(os.path.join(videomme, "summary.json"), {"note": "not a prediction file"})

    # MVBench: the answer is the text of an option, options are not labelled.
    mvbench = os.path.join(VLM, "mvbench")
    os.makedirs(mvbench, exist_ok=True)
    mv_columns = ["index", "question_id", "task_type", "video", "question", "candidates",
                  "answer", "prediction"]
    mv = [
        ("action_antonym_0", "Action Antonym", "v0.mp4", "What does the man do?",
         ["The man sits down.", "The man stands up.", "not sure"], "The man stands up.",
         "(B) The man stands up."),
        ("action_count_1", "Action Count", "v1.mp4", "How many times does he jump?",
         ["3", "4", "5"], "5", "5"),
        ("object_shuffle_2", "Object Shuffle", "v2.mp4", "Where is the ball?",
         ["left", "middle", "right"], "left", "The answer is (C) right"),
        ("scene_transition_3", "Scene Transition", "v3.mp4", "How does the scene change?",
         ["From the beach to a city.", "From a forest to a river."],
         "From a forest to a river.", "From a forest to a river"),
        ("unanswerable_4", "Action Count", "v4.mp4", "?", ["x", "y"], "z", "A"),
    ]
    rows = [
        {"index": i, "question_id": qid, "task_type": task, "video": video, "question": q,
         "candidates": repr(c), "answer": a, "prediction": p}
        for i, (qid, task, video, q, c, a, p) in enumerate(mv)
    ]
    write_tsv(os.path.join(mvbench, "Qwen2-VL-7B-Instruct_MVBench_MP4_8frame.tsv"), rows,
              mv_columns)


def wide():
    os.makedirs(WIDE, exist_ok=True)
    with open(os.path.join(WIDE, "videomme_gold.csv"), "w", newline="") as f:
        f.write("question_id,answer,duration\n"
                "001-1,B,short\n001-2,C,short\n001-3,(A),short\n002-1,D,short\n"
                "002-2,A,short\n")
    with open(os.path.join(WIDE, "Qwen2.5-VL-7B_V1_short_predictions_wide.csv"), "w",
              newline="") as f:
        f.write("question_id,textonly,16f_151k,32f_151k,64f_76k,notes\n"
                "001-1,B,B,A,B,ok\n"
                "001-2,C,,C,The answer is C,\n"
                "001-3,A,B,A,E,\n"
                "002-1,D,D,D,D,\n"
                "002-2,A,hmm,A,A,\n"
                "003-1,A,A,A,A,\n")
    # Another column order, quoted fields, CRLF line ends and a row cut short.
    with open(os.path.join(WIDE, "InternVL3-8B_V1_short_predictions_wide.csv"), "w",
              newline="") as f:
        f.write('"32f_151k",question_id,textonly,"16f_151k"\r\n'
                '"B",001-1,C,B\r\n'
                'C,001-2,C,"C"\r\n'
                'A,001-3,B,A\r\n'
                'D,002-1\r\n'
                'A,002-2,A,D\r\n')


def main():
    vlmevalkit()
    wide()
    print("wrote", os.path.relpath(VLM), "and", os.path.relpath(WIDE), file=sys.stderr)


if __name__ == "__main__":
    main()
