//! A shared dataset is untrusted input: the links it carries never make frameaudit write
//! outside it, an output never replaces a device or annotations, each dataset file has its
//! own audits, and an audit of other data is not appended to unless the annotator says so.
#![cfg(unix)]

mod common;

use std::os::unix::fs::{FileTypeExt, symlink};
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{frameaudit, repo, stderr, stdout};
use frameaudit::core::dataset::load_dataset;
use frameaudit::core::workspace::session::Hold;
use frameaudit::term::TuiOptions;
use frameaudit::tui::build_app;
use frameaudit::tui::input::action::Action;

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// The demo dataset copied into `dir/name`.
fn demo_copy(dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::create_dir_all(&to).expect("mkdir");
    for f in ["cells.jsonl", "items.jsonl", "dataset.json"] {
        std::fs::copy(repo().join("fixtures/demo").join(f), to.join(f)).expect("copy");
    }
    to
}

/// The audit screens' options for `annotator` with the audit file at its default place.
fn default_place(annotator: &str) -> TuiOptions {
    TuiOptions {
        audit: None,
        ..TuiOptions::plain(annotator, PathBuf::new())
    }
}

fn open_screens(data: &Path, annotator: &str) -> anyhow::Result<frameaudit::tui::app::App> {
    let ds = load_dataset(data, None).expect("loads");
    build_app(ds, &default_place(annotator), || {})
}

#[test]
fn a_planted_link_at_the_audit_file_is_refused_and_nothing_is_written_where_it_leads() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = demo_copy(tmp.path(), "shared");
    // The attack as it was reproduced: a name that is a shell command, and the annotator's
    // audit file a link to a file the shell runs.
    let meta = std::fs::read_to_string(data.join("dataset.json")).expect("read");
    let mut meta: serde_json::Value = serde_json::from_str(&meta).expect("json");
    meta["name"] = "$(touch PWNED)".into();
    std::fs::write(data.join("dataset.json"), meta.to_string()).expect("write");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).expect("mkdir");
    let aliases = home.join(".bash_aliases");
    std::fs::create_dir_all(data.join("audits")).expect("mkdir");
    symlink(&aliases, data.join("audits/alice.audit.jsonl")).expect("link");
    let err = open_screens(&data, "alice").err().expect("refused");
    let err = format!("{err:#}");
    assert!(err.contains("symbolic link"), "{err}");
    assert!(err.contains(".bash_aliases"), "names where it leads: {err}");
    assert!(!aliases.exists(), "nothing was written through the link");

    // The lock file beside it, as a link, creates nothing either.
    std::fs::remove_file(data.join("audits/alice.audit.jsonl")).expect("rm");
    let lock = data.join("audits/.alice.audit.jsonl.lock");
    let _ = std::fs::remove_file(&lock);
    let elsewhere = home.join("created-by-lock");
    symlink(&elsewhere, &lock).expect("link");
    let err = format!("{:#}", open_screens(&data, "alice").err().expect("refused"));
    assert!(err.contains("symbolic link"), "{err}");
    assert!(
        !elsewhere.exists(),
        "no lock file was made through the link"
    );
    assert!(!data.join("audits/alice.audit.jsonl").exists());

    // Nor does an audits folder that is a link out of the dataset.
    std::fs::remove_dir_all(data.join("audits")).expect("rm");
    symlink(&home, data.join("audits")).expect("link");
    let err = format!("{:#}", open_screens(&data, "alice").err().expect("refused"));
    assert!(err.contains("audits is a symbolic link"), "{err}");
    assert_eq!(
        std::fs::read_dir(&home).expect("ls").count(),
        0,
        "home untouched"
    );
}

