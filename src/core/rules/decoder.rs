//! The decoder is part of the rule: decord, torchcodec, PyAV and OpenCV count a video's
//! frames and rate their own way, and on some videos (an MP4 edit list, a variable frame
//! rate) they disagree. Here are a video's counts per decoder and which decoders a run read with.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{FrameRule, VideoFacts};

/// A video reader a harness counts or decodes a video with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decoder {
    /// decord: `len(VideoReader)` (every packet of the stream) and `get_avg_fps()` (the
    /// stream's `avg_frame_rate`).
    Decord,
    /// torchcodec in its default exact mode: the packets without the discard flag, and that
    /// count over the span of their timestamps.
    Torchcodec,
    /// torchcodec with `seek_mode="approximate"`: the header's frame count and the stream's
    /// `r_frame_rate`.
    TorchcodecApprox,
    /// PyAV: the header's frame count (`stream.frames`) and `average_rate`; fewer frames may
    /// decode (`decodable`).
    Pyav,
    /// OpenCV: `CAP_PROP_FRAME_COUNT` (the header's count) and `CAP_PROP_FPS`.
    Cv2,
}

impl Decoder {
    /// Every decoder, decord first.
    pub const ALL: [Decoder; 5] = [
        Decoder::Decord,
        Decoder::Torchcodec,
        Decoder::TorchcodecApprox,
        Decoder::Pyav,
        Decoder::Cv2,
    ];

    /// The decoder as messages name it.
    pub fn name(self) -> &'static str {
        match self {
            Decoder::Decord => "decord",
            Decoder::Torchcodec => "torchcodec",
            Decoder::TorchcodecApprox => "torchcodec (approximate mode)",
            Decoder::Pyav => "PyAV",
            Decoder::Cv2 => "cv2",
        }
    }

    /// The decoder a recorder log's `reader` names, if it is one of these.
    pub fn from_reader(reader: &str) -> Option<Decoder> {
        match reader {
            "decord" => Some(Decoder::Decord),
            "torchcodec" => Some(Decoder::Torchcodec),
            "pyav" | "av" => Some(Decoder::Pyav),
            "cv2" | "opencv" => Some(Decoder::Cv2),
            _ => None,
        }
    }
}

/// One decoder's count of a video, as `items.jsonl` → `decoders` stores it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecoderCount {
    /// The frame count the decoder reports.
    pub num_frames: u64,
    /// The frame rate it reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fps: Option<f64>,
    /// How many frames actually decode, when fewer than `num_frames` (PyAV on an edit list:
    /// indices from here on are silently dropped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decodable: Option<u64>,
}

impl DecoderCount {
    /// Whether two counts give any rule the same frames: the same count and decodable
    /// count, rates equal to one part in a million.
    pub fn agrees(&self, other: &DecoderCount) -> bool {
        let fps = match (self.fps, other.fps) {
            (Some(a), Some(b)) => (a - b).abs() <= 1e-6 * a.abs().max(b.abs()),
            (a, b) => a.is_none() && b.is_none(),
        };
        self.num_frames == other.num_frames && self.decodable == other.decodable && fps
    }
}

/// A video's counts per decoder (`items.jsonl` → `decoders`). A decoder not in the map
/// counts as decord does (the item's `num_frames` and `fps`).
pub type DecoderCounts = BTreeMap<Decoder, DecoderCount>;

/// Whether some decoder's count disagrees with decord's in `counts`.
pub fn decoders_disagree(counts: &DecoderCounts) -> bool {
    let Some(decord) = counts.get(&Decoder::Decord) else {
        return counts.len() > 1;
    };
    counts.values().any(|c| !c.agrees(decord))
}

/// Which decoders a run's frames depend on: the one (or ones) that may have decoded the
/// video, and the one whose count clamps the budget when that is another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunDecoder {
    /// The decoders the run may have decoded with, the one whose frames are shown first;
    /// one when it is known.
    pub decode: Vec<Decoder>,
    /// The decoder whose count the harness clamps the budget with before it decodes (lmms-eval's
    /// chat qwen2_5_vl: decord's `len(vr)`; VLMEvalKit's Qwen: cv2's frame count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clamp: Option<Decoder>,
    /// How the decoder is known, or why it is not.
    pub source: String,
    /// What picks the decoder at run time, when the run's own code does not: a recorder
    /// log's `start` lines then tell it (docs/recorder.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<Selector>,
}

