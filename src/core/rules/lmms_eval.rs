//! lmms-eval's model wrappers: the frame rule of a run from its `config.model`,
//! `config.model_backend`, `config.model_args` and what is known of the lmms-eval version, as
//! each release's own code samples. Every release on PyPI from 0.2.0 to 0.7.3 was run (the id
//! -> class resolution of `models/__init__.py`, the constructor with the run's `model_args`,
//! `generate_until` down to the decoded frames) to make tests/data/harness_vectors.jsonl,
//! which tests/rules.rs checks against [`resolve`] release by release.
//!
//! A version hint names one release (`0.7.2`) or a family (`0.7`, any 0.7.x; the importer's
//! guess from the shape of the samples file). A rule is reproduced when every release the hint
//! allows (and that can have run the configuration at all) samples the same way; otherwise it
//! is assumed, and the reason names the releases that differ.

use super::decoder::{Decoder, RunDecoder, Selector};
use super::{FrameRule, NframesCap, Provenance, Resample, ResampleMode, RunRule, TorchLinspace};
use crate::core::sampling::Policy;

/// The newest lmms-eval release whose code the rules were checked against.
pub const CHECKED_VERSION: &str = "0.7.3";

/// The lmms-eval releases (PyPI) whose code was run to check the rules, oldest first. `0.7`
/// is the release PyPI calls `0.7` (0.7.0).
pub const RELEASES: &[&str] = &[
    "0.2.0",
    "0.2.1",
    "0.2.3",
    "0.2.3.post1",
    "0.2.4",
    "0.3.0",
    "0.3.4",
    "0.3.5",
    "0.4.0",
    "0.5.0",
    "0.6.0",
    "0.6.1",
    "0.7",
    "0.7.1",
    "0.7.2",
    "0.7.3",
];

/// The version families the importer infers from a samples file's shape, with the releases
/// that write that shape: `0.2`, the `{task}.json` logs of 0.2.0 to 0.2.3.post1; `0.3`,
/// `samples_*.jsonl` with `doc` (0.2.4 to 0.3.5); `0.4`, without `doc` (0.4.0 to 0.6.1);
/// `0.7`, with `token_counts` and a flat `filtered_resps` (0.7 to 0.7.3).
pub const FAMILIES: &[(&str, &[&str])] = &[
    ("0.2", &["0.2.0", "0.2.1", "0.2.3", "0.2.3.post1"]),
    ("0.3", &["0.2.4", "0.3.0", "0.3.4", "0.3.5"]),
    ("0.4", &["0.4.0", "0.5.0", "0.6.0", "0.6.1"]),
    ("0.7", &["0.7", "0.7.1", "0.7.2", "0.7.3"]),
];

/// The first release whose results carry `config.model_backend`.
const BACKEND_SINCE: &str = "0.7.3";

/// What a results file says about the run.
#[derive(Debug, Clone, Copy)]
pub struct LmmsRun<'a> {
    /// `config.model`: the wrapper id (`qwen2_5_vl`, `llava_vid`...).
    pub wrapper: &'a str,
    /// `config.model_backend` when present (written from 0.7.3 on): the class the id resolved
    /// to, e.g. `lmms_eval.models.chat.qwen2_5_vl.Qwen2_5_VL (chat)`.
    pub backend: Option<&'a str>,
    /// `config.model_args`, parsed.
    pub model_args: &'a [(String, String)],
    /// What is known of the lmms-eval version, in one of these forms:
    ///
    /// - a release as PyPI names it (`0.7.3`, `0.2.3.post1`; `0.7.0` for the release PyPI
    ///   calls `0.7`): that release's code;
    /// - a family, `0.7`, `0.4`, `0.3` or `0.2`: some release of the family (see [`FAMILIES`]),
    ///   which the importer infers from the samples file's shape when `lmms_eval_version`
    ///   does not name a release (lmms-eval writes `branch@commit` there, `unknown@unknown`
    ///   for a package install);
    /// - anything else, e.g. `main@1a2b3c4d`, or a release newer than the checked ones: not a
    ///   release frameaudit knows, so any checked release;
    /// - `None`: nothing is known, so any checked release.
    ///
    /// The rule is reproduced when every release allowed (that can run the configuration at
    /// all) samples the same way, assumed otherwise.
    pub version: Option<&'a str>,
    /// The task (benchmark) name.
    pub task: &'a str,
}

/// A `model_args` value as lmms-eval's `handle_arg_string` reads it.
#[derive(Debug, Clone, PartialEq)]
enum Arg {
    Bool(bool),
    Num(f64),
    Str(String),
}

fn parse_arg(v: &str) -> Arg {
    if v.eq_ignore_ascii_case("true") {
        Arg::Bool(true)
    } else if v.eq_ignore_ascii_case("false") {
        Arg::Bool(false)
    } else if let Ok(x) = v.trim().parse::<f64>() {
        Arg::Num(x)
    } else {
        Arg::Str(v.to_string())
    }
}

