//! The queue room: the rows, their filters, search and sort, the selection, and the queue's
//! update (moving, filtering, searching, the pickers, the mouse on the rows).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use crossterm::event::KeyEvent;

use crate::core::analysis::Report;
use crate::core::audit::{Status, UnitKey};
use crate::core::dataset::Dataset;
use crate::core::queue::Harm;
use crate::core::text::sanitize;
use crate::core::workspace::haystacks::{Haystacks, ItemTexts};
use crate::core::workspace::review::Review;
use crate::core::workspace::search::{FIELD_SEP, SearchRequest, SearchResult};
use crate::tui::input::action::Action;
use crate::tui::input::keymap::Context;
use crate::tui::input::line_edit::LineEdit;
use crate::tui::input::mouse::{DOUBLE_CLICK, Pointer, WHEEL_STEP};
use crate::tui::input::pick::{Outcome, Pick, PickKind};

use super::{
    App, Effect, Filter, HarmCounts, Input, Notice, Pairs, Row, RowNames, Screen, SortKey,
};

/// The queue: its rows, what filters, search and sort show of them, and the selection.
pub struct QueueState {
    /// Every row of the queue (the shard's, the review's).
    pub rows: Vec<Row>,
    /// The filters in force.
    pub filter: Filter,
    /// What the rows are sorted by.
    pub sort: SortKey,
    /// The search line.
    pub query: LineEdit,
    /// Counts the queries asked, so an answer to an older one is known as such.
    pub search_generation: u64,
    /// The newest search result received (possibly for an older query).
    pub search_result: Option<SearchResult>,
    /// Texts searched per row.
    pub haystacks: Arc<Haystacks>,
    /// The items' search texts, made once (the haystacks of each queue share them).
    pub(super) item_texts: Arc<ItemTexts>,
    /// Rows shown, in order (indices into `rows`).
    pub visible: Vec<u32>,
    /// The selected row (an index into `rows`), kept across filtering.
    pub selected: Option<u32>,
    /// First visible row drawn in the queue table.
    pub scroll: usize,
    /// Row of each unit, at `model * n_items + item` (`u32::MAX` for none).
    pub(super) unit_row: Vec<u32>,
    /// The listed transitions of the last row asked for (see [`App::pairs`]).
    pub(super) pairs_cache: std::cell::RefCell<Option<(usize, Pairs)>>,
    /// What part of the queue this session holds, shown in the header ("shard 2/5 (+20%
    /// shared)", "review of 2 audits"); `None` for the whole queue.
    pub part: Option<String>,
    /// Of the rows shown (`visible`: the filters and search count, as a review's or
    /// shard's restriction does), how many the R column marks with each glyph
    /// ([`Row::shown_harm`]); `None` when no row of the queue has replicates.
    pub harms: Option<HarmCounts>,
    /// Each model's name as the screens' narrow columns show it (`fit::short_names`), by
    /// model id.
    pub model_labels: Vec<String>,
}

/// How many of the rows at `shown` the R column marks with each glyph
/// ([`Row::shown_harm`]), so the counts add up to the rows shown; `None` when no row of
/// `rows` has replicates (the R column is then left out).
pub(super) fn harm_counts(rows: &[Row], shown: &[u32]) -> Option<HarmCounts> {
    if rows.iter().all(|r| r.q.harm.is_none()) {
        return None;
    }
    let mut counts = HarmCounts::default();
    for &i in shown {
        match rows[i as usize].shown_harm() {
            Some(h) => counts.by_harm[Harm::ALL.iter().position(|&x| x == h).unwrap_or(0)] += 1,
            None => counts.open_ended += 1,
        }
    }
    Some(counts)
}

