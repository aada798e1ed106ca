//! Where the frames of a video come from, and how they become pixels (docs/formats.md §1 and
//! §3.3). A dataset keeps frames in one of three ways, tried in this order:
//!
//! 1. extracted images `<root>/<frames_dir>/<video>/<name>`, the name given by
//!    `dataset.json` → `frame_name` (default `{index:06}.jpg`, `{index}.jpg`, or `.png`);
//! 2. the VLMEvalKit layout `frame-{i}-of-{N}.jpg`, named by the frame's position among the
//!    N frames a configuration sampled, under the frames directory or
//!    `<root>/images/<dataset>/<video>/`;
//! 3. a raw video `<root>/<videos_dir>/<video>.<ext>`, whose frame `index` is the one decord
//!    returns for that index (what the harnesses sample with), decoded by the `ffmpeg`
//!    program into a disk cache, `<root>/.frameaudit-cache/frames/<video>/<index>.jpg`, by way
//!    of a frame index made once per video with `ffprobe`,
//!    `<root>/.frameaudit-cache/index/<video>.txt`.
//!
//! Every name comes from a data file, so none may lead outside these directories: absolute
//! paths, `..` and NUL bytes are refused (the frame is then [`Located::Missing`] with the
//! reason). Symbolic links are held to the same rule ([`FrameStore::check_links`]): a link
//! inside the dataset directory may lead anywhere inside it, and out of it only when the
//! link is one of the dataset's folders `<frames_dir>`, `<videos_dir>` and `images`
//! themselves (or a folder above one), as `import --videos` and `--frames-root` link the
//! user's folders; what lies beyond such a link is the user's folder and is read as it is. [`FrameStore::locate`] only looks at the file system; [`load_image`] decodes,
//! and [`FrameLoader`] does both on a background thread with a cache of scaled images.

mod decode;
mod index;
mod loader;
mod outside;
mod probe;
mod trim;

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::core::dataset::{Dataset, DatasetMeta, ItemMeta};

pub use decode::{MAX_IMAGE_SIDE, VideoTools, Wanted, decode_video, fit_within, load_image};
pub use loader::{FrameKey, FrameLoader};
pub use outside::{
    AROUND_SECS, PLAYER_ENV, VIEWER_ENV, full_frame_dir, full_frame_name, open_in_viewer,
    player_command, write_full_frame,
};
pub use probe::{
    Rational, VideoProbe, ffprobe_beside, ffprobe_on_path, probe_video, probe_video_with,
    probe_videos,
};
pub use trim::{LIMIT as FRAME_CACHE_LIMIT, Trimmed, trim as trim_frame_cache};

// The name checks live in a leaf module so that `dataset` can use them without importing
// the frame readers, which import `dataset`.
pub use crate::core::paths::saved_frame_path;
use crate::core::paths::{check_relative, render_name};

/// The directory of the decode cache, under the dataset directory.
pub const CACHE_DIR: &str = ".frameaudit-cache";

/// The one-line hint shown when a frame needs ffmpeg and there is none.
pub const FFMPEG_HINT: &str = "install ffmpeg to see frames of raw videos";

/// The container extensions tried for a raw video, in order.
pub const VIDEO_EXTENSIONS: [&str; 5] = ["mp4", "mkv", "webm", "avi", "mov"];

/// Names tried for an extracted frame when `dataset.json` has no `frame_name`.
const DEFAULT_NAMES: [&str; 4] = [
    "{index:06}.jpg",
    "{index}.jpg",
    "{index:06}.png",
    "{index}.png",
];

/// Where one frame comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Located {
    /// An image file on disk.
    Image(PathBuf),
    /// Frame `index` of a raw video (the frame decord returns for that index), decoded by
    /// ffmpeg into `cached` (possibly already there).
    Video {
        /// The video file.
        video: PathBuf,
        /// Where the decoded frame is (or will be) cached.
        cached: PathBuf,
        /// The frame index, as decord numbers the frames.
        index: u64,
        /// The cache file of the video's frame index (which timestamp each index is).
        frame_index: PathBuf,
        /// The programs to decode with; `None` when there are none, which only happens
        /// when the frame is already in the cache.
        tools: Option<VideoTools>,
    },
    /// No source of the frame: why, in one line, naming what was tried.
    Missing(String),
}

