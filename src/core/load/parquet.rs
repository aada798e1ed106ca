//! Parquet in and out (docs/formats.md §7): the records frameaudit writes as JSON Lines
//! (cells, per-item rows, audit exports) written as Parquet with the same columns, and cells
//! read from Parquet into the same checks as cells JSONL.
//!
//! Only the `parquet` crate's file layer is used (no Arrow arrays): flat columns of strings,
//! integers, floats and booleans, and lists of them. Pages are written Snappy-compressed;
//! files compressed otherwise than Snappy or not at all are refused by name.

use std::borrow::Cow;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

use parquet::basic::{Compression, Repetition};
use parquet::column::reader::ColumnReader;
use parquet::data_type::{
    BoolType, ByteArray, ByteArrayType, DoubleType, FixedLenByteArray, Int64Type,
};
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use serde_json::{Map, Value};

use super::json::J;
use super::parquet_text::{Text, TextChunk};

/// The type of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// UTF-8 text.
    Str,
    /// A 64-bit integer.
    Int,
    /// A binary64 number.
    Float,
    /// true or false.
    Bool,
    /// A list of text.
    StrList,
    /// A list of integers.
    IntList,
    /// A list of numbers.
    FloatList,
}

impl Kind {
    fn element(self) -> Kind {
        match self {
            Kind::StrList => Kind::Str,
            Kind::IntList => Kind::Int,
            Kind::FloatList => Kind::Float,
            k => k,
        }
    }

    fn is_list(self) -> bool {
        matches!(self, Kind::StrList | Kind::IntList | Kind::FloatList)
    }

    fn of(v: &Value) -> Option<Kind> {
        match v {
            Value::Null => None,
            Value::Bool(_) => Some(Kind::Bool),
            Value::Number(n) if n.is_i64() || n.is_u64() => Some(Kind::Int),
            Value::Number(_) => Some(Kind::Float),
            Value::String(_) => Some(Kind::Str),
            Value::Array(items) => {
                let mut k = None;
                for x in items {
                    k = merge(k, Kind::of(x));
                }
                Some(match k {
                    Some(Kind::Int) => Kind::IntList,
                    Some(Kind::Float) => Kind::FloatList,
                    _ => Kind::StrList,
                })
            }
            Value::Object(_) => Some(Kind::Str),
        }
    }
}

/// The kind two values' columns share: integers widen to floats, anything else mixed
/// becomes text (the value's JSON).
fn merge(a: Option<Kind>, b: Option<Kind>) -> Option<Kind> {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(x), Some(y)) if x == y => Some(x),
        (Some(Kind::Int), Some(Kind::Float)) | (Some(Kind::Float), Some(Kind::Int)) => {
            Some(Kind::Float)
        }
        (Some(Kind::IntList), Some(Kind::FloatList))
        | (Some(Kind::FloatList), Some(Kind::IntList)) => Some(Kind::FloatList),
        (Some(x), Some(y)) if x.is_list() && y.is_list() => Some(Kind::StrList),
        _ => Some(Kind::Str),
    }
}

/// The columns of `rows`: `fixed` first (always there, in that order), then every other key
/// in order of first appearance, each with the kind its values share.
pub fn columns(fixed: &[(&str, Kind)], rows: &[Map<String, Value>]) -> Vec<(String, Kind)> {
    let mut out: Vec<(String, Option<Kind>)> = fixed
        .iter()
        .map(|(n, k)| (n.to_string(), Some(*k)))
        .collect();
    let fixed_n = out.len();
    let mut index: std::collections::HashMap<String, usize> = out
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (n.clone(), i))
        .collect();
    for r in rows {
        for (k, v) in r {
            let i = *index.entry(k.clone()).or_insert_with(|| {
                out.push((k.clone(), None));
                out.len() - 1
            });
            if i >= fixed_n {
                out[i].1 = merge(out[i].1, Kind::of(v));
            }
        }
    }
    out.into_iter()
        .map(|(n, k)| (n, k.unwrap_or(Kind::Str)))
        .collect()
}

/// Rows per row group: bounds the writer's memory on large outputs (a row group is held
/// whole until it is written; 128 Ki rows of cells take about 80 MB).
const ROW_GROUP: usize = 128 * 1024;

fn pq_err(e: parquet::errors::ParquetError) -> io::Error {
    io::Error::other(e.to_string())
}

/// The schema of the columns: each an optional leaf, or an optional three-level list
/// (`NAME (LIST) { repeated group list { optional element } }`) of optional leaves.
fn schema(cols: &[(String, Kind)]) -> io::Result<parquet::schema::types::TypePtr> {
    use parquet::basic::{ConvertedType, LogicalType, Type as Physical};
    use parquet::schema::types::Type;
    let leaf = |name: &str, kind: Kind| {
        let (physical, logical) = match kind.element() {
            Kind::Str => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
            Kind::Int => (Physical::INT64, None),
            Kind::Float => (Physical::DOUBLE, None),
            _ => (Physical::BOOLEAN, None),
        };
        Type::primitive_type_builder(name, physical)
            .with_repetition(Repetition::OPTIONAL)
            .with_logical_type(logical)
            .build()
            .map(Arc::new)
    };
    let column = |(name, kind): &(String, Kind)| {
        if !kind.is_list() {
            return leaf(name, *kind);
        }
        let list = Type::group_type_builder("list")
            .with_repetition(Repetition::REPEATED)
            .with_fields(vec![leaf("element", *kind)?])
            .build()?;
        Type::group_type_builder(name)
            .with_repetition(Repetition::OPTIONAL)
            .with_logical_type(Some(LogicalType::List))
            .with_converted_type(ConvertedType::LIST)
            .with_fields(vec![Arc::new(list)])
            .build()
            .map(Arc::new)
    };
    let fields = cols
        .iter()
        .map(column)
        .collect::<Result<_, _>>()
        .map_err(pq_err)?;
    Type::group_type_builder("frameaudit")
        .with_fields(fields)
        .build()
        .map(Arc::new)
        .map_err(pq_err)
}

/// The levels and values of one column over the rows of a row group being built.
pub struct Column {
    kind: Kind,
    defs: Vec<i16>,
    reps: Vec<i16>,
    /// Text values, one after another, and where each ends: a row group of text takes
    /// its bytes, not an allocation a value.
    text: Vec<u8>,
    ends: Vec<usize>,
    ints: Vec<i64>,
    floats: Vec<f64>,
    bools: Vec<bool>,
}

/// One value of a column, as it is pushed.
pub enum Cell<'a> {
    /// No value.
    Null,
    /// Text.
    Str(&'a str),
    /// An integer.
    Int(i64),
    /// A number.
    Float(f64),
    /// true or false.
    Bool(bool),
    /// Any other JSON value, which a text column takes as its JSON text.
    Json(&'a Value),
}

/// A JSON value as a value of a column whose elements are `elem`.
fn json_cell(v: &Value, elem: Kind) -> Cell<'_> {
    match (elem, v) {
        (_, Value::Null) => Cell::Null,
        (_, Value::String(s)) => Cell::Str(s),
        (Kind::Str, other) => Cell::Json(other),
        (_, Value::Bool(b)) => Cell::Bool(*b),
        (Kind::Int, Value::Number(n)) => n.as_i64().map_or(Cell::Null, Cell::Int),
        (_, Value::Number(n)) => n.as_f64().map_or(Cell::Null, Cell::Float),
        _ => Cell::Null,
    }
}

