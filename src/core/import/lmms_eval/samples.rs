//! One sample of an lmms-eval log (a line of `*_samples_*.jsonl`, or an entry of an old
//! `{task}.json`'s `logs`) → item id, prediction, gold answer, recorded correctness and what
//! the sample says about its item. The task is recognised by its metric dict, not by its
//! name, so variants (`videomme_w_subtitle`, `mvbench_action_sequence`, `mlvu_dev`...) work
//! unchanged.

use serde::Deserialize;

use super::lenient::{MapOnly, Resps, Scalar, SeqOnly, SoleKey, TextList};
use crate::core::import::ImportedItem;
use crate::core::import::letters::option_letter;

/// The fields of a sample line frameaudit reads; everything else (`input`, `doc_hash`,
/// `arguments`, `resps`, `token_counts`...) is skipped without being copied.
#[derive(Deserialize, Default)]
pub(super) struct Sample<'a> {
    #[serde(default, borrow)]
    pub doc_id: Scalar<'a>,
    #[serde(default, borrow)]
    target: Scalar<'a>,
    #[serde(default, borrow)]
    filtered_resps: Resps<'a>,
    /// v0.2.3 to v0.3 (and the old `{task}.json` logs) keep the dataset row.
    #[serde(default, borrow)]
    doc: MapOnly<Doc<'a>>,
    #[serde(default, borrow)]
    videomme_perception_score: MapOnly<VideoMme<'a>>,
    #[serde(default, borrow)]
    mvbench_accuracy: MapOnly<MvBench<'a>>,
    #[serde(default, borrow)]
    lvb_acc: MapOnly<Lvb<'a>>,
    /// The misspelling is lmms-eval's.
    #[serde(default, borrow)]
    mlvu_percetion_score: MapOnly<Mlvu<'a>>,
    #[serde(default, borrow)]
    avg_accuracy: MapOnly<TempCompass<'a>>,
    /// egoschema's `{pred, ground_truth}`; other tasks write a number here.
    #[serde(default, borrow)]
    score: MapOnly<EgoScore<'a>>,
    #[serde(default, borrow)]
    submission: SoleKey<'a>,
    /// The prompt (0.7 and later keep it; it holds the question and options).
    #[serde(default, borrow)]
    input: Scalar<'a>,
    /// Frames chosen for the sample by a frame-selection run.
    #[serde(default, borrow)]
    frame_idx: SeqOnly<Scalar<'a>>,
}

/// The dataset row, as far as frameaudit uses it (keys of several benchmarks).
#[derive(Deserialize, Default)]
struct Doc<'a> {
    #[serde(default, borrow)]
    question: Scalar<'a>,
    #[serde(default)]
    options: TextList,
    #[serde(default)]
    candidates: TextList,
    /// egoschema.
    #[serde(default)]
    option: TextList,
    /// longvideobench: `option0`..`option4`, "N/A" when unused.
    #[serde(default, borrow)]
    option0: Scalar<'a>,
    #[serde(default, borrow)]
    option1: Scalar<'a>,
    #[serde(default, borrow)]
    option2: Scalar<'a>,
    #[serde(default, borrow)]
    option3: Scalar<'a>,
    #[serde(default, borrow)]
    option4: Scalar<'a>,
    #[serde(default, borrow)]
    video_id: Scalar<'a>,
    /// Video-MME's YouTube id: the file the harness opens is `{videoID}.mp4`.
    #[serde(default, borrow, rename = "videoID")]
    video_youtube: Scalar<'a>,
    #[serde(default, borrow)]
    video_idx: Scalar<'a>,
    #[serde(default, borrow)]
    q_uid: Scalar<'a>,
    #[serde(default, borrow)]
    video: Scalar<'a>,
    #[serde(default, borrow)]
    video_name: Scalar<'a>,
    /// Seconds (longvideobench); Video-MME's "short"/"medium"/"long" is not a duration.
    #[serde(default, borrow)]
    duration: Scalar<'a>,
    #[serde(default, borrow)]
    domain: Scalar<'a>,
    #[serde(default, borrow)]
    question_category: Scalar<'a>,
    #[serde(default, borrow)]
    task_type: Scalar<'a>,
    /// MVBench's time window of the question, in seconds.
    #[serde(default, borrow)]
    start: Scalar<'a>,
    #[serde(default, borrow)]
    end: Scalar<'a>,
    /// Frames chosen for the document by a frame-selection run.
    #[serde(default, borrow)]
    frame_idx: SeqOnly<Scalar<'a>>,
}

