//! `dataset.json` read field by field, so that every problem of the file is said at once,
//! each with its line and field (`runs[2]`, `configs`), rather than the first one serde
//! meets: the file is parsed as JSON, then each field, each configuration and each run
//! is read on its own. A JSON array where an object is expected is refused (serde would
//! fill a struct from it by position).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::{DatasetMeta, RunEntry};
use crate::core::diag::Diagnostics;
use crate::core::load::json::describe_json_error;
use crate::core::sampling::{ConfigSampling, Policy};
use crate::core::text::json_kind;

/// The `schema` a dataset.json of this version writes.
pub const SCHEMA: &str = "frameaudit/dataset@1";

/// Reads `text`, the contents of `file`: the fields it could read (defaults for the
/// others), every problem said in `diags`.
pub fn read(text: &str, file: &Arc<Path>, diags: &mut Diagnostics) -> DatasetMeta {
    let mut meta = DatasetMeta::default();
    let root: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            diags.error(
                file,
                Some(e.line() as u64),
                None,
                format!("malformed dataset.json: {}", describe_json_error(&e)),
            );
            return meta;
        }
    };
    let lines = Lines::of(text);
    for (path, line) in &lines.duplicates {
        diags.error(
            file,
            Some(*line),
            Some(&path.field()),
            format!("{} is given twice", path.show()),
        );
    }
    let Value::Object(top) = root else {
        diags.error(
            file,
            Some(1),
            None,
            format!(
                "dataset.json is {}; expected a JSON object of fields (\"name\", \"configs\", \"runs\"...)",
                json_kind(&root)
            ),
        );
        return meta;
    };
    let at = |path: &[Seg]| lines.line(path);
    // Where each run read stands in `runs`.
    let mut run_at: Vec<usize> = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    let mut bad = |path: &[Seg], msg: String| {
        let p = Path_(path.to_vec());
        diags.error(file, at(path), Some(&p.field()), msg);
    };
    for (key, v) in &top {
        let path = [Seg::Key(key.clone())];
        let text = |v: &Value| match v {
            Value::String(s) => Ok(Some(s.clone())),
            Value::Null => Ok(None),
            other => Err(format!(
                "{key:?} is {}; expected a string",
                json_kind(other)
            )),
        };
        let read = match key.as_str() {
            "schema" => text(v).map(|s| meta.schema = s),
            "name" => text(v).map(|s| meta.name = s),
            "frames_dir" => text(v).map(|s| meta.frames_dir = s),
            "videos_dir" => text(v).map(|s| meta.videos_dir = s),
            "frame_name" => text(v).map(|s| meta.frame_name = s),
            "configs" => {
                meta.configs = configs(v, &mut bad);
                Ok(())
            }
            "runs" => {
                (run_at, meta.runs) = runs(v, &mut bad).into_iter().unzip();
                Ok(())
            }
            _ => {
                unknown.push(key.clone());
                Ok(())
            }
        };
        if let Err(msg) = read {
            bad(&path, msg);
        }
    }
    // A field no frameaudit reads: a later version's, or a misspelt one (`frame_dir`).
    for key in &unknown {
        let near = FIELDS
            .iter()
            .map(|f| (strsim::jaro_winkler(key, f), f))
            .filter(|(score, _)| *score > 0.85)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map_or(String::new(), |(_, f)| format!("; did you mean {f:?}?"));
        diags.warning(
            file,
            at(&[Seg::Key(key.clone())]),
            Some(key),
            format!("{key:?} is not a field frameaudit reads, so it is ignored{near}"),
        );
    }
    if let Some(schema) = &meta.schema {
        schema_warning(schema, file, at(&[Seg::Key("schema".into())]), diags);
    }
    check_paths(&meta, &run_at, file, &at, diags);
    meta.run_lines = run_at
        .iter()
        .map(|&i| at(&[Seg::Key("runs".into()), Seg::Index(i)]))
        .collect();
    meta
}

