//! Frame decoding speed: `cargo bench --bench frames`.
//!
//! Writes 16 JPEG frames of 1280x720 (a detailed synthetic picture, so the JPEGs are of
//! realistic size), then prints:
//!   - cold: the 16 decoded and scaled to thumbnail size through the background loader, from
//!     the first request to the last result (what an item screen waits for);
//!   - cached: the 16 fetched again (what moving back to an item costs);
//!   - the same 16 decoded one by one on the calling thread, for comparison.
//!
//! Then, when ffmpeg is installed, a raw video: a 10-minute 1280x720 H.264 file at 25 fps
//! with a keyframe every 250 frames and B-frames (one minute of `testsrc2` encoded, then
//! copied ten times over; about a minute to make), and 16 frames spread over it as a
//! harness samples them (`linspace(0, n - 1, 16)` truncated, as lmms-eval does): here 14
//! of them are the last frame of their GOP, so each costs a decode of 250 frames, the
//! worst case of this GOP:
//!   - the probe (`probe_video`) and the frame index, once each;
//!   - cold through the loader (one batch), and cached;
//!   - cold one ffmpeg run a frame (the decoder of before), for comparison;
//!   - the first item cold: its 16 frames through the loader, none decoded before, the
//!     video indexed (what opening the first item of a session costs);
//!   - queue order: items of 16 frames, 15 of them the last of a GOP and no two items
//!     sharing a GOP, opened one after the other as the audit screens open them (the thumbnails at
//!     their slot's size, the first frame large), with the two items after the open one
//!     prefetched as the screens prefetch them and the annotator on each item for a while
//!     (10 s, `FRAMES_BENCH_DWELL=SECONDS`): from opening an item to its frames all there.
//!
//! First, the decode cache's size limit (docs/cache.md): a cache of 20 000 frame files in
//! 200 videos' folders, the walk that measures it (within the limit: nothing removed) and
//! a trim that removes half of it (`cargo bench --bench frames -- trim`: only these).
//!
//! The machine's load average is printed with the figures.
//!
//! `FRAMES_BENCH_VIDEO=path` uses that file instead of making one. Figures only; nothing
//! is asserted.

use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

use frameaudit::core::dataset::{DatasetMeta, ItemMeta};
use frameaudit::core::frames::{
    FrameKey, FrameLoader, FrameStore, Wanted, decode_video, ffmpeg_on_path, load_image,
    probe_video,
};
use image::{Rgb, RgbImage};

const THUMB: u32 = 128;

/// Frame `index` of `video` at thumbnail size, as the frame view asks for it.
fn thumb(video: &str, index: u64) -> FrameKey {
    FrameKey {
        video: video.into(),
        index,
        position: None,
        max_side: THUMB,
        fit: None,
        saved: None,
    }
}

