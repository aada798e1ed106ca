//! Pixels of a located frame: decoding image files with bounded memory, decoding frames of
//! raw videos into the decode cache (all the frames of one video that are wanted together in
//! one or two ffmpeg runs, each frame exactly the one decord returns), and scaling down for
//! the terminal.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsString;
use std::fs;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use image::imageops::FilterType;
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, Limits, RgbImage};

use super::index::{self, FrameIndex};
use super::probe::{self, RunError, file_url};
use super::{FFMPEG_HINT, Located};
use crate::core::fsread;

/// The largest width or height of an image frameaudit decodes: frames are video frames,
/// and anything larger is more likely a broken or hostile file than a frame.
pub const MAX_IMAGE_SIDE: u32 = 10_000;

/// The most memory one decode may allocate (a 10000x10000 RGB image takes 300 MB).
const MAX_ALLOC: u64 = 512 << 20;

/// At most this many ffmpeg runs decode one batch at the same time: one per core of the
/// two a typical laptop or CI machine gives a viewer; each run's decoder is threaded too.
const MAX_JOBS: usize = 2;

/// The programs that decode frames of raw videos (ffmpeg decodes, ffprobe indexes), how
/// long each run may take, and the videos whose runs timed out in this session.
#[derive(Debug, Clone)]
pub struct VideoTools {
    /// The ffmpeg program.
    pub ffmpeg: PathBuf,
    /// The ffprobe program (the one beside ffmpeg, else the one on `PATH`).
    pub ffprobe: PathBuf,
    /// The time limit of one run.
    pub timeout: Duration,
    /// Shared by every copy made from one [`super::FrameStore`].
    pub(crate) session: Arc<Session>,
    /// Runs at a low priority: the decode is a prefetch, which nobody waits for yet.
    pub(crate) background: bool,
}

/// Equal when they run the same programs with the same limit.
impl PartialEq for VideoTools {
    fn eq(&self, other: &Self) -> bool {
        (&self.ffmpeg, &self.ffprobe, self.timeout)
            == (&other.ffmpeg, &other.ffprobe, other.timeout)
    }
}

impl Eq for VideoTools {}

impl VideoTools {
    /// These programs, with the time limit of [`super::probe::run_timeout`] and a session
    /// of their own.
    pub fn new(ffmpeg: PathBuf, ffprobe: PathBuf) -> VideoTools {
        VideoTools {
            ffmpeg,
            ffprobe,
            timeout: super::probe::run_timeout(),
            session: Arc::default(),
            background: false,
        }
    }

    /// These tools, running their programs at a low priority (a prefetch's decode).
    pub(crate) fn in_background(mut self) -> VideoTools {
        self.background = true;
        self
    }

    /// Why `video` is not decoded again: a run on it timed out earlier in this session.
    pub fn timed_out(&self, video: &Path) -> Option<String> {
        self.session.timed_out(video)
    }

    /// Runs `program` (one of these tools) on `video` within the time limit; a run that
    /// times out marks the video as not to be tried again.
    pub(crate) fn run(
        &self,
        program: &Path,
        args: &[OsString],
        video: &Path,
    ) -> Result<Vec<u8>, RunError> {
        if self.session.closed.load(Ordering::SeqCst) {
            return Err(RunError::Failed("the frame loader has stopped".into()));
        }
        let r = probe::run(
            program,
            args,
            self.timeout,
            Some(&self.session.running),
            self.background,
        );
        if let Err(RunError::TimedOut(limit)) = &r {
            self.session.remember(video, *limit);
        }
        r
    }
}

