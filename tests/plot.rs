//! `frameaudit plot`: every figure file is written and valid, the numbers in the figures'
//! labels are the report's, the real scale grid is drawn, and bad output paths fail cleanly.

mod common;

use std::collections::HashSet;
use std::path::Path;

use common::{frameaudit, real_csv, repo, stderr, stdout};
use serde_json::Value;

const KINDS: [&str; 6] = [
    "curve",
    "churn",
    "classes",
    "complementarity",
    "datamap",
    "cascade",
];

fn plot(dataset: &Path, out: &Path, extra: &[&str]) -> String {
    let mut args = vec![
        "plot",
        dataset.to_str().expect("utf8"),
        "-o",
        out.to_str().expect("utf8"),
    ];
    args.extend_from_slice(extra);
    let o = frameaudit(&args);
    assert!(o.status.success(), "plot failed: {}", stderr(&o));
    stdout(&o)
}

/// The MCQ `ALL` analysis of the primary protocol in `report --json`.
fn report_models(dataset: &Path) -> Vec<(String, Value)> {
    let o = frameaudit(&["report", dataset.to_str().expect("utf8"), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json: Value = serde_json::from_str(&stdout(&o)).expect("report json");
    let a = json["analyses"]
        .as_array()
        .expect("analyses")
        .iter()
        .find(|a| a["protocol"] == "main" && a["task"] == "mcq" && a["scope"] == "ALL")
        .expect("main/mcq/ALL analysis");
    a["models"]
        .as_object()
        .expect("models")
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The trimmed contents of every `<text>` of an SVG, which must parse as XML.
fn svg_texts(path: &Path) -> Vec<String> {
    let svg = std::fs::read_to_string(path).expect("read svg");
    let doc = roxmltree::Document::parse(&svg)
        .unwrap_or_else(|e| panic!("{} is not valid XML: {e}", path.display()));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.tag_name().name() == "text")
        .map(|n| n.text().unwrap_or("").trim().to_string())
        .collect()
}

fn has(texts: &[String], want: &str, what: &str) {
    assert!(
        texts.iter().any(|t| t == want),
        "{what}: no label {want:?} among {texts:?}"
    );
}

fn f(v: &Value) -> f64 {
    v.as_f64().expect("number")
}

#[test]
fn demo_figures_are_written_valid_and_indexed() {
    let tmp = tempfile::tempdir().expect("tmp");
    // A copy without audits: `cargo run --release` (the README's first command) tags into
    // fixtures/demo/audits, and this checks the figures of a dataset that has none.
    let demo = tmp.path().join("demo");
    std::fs::create_dir_all(&demo).expect("mkdir");
    for f in ["cells.jsonl", "items.jsonl", "dataset.json"] {
        std::fs::copy(repo().join("fixtures/demo").join(f), demo.join(f)).expect("copy");
    }
    let (svg, png) = (tmp.path().join("svg"), tmp.path().join("png"));
    let printed = plot(&demo, &svg, &[]);
    plot(&demo, &png, &["--format", "png"]);
    assert!(
        printed.contains("index.html") && printed.contains(" s:"),
        "{printed}"
    );
    let models = report_models(&demo);
    assert_eq!(models.len(), 3);
    let index = std::fs::read_to_string(svg.join("index.html")).expect("index");
    for (model, _) in &models {
        for kind in KINDS {
            let s = svg.join(format!("{kind}_{model}.svg"));
            assert!(std::fs::metadata(&s).expect("svg written").len() > 1000);
            let texts = svg_texts(&s);
            assert!(texts.len() > 5, "{kind}: too few labels: {texts:?}");
            assert!(
                index.contains(&format!("src=\"{kind}_{model}.svg\"")),
                "index.html lacks {kind}_{model}.svg"
            );
            let p = png.join(format!("{kind}_{model}.png"));
            let img = image::open(&p).expect("valid png").to_rgb8();
            let doc = std::fs::read_to_string(&s).expect("svg");
            let width = roxmltree::Document::parse(&doc).expect("xml");
            let root = width.root_element();
            assert_eq!(
                (img.width().to_string(), img.height().to_string()),
                (
                    root.attribute("width").expect("width").to_string(),
                    root.attribute("height").expect("height").to_string()
                ),
                "{kind}: PNG and SVG sizes differ"
            );
            // Not blank: a figure has ink of several colours.
            let colours: HashSet<[u8; 3]> = img.pixels().map(|p| p.0).collect();
            assert!(colours.len() > 20, "{kind}_{model}.png looks empty");
        }
    }
    // No audits in the demo: the pathway figure is skipped with a note, not drawn empty.
    assert!(
        printed.contains("skipped pathways: no audit records"),
        "{printed}"
    );
    assert!(!svg.join("pathways.svg").exists());
}

#[test]
fn figure_labels_are_the_report_numbers() {
    let demo = repo().join("fixtures/demo");
    let tmp = tempfile::tempdir().expect("tmp");
    plot(&demo, tmp.path(), &[]);
    for (model, x) in report_models(&demo) {
        let texts = |kind: &str| svg_texts(&tmp.path().join(format!("{kind}_{model}.svg")));

        let curve = texts("curve");
        has(
            &curve,
            &format!("oracle {:.1}%", f(&x["oracle_accuracy"])),
            "curve",
        );
        has(
            &curve,
            &format!("+{:.1} pts headroom", f(&x["headroom"])),
            "curve",
        );
        for acc in x["accuracy"].as_array().expect("accuracy") {
            has(&curve, &format!("{:.1}", f(acc)), "curve point");
        }
        for c in x["grid"]["configs"].as_array().expect("configs") {
            has(&curve, c.as_str().expect("name"), "curve axis");
        }

        let churn = texts("churn");
        for step in x["churn"].as_array().expect("churn") {
            has(
                &churn,
                &format!("+{}", step["wrong_to_correct"]),
                "churn gained",
            );
            has(
                &churn,
                &format!("−{}", step["correct_to_wrong"]),
                "churn lost",
            );
            for part in ["stable_correct", "stable_wrong"] {
                if step[part].as_u64() != Some(0) {
                    has(&churn, &step[part].to_string(), "churn stable");
                }
            }
            let name = format!(
                "{} → {}",
                step["from"].as_str().expect("from"),
                step["to"].as_str().expect("to")
            );
            has(&churn, &name, "churn step");
        }

        let classes = texts("classes");
        let n = f(&x["n_items"]);
        for (class, count) in x["classes"].as_object().expect("classes") {
            let c = f(count);
            let label = format!("{} ({:.1}%)", count, 100.0 * c / n);
            assert!(classes.contains(&label), "class {class}: no {label:?}");
        }
        has(
            &classes,
            &format!("{:.1}%", f(&x["harmful_rate"])),
            "harmful",
        );
        let b = &x["bootstrap"]["harmful_rate"];
        has(
            &classes,
            &format!("[{:.1}, {:.1}]", f(&b["lo"]), f(&b["hi"])),
            "harmful interval",
        );
        has(
            &classes,
            &format!("{:.1}%", f(&x["terminal_regression_rate"])),
            "terminal",
        );

        let comp = texts("complementarity");
        for key in ["right_wrong", "pair_oracle_gain"] {
            let m = x["complementarity"][key].as_array().expect("matrix");
            for (r, row) in m.iter().enumerate() {
                for (c, v) in row.as_array().expect("row").iter().enumerate() {
                    if r != c {
                        has(&comp, &format!("{:.1}", f(v)), key);
                    }
                }
            }
        }

        let cascade = texts("cascade");
        let tau = f(&x["cascade"]["selected"]["tau"]);
        has(&cascade, &format!("τ = {tau:.2}"), "cascade selected");
    }
}

#[test]
fn pathways_come_from_the_audits_and_names_are_made_safe() {
    use frameaudit::core::audit::{AuditFile, AuditHeader, AuditRecord, Event, Status, UnitKey};
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = tmp.path().join("ds");
    std::fs::create_dir_all(ds.join("audits")).expect("mkdir");
    for f in ["cells.jsonl", "items.jsonl", "dataset.json"] {
        std::fs::copy(repo().join("fixtures/demo").join(f), ds.join(f)).expect("copy");
    }
    let header = AuditHeader {
        dataset_name: "demo".into(),
        fingerprint: "sha256:x".into(),
        annotator: "ann".into(),
        taxonomy_id: "evidence-pathways".into(),
        taxonomy_version: 1,
        created_at: "2026-11-29T00:00:00Z".into(),
        adjudicates: Vec::new(),
    };
    let (mut file, _) = AuditFile::open(&ds.join("audits/ann.audit.jsonl"), &header).expect("open");
    let tags = [
        ("lumen-7b", vec!["evidence_dropped", "language_prior"]),
        ("lumen-7b", vec!["evidence_dropped"]),
        ("<b>x\u{1}", vec!["distractor_added"]),
    ];
    for (i, (model, tags)) in tags.iter().enumerate() {
        let mut r =
            AuditRecord::blank(UnitKey::new(*model, "b", format!("q{i}")), "8f", "16f", "t");
        r.status = Status::Done;
        r.pathways = tags.iter().map(|t| t.to_string()).collect();
        r.primary = Some(tags[0].to_string());
        file.append(&Event::Set(r)).expect("append");
    }
    drop(file);
    let out = tmp.path().join("out");
    plot(&ds, &out, &[]);
    let texts = svg_texts(&out.join("pathways.svg"));
    has(&texts, "2 tagged · 2 primary", "evidence_dropped overall");
    has(&texts, "1 tagged · 0 primary", "language_prior overall");
    has(&texts, "all models", "overall group");
    has(&texts, "<b>x\\x01", "escaped model name");
    let index = std::fs::read_to_string(out.join("index.html")).expect("index");
    assert!(index.contains("src=\"pathways.svg\""));
    assert!(!index.contains("<b>"), "unescaped markup in index.html");
}

#[test]
fn one_benchmark_scope_and_unknown_scope() {
    let demo = repo().join("fixtures/demo");
    let tmp = tempfile::tempdir().expect("tmp");
    let o = frameaudit(&["report", demo.to_str().expect("utf8"), "--json"]);
    let json: Value = serde_json::from_str(&stdout(&o)).expect("json");
    let bench = json["input"]["benchmarks"][0]
        .as_str()
        .expect("benchmark")
        .to_string();
    let printed = plot(&demo, tmp.path(), &["--scope", &bench, "--boot", "0"]);
    assert!(printed.contains("curve_lumen-7b.svg"), "{printed}");
    let classes = svg_texts(&tmp.path().join("classes_lumen-7b.svg"));
    has(
        &classes,
        "rates; no bootstrap intervals (--boot 0)",
        "no bootstrap note",
    );

    let o = frameaudit(&[
        "plot",
        demo.to_str().expect("utf8"),
        "-o",
        tmp.path().to_str().expect("utf8"),
        "--force",
        "--scope",
        "nope",
    ]);
    assert_eq!(o.status.code(), Some(2), "a name that matches nothing");
    assert!(
        stderr(&o).contains("--scope: no benchmark \"nope\""),
        "{}",
        stderr(&o)
    );
}

#[test]
fn one_configuration_skips_step_figures_with_a_note() {
    let demo = repo().join("fixtures/demo");
    let tmp = tempfile::tempdir().expect("tmp");
    let printed = plot(&demo, tmp.path(), &["--configs", "16f"]);
    assert!(tmp.path().join("curve_lumen-7b.svg").exists());
    assert!(tmp.path().join("datamap_lumen-7b.svg").exists());
    assert!(!tmp.path().join("churn_lumen-7b.svg").exists());
    assert!(
        printed.contains("skipped churn_lumen-7b: one configuration"),
        "{printed}"
    );
    svg_texts(&tmp.path().join("curve_lumen-7b.svg"));
}

#[test]
fn unwritable_output_is_a_clear_error() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "x").expect("write");
    let out = file.join("figures");
    let demo = repo().join("fixtures/demo");
    let o = frameaudit(&[
        "plot",
        demo.to_str().expect("utf8"),
        "-o",
        out.to_str().expect("utf8"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("cannot create the output directory"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn real_scale_grid_figures() {
    let Some(csv) = real_csv() else { return };
    let tmp = tempfile::tempdir().expect("tmp");
    let printed = plot(&csv, tmp.path(), &["--format", "png"]);
    let models = report_models(&csv);
    assert_eq!(models.len(), 5);
    for (model, x) in &models {
        for kind in KINDS {
            let p = tmp.path().join(format!("{kind}_{model}.png"));
            if kind == "cascade" && x["cascade"].is_null() {
                assert!(!p.exists());
                assert!(
                    printed.contains(&format!("skipped cascade_{model}")),
                    "{printed}"
                );
                continue;
            }
            let img = image::open(&p).expect("png").to_rgb8();
            assert!(
                img.width() >= 700 && img.height() >= 400,
                "{kind}_{model}: {:?}",
                img.dimensions()
            );
        }
    }
}

/// Issue 14, item 15: the figures across models, their labels the report's numbers.
#[test]
fn figures_across_models_carry_the_report_numbers() {
    let demo = repo().join("fixtures/demo");
    let tmp = tempfile::tempdir().expect("tmp");
    plot(&demo, tmp.path(), &[]);
    let models = report_models(&demo);
    let curve = svg_texts(&tmp.path().join("models_curve.svg"));
    let rates = svg_texts(&tmp.path().join("models_rates.svg"));
    for (model, x) in &models {
        // In the legend and at the line's end.
        assert!(
            curve.iter().filter(|t| *t == model).count() >= 2,
            "{model} in {curve:?}"
        );
        for c in x["grid"]["configs"].as_array().expect("configs") {
            has(&curve, c.as_str().expect("name"), "models_curve axis");
        }
        has(&rates, model, "models_rates axis");
        has(&rates, &format!("{:.1}", f(&x["headroom"])), "headroom");
        has(&rates, &format!("{:.1}%", f(&x["harmful_rate"])), "harmful");
        for k in ["headroom", "harmful_rate"] {
            let iv = &x["bootstrap"][k];
            has(
                &rates,
                &format!("[{:.1}, {:.1}]", f(&iv["lo"]), f(&iv["hi"])),
                k,
            );
        }
    }
    let index = std::fs::read_to_string(tmp.path().join("index.html")).expect("index");
    assert!(
        index.contains("src=\"models_curve.svg\"") && index.contains("src=\"models_rates.svg\"")
    );

    // One model: nothing to compare, said and skipped.
    let one = tempfile::tempdir().expect("tmp");
    let printed = plot(&demo, one.path(), &["--models", "lumen-7b"]);
    assert!(
        printed.contains("skipped models_curve: one model, so nothing to compare"),
        "{printed}"
    );
    assert!(!one.path().join("models_rates.svg").exists());
}

/// The pixels per metre of a PNG's pHYs chunk.
fn png_ppm(path: &Path) -> Option<u32> {
    let bytes = std::fs::read(path).expect("read png");
    let at = bytes.windows(4).position(|w| w == b"pHYs")? + 4;
    let x = u32::from_be_bytes(bytes[at..at + 4].try_into().ok()?);
    (bytes[at + 8] == 1).then_some(x)
}

/// Issue 14, item 15: `--dpi` draws PNGs at that resolution and records it.
#[test]
fn dpi_sets_the_png_resolution() {
    let demo = repo().join("fixtures/demo");
    let tmp = tempfile::tempdir().expect("tmp");
    plot(
        &demo,
        tmp.path(),
        &["--format", "png", "--dpi", "200", "--boot", "0"],
    );
    for (file, size) in [
        ("curve_lumen-7b.png", (1920, 1200)),
        ("classes_lumen-7b.png", (2160, 1160)),
    ] {
        let p = tmp.path().join(file);
        let img = image::open(&p).expect("valid png").to_rgb8();
        assert_eq!((img.width(), img.height()), size, "{file}");
        assert_eq!(
            png_ppm(&p),
            Some(7874),
            "{file}: 200 dpi in pixels per metre"
        );
        // Drawn at the resolution, not enlarged: anti-aliased text gives many greys.
        let colours: HashSet<[u8; 3]> = img.pixels().map(|p| p.0).collect();
        assert!(colours.len() > 60, "{file}: {} colours", colours.len());
    }
    let default = tempfile::tempdir().expect("tmp");
    plot(
        &demo,
        default.path(),
        &["--format", "png", "--boot", "0", "--models", "lumen-7b"],
    );
    assert_eq!(
        png_ppm(&default.path().join("curve_lumen-7b.png")),
        Some(3937)
    );
    let o = frameaudit(&[
        "plot",
        demo.to_str().expect("utf8"),
        "-o",
        tmp.path().join("svg").to_str().expect("utf8"),
        "--dpi",
        "300",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--dpi sets the resolution of PNG figures"),
        "{}",
        stderr(&o)
    );
    let o = frameaudit(&[
        "plot",
        demo.to_str().expect("utf8"),
        "-o",
        tmp.path().join("x").to_str().expect("utf8"),
        "--format",
        "png",
        "--dpi",
        "5000",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// Past 48 configurations the curve's points and the churn's bars are not labelled one by
/// one (their labels could only cover each other; placing them took minutes at 20 000):
/// the figures are drawn, with the oracle and headroom labels, in well under a second's
/// worth of work. At 48 the points still carry their values.
#[test]
fn many_configurations_are_drawn_without_one_label_each() {
    let tmp = tempfile::tempdir().expect("tmp");
    let labels = |k: usize| {
        let cells = tmp.path().join(format!("k{k}.jsonl"));
        let mut text = String::new();
        for c in 0..k {
            let pred = if c % 3 == 0 { "B" } else { "A" };
            text += &format!(
                "{{\"model\":\"m\",\"item_id\":\"i\",\"config\":\"c{c}\",\"frames\":{},\"pred\":\"{pred}\",\"gold\":\"A\"}}\n",
                c + 1
            );
        }
        std::fs::write(&cells, text).expect("write");
        let out = tmp.path().join(format!("plots{k}"));
        plot(&cells, &out, &[]);
        let curve = svg_texts(&out.join("curve_m.svg"));
        assert!(curve.iter().any(|t| t.contains("headroom")), "{curve:?}");
        let values = curve
            .iter()
            .filter(|t| t.as_str() == "100.0" || t.as_str() == "0.0")
            .count();
        // The one item's stable parts are counts of 1, beside their bars when too thin.
        let churn = svg_texts(&out.join("churn_m.svg"));
        (values, churn.iter().filter(|t| t.as_str() == "1").count())
    };
    let (few, few_churn) = labels(48);
    assert_eq!(few, 48, "each point labelled at 48");
    let (many, many_churn) = labels(3000);
    assert_eq!(many, 0, "no point labels at 3000");
    assert!(few_churn >= 10, "{few_churn} stable counts at 48 bars");
    assert!(many_churn < 10, "{many_churn} stable counts at 3000 bars");
}

/// Issue 37, item 14: a model name is cut to a prefix and a short hash in a file name. A
/// 10 000-character name failed with "File name too long", leaving the figures drawn so
/// far (or an empty folder); two long names with one prefix get files of their own, and
/// an ordinary name keeps its file name.
#[test]
fn long_model_names_get_bounded_file_names() {
    let tmp = tempfile::tempdir().expect("tmp");
    let long = format!("org/{}", "x".repeat(10_000));
    let longer = format!("{long}y");
    let mut text = String::new();
    for (config, frames) in [("4f", 4), ("8f", 8), ("16f", 16)] {
        for item in 0..6 {
            for model in ["m", long.as_str(), longer.as_str()] {
                let pred = if (item + frames) % 3 == 0 { "B" } else { "A" };
                text += &format!(
                    "{{\"model\":\"{model}\",\"item_id\":\"q{item}\",\"config\":\"{config}\",\"frames\":{frames},\"pred\":\"{pred}\",\"gold\":\"A\"}}\n"
                );
            }
        }
    }
    let cells = tmp.path().join("cells.jsonl");
    std::fs::write(&cells, text).expect("write");
    let out = tmp.path().join("figures");
    plot(&cells, &out, &["--boot", "0"]);
    assert!(
        out.join("curve_m.svg").exists(),
        "an ordinary name as it was"
    );
    let mut curves: Vec<String> = std::fs::read_dir(&out)
        .expect("read the figures")
        .map(|e| e.expect("entry").file_name().into_string().expect("utf8"))
        .filter(|n| n.starts_with("curve_org_"))
        .collect();
    curves.sort();
    assert_eq!(curves.len(), 2, "a file for each long name: {curves:?}");
    let index = std::fs::read_to_string(out.join("index.html")).expect("index");
    for name in &curves {
        assert!(name.len() <= 120, "{} bytes: {name}", name.len());
        assert!(name.starts_with("curve_org_xxxx"), "{name}");
        assert!(index.contains(&format!("src=\"{name}\"")), "{name} indexed");
    }
}

/// Issue 39: a model with replicates gets the noise figure, listed in index.html: per
/// ladder edge its observed negative-flip rate, its floor and q, the report's numbers, and
/// `beyond noise` on exactly the edges beyond it; a model without replicates gets none.
#[test]
fn noise_figure_per_model_with_replicates() {
    let demo = repo().join("fixtures/demo");
    let tmp = tempfile::tempdir().expect("tmp");
    let printed = plot(&demo, tmp.path(), &[]);
    let index = std::fs::read_to_string(tmp.path().join("index.html")).expect("index");
    let p = |v: &Value| {
        let p = f(v);
        if p >= 0.001 || p == 0.0 {
            format!("{p:.3}")
        } else {
            format!("{p:.1e}")
        }
    };
    let mut beyond_total = 0;
    for (model, x) in report_models(&demo) {
        let r = &x["replicates"];
        let edges = r["edges"]
            .as_array()
            .expect("the demo's models have replicates");
        let file = format!("noise_{model}.svg");
        assert!(printed.contains(&file), "{printed}");
        assert!(
            index.contains(&format!("src=\"{file}\"")),
            "index lacks {file}"
        );
        let texts = svg_texts(&tmp.path().join(&file));
        has(
            &texts,
            &format!("{model} · negative flips against the noise floor"),
            "title",
        );
        for e in edges {
            let what = format!("{model} {} → {}", e["from"], e["to"]);
            has(
                &texts,
                &format!(
                    "{} → {}",
                    e["from"].as_str().unwrap(),
                    e["to"].as_str().unwrap()
                ),
                &what,
            );
            has(&texts, &format!("{:.1}%", f(&e["observed_nfr"])), &what);
            has(&texts, &format!("floor {:.1}", f(&e["floor_nfr"])), &what);
            has(&texts, &format!("q = {}", p(&e["excess_q"])), &what);
        }
        let beyond = edges.iter().filter(|e| e["beyond_noise"] == true).count();
        beyond_total += beyond;
        // The legend's entry, and one above each edge beyond noise.
        assert_eq!(
            texts.iter().filter(|t| *t == "beyond noise").count(),
            beyond + 1,
            "{model}: {texts:?}"
        );
    }
    assert!(beyond_total > 0, "no edge of the demo is beyond noise");

    // The demo without its replicate cells: no noise figure, no note of one.
    let bare = tmp.path().join("bare");
    std::fs::create_dir_all(&bare).expect("mkdir");
    for name in ["items.jsonl", "dataset.json"] {
        std::fs::copy(demo.join(name), bare.join(name)).expect("copy");
    }
    let cells: String = std::fs::read_to_string(demo.join("cells.jsonl"))
        .expect("cells")
        .lines()
        .filter(|l| !l.contains("\"replicate\""))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(bare.join("cells.jsonl"), cells).expect("write");
    let out = tmp.path().join("bare-figures");
    let printed = plot(&bare, &out, &[]);
    assert!(!printed.contains("noise_"), "{printed}");
    let index = std::fs::read_to_string(out.join("index.html")).expect("index");
    assert!(!index.contains("noise_"));
    assert!(out.join("curve_lumen-7b.svg").exists());
}

/// Every `<text>` of an SVG with its position and whether it is turned.
fn svg_placed_texts(path: &Path) -> Vec<(String, f64, f64, bool)> {
    let svg = std::fs::read_to_string(path).expect("read svg");
    let doc = roxmltree::Document::parse(&svg).expect("xml");
    let num = |n: &roxmltree::Node, a: &str| n.attribute(a).and_then(|v| v.parse().ok());
    doc.descendants()
        .filter(|n| n.tag_name().name() == "text")
        .map(|n| {
            (
                n.text().unwrap_or("").trim().to_string(),
                num(&n, "x").unwrap_or(f64::NAN),
                num(&n, "y").unwrap_or(f64::NAN),
                n.attribute("transform")
                    .is_some_and(|t| t.contains("rotate")),
            )
        })
        .collect()
}

/// The datasets of the figures across models: the demo, and the real grid where present.
fn across_models_datasets() -> Vec<std::path::PathBuf> {
    let mut v = vec![repo().join("fixtures/demo")];
    v.extend(real_csv());
    v
}

/// Issue 41: the names at the ends of `models_curve`'s lines stand top to bottom as the
/// lines end (the highest accuracy first), each name once, none over another.
#[test]
fn curve_end_labels_are_ordered_like_the_lines_ends() {
    for data in across_models_datasets() {
        let tmp = tempfile::tempdir().expect("tmp");
        plot(&data, tmp.path(), &[]);
        let texts = svg_placed_texts(&tmp.path().join("models_curve.svg"));
        let mut ends: Vec<(f64, f64, String)> = report_models(&data)
            .into_iter()
            .map(|(model, x)| {
                let last = x["accuracy"]
                    .as_array()
                    .and_then(|a| a.last())
                    .map(f)
                    .expect("an accuracy");
                // The legend is above the plot: the end label is the lowest of the name.
                let y = texts
                    .iter()
                    .filter(|t| t.0 == model)
                    .map(|t| t.2)
                    .fold(f64::NEG_INFINITY, f64::max);
                (last, y, model)
            })
            .collect();
        ends.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.cmp(&b.2)));
        for w in ends.windows(2) {
            assert!(
                w[0].1 < w[1].1 || w[0].0 == w[1].0,
                "{}: {} ends at {:.1}, above {} at {:.1}, but its name is at y {} against {}",
                data.display(),
                w[0].2,
                w[0].0,
                w[1].2,
                w[1].0,
                w[0].1,
                w[1].1
            );
            assert!(w[1].1 - w[0].1 >= 10.0, "{} overlaps {}", w[0].2, w[1].2);
        }
    }
}

/// Issue 41: the model names under `models_rates`' bars stand horizontally, a long one
/// broken over lines after a `-` (`LLaVA-NeXT-` / `Video-7B`), not turned on their side.
#[test]
fn rates_names_stand_horizontally() {
    for data in across_models_datasets() {
        let tmp = tempfile::tempdir().expect("tmp");
        plot(&data, tmp.path(), &[]);
        let texts = svg_placed_texts(&tmp.path().join("models_rates.svg"));
        for (model, _) in report_models(&data) {
            // The name whole, or its lines one under another at one x.
            let whole = texts.iter().any(|t| t.0 == model && !t.3);
            let broken = texts.iter().enumerate().any(|(i, first)| {
                let mut joined = first.0.clone();
                let mut j = i + 1;
                while joined.len() < model.len() && j < texts.len() {
                    let next = &texts[j];
                    if next.1 != first.1 || next.2 <= texts[j - 1].2 || next.3 {
                        return false;
                    }
                    joined.push_str(&next.0);
                    j += 1;
                }
                !first.3 && j > i + 1 && joined == model
            });
            assert!(
                whole || broken,
                "{}: {model} is not horizontal: {:?}",
                data.display(),
                texts
                    .iter()
                    .filter(|t| model.contains(t.0.as_str()) && !t.0.is_empty())
                    .collect::<Vec<_>>()
            );
        }
    }
}
