//! An annotator's session over an audit file: the current records, undo and redo, and a
//! saver thread that appends each event durably (write, flush, fsync) in order. A change
//! waits in the session's outbox until [`Session::save`] hands it to the saver: the audit
//! screens' reducer only changes state, and the runner saves as the effect it returns
//! (dropping a session, or waiting for it to be saved, hands over what waits too). A failed
//! write (disk full, read-only file) keeps the event queued and is retried every second;
//! the screen says "saved" only for what the file really holds. The caller gives the time of
//! each change, so what is written can be checked against a fixed clock.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crate::core::audit::{
    AtPath, AuditError, AuditFile, AuditHeader, AuditRecord, Event, Replay, UnitKey,
};

/// What the saver has done so far.
#[derive(Debug, Default)]
struct SaveState {
    /// Events handed to the saver.
    queued: u64,
    /// Events durably in the file.
    written: u64,
    last_error: Option<String>,
    /// The path no longer names the file written to, and it is not written again yet:
    /// nothing counts as saved until it is. The records the file is to be written again
    /// with (at least one): none of them is in the file the path names.
    stale: u64,
    /// What the saver did that the annotator should know (the file written again).
    notice: Option<String>,
    /// A new file's header is not written yet (its fingerprint is being computed).
    header_due: bool,
}

/// Whether the session's changes may go to the file yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hold {
    /// They go as they are made.
    Open,
    /// The file existed: they wait until the fingerprint of the cells is known and matches
    /// the file's ([`Session::settle`]).
    Comparing,
    /// The file was made on other data: they wait until the annotator says to go on with it
    /// on this data ([`Session::go_on_with_this_data`]), and are not written otherwise.
    OtherData {
        /// The fingerprint the file was made on.
        file: String,
        /// The fingerprint of the cells open now.
        data: String,
    },
}

/// What [`Session::settle`] found when the fingerprint became known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    /// The file was made on these cells: its changes are written from now on.
    Same,
    /// The file was made on other cells: its changes are held.
    OtherData,
}

/// A change, for undo and redo: the record's state before and after.
#[derive(Debug, Clone)]
struct Change {
    before: AuditRecord,
    after: AuditRecord,
}

/// The records of an audit, their history in this session, and the saving of changes.
pub struct Session {
    annotator: String,
    records: BTreeMap<UnitKey, AuditRecord>,
    last_visit: Option<UnitKey>,
    undo: Vec<Change>,
    redo: Vec<Change>,
    tx: Option<Sender<Event>>,
    /// Closed when the saver has stopped and let the file (and its locks) go.
    saver_done: Option<Receiver<()>>,
    /// Changes not handed to the saver yet ([`Session::save`]).
    outbox: Vec<Event>,
    state: Arc<Mutex<SaveState>>,
    /// Warnings of the replay (torn lines...), for the screen.
    pub warnings: Vec<String>,
    /// The header read from the file (fingerprint, taxonomy...); `None` in memory and for a
    /// new file whose header waits for its fingerprint ([`Session::open_pending`]).
    pub header: Option<AuditHeader>,
    /// The fingerprint a new file's header waits for (`None` when the file had a header).
    header_due: Option<Arc<OnceLock<String>>>,
    /// The fingerprint of the cells open, being computed; an existing file's is compared
    /// with it before anything is written to it.
    data_fingerprint: Option<Arc<OnceLock<String>>>,
    /// Whether changes may be written yet.
    hold: Hold,
    /// The audit file; `None` in memory.
    path: Option<std::path::PathBuf>,
}

impl Session {
    /// A session that keeps changes in memory only (tests, `--audit` disabled).
    pub fn in_memory(annotator: &str) -> Session {
        Session {
            annotator: annotator.to_string(),
            records: BTreeMap::new(),
            last_visit: None,
            undo: Vec::new(),
            redo: Vec::new(),
            tx: None,
            saver_done: None,
            outbox: Vec::new(),
            state: Arc::new(Mutex::new(SaveState::default())),
            warnings: Vec::new(),
            header: None,
            header_due: None,
            data_fingerprint: None,
            hold: Hold::Open,
            path: None,
        }
    }

    /// Opens (or creates) and locks the audit file, replays it, and starts the saver.
    /// `wake` is called after each save attempt, so the screen can redraw.
    pub fn open(
        path: &Path,
        header: &AuditHeader,
        wake: impl Fn() + Send + 'static,
    ) -> Result<Session, AuditError> {
        let known = Arc::new(OnceLock::from(header.fingerprint.clone()));
        Session::open_pending(path, header, known, wake)
    }

    /// [`Session::open`] while the fingerprint of the cells (docs/formats.md, the audit
    /// header) may still be being computed: `header`'s own fingerprint is not used. A new
    /// file is created empty and locked, and the saver writes its header, with the
    /// fingerprint, as soon as that is known and before any event; until then the file is
    /// as good as absent (a crash leaves it empty, and the next start writes its header).
    /// An existing file is read as it is, and nothing is written to it until the fingerprint
    /// is known and matches the file's ([`Session::settle`]): an audit is never appended to
    /// with records of other data unless the annotator says so.
    pub fn open_pending(
        path: &Path,
        header: &AuditHeader,
        fingerprint: Arc<OnceLock<String>>,
        wake: impl Fn() + Send + 'static,
    ) -> Result<Session, AuditError> {
        let folder = crate::core::audit::file::folder_of(path);
        Session::open_pending_below(&folder, path, header, fingerprint, wake)
    }

