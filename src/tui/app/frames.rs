//! The item's frames: what each configuration of the item sampled (a pure function of the
//! data, the row and the panel), the panel's cursor and subsets, and the drawable forms of
//! decoded frames, made after a draw asks for them, never in one.

use crate::core::analysis::Report;
use crate::core::dataset::Dataset;
use crate::core::queue::{HarmfulTransition, QueueRow};
use crate::core::text::sanitize;
use crate::term::ImageMode;
use crate::tui::input::action::Action;

use super::{App, Drawn, Notice, Slot};

/// Which frames the frame panel shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Subset {
    /// Every frame of the panel's configuration.
    #[default]
    All,
    /// The frames the lower budget of the transition sampled and the higher did not.
    Dropped,
    /// The frames the higher budget sampled and the lower did not.
    Added,
}

/// The frame panel's state on the item screen.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FramePanel {
    /// Grid column whose frames are shown (default: the higher budget of the transition).
    pub config: Option<usize>,
    /// What part of the frames it lists.
    pub subset: Subset,
    /// Position of the cursor in the listed frames.
    pub cursor: usize,
}

/// The frames one configuration sampled, for the item screen.
#[derive(Debug, Clone)]
pub struct ConfigFrames {
    /// The configuration's name.
    pub name: String,
    /// Distinct indices, sorted.
    pub frames: Vec<u64>,
    /// Why there are none, or which rule gave them.
    pub note: String,
    /// How sure the frames are (`None` when there are none).
    pub provenance: Option<crate::core::rules::Provenance>,
    /// The rule that gave them, with the harness it reproduces.
    pub rule: String,
    /// Where the harness saved the frames it gave the model (a run's `frame_files`).
    pub frame_files: Option<String>,
}

/// One frame in the frame panel: its index and where it sits in its configuration's sample.
#[derive(Debug, Clone, PartialEq)]
pub struct PanelEntry {
    /// The frame's index in the video.
    pub index: u64,
    /// The grid column of the configuration it belongs to.
    pub config: usize,
    /// Its position among that configuration's frames (0-based).
    pub position: usize,
    /// How many frames that configuration sampled.
    pub of: usize,
}

/// Everything the frames view needs about an item.
#[derive(Debug, Clone)]
pub struct FrameInfo {
    /// The item's video, when known.
    pub video: Option<String>,
    /// Frames in the video, when known.
    pub num_frames: Option<u64>,
    /// The video's frame rate, when known.
    pub fps: Option<f64>,
    /// Each grid configuration's frames, in grid order.
    pub configs: Vec<ConfigFrames>,
    /// The transition under audit.
    pub pair: Option<HarmfulTransition>,
    /// The frames the transition kept, dropped and added.
    pub transition: crate::core::sampling::Transition,
    /// The configuration the panel shows.
    pub panel_config: Option<usize>,
    /// The frames each intervention run of the item was given (docs/intervention.md §7),
    /// against the top configuration's, whose answer the recovery compares.
    pub interventions: Vec<PlannedFrames>,
    /// The frames each replicate of a configuration recorded (a phase or sampler re-run,
    /// docs/measures.md §16), against that configuration's own: which frames the nuisance
    /// moved. Replicates that record no frames (a plain re-run) have no row.
    pub replicates: Vec<PlannedFrames>,
}

/// An intervention run's frames against the original ones of the configuration it re-ran.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedFrames {
    /// `↻STRATEGY` (`↻CONFIG` for the intervention protocol itself).
    pub label: String,
    /// The frames the run gave the model: distinct, sorted.
    pub frames: Vec<u64>,
    /// How they are known.
    pub provenance: Option<crate::core::rules::Provenance>,
    /// The grid configuration they stand against (the top).
    pub against: usize,
    /// Planned frames the original did not sample (restored, or brought in).
    pub restored: Vec<u64>,
    /// Original frames the plan left out.
    pub left_out: Vec<u64>,
}

