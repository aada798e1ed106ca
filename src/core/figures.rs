//! What the researcher views and `frameaudit plot` draw, beyond the report's own numbers:
//! the data map of a model's items, the names and colours every figure shares, and the
//! pathway counts of audit records. The TUI and the plot files read the same values here,
//! so a screen and a figure never disagree.

use std::collections::{BTreeMap, BTreeSet};

use crate::core::analysis::mcq::{Class, McqItems};
use crate::core::audit::AuditRecord;

/// An sRGB colour.
pub type Rgb = (u8, u8, u8);

/// Right answers, stable right (green).
pub const RIGHT: Rgb = (46, 160, 67);
/// Wrong answers, stable wrong (gray).
pub const WRONG: Rgb = (150, 150, 150);
/// Gained at a step (blue).
pub const GAINED: Rgb = (31, 119, 180);
/// Lost at a step: a harmful transition (red).
pub const LOST: Rgb = (214, 39, 40);
/// The oracle level and the headroom (orange).
pub const ORACLE: Rgb = (255, 127, 14);
/// A model's accuracy curve (dark blue).
pub const CURVE: Rgb = (31, 63, 120);

/// The short name of a class, as figures label it.
pub fn class_label(c: Class) -> &'static str {
    match c {
        Class::AlwaysCorrect => "always right",
        Class::AlwaysWrong => "always wrong",
        Class::MonotonicIncreasing => "gain",
        Class::MonotonicDecreasing => "loss",
        Class::Oscillating => "oscillating",
    }
}

/// The colour of a class: right, wrong, gained, lost, and purple for oscillating.
pub fn class_colour(c: Class) -> Rgb {
    match c {
        Class::AlwaysCorrect => RIGHT,
        Class::AlwaysWrong => WRONG,
        Class::MonotonicIncreasing => GAINED,
        Class::MonotonicDecreasing => LOST,
        Class::Oscillating => (148, 103, 189),
    }
}

/// The four parts of a churn step, in stacking order, with their labels and colours.
pub const CHURN_PARTS: [(&str, Rgb); 4] = [
    ("stable right", RIGHT),
    ("gained", GAINED),
    ("lost", LOST),
    ("stable wrong", WRONG),
];

/// A palette for series without a meaning of their own (pathways, protocols).
pub const SERIES: [Rgb; 9] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
];

/// A model's items placed as in dataset-cartography maps: x is the mean correctness across
/// the K budgets (`right / K`), y the variability of the answer across budgets, measured
/// as the share of adjacent budget steps where it flips (`flips / (K - 1)`; 0 when K = 1).
/// With 0/1 answers both take few values, so items are counted per (right, flips) cell.
#[derive(Debug, Clone, PartialEq)]
pub struct DataMap {
    /// K, the number of budgets.
    pub k: usize,
    /// `(right, flips)` → items of each class (indexed as [`Class::ALL`]) in that cell.
    pub cells: BTreeMap<(usize, usize), [usize; 5]>,
}

impl DataMap {
    /// The map of a model's items on a grid of `k` configurations.
    pub fn new(items: &McqItems, k: usize) -> DataMap {
        let mut cells: BTreeMap<(usize, usize), [usize; 5]> = BTreeMap::new();
        for i in 0..items.class.len() {
            let cell = Self::cell_of(items, k, i);
            let class = Class::ALL
                .iter()
                .position(|&c| c == items.class[i])
                .unwrap_or(0);
            cells.entry(cell).or_default()[class] += 1;
        }
        DataMap { k, cells }
    }

    /// The `(right, flips)` cell of item row `i`.
    pub fn cell_of(items: &McqItems, k: usize, i: usize) -> (usize, usize) {
        let right = items.row(i, k).iter().filter(|&&v| v == 1).count();
        (right, items.adjacent_flips[i] as usize)
    }

    /// x of a cell: mean correctness in [0, 1].
    pub fn x(&self, right: usize) -> f64 {
        if self.k == 0 {
            0.0
        } else {
            right as f64 / self.k as f64
        }
    }

    /// y of a cell: variability (flip share) in [0, 1].
    pub fn y(&self, flips: usize) -> f64 {
        if self.k <= 1 {
            0.0
        } else {
            flips as f64 / (self.k - 1) as f64
        }
    }

    /// The item rows whose cell lies in the region (bounds inclusive, in cell units).
    pub fn items_in(
        items: &McqItems,
        k: usize,
        right: std::ops::RangeInclusive<usize>,
        flips: std::ops::RangeInclusive<usize>,
    ) -> Vec<usize> {
        (0..items.class.len())
            .filter(|&i| {
                let (r, f) = Self::cell_of(items, k, i);
                right.contains(&r) && flips.contains(&f)
            })
            .collect()
    }
}

