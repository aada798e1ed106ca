//! Compact per-cell columns of the response matrix.
//!
//! A matrix of 10 million cells holds a dozen values per cell; stored as `u32` and `f64`
//! they take about 58 bytes a cell. Most columns hold few distinct values (a handful of
//! models and configurations, the letters A-E as answers, 0 and 1 as correctness), so
//! each is stored in the narrowest width that holds its largest id:
//!
//! - [`Ids`]: ids in 1, 2 or 4 bytes, widened when a larger id arrives; the "none" id
//!   (`u32::MAX`) costs nothing.
//! - [`Floats`]: numbers coded against a table of the distinct values seen, while there
//!   are at most 65 536 of them, else stored as they are. The values come back bit for
//!   bit, NaN included.
//! - [`Lines`]: the input line of each cell, as runs: cells read one a line (cells JSONL)
//!   or a row of several cells a line (per-item CSV) take one run per stretch of
//!   consecutive lines, not four bytes a cell.

use rustc_hash::FxHashMap;

/// A column of `u32` ids in the narrowest width that holds them. Stored as `id + 1`
/// (wrapping), so that `u32::MAX`, the "none" id, is stored as 0.
#[derive(Debug, Clone)]
pub enum Ids {
    /// Every stored id fits a byte.
    U8(Vec<u8>),
    /// Every stored id fits two bytes.
    U16(Vec<u16>),
    /// Full width.
    U32(Vec<u32>),
}

impl Default for Ids {
    fn default() -> Self {
        Ids::U8(Vec::new())
    }
}

impl PartialEq for Ids {
    /// Equal when they hold the same ids, whatever their widths.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Ids {
    /// Ids in the column (one per cell).
    pub fn len(&self) -> usize {
        match self {
            Ids::U8(v) => v.len(),
            Ids::U16(v) => v.len(),
            Ids::U32(v) => v.len(),
        }
    }

    /// True for a column of no cells.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The id at `i`. Panics when `i` is out of range, as indexing does.
    #[inline]
    pub fn get(&self, i: usize) -> u32 {
        let stored = match self {
            Ids::U8(v) => u32::from(v[i]),
            Ids::U16(v) => u32::from(v[i]),
            Ids::U32(v) => v[i],
        };
        stored.wrapping_sub(1)
    }

    /// The id at `i`, or `None` past the end.
    pub fn try_get(&self, i: usize) -> Option<u32> {
        (i < self.len()).then(|| self.get(i))
    }

    /// Bytes a value takes now.
    pub fn width(&self) -> usize {
        match self {
            Ids::U8(_) => 1,
            Ids::U16(_) => 2,
            Ids::U32(_) => 4,
        }
    }

    /// The largest stored value the width holds.
    fn top(&self) -> u32 {
        match self {
            Ids::U8(_) => u32::from(u8::MAX),
            Ids::U16(_) => u32::from(u16::MAX),
            Ids::U32(_) => u32::MAX,
        }
    }

    /// Makes room for the stored value `stored`, widening the column if it needs to.
    #[cold]
    #[inline(never)]
    fn widen_for(&mut self, stored: u32) {
        let need = if stored <= u32::from(u8::MAX) {
            1
        } else if stored <= u32::from(u16::MAX) {
            2
        } else {
            4
        };
        if need <= self.width() {
            return;
        }
        let old = std::mem::take(self);
        *self = match (need, old) {
            (2, Ids::U8(v)) => {
                let mut w = Vec::with_capacity(v.capacity());
                w.extend(v.iter().map(|&x| u16::from(x)));
                Ids::U16(w)
            }
            (_, Ids::U8(v)) => {
                let mut w = Vec::with_capacity(v.capacity());
                w.extend(v.iter().map(|&x| u32::from(x)));
                Ids::U32(w)
            }
            (_, Ids::U16(v)) => {
                let mut w = Vec::with_capacity(v.capacity());
                w.extend(v.iter().map(|&x| u32::from(x)));
                Ids::U32(w)
            }
            (_, wide) => wide,
        };
    }