/// What picks a run's decoder at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Selector {
    /// qwen_vl_utils' `get_video_reader_backend`: `FORCE_QWENVL_VIDEO_READER`, else
    /// torchcodec when installed, else decord, else torchvision.
    QwenVlUtils,
    /// lmms-eval's `read_video`: `LMMS_VIDEO_DECODE_BACKEND`, PyAV when unset.
    LmmsReadVideo,
}

/// What a recorder log's `start` lines say of a run's environment (docs/recorder.md).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoggedSetup {
    /// Whether a `start` line logged the decoder environment variables (a recorder that
    /// predates them logs none, and then an unset variable says nothing).
    pub env_logged: bool,
    /// Each decoder variable's values across the run's processes (`None`: unset).
    pub env: BTreeMap<String, std::collections::BTreeSet<Option<String>>>,
    /// The installed releases, by distribution name, as the `start` lines give them.
    pub versions: BTreeMap<String, String>,
    /// The readers qwen_vl_utils chose (`reader_choice`), each with whether it was forced.
    pub reader_choices: std::collections::BTreeSet<(String, bool)>,
    /// Where the log is, for the reasons given: `file:line` of its `run` line.
    pub at: String,
}

impl LoggedSetup {
    /// The one value `key` had in every process of the run (`Some(None)`: unset in all),
    /// `None` when the log does not say or the processes differ.
    fn env(&self, key: &str) -> Option<Option<&str>> {
        if !self.env_logged {
            return None;
        }
        match self.env.get(key) {
            None => Some(None),
            Some(values) if values.len() == 1 => values.iter().next().map(|v| v.as_deref()),
            Some(_) => None,
        }
    }

    /// The decoder `selector` picked in the run the log records, and how that is known.
    pub fn decoder(&self, selector: Selector) -> Option<(Decoder, String)> {
        let at = &self.at;
        match selector {
            Selector::QwenVlUtils => {
                let names: std::collections::BTreeSet<&str> = self
                    .reader_choices
                    .iter()
                    .map(|(r, _)| r.as_str())
                    .collect();
                if let [one] = names.into_iter().collect::<Vec<_>>().as_slice() {
                    let forced = self.reader_choices.iter().any(|(_, f)| *f);
                    return Decoder::from_reader(one).map(|d| {
                        (
                            d,
                            format!(
                                "the recorder log {at} logs qwen_vl_utils' choice of reader: {}{}",
                                d.name(),
                                if forced {
                                    " (forced by FORCE_QWENVL_VIDEO_READER)"
                                } else {
                                    ""
                                }
                            ),
                        )
                    });
                }
                if let Some(Some(forced)) = self.env("FORCE_QWENVL_VIDEO_READER") {
                    return Decoder::from_reader(forced).map(|d| {
                        (
                            d,
                            format!(
                                "the recorder log {at} logs FORCE_QWENVL_VIDEO_READER={forced}, which makes qwen_vl_utils read with {}",
                                d.name()
                            ),
                        )
                    });
                }
                if self.env("FORCE_QWENVL_VIDEO_READER") != Some(None) || self.versions.is_empty() {
                    return None;
                }
                // qwen_vl_utils 0.0.14 takes torchcodec whenever it is installed, else decord.
                let installed = ["torchcodec", "decord", "eva-decord"]
                    .into_iter()
                    .find_map(|n| self.versions.get(n).map(|v| (n, v)))?;
                let d = if installed.0 == "torchcodec" {
                    Decoder::Torchcodec
                } else {
                    Decoder::Decord
                };
                Some((
                    d,
                    format!(
                        "the recorder log {at} logs {} {} installed and no FORCE_QWENVL_VIDEO_READER, so qwen_vl_utils read with {}",
                        installed.0,
                        installed.1,
                        d.name()
                    ),
                ))
            }
            Selector::LmmsReadVideo => {
                let backend = self.env("LMMS_VIDEO_DECODE_BACKEND")?;
                let d = match backend.unwrap_or("pyav") {
                    "pyav" => Decoder::Pyav,
                    "torchcodec" => Decoder::Torchcodec,
                    _ => return None,
                };
                Some((
                    d,
                    match backend {
                        Some(b) => format!(
                            "the recorder log {at} logs LMMS_VIDEO_DECODE_BACKEND={b}, so lmms-eval's read_video read with {}",
                            d.name()
                        ),
                        None => format!(
                            "the recorder log {at} logs no LMMS_VIDEO_DECODE_BACKEND, so lmms-eval's read_video read with PyAV, its default"
                        ),
                    },
                ))
            }
        }
    }
}

