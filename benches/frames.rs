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
//!   - cold one ffmpeg run a frame (the decoder of before), for comparison.
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

fn main() {
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

    let key = |i: u64| FrameKey {
        video: "v".into(),
        index: i,
        position: None,
        max_side: THUMB,
        fit: None,
        saved: None,
    };
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
    let Some(tools) = store.tools() else {
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
    let key = |i: u64| FrameKey {
        video: "long".into(),
        index: i,
        position: None,
        max_side: THUMB,
        fit: None,
        saved: None,
    };
    let keys: Vec<FrameKey> = picks.iter().map(|&i| key(i)).collect();
    let (cold, loader) = fetch_all(&store, &keys);
    let ok = picks
        .iter()
        .filter(|&&i| loader.get(&key(i)).is_some_and(|r| r.is_ok()))
        .count();
    println!(
        "raw video: cold, through the loader: {:.0} ms for 16 frames ({ok} decoded), {:.1} frames/s",
        cold * 1e3,
        16.0 / cold
    );
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
}
