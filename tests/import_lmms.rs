//! `frameaudit import lmms-eval`: the committed fixtures of every lmms-eval version (and the
//! generator that writes them), every field they give, runs of several models and budgets
//! through the binary, errors, determinism, `--dry-run`, `--config`, and a round trip of the
//! real Video-MME scale grid through lmms-eval logs.
//!
//! Regenerate the fixtures with `FRAMEAUDIT_REGENERATE=1 cargo test --test import_lmms`.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{frameaudit, stderr, stdout};
use frameaudit::core::import::lmms_eval::{LmmsOptions, import};
use frameaudit::core::import::{Import, ImportError};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------
// Writing lmms-eval logs
// ---------------------------------------------------------------------------------------

/// A JSON object with its keys in the given order, as Python's `json.dumps` writes a dict.
fn obj(fields: &[(&str, Value)]) -> String {
    let body: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("{}: {}", json!(k), py(v)))
        .collect();
    format!("{{{}}}", body.join(", "))
}

/// A value as Python's `json.dumps` writes it (`", "` and `": "` separators, non-ASCII
/// kept).
fn py(v: &Value) -> String {
    match v {
        Value::Array(a) => format!("[{}]", a.iter().map(py).collect::<Vec<_>>().join(", ")),
        Value::Object(o) => format!(
            "{{{}}}",
            o.iter()
                .map(|(k, v)| format!("{}: {}", json!(k), py(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

/// A pretty JSON document with 4-space indents, as lmms-eval writes `results.json` and old
/// logs.
fn pretty(v: &Value) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(
        &mut out,
        serde_json::ser::PrettyFormatter::with_indent(b"    "),
    );
    serde::Serialize::serialize(v, &mut ser).expect("serialize");
    String::from_utf8(out).expect("utf8") + "\n"
}

/// One Video-MME question.
struct Mme {
    qid: &'static str,
    domain: &'static str,
    sub: &'static str,
    task: &'static str,
    question: &'static str,
    options: [&'static str; 4],
    answer: &'static str,
}

const MME: [Mme; 3] = [
    Mme {
        qid: "001-1",
        domain: "Knowledge",
        sub: "Humanity & History",
        task: "Counting Problem",
        question: "How many people appear in the video?",
        options: ["A. One.", "B. Two.", "C. Three.", "D. Four."],
        answer: "C",
    },
    Mme {
        qid: "001-2",
        domain: "Knowledge",
        sub: "Humanity & History",
        task: "Object Recognition",
        question: "What is the man holding?",
        options: ["A. A cup.", "B. A knife.", "C. A phone.", "D. Nothing."],
        answer: "B",
    },
    Mme {
        qid: "002-1",
        domain: "Sports Competition",
        sub: "Basketball",
        task: "Action Reasoning",
        question: "Why does the crowd cheer?",
        options: ["A. A goal.", "B. A foul.", "C. A timeout.", "D. A dunk."],
        answer: "D",
    },
];

const DOC_HASH: &str = "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b";

fn mme_prompt(q: &Mme) -> String {
    format!(
        "Select the best answer to the following multiple-choice question based on the video. Respond with only the letter (A, B, C, or D) of the correct option.\n{}\n{}\nAnswer with the option's letter from the given choices directly.",
        q.question,
        q.options.join("\n")
    )
}

fn mme_doc(q: &Mme) -> Value {
    let video = q.qid.split('-').next().unwrap_or_default();
    json!({
        "video_id": video, "duration": "short", "domain": q.domain, "sub_category": q.sub,
        "url": format!("https://www.youtube.com/watch?v=v{video}"), "videoID": format!("v{video}"),
        "question_id": q.qid, "task_type": q.task, "question": q.question,
        "options": q.options, "answer": q.answer,
    })
}

fn mme_score(q: &Mme, pred: &str) -> Value {
    json!({
        "question_id": q.qid, "duration": "short", "category": q.domain,
        "sub_category": q.sub, "task_category": q.task, "pred_answer": pred,
        "answer": q.answer,
    })
}

/// The first letter A-D of a response, as lmms-eval's videomme `extract_characters_regex`
/// finds it after stripping answer prefixes (enough for the responses used here).
fn mme_extract(resp: &str) -> String {
    resp.chars()
        .find(|c| matches!(c, 'A'..='D'))
        .map(String::from)
        .unwrap_or_default()
}

/// What changes between lmms-eval versions in a sample line.
#[derive(Clone, Copy, PartialEq)]
enum Version {
    /// v0.2.3 to v0.3: `doc`, `arguments`, `resps`.
    V03,
    /// v0.4 to v0.6: `filtered_resps` a list.
    V05,
    /// v0.7: `filtered_resps` a string, `token_counts`.
    V07,
}

fn mme_line(v: Version, doc_id: usize, q: &Mme, resp: &str) -> String {
    let mut f: Vec<(&str, Value)> = vec![("doc_id", json!(doc_id))];
    if v == Version::V03 {
        f.push(("doc", mme_doc(q)));
    }
    f.push(("target", json!(q.answer)));
    if v == Version::V03 {
        f.push((
            "arguments",
            json!([[mme_prompt(q), "{'max_new_tokens': 16, 'temperature': 0, 'top_p': 1.0, 'num_beams': 1, 'do_sample': False, 'until': ['\\n\\n']}", "<function videomme_doc_to_visual at 0x7f3a2c1e0ca0>", doc_id, "videomme", "test"]]),
        ));
        f.push(("resps", json!([[resp]])));
    }
    f.push((
        "filtered_resps",
        if v == Version::V07 {
            json!(resp)
        } else {
            json!([resp])
        },
    ));
    f.push(("doc_hash", json!(DOC_HASH)));
    f.push(("prompt_hash", json!(format!("{:064x}", doc_id + 7))));
    f.push(("target_hash", json!(format!("{:064x}", doc_id + 11))));
    f.push((
        "videomme_perception_score",
        mme_score(q, &mme_extract(resp)),
    ));
    if v == Version::V07 {
        f.push((
            "token_counts",
            json!({"input_tokens": 6312, "output_tokens": 1}),
        ));
    }
    if v != Version::V03 {
        f.push(("input", json!(mme_prompt(q))));
    }
    obj(&f)
}

/// A v0.3+ `{date}_results.json`.
fn results_json(
    task_scores: &[(&str, &str, f64)],
    wrapper: &str,
    model_args: &str,
    date: &str,
) -> String {
    let name = model_args
        .split(',')
        .find_map(|kv| kv.strip_prefix("pretrained="))
        .unwrap_or_default();
    let results: serde_json::Map<String, Value> = task_scores
        .iter()
        .map(|(task, metric, score)| {
            (
                task.to_string(),
                json!({"alias": task, format!("{metric},none"): score, format!("{metric}_stderr,none"): "N/A"}),
            )
        })
        .collect();
    pretty(&json!({
        "results": results,
        "config": {
            "model": wrapper, "model_args": model_args, "batch_size": "1",
            "batch_sizes": [], "device": null, "use_cache": null, "limit": null,
            "bootstrap_iters": 100000, "gen_kwargs": "", "random_seed": 0,
            "numpy_seed": 1234, "torch_seed": 1234, "fewshot_seed": 1234,
        },
        "git_hash": "3b8fbc9",
        "date": date,
        "model_source": wrapper,
        "model_name": name,
        "model_name_sanitized": name.replace('/', "__"),
        "system_instruction": null,
        "chat_template": null,
    }))
}

fn mme_task_score(preds: &[&str]) -> f64 {
    let right = MME
        .iter()
        .zip(preds)
        .filter(|(q, p)| mme_extract(p) == q.answer)
        .count();
    100.0 * right as f64 / MME.len() as f64
}

/// The fixtures: (path under fixtures/formats/lmms-eval, content).
fn fixtures() -> Vec<(String, String)> {
    let mut out = Vec::new();

    // <= 0.2.2: one folder per invocation, `results.json` and `{task}.json` with `logs`.
    let dir = "v0.2.2/0615_1015_llava_ov_llava_onevision_model_args_5f1c2e";
    let args_022 = "pretrained=lmms-lab/llava-onevision-qwen2-0.5b-ov,conv_template=qwen_1_5,model_name=llava_qwen,max_frames_num=8";
    let preds_022 = ["C", "A.", "D"];
    let task_config = json!({
        "task": "videomme", "dataset_path": "lmms-lab/Video-MME",
        "dataset_kwargs": {"token": true, "cache_dir": "videomme", "video": true},
        "test_split": "test", "output_type": "generate_until",
        "doc_to_visual": "<function videomme_doc_to_visual at 0x7f3a2c1e0ca0>",
        "doc_to_text": "<function videomme_doc_to_text at 0x7f3a2c1e0d30>",
        "doc_to_target": "answer",
        "generation_kwargs": {"max_new_tokens": 16, "temperature": 0, "top_p": 1.0, "num_beams": 1, "do_sample": false},
        "metric_list": [{"metric": "videomme_perception_score", "aggregation": "<function videomme_aggregate_results at 0x7f3a2c1e0e50>", "higher_is_better": true}],
    });
    out.push((
        format!("{dir}/results.json"),
        pretty(&json!({
            "results": {"videomme": {"videomme_perception_score,none": mme_task_score(&preds_022), "videomme_perception_score_stderr,none": "N/A", "alias": "videomme"}},
            "configs": {"videomme": task_config},
            "versions": {"videomme": "Yaml"},
            "n-shot": {"videomme": 0},
            "config": {"model": "llava_onevision", "model_args": args_022, "batch_size": "1", "device": null, "limit": null, "bootstrap_iters": 100000, "gen_kwargs": ""},
            "git_hash": "e5ee2a8",
            "date": "0615_1015",
        })),
    ));
    let logs: Vec<Value> = MME
        .iter()
        .zip(preds_022)
        .enumerate()
        .map(|(i, (q, p))| {
            json!({
                "doc_id": i, "doc": mme_doc(q), "target": q.answer,
                "arguments": [[mme_prompt(q), "{'max_new_tokens': 16}", "<function videomme_doc_to_visual at 0x7f3a2c1e0ca0>", i, "videomme", "test"]],
                "resps": [[p]], "filtered_resps": [p],
                "videomme_perception_score": mme_score(q, &mme_extract(p)),
            })
        })
        .collect();
    out.push((
        format!("{dir}/videomme.json"),
        pretty(&json!({
            "args": {
                "config": "", "model": "llava_onevision", "tasks": "videomme",
                "model_args": args_022, "num_fewshot": null, "batch_size": 1, "device": null,
                "output_path": "./logs/", "limit": null, "log_samples": true,
                "log_samples_suffix": "llava_ov", "gen_kwargs": "", "verbosity": "INFO",
                "timezone": "Asia/Singapore",
            },
            "model_configs": task_config,
            "logs": logs,
            "time": "0615_1015",
        })),
    ));

    // 0.3: `doc`, `arguments`, `resps` on every line; lines out of doc order.
    let dir = "v0.3/lmms-lab__llava-onevision-qwen2-7b-ov";
    let args_03 = "pretrained=lmms-lab/llava-onevision-qwen2-7b-ov,conv_template=qwen_1_5,model_name=llava_qwen,max_frames_num=16";
    let preds_03 = ["The answer is C.", "B", "(A) A goal."];
    out.push((
        format!("{dir}/20240901_101010_results.json"),
        results_json(
            &[(
                "videomme",
                "videomme_perception_score",
                mme_task_score(&preds_03),
            )],
            "llava_onevision",
            args_03,
            "20240901_101010",
        ),
    ));
    let lines: Vec<String> = [2, 0, 1]
        .iter()
        .map(|&i| mme_line(Version::V03, i, &MME[i], preds_03[i]))
        .collect();
    out.push((
        format!("{dir}/20240901_101010_samples_videomme.jsonl"),
        lines.join("\n") + "\n",
    ));

    // 0.4 to 0.6: every task the importer knows, an unknown one, and bad lines.
    let dir = "v0.5/lmms-lab__LLaVA-Video-7B-Qwen2";
    let date = "20250110_093000";
    let args_05 = "pretrained=lmms-lab/LLaVA-Video-7B-Qwen2,conv_template=qwen_1_5,max_frames_num=32,mm_spatial_pool_mode=average";
    let preds_05 = ["C", "D", "D"];
    out.push((
        format!("{dir}/{date}_results.json"),
        results_json(
            &[
                ("egoschema_subset", "score", 0.5),
                ("longvideobench_val_v", "lvb_acc", 0.5),
                ("mlvu_dev", "mlvu_percetion_score", 66.7),
                ("mvbench_action_sequence", "mvbench_accuracy", 50.0),
                ("nextqa_mc_test", "exact_match", 0.5),
                ("tempcompass_multi_choice", "avg_accuracy", 50.0),
                ("tempcompass_yes_no", "avg_accuracy", 100.0),
                (
                    "videomme",
                    "videomme_perception_score",
                    mme_task_score(&preds_05),
                ),
            ],
            "llava_vid",
            args_05,
            date,
        ),
    ));
    let mut mme: Vec<String> = [1, 0, 2]
        .iter()
        .map(|&i| mme_line(Version::V05, i, &MME[i], preds_05[i]))
        .collect();
    // The same document twice (a resumed run), a line cut short, a blank line, a line that
    // is not an object, a metric dict without its id, and a line without the metric dict.
    mme.insert(2, mme_line(Version::V05, 0, &MME[0], "A"));
    mme.push(mme_line(Version::V05, 2, &MME[2], "D")[..120].to_string());
    mme.push(String::new());
    mme.push("[1, 2]".into());
    mme.push(obj(&[
        ("doc_id", json!(3)),
        ("target", json!("A")),
        ("filtered_resps", json!(["A"])),
        (
            "videomme_perception_score",
            json!({"pred_answer": "A", "answer": "A"}),
        ),
    ]));
    mme.push(obj(&[
        ("doc_id", json!(4)),
        ("target", json!("B")),
        ("filtered_resps", json!(["B"])),
    ]));
    out.push((
        format!("{dir}/{date}_samples_videomme.jsonl"),
        mme.join("\n") + "\n",
    ));
    let mv = [
        obj(&[
            ("doc_id", json!(0)),
            ("target", json!("(B) Took the cup.")),
            ("filtered_resps", json!(["(B) Took the cup."])),
            ("doc_hash", json!(DOC_HASH)),
            (
                "mvbench_accuracy",
                json!({"pred_answer": "(B) Took the cup.", "gt_answer": "B", "score": 1}),
            ),
            (
                "input",
                json!(
                    "Question:What did the person do first?\nOption:\nA. Put down the phone.\nB. Took the cup.\nC. Opened the door.\nOnly give the best option."
                ),
            ),
        ]),
        obj(&[
            ("doc_id", json!(1)),
            ("target", json!("(A) Sat on the bed.")),
            ("filtered_resps", json!(["Best option: (C)"])),
            ("doc_hash", json!(DOC_HASH)),
            (
                "mvbench_accuracy",
                json!({"pred_answer": "Best option: (C)", "gt_answer": "A", "score": 0}),
            ),
            (
                "input",
                json!(
                    "Question:What did the person do after washing?\nOption:\nA. Sat on the bed.\nB. Ate.\nC. Left.\nOnly give the best option."
                ),
            ),
        ]),
    ];
    out.push((
        format!("{dir}/{date}_samples_mvbench_action_sequence.jsonl"),
        mv.join("\n") + "\n",
    ));
    let lvb = [
        obj(&[
            ("doc_id", json!(0)),
            ("target", json!("3")),
            ("filtered_resps", json!(["D"])),
            ("doc_hash", json!(DOC_HASH)),
            (
                "lvb_acc",
                json!({"id": "86CxyhFV9MI_0", "duration_group": 600, "question_category": "TOS", "answer": "D", "parsed_pred": "D"}),
            ),
            ("submission", json!({"86CxyhFV9MI_0": "D"})),
            ("input", json!("...")),
        ]),
        obj(&[
            ("doc_id", json!(1)),
            ("target", json!("0")),
            ("filtered_resps", json!(["E. The red car."])),
            ("doc_hash", json!(DOC_HASH)),
            (
                "lvb_acc",
                json!({"id": "nHrJ3nt-Rbc_1", "duration_group": 15, "question_category": "S2E", "answer": "A", "parsed_pred": "E"}),
            ),
            ("submission", json!({"nHrJ3nt-Rbc_1": "E. The red car."})),
            ("input", json!("...")),
        ]),
    ];
    out.push((
        format!("{dir}/{date}_samples_longvideobench_val_v.jsonl"),
        lvb.join("\n") + "\n",
    ));
    let mlvu_line = |doc: usize, q: &str, task: &str, pred: &str, answer: &str| {
        obj(&[
            ("doc_id", json!(doc)),
            ("target", json!(answer)),
            ("filtered_resps", json!([format!("({pred}) ...")])),
            ("doc_hash", json!(DOC_HASH)),
            (
                "mlvu_percetion_score",
                json!({"question_id": q, "task_type": task, "pred_answer": pred, "answer": answer}),
            ),
            ("input", json!(q)),
        ])
    };
    let mlvu = [
        mlvu_line(
            0,
            "What is the main background of the video?",
            "topic_reasoning",
            "A",
            "A",
        ),
        mlvu_line(1, "How many times does the dog jump?", "count", "B", "C"),
        mlvu_line(
            2,
            "What is the main background of the video?",
            "topic_reasoning",
            "D",
            "D",
        ),
    ];
    out.push((
        format!("{dir}/{date}_samples_mlvu_dev.jsonl"),
        mlvu.join("\n") + "\n",
    ));
    let ego = [
        obj(&[
            ("doc_id", json!(0)),
            ("target", json!("1")),
            ("filtered_resps", json!(["B."])),
            ("doc_hash", json!(DOC_HASH)),
            (
                "submission",
                json!({"001934bb-81bd-4cd8-a574-0472ef3f6678": 1}),
            ),
            ("score", json!({"pred": 1, "ground_truth": "1"})),
            ("input", json!("...")),
        ]),
        obj(&[
            ("doc_id", json!(1)),
            ("target", json!("4")),
            ("filtered_resps", json!(["I cannot tell."])),
            ("doc_hash", json!(DOC_HASH)),
            (
                "submission",
                json!({"00b9a0de-c59e-49cb-a127-6081e2fb8c8e": -1}),
            ),
            ("score", json!({"pred": -1, "ground_truth": "4"})),
            ("input", json!("...")),
        ]),
    ];
    out.push((
        format!("{dir}/{date}_samples_egoschema_subset.jsonl"),
        ego.join("\n") + "\n",
    ));
    let tc = |doc: usize, video: &str, q: &str, gt: &str, pred: &str, rating: i64, dim: &str| {
        let m = json!({"video_id": video, "question": q, "gt-answer": gt, "video-llm-prediction": pred, "match_success": true, "rating": rating, "dim": dim});
        let per_dim = format!("{dim}_accuracy");
        obj(&[
            ("doc_id", json!(doc)),
            ("target", json!(gt)),
            ("filtered_resps", json!([pred])),
            ("doc_hash", json!(DOC_HASH)),
            ("avg_accuracy", m.clone()),
            (per_dim.as_str(), m),
            ("input", json!(q)),
        ])
    };
    let tc_mc = [
        tc(
            0,
            "1006742451",
            "In which direction is the car moving?\nA. left\nB. right\nC. towards the camera\nD. away from the camera",
            "B. right",
            "B. right",
            1,
            "direction",
        ),
        tc(
            1,
            "1006742451",
            "How fast is the car moving?\nA. slowly\nB. fast",
            "A. slowly",
            "B",
            0,
            "speed",
        ),
    ];
    out.push((
        format!("{dir}/{date}_samples_tempcompass_multi_choice.jsonl"),
        tc_mc.join("\n") + "\n",
    ));
    let tc_yn = [tc(
        0,
        "1006742451",
        "Is the car moving to the right?",
        "yes",
        "Yes, it is.",
        1,
        "direction",
    )];
    out.push((
        format!("{dir}/{date}_samples_tempcompass_yes_no.jsonl"),
        tc_yn.join("\n") + "\n",
    ));
    let nextqa = [
        obj(&[
            ("doc_id", json!(0)),
            ("target", json!("B")),
            ("filtered_resps", json!(["B. he is cooking"])),
            ("doc_hash", json!(DOC_HASH)),
            ("exact_match", json!(1.0)),
            ("input", json!("...")),
        ]),
        obj(&[
            ("doc_id", json!(1)),
            ("target", json!("E")),
            ("filtered_resps", json!(["The answer is (e)."])),
            ("doc_hash", json!(DOC_HASH)),
            ("exact_match", json!(0.0)),
            ("input", json!("...")),
        ]),
    ];
    out.push((
        format!("{dir}/{date}_samples_nextqa_mc_test.jsonl"),
        nextqa.join("\n") + "\n",
    ));

    // 0.7: `filtered_resps` a string, `token_counts`; a resolution in model_args.
    let dir = "v0.7/Qwen__Qwen2.5-VL-7B-Instruct";
    let date = "20250620_120000";
    let args_07 = "pretrained=Qwen/Qwen2.5-VL-7B-Instruct,max_pixels=151200,max_num_frames=64,attn_implementation=flash_attention_2";
    let preds_07 = ["C", "The man holds a knife, so B.", "D"];
    out.push((
        format!("{dir}/{date}_results.json"),
        results_json(
            &[(
                "videomme",
                "videomme_perception_score",
                mme_task_score(&preds_07),
            )],
            "qwen2_5_vl",
            args_07,
            date,
        ),
    ));
    let lines: Vec<String> = (0..3)
        .map(|i| mme_line(Version::V07, i, &MME[i], preds_07[i]))
        .collect();
    out.push((
        format!("{dir}/{date}_samples_videomme.jsonl"),
        lines.join("\n") + "\n",
    ));
    out
}

fn fixture_root() -> PathBuf {
    common::repo().join("fixtures/formats/lmms-eval")
}

#[test]
fn committed_fixtures_are_what_the_generator_writes() {
    let regenerate = std::env::var_os("FRAMEAUDIT_REGENERATE").is_some();
    let mut total = 0;
    for (rel, content) in fixtures() {
        let path = fixture_root().join(&rel);
        total += content.len();
        if regenerate {
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, &content).expect("write");
        }
        let committed = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}; regenerate the fixtures", path.display()));
        assert!(
            committed == content,
            "{} differs from its generator; regenerate the fixtures",
            path.display()
        );
    }
    assert!(total < 200_000, "fixtures are {total} bytes");
}

// ---------------------------------------------------------------------------------------
// Importing
// ---------------------------------------------------------------------------------------

struct Imported {
    imp: Import,
    cells: Vec<Value>,
    items: Vec<Value>,
    dataset: Value,
}

fn import_paths(paths: &[PathBuf], overrides: &[(&str, &Path)]) -> Result<Imported, ImportError> {
    let mut imp = Import::default();
    let opts = LmmsOptions {
        overrides: overrides
            .iter()
            .map(|(l, p)| (l.to_string(), p.to_path_buf()))
            .collect(),
        docs: Vec::new(),
    };
    let lines = std::cell::Cell::new(0u64);
    import(paths, &opts, &mut imp, &|n| lines.set(lines.get() + n))?;
    let out = tempfile::tempdir().expect("tmp");
    imp.write(out.path(), "t").expect("write");
    let read_lines = |f: &str| -> Vec<Value> {
        std::fs::read_to_string(out.path().join(f))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("json line"))
            .collect()
    };
    Ok(Imported {
        cells: read_lines("cells.jsonl"),
        items: read_lines("items.jsonl"),
        dataset: common::read_json(&out.path().join("dataset.json")),
        imp,
    })
}

/// (model, benchmark, configuration, rule) of each run `dataset.json` records.
fn runs(r: &Imported) -> Vec<(String, String, String, Value)> {
    r.dataset["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|x| {
            let s = |k: &str| x[k].as_str().unwrap_or_default().to_string();
            (s("model"), s("benchmark"), s("config"), x["rule"].clone())
        })
        .collect()
}

fn import_fixture(version: &str) -> Imported {
    import_paths(&[fixture_root().join(version)], &[]).expect("import")
}

/// A Video-MME cell as the fixtures give it.
fn mme_cell(
    model: &str,
    config: &str,
    frames: u64,
    q: usize,
    pred: Option<&str>,
    tag: &str,
) -> Value {
    let mut c = json!({
        "model": model, "benchmark": "videomme", "item_id": MME[q].qid, "config": config,
        "frames": frames, "gold": MME[q].answer, "source_tag": tag,
    });
    if let Some(p) = pred {
        c["pred"] = json!(p);
    }
    c
}

/// A Video-MME item as a log with (`full`) or without `doc` describes it.
fn mme_item(q: usize) -> Value {
    let m = &MME[q];
    json!({
        "gold": m.answer, "video": m.qid.split('-').next(), "category": m.domain,
        "task_type": m.task, "benchmark": "videomme", "item_id": m.qid,
        "question": m.question, "options": m.options,
    })
}

#[test]
fn v0_2_2_logs_array() {
    let r = import_fixture("v0.2.2");
    let m = "lmms-lab__llava-onevision-qwen2-0.5b-ov";
    let tag = "0615_1015_llava_ov_llava_onevision_model_args_5f1c2e";
    assert_eq!(
        r.cells,
        vec![
            mme_cell(m, "8f", 8, 0, Some("C"), tag),
            mme_cell(m, "8f", 8, 1, Some("A"), tag),
            mme_cell(m, "8f", 8, 2, Some("D"), tag),
        ]
    );
    assert_eq!(r.items, (0..3).map(mme_item).collect::<Vec<_>>());
    // llava_onevision takes np.linspace(0, T-1, N) frames.
    assert_eq!(
        runs(&r),
        [(
            m.to_string(),
            "videomme".into(),
            "8f".into(),
            json!({"kind": "policy", "policy": "linspace", "n": 8})
        )]
    );
    assert!(r.imp.skipped.is_empty());
}

#[test]
fn v0_3_lines_with_doc_out_of_order() {
    let r = import_fixture("v0.3");
    let m = "lmms-lab__llava-onevision-qwen2-7b-ov";
    let tag = "20240901_101010";
    assert_eq!(
        r.cells,
        vec![
            mme_cell(m, "16f", 16, 0, Some("C"), tag),
            mme_cell(m, "16f", 16, 1, Some("B"), tag),
            mme_cell(m, "16f", 16, 2, Some("A"), tag),
        ]
    );
    assert_eq!(r.items, (0..3).map(mme_item).collect::<Vec<_>>());
    assert_eq!(
        runs(&r),
        [(
            m.to_string(),
            "videomme".into(),
            "16f".into(),
            json!({"kind": "policy", "policy": "linspace", "n": 16})
        )]
    );
    assert_eq!(r.imp.summary().skipped, 0);
}

#[test]
fn v0_7_flat_responses_and_resolution_label() {
    let r = import_fixture("v0.7");
    let m = "Qwen__Qwen2.5-VL-7B-Instruct";
    let tag = "20250620_120000";
    assert_eq!(
        r.cells,
        vec![
            mme_cell(m, "64f_151k", 64, 0, Some("C"), tag),
            // lmms-eval's parse of "The man holds a knife, so B." is kept as it is.
            mme_cell(m, "64f_151k", 64, 1, Some("B"), tag),
            mme_cell(m, "64f_151k", 64, 2, Some("D"), tag),
        ]
    );
    // 0.7 logs no document, but its prompt holds the question and options.
    assert_eq!(r.items, (0..3).map(mme_item).collect::<Vec<_>>());
    // qwen2_5_vl resolves to the chat class in 0.7: an even frame count, qwen_vl_utils'
    // rounded linspace.
    let rules = runs(&r);
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].3["kind"], "qwen_nframes", "{:?}", rules[0]);
    assert_eq!(rules[0].3["n"], 64);
    assert_eq!(rules[0].3["cap"], "even_min2");
}

