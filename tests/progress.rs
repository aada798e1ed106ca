//! Issue 41: long commands say what they are doing on a terminal (a phase line on stderr,
//! erased when it ends) and write nothing more into a pipe.

mod common;

use common::{frameaudit, frameaudit_on_terminal, stderr, stdout};

const CSV: &str = "sample_id,model,split,config,frame_count,pixel_count,predicted_option,ground_truth_option,correct\n\
1,m,s,8f,8,100,A,A,1\n1,m,s,16f,16,100,B,A,0\n2,m,s,8f,8,100,A,B,0\n2,m,s,16f,16,100,B,B,1\n";

fn demo() -> String {
    common::repo().join("fixtures/demo").display().to_string()
}

#[test]
fn a_terminal_sees_each_phase_and_then_its_line_erased() {
    let tmp = tempfile::tempdir().expect("tmp");
    let csv = tmp.path().join("grid.csv");
    std::fs::write(&csv, CSV).expect("write");
    let out = tmp.path().join("cells.jsonl");
    let (csv, out) = (csv.display().to_string(), out.display().to_string());
    let Some(t) = frameaudit_on_terminal(&["import", "per-item-csv", &csv, "-o", &out]) else {
        return;
    };
    assert!(t.status.success(), "{}", stdout(&t));
    let screen = stdout(&t);
    let read = screen.find("reading grid.csv").expect("the reading phase");
    let write = screen
        .find("writing cells to cells.jsonl")
        .expect("the writing phase");
    let done = screen
        .find("frameaudit: wrote 4 cells")
        .expect("the summary");
    assert!(read < write && write < done, "{screen:?}");
    // The phase line is erased before the summary is written over it.
    assert!(screen[write..done].contains("\x1b[2K"), "{screen:?}");

    let Some(t) = frameaudit_on_terminal(&["report", &demo(), "--json", "--boot", "20"]) else {
        return;
    };
    assert!(t.status.success());
    let screen = stdout(&t);
    assert!(screen.contains("reading demo"), "{screen:?}");
    assert!(
        screen.contains("analysing (bootstrap B = 20)"),
        "{screen:?}"
    );
}

#[test]
fn a_pipe_gets_no_phase_lines() {
    let tmp = tempfile::tempdir().expect("tmp");
    let csv = tmp.path().join("grid.csv");
    std::fs::write(&csv, CSV).expect("write");
    let out = tmp.path().join("cells.jsonl");
    let o = frameaudit(&[
        "import",
        "per-item-csv",
        csv.to_str().expect("utf8"),
        "-o",
        out.to_str().expect("utf8"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        format!("frameaudit: wrote 4 cells to {}\n", out.display())
    );
    let o = frameaudit(&["report", &demo(), "--json", "--boot", "20"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "", "nothing but the JSON");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert!(v["analyses"].is_array());
}