/// The decode cache's trim: a walk of 20 000 frames, then a trim of half of them.
fn trim_figures() {
    let tmp = tempfile::tempdir().expect("tmp");
    let frames = tmp.path().join(".frameaudit-cache/frames");
    let (videos, per_video, size) = (200u64, 100u64, 1000usize);
    for v in 0..videos {
        let dir = frames.join(format!("video{v:03}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        for i in 0..per_video {
            let path = dir.join(format!("{i}.jpg"));
            std::fs::write(&path, vec![0u8; size]).expect("write");
            // Used in turn, an hour ago and before.
            let t = std::time::SystemTime::now() - Duration::from_secs(3600 + v * per_video + i);
            let f = std::fs::File::options()
                .write(true)
                .open(&path)
                .expect("open");
            f.set_times(std::fs::FileTimes::new().set_accessed(t).set_modified(t))
                .expect("times");
        }
    }
    let total = videos * per_video * size as u64;
    let now = std::time::SystemTime::now();
    let t = Instant::now();
    let within = frameaudit::core::frames::trim_frame_cache(tmp.path(), total, now);
    let walk = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let trimmed = frameaudit::core::frames::trim_frame_cache(tmp.path(), total * 5 / 8, now);
    let cut = t.elapsed().as_secs_f64() * 1e3;
    println!(
        "frame cache of {} frames: measured in {walk:.1} ms ({} removed); trimmed to 80% of 5/8 in {cut:.1} ms ({} removed)",
        videos * per_video,
        within.removed,
        trimmed.removed
    );
}

fn main() {
    trim_figures();
    if std::env::args().skip(1).any(|a| a == "trim") {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("frames/v");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let mut bytes = 0;
    for i in 0..16u32 {
        // Smooth shading with shapes and a little grain: about the size of a real frame.
        let img = RgbImage::from_fn(1280, 720, |x, y| {
            let grain = ((x.wrapping_mul(2654435761) ^ y.wrapping_mul(40503) ^ i) >> 7) % 9;
            let disc =
                (x as i64 - 400 - 40 * i as i64).pow(2) + (y as i64 - 360).pow(2) < 150 * 150;
            let base = if disc {
                [200, 60, 40]
            } else {
                [x / 6, y / 4, 120 + i * 4]
            };
            Rgb([
                (base[0] + grain).min(255) as u8,
                (base[1] + grain).min(255) as u8,
                (base[2] + grain).min(255) as u8,
            ])
        });
        let path = dir.join(format!("{i:06}.jpg"));
        img.save(&path).expect("write jpeg");
        bytes += std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    }
    println!(
        "16 frames of 1280x720, {:.0} KiB of JPEG in all",
        bytes as f64 / 1024.0
    );
    let items = vec![Some(ItemMeta {
        video: Some("v".into()),
        num_frames: Some(16),
        fps: Some(1.0),
        ..Default::default()
    })];
    let store = FrameStore::from_parts(
        Some(tmp.path().to_path_buf()),
        &DatasetMeta::default(),
        &items,
    );

    let key = |i: u64| thumb("v", i);
    let keys: Vec<FrameKey> = (0..16).map(key).collect();
    let (cold, loader) = fetch_all(&store, &keys);
    let cold = cold * 1e3;
    let t = Instant::now();
    let ok = (0..16)
        .filter(|&i| loader.get(&key(i)).is_some_and(|r| r.is_ok()))
        .count();
    let cached = t.elapsed().as_secs_f64() * 1e3;
    println!("cold, through the loader: {cold:.1} ms for 16 thumbnails ({ok} decoded)");
    println!("cached: {cached:.3} ms for 16");

    let t = Instant::now();
    for i in 0..16 {
        let located = store.locate("v", i, None);
        load_image(&located, THUMB, false).expect("decode");
    }
    println!(
        "one by one on this thread: {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );

    raw_video();
}

/// Seconds from asking a new loader for `keys` to its last result, and the loader (which
/// holds the results).
fn fetch_all(store: &FrameStore, keys: &[FrameKey]) -> (f64, FrameLoader) {
    let (tx, rx) = channel();
    let loader = FrameLoader::new(store.clone(), 256, move || {
        let _ = tx.send(());
    });
    let t = Instant::now();
    for k in keys {
        loader.request(k.clone());
    }
    while keys.iter().any(|k| loader.get(k).is_none()) {
        let _ = rx.recv_timeout(Duration::from_secs(60));
    }
    (t.elapsed().as_secs_f64(), loader)
}

/// The raw-video case (see the module doc).
fn raw_video() {
    let Some(ffmpeg) = ffmpeg_on_path() else {
        println!("raw video: skipped, ffmpeg is not on PATH");
        return;
    };
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path();
    std::fs::create_dir_all(root.join("videos")).expect("mkdir");
    let video = root.join("videos/long.mp4");
    if let Some(given) = std::env::var_os("FRAMES_BENCH_VIDEO") {
        std::fs::copy(&given, &video).expect("copy FRAMES_BENCH_VIDEO");
    } else {
        let t = Instant::now();
        let minute = root.join("minute.mp4");
        let run = |args: &[&str]| {
            let ok = std::process::Command::new(&ffmpeg)
                .args(["-nostdin", "-loglevel", "error", "-y"])
                .args(args)
                .current_dir(root)
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "ffmpeg {args:?}");
        };
        run(&[
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=1280x720:rate=25",
            "-t",
            "60",
            "-c:v",
            "libx264",
            "-preset",
            "veryfast",
            "-g",
            "250",
            "-bf",
            "3",
            "-pix_fmt",
            "yuv420p",
            minute.to_str().expect("utf-8"),
        ]);
        let list = root.join("list.txt");
        std::fs::write(&list, "file 'minute.mp4'\n".repeat(10)).expect("list");
        run(&[
            "-f",
            "concat",
            "-safe",
            "0",
            "-i",
            "list.txt",
            "-c",
            "copy",
            video.to_str().expect("utf-8"),
        ]);
        println!(
            "raw video: made a 10-minute 1280x720 H.264 file in {:.0} s",
            t.elapsed().as_secs_f64()
        );
    }
    let t = Instant::now();
    let probe = match probe_video(&video) {
        Ok(p) => p,
        Err(e) => {
            println!("raw video: skipped, {e}");
            return;
        }
    };
    println!(
        "raw video: {} frames at {} fps, {}x{}, {:.0} MB; probe {:.0} ms",
        probe.num_frames,
        probe.fps,
        probe.width,
        probe.height,
        std::fs::metadata(&video).map_or(0, |m| m.len()) as f64 / 1e6,
        t.elapsed().as_secs_f64() * 1e3
    );
    let n = probe.num_frames;
    let picks: Vec<u64> = (0..16u64)
        .map(|i| ((i as f64) * (n - 1) as f64 / 15.0) as u64)
        .collect();
    let store = FrameStore::from_parts(Some(root.to_path_buf()), &DatasetMeta::default(), &[]);
    // Tools of a store of their own: the loaders below close their store's session.
    let Some(tools) = FrameStore::from_parts(None, &DatasetMeta::default(), &[]).tools() else {
        println!("raw video: skipped, no ffprobe");
        return;
    };

    // The frame index alone (made once per video, then read from the cache).
    let t = Instant::now();
    let probe_dir = root.join("index-only");
    // The loader's own index file, so that its cold run below times the frames alone.
    let index_file = root.join(".frameaudit-cache/index/long.txt");
    let _ = decode_video(
        &tools,
        &video,
        &index_file,
        &[Wanted {
            index: 0,
            cached: probe_dir.join("0.jpg"),
        }],
    );
    println!(
        "raw video: frame index and frame 0: {:.0} ms",
        t.elapsed().as_secs_f64() * 1e3
    );

    // Cold through the loader: 16 frames not decoded yet.
    let key = |i: u64| thumb("long", i);
    let keys: Vec<FrameKey> = picks.iter().map(|&i| key(i)).collect();
    let cpu = children_cpu();
    let (cold, loader) = fetch_all(&store, &keys);
    let cpu = children_cpu().zip(cpu).map(|(b, a)| b - a);
    let ok = picks
        .iter()
        .filter(|&&i| loader.get(&key(i)).is_some_and(|r| r.is_ok()))
        .count();
    println!(
        "raw video: first item cold, through the loader: {:.0} ms for 16 frames ({ok} decoded), {:.1} frames/s (load {})",
        cold * 1e3,
        16.0 / cold,
        load_average()
    );
    if let Some(cpu) = cpu {
        // Wall time depends on what else the machine runs; the CPU time the decodes took
        // does not: over two idle cores, the item would take about half of it.
        println!(
            "raw video: first item cold: {cpu:.2} s of CPU in ffmpeg (about {:.1} s over two idle cores)",
            cpu / 2.0
        );
    }
    drop(loader);
    let (warm, _) = fetch_all(&store, &keys);
    println!(
        "raw video: warm (decode cache on disk, new loader): {:.1} ms for 16, {:.0} frames/s",
        warm * 1e3,
        16.0 / warm
    );

    // One ffmpeg run a frame, two at a time (what the loader's two threads did before):
    // the same frames into a fresh cache, index already made.
    let dir = root.join("one-by-one");
    let t = Instant::now();
    std::thread::scope(|s| {
        for half in [0usize, 1] {
            let (tools, video, dir, picks, index_file) =
                (&tools, &video, &dir, &picks, &index_file);
            s.spawn(move || {
                for &i in picks.iter().skip(half).step_by(2) {
                    let w = Wanted {
                        index: i,
                        cached: dir.join(format!("{i}.jpg")),
                    };
                    let _ = decode_video(tools, video, index_file, &[w]);
                }
            });
        }
    });
    let one = t.elapsed().as_secs_f64();
    println!(
        "raw video: cold, one ffmpeg run a frame, two at a time: {:.0} ms for 16, {:.1} frames/s",
        one * 1e3,
        16.0 / one
    );

    queue_order(root, n);
}

/// Seconds of CPU (user and system) that the finished child processes of this one took,
/// from `/proc/self/stat` (cutime, cstime; 100 ticks a second); `None` off Linux.
fn children_cpu() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // cutime and cstime are fields 16 and 17 of the line, 14 and 15 after the name.
    let ticks: f64 = fields.get(13)?.parse::<f64>().ok()? + fields.get(14)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// The machine's load average over 1, 5 and 15 minutes, as `/proc/loadavg` gives it.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(
        |_| "unknown".into(),
        |l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
    )
}

