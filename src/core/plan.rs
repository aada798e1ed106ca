//! The intervention plan file (docs/intervention.md §4): one type for what `intervene plan`
//! writes, what the audit screens add a transition to, and what a re-run's import reads
//! back, so that the file has one shape wherever it is read or written.

use std::collections::BTreeSet;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::core::audit::UnitKey;
use crate::core::fswrite::{Links, write_output};
pub use crate::core::load::every::ShapeProblem;
use crate::core::load::every::{fields_of, read_each};

/// The plan file's schema string.
pub const SCHEMA: &str = "frameaudit/plan@1";

/// How the planned frames are chosen (docs/intervention.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Strategy {
    /// The higher budget's own frames plus the evidence frames annotators marked that it
    /// dropped (needs an audit).
    RestoreEvidence,
    /// The lower budget's frames plus evenly spread others, up to the higher budget's count.
    Nested,
    /// The higher budget's count drawn with the rule of the lower budget's run.
    LowerPolicy,
    /// The lower budget's frames as they were: the control.
    Swap,
    /// Noise floor: every item of a run at its own budget, the sampling grid shifted by a
    /// fraction of its step (docs/intervention.md §3.5).
    Phase,
    /// Noise floor: every item of a run at its own frame count, by the other deployed
    /// uniform rules (docs/intervention.md §3.6).
    Sampler,
}

impl Strategy {
    /// Every strategy, in the order plans list them.
    pub const ALL: [Strategy; 4] = [
        Strategy::RestoreEvidence,
        Strategy::Nested,
        Strategy::LowerPolicy,
        Strategy::Swap,
    ];

    /// The noise-floor strategies: their re-runs are replicates of the run itself, not
    /// interventions on a transition.
    pub const NOISE: [Strategy; 2] = [Strategy::Phase, Strategy::Sampler];

    /// The strategy's name on the command line and in a plan.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::RestoreEvidence => "restore-evidence",
            Strategy::Nested => "nested",
            Strategy::LowerPolicy => "lower-policy",
            Strategy::Swap => "swap",
            Strategy::Phase => "phase",
            Strategy::Sampler => "sampler",
        }
    }

    /// Whether the strategy plans a noise floor (replicates of every item of a run) rather
    /// than an intervention on a harmful transition.
    pub fn is_noise(self) -> bool {
        Strategy::NOISE.contains(&self)
    }

    /// The strategy of a name.
    pub fn parse(s: &str) -> Option<Strategy> {
        Strategy::ALL
            .into_iter()
            .chain(Strategy::NOISE)
            .find(|x| x.name() == s)
    }
}

/// Provenance of the two frame sets a plan entry starts from.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FrameSources {
    /// How the lower budget's frames are known (`recorded` or `reproduced`), and the rule.
    pub lower: String,
    /// How the higher budget's frames are known, and the rule.
    pub higher: String,
}

