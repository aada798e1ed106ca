//! A prediction file as a table of text fields, whatever VLMEvalKit wrote it as: an xlsx
//! sheet (calamine, within the caps of `table/xlsx.rs`), a tab-separated file as pandas
//! writes it (`"`-quoted fields possible), or JSON in the shapes pandas and `json.dump` give
//! a data frame: a list of row objects, `{column: {row: value}}` (pandas' default), `{row:
//! {column: value}}`, `{"columns": [...], "data": [[...]]}`, or one row object per line.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::core::fsread;

use super::lines::LineIndex;

mod xlsx;

/// One row: its number as the user finds it (the sheet's row, the file's line, or the
/// 1-based position in the JSON), and its fields in column order (`None` = empty), or why
/// the row cannot be read.
pub type Row = (u64, Result<Vec<Option<String>>, String>);

/// A prediction file's rows.
#[derive(Debug, Default)]
pub struct Table {
    /// Column names, trimmed.
    pub columns: Vec<String>,
    pub rows: Vec<Row>,
}

impl Table {
    /// The position of the column named `name`.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }
}

/// Reads a prediction file by its extension (`xlsx`, `tsv` or `json`); the error says why
/// the whole file cannot be read.
pub fn read_table(path: &Path) -> Result<Table, String> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "xlsx" => xlsx::read(path).map_err(|e| e.to_string()),
        "tsv" => read_tsv(path),
        "json" => {
            let text = fsread::read_to_string(path, fsread::IMPORT)
                .map_err(|e| format!("cannot read it: {e}"))?;
            read_json(&text)
        }
        _ => Err(format!("extension {ext:?} is not xlsx, tsv or json")),
    }
}

/// A number as text: whole numbers without a fraction (`3`, not `3.0`).
fn number_text(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        format!("{}", f as i64)
    } else {
        f.to_string()
    }
}

fn read_tsv(path: &Path) -> Result<Table, String> {
    let data = fsread::read(path, fsread::IMPORT).map_err(|e| format!("cannot read it: {e}"))?;
    // Excel's "Unicode Text" is a TSV in UTF-16: refused, as its header would not read.
    if let Some(w) = crate::core::load::encoding::wide(&data) {
        return Err(w.refusal());
    }
    let mut lines = LineIndex::new(&data);
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(b'\t')
        .flexible(true)
        .from_reader(&data[..]);
    let columns: Vec<String> = reader
        .headers()
        .map_err(|e| format!("cannot read its header: {e}"))?
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let c = if i == 0 {
                c.trim_start_matches('\u{feff}')
            } else {
                c
            };
            c.trim().to_string()
        })
        .collect();
    let mut rows = Vec::new();
    for record in reader.records() {
        match record {
            Ok(r) => {
                let line = r.position().map_or(0, |p| lines.line(p.byte()));
                if r.iter().all(|f| f.trim().is_empty()) {
                    continue;
                }
                if r.len() != columns.len() {
                    rows.push((
                        line,
                        Err(format!(
                            "{} fields where the header has {}",
                            r.len(),
                            columns.len()
                        )),
                    ));
                    continue;
                }
                let fields = r
                    .iter()
                    .map(|f| (!f.is_empty()).then(|| f.to_string()))
                    .collect();
                rows.push((line, Ok(fields)));
            }
            // Reading from memory, only bad UTF-8 fails, and only its record.
            Err(e) => {
                let line = e.position().map_or(0, |p| lines.line(p.byte()));
                rows.push((line, Err(format!("not UTF-8: {e}"))));
            }
        }
    }
    Ok(Table { columns, rows })
}

/// Reads a table from JSON text (see the module documentation for the shapes).
pub fn read_json(text: &str) -> Result<Table, String> {
    let text = text.trim_start_matches('\u{feff}');
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(whole) => return json_lines(text).map_err(|_| format!("not JSON: {whole}")),
    };
    match value {
        Value::Array(rows) => Ok(records(rows.into_iter())),
        Value::Object(map) => {
            if let (Some(Value::Array(cols)), Some(Value::Array(data))) =
                (map.get("columns"), map.get("data"))
            {
                return Ok(split_orient(cols, data));
            }
            if !map.values().all(Value::is_object) || map.is_empty() {
                return Err("a JSON object that is not a table of rows".into());
            }
            if map.contains_key("prediction") {
                Ok(columns_orient(map))
            } else {
                Ok(records(sorted_rows(map).into_iter().map(|(_, v)| v)))
            }
        }
        _ => Err("JSON that is neither a list of rows nor a table object".into()),
    }
}

/// One JSON object per line (pandas `orient="records", lines=True`).
fn json_lines(text: &str) -> Result<Table, ()> {
    let mut rows = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<Value>(line) {
            Ok(v @ Value::Object(_)) => rows.push(v),
            _ => return Err(()),
        }
    }
    if rows.is_empty() {
        return Err(());
    }
    Ok(records(rows.into_iter()))
}

/// The text of a JSON value; lists and objects stay JSON text (a `candidates` list is read
/// from it like VLMEvalKit's own string form).
fn json_text(v: &Value) -> Option<String> {
    let s = match v {
        Value::Null => return None,
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => number_text(f),
            _ => n.to_string(),
        },
        Value::Bool(b) => b.to_string(),
        other => other.to_string(),
    };
    (!s.is_empty()).then_some(s)
}