/// What one session (one frame store and its copies) remembers across decodes: the videos
/// whose ffprobe or ffmpeg run timed out, which are not tried again (a hung video would
/// otherwise hold the decoder for the whole time limit on every request); and the runs
/// under way, so that a closed session (the TUI's frame loader dropped) leaves none
/// behind.
#[derive(Debug, Default)]
pub(crate) struct Session {
    timed_out: Mutex<HashMap<PathBuf, Duration>>,
    /// The process ids (each also its process group) of the runs under way.
    running: Mutex<HashSet<u32>>,
    /// Set by [`Session::close`]: nothing is run any more.
    closed: AtomicBool,
    /// The decode cache's size limit, and how full it is.
    budget: super::trim::Budget,
}

impl Session {
    /// A session whose decodes hold the cache to `budget`.
    pub(crate) fn with_budget(budget: super::trim::Budget) -> Session {
        Session {
            budget,
            ..Session::default()
        }
    }

    /// Kills every run under way and starts no other.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        probe::kill_all(&self.running);
    }

    pub(crate) fn timed_out(&self, video: &Path) -> Option<String> {
        let limit = *self
            .timed_out
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(video)?;
        // The file name only: the panel names the video, and a thumbnail is narrow.
        let name = video.file_name().map_or_else(
            || video.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        Some(format!(
            "decoding {name} timed out after {} earlier in this session; not tried again",
            probe::show_secs(limit)
        ))
    }

    fn remember(&self, video: &Path, limit: Duration) {
        self.timed_out
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(video.to_path_buf(), limit);
    }
}

/// Why a frame has no pixels. Shown to the user as one line.
#[derive(Debug, thiserror::Error)]
enum DecodeError {
    #[error("{0}")]
    Missing(String),
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("the frame file {0} is empty (0 bytes)")]
    Empty(String),
    #[error("{path} is not a JPEG or PNG image ({found})")]
    Format { path: String, found: String },
    #[error(
        "{path} is {width}x{height} pixels, larger than the {MAX_IMAGE_SIDE}x{MAX_IMAGE_SIDE} frameaudit decodes"
    )]
    TooLarge {
        path: String,
        width: u32,
        height: u32,
    },
    #[error("{path} has no pixels ({width}x{height})")]
    NoPixels {
        path: String,
        width: u32,
        height: u32,
    },
    #[error("cannot decode {path}: {source}")]
    Image {
        path: String,
        source: image::ImageError,
    },
    #[error("{0}")]
    Video(String),
}

/// Decodes a located frame into RGB pixels, scaled so its longer side is at most
/// `max_side` (0 keeps the full size). A frame of a raw video is read from the decode
/// cache, or decoded into it by ffmpeg first when `ffmpeg` allows and the store found the
/// program. Images larger than [`MAX_IMAGE_SIDE`] on a side, empty and corrupt files are
/// refused with a message; nothing panics on bad input.
pub fn load_image(located: &Located, max_side: u32, ffmpeg: bool) -> Result<RgbImage, String> {
    load(located, ffmpeg)
        .map(|img| scale(img, max_side))
        .map_err(|e| e.to_string())
}

fn load(located: &Located, allow_ffmpeg: bool) -> Result<RgbImage, DecodeError> {
    match located {
        Located::Missing(why) => Err(DecodeError::Missing(why.clone())),
        Located::Image(path) => read_image(path),
        Located::Video {
            video,
            cached,
            index,
            frame_index,
            tools,
        } => {
            let tools = tools.as_ref().filter(|_| allow_ffmpeg);
            if cache_is_fresh(cached, video) {
                match (read_image(cached), tools) {
                    (Ok(img), _) => {
                        // Shown now: the last a trim of the cache removes.
                        super::trim::touch(cached);
                        return Ok(img);
                    }
                    // A damaged cache entry (a full disk, an edited file) is decoded anew
                    // when possible rather than shown as broken forever.
                    (Err(_), Some(_)) => {
                        let _ = fs::remove_file(cached);
                    }
                    (Err(e), None) => return Err(e),
                }
            }
            let Some(tools) = tools else {
                return Err(DecodeError::Missing(FFMPEG_HINT.into()));
            };
            let wanted = [Wanted {
                index: *index,
                cached: cached.clone(),
            }];
            let result = decode_video(tools, video, frame_index, &wanted);
            if let Some(Err(why)) = result.into_iter().next() {
                return Err(DecodeError::Video(why));
            }
            read_image(cached)
        }
    }
}

