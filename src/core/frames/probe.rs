//! What a raw video is as decord sees it (the decoder lmms-eval and VLMEvalKit sample
//! with): its frame count (`len(VideoReader)`), frame rate (`get_avg_fps()`), size and
//! duration, read by one `ffprobe` run per video; and the process runner the decoders share.
//!
//! decord counts a video's frames by reading every packet of its best video stream when it
//! opens the file, so the count here is ffprobe's packet count of that stream, not the
//! container's header (which an edit list can make disagree): the file is read, nothing is
//! decoded. Its frame rate is the stream's `avg_frame_rate`, as a plain division.
//!
//! The same run lists the stream's packets, so the probe also gives the count and rate each
//! other decoder reports ([`Decoder`]): torchcodec skips the packets an edit list discards
//! and times the rest, PyAV and OpenCV take the header's count.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::core::rules::decoder::{Decoder, DecoderCount, DecoderCounts};

/// How long one ffprobe or ffmpeg run may take before it is killed: a damaged file can
/// make a demuxer or decoder spin, and no caller may hang on it forever.
/// `FRAMEAUDIT_FFMPEG_TIMEOUT` (seconds) sets another (see [`run_timeout`]).
pub(crate) const RUN_TIMEOUT: Duration = Duration::from_secs(60);

/// The time limit of one ffprobe or ffmpeg run: `FRAMEAUDIT_FFMPEG_TIMEOUT` in seconds
/// (a positive number), else [`RUN_TIMEOUT`].
pub fn run_timeout() -> Duration {
    std::env::var("FRAMEAUDIT_FFMPEG_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0 && *s < 1e9)
        .map_or(RUN_TIMEOUT, Duration::from_secs_f64)
}

/// `5 s`, `0.5 s`: a time limit as a message gives it.
pub(crate) fn show_secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}

/// How much of a program's error output is kept for a message.
const STDERR_CAP: u64 = 16 << 10;

/// How much standard output is kept: a frame index of a ten-hour video is about 30 MB.
const STDOUT_CAP: u64 = 256 << 20;

/// A frame rate or time base as the container stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rational {
    /// Numerator.
    pub num: i64,
    /// Denominator; 0 when the container has no such rate.
    pub den: i64,
}

impl Rational {
    /// `num / den`, or `None` when either is 0.
    pub fn value(self) -> Option<f64> {
        (self.num != 0 && self.den != 0).then(|| self.num as f64 / self.den as f64)
    }

    /// Parses ffprobe's `30000/1001` (or a bare integer).
    fn parse(text: &str) -> Option<Rational> {
        let (num, den) = text.split_once('/').unwrap_or((text, "1"));
        Some(Rational {
            num: num.trim().parse().ok()?,
            den: den.trim().parse().ok()?,
        })
    }
}

impl std::fmt::Display for Rational {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.num, self.den)
    }
}

/// A raw video as decord sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct VideoProbe {
    /// The number of frames, as `len(decord.VideoReader(path))`: the packets of the video
    /// stream. Frame indices run from 0 to `num_frames - 1`.
    pub num_frames: u64,
    /// Frames per second, as `VideoReader.get_avg_fps()`: the stream's average frame rate.
    pub fps: f64,
    /// The average frame rate as stored (`fps` is its value).
    pub avg_frame_rate: Rational,
    /// The stream's base frame rate, which ffmpeg guesses from timestamps; decord does not
    /// use it, but it shows a variable frame rate when it differs from `avg_frame_rate`.
    pub r_frame_rate: Rational,
    /// The length in seconds: the video stream's duration, else the container's, else
    /// `num_frames / fps`. Harnesses that compute a length use `num_frames / fps`.
    pub duration: f64,
    /// The first timestamp of the video stream in seconds (0 for most files; decord counts
    /// frame times from it).
    pub start_time: f64,
    /// Width of the frames decord returns, in pixels (after the rotation is applied).
    pub width: u32,
    /// Height of the frames decord returns, in pixels (after the rotation is applied).
    pub height: u32,
    /// The clockwise rotation the file asks for, in degrees (0, 90, 180 or 270); decord
    /// and ffmpeg both apply it to the pixels.
    pub rotation: u32,
    /// The index of the video stream among all streams of the file (the one decord picks).
    pub stream_index: usize,
    /// The codec, as ffprobe names it (`h264`, `hevc`, `vp9`, ...).
    pub codec: String,
    /// The container, as ffprobe names it (`mov,mp4,m4a,3gp,3g2,mj2`, `matroska,webm`, ...).
    pub container: String,
    /// The count and rate each decoder reports, decord's included: torchcodec's exact mode
    /// (the packets without the discard flag, over the span of their timestamps), its
    /// approximate mode (header count, `r_frame_rate`), PyAV (header count, average rate,
    /// and the decodable frames when fewer) and cv2 (header count, average rate). A container
    /// without a frame count in its header (Matroska, WebM) gives none for the last three.
    pub decoders: DecoderCounts,
    /// The packets the container marks to discard (an MP4 edit list cutting into a GOP).
    pub discarded_packets: u64,
}

