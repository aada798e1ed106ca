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
    /// The folder below which the file's folders are made again, when they are deleted
    /// while it is open, without following a link: the dataset, for an audit inside one.
    root: PathBuf,
    guard: File,
    /// The file's length and modification time after frameaudit last wrote it: another
    /// program's write to it (a copy over it, a truncation) shows as a change.
    written: Option<(u64, std::time::SystemTime)>,
}

/// What the path of an open audit file names now ([`AuditFile::at_path`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtPath {
    /// The file, as frameaudit last wrote it.
    Same,
    /// Nothing: the file (or its folder) was deleted.
    Gone,
    /// Another file (renamed or copied there, a link, a pipe).
    Replaced,
    /// The file, but written by someone else since (copied over, emptied, edited).
    Changed,
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
        AuditFile::open_or_blank_below(&folder_of(path), path, header_if_new)
    }

    /// [`AuditFile::open_or_blank`] for a file inside `root` (the dataset): the folders
    /// between them are made, now and whenever they are deleted while the file is open,
    /// without following a link, so a link planted there is refused rather than written
    /// through.
    pub fn open_or_blank_below(
        root: &Path,
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
        let dir = folder_of(path);
        crate::core::fswrite::create_dir_below(root, &dir)
            .map_err(io("create the directory", &dir))?;
        let guard = open_guard(path)?;
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
            root: root.to_path_buf(),
            guard,
            written: None,
        };

        // Only NULs and blanks is what a crash while writing the header can leave on some
        // file systems (size updated, data not): as good as empty. Anything else without a
        // newline may be someone's file, so it is never overwritten.
        if bytes.iter().all(|&b| b == 0 || b.is_ascii_whitespace()) {
            let Some(header) = header_if_new else {
                opened.note_written().map_err(io("look at", path))?;
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
        } else if bytes.last().is_some_and(|&b| b != b'\n') {
            // A whole last line without its newline (left off by an editor or a script) is
            // kept: its newline is given back, so the next event starts a line of its own.
            opened
                .file
                .write_all(b"\n")
                .and_then(|()| opened.file.sync_data())
                .map_err(io("write", path))?;
        }
        opened.note_written().map_err(io("look at", path))?;
        Ok((opened, Some(replay)))
    }

    /// Notes the file as frameaudit leaves it, to tell another program's writes from its
    /// own ([`AtPath::Changed`]).
    fn note_written(&mut self) -> std::io::Result<()> {
        let meta = self.file.metadata()?;
        self.written = Some((meta.len(), meta.modified()?));
        Ok(())
    }

    /// Keeps the lock file beside the audit file: made again and locked when it was
    /// deleted (with its folder) while the file was open, so that a second frameaudit
    /// is still kept out. Fails when another frameaudit made it and holds it meanwhile.
    pub fn keep_guard(&mut self) -> std::io::Result<()> {
        if same_file(&lock_path(&self.path), &self.guard) {
            return Ok(());
        }
        crate::core::fswrite::create_dir_below(&self.root, &folder_of(&self.path))?;
        self.guard = open_guard(&self.path).map_err(|e| match e {
            AuditError::Locked { .. } => std::io::Error::other(format!(
                "another frameaudit opened {} after its lock file was deleted: only one may write it, so close the other one",
                crate::core::text::sanitize(&self.path.display().to_string())
            )),
            other => std::io::Error::other(other.to_string()),
        })?;
        Ok(())
    }

    /// Writes `header` as the whole content of a file opened empty
    /// ([`AuditFile::open_or_blank`]), durably (the file and its directory synced).
    pub fn write_header(&mut self, header: &AuditHeader) -> std::io::Result<()> {
        let mut line = header.to_line();
        line.push('\n');
        self.file.set_len(0)?;
        self.file.write_all(line.as_bytes())?;
        self.file.sync_all()?;
        crate::core::fswrite::sync_dir(&folder_of(&self.path))?;
        self.note_written()
    }

    /// The path the file was opened at.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the path still names the open file as frameaudit last wrote it: false once
    /// it was deleted, renamed, replaced by another file, or written by another program
    /// (writes would then go where no one reads them, or after someone else's lines).
    pub fn at_path(&self) -> bool {
        self.what_is_at_path() == AtPath::Same
    }

    /// What the path names now.
    pub fn what_is_at_path(&self) -> AtPath {
        match std::fs::symlink_metadata(&self.path) {
            Err(_) => AtPath::Gone,
            Ok(_) if !same_file(&self.path, &self.file) => AtPath::Replaced,
            Ok(at) => {
                let now = at.modified().ok().map(|t| (at.len(), t));
                if now.is_some() && now == self.written {
                    AtPath::Same
                } else {
                    AtPath::Changed
                }
            }
        }
    }

    /// Writes `state` (its header, each record's state, the last visit) as a new file at
    /// the path, durably, and goes on appending to it. A file found at the path is not
    /// lost: it is moved aside first, to `NAME.displaced-N`, whose path is returned.
    /// The folders are made again below the dataset without following a link, and the
    /// lock file with them ([`AuditFile::keep_guard`]). A file another frameaudit holds
    /// open is left where it is: this fails instead.
    pub fn rewrite(&mut self, state: &super::Replay) -> std::io::Result<Option<PathBuf>> {
        let dir = folder_of(&self.path);
        self.keep_guard()?;
        let found = std::fs::symlink_metadata(&self.path);
        if found.as_ref().is_ok_and(|m| m.is_file()) && !same_file(&self.path, &self.file) {
            let theirs =
                crate::core::fswrite::open_no_follow(OpenOptions::new().read(true), &self.path)?;
            if let Err(TryLockError::WouldBlock) = theirs.try_lock() {
                return Err(std::io::Error::other(format!(
                    "{} is now open in another frameaudit: only one may write it, so close the other one",
                    crate::core::text::sanitize(&self.path.display().to_string())
                )));
            }
        }
        let tmp = state_file(&self.path, state)?;
        let mut displaced = None;
        if found.is_ok() {
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
        self.note_written()?;
        Ok(displaced)
    }

    /// Writes `state` durably to a file beside the audit file, `NAME.rescued-N` (the first
    /// N free), or over `again`, the one an earlier call returned; returns its path. It is
    /// where the records go when the path is held by another frameaudit and they cannot
    /// go into the file: on disk, so neither quitting nor a crash loses them. A link at
    /// `again` is replaced, never followed.
    pub fn write_aside(&self, state: &Replay, again: Option<&Path>) -> std::io::Result<PathBuf> {
        let dir = folder_of(&self.path);
        crate::core::fswrite::create_dir_below(&self.root, &dir)?;
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut tmp = state_file(&self.path, state)?;
        let aside = match again {
            Some(p) => {
                tmp.persist(p).map_err(|e| e.error)?;
                p.to_path_buf()
            }
            None => {
                let mut n = 1;
                loop {
                    let p = dir.join(format!("{name}.rescued-{n}"));
                    match tmp.persist_noclobber(&p) {
                        Ok(_) => break p,
                        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
                            tmp = e.file;
                            n += 1;
                        }
                        Err(e) => return Err(e.error),
                    }
                }
            }
        };
        crate::core::fswrite::sync_dir(&dir)?;
        Ok(aside)
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
        let found = self.file.metadata()?;
        let before = found.len();
        let as_left = self
            .written
            .is_none_or(|w| found.modified().is_ok_and(|t| (before, t) == w));
        match write(&mut self.file, bytes) {
            Ok(()) => {
                // Taken for our own only when the file is what this line made of it as we
                // left it. Emptied or cut by another program meanwhile (the line then lands
                // at its new end), it is left for `what_is_at_path` to see as changed, and
                // the saver writes the whole state again, header first.
                let meta = self.file.metadata()?;
                if as_left && meta.len() == before + bytes.len() as u64 {
                    self.written = Some((meta.len(), meta.modified()?));
                }
                Ok(())
            }
            Err(e) => {
                // Part of the line may have reached the file, or be cached but unsynced:
                // cut back to the last complete line either way.
                let _ = self.file.set_len(before);
                let _ = self.file.sync_data();
                // Our own write and cut: not another program's.
                let _ = self.note_written();
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

/// `state` (its header, each record's state, the last visit) durably in a new temporary
/// file beside `path`, to be renamed into place.
fn state_file(path: &Path, state: &Replay) -> std::io::Result<tempfile::NamedTempFile> {
    let mut tmp = crate::core::fswrite::temp_for(path)?;
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
    Ok(tmp)
}

/// The folder of the file at `path` (`.` for a bare name).
pub(crate) fn folder_of(path: &Path) -> PathBuf {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

/// Opens and locks the lock file of the audit file at `path`, never through a symbolic
/// link: one planted in a shared dataset would have an empty file made anywhere.
fn open_guard(path: &Path) -> Result<File, AuditError> {
    let guard_path = lock_path(path);
    let guard = crate::core::fswrite::open_no_follow(
        OpenOptions::new().write(true).create(true).truncate(false),
        &guard_path,
    )
    .map_err(|source| AuditError::Io {
        what: "open the lock file",
        path: guard_path,
        source,
    })?;
    try_lock(&guard, path)?;
    Ok(guard)
}

/// Whether `path` (not followed if a link) names the open `file`.
fn same_file(path: &Path, file: &File) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::symlink_metadata(path), file.metadata()) {
            (Ok(at), Ok(open)) => at.dev() == open.dev() && at.ino() == open.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        path.is_file()
    }
}

/// Replays an audit file without locking or changing it (for summaries and exports while
/// an annotator works on it). A torn last line is ignored with a warning, not removed; an
/// empty file is [`AuditError::Empty`].
pub fn read_audit(path: &Path) -> Result<Replay, AuditError> {
    let bytes = fsread::read(path, fsread::AUDIT).map_err(|source| AuditError::Io {
        what: "read",
        path: path.to_path_buf(),
        source,
    })?;
    // As the screens read it: blanks and NULs only (a crash while writing the header).
    if bytes.iter().all(|&b| b == 0 || b.is_ascii_whitespace()) {
        return Err(AuditError::Empty {
            path: path.to_path_buf(),
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

    /// Alice's audit file in `dir` holding one record, q1 done; its path and the record.
    fn alice_with_q1(dir: &Path) -> (PathBuf, AuditRecord) {
        let path = dir.join("a.audit.jsonl");
        let (mut f, _) = AuditFile::open(&path, &header("alice")).expect("open");
        let a = record("q1", Status::Done, &["a"], "t1");
        f.append(&Event::Set(a.clone())).expect("append");
        (path, a)
    }

    #[test]
    fn audit_torn_last_line_is_ignored_and_truncated() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (path, a) = alice_with_q1(dir.path());
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
            r.warnings[0].contains(
                "a.audit.jsonl:3: warning: the last line is not well-formed JSON and has no newline"
            ),
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
    fn a_whole_last_line_without_its_newline_is_kept_and_given_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (path, a) = alice_with_q1(dir.path());
        // The last event as an editor leaves it: whole, its newline left off.
        let text = std::fs::read_to_string(&path).expect("read");
        std::fs::write(&path, text.trim_end()).expect("write");

        let r = read_audit(&path).expect("read");
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        assert_eq!(r.records[&key("q1")], a);

        let (mut f, r) = AuditFile::open(&path, &header("alice")).expect("open");
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        assert_eq!(r.records[&key("q1")], a);
        assert_eq!(std::fs::read_to_string(&path).expect("read"), text);
        let b = record("q2", Status::Flagged, &["b"], "t2");
        f.append(&Event::Set(b.clone())).expect("append");
        drop(f);
        let r = read_audit(&path).expect("read");
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        assert_eq!(
            (r.records[&key("q1")].clone(), r.records[&key("q2")].clone()),
            (a, b)
        );
        assert_eq!(r.events, 2);
    }

    #[test]
    fn audit_garbage_last_line_with_newline_is_torn() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (path, _) = alice_with_q1(dir.path());
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
    fn doubtful_records_are_read_and_said() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.audit.jsonl");
        let (f, _) = AuditFile::open(&path, &header("alice")).expect("open");
        drop(f);
        let mut text = std::fs::read_to_string(&path).expect("read");
        text.push_str("{\"at\":\"2026-11-29T12:00:00Z\",\"op\":\"set\",\"model\":\"llava\",\"benchmark\":\"videomme\",\"item_id\":\"q1\",\"from\":\"8f\",\"to\":\"16f\",\"status\":\"done\",\"pathways\":[\"a\"],\"primary\":\"b\"}\n");
        text.push_str("{\"at\":\"2026-11-29T12:00:01Z\",\"op\":\"set\",\"model\":\"llava\",\"benchmark\":\"videomme\",\"item_id\":\"q2\",\"from\":\"8f\",\"to\":\"\",\"status\":\"done\",\"pathways\":[\"a\"],\"primary\":\"a\"}\n");
        std::fs::write(&path, &text).expect("write");
        let (_f, r) = AuditFile::open(&path, &header("alice")).expect("open");
        assert_eq!(
            r.records.keys().collect::<Vec<_>>(),
            [&key("q1"), &key("q2")],
            "both lines are read"
        );
        assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
        assert!(
            r.warnings[0].contains(
                "a.audit.jsonl:2: warning: field `primary`: \"b\" is not among the record's pathways [\"a\"]; line read"
            ),
            "{:?}",
            r.warnings
        );
        assert!(
            r.warnings[1].contains(
                "a.audit.jsonl:3: warning: field `to`: empty, so the record is on no transition"
            ),
            "{:?}",
            r.warnings
        );
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
            msg.contains(
                "a.audit.jsonl:1: bad audit header: field `annotator`: required field is missing"
            ),
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

    /// Two annotators' files joined end to end: bob's records would be read as alice's (the
    /// second header used to be skipped as a bad event). Another annotator's header is an
    /// error naming its line; a copy of the same header, a warning.
    #[test]
    fn a_second_header_of_another_annotator_is_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.audit.jsonl");
        let set = |item: &str| {
            format!(
                "{{\"at\":\"2026-11-29T12:00:00Z\",\"op\":\"set\",\"model\":\"llava\",\"benchmark\":\"videomme\",\"item_id\":\"{item}\",\"from\":\"8f\",\"to\":\"16f\",\"status\":\"done\",\"pathways\":[\"a\"],\"primary\":\"a\"}}\n"
            )
        };
        let joined = |second: &AuditHeader| {
            format!(
                "{}\n{}{}\n{}",
                header("alice").to_line(),
                set("q1"),
                second.to_line(),
                set("q2")
            )
        };
        std::fs::write(&path, joined(&header("bob"))).expect("write");
        let err = read_audit(&path).expect_err("joined files");
        assert!(
            matches!(&err, AuditError::SecondHeader { line: 3, .. }),
            "{err}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains("a.audit.jsonl:3: a second audit header (annotator \"bob\")")
                && msg.contains("audit merge"),
            "{msg}"
        );
        // The screens refuse it too, and leave it as it was.
        let before = std::fs::read(&path).expect("read");
        assert!(matches!(
            AuditFile::open(&path, &header("alice")),
            Err(AuditError::SecondHeader { .. })
        ));
        assert_eq!(std::fs::read(&path).expect("read"), before);
        // The same header twice: read, with a warning.
        std::fs::write(&path, joined(&header("alice"))).expect("write");
        let r = read_audit(&path).expect("one annotator");
        assert_eq!(r.records.len(), 2);
        assert!(
            r.warnings.len() == 1
                && r.warnings[0].contains(":3: warning: a second audit header, the same"),
            "{:?}",
            r.warnings
        );
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
    fn a_file_another_frameaudit_holds_is_never_pushed_aside() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.audit.jsonl");
        let (mut first, replay) = AuditFile::open(&path, &header("alice")).expect("open");
        first
            .append(&Event::Set(record("q1", Status::Done, &["a"], "t1")))
            .expect("append");
        // The file and its lock file deleted, and a second frameaudit opening the path
        // before the first noticed.
        std::fs::remove_file(&path).expect("rm");
        std::fs::remove_file(lock_path(&path)).expect("rm lock");
        let (mut second, _) = AuditFile::open(&path, &header("alice")).expect("second");
        second
            .append(&Event::Set(record("q2", Status::Done, &["b"], "t2")))
            .expect("append");
        let theirs = std::fs::read(&path).expect("read");
        assert!(!first.at_path());
        let err = first.rewrite(&replay).expect_err("refused");
        assert!(err.to_string().contains("another frameaudit"), "{err}");
        assert_eq!(std::fs::read(&path).expect("read"), theirs);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("ls")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names.len(), 2, "nothing moved aside: {names:?}");
        assert!(second.at_path());
    }

    #[test]
    fn a_folder_that_becomes_a_link_is_not_written_through() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("ds");
        let path = root.join("audits/a.audit.jsonl");
        let (mut f, replay) =
            AuditFile::open_or_blank_below(&root, &path, Some(&header("alice"))).expect("open");
        let replay = replay.expect("a new file's replay");
        let outside = dir.path().join("outside");
        std::fs::create_dir(&outside).expect("mkdir");
        std::fs::rename(root.join("audits"), dir.path().join("moved")).expect("mv");
        std::os::unix::fs::symlink(&outside, root.join("audits")).expect("ln -s");
        assert!(f.keep_guard().is_err());
        let err = f.rewrite(&replay).expect_err("refused");
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert_eq!(std::fs::read_dir(&outside).expect("ls").count(), 0);
        // The link gone, the folder is made again and the file written there.
        std::fs::remove_file(root.join("audits")).expect("rm link");
        f.rewrite(&replay).expect("written again");
        assert!(f.at_path());
        assert!(lock_path(&path).exists());
        assert!(matches!(
            AuditFile::open(&path, &header("alice")),
            Err(AuditError::Locked { .. })
        ));
    }

    #[test]
    fn a_write_by_another_program_is_told_from_ours() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.audit.jsonl");
        let (mut f, _) = AuditFile::open(&path, &header("alice")).expect("open");
        assert_eq!(f.what_is_at_path(), AtPath::Same);
        f.append(&Event::Set(record("q1", Status::Done, &["a"], "t1")))
            .expect("append");
        assert_eq!(f.what_is_at_path(), AtPath::Same, "our own append");
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|w| w.set_len(0))
            .expect("truncate");
        assert_eq!(f.what_is_at_path(), AtPath::Changed);
        std::fs::remove_file(&path).expect("rm");
        assert_eq!(f.what_is_at_path(), AtPath::Gone);
        std::fs::write(&path, "x\n").expect("another file");
        assert_eq!(f.what_is_at_path(), AtPath::Replaced);
    }

    /// A file emptied by another program just before or while a line is appended (the
    /// line then lands at the start, with no header before it) is seen as changed, not
    /// taken for the file as frameaudit wrote it: one CI run had lost its header so.
    #[test]
    fn a_file_emptied_under_an_append_is_seen_as_changed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.audit.jsonl");
        let (mut f, _) = AuditFile::open(&path, &header("alice")).expect("open");
        let mut line = Event::Set(record("q1", Status::Done, &["a"], "t1")).to_line();
        line.push('\n');
        f.append_bytes(line.as_bytes(), |file, bytes| {
            file.set_len(0)?;
            file.write_all(bytes)?;
            file.sync_data()
        })
        .expect("append");
        assert_eq!(
            f.what_is_at_path(),
            AtPath::Changed,
            "emptied while appending"
        );
        // Emptied after the last look and before the append.
        let (mut f, _) =
            AuditFile::open(&dir.path().join("b.audit.jsonl"), &header("bob")).expect("open");
        std::fs::OpenOptions::new()
            .write(true)
            .open(dir.path().join("b.audit.jsonl"))
            .and_then(|w| w.set_len(0))
            .expect("truncate");
        f.append(&Event::Set(record("q1", Status::Done, &["a"], "t1")))
            .expect("append");
        assert_eq!(f.what_is_at_path(), AtPath::Changed, "emptied before");
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