#[derive(Deserialize, Default)]
struct VideoMme<'a> {
    #[serde(default, borrow)]
    question_id: Scalar<'a>,
    #[serde(default, borrow)]
    pred_answer: Scalar<'a>,
    #[serde(default, borrow)]
    answer: Scalar<'a>,
    #[serde(default, borrow)]
    category: Scalar<'a>,
    #[serde(default, borrow)]
    task_category: Scalar<'a>,
    /// Set by the LLM-judge variant of the task.
    #[serde(default, borrow)]
    correct: Scalar<'a>,
    /// The YouTube id (0.7 and later): the harness opens `{videoID}.mp4`.
    #[serde(default, borrow, rename = "videoID")]
    video_id: Scalar<'a>,
}

#[derive(Deserialize, Default)]
struct MvBench<'a> {
    /// The raw response, not a parsed letter.
    #[serde(default, borrow)]
    pred_answer: Scalar<'a>,
    #[serde(default, borrow)]
    gt_answer: Scalar<'a>,
    #[serde(default, borrow)]
    score: Scalar<'a>,
}

#[derive(Deserialize, Default)]
struct Lvb<'a> {
    #[serde(default, borrow)]
    id: Scalar<'a>,
    #[serde(default, borrow)]
    answer: Scalar<'a>,
    #[serde(default, borrow)]
    parsed_pred: Scalar<'a>,
    #[serde(default, borrow)]
    question_category: Scalar<'a>,
}

#[derive(Deserialize, Default)]
struct Mlvu<'a> {
    /// The question text: MLVU has no question ids.
    #[serde(default, borrow)]
    question_id: Scalar<'a>,
    #[serde(default, borrow)]
    pred_answer: Scalar<'a>,
    #[serde(default, borrow)]
    answer: Scalar<'a>,
    #[serde(default, borrow)]
    task_type: Scalar<'a>,
}

#[derive(Deserialize, Default)]
struct TempCompass<'a> {
    #[serde(default, borrow)]
    video_id: Scalar<'a>,
    #[serde(default, borrow)]
    question: Scalar<'a>,
    #[serde(default, borrow, rename = "gt-answer")]
    gt_answer: Scalar<'a>,
    #[serde(default, borrow, rename = "video-llm-prediction")]
    prediction: Scalar<'a>,
    /// The captioning task's judge picks an option from the caption.
    #[serde(default, borrow, rename = "chatgpt-answer")]
    judge_answer: Scalar<'a>,
    #[serde(default, borrow)]
    rating: Scalar<'a>,
    #[serde(default, borrow)]
    dim: Scalar<'a>,
}

#[derive(Deserialize, Default)]
struct EgoScore<'a> {
    /// The chosen option's index, -1 when none matched.
    #[serde(default, borrow)]
    pred: Scalar<'a>,
    #[serde(default, borrow)]
    ground_truth: Scalar<'a>,
}

/// What one sample gives.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Answer {
    pub item_id: String,
    pub pred: Option<String>,
    pub gold: Option<String>,
    pub correct: Option<bool>,
    pub item: ImportedItem,
    /// The task's metric dict the answer was read from (`mvbench_accuracy`...); `None`
    /// when the task is unknown and the generic fields were used.
    pub metric: Option<&'static str>,
    /// Frames a frame-selection run chose (`frame_idx` in the sample or its document).
    pub frame_idx: Option<Vec<u64>>,
}