#[test]
fn an_output_that_is_a_device_or_a_pipe_is_written_in_place_never_renamed_over() {
    let tmp = tempfile::tempdir().expect("tmp");
    let demo = s(&repo().join("fixtures/demo"));
    // A null device of our own, never the machine's /dev/null.
    let null = tmp.path().join("null");
    let made = std::process::Command::new("mknod")
        .args([&s(&null), "c", "1", "3"])
        .status()
        .is_ok_and(|st| st.success());
    if made {
        let o = frameaudit(&["cells", &demo, "-o", &s(&null), "--force"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let ft = null.symlink_metadata().expect("there").file_type();
        assert!(ft.is_char_device(), "the device is still a device: {ft:?}");
        // Written in place, it needs no --force: nothing is replaced.
        let o = frameaudit(&["cells", &demo, "-o", &s(&null)]);
        assert!(o.status.success(), "{}", stderr(&o));
    } else {
        common::skip_note(format_args!(
            "mknod needs root; the character device case is not checked"
        ));
    }

    // A pipe gets the output, and stays a pipe.
    let fifo = tmp.path().join("fifo");
    if common::mkfifo(&fifo) {
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(&fifo).expect("read the pipe"))
        };
        let o = frameaudit(&["cells", &demo, "-o", &s(&fifo)]);
        assert!(o.status.success(), "{}", stderr(&o));
        let got = reader.join().expect("reader");
        let lines = got.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count();
        let want = std::fs::read_to_string(repo().join("fixtures/demo/cells.jsonl"))
            .expect("read")
            .lines()
            .count();
        assert_eq!(lines, want, "every cell came through the pipe");
        assert!(
            fifo.symlink_metadata()
                .expect("there")
                .file_type()
                .is_fifo()
        );
    }

    // A link is not written through, even with --force: the file it leads to is kept.
    let victim = tmp.path().join("victim.txt");
    std::fs::write(&victim, "keep").expect("write");
    let link = tmp.path().join("out.jsonl");
    symlink(&victim, &link).expect("link");
    let o = frameaudit(&["cells", &demo, "-o", &s(&link), "--force"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&victim).expect("read"), "keep");
    assert!(
        link.symlink_metadata()
            .expect("there")
            .file_type()
            .is_symlink()
    );
}

