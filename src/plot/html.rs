//! `index.html`: every figure of a `plot` run on one page, grouped per model, with
//! captions and the notes of figures left out. Every data string is escaped.

use std::fmt::Write;

use crate::core::text::sanitize;

/// One figure on the page: its file, or the note saying why it was left out.
pub struct Entry {
    /// The figure's file name, or why it was left out.
    pub file: Result<String, String>,
    /// What the figure shows, under it.
    pub caption: String,
}

/// A heading and its figures.
pub struct Section {
    /// The section's heading.
    pub title: String,
    /// Its figures, in the order drawn.
    pub entries: Vec<Entry>,
}

/// Text made safe inside HTML text and attribute values: control characters shown as
/// escapes, markup characters as entities.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in sanitize(s).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The whole page.
pub fn index(title: &str, subtitle: &str, sections: &[Section]) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{t}</title>\n\
         <style>body{{font-family:'DejaVu Sans',sans-serif;margin:2em;color:#1e1e1e;max-width:1100px}}\
         figure{{margin:1.5em 0}}img{{max-width:100%;border:1px solid #ddd}}\
         figcaption{{color:#555;margin-top:.4em}}.note{{color:#8a5a00}}</style>\n</head>\n<body>\n\
         <h1>{t}</h1>\n<p>{s}</p>\n",
        t = escape(title),
        s = escape(subtitle)
    );
    for sec in sections {
        let _ = writeln!(h, "<h2>{}</h2>", escape(&sec.title));
        for e in &sec.entries {
            match &e.file {
                Ok(file) => {
                    let _ = writeln!(
                        h,
                        "<figure><img src=\"{f}\" alt=\"{c}\"><figcaption>{c}</figcaption></figure>",
                        f = escape(file),
                        c = escape(&e.caption)
                    );
                }
                Err(note) => {
                    let _ = writeln!(
                        h,
                        "<p class=\"note\">Not drawn: {} ({})</p>",
                        escape(&e.caption),
                        escape(note)
                    );
                }
            }
        }
    }
    h.push_str("</body>\n</html>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_control_characters() {
        assert_eq!(
            escape("<b>\"x\" & 'y'\u{1b}"),
            "&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;\\x1b"
        );
    }
}