/// Refuses an answer field of a metric's dict that holds an array or an object: no answer
/// can be read from it, and the cell would be kept without one, unsaid.
fn plain(v: &Scalar, why: &'static str) -> Result<(), &'static str> {
    if matches!(v, Scalar::Other) {
        Err(why)
    } else {
        Ok(())
    }
}

impl Sample<'_> {
    /// The answer of this sample, or why it cannot be used.
    pub(super) fn answer(&self) -> Result<Answer, &'static str> {
        let doc = self.doc.0.as_ref();
        let mut a = if let Some(m) = &self.videomme_perception_score.0 {
            self.videomme(m)?
        } else if let Some(m) = &self.mvbench_accuracy.0 {
            self.mvbench(m, doc)?
        } else if let Some(m) = &self.lvb_acc.0 {
            self.lvb(m)?
        } else if let Some(m) = &self.mlvu_percetion_score.0 {
            self.mlvu(m)?
        } else if let Some(m) = &self.avg_accuracy.0 {
            self.tempcompass(m, doc)?
        } else if let Some(m) = self
            .score
            .0
            .as_ref()
            .filter(|m| m.pred != Scalar::Null || m.ground_truth != Scalar::Null)
        {
            self.egoschema(m, doc)?
        } else {
            self.generic()?
        };
        if let Some(d) = doc {
            a.item.merge(doc_item(d));
        }
        if a.item.question.is_none() || a.item.options.is_empty() {
            // 0.7 logs no document, but the prompt holds the question and options.
            if let Some(prompt) = self.input.str() {
                let (question, options) = parse_prompt(prompt);
                a.item.merge(ImportedItem {
                    question,
                    options,
                    ..Default::default()
                });
            }
        }
        if a.item.gold.is_none() {
            a.item.gold.clone_from(&a.gold);
        }
        a.frame_idx =
            int_list(&self.frame_idx).or_else(|| doc.and_then(|d| int_list(&d.frame_idx)));
        if a.item.video.is_none()
            && let (Some(d), Some(p)) = (self.doc_id.int(), self.input.str())
            && let Ok(d) = u64::try_from(d)
        {
            a.item.logged = Some((d, p.to_string()));
        }
        Ok(a)
    }

    /// The model's answer letter from `filtered_resps`, for tasks whose metric dict has no
    /// parsed answer.
    fn resp_letter(&self, n_options: Option<usize>) -> Option<String> {
        match &self.filtered_resps {
            Resps::Text(t) => option_letter(t, n_options).map(String::from),
            // A log-likelihood task: the option with the highest likelihood.
            Resps::Scores(s) => argmax(s).and_then(index_letter),
            Resps::Other => None,
        }
    }

    fn videomme(&self, m: &VideoMme) -> Result<Answer, &'static str> {
        let id = m
            .question_id
            .text()
            .ok_or("videomme_perception_score has no question_id")?;
        plain(
            &m.pred_answer,
            "videomme_perception_score's pred_answer is an array or an object",
        )?;
        plain(
            &m.answer,
            "videomme_perception_score's answer is an array or an object",
        )?;
        // The task's target is the answer too (`doc_to_target`), where the dict lacks it.
        let gold = m.answer.text().or_else(|| self.target.text()).ok_or(
            "videomme_perception_score has no answer, and the sample no target: nothing to score against",
        )?;
        let gold = Some(gold);
        let pred = match &m.pred_answer {
            Scalar::Null => self.resp_letter(n_options(&gold, 0)),
            p => p.text(),
        };
        // The harness opens `{videoID}.mp4` (0.7 logs the id); older logs tell only the
        // question id, `{video_id}-{n}`, whose video id names the video in Video-MME.
        let video = m
            .video_id
            .text()
            .or_else(|| id.rsplit_once('-').map(|(v, _)| v.to_string()));
        Ok(Answer {
            pred,
            correct: m.correct.truth(),
            item: ImportedItem {
                video,
                category: m.category.text(),
                task_type: m.task_category.text(),
                ..Default::default()
            },
            item_id: id,
            gold,
            metric: Some("videomme_perception_score"),
            frame_idx: None,
        })
    }

    fn mvbench(&self, m: &MvBench, doc: Option<&Doc>) -> Result<Answer, &'static str> {
        // MVBench has no question ids, and `doc` (with the video) is gone from v0.4 on:
        // the document index within the task is the only key every version shares.
        let id = self.doc_id.text().ok_or("sample has no doc_id")?;
        plain(
            &m.pred_answer,
            "mvbench_accuracy's pred_answer is an array or an object",
        )?;
        plain(
            &m.gt_answer,
            "mvbench_accuracy's gt_answer is an array or an object",
        )?;
        let gold = m.gt_answer.text();
        let n = n_options(&gold, doc.map_or(0, |d| d.candidates.0.len()));
        let pred = match m.pred_answer.str() {
            Some(t) => option_letter(t, n).map(String::from),
            None => self.resp_letter(n),
        };
        Ok(Answer {
            item_id: id,
            pred,
            gold: gold.clone(),
            correct: m.score.truth(),
            item: ImportedItem {
                gold,
                ..Default::default()
            },
            metric: Some("mvbench_accuracy"),
            frame_idx: None,
        })
    }

    fn lvb(&self, m: &Lvb) -> Result<Answer, &'static str> {
        let id = m.id.text().ok_or("lvb_acc has no id")?;
        plain(
            &m.parsed_pred,
            "lvb_acc's parsed_pred is an array or an object",
        )?;
        plain(&m.answer, "lvb_acc's answer is an array or an object")?;
        let gold = m.answer.text();
        let pred = match &m.parsed_pred {
            Scalar::Null => self.resp_letter(n_options(&gold, 5)),
            p => p.text(),
        };
        Ok(Answer {
            item_id: id,
            pred,
            gold,
            correct: None,
            item: ImportedItem {
                category: m.question_category.text(),
                ..Default::default()
            },
            metric: Some("lvb_acc"),
            frame_idx: None,
        })
    }

    fn mlvu(&self, m: &Mlvu) -> Result<Answer, &'static str> {
        let question = m
            .question_id
            .text()
            .ok_or("mlvu_percetion_score has no question_id")?;
        plain(
            &m.pred_answer,
            "mlvu_percetion_score's pred_answer is an array or an object",
        )?;
        plain(
            &m.answer,
            "mlvu_percetion_score's answer is an array or an object",
        )?;
        let gold = m.answer.text();
        let pred = match &m.pred_answer {
            Scalar::Null => self.resp_letter(n_options(&gold, 0)),
            p => p.text(),
        };
        // The id is MLVU's question with its options, `(A) x` lines: the item shows them
        // apart.
        let (asked, options) = parse_prompt(&question);
        Ok(Answer {
            item_id: question.clone(),
            pred,
            gold,
            correct: None,
            item: ImportedItem {
                question: asked.or(Some(question)),
                options,
                task_type: m.task_type.text(),
                ..Default::default()
            },
            metric: Some("mlvu_percetion_score"),
            frame_idx: None,
        })
    }

    fn egoschema(&self, m: &EgoScore, doc: Option<&Doc>) -> Result<Answer, &'static str> {
        // The submission key is the video id (`video_idx`), which is also the item: EgoSchema
        // asks one question per video.
        let id = self
            .submission
            .0
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .or_else(|| doc.and_then(|d| d.video_idx.text().or_else(|| d.q_uid.text())))
            .or_else(|| self.doc_id.text())
            .ok_or("egoschema sample has no submission key and no doc_id")?;
        Ok(Answer {
            pred: choice_letter(&m.pred),
            gold: choice_letter(&m.ground_truth),
            correct: None,
            item: ImportedItem {
                video: Some(id.clone()),
                ..Default::default()
            },
            item_id: id,
            metric: Some("score"),
            frame_idx: None,
        })
    }

    fn tempcompass(&self, m: &TempCompass, doc: Option<&Doc>) -> Result<Answer, &'static str> {
        let video = m.video_id.text().ok_or("avg_accuracy has no video_id")?;
        let question = m.question.text().ok_or("avg_accuracy has no question")?;
        // A video has several questions; its id with the question (on one line) is the key.
        let id = format!(
            "{video}: {}",
            question.split_whitespace().collect::<Vec<_>>().join(" ")
        );
        let gt = m.gt_answer.text();
        let yes_no = gt
            .as_deref()
            .is_some_and(|g| g.eq_ignore_ascii_case("yes") || g.eq_ignore_ascii_case("no"));
        let n = doc.map_or(0, |d| d.options.0.len());
        let (pred, gold) = if yes_no {
            (
                m.prediction.str().and_then(yes_or_no),
                gt.map(|g| g.to_ascii_lowercase()),
            )
        } else {
            let gold = gt.and_then(|g| option_letter(&g, None).map(String::from));
            let n = n_options(&gold, n);
            // The captioning task answers with a caption; its judge's pick is the answer.
            let said = match &m.judge_answer {
                Scalar::Null => m.prediction.str(),
                j => j.str(),
            };
            (
                said.and_then(|t| option_letter(t, n).map(String::from)),
                gold,
            )
        };
        Ok(Answer {
            item_id: id,
            pred,
            gold,
            correct: m.rating.truth(),
            item: ImportedItem {
                question: Some(question),
                video: Some(video),
                category: m.dim.text(),
                ..Default::default()
            },
            metric: Some("avg_accuracy"),
            frame_idx: None,
        })
    }

    /// An unknown task: the document index, `target` and `filtered_resps`.
    fn generic(&self) -> Result<Answer, &'static str> {
        let id = self.doc_id.text().ok_or("sample has no doc_id")?;
        if matches!(self.filtered_resps, Resps::Other) && self.target == Scalar::Null {
            // Not a sample of any task (`{"doc_id": "x"}`): no answer and no target.
            return Err("sample has no answer (filtered_resps) and no target");
        }
        let (pred, gold) = match &self.filtered_resps {
            // A log-likelihood task's target is the index of the right option.
            Resps::Scores(_) => (
                self.resp_letter(None),
                self.target.int().and_then(index_letter),
            ),
            _ => {
                let gold = self.target.text();
                (self.resp_letter(n_options(&gold, 0)), gold)
            }
        };
        Ok(Answer {
            item_id: id,
            pred,
            gold,
            correct: None,
            item: ImportedItem::default(),
            metric: None,
            frame_idx: None,
        })
    }
}