#[test]
fn merged_audits_are_annotations_and_never_replaced_by_an_output() {
    let tmp = tempfile::tempdir().expect("tmp");
    let demo = s(&repo().join("fixtures/demo"));
    let header = |who: &str| {
        format!(
            r#"{{"schema":"frameaudit/audit@1","dataset":{{"name":"d","fingerprint":"sha256:00"}},"annotator":"{who}","taxonomy":{{"id":"evidence-pathways","version":1}},"created_at":"2026-12-01T00:00:00Z"}}"#
        )
    };
    let a = tmp.path().join("a.audit.jsonl");
    let b = tmp.path().join("b.audit.jsonl");
    std::fs::write(&a, header("a") + "\n").expect("write");
    std::fs::write(&b, header("b") + "\n").expect("write");
    let merged = tmp.path().join("merged.jsonl");
    let o = frameaudit(&["audit", "merge", &s(&a), &s(&b), "-o", &s(&merged)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let before = std::fs::read(&merged).expect("read");
    let attempts: [Vec<&str>; 4] = [
        vec!["report", &demo, "--items-out", "OUT", "--force"],
        vec!["intervene", "plan", &demo, "-o", "OUT", "--force"],
        vec!["cells", &demo, "-o", "OUT", "--force"],
        vec!["audit", "merge", "A", "-o", "OUT", "--force"],
    ];
    for args in attempts {
        let merged_s = s(&merged);
        let a_s = s(&a);
        let args: Vec<&str> = args
            .iter()
            .map(|x| match *x {
                "OUT" => merged_s.as_str(),
                "A" => a_s.as_str(),
                x => x,
            })
            .collect();
        let o = frameaudit(&args);
        assert!(!o.status.success(), "{args:?} replaced the merged audit");
        assert!(
            stderr(&o).contains("merged audit"),
            "{args:?}: {}",
            stderr(&o)
        );
        assert_eq!(std::fs::read(&merged).expect("read"), before, "{args:?}");
    }
}

/// Two cells files in one folder, the second without the first's last cell, each a
/// dataset.
fn two_datasets_in_one_folder(dir: &Path) -> (PathBuf, PathBuf) {
    let cells = std::fs::read_to_string(repo().join("fixtures/demo/cells.jsonl")).expect("read");
    let a = dir.join("per_item.jsonl");
    let b = dir.join("big.jsonl");
    std::fs::write(&a, &cells).expect("write");
    // One canonical cell fewer: other trajectories (the audit fingerprint hashes the
    // canonical cells).
    let mut lines: Vec<&str> = cells.lines().collect();
    let last = lines
        .iter()
        .rposition(|l| !l.contains("\"replicate\""))
        .expect("a canonical cell");
    lines.remove(last);
    std::fs::write(&b, lines.join("\n") + "\n").expect("write");
    (a, b)
}

#[test]
fn each_dataset_file_has_its_own_audits_and_plot_counts_them() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (a, b) = two_datasets_in_one_folder(tmp.path());
    let mut app = open_screens(&a, "alice").expect("opens");
    app.update(Action::Open);
    app.update(Action::TogglePathway(0));
    app.update(Action::MarkDone);
    assert!(app.session.wait_saved(Duration::from_secs(5)));
    drop(app);
    let own = tmp.path().join("audits/per_item.jsonl/alice.audit.jsonl");
    assert!(
        own.is_file(),
        "the audit of per_item.jsonl is in its own folder"
    );

    // The other file of the folder starts an audit of its own.
    let app = open_screens(&b, "alice").expect("opens");
    assert!(
        app.session.records().is_empty(),
        "big.jsonl sees none of per_item's records"
    );
    drop(app);

    // plot counts the audits of a dataset file, as the findings view does.
    let out = tmp.path().join("figures");
    let o = frameaudit(&["plot", &s(&a), "-o", &s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stdout(&o).contains("no audit records"), "{}", stdout(&o));
    assert!(out.join("pathways.svg").is_file(), "{}", stdout(&o));
}

#[test]
fn an_audit_made_on_other_data_is_held_until_the_annotator_goes_on_with_it() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (a, b) = two_datasets_in_one_folder(tmp.path());
    let mut app = open_screens(&a, "alice").expect("opens");
    app.update(Action::Open);
    app.update(Action::TogglePathway(0));
    assert!(app.session.wait_saved(Duration::from_secs(5)));
    drop(app);
    // per_item's audit put where big.jsonl's goes: an audit of other data.
    let theirs = tmp.path().join("audits/per_item.jsonl/alice.audit.jsonl");
    let ours = tmp.path().join("audits/big.jsonl/alice.audit.jsonl");
    std::fs::create_dir_all(ours.parent().expect("dir")).expect("mkdir");
    std::fs::copy(&theirs, &ours).expect("copy");
    let before = std::fs::read(&ours).expect("read");

    let mut app = open_screens(&b, "alice").expect("opens");
    app.wait_fingerprint();
    assert!(
        matches!(app.session.hold(), Hold::OtherData { .. }),
        "{:?}",
        app.session.hold()
    );
    let notice = app.overlays.notice.as_ref().expect("said").text.clone();
    assert!(notice.contains("nothing is written to it"), "{notice}");
    assert!(notice.contains("W goes on with it"), "{notice}");
    app.update(Action::Open);
    app.update(Action::TogglePathway(1));
    app.update(Action::MarkDone);
    assert!(!app.session.wait_saved(Duration::from_millis(300)));
    assert_eq!(
        std::fs::read(&ours).expect("read"),
        before,
        "nothing appended"
    );
    // Quitting asks first, and says why.
    app.update(Action::Quit);
    let notice = app.overlays.notice.as_ref().expect("asked").text.clone();
    assert!(notice.contains("made on other data"), "{notice}");

    app.update(Action::GoOnWithThisData);
    assert!(app.session.wait_saved(Duration::from_secs(5)));
    let text = std::fs::read_to_string(&ours).expect("read");
    assert!(text.starts_with(std::str::from_utf8(&before).expect("utf8")));
    let added: Vec<&str> = text[before.len()..].lines().collect();
    assert!(added[0].contains(r#""op":"data""#), "{text}");
    assert!(added.len() > 1, "the held changes follow: {text}");
}

#[test]
fn a_temporary_file_a_killed_write_left_is_cleared_by_the_next_write() {
    let tmp = tempfile::tempdir().expect("tmp");
    let demo = s(&repo().join("fixtures/demo"));
    let out = tmp.path().join("cells.out.jsonl");
    let stale = tmp.path().join(".cells.out.jsonl.Ab3dE9.frameaudit-tmp");
    std::fs::write(&stale, "half a file").expect("write");
    let old = std::time::SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&stale)
        .and_then(|f| f.set_modified(old))
        .expect("age");
    let o = frameaudit(&["cells", &demo, "-o", &s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stale.exists(), "the stale temporary file is removed");
    let left: Vec<String> = std::fs::read_dir(tmp.path())
        .expect("ls")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, vec!["cells.out.jsonl".to_string()], "{left:?}");
}

#[test]
fn an_audit_header_with_a_field_twice_is_refused() {
    let tmp = tempfile::tempdir().expect("tmp");
    let audit = tmp.path().join("a.audit.jsonl");
    std::fs::write(
        &audit,
        r#"{"schema":"frameaudit/audit@1","dataset":{"name":"d","fingerprint":"sha256:00"},"annotator":"a","annotator":"b","taxonomy":{"id":"evidence-pathways","version":1},"created_at":"2026-12-01T00:00:00Z"}
"#,
    )
    .expect("write");
    let o = frameaudit(&["audit", "summary", &s(&audit)]);
    assert!(!o.status.success(), "{}", stdout(&o));
    assert!(stderr(&o).contains("annotator"), "{}", stderr(&o));
    assert!(stderr(&o).contains("appears twice"), "{}", stderr(&o));
}

#[test]
fn ids_that_differ_only_in_their_accents_encoding_are_warned_of_and_shown_apart() {
    let tmp = tempfile::tempdir().expect("tmp");
    let cells = repo().join("fixtures/demo/cells.jsonl");
    let text = std::fs::read_to_string(cells).expect("read");
    // One item's cells renamed to a composed id, another's to the same id decomposed.
    let mut ids: Vec<String> = Vec::new();
    for l in text.lines() {
        let v: serde_json::Value = serde_json::from_str(l).expect("json");
        let id = v["item_id"].as_str().expect("id").to_string();
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    let (first, second) = (ids[0].clone(), ids[1].clone());
    let renamed: String = text
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).expect("json");
            if v["item_id"] == first.as_str() {
                v["item_id"] = "caf\u{e9}".into();
            } else if v["item_id"] == second.as_str() {
                v["item_id"] = "cafe\u{301}".into();
            }
            format!("{v}\n")
        })
        .collect();
    let file = tmp.path().join("cells.jsonl");
    std::fs::write(&file, renamed).expect("write");
    let o = frameaudit(&["validate", &s(&file)]);
    assert!(
        stdout(&o).contains("differ only in how their accents are encoded"),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
    let o = frameaudit(&["list", &s(&file)]);
    let listed = stdout(&o);
    assert!(listed.contains("cafe\\u{301}"), "{listed}");
    assert!(listed.contains("caf\u{e9}"), "{listed}");
    // The warning quotes the ids as shown, its backslash not doubled.
    assert!(
        stdout(&o).contains("\"cafe\\u{301}\"") || stderr(&o).contains("\"cafe\\u{301}\""),
        "{}",
        stderr(&o)
    );
    // Two models alike: the report's text and its tables tell them apart as well.
    let models: String = text
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).expect("json");
            let m = v["model"].as_str().expect("model").to_string();
            if m == "lumen-7b" {
                v["model"] = "caf\u{e9}".into();
            } else if m == "orbit-2b" {
                v["model"] = "cafe\u{301}".into();
            }
            format!("{v}\n")
        })
        .collect();
    let file = tmp.path().join("models.jsonl");
    std::fs::write(&file, models).expect("write");
    for format in ["text", "markdown", "latex"] {
        let o = frameaudit(&["report", &s(&file), "--format", format, "--boot", "0"]);
        let out = stdout(&o);
        assert!(o.status.success(), "{format}: {}", stderr(&o));
        let decomposed = if format == "latex" {
            "cafe\\textbackslash{}u\\{301\\}"
        } else if format == "markdown" {
            "cafe\\\\u{301}"
        } else {
            "cafe\\u{301}"
        };
        assert!(out.contains(decomposed), "{format}: {out}");
        assert!(out.contains("caf\u{e9}"), "{format}: {out}");
        assert!(
            !out.contains("cafe\u{301}"),
            "{format}: the raw decomposed id"
        );
    }
}