/// One planned re-run of a (model, benchmark, item) at the higher configuration.
///
/// A re-run's import needs only the unit, the configurations, the video, the frames, the
/// strategy and the pass; the other fields say why, and a plan file without them (written
/// by hand, or by an older frameaudit) still reads, with them empty.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PlanEntry {
    /// The unit: model, benchmark and item, as in the cells.
    pub model: String,
    /// The item's benchmark.
    pub benchmark: String,
    /// The item's id.
    pub item_id: String,
    /// The configuration re-run (the transition's higher budget).
    pub config: String,
    /// The transition's lower configuration, where the item was right.
    pub lower: String,
    /// The video the harness opens, as `items.jsonl` names it.
    pub video: String,
    /// Frames of the video (`items.jsonl`), when known: every index is below it.
    #[serde(default)]
    pub num_frames: Option<u64>,
    /// The frame indices to give the model, in the order to decode them.
    pub indices: Vec<u64>,
    /// The strategy's name (`Strategy::name` of `core::intervene`).
    pub strategy: String,
    /// Why these frames: the strategy's rule as applied here, and its evidence.
    #[serde(default)]
    pub why: String,
    /// How many frames the higher configuration sampled (distinct).
    #[serde(default)]
    pub higher_frames: usize,
    /// How many the lower configuration sampled (distinct).
    #[serde(default)]
    pub lower_frames: usize,
    /// `restore-evidence`: the evidence frames restored (the plan has this many more frames
    /// than the higher budget).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restored: Vec<u64>,
    /// How the frames planned from are known.
    #[serde(default)]
    pub sources: FrameSources,
    /// The annotators (the `annotator` of each audit file's header) whose records the entry
    /// was planned from: those on the transition under `--targets audited`, those whose
    /// evidence frames `restore-evidence` restores. Empty when no audit record went into it
    /// (and in a plan written before plans recorded them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub annotators: Vec<String>,
    /// The harness run this entry belongs to, for one (model, config, strategy): a
    /// recorder steers by video, so two entries naming one video with other frames (two
    /// questions on one clip) go to different passes, each one run of the harness.
    #[serde(rename = "pass")]
    pub pass_no: u64,
    /// A noise-floor entry (`phase`, `sampler`): the replicate its re-run's answer becomes
    /// (`phase-1/2`, `sampler-midpoint`), of the configuration itself; `None` for an
    /// intervention.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicate: Option<String>,
    /// With `replicate`: the nuisance it measures (`phase`, `sampler`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nuisance: Option<String>,
}

/// A transition with no plan for a strategy, and why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Skipped {
    /// The unit, as in [`PlanEntry`].
    pub model: String,
    /// The item's benchmark.
    pub benchmark: String,
    /// The item's id.
    pub item_id: String,
    /// The configuration that would have been re-run.
    pub config: String,
    /// The transition's lower configuration.
    pub lower: String,
    /// The strategy not planned.
    #[serde(default)]
    pub strategy: String,
    /// Why not.
    #[serde(default)]
    pub why: String,
}

/// A plan: what to re-run with which frames, and what could not be planned.
///
/// The entries' types are parameters only so that a file's head can be read on its own
/// ([`Plan::read`] says every problem of a file, each entry's apart); a plan is always
/// `Plan<PlanEntry, Skipped>`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Plan<E = PlanEntry, S = Skipped> {
    /// [`SCHEMA`].
    pub schema: String,
    /// The dataset's name.
    pub dataset: String,
    /// The protocol whose transitions are planned.
    #[serde(default)]
    pub protocol: String,
    /// `terminal` or `audited`.
    #[serde(default)]
    pub targets: String,
    /// The strategies asked for, in plan order.
    pub strategies: Vec<String>,
    /// One per (transition, strategy) planned.
    pub entries: Vec<E>,
    /// One per (transition, strategy) not planned, with why.
    #[serde(default = "Vec::new")]
    pub skipped: Vec<S>,
}

/// A transition a plan holds: the unit, its lower and its higher configuration.
pub type Transition = (UnitKey, String, String);

/// Why a plan file could not be read. The messages are whole sentences naming the file (and
/// the line), so that each front end can print them as they are.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The file could not be opened or read.
    #[error("cannot read the plan {}: {why}", path.display())]
    Read {
        /// The plan file.
        path: PathBuf,
        /// What reading it said.
        why: String,
    },
    /// The file is not JSON of a plan's shape: every problem found, in the file's order.
    #[error("{}", shape_text(path, problems))]
    Shape {
        /// The plan file.
        path: PathBuf,
        /// Each problem at its place.
        problems: Vec<ShapeProblem>,
    },
    /// The file is a plan of another schema.
    #[error("{}: schema {schema:?}, expected {SCHEMA:?}", path.display())]
    Schema {
        /// The plan file.
        path: PathBuf,
        /// The schema it names, sanitized (it is data).
        schema: String,
    },
}

/// The problems one per line, each sanitized (the values serde quotes are the file's): the
/// text is printed as it is.
fn shape_text(path: &Path, problems: &[ShapeProblem]) -> String {
    use crate::core::text::sanitize;
    let lines: Vec<String> = problems
        .iter()
        .map(|p| {
            let field = if p.field.is_empty() {
                String::new()
            } else {
                format!(" {}:", sanitize(&p.field))
            };
            format!(
                "{}:{}: not a frameaudit plan:{field} {} (column {})",
                sanitize(&path.display().to_string()),
                p.line,
                sanitize(&p.why),
                p.column
            )
        })
        .collect();
    lines.join("\n")
}