/// How often a pathway was tagged, and how often as the primary one.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PathwayCount {
    /// Records that tag the pathway (as a tag or as the primary).
    pub tagged: usize,
    /// Records that give it as the primary pathway.
    pub primary: usize,
}

/// Pathway id → its counts.
pub type PathwayTable = BTreeMap<String, PathwayCount>;

/// Pathway counts of a set of audit records, overall and by model, benchmark and
/// transition (`"16f -> 32f"`). A pathway counts once per record, also when it is both
/// tagged and primary; records without any pathway are counted as untagged.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Findings {
    /// Records counted.
    pub records: usize,
    /// Records without any pathway.
    pub untagged: usize,
    /// Pathway counts over every record.
    pub overall: PathwayTable,
    /// Pathway counts per model.
    pub by_model: BTreeMap<String, PathwayTable>,
    /// Pathway counts per benchmark.
    pub by_benchmark: BTreeMap<String, PathwayTable>,
    /// Pathway counts per transition examined (`"16f -> 32f"`).
    pub by_transition: BTreeMap<String, PathwayTable>,
}

impl Findings {
    /// The findings of these records.
    pub fn of<'a>(records: impl IntoIterator<Item = &'a AuditRecord>) -> Findings {
        let mut f = Findings::default();
        for r in records {
            f.add(r);
        }
        f
    }

    /// Counts one more record.
    pub fn add(&mut self, r: &AuditRecord) {
        self.records += 1;
        let mut tags: BTreeSet<&str> = r.pathways.iter().map(String::as_str).collect();
        tags.extend(r.primary.as_deref());
        if tags.is_empty() {
            self.untagged += 1;
            return;
        }
        let transition = format!("{} -> {}", r.from, r.to);
        let tables = [
            &mut self.overall,
            self.by_model.entry(r.key.model.clone()).or_default(),
            self.by_benchmark
                .entry(r.key.benchmark.clone())
                .or_default(),
            self.by_transition.entry(transition).or_default(),
        ];
        for table in tables {
            for &t in &tags {
                let c = table.entry(t.to_string()).or_default();
                c.tagged += 1;
                if r.primary.as_deref() == Some(t) {
                    c.primary += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::audit::UnitKey;

    fn items(rows: &[&[u8]]) -> McqItems {
        McqItems {
            y: rows.iter().flat_map(|r| r.iter().copied()).collect(),
            class: rows.iter().map(|r| Class::of(r)).collect(),
            adjacent_flips: rows
                .iter()
                .map(|r| r.windows(2).filter(|w| w[0] != w[1]).count() as u32)
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn data_map_cells_and_regions() {
        let it = items(&[&[1, 1, 1], &[1, 0, 1], &[0, 1, 1], &[0, 1, 1], &[0, 0, 0]]);
        let map = DataMap::new(&it, 3);
        assert_eq!(map.cells[&(3, 0)], [1, 0, 0, 0, 0]);
        assert_eq!(map.cells[&(2, 2)], [0, 0, 0, 0, 1]);
        assert_eq!(map.cells[&(2, 1)], [0, 0, 2, 0, 0]);
        assert_eq!(map.cells[&(0, 0)], [0, 1, 0, 0, 0]);
        assert_eq!(map.x(2), 2.0 / 3.0);
        assert_eq!(map.y(1), 0.5);
        assert_eq!(DataMap::items_in(&it, 3, 2..=3, 1..=2), vec![1, 2, 3]);
    }

    #[test]
    fn findings_count_each_pathway_once_per_record() {
        let mut a = AuditRecord::blank(UnitKey::new("m", "b", "q1"), "8f", "16f", "t");
        a.pathways = vec!["dropped".into(), "prior".into()];
        a.primary = Some("dropped".into());
        let mut b = AuditRecord::blank(UnitKey::new("n", "b", "q2"), "8f", "16f", "t");
        b.primary = Some("prior".into());
        let c = AuditRecord::blank(UnitKey::new("n", "b", "q3"), "8f", "16f", "t");
        let f = Findings::of([&a, &b, &c]);
        assert_eq!((f.records, f.untagged), (3, 1));
        assert_eq!(
            f.overall["dropped"],
            PathwayCount {
                tagged: 1,
                primary: 1
            }
        );
        assert_eq!(
            f.overall["prior"],
            PathwayCount {
                tagged: 2,
                primary: 1
            }
        );
        assert_eq!(f.by_model["n"]["prior"].tagged, 1);
        assert_eq!(f.by_transition["8f -> 16f"]["prior"].tagged, 2);
    }
}