    /// Appends an id, widening the column first when it does not fit.
    #[inline]
    pub fn push(&mut self, id: u32) {
        let stored = id.wrapping_add(1);
        if stored > self.top() {
            self.widen_for(stored);
        }
        match self {
            // The width was checked above.
            Ids::U8(v) => v.push(stored as u8),
            Ids::U16(v) => v.push(stored as u16),
            Ids::U32(v) => v.push(stored),
        }
    }

    /// Makes room for `n` more ids at the current width.
    pub fn reserve(&mut self, n: usize) {
        match self {
            Ids::U8(v) => v.reserve(n),
            Ids::U16(v) => v.reserve(n),
            Ids::U32(v) => v.reserve(n),
        }
    }

    /// Empties the column, keeping its allocation.
    pub fn clear(&mut self) {
        match self {
            Ids::U8(v) => v.clear(),
            Ids::U16(v) => v.clear(),
            Ids::U32(v) => v.clear(),
        }
    }

    /// Gives back spare room of a column that is complete.
    pub fn shrink_to_fit(&mut self) {
        match self {
            Ids::U8(v) => v.shrink_to_fit(),
            Ids::U16(v) => v.shrink_to_fit(),
            Ids::U32(v) => v.shrink_to_fit(),
        }
    }

    /// Every id, in cell order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Calls `f` on the ids in cell order, a chunk at a time: the width is matched once a
    /// column, not once an id, so bulk passes (joins, renumbering, counting) run as plain
    /// loops.
    pub fn for_each_chunk(&self, mut f: impl FnMut(&[u32])) {
        fn go<S: Copy + Into<u32>>(v: &[S], f: &mut impl FnMut(&[u32])) {
            let mut buf = [0u32; CHUNK];
            for c in v.chunks(CHUNK) {
                for (b, &x) in buf.iter_mut().zip(c) {
                    *b = x.into().wrapping_sub(1);
                }
                f(&buf[..c.len()]);
            }
        }
        match self {
            Ids::U8(v) => go(v, &mut f),
            Ids::U16(v) => go(v, &mut f),
            Ids::U32(v) => go(v, &mut f),
        }
    }

    /// `f` of the id at each position of `at`, in order, the width matched once.
    pub fn map_at<T>(&self, at: &[u32], f: impl Fn(u32) -> T) -> Vec<T> {
        fn go<S: Copy + Into<u32>, T>(v: &[S], at: &[u32], f: impl Fn(u32) -> T) -> Vec<T> {
            at.iter()
                .map(|&i| f(v[i as usize].into().wrapping_sub(1)))
                .collect()
        }
        match self {
            Ids::U8(v) => go(v, at, f),
            Ids::U16(v) => go(v, at, f),
            Ids::U32(v) => go(v, at, f),
        }
    }

    /// The ids from `at` on, as many as `out` holds, into `out`.
    pub fn copy_to(&self, at: usize, out: &mut [u32]) {
        fn go<S: Copy + Into<u32>>(v: &[S], out: &mut [u32]) {
            for (o, &x) in out.iter_mut().zip(v) {
                *o = x.into().wrapping_sub(1);
            }
        }
        let to = at + out.len();
        match self {
            Ids::U8(v) => go(&v[at..to], out),
            Ids::U16(v) => go(&v[at..to], out),
            Ids::U32(v) => go(&v[at..to], out),
        }
    }

    /// Appends `ids`, widening the column once if the largest does not fit.
    pub fn extend_from_ids(&mut self, ids: &[u32]) {
        let top = ids.iter().fold(0, |top, &id| top.max(id.wrapping_add(1)));
        if top > self.top() {
            self.widen_for(top);
        }
        match self {
            // Every stored value fits the width now.
            Ids::U8(v) => v.extend(ids.iter().map(|&id| id.wrapping_add(1) as u8)),
            Ids::U16(v) => v.extend(ids.iter().map(|&id| id.wrapping_add(1) as u16)),
            Ids::U32(v) => v.extend(ids.iter().map(|&id| id.wrapping_add(1))),
        }
    }

    /// Appends every id of `other`, each through `map`.
    pub fn extend_mapped(&mut self, other: &Ids, map: impl Fn(u32) -> u32) {
        self.reserve(other.len());
        let mut mapped = [0u32; CHUNK];
        other.for_each_chunk(|ids| {
            for (m, &id) in mapped.iter_mut().zip(ids) {
                *m = map(id);
            }
            self.extend_from_ids(&mapped[..ids.len()]);
        });
    }

