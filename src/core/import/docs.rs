//! A benchmark's annotation files (its documents): JSON arrays or JSON Lines of questions,
//! each naming its video. lmms-eval 0.4 and later log no document, so for tasks whose logs
//! name no video (MVBench, MLVU) the importer finds, among these files, the one whose
//! documents are the task's, by index and question text, and takes each item's video (and
//! time window) from it.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// One document, as far as the importer uses it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Doc {
    /// The question asked.
    pub question: Option<String>,
    /// The video the harness opens: `video` (MVBench), `video_name` (MLVU), `videoID`
    /// (Video-MME).
    pub video: Option<String>,
    /// Start of the question's time window, in seconds.
    pub start: Option<f64>,
    /// End of the question's time window, in seconds.
    pub end: Option<f64>,
    /// The question's own id, where the benchmark gives one: `question_id` (Video-MME
    /// `001-1`, MLVU `count_1`).
    pub id: Option<String>,
    /// The answer options as shown, lettered: Video-MME's `options` as given (`A. ...`),
    /// MVBench's and MLVU's `candidates` lettered in order (`A. ...`).
    pub options: Vec<String>,
    /// The benchmark's task type of the question (`task_type`).
    pub task_type: Option<String>,
    /// The benchmark's category (Video-MME `domain` / `sub_category`).
    pub category: Option<String>,
}

/// The documents of one file, in file order (lmms-eval's `doc_id` is the position).
#[derive(Debug, Clone)]
pub struct DocSet {
    /// The file read.
    pub file: PathBuf,
    /// Its documents, by position.
    pub docs: Vec<Doc>,
}

#[derive(Deserialize)]
struct RawDoc {
    #[serde(default)]
    question: Option<serde_json::Value>,
    #[serde(default)]
    video: Option<serde_json::Value>,
    #[serde(default)]
    video_name: Option<serde_json::Value>,
    #[serde(default, rename = "videoID")]
    video_id: Option<serde_json::Value>,
    #[serde(default)]
    start: Option<serde_json::Value>,
    #[serde(default)]
    end: Option<serde_json::Value>,
    #[serde(default)]
    question_id: Option<serde_json::Value>,
    #[serde(default)]
    options: Option<serde_json::Value>,
    #[serde(default)]
    candidates: Option<serde_json::Value>,
    #[serde(default)]
    task_type: Option<serde_json::Value>,
    #[serde(default)]
    domain: Option<serde_json::Value>,
    #[serde(default)]
    sub_category: Option<serde_json::Value>,
}

impl RawDoc {
    fn doc(self) -> Doc {
        let text = |v: Option<serde_json::Value>| match v {
            Some(serde_json::Value::String(s)) => Some(s),
            Some(serde_json::Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        let seconds = |v: &Option<serde_json::Value>| {
            v.as_ref()
                .and_then(serde_json::Value::as_f64)
                .filter(|x| x.is_finite() && *x >= 0.0)
        };
        let texts = |v: Option<serde_json::Value>| -> Vec<String> {
            match v {
                Some(serde_json::Value::Array(a)) => {
                    a.into_iter().filter_map(|x| text(Some(x))).collect()
                }
                _ => Vec::new(),
            }
        };
        // Video-MME's options carry their letters; candidates are lettered in order.
        let options = match texts(self.options) {
            given if !given.is_empty() => given,
            _ => texts(self.candidates)
                .into_iter()
                .zip('A'..='Z')
                .map(|(c, l)| format!("{l}. {c}"))
                .collect(),
        };
        let category = match (text(self.domain), text(self.sub_category)) {
            (Some(d), Some(s)) => Some(format!("{d} / {s}")),
            (d, s) => d.or(s),
        };
        Doc {
            start: seconds(&self.start),
            end: seconds(&self.end),
            question: text(self.question),
            video: text(self.video_id)
                .or_else(|| text(self.video))
                .or_else(|| text(self.video_name)),
            id: text(self.question_id),
            options,
            task_type: text(self.task_type),
            category,
        }
    }
}

/// The largest annotation file read: benchmark annotations are a few megabytes.
const MAX_DOC_FILE: u64 = 64 << 20;

/// How many files of a tree are looked at, at most.
const MAX_FILES: usize = 200_000;

/// Reads the annotation files under `paths` (files, or folders searched recursively, links
/// followed once): every `.json` holding an array of objects, or `.jsonl` of objects, where
/// the objects have a question and a video. Other files are passed over silently.
pub fn find(paths: &[PathBuf]) -> Vec<DocSet> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = paths.to_vec();
    let mut seen = std::collections::BTreeSet::new();
    let mut looked = 0usize;
    while let Some(p) = stack.pop() {
        looked += 1;
        if looked > MAX_FILES {
            break;
        }
        let Ok(real) = std::fs::canonicalize(&p) else {
            continue;
        };
        if !seen.insert(real) {
            continue;
        }
        let Ok(meta) = std::fs::metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&p) {
                let mut e: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
                e.sort();
                stack.extend(e.into_iter().rev());
            }
            continue;
        }
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let json = name.ends_with(".json") && !name.ends_with("_results.json");
        let jsonl = name.ends_with(".jsonl") && !name.contains("_samples_");
        if !(json || jsonl) || !meta.is_file() || meta.len() > MAX_DOC_FILE {
            continue;
        }
        if let Some(set) = read_set(&p, jsonl) {
            out.push(set);
        }
    }
    out.sort_by(|a, b| a.file.cmp(&b.file));
    out
}

