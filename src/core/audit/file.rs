//! The audit file on disk: opened under an exclusive advisory lock so two frameaudits never
//! interleave appends, replayed on open, and appended to one durable line at a time, with
//! torn tails and failed appends cut back so the file always ends on a complete line.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::{AuditError, AuditHeader, Event, Replay, replay_bytes};
use crate::core::fsread;

/// An open audit file, holding its exclusive locks until dropped: one on the file, and
/// one on a lock file beside it (`.NAME.lock`), which still keeps a second frameaudit out
/// when the audit file is deleted or replaced while open.
#[derive(Debug)]
pub struct AuditFile {
    file: File,
    path: PathBuf,
    _guard: File,
}

/// The lock file of the audit file at `path`: `.NAME.lock` in its directory.
pub fn lock_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.lock"))
}

/// Takes the exclusive lock of `file` without waiting.
fn try_lock(file: &File, path: &Path) -> Result<(), AuditError> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(TryLockError::WouldBlock) => Err(AuditError::Locked {
            path: path.to_path_buf(),
        }),
        Err(TryLockError::Error(source)) => Err(AuditError::Io {
            what: "lock",
            path: path.to_path_buf(),
            source,
        }),
    }
}

impl AuditFile {
    /// Opens (creating it, with `header_if_new` as its first line, when it is absent or
    /// empty) and locks the audit file at `path`, then replays it. A torn last line is
    /// truncated away. Fails with [`AuditError::Locked`] when another handle holds the lock.
    pub fn open(
        path: &Path,
        header_if_new: &AuditHeader,
    ) -> Result<(AuditFile, Replay), AuditError> {
        let (file, replay) = AuditFile::open_or_blank(path, Some(header_if_new))?;
        Ok((
            file,
            replay.unwrap_or_else(|| Replay::new(header_if_new.clone())),
        ))
    }

    /// [`AuditFile::open`], but a file absent or empty is left empty (and locked) when no
    /// header is given: `None` in place of its replay, and [`AuditFile::write_header`]
    /// comes before any event. Until then the file is as good as absent: a later open
    /// writes its own header into it.
    pub fn open_or_blank(
        path: &Path,
        header_if_new: Option<&AuditHeader>,
    ) -> Result<(AuditFile, Option<Replay>), AuditError> {
        let io = |what: &'static str, p: &Path| {
            let p = p.to_path_buf();
            move |source| AuditError::Io {
                what,
                path: p,
                source,
            }
        };
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        if let Some(dir) = dir {
            std::fs::create_dir_all(dir).map_err(io("create the directory", dir))?;
        }
        let guard_path = lock_path(path);
        // Neither file is opened through a symbolic link: a link planted in a shared
        // dataset would have the header (or an empty lock file) written anywhere.
        let guard = crate::core::fswrite::open_no_follow(
            OpenOptions::new().write(true).create(true).truncate(false),
            &guard_path,
        )
        .map_err(io("open the lock file", &guard_path))?;
        try_lock(&guard, path)?;
        // Append mode: every write lands at the end, also after a truncation. Opened
        // without blocking and refused unless it is a regular file: a named pipe there
        // would block the read below forever.
        let mut file = fsread::open_no_follow(
            OpenOptions::new().read(true).append(true).create(true),
            path,
            fsread::AUDIT,
        )
        .map_err(io("open", path))?
        .into_file();
        try_lock(&file, path)?;
        let mut bytes = Vec::new();
        fsread::Bounded::new(&mut file, fsread::AUDIT)
            .read_to_end(&mut bytes)
            .map_err(io("read", path))?;
        let mut opened = AuditFile {
            file,
            path: path.to_path_buf(),
            _guard: guard,
        };