/// How frames are decoded and drawn.
pub struct FrameState {
    /// The protocol the terminal draws pictures with (or none).
    pub images: ImageMode,
    /// `NO_COLOR` is why there are no pictures: half blocks were asked for or chosen (not
    /// `--images none`, which the placeholders name first).
    pub no_color_off: bool,
    /// The terminal's cell size in pixels that pictures are fitted to: its own answer once
    /// known (`term::detect`), else a 1:2 guess that only half blocks may use.
    pub cell: ratatui_image::FontSize,
    /// Escape sequences go through tmux's passthrough to the outer terminal.
    pub tmux_wrap: bool,
    /// Kitty images are placed directly (kitty before 0.28): see `tui::kitty`.
    pub kitty_direct: bool,
    /// The kitty images placed on screen by the last draw (direct placement only).
    pub placed: Vec<u32>,
    /// What deletes the placements the last draw left off the screen, for the terminal.
    pub deletions: String,
    /// The cells each kitty image placed directly covers, by id.
    pub(crate) direct_sizes: std::collections::HashMap<u32, ratatui::layout::Size>,
    /// How the protocol was chosen and why (`None` until the terminal answered, or when
    /// `--images` chose without asking).
    pub choice: Option<crate::term::detect::Choice>,
    /// The next kitty image id (each drawable frame has its own).
    pub(crate) next_id: u32,
    /// Decodes frames off the UI thread (none in tests: frames show as text).
    pub loader: Option<crate::core::frames::FrameLoader>,
    /// Drawable images per (frame, area size), so a frame is converted once per size; or
    /// why it cannot be drawn.
    pub(crate) protocols: lru::LruCache<Slot, Result<Drawable, String>>,
    /// The queue rows whose frames the loader was last given to decode ahead.
    pub(crate) ahead: Option<Vec<u32>>,
    /// Locates the frames the keys of `outside.rs` take out of the screens (made once).
    pub(crate) store: std::cell::OnceCell<crate::core::frames::FrameStore>,
    /// The full-size frame asked for, until the runner hands it to a worker.
    pub(crate) full: Option<super::outside::FullFrameJob>,
}

/// A frame ready to draw: by one of ratatui-image's protocols, or placed directly in kitty.
pub enum Drawable {
    /// Half blocks, sixel, kitty placeholders, iTerm2.
    Protocol(ratatui_image::protocol::Protocol),
    /// A kitty image placed at its cells.
    KittyDirect(crate::tui::kitty::KittyDirect),
}

impl Drawable {
    /// Draws it at the top-left of `area`.
    pub fn render(&self, area: ratatui::layout::Rect, buf: &mut ratatui::buffer::Buffer) {
        use ratatui::widgets::Widget;
        match self {
            Drawable::Protocol(p) => ratatui_image::Image::new(p).render(area, buf),
            Drawable::KittyDirect(k) => k.render(area, buf),
        }
    }
}

/// The cell size assumed until the terminal says: 1:2, what half blocks draw.
pub const GUESSED_CELL: ratatui_image::FontSize = ratatui_image::FontSize::new(10, 20);

impl FrameState {
    /// No pictures yet: text stand-ins until [`App::set_images`] says otherwise.
    pub fn new() -> FrameState {
        FrameState {
            images: ImageMode::None,
            no_color_off: false,
            cell: GUESSED_CELL,
            tmux_wrap: false,
            kitty_direct: false,
            placed: Vec::new(),
            deletions: String::new(),
            direct_sizes: std::collections::HashMap::new(),
            choice: None,
            // Kitty ids are the terminal window's: start where another program's are
            // unlikely to be.
            next_id: (std::process::id() & 0xffff) << 8 | 1,
            loader: None,
            protocols: lru::LruCache::new(
                std::num::NonZeroUsize::new(96).unwrap_or(std::num::NonZeroUsize::MIN),
            ),
            ahead: None,
            store: std::cell::OnceCell::new(),
            full: None,
        }
    }

    /// The pixels a picture drawn in a slot of `cells` (width, height) may cover: the
    /// cells' pixels, and for sixel whole bands of six rows within them (a last band that
    /// reached past the slot's cells would make the terminal scroll at the screen's foot).
    pub fn slot_pixels(&self, cells: (u16, u16)) -> (u32, u32) {
        let w = u32::from(cells.0) * u32::from(self.cell.width);
        let h = u32::from(cells.1) * u32::from(self.cell.height);
        if self.images == ImageMode::Sixel {
            (w, h - h % 6)
        } else {
            (w, h)
        }
    }

