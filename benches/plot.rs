//! Figure writing speed: `cargo bench --bench plot`.
//!
//! Runs `frameaudit plot` (load, analysis with the default 1000 bootstrap resamples and the
//! cascade sweep, every figure of 5 models, index.html) as SVG and as PNG, on the real
//! Video-MME scale grid when it is next to the repository, else on a generated matrix of 5
//! models x 1500 items x 6 configurations with confidences (so the cascade is drawn too),
//! and prints the wall time of each and the files written (`FRAMEAUDIT_BENCH_GENERATED=1`
//! uses the generated matrix anyway). Figures only; nothing is asserted.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn generated(dir: &Path) -> PathBuf {
    let path = dir.join("cells.jsonl");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
    let configs = [
        ("textonly", 0),
        ("8f", 8),
        ("16f", 16),
        ("32f", 32),
        ("64f", 64),
        ("128f", 128),
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    for m in 0..5 {
        for i in 0..1500 {
            let difficulty = next();
            for (c, (name, frames)) in configs.iter().enumerate() {
                let p = 0.25 + 0.1 * c as f64 + 0.05 * m as f64 - 0.3 * difficulty;
                let correct = next() < p;
                writeln!(
                    out,
                    r#"{{"model":"model-{m}","item_id":"q{i:05}","config":"{name}","frames":{frames},"correct":{correct},"confidence":{:.3}}}"#,
                    next()
                )
                .expect("write");
            }
        }
    }
    out.flush().expect("flush");
    path
}

fn main() {
    let tmp = tempfile::tempdir().expect("tmp");
    let real = std::env::var_os("FRAMEAUDIT_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"))
        .join("data/videomme-scalegrid/per_item.csv");
    let data = if real.exists() && std::env::var_os("FRAMEAUDIT_BENCH_GENERATED").is_none() {
        println!("data: the real Video-MME scale grid ({})", real.display());
        real
    } else {
        println!("data: generated, 5 models x 1500 items x 6 configurations");
        generated(tmp.path())
    };
    for format in ["svg", "png"] {
        let out = tmp.path().join(format);
        let t = Instant::now();
        let o = Command::new(env!("CARGO_BIN_EXE_frameaudit"))
            .args(["plot", data.to_str().expect("utf8"), "-o"])
            .arg(&out)
            .args(["--format", format])
            .output()
            .expect("run frameaudit");
        let wall = t.elapsed();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let files = std::fs::read_dir(&out).expect("out").count();
        let bytes: u64 = std::fs::read_dir(&out)
            .expect("out")
            .flatten()
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len())
            .sum();
        println!(
            "plot --format {format}: {:.2} s wall, {files} files, {:.1} MB",
            wall.as_secs_f64(),
            bytes as f64 / 1e6
        );
    }
}