        // Only NULs and blanks is what a crash while writing the header can leave on some
        // file systems (size updated, data not): as good as empty. Anything else without a
        // newline may be someone's file, so it is never overwritten.
        if bytes.iter().all(|&b| b == 0 || b.is_ascii_whitespace()) {
            let Some(header) = header_if_new else {
                return Ok((opened, None));
            };
            opened
                .write_header(header)
                .map_err(io("write the header of", path))?;
            bytes = header.to_line().into_bytes();
            bytes.push(b'\n');
        } else if memchr::memchr(b'\n', &bytes).is_none() {
            // A whole header whose newline was lost: give it back so events start on a line
            // of their own. A partial one is rejected by the replay below.
            if super::parse_header(&bytes).is_ok() {
                opened
                    .file
                    .write_all(b"\n")
                    .and_then(|()| opened.file.sync_data())
                    .map_err(io("write", path))?;
                bytes.push(b'\n');
            }
        }
        let (replay, truncate_to) = replay_bytes(path, &bytes, true)?;
        if let Some(len) = truncate_to {
            opened
                .file
                .set_len(len)
                .and_then(|()| opened.file.sync_all())
                .map_err(io("truncate the torn last line of", path))?;
        }
        Ok((opened, Some(replay)))
    }

    /// Writes `header` as the whole content of a file opened empty
    /// ([`AuditFile::open_or_blank`]), durably (the file and its directory synced).
    pub fn write_header(&mut self, header: &AuditHeader) -> std::io::Result<()> {
        let mut line = header.to_line();
        line.push('\n');
        self.file.set_len(0)?;
        self.file.write_all(line.as_bytes())?;
        self.file.sync_all()?;
        let dir = self.path.parent().filter(|d| !d.as_os_str().is_empty());
        crate::core::fswrite::sync_dir(dir.unwrap_or(Path::new(".")))
    }

    /// The path the file was opened at.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the path still names the open file: false once it was deleted, renamed or
    /// replaced by another file (writes would then go where no one reads them).
    pub fn at_path(&self) -> bool {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            match (std::fs::metadata(&self.path), self.file.metadata()) {
                (Ok(at), Ok(open)) => at.dev() == open.dev() && at.ino() == open.ino(),
                _ => false,
            }
        }
        #[cfg(not(unix))]
        {
            self.path.is_file()
        }
    }

    /// Writes `state` (its header, each record's state, the last visit) as a new file at
    /// the path, durably, and goes on appending to it. A file found at the path is not
    /// lost: it is moved aside first, to `NAME.displaced-N`, whose path is returned.
    pub fn rewrite(&mut self, state: &super::Replay) -> std::io::Result<Option<PathBuf>> {
        let dir = self
            .path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        std::fs::create_dir_all(&dir)?;
        let mut tmp = crate::core::fswrite::temp_for(&self.path)?;
        {
            let mut w = std::io::BufWriter::new(tmp.as_file_mut());
            writeln!(w, "{}", state.header.to_line())?;
            for r in state.records.values() {
                writeln!(w, "{}", Event::Set(r.clone()).to_line())?;
            }
            if let Some(key) = &state.last_visit {
                let visit = Event::Visit {
                    key: key.clone(),
                    at: super::now_rfc3339(),
                };
                writeln!(w, "{}", visit.to_line())?;
            }
            w.flush()?;
        }
        tmp.as_file().sync_all()?;
        let mut displaced = None;
        if self.path.symlink_metadata().is_ok() {
            let name = self
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let aside = (1..)
                .map(|n| dir.join(format!("{name}.displaced-{n}")))
                .find(|p| p.symlink_metadata().is_err())
                .unwrap_or_else(|| dir.join(format!("{name}.displaced")));
            std::fs::rename(&self.path, &aside)?;
            displaced = Some(aside);
        }
        let file = tmp.persist_noclobber(&self.path).map_err(|e| e.error)?;
        crate::core::fswrite::sync_dir(&dir)?;
        drop(file);
        let file = crate::core::fswrite::open_no_follow(
            OpenOptions::new().read(true).append(true),
            &self.path,
        )?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(std::io::Error::other(
                    "the new file is locked by another process",
                ));
            }
            Err(TryLockError::Error(e)) => return Err(e),
        }
        self.file = file;
        Ok(displaced)
    }

    /// Appends one event as one line and returns once it is on disk (written, flushed and
    /// `fsync`ed). On failure the file is cut back to its length before the attempt (best
    /// effort), so the caller can keep the event pending and retry without a half line.
    pub fn append(&mut self, event: &Event) -> std::io::Result<()> {
        let mut line = event.to_line();
        line.push('\n');
        self.append_bytes(line.as_bytes(), |f, bytes| {
            f.write_all(bytes)?;
            f.flush()?;
            f.sync_data()
        })
    }

    /// The append path with its write step as a seam, so tests can fail it half way.
    fn append_bytes(
        &mut self,
        bytes: &[u8],
        write: impl FnOnce(&mut File, &[u8]) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let before = self.file.metadata()?.len();
        match write(&mut self.file, bytes) {
            Ok(()) => Ok(()),
            Err(e) => {
                // Part of the line may have reached the file, or be cached but unsynced:
                // cut back to the last complete line either way.
                let _ = self.file.set_len(before);
                let _ = self.file.sync_data();
                Err(e)
            }
        }
    }
}