impl LmmsRun<'_> {
    fn arg(&self, key: &str) -> Option<Arg> {
        self.model_args
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| parse_arg(v))
    }

    fn num(&self, key: &str) -> Option<f64> {
        match self.arg(key) {
            Some(Arg::Num(x)) => Some(x),
            _ => None,
        }
    }

    fn truthy(&self, key: &str) -> bool {
        match self.arg(key) {
            Some(Arg::Bool(b)) => b,
            Some(Arg::Num(x)) => x != 0.0,
            Some(Arg::Str(s)) => !s.is_empty(),
            None => false,
        }
    }

    fn text(&self, key: &str) -> Option<String> {
        self.model_args
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }

    fn has(&self, key: &str) -> bool {
        self.model_args.iter().any(|(k, _)| k == key)
    }

    /// The class `config.model_backend` names.
    fn backend_class(&self) -> Option<Class> {
        let b = self.backend?;
        if b.contains("(simple)") || b.contains(".simple.") {
            Some(Class::Simple)
        } else if b.contains("(chat)") || b.contains(".chat.") {
            Some(Class::Chat)
        } else {
            None
        }
    }
}

/// The wrapper class a run used: chat or simple.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Chat,
    Simple,
}

impl Class {
    fn word(self) -> &'static str {
        match self {
            Class::Chat => "chat",
            Class::Simple => "simple",
        }
    }
}

/// A release's position in [`RELEASES`].
fn pos(v: &str) -> usize {
    RELEASES
        .iter()
        .position(|r| *r == v)
        .unwrap_or(RELEASES.len())
}

/// A release as [`RELEASES`] names it (`0.7.0` is `0.7`).
fn release_of(v: &str) -> Option<usize> {
    let v = if v == "0.7.0" { "0.7" } else { v };
    RELEASES.iter().position(|r| *r == v)
}

/// The releases a version hint allows, and how to name them.
struct Allowed {
    /// Positions in [`RELEASES`].
    releases: Vec<usize>,
    /// How the hint is named: "lmms-eval 0.7.3", "lmms-eval 0.7.x".
    label: String,
    /// What the hint is, for the reasons given.
    about: String,
    /// Whether the hint names one release.
    exact: bool,
}

fn allowed(version: Option<&str>) -> Allowed {
    let all = || (0..RELEASES.len()).collect::<Vec<_>>();
    let span = format!("{} to {CHECKED_VERSION}", RELEASES[0]);
    match version {
        None => Allowed {
            releases: all(),
            label: "lmms-eval (version unknown)".into(),
            about: format!(
                "the results do not tell the lmms-eval version, so any release ({span})"
            ),
            exact: false,
        },
        Some(v) => {
            if let Some((f, members)) = FAMILIES.iter().find(|(f, _)| *f == v) {
                return Allowed {
                    releases: members.iter().map(|m| pos(m)).collect(),
                    label: format!("lmms-eval {f}.x"),
                    about: format!(
                        "lmms-eval {f}.x (the family of {}, from the shape of the logs)",
                        join_releases(&members.iter().map(|m| pos(m)).collect::<Vec<_>>())
                    ),
                    exact: false,
                };
            }
            if let Some(r) = release_of(v) {
                return Allowed {
                    releases: vec![r],
                    label: format!("lmms-eval {}", shown(r)),
                    about: format!("lmms-eval {}", shown(r)),
                    exact: true,
                };
            }
            Allowed {
                releases: all(),
                label: format!("lmms-eval {v}"),
                about: format!(
                    "lmms-eval {v}, which is not a release frameaudit checked, so any checked release ({span})"
                ),
                exact: false,
            }
        }
    }
}

/// A release as the reasons name it: `0.7.0` for the release PyPI calls `0.7`, which would
/// read as the family.
fn shown(r: usize) -> &'static str {
    match RELEASES[r] {
        "0.7" => "0.7.0",
        v => v,
    }
}