/// Rows from row objects; columns are every key, in the order first seen.
fn records(rows: impl Iterator<Item = Value>) -> Table {
    let mut columns: Vec<String> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    let mut raw = Vec::new();
    for (i, row) in rows.enumerate() {
        let n = i as u64 + 1;
        let Value::Object(obj) = row else {
            raw.push((n, Err("not a JSON object".to_string())));
            continue;
        };
        let mut fields = Vec::with_capacity(obj.len());
        for (k, v) in obj {
            let k = k.trim().to_string();
            let at = *index.entry(k.clone()).or_insert_with(|| {
                columns.push(k);
                columns.len() - 1
            });
            fields.push((at, json_text(&v)));
        }
        raw.push((n, Ok(fields)));
    }
    let width = columns.len();
    let rows = raw
        .into_iter()
        .map(|(n, r)| {
            (
                n,
                r.map(|fields| {
                    let mut out = vec![None; width];
                    for (at, v) in fields {
                        out[at] = v;
                    }
                    out
                }),
            )
        })
        .collect();
    Table { columns, rows }
}

/// Row labels in data-frame order: numerically when they are all numbers (`"10"` after
/// `"9"`), else as text.
fn sorted_rows<V>(map: impl IntoIterator<Item = (String, V)>) -> Vec<(String, V)> {
    let mut rows: Vec<(String, V)> = map.into_iter().collect();
    if rows.iter().all(|(k, _)| k.parse::<f64>().is_ok()) {
        rows.sort_by(|a, b| {
            let (x, y) = (a.0.parse::<f64>(), b.0.parse::<f64>());
            match (x, y) {
                (Ok(x), Ok(y)) => x.total_cmp(&y),
                _ => a.0.cmp(&b.0),
            }
        });
    } else {
        rows.sort_by(|a, b| a.0.cmp(&b.0));
    }
    rows
}

/// `{column: {row: value}}`, pandas' default `to_json` shape.
fn columns_orient(map: serde_json::Map<String, Value>) -> Table {
    let mut labels: BTreeMap<String, ()> = BTreeMap::new();
    for col in map.values() {
        if let Value::Object(c) = col {
            for k in c.keys() {
                labels.insert(k.clone(), ());
            }
        }
    }
    let labels: Vec<String> = sorted_rows(labels).into_iter().map(|(k, ())| k).collect();
    let columns: Vec<String> = map.keys().map(|k| k.trim().to_string()).collect();
    let rows = labels
        .iter()
        .enumerate()
        .map(|(i, label)| {
            let fields = map
                .values()
                .map(|col| col.get(label).and_then(json_text))
                .collect();
            (i as u64 + 1, Ok(fields))
        })
        .collect();
    Table { columns, rows }
}

/// `{"columns": [...], "data": [[...], ...]}`, pandas' `orient="split"`.
fn split_orient(cols: &[Value], data: &[Value]) -> Table {
    let columns: Vec<String> = cols
        .iter()
        .map(|c| json_text(c).unwrap_or_default().trim().to_string())
        .collect();
    let rows = data
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let n = i as u64 + 1;
            match row.as_array() {
                Some(r) if r.len() == columns.len() => (n, Ok(r.iter().map(json_text).collect())),
                Some(r) => (
                    n,
                    Err(format!(
                        "{} values where \"columns\" names {}",
                        r.len(),
                        columns.len()
                    )),
                ),
                None => (n, Err("not a JSON list of values".into())),
            }
        })
        .collect();
    Table { columns, rows }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(t: &Table, row: usize, col: &str) -> Option<String> {
        let c = t.column(col).expect("column");
        t.rows[row].1.as_ref().expect("row")[c].clone()
    }

    #[test]
    fn every_json_shape_gives_the_same_table() {
        let shapes = [
            r#"[{"index": 0, "prediction": "A", "answer": "B"}, {"index": 1, "prediction": null, "answer": "C"}]"#,
            r#"{"index": {"0": 0, "1": 1}, "prediction": {"0": "A", "1": null}, "answer": {"0": "B", "1": "C"}}"#,
            r#"{"0": {"index": 0, "prediction": "A", "answer": "B"}, "1": {"index": 1, "answer": "C"}}"#,
            r#"{"columns": ["index", "prediction", "answer"], "data": [[0, "A", "B"], [1, null, "C"]]}"#,
            "{\"index\": 0, \"prediction\": \"A\", \"answer\": \"B\"}\n{\"index\": 1.0, \"answer\": \"C\"}\n",
        ];
        for text in shapes {
            let t = read_json(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(t.rows.len(), 2, "{text}");
            assert_eq!(field(&t, 0, "index").as_deref(), Some("0"), "{text}");
            assert_eq!(field(&t, 0, "prediction").as_deref(), Some("A"), "{text}");
            assert_eq!(field(&t, 1, "index").as_deref(), Some("1"), "{text}");
            assert_eq!(field(&t, 1, "prediction"), None, "{text}");
            assert_eq!(field(&t, 1, "answer").as_deref(), Some("C"), "{text}");
        }
    }

    #[test]
    fn columns_orient_rows_follow_numeric_labels() {
        let t = read_json(r#"{"prediction": {"10": "A", "9": "B", "2": "C"}}"#).expect("table");
        let got: Vec<_> = (0..3).map(|i| field(&t, i, "prediction")).collect();
        assert_eq!(got, [Some("C".into()), Some("B".into()), Some("A".into())]);
    }

    #[test]
    fn json_that_is_no_table_is_refused() {
        for text in ["42", "{\"a\": 1}", "{}", "not json"] {
            assert!(read_json(text).is_err(), "{text}");
        }
    }

    #[test]
    fn lists_stay_json_text() {
        let t = read_json(r#"[{"candidates": ["A. x", "B. y"]}]"#).expect("table");
        assert_eq!(
            field(&t, 0, "candidates").as_deref(),
            Some(r#"["A. x","B. y"]"#)
        );
    }

    #[test]
    fn numbers_print_whole_when_whole() {
        assert_eq!(number_text(3.0), "3");
        assert_eq!(number_text(-2.0), "-2");
        assert_eq!(number_text(2.5), "2.5");
    }
}