/// What the dataset row says about its item.
fn doc_item(d: &Doc) -> ImportedItem {
    let options = [&d.options, &d.candidates, &d.option]
        .into_iter()
        .find(|l| !l.0.is_empty())
        .map(|l| l.0.clone())
        .unwrap_or_else(|| {
            [&d.option0, &d.option1, &d.option2, &d.option3, &d.option4]
                .into_iter()
                .map_while(|o| o.text().filter(|t| t != "N/A"))
                .collect()
        });
    ImportedItem {
        question: d.question.text(),
        options: lettered(options),
        video: [
            &d.video_youtube,
            &d.video_id,
            &d.video_idx,
            &d.video,
            &d.video_name,
        ]
        .into_iter()
        .find_map(Scalar::text),
        duration: d.duration.number().filter(|x| *x >= 0.0),
        start: d.start.number().filter(|x| x.is_finite() && *x >= 0.0),
        end: d.end.number().filter(|x| x.is_finite() && *x >= 0.0),
        category: d.domain.text().or_else(|| d.question_category.text()),
        task_type: d.task_type.text(),
        ..Default::default()
    }
}

/// Options as docs/formats.md §1 writes them, `"A. text"`: datasets that list bare texts
/// (MVBench candidates, LongVideoBench) get their letters.
fn lettered(options: Vec<String>) -> Vec<String> {
    let has_letters = options.iter().enumerate().all(|(i, o)| {
        let mut c = o.chars();
        c.next() == index_letter(i as i64).and_then(|l| l.chars().next())
            && matches!(c.next(), Some('.' | ')' | ':'))
    });
    if has_letters || options.len() > 26 {
        return options;
    }
    options
        .into_iter()
        .enumerate()
        .map(|(i, o)| format!("{}. {o}", (b'A' + i as u8) as char))
        .collect()
}