fn read_set(path: &Path, jsonl: bool) -> Option<DocSet> {
    let bytes = crate::core::fsread::read(path, crate::core::fsread::IMPORT).ok()?;
    let bytes = crate::core::load::json::strip_bom(&bytes);
    let docs: Vec<Doc> = if jsonl {
        std::str::from_utf8(bytes)
            .ok()?
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str::<RawDoc>(l).ok().map(RawDoc::doc))
            .collect::<Option<Vec<Doc>>>()?
    } else {
        // Cheap test first: most JSON files in a cache are not annotation arrays.
        if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'[') {
            return None;
        }
        serde_json::from_slice::<Vec<RawDoc>>(bytes)
            .ok()?
            .into_iter()
            .map(RawDoc::doc)
            .collect()
    };
    let usable = !docs.is_empty()
        && docs
            .iter()
            .all(|d| d.question.is_some() && d.video.is_some());
    usable.then(|| DocSet {
        file: path.to_path_buf(),
        docs,
    })
}

/// Text compared loosely: whitespace runs as one space, trimmed.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The documents `asked` came from: `asked` lists (doc_id, the question or prompt the log
/// holds) of one task; a set fits when every doc_id is in it and each document's question
/// is found in what the log holds (or holds it). The set that fits all of them, if one
/// does; `None` when none or several do.
pub fn matching<'a>(sets: &'a [DocSet], asked: &[(usize, &str)]) -> Option<&'a DocSet> {
    if asked.is_empty() {
        return None;
    }
    let asked: Vec<(usize, String)> = asked.iter().map(|(i, q)| (*i, squash(q))).collect();
    let fits = |set: &&DocSet| {
        asked.iter().all(|(i, logged)| {
            set.docs
                .get(*i)
                .and_then(|d| d.question.as_deref())
                .is_some_and(|q| {
                    let q = squash(q);
                    !q.is_empty() && (logged.contains(&q) || q.contains(logged.as_str()))
                })
        })
    };
    let mut found = sets.iter().filter(fits);
    let first = found.next()?;
    // Two files that both fit (a copy of the annotation) only count once if they agree.
    match found.next() {
        Some(other) if other.docs != first.docs => None,
        _ => Some(first),
    }
}

/// What the annotation files say of the items of a table that names only its items
/// ([`describe`]).
#[derive(Debug, Default)]
pub struct Described {
    /// Each item found, by (benchmark, item id): its question, options, video and window.
    pub items: std::collections::BTreeMap<(String, String), super::ImportedItem>,
    /// Items no document names.
    pub unmatched: Vec<(String, String)>,
    /// Items two documents name differently (the files that do).
    pub ambiguous: Vec<((String, String), Vec<PathBuf>)>,
}

/// Finds each of `items` (benchmark, item id) among the documents: by the document's own
/// id (Video-MME's and MLVU's `question_id`), else, for an item id that is a number, by
/// position in the file named like the benchmark (an MVBench task file `object_shuffle.json`
/// for benchmark `object_shuffle`, as lmms-eval numbers its documents).
pub fn describe(sets: &[DocSet], items: &[(String, String)]) -> Described {
    let mut by_id: std::collections::BTreeMap<&str, Vec<(&DocSet, &Doc)>> = Default::default();
    for set in sets {
        for doc in &set.docs {
            if let Some(id) = doc.id.as_deref() {
                by_id.entry(id).or_default().push((set, doc));
            }
        }
    }
    let stem = |set: &DocSet| {
        set.file
            .file_stem()
            .map(|s| squash_name(&s.to_string_lossy()))
    };
    let mut out = Described::default();
    for (benchmark, item_id) in items {
        let key = (benchmark.clone(), item_id.clone());
        let mut found: Vec<(&DocSet, &Doc)> =
            by_id.get(item_id.as_str()).cloned().unwrap_or_default();
        if found.is_empty()
            && let Ok(at) = item_id.parse::<usize>()
        {
            let wanted = squash_name(benchmark);
            found = sets
                .iter()
                .filter(|s| stem(s).as_deref() == Some(wanted.as_str()))
                .filter_map(|s| s.docs.get(at).map(|d| (s, d)))
                .collect();
        }
        // Copies of one annotation count once; documents that differ are not guessed between.
        found.dedup_by(|a, b| a.1 == b.1);
        match found.as_slice() {
            [] => out.unmatched.push(key),
            [(_, doc)] => {
                let item = super::ImportedItem {
                    question: doc.question.clone(),
                    options: doc.options.clone(),
                    video: doc.video.clone(),
                    start: doc.start,
                    end: doc.end,
                    category: doc.category.clone(),
                    task_type: doc.task_type.clone(),
                    ..Default::default()
                };
                out.items.insert(key, item);
            }
            many => out
                .ambiguous
                .push((key, many.iter().map(|(s, _)| s.file.clone()).collect())),
        }
    }
    out
}

