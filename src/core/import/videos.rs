//! `--videos DIR`: the benchmark's videos, found by name anywhere under DIR (lmms-eval's
//! cache layout `videomme/data/{videoID}.mp4`, VLMEvalKit's folders, any tree), probed for
//! what frame rules need (frame count and rate as the harness's reader counts them,
//! duration), and linked into the dataset so the frame view decodes them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Import, ImportError, ImportedItem};
use crate::core::frames::VIDEO_EXTENSIONS;

/// What probing one video gives.
#[derive(Debug, Clone, PartialEq)]
pub struct Probed {
    /// Frames of the video, as decord counts them.
    pub num_frames: u64,
    /// The average frame rate, as decord reports it.
    pub fps: f64,
    /// Seconds.
    pub duration: f64,
    /// Every decoder's count and rate, when some decoder disagrees with decord's (written
    /// to `items.jsonl` → `decoders` only then).
    pub decoders: Option<crate::core::rules::decoder::DecoderCounts>,
    /// The packets the container marks to discard (an edit list), when any.
    pub discarded_packets: u64,
}

/// The video files under a folder, by file name and by stem (lower case), each with its
/// path relative to the folder.
#[derive(Debug, Default)]
pub struct VideoIndex {
    root: PathBuf,
    by_name: BTreeMap<String, Vec<String>>,
    by_stem: BTreeMap<String, Vec<String>>,
}

/// The most files one `--videos` tree may hold: a bound so that pointing it at `/` fails
/// with a message instead of walking the disk for an hour.
const MAX_FILES: usize = 5_000_000;

impl VideoIndex {
    /// Indexes the video files under `root` (symbolic links to files count; links to folders
    /// are followed once each, so a cache of links such as Hugging Face's works and a loop
    /// does not).
    pub fn build(root: &Path) -> Result<VideoIndex, ImportError> {
        let canon = std::fs::canonicalize(root).map_err(|e| {
            ImportError::Other(format!("--videos {}: cannot read it: {e}", root.display()))
        })?;
        if !canon.is_dir() {
            return Err(ImportError::Other(format!(
                "--videos {}: not a folder",
                root.display()
            )));
        }
        let mut index = VideoIndex {
            root: canon.clone(),
            ..Default::default()
        };
        let mut seen = std::collections::BTreeSet::new();
        let mut stack = vec![(canon, String::new())];
        let mut files = 0usize;
        while let Some((dir, rel)) = stack.pop() {
            let Ok(real) = std::fs::canonicalize(&dir) else {
                continue;
            };
            if !seen.insert(real) {
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                let Ok(name) = e.file_name().into_string() else {
                    continue;
                };
                let rel_path = if rel.is_empty() {
                    name.clone()
                } else {
                    format!("{rel}/{name}")
                };
                let path = e.path();
                // `metadata` follows links: a link to a folder is walked, to a file indexed.
                let Ok(meta) = std::fs::metadata(&path) else {
                    continue;
                };
                if meta.is_dir() {
                    stack.push((path, rel_path));
                } else if meta.is_file() && is_video_name(&name) {
                    files += 1;
                    if files > MAX_FILES {
                        return Err(ImportError::Other(format!(
                            "--videos {}: more than {MAX_FILES} video files; give the benchmark's own folder",
                            root.display()
                        )));
                    }
                    let stem = name.rsplit_once('.').map_or(name.as_str(), |(s, _)| s);
                    index
                        .by_stem
                        .entry(stem.to_lowercase())
                        .or_default()
                        .push(rel_path.clone());
                    index
                        .by_name
                        .entry(name.to_lowercase())
                        .or_default()
                        .push(rel_path);
                }
            }
        }
        for v in index.by_name.values_mut().chain(index.by_stem.values_mut()) {
            v.sort();
        }
        Ok(index)
    }