    /// Replaces every id by `map(id)`, in the width the new ids need. The ids are replaced
    /// where they lie unless the width changes (a renumbering keeps the ids' range, so
    /// mostly it does not).
    pub fn remap(&mut self, map: impl Fn(u32) -> u32) {
        /// Maps `v` in place while the new ids fit; returns where one did not, and the
        /// largest stored value met.
        fn go<S: Copy + Into<u32> + TryFrom<u32>>(
            v: &mut [S],
            map: &impl Fn(u32) -> u32,
        ) -> (Option<usize>, u32) {
            let mut buf = [0u32; CHUNK];
            let mut top = 0;
            for (k, c) in v.chunks_mut(CHUNK).enumerate() {
                let stored = &mut buf[..c.len()];
                for (b, &x) in stored.iter_mut().zip(c.iter()) {
                    *b = map(x.into().wrapping_sub(1)).wrapping_add(1);
                }
                top = stored.iter().fold(top, |t, &b| t.max(b));
                if stored.iter().any(|&b| S::try_from(b).is_err()) {
                    return (Some(k * CHUNK), top);
                }
                for (x, &b) in c.iter_mut().zip(stored.iter()) {
                    *x = S::try_from(b).unwrap_or(*x);
                }
            }
            (None, top)
        }
        let (too_wide, top) = match self {
            Ids::U8(v) => go(v, &map),
            Ids::U16(v) => go(v, &map),
            Ids::U32(v) => go(v, &map),
        };
        let narrower = match self {
            Ids::U8(_) => false,
            Ids::U16(_) => top <= u32::from(u8::MAX),
            Ids::U32(_) => top <= u32::from(u16::MAX),
        };
        if too_wide.is_some() || narrower {
            // The ids mapped so far are mapped again: start over into a column of its own.
            let old = std::mem::take(self);
            let mut out = Ids::default();
            out.reserve(old.len());
            let done = too_wide.unwrap_or(old.len());
            let mut mapped = [0u32; CHUNK];
            old.for_each_chunk(|ids| {
                let at = out.len();
                for (k, (m, &id)) in mapped.iter_mut().zip(ids).enumerate() {
                    *m = if at + k < done { id } else { map(id) };
                }
                out.extend_from_ids(&mapped[..ids.len()]);
            });
            *self = out;
        }
    }
}

/// Ids handled at a time by the bulk passes of [`Ids`].
const CHUNK: usize = 1024;

impl FromIterator<u32> for Ids {
    fn from_iter<T: IntoIterator<Item = u32>>(iter: T) -> Self {
        let mut ids = Ids::default();
        for id in iter {
            ids.push(id);
        }
        ids
    }
}

/// Distinct values a [`Floats`] column codes before it stores values as they are.
const MAX_CODED: usize = 1 << 16;

/// A column of `f64` coded against the table of its distinct values while they are few.
#[derive(Debug, Clone, Default)]
pub struct Floats {
    codes: Ids,
    table: Vec<f64>,
    /// Bits of each value in `table` to its code; emptied by [`Floats::shrink_to_fit`].
    lookup: FxHashMap<u64, u32>,
    /// Set once there are more distinct values than [`MAX_CODED`]: the values themselves.
    raw: Option<Vec<f64>>,
    /// Values pushed lately and their codes, by a hash of their bits (a column mostly
    /// repeats a few values: a hit costs no lookup in the map).
    recent: Recent,
}

/// A direct-mapped cache of value bits to codes ([`Floats`]).
#[derive(Debug, Clone, Default)]
struct Recent([(u64, u32); 32]);

impl Recent {
    fn slot(bits: u64) -> usize {
        (bits.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 59) as usize
    }

    /// The code of `bits`, if it is in the cache (codes are kept plus one: 0 is vacant).
    fn get(&self, bits: u64) -> Option<u32> {
        let (b, code) = self.0[Recent::slot(bits)];
        (b == bits && code > 0).then(|| code - 1)
    }

    fn put(&mut self, bits: u64, code: u32) {
        self.0[Recent::slot(bits)] = (bits, code + 1);
    }
}