impl Drop for AuditFile {
    fn drop(&mut self) {
        // Closing the handle releases the lock too (also on kill -9); unlocking first only
        // frees it without waiting for the close.
        let _ = self.file.unlock();
    }
}

/// Replays an audit file without locking or changing it (for summaries and exports while
/// an annotator works on it). A torn last line is ignored with a warning, not removed.
pub fn read_audit(path: &Path) -> Result<Replay, AuditError> {
    let bytes = fsread::read(path, fsread::AUDIT).map_err(|source| AuditError::Io {
        what: "read",
        path: path.to_path_buf(),
        source,
    })?;
    if bytes.trim_ascii().is_empty() {
        return Err(AuditError::BadHeader {
            path: path.to_path_buf(),
            field: None,
            message: "the file is empty (no header line)".into(),
        });
    }
    Ok(replay_bytes(path, &bytes, false)?.0)
}

/// The header line of the audit file at `path` (its first 64 KiB read), if it has one that
/// reads; `None` for anything else. A quick look, not a replay: `data` events later in the
/// file are not applied to its fingerprint.
pub fn read_header(path: &Path) -> Option<AuditHeader> {
    let mut head = Vec::new();
    fsread::open(path, fsread::AUDIT)
        .ok()?
        .into_reader()
        .take(64 * 1024)
        .read_to_end(&mut head)
        .ok()?;
    let line = head.split(|&b| b == b'\n').next()?;
    super::parse_header(crate::core::load::json::strip_bom(line)).ok()
}

#[cfg(test)]
mod tests {
    use super::super::{AuditRecord, Status, UnitKey};
    use super::*;

    fn header(annotator: &str) -> AuditHeader {
        AuditHeader::for_tests(annotator)
    }

    fn key(item: &str) -> UnitKey {
        UnitKey::new("llava", "videomme", item)
    }

    fn record(item: &str, status: Status, pathways: &[&str], at: &str) -> AuditRecord {
        AuditRecord {
            key: key(item),
            from: "16f".into(),
            to: "32f".into(),
            status,
            pathways: pathways.iter().map(|s| s.to_string()).collect(),
            primary: pathways.first().map(|s| s.to_string()),
            evidence_frames: vec![10, 20],
            note: format!("note on {item}"),
            at: at.into(),
            harm: None,
        }
    }

    fn visit(item: &str) -> Event {
        Event::Visit {
            key: key(item),
            at: "2026-11-29T12:00:01Z".into(),
        }
    }

    #[test]
    fn audit_create_append_replay_round_trip() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("audits/sub/alice.audit.jsonl");
        let (mut f, r) = AuditFile::open(&path, &header("alice")).expect("open");
        assert_eq!(f.path(), path);
        assert_eq!(r.header, header("alice"));
        assert!(r.records.is_empty() && r.events == 0 && r.warnings.is_empty());
        let a = record("q1", Status::Done, &["evidence_dropped", "prior"], "t1");
        let b = record("q2", Status::Flagged, &[], "t2");
        f.append(&Event::Set(a.clone())).expect("append");
        f.append(&Event::Set(b.clone())).expect("append");
        drop(f);

        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(text.lines().count(), 3);
        assert!(text.starts_with(&header("alice").to_line()));
        assert!(text.ends_with('\n'));

