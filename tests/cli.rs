//! The binary as a user runs it: report, report --json, list, validate and import on the
//! bundled demo and on the real Video-MME example, and every class of bad input.

mod common;

use common::{frameaudit, stderr, stdout};
use serde_json::Value;

fn demo() -> String {
    common::repo().join("fixtures/demo").display().to_string()
}

fn json(out: &std::process::Output) -> Value {
    assert!(out.status.success(), "failed: {}", stderr(out));
    serde_json::from_slice(&out.stdout).expect("valid JSON on stdout")
}

/// The analysis (protocol main, task mcq, `scope`) of a report JSON.
fn analysis<'a>(r: &'a Value, scope: &str) -> &'a Value {
    r["analyses"]
        .as_array()
        .expect("analyses")
        .iter()
        .find(|a| a["protocol"] == "main" && a["task"] == "mcq" && a["scope"] == scope)
        .expect("analysis")
}

#[test]
fn no_argument_reports_on_the_demo() {
    let out = frameaudit(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("frameaudit report · frameaudit-demo"),
        "{text}"
    );
    for want in [
        "lumen-7b",
        "orbit-2b",
        "vista-13b",
        "headroom",
        "churn",
        "cascade τ=",
        "clips-open",
    ] {
        assert!(text.contains(want), "missing {want:?}");
    }
    assert!(
        !text.contains('\x1b'),
        "no colour when stdout is not a terminal"
    );
}

#[test]
fn demo_report_json_is_complete() {
    let r = json(&frameaudit(&["report", &demo(), "--json", "--boot", "50"]));
    assert_eq!(r["spec_version"], "traj-metrics/2.1");
    assert_eq!(r["input"]["models"].as_array().map(Vec::len), Some(3));
    let a = analysis(&r, "clips-mcq");
    let x = &a["models"]["vista-13b"];
    assert_eq!(
        x["grid"]["configs"],
        serde_json::json!(["textonly", "4f", "8f", "16f", "32f", "64f"])
    );
    assert!(x["harmful_rate"].as_f64().expect("rate") > 0.0);
    assert_eq!(x["bootstrap"]["B"], 50);
    assert_eq!(x["cascade"]["sweep"].as_array().map(Vec::len), Some(101));
    let open = r["analyses"]
        .as_array()
        .expect("analyses")
        .iter()
        .find(|a| a["task"] == "open" && a["scope"] == "clips-open")
        .expect("open analysis");
    assert!(open["models"]["lumen-7b"]["oracle_gap"].as_f64().is_some());
    // The readable report and the JSON say the same.
    let text = stdout(&frameaudit(&["report", &demo(), "--boot", "50"]));
    let headroom = format!("{:.1}", x["headroom"].as_f64().expect("headroom"));
    assert!(
        text.contains(&format!("+{headroom}")),
        "{headroom} not in the text report"
    );
}

#[test]
fn report_options_change_the_analysis() {
    let r = json(&frameaudit(&[
        "report",
        &demo(),
        "--json",
        "--boot",
        "0",
        "--grid",
        "joint",
        "--models",
        "lumen-7b,vista-13b",
        "--configs",
        "textonly,8f,32f",
        "--no-sweep",
    ]));
    assert_eq!(r["params"]["grid_mode"], "joint");
    assert_eq!(r["params"]["bootstrap_B"], 0);
    let a = analysis(&r, "ALL");
    assert_eq!(
        a["grid"]["configs"],
        serde_json::json!(["textonly", "8f", "32f"])
    );
    assert_eq!(
        a["grid"]["models"],
        serde_json::json!(["lumen-7b", "vista-13b"])
    );
    assert!(a["models"]["lumen-7b"]["bootstrap"].is_null());
    assert!(a["models"]["lumen-7b"]["cascade"].get("sweep").is_none());
    assert!(a["summary"]["pooled_cascade"]["n"].as_u64().is_some());
}

#[test]
fn items_out_writes_the_per_item_export() {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("items.jsonl");
    let out = frameaudit(&[
        "report",
        &demo(),
        "--boot",
        "0",
        "--items-out",
        path.to_str().expect("utf8"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&path).expect("export written");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    // 56 MCQ and 7 open items for each of the 3 models, benchmark scopes only.
    assert_eq!(lines.len(), 3 * 63);
    assert!(lines.iter().all(|l| l["scope"] != "ALL"));
    let mcq = lines.iter().find(|l| l["task"] == "mcq").expect("mcq line");
    for key in [
        "pattern",
        "class",
        "best_config",
        "has_harmful",
        "harmful_pairs",
        "terminal_regression",
        "text_overwrite",
        "oracle_correct",
        "mean_correct",
        "variability",
        "adjacent_flips",
    ] {
        assert!(mcq.get(key).is_some(), "missing {key}");
    }
    let open = lines
        .iter()
        .find(|l| l["task"] == "open")
        .expect("open line");
    assert_eq!(open["scores"].as_array().map(Vec::len), Some(6));
}

#[test]
fn list_is_the_ranked_audit_queue() {
    let out = frameaudit(&["list", &demo()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some(
            "model\tbenchmark\titem_id\ttask\tpattern\tclass\tharmful_pairs\tterminal\tbest_config\tpairs\tconfigs"
        )
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split('\t').collect()).collect();
    assert!(rows.len() > 20);
    // Terminal regressions first, then items wrong with no video, then by harmful pairs,
    // descending (the demo's grids are all of one size, so the share ranks as the count).
    // (An open item's scores are not right or wrong: it ranks as one wrong with no video.)
    let text_right = |r: &Vec<&str>| {
        let at = (r[3] == "mcq")
            .then(|| r[10].split(',').position(|c| c == "textonly"))
            .flatten();
        at.is_some_and(|i| r[4].as_bytes().get(i) == Some(&b'1'))
    };
    let keys: Vec<(u8, bool, usize)> = rows
        .iter()
        .map(|r| {
            (
                r[7].parse().expect("flag"),
                !text_right(r),
                r[6].parse().expect("pairs"),
            )
        })
        .collect();
    assert!(
        keys.iter().any(|k| !k.1) && keys.iter().any(|k| k.1),
        "the demo has items of both kinds"
    );
    assert!(
        keys.windows(2).all(|w| w[0] >= w[1]),
        "not ranked: {keys:?}"
    );
    assert!(
        rows.iter().all(|r| r[6] != "0"),
        "harmful kind lists only harmful items"
    );

    let terminal = stdout(&frameaudit(&[
        "list",
        &demo(),
        "--kind",
        "terminal",
        "--format",
        "jsonl",
    ]));
    let t: Vec<Value> = terminal
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert!(!t.is_empty() && t.iter().all(|r| r["terminal_regression"] == true));
    let all = stdout(&frameaudit(&["list", &demo(), "--kind", "all"]));
    assert_eq!(all.lines().count(), 1 + 3 * 63);
}

/// Items right with no video at all (a text-only configuration right) come after the other
/// items of their class, however many harmful pairs they have: the head of a real queue was
/// rows of ✓✓✗✗, the items least about vision.
#[test]
fn the_queue_puts_items_right_without_video_after_the_others() {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("cells.jsonl");
    let mut text = String::new();
    // q-text: ✓✓✗✗ (4 harmful pairs); q-vision: ✗✓✗✗ (2); both terminal.
    for (item, pattern) in [("q-text", "1100"), ("q-vision", "0100")] {
        for ((config, frames), c) in [("textonly", 0), ("8f", 8), ("16f", 16), ("32f", 32)]
            .into_iter()
            .zip(pattern.chars())
        {
            let pred = if c == '1' { "A" } else { "B" };
            text.push_str(&format!(
                "{{\"model\":\"M\",\"item_id\":\"{item}\",\"config\":\"{config}\",\"frames\":{frames},\"pred\":\"{pred}\",\"gold\":\"A\"}}\n"
            ));
        }
    }
    std::fs::write(&path, text).expect("write");
    let out = frameaudit(&["list", path.to_str().expect("utf8"), "--no-cache"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let items: Vec<String> = stdout(&out)
        .lines()
        .skip(1)
        .map(|l| l.split('\t').nth(2).unwrap_or_default().to_string())
        .collect();
    assert_eq!(items, ["q-vision", "q-text"]);
}

#[test]
fn validate_reports_warnings_as_problems() {
    let text =
        "{\"model\":\"M\",\"item_id\":\"a\",\"config\":\"8f\",\"frames\":8,\"pred\":\"A\"}\n";
    let (code, out) = validate_text("w.jsonl", text);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("w.jsonl: warning: 1 cell is invalid"), "{out}");
    assert!(out.contains("the first at w.jsonl:1"), "{out}");
}

/// An item id holding a tab and one holding the text `\x09` are listed apart.
#[test]
fn an_id_holding_an_escape_s_text_is_listed_apart_from_one_holding_the_character() {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("c.jsonl");
    let mut cells = String::new();
    for id in ["q\ttab", r"q\x09tab"] {
        for (f, pred) in [(4, "A"), (8, "B")] {
            let cell = serde_json::json!({"model": "M", "item_id": id, "config": format!("{f}f"),
                "frames": f, "pred": pred, "gold": "A"});
            cells.push_str(&format!("{cell}\n"));
        }
    }
    std::fs::write(&path, cells).expect("write");
    let out = stdout(&frameaudit(&["list", path.to_str().expect("utf8")]));
    let ids: Vec<&str> = out
        .lines()
        .skip(1)
        .filter_map(|l| l.split('\t').nth(2))
        .collect();
    assert_eq!(ids, [r"q\x09tab", r"q\\x09tab"], "{out}");
}

/// A reader that leaves at once (`validate X | head -1` under `pipefail`) does not turn
/// problems into a clean exit: a warned or rejected input is status 1 still, a clean one 0.
#[test]
fn validate_says_problems_by_its_status_when_its_reader_has_gone() {
    let tmp = tempfile::tempdir().expect("tmp");
    let warned = tmp.path().join("w.jsonl");
    std::fs::write(
        &warned,
        "{\"model\":\"M\",\"item_id\":\"a\",\"config\":\"8f\",\"frames\":8,\"pred\":\"A\"}\n",
    )
    .expect("write");
    let rejected = tmp.path().join("r.jsonl");
    std::fs::write(&rejected, "{\"model\":\n").expect("write");
    let status = |path: &str| {
        // The pipe's reading end is closed before frameaudit writes a byte.
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        std::process::Command::new(env!("CARGO_BIN_EXE_frameaudit"))
            .args(["validate", path])
            .stdout(writer)
            .output()
            .expect("run")
            .status
            .code()
    };
    assert_eq!(status(warned.to_str().expect("utf8")), Some(1));
    assert_eq!(status(rejected.to_str().expect("utf8")), Some(1));
    assert_eq!(status(&demo()), Some(0));
}

/// A gold in items.jsonl other than the one the cells are scored by is warned about at its
/// line (the item screen shows both); the same answer written otherwise (` b`) is no
/// disagreement, nor is an open-ended item's reference.
#[test]
fn an_items_gold_that_is_not_the_cells_is_warned_about_at_its_line() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path();
    let mut cells = String::new();
    for (item, gold) in [("q1", "A"), ("q2", "B"), ("q3", "C")] {
        for f in [8, 16] {
            cells.push_str(&format!(
                "{{\"model\":\"M\",\"item_id\":\"{item}\",\"config\":\"{f}f\",\"frames\":{f},\"pred\":\"A\",\"gold\":\"{gold}\"}}\n"
            ));
        }
    }
    cells.push_str("{\"model\":\"M\",\"benchmark\":\"open\",\"item_id\":\"o1\",\"config\":\"8f\",\"frames\":8,\"pred\":\"a cat\",\"gold\":\"a cat\",\"task\":\"open\"}\n");
    std::fs::write(dir.join("cells.jsonl"), cells).expect("write");
    std::fs::write(
        dir.join("items.jsonl"),
        concat!(
            "{\"item_id\":\"q1\",\"question\":\"Q?\",\"gold\":\"C\"}\n",
            "{\"item_id\":\"q2\",\"question\":\"Q?\",\"gold\":\" b\"}\n",
            "{\"item_id\":\"q3\",\"question\":\"Q?\"}\n",
            "{\"benchmark\":\"open\",\"item_id\":\"o1\",\"question\":\"Q?\",\"gold\":\"a dog\"}\n",
        ),
    )
    .expect("write");
    let out = frameaudit(&["validate", dir.to_str().expect("utf8")]);
    let text = stdout(&out).replace(&dir.display().to_string(), "D");
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("D/items.jsonl:1: warning: field `gold`: item \"q1\" of benchmark \"default\": \"C\" here, but its cells give \"A\" as gold, which their answers are scored by"),
        "{text}"
    );
    assert!(text.contains("0 errors, 1 warning"), "{text}");
}

#[test]
fn bad_items_and_dataset_json_are_reported() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path();
    std::fs::write(
        dir.join("cells.jsonl"),
        "{\"model\":\"M\",\"item_id\":\"q1\",\"config\":\"8f\",\"frames\":8,\"pred\":\"A\",\"gold\":\"A\"}\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("items.jsonl"),
        concat!(
            "{\"item_id\":\"q1\",\"question\":\"Q?\",\"options\":[\"A. x\"],\"num_frames\":-2}\n",
            "{\"item_id\":\"q1\",\"question\":\"Q?\"}\n",
            "{\"item_id\":\"q1\",\"question\":\"again\"}\n",
            "{\"item_id\":\"ghost\"}\n",
            "[1]\n",
        ),
    )
    .expect("write");
    std::fs::write(
        dir.join("dataset.json"),
        r#"{"schema": "frameaudit/dataset@1", "configs": {"8f": {"policy": "zigzag"}}}"#,
    )
    .expect("write");
    let out = frameaudit(&["validate", dir.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out).replace(&dir.display().to_string(), "D");
    for want in [
        "D/items.jsonl:1: error: field `num_frames`: must be an integer >= 0, found -2",
        "D/items.jsonl:3: error: field `item_id`: item \"q1\" of benchmark \"default\" is already described at line 2",
        "D/items.jsonl:4: warning: field `item_id`: item \"ghost\" of benchmark \"default\" has no cells",
        "D/items.jsonl:5: error: expected a JSON object (one item), found an array",
        "D/dataset.json:1: error: field `configs`: configuration \"8f\": unknown policy \"zigzag\"",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
}

/// An item's numbers out of range name the range in words and the number found in short
/// (their bounds were written as 310-digit decimals: `f64::MIN_POSITIVE`, `f64::MAX`).
#[test]
fn numbers_out_of_range_are_said_in_short() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path();
    std::fs::write(
        dir.join("cells.jsonl"),
        "{\"model\":\"M\",\"item_id\":\"q1\",\"config\":\"8f\",\"frames\":8,\"pred\":\"A\",\"gold\":\"A\"}\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("items.jsonl"),
        concat!(
            "{\"item_id\":\"q1\",\"fps\":-1e308,\"duration\":-1e308}\n",
            "{\"item_id\":\"q2\",\"start\":-0.5,\"end\":-1e308}\n",
            "{\"item_id\":\"q3\",\"fps\":0,\"num_frames\":1e300}\n",
        ),
    )
    .expect("write");
    let out = frameaudit(&["validate", dir.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out).replace(&dir.display().to_string(), "D");
    for want in [
        "D/items.jsonl:1: error: field `fps`: must be a finite number > 0, found -1e308\n",
        "D/items.jsonl:1: error: field `duration`: must be a finite number >= 0, found -1e308\n",
        "D/items.jsonl:2: error: field `start`: must be a finite number >= 0, found -0.5\n",
        "D/items.jsonl:2: error: field `end`: must be a finite number >= 0, found -1e308\n",
        "D/items.jsonl:3: error: field `fps`: must be a finite number > 0, found 0\n",
        "D/items.jsonl:3: error: field `num_frames`: must be an integer >= 0, found 1e300\n",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
}

#[test]
fn validate_demo_is_clean() {
    let out = frameaudit(&["validate", &demo()]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out)
            .contains("1134 cells (1134 valid, 0 invalid), 3 models, 2 benchmarks, 63 items")
    );
    // The replicates are counted apart, by name and nuisance.
    assert!(
        stdout(&out).contains(
            " 1 protocol; 1848 replicate cells (1848 used: 840 of phase-1/2 (phase), 1008 of rerun-1 (rerun)); 0 errors"
        ),
        "{}",
        stdout(&out)
    );
}

/// `validate` says, as every command reading a dataset does, a cache variable it cannot read
/// (on stderr, uncounted: it is the environment's, not the dataset's); `--quiet` keeps it in.
#[test]
fn validate_says_a_cache_variable_it_cannot_read() {
    let run = |quiet: bool| {
        let mut args = vec!["validate".to_string(), demo()];
        args.extend(quiet.then(|| "--quiet".to_string()));
        std::process::Command::new(env!("CARGO_BIN_EXE_frameaudit"))
            .args(&args)
            .env("FRAMEAUDIT_CACHE", "maybe")
            .output()
            .expect("run")
    };
    let out = run(false);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "frameaudit: warning: FRAMEAUDIT_CACHE=\"maybe\" is not off, 0, on or 1: caching stays on"
        ),
        "{}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("0 errors, 0 warnings"),
        "{}",
        stdout(&out)
    );
    let out = run(true);
    assert!(
        !stderr(&out).contains("FRAMEAUDIT_CACHE"),
        "{}",
        stderr(&out)
    );
}

/// Replicates that match no canonical cell are counted, and the count says none is used
/// (it read "(0 used: )").
#[test]
fn validate_says_when_no_replicate_is_used() {
    let cell = r#"{"model":"m","item_id":"q1","config":"8f","frames":8,"pred":"A","gold":"A""#;
    let text = format!(
        "{cell}}}\n{}}}\n",
        cell.replace("q1", "nope") + r#","replicate":"rerun-1","nuisance":"rerun""#
    );
    let (code, out) = validate_text("cells.jsonl", &text);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("; 1 replicate cells (none used); 0 errors"),
        "{out}"
    );
    assert!(
        out.contains("1 of the 1 replicate cells have no valid canonical cell"),
        "{out}"
    );
}

