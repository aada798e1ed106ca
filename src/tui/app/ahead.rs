//! Frames ahead of the annotator: the frames of the open item the screen does not show yet
//! and those of the queue rows that open next, which the loader decodes in the background,
//! behind everything on screen, so that in queue order an item's frames are there when it
//! opens. A jump elsewhere gives the loader another list, which drops what the old one
//! still had waiting.

use crate::core::frames::FrameKey;

use super::{App, Screen, Subset, THUMB_SIDE, frame_info, panel_list};

/// How many rows past the one open (or selected) are decoded ahead.
pub const ROWS_AHEAD: usize = 2;

/// How many frames of a row ahead are decoded: its panel's first frames, a screenful of
/// thumbnails and more (a wide terminal shows 16).
pub const FRAMES_PER_ROW: usize = 16;

/// The rows (indices into the queue's rows) to decode ahead, in the order the annotator
/// meets them: `current` (the open item, whose frames off screen the cursor reaches next;
/// on the queue the selected row, which Enter opens) and the `n` visible rows after it.
/// Nothing when `current` is not among the visible rows: where the annotator goes next is
/// not known then.
pub fn rows_ahead(visible: &[u32], current: Option<u32>, n: usize) -> Vec<u32> {
    let Some(at) = current.and_then(|c| visible.iter().position(|&v| v == c)) else {
        return Vec::new();
    };
    visible.iter().skip(at).take(n + 1).copied().collect()
}

/// The prefetch list of the rows' frames (each row's in panel order, rows in the order
/// given): each row's first `per_row`, without a frame twice (two rows of one video share
/// frames). The nearest row's frames come first: the annotator meets it first.
pub fn prefetch_order(rows: Vec<Vec<FrameKey>>, per_row: usize) -> Vec<FrameKey> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for row in rows {
        for key in row.into_iter().take(per_row) {
            if seen.insert((key.video.clone(), key.index, key.max_side, key.fit)) {
                out.push(key);
            }
        }
    }
    out
}

impl App {
    /// [`rows_ahead`] of the screen as it is: none on a researcher view.
    fn rows_ahead(&self) -> Vec<u32> {
        match self.screen {
            Screen::Item | Screen::Queue => {
                rows_ahead(&self.queue.visible, self.queue.selected, ROWS_AHEAD)
            }
            Screen::Research(_) => Vec::new(),
        }
    }

    /// The frames to decode ahead now (see [`rows_ahead`]): each row as it would open (its
    /// opening transition, the panel's default), its thumbnails at their decoded size,
    /// which any slot then only fits.
    pub fn frames_ahead(&self) -> Vec<FrameKey> {
        self.frames_of_rows(&self.rows_ahead())
    }

    fn frames_of_rows(&self, rows: &[u32]) -> Vec<FrameKey> {
        let keys = rows
            .iter()
            .map(|&r| {
                let r = r as usize;
                let pair = self.pairs(r).get(self.opening_pair(r)).copied();
                let info = frame_info(
                    &self.ds,
                    &self.report,
                    self.protocol,
                    &self.queue.rows[r].q,
                    pair,
                    None,
                );
                panel_list(&info, Subset::All)
                    .iter()
                    .take(FRAMES_PER_ROW)
                    .filter_map(|e| self.frame_key(&info, e, THUMB_SIDE, None))
                    .collect()
            })
            .collect();
        prefetch_order(keys, FRAMES_PER_ROW)
    }

    /// Gives the loader the frames ahead, when the rows ahead changed since the last time
    /// (working them out takes each row's transitions and frames: not on every draw).
    pub(super) fn prefetch_ahead(&mut self) {
        let Some(loader) = &self.frames.loader else {
            return;
        };
        let rows = self.rows_ahead();
        if self.frames.ahead.as_ref() == Some(&rows) {
            return;
        }
        loader.prefetch(self.frames_of_rows(&rows));
        self.frames.ahead = Some(rows);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(video: &str, index: u64) -> FrameKey {
        FrameKey {
            video: video.into(),
            index,
            position: None,
            max_side: THUMB_SIDE,
            fit: None,
            saved: None,
        }
    }

    #[test]
    fn the_rows_ahead_follow_the_queue_as_it_is_shown() {
        let visible = [7, 3, 9, 4, 1];
        // The open (or selected) row, then the rows after it.
        assert_eq!(rows_ahead(&visible, Some(3), 2), [3, 9, 4]);
        // At the end of the queue there is less ahead.
        assert_eq!(rows_ahead(&visible, Some(4), 2), [4, 1]);
        assert_eq!(rows_ahead(&visible, Some(1), 2), [1]);
        // A row filtered out, or none selected: nothing is known of what comes next.
        assert!(rows_ahead(&visible, Some(5), 2).is_empty());
        assert!(rows_ahead(&visible, None, 2).is_empty());
    }

    #[test]
    fn the_nearest_row_comes_first_each_cut_and_no_frame_twice() {
        let rows = vec![
            vec![key("a", 1), key("a", 2), key("a", 3)],
            vec![key("a", 2), key("b", 5)],
            vec![key("c", 0)],
        ];
        let order: Vec<(String, u64)> = prefetch_order(rows, 2)
            .into_iter()
            .map(|k| (k.video, k.index))
            .collect();
        let want = [("a", 1), ("a", 2), ("b", 5), ("c", 0)];
        let want: Vec<(String, u64)> = want.iter().map(|&(v, i)| (v.into(), i)).collect();
        assert_eq!(order, want);
    }
}