impl QueueState {
    /// The harmful queue of `protocol`, with the items' search texts made beside it.
    pub fn new(ds: &Arc<Dataset>, report: &Report, protocol: u32) -> QueueState {
        let (rows, item_texts) = std::thread::scope(|s| {
            let texts = s.spawn(|| Arc::new(item_texts(ds)));
            let rows: Vec<Row> = crate::core::queue::queue_unlisted(
                report,
                protocol,
                crate::core::queue::QueueKind::Harmful,
            )
            .into_iter()
            .map(|q| Row { q })
            .collect();
            let texts = texts
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e));
            (rows, texts)
        });
        QueueState {
            rows,
            filter: Filter::default(),
            sort: SortKey::Rank,
            query: LineEdit::default(),
            search_generation: 0,
            search_result: None,
            haystacks: Arc::new(Haystacks::default()),
            item_texts,
            visible: Vec::new(),
            selected: None,
            scroll: 0,
            unit_row: Vec::new(),
            pairs_cache: std::cell::RefCell::new(None),
            part: None,
            harms: None,
            model_labels: {
                let names: Vec<String> = ds
                    .matrix
                    .models
                    .names()
                    .map(|n| crate::core::text::show_id(n).into_owned())
                    .collect();
                let refs: Vec<&str> = names.iter().map(String::as_str).collect();
                crate::tui::fit::short_names(&refs)
            },
        }
    }
}

/// The value after `current` among `options`, the first when there is none, `None` (any)
/// after the last.
pub(super) fn cycle<T: Clone + PartialEq>(options: &[T], current: &Option<T>) -> Option<T> {
    match current
        .as_ref()
        .and_then(|c| options.iter().position(|o| o == c))
    {
        None => options.first().cloned(),
        Some(p) if p + 1 < options.len() => Some(options[p + 1].clone()),
        Some(_) => None,
    }
}

impl App {
    /// Keeps only the queue rows whose unit passes `keep` (a shard, the disagreements under
    /// review), naming the part in the header.
    pub fn restrict(&mut self, part: String, keep: impl Fn(&UnitKey) -> bool) {
        let keys: Vec<bool> = (0..self.queue.rows.len())
            .map(|i| keep(&self.key(i)))
            .collect();
        let mut n = 0;
        self.queue.rows.retain(|_| {
            n += 1;
            keys[n - 1]
        });
        self.queue.part = Some(part);
        self.queue.selected = None;
        self.queue.scroll = 0;
        self.screen = Screen::Queue;
        self.index_rows();
    }

    /// Everything derived from the rows: the index by unit, the header's figures, the
    /// search texts, the visible rows, and where a resumed session starts.
    pub(super) fn index_rows(&mut self) {
        let app = self;
        app.index_units();
        app.overview = app.compute_overview();
        app.queue.haystacks = Arc::new(app.build_haystacks());
        // Resume where the annotator left off.
        let resume = app.session.last_visit().and_then(|k| app.row_of(k));
        app.refresh_visible();
        if let Some(i) = resume {
            app.queue.selected = Some(i as u32);
            app.item.pair = app.pair_of_record(i);
            app.screen = Screen::Item;
            app.follow_selection();
        }
    }

    /// The row of each unit ([`App::row_of`]).
    pub(super) fn index_units(&mut self) {
        let n_items = self.ds.matrix.items.len();
        self.queue.unit_row = vec![u32::MAX; self.ds.matrix.models.len() * n_items];
        for (i, r) in self.queue.rows.iter().enumerate() {
            self.queue.unit_row[r.q.model as usize * n_items + r.q.item as usize] = i as u32;
        }
        self.queue.pairs_cache.replace(None);
    }

    /// The texts fuzzy search looks in: item id, model, benchmark, question, note.
    pub(super) fn build_haystacks(&self) -> Haystacks {
        let m = &self.ds.matrix;
        let rows = self
            .queue
            .rows
            .iter()
            .map(|r| (r.q.model, r.q.item))
            .collect();
        let mut h =
            Haystacks::with_items(Arc::clone(&self.queue.item_texts), m.models.names(), rows);
        for (key, rec) in self.session.records() {
            if let Some(i) = self.row_of(key) {
                h.set_note(i, &rec.note);
            }
        }
        h
    }

    /// The first line of an item's question, sanitised (empty without items.jsonl).
    pub(super) fn question_of_item(&self, item: u32) -> String {
        question_of_item(&self.ds, item)
    }