/// Writes `text` to a file named `name` in a fresh directory and validates it.
fn validate_text(name: &str, text: &str) -> (Option<i32>, String) {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join(name);
    std::fs::write(&path, text).expect("write");
    let out = frameaudit(&["validate", path.to_str().expect("utf8")]);
    (
        out.status.code(),
        stdout(&out).replace(&format!("{}", path.display()), name),
    )
}

#[test]
fn every_class_of_bad_cells_is_named_with_line_and_field() {
    let ok = r#"{"model":"M","item_id":"q1","config":"8f","frames":8,"pred":"A","gold":"A","confidence":0.5}"#;
    let cases: &[(&str, &str)] = &[
        ("{\"model\":", "c.jsonl:2: error: malformed JSON"),
        (
            "[1,2,3]",
            "c.jsonl:2: error: expected a JSON object (one cell), found an array",
        ),
        (
            r#"{"item_id":"q2","config":"8f","frames":8}"#,
            "c.jsonl:2: error: field `model`: required field is missing",
        ),
        (
            r#"{"model":7,"item_id":"q2","config":"8f","frames":8}"#,
            "c.jsonl:2: error: field `model`: expected a string, found a number",
        ),
        (
            r#"{"model":"M","item_id":"q2","config":"8f","frames":-3}"#,
            "c.jsonl:2: error: field `frames`: must be an integer >= 0, found -3",
        ),
        (
            r#"{"model":"M","item_id":"q2","config":"8f","frames":2.5}"#,
            "c.jsonl:2: error: field `frames`: must be an integer >= 0, found 2.5",
        ),
        (
            r#"{"model":"M","item_id":"q2","config":"8f","frames":8,"pixels":-1}"#,
            "c.jsonl:2: error: field `pixels`: must be an integer >= 0, found -1",
        ),
        (
            r#"{"model":"M","item_id":"q2","config":"8f","frames":8,"confidence":2}"#,
            "c.jsonl:2: error: field `confidence`: must be a number in [0, 1], found 2",
        ),
        (
            r#"{"model":"M","item_id":"q2","config":"8f","frames":8,"score":-1}"#,
            "c.jsonl:2: error: field `score`: must be a number in [0, 100], found -1",
        ),
        (
            r#"{"model":"M","item_id":"q2","config":"8f","frames":8,"correct":"yes"}"#,
            "c.jsonl:2: error: field `correct`: expected true, false or null, found \"yes\"",
        ),
        (
            ok,
            "c.jsonl:2: error: duplicate cell: model \"M\", benchmark \"default\", item \"q1\", config \"8f\", protocol \"main\" already given at",
        ),
        (
            r#"{"model":"M","item_id":"q2","config":"8f","frames":16,"budget":8}"#,
            "c.jsonl:2: error: field `frames`: configuration \"8f\" has frames 16 here but 8 at line 1",
        ),
        (
            r#"{"model":"M","item_id":"q2","config":"8f","frames":8,"budget":9}"#,
            "c.jsonl:2: error: field `budget`: configuration \"8f\" has budget 9 here but 8 at line 1",
        ),
        (
            r#"{"model":"M","item_id":"q2","config":"8f","frames":8,"pixels":5}"#,
            "c.jsonl:2: error: field `pixels`: configuration \"8f\" has pixels 5 here but null at line 1",
        ),
        (
            r#"{"model":"M","item_id":"q2","config":"8f","frames":8,"score":50}"#,
            "c.jsonl:2: error: field `task`: benchmark \"default\" mixes tasks",
        ),
        (
            r#"{"model":"M","item_id":"q1","config":"16f","frames":16,"blind":"B"}"#,
            "",
        ),
    ];
    for (bad, want) in cases {
        let text = if want.is_empty() {
            // Conflicting blind values need two of them.
            format!(
                "{}\n{bad}\n{}\n",
                ok.replace("\"confidence\":0.5", "\"blind\":\"C\""),
                ""
            )
        } else {
            format!("{ok}\n{bad}\n")
        };
        let (code, out) = validate_text("c.jsonl", &text);
        assert_eq!(code, Some(1), "{bad}: {out}");
        let want = if want.is_empty() {
            "c.jsonl:2: error: field `blind`: blind answer \"B\" conflicts with \"C\" given at line 1"
        } else {
            want
        };
        assert!(out.contains(want), "{bad}\nwanted {want:?}\ngot {out}");
        assert!(out.contains("rejected: 1 error"), "{out}");
    }
}

#[test]
fn all_errors_of_a_file_are_reported_together() {
    let mut text = String::new();
    for i in 0..30 {
        text.push_str(&format!(
            "{{\"model\":\"M\",\"item_id\":\"q{i}\",\"config\":\"8f\",\"frames\":\"eight\"}}\n"
        ));
    }
    text.push_str("{\"model\":\"M\"\n");
    let (code, out) = validate_text("many.jsonl", &text);
    assert_eq!(code, Some(1));
    assert_eq!(out.matches("field `frames`").count(), 30, "{out}");
    assert!(out.contains("many.jsonl:31: error: malformed JSON"));
    assert!(out.contains("rejected: 31 errors, 0 warnings"), "{out}");

    // Past the cap, the rest are counted.
    let text: String = (0..500)
        .map(|i| {
            format!("{{\"model\":\"M\",\"item_id\":\"q{i}\",\"config\":\"8f\",\"frames\":-1}}\n")
        })
        .collect();
    let (_, out) = validate_text("lots.jsonl", &text);
    assert!(
        out.contains("500 errors, 0 warnings (300 not listed)"),
        "{}",
        &out[out.len().saturating_sub(200)..]
    );
}