impl PartialEq for Floats {
    /// Equal when they hold the same values bit for bit.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .zip(other.iter())
                .all(|(a, b)| a.to_bits() == b.to_bits())
    }
}

impl Floats {
    /// Values in the column (one per cell).
    pub fn len(&self) -> usize {
        match &self.raw {
            Some(v) => v.len(),
            None => self.codes.len(),
        }
    }

    /// True for a column of no cells.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value at `i`. Panics when `i` is out of range, as indexing does.
    #[inline]
    pub fn get(&self, i: usize) -> f64 {
        match &self.raw {
            Some(v) => v[i],
            None => self.table[self.codes.get(i) as usize],
        }
    }

    /// `f` of the value at each position of `at`, in order. Of a coded column, `f` runs
    /// once per distinct value and each position takes its code's result.
    pub fn map_at<T: Copy>(&self, at: &[u32], f: impl Fn(f64) -> T) -> Vec<T> {
        match &self.raw {
            Some(v) => at.iter().map(|&i| f(v[i as usize])).collect(),
            None => {
                let of_code: Vec<T> = self.table.iter().map(|&x| f(x)).collect();
                self.codes.map_at(at, |code| of_code[code as usize])
            }
        }
    }

    /// Bytes a value takes now (the table aside).
    pub fn width(&self) -> usize {
        match &self.raw {
            Some(_) => 8,
            None => self.codes.width(),
        }
    }

    /// The code of `x`, added to the table if new; `None` when the table is full.
    fn code_of(&mut self, x: f64) -> Option<u32> {
        let bits = x.to_bits();
        if let Some(code) = self.recent.get(bits) {
            return Some(code);
        }
        let code = match self.lookup.get(&bits) {
            Some(&code) => code,
            None if self.table.len() < MAX_CODED => {
                let code = self.table.len() as u32;
                self.table.push(x);
                self.lookup.insert(bits, code);
                code
            }
            None => return None,
        };
        self.recent.put(bits, code);
        Some(code)
    }

    /// From now on the column holds the values themselves.
    #[cold]
    fn store_raw(&mut self) {
        let mut v = Vec::with_capacity(self.codes.len() + 1);
        v.extend((0..self.codes.len()).map(|i| self.get(i)));
        self.raw = Some(v);
        self.codes = Ids::default();
        self.table = Vec::new();
        self.lookup = FxHashMap::default();
        self.recent = Recent::default();
    }

    /// Appends a value (NaN included).
    pub fn push(&mut self, x: f64) {
        if self.raw.is_none() {
            match self.code_of(x) {
                Some(code) => {
                    self.codes.push(code);
                    return;
                }
                None => self.store_raw(),
            }
        }
        if let Some(v) = &mut self.raw {
            v.push(x);
        }
    }

    /// Makes room for `n` more values.
    pub fn reserve(&mut self, n: usize) {
        match &mut self.raw {
            Some(v) => v.reserve(n),
            None => self.codes.reserve(n),
        }
    }

    /// Empties the column, keeping its allocation.
    pub fn clear(&mut self) {
        self.codes.clear();
        self.table.clear();
        self.lookup.clear();
        self.raw = None;
        self.recent = Recent::default();
    }

    /// Gives back spare room and the lookup table of a column that is complete.
    pub fn shrink_to_fit(&mut self) {
        self.codes.shrink_to_fit();
        self.table.shrink_to_fit();
        self.lookup = FxHashMap::default();
        if let Some(v) = &mut self.raw {
            v.shrink_to_fit();
        }
    }

    /// Every value, in cell order.
    pub fn iter(&self) -> impl Iterator<Item = f64> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Appends every value of another column.
    pub fn extend_from(&mut self, other: &Floats) {
        self.reserve(other.len());
        if other.raw.is_none() && self.raw.is_none() {
            // Code `other`'s table once, then copy its codes through that map.
            let map: Option<Vec<u32>> = other.table.iter().map(|&x| self.code_of(x)).collect();
            if let Some(map) = map {
                self.codes
                    .extend_mapped(&other.codes, |code| map[code as usize]);
                return;
            }
        }
        for x in other.iter() {
            self.push(x);
        }
    }
}