/// The `ffprobe` program on `PATH`, if any.
pub fn ffprobe_on_path() -> Option<PathBuf> {
    super::resolve_program(Path::new("ffprobe"))
}

/// The ffprobe that goes with `ffmpeg`: the one in the same directory, else the one on
/// `PATH` (a wrapper script around ffmpeg has no ffprobe beside it).
pub fn ffprobe_beside(ffmpeg: &Path) -> Option<PathBuf> {
    ffmpeg
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .and_then(|d| super::resolve_program(&d.join("ffprobe")))
        .or_else(ffprobe_on_path)
}

/// Probes `path` with the ffprobe on `PATH`. See [`probe_video_with`].
pub fn probe_video(path: &Path) -> Result<VideoProbe, String> {
    let Some(ffprobe) = ffprobe_on_path() else {
        return Err(format!(
            "cannot probe {}: there is no ffprobe on PATH (install ffmpeg)",
            path.display()
        ));
    };
    probe_video_with(&ffprobe, path)
}

/// Probes `path` with `ffprobe`: one run that reads the file's packets (decoding nothing)
/// and takes about 0.1-0.3 s, most of it the program's start. The video stream is the
/// one decord picks (ffmpeg's "best" stream); every error names the file.
pub fn probe_video_with(ffprobe: &Path, path: &Path) -> Result<VideoProbe, String> {
    let timeout = run_timeout();
    probe_video_by(ffprobe, path, |program, args| {
        run(program, args, timeout, None, false)
    })
}

/// [`probe_video_with`], ffprobe run by `run`.
pub(crate) fn probe_video_by(
    ffprobe: &Path,
    path: &Path,
    run: impl Fn(&Path, &[OsString]) -> Result<Vec<u8>, RunError>,
) -> Result<VideoProbe, String> {
    let shown = path.display();
    if !path.is_file() {
        return Err(format!("cannot probe {shown}: no such file"));
    }
    let mut args: Vec<OsString> = [
        "-v",
        "error",
        "-hide_banner",
        "-select_streams",
        "v",
        "-count_packets",
        "-show_entries",
        "stream=index,codec_name,codec_type,width,height,avg_frame_rate,r_frame_rate,\
         nb_read_packets,nb_frames,time_base,duration,start_time,bit_rate:\
         stream_disposition=default,attached_pic,hearing_impaired,visual_impaired:\
         stream_tags=rotate:stream_side_data=rotation:format=format_name,duration:\
         packet=stream_index,pts,dts,duration,flags",
        "-of",
        "json=compact=1",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    args.push(file_url(path));
    let out = run(ffprobe, &args).map_err(|e| format!("cannot probe {shown}: {e}"))?;
    parse_probe(&out).map_err(|why| format!("cannot probe {shown}: {why}"))
}

/// Probes many videos, `jobs` ffprobe runs at a time (at least 1), in the order given.
/// ffprobe's start dominates a probe, so running one per core nearly divides the time.
pub fn probe_videos(
    ffprobe: &Path,
    paths: &[PathBuf],
    jobs: usize,
) -> Vec<Result<VideoProbe, String>> {
    let jobs = jobs.clamp(1, paths.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<Option<Result<VideoProbe, String>>> = vec![None; paths.len()];
    let slots = std::sync::Mutex::new(&mut results);
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(path) = paths.get(i) else { break };
                    let r = probe_video_with(ffprobe, path);
                    let mut slots = slots.lock().unwrap_or_else(|e| e.into_inner());
                    slots[i] = Some(r);
                }
            });
        }
    });
    results
        .into_iter()
        .zip(paths)
        .map(|(r, p)| r.unwrap_or_else(|| Err(format!("cannot probe {}", p.display()))))
        .collect()
}