/// Whether `cached` holds a decoded frame at least as new as `video` (a replaced video
/// makes its cached frames stale).
pub(crate) fn cache_is_fresh(cached: &Path, video: &Path) -> bool {
    let Ok(meta) = fs::metadata(cached) else {
        return false;
    };
    if !meta.is_file() || meta.len() == 0 {
        return false;
    }
    match (
        meta.modified(),
        fs::metadata(video).and_then(|m| m.modified()),
    ) {
        (Ok(frame), Ok(video)) => frame >= video,
        // Without times (or without the video) the cached frame is all there is.
        _ => true,
    }
}

/// Decodes a JPEG or PNG file, refusing oversized, empty and corrupt ones. The header is
/// read and the size checked before any pixel buffer exists, and the decoder's
/// allocations are capped, so a decompression bomb costs nothing.
fn read_image(path: &Path) -> Result<RgbImage, DecodeError> {
    let shown = path.display().to_string();
    let io = |source| DecodeError::Io {
        path: shown.clone(),
        source,
    };
    // Only a regular file, read up to a bound: a named pipe or a link to a device at a
    // frame's name is refused, not waited on or read without end.
    let file = fsread::open(path, fsread::FRAME_IMAGE).map_err(io)?;
    if file.is_empty() {
        return Err(DecodeError::Empty(shown));
    }
    // The format comes from the content alone: a file named `.jpg` that holds a PNG is
    // fine, one that holds text is "not an image", not a JPEG parse error.
    let mut reader = ImageReader::new(BufReader::new(file.into_reader()))
        .with_guessed_format()
        .map_err(io)?;
    match reader.format() {
        Some(ImageFormat::Jpeg | ImageFormat::Png) => {}
        Some(other) => {
            return Err(DecodeError::Format {
                path: shown,
                found: format!("it is {other:?}"),
            });
        }
        None => {
            return Err(DecodeError::Format {
                path: shown,
                found: "its first bytes are neither".into(),
            });
        }
    }
    let mut limits = Limits::default();
    limits.max_alloc = Some(MAX_ALLOC);
    reader.limits(limits);
    let image_err = |source| DecodeError::Image {
        path: shown.clone(),
        source,
    };
    let decoder = reader.into_decoder().map_err(image_err)?;
    let (width, height) = decoder.dimensions();
    if width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE {
        return Err(DecodeError::TooLarge {
            path: shown,
            width,
            height,
        });
    }
    if width == 0 || height == 0 {
        return Err(DecodeError::NoPixels {
            path: shown,
            width,
            height,
        });
    }
    let image = DynamicImage::from_decoder(decoder).map_err(image_err)?;
    Ok(image.into_rgb8())
}

/// Scales `img` so its longer side is at most `max_side`, keeping the aspect ratio.
/// Triangle filtering: smooth enough for a terminal, much faster than Lanczos.
fn scale(img: RgbImage, max_side: u32) -> RgbImage {
    let (w, h) = img.dimensions();
    let longer = w.max(h);
    if max_side == 0 || longer <= max_side {
        return img;
    }
    let ratio = max_side as f64 / longer as f64;
    let nw = ((w as f64 * ratio).round() as u32).clamp(1, max_side);
    let nh = ((h as f64 * ratio).round() as u32).clamp(1, max_side);
    image::imageops::resize(&img, nw, nh, FilterType::Triangle)
}

/// `img` scaled to fill a `w` x `h` pixel box, keeping the aspect ratio: a small frame is
/// enlarged too, so a thumbnail fills the cells it is given. Triangle filtering, as above.
pub fn fit_within(img: &RgbImage, w: u32, h: u32) -> RgbImage {
    let scale = (w as f64 / img.width().max(1) as f64).min(h as f64 / img.height().max(1) as f64);
    let (nw, nh) = (
        ((img.width() as f64 * scale) as u32).max(1),
        ((img.height() as f64 * scale) as u32).max(1),
    );
    image::imageops::resize(img, nw, nh, FilterType::Triangle)
}