    /// [`Session::open_pending`] for an audit file inside `root` (the dataset): its folders
    /// are made again without following a link when they are deleted while it is open
    /// ([`AuditFile::open_or_blank_below`]).
    pub fn open_pending_below(
        root: &Path,
        path: &Path,
        header: &AuditHeader,
        fingerprint: Arc<OnceLock<String>>,
        wake: impl Fn() + Send + 'static,
    ) -> Result<Session, AuditError> {
        let known = fingerprint.get().map(|fp| AuditHeader {
            fingerprint: fp.clone(),
            ..header.clone()
        });
        let (file, replay) = AuditFile::open_or_blank_below(root, path, known.as_ref())?;
        let (replay, header_due) = match replay {
            Some(replay) => (replay, None),
            None => (Replay::new(header.clone()), Some(fingerprint.clone())),
        };
        // One annotator's file is never written under another's name.
        if replay.header.annotator != header.annotator {
            return Err(AuditError::BadHeader {
                path: path.to_path_buf(),
                field: Some("annotator".into()),
                message: format!(
                    "the file is the audit of {:?}, not of {:?}: give --annotator {:?} to go on with it, or another --audit file",
                    replay.header.annotator, header.annotator, replay.header.annotator
                ),
            });
        }
        // A review's records and an annotator's own are kept apart: a review never writes
        // into an annotator's audit (it would overwrite their records with the ones it
        // takes), nor the screens into an adjudicated one.
        if header_due.is_none() {
            let (review, adjudicated) = (
                !header.adjudicates.is_empty(),
                !replay.header.adjudicates.is_empty(),
            );
            let message = match (review, adjudicated) {
                (true, false) => Some(format!(
                    "the file is {:?}'s own audit, not an adjudicated one: a review's records go to an audit of their own (by default audits/adjudicated/{}.audit.jsonl); give another --audit file",
                    replay.header.annotator, header.annotator
                )),
                (false, true) => Some(
                    "the file is an adjudicated audit: go on with it with `frameaudit review AUDIT... --audit FILE`, or give another --audit file".to_string(),
                ),
                _ => None,
            };
            if let Some(message) = message {
                return Err(AuditError::BadHeader {
                    path: path.to_path_buf(),
                    field: Some("adjudicates".into()),
                    message,
                });
            }
        }
        // The saver keeps its own copy of what the file holds, to write it again whole
        // when the path stops naming the file.
        let mirror = Replay {
            warnings: Vec::new(),
            ..replay.clone()
        };
        let Replay {
            header: read,
            records,
            last_visit,
            warnings,
            ..
        } = replay;
        let mut s = Session::in_memory(&read.annotator);
        s.path = Some(path.to_path_buf());
        s.records = records;
        s.last_visit = last_visit;
        s.warnings = warnings;
        if header_due.is_none() {
            s.hold = Hold::Comparing;
            s.data_fingerprint = Some(fingerprint.clone());
        }
        s.header = header_due.is_none().then_some(read);
        s.header_due.clone_from(&header_due);
        s.state.lock().unwrap_or_else(|p| p.into_inner()).header_due = header_due.is_some();
        let (tx, rx) = channel();
        let state = s.state.clone();
        let (done_tx, done_rx) = channel::<()>();
        std::thread::Builder::new()
            .name("frameaudit-saver".into())
            .spawn(move || {
                saver(file, mirror, header_due, rx, state, wake);
                // The file is closed by now; dropping the sender says so.
                drop(done_tx);
            })
            .map_err(|source| AuditError::Io {
                what: "start the saver for",
                path: path.to_path_buf(),
                source,
            })?;
        s.tx = Some(tx);
        s.saver_done = Some(done_rx);
        s.settle();
        Ok(s)
    }

    /// Compares an existing file's fingerprint with the cells' once that is known: `None`
    /// while it is not (or when there was nothing to compare), else what was found. Changes
    /// are written from then on when the two match, and held when they do not.
    pub fn settle(&mut self) -> Option<Settled> {
        if self.hold != Hold::Comparing {
            return None;
        }
        let data = self.data_fingerprint.as_ref()?.get()?.clone();
        let file = self.header.as_ref()?.fingerprint.clone();
        if data == file {
            self.hold = Hold::Open;
            Some(Settled::Same)
        } else {
            self.hold = Hold::OtherData { file, data };
            Some(Settled::OtherData)
        }
    }

    /// Whether changes may be written yet, and if not why.
    pub fn hold(&self) -> &Hold {
        &self.hold
    }

    /// Goes on with an audit made on other data, on this data: a `data` event (the cells'
    /// fingerprint) is written before the changes held, which then go to the file. False
    /// when the audit was not held for other data.
    pub fn go_on_with_this_data(&mut self, now: &str) -> bool {
        let Hold::OtherData { data, .. } = &self.hold else {
            return false;
        };
        let data = data.clone();
        if let Some(h) = &mut self.header {
            h.fingerprint.clone_from(&data);
        }
        self.outbox.insert(
            0,
            Event::Data {
                fingerprint: data,
                at: now.to_string(),
            },
        );
        self.hold = Hold::Open;
        true
    }