impl Column {
    /// An empty column of values of `kind`.
    pub fn new(kind: Kind) -> Self {
        Column {
            kind,
            defs: Vec::new(),
            reps: Vec::new(),
            text: Vec::new(),
            ends: Vec::new(),
            ints: Vec::new(),
            floats: Vec::new(),
            bools: Vec::new(),
        }
    }

    /// Appends one present value of the column's element kind; false when it does not fit
    /// (then it is null).
    fn value(&mut self, v: Cell<'_>) -> bool {
        match (self.kind.element(), v) {
            (_, Cell::Null) => return false,
            (Kind::Str, Cell::Str(s)) => self.push_text(s.as_bytes()),
            (Kind::Str, Cell::Json(v)) => self.push_text(v.to_string().as_bytes()),
            (Kind::Int, Cell::Int(x)) => self.ints.push(x),
            (Kind::Float, Cell::Float(x)) => self.floats.push(x),
            (Kind::Float, Cell::Int(x)) => self.floats.push(x as f64),
            (Kind::Bool, Cell::Bool(x)) => self.bools.push(x),
            _ => return false,
        }
        true
    }

    /// Appends a row's value (a column that is not a list).
    pub fn push(&mut self, v: Cell<'_>) {
        let present = self.value(v);
        self.defs.push(i16::from(present));
    }

    /// Appends a row's list: `None` is a null list, `Some` of no items an empty one.
    pub fn push_list<'a>(&mut self, items: Option<impl ExactSizeIterator<Item = Cell<'a>>>) {
        match items {
            None => {
                self.defs.push(0);
                self.reps.push(0);
            }
            Some(items) if items.len() == 0 => {
                self.defs.push(1);
                self.reps.push(0);
            }
            Some(items) => {
                for (j, x) in items.enumerate() {
                    self.reps.push(i16::from(j > 0));
                    let present = self.value(x);
                    self.defs.push(if present { 3 } else { 2 });
                }
            }
        }
    }

    /// Appends a row's value given as JSON: text columns take any value (a non-string as
    /// its JSON text), others null where it does not fit.
    fn push_json(&mut self, v: &Value) {
        let elem = self.kind.element();
        let cell = |x| json_cell(x, elem);
        match v {
            _ if !self.kind.is_list() => self.push(cell(v)),
            Value::Array(items) => self.push_list(Some(items.iter().map(cell))),
            _ => self.push_list(None::<std::iter::Empty<Cell<'_>>>),
        }
    }

    /// Rows buffered.
    pub fn rows(&self) -> usize {
        if self.kind.is_list() {
            self.reps.iter().filter(|&&r| r == 0).count()
        } else {
            self.defs.len()
        }
    }

    /// Moves `other`'s rows after these.
    pub fn append(&mut self, other: &mut Column) {
        self.defs.append(&mut other.defs);
        self.reps.append(&mut other.reps);
        let base = self.text.len();
        self.ends.extend(other.ends.drain(..).map(|e| e + base));
        self.text.append(&mut other.text);
        self.ints.append(&mut other.ints);
        self.floats.append(&mut other.floats);
        self.bools.append(&mut other.bools);
    }

    fn push_text(&mut self, s: &[u8]) {
        self.text.extend_from_slice(s);
        self.ends.push(self.text.len());
    }

    /// Writes the buffered rows as the column of a row group, and empties the buffer. The
    /// rows go in batches of whole rows, so that the text handed to the writer at a time
    /// is one batch's.
    fn write(
        &mut self,
        col: &mut parquet::file::writer::SerializedColumnWriter<'_>,
    ) -> io::Result<()> {
        const ROWS: usize = 8192;
        let list = self.kind.is_list();
        let present = if list { 3 } else { 1 };
        let text = bytes::Bytes::from(std::mem::take(&mut self.text));
        let (mut level, mut value) = (0, 0);
        while level < self.defs.len() {
            // Whole rows: a list's row ends before the next level that starts one.
            let mut end = (level + ROWS).min(self.defs.len());
            while list && end < self.reps.len() && self.reps[end] != 0 {
                end += 1;
            }
            let defs = &self.defs[level..end];
            let n = defs.iter().filter(|&&d| d == present).count();
            let reps = list.then(|| &self.reps[level..end]);
            let values = value..value + n;
            let w = match self.kind.element() {
                Kind::Str => {
                    let strs: Vec<ByteArray> = values
                        .map(|i| {
                            let start = if i == 0 { 0 } else { self.ends[i - 1] };
                            ByteArray::from(text.slice(start..self.ends[i]))
                        })
                        .collect();
                    col.typed::<ByteArrayType>()
                        .write_batch(&strs, Some(defs), reps)
                }
                Kind::Int => {
                    col.typed::<Int64Type>()
                        .write_batch(&self.ints[values], Some(defs), reps)
                }
                Kind::Float => {
                    col.typed::<DoubleType>()
                        .write_batch(&self.floats[values], Some(defs), reps)
                }
                _ => col
                    .typed::<BoolType>()
                    .write_batch(&self.bools[values], Some(defs), reps),
            };
            w.map_err(pq_err)?;
            (level, value) = (end, value + n);
        }
        *self = Column::new(self.kind);
        Ok(())
    }
}

/// Writes row groups of buffered columns to one Parquet file as they fill.
pub struct Writer<W: Write + Send> {
    file: SerializedFileWriter<W>,
    /// The columns being filled, in the schema's order.
    pub columns: Vec<Column>,
}

impl<W: Write + Send> Writer<W> {
    /// A writer of Snappy pages with the columns `cols` (see [`columns`]).
    pub fn new(out: W, cols: &[(String, Kind)]) -> io::Result<Self> {
        let props = Arc::new(
            WriterProperties::builder()
                .set_compression(Compression::SNAPPY)
                .set_created_by(format!("frameaudit {}", env!("CARGO_PKG_VERSION")))
                .build(),
        );
        Ok(Writer {
            file: SerializedFileWriter::new(out, schema(cols)?, props).map_err(pq_err)?,
            columns: cols.iter().map(|(_, k)| Column::new(*k)).collect(),
        })
    }

    /// Writes a row group when a whole one is buffered.
    pub fn flush_full(&mut self) -> io::Result<()> {
        if self.columns.first().is_some_and(|c| c.rows() >= ROW_GROUP) {
            self.row_group()?;
        }
        Ok(())
    }

    /// Writes the buffered rows as one row group.
    fn row_group(&mut self) -> io::Result<()> {
        let mut rg = self.file.next_row_group().map_err(pq_err)?;
        let mut i = 0;
        while let Some(mut col) = rg.next_column().map_err(pq_err)? {
            let c = self
                .columns
                .get_mut(i)
                .ok_or_else(|| io::Error::other("schema and columns differ"))?;
            c.write(&mut col)?;
            col.close().map_err(pq_err)?;
            i += 1;
        }
        rg.close().map_err(pq_err)?;
        Ok(())
    }

    /// Writes what is left and the footer (a file with no row group still carries its
    /// schema).
    pub fn finish(mut self) -> io::Result<()> {
        if self.columns.first().is_some_and(|c| c.rows() > 0) {
            self.row_group()?;
        }
        self.file.close().map_err(pq_err)?;
        Ok(())
    }
}

/// Writes `rows` as one Parquet file with the columns `cols` (see [`columns`]); a value that
/// does not fit its column's kind is written as its JSON text (text columns) or null.
pub fn write_rows<W: Write + Send>(
    out: W,
    cols: &[(String, Kind)],
    rows: &[Map<String, Value>],
) -> io::Result<()> {
    let mut w = Writer::new(out, cols)?;
    for r in rows {
        for ((name, _), col) in cols.iter().zip(&mut w.columns) {
            col.push_json(r.get(name).unwrap_or(&Value::Null));
        }
        w.flush_full()?;
    }
    w.finish()
}

