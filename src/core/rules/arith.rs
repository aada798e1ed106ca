//! The harnesses' own sampling arithmetic, step for step: qwen_vl_utils' frame count and
//! torch's float32 `linspace`, LLaVA's one-frame-a-second stride, InternVL's and MVBench's
//! `get_index`. Each function names the harness code it mirrors; [`super::FrameRule`] composes them.

use crate::core::sampling::{self, MAX_INDICES};

/// qwen_vl_utils' `FRAME_FACTOR`: frame counts are multiples of 2.
const FRAME_FACTOR: u64 = 2;
/// qwen_vl_utils' `FPS_MIN_FRAMES`.
pub const QWEN_FPS_MIN_FRAMES: u64 = 4;
/// qwen_vl_utils' `FPS_MAX_FRAMES`.
pub const QWEN_FPS_MAX_FRAMES: u64 = 768;
/// torch parallelises `linspace` above this many elements (`at::internal::GRAIN_SIZE`), and
/// the split depends on the thread count, so longer ranges are refused rather than guessed.
const TORCH_GRAIN_SIZE: u64 = 32768;

/// How torch's CPU `linspace` kernel was compiled: its two-sided formula
/// `start + step*i` (first half) / `end - step*(steps-1-i)` (second half) is contracted into one
/// fused multiply-add in the AVX2 and AVX512 kernels, and not in the DEFAULT one
/// (`ATEN_CPU_CAPABILITY=default`, or a CPU without AVX2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TorchLinspace {
    /// One rounding per element (`fmaf`): torch on an AVX2/AVX512 CPU, the usual case.
    #[default]
    Fma,
    /// A rounded product, then a rounded sum: torch's DEFAULT CPU capability.
    Plain,
}

/// Python's `round(x)` on a float: half to even.
fn py_round(x: f64) -> f64 {
    x.round_ties_even()
}

/// qwen_vl_utils' `round_by_factor(n, 2)`: `round(n / 2) * 2`, Python's round (half to even),
/// so an odd request of 1 gives 0, 3 gives 4, 5 gives 4.
pub fn round_by_factor(n: u64) -> u64 {
    (py_round(n as f64 / FRAME_FACTOR as f64) as u64) * FRAME_FACTOR
}

/// qwen_vl_utils' `floor_by_factor(x, 2)`.
fn floor_by_factor(x: f64) -> f64 {
    (x / FRAME_FACTOR as f64).floor() * FRAME_FACTOR as f64
}

/// qwen_vl_utils' `ceil_by_factor(x, 2)`.
fn ceil_by_factor(x: f64) -> f64 {
    (x / FRAME_FACTOR as f64).ceil() * FRAME_FACTOR as f64
}

/// The checks `calculate_video_frame_range` makes before anything else (the whole video, no
/// `video_start`/`video_end`). A missing frame rate is not checked: the `nframes` path does
/// not use it otherwise.
pub fn qwen_check_video(t: u64, video_fps: Option<f64>) -> Result<(), String> {
    if let Some(f) = video_fps
        && (f.is_nan() || f <= 0.0)
    {
        return Err("qwen_vl_utils: video_fps must be a positive number".into());
    }
    if t == 0 {
        return Err("qwen_vl_utils: total_frames must be a positive integer".into());
    }
    Ok(())
}

/// The final check of qwen_vl_utils' `smart_nframes`.
fn qwen_interval(nframes: u64, t: u64) -> Result<u64, String> {
    if nframes >= FRAME_FACTOR && nframes <= t {
        Ok(nframes)
    } else {
        Err(format!(
            "qwen_vl_utils: nframes should in interval [{FRAME_FACTOR}, {t}], but got {nframes}."
        ))
    }
}

/// `smart_nframes` given `nframes`: rounded to a multiple of 2, then checked against the video.
pub fn qwen_smart_nframes(requested: u64, t: u64) -> Result<u64, String> {
    qwen_interval(round_by_factor(requested), t)
}