    /// The drawable form of a frame for a slot of `cells`: scaled to fit the slot's pixels
    /// if it does not already, given the cells it covers (never more than the slot's), and
    /// encoded for the protocol.
    pub fn drawable(
        &mut self,
        img: image::DynamicImage,
        cells: (u16, u16),
    ) -> Result<Drawable, String> {
        use ratatui_image::protocol::{
            Protocol, halfblocks::Halfblocks, iterm2::Iterm2, kitty::Kitty, sixel::Sixel,
        };
        let (pw, ph) = self.slot_pixels(cells);
        if pw == 0 || ph == 0 {
            return Err("no room".into());
        }
        let img = if img.width() > pw || img.height() > ph {
            img.resize(pw, ph, image::imageops::FilterType::Triangle)
        } else {
            img
        };
        let (fw, fh) = (
            u32::from(self.cell.width.max(1)),
            u32::from(self.cell.height.max(1)),
        );
        let covered = ratatui::layout::Size::new(
            (img.width().div_ceil(fw) as u16).clamp(1, cells.0),
            (img.height().div_ceil(fh) as u16).clamp(1, cells.1),
        );
        let drawn = match self.images {
            ImageMode::Sixel => Sixel::new(img, covered, self.tmux_wrap).map(Protocol::Sixel),
            ImageMode::Kitty if self.kitty_direct => {
                let id = self.next_id;
                self.next_id = self.next_id.wrapping_add(1).max(1);
                // As many as the drawable forms kept, at most (the cache forgets the rest).
                if self.direct_sizes.len() > 4 * self.protocols.cap().get() {
                    self.direct_sizes.clear();
                }
                self.direct_sizes.insert(id, covered);
                return Ok(Drawable::KittyDirect(crate::tui::kitty::KittyDirect::new(
                    &img, covered, id,
                )));
            }
            ImageMode::Kitty => {
                let id = self.next_id;
                self.next_id = self.next_id.wrapping_add(1).max(1);
                Kitty::new(img, covered, id, self.tmux_wrap, false).map(Protocol::Kitty)
            }
            ImageMode::Iterm => Iterm2::new(img, covered, self.tmux_wrap).map(Protocol::ITerm2),
            // Half blocks are text: the whole slot, two picture rows a cell.
            ImageMode::None | ImageMode::Halfblocks | ImageMode::Auto => {
                Halfblocks::new(img, covered).map(Protocol::Halfblocks)
            }
        };
        drawn.map(Drawable::Protocol).map_err(|e| e.to_string())
    }

    /// After a draw: the kitty images placed directly that its buffer holds (`now`); those
    /// of the draw before that it no longer holds are to be deleted ([`FrameState::deletions`]).
    pub fn settle_placements(&mut self, now: Vec<u32>) {
        for id in &self.placed {
            if now.binary_search(id).is_err() {
                self.deletions.push_str(&crate::tui::kitty::delete(*id));
            }
        }
        self.placed = now;
    }
}

impl Default for FrameState {
    fn default() -> Self {
        FrameState::new()
    }
}