/// How a column's stored values are taken, by its logical type (or, from older writers,
/// its converted type): as they are stored, integers as unsigned, integers or fixed-length
/// bytes as decimals of `scale` places, or text as the JSON value it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Taken {
    AsStored,
    Unsigned,
    Decimal(u32),
    Json,
}

/// How the values of column `d` are taken, or why they cannot be: a type whose stored
/// value is not the value (a date, a timestamp, BSON, a UUID...) is refused, not read as
/// the number or bytes it is stored as.
fn taken(d: &parquet::schema::types::ColumnDescriptor) -> Result<Taken, String> {
    use parquet::basic::{ConvertedType as C, LogicalType as L, Type as P};
    /// The annotation, whichever of the two a writer gave.
    enum Note {
        None,
        Text,
        Json,
        Int { signed: bool },
        Decimal(i32),
        Other(String),
    }
    let note = match d.logical_type_ref() {
        // A column of nulls (Spark's NullType).
        Some(L::Unknown) => Note::None,
        Some(L::String | L::Enum) => Note::Text,
        Some(L::Json) => Note::Json,
        Some(L::Integer(t)) => Note::Int {
            signed: t.is_signed,
        },
        Some(L::Decimal(t)) => Note::Decimal(t.scale),
        Some(L::Date) => Note::Other("dates".into()),
        Some(L::Time(_)) => Note::Other("times of day".into()),
        Some(L::Timestamp(_)) => Note::Other("timestamps".into()),
        Some(L::Bson) => Note::Other("BSON documents".into()),
        Some(L::Uuid) => Note::Other("UUIDs".into()),
        Some(L::Float16) => Note::Other("16-bit floats".into()),
        Some(other) => Note::Other(format!("values of the logical type {other:?}")),
        None => match d.converted_type() {
            C::NONE => Note::None,
            C::UTF8 | C::ENUM => Note::Text,
            C::JSON => Note::Json,
            C::UINT_8 | C::UINT_16 | C::UINT_32 | C::UINT_64 => Note::Int { signed: false },
            C::INT_8 | C::INT_16 | C::INT_32 | C::INT_64 => Note::Int { signed: true },
            C::DECIMAL => Note::Decimal(d.type_scale()),
            C::DATE => Note::Other("dates".into()),
            C::TIME_MILLIS | C::TIME_MICROS => Note::Other("times of day".into()),
            C::TIMESTAMP_MILLIS | C::TIMESTAMP_MICROS => Note::Other("timestamps".into()),
            C::BSON => Note::Other("BSON documents".into()),
            C::INTERVAL => Note::Other("intervals".into()),
            other => Note::Other(format!("values of the converted type {other}")),
        },
    };
    let physical = d.physical_type();
    let refused = |what: String| {
        format!(
            "column {} holds {what} (stored as {physical}), which is no field of a cell; cast it to text or a number",
            d.name()
        )
    };
    match (physical, note) {
        (_, Note::Other(what)) => Err(refused(what)),
        (P::BYTE_ARRAY, Note::None | Note::Text) => Ok(Taken::AsStored),
        (P::BYTE_ARRAY, Note::Json) => Ok(Taken::Json),
        (P::INT32 | P::INT64, Note::None | Note::Int { signed: true }) => Ok(Taken::AsStored),
        (P::INT32 | P::INT64, Note::Int { signed: false }) => Ok(Taken::Unsigned),
        (P::BOOLEAN | P::FLOAT | P::DOUBLE, Note::None) => Ok(Taken::AsStored),
        (P::INT32 | P::INT64 | P::FIXED_LEN_BYTE_ARRAY, Note::Decimal(scale)) => {
            // 10^22 is the largest power of ten a double holds exactly.
            match u32::try_from(scale) {
                Ok(s)
                    if s <= 22
                        && (physical != P::FIXED_LEN_BYTE_ARRAY || d.type_length() <= 16) =>
                {
                    Ok(Taken::Decimal(s))
                }
                _ => Err(refused(format!(
                    "decimals of precision {} and scale {scale}",
                    d.type_precision()
                ))),
            }
        }
        (P::FIXED_LEN_BYTE_ARRAY, _) => Err(refused("fixed-length bytes".into())),
        (P::INT96, _) => Err(refused("timestamps".into())),
        (_, Note::Json) => Err(refused("JSON".into())),
        (_, Note::Text) => Err(refused("text".into())),
        (_, Note::Int { .. }) => Err(refused("integers".into())),
        (_, Note::Decimal(_)) => Err(refused("decimals".into())),
    }
}

/// A decimal: `unscaled` / 10^`scale`, as JSON gives the number written with those
/// digits (both exact in a double, the quotient is the double nearest the decimal).
fn decimal(unscaled: i128, scale: u32) -> J<'static> {
    if scale == 0 {
        J::Int(unscaled)
    } else {
        J::Float(unscaled as f64 / 10f64.powi(scale as i32))
    }
}

/// The integer of a decimal stored in fixed-length bytes: big-endian two's complement of
/// at most 16 bytes (checked by [`taken`]).
fn be_integer(b: &[u8]) -> i128 {
    let fill = if b.first().is_some_and(|&x| x & 0x80 != 0) {
        0xff
    } else {
        0
    };
    let mut full = [fill; 16];
    let n = b.len().min(16);
    full[16 - n..].copy_from_slice(&b[b.len() - n..]);
    i128::from_be_bytes(full)
}

/// The values of one column of a row group, as read.
enum Values {
    Bool(Vec<bool>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    Bytes(Vec<ByteArray>),
    /// Fixed-length bytes: decimals ([`Taken::Decimal`]).
    Fixed(Vec<FixedLenByteArray>),
    /// A flat text column read page by page: each row's text in the chunk's dictionary or
    /// the batch's own text.
    Text(Vec<Text>),
}

/// Where a column's values are read from.
enum Source {
    /// The crate's column reader.
    Column(Box<ColumnReader>),
    /// A flat text column, read by its pages (parquet_text.rs).
    Pages(Box<TextChunk>),
}

/// One column of a row group: its reader and the batch of rows last read from it with their
/// levels.
pub struct ColumnData {
    name: String,
    reader: Source,
    values: Values,
    defs: Vec<i16>,
    reps: Vec<i16>,
    max_def: i16,
    /// The definition level at which a list element (null or not) is there.
    elem_def: i16,
    list: bool,
    /// How its stored values are taken.
    taken: Taken,
}

/// Why a Parquet file of cells cannot be read.
fn bad(path: &Path, why: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "{} is not a Parquet file frameaudit reads: {why}",
            path.display()
        ),
    )
}