/// Finds the frames of a dataset's videos. Cheap to clone; holds no open files.
#[derive(Debug, Clone)]
pub struct FrameStore {
    /// The dataset directory; `None` when a single file was loaded.
    root: Option<PathBuf>,
    /// The dataset directory with every link resolved, when it exists.
    real_root: Option<PathBuf>,
    /// The frames directory relative to the root, or why `dataset.json`'s is refused.
    frames_dir: Result<String, String>,
    /// The videos directory relative to the root, or why `dataset.json`'s is refused.
    videos_dir: Result<String, String>,
    frame_name: Option<String>,
    /// Frame rate of each video, from the items that name it.
    fps: HashMap<String, f64>,
    /// The file of each video under the videos directory, when the items name it
    /// (`video_file`, written by `import --videos`).
    files: HashMap<String, String>,
    /// The ffmpeg program, when there is one.
    ffmpeg: Option<PathBuf>,
    /// The ffprobe program that goes with it, when there is one.
    ffprobe: Option<PathBuf>,
    /// The time limit of one ffmpeg or ffprobe run.
    timeout: Duration,
    /// What the decodes of this store and its copies remember: the videos that timed out.
    session: Arc<decode::Session>,
}

impl FrameStore {
    /// The frame store of a loaded dataset; ffmpeg is looked for on `PATH`.
    pub fn new(dataset: &Dataset) -> FrameStore {
        FrameStore::from_parts(dataset.root.clone(), &dataset.meta, &dataset.items)
    }

    /// A frame store from its parts: the dataset directory, `dataset.json` and the items
    /// (only `video` and `fps` are used). ffmpeg is looked for on `PATH`.
    pub fn from_parts(
        root: Option<PathBuf>,
        meta: &DatasetMeta,
        items: &[Option<ItemMeta>],
    ) -> FrameStore {
        let dir = |value: &Option<String>, default: &str, field: &str| match value {
            None => Ok(default.to_string()),
            Some(d) => check_relative(d)
                .map(|()| d.clone())
                .map_err(|why| format!("dataset.json: {field} {:?} {why}", d)),
        };
        let mut fps = HashMap::new();
        let mut files = HashMap::new();
        for item in items.iter().flatten() {
            if let (Some(video), Some(file)) = (&item.video, &item.video_file) {
                files.entry(video.clone()).or_insert_with(|| file.clone());
            }
            if let (Some(video), Some(f)) = (&item.video, item.fps)
                && f.is_finite()
                && f > 0.0
            {
                // Items of one video share it; the first one's rate is as good as any.
                fps.entry(video.clone()).or_insert(f);
            }
        }
        let root_for_budget = root.clone();
        FrameStore {
            real_root: root.as_deref().and_then(|r| std::fs::canonicalize(r).ok()),
            root,
            frames_dir: dir(&meta.frames_dir, "frames", "frames_dir"),
            videos_dir: dir(&meta.videos_dir, "videos", "videos_dir"),
            frame_name: meta.frame_name.clone(),
            fps,
            files,
            ffmpeg: ffmpeg_on_path(),
            ffprobe: probe::ffprobe_on_path(),
            timeout: probe::run_timeout(),
            session: Arc::new(decode::Session::with_budget(trim::Budget::new(
                root_for_budget,
                trim::LIMIT.from_env(),
            ))),
        }
    }

    /// Kills each ffmpeg or ffprobe run after `timeout` instead of the default (60 s, or
    /// `FRAMEAUDIT_FFMPEG_TIMEOUT` seconds).
    pub fn with_decode_timeout(mut self, timeout: Duration) -> FrameStore {
        self.timeout = timeout;
        self
    }

    /// Holds the decode cache to `limit` bytes (`None`: no limit) instead of what
    /// `FRAMEAUDIT_FRAME_CACHE` says (default 4 GiB); before the store is copied.
    pub fn with_frame_cache_limit(mut self, limit: Option<u64>) -> FrameStore {
        self.session = Arc::new(decode::Session::with_budget(trim::Budget::new(
            self.root.clone(),
            limit,
        )));
        self
    }