impl Floats {
    /// The column as stored: codes and their table, or the values themselves.
    pub(crate) fn parts(&self) -> (&Ids, &[f64], Option<&[f64]>) {
        (&self.codes, &self.table, self.raw.as_deref())
    }

    /// A column from [`Floats::parts`]; `None` when a code has no entry in the table.
    pub(crate) fn from_parts(codes: Ids, table: Vec<f64>, raw: Option<Vec<f64>>) -> Option<Self> {
        if raw.is_none() && codes.iter().any(|c| c as usize >= table.len()) {
            return None;
        }
        Some(Floats {
            codes,
            table,
            lookup: FxHashMap::default(),
            raw,
            recent: Recent::default(),
        })
    }
}

impl FromIterator<f64> for Floats {
    fn from_iter<T: IntoIterator<Item = f64>>(iter: T) -> Self {
        let mut f = Floats::default();
        for x in iter {
            f.push(x);
        }
        f
    }
}

/// One stretch of [`Lines`]: cells `cell..` (up to the next run) were read `per` a line
/// from line `line` on, every `gap`th line (one cell a line `gap` apart: a file whose cells
/// are interleaved with other rows, such as the replicates after each cell).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    cell: u32,
    line: u32,
    per: u32,
    gap: u32,
}

impl Run {
    /// The line of the run's `n`th cell (wrapping: a damaged cache gives a wrong line,
    /// never a panic).
    fn line_of(&self, n: u32) -> u32 {
        self.line
            .wrapping_add((n / self.per).wrapping_mul(self.gap))
    }
}

/// The input line of each cell, in cell order, stored as runs of evenly spaced lines that
/// hold the same number of cells each. Falls back to one `u32` a cell when the runs would
/// take more room (lines that jump about).
#[derive(Debug, Clone, PartialEq)]
pub enum Lines {
    /// Runs of consecutive lines.
    Runs {
        /// The runs, in cell order.
        runs: Vec<Run>,
        /// Cells covered.
        len: u32,
        /// Whether the last run's `per` is settled (its cells span two lines or more).
        settled: bool,
    },
    /// One line number a cell.
    Plain(Vec<u32>),
}

impl Default for Lines {
    fn default() -> Self {
        Lines::Runs {
            runs: Vec::new(),
            len: 0,
            settled: false,
        }
    }
}

impl Lines {
    /// Cells in the column.
    pub fn len(&self) -> usize {
        match self {
            Lines::Runs { len, .. } => *len as usize,
            Lines::Plain(v) => v.len(),
        }
    }

    /// True for a column of no cells.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The line of cell `i`; panics when `i` is out of range, as a slice index does.
    pub fn get(&self, i: usize) -> u32 {
        match self {
            Lines::Plain(v) => v[i],
            Lines::Runs { runs, len, .. } => {
                assert!(i < *len as usize, "cell {i} of {len}");
                let at = runs.partition_point(|r| r.cell as usize <= i) - 1;
                let r = runs[at];
                r.line_of(i as u32 - r.cell)
            }
        }
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        match self {
            Lines::Runs { runs, .. } => runs.capacity() * std::mem::size_of::<Run>(),
            Lines::Plain(v) => v.capacity() * 4,
        }
    }

    /// Appends the line of the next cell, extending the last run when it can.
    pub fn push(&mut self, line: u32) {
        let Lines::Runs { runs, len, settled } = self else {
            if let Lines::Plain(v) = self {
                v.push(line);
            }
            return;
        };
        let cell = *len;
        *len += 1;
        if let Some(r) = runs.last_mut() {
            let n = cell - r.cell;
            // Unsettled, the run's cells are all on its first line (`per == n`): the next
            // line sets the gap.
            if !*settled && line == r.line {
                r.per = n + 1;
                return;
            }
            if !*settled && line > r.line {
                r.gap = line - r.line;
                *settled = true;
                return;
            }
            let next = u64::from(r.line) + u64::from(n / r.per) * u64::from(r.gap);
            if *settled && u64::from(line) == next {
                return;
            }
        }
        runs.push(Run {
            cell,
            line,
            per: 1,
            gap: 1,
        });
        *settled = false;
        // Runs cost 16 bytes: past a quarter of the cells, one number a cell is smaller.
        if runs.len() > 1024 && runs.len() * 4 > *len as usize {
            let plain: Vec<u32> = (0..*len as usize).map(|i| self.get(i)).collect();
            *self = Lines::Plain(plain);
        }
    }