    /// The folder indexed.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The video file the harness opened for an item of `benchmark` naming `video` (a file
    /// name such as `ZS9XR.mp4`, or a name without extension such as Video-MME's YouTube
    /// id), with `hint` the path the dataset gives it (`star/Charades_segment/ZS9XR.mp4`).
    /// Several files of that name (a Hugging Face folder holds lmms-eval's caches and
    /// VLMEvalKit's dataset snapshots side by side): the one the harness's layout points at
    /// ([`Layout`]), else the one whose path ends with the hint, else whose path names the
    /// benchmark; `Err` lists them when nothing tells.
    pub fn find(
        &self,
        benchmark: &str,
        video: &str,
        hint: Option<&str>,
        layout: Layout,
    ) -> Result<Option<String>, Vec<String>> {
        let name = video
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or(video)
            .to_lowercase();
        let found = if is_video_name(&name) {
            self.by_name.get(&name)
        } else {
            self.by_stem.get(&name)
        };
        let Some(found) = found else {
            return Ok(None);
        };
        if found.len() == 1 {
            return Ok(found.first().cloned());
        }
        let bench = normalized(benchmark);
        let word = normalized(benchmark.split(['_', '-']).next().unwrap_or_default());
        let hint = hint.map(|h| h.trim_start_matches("./").to_lowercase());
        let score = |p: &String| {
            let low = p.to_lowercase();
            let first = normalized(low.split('/').next().unwrap_or_default());
            let mut s = 0;
            match layout {
                // lmms-eval opens `$HF_HOME/{cache_dir}/...`, the cache folder named after
                // the task (`videomme/data`, `mvbench_video`, `mlvu`).
                Layout::LmmsEval if word.len() >= 3 && first.starts_with(&word) => s += 8,
                // VLMEvalKit opens the files of the dataset's hub snapshot.
                Layout::VlmEvalKit if low.contains("/snapshots/") => s += 8,
                _ => {}
            }
            if hint.as_deref().is_some_and(|h| low.ends_with(h)) {
                s += 4;
            }
            if bench.len() >= 3 && normalized(&low).contains(&bench) {
                s += 2;
            } else if word.len() >= 3 && normalized(&low).contains(&word) {
                s += 1;
            }
            s
        };
        let best = found.iter().map(score).max().unwrap_or(0);
        let top: Vec<&String> = found.iter().filter(|p| score(p) == best).collect();
        match top.as_slice() {
            [one] if best > 0 => Ok(Some((*one).clone())),
            _ => Err(found.clone()),
        }
    }
}

/// Where a harness looks for a benchmark's videos, to choose among files of one name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// lmms-eval: `$HF_HOME/{task cache folder}/...`.
    LmmsEval,
    /// VLMEvalKit: the dataset's Hugging Face snapshot.
    VlmEvalKit,
    /// Nothing known.
    Any,
}

/// Letters and digits only, lower case: `Video-MME` and `videomme` alike.
fn normalized(s: &str) -> String {
    s.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Whether a file name ends with a video container's extension.
fn is_video_name(name: &str) -> bool {
    name.rsplit_once('.')
        .is_some_and(|(_, ext)| VIDEO_EXTENSIONS.iter().any(|e| ext.eq_ignore_ascii_case(e)))
}

/// What `--videos` did, for the import summary.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct VideoSummary {
    /// Items that name a video.
    pub items: usize,
    /// Distinct video files found and probed.
    pub videos: usize,
    /// Items whose video was not found.
    pub missing: usize,
}

