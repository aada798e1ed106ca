//! A frame seen outside the terminal: decoded at full size into a PNG file in a folder of
//! the user's own (never one a dataset could lead elsewhere with a planted link), handed to
//! a viewer only when the user named one, and the command that plays the seconds around
//! it in a video player.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use image::ImageEncoder;

use super::{FrameKey, FrameStore, load_image};
use crate::core::fswrite::{Links, persist, private_temp_for};

/// The environment variable naming a program to show a full-size frame with (its path is
/// the last argument). Unset, nothing is run.
pub const VIEWER_ENV: &str = "FRAMEAUDIT_VIEWER";

/// The environment variable naming the video player whose command is given (`mpv`,
/// `ffplay` and `vlc` are known; any other is given mpv's options).
pub const PLAYER_ENV: &str = "FRAMEAUDIT_PLAYER";

/// Seconds of video the player command plays around a frame.
pub const AROUND_SECS: f64 = 6.0;

/// The longest part of a video's name kept in a frame file's name, in characters.
const NAME_CHARS: usize = 80;

/// Where full-size frames are written: `frames` in the user's cache directory
/// ([`crate::core::cache::cache_dir`]), readable by the user only; when caching is off (or
/// that folder cannot be made), a folder of this run's own in the system's temporary
/// directory, made with a random name and readable by the user only (so another user
/// cannot have planted anything there).
pub fn full_frame_dir() -> io::Result<PathBuf> {
    let own = |dir: PathBuf| -> io::Result<PathBuf> {
        std::fs::create_dir_all(&dir)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
        }
        Ok(dir)
    };
    if let Some(Ok(dir)) = crate::core::cache::cache_dir().map(|d| own(d.join("frames"))) {
        return Ok(dir);
    }
    static TEMP: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    TEMP.get_or_init(|| {
        tempfile::Builder::new()
            .prefix("frameaudit-frames-")
            .tempdir()
            .map(|d| d.keep())
            .map_err(|e| e.to_string())
    })
    .clone()
    .map_err(io::Error::other)
}

/// The file name of a full-size frame: the video's name with anything but letters, digits,
/// `-`, `_` and `.` made `_` (a dataset's name never picks a folder or hides a file), cut
/// to [`NAME_CHARS`], then the frame index.
pub fn full_frame_name(video: &str, index: u64) -> String {
    let safe: String = video
        .chars()
        .take(NAME_CHARS)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let safe = safe.trim_start_matches('.');
    format!(
        "{}-frame{index}.png",
        if safe.is_empty() { "video" } else { safe }
    )
}

/// Decodes the frame of `key` at full size (its `max_side` and `fit` are not used; a frame
/// of a raw video is decoded by ffmpeg when it is not in the decode cache yet) and writes
/// it as a PNG into `dir`, replacing a file of the same name whole; returns its path. Blocks
/// for the decode: for a worker thread.
pub fn write_full_frame(store: &FrameStore, key: &FrameKey, dir: &Path) -> Result<PathBuf, String> {
    let located = key
        .saved
        .as_deref()
        .and_then(|f| store.locate_saved(f))
        .unwrap_or_else(|| store.locate(&key.video, key.index, key.position));
    let img = load_image(&located, 0, true)?;
    let path = dir.join(full_frame_name(&key.video, key.index));
    let shown = path.display().to_string();
    let write = || -> io::Result<()> {
        let mut tmp = private_temp_for(&path)?;
        {
            let mut w = io::BufWriter::new(tmp.as_file_mut());
            image::codecs::png::PngEncoder::new(&mut w)
                .write_image(
                    img.as_raw(),
                    img.width(),
                    img.height(),
                    image::ExtendedColorType::Rgb8,
                )
                .map_err(io::Error::other)?;
            io::Write::flush(&mut w)?;
        }
        persist(tmp, &path, Links::Refuse)
    };
    write().map_err(|e| format!("cannot write {shown}: {e}"))?;
    Ok(path)
}

