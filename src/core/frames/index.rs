//! The frame index of a raw video: for every index k, the presentation timestamp of the
//! frame decord returns for `VideoReader[k]`, and the keyframe to seek to for it. Made once
//! per video from ffprobe's packet list (nothing is decoded) and kept in the decode cache,
//! `<root>/.frameaudit-cache/index/<video>.txt`.
//!
//! What decord does (src/video/video_reader.cc), and so what this follows: on opening, it
//! reads every packet of the stream, numbers the keyframes by their packet (reading)
//! order, and sorts the packets' timestamps; `len` is the packet count. For index k it
//! takes the last keyframe number K <= k (0 when k is at or before the first), seeks to
//! the K-th smallest timestamp and then counts k - K frames out of the decoder. Frames
//! come out of a decoder in timestamp order, and a packet an edit list marks "discard"
//! gives no frame, so frame k is the (k - K)-th of the shown (not discarded) timestamps
//! from the K-th smallest one on. For a file without discarded packets that is simply the
//! k-th smallest timestamp.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use serde::Deserialize;

use super::VideoTools;
use super::probe::{self, Rational};

/// The first line of an index file; a file of another version is made anew.
const HEADER: &str = "frameaudit frame index 2";

/// The frame index of one video.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FrameIndex {
    /// The stream decord decodes (ffmpeg's best video stream), by its index in the file.
    pub stream: usize,
    /// The stream's time base: a timestamp times this is seconds.
    pub time_base: Rational,
    /// The container's start time in seconds: ffmpeg's `-ss` counts from it.
    pub start: f64,
    /// Keyframe numbers K (decord's numbering, see the module doc) with the timestamp decord
    /// seeks to for them, in increasing K.
    pub keys: Vec<(u64, i64)>,
    /// For each frame index, the timestamp of the frame decord returns, or `None` where
    /// decord runs out of frames and repeats an earlier one (only in damaged files).
    pub frames: Vec<Option<i64>>,
    /// The timestamps of the frames known to be references, sorted (see [`references`]):
    /// a decoder that skips the frames no other frame refers to still gives them, exactly.
    pub refs: Vec<i64>,
}

impl FrameIndex {
    /// The number of frames (decord's `len`).
    pub fn len(&self) -> u64 {
        self.frames.len() as u64
    }

    /// decord's keyframe for frame `k` (`LocateKeyframe`): 0 when k is at or before the
    /// first keyframe, else the last keyframe number <= k. Frames with the same one are
    /// decoded in one pass.
    pub fn key_of(&self, k: u64) -> u64 {
        match self.keys.first() {
            Some(&(first, _)) if k > first => {
                let at = self.keys.partition_point(|&(key, _)| key <= k);
                self.keys
                    .get(at.saturating_sub(1))
                    .map_or(0, |&(key, _)| key)
            }
            _ => 0,
        }
    }

    /// The time to give ffmpeg's `-ss` to decode the frames of keyframe `key`, or `None`
    /// to decode from the start. ffmpeg seeks to the keyframe at or before the time
    /// (earlier still for streams with B-frames), so those frames all follow it.
    pub fn seek_seconds(&self, key: u64) -> Option<f64> {
        if key == 0 {
            return None;
        }
        let at = self.keys.binary_search_by_key(&key, |&(k, _)| k).ok()?;
        let tb = self.time_base.value()?;
        let t = self.keys[at].1 as f64 * tb - self.start;
        (t > 0.0).then_some(t)
    }

    /// Whether the frame of timestamp `pts` is known to be a reference frame.
    pub fn is_reference(&self, pts: i64) -> bool {
        self.refs.binary_search(&pts).is_ok()
    }

    /// The timestamp as seconds, for messages.
    pub fn seconds(&self, pts: i64) -> f64 {
        pts as f64 * self.time_base.value().unwrap_or(0.0)
    }