    /// The audit file written to; `None` in memory.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Whose audit this is.
    pub fn annotator(&self) -> &str {
        &self.annotator
    }

    /// A unit's current record, if it has one.
    pub fn record(&self, key: &UnitKey) -> Option<&AuditRecord> {
        self.records.get(key)
    }

    /// Every unit's current record (blank ones are not kept).
    pub fn records(&self) -> &BTreeMap<UnitKey, AuditRecord> {
        &self.records
    }

    /// The unit opened last, in this session or the one the file resumes.
    pub fn last_visit(&self) -> Option<&UnitKey> {
        self.last_visit.as_ref()
    }

    /// Keeps an event for the saver (in memory there is nothing to write).
    fn send(&mut self, e: Event) {
        if self.tx.is_some() {
            self.outbox.push(e);
        }
    }

    /// Whether changes wait to be handed to the saver.
    pub fn has_unsent(&self) -> bool {
        !self.outbox.is_empty()
    }

    /// Hands the changes made since the last call to the saver, in order; while the file
    /// is held ([`Session::hold`]) they stay in the outbox.
    pub fn save(&mut self) {
        if self.outbox.is_empty() || self.hold != Hold::Open {
            return;
        }
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        for e in self.outbox.drain(..) {
            st.queued += 1;
            let sent = self.tx.as_ref().is_some_and(|tx| tx.send(e).is_ok());
            if !sent {
                st.last_error = Some("the saver stopped".into());
            }
        }
    }

    fn put(&mut self, rec: &AuditRecord) {
        if rec.is_blank() {
            self.records.remove(&rec.key);
        } else {
            self.records.insert(rec.key.clone(), rec.clone());
        }
    }

    fn before(&self, rec: &AuditRecord, now: &str) -> AuditRecord {
        self.records.get(&rec.key).cloned().unwrap_or_else(|| {
            AuditRecord::blank(rec.key.clone(), rec.from.clone(), rec.to.clone(), now)
        })
    }

    /// Records a change made by the annotator at time `now` (RFC 3339).
    pub fn apply(&mut self, mut rec: AuditRecord, now: &str) {
        rec.at = now.to_string();
        let before = self.before(&rec, now);
        // An action that changes nothing (the time aside) is not a change.
        let untimed = |r: &AuditRecord| AuditRecord {
            at: String::new(),
            ..r.clone()
        };
        if untimed(&before) == untimed(&rec) {
            return;
        }
        self.undo.push(Change {
            before,
            after: rec.clone(),
        });
        self.redo.clear();
        self.put(&rec);
        self.send(Event::Set(rec));
    }

    /// Takes the last change back at time `now`; returns the unit's record as it was
    /// (before the undo) and as it is now.
    pub fn undo(&mut self, now: &str) -> Option<(AuditRecord, AuditRecord)> {
        let c = self.undo.pop()?;
        let mut back = c.before.clone();
        back.at = now.to_string();
        self.put(&back);
        self.send(Event::Undo(back.clone()));
        let was = c.after.clone();
        self.redo.push(c);
        Some((was, back))
    }

    /// Re-applies the last change taken back at time `now`; returns the unit's record as it
    /// was (before the redo) and as it is now.
    pub fn redo(&mut self, now: &str) -> Option<(AuditRecord, AuditRecord)> {
        let c = self.redo.pop()?;
        let mut again = c.after.clone();
        again.at = now.to_string();
        self.put(&again);
        self.send(Event::Redo(again.clone()));
        let was = c.before.clone();
        self.undo.push(c);
        Some((was, again))
    }

    /// Notes that the annotator opened a unit at time `now` (where a resumed session starts).
    pub fn visit(&mut self, key: &UnitKey, now: &str) {
        if self.last_visit.as_ref() == Some(key) {
            return;
        }
        self.last_visit = Some(key.clone());
        self.send(Event::Visit {
            key: key.clone(),
            at: now.to_string(),
        });
    }

    /// Events not yet durably in the file.
    pub fn unsaved(&self) -> u64 {
        let st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        // While stale, the records a rewrite would hold already count what is pending.
        let handed = match st.stale {
            0 => st.queued - st.written,
            records => records,
        };
        handed + self.outbox.len() as u64
    }

    /// [`Session::unsaved`] in words: "2 changes", or, while records are shut out of their
    /// file (counted whole, not by change), "3 records".
    pub fn unsaved_said(&self) -> String {
        let stale = self.state.lock().unwrap_or_else(|p| p.into_inner()).stale > 0;
        let n = usize::try_from(self.unsaved()).unwrap_or(usize::MAX);
        crate::core::text::count(n, if stale { "record" } else { "change" })
    }

    /// What the saver did that the annotator should know (the file written again after
    /// it was deleted or replaced).
    pub fn notice(&self) -> Option<String> {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .notice
            .clone()
    }

    /// The last write error, while the saver is retrying.
    pub fn last_error(&self) -> Option<String> {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .last_error
            .clone()
    }

    /// "saved" or "saving…", for the status line.
    pub fn save_state(&self) -> String {
        let n = self.unsaved();
        if self.tx.is_none() {
            "not saved to a file (in memory)".into()
        } else if matches!(self.hold, Hold::OtherData { .. }) {
            format!("{n} held: audit of other data")
        } else if n == 0 {
            "saved ✓".into()
        } else {
            format!("saving {n}…")
        }
    }