/// `smart_nframes` given `fps` (with optional `min_frames` / `max_frames`): the video's
/// duration times `fps`, clamped to `[min_frames, max_frames]` and to the video, floored to a
/// multiple of 2, each step in binary64 as Python computes it.
pub fn qwen_smart_nframes_fps(
    t: u64,
    video_fps: f64,
    fps: f64,
    min_frames: Option<u64>,
    max_frames: Option<u64>,
) -> Result<u64, String> {
    let min_frames = ceil_by_factor(min_frames.unwrap_or(QWEN_FPS_MIN_FRAMES) as f64);
    let max_frames = floor_by_factor(max_frames.unwrap_or(QWEN_FPS_MAX_FRAMES.min(t)) as f64);
    let nframes = t as f64 / video_fps * fps;
    let nframes = nframes.max(min_frames).min(max_frames).min(t as f64);
    let nframes = floor_by_factor(nframes);
    // Python would take the float as it is; a negative or absurd count fails the interval.
    if nframes.is_nan() || nframes < 0.0 || nframes > MAX_INDICES as f64 {
        return Err(format!(
            "qwen_vl_utils: nframes should in interval [{FRAME_FACTOR}, {t}], but got {nframes}."
        ));
    }
    qwen_interval(nframes as u64, t)
}

/// `torch.linspace(start, end, steps)` in float32 on the CPU, then `.round().long()`: the
/// kernel's step `(end - start) / (steps - 1)` in float32, the first half counted up from
/// `start`, the second half down from `end`, each rounded as `flavour` says; `round` is half to
/// even.
pub fn torch_linspace_round(
    start: u64,
    end: u64,
    steps: u64,
    flavour: TorchLinspace,
) -> Result<Vec<u64>, String> {
    if steps > TORCH_GRAIN_SIZE {
        return Err(format!(
            "torch.linspace with {steps} steps is split across threads, which frameaudit does not reproduce"
        ));
    }
    if steps == 0 {
        return Ok(Vec::new());
    }
    let s = start as f32;
    let e = end as f32;
    if steps == 1 {
        return Ok(vec![s.round_ties_even() as u64]);
    }
    let step = (e - s) / (steps - 1) as f32;
    let halfway = steps / 2;
    Ok((0..steps)
        .map(|i| {
            let v = if i < halfway {
                match flavour {
                    TorchLinspace::Fma => step.mul_add(i as f32, s),
                    TorchLinspace::Plain => s + step * i as f32,
                }
            } else {
                let k = (steps - i - 1) as f32;
                match flavour {
                    TorchLinspace::Fma => (-step).mul_add(k, e),
                    TorchLinspace::Plain => e - step * k,
                }
            };
            // Non-negative by construction (start <= end), so the cast is exact.
            v.round_ties_even() as u64
        })
        .collect())
}

/// How a harness picks from the frames qwen_vl_utils returned (`np.linspace(0, m-1, N,
/// dtype=int)` over the `m` decoded frames, then its own clean-up).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResampleMode {
    /// `np.unique`, add `m-1` when missing, `np.unique` again (lmms-eval qwen2_5_vl simple,
    /// 0.5 and later).
    UniqueLast,
    /// `np.unique` only (lmms-eval qwen2_vl simple).
    Unique,
    /// Add `m-1` when missing, duplicates kept (lmms-eval llava_onevision1_5, qwen2_5_vl 0.3
    /// to 0.5 chat and 0.3 to 0.4 simple).
    AppendLast,
}

/// The positions (into the `m` decoded frames) a harness keeps with `mode` and `n`.
pub fn resample_positions(m: u64, n: u64, mode: ResampleMode) -> Vec<u64> {
    // np.linspace(0, m-1, n, dtype=int): m >= 2 here (qwen_vl_utils returns at least 2).
    let mut pos = sampling::linspace(m, n);
    let last = m.saturating_sub(1);
    match mode {
        ResampleMode::UniqueLast => {
            pos = sampling::frame_set(pos);
            if !pos.contains(&last) {
                pos.push(last);
                pos = sampling::frame_set(pos);
            }
        }
        ResampleMode::Unique => pos = sampling::frame_set(pos),
        ResampleMode::AppendLast => {
            if !pos.contains(&last) {
                pos.push(last);
            }
        }
    }
    pos
}