/// How many options a question has, as far as known: at least 4, the listed options, and
/// enough to include the gold letter.
fn n_options(gold: &Option<String>, listed: usize) -> Option<usize> {
    let by_gold = gold
        .as_deref()
        .filter(|g| g.len() == 1)
        .and_then(|g| g.chars().next())
        .filter(char::is_ascii_uppercase)
        .map_or(0, |c| (c as u8 - b'A') as usize + 1);
    Some(4.max(listed).max(by_gold))
}

/// The letter of a 0-based option index (`A` for 0).
fn index_letter(i: i64) -> Option<String> {
    u8::try_from(i)
        .ok()
        .filter(|&i| i < 26)
        .map(|i| ((b'A' + i) as char).to_string())
}

/// An egoschema choice: an option index (an integer or a string of digits; -1 is "none"),
/// or already a letter.
fn choice_letter(v: &Scalar) -> Option<String> {
    match v.int() {
        Some(i) => index_letter(i),
        None => v
            .str()
            .and_then(|s| option_letter(s, Some(26)).map(String::from)),
    }
}

fn argmax(xs: &[f64]) -> Option<i64> {
    let mut best: Option<(usize, f64)> = None;
    for (i, &x) in xs.iter().enumerate() {
        if best.is_none_or(|(_, b)| x > b) {
            best = Some((i, x));
        }
    }
    best.map(|(i, _)| i as i64)
}