    /// Hands over what waits ([`Session::save`]), then waits until every event is written
    /// or `timeout` passes; true when all are.
    pub fn wait_saved(&mut self, timeout: Duration) -> bool {
        // A new file's header waits for the fingerprint, which is always coming (it is
        // being computed): wait for that whatever the timeout, then for the saver. So does
        // an existing file, whose fingerprint is compared with it before it is written to.
        if let Some(fp) = self.header_due.as_ref().or(self.data_fingerprint.as_ref()) {
            fp.wait();
        }
        self.settle();
        self.save();
        let done = |s: &Session| {
            s.unsaved() == 0 && !s.state.lock().unwrap_or_else(|p| p.into_inner()).header_due
        };
        let end = std::time::Instant::now() + timeout;
        while std::time::Instant::now() < end {
            if done(self) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        done(self)
    }
}

impl Drop for Session {
    /// What was not handed to the saver yet is handed over: the saver writes everything it
    /// was given before it stops.
    /// Then it waits a moment for the saver to stop, so the file and its locks are let go
    /// when the session is: the same audit can be opened again at once. A saver still
    /// retrying a failed write (a full disk) is not waited for longer than that.
    fn drop(&mut self) {
        self.save();
        self.tx = None;
        if let Some(done) = self.saver_done.take() {
            let _ = done.recv_timeout(Duration::from_secs(2));
        }
    }
}

/// How often the saver checks, when idle, that the path still names its file.
const CHECK_EVERY: Duration = Duration::from_millis(500);

/// The saver thread: writes a new file's header once its fingerprint is known
/// (`header_due`), then appends events in order; on a failure keeps the event and retries.
/// Whenever the path stops naming the file (deleted, renamed, replaced), it writes the
/// whole state to a new file there before anything counts as saved again.
fn saver(
    mut file: AuditFile,
    mut mirror: Replay,
    mut header_due: Option<Arc<OnceLock<String>>>,
    rx: Receiver<Event>,
    state: Arc<Mutex<SaveState>>,
    wake: impl Fn(),
) {
    let lock = || state.lock().unwrap_or_else(|p| p.into_inner());
    let mut pending: std::collections::VecDeque<Event> = std::collections::VecDeque::new();
    // The units this session's file holds or this session changed (a record cleared is not
    // in `mirror`): another session's record of one is never taken in over it.
    let mut touched: std::collections::BTreeSet<UnitKey> = mirror.records.keys().cloned().collect();
    let mut retry = false;
    // The file the records were last kept aside in, and what it holds.
    let mut aside_of: Option<(PathBuf, Vec<String>)> = None;
    loop {
        let timeout = if header_due.is_some() && !retry {
            Duration::ZERO
        } else if pending.is_empty() {
            CHECK_EVERY
        } else {
            Duration::from_secs(1)
        };
        match rx.recv_timeout(timeout) {
            Ok(e) => {
                touch(&mut touched, &e);
                pending.push_back(e);
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) if pending.is_empty() && header_due.is_none() => {
                return;
            }
            Err(RecvTimeoutError::Disconnected) => {}
        }
        while let Ok(e) = rx.try_recv() {
            touch(&mut touched, &e);
            pending.push_back(e);
        }
        let mut changed = false;
        // A new file's header comes first, once its fingerprint is known; no event is
        // written before it.
        if let Some(fp) = &header_due {
            mirror.header.fingerprint = fp.wait().clone();
            match file.write_header(&mirror.header) {
                Ok(()) => {
                    header_due = None;
                    retry = false;
                    let mut st = lock();
                    st.header_due = false;
                    st.last_error = None;
                    changed = true;
                }
                Err(err) => {
                    retry = true;
                    lock().last_error = Some(format!(
                        "cannot write the header of {}: {err}",
                        file.path().display()
                    ));
                    wake();
                    continue;
                }
            }
        }
        // The lock file goes with a deleted folder: made again at once, so that no second
        // frameaudit opens the file meanwhile.
        if let Err(err) = file.keep_guard() {
            // Another frameaudit holds the path: the records are kept aside meanwhile,
            // if the file there is not this one.
            let at = file.what_is_at_path();
            let shut_out = (at != AtPath::Same).then(|| {
                let all = with_pending(&mirror, &pending);
                (stale_records(&all), keep_aside(&file, &all, &mut aside_of))
            });
            let mut st = lock();
            if let Some((stale, _)) = shut_out {
                st.stale = stale;
            }
            st.last_error = Some(with_aside(
                err.to_string(),
                shut_out.map(|(_, aside)| aside),
            ));
            drop(st);
            wake();
            continue;
        }
        let at = file.what_is_at_path();
        if at == AtPath::Same {
            // The path names the file again (its folder moved away and back): nothing is
            // shut out of it any more, and the error that said so is over.
            let mut st = lock();
            if st.stale > 0 {
                st.stale = 0;
                st.last_error = None;
                changed = true;
            }
        } else {
            let all = with_pending(&mirror, &pending);
            lock().stale = stale_records(&all);
            changed = true;
            // Records another session of this annotator wrote to a new file found there (a
            // second frameaudit that opened the path while it was gone) are taken in, so
            // the file written holds them too, not only the copy displaced.
            let mut merged = mirror.clone();
            let taken = if at == AtPath::Replaced {
                take_in(&mut merged, &touched, file.path())
            } else {
                0
            };
            match file.rewrite(&merged) {
                Ok(displaced) => {
                    mirror = merged;
                    let n = mirror.records.len();
                    let what = match at {
                        AtPath::Changed => "changed by another program",
                        AtPath::Replaced => "replaced",
                        _ => "deleted",
                    };
                    let mut st = lock();
                    st.stale = 0;
                    st.last_error = None;
                    // The file holds them all again: the copy kept aside goes.
                    if let Some((p, _)) = aside_of.take() {
                        let _ = std::fs::remove_file(p);
                    }
                    let theirs = if taken > 0 {
                        format!(", {taken} of them another session's")
                    } else {
                        String::new()
                    };
                    st.notice = Some(match displaced {
                        Some(d) => format!(
                            "audit file was {what} while open: written again ({n} records{theirs}); the file found there kept as {}",
                            d.file_name().unwrap_or_default().to_string_lossy()
                        ),
                        None => {
                            format!("audit file was {what} while open: written again ({n} records)")
                        }
                    });
                }
                Err(err) => {
                    let aside = keep_aside(&file, &all, &mut aside_of);
                    lock().last_error = Some(with_aside(
                        format!(
                            "{} no longer names the audit file and cannot be written again: {err}",
                            file.path().display()
                        ),
                        Some(aside),
                    ));
                    wake();
                    continue;
                }
            }
        }
        while let Some(e) = pending.front() {
            changed = true;
            match file.append(e) {
                Ok(()) => {
                    mirror.apply(e);
                    pending.pop_front();
                    // Appended to a file the path no longer names: not saved until the
                    // rewrite at the top of the next round.
                    let moved = !file.at_path();
                    let mut st = lock();
                    st.written += 1;
                    st.last_error = None;
                    if moved {
                        st.stale = stale_records(&with_pending(&mirror, &pending));
                        break;
                    }
                }
                Err(err) => {
                    lock().last_error = Some(err.to_string());
                    break;
                }
            }
        }
        if changed {
            wake();
        }
    }
}

/// The unit an event changes, into `touched`.
fn touch(touched: &mut std::collections::BTreeSet<UnitKey>, e: &Event) {
    if let Event::Set(r) = e {
        touched.insert(r.key.clone());
    }
}

/// Takes into `mirror` the records of the audit file found at `path` when it is another
/// session's file (another creation time) of the same annotator on the same data: each
/// unit this session has not `touched`, whose record there is then the only one. How many
/// were taken; 0 when the file there is not such an audit.
fn take_in(
    mirror: &mut Replay,
    touched: &std::collections::BTreeSet<UnitKey>,
    path: &Path,
) -> usize {
    let Ok(theirs) = crate::core::audit::read_audit(path) else {
        return 0;
    };
    let (ours, found) = (&mirror.header, &theirs.header);
    if found.created_at == ours.created_at
        || found.annotator != ours.annotator
        || found.fingerprint != ours.fingerprint
        || found.adjudicates != ours.adjudicates
        || found.taxonomy_id != ours.taxonomy_id
        || found.taxonomy_version != ours.taxonomy_version
    {
        return 0;
    }
    let mut taken = 0;
    for (key, rec) in theirs.records {
        if !touched.contains(&key) && !mirror.records.contains_key(&key) {
            mirror.records.insert(key, rec);
            taken += 1;
        }
    }
    taken
}

/// How many records a rewrite of the file would hold (`all`: the file's with those pending
/// applied), at least one (the path names no file of this session's, whatever it holds).
fn stale_records(all: &Replay) -> u64 {
    (all.records.len() as u64).max(1)
}

/// `mirror` with the events not yet written applied.
fn with_pending(mirror: &Replay, pending: &std::collections::VecDeque<Event>) -> Replay {
    let mut all = mirror.clone();
    for e in pending {
        all.apply(e);
    }
    all
}

/// Keeps the records (`all`: the file's with those pending applied) in a file beside the
/// audit file when they changed since they were last kept there (`aside_of`): where they
/// are, or why not.
fn keep_aside(
    file: &AuditFile,
    all: &Replay,
    aside_of: &mut Option<(PathBuf, Vec<String>)>,
) -> Result<PathBuf, String> {
    let lines: Vec<String> = all
        .records
        .values()
        .map(|r| Event::Set(r.clone()).to_line())
        .collect();
    if let Some((path, kept)) = aside_of.as_ref()
        && *kept == lines
    {
        return Ok(path.clone());
    }
    let again = aside_of.as_ref().map(|(p, _)| p.as_path());
    match file.write_aside(all, again) {
        Ok(path) => {
            *aside_of = Some((path.clone(), lines));
            Ok(path)
        }
        Err(e) => Err(e.to_string()),
    }
}

/// A save error, and where the records are kept meanwhile (or why they are not).
fn with_aside(err: String, aside: Option<Result<PathBuf, String>>) -> String {
    match aside {
        None => err,
        Some(Ok(p)) => format!(
            "{err}; the records are kept meanwhile in {}, an audit file of its own (--audit opens it), until the file takes them again",
            p.display()
        ),
        Some(Err(e)) => format!("{err}; keeping the records aside failed too: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::audit::{Status, read_audit};
    use std::sync::OnceLock;

    const T1: &str = "2026-01-02T03:04:05Z";
    const T2: &str = "2026-01-02T03:04:06Z";
    const T3: &str = "2026-01-02T03:04:07Z";

    fn done(item: &str, note: &str) -> AuditRecord {
        let mut r = AuditRecord::blank(UnitKey::new("m", "b", item), "8f", "16f", "");
        r.status = Status::Done;
        r.note = note.into();
        r
    }

    #[test]
    fn undo_and_redo_restore_the_records_at_the_times_given() {
        let mut s = Session::in_memory("ann");
        let key = UnitKey::new("m", "b", "q1");
        s.apply(done("q1", "first"), T1);
        assert_eq!(s.record(&key).map(|r| r.at.as_str()), Some(T1));
        s.apply(done("q1", "second"), T2);
        // The same state again is no change: nothing to undo for it.
        s.apply(done("q1", "second"), T3);

        let (was, now) = s.undo(T3).expect("a change to undo");
        assert_eq!((was.note.as_str(), was.at.as_str()), ("second", T2));
        assert_eq!((now.note.as_str(), now.at.as_str()), ("first", T3));
        assert_eq!(s.record(&key), Some(&now));

        let (was, now) = s.undo(T3).expect("the first change");
        assert_eq!(was.note, "first");
        assert!(now.is_blank(), "{now:?}");
        assert_eq!(now.at, T3);
        assert_eq!(s.record(&key), None, "a blank record is not kept");
        assert!(s.undo(T3).is_none());

        let (was, now) = s.redo(T1).expect("a change to redo");
        assert!(was.is_blank());
        assert_eq!((now.note.as_str(), now.at.as_str()), ("first", T1));
        // A new change drops what could still be redone.
        s.apply(done("q1", "third"), T2);
        assert!(s.redo(T3).is_none());
        assert_eq!(s.records().len(), 1);
        assert_eq!(s.unsaved(), 0, "in memory, nothing waits");
        assert_eq!(s.save_state(), "not saved to a file (in memory)");
    }

    /// The helper's race: the audits folder is deleted and a second frameaudit opens the
    /// file before the first has made its lock file again. The first cannot write there;
    /// its records count as unsaved (all of them, not 0) and are kept on disk beside the
    /// file until the second lets go, when they go back into the file.
    #[test]
    fn records_shut_out_by_a_second_frameaudit_are_kept_aside_and_counted_unsaved() {
        let dir = tempfile::tempdir().expect("tempdir");
        let audits = dir.path().join("audits");
        let path = audits.join("ann.audit.jsonl");
        let header = AuditHeader::for_tests("ann");
        let fp = Arc::new(OnceLock::from(header.fingerprint.clone()));
        let open =
            || Session::open_pending_below(dir.path(), &path, &header, Arc::clone(&fp), || {});
        let mut a = open().expect("the first opens");
        a.apply(done("q1", "one"), T1);
        a.apply(done("q2", "two"), T1);
        assert!(a.wait_saved(Duration::from_secs(5)), "{:?}", a.last_error());
        std::fs::remove_dir_all(&audits).expect("rm -rf audits");
        // The second's file is its own, made now: another creation time.
        let mut later = header.clone();
        later.created_at = "2026-01-02T09:00:00Z".into();
        let mut b = Session::open_pending_below(dir.path(), &path, &later, Arc::clone(&fp), || {})
            .expect("the second opens the path before the first notices");
        // The second saves records there: one of a unit the first changed (the first's
        // change stays) and one of its own.
        b.apply(done("q1", "b's one"), T3);
        b.apply(done("q9", "nine"), T2);
        assert!(b.wait_saved(Duration::from_secs(5)), "{:?}", b.last_error());
        a.apply(done("q3", "three"), T2);
        assert!(!a.wait_saved(Duration::from_secs(3)), "saved where?");
        assert_eq!(a.unsaved(), 3, "{:?}", a.last_error());
        // Counted whole records, so said as records, not changes.
        assert_eq!(a.unsaved_said(), "3 records");
        let err = a.last_error().expect("an error");
        assert!(err.contains("kept meanwhile in"), "{err}");
        let aside = audits.join("ann.audit.jsonl.rescued-1");
        let kept = read_audit(&aside).expect("the records kept aside");
        let notes: Vec<&str> = kept.records.values().map(|r| r.note.as_str()).collect();
        assert_eq!(notes, ["one", "two", "three"]);
        assert_eq!(read_audit(&path).expect("b's file").records.len(), 2);
        // The second lets go: the first writes its records into the file again, with the
        // second's taken in (its file is kept aside as found), and the copy aside goes.
        drop(b);
        assert!(a.wait_saved(Duration::from_secs(5)), "{:?}", a.last_error());
        let notes: Vec<String> = read_audit(&path)
            .expect("a's file")
            .records
            .values()
            .map(|r| r.note.clone())
            .collect();
        assert_eq!(notes, ["one", "two", "three", "nine"]);
        let notice = a.notice().expect("a notice");
        assert!(
            notice.contains("written again (3 records, 1 of them another session's); the file found there kept as ann.audit.jsonl.displaced-1"),
            "{notice}"
        );
        assert_eq!(
            read_audit(&audits.join("ann.audit.jsonl.displaced-1"))
                .expect("the second's file, as found")
                .records
                .len(),
            2
        );
        assert!(
            !aside.exists(),
            "the copy aside is removed once the file holds it"
        );
    }

    /// The audits folder moved away, a link put in its place, then the folder moved back:
    /// the path names the file again, and once the changes are written to it they count as
    /// saved (they stayed "saving" for ever, and quitting said they were not saved).
    #[cfg(unix)]
    #[test]
    fn changes_written_once_the_file_is_back_count_as_saved() {
        let dir = tempfile::tempdir().expect("tempdir");
        let audits = dir.path().join("audits");
        let path = audits.join("ann.audit.jsonl");
        let header = AuditHeader::for_tests("ann");
        let fp = Arc::new(OnceLock::from(header.fingerprint.clone()));
        let mut a =
            Session::open_pending_below(dir.path(), &path, &header, fp, || {}).expect("opens");
        a.apply(done("q1", "one"), T1);
        assert!(a.wait_saved(Duration::from_secs(5)), "{:?}", a.last_error());
        let (away, other) = (dir.path().join("audits.old"), dir.path().join("other"));
        std::fs::create_dir(&other).expect("mkdir");
        std::fs::rename(&audits, &away).expect("move away");
        std::os::unix::fs::symlink(&other, &audits).expect("link");
        a.apply(done("q2", "two"), T2);
        assert!(
            !a.wait_saved(Duration::from_secs(2)),
            "saved through a link?"
        );
        std::fs::remove_file(&audits).expect("unlink");
        std::fs::rename(&away, &audits).expect("move back");
        a.apply(done("q3", "three"), T3);
        assert!(a.wait_saved(Duration::from_secs(5)), "{:?}", a.last_error());
        assert_eq!(a.unsaved(), 0);
        assert_eq!(a.save_state(), "saved ✓");
        assert_eq!(read_audit(&path).expect("the file").records.len(), 3);
        assert_eq!(std::fs::read_dir(&other).expect("other").count(), 0);
    }

    #[test]
    fn the_file_holds_each_record_with_its_given_time() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("ann.audit.jsonl");
        let header = AuditHeader::for_tests("ann");
        {
            let mut s = Session::open(&path, &header, || {}).expect("opens");
            s.visit(&UnitKey::new("m", "b", "q2"), T1);
            s.apply(done("q1", "kept"), T2);
            s.apply(done("q2", "undone"), T2);
            s.undo(T3).expect("undo");
            assert!(s.wait_saved(Duration::from_secs(5)), "{:?}", s.last_error());
            assert_eq!(s.save_state(), "saved ✓");
        }
        let r = read_audit(&path).expect("reads");
        let times: Vec<(&str, &str, &str)> = r
            .records
            .values()
            .map(|r| (r.key.item_id.as_str(), r.note.as_str(), r.at.as_str()))
            .collect();
        assert_eq!(times, vec![("q1", "kept", T2)]);
        assert_eq!(r.last_visit, Some(UnitKey::new("m", "b", "q2")));
    }

    #[test]
    fn a_new_files_header_waits_for_the_fingerprint_and_comes_before_any_event() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("ann.audit.jsonl");
        let header = AuditHeader::for_tests("ann");
        let fp = Arc::new(OnceLock::new());
        let mut s = Session::open_pending(&path, &header, Arc::clone(&fp), || {}).expect("opens");
        assert!(s.header.is_none(), "no header read: the file is new");
        s.apply(done("q1", "before the fingerprint"), T1);
        s.save();
        std::thread::sleep(Duration::from_millis(100));
        // Locked and empty: as good as absent, and nothing counts as saved.
        assert_eq!(std::fs::read(&path).expect("created"), b"");
        assert_eq!(s.unsaved(), 1);
        assert!(
            AuditFile::open(&path, &header).is_err(),
            "a second instance is kept out"
        );
        fp.set("sha256:computed".to_string()).expect("set once");
        assert!(s.wait_saved(Duration::from_secs(5)), "{:?}", s.last_error());
        let r = read_audit(&path).expect("reads");
        assert_eq!(r.header.fingerprint, "sha256:computed");
        assert_eq!(r.header.annotator, "ann");
        assert_eq!(r.records.len(), 1);
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(
            text.starts_with("{\"schema\":\"frameaudit/audit@1\""),
            "{text}"
        );
    }

    /// Opens `path` again once the session before has let it go.
    fn reopen(path: &Path, header: &AuditHeader, fp: &Arc<OnceLock<String>>) -> Session {
        let end = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            match Session::open_pending(path, header, Arc::clone(fp), || {}) {
                Ok(s) => break s,
                Err(AuditError::Locked { .. }) if std::time::Instant::now() < end => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => panic!("{e}"),
            }
        }
    }