impl RunDecoder {
    /// A run known to decode with `decoder`.
    pub fn known(decoder: Decoder, source: impl Into<String>) -> RunDecoder {
        RunDecoder {
            decode: vec![decoder],
            clamp: None,
            source: source.into(),
            selector: None,
        }
    }

    /// The rule text's part on the decoder: "decoded with decord", "budget clamped with
    /// decord's count, decoded with torchcodec", "decoded with torchcodec or decord".
    pub fn describe(&self) -> String {
        let decode = self
            .decode
            .iter()
            .map(|d| d.name())
            .collect::<Vec<_>>()
            .join(" or ");
        match self.clamp {
            Some(c) => format!(
                "budget clamped with {}'s count, decoded with {decode}",
                c.name()
            ),
            None => format!("decoded with {decode}"),
        }
    }
}

/// An item's video as the rules see it: decord's facts (the item's `num_frames`, `fps`,
/// time window) and the other decoders' counts where they differ.
#[derive(Debug, Clone, Copy)]
pub struct ItemVideo<'a> {
    /// The facts as decord reports them.
    pub decord: &'a VideoFacts,
    /// The other decoders' counts (`items.jsonl` → `decoders`), when they differ.
    pub counts: Option<&'a DecoderCounts>,
    /// The packets the container marks to discard (an MP4 edit list), when any.
    pub discarded: Option<u64>,
}