/// A frame of a raw video to decode: its index (decord's numbering) and its cache file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// The frame index.
    pub index: u64,
    /// Where the decoded frame goes.
    pub cached: PathBuf,
}

/// One frame to decode, placed in its video's frame index.
#[derive(Clone, Copy)]
struct Job<'a> {
    /// Which of the wanted frames.
    at: usize,
    wanted: &'a Wanted,
    /// The timestamp of the frame decord returns for the index.
    pts: i64,
}

/// Decodes the frames `wanted` of `video` into their cache files, one result per wanted
/// frame, in order. Each is the frame decord returns for its index (the frame index of the
/// video, made with ffprobe once and kept in `frame_index`, says which timestamp that is).
///
/// The frames that follow one keyframe are decoded in one pass; the passes are inputs of
/// one ffmpeg command (`-ss` to the keyframe, then a `select` of each frame's exact
/// timestamp into its own output), and the keyframes are shared out over at most two such
/// commands run at once. Each output is written to a temporary file in the cache directory
/// and renamed into place, so a killed decode never leaves half a frame under a cached
/// name; every run is killed after the tools' time limit (60 s unless
/// `FRAMEAUDIT_FFMPEG_TIMEOUT` says otherwise), and a video whose run timed out is not
/// tried again by the same session: its frames fail at once, saying so.
pub fn decode_video(
    tools: &VideoTools,
    video: &Path,
    frame_index: &Path,
    wanted: &[Wanted],
) -> Vec<Result<(), String>> {
    let shown = video.display().to_string();
    let mut results: Vec<Result<(), String>> = vec![Ok(()); wanted.len()];
    if wanted.is_empty() {
        return results;
    }
    if let Some(why) = tools.timed_out(video) {
        return vec![Err(why); wanted.len()];
    }
    let index = match index::load(Some(tools), video, frame_index) {
        Ok(index) => index,
        Err(why) => {
            let why = format!("ffmpeg could not decode {shown}: {why}");
            return vec![Err(why); wanted.len()];
        }
    };
    // By keyframe, then timestamp; a frame wanted twice is decoded once.
    let mut groups: BTreeMap<u64, Vec<Job>> = BTreeMap::new();
    let mut twice: Vec<(usize, usize)> = Vec::new();
    for (at, w) in wanted.iter().enumerate() {
        if let Some(first) = wanted[..at].iter().position(|o| o == w) {
            twice.push((at, first));
            continue;
        }
        let Some(&slot) = usize::try_from(w.index)
            .ok()
            .and_then(|k| index.frames.get(k))
        else {
            results[at] = Err(format!(
                "frame {} is past the end of {shown} ({} frames, 0 to {})",
                w.index,
                index.len(),
                index.len().saturating_sub(1)
            ));
            continue;
        };
        let Some(pts) = slot else {
            results[at] = Err(format!(
                "decord has no frame {} of {shown}: it runs out of decoded frames there and \
                 repeats an earlier one",
                w.index
            ));
            continue;
        };
        groups
            .entry(index.key_of(w.index))
            .or_default()
            .push(Job { at, wanted: w, pts });
    }
    for jobs in groups.values_mut() {
        jobs.sort_by_key(|j| j.pts);
    }
    let groups: Vec<(u64, Vec<Job>)> = groups.into_iter().collect();
    let n_jobs = MAX_JOBS
        .min(groups.len())
        .min(std::thread::available_parallelism().map_or(1, |n| n.get()));
    // Keyframe groups dealt out in turn, so both runs get early and late ones alike.
    let mut runs: Vec<Vec<&(u64, Vec<Job>)>> = (0..n_jobs).map(|_| Vec::new()).collect();
    for (i, g) in groups.iter().enumerate() {
        runs[i % n_jobs.max(1)].push(g);
    }
    let outcome: Vec<Vec<(usize, Result<(), String>)>> = std::thread::scope(|s| {
        let handles: Vec<_> = runs
            .iter()
            .map(|run| s.spawn(|| decode_groups(tools, video, &index, run, Pass::Fast)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    vec![(usize::MAX, Err("the decoding thread failed".to_string()))]
                })
            })
            .collect()
    });
    for (at, r) in outcome.into_iter().flatten() {
        if let Some(slot) = results.get_mut(at) {
            *slot = r;
        }
    }
    for &(at, first) in &twice {
        results[at] = results[first].clone();
    }
    // What the decode added to the cache, which is trimmed when past its limit.
    let written: u64 = wanted
        .iter()
        .zip(&results)
        .enumerate()
        .filter(|(at, (_, r))| r.is_ok() && !twice.iter().any(|t| t.0 == *at))
        .filter_map(|(_, (w, _))| fs::symlink_metadata(&w.cached).ok())
        .map(|m| m.len())
        .sum();
    tools.session.budget.written(written);
    results
}