/// The frames every configuration of queue row `q` sampled, and the sets of the transition
/// `pair` under audit; the panel shows `panel_config` (default: the transition's higher
/// budget). A function of what it is given and nothing else.
pub fn frame_info(
    ds: &Dataset,
    report: &Report,
    protocol: u32,
    q: &QueueRow,
    pair: Option<HarmfulTransition>,
    panel_config: Option<usize>,
) -> FrameInfo {
    let mg = &report.analyses[q.analysis as usize].grids.models[q.model_index as usize];
    let k = mg.grid.k();
    let meta = ds.item_meta(q.item);
    let configs: Vec<ConfigFrames> = (0..k)
        .map(|c| {
            let cell = mg.cells[q.row as usize * k + c];
            let (frames, rule) = crate::core::cell_frames::frames_for_cell(ds, cell);
            ConfigFrames {
                name: ds.matrix.config(mg.grid.configs[c]).name.to_string(),
                frames: crate::core::sampling::frame_set(frames),
                note: match &rule {
                    crate::core::cell_frames::Rule::Unknown(why) => why.clone(),
                    other => other.explain(),
                },
                provenance: rule.provenance(),
                rule: rule.name(),
                frame_files: ds
                    .run_entry_of_cell(cell)
                    .and_then(|r| r.rule.frame_files.clone()),
            }
        })
        .collect();
    let transition = match pair {
        Some(t) => {
            crate::core::sampling::transition(&configs[t.lower].frames, &configs[t.higher].frames)
        }
        None => crate::core::sampling::transition(&[], &[]),
    };
    let panel_config = panel_config.or(pair.map(|t| t.higher)).filter(|&c| c < k);
    let interventions = match mg.grid.top {
        Some(top) => intervention_cells(ds, report, protocol, q)
            .into_iter()
            .map(|(strategy, cell)| {
                let m = &ds.matrix;
                let (frames, rule) = crate::core::cell_frames::frames_for_cell(ds, cell);
                let frames = crate::core::sampling::frame_set(frames);
                let original = &configs[top].frames;
                let t = crate::core::sampling::transition(original, &frames);
                PlannedFrames {
                    label: match strategy {
                        Some(st) => format!("↻{st}"),
                        None => format!("↻{}", m.config(m.cell_config.get(cell as usize)).name),
                    },
                    frames,
                    provenance: rule.provenance(),
                    against: top,
                    restored: t.added,
                    left_out: t.dropped,
                }
            })
            .collect(),
        None => Vec::new(),
    };
    // The replicates of the transition's two configurations (of every one without a
    // transition): the rows that say whether the flip's frames moved under the nuisance,
    // without taking the thumbnails' room.
    let shown: Vec<usize> = match pair {
        Some(t) => vec![t.lower, t.higher],
        None => (0..k).collect(),
    };
    let replicates = replicate_frames(ds, &configs, &shown, |c| mg.cells[q.row as usize * k + c]);
    FrameInfo {
        video: meta.and_then(|m| m.video.clone()),
        num_frames: meta.and_then(|m| m.num_frames),
        fps: meta.and_then(|m| m.fps),
        configs,
        pair,
        transition,
        panel_config,
        interventions,
        replicates,
    }
}

/// The recorded frames of the replicates of configurations `shown` (grid columns), in
/// grid order and by replicate name: a row `CONFIG ~NAME` each, against the configuration's
/// own frames.
fn replicate_frames(
    ds: &Dataset,
    configs: &[ConfigFrames],
    shown: &[usize],
    cell: impl Fn(usize) -> u32,
) -> Vec<PlannedFrames> {
    let r = &ds.matrix.replicates;
    let mut out = Vec::new();
    for &c in shown {
        let Some(cf) = configs.get(c) else { continue };
        let mut reps: Vec<_> = r.of(cell(c)).iter().collect();
        reps.sort_by(|a, b| r.names.name(a.replicate).cmp(r.names.name(b.replicate)));
        for x in reps {
            let Some(idx) = r.frame_idx(&x) else { continue };
            let frames = crate::core::sampling::frame_set(idx.to_vec());
            let t = crate::core::sampling::transition(&cf.frames, &frames);
            out.push(PlannedFrames {
                label: format!("{} ~{}", cf.name, r.names.name(x.replicate)),
                frames,
                provenance: Some(crate::core::rules::Provenance::Recorded),
                against: c,
                restored: t.added,
                left_out: t.dropped,
            });
        }
    }
    out
}

/// Queue row `q`'s intervention cells (docs/measures.md §11): the model's answer to the item
/// under each intervention protocol of the dataset, the protocol itself and each of its
/// strategies (docs/intervention.md §7), in protocol name order, each with the strategy
/// (`None` for the protocol itself). Primary protocol only.
pub fn intervention_cells(
    ds: &Dataset,
    report: &Report,
    protocol: u32,
    q: &QueueRow,
) -> Vec<(Option<String>, u32)> {
    let m = &ds.matrix;
    let params = &report.params;
    if m.protocols.get(&params.primary) != Some(protocol) {
        return Vec::new();
    }
    let mut out: Vec<(&str, Option<String>, u32)> = (0..m.protocols.len() as u32)
        .filter_map(|p| {
            let name = m.protocols.name(p);
            let strategy = params.intervention_strategy(name)?;
            let cell =
                crate::core::analysis::intervention::intervention_cell(m, p, q.model, q.item)?;
            Some((name, strategy.map(str::to_string), cell))
        })
        .collect();
    out.sort_by_key(|x| x.0);
    out.into_iter().map(|(_, s, c)| (s, c)).collect()
}

