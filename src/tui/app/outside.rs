//! The frame under the cursor seen outside the audit screens: written at full size to a
//! PNG file by a worker (the decode may need ffmpeg) and shown in a viewer only when the
//! user named one, or the command that plays the seconds around it in a video player.
//! What comes from the dataset is sanitized before it reaches the status line.

use crate::core::frames::{FrameKey, FrameStore};
use crate::core::text::sanitize;

use super::{App, Effect, Notice};

/// A full-size frame to write, for the worker that performs [`Effect::FullFrame`].
#[derive(Debug, Clone)]
pub struct FullFrameJob {
    /// Where the frame comes from.
    pub store: FrameStore,
    /// The frame (its size fields are not used).
    pub key: FrameKey,
    /// The viewer to show the file in (`FRAMEAUDIT_VIEWER`), when the user named one.
    pub viewer: Option<String>,
}

impl FullFrameJob {
    /// Decodes and writes the frame (blocking: on a worker) and shows it in the viewer
    /// when there is one; the status line's notice of how that went.
    pub fn run(self) -> Notice {
        let what = format!("frame {} of {}", self.key.index, sanitize(&self.key.video));
        let written = crate::core::frames::full_frame_dir()
            .map_err(|e| format!("no folder for full-size frames: {e}"))
            .and_then(|dir| crate::core::frames::write_full_frame(&self.store, &self.key, &dir));
        let path = match written {
            Ok(p) => p,
            Err(why) => {
                return Notice {
                    text: format!("{what} at full size: {}", sanitize(&why)),
                    error: true,
                };
            }
        };
        let shown = sanitize(&path.display().to_string()).into_owned();
        match self.viewer.as_deref() {
            None => Notice {
                text: format!("{what} at full size: {shown}"),
                error: false,
            },
            Some(viewer) => match crate::core::frames::open_in_viewer(viewer, &path) {
                Ok(()) => Notice {
                    text: format!(
                        "{what} at full size, shown by {}: {shown}",
                        sanitize(viewer)
                    ),
                    error: false,
                },
                Err(why) => Notice {
                    text: format!("{what} at full size: {shown}; {}", sanitize(&why)),
                    error: true,
                },
            },
        }
    }
}

impl App {
    /// The frame store the keys of this room locate frames with (made once).
    fn frame_store(&self) -> &FrameStore {
        self.frames.store.get_or_init(|| FrameStore::new(&self.ds))
    }

    /// The frame under the cursor of the open item: its key (at no size) and its video's
    /// frame rate; or what to say instead.
    fn frame_under_cursor(&self) -> Result<(FrameKey, Option<f64>), String> {
        let i = self.current().ok_or("no item open")?;
        let info = self.frame_info(i);
        let list = self.panel_list(&info);
        let entry = list
            .get(
                self.item
                    .frame_panel
                    .cursor
                    .min(list.len().saturating_sub(1)),
            )
            .ok_or("no frame under the cursor")?;
        let key = self
            .frame_key(&info, entry, 0, None)
            .ok_or("no video for this item (items.jsonl has no `video`)")?;
        Ok((key, info.fps))
    }

    /// `full_frame`: hands the frame under the cursor to the worker that writes it at full
    /// size; the notice says so meanwhile.
    pub(super) fn full_frame(&mut self) -> Vec<Effect> {
        if self.frames.full.is_some() {
            self.notice("still writing the frame asked for before", false);
            return Vec::new();
        }
        match self.frame_under_cursor() {
            Ok((key, _)) => {
                self.notice(&format!("writing frame {} at full size…", key.index), false);
                self.frames.full = Some(FullFrameJob {
                    store: self.frame_store().clone(),
                    key,
                    viewer: std::env::var(crate::core::frames::VIEWER_ENV)
                        .ok()
                        .filter(|v| !v.trim().is_empty()),
                });
                vec![Effect::FullFrame]
            }
            Err(why) => {
                self.notice(&why, true);
                Vec::new()
            }
        }
    }

    /// The full-size frame asked for, for the worker ([`Effect::FullFrame`]).
    pub fn take_full_frame(&mut self) -> Option<FullFrameJob> {
        self.frames.full.take()
    }

    /// A worker's answer for the status line (a full-size frame written, or why not).
    pub fn on_notice(&mut self, notice: Notice) {
        self.overlays.notice = Some(notice);
    }

    /// `player_command`: the command that plays the seconds around the frame under the
    /// cursor (`FRAMEAUDIT_PLAYER`, else mpv), on the status line; where the video file or
    /// its frame rate is not known, says so instead of guessing.
    pub(super) fn player_command(&mut self) {
        let (key, item_fps) = match self.frame_under_cursor() {
            Ok(f) => f,
            Err(why) => return self.notice(&why, true),
        };
        let store = self.frame_store();
        let video = match store.video_file(&key.video) {
            Ok(v) => v,
            Err(why) => {
                let text = format!(
                    "no video file to play frame {} from: {}",
                    key.index,
                    sanitize(&why)
                );
                return self.notice(&text, true);
            }
        };
        let Some(fps) = store.fps(&key.video).or(item_fps).filter(|f| *f > 0.0) else {
            let text = format!(
                "the frame rate of {} is not known (items.jsonl gives no fps), so frame {} has no time: {}",
                sanitize(&key.video),
                key.index,
                crate::core::text::shell_quote(&video.display().to_string())
            );
            return self.notice(&text, true);
        };
        let player = std::env::var(crate::core::frames::PLAYER_ENV)
            .ok()
            .filter(|p| !p.trim().is_empty())
            .unwrap_or_else(|| "mpv".into());
        // Absolute, so that the command runs from any folder the user pastes it into.
        let video = std::path::absolute(&video).unwrap_or(video);
        let command = crate::core::frames::player_command(&player, &video, key.index, fps);
        self.notice(&sanitize(&command), false);
    }

    fn notice(&mut self, text: &str, error: bool) {
        self.overlays.notice = Some(Notice {
            text: text.to_string(),
            error,
        });
    }
}