/// Releases named as runs: "0.7.1–0.7.3", "0.3.4–0.3.5, 0.5.0" when not consecutive.
fn join_releases(rs: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < rs.len() {
        let mut j = i;
        while j + 1 < rs.len() && rs[j + 1] == rs[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            shown(rs[i]).to_string()
        } else {
            format!("{}–{}", shown(rs[i]), shown(rs[j]))
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// What one release does with the run.
#[derive(Debug, Clone, PartialEq)]
enum At {
    /// The release has no wrapper of that id (or no class of the kind `model_backend` names).
    NoWrapper,
    /// The release cannot have written these results: the constructor refuses the
    /// arguments, or every request fails.
    CannotRun(String),
    /// The release runs it in a way frameaudit does not reproduce.
    NotReproduced(String),
    /// The release's rule (`None`: the model sees no frame of the video).
    Rule {
        class: Class,
        class_name: &'static str,
        rule: Option<FrameRule>,
        text: String,
    },
}

/// The frame-budget argument of a wrapper and its constructor default at release `r`.
fn budget_key_at(wrapper: &str, r: usize) -> Option<(&'static str, u64)> {
    Some(match wrapper {
        "qwen2_5_vl" | "qwen3_vl" | "llava_onevision1_5" => ("max_num_frames", 32),
        "qwen2_vl" => ("max_num_frames", 32),
        "llava_vid" if r < pos("0.3.4") => ("max_frames_num", 3),
        "llava_vid" => ("max_frames_num", 20),
        "llava_onevision" => ("max_frames_num", 32),
        // Before 0.3.4 InternVL2 takes no num_frame: 8 segments, whatever model_args say.
        "internvl2" if r < pos("0.3.4") => ("num_frame", 8),
        "internvl2" | "internvl3" | "internvl3_5" => ("num_frame", 32),
        "llava_onevision2" | "gemma3" | "gemma4" => ("max_num_frames", 32),
        "videollama3" => ("max_num_frames", 180),
        _ => return None,
    })
}

/// The frame budget a wrapper uses when `model_args` sets none (its constructor's default),
/// for every wrapper whose rule is reproduced; `None` for the others. When the releases the
/// version allows disagree, the newest one's default (the rule is then assumed).
pub fn default_budget(run: &LmmsRun) -> Option<u64> {
    let a = allowed(run.version);
    let newest = a
        .releases
        .iter()
        .rev()
        .find(|&&r| exists_at(run.wrapper, r))
        .copied()
        .unwrap_or(RELEASES.len() - 1);
    budget_key_at(run.wrapper, newest).map(|(_, d)| d)
}

/// The first release with the wrapper id, and the first with a chat class for it.
fn since(wrapper: &str) -> Option<(&'static str, Option<&'static str>)> {
    Some(match wrapper {
        "qwen2_5_vl" => ("0.3.4", Some("0.4.0")),
        "qwen3_vl" => ("0.6.0", Some("0.6.0")),
        "qwen2_vl" => ("0.2.4", None),
        "llava_onevision1_5" => ("0.5.0", Some("0.6.0")),
        "llava_vid" => ("0.2.3", None),
        "llava_onevision" => ("0.2.1", None),
        "internvl2" => ("0.2.1", None),
        "internvl3" | "internvl3_5" => ("0.6.0", None),
        // Checked from the release `checked_since` names on (0.6.1 to 0.7.1 have neither of
        // the first two); older releases are not said to lack them.
        "llava_onevision2" => ("0.7.2", Some("0.7.2")),
        "gemma4" => ("0.7.3", None),
        "gemma3" | "videollama3" => ("0.2.0", None),
        _ => return None,
    })
}

/// The wrappers checked by tests/data/decoder_vectors.jsonl (their own code run on real
/// videos with each decoder) rather than tests/data/harness_vectors.jsonl.
fn checked_with_decoders(wrapper: &str) -> bool {
    matches!(
        wrapper,
        "llava_onevision2" | "gemma3" | "gemma4" | "videollama3"
    )
}

/// The first release whose code of the wrapper was checked, for the wrappers added with the
/// decoders (issue 40): older releases are not reproduced.
fn checked_since(wrapper: &str) -> Option<&'static str> {
    match wrapper {
        "gemma3" | "videollama3" | "llava_onevision2" | "gemma4" => Some("0.6.1"),
        _ => None,
    }
}

fn exists_at(wrapper: &str, r: usize) -> bool {
    since(wrapper).is_some_and(|(s, _)| r >= pos(s))
}

fn qwen_fps(fps: f64, max_frames: Option<u64>, resample: Option<Resample>) -> FrameRule {
    FrameRule::QwenFps {
        fps,
        min_frames: None,
        max_frames,
        linspace: TorchLinspace::Fma,
        resample,
    }
}

fn qwen_nframes(n: u64, cap: NframesCap, resample: Option<Resample>) -> FrameRule {
    FrameRule::QwenNframes {
        n,
        cap,
        linspace: TorchLinspace::Fma,
        resample,
    }
}

fn resample(n: u64, mode: ResampleMode) -> Option<Resample> {
    Some(Resample { n, mode })
}

fn resample_text(mode: ResampleMode) -> &'static str {
    match mode {
        ResampleMode::UniqueLast => "np.linspace of N over those, unique, last frame added",
        ResampleMode::Unique => "np.linspace of N over those, unique",
        ResampleMode::AppendLast => "np.linspace of N over those with the last frame added",
    }
}

/// qwen_vl_utils' default rate when the wrapper passes neither `fps` nor `nframes`.
const QWEN_DEFAULT_FPS: f64 = 2.0;

/// The wrappers that hand the video to qwen_vl_utils.
fn uses_qwen_vl_utils(wrapper: &str) -> bool {
    matches!(
        wrapper,
        "qwen2_5_vl" | "qwen3_vl" | "qwen2_vl" | "llava_onevision1_5" | "llava_onevision2"
    )
}

/// What release `r` does with the run, `frames` being the importer's budget (used when
/// `model_args` sets the budget; otherwise the release's own default applies).
fn at(run: &LmmsRun, frames: u64, r: usize) -> At {
    let Some((first, chat_since)) = since(run.wrapper) else {
        return At::NotReproduced(format!(
            "lmms-eval wrapper {} is not reproduced by frameaudit",
            run.wrapper
        ));
    };
    if let Some(c) = checked_since(run.wrapper).filter(|c| r < pos(c)) {
        return At::NotReproduced(format!(
            "frameaudit checked lmms-eval's {} from {c} on only",
            run.wrapper
        ));
    }
    if r < pos(first) {
        return At::NoWrapper;
    }
    let has_chat = chat_since.is_some_and(|c| r >= pos(c));
    let class = match run.backend_class() {
        Some(Class::Chat) if !has_chat => return At::NoWrapper,
        Some(c) => c,
        None if has_chat => Class::Chat,
        None => Class::Simple,
    };
    let (key, default) = budget_key_at(run.wrapper, r).unwrap_or(("", 0));
    // InternVL2 before 0.3.4 reads no num_frame: always 8 segments. Without a budget in
    // model_args the release's own default applies, unless the importer's budget is not the
    // default it would have taken (a label saying otherwise).
    let fixed = run.wrapper == "internvl2" && r < pos("0.3.4");
    let given = run.has(key) || Some(frames) != default_budget(run);
    let n = if given && !fixed { frames } else { default };
    let v = RELEASES[r];
    let shown_v = shown(r);
    let fps = run.num("fps");
    let refuse = |arg: &str| {
        At::CannotRun(format!(
            "the constructor of lmms-eval {shown_v}'s {} takes no {arg} (AssertionError: Unexpected kwargs)",
            run.wrapper
        ))
    };
    let rule = |class_name: &'static str, rule: FrameRule, text: String| At::Rule {
        class,
        class_name,
        rule: Some(rule),
        text,
    };
    // qwen_vl_utils at its default 2 fps, then N over those frames.
    let at_2fps_then = |class_name: &'static str, mode: ResampleMode| {
        rule(
            class_name,
            qwen_fps(QWEN_DEFAULT_FPS, None, resample(n, mode)),
            format!("qwen_vl_utils at 2 fps, then {}", resample_text(mode)),
        )
    };
    match run.wrapper {
        "qwen2_5_vl" => {
            let name = "Qwen2_5_VL";
            if v == "0.7" && fps.is_some() {
                return refuse("fps");
            }
            if run.truthy("use_custom_video_loader") {
                return if r >= pos("0.7") {
                    refuse("use_custom_video_loader")
                } else {
                    At::NotReproduced(
                        "use_custom_video_loader reads the video with the wrapper's own loader"
                            .into(),
                    )
                };
            }
            match class {
                Class::Chat if v == "0.7" => At::CannotRun(
                    "lmms-eval 0.7.0's chat Qwen2_5_VL reads self.fps, which its constructor never sets: every request fails (AttributeError)".into(),
                ),
                Class::Chat if r < pos("0.5.0") => at_2fps_then(name, ResampleMode::AppendLast),
                Class::Chat if r < pos("0.6.0") => match fps {
                    Some(f) => rule(
                        name,
                        qwen_fps(f, None, resample(n, ResampleMode::AppendLast)),
                        format!(
                            "qwen_vl_utils at fps={f}, then {}",
                            resample_text(ResampleMode::AppendLast)
                        ),
                    ),
                    None => rule(
                        name,
                        qwen_nframes(n, NframesCap::None, resample(n, ResampleMode::AppendLast)),
                        format!(
                            "qwen_vl_utils nframes = N, then {}",
                            resample_text(ResampleMode::AppendLast)
                        ),
                    ),
                },
                Class::Chat => match fps {
                    Some(f) => rule(
                        name,
                        qwen_fps(f, None, None),
                        format!("qwen_vl_utils at fps={f} (max_num_frames not used)"),
                    ),
                    None => rule(
                        name,
                        qwen_nframes(n, NframesCap::EvenMin2, None),
                        "nframes = max(2, min(N, T)//2*2), torch.linspace(0, T-1, nframes).round()"
                            .into(),
                    ),
                },
                Class::Simple => {
                    let mode = if r >= pos("0.5.0") {
                        ResampleMode::UniqueLast
                    } else {
                        ResampleMode::AppendLast
                    };
                    at_2fps_then(name, mode)
                }
            }
        }
        "qwen3_vl" => {
            let name = "Qwen3_VL";
            let total_pixels = run.has("total_pixels");
            if total_pixels && r < pos("0.7.2") {
                return refuse("total_pixels");
            }
            if v == "0.7" && fps.is_some() {
                return refuse("fps");
            }
            // 0.7.2 on: _build_video_kwargs of the simple class, for both classes.
            let build = |cap: NframesCap, cap_text: &str| match fps {
                Some(f) => rule(
                    name,
                    qwen_fps(f, Some(n), None),
                    format!("qwen_vl_utils at fps={f} with max_frames = N"),
                ),
                None if total_pixels => rule(
                    name,
                    qwen_fps(QWEN_DEFAULT_FPS, Some(n), None),
                    "qwen_vl_utils at 2 fps with max_frames = N (total_pixels set)".into(),
                ),
                None => rule(name, qwen_nframes(n, cap, None), cap_text.to_string()),
            };
            match class {
                Class::Chat if v == "0.7" => At::CannotRun(
                    "lmms-eval 0.7.0's chat Qwen3_VL reads self.fps, which its constructor never sets: every request fails (AttributeError)".into(),
                ),
                Class::Chat => build(
                    NframesCap::None,
                    "qwen_vl_utils nframes = N (an error past the video's length)",
                ),
                Class::Simple if r < pos("0.7.2") => rule(
                    name,
                    qwen_fps(
                        QWEN_DEFAULT_FPS,
                        None,
                        resample(n, ResampleMode::UniqueLast),
                    ),
                    format!(
                        "qwen_vl_utils at 2 fps (fps not passed), then {}",
                        resample_text(ResampleMode::UniqueLast)
                    ),
                ),
                Class::Simple if v == "0.7.2" => build(
                    NframesCap::None,
                    "qwen_vl_utils nframes = N (an error past the video's length)",
                ),
                Class::Simple => build(NframesCap::Total, "qwen_vl_utils nframes = min(N, T)"),
            }
        }
        "qwen2_vl" => {
            let name = "Qwen2_VL";
            if fps.is_some() {
                return refuse("fps");
            }
            if r < pos("0.3.0") {
                if run.has("max_num_frames") {
                    return refuse("max_num_frames");
                }
                return rule(
                    name,
                    qwen_fps(QWEN_DEFAULT_FPS, None, None),
                    "qwen_vl_utils at 2 fps (no frame budget)".into(),
                );
            }
            let mode = if r >= pos("0.3.4") {
                ResampleMode::Unique
            } else {
                ResampleMode::AppendLast
            };
            at_2fps_then(name, mode)
        }
        "llava_onevision1_5" => {
            let name = "Llava_OneVision1_5";
            let last = ResampleMode::AppendLast;
            match class {
                Class::Chat if v == "0.7" => At::CannotRun(
                    "lmms-eval 0.7.0's chat Llava_OneVision1_5 reads self.fps, which nothing sets: every request fails (AttributeError)".into(),
                ),
                // 0.7.1 on, the class attribute fps = None: the constructor swallows fps.
                Class::Chat if r >= pos("0.7.1") || fps.is_none() => rule(
                    name,
                    qwen_nframes(n, NframesCap::None, resample(n, last)),
                    format!(
                        "qwen_vl_utils nframes = N{}, then {}",
                        if fps.is_some() { " (fps not used)" } else { "" },
                        resample_text(last)
                    ),
                ),
                Class::Chat => {
                    let f = fps.unwrap_or(QWEN_DEFAULT_FPS);
                    rule(
                        name,
                        qwen_fps(f, Some(n), resample(n, last)),
                        format!(
                            "qwen_vl_utils at fps={f} with max_frames = N, then {}",
                            resample_text(last)
                        ),
                    )
                }
                // The simple class passes no frame setting (fps is ignored, with a warning).
                Class::Simple => at_2fps_then(name, last),
            }
        }
        "llava_vid" => {
            let name = "LlavaVid";
            let backend = run.text("video_decode_backend");
            let default_backend = if r < pos("0.3.0") { "pyav" } else { "decord" };
            if r < pos("0.3.0") {
                for a in ["video_fps", "force_sample"] {
                    if run.has(a) {
                        return refuse(a);
                    }
                }
            }
            match backend.as_deref().unwrap_or(default_backend) {
                "decord" if r < pos("0.3.0") => rule(
                    name,
                    FrameRule::from_policy(&Policy::Linspace, n),
                    "np.linspace(0, T-1, N, dtype=int)".into(),
                ),
                "decord" if n == 0 => At::Rule {
                    class,
                    class_name: name,
                    rule: None,
                    text: "max_frames_num=0: load_video returns one array where generate_until unpacks three, so every video fails to load and the model is told so".into(),
                },
                "decord" => {
                    // `int(video_fps)` of the parsed argument.
                    let rate = run.num("video_fps").unwrap_or(1.0).trunc();
                    let force = run.truthy("force_sample");
                    rule(
                        name,
                        FrameRule::LlavaStride {
                            n,
                            rate,
                            force_sample: force,
                        },
                        if force {
                            "np.linspace(0, T-1, N) (force_sample)".into()
                        } else {
                            format!(
                                "1 frame per round(fps/{rate}) frames, np.linspace when more than max_frames_num"
                            )
                        },
                    )
                }
                "pyav" if r >= pos("0.3.0") => At::Rule {
                    class,
                    class_name: name,
                    rule: None,
                    text: "video_decode_backend=pyav calls the PyAV reader with a force_sample argument it does not take, so every video fails to load and the model is told so".into(),
                },
                "pyav" => At::NotReproduced(
                    "video_decode_backend=pyav (the default before 0.3.0) reads the video with PyAV, whose frame count frameaudit does not reproduce".into(),
                ),
                other => At::NotReproduced(format!("video_decode_backend={other}")),
            }
        }
        "llava_onevision" => match run.text("video_decode_backend").as_deref() {
            None | Some("decord") => rule(
                "Llava_OneVision",
                FrameRule::from_policy(&Policy::Linspace, n),
                "np.linspace(0, T-1, N, dtype=int)".into(),
            ),
            Some(other) => At::NotReproduced(format!(
                "video_decode_backend={other} reads the video with another reader"
            )),
        },
        "llava_onevision2" => {
            let name = "Llava_OneVision2";
            if class == Class::Simple {
                return At::NoWrapper;
            }
            // `_as_bool`: 1, true, yes, y, on.
            let codec = run.text("use_codec").is_some_and(|v| {
                matches!(
                    v.trim().to_lowercase().as_str(),
                    "1" | "true" | "yes" | "y" | "on"
                )
            });
            if codec {
                return At::NotReproduced(
                    "use_codec hands the video to the checkpoint's own processor (video_backend=\"codec\"), whose code is not in lmms-eval".into(),
                );
            }
            // `int(fixed_num_frames) if fixed_num_frames else None`.
            if run.num("fixed_num_frames").is_some_and(|k| k != 0.0) {
                return rule(
                    name,
                    qwen_nframes(n, NframesCap::Total, None),
                    "qwen_vl_utils nframes = min(fixed_num_frames, cv2's frame count)".into(),
                );
            }
            let f = fps.unwrap_or(1.0);
            rule(
                name,
                qwen_fps(f, Some(n), None),
                format!("qwen_vl_utils at fps={f} with max_frames = N"),
            )
        }
        "gemma3" if r < pos("0.7.3") => At::NotReproduced(format!(
            "lmms-eval {shown_v}'s gemma3 hands the video to the model's processor, whose decoding frameaudit does not reproduce"
        )),
        "gemma3" => rule(
            "Gemma3",
            FrameRule::LinspaceUpTo { n },
            "read_video: np.linspace(0, T-1, min(N, T), dtype=int)".into(),
        ),
        "gemma4" => rule(
            "Gemma4",
            FrameRule::LinspaceUpTo { n },
            "_sample_video_frames: np.linspace(0, T-1, min(N, T), dtype=int)".into(),
        ),
        "videollama3" if !run.truthy("use_custom_video_loader") => At::NotReproduced(
            "without use_custom_video_loader=True the model's own processor decodes the video (fps 1, max_frames = max_num_frames), whose code is not in lmms-eval".into(),
        ),
        "videollama3" => rule(
            "VideoLLaMA3",
            FrameRule::FpsMiddles {
                rate: 1.0,
                max_frames: 180,
            },
            "read_video_custom: the middle frame of each second and the last frame, 180 at most (max_num_frames is not passed)".into(),
        ),
        "internvl2" | "internvl3" | "internvl3_5" => {
            let name = match run.wrapper {
                "internvl2" => "InternVL2",
                "internvl3" => "InternVL3",
                _ => "InternVL3_5",
            };
            match run.text("modality").as_deref() {
                None | Some("video") => {}
                Some(m) => {
                    return At::CannotRun(format!(
                        "with modality={m} the wrapper reads the video as an image and fails"
                    ));
                }
            }
            let text = if r < pos("0.3.4") && run.wrapper == "internvl2" {
                "get_index: middles of 8 equal segments (num_segments fixed at 8; num_frame is not read), ±100000 s window"
            } else {
                "get_index: middles of N equal segments (±100000 s window, no bound)"
            };
            rule(name, FrameRule::GetIndex { n, bounded: false }, text.into())
        }
        _ => At::NotReproduced(format!(
            "lmms-eval wrapper {} is not reproduced by frameaudit",
            run.wrapper
        )),
    }
}