    /// Empties the column.
    pub fn clear(&mut self) {
        *self = Lines::default();
    }

    /// Makes room for `n` more cells (only a plain column has a per-cell store).
    pub fn reserve(&mut self, n: usize) {
        if let Lines::Plain(v) = self {
            v.reserve(n);
        }
    }

    /// Gives back spare room of a column that is complete.
    pub fn shrink_to_fit(&mut self) {
        match self {
            Lines::Runs { runs, .. } => runs.shrink_to_fit(),
            Lines::Plain(v) => v.shrink_to_fit(),
        }
    }

    /// Every cell's line, in cell order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Appends the lines of `other` after these.
    pub fn extend_from(&mut self, other: &Lines) {
        match other {
            Lines::Plain(v) => v.iter().for_each(|&l| self.push(l)),
            Lines::Runs { runs, len, .. } => {
                for (k, r) in runs.iter().enumerate() {
                    let end = runs.get(k + 1).map_or(*len, |n| n.cell);
                    for c in r.cell..end {
                        self.push(r.line_of(c - r.cell));
                    }
                }
            }
        }
    }
}

impl Lines {
    /// The runs as `(first cell, first line, cells a line, line gap)`, or the lines
    /// themselves.
    pub(crate) fn parts(&self) -> Result<(Vec<[u32; 4]>, u32), &[u32]> {
        match self {
            Lines::Runs { runs, len, .. } => Ok((
                runs.iter()
                    .map(|r| [r.cell, r.line, r.per, r.gap])
                    .collect(),
                *len,
            )),
            Lines::Plain(v) => Err(v),
        }
    }

    /// Runs from [`Lines::parts`]; `None` unless they start at cell 0, rise, and each holds
    /// at least one cell a line.
    pub(crate) fn from_runs(runs: &[[u32; 4]], len: u32) -> Option<Self> {
        let ok = runs.first().is_none_or(|r| r[0] == 0)
            && runs.windows(2).all(|w| w[0][0] < w[1][0])
            && runs.last().is_none_or(|r| r[0] < len)
            && (len == 0) == runs.is_empty()
            && runs.iter().all(|r| r[2] >= 1 && r[3] >= 1);
        ok.then(|| Lines::Runs {
            runs: runs
                .iter()
                .map(|&[cell, line, per, gap]| Run {
                    cell,
                    line,
                    per,
                    gap,
                })
                .collect(),
            len,
            // Appending after a loaded column starts a new run: same lines, maybe one run
            // more.
            settled: true,
        })
    }
}