    /// The first line of row `i`'s question, sanitised (empty without items.jsonl).
    pub fn question(&self, i: usize) -> String {
        self.question_of_item(self.queue.rows[i].q.item)
    }

    /// The names of row `i`'s unit, as in the cells (not sanitised).
    pub fn names(&self, i: usize) -> RowNames<'_> {
        let m = &self.ds.matrix;
        let q = &self.queue.rows[i].q;
        let item = m.item(q.item);
        RowNames {
            model: m.models.name(q.model),
            benchmark: m.benchmarks.name(item.benchmark),
            item_id: &item.id,
        }
    }

    /// Model `model`'s name as a narrow column shows it (whole names are in the legend).
    pub fn model_label(&self, model: u32) -> &str {
        self.queue
            .model_labels
            .get(model as usize)
            .map_or("", String::as_str)
    }

    /// The audit key of row `i`.
    pub fn key(&self, i: usize) -> UnitKey {
        let n = self.names(i);
        UnitKey::new(n.model, n.benchmark, n.item_id)
    }

    /// The row of a unit, if the queue holds it.
    pub fn row_of(&self, key: &UnitKey) -> Option<usize> {
        let m = &self.ds.matrix;
        let model = m.models.get(&key.model)?;
        let item = m.find_item(&key.benchmark, &key.item_id)?;
        let at = model as usize * m.items.len() + item as usize;
        self.queue
            .unit_row
            .get(at)
            .filter(|&&r| r != u32::MAX)
            .map(|&r| r as usize)
    }

    /// Row `i`'s harmful transitions as grid columns: the first
    /// MAX_LISTED_PAIRS in grid order, listed when asked for (the last row's are kept).
    pub fn pairs(&self, i: usize) -> Pairs {
        if let Some((row, p)) = &*self.queue.pairs_cache.borrow()
            && *row == i
        {
            return p.clone();
        }
        let q = &self.queue.rows[i].q;
        let listed = match &q.transitions {
            Some(p) => (**p).clone(),
            None => crate::core::queue::list_pairs(&self.report, q),
        };
        let listed = Arc::new(listed);
        self.queue.pairs_cache.replace(Some((i, listed.clone())));
        listed
    }

    pub(super) fn passes(&self, i: usize) -> bool {
        let r = &self.queue.rows[i];
        let f = &self.queue.filter;
        let m = &self.ds.matrix;
        f.model.is_none_or(|x| x == r.q.model)
            && f.benchmark.is_none_or(|b| b == m.item(r.q.item).benchmark)
            && f.class.is_none_or(|c| r.q.class == c)
            && (!f.terminal_only || r.q.terminal)
            && !(f.hide_lottery && r.q.harm == Some(crate::core::queue::Harm::Lottery))
            && f.items
                .as_ref()
                .is_none_or(|s| s.items.contains(&(r.q.model, r.q.item)))
            && f.status.is_none_or(|s| self.status(i) == s)
            && f.tag.as_ref().is_none_or(|t| {
                self.record(i)
                    .is_some_and(|x| x.pathways.contains(t) || x.primary.as_ref() == Some(t))
            })
    }

    /// The rows that pass the filters and the search, in rank order.
    pub(super) fn passing(&self) -> Vec<u32> {
        let searched: Option<Arc<Vec<u32>>> = match &self.queue.search_result {
            Some(r) if !self.queue.query.is_empty() => Some(r.matches.clone()),
            _ => None,
        };
        match &searched {
            Some(m) => m
                .iter()
                .copied()
                .filter(|&i| self.passes(i as usize))
                .collect(),
            None => (0..self.queue.rows.len() as u32)
                .filter(|&i| self.passes(i as usize))
                .collect(),
        }
    }

    /// Recomputes the visible rows from filters, search and sort, keeping the selection.
    pub fn refresh_visible(&mut self) {
        let mut v = self.passing();
        // Rows (and search results) come in rank order; other keys sort them, stably.
        // Model ids follow the names' order, item ids (benchmark, item id) order
        // (core/matrix/), so the ids sort as the names do.
        let rows = &self.queue.rows;
        match self.queue.sort {
            SortKey::Rank => {}
            SortKey::Model => v.sort_by_key(|&a| {
                let q = &rows[a as usize].q;
                (q.model, q.item)
            }),
            SortKey::Item => v.sort_by_key(|&a| {
                let q = &rows[a as usize].q;
                (q.item, q.model)
            }),
            SortKey::Status => v.sort_by_key(|&i| self.status(i as usize) as u8),
            SortKey::Pairs => v.sort_by(|&a, &b| {
                crate::core::queue::by_harmful_pairs(&rows[a as usize].q, &rows[b as usize].q)
            }),
            // As the R column shows them; `None` sorts before any harm: the open-ended
            // rows, which the replicates do not judge, go last.
            SortKey::Stable => v.sort_by_key(|&a| {
                let h = rows[a as usize].shown_harm();
                (h.is_none(), h)
            }),
        }
        // The title's counts are of the rows shown, so they follow every filter.
        self.queue.harms = harm_counts(&self.queue.rows, &v);
        self.queue.visible = v;
        self.follow_selection();
    }

    /// Keeps the selection on screen: the same row if still visible, else the nearest.
    pub(super) fn follow_selection(&mut self) {
        let pos = self
            .queue
            .selected
            .and_then(|s| self.queue.visible.iter().position(|&v| v == s));
        let pos = match pos {
            Some(p) => Some(p),
            None if self.queue.visible.is_empty() => None,
            None => Some(0),
        };
        self.queue.selected = pos.map(|p| self.queue.visible[p]);
        if let Some(p) = pos {
            if p < self.queue.scroll {
                self.queue.scroll = p;
            } else if p >= self.queue.scroll + self.geometry.page.max(1) {
                self.queue.scroll = p + 1 - self.geometry.page.max(1);
            }
        }
        self.queue.scroll = self
            .queue
            .scroll
            .min(self.queue.visible.len().saturating_sub(1));
    }

    pub(super) fn cursor(&self) -> Option<usize> {
        self.queue
            .selected
            .and_then(|s| self.queue.visible.iter().position(|&v| v == s))
    }

    pub(super) fn move_to(&mut self, pos: usize) {
        if self.queue.visible.is_empty() {
            return;
        }
        let pos = pos.min(self.queue.visible.len() - 1);
        self.queue.selected = Some(self.queue.visible[pos]);
        self.follow_selection();
    }

    pub(super) fn step(&mut self, delta: isize) {
        let cur = self.cursor().unwrap_or(0) as isize;
        self.move_to((cur + delta).max(0) as usize);
    }

    /// The distinct values of a row property, in order.
    pub(super) fn distinct<T: Ord>(&self, f: impl Fn(&Row) -> T) -> Vec<T> {
        self.queue
            .rows
            .iter()
            .map(f)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    }

    /// Builds the search request for the current query, narrowing earlier matches when the
    /// query only grew and those matches were complete (a first page of a scan still
    /// running is not all the rows a grown query can match).
    pub fn search_request(&self) -> SearchRequest {
        let within = self.queue.search_result.as_ref().and_then(|r| {
            (r.complete
                && !r.query.is_empty()
                && self.queue.query.as_str().starts_with(&r.query)
                && self.queue.query.as_str() != r.query)
                .then(|| r.matches.clone())
        });
        SearchRequest {
            generation: self.queue.search_generation,
            query: self.queue.query.as_str().to_string(),
            haystacks: self.queue.haystacks.clone(),
            within,
        }
    }

    /// A search result arrived: use it if it answers the current query.
    pub fn on_search_result(&mut self, r: SearchResult) {
        let stale = self.queue.search_result.as_ref().is_some_and(|x| {
            r.generation < x.generation
                || (r.generation == x.generation && x.complete && !r.complete)
        });
        if stale {
            return;
        }
        self.queue.search_result = Some(r);
        self.refresh_visible();
    }

    /// Whether the shown rows are for an older query than the one typed.
    pub fn search_pending(&self) -> bool {
        !self.queue.query.is_empty()
            && self
                .queue
                .search_result
                .as_ref()
                .is_none_or(|r| r.query != self.queue.query.as_str())
    }

    /// Moves to the next (or previous) row matching the search, wrapping; the queue shows
    /// only matches while a search is on, so this is the next shown row.
    pub(super) fn next_match(&mut self, forward: bool) {
        let n = self.queue.visible.len();
        let text = if self.queue.query.as_str().trim().is_empty() {
            match self.keymap.hint(Context::Queue, Action::Search) {
                Some(k) => format!("no search: {k} searches"),
                None => "no search".to_string(),
            }
        } else if n == 0 {
            "no match".to_string()
        } else {
            let cur = self.cursor().unwrap_or(0);
            let p = if forward {
                (cur + 1) % n
            } else {
                (cur + n - 1) % n
            };
            self.move_to(p);
            format!("match {} of {n}", p + 1)
        };
        self.overlays.notice = Some(Notice { text, error: false });
    }

    /// Moves to the next visible row still to do after the current one (wrapping), and
    /// opens it on the item screen.
    pub(super) fn next_todo(&mut self) {
        let n = self.queue.visible.len();
        let cur = self.cursor();
        let start = cur.map_or(0, |c| c + 1);
        let found = (0..n)
            .map(|d| (start + d) % n)
            .filter(|&p| Some(p) != cur)
            .find(|&p| self.status(self.queue.visible[p] as usize) == Status::Todo);
        match found {
            Some(p) => {
                self.move_to(p);
                if self.screen == Screen::Item {
                    self.open();
                }
            }
            None => {
                self.overlays.notice = Some(Notice {
                    text: "no other item to do in this list".into(),
                    error: false,
                });
            }
        }
    }

    /// Opens the picker of a filter: the values the queue holds, each with the rows it
    /// would show under the other filters and the search.
    pub(super) fn open_pick(&mut self, kind: PickKind) {
        let m = &self.ds.matrix;
        let value = |r: &Row| match kind {
            PickKind::Model => r.q.model,
            PickKind::Benchmark => m.item(r.q.item).benchmark,
        };
        let values = self.distinct(value);
        let mut others = self.queue.filter.clone();
        match kind {
            PickKind::Model => others.model = None,
            PickKind::Benchmark => others.benchmark = None,
        }
        let kept = std::mem::replace(&mut self.queue.filter, others);
        let passing = self.passing();
        self.queue.filter = kept;
        let mut counts: rustc_hash::FxHashMap<u32, usize> = Default::default();
        for &i in &passing {
            *counts
                .entry(value(&self.queue.rows[i as usize]))
                .or_default() += 1;
        }
        let named = values
            .into_iter()
            .map(|v| {
                let name = match kind {
                    PickKind::Model => m.models.name(v),
                    PickKind::Benchmark => m.benchmarks.name(v),
                };
                (
                    v,
                    sanitize(name).into_owned(),
                    counts.get(&v).copied().unwrap_or(0),
                )
            })
            .collect();
        let current = match kind {
            PickKind::Model => self.queue.filter.model,
            PickKind::Benchmark => self.queue.filter.benchmark,
        };
        let mut pick = Pick::new(kind, named, passing.len(), current);
        pick.follow(crate::tui::input::pick::page(self.screen_area(), &pick));
        self.overlays.pick = Some(pick);
    }

    /// The whole terminal, as the view draws on it.
    pub(super) fn screen_area(&self) -> ratatui::layout::Rect {
        ratatui::layout::Rect::new(0, 0, self.geometry.term_size.0, self.geometry.term_size.1)
    }

    /// A key while a picker is open.
    pub(super) fn pick_key(&mut self, e: &KeyEvent) {
        let area = self.screen_area();
        let Some(pick) = &mut self.overlays.pick else {
            return;
        };
        let page = crate::tui::input::pick::page(area, pick);
        match pick.key(e, page) {
            Outcome::Open => {}
            Outcome::Cancelled => self.overlays.pick = None,
            Outcome::Picked(value) => self.apply_pick(value),
        }
    }

    /// Sets the filter of the open picker to `value` (`None`: any) and closes it.
    pub(super) fn apply_pick(&mut self, value: Option<u32>) {
        let Some(pick) = self.overlays.pick.take() else {
            return;
        };
        let label = pick
            .entries()
            .iter()
            .find(|e| e.value == value)
            .map_or_else(String::new, |e| e.label.clone());
        match pick.kind {
            PickKind::Model => self.queue.filter.model = value,
            PickKind::Benchmark => self.queue.filter.benchmark = value,
        }
        self.refresh_visible();
        self.overlays.notice = Some(Notice {
            text: format!(
                "{}: {label} · {} of {} rows shown",
                pick.kind.noun(),
                self.queue.visible.len(),
                self.queue.rows.len()
            ),
            error: false,
        });
    }
    /// An action of the queue: moving, filtering, searching, sorting. `None` when the
    /// action is not the queue's.
    pub(super) fn queue_update(&mut self, action: Action) -> Option<Vec<Effect>> {
        let m = &self.ds.matrix;
        let q = &mut self.queue;
        match action {
            Action::Up => self.step(-1),
            Action::Down => self.step(1),
            Action::PageUp => self.step(-(self.geometry.page.max(1) as isize)),
            Action::PageDown => self.step(self.geometry.page.max(1) as isize),
            Action::Top => self.move_to(0),
            Action::Bottom => self.move_to(usize::MAX),
            Action::Open => self.open(),
            Action::Search => {
                // From the item screen too: search filters the queue, so it opens there.
                self.screen = Screen::Queue;
                self.overlays.input = Input::Search;
            }
            Action::FilterModel => {
                let models = self.distinct(|r| r.q.model);
                self.queue.filter.model = cycle(&models, &self.queue.filter.model);
                self.refresh_visible();
            }
            Action::FilterBenchmark => {
                let benches = self.distinct(|r| m.item(r.q.item).benchmark);
                self.queue.filter.benchmark = cycle(&benches, &self.queue.filter.benchmark);
                self.refresh_visible();
            }
            Action::PickModel => self.open_pick(PickKind::Model),
            Action::PickBenchmark => self.open_pick(PickKind::Benchmark),
            Action::FilterClass => {
                // Only the classes the queue holds (a queue of harmful items holds no
                // always-right or gaining trajectory), in the views' order, then the
                // open-ended items.
                let mut classes = self.distinct(|r| r.q.class);
                classes.sort_by_key(|c| c.is_none());
                self.queue.filter.class = cycle(&classes, &self.queue.filter.class);
                self.refresh_visible();
            }
            Action::FilterStatus => {
                let all = [Status::Todo, Status::Done, Status::Skipped, Status::Flagged];
                q.filter.status = cycle(&all, &q.filter.status);
                self.refresh_visible();
            }
            Action::FilterTag => {
                let tags: Vec<String> = self
                    .taxonomy
                    .pathways
                    .iter()
                    .map(|p| p.id.clone())
                    .collect();
                self.queue.filter.tag = cycle(&tags, &self.queue.filter.tag);
                self.refresh_visible();
            }
            Action::ToggleTerminal => {
                q.filter.terminal_only = !q.filter.terminal_only;
                self.refresh_visible();
            }
            Action::HideLottery => {
                q.filter.hide_lottery = !q.filter.hide_lottery;
                self.refresh_visible();
            }
            Action::SortStable => {
                q.sort = SortKey::Stable;
                self.refresh_visible();
            }
            Action::ClearFilters => {
                q.filter = Filter::default();
                q.query.clear();
                self.refresh_visible();
            }
            Action::CycleSort => {
                q.sort = q.sort.next();
                self.refresh_visible();
            }
            Action::NextTodo => self.next_todo(),
            Action::NextMatch | Action::PrevMatch => self.next_match(action == Action::NextMatch),
            _ => return None,
        }
        Some(Vec::new())
    }

    /// The wheel or a click on the queue: the wheel moves the selection, a click selects a
    /// row and a second click on it within [`DOUBLE_CLICK`] opens it.
    pub(super) fn queue_pointer(&mut self, p: Pointer) -> Vec<Effect> {
        let at = match p {
            Pointer::Wheel(d) => {
                self.step(d * WHEEL_STEP as isize);
                return Vec::new();
            }
            Pointer::Click(at) => at,
        };
        let Some(hit) = self.geometry.queue_hit.filter(|h| h.area.contains(at)) else {
            return Vec::new();
        };
        let pos = hit.first + usize::from(at.y - hit.area.y);
        let Some(&row) = self.queue.visible.get(pos) else {
            return Vec::new();
        };
        let now = Instant::now();
        let again = self
            .geometry
            .last_click
            .is_some_and(|(r, t)| r == row && now.duration_since(t) <= DOUBLE_CLICK);
        self.queue.selected = Some(row);
        self.follow_selection();
        if again {
            self.geometry.last_click = None;
            // Opening ends the search line's editing (the query stays, as with Enter).
            self.overlays.input = Input::None;
            self.open();
            // Opening notes the visit in the audit file.
            if self.session.has_unsent() {
                return vec![Effect::Save];
            }
        } else {
            self.geometry.last_click = Some((row, now));
        }
        Vec::new()
    }

    /// The wheel or a click while a picker is open: the wheel moves its cursor, a click on
    /// an entry picks it, a click outside cancels.
    pub(super) fn pick_pointer(&mut self, p: Pointer) {
        let area = self.screen_area();
        let Some(pick) = &mut self.overlays.pick else {
            return;
        };
        let page = crate::tui::input::pick::page(area, pick);
        let at = match p {
            Pointer::Wheel(d) => {
                pick.step(d, page);
                return;
            }
            Pointer::Click(at) => at,
        };
        let list = crate::tui::input::pick::list_area(area, pick);
        if list.contains(at) {
            let pos = pick.scroll + usize::from(at.y - list.y);
            if pos < pick.len() {
                pick.cursor = pos;
                let value = pick.selected().and_then(|e| e.value);
                self.apply_pick(value);
            }
        } else if !crate::tui::input::pick::popup(area, pick).contains(at) {
            self.overlays.pick = None;
        }
    }

    /// Keeps only the disagreements of a review in the queue, and says so when some of them
    /// are not harmful transitions of this data.
    pub(super) fn restrict_to_review(&mut self, review: Review) {
        let units = review.units.len();
        let part = format!(
            "review: {}",
            crate::core::text::count(units, "disagreement")
        );
        let keep: std::collections::BTreeSet<UnitKey> = review.units.keys().cloned().collect();
        self.audits.review = Some(review);
        self.restrict(part, |k| keep.contains(k));
        if self.queue.rows.len() < units {
            self.overlays.notice = Some(Notice {
                text: format!(
                    "{} of the {units} disagreements are not harmful transitions of this data (another dataset or analysis?)",
                    units - self.queue.rows.len()
                ),
                error: true,
            });
        }
    }
}

/// The first line of an item's question, sanitised (empty without items.jsonl).
fn question_of_item(ds: &Dataset, item: u32) -> String {
    ds.item_meta(item)
        .and_then(|i| i.question.as_deref())
        .map(|s| sanitize(s.lines().next().unwrap_or("")).into_owned())
        .unwrap_or_default()
}

/// The items' part of the search texts: id, and benchmark with the question.
fn item_texts(ds: &Dataset) -> ItemTexts {
    let m = &ds.matrix;
    ItemTexts::new(m.items.iter().enumerate().map(|(i, it)| {
        let question = question_of_item(ds, i as u32);
        let rest = format!("{}{FIELD_SEP}{question}", m.benchmarks.name(it.benchmark));
        (&*it.id, rest)
    }))
}