#[test]
fn bad_per_item_csv_is_named_with_line_and_column() {
    let header = "sample_id,model,split,config,frame_count,pixel_count,predicted_option,ground_truth_option,correct,source_tag,protocol_note";
    let cases: &[(&str, &str)] = &[
        (
            "sample_id,model,config\nq,M,8f\n",
            "p.csv:1: error: field `frame_count`: required column is missing from the header",
        ),
        (
            "q,M,s,8f\n",
            "p.csv:2: error: row has 4 fields but the header has 11",
        ),
        (
            "q,M,s,8f,8.0,,A,A,1,,\n",
            "p.csv:2: error: field `frame_count`: must be decimal digits (an integer >= 0), found \"8.0\"",
        ),
        (
            "q,M,s,8f,8,1e5,A,A,1,,\n",
            "p.csv:2: error: field `pixel_count`: must be decimal digits or empty, found \"1e5\"",
        ),
        (
            "q,M,s,8f,8,,A,A,maybe,,\n",
            "p.csv:2: error: field `correct`: must be 1, 0, true, false or empty, found \"maybe\"",
        ),
        (
            "q,M,s,8f,16,,A,A,1,,\nq2,M,s,8f,8,,A,A,1,,\n",
            "p.csv:3: error: field `frame_count`: configuration \"8f\" has frames 8 here but 16 at line 2",
        ),
    ];
    for (rows, want) in cases {
        let text = if rows.starts_with("sample_id") {
            rows.to_string()
        } else {
            format!("{header}\n{rows}")
        };
        let (code, out) = validate_text("p.csv", &text);
        assert_eq!(code, Some(1), "{rows}: {out}");
        assert!(out.contains(want), "wanted {want:?}\ngot {out}");
    }
}