/// The frames the panel lists when it shows `subset`, in time order.
pub fn panel_list(info: &FrameInfo, subset: Subset) -> Vec<PanelEntry> {
    let entry = |config: usize, index: u64| {
        let frames = &info.configs[config].frames;
        PanelEntry {
            index,
            config,
            position: frames.binary_search(&index).unwrap_or(0),
            of: frames.len(),
        }
    };
    match (subset, info.pair, info.panel_config) {
        (Subset::Dropped, Some(HarmfulTransition { lower: a, .. }), _) => info
            .transition
            .dropped
            .iter()
            .map(|&x| entry(a, x))
            .collect(),
        (Subset::Added, Some(HarmfulTransition { higher: b, .. }), _) => {
            info.transition.added.iter().map(|&x| entry(b, x)).collect()
        }
        (_, _, Some(c)) => info.configs[c]
            .frames
            .iter()
            .map(|&x| entry(c, x))
            .collect(),
        _ => Vec::new(),
    }
}

impl App {
    /// [`frame_info`] of row `i`, on the transition under audit and the panel as it is.
    pub fn frame_info(&self, i: usize) -> FrameInfo {
        frame_info(
            &self.ds,
            &self.report,
            self.protocol,
            &self.queue.rows[i].q,
            self.pairs(i).get(self.item.pair).copied(),
            self.item.frame_panel.config,
        )
    }

    /// [`intervention_cells`] of row `i`.
    pub fn intervention_cells(&self, i: usize) -> Vec<(Option<String>, u32)> {
        intervention_cells(&self.ds, &self.report, self.protocol, &self.queue.rows[i].q)
    }

    /// [`panel_list`] of the panel as it is.
    pub fn panel_list(&self, info: &FrameInfo) -> Vec<PanelEntry> {
        panel_list(info, self.item.frame_panel.subset)
    }

    /// Sets how frames are drawn. `Auto` draws half blocks until the terminal has answered
    /// ([`App::set_choice`]).
    pub fn set_images(&mut self, mode: ImageMode) {
        let asked = match mode {
            ImageMode::Auto => ImageMode::Halfblocks,
            m => m,
        };
        self.frames.images = crate::tui::image_mode(asked, self.no_color);
        self.frames.no_color_off =
            self.frames.images == ImageMode::None && asked != ImageMode::None;
        self.frames.protocols.clear();
    }

    /// Draws frames as the terminal's answers decided (`term::detect::choose`): its
    /// protocol (half blocks give way to text under `NO_COLOR`), fitted to its cells.
    pub fn set_choice(&mut self, choice: crate::term::detect::Choice) {
        self.frames.images = crate::tui::image_mode(choice.mode, self.no_color);
        self.frames.no_color_off =
            self.frames.images == ImageMode::None && choice.mode != ImageMode::None;
        self.frames.cell = choice
            .cell
            .map_or(GUESSED_CELL, |(w, h)| ratatui_image::FontSize::new(w, h));
        self.frames.tmux_wrap = choice.tmux_wrap;
        self.frames.kitty_direct = choice.kitty_direct;
        self.frames.choice = Some(choice);
        self.frames.protocols.clear();
    }

    /// The terminal was resized: a font change resizes the cells too, which the window size
    /// says where the terminal fills it in. Pictures are made again for the new cells.
    pub fn on_resize(&mut self, cell_from_winsize: Option<(u16, u16)>) {
        let pixels = !matches!(self.frames.images, ImageMode::Halfblocks | ImageMode::None);
        if let Some((w, h)) = cell_from_winsize.filter(|_| pixels) {
            let now = self.frames.cell;
            if (w, h) != (now.width, now.height) {
                self.frames.cell = ratatui_image::FontSize::new(w, h);
                self.frames.protocols.clear();
            }
        }
    }

    /// The frame under the cursor: (index, grid column).
    pub fn current_frame(&self, info: &FrameInfo) -> Option<(u64, usize)> {
        let list = self.panel_list(info);
        list.get(
            self.item
                .frame_panel
                .cursor
                .min(list.len().saturating_sub(1)),
        )
        .map(|e| (e.index, e.config))
    }