    fn to_text(&self, size: u64, mtime: u128) -> String {
        let mut s = String::with_capacity(self.frames.len() * 8 + 256);
        s.push_str(HEADER);
        s.push('\n');
        s.push_str(&format!("video {size} {mtime}\n"));
        s.push_str(&format!(
            "stream {} {} {} {}\n",
            self.stream, self.time_base.num, self.time_base.den, self.start
        ));
        s.push_str("keys");
        for (k, pts) in &self.keys {
            s.push_str(&format!(" {k}:{pts}"));
        }
        s.push('\n');
        s.push_str("refs");
        for pts in &self.refs {
            s.push_str(&format!(" {pts}"));
        }
        s.push('\n');
        for f in &self.frames {
            match f {
                Some(pts) => s.push_str(&pts.to_string()),
                None => s.push('-'),
            }
            s.push('\n');
        }
        s
    }

    /// Parses an index file; `None` when it is of another version, for another file
    /// (`size`, `mtime`), or damaged.
    fn from_text(text: &str, size: u64, mtime: u128) -> Option<FrameIndex> {
        let mut lines = text.lines();
        if lines.next()? != HEADER {
            return None;
        }
        let video: Vec<&str> = lines.next()?.split(' ').collect();
        if video.len() != 3 || video[1].parse::<u64>().ok()? != size {
            return None;
        }
        if video[2].parse::<u128>().ok()? != mtime {
            return None;
        }
        let stream: Vec<&str> = lines.next()?.split(' ').collect();
        if stream.len() != 5 || stream[0] != "stream" {
            return None;
        }
        let keys_line = lines.next()?;
        let keys = keys_line
            .strip_prefix("keys")?
            .split_whitespace()
            .map(|kv| {
                let (k, pts) = kv.split_once(':')?;
                Some((k.parse().ok()?, pts.parse().ok()?))
            })
            .collect::<Option<Vec<(u64, i64)>>>()?;
        let refs = lines
            .next()?
            .strip_prefix("refs")?
            .split_whitespace()
            .map(|p| p.parse().ok())
            .collect::<Option<Vec<i64>>>()?;
        if !refs.is_sorted() {
            return None;
        }
        let frames = lines
            .map(|l| match l {
                "-" => Some(None),
                n => n.parse().ok().map(Some),
            })
            .collect::<Option<Vec<Option<i64>>>>()?;
        Some(FrameIndex {
            stream: stream[1].parse().ok()?,
            time_base: Rational {
                num: stream[2].parse().ok()?,
                den: stream[3].parse().ok()?,
            },
            start: stream[4].parse().ok()?,
            keys,
            frames,
            refs,
        })
    }
}

/// One packet of the stream, as ffprobe lists it.
struct Packet {
    pts: i64,
    key: bool,
    discard: bool,
    /// Where the packet's bytes are in the file, and how many, when ffprobe says.
    at: Option<(u64, u64)>,
}

/// The timestamps of the frames of `packets` (in reading order) known to be references,
/// sorted: keyframes, those `is_reference` says are (an H.264 picture's own flag, see
/// [`h264_reference`]), and each frame read before a frame shown earlier than it. An encoder
/// reads a frame ahead of its turn only so that the frames shown before it can refer to it
/// (the P-frame after a run of B-frames, the middle B-frame of a pyramid). A reference
/// this misses is only decoded the slower way, and a frame wrongly counted one comes out of
/// no decode that skips the others, and is then decoded again: never wrong pixels.
fn references(packets: &[Packet], mut is_reference: impl FnMut(&Packet) -> bool) -> Vec<i64> {
    let mut refs = Vec::new();
    let mut later_min = i64::MAX;
    for p in packets.iter().rev() {
        if p.key || p.pts > later_min || is_reference(p) {
            refs.push(p.pts);
        }
        later_min = later_min.min(p.pts);
    }
    refs.sort_unstable();
    refs.dedup();
    refs
}