#[derive(Deserialize)]
struct ProbeOut {
    #[serde(default)]
    streams: Vec<ProbeStream>,
    format: Option<ProbeFormat>,
    #[serde(default)]
    packets: Vec<ProbePacket>,
}

/// One packet as ffprobe lists it (times in the stream's time base).
#[derive(Deserialize)]
struct ProbePacket {
    stream_index: usize,
    pts: Option<i64>,
    dts: Option<i64>,
    duration: Option<i64>,
    #[serde(default)]
    flags: String,
}

#[derive(Deserialize)]
struct ProbeStream {
    index: usize,
    codec_name: Option<String>,
    codec_type: Option<String>,
    width: Option<u32>,
    height: Option<u32>,
    avg_frame_rate: Option<String>,
    r_frame_rate: Option<String>,
    nb_read_packets: Option<String>,
    nb_frames: Option<String>,
    time_base: Option<String>,
    duration: Option<String>,
    start_time: Option<String>,
    bit_rate: Option<String>,
    #[serde(default)]
    disposition: HashMap<String, i64>,
    #[serde(default)]
    tags: HashMap<String, String>,
    #[serde(default)]
    side_data_list: Vec<serde_json::Value>,
}

#[derive(Deserialize)]
struct ProbeFormat {
    format_name: Option<String>,
    duration: Option<String>,
}

fn seconds(text: &Option<String>) -> Option<f64> {
    text.as_deref()
        .and_then(|t| t.parse::<f64>().ok())
        .filter(|s| s.is_finite())
}

impl ProbeStream {
    fn flag(&self, name: &str) -> bool {
        self.disposition.get(name).is_some_and(|&v| v != 0)
    }

    /// ffmpeg's `av_find_best_stream` ranking (decord opens the stream it returns):
    /// disposition first (default, not for the impaired), then whether it is a moving
    /// picture rather than a cover image, then the bit rate; the first stream wins ties.
    fn rank(&self) -> (i64, i64, i64) {
        let disposition =
            i64::from(!(self.flag("hearing_impaired") || self.flag("visual_impaired")))
                + i64::from(self.flag("default"));
        // ffmpeg counts the frames it looked at while probing, capped at 5; an attached
        // picture has one.
        let multiframe = if self.flag("attached_pic") { 1 } else { 5 };
        let bitrate = self
            .bit_rate
            .as_deref()
            .and_then(|b| b.parse().ok())
            .unwrap_or(0);
        (disposition, multiframe, bitrate)
    }

    /// The rotation decord applies, computed as decord does: the `rotate` tag when set,
    /// else minus the display matrix's angle (ffprobe prints `av_display_rotation_get`,
    /// which decord negates), folded into 0..360.
    fn rotation(&self) -> u32 {
        let tag = self
            .tags
            .get("rotate")
            .and_then(|r| r.trim().parse::<f64>().ok())
            .filter(|&r| r != 0.0);
        let matrix = self
            .side_data_list
            .iter()
            .find_map(|d| d.get("rotation").and_then(serde_json::Value::as_f64))
            .map(|r| -r);
        let theta = tag.or(matrix).unwrap_or(0.0).rem_euclid(360.0);
        // Only right angles turn the picture; decord ignores anything else.
        [0u32, 90, 180, 270]
            .into_iter()
            .find(|&a| (theta - a as f64).abs() < 0.5)
            .unwrap_or(0)
    }
}