    /// The loader key of a panel frame decoded at `max_side` and drawn in a slot of
    /// `slot` cells (width, height): the loader fits it to the slot's pixels. Without a
    /// slot (a prefetch), the frame at its decoded size, which any slot then only fits.
    pub fn frame_key(
        &self,
        info: &FrameInfo,
        e: &PanelEntry,
        max_side: u32,
        slot: Option<(u16, u16)>,
    ) -> Option<crate::core::frames::FrameKey> {
        let fit = slot.map(|cells| self.frames.slot_pixels(cells));
        let video = info.video.as_ref()?;
        let saved = info.configs.get(e.config).and_then(|c| {
            let t = c.frame_files.as_deref()?;
            Some(crate::core::frames::saved_frame_path(
                t, video, e.position, e.of,
            ))
        });
        Some(crate::core::frames::FrameKey {
            video: video.to_string(),
            index: e.index,
            position: Some((e.position, e.of)),
            max_side,
            fit,
            saved,
        })
    }

    /// Whether a frame is marked as evidence in the current record.
    pub fn is_evidence(&self, index: u64) -> bool {
        self.current()
            .and_then(|i| self.record(i))
            .is_some_and(|r| r.evidence_frames.contains(&index))
    }

    /// Applies what a draw asked for ([`Drawn`]): the queue's page and click areas, the
    /// frames to load, and drawable forms of the frames that arrived. True when a draw now
    /// would show more: pictures became drawable, or the queue scrolled to keep its
    /// selection on a page that changed size (a resize).
    pub fn after_draw(&mut self, drawn: Drawn) -> bool {
        let mut scrolled = false;
        if let Some(page) = drawn.page {
            self.geometry.page = page;
            let before = self.queue.scroll;
            self.follow_selection();
            scrolled = self.queue.scroll != before;
        }
        self.geometry.queue_hit = drawn.queue_hit;
        self.geometry.help_bounds = drawn.help;
        if let Some(b) = drawn.help {
            self.overlays.help_scroll = self.overlays.help_scroll.min(b.last);
        }
        self.request_frames(drawn.wanted);
        let fitted = !drawn.unfitted.is_empty();
        for slot in drawn.unfitted {
            self.fit(slot);
        }
        fitted || scrolled
    }

    /// Makes the drawable form of a loaded frame for a slot of cells: the loader fitted it
    /// to the slot already (`FrameKey::fit`), so this only encodes it for the protocol.
    pub(super) fn fit(&mut self, slot: Slot) {
        // The loader's own copy (an `Arc`), read in place.
        let Some(loaded) = self.frames.loader.as_ref().and_then(|l| l.get(&slot.0)) else {
            return;
        };
        let Ok(img) = loaded.as_ref() else { return };
        let drawable = self.frames.drawable(
            image::DynamicImage::ImageRgb8(img.clone()),
            (slot.1, slot.2),
        );
        self.frames.protocols.put(slot, drawable);
    }

    /// Hands the frames a draw needed to the loader, and has it decode the frames of the
    /// rows ahead behind them (`ahead.rs`), so that moving on does not wait for them.
    pub(super) fn request_frames(&mut self, wanted: Vec<crate::core::frames::FrameKey>) {
        let Some(loader) = &self.frames.loader else {
            return;
        };
        for key in wanted {
            loader.request(key);
        }
        self.prefetch_ahead();
    }

    /// Moves the frame cursor, or changes what the panel shows.
    pub(super) fn frame_action(&mut self, action: Action) {
        let Some(i) = self.current() else { return };
        let info = self.frame_info(i);
        let n = self.panel_list(&info).len();
        let fp = &mut self.item.frame_panel;
        match action {
            Action::FramePrev => fp.cursor = fp.cursor.min(n.saturating_sub(1)).saturating_sub(1),
            Action::FrameNext => fp.cursor = (fp.cursor + 1).min(n.saturating_sub(1)),
            Action::FrameConfig => {
                let k = info.configs.len().max(1);
                fp.config = Some(info.panel_config.map_or(0, |c| (c + 1) % k));
                fp.subset = Subset::All;
                fp.cursor = 0;
            }
            Action::FrameSubset => {
                fp.subset = match fp.subset {
                    Subset::All => Subset::Dropped,
                    Subset::Dropped => Subset::Added,
                    Subset::Added => Subset::All,
                };
                fp.cursor = 0;
            }
            Action::MarkEvidence => {
                if let Some((index, _)) = self.current_frame(&info) {
                    let mut rec = self.working_record(i);
                    crate::core::audit::edit::toggle_evidence(&mut rec, index);
                    self.change(i, rec);
                }
            }
            _ => {}
        }
    }