/// Whether the H.264 picture whose packet is `size` bytes at `pos` is a reference, by the
/// `nal_ref_idc` of its first slice (the flag the decoder skips non-references by), read
/// with `read_at` (bytes at an offset of the file). The packet holds NAL units each after
/// its length in 4 bytes (the MP4 and Matroska layout); the units before the first slice
/// (delimiters, SEI, parameter sets) are stepped over. `None` when the bytes are not so.
pub(crate) fn h264_reference(
    mut read_at: impl FnMut(u64, &mut [u8]) -> std::io::Result<()>,
    pos: u64,
    size: u64,
) -> Option<bool> {
    let mut at = 0u64;
    // A picture's first slice comes after a few units at most.
    for _ in 0..16 {
        if at + 5 > size {
            return None;
        }
        let mut head = [0u8; 5];
        read_at(pos + at, &mut head).ok()?;
        let len = u64::from(u32::from_be_bytes([head[0], head[1], head[2], head[3]]));
        if len == 0 || at + 4 + len > size || head[4] & 0x80 != 0 {
            return None;
        }
        match head[4] & 0x1f {
            // A slice of a picture (5: of an IDR picture); it has a header after the unit's
            // (a length of 1 is a start code's `00 00 00 01`, another layout).
            1 | 5 if len >= 2 => return Some(head[4] & 0x60 != 0),
            // SEI, parameter sets, delimiters, fillers: step over.
            6..=13 => at += 4 + len,
            _ => return None,
        }
    }
    None
}

/// [`h264_reference`] of each packet of `video` that ffprobe placed, as a lookup for
/// [`references`]; a file that cannot be read knows no more than the packet order.
fn h264_references(video: &Path) -> impl FnMut(&Packet) -> bool {
    let mut file = std::fs::metadata(video)
        .ok()
        .filter(|m| m.is_file())
        .and_then(|_| std::fs::File::open(video).ok());
    move |p: &Packet| {
        let (Some(f), Some((pos, size))) = (file.as_mut(), p.at) else {
            return false;
        };
        let read_at = |off: u64, buf: &mut [u8]| -> std::io::Result<()> {
            use std::io::{Read, Seek, SeekFrom};
            f.seek(SeekFrom::Start(off))?;
            f.read_exact(buf)
        };
        h264_reference(read_at, pos, size) == Some(true)
    }
}

/// decord's frame order over `packets` (in reading order); see the module doc.
fn order(packets: &[Packet]) -> (Vec<(u64, i64)>, Vec<Option<i64>>) {
    let mut all: Vec<i64> = packets.iter().map(|p| p.pts).collect();
    all.sort_unstable();
    let mut shown: Vec<i64> = packets
        .iter()
        .filter(|p| !p.discard)
        .map(|p| p.pts)
        .collect();
    shown.sort_unstable();
    let keys: Vec<(u64, i64)> = packets
        .iter()
        .enumerate()
        .filter(|(_, p)| p.key)
        .filter_map(|(i, _)| all.get(i).map(|&pts| (i as u64, pts)))
        .collect();
    let index = FrameIndex {
        stream: 0,
        time_base: Rational { num: 0, den: 1 },
        start: 0.0,
        keys,
        frames: Vec::new(),
        refs: Vec::new(),
    };
    let frames = (0..packets.len() as u64)
        .map(|k| {
            let key = index.key_of(k);
            // decord seeks to the key-th smallest timestamp and counts from there.
            let base = all.get(key as usize).copied().unwrap_or(i64::MIN);
            let from = shown.partition_point(|&t| t < base);
            usize::try_from(k - key)
                .ok()
                .and_then(|n| shown.get(from + n))
                .copied()
        })
        .collect();
    (index.keys, frames)
}

#[derive(Deserialize)]
struct PacketsOut {
    #[serde(default)]
    packets: Vec<PacketOut>,
    #[serde(default)]
    streams: Vec<StreamOut>,
    format: Option<FormatOut>,
}