/// LLaVA's `load_video(video_path, max_frames_num, fps, force_sample)` (lmms-eval llava_vid,
/// VLMEvalKit LLaVA_OneVision): a budget of 0 reads nothing; otherwise one frame every
/// `round(avg_fps / fps)` frames, replaced by `np.linspace(0, T-1, N, dtype=int)` when that
/// gives more than `N` frames or `force_sample` is set.
pub fn llava_load_video(
    t: u64,
    video_fps: f64,
    n: u64,
    rate: f64,
    force_sample: bool,
) -> Result<Vec<u64>, String> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if n > MAX_INDICES {
        return Err(format!(
            "a budget of {n} frames is more than the {MAX_INDICES} frames a sample may hold"
        ));
    }
    if t == 0 {
        return Err("decord cannot read a video without frames".into());
    }
    if rate == 0.0 {
        return Err("llava load_video: round(avg_fps / fps) divides by a rate of 0".into());
    }
    let stride = py_round(video_fps / rate);
    if stride.is_nan() || stride < 1.0 {
        return Err(format!(
            "llava load_video: range() arg 3 must not be zero (round({video_fps} / {rate}) = {stride})"
        ));
    }
    let stride = stride as u64;
    let count = t.div_ceil(stride);
    if count > n || force_sample {
        return Ok(sampling::linspace(t, n));
    }
    Ok((0..count).map(|k| k * stride).collect())
}

/// `np.linspace(0, T-1, min(n, T), dtype=int)`: lmms-eval's `read_video` (PyAV over the
/// header's count, torchcodec over its own, then `np.unique`, which changes nothing since
/// the count is at most T) and gemma4's `_sample_video_frames` over torchcodec's count.
pub fn linspace_up_to(t: u64, n: u64) -> Result<Vec<u64>, String> {
    if t == 0 {
        return Err("the reader counts no frame in the video".into());
    }
    if n > MAX_INDICES {
        return Err(format!(
            "a budget of {n} frames is more than the {MAX_INDICES} frames a sample may hold"
        ));
    }
    Ok(sampling::linspace(t, n.min(t)))
}

/// VideoLLaMA3's `read_video_custom(path, fps=rate, max_frames_num=max_frames)` (lmms-eval's
/// videollama3 with `use_custom_video_loader`): when the video is shorter than `max_frames`
/// seconds, `seg = min(video_fps // rate, T)` and the frames `seg//2, seg//2 + seg, …` below T,
/// with T-1 added when missing; otherwise every frame when `T <= max_frames`, else
/// `np.linspace(0, T-1, max_frames, dtype=int)` (which ends at T-1).
pub fn fps_middles(t: u64, video_fps: f64, rate: f64, max_frames: u64) -> Result<Vec<u64>, String> {
    if t == 0 {
        return Err("decord cannot read a video without frames".into());
    }
    if max_frames > MAX_INDICES {
        return Err(format!(
            "a budget of {max_frames} frames is more than the {MAX_INDICES} frames a sample may hold"
        ));
    }
    if video_fps.is_nan() || video_fps <= 0.0 {
        return Err(format!(
            "read_video_custom: duration / fps divides by a frame rate of {video_fps}"
        ));
    }
    if (t as f64) / video_fps < max_frames as f64 {
        // Python's float floor division, then min with the integer T.
        let seg = (video_fps / rate).floor().min(t as f64);
        if seg.is_nan() || seg < 1.0 {
            return Err(format!(
                "read_video_custom: np.arange with a step of {video_fps} // {rate} = {seg} frames divides by zero"
            ));
        }
        let seg = seg as u64;
        let count = (t - seg / 2).div_ceil(seg);
        if count > MAX_INDICES {
            return Err(format!(
                "{count} frames is more than the {MAX_INDICES} frames a sample may hold"
            ));
        }
        let mut ids: Vec<u64> = (0..count).map(|k| seg / 2 + k * seg).collect();
        if !ids.contains(&(t - 1)) {
            ids.push(t - 1);
        }
        return Ok(ids);
    }
    if t <= max_frames {
        return Ok((0..t).collect());
    }
    Ok(sampling::linspace(t, max_frames))
}