fn parse_probe(json: &[u8]) -> Result<VideoProbe, String> {
    let out: ProbeOut = serde_json::from_slice(json)
        .map_err(|e| format!("ffprobe printed something other than its JSON ({e})"))?;
    let mut best: Option<&ProbeStream> = None;
    for st in &out.streams {
        if st.codec_type.as_deref() != Some("video") || st.codec_name.is_none() {
            continue;
        }
        if best.is_none_or(|b| st.rank() > b.rank()) {
            best = Some(st);
        }
    }
    let Some(st) = best else {
        return Err("it has no video stream".into());
    };
    let format = out.format.as_ref();
    let count: u64 = st
        .nb_read_packets
        .as_deref()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    if count == 0 {
        return Err(format!(
            "its video stream {} has no frames (no packets)",
            st.index
        ));
    }
    let avg = st
        .avg_frame_rate
        .as_deref()
        .and_then(Rational::parse)
        .unwrap_or(Rational { num: 0, den: 0 });
    let r = st
        .r_frame_rate
        .as_deref()
        .and_then(Rational::parse)
        .unwrap_or(Rational { num: 0, den: 0 });
    let Some(fps) = avg.value().filter(|f| f.is_finite() && *f > 0.0) else {
        return Err(format!(
            "its video stream {} has no average frame rate ({avg}), so decord would give none",
            st.index
        ));
    };
    let (w, h) = match (st.width, st.height) {
        (Some(w), Some(h)) if w > 0 && h > 0 => (w, h),
        _ => return Err(format!("its video stream {} has no frame size", st.index)),
    };
    let rotation = st.rotation();
    let (width, height) = if rotation % 180 == 90 { (h, w) } else { (w, h) };
    let duration = seconds(&st.duration)
        .or_else(|| format.and_then(|f| seconds(&f.duration)))
        .filter(|d| *d > 0.0)
        .unwrap_or(count as f64 / fps);
    let (decoders, discarded_packets) = decoder_counts(st, &out.packets, count, fps, r);
    Ok(VideoProbe {
        num_frames: count,
        fps,
        avg_frame_rate: avg,
        r_frame_rate: r,
        duration,
        start_time: seconds(&st.start_time).unwrap_or(0.0),
        width,
        height,
        rotation,
        stream_index: st.index,
        codec: st.codec_name.clone().unwrap_or_default(),
        container: format
            .and_then(|f| f.format_name.clone())
            .unwrap_or_default(),
        decoders,
        discarded_packets,
    })
}

/// Each decoder's count and rate of stream `st` (decord's is `count` at `fps`), and the
/// packets marked to discard.
fn decoder_counts(
    st: &ProbeStream,
    packets: &[ProbePacket],
    count: u64,
    fps: f64,
    r_frame_rate: Rational,
) -> (DecoderCounts, u64) {
    let mut counts = DecoderCounts::new();
    counts.insert(
        Decoder::Decord,
        DecoderCount {
            num_frames: count,
            fps: Some(fps),
            decodable: None,
        },
    );
    // torchcodec's scan (SingleStreamDecoder::scanFileAndUpdateMetadataAndIndex): packets
    // flagged discard are skipped; the others are counted, from the least pts (dts when
    // there is none) to the greatest pts + duration.
    let mut kept = 0u64;
    let mut discarded = 0u64;
    let mut span: Option<(i64, i64)> = None;
    for p in packets.iter().filter(|p| p.stream_index == st.index) {
        if p.flags.contains('D') {
            discarded += 1;
            continue;
        }
        kept += 1;
        let Some(t) = p.pts.or(p.dts) else { continue };
        let end = p.pts.unwrap_or(t).saturating_add(p.duration.unwrap_or(0));
        span = Some(span.map_or((t, end), |(b, e)| (b.min(t), e.max(end))));
    }
    let time_base = st
        .time_base
        .as_deref()
        .and_then(Rational::parse)
        .and_then(Rational::value);
    let exact_fps = span
        .zip(time_base)
        .map(|((b, e), tb)| e.saturating_sub(b) as f64 * tb)
        .filter(|secs| *secs > 0.0)
        .map(|secs| kept as f64 / secs);
    // Packets not listed (an ffprobe without packet entries): decord's count stands.
    let (exact, exact_fps) = if packets.is_empty() {
        (count, Some(fps))
    } else {
        (kept, exact_fps)
    };
    counts.insert(
        Decoder::Torchcodec,
        DecoderCount {
            num_frames: exact,
            fps: exact_fps,
            decodable: None,
        },
    );
    let header = st
        .nb_frames
        .as_deref()
        .and_then(|n| n.parse::<u64>().ok())
        .filter(|&n| n > 0);
    if let Some(h) = header {
        counts.insert(
            Decoder::TorchcodecApprox,
            DecoderCount {
                num_frames: h,
                fps: r_frame_rate.value().filter(|f| f.is_finite() && *f > 0.0),
                decodable: None,
            },
        );
        counts.insert(
            Decoder::Pyav,
            DecoderCount {
                num_frames: h,
                fps: Some(fps),
                // PyAV decodes the packets libavcodec is not told to discard.
                decodable: (exact < h).then_some(exact),
            },
        );
        counts.insert(
            Decoder::Cv2,
            DecoderCount {
                num_frames: h,
                fps: Some(fps),
                decodable: None,
            },
        );
    }
    (counts, discarded)
}