/// The frame rule of a run with `frames` frames (`frames` is the budget the importer read
/// from `model_args`, or [`default_budget`]; when `model_args` set no budget and `frames` is
/// that default, each release's own default is used).
pub fn resolve(run: &LmmsRun, frames: u64) -> RunRule {
    let a = allowed(run.version);
    let mut releases = a.releases.clone();
    let mut notes: Vec<String> = Vec::new();
    // model_backend is written from 0.7.3 on: older releases cannot have written these results.
    if run.backend.is_some() && !a.exact {
        let newer: Vec<usize> = releases
            .iter()
            .copied()
            .filter(|&r| r >= pos(BACKEND_SINCE))
            .collect();
        if newer.is_empty() {
            notes.push(format!(
                "the results carry model_backend, which lmms-eval writes from {BACKEND_SINCE} on, not in these releases; the class it names is taken"
            ));
        } else if newer.len() < releases.len() {
            notes.push(format!(
                "the results carry model_backend, which lmms-eval writes from {BACKEND_SINCE} on"
            ));
            releases = newer;
        }
    }
    let outcomes: Vec<(usize, At)> = releases.iter().map(|&r| (r, at(run, frames, r))).collect();
    let fallback = |why: String, name_detail: &str| RunRule {
        rule: Some(FrameRule::from_policy(&Policy::Linspace, frames)),
        provenance: Provenance::Assumed,
        name: format!(
            "{} {}{name_detail}: np.linspace with {frames} frames (assumed)",
            a.label, run.wrapper
        ),
        why,
        frame_files: None,
        decoder: None,
    };
    // Releases that cannot have written the results.
    let mut missing = Vec::new();
    let mut cannot: Vec<(usize, String)> = Vec::new();
    let mut not_reproduced: Vec<(usize, String)> = Vec::new();
    let mut rules: Vec<(usize, Class, &'static str, Option<FrameRule>, String)> = Vec::new();
    for (r, o) in outcomes {
        match o {
            At::NoWrapper => missing.push(r),
            At::CannotRun(why) => cannot.push((r, why)),
            At::NotReproduced(why) => not_reproduced.push((r, why)),
            At::Rule {
                class,
                class_name,
                rule,
                text,
            } => rules.push((r, class, class_name, rule, text)),
        }
    }
    let class_hint = run
        .backend_class()
        .map(|c| format!(" {} class", c.word()))
        .unwrap_or_default();
    if let Some((_, why)) = not_reproduced.last() {
        let which = not_reproduced.iter().map(|x| x.0).collect::<Vec<_>>();
        return fallback(
            if a.exact {
                format!("{}: {why}", a.about)
            } else {
                format!("{}: in {}, {why}", a.about, join_releases(&which))
            },
            &class_hint,
        );
    }
    if rules.is_empty() {
        let mut reasons = Vec::new();
        if !missing.is_empty() {
            reasons.push(if a.exact {
                format!("it has no wrapper {}{class_hint}", run.wrapper)
            } else {
                format!(
                    "{} has no wrapper {}{class_hint}",
                    join_releases(&missing),
                    run.wrapper
                )
            });
        }
        for (r, w) in &cannot {
            reasons.push(if a.exact {
                w.clone()
            } else {
                format!("{}: {w}", shown(*r))
            });
        }
        let subject = if a.exact {
            "it"
        } else {
            "any of these releases"
        };
        return fallback(
            format!(
                "{}: {}; so the results cannot come from {subject}",
                a.about,
                reasons.join("; ")
            ),
            &class_hint,
        );
    }
    // The releases that ran it, grouped by rule.
    let mut groups: Vec<(Option<FrameRule>, Vec<usize>)> = Vec::new();
    for (r, _, _, rule, _) in &rules {
        match groups.iter_mut().find(|(g, _)| g == rule) {
            Some((_, rs)) => rs.push(*r),
            None => groups.push((rule.clone(), vec![*r])),
        }
    }
    let (newest, class, class_name, rule, text) = rules.last().cloned().expect("a rule");
    let ran: Vec<usize> = rules.iter().map(|x| x.0).collect();
    let mut excluded = Vec::new();
    if !missing.is_empty() {
        excluded.push(format!(
            "{} has no {}{}",
            join_releases(&missing),
            run.wrapper,
            class_hint
        ));
    }
    for (r, w) in &cannot {
        excluded.push(format!("{} cannot have run it ({w})", shown(*r)));
    }
    let name = format!(
        "{} {} ({} class {class_name}): {text}{}",
        a.label,
        run.wrapper,
        class.word(),
        qwen_note(run.wrapper, &rule)
    );
    let backend_note = if run.backend_class().is_none()
        && since(run.wrapper).is_some_and(|(_, c)| c.is_some())
    {
        "; without model_backend the chat class is taken, as lmms-eval picks it unless --force_simple"
    } else {
        ""
    };
    let mut context = notes;
    if run.wrapper.starts_with("internvl") && !run.has("modality") {
        context.push(
            "model_args do not set modality=video, without which the wrapper reads a video as an image and fails: the results imply the video path".into(),
        );
    }
    context.extend(excluded);
    let context = if context.is_empty() {
        String::new()
    } else {
        format!("; {}", context.join("; "))
    };
    let qvu = qwen_vl_utils_note(run.wrapper, &rule, &ran);
    if groups.len() == 1 {
        let agree = if a.exact {
            format!("checked against {} code", a.about)
        } else if ran.len() == 1 {
            format!(
                "{}: checked against the code of {}, the only one that can have written these results",
                a.about,
                shown(ran[0])
            )
        } else {
            format!(
                "{}: checked against the code of each, {} agree",
                a.about,
                join_releases(&ran)
            )
        };
        let what = if rule.is_none() {
            ": the model saw no frame of the video"
        } else if checked_with_decoders(run.wrapper) {
            ", tests/data/decoder_vectors.jsonl"
        } else {
            ", tests/data/harness_vectors.jsonl"
        };
        return RunRule {
            decoder: run_decoder(run, &rule, &ran),
            rule,
            provenance: Provenance::Reproduced,
            name,
            why: format!("{agree}{what}{context}{backend_note}{qvu}"),
            frame_files: None,
        };
    }
    let differ = groups
        .iter()
        .map(|(g, rs)| {
            let what = g
                .as_ref()
                .map_or_else(|| "no frame".to_string(), FrameRule::describe);
            format!("{}: {what}", join_releases(rs))
        })
        .collect::<Vec<_>>()
        .join("; ");
    RunRule {
        decoder: run_decoder(run, &rule, &ran),
        rule: rule.or_else(|| Some(FrameRule::from_policy(&Policy::Linspace, frames))),
        provenance: Provenance::Assumed,
        name: format!("{name} (assumed: the releases differ)"),
        why: format!(
            "{}: the releases sample differently ({differ}); the results do not say which ran, so the rule of {} is assumed{context}{backend_note}{qvu}",
            a.about,
            shown(newest)
        ),
        frame_files: None,
    }
}

/// Which decoders the frames of a run depend on. qwen_vl_utils reads with torchcodec
/// whenever it is installed, else decord (qwen_vl_utils 0.0.14 `get_video_reader_backend`),
/// and lmms-eval's results record neither the packages nor `FORCE_QWENVL_VIDEO_READER`; the
/// other reproduced wrappers read with decord themselves.
fn run_decoder(run: &LmmsRun, rule: &Option<FrameRule>, ran: &[usize]) -> Option<RunDecoder> {
    let rule = rule.as_ref()?;
    match run.wrapper {
        "gemma3" => {
            return Some(RunDecoder {
                decode: vec![Decoder::Pyav, Decoder::Torchcodec],
                clamp: None,
                source: "lmms-eval's read_video decodes with PyAV unless LMMS_VIDEO_DECODE_BACKEND says torchcodec, and the results do not record it".into(),
                selector: Some(Selector::LmmsReadVideo),
            });
        }
        "gemma4" => {
            return Some(RunDecoder::known(
                Decoder::Torchcodec,
                "transformers' fetch_videos reads gemma4's videos with torchcodec (exact mode) whenever it is usable",
            ));
        }
        w if !uses_qwen_vl_utils(w) => {
            return Some(RunDecoder::known(
                Decoder::Decord,
                format!("lmms-eval's {} reads the video with decord", run.wrapper),
            ));
        }
        _ => {}
    }
    // The chat qwen2_5_vl (0.6 on) and the simple qwen3_vl (0.7.3) clamp the budget with
    // decord's `len(VideoReader)` whatever reader qwen_vl_utils then picks; llava_onevision2's
    // fixed_num_frames with OpenCV's frame count.
    let clamp = match rule {
        FrameRule::QwenNframes {
            cap: NframesCap::EvenMin2 | NframesCap::Total,
            ..
        } if run.wrapper == "llava_onevision2" => Some(Decoder::Cv2),
        FrameRule::QwenNframes {
            cap: NframesCap::EvenMin2 | NframesCap::Total,
            ..
        } => Some(Decoder::Decord),
        _ => None,
    };
    let (decode, source) = if ran.iter().all(|&r| r >= pos("0.7")) {
        (
            vec![Decoder::Torchcodec, Decoder::Decord],
            "lmms-eval 0.7 installs torchcodec with its [video] extra and decord with [video-legacy], and qwen_vl_utils reads with torchcodec whenever it is installed; the results record neither",
        )
    } else {
        (
            vec![Decoder::Decord, Decoder::Torchcodec],
            "qwen_vl_utils reads with torchcodec whenever it is installed, else with decord; the results do not say which was",
        )
    };
    Some(RunDecoder {
        decode,
        clamp,
        source: source.into(),
        selector: Some(Selector::QwenVlUtils),
    })
}

/// The qwen_vl_utils releases a qwen rule holds for, for the rule's name.
fn qwen_note(wrapper: &str, rule: &Option<FrameRule>) -> &'static str {
    if !uses_qwen_vl_utils(wrapper) {
        return "";
    }
    super::qwen_vl_utils_releases(rule)
}

