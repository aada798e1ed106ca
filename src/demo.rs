//! The bundled demo dataset, generated: synthetic clips whose frames carry the evidence,
//! and simulated models that answer from the frames their budget actually sampled.
//!
//! Because answers are derived from the sampled frames, the demo's trajectories have real,
//! visible causes: a one-second event that the 16-frame grid catches and the 32-frame grid
//! skips, flashes counted differently at every budget, distractor frames that only the
//! densest grid picks up, and a language prior that answers when the video does not.
//! Each multiple-choice answer is measured twice more, as replicates (docs/measures.md §16):
//! a re-run (`rerun`: the same frames, a few near-tie decisions drawn anew, as GPU
//! nondeterminism does) and the sampling grid shifted by half a step (`phase`: the other
//! polyphase component of the grid twice as dense, recorded in `frame_idx`), so that some
//! harmful transitions survive every replicate and others are a lottery.
//! `cargo run --release --example generate-demo` rebuilds `fixtures/demo` byte for byte.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use image::{ImageBuffer, Rgb, RgbImage};

use crate::core::analysis::bootstrap::SplitMix64;
use crate::core::sampling::{frame_set, linspace};

/// Frames per clip (cached at 1 frame per second).
pub const CLIP_FRAMES: u64 = 64;
/// The visual budgets, plus the text-only configuration.
pub const BUDGETS: [u64; 5] = [4, 8, 16, 32, 64];
const CLIPS: usize = 14;
const WIDTH: u32 = 160;
const HEIGHT: u32 = 90;
const PIXELS: u64 = 151_200;

const MCQ_BENCH: &str = "clips-mcq";
const OPEN_BENCH: &str = "clips-open";

/// A simulated model: how it notices evidence, trusts its prior, and gets distracted.
struct Model {
    name: &'static str,
    /// Chance of noticing one evidence frame.
    skill: f64,
    /// Loss of attention per frame of context, as a share of the clip.
    dilution: f64,
    /// Chance of answering from the prior when the video gave nothing.
    prior: f64,
    /// Chance of following a distractor it saw.
    distractible: f64,
}

const MODELS: [Model; 3] = [
    Model {
        name: "lumen-7b",
        skill: 0.88,
        dilution: 0.12,
        prior: 0.6,
        distractible: 0.45,
    },
    Model {
        name: "orbit-2b",
        skill: 0.75,
        dilution: 0.25,
        prior: 0.8,
        distractible: 0.6,
    },
    Model {
        name: "vista-13b",
        skill: 0.95,
        dilution: 0.06,
        prior: 0.45,
        distractible: 0.3,
    },
];

const COLORS: [(&str, [u8; 3]); 6] = [
    ("red", [220, 40, 40]),
    ("green", [40, 180, 60]),
    ("blue", [50, 90, 230]),
    ("yellow", [235, 210, 40]),
    ("purple", [150, 60, 200]),
    ("orange", [245, 140, 30]),
];
const SHAPES: [&str; 4] = ["circle", "square", "triangle", "diamond"];

/// What a question asks, and which frames hold its answer.
#[derive(Clone)]
enum Kind {
    /// Which colour the corner square had, shown only on `frames`.
    FlashColor { color: usize },
    /// How many white flashes, at `frames`.
    Count,
    /// Which shape stayed in the corner; `distractor` shape shown on the distractor frames.
    Shape { shape: usize, distractor: usize },
    /// Where the clip takes place; the misleading scene is shown on the distractor frames.
    Setting { outdoors: bool },
}

#[derive(Clone)]
struct Question {
    clip: usize,
    id: String,
    kind: Kind,
    evidence: BTreeSet<u64>,
    distractor: BTreeSet<u64>,
    /// Index into `options` of the right answer.
    gold: usize,
    options: Vec<String>,
    /// The answer a model gives without video.
    prior: usize,
    open: bool,
}

/// Frames that only the densest grid samples: where distractors hide.
fn only_densest() -> Vec<u64> {
    let lower: BTreeSet<u64> = BUDGETS[..BUDGETS.len() - 1]
        .iter()
        .flat_map(|&n| linspace(CLIP_FRAMES, n))
        .collect();
    (0..CLIP_FRAMES).filter(|f| !lower.contains(f)).collect()
}