/// Items opened in queue order with the rows ahead prefetched (see the module doc), on a
/// dataset of its own (its `videos` a link to the video of `root`, its decode cache empty).
fn queue_order(root: &std::path::Path, n: u64) {
    const GOP: u64 = 250;
    const ITEMS: u64 = 4;
    let dwell = std::env::var("FRAMES_BENCH_DWELL")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(10.0);
    let tmp = tempfile::tempdir().expect("tmp");
    #[cfg(unix)]
    std::os::unix::fs::symlink(root.join("videos"), tmp.path().join("videos")).expect("link");
    #[cfg(not(unix))]
    {
        println!("queue order: skipped (needs a symbolic link)");
        return;
    }
    let store =
        FrameStore::from_parts(Some(tmp.path().to_path_buf()), &DatasetMeta::default(), &[]);
    // Item j: the last frame of GOPs j, j + 4, ... j + 56 (15 over the 60 GOPs of the
    // video), and the one before the last of GOP j: each GOP decoded whole, no two items
    // sharing one.
    if n < 60 * GOP {
        println!("queue order: skipped, the video has fewer than 60 GOPs of {GOP} frames");
        return;
    }
    let item = |j: u64| -> Vec<u64> {
        let mut frames: Vec<u64> = (0..15u64).map(|i| (j + 4 * i) * GOP + GOP - 1).collect();
        frames.push(j * GOP + GOP - 2);
        frames
    };
    // As the screens ask: the thumbnails fitted to their slot, the first frame large; the
    // prefetches at the thumbnails' decoded size.
    let shown = |j: u64| -> Vec<FrameKey> {
        let mut keys: Vec<FrameKey> = item(j)
            .into_iter()
            .map(|i| FrameKey {
                fit: Some((96, 128)),
                ..thumb("long", i)
            })
            .collect();
        keys.push(FrameKey {
            max_side: 1000,
            fit: Some((1000, 560)),
            ..keys[0].clone()
        });
        keys
    };
    let ahead = |j: u64| -> Vec<FrameKey> {
        (j + 1..(j + 3).min(ITEMS))
            .flat_map(item)
            .map(|i| thumb("long", i))
            .collect()
    };
    let (tx, rx) = channel();
    let loader = FrameLoader::new(store, 512, move || {
        let _ = tx.send(());
    });
    // The index first, as the first item's cold figure above has it.
    let first = thumb("long", 0);
    loader.request(first.clone());
    while loader.get(&first).is_none() {
        let _ = rx.recv_timeout(Duration::from_secs(60));
    }
    let mut opened = Vec::new();
    for j in 0..ITEMS {
        let keys = shown(j);
        let t = Instant::now();
        for k in &keys {
            loader.request(k.clone());
        }
        loader.prefetch(ahead(j));
        while keys.iter().any(|k| loader.get(k).is_none()) {
            let _ = rx.recv_timeout(Duration::from_secs(60));
        }
        let took = t.elapsed().as_secs_f64();
        let ok = keys
            .iter()
            .filter(|k| loader.get(k).is_some_and(|r| r.is_ok()))
            .count();
        println!(
            "queue order: item {} on screen {:.0} ms after opening it{} ({ok} of {} frames decoded; load {})",
            j + 1,
            took * 1e3,
            if j == 0 {
                " (cold)".to_string()
            } else {
                format!(" ({dwell:.0} s on the item before)")
            },
            keys.len(),
            load_average()
        );
        if j > 0 {
            opened.push(took);
        }
        if j + 1 < ITEMS {
            std::thread::sleep(Duration::from_secs_f64(dwell));
        }
    }
    let worst = opened.iter().copied().fold(0.0, f64::max);
    println!(
        "queue order: with prefetch after {dwell:.0} s on each item, items 2 to {ITEMS} on screen within {:.0} ms of opening",
        worst * 1e3
    );
}