/// How a decode reaches its frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// Seeks to each group's keyframe; a group whose frames are all known references
    /// ([`FrameIndex::is_reference`]) is decoded skipping the frames no other frame refers
    /// to (`-skip_frame noref`: for frames at the end of a GOP about 40% less decoding,
    /// pixels unchanged).
    Fast,
    /// Seeks to each group's keyframe and decodes every frame.
    Seek,
    /// Decodes every frame from the start of the video.
    Start,
}

impl Pass {
    /// The pass a frame that did not come out of this one is tried with.
    fn next(self) -> Option<Pass> {
        match self {
            Pass::Fast => Some(Pass::Seek),
            Pass::Seek => Some(Pass::Start),
            Pass::Start => None,
        }
    }
}

/// The arguments of the ffmpeg run that decodes `groups` (keyframe, frames sorted by
/// timestamp) of the video `input` (a file URL) by `pass` into `outputs` (one for each
/// frame, in order): one input for each group, each frame picked by its exact timestamp
/// into its own image.
fn decode_args(
    input: &OsString,
    index: &FrameIndex,
    groups: &[&(u64, Vec<Job>)],
    pass: Pass,
    outputs: &[OsString],
) -> Vec<OsString> {
    let mut args: Vec<OsString> = ["-nostdin", "-hide_banner", "-loglevel", "error"]
        .iter()
        .map(OsString::from)
        .collect();
    // Timestamps as in the file, so that `select` can match each frame's exactly.
    args.push("-copyts".into());
    for (key, jobs) in groups {
        // No trimming to the seek time: the selects pick the frames.
        args.push("-noaccurate_seek".into());
        if pass == Pass::Fast && jobs.iter().all(|j| index.is_reference(j.pts)) {
            args.push("-skip_frame".into());
            args.push("noref".into());
        }
        if let Some(t) = index.seek_seconds(*key).filter(|_| pass != Pass::Start) {
            args.push("-ss".into());
            args.push(format!("{t:.6}").into());
        }
        args.push("-i".into());
        args.push(input.clone());
    }
    let mut out_at = 0;
    for (input, (_, jobs)) in groups.iter().enumerate() {
        for j in jobs {
            args.push("-map".into());
            args.push(format!("{input}:{}", index.stream).into());
            args.push("-vf".into());
            args.push(format!("select=eq(pts\\,{})", j.pts).into());
            for a in ["-frames:v", "1", "-vsync", "passthrough", "-q:v", "3"] {
                args.push(a.into());
            }
            // One image at exactly this name (no `%d` sequence pattern).
            for a in ["-f", "image2", "-update", "1", "-y"] {
                args.push(a.into());
            }
            args.push(outputs.get(out_at).cloned().unwrap_or_default());
            out_at += 1;
        }
    }
    args
}