impl ColumnData {
    /// The value of a list column's row whose levels start at `*level` (its first value at
    /// `*value`), as the JSON reader would have given it, both cursors moved past it; an
    /// error when a string is not UTF-8.
    fn list_at(&self, level: &mut usize, value: &mut usize) -> Result<J<'_>, String> {
        let start = *level;
        let mut end = start + 1;
        while end < self.reps.len() && self.reps[end] == 1 {
            end += 1;
        }
        *level = end;
        let first = self.defs.get(start).copied().unwrap_or(0);
        if first == 0 && self.max_def > 0 && self.elem_def > 1 {
            return Ok(J::Null);
        }
        if first < self.elem_def {
            return Ok(J::Arr(Vec::new()));
        }
        let mut items = Vec::with_capacity(end - start);
        let mut broken = None;
        for l in start..end {
            items.push(if self.defs[l] == self.max_def {
                // Past every value of the row, broken or not, so the next row starts at its own.
                *value += 1;
                self.value_at(*value - 1).unwrap_or_else(|e| {
                    broken.get_or_insert(e);
                    J::Null
                })
            } else {
                J::Null
            });
        }
        match broken {
            Some(e) => Err(e),
            None => Ok(J::Arr(items)),
        }
    }

    /// The value of the batch's next row, as a JSON line would give it (`J::Null` where the
    /// levels say null), `at` moved past it; an error when the value is broken (the cursor
    /// is moved past it all the same).
    pub fn next_value(&self, at: &mut Cursor) -> Result<J<'_>, String> {
        let row = at.row;
        at.row += 1;
        if self.list {
            self.list_at(&mut at.level, &mut at.value)
        } else if self.defs.get(row).is_some_and(|&d| d < self.max_def) {
            // Null; a required column has no levels, and a value in every row.
            Ok(J::Null)
        } else {
            // value_at says when the levels promise more values than there are.
            at.value += 1;
            self.value_at(at.value - 1)
        }
    }

    /// Calls `each` with the values of the batch's `rows` rows in order, as
    /// [`ColumnData::next_value`] gives them, while it returns `true`; `false` when it
    /// returned `false`, or at the first broken value (which `each` is not given).
    pub fn each_value<'c>(
        &'c self,
        rows: usize,
        mut each: impl FnMut(usize, &J<'c>) -> bool,
    ) -> bool {
        if self.all_null(rows) {
            return (0..rows).all(|r| each(r, &J::Null));
        }
        if self.list || self.taken == Taken::Json {
            let mut at = Cursor::default();
            return (0..rows).all(|r| self.next_value(&mut at).is_ok_and(|v| each(r, &v)));
        }
        let str = |s: &'c str| J::Str(Cow::Borrowed(s));
        let mut j = |r, v: Option<J<'c>>| each(r, &v.unwrap_or(J::Null));
        match &self.values {
            Values::Bool(v) => self.flat(rows, v, |x| Some(J::Bool(*x)), j),
            Values::I32(v) => self.flat(rows, v, |x| Some(self.int((*x).into())), j),
            Values::I64(v) => self.flat(rows, v, |x| Some(self.int(*x)), j),
            Values::F32(v) => self.flat(rows, v, |x| Some(J::Float((*x).into())), j),
            Values::F64(v) => self.flat(rows, v, |x| Some(J::Float(*x)), j),
            Values::Fixed(v) => self.flat(rows, v, |x| Some(self.fixed(x)), j),
            Values::Bytes(_) | Values::Text(_) => self
                .each_text(rows, |r, s| j(r, Some(s.map_or(J::Null, str))))
                .unwrap_or(false),
        }
    }

    /// A flat column's values of the batch in order, `None` where the levels say null (a
    /// required column has no levels), each made by `make` and given to `each` while it
    /// returns `true`; `false` when it returned `false`, or at the first value `make`
    /// refuses (which `each` is not given) or that is not there.
    fn flat<'c, T, V>(
        &self,
        rows: usize,
        values: &'c [T],
        make: impl Fn(&'c T) -> Option<V>,
        mut each: impl FnMut(usize, Option<V>) -> bool,
    ) -> bool {
        let mut next = values.iter();
        (0..rows).all(|r| {
            if self.defs.get(r).is_some_and(|&d| d < self.max_def) {
                return each(r, None);
            }
            match next.next().and_then(&make) {
                Some(v) => each(r, Some(v)),
                None => false,
            }
        })
    }

    /// The values of a flat text column's `rows` rows given to `each` (`None` where null)
    /// while it returns `true`, as [`ColumnData::each_value`] gives them; `Some(false)` when
    /// it returned `false` or at a value that is not UTF-8, `None` when the column is not
    /// flat text (a column of JSON text holds values of any kind).
    pub fn each_text<'c>(
        &'c self,
        rows: usize,
        each: impl FnMut(usize, Option<&'c str>) -> bool,
    ) -> Option<bool> {
        if self.taken == Taken::Json {
            return None;
        }
        match (&self.values, self.list) {
            (Values::Bytes(v), false) => {
                Some(self.flat(rows, v, |x| std::str::from_utf8(x.data()).ok(), each))
            }
            (Values::Text(v), false) => {
                let Source::Pages(chunk) = &self.reader else {
                    unreachable!("text values come from pages")
                };
                Some(self.flat(rows, v, |t| chunk.text(*t), each))
            }
            _ => None,
        }
    }

    /// [`ColumnData::each_text`] for a flat column of whole numbers (signed, or unsigned
    /// of 32 bits at most; a wider unsigned column and decimals are left to
    /// [`ColumnData::each_value`]).
    pub fn each_int(
        &self,
        rows: usize,
        each: impl FnMut(usize, Option<i64>) -> bool,
    ) -> Option<bool> {
        match (&self.values, self.list, self.taken) {
            (Values::I32(v), false, Taken::AsStored) => {
                Some(self.flat(rows, v, |x| Some((*x).into()), each))
            }
            (Values::I32(v), false, Taken::Unsigned) => {
                Some(self.flat(rows, v, |x| Some((*x as u32).into()), each))
            }
            (Values::I64(v), false, Taken::AsStored) => {
                Some(self.flat(rows, v, |x| Some(*x), each))
            }
            _ => None,
        }
    }

    /// [`ColumnData::each_text`] for a flat column of floating-point numbers.
    pub fn each_float(
        &self,
        rows: usize,
        each: impl FnMut(usize, Option<f64>) -> bool,
    ) -> Option<bool> {
        match (&self.values, self.list) {
            (Values::F32(v), false) => Some(self.flat(rows, v, |x| Some((*x).into()), each)),
            (Values::F64(v), false) => Some(self.flat(rows, v, |x| Some(*x), each)),
            _ => None,
        }
    }

    /// [`ColumnData::each_text`] for a flat column of booleans.
    pub fn each_bool(
        &self,
        rows: usize,
        each: impl FnMut(usize, Option<bool>) -> bool,
    ) -> Option<bool> {
        match (&self.values, self.list) {
            (Values::Bool(v), false) => Some(self.flat(rows, v, |x| Some(*x), each)),
            _ => None,
        }
    }

    /// The key of each of the batch's `rows` rows that holds an entry of its column
    /// chunk's dictionary (`TextKeys`), given to `each` with the row; nothing for a column
    /// not read by its pages.
    pub fn each_key(&self, rows: usize, mut each: impl FnMut(usize, u64)) {
        let (Source::Pages(chunk), Values::Text(v)) = (&self.reader, &self.values) else {
            return;
        };
        let mut next = v.iter();
        for r in 0..rows {
            if self.defs.get(r).is_some_and(|&d| d < self.max_def) {
                continue;
            }
            let Some(t) = next.next() else { return };
            let key = chunk.key(*t);
            if key != 0 {
                each(r, key);
            }
        }
    }

    /// Whether no row of the batch's `rows` has a value: a column of nulls.
    pub fn all_null(&self, rows: usize) -> bool {
        if self.list {
            // One level a row, each a null list (as `list_at` reads it).
            return self.max_def > 0
                && self.elem_def > 1
                && self.defs.len() == rows
                && self.defs.iter().all(|&d| d == 0);
        }
        self.max_def > 0
            && self.defs.len() >= rows
            && self.defs[..rows].iter().all(|&d| d < self.max_def)
    }

    fn value_at(&self, i: usize) -> Result<J<'_>, String> {
        let short = || format!("{}: fewer values than its levels say", self.name);
        let at = |len: usize| if i < len { Ok(i) } else { Err(short()) };
        Ok(match &self.values {
            Values::Bool(v) => J::Bool(v[at(v.len())?]),
            Values::I32(v) => self.int(v[at(v.len())?].into()),
            Values::I64(v) => self.int(v[at(v.len())?]),
            Values::F32(v) => J::Float(f64::from(v[at(v.len())?])),
            Values::F64(v) => J::Float(v[at(v.len())?]),
            Values::Fixed(v) => self.fixed(&v[at(v.len())?]),
            Values::Bytes(v) => {
                let s = std::str::from_utf8(v[at(v.len())?].data()).map_err(|_| self.not_utf8())?;
                self.text(s)?
            }
            Values::Text(v) => {
                let Source::Pages(chunk) = &self.reader else {
                    unreachable!("text values come from pages")
                };
                let t = v[at(v.len())?];
                if self.taken == Taken::Json {
                    return chunk
                        .json(t)
                        .ok_or_else(|| self.not_utf8())?
                        .map_err(|e| self.not_json(&e));
                }
                J::Str(Cow::Borrowed(chunk.text(t).ok_or_else(|| self.not_utf8())?))
            }
        })
    }

    /// A stored integer as its column takes it: as it is, unsigned, or a decimal.
    fn int(&self, stored: i64) -> J<'static> {
        match self.taken {
            Taken::Unsigned if matches!(self.values, Values::I32(_)) => {
                J::Int((stored as i32 as u32).into())
            }
            Taken::Unsigned => J::Int((stored as u64).into()),
            Taken::Decimal(scale) => decimal(stored.into(), scale),
            _ => J::Int(stored.into()),
        }
    }

    /// Fixed-length bytes as their column takes them: a decimal (the only fixed-length
    /// values [`taken`] lets through).
    fn fixed(&self, v: &FixedLenByteArray) -> J<'static> {
        match self.taken {
            Taken::Decimal(scale) => decimal(be_integer(v.data()), scale),
            _ => J::Null,
        }
    }

    /// Text as its column takes it: as it is, or the JSON value it holds.
    fn text<'s>(&self, s: &'s str) -> Result<J<'s>, String> {
        if self.taken == Taken::Json {
            serde_json::from_str(s)
                .map_err(|e| self.not_json(&super::json::describe_json_error(&e)))
        } else {
            Ok(J::Str(Cow::Borrowed(s)))
        }
    }

    fn not_json(&self, why: &str) -> String {
        format!("{}: the text is not JSON: {why}", self.name)
    }

    fn not_utf8(&self) -> String {
        format!("{}: the text is not UTF-8", self.name)
    }
}

