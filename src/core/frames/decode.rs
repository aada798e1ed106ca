//! Pixels of a located frame: decoding image files with bounded memory, running ffmpeg
//! into the decode cache, and scaling down for the terminal.

use std::ffi::OsString;
use std::fs;
use std::io::{BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use image::imageops::FilterType;
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, Limits, RgbImage};

use super::{FFMPEG_HINT, Located};

/// The largest width or height of an image frameaudit decodes: frames are video frames,
/// and anything larger is more likely a broken or hostile file than a frame.
pub const MAX_IMAGE_SIDE: u32 = 10_000;

/// The most memory one decode may allocate (a 10000x10000 RGB image takes 300 MB).
const MAX_ALLOC: u64 = 512 << 20;

/// How long one ffmpeg decode may take before it is killed (a damaged file can make a
/// decoder spin; the loader thread must not hang on it forever).
const DECODE_TIMEOUT: Duration = Duration::from_secs(60);

/// How much of ffmpeg's error output is kept for the message.
const STDERR_CAP: u64 = 16 << 10;

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
    #[error("cannot create the frame cache {path}: {source}")]
    Cache {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot run {program}: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("ffmpeg could not decode {video} at {seconds:.3} s: {detail}")]
    Ffmpeg {
        video: String,
        seconds: f64,
        detail: String,
    },
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
            seconds,
            ffmpeg,
        } => {
            let program = ffmpeg.as_deref().filter(|_| allow_ffmpeg);
            if cache_is_fresh(cached, video) {
                match (read_image(cached), program) {
                    (Ok(img), _) => return Ok(img),
                    // A damaged cache entry (a full disk, an edited file) is decoded anew
                    // when possible rather than shown as broken forever.
                    (Err(_), Some(_)) => {}
                    (Err(e), None) => return Err(e),
                }
            }
            let Some(program) = program else {
                return Err(DecodeError::Missing(FFMPEG_HINT.into()));
            };
            run_ffmpeg(program, video, *seconds, cached)?;
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
    let meta = fs::metadata(path).map_err(io)?;
    if meta.len() == 0 {
        return Err(DecodeError::Empty(shown));
    }
    // The format comes from the content alone: a file named `.jpg` that holds a PNG is
    // fine, one that holds text is "not an image", not a JPEG parse error.
    let file = fs::File::open(path).map_err(io)?;
    let mut reader = ImageReader::new(BufReader::new(file))
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

/// `file:<path>`: makes ffmpeg take the path as a file even when it looks like a protocol
/// (`http:...`) or an option.
fn file_url(path: &Path) -> OsString {
    let mut url = OsString::from("file:");
    url.push(path.as_os_str());
    url
}

/// Decodes the frame at `seconds` of `video` into `cached` with ffmpeg. The frame is
/// written to a temporary file in the cache directory and renamed into place, so a killed
/// decode never leaves half a frame under the cached name.
///
/// The command is `ffmpeg -ss <t> -i <video> -frames:v 1 -q:v 3 <out.jpg>`: seeking before
/// `-i` jumps to the keyframe before `t` and then decodes up to `t` exactly (ffmpeg's
/// accurate seek, the default when re-encoding), so it is fast on long videos and still
/// returns the first frame at or after `t`.
fn run_ffmpeg(
    program: &Path,
    video: &Path,
    seconds: f64,
    cached: &Path,
) -> Result<(), DecodeError> {
    let dir = cached.parent().unwrap_or(Path::new("."));
    let cache_err = |source| DecodeError::Cache {
        path: dir.display().to_string(),
        source,
    };
    fs::create_dir_all(dir).map_err(cache_err)?;
    let tmp = tempfile::Builder::new()
        .prefix(".decode-")
        .suffix(".jpg")
        .tempfile_in(dir)
        .map_err(cache_err)?
        // Closed so that ffmpeg can write it on every system; removed on drop.
        .into_temp_path();
    let failed = |detail: String| DecodeError::Ffmpeg {
        video: video.display().to_string(),
        seconds,
        detail,
    };
    let mut child = Command::new(program)
        .args(["-nostdin", "-hide_banner", "-loglevel", "error"])
        .arg("-ss")
        .arg(format!("{seconds:.6}"))
        .arg("-i")
        .arg(file_url(video))
        .args(["-map", "0:v:0", "-an", "-sn", "-dn"])
        .args(["-frames:v", "1", "-q:v", "3"])
        // One image at exactly this name (no `%d` sequence pattern).
        .args(["-f", "image2", "-update", "1", "-y"])
        .arg(file_url(&tmp))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| DecodeError::Spawn {
            program: program.display().to_string(),
            source,
        })?;
    // Drained on its own thread: a damaged video can make ffmpeg write more errors than a
    // pipe holds, which would block it while we wait for it to exit.
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
            Ok(None) if started.elapsed() > DECODE_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                break Err(format!(
                    "it took more than {} s and was stopped",
                    DECODE_TIMEOUT.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => break Err(format!("waiting for it failed: {e}")),
        }
    };
    let errors = stderr.and_then(|h| h.join().ok()).unwrap_or_default();
    let last_line = errors
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string();
    let status = status.map_err(&failed)?;
    if !status.success() {
        return Err(failed(if last_line.is_empty() {
            format!("it exited with {status}")
        } else {
            last_line
        }));
    }
    let written = fs::metadata(&tmp).map(|m| m.len()).unwrap_or(0);
    if written == 0 {
        return Err(failed(
            "no frame there (is the index past the end of the video?)".into(),
        ));
    }
    tmp.persist(cached).map_err(|e| DecodeError::Cache {
        path: cached.display().to_string(),
        source: e.error,
    })?;
    Ok(())
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
            seconds: 0.0,
            ffmpeg: Some("ffmpeg".into()),
        };
        assert_eq!(load_image(&located, 100, false).unwrap_err(), FFMPEG_HINT);
    }
}
