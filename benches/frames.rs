//! Frame decoding speed: `cargo bench --bench frames`.
//!
//! Writes 16 JPEG frames of 1280x720 (a detailed synthetic picture, so the JPEGs are of
//! realistic size), then prints:
//!   - cold: the 16 decoded and scaled to thumbnail size through the background loader, from
//!     the first request to the last result (what an item screen waits for);
//!   - cached: the 16 fetched again (what moving back to an item costs);
//!   - the same 16 decoded one by one on the calling thread, for comparison.
//!
//! Figures only; nothing is asserted.

use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

use frameaudit::core::dataset::{DatasetMeta, ItemMeta};
use frameaudit::core::frames::{FrameKey, FrameLoader, FrameStore, load_image};
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
    };
    let (tx, rx) = channel();
    let loader = FrameLoader::new(store.clone(), 256, move || {
        let _ = tx.send(());
    });
    let t = Instant::now();
    for i in 0..16 {
        loader.request(key(i));
    }
    while (0..16).any(|i| loader.get(&key(i)).is_none()) {
        let _ = rx.recv_timeout(Duration::from_secs(10));
    }
    let cold = t.elapsed().as_secs_f64() * 1e3;
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
}