/// A plan entry with a value in every field, to stand in for a broken one.
fn entry_stand_in() -> PlanEntry {
    PlanEntry {
        model: String::new(),
        benchmark: String::new(),
        item_id: String::new(),
        config: String::new(),
        lower: String::new(),
        video: String::new(),
        num_frames: Some(0),
        indices: Vec::new(),
        strategy: String::new(),
        why: String::new(),
        higher_frames: 0,
        lower_frames: 0,
        restored: vec![0],
        sources: FrameSources::default(),
        annotators: vec![String::new()],
        pass_no: 0,
        replicate: Some(String::new()),
        nuisance: Some(String::new()),
    }
}

/// A skipped transition with a value in every field.
fn skipped_stand_in() -> Skipped {
    Skipped {
        model: String::new(),
        benchmark: String::new(),
        item_id: String::new(),
        config: String::new(),
        lower: String::new(),
        strategy: String::new(),
        why: String::new(),
    }
}

/// A plan file's text as a plan, or every problem of it: its syntax (where the reader
/// stopped); else every problem of its head, of each entry and of each skipped transition,
/// read apart.
fn read_text(text: &str) -> Result<Plan, Vec<ShapeProblem>> {
    if let Ok(plan) = serde_json::from_str::<Plan>(text) {
        return Ok(plan);
    }
    let mut problems = Vec::new();
    let head: Plan = Plan {
        schema: SCHEMA.into(),
        dataset: String::new(),
        protocol: String::new(),
        targets: String::new(),
        strategies: Vec::new(),
        entries: Vec::new(),
        skipped: Vec::new(),
    };
    type Any = serde::de::IgnoredAny;
    read_each::<Plan<Any, Any>>(text, text, "", &fields_of(&head), &mut problems);
    type Raw<'a> = &'a serde_json::value::RawValue;
    let fields: std::collections::BTreeMap<String, Raw<'_>> =
        serde_json::from_str(text).unwrap_or_default();
    let list = |name: &str| -> Vec<Raw<'_>> {
        fields
            .get(name)
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
            .unwrap_or_default()
    };
    let entry = fields_of(&entry_stand_in());
    for (i, raw) in list("entries").into_iter().enumerate() {
        let at = format!("entries[{i}]");
        read_each::<PlanEntry>(text, raw.get(), &at, &entry, &mut problems);
    }
    let skipped = fields_of(&skipped_stand_in());
    for (i, raw) in list("skipped").into_iter().enumerate() {
        let at = format!("skipped[{i}]");
        read_each::<Skipped>(text, raw.get(), &at, &skipped, &mut problems);
    }
    if problems.is_empty() {
        // Not found apart (it should be): the reader's own problem, whole.
        let none = serde_json::Map::new();
        read_each::<Plan>(text, text, "", &none, &mut problems);
    }
    problems.sort_by_key(|p| (p.line, p.column));
    problems.dedup();
    Err(problems)
}

