//! Issue 41: `report --format latex|markdown` tables that fit a paper's page. The LaTeX is
//! compiled with pdflatex (Debian: texlive-latex-base, texlive-latex-recommended for
//! booktabs) and its PDF read back with pdftotext (poppler-utils), each skipped with a note
//! where it is absent.

mod common;

use std::path::Path;
use std::process::Command;

use common::{frameaudit, real_csv, stderr, stdout};

/// The datasets checked: the bundled demo, and the real grid where this checkout has it.
fn datasets() -> Vec<String> {
    let mut v = vec![common::repo().join("fixtures/demo").display().to_string()];
    v.extend(real_csv().map(|p| p.display().to_string()));
    v
}

fn table(data: &str, args: &[&str]) -> String {
    let mut all = vec!["report", data];
    all.extend(args);
    let o = frameaudit(&all);
    assert!(o.status.success(), "{all:?}: {}", stderr(&o));
    stdout(&o)
}

/// pdflatex's log of `tex` set in LaTeX's article class (the narrowest common text width,
/// 345 pt), or `None` with a note when pdflatex or booktabs is absent.
fn compile(tex: &str) -> Option<String> {
    let dir = tempfile::tempdir().expect("tmp");
    compile_in(tex, dir.path())
}

/// [`compile`] in `dir`, which keeps `doc.pdf`.
fn compile_in(tex: &str, dir: &Path) -> Option<String> {
    let have = Command::new("kpsewhich")
        .arg("booktabs.sty")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have || !common::runs("pdflatex", &["--version"]) {
        common::skip_note(format_args!(
            "pdflatex or booktabs is absent (apt-get install texlive-latex-base texlive-latex-recommended); skipping the LaTeX compile"
        ));
        return None;
    }
    std::fs::write(dir.join("table.tex"), tex).expect("write");
    std::fs::write(
        dir.join("doc.tex"),
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\setlength{\\parindent}{0pt}\n\\begin{document}\n\\input{table}\n\\end{document}\n",
    )
    .expect("write");
    let o = Command::new("pdflatex")
        .args(["-interaction=nonstopmode", "-halt-on-error", "doc.tex"])
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run pdflatex");
    let log = std::fs::read_to_string(dir.join("doc.log")).unwrap_or_default();
    assert!(o.status.success(), "pdflatex failed:\n{log}\n{tex}");
    assert!(dir.join("doc.pdf").exists(), "no PDF:\n{log}");
    Some(log)
}

#[test]
fn latex_tables_of_the_real_grid_and_the_demo_fit_a_page() {
    for data in datasets() {
        let tex = table(&data, &["--format", "latex"]);
        assert!(tex.contains("\\begin{tabular}"), "{tex}");
        let Some(log) = compile(&tex) else { return };
        let overfull: Vec<&str> = log
            .lines()
            .filter(|l| l.starts_with("Overfull \\hbox"))
            .collect();
        assert!(overfull.is_empty(), "{data}: {overfull:?}\n{tex}");
    }
}

/// The demo with its models renamed `HOSTILE`, in a folder of `dir`.
fn hostile_demo(dir: &Path) -> String {
    let demo = common::repo().join("fixtures/demo");
    let to = dir.join("demo");
    std::fs::create_dir(&to).expect("mkdir");
    for f in ["dataset.json", "items.jsonl"] {
        std::fs::copy(demo.join(f), to.join(f)).expect("copy");
    }
    let mut cells = std::fs::read_to_string(demo.join("cells.jsonl")).expect("cells");
    for (old, new) in HOSTILE {
        let quoted = |s: &str| serde_json::to_string(s).expect("json");
        cells = cells.replace(&quoted(old), &quoted(new));
    }
    std::fs::write(to.join("cells.jsonl"), cells).expect("cells");
    to.display().to_string()
}

/// Model names LaTeX read as something else: a row starting with `[` or `*` is an argument
/// of the `\\` (or `\midrule`) before it (`[oops]` stops pdflatex with "Missing number",
/// `[3cm]` is 3 cm of space, `*` vanishes), and the article class's OT1 font sets `<`, `>`,
/// `|`, `"` as `¡`, `¿`, `—`, `”`, `--` as an en dash and `'`, `` ` `` as curly quotes.
const HOSTILE: [(&str, &str); 3] = [
    ("lumen-7b", "[oops]lumen"),
    ("orbit-2b", "*orbit<a>|b\"c--d"),
    ("vista-13b", "[3cm]vista's `x`"),
];