/// Frames sampled by exactly one budget `n` below the densest (and by the densest).
fn only_at(n: u64) -> Vec<u64> {
    let mine: BTreeSet<u64> = linspace(CLIP_FRAMES, n).into_iter().collect();
    let others: BTreeSet<u64> = BUDGETS[..BUDGETS.len() - 1]
        .iter()
        .filter(|&&b| b != n)
        .flat_map(|&b| linspace(CLIP_FRAMES, b))
        .collect();
    mine.into_iter()
        .filter(|f| !others.contains(f) && *f > 2 && *f < CLIP_FRAMES - 3)
        .collect()
}

fn letters(options: &[&str]) -> Vec<String> {
    options
        .iter()
        .enumerate()
        .map(|(i, o)| format!("{}. {o}", (b'A' + i as u8) as char))
        .collect()
}

fn questions() -> Vec<Question> {
    let densest = only_densest();
    let mut rng = SplitMix64::new(2026);
    let mut out = Vec::new();
    for clip in 0..CLIPS {
        let c = clip + 1;
        // The flashed square: shown for one second on a frame of one budget's grid only, so
        // that budget is right and its neighbours are not (the grids are not nested).
        let home = BUDGETS[clip % 3 + 1]; // 8, 16 or 32 frames
        let choices = only_at(home);
        let evidence_frame = choices[(rng.next_u64() % choices.len() as u64) as usize];
        let color = clip % COLORS.len();
        let color_opts: Vec<&str> = (0..4)
            .map(|j| COLORS[(color + j) % COLORS.len()].0)
            .collect();
        // Shuffle the right answer's position deterministically.
        let gold_pos = clip % 4;
        let mut opts = color_opts.clone();
        opts.swap(0, gold_pos);
        out.push(Question {
            clip,
            id: format!("clip{c:02}-q1"),
            kind: Kind::FlashColor { color },
            evidence: [evidence_frame].into(),
            distractor: BTreeSet::new(),
            gold: gold_pos,
            options: letters(&opts),
            prior: (gold_pos + 1 + clip % 3) % 4,
            open: false,
        });

        // Flashes: each on a frame of a different budget's grid, so every budget counts a
        // different number of them (the grids are not nested).
        let n_flash = 2 + clip % 3;
        let mut flashes = BTreeSet::new();
        let mut tier = clip;
        while flashes.len() < n_flash {
            let grid = linspace(CLIP_FRAMES, BUDGETS[tier % 4]);
            tier += 1;
            let f = grid[1 + (rng.next_u64() % (grid.len() as u64 - 2)) as usize];
            if !flashes.contains(&(f + 1)) && !flashes.contains(&(f - 1)) {
                flashes.insert(f);
            }
        }
        out.push(Question {
            clip,
            id: format!("clip{c:02}-q2"),
            kind: Kind::Count,
            evidence: flashes,
            distractor: BTreeSet::new(),
            gold: n_flash - 1,
            options: letters(&["once", "twice", "three times", "four times"]),
            prior: 1,
            open: false,
        });

        // The corner shape: on screen most of the clip; a different shape takes its place
        // on a few frames that only the densest grid samples.
        let shape = clip % SHAPES.len();
        let distractor = (shape + 1 + clip % 3) % SHAPES.len();
        let start = 6 + (clip as u64 % 5);
        let evidence: BTreeSet<u64> = (start..start + 40).collect();
        let dis: BTreeSet<u64> = densest
            .iter()
            .copied()
            .filter(|f| evidence.contains(f))
            .skip(clip % 4)
            .step_by(3)
            .take(4)
            .collect();
        let evidence: BTreeSet<u64> = evidence.difference(&dis).copied().collect();
        let mut opts: Vec<&str> = SHAPES.to_vec();
        opts.rotate_left(clip % 4);
        let gold = opts.iter().position(|s| *s == SHAPES[shape]).unwrap_or(0);
        out.push(Question {
            clip,
            id: format!("clip{c:02}-q3"),
            kind: Kind::Shape { shape, distractor },
            evidence,
            distractor: dis,
            gold,
            options: letters(&opts),
            prior: (gold + 2) % 4,
            open: false,
        });

        // Setting: the prior already knows (most such clips are outdoors); misleading
        // indoor frames on the densest grid let video overwrite a right prior.
        let outdoors = clip % 4 != 3;
        let dis: BTreeSet<u64> = densest
            .iter()
            .copied()
            .skip(2 + clip % 5)
            .step_by(4)
            .take(3)
            .collect();
        let evidence: BTreeSet<u64> = (0..CLIP_FRAMES).filter(|f| !dis.contains(f)).collect();
        out.push(Question {
            clip,
            id: format!("clip{c:02}-q4"),
            kind: Kind::Setting { outdoors },
            evidence,
            distractor: dis,
            gold: if outdoors { 0 } else { 1 },
            options: letters(&["outdoors", "indoors", "underwater", "in space"]),
            prior: 0,
            open: false,
        });

        // Open-ended twin of q1 on half of the clips.
        if clip % 2 == 0 {
            let q1 = out[out.len() - 4].clone();
            out.push(Question {
                id: format!("clip{c:02}-o1"),
                open: true,
                ..q1
            });
        }
    }
    out
}