/// Where a reading of a batch's rows one at a time stands in a column
/// ([`ColumnData::next_value`]); a new cursor is at the batch's first row.
#[derive(Default, Clone, Copy)]
pub struct Cursor {
    row: usize,
    level: usize,
    value: usize,
}

std::thread_local! {
    /// Set while this thread runs the parquet crate's reading in [`guarded`]: a panic
    /// there is said as the file's error, so the panic hook stays quiet about it.
    static GUARDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `read`, a call into the parquet crate, turning a panic of it into the file's
/// error. The crate asserts on some broken files (a dictionary page that is not there)
/// instead of returning an error; a bad input must not end the program.
fn guarded<T>(path: &Path, read: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    static QUIET_HOOK: std::sync::Once = std::sync::Once::new();
    QUIET_HOOK.call_once(|| {
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !GUARDED.with(std::cell::Cell::get) {
                before(info);
            }
        }));
    });
    let was = GUARDED.with(|g| g.replace(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(read));
    GUARDED.with(|g| g.set(was));
    result.unwrap_or_else(|panic| {
        let why = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(bad(
            path,
            format!(
                "its data does not match its footer (the Parquet reader stopped: {})",
                crate::core::text::sanitize(&why)
            ),
        ))
    })
}

/// A Parquet file held in memory, its footer read; one reader serves every thread.
pub type Reader = SerializedFileReader<bytes::Bytes>;

/// Opens a Parquet file held in `data` (its footer, the schema and the row groups' places).
/// Every column chunk's place is checked against the file here: the parquet crate asserts
/// (panics) on a negative one when the chunk is read.
pub fn open(data: Vec<u8>, path: &Path) -> io::Result<Reader> {
    let size = data.len() as i64;
    let reader = SerializedFileReader::new(bytes::Bytes::from(data)).map_err(|e| bad(path, e))?;
    for (g, group) in reader.metadata().row_groups().iter().enumerate() {
        for column in group.columns() {
            let start = column
                .dictionary_page_offset()
                .unwrap_or(column.data_page_offset());
            let len = column.compressed_size();
            if start < 0 || len < 0 || start.saturating_add(len) > size {
                return Err(bad(
                    path,
                    format!(
                        "row group {g}, column {}: its chunk's place (bytes {start} to {}) is not inside the file ({size} bytes)",
                        crate::core::text::sanitize(&column.column_path().string()),
                        start.saturating_add(len)
                    ),
                ));
            }
        }
    }
    Ok(reader)
}

/// The number of rows of each row group.
pub fn row_groups(reader: &Reader) -> Vec<usize> {
    reader
        .metadata()
        .row_groups()
        .iter()
        .map(|g| g.num_rows().max(0) as usize)
        .collect()
}

/// Rows read from every column at a time: enough to amortise the calls, few enough that
/// a batch's values stay in cache and memory does not grow with the row group.
const BATCH: usize = 256;

impl ColumnData {
    /// Skips the next `n` rows of the column; the rows skipped (fewer only at the end of
    /// the column).
    fn skip(&mut self, n: usize, path: &Path) -> io::Result<usize> {
        if n == 0 {
            return Ok(0);
        }
        let reader = match &mut self.reader {
            Source::Column(r) => r,
            Source::Pages(chunk) => {
                return chunk
                    .skip(n)
                    .map_err(|e| bad(path, format!("column {}: {e}", self.name)));
            }
        };
        let skipped = match &mut **reader {
            ColumnReader::BoolColumnReader(r) => r.skip_records(n),
            ColumnReader::Int32ColumnReader(r) => r.skip_records(n),
            ColumnReader::Int64ColumnReader(r) => r.skip_records(n),
            ColumnReader::FloatColumnReader(r) => r.skip_records(n),
            ColumnReader::DoubleColumnReader(r) => r.skip_records(n),
            ColumnReader::ByteArrayColumnReader(r) => r.skip_records(n),
            ColumnReader::FixedLenByteArrayColumnReader(r) => r.skip_records(n),
            _ => unreachable!("only these readers are made"),
        };
        skipped.map_err(|e| bad(path, e))
    }