/// `get_index(bound, fps, max_frame, first_idx=0, num_segments=N)` of lmms-eval's InternVL
/// wrappers and VLMEvalKit's MVBench: the window `bound` (or ±100000 s) in frames,
/// `start = max(0, round(s * fps))`, `end = min(round(e * fps), T-1)`,
/// `seg = (end - start) / N`, index `int(start + seg/2 + np.round(seg * i))`.
pub fn get_index(
    t: u64,
    video_fps: f64,
    n: u64,
    bound: Option<(f64, f64)>,
) -> Result<Vec<u64>, String> {
    if n == 0 {
        return Err("get_index: float division by zero (num_segments = 0)".into());
    }
    if n > MAX_INDICES {
        return Err(format!(
            "a budget of {n} frames is more than the {MAX_INDICES} frames a sample may hold"
        ));
    }
    if t == 0 {
        return Err("decord cannot read a video without frames".into());
    }
    let (s, e) = bound.unwrap_or((-100000.0, 100000.0));
    let start_idx = py_round(s * video_fps).max(0.0);
    let end_idx = py_round(e * video_fps).min((t - 1) as f64);
    let seg = (end_idx - start_idx) / n as f64;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        // Left to right, as Python adds: int + float + np.round(float).
        let v = (start_idx + seg / 2.0 + (seg * i as f64).round_ties_even()).trunc();
        if v.is_nan() || v < 0.0 || v > (t - 1) as f64 {
            return Err(format!(
                "get_index: frame {v} is outside the video's {t} frames (bound {s}..{e} s)"
            ));
        }
        out.push(v as u64);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_by_factor_is_half_even() {
        assert_eq!(
            [0, 1, 2, 3, 5, 7, 9].map(round_by_factor),
            [0, 0, 2, 4, 4, 8, 8]
        );
    }

    #[test]
    fn torch_linspace_flavours() {
        // torch.linspace(0, 1799, 8).round() on this project's AVX2 machine
        assert_eq!(
            torch_linspace_round(0, 1799, 8, TorchLinspace::Fma).expect("small"),
            [0, 257, 514, 771, 1028, 1285, 1542, 1799]
        );
        assert_eq!(
            torch_linspace_round(0, 0, 1, TorchLinspace::Plain).expect("small"),
            [0]
        );
        assert!(torch_linspace_round(0, 10, TORCH_GRAIN_SIZE + 1, TorchLinspace::Fma).is_err());
    }

    #[test]
    fn llava_stride_and_errors() {
        assert_eq!(
            llava_load_video(90, 30.0, 8, 1.0, false).expect("valid"),
            [0, 30, 60]
        );
        assert_eq!(
            llava_load_video(90, 30.0, 2, 1.0, false).expect("valid"),
            [0, 89]
        );
        assert!(llava_load_video(90, 0.5, 8, 1.0, false).is_err());
        assert!(
            llava_load_video(90, 30.0, 0, 1.0, false)
                .expect("valid")
                .is_empty()
        );
    }

    #[test]
    fn get_index_matches_segment_mid_without_bound() {
        assert_eq!(
            get_index(10, 30.0, 4, None).expect("valid"),
            sampling::segment_mid(10, 4)
        );
        assert!(get_index(10, 30.0, 0, None).is_err());
    }
}