/// Deterministic uniform [0, 1) draw for a (model, question, config, purpose).
fn roll(seed: &str, salt: u64) -> f64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in seed.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let mut r = SplitMix64::new(h ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// The frames a budget samples: the demo's `linspace` grid.
fn grid(frames: u64) -> Vec<u64> {
    frame_set(linspace(CLIP_FRAMES, frames))
}

/// The grid shifted by half a step: the odd members of the grid twice as dense (its other
/// polyphase component), as many frames as the budget.
fn half_step_grid(frames: u64) -> Vec<u64> {
    linspace(CLIP_FRAMES, 2 * frames)
        .into_iter()
        .skip(1)
        .step_by(2)
        .collect()
}

/// Chance that a re-run draws a cell's decisions anew (a near-tie broken the other way):
/// about a tenth of those change the answer (most decisions are not close), near the 2-4%
/// of a plain re-run.
const RERUN_REDRAW: f64 = 0.25;

/// A model's answer (option index) and confidence for a question under a frame budget.
fn answer(model: &Model, q: &Question, frames: u64) -> (usize, Option<f64>) {
    let key = format!("{}|{}|{frames}", model.name, q.id);
    answer_from(model, q, frames, &grid(frames), &key)
}

/// The answer from the frames `sampled` (a budget of `frames`), its random decisions drawn
/// from `key`.
fn answer_from(
    model: &Model,
    q: &Question,
    frames: u64,
    sampled: &[u64],
    key: &str,
) -> (usize, Option<f64>) {
    let r = |salt| roll(key, salt);
    let conf = |lo: f64, hi: f64, salt| {
        (((lo + (hi - lo) * r(salt)) * 100.0).round() / 100.0).clamp(0.0, 1.0)
    };
    let guess = |salt| {
        if r(salt) < model.prior {
            q.prior
        } else {
            (q.prior + 1 + (r(salt + 1) * 3.0) as usize) % 4
        }
    };
    if frames == 0 {
        return (guess(1), None);
    }
    let sampled: BTreeSet<u64> = sampled.iter().copied().collect();
    let notice = model.skill * (1.0 - model.dilution * frames as f64 / CLIP_FRAMES as f64);
    let seen_evidence = sampled.intersection(&q.evidence).count();
    let seen_distractor = sampled.intersection(&q.distractor).count();
    if let Kind::Count = q.kind {
        // Count the flashes noticed among the sampled frames.
        let counted = (0..seen_evidence)
            .filter(|&i| r(10 + i as u64) < 0.9 + 0.1 * model.skill)
            .count();
        return if counted == 0 {
            (guess(2), Some(conf(0.1, 0.35, 3)))
        } else {
            let ans = counted.min(4) - 1;
            let sure = if ans == q.gold {
                (0.6, 0.9)
            } else {
                (0.35, 0.7)
            };
            (ans, Some(conf(sure.0, sure.1, 4)))
        };
    }
    let p_detect = 1.0 - (1.0 - notice.max(0.05)).powi(seen_evidence.min(8) as i32);
    let distracted =
        seen_distractor >= 2 && r(5) < model.distractible * (seen_distractor as f64 / 6.0).min(1.0);
    if distracted {
        let wrong = match q.kind {
            Kind::Shape { distractor, .. } => {
                let name = SHAPES[distractor];
                q.options
                    .iter()
                    .position(|o| o.ends_with(name))
                    .unwrap_or((q.gold + 1) % 4)
            }
            Kind::Setting { outdoors } => usize::from(outdoors),
            _ => (q.gold + 1) % 4,
        };
        return (wrong, Some(conf(0.4, 0.75, 6)));
    }
    if r(7) < p_detect {
        return (q.gold, Some(conf(0.55, 0.95, 8)));
    }
    (guess(9), Some(conf(0.1, 0.45, 10)))
}

/// One replicate of a multiple-choice cell: its name, its nuisance, its answer and, for a
/// shifted grid, the frames it saw.
struct Replicate {
    name: &'static str,
    nuisance: &'static str,
    answer: (usize, Option<f64>),
    frame_idx: Option<Vec<u64>>,
}

/// The replicates of every multiple-choice cell, model by model: a re-run of every budget
/// (text-only included), and the half-step grid of every budget with frames.
fn replicates(qs: &[Question]) -> Vec<(&'static Model, &Question, u64, Replicate)> {
    let mut out = Vec::new();
    for model in &MODELS {
        for q in qs.iter().filter(|q| !q.open) {
            for frames in std::iter::once(0).chain(BUDGETS) {
                let key = format!("{}|{}|{frames}", model.name, q.id);
                let rerun = if roll(&key, 90) < RERUN_REDRAW {
                    answer_from(model, q, frames, &grid(frames), &format!("{key}|rerun"))
                } else {
                    answer(model, q, frames)
                };
                out.push((
                    model,
                    q,
                    frames,
                    Replicate {
                        name: "rerun-1",
                        nuisance: "rerun",
                        answer: rerun,
                        frame_idx: None,
                    },
                ));
                if frames > 0 {
                    let shifted = half_step_grid(frames);
                    out.push((
                        model,
                        q,
                        frames,
                        Replicate {
                            name: "phase-1/2",
                            nuisance: "phase",
                            answer: answer_from(model, q, frames, &shifted, &key),
                            frame_idx: Some(shifted),
                        },
                    ));
                }
            }
        }
    }
    out
}

/// A cell of the demo as its JSON object: the model's answer `ans` (and its confidence)
/// to `q` under a budget of `frames`.
fn demo_cell(
    model: &Model,
    q: &Question,
    frames: u64,
    ans: usize,
    confidence: Option<f64>,
) -> serde_json::Map<String, serde_json::Value> {
    let mut cell = serde_json::Map::new();
    cell.insert("model".into(), model.name.into());
    cell.insert(
        "benchmark".into(),
        if q.open { OPEN_BENCH } else { MCQ_BENCH }.into(),
    );
    cell.insert("item_id".into(), q.id.clone().into());
    cell.insert(
        "config".into(),
        if frames == 0 {
            "textonly".into()
        } else {
            format!("{frames}f")
        }
        .into(),
    );
    cell.insert("frames".into(), frames.into());
    cell.insert(
        "pixels".into(),
        if frames == 0 {
            serde_json::Value::Null
        } else {
            PIXELS.into()
        },
    );
    if q.open {
        cell.insert("task".into(), "open".into());
        cell.insert("pred".into(), open_text(q, ans).into());
        cell.insert(
            "gold".into(),
            serde_json::json!([
                open_text(q, q.gold),
                format!(
                    "{} square",
                    q.options[q.gold].split_once(". ").map_or("", |(_, w)| w)
                )
            ]),
        );
    } else {
        cell.insert("task".into(), "mcq".into());
        cell.insert(
            "pred".into(),
            ((b'A' + ans as u8) as char).to_string().into(),
        );
        cell.insert(
            "gold".into(),
            ((b'A' + q.gold as u8) as char).to_string().into(),
        );
    }
    if let Some(c) = confidence {
        cell.insert("confidence".into(), c.into());
    }
    cell.insert("source_tag".into(), "demo-sim".into());
    cell
}

/// Open-ended answer text for an option index.
fn open_text(q: &Question, ans: usize) -> String {
    let word = q.options[ans].split_once(". ").map_or("", |(_, w)| w);
    format!("a {word} square in the corner")
}

// ----- frames -----

/// 3x5 digits and a colon, one row per u8 (low 3 bits, left to right).
const GLYPHS: [[u8; 5]; 11] = [
    [7, 5, 5, 5, 7],
    [2, 6, 2, 2, 7],
    [7, 1, 7, 4, 7],
    [7, 1, 7, 1, 7],
    [5, 5, 7, 1, 1],
    [7, 4, 7, 1, 7],
    [7, 4, 7, 5, 7],
    [7, 1, 1, 1, 1],
    [7, 5, 7, 5, 7],
    [7, 5, 7, 1, 7],
    [0, 2, 0, 2, 0],
];

fn text(img: &mut RgbImage, x0: u32, y0: u32, s: &str, color: [u8; 3]) {
    for (i, ch) in s.chars().enumerate() {
        let g = match ch {
            '0'..='9' => GLYPHS[ch as usize - '0' as usize],
            ':' => GLYPHS[10],
            _ => continue,
        };
        for (row, bits) in g.iter().enumerate() {
            for col in 0..3 {
                if bits & (4 >> col) != 0 {
                    for dy in 0..2 {
                        for dx in 0..2 {
                            let (x, y) =
                                (x0 + (i as u32 * 4 + col) * 2 + dx, y0 + row as u32 * 2 + dy);
                            if x < WIDTH && y < HEIGHT {
                                img.put_pixel(x, y, Rgb(color));
                            }
                        }
                    }
                }
            }
        }
    }
}

fn fill(img: &mut RgbImage, shape: &str, cx: i32, cy: i32, r: i32, color: [u8; 3]) {
    for y in cy - r..=cy + r {
        for x in cx - r..=cx + r {
            let (dx, dy) = (x - cx, y - cy);
            let inside = match shape {
                "circle" => dx * dx + dy * dy <= r * r,
                "square" => true,
                "triangle" => dy >= -r + 2 * dx.abs() - r / 2 && dy <= r,
                _ => dx.abs() + dy.abs() <= r,
            };
            if inside && x >= 0 && y >= 0 && (x as u32) < WIDTH && (y as u32) < HEIGHT {
                img.put_pixel(x as u32, y as u32, Rgb(color));
            }
        }
    }
}

fn render(clip: usize, frame: u64, qs: &[&Question]) -> RgbImage {
    let mut outdoors = true;
    for q in qs {
        if let Kind::Setting { outdoors: o } = q.kind {
            outdoors = if q.distractor.contains(&frame) { !o } else { o };
        }
    }
    let tint = (clip * 37 % 60) as u8;
    let mut img: RgbImage = ImageBuffer::from_fn(WIDTH, HEIGHT, |_, y| {
        let t = (y * 40 / HEIGHT) as u8;
        if outdoors {
            if y < HEIGHT * 3 / 5 {
                Rgb([110 + t, 170 + t, 230 - tint / 2])
            } else {
                Rgb([60, 140 + tint, 60])
            }
        } else if y < HEIGHT * 3 / 5 {
            Rgb([200 - t, 180 - t, 140 + tint / 3])
        } else {
            Rgb([120, 80 + tint / 2, 50])
        }
    });
    // A ball crossing the frame marks the passing of time.
    let bx = 10 + (frame as i32 * (WIDTH as i32 - 20)) / (CLIP_FRAMES as i32 - 1);
    fill(&mut img, "circle", bx, 48, 5, [250, 250, 250]);
    for q in qs {
        match q.kind {
            Kind::FlashColor { color } if q.evidence.contains(&frame) => {
                fill(&mut img, "square", 16, 16, 10, COLORS[color].1);
            }
            Kind::Shape { shape, distractor } => {
                let s = if q.distractor.contains(&frame) {
                    Some(distractor)
                } else if q.evidence.contains(&frame) {
                    Some(shape)
                } else {
                    None
                };
                if let Some(s) = s {
                    fill(
                        &mut img,
                        SHAPES[s],
                        WIDTH as i32 - 22,
                        HEIGHT as i32 - 24,
                        12,
                        [30, 30, 30],
                    );
                }
            }
            _ => {}
        }
    }
    for q in qs {
        if let Kind::Count = q.kind
            && q.evidence.contains(&frame)
        {
            for p in img.pixels_mut() {
                p.0 = p.0.map(|v| 255 - (255 - v) / 6);
            }
        }
    }
    let secs = frame;
    text(
        &mut img,
        4,
        HEIGHT - 14,
        &format!("{:02}:{:02}", secs / 60, secs % 60),
        [255, 255, 255],
    );
    img
}

// ----- files -----

#[derive(serde::Serialize)]
struct ItemLine<'a> {
    benchmark: &'a str,
    item_id: &'a str,
    question: String,
    options: &'a [String],
    gold: String,
    video: String,
    num_frames: u64,
    fps: f64,
    duration: f64,
    category: &'a str,
    task_type: &'a str,
}