/// A list of whole numbers (frame indices); `None` when absent or when any element is not
/// a non-negative integer.
fn int_list(v: &SeqOnly<Scalar>) -> Option<Vec<u64>> {
    v.0.as_ref()?
        .iter()
        .map(|x| x.int().and_then(|i| u64::try_from(i).ok()))
        .collect()
}

/// Lines of a prompt that instruct rather than ask (the task's pre- and post-prompts).
const INSTRUCTION_MARKS: [&str; 12] = [
    "select the best answer",
    "respond with only",
    "answer with the option",
    "carefully watch",
    "please answer",
    "please provide",
    "the best answer is",
    "best option",
    "only give the best option",
    "based on the video",
    "these are frames",
    "answer the question using",
];

/// Lines that only head the options (MVBench's `Option:`, others' `Options:`...).
const OPTION_HEADINGS: [&str; 6] = [
    "option:",
    "options:",
    "choices:",
    "answer choices:",
    "candidates:",
    "select from:",
];

/// `line` without a leading `Question:` label (ASCII case ignored), trimmed.
fn strip_question_label(line: &str) -> &str {
    const LABEL: &str = "question:";
    match line.get(..LABEL.len()) {
        Some(head) if head.eq_ignore_ascii_case(LABEL) => line[LABEL.len()..].trim(),
        _ => line,
    }
}

/// The question and options a multiple-choice prompt holds: the options are the longest
/// run of lines lettered A, B, C... in order (`A. x`, `(A) x`, `A) x`, `A: x`); the
/// question, the lines before them that are not instructions. Nothing when the prompt has
/// no such options.
pub(super) fn parse_prompt(prompt: &str) -> (Option<String>, Vec<String>) {
    let lines: Vec<&str> = prompt.lines().map(str::trim).collect();
    let letter_of = |line: &str| -> Option<u8> {
        let b = line.as_bytes();
        let (letter, rest) = match b {
            [b'(', l, b')', rest @ ..] => (*l, rest),
            [l, b'.' | b')' | b':', rest @ ..] => (*l, rest),
            _ => return None,
        };
        (letter.is_ascii_uppercase() && rest.first().is_some_and(|c| *c == b' ')).then_some(letter)
    };
    // (start, length) of the longest run A, B, C...
    let mut best = (0, 0);
    let mut i = 0;
    while i < lines.len() {
        if letter_of(lines[i]) == Some(b'A') {
            let mut n = 1;
            while i + n < lines.len() && letter_of(lines[i + n]) == Some(b'A' + n as u8) {
                n += 1;
            }
            if n > best.1 {
                best = (i, n);
            }
            i += n;
        } else {
            i += 1;
        }
    }
    let (start, n) = best;
    if n < 2 {
        return (None, Vec::new());
    }
    let options = lines[start..start + n]
        .iter()
        .map(|l| {
            let letter = char::from(l.as_bytes()[if l.starts_with('(') { 1 } else { 0 }]);
            let text = l[if l.starts_with('(') { 3 } else { 2 }..].trim();
            format!("{letter}. {text}")
        })
        .collect();
    let asked: Vec<&str> = lines[..start]
        .iter()
        .map(|l| strip_question_label(l))
        .filter(|l| {
            let low = l.to_ascii_lowercase();
            !l.is_empty()
                && !OPTION_HEADINGS.contains(&low.as_str())
                && !INSTRUCTION_MARKS.iter().any(|m| low.contains(m))
        })
        .collect();
    let question = (!asked.is_empty()).then(|| asked.join("\n"));
    (question, options)
}