/// Warns about the folders and file names that the frame readers refuse (absolute paths,
/// `..`, NUL bytes: names from data files never lead outside the dataset), each at its
/// line, so `validate` says why a dataset's frames would not be shown. `run_at` is where
/// each of `meta.runs` stands in the file's `runs`.
fn check_paths(
    meta: &DatasetMeta,
    run_at: &[usize],
    file: &Arc<Path>,
    at: &impl Fn(&[Seg]) -> Option<u64>,
    diags: &mut Diagnostics,
) {
    use crate::core::paths::{check_frame_name, check_relative, saved_frame_path};
    const REFUSED: &str = "frameaudit refuses it, so no frame is found through it";
    let top = |field: &str| at(&[Seg::Key(field.into())]);
    for (field, value) in [
        ("frames_dir", &meta.frames_dir),
        ("videos_dir", &meta.videos_dir),
    ] {
        if let Some(v) = value
            && let Err(why) = check_relative(v)
        {
            let msg = format!("{v:?} {why}; {REFUSED}");
            diags.warning(file, top(field), Some(field), msg);
        }
    }
    if let Some(t) = &meta.frame_name
        && let Err(why) = check_frame_name(t)
    {
        let msg = format!("{t:?} {why}; {REFUSED}");
        diags.warning(file, top("frame_name"), Some("frame_name"), msg);
    }
    for (run, &i) in meta.runs.iter().zip(run_at) {
        if let Some(t) = &run.rule.frame_files {
            let path = saved_frame_path(t, "VIDEO", 0, 1);
            if let Err(why) = check_relative(&path) {
                let place = [Seg::Key("runs".into()), Seg::Index(i)];
                diags.warning(
                    file,
                    at(&place),
                    Some(&Path_(place.to_vec()).field()),
                    format!(
                        "run {:?} at {:?}: frame_files {t:?} {why}; {REFUSED}",
                        run.model, run.config
                    ),
                );
            }
        }
    }
}

/// The fields of dataset.json, as [`read`] reads them.
const FIELDS: [&str; 7] = [
    "schema",
    "name",
    "frames_dir",
    "videos_dir",
    "frame_name",
    "configs",
    "runs",
];

/// Says a schema this version does not read: another format's, or a later version of
/// this one (read as far as its fields are known).
fn schema_warning(schema: &str, file: &Arc<Path>, line: Option<u64>, diags: &mut Diagnostics) {
    let Some(version) = schema.strip_prefix("frameaudit/dataset@") else {
        diags.warning(
            file,
            line,
            Some("schema"),
            format!("unknown schema {schema:?}; expected {SCHEMA:?}"),
        );
        return;
    };
    if version != "1" {
        diags.warning(
            file,
            line,
            Some("schema"),
            format!(
                "schema {schema:?} is not the version this frameaudit reads ({SCHEMA:?}); the fields it knows are read, others ignored"
            ),
        );
    }
}

/// `configs`: an object of configurations, each read on its own, its policy checked as
/// the frame rules will use it.
fn configs(v: &Value, bad: &mut impl FnMut(&[Seg], String)) -> BTreeMap<String, ConfigSampling> {
    let mut out = BTreeMap::new();
    let Value::Object(map) = v else {
        bad(
            &[Seg::Key("configs".into())],
            format!(
                "\"configs\" is {}; expected an object of configurations ({{\"16f\": {{\"policy\": \"linspace\"}}}})",
                json_kind(v)
            ),
        );
        return out;
    };
    for (name, c) in map {
        let path = [Seg::Key("configs".into()), Seg::Key(name.clone())];
        let read = object(c).and_then(|_| {
            serde_json::from_value::<ConfigSampling>(c.clone()).map_err(|e| e.to_string())
        });
        match read {
            Ok(c) => {
                if let Err(why) = Policy::from_config(&c) {
                    bad(&path, format!("configuration {name:?}: {why}"));
                }
                out.insert(name.clone(), c);
            }
            Err(why) => bad(&path, format!("configuration {name:?}: {why}")),
        }
    }
    out
}