/// What a plan's entries say that no re-run can do, each at its entry's line: a strategy
/// frameaudit does not know (its recorder and import would not either), no frame to give,
/// a frame at or past the video's end (`num_frames`), a replicate without its nuisance.
fn value_problems(text: &str, plan: &Plan) -> Vec<ShapeProblem> {
    type Raw<'a> = &'a serde_json::value::RawValue;
    #[derive(Deserialize)]
    struct Entries<'a> {
        #[serde(borrow)]
        entries: Vec<Raw<'a>>,
    }
    let raws = serde_json::from_str::<Entries<'_>>(text)
        .map(|e| e.entries)
        .unwrap_or_default();
    let mut problems = Vec::new();
    for (i, e) in plan.entries.iter().enumerate() {
        // The entry's place: its raw text is a slice of the file's.
        let (line, column) = raws.get(i).map_or((1, 1), |raw| {
            let (line, offset) = crate::core::load::json::place_in(text, raw.get(), 0);
            (line as usize, offset + 1)
        });
        let mut say = |field: String, why: String| {
            problems.push(ShapeProblem {
                line,
                column,
                field: format!("entries[{i}].{field}"),
                why,
            });
        };
        if Strategy::parse(&e.strategy).is_none() {
            let known: Vec<&str> = Strategy::ALL
                .into_iter()
                .chain(Strategy::NOISE)
                .map(Strategy::name)
                .collect();
            say(
                "strategy".into(),
                format!(
                    "unknown strategy {:?} (one of {})",
                    e.strategy,
                    known.join(", ")
                ),
            );
        }
        if e.indices.is_empty() {
            say("indices".into(), "no frame to give the model".into());
        }
        if let Some(n) = e.num_frames {
            for (k, &f) in e.indices.iter().enumerate() {
                if f >= n {
                    say(
                        format!("indices[{k}]"),
                        format!("frame {f} is past the video's end (num_frames {n})"),
                    );
                }
            }
        }
        if e.replicate.is_some() != e.nuisance.is_some() {
            say(
                "nuisance".into(),
                "a noise-floor entry names both its replicate and its nuisance".into(),
            );
        }
    }
    problems
}

impl Plan {
    /// Reads and checks the plan file at `path` (a regular file, bounded as an import).
    /// A file that is JSON but not a plan is said whole: every entry's problem, each at
    /// its line and field.
    pub fn read(path: &Path) -> Result<Plan, PlanError> {
        let bytes = crate::core::fsread::read(path, crate::core::fsread::IMPORT).map_err(|e| {
            PlanError::Read {
                path: path.to_path_buf(),
                why: e.to_string(),
            }
        })?;
        let shape = |problems| PlanError::Shape {
            path: path.to_path_buf(),
            problems,
        };
        let bytes = crate::core::load::json::strip_bom(&bytes);
        let text = std::str::from_utf8(bytes).map_err(|e| {
            let (line, offset) =
                crate::core::load::encoding::place_after(&bytes[..e.valid_up_to()]);
            shape(vec![ShapeProblem {
                line: line as usize,
                column: offset + 1,
                field: String::new(),
                why: "not valid UTF-8".into(),
            }])
        })?;
        let plan = read_text(text).map_err(shape)?;
        if plan.schema != SCHEMA {
            return Err(PlanError::Schema {
                path: path.to_path_buf(),
                schema: crate::core::text::sanitize(&plan.schema).into_owned(),
            });
        }
        let problems = value_problems(text, &plan);
        if !problems.is_empty() {
            return Err(shape(problems));
        }
        Ok(plan)
    }

    /// [`Plan::read`], or `None` when nothing is at `path` yet (a plan about to be begun).
    pub fn read_if_present(path: &Path) -> Result<Option<Plan>, PlanError> {
        if std::fs::symlink_metadata(path).is_err() {
            return Ok(None);
        }
        Plan::read(path).map(Some)
    }

    /// Every transition the plan holds, planned or skipped.
    pub fn transitions(&self) -> BTreeSet<Transition> {
        let entries = self.entries.iter().map(|e| {
            let key = UnitKey::new(&*e.model, &*e.benchmark, &*e.item_id);
            (key, e.lower.clone(), e.config.clone())
        });
        let skipped = self.skipped.iter().map(|e| {
            let key = UnitKey::new(&*e.model, &*e.benchmark, &*e.item_id);
            (key, e.lower.clone(), e.config.clone())
        });
        entries.chain(skipped).collect()
    }

    /// Writes the plan file's text to `w`: indented JSON and a final line break.
    pub fn write_to(&self, w: &mut (dyn Write + Send)) -> io::Result<()> {
        let mut text = serde_json::to_string_pretty(self).map_err(io::Error::other)?;
        text.push('\n');
        w.write_all(text.as_bytes())
    }