#[test]
fn v0_5_every_task_and_bad_lines() {
    let r = import_fixture("v0.5");
    let m = "lmms-lab__LLaVA-Video-7B-Qwen2";
    let d = "20250110_093000_samples_";
    let cell = |bench: &str,
                item: &str,
                pred: Option<&str>,
                gold: Option<&str>,
                correct: Option<bool>| {
        let mut c =
            json!({"model": m, "benchmark": bench, "item_id": item, "config": "32f", "frames": 32});
        if let Some(p) = pred {
            c["pred"] = json!(p);
        }
        if let Some(g) = gold {
            c["gold"] = json!(g);
        }
        if let Some(k) = correct {
            c["correct"] = json!(k);
        }
        c["source_tag"] = json!("20250110_093000");
        c
    };
    let want = vec![
        cell(
            "egoschema_subset",
            "001934bb-81bd-4cd8-a574-0472ef3f6678",
            Some("B"),
            Some("B"),
            None,
        ),
        cell(
            "egoschema_subset",
            "00b9a0de-c59e-49cb-a127-6081e2fb8c8e",
            None,
            Some("E"),
            None,
        ),
        cell(
            "longvideobench_val_v",
            "86CxyhFV9MI_0",
            Some("D"),
            Some("D"),
            None,
        ),
        cell(
            "longvideobench_val_v",
            "nHrJ3nt-Rbc_1",
            Some("E"),
            Some("A"),
            None,
        ),
        cell(
            "mlvu_dev",
            "How many times does the dog jump?",
            Some("B"),
            Some("C"),
            None,
        ),
        cell(
            "mlvu_dev",
            "What is the main background of the video?#0",
            Some("A"),
            Some("A"),
            None,
        ),
        cell(
            "mlvu_dev",
            "What is the main background of the video?#2",
            Some("D"),
            Some("D"),
            None,
        ),
        cell(
            "mvbench_action_sequence",
            "0",
            Some("B"),
            Some("B"),
            Some(true),
        ),
        cell(
            "mvbench_action_sequence",
            "1",
            Some("C"),
            Some("A"),
            Some(false),
        ),
        cell("nextqa_mc_test", "0", Some("B"), Some("B"), None),
        cell("nextqa_mc_test", "1", Some("E"), Some("E"), None),
        cell(
            "tempcompass_multi_choice",
            "1006742451: How fast is the car moving? A. slowly B. fast",
            Some("B"),
            Some("A"),
            Some(false),
        ),
        cell(
            "tempcompass_multi_choice",
            "1006742451: In which direction is the car moving? A. left B. right C. towards the camera D. away from the camera",
            Some("B"),
            Some("B"),
            Some(true),
        ),
        cell(
            "tempcompass_yes_no",
            "1006742451: Is the car moving to the right?",
            Some("yes"),
            Some("yes"),
            Some(true),
        ),
        // The duplicate of doc 0 (pred A) is dropped: the first line of a document counts.
        mme_cell(m, "32f", 32, 0, Some("C"), "20250110_093000"),
        mme_cell(m, "32f", 32, 1, Some("D"), "20250110_093000"),
        mme_cell(m, "32f", 32, 2, Some("D"), "20250110_093000"),
    ];
    assert_eq!(r.cells, want);
    assert_eq!(r.imp.summary().duplicates, 1);
    let skipped: Vec<(String, Option<u64>, String)> = r
        .imp
        .skipped
        .iter()
        .map(|(f, l, why)| {
            (
                f.file_name().expect("name").to_string_lossy().into_owned(),
                *l,
                why.clone(),
            )
        })
        .collect();
    let file = format!("{d}videomme.jsonl");
    assert_eq!(
        skipped,
        vec![
            (
                file.clone(),
                Some(5),
                "line cut short (JSON ends early)".to_string()
            ),
            (
                file.clone(),
                Some(7),
                "line is not a JSON object".to_string()
            ),
            (
                file.clone(),
                Some(8),
                "videomme_perception_score has no question_id".to_string()
            ),
            (
                file.clone(),
                Some(9),
                "field `videomme_perception_score`: missing or not an object, where the task's other samples carry their scores in it".to_string()
            ),
        ]
    );
    // The summary lists the reasons as often met, then in the file's order.
    let places: Vec<String> = r
        .imp
        .skip_reasons()
        .into_iter()
        .map(|(_, n, at)| format!("{n} {}", at.rsplit(':').next().unwrap_or_default()))
        .collect();
    assert_eq!(places, ["1 5", "1 7", "1 8", "1 9"]);
    let warnings = r.imp.warnings.join("\n");
    assert!(
        warnings.contains("task \"nextqa_mc_test\" is unknown"),
        "{warnings}"
    );
    assert!(
        warnings.contains("task \"mlvu_dev\": 1 item ids are shared"),
        "{warnings}"
    );
    assert!(
        warnings.contains(
            "the logs of longvideobench_val_v (2 items), mlvu_dev (3 items), \
             mvbench_action_sequence (2 items), nextqa_mc_test (2 items) name no video"
        ),
        "{warnings}"
    );
    assert!(
        warnings.contains("(--docs), but none was given"),
        "{warnings}"
    );
    assert_eq!(r.imp.warnings.len(), 3, "{warnings}");
    let item = |bench: &str, id: &str| {
        r.items
            .iter()
            .find(|i| i["benchmark"] == bench && i["item_id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no item {bench}/{id}"))
    };
    assert_eq!(
        item("egoschema_subset", "00b9a0de-c59e-49cb-a127-6081e2fb8c8e"),
        json!({"gold": "E", "video": "00b9a0de-c59e-49cb-a127-6081e2fb8c8e", "benchmark": "egoschema_subset", "item_id": "00b9a0de-c59e-49cb-a127-6081e2fb8c8e"})
    );
    assert_eq!(
        item("longvideobench_val_v", "nHrJ3nt-Rbc_1"),
        json!({"gold": "A", "category": "S2E", "benchmark": "longvideobench_val_v", "item_id": "nHrJ3nt-Rbc_1"})
    );
    assert_eq!(
        item("mlvu_dev", "What is the main background of the video?#2"),
        json!({"question": "What is the main background of the video?", "gold": "D", "task_type": "topic_reasoning", "benchmark": "mlvu_dev", "item_id": "What is the main background of the video?#2"})
    );
    assert_eq!(
        item("mvbench_action_sequence", "1"),
        json!({"question": "What did the person do after washing?", "options": ["A. Sat on the bed.", "B. Ate.", "C. Left."], "gold": "A", "benchmark": "mvbench_action_sequence", "item_id": "1"})
    );
    assert_eq!(
        item("nextqa_mc_test", "1"),
        json!({"gold": "E", "benchmark": "nextqa_mc_test", "item_id": "1"})
    );
    assert_eq!(
        item(
            "tempcompass_yes_no",
            "1006742451: Is the car moving to the right?"
        ),
        json!({"question": "Is the car moving to the right?", "gold": "yes", "video": "1006742451", "category": "direction", "benchmark": "tempcompass_yes_no", "item_id": "1006742451: Is the car moving to the right?"})
    );
    assert_eq!(item("videomme", "001-1"), mme_item(0));
    // Every item with a cell is described, so `validate` has nothing to say about items.
    assert_eq!(r.items.len(), 17);
}