#[test]
fn data_text_cannot_drive_the_terminal() {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("evil.jsonl");
    let model = "M\u{1b}]52;c;ZXZpbA==\u{7}\u{1b}[2J\u{202e}";
    let mut text = String::new();
    for (cfg, frames, pred) in [("0f", 0, "A"), ("8f", 8, "A"), ("16f", 16, "B")] {
        let cell = serde_json::json!({"model": model, "item_id": "q\u{1b}[31m", "config": cfg, "frames": frames, "pred": pred, "gold": "A"});
        text.push_str(&format!("{cell}\n"));
    }
    std::fs::write(&path, text).expect("write");
    let p = path.to_str().expect("utf8");
    for args in [vec!["report", p, "--boot", "0"], vec!["list", p]] {
        let out = frameaudit(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        let s = stdout(&out);
        assert!(
            !s.contains('\u{1b}') && !s.contains('\u{7}') && !s.contains('\u{202e}'),
            "raw control text in {args:?}: {s:?}"
        );
        assert!(s.contains("\\x1b]52;c;ZXZpbA==\\x07"), "{s}");
    }
}

#[test]
fn report_is_width_aware() {
    let narrow = stdout(
        &std::process::Command::new(env!("CARGO_BIN_EXE_frameaudit"))
            .args(["report", "--boot", "0"])
            .env("COLUMNS", "60")
            .output()
            .expect("run"),
    );
    let wide = stdout(
        &std::process::Command::new(env!("CARGO_BIN_EXE_frameaudit"))
            .args(["report", "--boot", "0"])
            .env("COLUMNS", "160")
            .output()
            .expect("run"),
    );
    let longest = |s: &str| s.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(
        longest(&narrow) < longest(&wide),
        "{} vs {}",
        longest(&narrow),
        longest(&wide)
    );
}

#[test]
fn real_example_loads_reports_and_lists() {
    let Some(csv) = common::real_csv() else {
        return;
    };
    let csv = csv.to_str().expect("utf8");
    let v = frameaudit(&["validate", csv]);
    assert_eq!(v.status.code(), Some(0), "{}", stdout(&v));
    assert!(
        stdout(&v)
            .contains("36852 cells (36852 valid, 0 invalid), 5 models, 2 benchmarks, 1425 items")
    );

    let r = json(&frameaudit(&["report", csv, "--json", "--boot", "200"]));
    assert_eq!(r["input"]["records"], 36852);
    // Cross-checked against benches/pandas_baseline.py --check on the same file.
    let x = &analysis(&r, "ALL")["models"]["InternVL3-8B"];
    assert_eq!(x["n_items"], 1425);
    assert_eq!(
        x["grid"]["configs"],
        serde_json::json!(["textonly", "16f_151k", "32f_151k", "64f_151k"])
    );
    let close = |v: &Value, want: f64| {
        assert!(
            (v.as_f64().expect("number") - want).abs() < 0.005,
            "{v} vs {want}"
        )
    };
    close(&x["best_fixed"]["accuracy"], 67.16);
    close(&x["oracle_accuracy"], 77.96);
    close(&x["headroom"], 10.81);
    close(&x["harmful_rate"], 15.79);
    close(&x["terminal_regression_rate"], 10.81);
    close(&x["text_overwrite"]["rate"], 9.33);
    // Qwen2.5-VL-7B has five resolution variants on V1_short only.
    let q = &analysis(&r, "V1_short")["models"]["Qwen2.5-VL-7B"]["grid"];
    assert_eq!(q["variants"].as_array().map(Vec::len), Some(5));
    assert_eq!(q["reference_pixels"], 151000);

    let text = stdout(&frameaudit(&["report", csv, "--boot", "0"]));
    assert!(text.contains("V1_medium") && text.contains("LLaVA-NeXT-Video-7B"));
    let list = frameaudit(&["list", csv, "--format", "jsonl"]);
    assert!(list.status.success());
    assert!(stdout(&list).lines().count() > 1000);
}

#[test]
fn import_per_item_csv_round_trips() {
    let input = common::real_csv().unwrap_or_else(|| common::conformance("example_13_2.csv"));
    let tmp = tempfile::tempdir().expect("tmp");
    let cells = tmp.path().join("cells.jsonl");
    let out = frameaudit(&[
        "import",
        "per-item-csv",
        input.to_str().expect("utf8"),
        "-o",
        cells.to_str().expect("utf8"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let from_csv = json(&frameaudit(&[
        "report",
        input.to_str().expect("utf8"),
        "--json",
        "--boot",
        "20",
    ]));
    let from_jsonl = json(&frameaudit(&[
        "report",
        cells.to_str().expect("utf8"),
        "--json",
        "--boot",
        "20",
    ]));
    assert_eq!(
        common::json_diff(&from_jsonl, &from_csv, 0.0),
        Vec::<String>::new()
    );

    // A rejected CSV writes nothing.
    let bad = tmp.path().join("bad.csv");
    std::fs::write(&bad, "sample_id,model,config,frame_count\nq,M,8f,x\n").expect("write");
    let out_path = tmp.path().join("never.jsonl");
    let out = frameaudit(&[
        "import",
        "per-item-csv",
        bad.to_str().expect("utf8"),
        "-o",
        out_path.to_str().expect("utf8"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("bad.csv:2: error: field `frame_count`"),
        "{}",
        stderr(&out)
    );
    assert!(!out_path.exists());
}

#[test]
fn missing_dataset_is_a_clear_error() {
    let out = frameaudit(&["report", "/nonexistent/data.jsonl"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("cannot read /nonexistent/data.jsonl"), "{err}");
    // The cause is given once, not once per layer of the error.
    assert_eq!(err.matches("No such file").count(), 1, "{err}");
}

#[test]
fn audit_summary_and_export_feed_agreement() {
    use frameaudit::core::audit::{AuditFile, AuditHeader, AuditRecord, Event, Status, UnitKey};
    let tmp = tempfile::tempdir().expect("tmp");
    let mut paths = Vec::new();
    for (who, tags) in [
        ("ann", ["evidence_dropped", "language_prior"]),
        ("bob", ["evidence_dropped", "other"]),
    ] {
        let path = tmp.path().join(format!("{who}.audit.jsonl"));
        let header = AuditHeader {
            dataset_name: "demo".into(),
            fingerprint: "sha256:x".into(),
            annotator: who.into(),
            taxonomy_id: "evidence-pathways".into(),
            taxonomy_version: 1,
            created_at: "2026-11-29T00:00:00Z".into(),
            adjudicates: Vec::new(),
        };
        let (mut f, _) = AuditFile::open(&path, &header).expect("open");
        for (i, tag) in tags.iter().enumerate() {
            let mut r = AuditRecord::blank(
                UnitKey::new("m", "b", format!("q{i}")),
                "8f",
                "16f",
                "2026-11-29T00:00:01Z",
            );
            r.status = Status::Done;
            r.pathways = vec![tag.to_string()];
            r.primary = Some(tag.to_string());
            f.append(&Event::Set(r)).expect("append");
        }
        paths.push(path);
    }
    let p0 = paths[0].to_str().expect("utf8");
    let p1 = paths[1].to_str().expect("utf8");
    let out = frameaudit(&["audit", "summary", p0, p1]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("evidence_dropped") && text.contains("8f -> 16f"),
        "{text}"
    );

    let mut export = String::new();
    for p in [p0, p1] {
        let out = frameaudit(&["audit", "export", p, "--format", "jsonl"]);
        assert!(out.status.success(), "{}", stderr(&out));
        export.push_str(&stdout(&out));
    }
    let csv = stdout(&frameaudit(&["audit", "export", p0, "--format", "csv"]));
    assert!(
        csv.lines().count() == 3 && csv.contains("evidence_dropped"),
        "{csv}"
    );
    let ann = tmp.path().join("annotations.jsonl");
    std::fs::write(&ann, export).expect("write");
    let r = json(&frameaudit(&[
        "report",
        &demo(),
        "--json",
        "--boot",
        "0",
        "--annotations",
        ann.to_str().expect("utf8"),
    ]));
    let ag = &r["agreement"];
    assert_eq!(ag["annotators"], serde_json::json!(["ann", "bob"]));
    assert_eq!(ag["n_units"], 2);
    // Both tagged q0 evidence_dropped; on q1 they differ.
    assert_eq!(ag["pairs"][0]["per_tag"]["evidence_dropped"]["p_o"], 1.0);
    assert_eq!(ag["pairs"][0]["per_tag"]["language_prior"]["p_o"], 0.5);

    // A review never writes into an audit it reviews, however the path is spelled.
    let before = std::fs::read(&paths[0]).expect("read");
    let other_spelling = tmp.path().join(".").join("ann.audit.jsonl");
    let out = frameaudit(&[
        "review",
        p0,
        p1,
        "--data",
        &demo(),
        "--annotator",
        "ann",
        "--audit",
        other_spelling.to_str().expect("utf8"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("is one of the audits under review"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(&paths[0]).expect("read"), before);
}

/// Without --from/--to, `frames` compares the transition the audit screens open the item
/// on (the step where the answer flips), also where that is not the first harmful pair.
#[test]
fn frames_compares_the_audited_transition_by_default() {
    use frameaudit::core::queue::{QueueKind, audited_transition, queue};
    let ds =
        frameaudit::core::dataset::load_dataset(std::path::Path::new(&demo()), None).expect("demo");
    let params = frameaudit::core::analysis::params::Params {
        bootstrap_b: 0,
        ..Default::default()
    };
    let report = frameaudit::core::analysis::run(&ds.matrix, &params, None);
    let main = ds.matrix.protocols.get("main").expect("main");
    let rows = queue(&report, main, QueueKind::Harmful);
    let (r, flip) = rows
        .iter()
        .find_map(|r| {
            let flip = audited_transition(&report, r)?;
            (flip != r.listed()[0]).then_some((r, flip))
        })
        .expect("such a row in the demo");
    let (a, b) = (flip.lower, flip.higher);
    let g = &report.analyses[r.analysis as usize].grids.models[r.model_index as usize].grid;
    let m = &ds.matrix;
    let j = json(&frameaudit(&[
        "frames",
        &demo(),
        &format!(
            "{}/{}",
            m.benchmarks.name(m.items[r.item as usize].benchmark),
            m.items[r.item as usize].id
        ),
        "--model",
        m.models.name(r.model),
        "--json",
    ]));
    assert_eq!(j["transition"]["from"], g.names[a].0.as_ref());
    assert_eq!(j["transition"]["to"], g.names[b].0.as_ref());
}

#[test]
fn frames_command_lists_explains_and_prints_json() {
    let out = frameaudit(&[
        "frames",
        &demo(),
        "clip02-q1",
        "--model",
        "lumen-7b",
        "--explain",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(
            "16f   16 frames  [reproduced]  (The frames are computed with policy linspace"
        ),
        "{text}"
    );
    assert!(
        text.contains("transition 16f -> 32f: 5 of 16 frames not kept (21 25 29 33 37)"),
        "{text}"
    );
    assert!(
        !text.contains('▄'),
        "no pictures when stdout is not a terminal"
    );
    // Two columns compared the other way: nothing added, said without an empty list.
    let back = stdout(&frameaudit(&[
        "frames",
        &demo(),
        "clip04-q1",
        "--no-images",
        "--from",
        "16f",
        "--to",
        "4f",
    ]));
    assert!(
        back.contains(
            "transition 16f -> 4f: 12 of 16 frames not kept (4 8 12 16 25 29 33 37 46 50 54 58), 0 added\n"
        ),
        "{back}"
    );

    let j = json(&frameaudit(&[
        "frames",
        &demo(),
        "clips-mcq/clip02-q1",
        "--model",
        "lumen-7b",
        "--json",
    ]));
    assert_eq!(j["num_frames"], 64);
    let configs = j["configs"].as_array().expect("configs");
    assert_eq!(configs[0]["policy"], "none");
    assert_eq!(configs[0]["provenance"], serde_json::Value::Null);
    assert_eq!(configs[3]["config"], "16f");
    assert_eq!(configs[3]["provenance"], "reproduced");
    assert_eq!(configs[3]["rule"], "policy linspace (dataset.json)");
    assert_eq!(configs[3]["indices"].as_array().map(Vec::len), Some(16));
    assert_eq!(
        j["transition"]["dropped"],
        serde_json::json!([21, 25, 29, 33, 37])
    );
    let j = json(&frameaudit(&[
        "frames",
        &demo(),
        "clip02-q1",
        "--model",
        "lumen-7b",
        "--json",
        "--config",
        "8f",
        "--from",
        "8f",
        "--to",
        "64f",
    ]));
    assert_eq!(j["configs"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        j["transition"]["dropped"],
        serde_json::json!([]),
        "64f samples every frame"
    );

    // One configuration twice is no transition: a usage error.
    let same = frameaudit(&[
        "frames",
        &demo(),
        "clip02-q1",
        "--model",
        "lumen-7b",
        "--from",
        "8f",
        "--to",
        "8f",
    ]);
    assert_eq!(same.status.code(), Some(2), "{}", stderr(&same));
    assert!(stderr(&same).contains("both name 8f"), "{}", stderr(&same));

    let bad = frameaudit(&["frames", &demo(), "no-such-item"]);
    assert_eq!(bad.status.code(), Some(2), "a name that matches nothing");
    assert!(
        stderr(&bad).contains("no item \"no-such-item\""),
        "{}",
        stderr(&bad)
    );
}

/// A frame cache limit that is not a size is said, inert, and the default used.
#[test]
fn a_frame_cache_limit_that_is_not_a_size_is_said() {
    common::a_size_limit_that_is_not_a_size_is_said(
        "FRAMEAUDIT_FRAME_CACHE",
        &["frames", &demo(), "clip01-q1", "--no-images"],
    );
}

/// Escape sequences a hostile data file might carry: a window title, a screen clear and an
/// OSC 52 clipboard write.
const ESCAPES: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}]52;c;ZXZpbA==\u{7}";
const MODEL: &str =
    "M\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}]52;c;ZXZpbA==\u{7}\u{9b}31m\u{202e}\u{200b}";
const BENCH: &str = "b\u{202e}\u{200b}";
const ITEM: &str = "q\u{200b}1\u{9b}2J\u{202e}";
const CONFIGS: [(&str, u64, &str); 3] = [
    ("0f", 0, "A"),
    ("8f\u{200b}", 8, "A"),
    ("16f\u{202e}", 16, "B"),
];
const ANNOTATOR: &str = "ann\u{200b}\u{1b}]0;t\u{7}";
const NOTE: &str =
    "see \u{1b}]52;c;ZXZpbA==\u{7} \u{9b}2J \u{202e}txet \u{200b}.\nline 2, \"quoted\"; =SUM(A1)";
const ODD_TAG: &str = "odd\u{202e}\u{200b}";

/// The characters no output may carry raw to a terminal: controls other than line ends and
/// tabs, C1, bidi embeddings, overrides and isolates, zero-width and separator characters.
fn raw_unsafe(s: &str) -> Vec<char> {
    s.chars()
        .filter(|&c| {
            (c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
                || matches!(
                    c,
                    '\u{200b}'..='\u{200f}'
                        | '\u{202a}'..='\u{202e}'
                        | '\u{2066}'..='\u{2069}'
                        | '\u{2028}'
                        | '\u{2029}'
                        | '\u{feff}'
                )
        })
        .collect()
}

/// A dataset whose names, question and options carry `ESCAPES`, C1, bidi and zero-width
/// characters, and an audit of it whose annotator, tags and note carry them too.
fn hostile_dataset(dir: &std::path::Path) -> (String, String) {
    use frameaudit::core::audit::{AuditFile, AuditHeader, AuditRecord, Event, Status, UnitKey};
    let ds = dir.join("ds");
    std::fs::create_dir_all(&ds).expect("mkdir");
    let mut cells = String::new();
    for (item, answers) in [(ITEM, ["A", "A", "B"]), ("q2", ["B", "A", "A"])] {
        for ((config, frames, _), pred) in CONFIGS.iter().zip(answers) {
            let cell = serde_json::json!({"model": MODEL, "benchmark": BENCH, "item_id": item,
                "config": config, "frames": frames, "pred": pred, "gold": "A"});
            cells.push_str(&format!("{cell}\n"));
        }
    }
    std::fs::write(ds.join("cells.jsonl"), cells).expect("write");
    let item = serde_json::json!({"benchmark": BENCH, "item_id": ITEM,
        "question": format!("What\u{200b}? {ESCAPES}"), "options": ["A. x\u{202e}", "B. y"],
        "video": "vid\u{200b}", "num_frames": 100, "fps": 25.0});
    let plain = serde_json::json!({"benchmark": BENCH, "item_id": "q2", "question": "Q?"});
    std::fs::write(ds.join("items.jsonl"), format!("{item}\n{plain}\n")).expect("write");
    let audit = dir.join("a.audit.jsonl");
    let header = AuditHeader {
        dataset_name: format!("ds{ESCAPES}"),
        fingerprint: "sha256:x".into(),
        annotator: ANNOTATOR.into(),
        taxonomy_id: "evidence-pathways".into(),
        taxonomy_version: 1,
        created_at: "2026-11-29T00:00:00Z".into(),
        adjudicates: Vec::new(),
    };
    let (mut f, _) = AuditFile::open(&audit, &header).expect("open");
    let mut r = AuditRecord::blank(
        UnitKey::new(MODEL, BENCH, ITEM),
        CONFIGS[1].0,
        CONFIGS[2].0,
        "2026-11-29T00:00:01Z",
    );
    r.status = Status::Done;
    r.pathways = vec!["evidence_dropped".into(), ODD_TAG.into()];
    r.primary = Some("evidence_dropped".into());
    r.note = NOTE.into();
    f.append(&Event::Set(r)).expect("append");
    (
        ds.to_str().expect("utf8").to_string(),
        audit.to_str().expect("utf8").to_string(),
    )
}

/// Issue 13 item 8: on a terminal no command writes escape sequences, C1, bidi or
/// zero-width characters raw; the JSON escapes them (and parses back to the same strings)
/// wherever it goes; CSV to a file keeps every field byte for byte.
#[test]
fn no_output_carries_control_bidi_or_zero_width_text_raw() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (ds, audit) = hostile_dataset(tmp.path());
    let (ds, audit) = (ds.as_str(), audit.as_str());
    let commands: Vec<Vec<&str>> = vec![
        vec!["list", ds],
        vec!["list", ds, "--format", "jsonl"],
        vec!["report", ds, "--boot", "0"],
        vec!["report", ds, "--json", "--boot", "0"],
        vec!["report", ds, "--format", "markdown", "--boot", "0"],
        vec!["report", ds, "--format", "latex", "--boot", "0"],
        vec!["report", ds, "--format", "csv", "--boot", "0"],
        vec![
            "frames",
            ds,
            ITEM,
            "--model",
            MODEL,
            "--explain",
            "--no-images",
        ],
        vec!["frames", ds, ITEM, "--model", MODEL, "--json"],
        vec!["validate", ds],
        vec!["audit", "summary", audit],
        vec!["audit", "export", audit, "--format", "csv"],
        vec!["audit", "export", audit, "--format", "jsonl"],
    ];
    for args in &commands {
        // Piped (to a file) and on a terminal.
        let piped = frameaudit(args);
        assert!(piped.status.success(), "{args:?}: {}", stderr(&piped));
        let csv_file = args.contains(&"csv");
        let text = stdout(&piped);
        if !csv_file {
            assert_eq!(raw_unsafe(&text), Vec::<char>::new(), "{args:?}: {text:?}");
        }
        assert_eq!(raw_unsafe(&stderr(&piped)), Vec::<char>::new(), "{args:?}");
        if let Some(tty) = common::frameaudit_on_terminal(args) {
            // The phase line (cli/progress.rs) is erased with frameaudit's own erase-line
            // sequence; no other escape is allowed.
            let text = stdout(&tty).replace("\x1b[2K", "");
            assert!(tty.status.success(), "{args:?} on a terminal: {text}");
            assert_eq!(
                raw_unsafe(&text),
                Vec::<char>::new(),
                "{args:?} on a terminal: {text:?}"
            );
        }
    }

    // The JSON is the same data: every string parses back to the original.
    let lines = stdout(&frameaudit(&["list", ds, "--format", "jsonl"]));
    let rows: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let row = rows
        .iter()
        .find(|r| r["item_id"] == ITEM)
        .expect("the item");
    assert_eq!(row["model"], MODEL);
    assert_eq!(row["benchmark"], BENCH);
    let configs: Vec<&str> = CONFIGS.iter().map(|c| c.0).collect();
    assert_eq!(row["configs"], serde_json::json!(configs));
    assert!(lines.contains("\\u009b") && lines.contains("\\u202e") && lines.contains("\\u200b"));
    let r = json(&frameaudit(&["report", ds, "--json", "--boot", "0"]));
    assert!(
        r["analyses"]
            .as_array()
            .expect("analyses")
            .iter()
            .any(|a| a["models"].get(MODEL).is_some()),
        "{r}"
    );
    let j = json(&frameaudit(&[
        "frames", ds, ITEM, "--model", MODEL, "--json",
    ]));
    assert_eq!(
        (j["model"].clone(), j["item_id"].clone()),
        (MODEL.into(), ITEM.into())
    );
    let e = json(&frameaudit(&[
        "audit", "export", audit, "--format", "jsonl",
    ]));
    assert_eq!(e["annotator"], ANNOTATOR);
    assert_eq!(e["note"], NOTE);
    assert_eq!(e["item_id"], ITEM);
    assert_eq!(e["from"], CONFIGS[1].0);
    assert_eq!(
        e["pathways"],
        serde_json::json!(["evidence_dropped", ODD_TAG])
    );

    // CSV written to a file keeps every field as it is (quoted as CSV needs)...
    let out = frameaudit(&["audit", "export", audit, "--format", "csv"]);
    let mut rdr = csv::Reader::from_reader(out.stdout.as_slice());
    let head = rdr.headers().expect("header").clone();
    let rec = rdr.records().next().expect("a row").expect("row");
    let field = |name: &str| &rec[head.iter().position(|h| h == name).expect(name)];
    assert_eq!(field("note"), NOTE);
    assert_eq!(field("annotator"), ANNOTATOR);
    assert_eq!(field("model"), MODEL);
    assert_eq!(field("item_id"), ITEM);
    assert_eq!(field("tags"), format!("evidence_dropped;{ODD_TAG}"));
    // ...and on a terminal shows each field sanitised.
    if let Some(tty) =
        common::frameaudit_on_terminal(&["audit", "export", audit, "--format", "csv"])
    {
        let text = stdout(&tty);
        assert!(text.contains("\\x1b]52;c;ZXZpbA==\\x07"), "{text}");
        assert!(
            text.contains("\\x9b2J \\u{202e}txet \\u{200b}.\\x0aline 2"),
            "{text}"
        );
    }
}

/// Issue 13 item 11: a UTF-8 byte-order mark before the first line is accepted by every
/// reader of JSON and JSON Lines, as by the CSV readers.
#[test]
fn a_byte_order_mark_is_accepted_by_every_json_reader() {
    const BOM: &str = "\u{feff}";
    let tmp = tempfile::tempdir().expect("tmp");
    let (ds, audit) = hostile_dataset(tmp.path());
    let ds = std::path::Path::new(&ds);
    for name in ["cells.jsonl", "items.jsonl"] {
        let text = std::fs::read_to_string(ds.join(name)).expect("read");
        std::fs::write(ds.join(name), format!("{BOM}{text}")).expect("write");
    }
    std::fs::write(
        ds.join("dataset.json"),
        format!("{BOM}{{\"schema\": \"frameaudit/dataset@1\", \"name\": \"bom\"}}"),
    )
    .expect("write");
    let text = std::fs::read_to_string(&audit).expect("read");
    std::fs::write(&audit, format!("{BOM}{text}")).expect("write");
    let d = ds.to_str().expect("utf8");
    let out = frameaudit(&["validate", d]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("6 cells (6 valid, 0 invalid)"),
        "{}",
        stdout(&out)
    );
    // The name comes from dataset.json, the question from items.jsonl.
    let out = frameaudit(&["report", d, "--boot", "0"]);
    let title = stdout(&out).lines().next().unwrap_or_default().to_string();
    assert!(title.contains("bom"), "{}", stdout(&out));
    let j = json(&frameaudit(&[
        "frames", d, ITEM, "--model", MODEL, "--json",
    ]));
    assert_eq!(j["num_frames"], 100);
    // A lone cells file, an audit file, and an annotations file.
    let lone = tmp.path().join("lone.jsonl");
    std::fs::copy(ds.join("cells.jsonl"), &lone).expect("copy");
    let out = frameaudit(&["validate", lone.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    for format in ["jsonl", "csv"] {
        let out = frameaudit(&["audit", "export", &audit, "--format", format]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains("evidence_dropped"));
    }
    let out = frameaudit(&["audit", "summary", &audit]);
    assert!(out.status.success(), "{}", stderr(&out));
    let export = stdout(&frameaudit(&["audit", "export", &audit]));
    let ann = tmp.path().join("annotations.jsonl");
    std::fs::write(&ann, format!("{BOM}{export}")).expect("write");
    let out = frameaudit(&[
        "report",
        d,
        "--json",
        "--boot",
        "0",
        "--annotations",
        ann.to_str().expect("utf8"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// Issue 13 item 11: `validate` warns about the paths the frame readers refuse.
#[test]
fn validate_warns_about_paths_that_leave_the_dataset() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path();
    let mut cells = String::new();
    for item in ["q1", "q2", "q3"] {
        cells.push_str(&format!(
            "{{\"model\":\"M\",\"item_id\":\"{item}\",\"config\":\"8f\",\"frames\":8,\"pred\":\"A\",\"gold\":\"A\"}}\n"
        ));
    }
    std::fs::write(dir.join("cells.jsonl"), cells).expect("write");
    std::fs::write(
        dir.join("items.jsonl"),
        concat!(
            "{\"item_id\":\"q1\",\"video\":\"../../etc\",\"num_frames\":10}\n",
            "{\"item_id\":\"q2\",\"video\":\"ok\",\"video_file\":\"/etc/passwd\"}\n",
            "{\"item_id\":\"q3\",\"video\":\"fine/sub\",\"video_file\":\"fine/sub.mp4\"}\n",
        ),
    )
    .expect("write");
    std::fs::write(
        dir.join("dataset.json"),
        r#"{"schema": "frameaudit/dataset@1", "frames_dir": "../frames",
            "videos_dir": "/srv/videos", "frame_name": "../{index}.jpg",
            "runs": [{"model": "M", "config": "8f", "rule": {"kind": "policy", "policy": "linspace", "n": 8},
                      "provenance": "reproduced", "name": "t", "why": "t",
                      "frame_files": "/tmp/{video}/{i}.jpg"}]}"#,
    )
    .expect("write");
    let out = frameaudit(&["validate", dir.to_str().expect("utf8")]);
    let text = stdout(&out).replace(&dir.display().to_string(), "D");
    assert_eq!(out.status.code(), Some(1), "{text}");
    for want in [
        "D/dataset.json:1: warning: field `frames_dir`: \"../frames\" contains \"..\"; frameaudit only reads inside the dataset directory",
        "D/dataset.json:2: warning: field `videos_dir`: \"/srv/videos\" is an absolute path",
        "D/dataset.json:2: warning: field `frame_name`: \"../{index}.jpg\" gives the file name \"../0.jpg\", which contains \"..\"",
        "D/dataset.json:3: warning: field `runs[0]`: run \"M\" at \"8f\": frame_files \"/tmp/{video}/{i}.jpg\" is an absolute path",
        "D/items.jsonl:1: warning: field `video`: \"../../etc\" contains \"..\"",
        "D/items.jsonl:2: warning: field `video_file`: \"/etc/passwd\" is an absolute path",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
    assert!(!text.contains("items.jsonl:3"), "{text}");
}

/// A run of dataset.json that names no model, configuration or benchmark of the cells is
/// warned about at its line.
#[test]
fn validate_names_the_line_of_a_run_the_cells_do_not_have() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("D");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("cells.jsonl"),
        "{\"model\":\"M\",\"item_id\":\"q1\",\"config\":\"8f\",\"frames\":8,\"pred\":\"A\",\"gold\":\"A\"}\n",
    )
    .expect("write");
    let run = |model: &str, config: &str| {
        format!(
            r#"{{"model": "{model}", "config": "{config}", "rule": {{"kind": "policy", "policy": "linspace", "n": 8}}, "provenance": "reproduced", "name": "t", "why": "t"}}"#
        )
    };
    std::fs::write(
        dir.join("dataset.json"),
        format!(
            "{{\"schema\": \"frameaudit/dataset@1\",\n \"runs\": [\n  {},\n  {}\n]}}\n",
            run("X", "8f"),
            run("M", "9f")
        ),
    )
    .expect("write");
    let out = frameaudit(&["validate", dir.to_str().expect("utf8")]);
    let text = stdout(&out).replace(&dir.display().to_string(), "D");
    for want in [
        "D/dataset.json:3: warning: field `runs`: runs[0] (model \"X\", configuration \"8f\"): no such model",
        "D/dataset.json:4: warning: field `runs`: runs[1] (model \"M\", configuration \"9f\"): no such configuration",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
}

/// A dataset of one item whose run saved its 2 frames under `images/V/vid/`.
fn saved_frames_dataset(ds: &std::path::Path) {
    std::fs::create_dir_all(ds).expect("mkdir");
    std::fs::write(
        ds.join("cells.jsonl"),
        "{\"model\":\"M\",\"item_id\":\"q1\",\"config\":\"2f\",\"frames\":2,\"pred\":\"A\",\"gold\":\"A\"}\n",
    )
    .expect("write");
    std::fs::write(
        ds.join("items.jsonl"),
        "{\"item_id\":\"q1\",\"video\":\"vid\",\"num_frames\":10,\"fps\":1.0}\n",
    )
    .expect("write");
    std::fs::write(
        ds.join("dataset.json"),
        r#"{"schema": "frameaudit/dataset@1",
            "runs": [{"model": "M", "config": "2f", "rule": {"kind": "policy", "policy": "linspace", "n": 2},
                      "provenance": "reproduced", "name": "t", "why": "t",
                      "frame_files": "images/V/{video}/frame-{i}-of-{n}.jpg"}]}"#,
    )
    .expect("write");
}

fn write_jpeg(path: &std::path::Path) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    image::RgbImage::from_pixel(8, 8, image::Rgb([200, 30, 30]))
        .save(path)
        .expect("save");
}

/// Issue 13 item 11: a frame file that is a symbolic link out of the dataset is refused
/// with a clear message; the dataset's own folder links (as `import --frames-root` makes
/// `images`) keep working.
#[cfg(unix)]
#[test]
fn frame_links_out_of_the_dataset_are_refused_but_its_folder_links_work() {
    use std::os::unix::fs::symlink;
    let tmp = tempfile::tempdir().expect("tmp");
    let secret = tmp.path().join("private/secret.jpg");
    write_jpeg(&secret);
    let hostile = tmp.path().join("hostile");
    saved_frames_dataset(&hostile);
    write_jpeg(&hostile.join("images/V/vid/frame-1-of-2.jpg"));
    symlink(&secret, hostile.join("images/V/vid/frame-2-of-2.jpg")).expect("link");
    let h = hostile.to_str().expect("utf8");
    let args = ["frames", h, "q1", "--model", "M", "--config", "2f"];
    let j = json(&frameaudit(&[&args[..], &["--json"]].concat()));
    assert_eq!(
        j["configs"][0]["frame_files"],
        serde_json::json!(["images/V/vid/frame-1-of-2.jpg", null]),
        "{j}"
    );
    // On a terminal (tmux, which answers the picture protocol's queries) the refused frame
    // is shown with why.
    if let Some(screen) = pictures_on_terminal("fa-link-hostile", h) {
        assert!(
            screen.contains(
                "(images/V/vid/frame-2-of-2.jpg is a symbolic link that leads outside the dataset, to "
            ),
            "{screen}"
        );
    }

    // `images` itself linked to the user's folder, as the importer links it.
    let linked = tmp.path().join("linked");
    saved_frames_dataset(&linked);
    let user = tmp.path().join("user/images");
    write_jpeg(&user.join("V/vid/frame-1-of-2.jpg"));
    write_jpeg(&user.join("V/vid/frame-2-of-2.jpg"));
    symlink(&user, linked.join("images")).expect("link");
    let l = linked.to_str().expect("utf8");
    let j = json(&frameaudit(&[
        "frames", l, "q1", "--model", "M", "--config", "2f", "--json",
    ]));
    assert_eq!(
        j["configs"][0]["frame_files"],
        serde_json::json!([
            "images/V/vid/frame-1-of-2.jpg",
            "images/V/vid/frame-2-of-2.jpg"
        ]),
        "{j}"
    );
    if let Some(screen) = pictures_on_terminal("fa-link-linked", l) {
        assert!(!screen.contains("symbolic link"), "{screen}");
    }
}

/// The screen of `frames DATASET q1 --config 2f` printing its pictures in tmux, once the
/// last frame's caption shows; `None` without tmux.
fn pictures_on_terminal(name: &str, dataset: &str) -> Option<String> {
    if !common::tmux::tmux_available() {
        return None;
    }
    let name = format!("{name}-{}", std::process::id());
    let args: Vec<String> = [
        "frames", dataset, "q1", "--model", "M", "--config", "2f", "--width", "4",
    ]
    .map(String::from)
    .to_vec();
    // The pane stays after frameaudit exits, so its screen can be read.
    let t = common::tmux::Tmux::run(&name, &args, "tmux set-window-option remain-on-exit on;");
    t.wait_for("2f: frame 9");
    // The last frame's picture or reason comes after its caption.
    std::thread::sleep(std::time::Duration::from_millis(300));
    Some(t.screen())
}

/// `frames` with pictures on a terminal that never answers a graphics query (`script`'s
/// pty, which nobody types into, as under a recorder or CI): the protocol comes from the
/// environment, which names no graphics terminal, so no query is sent and the frames are
/// printed as half blocks. The guard only catches a hang.
#[cfg(unix)]
#[test]
fn frames_pictures_never_wait_for_a_terminal_that_does_not_answer() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        common::skip_note(format_args!(
            "no `script`; frames_pictures_never_wait skipped"
        ));
        return;
    }
    let cmd = format!(
        "{} frames {} clip04-q1 --max 2 --width 20",
        env!("CARGO_BIN_EXE_frameaudit"),
        demo()
    );
    // script's typescript goes to a file of our own, never the machine's /dev/null.
    let typescript = tempfile::NamedTempFile::new().expect("typescript");
    let args = vec![
        "-qfec".to_string(),
        cmd.clone(),
        typescript.path().display().to_string(),
    ];
    let env = [
        ("TERM", Some("xterm-256color")),
        ("TMUX", None),
        ("KITTY_WINDOW_ID", None),
        ("TERM_PROGRAM", None),
        ("LC_TERMINAL", None),
        ("KONSOLE_VERSION", None),
    ];
    let g = common::run_guarded_env(
        std::path::Path::new("script"),
        &args,
        &env,
        std::time::Duration::from_secs(60),
    );
    let out = String::from_utf8_lossy(&g.output.stdout).into_owned();
    assert!(!g.hung, "still running after 60 s; printed:\n{out}");
    assert!(g.output.status.success(), "{out}{}", stderr(&g.output));
    assert!(out.contains("dropped by 16f: frame 9"), "{out}");
    assert!(
        out.contains('▀') || out.contains('▄'),
        "no half blocks:\n{out}"
    );
    assert!(!out.contains("\x1b_G"), "a kitty query was sent:\n{out}");
}

/// Issue 14, item 12: a selection that matches nothing fails with the closest names and
/// the available ones; a partial miss names what matched nothing.
#[test]
fn a_selection_that_matches_nothing_fails_with_did_you_mean() {
    let demo = demo();
    for cmd in ["report", "list"] {
        let o = frameaudit(&[cmd, &demo, "--boot", "0", "--models", "Lumen-7B"]);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", stdout(&o));
        let err = stderr(&o);
        assert!(
            err.contains(
                "--models: no model \"Lumen-7B\" in the dataset; did you mean \"lumen-7b\"?"
            ),
            "{cmd}: {err}"
        );
        assert!(
            err.contains("available models (3): lumen-7b, orbit-2b, vista-13b"),
            "{cmd}: {err}"
        );
        assert!(stdout(&o).is_empty(), "{cmd}: no empty report or header");
    }
    // A config filter with an unknown name would exclude every model.
    let o = frameaudit(&["report", &demo, "--configs", "16,32f", "--boot", "0"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("--configs: no configuration \"16\" in the dataset; did you mean \"16f\"?"),
        "{err}"
    );
    assert!(
        err.contains("available configurations (6): textonly, 4f, 8f, 16f, 32f, 64f"),
        "{err}"
    );
    assert!(!err.contains("\"32f\" in the dataset"), "32f exists: {err}");
    // An empty name in a list is the list's mistake, said once by the option.
    for list in [",,", "lumen-7b,", ",orbit-2b"] {
        let o = frameaudit(&["report", &demo, "--models", list, "--boot", "0"]);
        assert_eq!(o.status.code(), Some(2), "{list}");
        let err = stderr(&o);
        assert_eq!(
            err.matches("an empty name in the list").count(),
            1,
            "{list}: {err}"
        );
        assert!(err.contains("--models"), "{list}: {err}");
    }
    let o = frameaudit(&[
        "plot",
        &demo,
        "-o",
        "/nonexistent/x",
        "--cascade-stages",
        "8f,16F",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(
        "--cascade-stages: no configuration \"16F\" in the dataset; did you mean \"16f\"?"
    ));
    // A partial miss: the others are analysed, the miss is named with the list.
    let o = frameaudit(&[
        "report",
        &demo,
        "--boot",
        "0",
        "--models",
        "lumen-7b,vista13b",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("1 of the 2 models of --models match none in the dataset"),
        "{err}"
    );
    assert!(
        err.contains("no model \"vista13b\" in the dataset; did you mean \"vista-13b\"?"),
        "{err}"
    );
    assert!(err.contains("available models (3)"), "{err}");
    // Other selections of names.
    let o = frameaudit(&["list", &demo, "--protocol", "mian"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("did you mean \"main\"?"),
        "{}",
        stderr(&o)
    );
    let o = frameaudit(&[
        "plot",
        &demo,
        "-o",
        "/nonexistent/x",
        "--scope",
        "CLIPS-MCQ",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("did you mean \"clips-mcq\"?"),
        "{}",
        stderr(&o)
    );
    let o = frameaudit(&["frames", &demo, "clip02-q1", "--model", "Lumen"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("did you mean \"lumen-7b\"?"),
        "{}",
        stderr(&o)
    );
    let o = frameaudit(&["frames", &demo, "clip02-q1", "--config", "16"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no configuration \"16\" in this item's grid; did you mean \"16f\"?"),
        "{}",
        stderr(&o)
    );
    let o = frameaudit(&["frames", &demo, "clip02-q"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("did you mean \"clip02-q1\""),
        "{}",
        stderr(&o)
    );

    let Some(csv) = common::real_csv() else {
        return;
    };
    let csv = csv.to_str().expect("utf8");
    let o = frameaudit(&["report", csv, "--boot", "0", "--models", "Qwen2.5-VL-7b"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("did you mean \"Qwen2.5-VL-7B\""), "{err}");
    assert!(err.contains("available models (5): "), "{err}");
    let o = frameaudit(&["list", csv, "--configs", "16f,32f"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("no configuration \"16f\" in the dataset; did you mean \"16f_151k\""),
        "{err}"
    );
    assert!(err.contains("64f_151k"), "the available list: {err}");
}

/// Issue 14, item 13: frames that cannot be known are said, with the reason, without
/// --explain, and a command that can show none fails.
#[test]
fn frames_without_video_facts_says_why_and_fails() {
    let dir = tempfile::tempdir().expect("tmp");
    let csv = dir.path().join("per_item.csv");
    std::fs::write(
        &csv,
        "sample_id,model,split,config,frame_count,pixel_count,predicted_option,ground_truth_option,correct\n\
         001-1,M,V1,textonly,0,,A,A,1\n001-1,M,V1,16f,16,,A,A,1\n001-1,M,V1,32f,32,,B,A,0\n",
    )
    .expect("write");
    let csv = csv.to_str().expect("utf8");
    for extra in [&[][..], &["--json"][..]] {
        let mut args = vec!["frames", csv, "001-1"];
        args.extend_from_slice(extra);
        let o = frameaudit(&args);
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {}", stdout(&o));
        let err = stderr(&o);
        assert!(
            err.contains(
                "no frames of \"001-1\" can be shown: the item is not described in items.jsonl"
            ),
            "{extra:?}: {err}"
        );
        assert!(err.contains("--videos DIR"), "{err}");
    }
    let text = stdout(&frameaudit(&[
        "frames", csv, "001-1", "--from", "16f", "--to", "32f",
    ]));
    assert!(
        text.contains(
            "16f   16 frames  (which ones is not known: the item is not described in items.jsonl)"
        ),
        "{text}"
    );
    assert!(text.contains("textonly    0 frames  (text only)"), "{text}");
    assert!(
        text.contains(
            "transition 16f -> 32f: frames not known (the item is not described in items.jsonl)"
        ),
        "{text}"
    );
    // Only the text-only configuration asked: nothing is missing, nothing fails.
    let o = frameaudit(&["frames", csv, "001-1", "--config", "textonly"]);
    assert!(o.status.success(), "{}", stderr(&o));

    let Some(real) = common::real_csv() else {
        return;
    };
    let o = frameaudit(&["frames", real.to_str().expect("utf8"), "001-1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("items.jsonl"), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("(which ones is not known: "),
        "{}",
        stdout(&o)
    );
}

/// The report table's CSV rows keyed by (task, split, model), comment lines skipped.
fn table_rows(text: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    let mut r = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .from_reader(text.as_bytes());
    let head: Vec<String> = r
        .headers()
        .expect("header")
        .iter()
        .map(str::to_owned)
        .collect();
    r.records()
        .map(|rec| {
            let rec = rec.expect("record");
            head.iter()
                .cloned()
                .zip(rec.iter().map(str::to_owned))
                .collect()
        })
        .collect()
}

/// Issue 14, item 14: `report --format csv` holds exactly the report JSON's numbers, for
/// every model and split; Markdown and LaTeX the same table rounded; every option is in
/// the header.
#[test]
fn report_table_is_the_json_numbers_with_its_options() {
    let demo = demo();
    let opts = [
        "--boot",
        "50",
        "--variant-budget",
        "zero",
        "--models",
        "lumen-7b,vista-13b,orbit-2b",
    ];
    let mut args = vec!["report", demo.as_str(), "--json"];
    args.extend_from_slice(&opts);
    let r = json(&frameaudit(&args));
    let mut args = vec!["report", demo.as_str(), "--format", "csv"];
    args.extend_from_slice(&opts);
    let o = frameaudit(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for want in [
        "# analysis options:",
        "#   --grid per-model",
        "#   --models lumen-7b,vista-13b,orbit-2b",
        "#   --configs (no filter)",
        "#   --variant-budget zero",
        "#   --reference-pixels auto",
        "#   --boot 50",
        "#   --seed 12345",
        "#   --delta 10",
    ] {
        assert!(text.lines().any(|l| l == want), "no {want:?} in\n{text}");
    }
    // The models' rows: the demo has replicates, whose edges table has rows of its own
    // (task `edges`, tests/report_noise.rs).
    let rows: Vec<_> = table_rows(&text)
        .into_iter()
        .filter(|row| row["task"] == "mcq" || row["task"] == "open")
        .collect();
    let mut seen = 0;
    // Parsed as the JSON's numbers are, so that the same text gives the same value.
    let num = |s: &str| -> Option<f64> {
        if s.is_empty() {
            None
        } else {
            serde_json::from_str::<Value>(s).expect("number").as_f64()
        }
    };
    let same = |cell: &str, v: &Value, what: &str| {
        assert_eq!(num(cell), v.as_f64(), "{what}: {cell:?} vs {v}");
    };
    for a in r["analyses"].as_array().expect("analyses") {
        for (model, x) in a["models"].as_object().expect("models") {
            let row = rows
                .iter()
                .find(|row| {
                    row["task"] == a["task"] && row["split"] == a["scope"] && &row["model"] == model
                })
                .unwrap_or_else(|| panic!("no row for {} {model}", a["scope"]));
            seen += 1;
            let w = |k: &str| {
                row.get(k)
                    .unwrap_or_else(|| panic!("no column {k}"))
                    .as_str()
            };
            assert_eq!(w("n_items"), x["n_items"].to_string());
            for (i, c) in x["grid"]["configs"]
                .as_array()
                .expect("configs")
                .iter()
                .enumerate()
            {
                let c = c.as_str().expect("name");
                if a["task"] == "mcq" {
                    same(w(&format!("acc_{c}")), &x["accuracy"][i], c);
                } else {
                    same(w(&format!("mean_score_{c}")), &x["mean_score"][i], c);
                }
            }
            assert_eq!(w("best_fixed_config"), x["best_fixed"]["config"]);
            if a["task"] == "mcq" {
                same(
                    w("best_fixed_accuracy"),
                    &x["best_fixed"]["accuracy"],
                    "best",
                );
                same(w("oracle_accuracy"), &x["oracle_accuracy"], "oracle");
                same(w("headroom"), &x["headroom"], "headroom");
                same(
                    w("headroom_lo"),
                    &x["bootstrap"]["headroom"]["lo"],
                    "headroom lo",
                );
                same(
                    w("headroom_hi"),
                    &x["bootstrap"]["headroom"]["hi"],
                    "headroom hi",
                );
                same(w("harmful_rate"), &x["harmful_rate"], "harmful");
                same(
                    w("harmful_rate_lo"),
                    &x["bootstrap"]["harmful_rate"]["lo"],
                    "harmful lo",
                );
                same(
                    w("harmful_rate_hi"),
                    &x["bootstrap"]["harmful_rate"]["hi"],
                    "harmful hi",
                );
                same(
                    w("terminal_regression_rate"),
                    &x["terminal_regression_rate"],
                    "terminal",
                );
                same(
                    w("text_overwrite_rate"),
                    &x["text_overwrite"]["rate"],
                    "text overwrite",
                );
            } else {
                same(
                    w("best_fixed_mean_score"),
                    &x["best_fixed"]["mean_score"],
                    "best",
                );
                same(w("oracle_mean"), &x["oracle_mean"], "oracle");
                same(w("oracle_gap"), &x["oracle_gap"], "gap");
                same(
                    w("oracle_gap_lo"),
                    &x["bootstrap"]["oracle_gap"]["lo"],
                    "gap lo",
                );
                same(w("regression_rate"), &x["regression_rate"], "regression");
                same(
                    w("regression_rate_hi"),
                    &x["bootstrap"]["regression_rate"]["hi"],
                    "regression hi",
                );
                same(
                    w("terminal_regression_rate"),
                    &x["terminal_regression_rate"],
                    "terminal",
                );
            }
        }
    }
    assert_eq!(seen, rows.len(), "one row per model and analysis");
    assert!(seen >= 6);

    // Markdown and LaTeX: the same rows, one decimal, comment headers of their own.
    let first = &analysis(&r, "clips-mcq")["models"]["vista-13b"];
    let hb = &first["bootstrap"]["headroom"];
    let cell = format!(
        "{:.1} [{:.1}, {:.1}]",
        first["headroom"].as_f64().expect("h"),
        hb["lo"].as_f64().expect("lo"),
        hb["hi"].as_f64().expect("hi")
    );
    let md = stdout(&frameaudit(&[
        "report",
        &demo,
        "--format",
        "markdown",
        "--layout",
        "wide",
        "--boot",
        "50",
        "--configs",
        "textonly,8f,32f",
    ]));
    assert!(
        md.lines()
            .any(|l| l == "<!--   --configs textonly,8f,32f -->"),
        "{md}"
    );
    assert!(
        md.contains("| Split | Model | Items | K | textonly | 8f | 32f | Best fixed |"),
        "{md}"
    );
    let md = stdout(&frameaudit(&[
        "report", &demo, "--format", "markdown", "--layout", "wide", "--boot", "50",
    ]));
    let row = md
        .lines()
        .find(|l| l.starts_with("| clips-mcq | vista-13b |"))
        .unwrap_or_else(|| panic!("no vista-13b row: {md}"));
    assert!(row.contains(&format!("| {cell} |")), "{row} lacks {cell}");
    let tex = stdout(&frameaudit(&[
        "report", &demo, "--format", "latex", "--layout", "wide", "--boot", "50",
    ]));
    assert!(
        tex.lines().any(|l| l == "%   --variant-budget own"),
        "{tex}"
    );
    assert!(tex.contains("\\begin{tabular}") && tex.contains("\\bottomrule"));
    let row = tex
        .lines()
        .find(|l| l.starts_with("clips-mcq & vista-13b &"))
        .unwrap_or_else(|| panic!("no vista-13b row: {tex}"));
    assert!(
        row.contains(&format!("& {cell} &")) && row.ends_with("\\\\"),
        "{row}"
    );
    let o = frameaudit(&["report", &demo, "--format", "csv", "--json"]);
    assert_eq!(o.status.code(), Some(2), "--json and --format conflict");
}

/// Issue 14, item 14: the readable report names item rates and pair counts.
#[test]
fn readable_report_tells_item_rates_from_pair_counts() {
    let r = json(&frameaudit(&["report", &demo(), "--json", "--boot", "0"]));
    let x = &analysis(&r, "clips-mcq")["models"]["vista-13b"];
    let text = stdout(&frameaudit(&["report", &demo(), "--boot", "0"]));
    let want = format!(
        "harmful items {:.1}% (with a harmful transition) · harmful pairs {} of {} comparable ({:.1}%)",
        x["harmful_rate"].as_f64().expect("rate"),
        x["harmful_pairs"],
        x["pairs_total"],
        x["harmful_pair_rate"].as_f64().expect("pair rate"),
    );
    assert!(text.contains(&want), "no {want:?} in\n{text}");
    assert!(!text.contains("of items ("), "{text}");
    assert!(text.contains(&format!(
        "terminal regressions {:.1}% of items",
        x["terminal_regression_rate"].as_f64().expect("t")
    )));
}

/// An item with cells but no description is named, so that it can be found.
#[test]
fn an_item_without_description_is_named() {
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = common::demo_copy(tmp.path());
    let items = std::fs::read_to_string(ds.join("items.jsonl")).expect("items");
    let (kept, dropped): (Vec<&str>, Vec<&str>) =
        items.lines().partition(|l| !l.contains("\"clip03-q2\""));
    assert_eq!(dropped.len(), 1, "{items}");
    std::fs::write(ds.join("items.jsonl"), kept.join("\n") + "\n").expect("write");
    let text = stdout(&frameaudit(&["validate", ds.to_str().expect("utf8")]));
    assert!(
        text.contains(
            "1 of 63 items with cells has no description (no question, no frames): item \"clip03-q2\" of benchmark \"clips-mcq\""
        ),
        "{text}"
    );
}

/// A share of nothing (one configuration: no pair to compare) reads "n/a", not "(–%)".
#[test]
fn a_rate_of_nothing_reads_not_applicable() {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("one.jsonl");
    let report = |cells: String| {
        std::fs::write(&path, cells).expect("write");
        stdout(&frameaudit(&[
            "report",
            path.to_str().expect("utf8"),
            "--boot",
            "0",
        ]))
    };
    let cells: String = (1..=3)
        .map(|i| {
            format!(
                "{{\"model\":\"m\",\"benchmark\":\"b\",\"item_id\":\"q{i}\",\"config\":\"8f\",\"frames\":8,\"task\":\"mcq\",\"gold\":\"A\",\"pred\":\"{}\"}}\n",
                if i == 1 { "A" } else { "B" }
            )
        })
        .collect();
    let text = report(cells);
    assert!(
        text.contains("harmful pairs 0 of 0 comparable (n/a)"),
        "{text}"
    );
    assert!(!text.contains("–%"), "{text}");

    // No valid cell at all: each section says so rather than standing empty.
    let cells: String = (1..=2)
        .map(|i| format!("{{\"model\":\"m\",\"benchmark\":\"b\",\"item_id\":\"q{i}\",\"config\":\"{i}f\",\"frames\":{i},\"task\":\"mcq\",\"pred\":\"A\"}}\n"))
        .collect();
    let text = report(cells);
    assert_eq!(
        text.matches("nothing to report: no model has a valid cell here (2 of 2 cells read are invalid: `frameaudit validate` says why)").count(),
        2,
        "ALL and b: {text}"
    );
}

#[test]
fn an_audit_exports_as_parquet_with_the_jsonl_columns_but_never_to_a_terminal() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (_, audit) = hostile_dataset(tmp.path());
    let jsonl = frameaudit(&["audit", "export", &audit, "--format", "jsonl"]);
    assert!(jsonl.status.success(), "{}", stderr(&jsonl));
    let pq = frameaudit(&["audit", "export", &audit, "--format", "parquet"]);
    assert!(pq.status.success(), "{}", stderr(&pq));
    assert!(pq.stdout.starts_with(b"PAR1"), "not Parquet");
    let file = tmp.path().join("export.parquet");
    std::fs::write(&file, &pq.stdout).expect("write");
    if let Some((_, rows)) = common::pyarrow_rows(&file, tmp.path()) {
        let lines: Vec<serde_json::Value> = stdout(&jsonl)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(rows.len(), lines.len());
        assert!(!rows.is_empty());
        for (r, l) in rows.iter().zip(&lines) {
            for (k, want) in l.as_object().unwrap() {
                assert_eq!(&r[k], want, "{k}");
            }
        }
    }
    // The columns in the JSONL's order, evidence frames as integers, also for an audit
    // with no record (it had four columns, `at` came fifth, and frames could be text).
    let columns = [
        "annotator",
        "model",
        "benchmark",
        "item_id",
        "from",
        "to",
        "status",
        "tags",
        "pathways",
        "primary",
        "evidence_frames",
        "note",
        "at",
    ];
    let header = std::fs::read_to_string(&audit).expect("audit");
    let header = header.lines().next().expect("header");
    let framed = tmp.path().join("framed.audit.jsonl");
    let set = r#"{"at":"2026-11-30T00:00:01Z","op":"set","model":"m","benchmark":"b","item_id":"q1","from":"8f","to":"16f","status":"done","pathways":["evidence_dropped"],"primary":"evidence_dropped","evidence_frames":[12,13],"note":""}"#;
    let empty = tmp.path().join("empty.audit.jsonl");
    std::fs::write(&framed, format!("{header}\n{set}\n")).expect("write");
    std::fs::write(&empty, format!("{header}\n")).expect("write");
    for (audit, n) in [(&framed, 1), (&empty, 0)] {
        let pq = frameaudit(&[
            "audit",
            "export",
            &audit.display().to_string(),
            "--format",
            "parquet",
        ]);
        assert!(pq.status.success(), "{}", stderr(&pq));
        std::fs::write(&file, &pq.stdout).expect("write");
        if let Some((cols, rows)) = common::pyarrow_rows(&file, tmp.path()) {
            assert_eq!(cols, columns, "{}", audit.display());
            assert_eq!(rows.len(), n);
            if n == 1 {
                assert_eq!(rows[0]["evidence_frames"], serde_json::json!([12, 13]));
            }
        }
    }
    if let Some(t) =
        common::frameaudit_on_terminal(&["audit", "export", &audit, "--format", "parquet"])
    {
        assert!(!t.status.success());
        assert!(String::from_utf8_lossy(&t.stdout).contains("redirect it to a file"));
    }
}

/// Issue 37, item 11: `--boot` and `--shard` are bounded when the command line is parsed
/// (clap's error, exit 2), before the dataset is read: B is the length of vectors allocated
/// up front (10^12 aborted, 2^64 - 1 panicked) and a unit is hashed once per shard (a
/// billion shards never finished). The dataset here does not exist, so a bound checked any
/// later would say that instead; at the bounds the dataset is what fails.
#[test]
fn boot_and_shard_are_bounded_at_parse_time() {
    let tmp = tempfile::tempdir().expect("tmp");
    let missing = tmp.path().join("no-such-dataset").display().to_string();
    let cases: &[(&[&str], &str)] = &[
        (
            &["report", "--boot", "1000000000000"],
            "invalid value '1000000000000' for '--boot <BOOT>': 1000000000000 is not in 0..=1000000",
        ),
        (
            &["plot", "-o", "x", "--boot", "18446744073709551615"],
            "invalid value '18446744073709551615' for '--boot <BOOT>'",
        ),
        (&["list", "--boot", "1000001"], "is not in 0..=1000000"),
        (
            &["list", "--shard", "1/1000000000"],
            "invalid value '1/1000000000' for '--shard <I/N>': expected i/n with 1 <= i <= n <= 1000",
        ),
        (&["--shard", "1/1001"], "for '--shard <I/N>'"),
        (
            &["list", "--shard", "1/2", "--overlap", "NaN"],
            "invalid value 'NaN' for '--overlap <SHARE>': expected a share between 0 and 1",
        ),
    ];
    for (args, says) in cases {
        let (cmd, rest) = args.split_first().expect("args");
        let mut argv = vec![*cmd];
        if !cmd.starts_with("--") {
            argv.push(&missing);
        }
        argv.extend(rest);
        if cmd.starts_with("--") {
            argv.push(&missing);
        }
        let o = frameaudit(&argv);
        assert_eq!(o.status.code(), Some(2), "{argv:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{argv:?}: {}", stderr(&o));
        assert!(
            !stderr(&o).contains("no-such-dataset"),
            "{argv:?}: {}",
            stderr(&o)
        );
    }
    for argv in [
        vec!["report", &missing, "--boot", "1000000"],
        vec!["list", &missing, "--shard", "1000/1000", "--overlap", "1"],
    ] {
        let o = frameaudit(&argv);
        assert!(!o.status.success(), "{argv:?}");
        assert!(
            stderr(&o).contains("no-such-dataset") && !stderr(&o).contains("invalid value"),
            "{argv:?}: the bound itself is accepted: {}",
            stderr(&o)
        );
    }
}

/// Issue 37, item 16: a taxonomy's diagnostics are lines of their own, not one line with
/// `\x0a` in it, and what comes from the file (its name here, with an escape and a line
/// break in it) is still sanitized.
#[test]
fn taxonomy_errors_read_as_lines_with_the_data_sanitized() {
    let tmp = tempfile::tempdir().expect("tmp");
    let taxonomy = tmp.path().join("t\u{1b}[31m\n.json");
    std::fs::write(
        &taxonomy,
        r#"{"id": "x", "version": 1, "pathways": [
 {"id": "a", "label": "A", "description": "", "key": "1"},
 {"id": "b", "label": "B", "description": "", "key": "12"},
 {"id": "c", "label": "C", "description": "", "key": "1"}]}"#,
    )
    .expect("write");
    // Without a terminal the screens' command prints the report, and still reads the
    // taxonomy given for them.
    let o = frameaudit(&[&demo(), "--taxonomy", taxonomy.to_str().expect("utf8")]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("a key is one character, found \"12\""),
        "{}",
        stderr(&o)
    );
    let o = frameaudit(&[
        "audit",
        "agreement",
        "--taxonomy",
        taxonomy.to_str().expect("utf8"),
        "a.audit.jsonl",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(!err.contains('\u{1b}'), "a raw escape: {err:?}");
    let shown = format!(
        "{}t\\x1b[31m\\x0a.json",
        tmp.path().display().to_string() + "/"
    );
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines,
        [
            "frameaudit: error: the input is rejected:".to_string(),
            format!(
                "{shown}:3: error: field `pathways[1].key`: a key is one character, found \"12\""
            ),
            format!("{shown}:4: error: field `pathways[2].key`: key \"1\" is used by \"a\" too"),
            "2 errors, 0 warnings".to_string(),
        ],
        "{err}"
    );
}

/// `import per-item-csv --docs --videos`: the real grid's rows of the shared Video-MME
/// questions get their question, options and video from the annotation file (by question
/// id), the videos are probed (frame counts and rates of the shared test videos), and the
/// dataset's frame view then has frames, marked assumed (no rule is known for the grid's
/// runs); rows no annotation names stay undescribed and are counted. Skipped with a note
/// without ../shared.
#[test]
fn per_item_csv_takes_questions_and_videos_from_annotation_files() {
    let (Some(runs), Some(csv)) = (common::shared_harness_runs(), common::real_csv()) else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tmp");
    let videos = tmp.path().join("hf");
    common::untar(&runs.join("media/hf_home_videos.tar"), &videos);
    // The grid's rows of two of the shared questions and one no annotation names.
    let text = std::fs::read_to_string(&csv).expect("csv");
    let mut lines = text.lines();
    let mut small = format!("{}\n", lines.next().expect("header"));
    for l in lines.filter(|l| {
        ["001-1,", "005-3,", "302-1,"]
            .iter()
            .any(|p| l.starts_with(p))
    }) {
        small.push_str(l);
        small.push('\n');
    }
    let input = tmp.path().join("grid.csv");
    std::fs::write(&input, small).expect("write");
    let ds = tmp.path().join("ds");
    let out = frameaudit(&[
        "import",
        "per-item-csv",
        input.to_str().expect("utf8"),
        "-o",
        ds.to_str().expect("utf8"),
        "--docs",
        runs.join("inputs").to_str().expect("utf8"),
        "--videos",
        videos.to_str().expect("utf8"),
    ]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("items: 2 of 3 described"), "{err}");
    assert!(err.contains("1 items named by no annotation"), "{err}");
    let items: Vec<Value> = std::fs::read_to_string(ds.join("items.jsonl"))
        .expect("items")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    let first = items
        .iter()
        .find(|i| i["item_id"] == "001-1")
        .expect("001-1");
    assert_eq!(first["video"], "fFjv93ACGo8");
    assert_eq!(first["options"][2], "C. option c of 001-1");
    // The shared README's facts of the videos: 1800 frames at 30 fps, 720 at 24.
    assert_eq!(
        (first["num_frames"].as_u64(), first["fps"].as_f64()),
        (Some(1800), Some(30.0))
    );
    let fifth = items
        .iter()
        .find(|i| i["item_id"] == "005-3")
        .expect("005-3");
    assert_eq!(
        (fifth["num_frames"].as_u64(), fifth["fps"].as_f64()),
        (Some(720), Some(24.0))
    );
    // The cells are the CSV's, beside them.
    let plain = tmp.path().join("plain.jsonl");
    let converted = frameaudit(&[
        "import",
        "per-item-csv",
        input.to_str().expect("utf8"),
        "-o",
        plain.to_str().expect("utf8"),
    ]);
    assert!(converted.status.success(), "{}", stderr(&converted));
    assert_eq!(
        std::fs::read(ds.join("cells.jsonl")).expect("cells"),
        std::fs::read(&plain).expect("plain")
    );
    let frames = frameaudit(&[
        "frames",
        ds.to_str().expect("utf8"),
        "001-1",
        "--json",
        "--no-cache",
    ]);
    assert!(frames.status.success(), "{}", stderr(&frames));
    let f: Value = serde_json::from_str(&stdout(&frames)).expect("json");
    let configs = f["configs"].as_array().expect("configs");
    let sixteen = configs
        .iter()
        .find(|c| c["config"] == "16f_151k")
        .expect("16f_151k");
    assert_eq!(sixteen["indices"].as_array().map(Vec::len), Some(16));
    assert_eq!(sixteen["provenance"], "assumed", "{sixteen}");
}

/// A dataset replaced with `import --force` keeps the `videos` link an earlier import made
/// (this one linked none): said, with where it leads, since frames are found through it.
#[test]
fn a_videos_link_kept_by_a_forced_import_is_said() {
    let tmp = tempfile::tempdir().expect("tmp");
    let logs = common::repo().join("fixtures/formats/lmms-eval");
    let ds = tmp.path().join("ds");
    let videos = tmp.path().join("old-videos");
    std::fs::create_dir(&videos).expect("dir");
    let import = |force: bool| {
        let mut args = vec![
            "import",
            "lmms-eval",
            logs.to_str().expect("utf-8"),
            "-o",
            ds.to_str().expect("utf-8"),
        ];
        if force {
            args.push("--force");
        }
        frameaudit(&args)
    };
    let first = import(false);
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(
        !stderr(&first).contains("note: the link"),
        "{}",
        stderr(&first)
    );
    std::os::unix::fs::symlink(&videos, ds.join("videos")).expect("link");
    let again = import(true);
    let err = stderr(&again);
    assert!(again.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "note: the link videos → {}, which an earlier import made, stays in the dataset replaced",
            videos.display()
        )),
        "{err}"
    );
    assert_eq!(
        std::fs::read_link(ds.join("videos")).expect("still a link"),
        videos
    );
}

/// A negative number after its option is that option's value, checked as any other: the
/// check says what is wrong (`--alpha -0.1` was "unexpected argument '-0' found").
#[test]
fn a_negative_option_value_is_checked_not_taken_for_an_option() {
    for (args, want) in [
        (
            &["report", "--alpha", "-0.1"][..],
            "expected a number above 0 and at most 1, found \"-0.1\"",
        ),
        (
            &["report", "--delta", "-5"][..],
            "expected a number >= 0, found \"-5\"",
        ),
        (
            &["report", "--boot", "-1"][..],
            "invalid value '-1' for '--boot",
        ),
    ] {
        let mut all = args.to_vec();
        let d = demo();
        all.insert(1, &d);
        let o = frameaudit(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = stderr(&o);
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("unexpected argument"), "{err}");
    }
}

/// An import's `--model` and `--benchmark` follow the cells' rules when given, so that an
/// import never writes a dataset it would then refuse.
#[test]
fn an_import_refuses_names_its_cells_could_not_hold() {
    let tmp = tempfile::tempdir().expect("tmp");
    let wide = common::repo().join("fixtures/formats/wide-csv");
    let gold = wide.join("videomme_gold.csv");
    let out = tmp.path().join("ds");
    for (flag, value, want) in [
        ("--model", "", "a model name must not be empty"),
        (
            "--benchmark",
            "ALL",
            "\"ALL\" is the name of the scope of every benchmark",
        ),
        ("--benchmark", " ", "a benchmark name must not be empty"),
    ] {
        let o = frameaudit(&[
            "import",
            "wide-csv",
            &wide.display().to_string(),
            "--gold",
            &gold.display().to_string(),
            flag,
            value,
            "-o",
            &out.display().to_string(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{flag} {value:?}: {}", stdout(&o));
        assert!(stderr(&o).contains(want), "{}", stderr(&o));
        assert!(!out.exists(), "nothing written");
    }
}

/// `import reruns` reads its plan first: a missing plan is said as such, not as re-runs
/// not found under the folder.
#[test]
fn import_reruns_says_a_missing_plan_first() {
    let tmp = tempfile::tempdir().expect("tmp");
    let runs = tmp.path().join("runs");
    std::fs::create_dir_all(&runs).expect("mkdir");
    let plan = tmp.path().join("nosuch.json");
    let o = frameaudit(&[
        "import",
        "reruns",
        &runs.display().to_string(),
        "--plan",
        &plan.display().to_string(),
        "-o",
        &tmp.path().join("ds").display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("cannot read the plan"), "{err}");
    assert!(!err.contains("no recorder log"), "{err}");
}

/// A model whose items lack a configuration of its grid stands on fewer items, and the
/// report says so beside its figures (it read "b · 2 items", as complete); counts of one
/// take the singular.
#[test]
fn the_report_says_which_items_a_model_s_grid_left_out() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut lines = String::new();
    for model in ["a", "b"] {
        for item in 0..4 {
            for (config, frames) in [("8f", 8), ("16f", 16), ("32f", 32)] {
                if model == "b" && config == "8f" && item < 2 {
                    continue;
                }
                lines.push_str(&format!(
                    "{{\"model\":\"{model}\",\"benchmark\":\"bm\",\"item_id\":\"q{item}\",\"config\":\"{config}\",\"frames\":{frames},\"correct\":{}}}\n",
                    (item + frames) % 3 != 0
                ));
            }
        }
    }
    std::fs::write(tmp.path().join("cells.jsonl"), lines).expect("write");
    let o = frameaudit(&["report", &tmp.path().display().to_string(), "--no-cache"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("22 cells (0 invalid) · 2 models · 1 benchmark · 4 items"),
        "{text}"
    );
    assert!(text.contains("  a · 4 items · 3 configurations"), "{text}");
    assert!(
        text.contains("  b · 2 of 4 items (2 lack a configuration of the grid) · 3 configurations"),
        "{text}"
    );
}

/// The text report (`--boot 0`) of a cells file of q1, right at 8f and wrong at 16f, with
/// the extra `lines` after those two.
fn report_of_a_flip_with(lines: &[&str]) -> String {
    let tmp = tempfile::tempdir().expect("tmp");
    let cells = tmp.path().join("cells.jsonl");
    let mut text = String::from(concat!(
        "{\"model\":\"m\",\"benchmark\":\"b\",\"item_id\":\"q1\",\"config\":\"8f\",\"frames\":8,\"pred\":\"A\",\"gold\":\"A\"}\n",
        "{\"model\":\"m\",\"benchmark\":\"b\",\"item_id\":\"q1\",\"config\":\"16f\",\"frames\":16,\"pred\":\"B\",\"gold\":\"A\"}\n",
    ));
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    std::fs::write(&cells, text).expect("write");
    let o = frameaudit(&["report", &cells.display().to_string(), "--boot", "0"]);
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

#[test]
fn one_item_re_run_at_the_top_is_said_in_the_singular() {
    let text = report_of_a_flip_with(&[
        "{\"model\":\"m\",\"benchmark\":\"b\",\"item_id\":\"q1\",\"config\":\"16f-int\",\"frames\":16,\"pred\":\"A\",\"gold\":\"A\",\"protocol\":\"intervention\"}",
    ]);
    assert!(
        text.contains(
            "recovers 1 of 1 terminal regression (100.0% [20.7, 100.0]) over 1 item re-run at the top, all wrong there\n"
        ),
        "{text}"
    );
}

#[test]
fn a_lottery_rate_without_a_judgeable_item_says_why() {
    // Harmful 8f → 16f, replicated at 8f only: judgeable at no configuration but one.
    let text = report_of_a_flip_with(&[
        "{\"model\":\"m\",\"benchmark\":\"b\",\"item_id\":\"q1\",\"config\":\"8f\",\"frames\":8,\"pred\":\"A\",\"gold\":\"A\",\"replicate\":\"r1\",\"nuisance\":\"rerun\"}",
    ]);
    assert!(
        text.contains(
            "stable harmful items 0.0% (0 items) · lottery n/a: no harmful item has replicates at every configuration\n"
        ),
        "{text}"
    );
}