    #[test]
    fn an_existing_file_is_written_to_once_its_fingerprint_matches() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("ann.audit.jsonl");
        let header = AuditHeader::for_tests("ann");
        {
            let mut s = Session::open(&path, &header, || {}).expect("opens");
            s.apply(done("q1", "first"), T1);
            assert!(s.wait_saved(Duration::from_secs(5)));
        }
        let fp = Arc::new(OnceLock::new());
        let mut s = reopen(&path, &header, &fp);
        assert_eq!(s.records().len(), 1);
        assert_eq!(s.hold(), &Hold::Comparing);
        s.apply(done("q2", "second"), T2);
        s.save();
        assert_eq!(s.unsaved(), 1, "held until the fingerprint is compared");
        assert_eq!(read_audit(&path).expect("reads").records.len(), 1);
        fp.set(header.fingerprint.clone()).expect("set once");
        assert_eq!(s.settle(), Some(Settled::Same));
        assert!(s.wait_saved(Duration::from_secs(5)));
        assert_eq!(read_audit(&path).expect("reads").records.len(), 2);
    }

    #[test]
    fn an_audit_of_other_data_is_written_to_only_when_the_annotator_says_so() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("ann.audit.jsonl");
        let header = AuditHeader::for_tests("ann");
        {
            let mut s = Session::open(&path, &header, || {}).expect("opens");
            s.apply(done("q1", "first"), T1);
            assert!(s.wait_saved(Duration::from_secs(5)));
        }
        let fp = Arc::new(OnceLock::new());
        let mut s = reopen(&path, &header, &fp);
        s.apply(done("q2", "second"), T2);
        // Waited for on another thread: the fingerprint comes while it waits, and the
        // waiter gives up on a held change instead of writing it.
        let (tx, rx) = channel();
        let waiter = std::thread::spawn(move || {
            let _ = tx.send(s.wait_saved(Duration::from_millis(300)));
            s
        });
        fp.set("sha256:other".into()).expect("set once");
        let saved = rx.recv_timeout(Duration::from_secs(10));
        let mut s = waiter.join().expect("the waiter");
        assert_eq!(saved, Ok(false));
        assert_eq!(
            s.hold(),
            &Hold::OtherData {
                file: header.fingerprint.clone(),
                data: "sha256:other".into()
            }
        );
        assert_eq!(s.save_state(), "1 held: audit of other data");
        assert_eq!(read_audit(&path).expect("reads").records.len(), 1);
        assert!(s.go_on_with_this_data(T3));
        assert!(s.wait_saved(Duration::from_secs(5)));
        let r = read_audit(&path).expect("reads");
        assert_eq!(r.records.len(), 2);
        // The audit is tied to this data from the `data` line on, which comes first.
        assert_eq!(r.header.fingerprint, "sha256:other");
        let text = std::fs::read_to_string(&path).expect("read");
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[2].contains(r#""op":"data""#), "{text}");
        assert!(lines[3].contains(r#""item_id":"q2""#), "{text}");
        drop(s);
        // Opened again on this data, it is not held.
        let fp = Arc::new(OnceLock::from("sha256:other".to_string()));
        let s = reopen(&path, &header, &fp);
        assert_eq!(s.hold(), &Hold::Open);
    }

    /// A review never writes into an annotator's own audit (it would replace their records
    /// with the ones it takes), nor the ordinary screens into an adjudicated audit.
    #[test]
    fn a_review_and_an_annotator_never_share_an_audit_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let own = dir.path().join("ann.audit.jsonl");
        let header = AuditHeader::for_tests("ann");
        let review = AuditHeader {
            adjudicates: vec!["a.audit.jsonl".into(), "b.audit.jsonl".into()],
            ..header.clone()
        };
        let adjudicated = dir.path().join("adjudicated.audit.jsonl");
        for (path, first, then) in [(&own, &header, &review), (&adjudicated, &review, &header)] {
            {
                let mut s = Session::open(path, first, || {}).expect("opens");
                s.apply(done("q1", "kept"), T1);
                assert!(s.wait_saved(Duration::from_secs(5)));
            }
            let before = std::fs::read(path).expect("read");
            let e = Session::open(path, then, || {})
                .err()
                .expect("refused")
                .to_string();
            assert!(e.contains("field `adjudicates`"), "{e}");
            assert_eq!(std::fs::read(path).expect("read"), before, "untouched");
            // The same kind goes on as before.
            let s = Session::open(path, first, || {}).expect("opens again");
            assert_eq!(s.records().len(), 1);
        }
    }

    #[test]
    fn a_change_waits_in_the_outbox_until_it_is_saved() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("ann.audit.jsonl");
        let header = AuditHeader::for_tests("ann");
        let mut s = Session::open(&path, &header, || {}).expect("opens");
        s.apply(done("q1", "waiting"), T1);
        assert!(s.has_unsent());
        assert_eq!(s.unsaved(), 1, "a change not handed over is not saved");
        assert_eq!(s.save_state(), "saving 1…");
        std::thread::sleep(Duration::from_millis(50));
        let r = read_audit(&path).expect("reads");
        assert!(r.records.is_empty(), "nothing reaches the file before save");
        s.save();
        assert!(!s.has_unsent());
        assert!(s.wait_saved(Duration::from_secs(5)), "{:?}", s.last_error());
        let r = read_audit(&path).expect("reads");
        assert_eq!(r.records.len(), 1);
        // Dropping a session hands over what waits.
        s.apply(done("q2", "on drop"), T2);
        drop(s);
        let end = std::time::Instant::now() + Duration::from_secs(5);
        while read_audit(&path).expect("reads").records.len() < 2 {
            assert!(
                std::time::Instant::now() < end,
                "the dropped session's change was not written"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