    /// The decoding session of this store and its copies.
    pub(crate) fn session(&self) -> Arc<decode::Session> {
        Arc::clone(&self.session)
    }

    /// Kills every ffmpeg and ffprobe run under way for this store and its copies, and
    /// starts no other: what a program that is quitting does, so that no decode outlives it.
    pub fn close(&self) {
        self.session.close();
    }

    /// Why frames of `video` (the video file) are not decoded: a run on it timed out
    /// earlier in this session. `None` while it may be tried.
    pub fn timed_out(&self, video: &Path) -> Option<String> {
        self.session.timed_out(video)
    }

    /// Uses `program` as ffmpeg: a path, or a bare name looked for on `PATH`. A program
    /// that does not exist counts as no ffmpeg; `None` means no ffmpeg at all.
    /// The ffprobe that indexes the videos is the one beside it, else the one on `PATH`.
    pub fn with_ffmpeg(mut self, program: Option<PathBuf>) -> FrameStore {
        self.ffmpeg = program.and_then(|p| resolve_program(&p));
        self.ffprobe = self.ffmpeg.as_deref().and_then(probe::ffprobe_beside);
        self
    }

    /// Whether this store can decode frames of raw videos (it found ffmpeg and ffprobe).
    pub fn ffmpeg(&self) -> bool {
        self.tools().is_some()
    }

    /// The programs this store decodes raw videos with, when it found both.
    pub fn tools(&self) -> Option<VideoTools> {
        Some(VideoTools {
            ffmpeg: self.ffmpeg.clone()?,
            ffprobe: self.ffprobe.clone()?,
            timeout: self.timeout,
            session: Arc::clone(&self.session),
            background: false,
        })
    }

    /// The ffmpeg program this store decodes with.
    pub fn ffmpeg_path(&self) -> Option<&Path> {
        self.ffmpeg.as_deref()
    }