    /// Reads the next `want` rows of the column in place of the last batch; the rows read
    /// (fewer only at the end of the column).
    fn read_batch(&mut self, want: usize, path: &Path) -> io::Result<usize> {
        self.defs.clear();
        self.reps.clear();
        let levels = self.max_def > 0;
        macro_rules! read {
            ($r:expr, $vals:expr) => {{
                $vals.clear();
                let mut got = 0;
                while got < want {
                    let (n, _, _) = $r
                        .read_records(
                            want - got,
                            levels.then_some(&mut self.defs),
                            self.list.then_some(&mut self.reps),
                            $vals,
                        )
                        .map_err(|e| bad(path, e))?;
                    if n == 0 {
                        break;
                    }
                    got += n;
                }
                got
            }};
        }
        let reader = match &mut self.reader {
            Source::Column(r) => r,
            Source::Pages(chunk) => {
                let Values::Text(v) = &mut self.values else {
                    unreachable!("pages are read as text")
                };
                let defs = &mut self.defs;
                return chunk
                    .read(want, defs, v)
                    .map_err(|e| bad(path, format!("column {}: {e}", self.name)));
            }
        };
        let got = match (&mut **reader, &mut self.values) {
            (ColumnReader::BoolColumnReader(r), Values::Bool(v)) => read!(r, v),
            (ColumnReader::Int32ColumnReader(r), Values::I32(v)) => read!(r, v),
            (ColumnReader::Int64ColumnReader(r), Values::I64(v)) => read!(r, v),
            (ColumnReader::FloatColumnReader(r), Values::F32(v)) => read!(r, v),
            (ColumnReader::DoubleColumnReader(r), Values::F64(v)) => read!(r, v),
            (ColumnReader::ByteArrayColumnReader(r), Values::Bytes(v)) => read!(r, v),
            (ColumnReader::FixedLenByteArrayColumnReader(r), Values::Fixed(v)) => read!(r, v),
            _ => unreachable!("the values are made for the reader's type"),
        };
        if !levels && self.list {
            // A required list: every element is there.
            self.defs.resize(self.reps.len(), 0);
        }
        Ok(got)
    }
}

/// Reads the named top-level columns of the rows `rows` of row group `group`, calling
/// `each` with a batch of rows: the columns (in the order of `wanted`; `None` for an absent column),
/// each holding the batch (its values through [`batch`]), and the batch's number of rows.
pub fn read_columns(
    reader: &Reader,
    path: &Path,
    group: usize,
    rows: std::ops::Range<usize>,
    wanted: &[&str],
    each: impl FnMut(&[Option<ColumnData>], usize) -> io::Result<()>,
) -> io::Result<()> {
    read_columns_by(reader, path, group, rows, wanted, true, each)
}

/// [`read_columns`], reading flat text columns by their pages only when `pages` (the
/// tests compare both ways).
fn read_columns_by(
    reader: &Reader,
    path: &Path,
    group: usize,
    rows: std::ops::Range<usize>,
    wanted: &[&str],
    pages: bool,
    mut each: impl FnMut(&[Option<ColumnData>], usize) -> io::Result<()>,
) -> io::Result<()> {
    let meta = reader.metadata();
    let schema = meta.file_metadata().schema_descr();
    // wanted[j] -> leaf column index
    let mut leaf: Vec<Option<usize>> = vec![None; wanted.len()];
    for i in 0..schema.num_columns() {
        let c = schema.column(i);
        let parts = c.path().parts();
        let Some(top) = parts.first() else { continue };
        if let Some(j) = wanted.iter().position(|w| w == top) {
            if c.max_rep_level() > 1 || leaf[j].is_some() {
                return Err(bad(
                    path,
                    format!("column {top} is nested deeper than a list of values"),
                ));
            }
            leaf[j] = Some(i);
        }
    }
    {
        let (g, range) = (group, rows);
        let rg = guarded(path, || reader.get_row_group(g).map_err(|e| bad(path, e)))?;
        let rows = rg.metadata().num_rows().max(0) as usize;
        for c in rg.metadata().columns() {
            let codec = c.compression();
            if !matches!(codec, Compression::SNAPPY | Compression::UNCOMPRESSED) {
                return Err(bad(
                    path,
                    format!(
                        "its column {} is compressed with {codec}; frameaudit reads Snappy and uncompressed Parquet (write it with compression='snappy')",
                        c.column_path()
                    ),
                ));
            }
        }
        let mut cols: Vec<Option<ColumnData>> = Vec::with_capacity(wanted.len());
        for (j, l) in leaf.iter().enumerate() {
            let Some(l) = *l else {
                cols.push(None);
                continue;
            };
            let d = schema.column(l);
            let max_def = d.max_def_level();
            let taken = taken(&d).map_err(|e| bad(path, e))?;
            let flat_text = pages
                && d.physical_type() == parquet::basic::Type::BYTE_ARRAY
                && d.max_rep_level() == 0
                && super::parquet_text::fits(rg.metadata().column(l), max_def);
            if flat_text {
                let pages = guarded(path, || {
                    rg.get_column_page_reader(l).map_err(|e| bad(path, e))
                })?;
                cols.push(Some(ColumnData {
                    name: wanted[j].to_string(),
                    reader: Source::Pages(Box::new(TextChunk::new(
                        pages,
                        max_def,
                        taken == Taken::Json,
                    ))),
                    values: Values::Text(Vec::new()),
                    defs: Vec::new(),
                    reps: Vec::new(),
                    max_def,
                    elem_def: max_def,
                    list: false,
                    taken,
                }));
                continue;
            }
            let reader = guarded(path, || rg.get_column_reader(l).map_err(|e| bad(path, e)))?;
            let values = match &reader {
                ColumnReader::BoolColumnReader(_) => Values::Bool(Vec::new()),
                ColumnReader::Int32ColumnReader(_) => Values::I32(Vec::new()),
                ColumnReader::Int64ColumnReader(_) => Values::I64(Vec::new()),
                ColumnReader::FloatColumnReader(_) => Values::F32(Vec::new()),
                ColumnReader::DoubleColumnReader(_) => Values::F64(Vec::new()),
                ColumnReader::ByteArrayColumnReader(_) => Values::Bytes(Vec::new()),
                ColumnReader::FixedLenByteArrayColumnReader(_) => Values::Fixed(Vec::new()),
                _ => {
                    return Err(bad(
                        path,
                        format!(
                            "column {} has the physical type {}, which frameaudit does not read",
                            wanted[j],
                            d.physical_type()
                        ),
                    ));
                }
            };
            cols.push(Some(ColumnData {
                name: wanted[j].to_string(),
                reader: Source::Column(Box::new(reader)),
                values,
                defs: Vec::new(),
                reps: Vec::new(),
                max_def,
                elem_def: if d.self_type().is_optional() {
                    max_def - 1
                } else {
                    max_def
                },
                list: d.max_rep_level() == 1,
                taken,
            }));
        }
        let (wanted_rows, rows) = (range, rows);
        if wanted_rows.end > rows {
            return Err(bad(
                path,
                format!("row group {g} has {rows} rows, not {}", wanted_rows.end),
            ));
        }
        let short = |c: &ColumnData, got: usize| {
            bad(
                path,
                format!(
                    "column {} of row group {g} holds {got} rows where the row group has {rows}",
                    c.name
                ),
            )
        };
        for c in cols.iter_mut().flatten() {
            let skipped = guarded(path, || c.skip(wanted_rows.start, path))?;
            if skipped != wanted_rows.start {
                return Err(short(c, skipped));
            }
        }
        let mut done = wanted_rows.start;
        while done < wanted_rows.end {
            let want = (wanted_rows.end - done).min(BATCH);
            for c in cols.iter_mut().flatten() {
                let got = guarded(path, || c.read_batch(want, path))?;
                if got != want {
                    return Err(short(c, done + got));
                }
            }
            each(&cols, want)?;
            done += want;
        }
    }
    Ok(())
}

/// Writes records as Parquet, `fixed` columns first and the others as [`columns`] finds
/// them (used by every writer of `.parquet` but the cells').
pub fn write_records(
    rows: &[Map<String, Value>],
    fixed: &[(&str, Kind)],
    out: impl Write + Send,
) -> io::Result<()> {
    write_rows(out, &columns(fixed, rows), rows)
}