#[test]
fn a_merge_warns_of_sources_made_on_other_data_also_inside_a_merged_input() {
    let tmp = tempfile::tempdir().expect("tmp");
    let header = |who: &str, fp: &str| {
        format!(
            r#"{{"schema":"frameaudit/audit@1","dataset":{{"name":"d","fingerprint":"{fp}"}},"annotator":"{who}","taxonomy":{{"id":"evidence-pathways","version":1}},"created_at":"2026-12-01T00:00:00Z"}}"#
        )
    };
    let a = tmp.path().join("a.audit.jsonl");
    let b = tmp.path().join("b.audit.jsonl");
    std::fs::write(&a, header("a", "sha256:aa") + "\n").expect("write");
    std::fs::write(&b, header("b", "sha256:bb") + "\n").expect("write");
    let m = tmp.path().join("m.jsonl");
    let o = frameaudit(&["audit", "merge", &s(&a), &s(&b), "-o", &s(&m)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("made on other data"), "{}", stderr(&o));
    // Merged again on its own, the merged file still carries both.
    let m2 = tmp.path().join("m2.jsonl");
    let o = frameaudit(&["audit", "merge", &s(&m), "-o", &s(&m2)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("made on other data"), "{err}");
    assert!(err.contains("merged into"), "{err}");
}

#[test]
fn plot_never_writes_through_a_link_in_its_output_folder() {
    let tmp = tempfile::tempdir().expect("tmp");
    let demo = s(&repo().join("fixtures/demo"));
    let out = tmp.path().join("figures");
    std::fs::create_dir_all(&out).expect("mkdir");
    let victim = tmp.path().join("victim.html");
    std::fs::write(&victim, "keep").expect("write");
    symlink(&victim, out.join("index.html")).expect("link");
    let o = frameaudit(&["plot", &demo, "-o", &s(&out), "--force", "--boot", "0"]);
    assert!(!o.status.success(), "{}", stdout(&o));
    assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&victim).expect("read"), "keep");
}