#[derive(Deserialize)]
struct PacketOut {
    stream_index: usize,
    pts: Option<i64>,
    dts: Option<i64>,
    #[serde(default)]
    flags: String,
    /// A number, which ffprobe's JSON writes as text.
    pos: Option<serde_json::Value>,
    /// Likewise.
    size: Option<serde_json::Value>,
}

/// A count ffprobe writes as a number or as text.
fn count(v: &Option<serde_json::Value>) -> Option<u64> {
    match v.as_ref()? {
        serde_json::Value::String(s) => s.parse().ok(),
        n => n.as_u64(),
    }
}

#[derive(Deserialize)]
struct StreamOut {
    index: usize,
    time_base: Option<String>,
    codec_name: Option<String>,
}

#[derive(Deserialize)]
struct FormatOut {
    start_time: Option<String>,
}

/// Makes the frame index of `video` with `ffprobe`: one run that lists the packets of the
/// video streams (about 0.3 s for a 10-minute video, most of it reading the file).
pub(crate) fn build(tools: &VideoTools, video: &Path) -> Result<FrameIndex, String> {
    let ffprobe = tools.ffprobe.as_path();
    // The stream decord picks, by the same ranking as the probe.
    let probe = probe::probe_video_by(ffprobe, video, |p, a| tools.run(p, a, video))?;
    let mut args: Vec<OsString> = ["-v", "error", "-hide_banner", "-select_streams"]
        .iter()
        .map(OsString::from)
        .collect();
    args.push(probe.stream_index.to_string().into());
    for a in [
        "-show_entries",
        "packet=stream_index,pts,dts,flags,pos,size:stream=index,time_base,codec_name:format=start_time",
        "-of",
        "json",
    ] {
        args.push(a.into());
    }
    args.push(probe::file_url(video));
    let shown = video.display();
    let out = tools
        .run(ffprobe, &args, video)
        .map_err(|e| format!("cannot list the frames of {shown}: {e}"))?;
    let out: PacketsOut = serde_json::from_slice(&out).map_err(|e| {
        format!(
            "cannot list the frames of {shown}: ffprobe printed something other than its JSON ({e})"
        )
    })?;
    let h264 = out
        .streams
        .iter()
        .any(|s| s.index == probe.stream_index && s.codec_name.as_deref() == Some("h264"));
    let time_base = out
        .streams
        .iter()
        .find(|s| s.index == probe.stream_index)
        .and_then(|s| s.time_base.as_deref())
        .and_then(|tb| {
            let (n, d) = tb.split_once('/')?;
            Some(Rational {
                num: n.parse().ok()?,
                den: d.parse().ok()?,
            })
        })
        .filter(|tb| tb.value().is_some())
        .ok_or_else(|| {
            format!("cannot list the frames of {shown}: its video stream has no time base")
        })?;
    let mut packets = Vec::with_capacity(out.packets.len());
    for p in out
        .packets
        .iter()
        .filter(|p| p.stream_index == probe.stream_index)
    {
        // decord sorts by the packet's pts; a packet without one is shown at its dts
        // (what ffmpeg's best-effort timestamp makes of it).
        let Some(pts) = p.pts.or(p.dts) else {
            return Err(format!(
                "cannot index the frames of {shown}: packet {} of its video stream has no timestamp",
                packets.len()
            ));
        };
        packets.push(Packet {
            pts,
            key: p.flags.contains('K'),
            discard: p.flags.contains('D'),
            at: count(&p.pos).zip(count(&p.size)),
        });
    }
    if packets.is_empty() {
        return Err(format!("{shown} has no video frames"));
    }
    let (keys, frames) = order(&packets);
    Ok(FrameIndex {
        stream: probe.stream_index,
        time_base,
        start: out
            .format
            .and_then(|f| f.start_time)
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|s| s.is_finite())
            .unwrap_or(0.0),
        keys,
        frames,
        refs: if h264 {
            references(&packets, h264_references(video))
        } else {
            references(&packets, |_| false)
        },
    })
}