    /// The dataset directory.
    pub fn root(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    /// The folders of the dataset that may be links leading out of it: `<frames_dir>`,
    /// `<videos_dir>` and `images`, relative to the dataset directory.
    fn trees(&self) -> Vec<PathBuf> {
        let plain = |d: &str| -> PathBuf {
            Path::new(d)
                .components()
                .filter(|c| matches!(c, Component::Normal(_)))
                .collect()
        };
        let mut trees = vec![PathBuf::from("images")];
        for d in [&self.frames_dir, &self.videos_dir].into_iter().flatten() {
            trees.push(plain(d));
        }
        trees
    }

    /// Checks the symbolic links on the way to `rel` (a name already passed by
    /// [`check_relative`]) below the dataset directory. A link inside the dataset may lead
    /// anywhere inside it; out of it, only when it is one of [`Self::trees`] (or a folder
    /// above one) and `rel` is in that tree: the import's links to the user's videos and
    /// frames. Beyond such a link the path is the user's folder, followed as it is. Any
    /// other link out of the dataset is refused, with why, as a `..` would be: a dataset
    /// from elsewhere could otherwise show any file of this computer as a frame, or have
    /// frameaudit write its frame cache anywhere. Parts that do not exist end the check
    /// (there is nothing to follow).
    pub fn check_links(&self, rel: &str) -> Result<(), String> {
        let (Some(root), Some(real)) = (&self.root, &self.real_root) else {
            return Ok(());
        };
        if std::fs::canonicalize(root.join(rel)).is_ok_and(|p| p.starts_with(real)) {
            return Ok(());
        }
        let rel = Path::new(rel);
        let trees = self.trees();
        let mut prefix = PathBuf::new();
        for part in rel.components() {
            let Component::Normal(part) = part else {
                continue;
            };
            prefix.push(part);
            let Ok(target) = std::fs::canonicalize(root.join(&prefix)) else {
                return Ok(());
            };
            if target.starts_with(real) {
                continue;
            }
            if trees
                .iter()
                .any(|t| t.starts_with(&prefix) && rel.starts_with(t))
            {
                return Ok(());
            }
            return Err(format!(
                "{} is a symbolic link that leads outside the dataset, to {}: refused (only the dataset's own {} folders may link out of it)",
                prefix.display(),
                target.display(),
                trees
                    .iter()
                    .map(|t| t.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(())
    }

    /// The frame rate the items give `video`.
    pub fn fps(&self, video: &str) -> Option<f64> {
        self.fps.get(video).copied()
    }

    /// A frame the harness saved (`saved`: a path relative to the dataset, from a run's
    /// `frame_files`), when that file is there; `None` sends the caller to [`Self::locate`].
    pub fn locate_saved(&self, saved: &str) -> Option<Located> {
        let root = self.root.as_ref()?;
        check_relative(saved).ok()?;
        let path = root.join(saved);
        if !present(&path) {
            return None;
        }
        Some(match self.check_links(saved) {
            Ok(()) => Located::Image(path),
            Err(why) => Located::Missing(why),
        })
    }

    /// An image found at `rel` below the dataset, unless a link on the way is refused.
    fn image(&self, path: PathBuf, rel: &str) -> Located {
        match self.check_links(rel) {
            Ok(()) => Located::Image(path),
            Err(why) => Located::Missing(why),
        }
    }

    /// Where frame `index` of `video` comes from. `position` = (i, N) says the frame is the
    /// i-th (0-based) of the N frames a configuration sampled, which the VLMEvalKit layout
    /// needs (its files are named by position). Looks at the file system but reads no
    /// file.
    pub fn locate(&self, video: &str, index: u64, position: Option<(usize, usize)>) -> Located {
        let Some(root) = &self.root else {
            return Located::Missing(
                "a single file was loaded, so there is no dataset directory with frames".into(),
            );
        };
        if let Err(why) = check_relative(video) {
            return Located::Missing(format!("the video name {video:?} {why}"));
        }
        let frames_dir = match &self.frames_dir {
            Ok(d) => d,
            Err(why) => return Located::Missing(why.clone()),
        };

        // Extracted images, by frame index (or by position when `frame_name` says so).
        let mut tried: Vec<String> = Vec::new();
        let mut problem: Option<String> = None;
        let video_rel = format!("{frames_dir}/{video}");
        let templates: Vec<&str> = match &self.frame_name {
            Some(t) => vec![t.as_str()],
            None => DEFAULT_NAMES.to_vec(),
        };
        for template in templates {
            match render_name(template, index, position) {
                Ok(name) => {
                    if let Err(why) = check_relative(&name) {
                        return Located::Missing(format!(
                            "dataset.json: frame_name {template:?} gives the file name {name:?}, which {why}"
                        ));
                    }
                    let path = root.join(&video_rel).join(&name);
                    if present(&path) {
                        return self.image(path, &format!("{video_rel}/{name}"));
                    }
                    tried.push(format!("{video_rel}/{name}"));
                }
                Err(why) => {
                    problem = Some(format!("dataset.json: frame_name {template:?}: {why}"));
                }
            }
        }

        // The VLMEvalKit layout, named by position.
        if let Some((i, n)) = position {
            let name = format!("frame-{}-of-{n}.jpg", i + 1);
            let path = root.join(&video_rel).join(&name);
            if present(&path) {
                return self.image(path, &format!("{video_rel}/{name}"));
            }
            tried.push(format!("{video_rel}/{name}"));
            for dataset in sorted_subdirs(&root.join("images")) {
                let rel = format!("images/{dataset}/{video}/{name}");
                let path = root.join(&rel);
                if present(&path) {
                    return self.image(path, &rel);
                }
            }
            tried.push(format!("images/*/{video}/{name}"));
        }

        // A raw video.
        let videos_dir = match &self.videos_dir {
            Ok(d) => d,
            Err(why) => return Located::Missing(why.clone()),
        };
        let named = match self.files.get(video) {
            Some(file) => match check_relative(file) {
                Ok(()) => Some(format!("{videos_dir}/{file}")).filter(|r| present(&root.join(r))),
                Err(why) => return Located::Missing(format!("the video file {file:?} {why}")),
            },
            None => None,
        };
        let Some(video_rel) = named.or_else(|| find_video(root, videos_dir, video)) else {
            let mut reason = describe_tried(&tried);
            if let Some(p) = problem {
                reason = format!("{p}; {reason}");
            }
            return Located::Missing(format!(
                "{reason}; no video {videos_dir}/{video}.{} (nor .{})",
                VIDEO_EXTENSIONS[0],
                VIDEO_EXTENSIONS[1..].join(", .")
            ));
        };
        let cached_rel = format!("{CACHE_DIR}/frames/{video}/{index}.jpg");
        let index_rel = format!("{CACHE_DIR}/index/{video}.txt");
        for rel in [&video_rel, &cached_rel, &index_rel] {
            if let Err(why) = self.check_links(rel) {
                return Located::Missing(why);
            }
        }
        let video_path = root.join(&video_rel);
        let cached = root.join(cached_rel);
        let frame_index = root.join(index_rel);
        if let Some(kind) = crate::core::fsread::not_regular(&video_path) {
            return Located::Missing(format!(
                "the video {} is {kind}, not a regular file; frameaudit reads only regular files",
                video_path.display()
            ));
        }
        let tools = self.tools();
        if tools.is_none() && !decode::cache_is_fresh(&cached, &video_path) {
            return Located::Missing(FFMPEG_HINT.into());
        }
        Located::Video {
            video: video_path,
            cached,
            index,
            frame_index,
            tools,
        }
    }

    /// The raw video file of `video` (for a player: the frames themselves may be extracted
    /// images), or why there is none: the same file, and the same checks of its name and
    /// of the links on the way, as [`Self::locate`] decodes from.
    pub fn video_file(&self, video: &str) -> Result<PathBuf, String> {
        let Some(root) = &self.root else {
            return Err("a single file was loaded, so there is no dataset directory".into());
        };
        if let Err(why) = check_relative(video) {
            return Err(format!("the video name {video:?} {why}"));
        }
        let videos_dir = self.videos_dir.as_ref().map_err(Clone::clone)?;
        let named = match self.files.get(video) {
            Some(file) => match check_relative(file) {
                Ok(()) => Some(format!("{videos_dir}/{file}")).filter(|r| present(&root.join(r))),
                Err(why) => return Err(format!("the video file {file:?} {why}")),
            },
            None => None,
        };
        let Some(rel) = named.or_else(|| find_video(root, videos_dir, video)) else {
            return Err(format!(
                "no video file {videos_dir}/{video}.{} (nor .{})",
                VIDEO_EXTENSIONS[0],
                VIDEO_EXTENSIONS[1..].join(", .")
            ));
        };
        self.check_links(&rel)?;
        let path = root.join(&rel);
        if let Some(kind) = crate::core::fsread::not_regular(&path) {
            return Err(format!(
                "the video {} is {kind}, not a regular file",
                path.display()
            ));
        }
        Ok(path)
    }

    /// Decodes into the cache, in one batch, the frames `indices` of `video` that are raw
    /// video frames not cached yet (see [`decode_video`]), so that loading them one by one
    /// afterwards only reads files. Returns the frames that could not be decoded, with why.
    pub fn decode_frames(&self, video: &str, indices: &[u64]) -> Vec<(u64, String)> {
        let mut by_video: Vec<(PathBuf, PathBuf, VideoTools, Vec<Wanted>)> = Vec::new();
        for &index in indices {
            let Located::Video {
                video: path,
                cached,
                frame_index,
                tools: Some(tools),
                ..
            } = self.locate(video, index, None)
            else {
                continue;
            };
            if decode::cache_is_fresh(&cached, &path) {
                continue;
            }
            let wanted = Wanted { index, cached };
            match by_video.iter_mut().find(|(p, ..)| *p == path) {
                Some((.., list)) => list.push(wanted),
                None => by_video.push((path, frame_index, tools, vec![wanted])),
            }
        }
        let mut failed = Vec::new();
        for (path, frame_index, tools, wanted) in by_video {
            let results = decode_video(&tools, &path, &frame_index, &wanted);
            for (w, r) in wanted.iter().zip(results) {
                if let Err(why) = r {
                    failed.push((w.index, why));
                }
            }
        }
        failed
    }
}

/// `no frame file a/1.jpg (nor 01.jpg, b/1.jpg)`: the first path in full, the others by
/// name when they share its directory.
fn describe_tried(tried: &[String]) -> String {
    let Some(first) = tried.first() else {
        return "no frame file".into();
    };
    let dir = first.rsplit_once('/').map_or("", |(d, _)| d);
    let rest: Vec<&str> = tried[1..]
        .iter()
        .map(|t| match t.rsplit_once('/') {
            Some((d, name)) if d == dir => name,
            _ => t.as_str(),
        })
        .collect();
    if rest.is_empty() {
        format!("no frame file {first}")
    } else {
        format!("no frame file {first} (nor {})", rest.join(", "))
    }
}

/// The subdirectories of `dir` by name, sorted so the first match is the same every run.
/// Names that are not UTF-8 or not plain names are skipped.
fn sorted_subdirs(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir() || t.is_symlink()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| check_relative(n).is_ok())
        .collect();
    names.sort();
    names
}

/// The video file of `video` relative to the dataset, trying each extension (also in
/// capitals).
fn find_video(root: &Path, videos_dir: &str, video: &str) -> Option<String> {
    VIDEO_EXTENSIONS
        .iter()
        .flat_map(|e| [e.to_string(), e.to_ascii_uppercase()])
        .map(|ext| format!("{videos_dir}/{video}.{ext}"))
        .find(|rel| present(&root.join(rel)))
}

/// Whether something is at `path` that stands for a frame or a video: a regular file, or
/// anything else but a directory (a named pipe, a device), which is then refused by what
/// it is when it is read rather than passed over as if absent.
fn present(path: &Path) -> bool {
    path.is_file()
        || crate::core::fsread::not_regular(path)
            .is_some_and(|k| k != crate::core::fsread::Kind::Directory)
}

/// The `ffmpeg` program on `PATH`, if any.
pub fn ffmpeg_on_path() -> Option<PathBuf> {
    resolve_program(Path::new("ffmpeg"))
}

/// A program path as given when it has a directory part, else looked for on `PATH`;
/// `None` when no such file exists.
fn resolve_program(program: &Path) -> Option<PathBuf> {
    let exe = |p: PathBuf| -> Option<PathBuf> {
        if p.is_file() {
            return Some(p);
        }
        // On Windows the program is `ffmpeg.exe`.
        let suffix = std::env::consts::EXE_SUFFIX;
        if !suffix.is_empty() {
            let mut with = p.into_os_string();
            with.push(suffix);
            let with = PathBuf::from(with);
            if with.is_file() {
                return Some(with);
            }
        }
        None
    };
    if program.components().count() > 1 || program.is_absolute() {
        return exe(program.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|d| !d.as_os_str().is_empty())
        .find_map(|d| exe(d.join(program)))
}

/// `mm:ss` of a frame index at `fps` frames per second.
pub fn timestamp(index: u64, fps: Option<f64>) -> String {
    match fps {
        Some(f) if f > 0.0 => {
            let secs = (index as f64 / f).floor() as u64;
            format!("{:02}:{:02}", secs / 60, secs % 60)
        }
        _ => format!("#{index}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tried_paths_are_listed_compactly() {
        let tried = vec![
            "frames/c/000021.jpg".to_string(),
            "frames/c/21.jpg".to_string(),
            "images/*/c/frame-1-of-8.jpg".to_string(),
        ];
        assert_eq!(
            describe_tried(&tried),
            "no frame file frames/c/000021.jpg (nor 21.jpg, images/*/c/frame-1-of-8.jpg)"
        );
    }

    #[test]
    fn dataset_json_directories_may_not_leave_the_dataset() {
        let dir = tempfile::tempdir().expect("tempdir");
        for bad in ["../elsewhere", "/etc", "a/../../b"] {
            let meta = DatasetMeta {
                frames_dir: Some(bad.into()),
                ..DatasetMeta::default()
            };
            let store = FrameStore::from_parts(Some(dir.path().into()), &meta, &[]);
            match store.locate("clip", 1, None) {
                Located::Missing(why) => assert!(why.contains("frames_dir"), "{why}"),
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn missing_program_is_no_ffmpeg() {
        let store = FrameStore::from_parts(None, &DatasetMeta::default(), &[])
            .with_ffmpeg(Some("/nonexistent/ffmpeg".into()));
        assert!(!store.ffmpeg());
        let store = store.with_ffmpeg(None);
        assert!(!store.ffmpeg());
    }
}