/// "yes" or "no" when an answer starts with one of them.
fn yes_or_no(text: &str) -> Option<String> {
    let first: String = text
        .trim_start()
        .chars()
        .take_while(char::is_ascii_alphabetic)
        .collect::<String>()
        .to_ascii_lowercase();
    matches!(first.as_str(), "yes" | "no").then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_labels_and_option_headings_are_not_the_question() {
        let (q, o) = parse_prompt(
            "Question:What did the person do first?\nOption:\nA. Put down the phone.\n\
             B. Took the cup.\nOnly give the best option.",
        );
        assert_eq!(q.as_deref(), Some("What did the person do first?"));
        assert_eq!(o, ["A. Put down the phone.", "B. Took the cup."]);
        let (q, _) = parse_prompt("Questions are hard\nOptions:\n(A) x\n(B) y");
        assert_eq!(q.as_deref(), Some("Questions are hard"));
        let (q, o) = parse_prompt("no options here\nA. one");
        assert_eq!((q, o.len()), (None, 0));
    }

    fn answer(line: &str) -> Result<Answer, &'static str> {
        let s: Sample = serde_json::from_str(line).expect("json");
        s.answer()
    }

    /// An answer field holding an array or an object is a sample skipped, and why, never
    /// a cell kept without its answer.
    #[test]
    fn an_answer_that_is_not_text_is_a_skip_said() {
        let cases = [
            (
                r#"{"doc_id": 1, "videomme_perception_score": {"question_id": 7, "pred_answer": ["x"], "answer": "A"}}"#,
                "videomme_perception_score's pred_answer",
            ),
            (
                r#"{"doc_id": 1, "videomme_perception_score": {"question_id": 7, "pred_answer": "A", "answer": {}}}"#,
                "videomme_perception_score's answer",
            ),
            (
                r#"{"doc_id": 1, "mvbench_accuracy": {"pred_answer": {"a": 1}, "gt_answer": "A", "score": 1}}"#,
                "mvbench_accuracy's pred_answer",
            ),
            (
                r#"{"doc_id": 1, "lvb_acc": {"id": "q", "parsed_pred": [1], "answer": "A"}}"#,
                "lvb_acc's parsed_pred",
            ),
            (
                r#"{"doc_id": 1, "mlvu_percetion_score": {"question_id": "q", "pred_answer": "A", "answer": [2]}}"#,
                "mlvu_percetion_score's answer",
            ),
        ];
        for (line, why) in cases {
            match answer(line) {
                Err(e) => assert!(e.starts_with(why), "{e}"),
                Ok(a) => panic!("{why}: read as {:?}", a.pred),
            }
        }
        // A null answer is a sample whose model gave none: kept.
        let a = answer(
            r#"{"doc_id": 1, "videomme_perception_score": {"question_id": 7, "pred_answer": null, "answer": "A"}}"#,
        )
        .expect("kept");
        assert_eq!(a.pred, None);
    }

    #[test]
    fn videomme_from_the_metric_dict() {
        let a = answer(
            r#"{"doc_id": 3, "target": "C", "filtered_resps": ["B."], "doc_hash": "x",
                "videomme_perception_score": {"question_id": "001-2", "duration": "short",
                "category": "Knowledge", "sub_category": "Humanity", "task_category":
                "Counting Problem", "pred_answer": "B", "answer": "C"}, "input": "..."}"#,
        )
        .expect("answer");
        assert_eq!(a.item_id, "001-2");
        assert_eq!(
            (a.pred.as_deref(), a.gold.as_deref(), a.correct),
            (Some("B"), Some("C"), None)
        );
        assert_eq!(a.item.video.as_deref(), Some("001"));
        assert_eq!(a.item.category.as_deref(), Some("Knowledge"));
        assert_eq!(a.item.task_type.as_deref(), Some("Counting Problem"));
        assert_eq!(a.item.gold.as_deref(), Some("C"));
        // An unparsed answer is an empty string: no prediction.
        let a = answer(
            r#"{"doc_id": 3, "videomme_perception_score": {"question_id": "001-2",
                "pred_answer": "", "answer": "C"}}"#,
        )
        .expect("answer");
        assert_eq!(a.pred, None);
        assert!(answer(r#"{"doc_id": 3, "videomme_perception_score": {"answer": "C"}}"#).is_err());
    }

    /// A Video-MME dict without the answer takes the sample's target; with neither, the
    /// sample is skipped with why, not made a cell without a gold answer.
    #[test]
    fn videomme_without_an_answer() {
        let a = answer(
            r#"{"doc_id": 8, "target": "A", "filtered_resps": ["A"],
                "videomme_perception_score": {"question_id": "q8"}}"#,
        )
        .expect("the target is the answer");
        assert_eq!(
            (a.pred.as_deref(), a.gold.as_deref()),
            (Some("A"), Some("A"))
        );
        let why = "videomme_perception_score has no answer, and the sample no target: nothing to score against";
        for line in [
            r#"{"doc_id": 9, "videomme_perception_score": {"question_id": "q9"}}"#,
            r#"{"doc_id": 10, "videomme_perception_score": {"question_id": "q10", "pred_answer": "", "answer": ""}}"#,
        ] {
            assert_eq!(answer(line).map(|a| a.item_id), Err(why), "{line}");
        }
    }

    #[test]
    fn mvbench_egoschema_tempcompass_and_unknown_tasks() {
        let a = answer(
            r#"{"doc_id": 7, "filtered_resps": ["(B) walking"], "mvbench_accuracy":
                {"pred_answer": "(B) walking", "gt_answer": "B", "score": 1}}"#,
        )
        .expect("mvbench");
        assert_eq!(
            (a.item_id.as_str(), a.pred.as_deref(), a.correct),
            ("7", Some("B"), Some(true))
        );

        let a = answer(
            r#"{"doc_id": 0, "submission": {"vid-9": 2}, "score": {"pred": 2,
                "ground_truth": "3"}}"#,
        )
        .expect("egoschema");
        assert_eq!(
            (a.item_id.as_str(), a.pred.as_deref(), a.gold.as_deref()),
            ("vid-9", Some("C"), Some("D"))
        );
        let a = answer(r#"{"doc_id": 0, "score": {"pred": -1, "ground_truth": ""}}"#)
            .expect("egoschema without a submission");
        assert_eq!((a.item_id.as_str(), a.pred, a.gold), ("0", None, None));

        let a = answer(
            r#"{"doc_id": 0, "avg_accuracy": {"video_id": "v1", "question": "Is it fast?\n",
                "gt-answer": "yes", "video-llm-prediction": "Yes, it is.", "rating": 1,
                "dim": "speed"}}"#,
        )
        .expect("tempcompass");
        assert_eq!(a.item_id, "v1: Is it fast?");
        assert_eq!(
            (a.pred.as_deref(), a.gold.as_deref(), a.correct),
            (Some("yes"), Some("yes"), Some(true))
        );

        let a = answer(r#"{"doc_id": 12, "target": "B", "filtered_resps": "Answer: b"}"#)
            .expect("unknown");
        assert_eq!(
            (
                a.item_id.as_str(),
                a.pred.as_deref(),
                a.gold.as_deref(),
                a.metric.is_some()
            ),
            ("12", Some("B"), Some("B"), false)
        );
        let a = answer(
            r#"{"doc_id": 1, "target": 2, "filtered_resps": [[-3.0, false], [-1.0, true],
                [-2.0, false]]}"#,
        )
        .expect("log-likelihood");
        assert_eq!(
            (a.pred.as_deref(), a.gold.as_deref()),
            (Some("B"), Some("C"))
        );
        // A `score` number (another task's metric) is not egoschema's dict.
        let a = answer(r#"{"doc_id": 4, "target": "A", "filtered_resps": ["A"], "score": 1.0}"#)
            .expect("unknown with a score");
        assert!(a.metric.is_none());
        assert!(answer(r#"{"target": "A"}"#).is_err());
        // A line with an id and nothing to score is no cell.
        assert_eq!(
            answer(r#"{"doc_id": "x"}"#).map(|a| a.item_id),
            Err("sample has no answer (filtered_resps) and no target")
        );
    }

    #[test]
    fn the_doc_describes_the_item() {
        let a = answer(
            r#"{"doc_id": 2, "doc": {"question": "What moves?", "candidates": ["a cat",
                "a dog", "a car"], "video": "clip.mp4"}, "mvbench_accuracy":
                {"pred_answer": "C", "gt_answer": "C", "score": 1}}"#,
        )
        .expect("answer");
        assert_eq!(a.item.question.as_deref(), Some("What moves?"));
        assert_eq!(a.item.options, vec!["A. a cat", "B. a dog", "C. a car"]);
        assert_eq!(a.item.video.as_deref(), Some("clip.mp4"));
        let a = answer(
            r#"{"doc_id": 2, "doc": {"question": "Q", "option0": "x", "option1": "y",
                "option2": "N/A", "duration": 95.5}, "lvb_acc": {"id": "v_1",
                "answer": "B", "parsed_pred": "A", "question_category": "T2E"}}"#,
        )
        .expect("answer");
        assert_eq!(a.item.options, vec!["A. x", "B. y"]);
        assert_eq!(a.item.duration, Some(95.5));
        assert_eq!(a.item.category.as_deref(), Some("T2E"));
    }
}