/// The size and modification time (ns since the epoch) of `video`, which an index file
/// must match.
fn stamp(video: &Path) -> Result<(u64, u128), String> {
    let meta =
        std::fs::metadata(video).map_err(|e| format!("cannot read {}: {e}", video.display()))?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Ok((meta.len(), mtime))
}

/// Indexes already read in this process, by index file: a frame decode must not re-read a
/// 15000-line file, and two threads must not index one video twice.
static MEMO: Mutex<Option<Memo>> = Mutex::new(None);

/// Index file -> (video size, video modification time, index).
type Memo = HashMap<PathBuf, (u64, u128, Arc<FrameIndex>)>;

/// The frame index of `video`: from memory, else from the cache file `file` when it was
/// made for this very file (same size and modification time), else made with `ffprobe`
/// and written to `file` (a temporary file renamed into place; a cache that cannot be
/// written only costs the next run the indexing).
pub(crate) fn load(
    tools: Option<&VideoTools>,
    video: &Path,
    file: &Path,
) -> Result<Arc<FrameIndex>, String> {
    let (size, mtime) = stamp(video)?;
    // Held while indexing: the other decoding thread then waits for this index instead of
    // making it again.
    let mut memo = MEMO.lock().unwrap_or_else(|e| e.into_inner());
    let memo = memo.get_or_insert_with(HashMap::new);
    if let Some((s, m, index)) = memo.get(file)
        && (*s, *m) == (size, mtime)
    {
        return Ok(Arc::clone(index));
    }
    let cached = crate::core::fsread::read_to_string(file, crate::core::fsread::FRAME_INDEX)
        .ok()
        .and_then(|t| FrameIndex::from_text(&t, size, mtime));
    let index = match cached {
        Some(index) => index,
        None => {
            let Some(tools) = tools else {
                return Err(super::FFMPEG_HINT.into());
            };
            // Another thread may have timed out on this video while this one waited.
            if let Some(why) = tools.timed_out(video) {
                return Err(why);
            }
            let index = build(tools, video)?;
            let _ = write(file, &index.to_text(size, mtime));
            index
        }
    };
    let index = Arc::new(index);
    memo.insert(file.to_path_buf(), (size, mtime, Arc::clone(&index)));
    Ok(index)
}