/// Decodes the frames of `groups` (keyframe, frames sorted by timestamp) in one ffmpeg run
/// by `pass`. A frame that does not come out is decoded again by the next pass (all frames
/// after a seek, then from the start of the video: slow, but exact, which only a file with
/// a seek index that lies needs).
fn decode_groups(
    tools: &VideoTools,
    video: &Path,
    index: &FrameIndex,
    groups: &[&(u64, Vec<Job>)],
    pass: Pass,
) -> Vec<(usize, Result<(), String>)> {
    let shown = video.display().to_string();
    let fail_all = |why: String| -> Vec<(usize, Result<(), String>)> {
        groups
            .iter()
            .flat_map(|(_, jobs)| jobs.iter())
            .map(|j| {
                (
                    j.at,
                    Err(format!(
                        "ffmpeg could not decode frame {} of {shown}: {why}",
                        j.wanted.index
                    )),
                )
            })
            .collect()
    };
    // Temporary outputs beside their cache files, renamed into place when complete.
    let mut outputs = Vec::new();
    for (_, jobs) in groups {
        for j in jobs {
            let dir = j.wanted.cached.parent().unwrap_or(Path::new("."));
            let tmp = fs::create_dir_all(dir).and_then(|()| {
                tempfile::Builder::new()
                    .prefix(".decode-")
                    .suffix(".jpg")
                    .tempfile_in(dir)
            });
            match tmp {
                // Closed so that ffmpeg can write it on every system; removed on drop.
                Ok(t) => outputs.push(t.into_temp_path()),
                Err(e) => {
                    return fail_all(format!(
                        "cannot create the frame cache {}: {e}",
                        dir.display()
                    ));
                }
            }
        }
    }
    let urls: Vec<OsString> = outputs.iter().map(|o| file_url(o)).collect();
    let args = decode_args(&file_url(video), index, groups, pass, &urls);
    if let Some(why) = tools.timed_out(video) {
        // The other run on this video timed out meanwhile.
        return groups
            .iter()
            .flat_map(|(_, jobs)| jobs.iter())
            .map(|j| (j.at, Err(why.clone())))
            .collect();
    }
    if let Err(e) = tools.run(&tools.ffmpeg, &args, video) {
        return fail_all(e.to_string());
    }
    let mut done = Vec::new();
    let mut again: Vec<Job> = Vec::new();
    let mut outputs = outputs.into_iter();
    for (_, jobs) in groups {
        for j in jobs {
            let Some(tmp) = outputs.next() else { break };
            let written = fs::metadata(&tmp).map(|m| m.len()).unwrap_or(0);
            if written == 0 {
                match pass.next() {
                    Some(_) => again.push(*j),
                    None => done.push((
                        j.at,
                        Err(format!(
                            "ffmpeg could not decode frame {} of {shown}: it gave no frame with \
                             the timestamp {:.3} s",
                            j.wanted.index,
                            index.seconds(j.pts)
                        )),
                    )),
                }
                continue;
            }
            let persisted = tmp.persist(&j.wanted.cached).map_err(|e| {
                format!(
                    "cannot write the frame cache {}: {}",
                    j.wanted.cached.display(),
                    e.error
                )
            });
            done.push((j.at, persisted));
        }
    }
    if let (false, Some(next)) = (again.is_empty(), pass.next()) {
        if next == Pass::Start {
            let group = (0, again);
            done.extend(decode_groups(tools, video, index, &[&group], next));
        } else {
            // Again by keyframe, each frame after its own seek.
            let mut regroup: Vec<(u64, Vec<Job>)> = Vec::new();
            for j in again {
                let key = index.key_of(j.wanted.index);
                match regroup.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, jobs)) => jobs.push(j),
                    None => regroup.push((key, vec![j])),
                }
            }
            let refs: Vec<&(u64, Vec<Job>)> = regroup.iter().collect();
            done.extend(decode_groups(tools, video, index, &refs, next));
        }
    }
    done
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaling_keeps_the_aspect_and_never_enlarges() {
        let img = RgbImage::new(1600, 900);
        let s = scale(img.clone(), 160);
        assert_eq!(s.dimensions(), (160, 90));
        let s = scale(RgbImage::new(90, 1600), 160);
        assert_eq!(s.dimensions(), (9, 160));
        assert_eq!(scale(img.clone(), 4000).dimensions(), (1600, 900));
        assert_eq!(scale(img, 0).dimensions(), (1600, 900));
        assert_eq!(scale(RgbImage::new(1000, 1), 10).dimensions(), (10, 1));
    }

    /// The inputs of a decode run as (skips non-references, seek time), one per group.
    fn inputs(args: &[OsString]) -> Vec<(bool, Option<String>)> {
        let args: Vec<String> = args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let mut out = Vec::new();
        let mut skip = false;
        let mut seek = None;
        for (i, a) in args.iter().enumerate() {
            match a.as_str() {
                "-skip_frame" => skip = args[i + 1] == "noref",
                "-ss" => seek = Some(args[i + 1].clone()),
                "-i" => out.push((std::mem::take(&mut skip), seek.take())),
                _ => {}
            }
        }
        out
    }

    #[test]
    fn a_group_of_reference_frames_is_decoded_skipping_the_others_first() {
        let index = FrameIndex {
            stream: 0,
            time_base: super::super::probe::Rational { num: 1, den: 10 },
            start: 0.0,
            keys: vec![(0, 0), (10, 100), (20, 200)],
            frames: (0..30).map(|k| Some(k * 10)).collect(),
            refs: vec![0, 90, 100, 190, 200],
        };
        let wanted: Vec<Wanted> = [9, 19, 18]
            .iter()
            .map(|&index| Wanted {
                index,
                cached: PathBuf::from(format!("{index}.jpg")),
            })
            .collect();
        let job = |at: usize| Job {
            at,
            wanted: &wanted[at],
            pts: wanted[at].index as i64 * 10,
        };
        // Frame 9 is a reference; of 18 and 19 (one keyframe) only 19 is.
        let groups = [(0, vec![job(0)]), (10, vec![job(2), job(1)])];
        let groups: Vec<&(u64, Vec<Job>)> = groups.iter().collect();
        let outputs = vec![OsString::from("a"); 3];
        let input = OsString::from("file:v.mp4");
        let fast = decode_args(&input, &index, &groups, Pass::Fast, &outputs);
        assert_eq!(
            inputs(&fast),
            [(true, None), (false, Some("10.000000".into()))]
        );
        let seek = decode_args(&input, &index, &groups, Pass::Seek, &outputs);
        assert_eq!(
            inputs(&seek),
            [(false, None), (false, Some("10.000000".into()))]
        );
        let start = decode_args(&input, &index, &groups, Pass::Start, &outputs);
        assert_eq!(inputs(&start), [(false, None), (false, None)]);
        assert_eq!(Pass::Fast.next(), Some(Pass::Seek));
        assert_eq!(Pass::Start.next(), None);
    }

    #[test]
    fn missing_passes_its_reason_through() {
        let r = load_image(&Located::Missing("no frame file x".into()), 100, true);
        assert_eq!(r.unwrap_err(), "no frame file x");
    }

    #[test]
    fn video_without_ffmpeg_or_cache_gives_the_hint() {
        let dir = tempfile::tempdir().expect("tempdir");
        let located = Located::Video {
            video: dir.path().join("v.mp4"),
            cached: dir.path().join("c/1.jpg"),
            index: 1,
            frame_index: dir.path().join("i/v.txt"),
            tools: Some(VideoTools::new("ffmpeg".into(), "ffprobe".into())),
        };
        assert_eq!(load_image(&located, 100, false).unwrap_err(), FFMPEG_HINT);
    }
}