#[test]
fn the_old_layout_finds_its_budget_in_results_json() {
    let tmp = tempfile::tempdir().expect("tmp");
    let src = fixture_root().join("v0.2.2/0615_1015_llava_ov_llava_onevision_model_args_5f1c2e");
    let dir = tmp.path().join("run");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::copy(src.join("results.json"), dir.join("results.json")).expect("copy");
    let mut log: Value = common::read_json(&src.join("videomme.json"));
    log.as_object_mut().expect("object").remove("args");
    std::fs::write(dir.join("videomme.json"), pretty(&log)).expect("write");
    let r = import_paths(std::slice::from_ref(&dir), &[]).expect("import");
    assert_eq!(r.cells.len(), 3);
    assert_eq!(r.cells[0]["config"], "8f");
    assert_eq!(
        r.cells[0]["model"],
        "lmms-lab__llava-onevision-qwen2-0.5b-ov"
    );
    // Without it, the run has no budget.
    std::fs::remove_file(dir.join("results.json")).expect("rm");
    let err = import_paths(std::slice::from_ref(&dir), &[])
        .err()
        .expect("no budget")
        .to_string();
    assert!(err.contains("videomme.json: no frame budget"), "{err}");
    assert!(err.contains("--config 32f="), "{err}");
}

#[test]
fn a_run_without_budget_names_the_file_and_the_fix() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("m");
    write_run(
        &dir,
        "20250101_000000",
        "mystery_vid",
        "pretrained=org/m,conv_template=x",
        &["C", "B", "D"],
    );
    let err = import_paths(&[tmp.path().to_path_buf()], &[])
        .err()
        .expect("error")
        .to_string();
    assert!(
        err.contains("20250101_000000_samples_videomme.jsonl: no frame budget"),
        "{err}"
    );
    assert!(
        err.contains(
            "20250101_000000_results.json's config.model_args (pretrained=org/m,conv_template=x)"
        ),
        "{err}"
    );
    assert!(err.contains("pass --config LABEL=PATH"), "{err}");
    // A samples file without its results file.
    std::fs::remove_file(dir.join("20250101_000000_results.json")).expect("rm");
    let err = import_paths(&[tmp.path().to_path_buf()], &[])
        .err()
        .expect("error")
        .to_string();
    assert!(
        err.contains("has no results file of the same date beside it"),
        "{err}"
    );
    // --config fixes both.
    let r = import_paths(&[tmp.path().to_path_buf()], &[("24f", &dir)]).expect("import");
    assert_eq!(r.cells[0]["config"], "24f");
    assert_eq!(r.cells[0]["frames"], 24);
    assert_eq!(r.cells[0]["model"], "m");
}