/// `file:<path>`: makes ffmpeg and ffprobe take the path as a file even when it looks like
/// a protocol (`http:...`) or an option.
pub(crate) fn file_url(path: &Path) -> OsString {
    let mut url = OsString::from("file:");
    url.push(path.as_os_str());
    url
}

/// Why a program run failed, in one line.
#[derive(Debug)]
pub(crate) enum RunError {
    /// It could not be started.
    Spawn(String),
    /// It exited with an error, or could not be waited for: what it said.
    Failed(String),
    /// It ran past its time limit and was killed.
    TimedOut(Duration),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Spawn(s) | RunError::Failed(s) => f.write_str(s),
            RunError::TimedOut(limit) => write!(
                f,
                "it timed out after {} and was stopped",
                show_secs(*limit)
            ),
        }
    }
}

/// The nice value of a run in the background (`background`: a prefetch).
const BACKGROUND_NICE: i32 = 10;

/// Runs `program` with `args` and no input, returns its standard output. Killed after
/// `timeout`, with every process it started (it runs in a process group of its own, so a
/// wrapper script's children go too and no pipe stays open behind it); a failure carries
/// the last line of its error output.
/// `running`, when given, holds the run's process id while it runs (see [`kill_all`]);
/// `background` runs it at a low priority.
pub(crate) fn run(
    program: &Path,
    args: &[OsString],
    timeout: Duration,
    running: Option<&Mutex<HashSet<u32>>>,
    background: bool,
) -> Result<Vec<u8>, RunError> {
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    let mut child = command
        .spawn()
        .map_err(|e| RunError::Spawn(format!("cannot run {}: {e}", program.display())))?;
    let id = child.id();
    #[cfg(unix)]
    if background {
        // Its process group (all its threads, and those it starts later) at a low
        // priority: the cores go to what the user waits for first. A refusal leaves it.
        let _ = rustix::process::setpriority_pgrp(
            Some(rustix::process::Pid::from_child(&child)),
            BACKGROUND_NICE,
        );
    }
    #[cfg(not(unix))]
    let _ = background;
    let lock = || running.map(|r| r.lock().unwrap_or_else(|e| e.into_inner()));
    if let Some(mut r) = lock() {
        r.insert(id);
    }
    let result = wait_for(&mut child, timeout);
    if let Some(mut r) = lock() {
        r.remove(&id);
    }
    result
}

/// Kills the process groups of the runs in `running`.
pub(crate) fn kill_all(running: &Mutex<HashSet<u32>>) {
    let running = running.lock().unwrap_or_else(|e| e.into_inner());
    for &id in running.iter() {
        kill_group(id);
    }
}

/// Kills the process group `id` (a run's, which has one of its own).
fn kill_group(id: u32) {
    #[cfg(unix)]
    {
        use rustix::process::{Pid, Signal, kill_process_group};
        if let Some(pid) = i32::try_from(id).ok().and_then(Pid::from_raw) {
            let _ = kill_process_group(pid, Signal::KILL);
        }
    }
    #[cfg(not(unix))]
    let _ = id;
}