/// The output folder itself is a link planted in the dataset (to a folder, to nothing) or
/// a link is on its way inside the dataset: refused as a linked output file is, and nothing
/// lands where the link leads.
#[test]
fn plot_never_writes_into_a_linked_output_folder() {
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path(), "ds");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(outside.join("existing")).expect("mkdir");
    symlink(outside.join("existing"), ds.join("figs")).expect("link");
    symlink(outside.join("newdir"), ds.join("figures")).expect("link");
    symlink(&outside, ds.join("up")).expect("link");
    for out in [ds.join("figs"), ds.join("figures"), ds.join("up/sub")] {
        let o = frameaudit(&["plot", &s(&ds), "-o", &s(&out), "--boot", "0"]);
        assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
        let err = stderr(&o);
        assert!(err.contains("cannot create the output directory"), "{err}");
        assert!(err.contains("symbolic link"), "{err}");
    }
    assert_eq!(
        std::fs::read_dir(outside.join("existing"))
            .expect("ls")
            .count(),
        0
    );
    assert!(!outside.join("newdir").exists());
    assert!(!outside.join("sub").exists());
    // The audits folder is the annotators': said as such, not as a file read.
    let o = frameaudit(&["plot", &s(&ds), "-o", &s(&ds.join("audits")), "--boot", "0"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("is inside the audits folder of the dataset"),
        "{}",
        stderr(&o)
    );
    // A real folder inside the dataset is written.
    let o = frameaudit(&[
        "plot",
        &s(&ds),
        "-o",
        &s(&ds.join("real/figs")),
        "--boot",
        "0",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(ds.join("real/figs/index.html").is_file());
}

#[test]
fn an_import_refused_for_a_linked_file_writes_none_of_the_dataset() {
    let tmp = tempfile::tempdir().expect("tmp");
    let out = tmp.path().join("ds");
    std::fs::create_dir_all(&out).expect("mkdir");
    let victim = tmp.path().join("victim.txt");
    std::fs::write(&victim, "keep").expect("write");
    // The last file an import writes is the link: the ones before it are not written
    // either, so the folder never holds half of the new data.
    symlink(&victim, out.join("dataset.json")).expect("link");
    let runs = repo().join("fixtures/harness-runs/lmms-eval-0.7.3/logs/OpenGVLab__InternVL3-8B");
    let o = frameaudit(&["import", "lmms-eval", &s(&runs), "-o", &s(&out), "--force"]);
    assert!(!o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&victim).expect("read"), "keep");
    for f in ["cells.jsonl", "items.jsonl"] {
        assert!(!out.join(f).exists(), "{f} was written");
    }
}

/// A model name holding escapes and a bidi override: `intervene runs` prints commands that
/// show it inert (no raw escape reaches the terminal) and that a shell reads back as the
/// very name, so the printed command re-runs the model the plan names.
#[test]
fn rerun_commands_quote_hostile_names_exactly_and_inert() {
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = tmp.path().join("ds");
    std::fs::create_dir_all(&ds).expect("mkdir");
    let src = repo().join("fixtures/demo");
    for f in ["items.jsonl", "dataset.json"] {
        std::fs::copy(src.join(f), ds.join(f)).expect("copy");
    }
    let hostile = "lumen\u{1b}]0;pwned\u{7}\u{202e}'7b";
    let cells = std::fs::read_to_string(src.join("cells.jsonl")).expect("read");
    std::fs::write(
        ds.join("cells.jsonl"),
        cells.replace(
            "\"model\":\"lumen-7b\"",
            &format!("\"model\":{}", serde_json::json!(hostile)),
        ),
    )
    .expect("write");
    let plan = tmp.path().join("plan.json");
    let o = frameaudit(&["intervene", "plan", &s(&ds), "-o", &s(&plan)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = frameaudit(&[
        "intervene",
        "runs",
        &s(&plan),
        "--dir",
        &s(&tmp.path().join("runs")),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        !text
            .chars()
            .any(|c| c != '\n' && frameaudit::core::text::is_unsafe_char(c)),
        "{text:?}"
    );
    let command = text
        .lines()
        .find(|l| l.starts_with("python3 -m frameaudit_record") && l.contains("lumen"))
        .expect("a command of the model");
    let run = command
        .split(" --run ")
        .nth(1)
        .and_then(|r| r.split(" --strategy").next())
        .expect("--run");
    assert!(
        run.starts_with("$'lumen\\x1b]0;pwned\\x07\\u202e\\'7b/"),
        "{run}"
    );
    let Ok(back) = std::process::Command::new("bash")
        .args(["-c", &format!("printf %s {run}")])
        .env("LC_ALL", "C.UTF-8")
        .output()
    else {
        common::skip_note(format_args!(
            "bash is not here: the command is not read back"
        ));
        return;
    };
    let back = String::from_utf8(back.stdout).expect("utf-8");
    assert!(back.starts_with(&format!("{hostile}/")), "{back:?}");
}