/// Starts the viewer `command` (a program and its arguments, separated by spaces, as in
/// [`VIEWER_ENV`]) on `file`, with no terminal: its input and output go nowhere, so it
/// cannot write over the screen, and it is not waited for.
pub fn open_in_viewer(command: &str, file: &Path) -> Result<(), String> {
    let mut words = command.split_whitespace();
    let Some(program) = words.next() else {
        return Err(format!("{VIEWER_ENV} is empty"));
    };
    let child = std::process::Command::new(program)
        .args(words)
        .arg(file)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {program} ({VIEWER_ENV}): {e}"))?;
    // Reaped when it ends, so that it leaves no zombie behind while frameaudit runs.
    let mut child = child;
    let _ = std::thread::Builder::new()
        .name("frameaudit-viewer".into())
        .spawn(move || child.wait());
    Ok(())
}

/// The command that plays the [`AROUND_SECS`] seconds around frame `index` of the video
/// file `video` at `fps` frames per second, for the player `player` (a program name or
/// path: `mpv`, `ffplay`, `vlc`; any other is given mpv's options): from half that before
/// the frame (not before the start) for that long. The path is quoted for a shell.
pub fn player_command(player: &str, video: &Path, index: u64, fps: f64) -> String {
    let at = index as f64 / fps;
    let start = (at - AROUND_SECS / 2.0).max(0.0);
    let end = start + AROUND_SECS;
    let file = crate::core::text::shell_quote(&video.display().to_string());
    let name = Path::new(player)
        .file_stem()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let program = crate::core::text::shell_quote(player);
    match name.as_str() {
        "ffplay" => format!("{program} -ss {start:.2} -t {AROUND_SECS} {file}"),
        "vlc" | "cvlc" => {
            format!("{program} --start-time={start:.2} --stop-time={end:.2} {file}")
        }
        _ => format!("{program} --start={start:.2} --length={AROUND_SECS} {file}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_file_is_named_by_its_video_made_safe() {
        assert_eq!(full_frame_name("clip01", 7), "clip01-frame7.png");
        assert_eq!(
            full_frame_name("../a b/\u{1b}[2J", 3),
            "_a_b___2J-frame3.png"
        );
        assert_eq!(full_frame_name("..", 0), "video-frame0.png");
        assert_eq!(full_frame_name(&"x".repeat(300), 1).len(), 80 + 11);
    }

    #[cfg(unix)]
    #[test]
    fn the_viewer_named_is_run_on_the_file_without_a_terminal() {
        let dir = tempfile::tempdir().expect("tmp");
        let script = dir.path().join("viewer.sh");
        let seen = dir.path().join("seen.txt");
        std::fs::write(
            &script,
            format!("printf '%s|%s' \"$1\" \"$(cat)\" > {}\n", seen.display()),
        )
        .expect("script");
        let file = dir.path().join("clip-frame3.png");
        open_in_viewer(&format!("sh {}", script.display()), &file).expect("started");
        // Not waited for: the file appears when the script has run.
        let mut text = String::new();
        for _ in 0..500 {
            text = std::fs::read_to_string(&seen).unwrap_or_default();
            if !text.is_empty() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // The file as its last argument, and nothing on its input.
        assert_eq!(text, format!("{}|", file.display()));
        assert!(open_in_viewer("  ", &file).is_err());
        let missing = open_in_viewer("/nonexistent/viewer", &file).unwrap_err();
        assert!(missing.contains(VIEWER_ENV), "{missing}");
    }

    #[test]
    fn the_player_plays_the_seconds_around_the_frame() {
        let v = Path::new("/d/videos/my clip.mp4");
        // Frame 617 at 50 fps is at 12.34 s.
        assert_eq!(
            player_command("mpv", v, 617, 50.0),
            "mpv --start=9.34 --length=6 '/d/videos/my clip.mp4'"
        );
        // Near the start it starts at the start.
        assert_eq!(
            player_command("/usr/bin/ffplay", v, 25, 25.0),
            "/usr/bin/ffplay -ss 0.00 -t 6 '/d/videos/my clip.mp4'"
        );
        assert_eq!(
            player_command("vlc", v, 250, 25.0),
            "vlc --start-time=7.00 --stop-time=13.00 '/d/videos/my clip.mp4'"
        );
    }
}