/// Finds each item's video under `index`, probes it (once per file) with `probe`, and
/// completes the items: `video_file`, `num_frames`, `fps`, `duration`. Links the folder into
/// the dataset as `videos/`. Problems are warnings: an item without its video is audited
/// without frames.
pub fn attach(
    imp: &mut Import,
    index: &VideoIndex,
    layout: Layout,
    probe: &(dyn Fn(&Path) -> Result<Probed, String> + Sync),
) -> VideoSummary {
    let mut summary = VideoSummary::default();
    let mut wanted: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let mut missing: Vec<String> = Vec::new();
    let mut ambiguous: Vec<(String, Vec<String>)> = Vec::new();
    for ((benchmark, item_id), item) in imp.items_mut() {
        let Some(video) = item.video.as_deref() else {
            continue;
        };
        summary.items += 1;
        match index.find(benchmark, video, item.video_file.as_deref(), layout) {
            Ok(Some(file)) => wanted
                .entry(file)
                .or_default()
                .push((benchmark.clone(), item_id.clone())),
            Ok(None) => {
                summary.missing += 1;
                missing.push(video.to_string());
            }
            Err(all) => {
                summary.missing += 1;
                ambiguous.push((video.to_string(), all));
            }
        }
    }
    let files: Vec<&String> = wanted.keys().collect();
    let probed = probe_all(index.root(), &files, probe);
    let mut facts: BTreeMap<(String, String), (String, Probed)> = BTreeMap::new();
    let mut failed: Vec<String> = Vec::new();
    for (file, result) in files.iter().zip(probed) {
        match result {
            Ok(p) => {
                summary.videos += 1;
                for key in &wanted[*file] {
                    facts.insert(key.clone(), ((*file).clone(), p.clone()));
                }
            }
            Err(why) => failed.push(format!("{file}: {why}")),
        }
    }
    for (key, item) in imp.items_mut() {
        if let Some((file, p)) = facts.remove(key) {
            complete(item, file, &p);
        }
    }
    let root = crate::core::text::sanitize(&index.root().display().to_string()).into_owned();
    missing.sort();
    missing.dedup();
    if let Some(first) = missing.first() {
        imp.warnings.push(format!(
            "--videos {root}: {} of {} items name a video that is not there ({} videos, first {:?}); they are audited without frames",
            summary.missing - ambiguous.len(),
            summary.items,
            missing.len(),
            crate::core::text::sanitize(first)
        ));
    }
    if let Some((video, all)) = ambiguous.first() {
        imp.warnings.push(format!(
            "--videos {root}: {} videos have several files of their name and nothing tells which one the harness opened (first {:?}: {}); give the benchmark's own folder",
            ambiguous.len(),
            crate::core::text::sanitize(video),
            crate::core::text::sanitize(&all.join(", "))
        ));
    }
    if let Some(first) = failed.first() {
        imp.warnings.push(format!(
            "--videos {root}: {} videos could not be probed (first {}); their items are audited without frames",
            failed.len(),
            crate::core::text::sanitize(first)
        ));
    }
    if summary.videos > 0 {
        imp.videos_dir = Some("videos".into());
        imp.links
            .insert("videos".into(), index.root().to_path_buf());
    }
    summary
}

/// Probes the files on every core, in the files' order.
fn probe_all(
    root: &Path,
    files: &[&String],
    probe: &(dyn Fn(&Path) -> Result<Probed, String> + Sync),
) -> Vec<Result<Probed, String>> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8)
        .min(files.len().max(1));
    let next = AtomicUsize::new(0);
    let mut out: Vec<Option<Result<Probed, String>>> = vec![None; files.len()];
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(f) = files.get(i) else { break };
                        done.push((i, probe(&root.join(f.as_str()))));
                    }
                    done
                })
            })
            .collect();
        for w in workers {
            if let Ok(done) = w.join() {
                for (i, r) in done {
                    out[i] = Some(r);
                }
            }
        }
    });
    out.into_iter()
        .map(|r| r.unwrap_or_else(|| Err("the probe did not finish".into())))
        .collect()
}