impl FromIterator<u32> for Lines {
    fn from_iter<T: IntoIterator<Item = u32>>(iter: T) -> Self {
        let mut l = Lines::default();
        for x in iter {
            l.push(x);
        }
        l
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_come_back_as_pushed_and_runs_stay_few() {
        // One cell a line, with gaps (blank or rejected lines) and a second file.
        let jsonl: Vec<u32> = (1..5000).filter(|l| l % 1000 != 7).chain(1..300).collect();
        // Rows of eight cells, one row shorter (a missing value), then rows of three.
        let mut csv: Vec<u32> = Vec::new();
        for row in 2..600u32 {
            let n = if row == 100 {
                5
            } else if row > 400 {
                3
            } else {
                8
            };
            csv.extend(std::iter::repeat_n(row, n));
        }
        for want in [jsonl, csv, vec![7], vec![3, 3], vec![]] {
            let l: Lines = want.iter().copied().collect();
            assert_eq!(l.iter().collect::<Vec<_>>(), want);
            assert_eq!(l.len(), want.len());
            let Lines::Runs { runs, .. } = &l else {
                panic!("runs expected")
            };
            assert!(runs.len() <= 9, "{} runs", runs.len());
            // Appended to a part read before, the same lines.
            let mut joined: Lines = [1, 2].into_iter().collect();
            joined.extend_from(&l);
            let mut both = vec![1, 2];
            both.extend(&want);
            assert_eq!(joined, both.iter().copied().collect::<Lines>());
            assert_eq!(joined.iter().collect::<Vec<_>>(), both);
        }
    }

    /// Cells on every other line (a file whose replicates follow their cells), every
    /// third, or two cells a line four lines apart: a run each, not one a cell.
    #[test]
    fn evenly_spaced_lines_take_a_run() {
        let cases: [Vec<u32>; 4] = [
            (0..10_000).map(|i| 1 + 2 * i).collect(),
            (0..10_000).map(|i| 2 + 3 * i).collect(),
            (0..10_000).map(|i| 5 + 4 * (i / 2)).collect(),
            // Spaced, then consecutive after a jump, then spaced again.
            (0..3000)
                .map(|i| 1 + 2 * i)
                .chain(10_000..13_000)
                .chain((0..3000).map(|i| 20_000 + 5 * i))
                .collect(),
        ];
        for (k, want) in cases.into_iter().enumerate() {
            let l: Lines = want.iter().copied().collect();
            let Lines::Runs { runs, .. } = &l else {
                panic!("case {k}: runs expected")
            };
            assert!(runs.len() <= 3, "case {k}: {} runs", runs.len());
            assert_eq!(l.iter().collect::<Vec<_>>(), want, "case {k}");
            let (parts, len) = l.parts().expect("runs");
            assert_eq!(Lines::from_runs(&parts, len), Some(l.clone()));
        }
    }

    #[test]
    fn lines_that_jump_about_are_kept_plain() {
        let want: Vec<u32> = (0..5000u32).map(|i| i * 2 + (i % 3)).collect();
        let l: Lines = want.iter().copied().collect();
        assert!(matches!(l, Lines::Plain(_)));
        assert_eq!(l.iter().collect::<Vec<_>>(), want);
        assert!(l.bytes() <= 4 * 8192);
    }

    #[test]
    fn ids_widen_and_keep_every_id() {
        let mut ids = Ids::default();
        let want: Vec<u32> = vec![0, 3, u32::MAX, 254, 255, 70_000, 1, u32::MAX - 1];
        for (n, &id) in want.iter().enumerate() {
            ids.push(id);
            assert_eq!(ids.iter().collect::<Vec<_>>(), want[..=n]);
        }
        assert_eq!(ids.width(), 4);
        assert_eq!(ids.try_get(want.len()), None);
    }

    #[test]
    fn ids_stay_narrow_when_they_can() {
        let mut ids: Ids = (0..255).chain([u32::MAX]).collect();
        assert_eq!(ids.width(), 1, "0..=254 and none fit a byte");
        ids.push(255);
        assert_eq!(ids.width(), 2);
        ids.remap(|x| if x == u32::MAX { x } else { x % 7 });
        assert_eq!(ids.width(), 1);
        assert_eq!(ids.get(255), u32::MAX);
        assert_eq!(ids.get(256), 255 % 7);
        let mut other = Ids::default();
        other.extend_mapped(&ids, |x| x.wrapping_add(100_000));
        assert_eq!(other.width(), 4);
        assert_eq!(other.get(255), 99_999);
    }

    /// The chunked passes against one id at a time: every width to every width, the
    /// change of width anywhere (first chunk, middle of a later one), "none" kept.
    #[test]
    fn bulk_passes_equal_one_id_at_a_time() {
        let one_by_one = |ids: &[u32], map: &dyn Fn(u32) -> u32| -> Vec<u32> {
            ids.iter().map(|&x| map(x)).collect()
        };
        let n = 3 * CHUNK + 17;
        let sources: Vec<Vec<u32>> = vec![
            (0..n as u32).map(|i| i % 200).collect(),
            (0..n as u32).map(|i| i % 60_000).collect(),
            (0..n as u32).map(|i| i * 7919 % 1_000_003).collect(),
            (0..n as u32)
                .map(|i| if i % 5 == 0 { u32::MAX } else { i % 250 })
                .collect(),
            Vec::new(),
        ];
        let maps: Vec<Box<dyn Fn(u32) -> u32>> = vec![
            Box::new(|x| x),
            Box::new(|x| x % 3),
            Box::new(|x| if x == u32::MAX { x } else { x + 300 }),
            // Wide from the middle of the third chunk on.
            Box::new(move |x| {
                if x == 2 * CHUNK as u32 + 5 {
                    90_000
                } else {
                    x % 100
                }
            }),
            Box::new(|x| x.wrapping_add(1)),
        ];
        for src in &sources {
            let col: Ids = src.iter().copied().collect();
            for map in &maps {
                let want = one_by_one(src, map);
                let narrowest: Ids = want.iter().copied().collect();
                let mut remapped = col.clone();
                remapped.remap(map);
                assert_eq!(remapped.iter().collect::<Vec<_>>(), want);
                assert_eq!(remapped.width(), narrowest.width());
                let mut joined: Ids = [7, 8].into_iter().collect();
                joined.extend_mapped(&col, map);
                assert_eq!(joined.iter().skip(2).collect::<Vec<_>>(), want);
                assert_eq!(joined.get(0), 7);
                let mut chunks = Vec::new();
                col.for_each_chunk(|c| {
                    assert!(c.len() <= CHUNK);
                    chunks.extend_from_slice(c);
                });
                assert_eq!(&chunks, src);
                if src.len() > 10 {
                    let mut some = [0u32; 7];
                    col.copy_to(3, &mut some);
                    assert_eq!(some, src[3..10]);
                }
            }
        }
    }

    #[test]
    fn floats_round_trip_bit_for_bit_coded_or_raw() {
        let special = [0.0, -0.0, 1.0, f64::NAN, f64::INFINITY, 0.1 + 0.2, 1e-300];
        let mut f = Floats::default();
        for &x in &special {
            f.push(x);
        }
        assert_eq!(f.width(), 1);
        for (i, &x) in special.iter().enumerate() {
            assert_eq!(f.get(i).to_bits(), x.to_bits());
        }
        // Positions in any order and repeated, coded and (below) raw.
        let at = [6, 0, 3, 3, 2, 5];
        let bits = |f: &Floats| f.map_at(&at, f64::to_bits);
        let want: Vec<u64> = at.iter().map(|&i| special[i as usize].to_bits()).collect();
        assert_eq!(bits(&f), want);
        // Past the coded limit the column holds the values themselves, the earlier ones
        // unchanged.
        for i in 0..MAX_CODED + 10 {
            f.push(i as f64 / 3.0);
        }
        assert_eq!(f.width(), 8);
        assert_eq!(f.len(), special.len() + MAX_CODED + 10);
        for (i, &x) in special.iter().enumerate() {
            assert_eq!(f.get(i).to_bits(), x.to_bits());
        }
        assert_eq!(f.get(special.len() + 4), 4.0 / 3.0);
        assert_eq!(bits(&f), want);
        let tail = (special.len() + 4) as u32;
        assert_eq!(f.map_at(&[tail, 1], |x| x), [4.0 / 3.0, -0.0]);
        let copy: Floats = f.iter().collect();
        assert_eq!(copy, f);
    }

    #[test]
    fn floats_joined_keep_every_value_coded_or_not() {
        let a: Floats = [0.5, 1.0, f64::NAN, 0.5].into_iter().collect();
        let b: Floats = [1.0, 0.25, 0.5].into_iter().collect();
        let mut j = a.clone();
        j.extend_from(&b);
        let want = [0.5, 1.0, f64::NAN, 0.5, 1.0, 0.25, 0.5];
        assert_eq!(j.len(), want.len());
        for (i, x) in want.iter().enumerate() {
            assert_eq!(j.get(i).to_bits(), x.to_bits(), "{i}");
        }
        assert_eq!(j.width(), 1);
        // Joining past the coded limit stores the values as they are.
        let many: Floats = (0..MAX_CODED).map(|i| i as f64).collect();
        let more: Floats = (0..10).map(|i| -(i as f64) - 0.5).collect();
        let mut j = many.clone();
        j.extend_from(&more);
        assert_eq!(j.width(), 8);
        assert_eq!(j.len(), MAX_CODED + 10);
        assert_eq!(j.get(MAX_CODED - 1), (MAX_CODED - 1) as f64);
        assert_eq!(j.get(MAX_CODED + 9), -9.5);
    }
}
