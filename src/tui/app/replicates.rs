//! The replicates read behind the first screen: a large dataset with replicates (in
//! `replicates/` files, or among the lines of its cells files) opens on its canonical cells
//! (`core::dataset::load_canonical_first`), and the whole dataset, with the analyses made
//! from it, takes their place once it is read. Replicates change no canonical cell
//! (checked as it is read, `DeferredReplicates::load`), so the queue keeps its rows, order,
//! filters and selection; what changes is whether each row's harm survives them, the views'
//! noise floor, and the replicates each screen shows.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::core::analysis::Report;
use crate::core::dataset::Dataset;
use crate::core::queue::{QueueKind, queue_unlisted};

use super::{App, Effect, Notice, Screen};

impl App {
    /// The dataset's replicates are still being read: the screens opened on its canonical
    /// cells, which left them for later (`Dataset::deferred`), and no row's harm is judged
    /// yet.
    pub fn replicates_reading(&self) -> bool {
        self.ds.deferred.is_some()
    }

    /// The whole dataset arrived, read with its replicates and checked to have the same
    /// canonical cells, and `report` made from it as the first one was: they take the place
    /// of the first ones. A researcher view on screen is built again from them (the
    /// effects ask the worker for it).
    pub fn attach_replicates(&mut self, full: Arc<Dataset>, report: Report) -> Vec<Effect> {
        let more_warnings = full
            .warnings
            .warning_count()
            .saturating_sub(self.ds.warnings.warning_count());
        // The same rows, ranked alike (replicates change no measure of the ranking): each
        // keeps its place and takes the whole report's row, which knows its harm.
        let mut rows: FxHashMap<(u32, u32), _> =
            queue_unlisted(&report, self.protocol, QueueKind::Harmful)
                .into_iter()
                .map(|q| ((q.model, q.item), q))
                .collect();
        for r in &mut self.queue.rows {
            if let Some(q) = rows.remove(&(r.q.model, r.q.item)) {
                r.q = q;
            }
        }
        self.ds = full;
        self.report = Arc::new(report);
        self.index_units();
        self.overview = self.compute_overview();
        self.research.forget_views();
        self.refresh_visible();
        if more_warnings > 0 {
            self.overlays.notice = Some(Notice {
                text: format!(
                    "the replicate files gave {more_warnings} warning(s): `frameaudit validate` lists them"
                ),
                error: true,
            });
        }
        if matches!(self.screen, Screen::Research(_)) {
            self.ensure_view()
        } else {
            Vec::new()
        }
    }
}