/// Whether a path names a Parquet file (by its extension).
pub fn is_parquet(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::basic::{Encoding, LogicalType, Type as Physical};
    use parquet::file::properties::WriterVersion;
    use parquet::schema::types::Type;

    /// Rows of a required and an optional text column: a few repeated strings, long and
    /// rare ones, empty ones, nulls and (when `bad`) bytes that are not UTF-8.
    fn rows(n: usize, bad: bool) -> (Vec<ByteArray>, Vec<Option<ByteArray>>) {
        let mut seed = 7u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        let text = |i: usize, r: usize| -> ByteArray {
            match r % 10 {
                0 => ByteArray::from(format!("rare-{i}-{}", "x".repeat(r % 300)).as_str()),
                1 => ByteArray::from(""),
                2 if bad && i.is_multiple_of(97) => ByteArray::from(vec![0xff, 0xfe, b'a']),
                _ => ByteArray::from(["yes", "no", "A", "é漢"][r % 4]),
            }
        };
        let a = (0..n).map(|i| text(i, next())).collect();
        let b = (0..n)
            .map(|i| {
                let r = next();
                (r % 5 != 0).then(|| text(i, r / 5))
            })
            .collect();
        (a, b)
    }

    /// The rows of [`rows`] in two text columns, or (`json`) in two columns of JSON text:
    /// strings, lists, numbers, and text that is not JSON.
    fn file(props: WriterProperties, n: usize, bad: bool, json: bool) -> Vec<u8> {
        let logical = if json {
            LogicalType::Json
        } else {
            LogicalType::String
        };
        let leaf = |name: &str, rep| {
            Arc::new(
                Type::primitive_type_builder(name, Physical::BYTE_ARRAY)
                    .with_repetition(rep)
                    .with_logical_type(Some(logical.clone()))
                    .build()
                    .unwrap(),
            )
        };
        let as_json = |v: &ByteArray| -> ByteArray {
            let Ok(s) = std::str::from_utf8(v.data()) else {
                return v.clone();
            };
            let quoted = serde_json::to_string(s).unwrap();
            ByteArray::from(
                match s.len() % 4 {
                    0 => format!("[{quoted}, \"x\"]"),
                    1 => quoted,
                    2 => format!("{}", s.len()),
                    // Bare text: not JSON ("yes"), or a number ("1").
                    _ => s.to_string(),
                }
                .as_str(),
            )
        };
        let schema = Type::group_type_builder("t")
            .with_fields(vec![
                leaf("a", Repetition::REQUIRED),
                leaf("b", Repetition::OPTIONAL),
            ])
            .build()
            .unwrap();
        let (mut a, mut b) = rows(n, bad);
        if json {
            a = a.iter().map(as_json).collect();
            b = b.iter().map(|v| v.as_ref().map(as_json)).collect();
        }
        let mut out = Vec::new();
        let mut w = SerializedFileWriter::new(&mut out, Arc::new(schema), Arc::new(props)).unwrap();
        // Two row groups, written in uneven batches.
        for half in [0..n / 3, n / 3..n] {
            let mut rg = w.next_row_group().unwrap();
            let mut col = rg.next_column().unwrap().unwrap();
            for part in a[half.clone()].chunks(777) {
                col.typed::<ByteArrayType>()
                    .write_batch(part, None, None)
                    .unwrap();
            }
            col.close().unwrap();
            let mut col = rg.next_column().unwrap().unwrap();
            for part in b[half.clone()].chunks(1000) {
                let defs: Vec<i16> = part.iter().map(|v| i16::from(v.is_some())).collect();
                let vals: Vec<ByteArray> = part.iter().flatten().cloned().collect();
                col.typed::<ByteArrayType>()
                    .write_batch(&vals, Some(&defs), None)
                    .unwrap();
            }
            col.close().unwrap();
            rg.close().unwrap();
        }
        w.close().unwrap();
        out
    }

    /// Every row's value of the columns (or its error), read by pages or by the crate's
    /// reader, each row group in `pieces` ranges of rows, and how many batches had a
    /// column read by pages.
    fn read(data: &[u8], pages: bool, pieces: usize) -> (Vec<String>, usize) {
        let path = Path::new("t.parquet");
        let r = open(data.to_vec(), path).unwrap();
        let (mut seen, mut by_pages) = (Vec::new(), 0);
        let ranges = row_groups(&r)
            .into_iter()
            .enumerate()
            .flat_map(|(g, n)| (0..pieces).map(move |k| (g, n * k / pieces..n * (k + 1) / pieces)));
        for (g, rows) in ranges {
            read_columns_by(&r, path, g, rows, &["a", "b", "c"], pages, |cols, n| {
                by_pages += cols
                    .iter()
                    .flatten()
                    .filter(|c| matches!(c.reader, Source::Pages(_)))
                    .count();
                let per_column: Vec<Vec<String>> = cols
                    .iter()
                    .map(|c| match c {
                        None => vec![format!("{:?}", J::Missing); n],
                        Some(c) if c.all_null(n) => vec![format!("{:?}", J::Null); n],
                        Some(c) => {
                            let mut at = Cursor::default();
                            (0..n)
                                .map(|_| match c.next_value(&mut at) {
                                    Ok(v) => format!("{v:?}"),
                                    Err(e) => format!("Err({e:?})"),
                                })
                                .collect()
                        }
                    })
                    .collect();
                for r in 0..n {
                    seen.extend(per_column.iter().map(|c| c[r].clone()));
                }
                Ok(())
            })
            .unwrap();
        }
        (seen, by_pages)
    }

    #[test]
    fn text_read_by_pages_equals_the_crates_reader_on_every_layout() {
        let base = || {
            WriterProperties::builder()
                .set_compression(Compression::SNAPPY)
                .set_write_batch_size(100)
        };
        let layouts: Vec<(&str, WriterProperties, bool)> = vec![
            ("dictionary, v1 pages", base().build(), true),
            (
                "dictionary, v2 pages",
                base()
                    .set_writer_version(WriterVersion::PARQUET_2_0)
                    .build(),
                true,
            ),
            (
                "small pages, uncompressed",
                base()
                    .set_compression(Compression::UNCOMPRESSED)
                    .set_data_page_size_limit(300)
                    .set_data_page_row_count_limit(50)
                    .build(),
                true,
            ),
            (
                "dictionary full: plain pages after dictionary ones",
                base().set_dictionary_page_size_limit(200).build(),
                true,
            ),
            (
                "plain, v1",
                base().set_dictionary_enabled(false).build(),
                true,
            ),
            (
                // The crate's v2 writer falls back to delta-encoded text.
                "no dictionary, v2: delta, left to the crate",
                base()
                    .set_dictionary_enabled(false)
                    .set_writer_version(WriterVersion::PARQUET_2_0)
                    .build(),
                false,
            ),
            (
                "plain, v2",
                base()
                    .set_dictionary_enabled(false)
                    .set_writer_version(WriterVersion::PARQUET_2_0)
                    .set_encoding(Encoding::PLAIN)
                    .build(),
                true,
            ),
            (
                "delta: left to the crate",
                base()
                    .set_dictionary_enabled(false)
                    .set_encoding(Encoding::DELTA_BYTE_ARRAY)
                    .build(),
                false,
            ),
        ];
        for (bad, json) in [(false, false), (true, false), (false, true), (true, true)] {
            for (name, props, fast) in &layouts {
                let name = &format!("{name}{}", if json { ", JSON" } else { "" });
                let data = file(props.clone(), 5000, bad, json);
                let (crate_rows, none) = read(&data, false, 1);
                let (page_rows, some) = read(&data, true, 1);
                // Row ranges that start inside a row group skip to their first row.
                assert_eq!(
                    read(&data, false, 3).0,
                    crate_rows,
                    "{name}: crate, in pieces"
                );
                assert_eq!(
                    read(&data, true, 3).0,
                    crate_rows,
                    "{name}: pages, in pieces"
                );
                assert_eq!(none, 0);
                assert_eq!(some > 0, *fast, "{name}: read by pages");
                assert_eq!(crate_rows.len(), 3 * 5000);
                assert_eq!(
                    crate_rows
                        .iter()
                        .filter(|s| s.contains("not UTF-8"))
                        .count()
                        > 0,
                    bad,
                    "{name}"
                );
                for (i, (c, p)) in crate_rows.iter().zip(&page_rows).enumerate() {
                    assert_eq!(c, p, "{name}, bad={bad}: row {}, column {}", i / 3, i % 3);
                }
                assert_eq!(crate_rows.len(), page_rows.len(), "{name}");
                // JSON text is read as the values it holds, or named as not JSON.
                let has = |p: &str| crate_rows.iter().any(|s| s.starts_with(p));
                assert_eq!(has("Arr([Str("), json, "{name}: lists");
                assert_eq!(has("Int("), json, "{name}: numbers");
                assert_eq!(
                    crate_rows.iter().any(|s| s.contains("is not JSON")),
                    json,
                    "{name}: not JSON"
                );
            }
        }
    }

    /// A leaf column `x` of `physical` (`len` bytes when fixed) with these annotations.
    fn column(
        physical: Physical,
        len: i32,
        logical: Option<LogicalType>,
        converted: parquet::basic::ConvertedType,
        (scale, precision): (i32, i32),
    ) -> parquet::schema::types::ColumnDescriptor {
        let leaf = Type::primitive_type_builder("x", physical)
            .with_repetition(Repetition::OPTIONAL)
            .with_length(len)
            .with_logical_type(logical)
            .with_converted_type(converted)
            .with_precision(precision)
            .with_scale(scale)
            .build()
            .unwrap();
        parquet::schema::types::ColumnDescriptor::new(
            Arc::new(leaf),
            1,
            0,
            parquet::schema::types::ColumnPath::from("x"),
        )
    }

    #[test]
    fn each_logical_type_is_taken_as_its_value_or_refused_by_name() {
        use parquet::basic::{ConvertedType as C, DecimalType, IntType, TimestampType};
        let int = |bit_width, is_signed| {
            Some(LogicalType::Integer(IntType {
                bit_width,
                is_signed,
            }))
        };
        let dec = |scale, precision| Some(LogicalType::Decimal(DecimalType { scale, precision }));
        // Decimals of precision 4, 18, 30 and 40 (in 20 bytes).
        let precision = |physical, len| match (physical, len) {
            (Physical::INT32, _) => 4,
            (Physical::INT64, _) => 18,
            (_, 16) => 30,
            _ => 40,
        };
        let taken_as = |physical, len, logical, converted, scale: i32| {
            let p = if scale > 0 {
                precision(physical, len)
            } else {
                0
            };
            taken(&column(physical, len, logical, converted, (scale, p)))
        };
        for (physical, len, logical, converted, scale, want) in [
            (
                Physical::BYTE_ARRAY,
                0,
                Some(LogicalType::String),
                C::UTF8,
                0,
                Taken::AsStored,
            ),
            (Physical::BYTE_ARRAY, 0, None, C::UTF8, 0, Taken::AsStored),
            (Physical::BYTE_ARRAY, 0, None, C::NONE, 0, Taken::AsStored),
            (
                Physical::BYTE_ARRAY,
                0,
                Some(LogicalType::Enum),
                C::ENUM,
                0,
                Taken::AsStored,
            ),
            (
                Physical::BYTE_ARRAY,
                0,
                Some(LogicalType::Json),
                C::JSON,
                0,
                Taken::Json,
            ),
            (Physical::BYTE_ARRAY, 0, None, C::JSON, 0, Taken::Json),
            (
                Physical::INT32,
                0,
                int(8, true),
                C::INT_8,
                0,
                Taken::AsStored,
            ),
            (
                Physical::INT32,
                0,
                int(32, false),
                C::UINT_32,
                0,
                Taken::Unsigned,
            ),
            (Physical::INT32, 0, None, C::UINT_16, 0, Taken::Unsigned),
            (
                Physical::INT64,
                0,
                int(64, false),
                C::UINT_64,
                0,
                Taken::Unsigned,
            ),
            (Physical::INT64, 0, None, C::NONE, 0, Taken::AsStored),
            (
                Physical::INT32,
                0,
                dec(2, 4),
                C::DECIMAL,
                2,
                Taken::Decimal(2),
            ),
            (Physical::INT64, 0, None, C::DECIMAL, 4, Taken::Decimal(4)),
            (
                Physical::FIXED_LEN_BYTE_ARRAY,
                16,
                dec(2, 30),
                C::DECIMAL,
                2,
                Taken::Decimal(2),
            ),
            (Physical::DOUBLE, 0, None, C::NONE, 0, Taken::AsStored),
            (Physical::BOOLEAN, 0, None, C::NONE, 0, Taken::AsStored),
        ] {
            assert_eq!(
                taken_as(physical, len, logical.clone(), converted, scale),
                Ok(want),
                "{physical} {logical:?} {converted}"
            );
        }
        let ts = Some(LogicalType::Timestamp(TimestampType {
            is_adjusted_to_u_t_c: true,
            unit: parquet::basic::TimeUnit::MICROS,
        }));
        for (physical, len, logical, converted, scale, what) in [
            (
                Physical::INT32,
                0,
                Some(LogicalType::Date),
                C::DATE,
                0,
                "dates",
            ),
            (Physical::INT32, 0, None, C::DATE, 0, "dates"),
            (Physical::INT64, 0, ts, C::TIMESTAMP_MICROS, 0, "timestamps"),
            (Physical::INT96, 0, None, C::NONE, 0, "timestamps"),
            (
                Physical::BYTE_ARRAY,
                0,
                Some(LogicalType::Bson),
                C::BSON,
                0,
                "BSON",
            ),
            (
                Physical::FIXED_LEN_BYTE_ARRAY,
                16,
                Some(LogicalType::Uuid),
                C::NONE,
                0,
                "UUIDs",
            ),
            (
                Physical::FIXED_LEN_BYTE_ARRAY,
                2,
                Some(LogicalType::Float16),
                C::NONE,
                0,
                "16-bit",
            ),
            (
                Physical::FIXED_LEN_BYTE_ARRAY,
                4,
                None,
                C::NONE,
                0,
                "fixed-length",
            ),
            (
                Physical::FIXED_LEN_BYTE_ARRAY,
                20,
                dec(2, 40),
                C::DECIMAL,
                2,
                "decimals",
            ),
        ] {
            let e = taken_as(physical, len, logical.clone(), converted, scale).unwrap_err();
            assert!(
                e.contains("column x holds") && e.contains(what),
                "{logical:?}: {e}"
            );
        }
        // A decimal is the number JSON gives for the same digits; fixed-length decimals
        // are big-endian two's complement.
        assert_eq!(decimal(41, 2), J::Float(0.41));
        assert_eq!(decimal(-5, 1), J::Float(-0.5));
        assert_eq!(decimal(8, 0), J::Int(8));
        assert_eq!(be_integer(&[0xff, 0xfe]), -2);
        assert_eq!(be_integer(&[0x01, 0x00]), 256);
        assert_eq!(be_integer(&[0x80; 16]), i128::from_be_bytes([0x80; 16]));
    }
}