impl ItemVideo<'_> {
    /// `decoder`'s count of the video (decord's when the item gives none of its own).
    pub fn count(&self, decoder: Decoder) -> DecoderCount {
        match (decoder, self.counts.and_then(|c| c.get(&decoder))) {
            (Decoder::Decord, _) | (_, None) => DecoderCount {
                num_frames: self.decord.num_frames,
                fps: self.decord.fps,
                decodable: None,
            },
            (_, Some(c)) => *c,
        }
    }

    /// The facts `decoder` gives a rule.
    fn facts(&self, decoder: Decoder) -> VideoFacts {
        let c = self.count(decoder);
        VideoFacts {
            num_frames: c.num_frames,
            fps: c.fps.or(self.decord.fps),
            bound: self.decord.bound,
        }
    }

    /// "decord 1050 frames, torchcodec 1017", or the rates when only they differ; empty
    /// when the decoders agree.
    fn counts_text(&self, decoders: &[Decoder]) -> String {
        let counts: Vec<(Decoder, DecoderCount)> =
            decoders.iter().map(|&d| (d, self.count(d))).collect();
        let Some((_, first)) = counts.first() else {
            return String::new();
        };
        if counts.iter().all(|(_, c)| c.agrees(first)) {
            return String::new();
        }
        let frames_differ = counts
            .iter()
            .any(|(_, c)| c.num_frames != first.num_frames || c.decodable != first.decodable);
        counts
            .iter()
            .enumerate()
            .map(|(i, (d, c))| {
                let mut s = if frames_differ {
                    format!("{} {}", d.name(), c.num_frames)
                } else {
                    format!("{} {}", d.name(), show_fps(c.fps))
                };
                if i == 0 {
                    s.push_str(if frames_differ { " frames" } else { " fps" });
                }
                if let Some(k) = c.decodable {
                    s.push_str(&format!(" ({k} decode)"));
                }
                s
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn show_fps(fps: Option<f64>) -> String {
    fps.map_or_else(
        || "no".into(),
        |f| format!("{}", (f * 1000.0).round() / 1000.0),
    )
}

/// The frames a run's rule gives one item, the decoder taken into account.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemFrames {
    /// The indices of the decoder shown.
    pub indices: Vec<u64>,
    /// Why the frames are assumed, when the run's candidate decoders give this video
    /// different frames and the run does not say which decoded.
    pub assumed: Option<String>,
    /// The decoder part of the rule's text, with the decoders' counts where they differ.
    pub note: String,
}

/// The frames `rule` gives `video` under `decoder`: each candidate decoder's count and rate
/// (the budget clamped with the clamp decoder's count; PyAV's indices past its decodable
/// frames dropped), the first candidate's shown; assumed when candidates disagree. Without
/// a decoder (a dataset written before decoders were part of the rules), decord's.
pub fn frames_by_decoder(
    rule: &FrameRule,
    decoder: Option<&RunDecoder>,
    video: &ItemVideo,
) -> Result<ItemFrames, String> {
    let Some(dec) = decoder.filter(|d| !d.decode.is_empty()) else {
        return Ok(ItemFrames {
            indices: rule.indices(video.decord)?,
            assumed: None,
            note: String::new(),
        });
    };
    let clamp = dec.clamp.map(|k| video.count(k).num_frames);
    let read = |d: Decoder| rule.indices_read(&video.facts(d), clamp, video.count(d).decodable);
    let shown = read(dec.decode[0]);
    let differ = dec.decode[1..].iter().any(|&d| read(d) != shown);
    let mut involved: Vec<Decoder> = dec.clamp.into_iter().chain(dec.decode.clone()).collect();
    involved.sort();
    involved.dedup();
    let counts = video.counts_text(&involved);
    let mut note = dec.describe();
    if !counts.is_empty() {
        note.push_str(&format!(" ({counts})"));
    }
    // The decoders disagree on this video and one is taken: say how it is known.
    if dec.decode.len() == 1 && video.counts.is_some_and(decoders_disagree) {
        note.push_str(&format!(": {}", dec.source));
    }
    if dec.decode.contains(&Decoder::Decord) && video.discarded.is_some_and(|n| n > 0) {
        note.push_str(&format!(
            "; the file has an edit list ({} packets discarded): past the cut, decord's index i is not the picture other decoders give at i",
            video.discarded.unwrap_or(0)
        ));
    }
    let assumed = differ.then(|| {
        let all = video.counts_text(&involved);
        format!(
            "{}: the run does not say which decoded ({}); shown: {}",
            if all.is_empty() {
                "the decoders give this video different frames".to_string()
            } else {
                all
            },
            dec.source,
            dec.decode[0].name()
        )
    });
    let indices = shown.map_err(|e| {
        if matches!(
            rule,
            FrameRule::QwenNframes { .. } | FrameRule::QwenFps { .. }
        ) {
            // fetch_video catches any error of its reader and reads the video again with
            // torchvision, which counts the frames that decode (torchvision 0.29 has no
            // io.read_video: there the retry fails too).
            format!(
                "{e}: qwen_vl_utils' {} reader raises here, and fetch_video then retries with torchvision, whose frames are not reproduced (a recorder log records them)",
                dec.decode[0].name()
            )
        } else {
            e
        }
    })?;
    Ok(ItemFrames {
        indices,
        assumed,
        note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::rules::{NframesCap, TorchLinspace};

    #[test]
    fn a_qwen_reader_that_raises_names_the_torchvision_fallback() {
        // lmms-eval 0.7.3's simple qwen3_vl at 1040 frames on the edit-list video: decord's
        // 1050 lets 1040 through, torchcodec's 1017 raises.
        let rule = FrameRule::QwenNframes {
            n: 1040,
            cap: NframesCap::Total,
            linspace: TorchLinspace::Fma,
            resample: None,
        };
        let facts = VideoFacts {
            num_frames: 1050,
            fps: Some(25.0),
            bound: None,
        };
        let counts: DecoderCounts = [(
            Decoder::Torchcodec,
            DecoderCount {
                num_frames: 1017,
                fps: Some(25.0),
                decodable: None,
            },
        )]
        .into();
        let video = ItemVideo {
            decord: &facts,
            counts: Some(&counts),
            discarded: Some(33),
        };
        let dec = RunDecoder {
            decode: vec![Decoder::Torchcodec],
            clamp: Some(Decoder::Decord),
            source: "logged".into(),
            selector: None,
        };
        let e = frames_by_decoder(&rule, Some(&dec), &video).expect_err("past torchcodec's count");
        assert!(e.contains("[2, 1017], but got 1040"), "{e}");
        assert!(e.contains("retries with torchvision"), "{e}");
        let by_decord = RunDecoder {
            decode: vec![Decoder::Decord],
            ..dec
        };
        let f = frames_by_decoder(&rule, Some(&by_decord), &video).expect("decord's 1050");
        assert_eq!(f.indices.len(), 1040);
    }
}