// ---------------------------------------------------------------------------------------
// Through the binary
// ---------------------------------------------------------------------------------------

/// Writes one v0.5-style Video-MME run: `{dir}/{date}_results.json` and its samples.
fn write_run(dir: &Path, date: &str, wrapper: &str, model_args: &str, preds: &[&str; 3]) {
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::write(
        dir.join(format!("{date}_results.json")),
        results_json(
            &[(
                "videomme",
                "videomme_perception_score",
                mme_task_score(preds),
            )],
            wrapper,
            model_args,
            date,
        ),
    )
    .expect("write");
    let lines: Vec<String> = (0..3)
        .map(|i| mme_line(Version::V05, i, &MME[i], preds[i]))
        .collect();
    std::fs::write(
        dir.join(format!("{date}_samples_videomme.jsonl")),
        lines.join("\n") + "\n",
    )
    .expect("write");
}

/// Two models, three budgets each, in one output folder.
fn two_models(root: &Path) {
    // Item 001-1 is right at 8f, wrong at 16f: a harmful transition to audit.
    let preds = [["C", "B", "A"], ["A", "B", "D"], ["C", "B", "D"]];
    for (m, (wrapper, org)) in [
        ("llava_onevision", "lmms-lab/ov-7b"),
        ("qwen2_vl", "Qwen/vl-7b"),
    ]
    .into_iter()
    .enumerate()
    {
        let dir = root.join(org.replace('/', "__"));
        for (k, frames) in [8, 16, 32].into_iter().enumerate() {
            let key = if m == 0 {
                "max_frames_num"
            } else {
                "max_num_frames"
            };
            write_run(
                &dir,
                &format!("2025010{}_1{k}0000", m + 1),
                wrapper,
                &format!("pretrained={org},{key}={frames}"),
                &preds[k],
            );
        }
    }
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn two_models_three_budgets_import_validate_report() {
    let tmp = tempfile::tempdir().expect("tmp");
    let logs = tmp.path().join("logs");
    two_models(&logs);
    let out = tmp.path().join("ds");
    let o = frameaudit(&["import", "lmms-eval", &s(&logs), "-o", &s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("lmms-eval runs: 6 runs, 2 models, 3 configurations, 3 items, 18 cells; 0 records skipped, 0 duplicates"),
        "{err}"
    );
    let v = frameaudit(&["validate", &s(&out)]);
    assert!(v.status.success(), "{}{}", stdout(&v), stderr(&v));
    let rep = frameaudit(&["report", &s(&out), "--json"]);
    assert!(rep.status.success(), "{}", stderr(&rep));
    let r: Value = serde_json::from_slice(&rep.stdout).expect("json");
    assert_eq!(
        r["input"]["models"],
        json!(["Qwen__vl-7b", "lmms-lab__ov-7b"])
    );
    let a = r["analyses"]
        .as_array()
        .expect("analyses")
        .iter()
        .find(|a| a["scope"] == "videomme")
        .expect("videomme analysis");
    for m in ["Qwen__vl-7b", "lmms-lab__ov-7b"] {
        assert_eq!(
            a["models"][m]["grid"]["configs"],
            json!(["8f", "16f", "32f"]),
            "{m}"
        );
        assert_eq!(a["models"][m]["correct_counts"], json!([2, 2, 3]), "{m}");
    }

    // The same inputs give the same bytes (the dataset is named after its folder).
    let again = tmp.path().join("again/ds");
    let o = frameaudit(&["import", "lmms-eval", &s(&logs), "-o", &s(&again)]);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in ["cells.jsonl", "items.jsonl", "dataset.json"] {
        assert_eq!(
            std::fs::read(out.join(f)).expect("first"),
            std::fs::read(again.join(f)).expect("second"),
            "{f}"
        );
    }

    // Then the audit opens on it, in a terminal, with the logs' questions.
    if !common::tmux::tmux_available() {
        return;
    }
    let t = common::tmux::Tmux::start(&format!("fa-import-{}", std::process::id()), &out, "me");
    let q = t.wait_for("audit queue");
    assert!(q.contains("2 models · 3 configs · 3 items"), "{q}");
    assert!(q.contains("audit queue: 2 of 2"), "{q}");
    t.keys(&["Enter"]);
    let item = t.wait_for("trajectory");
    // v0.5 samples carry no `doc`; the question and options come from the logged prompt.
    assert!(item.contains("videomme · 001-1"), "{item}");
    assert!(
        item.contains("Q How many people appear in the video?"),
        "{item}"
    );
    assert!(item.contains("A. One.   B. Two."), "{item}");
    assert!(item.contains("gold: C"), "{item}");
    assert!(item.contains("transition 8f → 16f"), "{item}");
}

#[test]
fn dry_run_writes_nothing() {
    let tmp = tempfile::tempdir().expect("tmp");
    let logs = tmp.path().join("logs");
    two_models(&logs);
    let out = tmp.path().join("ds");
    let o = frameaudit(&[
        "import",
        "lmms-eval",
        &s(&logs),
        "-o",
        &s(&out),
        "--dry-run",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("18 cells"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("dry run: nothing written"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
}

/// A document answered twice in one samples file is a duplicate; answered differently, the
/// import also names both lines (the first kept), where it only counted them before.
#[test]
fn a_document_answered_twice_differently_is_named_by_its_lines() {
    let tmp = tempfile::tempdir().expect("tmp");
    let logs = tmp.path().join("logs");
    let dir = logs.join("Qwen__vl-7b");
    write_run(
        &dir,
        "20250101_100000",
        "qwen2_vl",
        "pretrained=Qwen/vl-7b,max_num_frames=8",
        &["C", "B", "A"],
    );
    let samples = dir.join("20250101_100000_samples_videomme.jsonl");
    let mut text = std::fs::read_to_string(&samples).expect("read");
    text.push_str(&(mme_line(Version::V05, 0, &MME[0], "D") + "\n"));
    text.push_str(&(mme_line(Version::V05, 1, &MME[1], "B") + "\n"));
    std::fs::write(&samples, text).expect("write");
    let o = frameaudit(&[
        "import",
        "lmms-eval",
        &s(&logs),
        "-o",
        &s(&tmp.path().join("ds")),
        "--dry-run",
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("3 cells; 0 records skipped, 2 duplicates"),
        "{err}"
    );
    let named: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("answered twice"))
        .collect();
    assert_eq!(named.len(), 1, "only the one answered differently: {err}");
    let at = |line: u32| format!("{}:{line}", samples.display());
    assert!(
        named[0].contains(&format!("\"C\" at {} kept", at(1)))
            && named[0].contains(&format!("\"D\" at {} dropped", at(4))),
        "{err}"
    );
}

/// Two logs of one task, model and configuration with other arguments (here a
/// `conv_template`) are two runs under one label: refused, naming both files; one of them
/// relabelled with --config is a configuration of its own.
#[test]
fn two_runs_of_one_model_and_configuration_are_an_error() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("logs/org__m");
    write_run(
        &dir,
        "20250101_100000",
        "llava_vid",
        "pretrained=org/m,max_frames_num=16",
        &["C", "B", "D"],
    );
    write_run(
        &dir,
        "20250102_100000",
        "llava_vid",
        "pretrained=org/m,max_frames_num=16,conv_template=qwen_1_5",
        &["A", "B", "D"],
    );
    let out = tmp.path().join("ds");
    let o = frameaudit(&[
        "import",
        "lmms-eval",
        &s(&tmp.path().join("logs")),
        "-o",
        &s(&out),
    ]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("20250101_100000_samples_videomme.jsonl and")
            && err.contains("20250102_100000_samples_videomme.jsonl both hold model \"org__m\" under configuration \"16f\""),
        "{err}"
    );
    assert!(!out.exists());
    // One of them relabelled with --config is a configuration of its own.
    let o = frameaudit(&[
        "import",
        "lmms-eval",
        &s(&tmp.path().join("logs")),
        "-o",
        &s(&out),
        "--config",
        &format!("16f-rerun={}", s(&dir.join("20250102_100000_results.json"))),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let cells = std::fs::read_to_string(out.join("cells.jsonl")).expect("cells");
    assert_eq!(
        cells
            .matches("\"config\":\"16f-rerun\",\"frames\":16")
            .count(),
        3,
        "{cells}"
    );
    assert_eq!(
        cells.matches("\"config\":\"16f\",\"frames\":16").count(),
        3,
        "{cells}"
    );
    assert!(!cells.contains("replicate"), "{cells}");
}

/// Logs of one task, model and configuration asked the same (wrapper and `model_args`, in
/// any order) are re-runs (issue 39): the first in path order is the canonical run, the
/// later ones replicates `rerun-1`, `rerun-2` of nuisance `rerun`, said in the summary with
/// how to import them otherwise; the report's noise floor counts their pairs.
#[test]
fn runs_asked_the_same_are_imported_as_rerun_replicates() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("logs/org__m");
    // 001-1 is right at 8f in the canonical run, wrong in the first re-run.
    for (date, args, preds) in [
        (
            "20250101_100000",
            "pretrained=org/m,max_frames_num=8",
            ["C", "B", "A"],
        ),
        (
            "20250101_110000",
            "pretrained=org/m,max_frames_num=16",
            ["A", "B", "D"],
        ),
        (
            "20250102_100000",
            "max_frames_num=8,pretrained=org/m",
            ["A", "B", "A"],
        ),
        (
            "20250103_100000",
            "pretrained=org/m,max_frames_num=8",
            ["C", "B", "A"],
        ),
    ] {
        write_run(&dir, date, "llava_vid", args, &preds);
    }
    let out = tmp.path().join("ds");
    let o = frameaudit(&[
        "import",
        "lmms-eval",
        &s(&tmp.path().join("logs")),
        "-o",
        &s(&out),
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("2 runs, 1 model, 2 configurations, 3 items, 6 cells, 6 replicate cells of 2 re-runs; 0 records skipped, 0 duplicates"),
        "{err}"
    );
    assert!(
        err.contains("20250102_100000_samples_videomme.jsonl holds model \"org__m\" under configuration \"8f\" again, asked the same as")
            && err.contains("20250101_100000_samples_videomme.jsonl: imported as replicate rerun-1 (nuisance rerun)")
            && err.contains("20250103_100000_samples_videomme.jsonl holds model")
            && err.contains("imported as replicate rerun-2")
            && err.contains("another label with --config LABEL=PATH"),
        "{err}"
    );
    let lines: Vec<Value> = std::fs::read_to_string(out.join("cells.jsonl"))
        .expect("cells")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    let reps: Vec<(String, String, String, String)> = lines
        .iter()
        .filter(|c| c.get("replicate").is_some())
        .map(|c| {
            let t = |k: &str| c[k].as_str().expect(k).to_string();
            (t("item_id"), t("config"), t("replicate"), t("pred"))
        })
        .collect();
    let rep = |i: &str, r: &str, p: &str| {
        (
            i.to_string(),
            "8f".to_string(),
            r.to_string(),
            p.to_string(),
        )
    };
    assert_eq!(
        reps,
        [
            rep("001-1", "rerun-1", "A"),
            rep("001-1", "rerun-2", "C"),
            rep("001-2", "rerun-1", "B"),
            rep("001-2", "rerun-2", "B"),
            rep("002-1", "rerun-1", "A"),
            rep("002-1", "rerun-2", "A"),
        ]
    );
    assert!(
        lines
            .iter()
            .filter(|c| c.get("replicate").is_some())
            .all(|c| c["nuisance"] == "rerun")
    );
    let r = report(&out, &[]);
    let a = r["analyses"]
        .as_array()
        .expect("analyses")
        .iter()
        .find(|a| a["scope"] == "videomme")
        .expect("videomme analysis");
    let floor = &a["models"]["org__m"]["replicates"]["floor"];
    // At 8f: 001-1 flips right to wrong in rerun-1 and stays in rerun-2; the rest agree.
    assert_eq!(floor["all"]["pairs"], json!(6), "{floor}");
    assert_eq!(floor["all"]["neg"], json!(1), "{floor}");
    assert_eq!(floor["all"]["pos"], json!(0), "{floor}");
    assert_eq!(r["input"]["replicate_cells"], json!(6));
    // The canonical cells alone make the measures.
    assert_eq!(a["models"]["org__m"]["correct_counts"], json!([2, 2]));
}

#[test]
fn config_overrides_label_and_frames() {
    let tmp = tempfile::tempdir().expect("tmp");
    let logs = tmp.path().join("logs");
    two_models(&logs);
    let qwen = logs.join("Qwen__vl-7b");
    let r = import_paths(
        std::slice::from_ref(&logs),
        &[
            ("32f-nested", &qwen.join("20250102_120000_results.json")),
            (
                "blind",
                &qwen.join("20250102_100000_samples_videomme.jsonl"),
            ),
        ],
    )
    .expect("import");
    let configs: BTreeMap<(String, String), u64> = r
        .cells
        .iter()
        .map(|c| {
            (
                (
                    c["model"].as_str().expect("m").to_string(),
                    c["config"].as_str().expect("c").to_string(),
                ),
                c["frames"].as_u64().expect("frames"),
            )
        })
        .collect();
    let want: BTreeMap<(String, String), u64> = [
        ("Qwen__vl-7b", "16f", 16),
        ("Qwen__vl-7b", "32f-nested", 32),
        ("Qwen__vl-7b", "blind", 0),
        ("lmms-lab__ov-7b", "16f", 16),
        ("lmms-lab__ov-7b", "32f", 32),
        ("lmms-lab__ov-7b", "8f", 8),
    ]
    .into_iter()
    .map(|(m, c, f)| ((m.to_string(), c.to_string()), f))
    .collect();
    assert_eq!(configs, want);
    // "blind" says 0 frames where model_args said 8: the label wins, with a warning.
    assert!(
        r.imp
            .warnings
            .iter()
            .any(|w| w.contains("--config blind says 0 frames, model_args 8")),
        "{:?}",
        r.imp.warnings
    );
    // A zero-frame configuration samples nothing.
    assert_eq!(r.dataset["configs"].get("blind"), None);
    // An override that matches nothing is reported.
    let r = import_paths(&[logs.join("lmms-lab__ov-7b")], &[("x", &qwen)]).expect("import");
    assert!(
        r.imp
            .warnings
            .iter()
            .any(|w| w.contains("matched no lmms-eval log")),
        "{:?}",
        r.imp.warnings
    );
}

#[test]
fn bad_files_do_not_stop_the_others() {
    let tmp = tempfile::tempdir().expect("tmp");
    let logs = tmp.path().join("logs");
    two_models(&logs);
    let dir = logs.join("lmms-lab__ov-7b");
    // A samples file that is not JSON at all, and an unrelated JSON file.
    std::fs::write(
        dir.join("20250101_100000_samples_mvbench_action_sequence.jsonl"),
        "\u{0}\u{1}garbage\n",
    )
    .expect("write");
    std::fs::write(dir.join("notes.json"), "{\"logs\": 3}").expect("write");
    let r = import_paths(std::slice::from_ref(&logs), &[]).expect("import");
    assert_eq!(r.cells.len(), 18);
    assert_eq!(r.imp.skipped.len(), 1, "{:?}", r.imp.skipped);
    assert_eq!(r.imp.skipped[0].1, Some(1));
}

// ---------------------------------------------------------------------------------------
// Round trip of the real Video-MME scale grid
// ---------------------------------------------------------------------------------------

/// The wrapper each released model would run under in lmms-eval.
fn wrapper_of(model: &str) -> &'static str {
    match model {
        m if m.starts_with("Qwen2.5") => "qwen2_5_vl",
        m if m.starts_with("Qwen3") => "qwen3_vl",
        m if m.starts_with("InternVL3.5") => "internvl3_5",
        m if m.starts_with("InternVL3") => "internvl3",
        _ => "llava_vid",
    }
}

/// Writes the per-item CSV as lmms-eval runs: one folder per model, one results file per
/// configuration, one samples file per split (the task is named after the split, so the
/// benchmarks stay `V1_short`/`V1_medium`). The budget is `max_frames_num` (0 for text
/// only) and the resolution `max_pixels`, so the labels (`16f_151k`, `textonly`) come back
/// without any `--config`.
fn csv_to_lmms(csv_path: &Path, root: &Path) -> usize {
    let mut rdr = csv::Reader::from_path(csv_path).expect("csv");
    // (model, config) → (frames, pixels, split → lines)
    type Runs = BTreeMap<(String, String), (u64, u64, BTreeMap<String, Vec<String>>)>;
    let mut runs: Runs = BTreeMap::new();
    let mut rows = 0;
    for rec in rdr.records() {
        let r = rec.expect("record");
        let (id, model, split, config) = (&r[0], &r[1], &r[2], &r[3]);
        let frames: u64 = r[4].parse().expect("frames");
        let pixels: u64 = r[5].parse().unwrap_or(0);
        let (pred, gold) = (&r[6], &r[7]);
        let run = runs
            .entry((model.to_string(), config.to_string()))
            .or_insert_with(|| (frames, pixels, BTreeMap::new()));
        let lines = run.2.entry(split.to_string()).or_default();
        let score = json!({
            "question_id": id, "duration": if split.ends_with("short") { "short" } else { "medium" },
            "category": "", "sub_category": "", "task_category": "",
            "pred_answer": pred, "answer": gold,
        });
        lines.push(obj(&[
            ("doc_id", json!(lines.len())),
            ("target", json!(gold)),
            ("filtered_resps", json!([pred])),
            ("doc_hash", json!(DOC_HASH)),
            ("videomme_perception_score", score),
            ("input", json!("...")),
        ]));
        rows += 1;
    }
    for (k, ((model, _), (frames, pixels, splits))) in runs.iter().enumerate() {
        let dir = root.join(model);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let date = format!("20250101_{k:06}");
        let mut args = format!("pretrained={model},max_frames_num={frames}");
        if *frames > 0 {
            args.push_str(&format!(",max_pixels={pixels}"));
        }
        let tasks: Vec<(&str, &str, f64)> = splits
            .keys()
            .map(|s| (s.as_str(), "videomme_perception_score", 0.0))
            .collect();
        std::fs::write(
            dir.join(format!("{date}_results.json")),
            results_json(&tasks, wrapper_of(model), &args, &date),
        )
        .expect("write");
        for (split, lines) in splits {
            std::fs::write(
                dir.join(format!("{date}_samples_{split}.jsonl")),
                lines.join("\n") + "\n",
            )
            .expect("write");
        }
    }
    rows
}

/// The report as JSON.
fn report(path: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["report", path.to_str().expect("utf8 path"), "--json"];
    args.extend_from_slice(extra);
    let o = frameaudit(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("json")
}

fn drop_key(v: &mut Value, key: &str) {
    match v {
        Value::Object(o) => {
            o.remove(key);
            o.values_mut().for_each(|x| drop_key(x, key));
        }
        Value::Array(a) => a.iter_mut().for_each(|x| drop_key(x, key)),
        _ => {}
    }
}

#[test]
fn round_trip_of_the_videomme_scale_grid() {
    let Some(csv) = common::real_csv() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tmp");
    let logs = tmp.path().join("logs");
    let rows = csv_to_lmms(&csv, &logs);
    let out = tmp.path().join("ds");
    let o = frameaudit(&["import", "lmms-eval", &s(&logs), "-o", &s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("{rows} cells; 0 records skipped, 0 duplicates")),
        "{}",
        stderr(&o)
    );
    let imported = report(&out, &[]);

    // lmms-eval cells carry no per-frame pixel budget, so the import is compared with the
    // CSV without its pixel_count column: then every analysis is the same.
    let text = std::fs::read_to_string(&csv).expect("csv");
    let no_pixels: String = text
        .lines()
        .map(|l| {
            let mut f: Vec<&str> = l.split(',').collect();
            if f[5] != "pixel_count" {
                f[5] = "";
            }
            f.join(",") + "\n"
        })
        .collect();
    let csv2 = tmp.path().join("per_item.csv");
    std::fs::write(&csv2, no_pixels).expect("write");
    let from_csv = report(&csv2, &[]);
    assert_eq!(imported["input"], from_csv["input"]);
    let diffs = common::json_diff(&imported, &from_csv, 0.0);
    assert!(
        diffs.is_empty(),
        "{} differences, first: {:?}",
        diffs.len(),
        &diffs[..diffs.len().min(10)]
    );

    // Against the CSV as released: with no reference resolution (no variants), everything
    // but the reported pixel counts agrees.
    let mut a = report(&out, &["--reference-pixels", "none"]);
    let mut b = report(&csv, &["--reference-pixels", "none"]);
    drop_key(&mut a, "pixels");
    drop_key(&mut b, "pixels");
    let diffs = common::json_diff(&a, &b, 0.0);
    assert!(
        diffs.is_empty(),
        "{} differences, first: {:?}",
        diffs.len(),
        &diffs[..diffs.len().min(10)]
    );
}

#[test]
fn frames_a_frame_selection_run_logged_are_recorded() {
    // A keyframe-selection fork of lmms-eval passes each document its frames (`frame_idx`),
    // which a v0.3-style log keeps with the document.
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("logs/org__sel");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("20250101_000000_results.json"),
        results_json(
            &[("videomme", "videomme_perception_score", 1.0)],
            "llava_vid",
            "pretrained=org/sel,max_frames_num=8",
            "20250101_000000",
        ),
    )
    .expect("results");
    let line = json!({"doc_id": 0, "doc": {"question_id": "001-1", "videoID": "v001",
        "question": "Q?", "options": ["A. a", "B. b"], "frame_idx": [3, 40, 41, 90]},
        "target": "A", "filtered_resps": ["A"],
        "videomme_perception_score": {"question_id": "001-1", "pred_answer": "A", "answer": "A"}});
    std::fs::write(
        dir.join("20250101_000000_samples_videomme.jsonl"),
        format!("{line}\n"),
    )
    .expect("samples");
    let out = tmp.path().join("ds");
    let o = frameaudit(&[
        "import",
        "lmms-eval",
        &s(&tmp.path().join("logs")),
        "-o",
        &s(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = frameaudit(&["frames", &s(&out), "001-1", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: Value = serde_json::from_slice(&o.stdout).expect("json");
    let c = &j["configs"][0];
    assert_eq!(c["indices"], json!([3, 40, 41, 90]));
    assert_eq!(c["provenance"], "recorded");
}