    /// Writes the plan to `path` through [`write_output`] (renamed into place, a link at
    /// `path` followed only as `links` allows).
    pub fn write(&self, path: &Path, links: Links) -> io::Result<()> {
        write_output(path, links, |w| self.write_to(w))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(item: &str, strategy: &str) -> PlanEntry {
        PlanEntry {
            model: "m".into(),
            benchmark: "b".into(),
            item_id: item.into(),
            config: "8f".into(),
            lower: "4f".into(),
            video: "v.mp4".into(),
            num_frames: Some(30),
            indices: vec![1, 5, 9],
            strategy: strategy.into(),
            why: "because".into(),
            higher_frames: 3,
            lower_frames: 2,
            restored: if strategy == "restore-evidence" {
                vec![5]
            } else {
                Vec::new()
            },
            sources: FrameSources {
                lower: "recorded (frame_idx)".into(),
                higher: "reproduced (linspace)".into(),
            },
            annotators: if strategy == "restore-evidence" {
                vec!["ann".into()]
            } else {
                Vec::new()
            },
            pass_no: 1,
            replicate: None,
            nuisance: None,
        }
    }

    /// A plan of the right shape whose entries no re-run can follow is refused, every
    /// problem at its entry's line and field: an unknown strategy, a frame past the end.
    #[test]
    fn entries_no_rerun_can_follow_are_named_with_their_lines() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("plan.json");
        let mut plan = sample();
        plan.entries[0].strategy = "bogus".into();
        plan.entries[1].indices = vec![0, 5, 30];
        plan.entries.push(PlanEntry {
            replicate: Some("phase-1/2".into()),
            indices: Vec::new(),
            ..entry("3", "phase")
        });
        let text = serde_json::to_string_pretty(&plan).expect("json");
        std::fs::write(&path, &text).expect("w");
        let Err(PlanError::Shape { problems, .. }) = Plan::read(&path) else {
            panic!("refused");
        };
        let line_of = |item: &str| {
            let at = text.find(&format!("\"item_id\": \"{item}\"")).expect(item);
            // The entry's `{` is three lines above its item id (its model, its benchmark).
            text[..at].lines().count() - 3
        };
        let said: Vec<(usize, &str)> = problems.iter().map(|p| (p.line, &*p.field)).collect();
        assert_eq!(
            said,
            [
                (line_of("1"), "entries[0].strategy"),
                (line_of("2"), "entries[1].indices[2]"),
                (line_of("3"), "entries[2].indices"),
                (line_of("3"), "entries[2].nuisance"),
            ],
            "{problems:?}"
        );
        assert!(
            problems[0]
                .why
                .starts_with("unknown strategy \"bogus\" (one of restore-evidence, "),
            "{problems:?}"
        );
        assert_eq!(
            problems[1].why,
            "frame 30 is past the video's end (num_frames 30)"
        );
        // The sample itself reads.
        std::fs::write(&path, serde_json::to_string(&sample()).expect("json")).expect("w");
        assert_eq!(Plan::read(&path).expect("reads"), sample());
    }

    fn sample() -> Plan {
        Plan {
            schema: SCHEMA.into(),
            dataset: "d".into(),
            protocol: "main".into(),
            targets: "audited".into(),
            strategies: vec!["restore-evidence".into(), "swap".into()],
            entries: vec![entry("1", "restore-evidence"), entry("2", "swap")],
            skipped: vec![Skipped {
                model: "m".into(),
                benchmark: "b".into(),
                item_id: "3".into(),
                config: "16f".into(),
                lower: "8f".into(),
                strategy: "swap".into(),
                why: "no video".into(),
            }],
        }
    }