    /// Moves the frame cursor to the next frame of the audited transition that the higher
    /// budget dropped (or added), after the one under the cursor, wrapping. The panel keeps
    /// what it shows when that lists such frames; else it shows the configuration that
    /// sampled them (the lower budget for a dropped frame, the higher for an added one), so
    /// the frames around it are in the strip too.
    pub(super) fn jump_frame(&mut self, want: Subset) {
        let Some(i) = self.current() else { return };
        let info = self.frame_info(i);
        let what = if want == Subset::Dropped {
            "dropped"
        } else {
            "added"
        };
        let Some(HarmfulTransition {
            lower: a,
            higher: b,
        }) = info.pair
        else {
            self.overlays.notice = Some(Notice {
                text: format!("no transition under audit: no {what} frame"),
                error: false,
            });
            return;
        };
        let (lo, hi) = (
            sanitize(&info.configs[a].name),
            sanitize(&info.configs[b].name),
        );
        let (frames, owner) = if want == Subset::Dropped {
            (&info.transition.dropped, a)
        } else {
            (&info.transition.added, b)
        };
        if frames.is_empty() {
            let text = if want == Subset::Dropped {
                format!("no dropped frame: {hi} keeps every frame of {lo}")
            } else {
                format!("no added frame: {hi} samples no frame that {lo} did not")
            };
            self.overlays.notice = Some(Notice { text, error: false });
            return;
        }
        let at = self.current_frame(&info).map(|f| f.0);
        let lists = match self.item.frame_panel.subset {
            Subset::All => info.panel_config == Some(owner),
            s => s == want,
        };
        let next = match at {
            // The frame under the cursor is one of them or among them: the one after it.
            Some(x) if lists => frames.iter().position(|&f| f > x),
            // From another configuration's frame: the first at or after its time.
            Some(x) => frames.iter().position(|&f| f >= x),
            None => Some(0),
        };
        let wrapped = next.is_none();
        let n = next.unwrap_or(0);
        let target = frames[n];
        let count = frames.len();
        if !lists {
            self.item.frame_panel.config = Some(owner);
            self.item.frame_panel.subset = Subset::All;
        }
        let info = self.frame_info(i);
        if let Some(p) = self
            .panel_list(&info)
            .iter()
            .position(|e| e.index == target)
        {
            self.item.frame_panel.cursor = p;
        }
        self.overlays.notice = Some(Notice {
            text: format!(
                "{what} frame {} of {count} ({lo} → {hi}): frame {target} · {}{}",
                n + 1,
                crate::core::frames::timestamp(target, info.fps),
                if wrapped {
                    " · from the first again"
                } else {
                    ""
                }
            ),
            error: false,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(w: u32, h: u32) -> image::DynamicImage {
        image::DynamicImage::ImageRgb8(image::RgbImage::from_pixel(w, h, image::Rgb([9, 9, 9])))
    }

    /// xterm -fs 9 has 9x18 cells: a frame fitted to a 12x12 slot covers no more cells
    /// than the slot, and a sixel picture ends on a whole band of six rows inside it.
    #[test]
    fn pictures_are_fitted_to_the_terminals_cells() {
        let mut fs = FrameState::new();
        fs.images = ImageMode::Sixel;
        fs.cell = ratatui_image::FontSize::new(9, 18);
        assert_eq!(fs.slot_pixels((12, 12)), (108, 216));
        assert_eq!(fs.slot_pixels((5, 3)), (45, 54));
        assert_eq!(fs.slot_pixels((5, 1)), (45, 18));
        assert_eq!(fs.slot_pixels((5, 5)), (45, 90));
        assert_eq!(fs.slot_pixels((5, 4)), (45, 72));
        // A frame bigger than the slot is scaled down to it; its aspect kept.
        let Ok(Drawable::Protocol(p)) = fs.drawable(frame(1280, 720), (12, 12)) else {
            panic!("no sixel");
        };
        assert_eq!(p.size(), ratatui::layout::Size::new(12, 4));
        // Kitty before 0.28: placed directly, as many cells as the picture covers.
        fs.images = ImageMode::Kitty;
        fs.kitty_direct = true;
        let Ok(Drawable::KittyDirect(k)) = fs.drawable(frame(100, 50), (12, 12)) else {
            panic!("no kitty");
        };
        assert_eq!(k.size(), ratatui::layout::Size::new(12, 3));
    }
}