/// Such names compile in both layouts and come out of the PDF as they were written (read
/// with pdftotext, skipped with a note where it is absent).
#[test]
fn hostile_model_names_compile_and_read_back_from_the_pdf_as_written() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = hostile_demo(tmp.path());
    for layout in ["paper", "wide"] {
        let tex = table(&data, &["--format", "latex", "--layout", layout]);
        let dir = tmp.path().join(layout);
        std::fs::create_dir(&dir).expect("mkdir");
        if compile_in(&tex, &dir).is_none() {
            return;
        }
        if !common::runs("pdftotext", &["-v"]) {
            common::skip_note(format_args!(
                "pdftotext is absent (apt-get install poppler-utils); skipping the check of the PDF's text"
            ));
            return;
        }
        let o = Command::new("pdftotext")
            .args(["doc.pdf", "doc.txt"])
            .current_dir(&dir)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run pdftotext");
        assert!(o.status.success(), "pdftotext: {}", stderr(&o));
        let text = std::fs::read_to_string(dir.join("doc.txt")).expect("text");
        for (_, name) in HOSTILE {
            assert!(
                text.contains(name),
                "{layout}: {name} not in the PDF:\n{text}\n{tex}"
            );
        }
    }
}

/// The wide layout is still there for whoever wants one row of every column.
#[test]
fn the_wide_layout_is_one_table_per_task() {
    let demo = &datasets()[0];
    let tex = table(
        demo,
        &["--format", "latex", "--layout", "wide", "--boot", "0"],
    );
    let paper = table(demo, &["--format", "latex", "--boot", "0"]);
    let n = |t: &str| t.matches("\\begin{tabular}").count();
    assert!(n(&paper) > n(&tex), "the paper layout wraps:\n{paper}");
    assert!(
        tex.contains("Split & Model & Items & K & textonly"),
        "{tex}"
    );
}

#[test]
fn markdown_tables_stay_within_a_rendered_page() {
    for data in datasets() {
        let md = table(&data, &["--format", "markdown"]);
        let rows: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
        assert!(!rows.is_empty(), "{md}");
        for r in rows {
            assert!(r.chars().count() <= 110, "{data}: {} chars: {r}", r.len());
        }
        // Every value is still there: one row per model under its split.
        assert!(
            md.contains("**Multiple choice (accuracy, %): measures"),
            "{md}"
        );
    }
}

#[test]
fn show_configs_keeps_the_named_configurations_and_refuses_unknown_ones() {
    let demo = &datasets()[0];
    let md = table(
        demo,
        &[
            "--format",
            "markdown",
            "--boot",
            "0",
            "--show-configs",
            "8f,32f",
        ],
    );
    let head = md
        .lines()
        .find(|l| l.starts_with("| Model | Items | K |"))
        .unwrap_or_else(|| panic!("no configuration table:\n{md}"));
    assert_eq!(head, "| Model | Items | K | 8f | 32f |", "{md}");
    // The analysis is unchanged: its header records no --configs filter.
    assert!(md.contains("<!--   --configs (no filter) -->"), "{md}");
    let o = frameaudit(&[
        "report",
        demo,
        "--format",
        "latex",
        "--show-configs",
        "8f,12f",
    ]);
    // A usage error, said as --configs says one: the name, a guess, the names there are.
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("--show-configs: no configuration \"12f\" in the tables; did you mean")
            && err.contains("textonly, 4f, 8f"),
        "{err}"
    );
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
}

/// `--show-configs` is a table's: CSV keeps only the named configurations' columns too
/// (it was ignored there), and a report that is no table refuses it rather than ignore it,
/// as it refuses `--layout`.
#[test]
fn show_configs_also_picks_csv_columns_and_is_refused_without_a_table() {
    let demo = &datasets()[0];
    let csv = table(
        demo,
        &["--format", "csv", "--boot", "0", "--show-configs", "8f,32f"],
    );
    let head = csv
        .lines()
        .find(|l| !l.starts_with('#'))
        .unwrap_or_else(|| panic!("no header:\n{csv}"));
    let accs: Vec<&str> = head.split(',').filter(|c| c.starts_with("acc_")).collect();
    assert_eq!(accs, ["acc_8f", "acc_32f"], "{head}");
    // Every row has the header's number of fields.
    let width = head.split(',').count();
    for row in csv.lines().filter(|l| !l.starts_with('#')) {
        assert_eq!(row.split(',').count(), width, "{row}");
    }
    // A table's option given to a report that is not that table: refused, nothing printed.
    let refused = |option: &[&str], format: &[&str], said: &str| {
        let mut args = vec!["report", demo.as_str()];
        args.extend(option);
        args.extend(format);
        let o = frameaudit(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stdout(&o));
        assert!(stderr(&o).contains(said), "{}", stderr(&o));
        assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    };
    for format in [
        &[][..],
        &["--json"][..],
        &["--format", "text"][..],
        &["--format", "csv"][..],
    ] {
        // --layout is a Markdown or LaTeX table's (CSV has one layout).
        let layout = "--layout lays out a Markdown or LaTeX table";
        refused(&["--layout", "wide"], format, layout);
        // --show-configs picks CSV columns too.
        if !format.contains(&"csv") {
            let said = "--show-configs picks the columns of a table";
            refused(&["--show-configs", "8f"], format, said);
        }
    }
}