/// `runs`: an array of runs, each read on its own: those read, each with its place.
fn runs(v: &Value, bad: &mut impl FnMut(&[Seg], String)) -> Vec<(usize, RunEntry)> {
    let Value::Array(list) = v else {
        bad(
            &[Seg::Key("runs".into())],
            format!("\"runs\" is {}; expected an array of runs", json_kind(v)),
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, r) in list.iter().enumerate() {
        let path = [Seg::Key("runs".into()), Seg::Index(i)];
        let read = object(r).and_then(|_| {
            serde_json::from_value::<RunEntry>(r.clone()).map_err(|e| run_field_error(r, &e))
        });
        match read {
            Ok(run) => out.push((i, run)),
            Err(why) => bad(&path, format!("run {}: {why}", i + 1)),
        }
    }
    out
}

/// What is wrong in a run serde refused, naming the run's field at fault: serde reads the
/// rule's fields flattened into the run's, so its own message (`missing field \`n\``,
/// `expected u64`) names neither `rule` nor the run's field. Each field is read alone to
/// find the one at fault; serde's words stay when none is (an unknown combination).
fn run_field_error(run: &Value, whole: &serde_json::Error) -> String {
    use crate::core::rules::{FrameRule, Provenance, decoder::RunDecoder};
    fn check<T: serde::de::DeserializeOwned>(v: &Value) -> Result<(), String> {
        serde_json::from_value::<T>(v.clone())
            .map(drop)
            .map_err(|e| plain(&e.to_string()))
    }
    /// A field's name, whether it is required, and its check.
    type Field = (&'static str, bool, fn(&Value) -> Result<(), String>);
    let fields: [Field; 10] = [
        ("model", true, check::<String>),
        ("config", true, check::<String>),
        ("protocol", false, check::<Option<String>>),
        ("benchmark", false, check::<Option<String>>),
        ("rule", false, check::<Option<FrameRule>>),
        ("provenance", true, check::<Provenance>),
        ("name", true, check::<String>),
        ("why", true, check::<String>),
        ("frame_files", false, check::<Option<String>>),
        ("decoder", false, check::<Option<RunDecoder>>),
    ];
    let mut said = Vec::new();
    for (name, required, check) in fields {
        match run.get(name) {
            None if required => said.push(format!("`{name}` is missing")),
            None => {}
            Some(v) => {
                if let Err(why) = check(v) {
                    said.push(format!("`{name}`: {why}"));
                }
            }
        }
    }
    if said.is_empty() {
        plain(&whole.to_string())
    } else {
        said.join("; ")
    }
}

/// serde's type names in words.
fn plain(msg: &str) -> String {
    msg.replace("expected u64", "expected a whole number >= 0")
        .replace("expected u32", "expected a whole number >= 0")
        .replace("expected usize", "expected a whole number >= 0")
        .replace("expected f64", "expected a number")
}

/// Refuses anything but a JSON object where a record is read.
fn object(v: &Value) -> Result<(), String> {
    match v {
        Value::Object(_) => Ok(()),
        other => Err(format!("{}; expected an object", json_kind(other))),
    }
}

/// One step of a path into the file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Seg {
    Key(String),
    Index(usize),
}

/// A path into the file, as a diagnostic's field names it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Path_(Vec<Seg>);

impl Path_ {
    /// `runs[2]`, `configs`: the top field, with the index of a run.
    fn field(&self) -> String {
        let mut out = String::new();
        for (k, seg) in self.0.iter().enumerate() {
            match seg {
                Seg::Key(key) if k == 0 => out.push_str(key),
                Seg::Index(i) => out.push_str(&format!("[{i}]")),
                Seg::Key(_) => break,
            }
        }
        out
    }

    /// The path as a message names it: `"name"`, `configuration "16f"`.
    fn show(&self) -> String {
        match self.0.as_slice() {
            [Seg::Key(c), Seg::Key(name)] if c == "configs" => format!("configuration {name:?}"),
            [Seg::Key(c), Seg::Key(name), .., Seg::Key(k)] if c == "configs" => {
                format!("{k:?} of configuration {name:?}")
            }
            [.., Seg::Key(k)] => format!("{k:?}"),
            _ => self.field(),
        }
    }
}

/// The line each value of the first two levels of a JSON text starts on, and the keys
/// given twice in one object at any depth (the parsed value keeps only the last).
struct Lines {
    starts: BTreeMap<Vec<Seg>, u64>,
    duplicates: Vec<(Path_, u64)>,
}

impl Lines {
    /// Scans `text`, which is valid JSON.
    fn of(text: &str) -> Lines {
        struct Level {
            object: bool,
            key: Option<String>,
            index: usize,
            /// The keys of this object so far.
            seen: std::collections::HashSet<String>,
        }
        let mut out = Lines {
            starts: BTreeMap::new(),
            duplicates: Vec::new(),
        };
        let b = text.as_bytes();
        let (mut i, mut line) = (0usize, 1u64);
        let mut stack: Vec<Level> = Vec::new();
        let mut expect_key = false;
        let path = |stack: &[Level]| -> Vec<Seg> {
            stack
                .iter()
                .map(|l| match (&l.key, l.object) {
                    (Some(k), true) => Seg::Key(k.clone()),
                    _ => Seg::Index(l.index),
                })
                .collect()
        };
        while i < b.len() {
            let c = b[i];
            match c {
                b'\n' => line += 1,
                b'"' => {
                    let start = i;
                    i += 1;
                    while i < b.len() && b[i] != b'"' {
                        i += if b[i] == b'\\' { 2 } else { 1 };
                    }
                    let raw = &text[start..=i.min(b.len() - 1)];
                    if expect_key {
                        let key: String = serde_json::from_str(raw).unwrap_or_default();
                        let twice = stack
                            .last_mut()
                            .is_some_and(|level| !level.seen.insert(key.clone()));
                        if let Some(level) = stack.last_mut() {
                            level.key = Some(key);
                        }
                        let p = path(&stack);
                        if twice {
                            out.duplicates.push((Path_(p.clone()), line));
                        }
                        if stack.len() <= 2 {
                            out.starts.entry(p).or_insert(line);
                        }
                        expect_key = false;
                    } else {
                        out.value_at(&stack, &path, line);
                    }
                }
                b'{' | b'[' => {
                    out.value_at(&stack, &path, line);
                    stack.push(Level {
                        object: c == b'{',
                        key: None,
                        index: 0,
                        seen: Default::default(),
                    });
                    expect_key = c == b'{';
                }
                b'}' | b']' => {
                    stack.pop();
                }
                b',' => {
                    if let Some(level) = stack.last_mut() {
                        level.index += 1;
                        expect_key = level.object;
                    }
                }
                b':' | b' ' | b'\t' | b'\r' => {}
                _ => {
                    // A number, true, false or null: to its end.
                    out.value_at(&stack, &path, line);
                    while i + 1 < b.len() && !b",}] \t\r\n".contains(&b[i + 1]) {
                        i += 1;
                    }
                }
            }
            i += 1;
        }
        out
    }

    /// Notes where an array's element starts (an object's values are noted at their key).
    fn value_at<L>(&mut self, stack: &[L], path: &impl Fn(&[L]) -> Vec<Seg>, line: u64) {
        let p = path(stack);
        if (1..=2).contains(&p.len()) && matches!(p.last(), Some(Seg::Index(_))) {
            self.starts.entry(p).or_insert(line);
        }
    }

    fn line(&self, path: &[Seg]) -> Option<u64> {
        self.starts.get(path).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(text: &str) -> Vec<String> {
        let file: Arc<Path> = Arc::from(Path::new("dataset.json"));
        let mut d = Diagnostics::default();
        read(text, &file, &mut d);
        d.sorted().into_iter().map(|x| x.to_string()).collect()
    }

    /// A field no frameaudit reads is warned about at its line, with the field it may be a
    /// misspelling of; a field of the file is not.
    #[test]
    fn an_unknown_field_is_said_with_a_guess() {
        let text = "{\n  \"schema\": \"frameaudit/dataset@1\",\n  \"frame_dir\": \"frames\",\n  \"made_by\": \"me\"\n}\n";
        let p = problems(text);
        assert_eq!(
            p,
            [
                "dataset.json:3: warning: field `frame_dir`: \"frame_dir\" is not a field frameaudit reads, so it is ignored; did you mean \"frames_dir\"?",
                "dataset.json:4: warning: field `made_by`: \"made_by\" is not a field frameaudit reads, so it is ignored",
            ]
        );
    }

    #[test]
    fn every_problem_is_said_with_its_line_and_field() {
        let text = "{\n  \"name\": 5,\n  \"configs\": {\n    \"4f\": {\"policy\": \"bogus\"},\n    \"16f\": {\"policy\": \"nested\", \"base\": -3},\n    \"8f\": [\"fps\", 2.0],\n    \"2f\": {\"policy\": \"fps\", \"fps\": 0}\n  },\n  \"runs\": [\n    {\"model\": \"m\", \"config\": \"4f\", \"rule\": {\"kind\": \"policy\", \"policy\": \"linspace\"}},\n    [1, 2]\n  ]\n}\n";
        let p = problems(text);
        let has = |line: u64, field: &str, text: &str| {
            p.iter()
                .any(|x| x.contains(&format!(":{line}:")) && x.contains(field) && x.contains(text))
        };
        assert!(
            has(2, "name", "\"name\" is a number; expected a string"),
            "{p:#?}"
        );
        assert!(
            has(4, "configs", "configuration \"4f\": unknown policy"),
            "{p:#?}"
        );
        assert!(has(5, "configs", "configuration \"16f\""), "{p:#?}");
        assert!(
            has(
                6,
                "configs",
                "configuration \"8f\": an array; expected an object"
            ),
            "{p:#?}"
        );
        assert!(
            has(7, "configs", "needs a positive sampling rate"),
            "{p:#?}"
        );
        assert!(has(10, "runs[0]", "run 1:"), "{p:#?}");
        assert!(
            has(11, "runs[1]", "run 2: an array; expected an object"),
            "{p:#?}"
        );
        assert_eq!(p.len(), 7, "{p:#?}");
    }

    /// A run's problem names the run's field at fault (serde reads the rule flattened into
    /// the run, and its words named neither), every one of them, in plain words.
    #[test]
    fn a_run_s_problem_names_its_field() {
        let run = |rule: &str, provenance: &str| {
            format!(
                "{{\"model\": \"m\", \"config\": \"8f\", \"rule\": {rule}, \"provenance\": \"{provenance}\", \"name\": \"n\", \"why\": \"w\"}}"
            )
        };
        let text = format!(
            "{{\"runs\": [\n{},\n{},\n{},\n{},\n{}\n]}}",
            run(r#"{"kind": "policy", "policy": "linspace"}"#, "reproduced"),
            run(
                r#"{"kind": "get_index", "n": "8", "bounded": true}"#,
                "sure"
            ),
            run(
                r#"{"kind": "get_index", "n": 8, "bounded": true}"#,
                "assumed"
            ),
            r#"{"model": "m", "config": "8f", "rule": null, "provenance": "recorded"}"#,
            // No rule is a rule of null, not a problem.
            r#"{"model": "m", "config": "4f", "provenance": "sure", "name": "n", "why": "w"}"#,
        );
        let p = problems(&text);
        assert_eq!(
            p,
            [
                "dataset.json:2: error: field `runs[0]`: run 1: `rule`: missing field `n`",
                "dataset.json:3: error: field `runs[1]`: run 2: `rule`: invalid type: string \"8\", expected a whole number >= 0; `provenance`: unknown variant `sure`, expected one of `recorded`, `reproduced`, `assumed`",
                "dataset.json:5: error: field `runs[3]`: run 4: `name` is missing; `why` is missing",
                "dataset.json:6: error: field `runs[4]`: run 5: `provenance`: unknown variant `sure`, expected one of `recorded`, `reproduced`, `assumed`",
            ]
        );
    }

    #[test]
    fn an_array_or_a_later_schema_is_said() {
        let p = problems(r#"["frameaudit/dataset@1", "pwned"]"#);
        assert!(
            p[0].contains("dataset.json is an array; expected a JSON object"),
            "{p:?}"
        );
        let p = problems(r#"{"schema": "frameaudit/dataset@99"}"#);
        assert!(
            p[0].contains("is not the version this frameaudit reads"),
            "{p:?}"
        );
        let p = problems(r#"{"schema": "other@1"}"#);
        assert!(p[0].contains("unknown schema"), "{p:?}");
        assert!(problems(r#"{"schema": "frameaudit/dataset@1", "name": "x"}"#).is_empty());
        let p = problems("{\"name\": \"a\",\n \"name\": \"b\"}");
        assert!(
            p[0].contains(":2:") && p[0].contains("\"name\" is given twice"),
            "{p:?}"
        );
        // At any depth: a configuration's policy, a run's frame rule.
        let p = problems(
            "{\"configs\": {\"16f\": {\"policy\": \"linspace\",\n \"policy\": \"interior\"}},\n\
             \"runs\": [{\"model\": \"m\", \"sampling\": {\"policy\": \"linspace\",\n\"policy\": \"fps\"}}]}",
        );
        assert!(
            p.iter().any(|p| p.contains(":2:")
                && p.contains("field `configs`")
                && p.contains("\"policy\" of configuration \"16f\" is given twice")),
            "{p:?}"
        );
        assert!(
            p.iter().any(|p| p.contains(":4:")
                && p.contains("field `runs[0]`")
                && p.contains("\"policy\" is given twice")),
            "{p:?}"
        );
    }

    #[test]
    fn lines_are_found_through_strings_with_escapes_and_brackets() {
        let text = "{\"a\": \"x\\\"{[,\",\n\"runs\": [\n{}, \n\n{\"b\": 1}]}";
        let l = Lines::of(text);
        assert_eq!(l.line(&[Seg::Key("a".into())]), Some(1));
        assert_eq!(l.line(&[Seg::Key("runs".into())]), Some(2));
        assert_eq!(l.line(&[Seg::Key("runs".into()), Seg::Index(0)]), Some(3));
        assert_eq!(l.line(&[Seg::Key("runs".into()), Seg::Index(1)]), Some(5));
        assert!(l.duplicates.is_empty());
    }
}