/// What the results leave open about qwen_vl_utils.
fn qwen_vl_utils_note(wrapper: &str, rule: &Option<FrameRule>, ran: &[usize]) -> String {
    if !uses_qwen_vl_utils(wrapper) || rule.is_none() {
        return String::new();
    }
    let which = super::qwen_vl_utils_why(rule);
    if ran.iter().all(|&r| r >= pos("0.5.0")) {
        format!(
            "; {which}; lmms-eval 0.5.0 and later require qwen-vl-utils>=0.0.14 (0.0.14 is the newest release checked), but the results do not say which ran"
        )
    } else {
        format!("; {which}; the results do not say which qwen_vl_utils ran")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run<'a>(wrapper: &'a str, args: &'a [(String, String)]) -> LmmsRun<'a> {
        LmmsRun {
            wrapper,
            backend: None,
            model_args: args,
            version: None,
            task: "videomme",
        }
    }

    #[test]
    fn versions_and_families() {
        assert_eq!(release_of("0.7.3"), Some(15));
        assert_eq!(release_of("0.7.0"), release_of("0.7"));
        assert_eq!(release_of("unknown@unknown"), None);
        assert_eq!(join_releases(&[12, 13, 14, 15]), "0.7.0–0.7.3");
        assert_eq!(join_releases(&[6, 7, 9]), "0.3.4–0.3.5, 0.5.0");
        let fam = allowed(Some("0.7"));
        assert!(!fam.exact && fam.releases == vec![12, 13, 14, 15]);
        assert!(allowed(Some("0.7.0")).exact);
        assert_eq!(
            allowed(Some("main@1a2b3c4d")).releases.len(),
            RELEASES.len()
        );
        for (_, members) in FAMILIES {
            assert!(members.iter().all(|m| release_of(m).is_some()));
        }
    }

    #[test]
    fn releases_in_order() {
        assert_eq!(RELEASES.last(), Some(&CHECKED_VERSION));
        assert!(pos(BACKEND_SINCE) < RELEASES.len());
        // Each family's releases are consecutive and the families do not overlap.
        let mut seen = std::collections::BTreeSet::new();
        for (_, members) in FAMILIES {
            let rs: Vec<usize> = members.iter().map(|m| pos(m)).collect();
            assert!(rs.windows(2).all(|w| w[1] == w[0] + 1), "{members:?}");
            assert!(rs.iter().all(|r| seen.insert(*r)));
        }
        assert_eq!(seen.len(), RELEASES.len());
    }

    #[test]
    fn args_read_as_lmms_eval_reads_them() {
        let args = vec![
            ("fps".to_string(), "1".to_string()),
            ("force_sample".to_string(), "True".to_string()),
        ];
        let r = run("qwen2_5_vl", &args);
        assert_eq!(r.num("fps"), Some(1.0));
        assert!(r.truthy("force_sample"));
        assert!(!r.truthy("absent"));
    }

    #[test]
    fn unknown_wrapper_is_assumed() {
        let r = resolve(&run("some_model", &[]), 8);
        assert_eq!(r.provenance, Provenance::Assumed);
        assert!(r.why.contains("not reproduced"), "{}", r.why);
        assert_eq!(default_budget(&run("some_model", &[])), None);
        assert_eq!(default_budget(&run("llava_vid", &[])), Some(20));
    }

    #[test]
    fn the_wrappers_checked_from_0_6_1_on() {
        let args = vec![("fixed_num_frames".to_string(), "16".to_string())];
        // The 0.7 family: 0.7.0 and 0.7.1 have no llava_onevision2, 0.7.2 and 0.7.3 agree.
        let r = resolve(
            &LmmsRun {
                version: Some("0.7"),
                ..run("llava_onevision2", &args)
            },
            16,
        );
        assert_eq!(r.provenance, Provenance::Reproduced, "{}", r.why);
        assert!(
            r.why.contains("0.7.0–0.7.1 has no llava_onevision2"),
            "{}",
            r.why
        );
        assert_eq!(r.decoder.as_ref().and_then(|d| d.clamp), Some(Decoder::Cv2));
        // Any release: the ones before 0.6.1 were not checked.
        let r = resolve(&run("llava_onevision2", &args), 16);
        assert_eq!(r.provenance, Provenance::Assumed, "{}", r.why);
        assert!(r.why.contains("from 0.6.1 on only"), "{}", r.why);
        // gemma3 before 0.7.3 hands the video to the processor.
        let r = resolve(
            &LmmsRun {
                version: Some("0.7.2"),
                ..run("gemma3", &[])
            },
            32,
        );
        assert_eq!(r.provenance, Provenance::Assumed, "{}", r.why);
        assert!(r.why.contains("processor"), "{}", r.why);
        assert_eq!(default_budget(&run("videollama3", &[])), Some(180));
    }
}