fn write(file: &Path, text: &str) -> std::io::Result<()> {
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    crate::core::fswrite::write_output(file, crate::core::fswrite::Links::Refuse, |w| {
        w.write_all(text.as_bytes())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packets(list: &[(i64, &str)]) -> Vec<Packet> {
        list.iter()
            .map(|&(pts, flags)| Packet {
                pts,
                key: flags.contains('K'),
                discard: flags.contains('D'),
                at: None,
            })
            .collect()
    }

    #[test]
    fn frames_are_in_timestamp_order() {
        // I P B B | I P B: decode order with B-frames.
        let p = packets(&[
            (0, "K"),
            (3, ""),
            (1, ""),
            (2, ""),
            (4, "K"),
            (6, ""),
            (5, ""),
        ]);
        let (keys, frames) = order(&p);
        assert_eq!(keys, vec![(0, 0), (4, 4)]);
        assert_eq!(frames, (0..7).map(Some).collect::<Vec<_>>());
    }

    #[test]
    fn frames_read_ahead_of_their_turn_are_references() {
        // I P B B | I P Bref B B, in reading order: the P-frames come before the B-frames
        // shown ahead of them, and the middle B of a pyramid before the two around it.
        let p = packets(&[
            (0, "K"),
            (3, ""),
            (1, ""),
            (2, ""),
            (4, "K"),
            (8, ""),
            (6, ""),
            (5, ""),
            (7, ""),
            (9, ""),
        ]);
        // 9 is read when it is shown: nothing says another frame refers to it.
        assert_eq!(references(&p, |_| false), [0, 3, 4, 6, 8]);
        // A picture's own flag adds it (9 here), where the order says nothing.
        assert_eq!(references(&p, |q| q.pts == 9), [0, 3, 4, 6, 8, 9]);
        // Without B-frames only the keyframes are known.
        let p = packets(&[(0, "K"), (1, ""), (2, ""), (3, "K"), (4, "")]);
        assert_eq!(references(&p, |_| false), [0, 3]);
    }

    #[test]
    fn an_h264_pictures_first_slice_says_whether_it_is_a_reference() {
        // Length-prefixed units: an SEI (type 6) of 3 bytes, then a slice (type 1) with
        // nal_ref_idc 2 or 0.
        let packet = |slice: u8| -> Vec<u8> {
            let mut b = vec![0, 0, 0, 3, 0x06, 0xaa, 0xbb, 0, 0, 0, 2, slice, 0xcc];
            b.splice(0..0, [9u8; 7]);
            b
        };
        let read = |bytes: Vec<u8>| {
            move |off: u64, buf: &mut [u8]| -> std::io::Result<()> {
                let off = off as usize;
                let src = bytes
                    .get(off..off + buf.len())
                    .ok_or(std::io::ErrorKind::UnexpectedEof)?;
                buf.copy_from_slice(src);
                Ok(())
            }
        };
        assert_eq!(h264_reference(read(packet(0x41)), 7, 13), Some(true));
        assert_eq!(h264_reference(read(packet(0x01)), 7, 13), Some(false));
        // An IDR slice (type 5) with nal_ref_idc 3.
        assert_eq!(h264_reference(read(packet(0x65)), 7, 13), Some(true));
        // A unit that runs past the packet, start codes instead of lengths, a set
        // forbidden bit: not known.
        assert_eq!(h264_reference(read(packet(0x41)), 7, 12), None);
        assert_eq!(
            h264_reference(read(vec![0, 0, 0, 1, 0x41, 0x9a]), 0, 6),
            None
        );
        assert_eq!(h264_reference(read(packet(0xc1)), 7, 13), None);
    }

    #[test]
    fn discarded_frames_shift_the_first_group_as_in_decord() {
        // A stream-copied cut: the edit list hides the first three frames of the GOP.
        // decord counts decoded frames from the start there, and seeks by timestamp from
        // the next keyframe on.
        let p = packets(&[
            (-3, "KD"),
            (-1, "D"),
            (-2, "D"),
            (1, ""),
            (0, ""),
            (2, ""),
            (5, "K"),
            (6, ""),
        ]);
        let (keys, frames) = order(&p);
        assert_eq!(keys, vec![(0, -3), (6, 5)]);
        // Group 0: the shown frames 0, 1, 2, 5, 6 counted from the start.
        // Group 1 (k = 6, 7): from the 6th smallest timestamp (5) on.
        assert_eq!(
            frames,
            vec![
                Some(0),
                Some(1),
                Some(2),
                Some(5),
                Some(6),
                None,
                Some(5),
                Some(6)
            ]
        );
    }

    #[test]
    fn groups_follow_decords_keyframe_lookup() {
        let index = FrameIndex {
            stream: 0,
            time_base: Rational { num: 1, den: 10 },
            start: 0.5,
            keys: vec![(2, 20), (10, 100)],
            frames: vec![Some(0); 20],
            refs: vec![20, 37, 100],
        };
        assert_eq!(index.key_of(0), 0);
        assert_eq!(index.key_of(2), 0);
        assert_eq!(index.key_of(3), 2);
        assert_eq!(index.key_of(9), 2);
        assert_eq!(index.key_of(10), 10);
        assert_eq!(index.key_of(19), 10);
        assert_eq!(index.seek_seconds(0), None);
        assert_eq!(index.seek_seconds(10), Some(9.5));
        assert_eq!(index.seek_seconds(3), None);
        let text = index.to_text(7, 8);
        assert_eq!(FrameIndex::from_text(&text, 7, 8), Some(index.clone()));
        assert_eq!(FrameIndex::from_text(&text, 7, 9), None);
        assert_eq!(FrameIndex::from_text("junk", 7, 8), None);
    }
}