/// Completes an item with its video's facts: the probe wins over what the logs said (a
/// Video-MME duration group such as "short" is not seconds anyway).
fn complete(item: &mut ImportedItem, file: String, p: &Probed) {
    item.video_file = Some(file);
    item.num_frames = Some(p.num_frames);
    item.fps = Some(p.fps);
    item.duration = Some(p.duration);
    item.decoders = p.decoders.clone();
    item.discarded_packets = (p.discarded_packets > 0).then_some(p.discarded_packets);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        for f in files {
            let p = dir.path().join(f);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(&p, b"x").expect("write");
        }
        dir
    }

    #[test]
    fn finds_videos_by_name_stem_hint_and_benchmark() {
        let dir = tree(&[
            "videomme/data/fFjv93ACGo8.mp4",
            "mvbench_video/star/Charades_segment/ZS9XR.mp4",
            "mvbench_video/other/ZS9XR.mp4",
            "mlvu/count_1.mp4",
            "elsewhere/count_1.mp4",
            "notes/readme.txt",
        ]);
        let idx = VideoIndex::build(dir.path()).expect("index");
        let any = Layout::Any;
        assert_eq!(
            idx.find("videomme", "fFjv93ACGo8", None, any),
            Ok(Some("videomme/data/fFjv93ACGo8.mp4".into()))
        );
        assert_eq!(
            idx.find(
                "mvbench_action_sequence",
                "ZS9XR.mp4",
                Some("star/Charades_segment/ZS9XR.mp4"),
                any
            ),
            Ok(Some("mvbench_video/star/Charades_segment/ZS9XR.mp4".into()))
        );
        assert_eq!(
            idx.find("mlvu_dev", "count_1.mp4", None, any),
            Ok(Some("mlvu/count_1.mp4".into()))
        );
        assert!(idx.find("x", "ZS9XR.mp4", None, any).is_err());
        assert_eq!(idx.find("videomme", "absent", None, any), Ok(None));
        assert_eq!(idx.find("x", "readme", None, any), Ok(None));
        // A Hugging Face folder with lmms-eval's cache beside VLMEvalKit's snapshot.
        let hf = tree(&[
            "videomme/data/abc.mp4",
            "hub/datasets--lmms-lab--Video-MME/snapshots/0a1b/video/abc.mp4",
        ]);
        let idx = VideoIndex::build(hf.path()).expect("index");
        assert_eq!(
            idx.find("videomme", "abc", None, Layout::LmmsEval),
            Ok(Some("videomme/data/abc.mp4".into()))
        );
        assert_eq!(
            idx.find("videomme", "abc", None, Layout::VlmEvalKit),
            Ok(Some(
                "hub/datasets--lmms-lab--Video-MME/snapshots/0a1b/video/abc.mp4".into()
            ))
        );
        assert!(idx.find("videomme", "abc", None, Layout::Any).is_err());
    }

    #[test]
    fn attach_probes_each_file_once_and_completes_items() {
        let dir = tree(&["data/a.mp4", "data/b.mkv"]);
        let idx = VideoIndex::build(dir.path()).expect("index");
        let mut imp = Import::default();
        for (id, video) in [("1", "a"), ("2", "a"), ("3", "b"), ("4", "gone")] {
            imp.add_item(
                "bench",
                id,
                ImportedItem {
                    video: Some(video.into()),
                    duration: Some(1.0),
                    ..Default::default()
                },
            );
        }
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let probe = |p: &Path| {
            calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if p.ends_with("b.mkv") {
                Err("damaged".to_string())
            } else {
                Ok(Probed {
                    num_frames: 90,
                    fps: 30.0,
                    decoders: None,
                    discarded_packets: 0,
                    duration: 3.0,
                })
            }
        };
        let s = attach(&mut imp, &idx, Layout::Any, &probe);
        assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 2);
        assert_eq!(
            s,
            VideoSummary {
                items: 4,
                videos: 1,
                missing: 1
            }
        );
        let items: Vec<_> = imp
            .items_mut()
            .map(|(k, v)| (k.1.clone(), v.clone()))
            .collect();
        assert_eq!(items[0].1.video_file.as_deref(), Some("data/a.mp4"));
        assert_eq!(
            (items[1].1.num_frames, items[1].1.fps),
            (Some(90), Some(30.0))
        );
        assert_eq!(items[2].1.num_frames, None);
        assert!(
            imp.warnings
                .iter()
                .any(|w| w.contains("could not be probed"))
        );
        assert!(imp.warnings.iter().any(|w| w.contains("1 of 4 items")));
        assert_eq!(imp.videos_dir.as_deref(), Some("videos"));
    }
}
