//! Import speed: 1 million lmms-eval sample lines (5 models x 10 frame budgets x 20 000
//! Video-MME-style items, v0.4-0.6 lines with their prompt) written to a temporary folder,
//! then `lmms_eval::import` plus writing the dataset, timed. The target is under 5 s on two
//! cores. `cargo bench --bench import` (FRAMEAUDIT_BENCH_ITEMS changes the item count).

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use frameaudit::core::import::Import;
use frameaudit::core::import::lmms_eval::{LmmsOptions, import};

const MODELS: [(&str, &str, &str); 5] = [
    (
        "llava_onevision",
        "lmms-lab/llava-onevision-qwen2-7b-ov",
        "max_frames_num",
    ),
    (
        "llava_vid",
        "lmms-lab/LLaVA-Video-7B-Qwen2",
        "max_frames_num",
    ),
    (
        "qwen2_5_vl",
        "Qwen/Qwen2.5-VL-7B-Instruct",
        "max_num_frames",
    ),
    ("qwen2_vl", "Qwen/Qwen2-VL-7B-Instruct", "max_num_frames"),
    ("internvl2", "OpenGVLab/InternVL2-8B", "num_frame"),
];
const BUDGETS: [u64; 10] = [1, 2, 4, 8, 12, 16, 24, 32, 48, 64];

/// Writes one run: a results file and a samples file of `items` lines.
fn write_run(
    dir: &Path,
    k: usize,
    wrapper: &str,
    name: &str,
    key: &str,
    frames: u64,
    items: usize,
) -> u64 {
    let date = format!("20250101_{k:06}");
    std::fs::write(
        dir.join(format!("{date}_results.json")),
        format!(
            "{{\"results\": {{\"videomme\": {{\"videomme_perception_score,none\": 60.0}}}}, \"config\": {{\"model\": \"{wrapper}\", \"model_args\": \"pretrained={name},{key}={frames}\"}}}}\n"
        ),
    )
    .expect("write results");
    let file =
        std::fs::File::create(dir.join(format!("{date}_samples_videomme.jsonl"))).expect("create");
    let mut w = std::io::BufWriter::new(file);
    let mut bytes = 0;
    for i in 0..items {
        let (video, q) = (i / 3 + 1, i % 3 + 1);
        let letters = ["A", "B", "C", "D"];
        let gold = letters[(i * 7) % 4];
        // Accuracy grows with the budget; which items are right changes with it.
        let pred = if (i * 31 + k * 17) % 100 < 40 + frames as usize / 2 {
            gold
        } else {
            letters[(i + k) % 4]
        };
        let line = format!(
            "{{\"doc_id\": {i}, \"target\": \"{gold}\", \"filtered_resps\": [\"{pred}\"], \"doc_hash\": \"74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b\", \"prompt_hash\": \"{i:064x}\", \"target_hash\": \"{k:064x}\", \"videomme_perception_score\": {{\"question_id\": \"{video:03}-{q}\", \"duration\": \"short\", \"category\": \"Knowledge\", \"sub_category\": \"Humanity & History\", \"task_category\": \"Counting Problem\", \"pred_answer\": \"{pred}\", \"answer\": \"{gold}\"}}, \"input\": \"Select the best answer to the following multiple-choice question based on the video. Respond with only the letter (A, B, C, or D) of the correct option.\\nHow many people appear in the video {video}?\\nA. One.\\nB. Two.\\nC. Three.\\nD. Four.\\nAnswer with the option's letter from the given choices directly.\"}}\n"
        );
        bytes += line.len() as u64;
        w.write_all(line.as_bytes()).expect("write line");
    }
    w.flush().expect("flush");
    bytes
}

fn main() {
    let items: usize = std::env::var("FRAMEAUDIT_BENCH_ITEMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let tmp = tempfile::tempdir().expect("tmp");
    let logs = tmp.path().join("logs");
    let t = Instant::now();
    let mut bytes = 0;
    let mut k = 0;
    for (wrapper, name, key) in MODELS {
        let dir = logs.join(name.replace('/', "__"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        for frames in BUDGETS {
            bytes += write_run(&dir, k, wrapper, name, key, frames, items);
            k += 1;
        }
    }
    let lines = (MODELS.len() * BUDGETS.len() * items) as u64;
    eprintln!(
        "generated {lines} lines ({:.0} MB) in {:.1} s",
        bytes as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );

    let out = tmp.path().join("dataset");
    let t = Instant::now();
    let mut imp = Import::default();
    let seen = std::cell::Cell::new(0u64);
    import(&[logs], &LmmsOptions::default(), &mut imp, &|n| {
        seen.set(seen.get() + n)
    })
    .expect("import");
    let read = t.elapsed().as_secs_f64();
    imp.write(&out, "bench").expect("write");
    let total = t.elapsed().as_secs_f64();
    let s = imp.summary();
    assert_eq!(seen.get(), lines, "progress counts every line");
    assert_eq!(s.cells as u64, lines);
    println!(
        "lmms-eval import: {lines} lines ({:.0} MB), {} runs, {} items: read {read:.2} s, read + write {total:.2} s, {:.2} M lines/s",
        bytes as f64 / 1e6,
        s.runs,
        s.items,
        lines as f64 / total / 1e6
    );
}