/// A benchmark or file name compared loosely: letters and digits, lower case.
fn squash_name(s: &str) -> String {
    s.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_annotation_files_and_matches_by_question() {
        let dir = tempfile::tempdir().expect("tmp");
        let a = dir.path().join("mvbench/action_sequence.json");
        std::fs::create_dir_all(a.parent().expect("parent")).expect("mkdir");
        std::fs::write(
            &a,
            r#"[{"video": "ZS9XR.mp4", "question": "What happened after the cup?", "start": 4.2, "end": 14.8},
                {"video": "9BKWR.mp4", "question": "What happened after the phone?"}]"#,
        )
        .expect("write");
        std::fs::write(
            dir.path().join("mlvu.jsonl"),
            "{\"video_name\": \"count_1.mp4\", \"question\": \"How many dogs?\\n(A) 1\"}\n",
        )
        .expect("write");
        std::fs::write(dir.path().join("other.json"), r#"{"not": "docs"}"#).expect("write");
        std::fs::write(dir.path().join("x_results.json"), "[]").expect("write");
        let sets = find(&[dir.path().to_path_buf()]);
        assert_eq!(sets.len(), 2, "{sets:?}");
        let mv = sets
            .iter()
            .find(|s| s.file.ends_with("action_sequence.json"))
            .expect("mvbench");
        assert_eq!(mv.docs[0].video.as_deref(), Some("ZS9XR.mp4"));
        assert_eq!((mv.docs[0].start, mv.docs[0].end), (Some(4.2), Some(14.8)));
        let prompt = "Carefully watch the video.\nWhat happened after the  phone?\n(A) x\n(B) y";
        assert_eq!(
            matching(&sets, &[(1, prompt)]).map(|s| &s.file),
            Some(&mv.file)
        );
        assert!(
            matching(&sets, &[(0, prompt)]).is_none(),
            "doc 0 asks another question"
        );
        assert!(matching(&sets, &[(5, prompt)]).is_none());
        let ml = matching(&sets, &[(0, "How many dogs?\n(A) 1")]).expect("mlvu");
        assert_eq!(ml.docs[0].video.as_deref(), Some("count_1.mp4"));
    }

    /// Items are found by the documents' own ids (Video-MME, MLVU), or by position in the
    /// task file named like their benchmark (MVBench); options come lettered; an id two
    /// differing documents give is not guessed, one no document gives is said.
    #[test]
    fn describes_items_by_question_id_or_position() {
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::write(
            dir.path().join("videomme.json"),
            r#"[{"videoID":"fFjv93ACGo8","question_id":"001-1","question":"What?","options":["A. a","B. b"],"domain":"Knowledge","sub_category":"History","task_type":"Counting"}]"#,
        )
        .expect("write");
        std::fs::write(
            dir.path().join("object_shuffle.json"),
            r#"[{"video":"v0.mp4","question":"Where?","candidates":["left","right"]},{"video":"v1.mp4","question":"Which?","candidates":["x","y","z"]}]"#,
        )
        .expect("write");
        std::fs::write(
            dir.path().join("mlvu.json"),
            r#"[{"video_name":"count_1.mp4","question_id":"dup","question":"How many?"}]"#,
        )
        .expect("write");
        std::fs::write(
            dir.path().join("other.json"),
            r#"[{"video_name":"c2.mp4","question_id":"dup","question":"How many else?"}]"#,
        )
        .expect("write");
        let sets = find(&[dir.path().to_path_buf()]);
        let key = |b: &str, i: &str| (b.to_string(), i.to_string());
        let asked = [
            key("V1_short", "001-1"),
            key("Object-Shuffle", "1"),
            key("object_shuffle", "7"),
            key("mlvu", "dup"),
        ];
        let d = describe(&sets, &asked);
        let vm = &d.items[&asked[0]];
        assert_eq!(vm.video.as_deref(), Some("fFjv93ACGo8"));
        assert_eq!(vm.options, ["A. a", "B. b"]);
        assert_eq!(vm.category.as_deref(), Some("Knowledge / History"));
        assert_eq!(vm.task_type.as_deref(), Some("Counting"));
        let mv = &d.items[&asked[1]];
        assert_eq!(mv.video.as_deref(), Some("v1.mp4"));
        assert_eq!(mv.options, ["A. x", "B. y", "C. z"]);
        assert_eq!(d.unmatched, [asked[2].clone()]);
        assert_eq!(d.ambiguous.len(), 1);
        assert_eq!(d.ambiguous[0].0, asked[3]);
        assert_eq!(d.items.len(), 2);
    }
}
