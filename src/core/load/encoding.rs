//! Text that is not UTF-8 told apart from text that is: frameaudit reads UTF-8 (a byte-order
//! mark skipped), and a UTF-16 or UTF-32 file, as Excel's "Unicode Text" and Windows
//! PowerShell write them, is recognised by its byte-order mark or its NUL bytes and refused
//! with the way to convert it, instead of being read as text whose columns are all missing.

use std::io::Read;

/// How many bytes of a file's start are looked at.
pub const HEAD: usize = 512;

/// A wide Unicode encoding found at the start of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wide {
    /// `iconv`'s name of the encoding: `UTF-16` or `UTF-32` when a byte-order mark says
    /// which byte order (iconv reads the mark and drops it), else `UTF-16LE` or `UTF-16BE`.
    pub name: &'static str,
    /// How it was recognised.
    pub by: &'static str,
}

impl Wide {
    /// The message that refuses a file of this encoding.
    pub fn refusal(&self) -> String {
        format!(
            "the file is {} ({}), not UTF-8: convert it, e.g. `iconv -f {} -t UTF-8 OLD > NEW` (Excel's \"Unicode Text\" and Windows PowerShell's `>` write UTF-16; Excel's \"CSV UTF-8\" writes UTF-8)",
            self.name, self.by, self.name
        )
    }
}

/// The wide encoding the start of a file is in, if it is one: a UTF-16 or UTF-32 byte-order
/// mark, or (without one) text of two-byte units whose one byte is NUL in nearly every unit,
/// as ASCII is in UTF-16. UTF-8 text holds no NUL byte, so it is never taken for one.
pub fn wide(head: &[u8]) -> Option<Wide> {
    let head = &head[..head.len().min(HEAD)];
    // UTF-32 first: its little-endian mark starts with UTF-16's.
    let marks: [(&[u8], &str, &str); 4] = [
        (
            b"\xFF\xFE\x00\x00",
            "UTF-32",
            "little-endian, by its byte-order mark",
        ),
        (
            b"\x00\x00\xFE\xFF",
            "UTF-32",
            "big-endian, by its byte-order mark",
        ),
        (
            b"\xFF\xFE",
            "UTF-16",
            "little-endian, by its byte-order mark",
        ),
        (b"\xFE\xFF", "UTF-16", "big-endian, by its byte-order mark"),
    ];
    if let Some(&(_, name, by)) = marks.iter().find(|(m, _, _)| head.starts_with(m)) {
        return Some(Wide { name, by });
    }
    let units = head.len() / 2;
    if units < 2 {
        return None;
    }
    let (mut high_nul, mut low_nul) = (0, 0);
    for u in head.chunks_exact(2) {
        match (u[0], u[1]) {
            (0, 0) => {}
            (_, 0) => high_nul += 1,
            (0, _) => low_nul += 1,
            _ => {}
        }
    }
    // Nearly every unit: a few non-ASCII characters (accents, CJK) have both bytes set.
    let most = units * 3 / 4;
    if high_nul >= most.max(2) && low_nul == 0 {
        Some(Wide {
            name: "UTF-16LE",
            by: "little-endian without a byte-order mark, by its NUL bytes",
        })
    } else if low_nul >= most.max(2) && high_nul == 0 {
        Some(Wide {
            name: "UTF-16BE",
            by: "big-endian without a byte-order mark, by its NUL bytes",
        })
    } else {
        None
    }
}

/// A stream whose first bytes were read and put back in front of the rest.
pub type Peeked<R> = std::io::Chain<std::io::Cursor<Vec<u8>>, R>;

/// Reads the start of a stream to see its encoding: the wide encoding it is in, if any,
/// and the stream whole again (the bytes read put back in front).
pub fn peek<R: Read>(mut reader: R) -> std::io::Result<(Option<Wide>, Peeked<R>)> {
    let mut head = vec![0u8; HEAD];
    let mut n = 0;
    while n < HEAD {
        match reader.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    head.truncate(n);
    Ok((wide(&head), std::io::Cursor::new(head).chain(reader)))
}

/// `bytes` as text, or the error said at its line: a file's other encoding (UTF-16, with
/// the command that converts it), or the line and byte where it stops being UTF-8.
pub fn utf8_or_said<'a>(
    bytes: &'a [u8],
    file: &std::sync::Arc<std::path::Path>,
    diags: &mut crate::core::diag::Diagnostics,
) -> Option<&'a str> {
    if let Some(w) = wide(bytes) {
        diags.error(file, None, None, w.refusal());
        return None;
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Some(text),
        Err(e) => {
            let (line, offset) = place_after(&bytes[..e.valid_up_to()]);
            diags.error(
                file,
                Some(line),
                None,
                format!(
                    "not valid UTF-8 (byte {} of the line): the file must be UTF-8",
                    offset + 1
                ),
            );
            None
        }
    }
}

/// Where a text's first bytes `before` end: the line they end on (from 1) and how many
/// bytes of that line they hold (0 at its start).
pub fn place_after(before: &[u8]) -> (u64, usize) {
    let line = 1 + memchr::memchr_iter(b'\n', before).count() as u64;
    let offset = before.len() - memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
    (line, offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf16(text: &str, big: bool, mark: bool) -> Vec<u8> {
        let mut out = Vec::new();
        let units = mark
            .then_some(0xFEFF)
            .into_iter()
            .chain(text.encode_utf16());
        for u in units {
            out.extend(if big {
                u.to_be_bytes()
            } else {
                u.to_le_bytes()
            });
        }
        out
    }

    #[test]
    fn utf16_and_utf32_by_their_marks_and_by_their_nul_bytes() {
        let csv = "sample_id,model,config,frame_count\nq1,M,8f,8\n";
        let name = |b: &[u8]| wide(b).map(|w| w.name);
        assert_eq!(name(&utf16(csv, false, true)), Some("UTF-16"));
        assert_eq!(name(&utf16(csv, true, true)), Some("UTF-16"));
        assert_eq!(name(&utf16(csv, false, false)), Some("UTF-16LE"));
        assert_eq!(name(&utf16(csv, true, false)), Some("UTF-16BE"));
        // Accented and CJK text among the ASCII.
        let mixed = "sample_id,modèle,config\nq1,模型,8f\n";
        assert_eq!(name(&utf16(mixed, false, false)), Some("UTF-16LE"));
        assert_eq!(name(b"\xFF\xFE\x00\x00s\x00\x00\x00"), Some("UTF-32"));
        assert_eq!(name(b"\x00\x00\xFE\xFF\x00\x00\x00s"), Some("UTF-32"));
        let w = wide(&utf16(csv, false, true)).expect("utf-16");
        assert!(
            w.refusal().contains("iconv -f UTF-16 -t UTF-8"),
            "{}",
            w.refusal()
        );
    }

    #[test]
    fn utf8_is_never_wide() {
        for text in [
            &b""[..],
            b"a",
            b"\xEF\xBB\xBFsample_id,model\n",
            "sample_id,modèle,模型\nq1,M,8f\n".as_bytes(),
            b"{\"model\":\"M\"}\n",
            // One NUL is not a pattern.
            b"a\x00bc,d\n",
        ] {
            assert_eq!(wide(text), None, "{text:?}");
        }
    }

    #[test]
    fn peek_gives_the_stream_back_whole() {
        let text: Vec<u8> = (0..2000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let (w, mut r) = peek(&text[..]).expect("read");
        assert_eq!(w, None);
        let mut back = Vec::new();
        r.read_to_end(&mut back).expect("read");
        assert_eq!(back, text);
    }
}