/// Collects the output of `child`, killing its process group after `timeout`.
fn wait_for(child: &mut std::process::Child, timeout: Duration) -> Result<Vec<u8>, RunError> {
    // Both pipes drained on their own threads: a program that writes more than a pipe
    // holds would otherwise block while we wait for it to exit.
    let stdout = child.stdout.take().map(|mut pipe| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = pipe.by_ref().take(STDOUT_CAP).read_to_end(&mut text);
            let _ = std::io::copy(&mut pipe, &mut std::io::sink());
            text
        })
    });
    let stderr = child.stderr.take().map(|mut pipe| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = pipe.by_ref().take(STDERR_CAP).read_to_end(&mut text);
            let _ = std::io::copy(&mut pipe, &mut std::io::sink());
            String::from_utf8_lossy(&text).into_owned()
        })
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if started.elapsed() > timeout => {
                kill_group(child.id());
                let _ = child.kill();
                let _ = child.wait();
                // The readers end when the last holder of the pipes is gone; not waited
                // for, in case something escaped the process group.
                return Err(RunError::TimedOut(timeout));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => break Err(format!("waiting for it failed: {e}")),
        }
    };
    let out = stdout.and_then(|h| h.join().ok()).unwrap_or_default();
    let errors = stderr.and_then(|h| h.join().ok()).unwrap_or_default();
    let status = status.map_err(RunError::Failed)?;
    if !status.success() {
        let last = errors
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        return Err(RunError::Failed(if last.is_empty() {
            format!("it exited with {status}")
        } else {
            last.to_string()
        }));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(json: &str) -> String {
        format!(
            r#"{{"streams": [{json}], "format": {{"format_name": "mov,mp4", "duration": "9.5"}}}}"#
        )
    }

    #[test]
    fn the_count_is_the_packets_and_the_rate_a_plain_division() {
        let p = parse_probe(
            stream(
                r#"{"index": 0, "codec_name": "h264", "codec_type": "video", "width": 640,
                "height": 360, "avg_frame_rate": "30000/1001", "r_frame_rate": "30000/1001",
                "nb_read_packets": "285", "start_time": "0.033"}"#,
            )
            .as_bytes(),
        )
        .expect("parses");
        assert_eq!(p.num_frames, 285);
        assert_eq!(p.fps, 30000.0 / 1001.0);
        assert_eq!((p.width, p.height, p.rotation), (640, 360, 0));
        // No stream duration: the container's.
        assert_eq!(p.duration, 9.5);
        assert_eq!(p.start_time, 0.033);
    }

    #[test]
    fn the_best_stream_is_ffmpegs_and_a_cover_picture_loses() {
        let p = parse_probe(
            stream(
                r#"{"index": 0, "codec_name": "mjpeg", "codec_type": "video", "width": 600,
                "height": 600, "avg_frame_rate": "0/0", "nb_read_packets": "1",
                "disposition": {"default": 1, "attached_pic": 1}},
                {"index": 1, "codec_name": "h264", "codec_type": "video", "width": 320,
                "height": 240, "avg_frame_rate": "25/1", "nb_read_packets": "50",
                "disposition": {"default": 1}, "side_data_list": [{"rotation": -90}]}"#,
            )
            .as_bytes(),
        )
        .expect("parses");
        assert_eq!(p.stream_index, 1);
        // Turned a quarter: decord returns 240 wide, 320 high.
        assert_eq!((p.width, p.height, p.rotation), (240, 320, 90));
    }

    #[test]
    fn broken_answers_say_what_is_missing() {
        let no_rate = stream(
            r#"{"index": 0, "codec_name": "h264", "codec_type": "video", "width": 2,
            "height": 2, "avg_frame_rate": "0/0", "nb_read_packets": "3"}"#,
        );
        let why = parse_probe(no_rate.as_bytes()).unwrap_err();
        assert!(why.contains("no average frame rate"), "{why}");
        let audio = r#"{"streams": [], "format": {}}"#;
        assert!(
            parse_probe(audio.as_bytes())
                .unwrap_err()
                .contains("no video stream")
        );
        assert!(parse_probe(b"garbage").unwrap_err().contains("JSON"));
    }

    #[test]
    fn rationals() {
        assert_eq!(
            Rational::parse("30000/1001").and_then(Rational::value),
            Some(30000.0 / 1001.0)
        );
        assert_eq!(Rational::parse("0/0").and_then(Rational::value), None);
        assert_eq!(Rational::parse("25"), Some(Rational { num: 25, den: 1 }));
        assert_eq!(Rational::parse("x/1"), None);
    }
}