fn question_text(q: &Question) -> (String, &'static str, &'static str) {
    match q.kind {
        Kind::FlashColor { .. } if q.open => (
            "What briefly appeared in the top-left corner? Answer in a few words.".into(),
            "Short event",
            "Open description",
        ),
        Kind::FlashColor { .. } => (
            "What colour was the square that flashed for one second in the top-left corner?".into(),
            "Short event",
            "Attribute perception",
        ),
        Kind::Count => (
            "How many times did the whole screen flash white?".into(),
            "Counting",
            "Counting",
        ),
        Kind::Shape { .. } => (
            "Which shape stayed in the bottom-right corner for most of the clip?".into(),
            "Persistent object",
            "Object recognition",
        ),
        Kind::Setting { .. } => (
            "Where does this clip take place?".into(),
            "Scene",
            "Scene recognition",
        ),
    }
}

/// Writes the demo dataset into `dir` (created if needed; existing files are replaced).
pub fn generate(dir: &Path) -> Result<()> {
    let qs = questions();
    let frames_dir = dir.join("frames");
    std::fs::create_dir_all(&frames_dir)
        .with_context(|| format!("cannot create {}", frames_dir.display()))?;

    let mut dataset = serde_json::Map::new();
    dataset.insert("schema".into(), "frameaudit/dataset@1".into());
    dataset.insert("name".into(), "frameaudit-demo".into());
    let mut configs = serde_json::Map::new();
    for n in BUDGETS {
        configs.insert(format!("{n}f"), serde_json::json!({"policy": "linspace"}));
    }
    dataset.insert("configs".into(), configs.into());
    dataset.insert("frames_dir".into(), "frames".into());
    dataset.insert("frame_name".into(), "{index:06}.jpg".into());
    let mut text = crate::core::text::json_to_string_pretty(&dataset)?;
    text.push('\n');
    std::fs::write(dir.join("dataset.json"), text)?;

    let mut items = std::io::BufWriter::new(std::fs::File::create(dir.join("items.jsonl"))?);
    for q in &qs {
        let (question, category, task_type) = question_text(q);
        let line = ItemLine {
            benchmark: if q.open { OPEN_BENCH } else { MCQ_BENCH },
            item_id: &q.id,
            question,
            options: if q.open { &[] } else { &q.options },
            gold: if q.open {
                open_text(q, q.gold)
            } else {
                ((b'A' + q.gold as u8) as char).to_string()
            },
            video: format!("clip{:02}", q.clip + 1),
            num_frames: CLIP_FRAMES,
            fps: 1.0,
            duration: CLIP_FRAMES as f64,
            category,
            task_type,
        };
        crate::core::text::json_to_writer(&mut items, &line)?;
        items.write_all(b"\n")?;
    }
    items.flush()?;

    let mut cells = std::io::BufWriter::new(std::fs::File::create(dir.join("cells.jsonl"))?);
    for model in &MODELS {
        for q in &qs {
            for frames in std::iter::once(0).chain(BUDGETS) {
                let (ans, confidence) = answer(model, q, frames);
                let cell = demo_cell(model, q, frames, ans, confidence);
                crate::core::text::json_to_writer(&mut cells, &cell)?;
                cells.write_all(b"\n")?;
            }
        }
    }
    for (model, q, frames, replicate) in replicates(&qs) {
        let (ans, confidence) = replicate.answer;
        let mut cell = demo_cell(model, q, frames, ans, confidence);
        cell.insert("replicate".into(), replicate.name.into());
        cell.insert("nuisance".into(), replicate.nuisance.into());
        if let Some(idx) = replicate.frame_idx {
            cell.insert("frame_idx".into(), idx.into());
        }
        crate::core::text::json_to_writer(&mut cells, &cell)?;
        cells.write_all(b"\n")?;
    }
    cells.flush()?;

    for clip in 0..CLIPS {
        let video = format!("clip{:02}", clip + 1);
        let vdir = frames_dir.join(&video);
        std::fs::create_dir_all(&vdir)?;
        let mine: Vec<&Question> = qs.iter().filter(|q| q.clip == clip).collect();
        let needed: BTreeSet<u64> = BUDGETS
            .iter()
            .flat_map(|&n| linspace(CLIP_FRAMES, n))
            .collect();
        for f in needed {
            let img = render(clip, f, &mine);
            let path = vdir.join(format!("{f:06}.jpg"));
            let file = std::io::BufWriter::new(std::fs::File::create(&path)?);
            let mut enc = image::codecs::jpeg::JpegEncoder::new_with_quality(file, 70);
            enc.encode_image(&img)
                .with_context(|| format!("cannot encode {}", path.display()))?;
        }
    }
    Ok(())
}