        // An existing file keeps its own header.
        let (_f, r) = AuditFile::open(&path, &header("bob")).expect("reopen");
        assert_eq!(r.header.annotator, "alice");
        assert_eq!(r.events, 2);
        assert_eq!(r.records.len(), 2);
        assert_eq!(r.records[&key("q1")], a);
        assert_eq!(r.records[&key("q2")], b);
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        // The read-only replay sees the same while the file is open and locked.
        let ro = read_audit(&path).expect("read_audit");
        assert_eq!(ro.records, r.records);
    }

    #[test]
    fn audit_resume_at_last_visit() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.audit.jsonl");
        let (mut f, r) = AuditFile::open(&path, &header("alice")).expect("open");
        assert_eq!(r.last_visit, None);
        f.append(&visit("q1")).expect("append");
        f.append(&Event::Set(record("q1", Status::Done, &["x"], "t")))
            .expect("append");
        f.append(&visit("q7")).expect("append");
        drop(f);
        let (_f, r) = AuditFile::open(&path, &header("alice")).expect("reopen");
        assert_eq!(r.last_visit, Some(key("q7")));
        assert_eq!(r.events, 3);
        // A visit alone creates no record.
        assert_eq!(r.records.keys().collect::<Vec<_>>(), [&key("q1")]);
    }

    #[test]
    fn audit_undo_redo_replay() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.audit.jsonl");
        let (mut f, _) = AuditFile::open(&path, &header("alice")).expect("open");
        let first = record("q1", Status::Done, &["a"], "t1");
        let second = record("q1", Status::Done, &["a", "b"], "t2");
        let blank = AuditRecord::blank(key("q2"), "8f", "16f", "t5");
        f.append(&Event::Set(first.clone())).expect("append");
        f.append(&Event::Set(second.clone())).expect("append");
        let mut back = first.clone();
        back.at = "t3".into();
        f.append(&Event::Undo(back.clone())).expect("append");
        f.append(&Event::Set(record("q2", Status::Skipped, &[], "t4")))
            .expect("append");
        // Undo of q2's only change: back to nothing, so the record is absent.
        f.append(&Event::Undo(blank.clone())).expect("append");
        drop(f);
        let r = read_audit(&path).expect("read");
        assert_eq!(r.records.len(), 1);
        assert_eq!(r.records[&key("q1")], back);
        assert!(!r.records.contains_key(&key("q2")));

        let (mut f, _) = AuditFile::open(&path, &header("alice")).expect("reopen");
        let mut again = second.clone();
        again.at = "t6".into();
        f.append(&Event::Redo(again.clone())).expect("append");
        let mut q2 = record("q2", Status::Skipped, &[], "t7");
        f.append(&Event::Redo(q2.clone())).expect("append");
        drop(f);
        let r = read_audit(&path).expect("read");
        assert_eq!(r.records[&key("q1")], again);
        assert_eq!(r.records[&key("q2")], q2);
        assert_eq!(r.events, 7);

        // Replay::apply follows the same rule as the file.
        let mut live = r.clone();
        q2.status = Status::Todo;
        q2.evidence_frames.clear();
        q2.note.clear();
        live.apply(&Event::Set(q2));
        assert!(!live.records.contains_key(&key("q2")));
    }

    #[test]
    fn audit_torn_last_line_is_ignored_and_truncated() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.audit.jsonl");
        let (mut f, _) = AuditFile::open(&path, &header("alice")).expect("open");
        let a = record("q1", Status::Done, &["a"], "t1");
        f.append(&Event::Set(a.clone())).expect("append");
        drop(f);
        let good_len = std::fs::metadata(&path).expect("meta").len();
        let half = Event::Set(record("q2", Status::Done, &["b"], "t2")).to_line();
        let half = &half[..half.len() / 2];
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .and_then(|mut w| w.write_all(half.as_bytes()))
            .expect("tear");

        // Read-only: warned, not changed.
        let r = read_audit(&path).expect("read");
        assert_eq!(r.records.len(), 1);
        assert_eq!(r.warnings.len(), 1);
        assert!(
            r.warnings[0].contains("a.audit.jsonl:3: warning: the last line has no newline"),
            "{:?}",
            r.warnings
        );
        assert!(std::fs::metadata(&path).expect("meta").len() > good_len);

        let (mut f, r) = AuditFile::open(&path, &header("alice")).expect("open");
        assert_eq!(r.records.len(), 1);
        assert_eq!(r.records[&key("q1")], a);
        assert!(
            r.warnings.len() == 1
                && r.warnings[0].contains(":3: ")
                && r.warnings[0].contains("removed"),
            "{:?}",
            r.warnings
        );
        assert_eq!(std::fs::metadata(&path).expect("meta").len(), good_len);
        let b = record("q2", Status::Flagged, &["b"], "t3");
        f.append(&Event::Set(b.clone())).expect("append");
        drop(f);
        let r = read_audit(&path).expect("read");
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        assert_eq!(r.records[&key("q2")], b);
        assert_eq!(r.events, 2);
    }

    #[test]
    fn audit_garbage_last_line_with_newline_is_torn() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.audit.jsonl");
        let (mut f, _) = AuditFile::open(&path, &header("alice")).expect("open");
        f.append(&Event::Set(record("q1", Status::Done, &["a"], "t1")))
            .expect("append");
        drop(f);
        let good_len = std::fs::metadata(&path).expect("meta").len();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .and_then(|mut w| w.write_all(b"\0\0\0\0\0\0\n"))
            .expect("garbage");
        let (_f, r) = AuditFile::open(&path, &header("alice")).expect("open");
        assert_eq!(r.records.len(), 1);
        assert!(r.warnings[0].contains(":3: warning: the last line is not well-formed JSON"));
        assert_eq!(std::fs::metadata(&path).expect("meta").len(), good_len);
    }

    #[test]
    fn audit_bad_middle_line_is_skipped_with_warning() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.audit.jsonl");
        let (mut f, _) = AuditFile::open(&path, &header("alice")).expect("open");
        f.append(&Event::Set(record("q1", Status::Done, &["a"], "t1")))
            .expect("append");
        drop(f);
        let mut text = std::fs::read_to_string(&path).expect("read");
        text.push_str("{\"at\": \"t\", \"op\": \"set\", \"model\n");
        text.push_str("{\"at\":\"t\",\"op\":\"set\",\"model\":\"llava\",\"benchmark\":\"videomme\",\"item_id\":\"q9\",\"from\":\"a\",\"to\":\"b\",\"status\":\"done\",\"pathways\":\"x\"}\n");
        text.push('\n');
        text.push_str(&Event::Set(record("q2", Status::Done, &["b"], "t2")).to_line());
        text.push('\n');
        std::fs::write(&path, &text).expect("write");
        let len = text.len() as u64;

        let (_f, r) = AuditFile::open(&path, &header("alice")).expect("open");
        assert_eq!(
            r.records.keys().collect::<Vec<_>>(),
            [&key("q1"), &key("q2")]
        );
        assert_eq!(r.events, 2);
        assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
        assert!(r.warnings[0].contains("a.audit.jsonl:3: warning: malformed JSON"));
        assert!(r.warnings[0].ends_with("line skipped"));
        assert!(
            r.warnings[1].contains(
                ":4: warning: field `pathways`: expected an array of strings, found a string"
            ),
            "{:?}",
            r.warnings
        );
        // Lines in the middle are kept as they are.
        assert_eq!(std::fs::metadata(&path).expect("meta").len(), len);
    }

    #[test]
    fn audit_bad_header_is_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.audit.jsonl");
        let line = header("alice")
            .to_line()
            .replace("\"annotator\":\"alice\",", "");
        std::fs::write(&path, format!("{line}\n")).expect("write");
        let err = AuditFile::open(&path, &header("alice")).expect_err("bad header");
        assert!(matches!(&err, AuditError::BadHeader { field: Some(f), .. } if f == "annotator"));
        let msg = err.to_string();
        assert!(
            msg.contains("a.audit.jsonl:1: error: bad audit header: field `annotator`: required field is missing"),
            "{msg}"
        );
        // A file with no newline that is not a header is not overwritten.
        std::fs::write(&path, "some notes").expect("write");
        assert!(matches!(
            AuditFile::open(&path, &header("alice")),
            Err(AuditError::BadHeader { .. })
        ));
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "some notes");
    }

    #[test]
    fn audit_empty_file_gets_the_header() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.audit.jsonl");
        std::fs::write(&path, "").expect("write");
        let (_f, r) = AuditFile::open(&path, &header("alice")).expect("open");
        assert_eq!(r.header, header("alice"));
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            format!("{}\n", header("alice").to_line())
        );
    }

    #[test]
    fn audit_second_open_is_locked_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.audit.jsonl");
        let (f, _) = AuditFile::open(&path, &header("alice")).expect("open");
        let err = AuditFile::open(&path, &header("alice")).expect_err("locked");
        assert!(matches!(err, AuditError::Locked { .. }), "{err:?}");
        let msg = err.to_string();
        assert!(
            msg.contains("a.audit.jsonl is open in another frameaudit")
                && msg.contains("close the other one first"),
            "{msg}"
        );
        drop(f);
        AuditFile::open(&path, &header("alice")).expect("open after drop");
    }

    #[test]
    fn audit_failed_append_leaves_the_file_as_it_was() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.audit.jsonl");
        let (mut f, _) = AuditFile::open(&path, &header("alice")).expect("open");
        f.append(&Event::Set(record("q1", Status::Done, &["a"], "t1")))
            .expect("append");
        let before = std::fs::read(&path).expect("read");
        let mut line = Event::Set(record("q2", Status::Done, &["b"], "t2")).to_line();
        line.push('\n');
        // A disk that fills half way through the line.
        let err = f
            .append_bytes(line.as_bytes(), |file, bytes| {
                file.write_all(&bytes[..bytes.len() / 2])?;
                file.sync_data()?;
                Err(std::io::Error::from_raw_os_error(28))
            })
            .expect_err("fails");
        assert_eq!(err.raw_os_error(), Some(28));
        assert_eq!(std::fs::read(&path).expect("read"), before);
        // The pending event goes in cleanly on retry.
        f.append(&Event::Set(record("q2", Status::Done, &["b"], "t2")))
            .expect("retry");
        drop(f);
        let r = read_audit(&path).expect("read");
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        assert_eq!(r.records.len(), 2);
    }
}