    #[test]
    fn a_written_plan_reads_back_whole_and_writes_the_same_bytes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("p.plan.json");
        let plan = sample();
        plan.write(&path, Links::Refuse).expect("write");
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.ends_with("}\n"), "{text}");
        // `restored` and `annotators` are left out where they are empty, and `pass` keeps
        // its name.
        assert_eq!(text.matches("\"restored\"").count(), 1, "{text}");
        assert_eq!(text.matches("\"annotators\"").count(), 1, "{text}");
        assert!(text.contains("\"pass\": 1"), "{text}");
        let back = Plan::read(&path).expect("read back");
        assert_eq!(back, plan);
        let mut again = Vec::new();
        back.write_to(&mut again).expect("write again");
        assert_eq!(String::from_utf8(again).expect("utf-8"), text);
        let t: Vec<(String, String, String)> = back
            .transitions()
            .into_iter()
            .map(|(k, lo, hi)| (k.item_id, lo, hi))
            .collect();
        assert_eq!(
            t,
            [
                ("1".into(), "4f".into(), "8f".into()),
                ("2".into(), "4f".into(), "8f".into()),
                ("3".into(), "8f".into(), "16f".into())
            ]
        );
    }

    #[test]
    fn a_plan_with_only_what_a_rerun_needs_still_reads() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("old.json");
        std::fs::write(
            &path,
            "\u{feff}{\"schema\": \"frameaudit/plan@1\", \"dataset\": \"d\", \"strategies\": [\"swap\"],\n\
             \"entries\": [{\"model\": \"m\", \"benchmark\": \"b\", \"item_id\": \"1\", \"config\": \"8f\",\n\
             \"lower\": \"4f\", \"video\": \"v\", \"indices\": [2], \"strategy\": \"swap\", \"pass\": 0}],\n\
             \"skipped\": [{\"model\": \"m\", \"benchmark\": \"b\", \"item_id\": \"2\", \"config\": \"8f\", \"lower\": \"4f\"}]}",
        )
        .expect("write");
        let p = Plan::read(&path).expect("a minimal plan reads");
        assert_eq!(p.entries[0].indices, [2]);
        assert_eq!(p.entries[0].num_frames, None);
        assert_eq!(p.entries[0].sources, FrameSources::default());
        assert!(
            p.entries[0].annotators.is_empty(),
            "a plan without annotators"
        );
        assert_eq!(p.skipped[0].item_id, "2");
        assert_eq!(p.transitions().len(), 2);
        assert!(
            Plan::read_if_present(&dir.path().join("none.json"))
                .expect("nothing there")
                .is_none()
        );
    }

    #[test]
    fn a_file_that_is_not_a_plan_is_named_with_its_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("bad.json");
        std::fs::write(
            &path,
            "{\"schema\": \"frameaudit/plan@1\",\n \"entries\": 3}",
        )
        .expect("w");
        let e = Plan::read(&path).expect_err("not a plan").to_string();
        assert!(
            e.starts_with(&format!("{}:2: not a frameaudit plan: ", path.display())),
            "{e}"
        );
        // The place once: no serde "at line 2 column ..." beside it.
        assert!(!e.contains(" at line "), "{e}");
        // Every entry's problem, each at its line and field, in the file's order.
        std::fs::write(
            &path,
            "{\"schema\": \"frameaudit/plan@1\", \"dataset\": \"d\", \"strategies\": [\"swap\"],\n\
             \"entries\": [\n\
             {\"model\": \"m\", \"benchmark\": \"b\", \"item_id\": \"1\", \"config\": \"8f\", \"lower\": \"4f\", \"video\": \"v\", \"indices\": [2], \"strategy\": \"swap\", \"pass\": 0},\n\
             {\"model\": \"m\", \"benchmark\": \"b\", \"item_id\": \"2\", \"config\": \"8f\", \"lower\": \"4f\", \"video\": \"v\", \"indices\": [2, \"x\"], \"strategy\": \"swap\", \"pass\": 0},\n\
             {\"model\": \"m\", \"benchmark\": \"b\", \"item_id\": \"3\", \"config\": \"8f\", \"lower\": \"4f\", \"indices\": [2], \"strategy\": \"swap\", \"pass\": 0}],\n\
             \"skipped\": [{\"model\": \"m\", \"benchmark\": \"b\", \"item_id\": 4, \"config\": \"8f\", \"lower\": \"4f\"}]}",
        )
        .expect("w");
        let Err(PlanError::Shape { problems, .. }) = Plan::read(&path) else {
            panic!("not a plan");
        };
        let said: Vec<(usize, &str, &str)> = problems
            .iter()
            .map(|p| (p.line, &*p.field, &*p.why))
            .collect();
        assert_eq!(
            said,
            [
                (
                    4,
                    "entries[1].indices[1]",
                    "invalid type: string \"x\", expected u64"
                ),
                (5, "entries[2]", "missing field `video`"),
                (
                    6,
                    "skipped[0].item_id",
                    "invalid type: integer `4`, expected a string"
                ),
            ],
            "{problems:?}"
        );
        let e = Plan::read(&path).expect_err("not a plan").to_string();
        assert_eq!(e.lines().count(), 3, "one line each: {e}");
        assert!(
            e.lines().nth(1).is_some_and(|l| l.starts_with(&format!(
                "{}:5: not a frameaudit plan: entries[2]: missing field `video` (column ",
                path.display()
            ))),
            "{e}"
        );
        // The column counts from the line's start, not the entry's: serde's is where the
        // value read ends, the `"x"`.
        let col = problems[0].column;
        let line4 = std::fs::read_to_string(&path)
            .expect("r")
            .lines()
            .nth(3)
            .map(str::to_owned);
        assert_eq!(
            line4.as_deref().and_then(|l| l.get(col - 3..col)),
            Some("\"x\""),
            "column {col}"
        );
        // Every problem of one entry and of the head, not only serde's first: each broken
        // field stands in for, and the object read again.
        std::fs::write(
            &path,
            "{\"schema\": \"frameaudit/plan@1\", \"dataset\": 3, \"strategies\": \"swap\",\n\
             \"entries\": [\n\
             {\"model\": \"m\", \"benchmark\": \"b\", \"item_id\": \"2\", \"config\": \"8f\", \"lower\": \"4f\",\n\
              \"indices\": [2, \"x\"], \"strategy\": \"swap\", \"p\\u0061ss\": \"zero\",\n\
              \"sources\": {\"lower\": 1, \"higher\": \"h\"}},\n\
             {}]}",
        )
        .expect("w");
        let Err(PlanError::Shape { problems, .. }) = Plan::read(&path) else {
            panic!("not a plan");
        };
        let said: Vec<(usize, usize, &str, &str)> = problems
            .iter()
            .take(8)
            .map(|p| (p.line, p.column, &*p.field, &*p.why))
            .collect();
        let lines: Vec<String> = std::fs::read_to_string(&path)
            .expect("r")
            .lines()
            .map(str::to_owned)
            .collect();
        let col = |line: usize, what: &str| lines[line - 1].find(what).expect(what) + what.len();
        assert_eq!(
            said,
            [
                (
                    1,
                    col(1, ": 3"),
                    "dataset",
                    "invalid type: integer `3`, expected a string"
                ),
                (
                    1,
                    col(1, "\"swap\""),
                    "strategies",
                    "invalid type: string \"swap\", expected a sequence"
                ),
                (
                    4,
                    col(4, "\"x\""),
                    "entries[0].indices[1]",
                    "invalid type: string \"x\", expected u64"
                ),
                (
                    4,
                    col(4, "\"zero\""),
                    "entries[0].pass",
                    "invalid type: string \"zero\", expected u64"
                ),
                (
                    5,
                    col(5, ": 1"),
                    "entries[0].sources.lower",
                    "invalid type: integer `1`, expected a string"
                ),
                (5, col(5, "}}"), "entries[0]", "missing field `video`"),
                (6, 2, "entries[1]", "missing field `model`"),
                (6, 2, "entries[1]", "missing field `benchmark`"),
            ],
            "{problems:?}"
        );
        // An empty entry misses each of its nine fields that have no default.
        assert_eq!(problems.len(), 6 + 9, "{problems:?}");
        std::fs::write(
            &path,
            "{\"schema\": \"x\\u001b[2J\", \"dataset\": \"d\", \"strategies\": [], \"entries\": []}",
        )
        .expect("w");
        let e = Plan::read(&path).expect_err("another schema").to_string();
        assert_eq!(
            e,
            format!(
                "{}: schema \"x\\\\x1b[2J\", expected \"frameaudit/plan@1\"",
                path.display()
            )
        );
        let e = Plan::read(&dir.path().join("absent.json"))
            .expect_err("absent")
            .to_string();
        assert!(e.starts_with("cannot read the plan "), "{e}");
    }
}
