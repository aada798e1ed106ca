//! Opening the files frameaudit reads. Every one must be a regular file: a named pipe at a
//! data path would block the first read (or, for a read-only open, the open itself) until
//! some other program writes to it, and a device such as `/dev/zero` never ends. So each
//! file is opened without blocking (`O_NONBLOCK` on Unix), its type is checked on the open
//! handle (no race with a rename in between), anything that is not a regular file is
//! refused with what it is, and reads stop at a limit per kind of file that the refusal
//! names. Regular files ignore `O_NONBLOCK`; it is cleared after the check all the same.
//!
//! The errors are [`std::io::Error`]s whose text says what is wrong without the path, as
//! every caller already puts it as `cannot read PATH: ERROR`.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// How much frameaudit reads from one kind of file, and what to call that kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// The most bytes read.
    pub bytes: u64,
    /// The kind of file, as in "more than the 1 GiB frameaudit reads of an audit file".
    pub what: &'static str,
}

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

/// Files of cells (`cells.jsonl`, per-item CSV) and `items.jsonl`: streamed, so only the
/// response matrix they make is held in memory.
pub const CELLS: Limit = Limit {
    bytes: 64 * GIB,
    what: "a file of cells or items",
};

/// `dataset.json`, read whole.
pub const DATASET_JSON: Limit = Limit {
    bytes: 256 * MIB,
    what: "dataset.json",
};

/// Audit files and merged audits, read whole; also an annotations file.
pub const AUDIT: Limit = Limit {
    bytes: GIB,
    what: "an audit file",
};

/// A taxonomy or keymap file, read whole.
pub const SETTINGS: Limit = Limit {
    bytes: 16 * MIB,
    what: "a taxonomy or keymap file",
};

/// The inputs of `frameaudit import`: harness logs and tables, recorder logs and the
/// datasets' own annotation files, read whole.
pub const IMPORT: Limit = Limit {
    bytes: 16 * GIB,
    what: "an input of import",
};

/// A frame image (extracted, saved by a harness, or in the decode cache).
pub const FRAME_IMAGE: Limit = Limit {
    bytes: 256 * MIB,
    what: "a frame image",
};

/// A cached frame index of a video (about 30 MB for a ten-hour video).
pub const FRAME_INDEX: Limit = Limit {
    bytes: 256 * MIB,
    what: "a frame index",
};

/// What a path is when it is not a regular file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A directory.
    Directory,
    /// A named pipe, which would block a read.
    Fifo,
    /// A character device (`/dev/zero`, a terminal).
    CharDevice,
    /// A block device (a disk).
    BlockDevice,
    /// A Unix socket.
    Socket,
    /// Anything else that is not a regular file.
    Other,
}

impl Kind {
    fn of(ft: std::fs::FileType) -> Option<Kind> {
        if ft.is_file() {
            return None;
        }
        if ft.is_dir() {
            return Some(Kind::Directory);
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if ft.is_fifo() {
                return Some(Kind::Fifo);
            }
            if ft.is_char_device() {
                return Some(Kind::CharDevice);
            }
            if ft.is_block_device() {
                return Some(Kind::BlockDevice);
            }
            if ft.is_socket() {
                return Some(Kind::Socket);
            }
        }
        Some(Kind::Other)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Directory => "a directory",
            Kind::Fifo => "a named pipe (FIFO)",
            Kind::CharDevice => "a character device",
            Kind::BlockDevice => "a block device",
            Kind::Socket => "a socket",
            Kind::Other => "not a file",
        })
    }
}

/// Why a file was refused.
#[derive(Debug)]
enum Refused {
    NotRegular(Kind),
    TooLarge { len: u64, limit: Limit },
    Grew(Limit),
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::NotRegular(kind) => write!(
                f,
                "it is {kind}, not a regular file; frameaudit reads only regular files"
            ),
            Refused::TooLarge { len, limit } => write!(
                f,
                "it is {}, more than the {} frameaudit reads of {}",
                show_size(*len),
                show_size(limit.bytes),
                limit.what
            ),
            Refused::Grew(limit) => write!(
                f,
                "it grew past the {} frameaudit reads of {} while being read",
                show_size(limit.bytes),
                limit.what
            ),
        }
    }
}

impl std::error::Error for Refused {}

fn refused(r: Refused) -> io::Error {
    let kind = match r {
        Refused::NotRegular(_) => io::ErrorKind::InvalidInput,
        Refused::TooLarge { .. } | Refused::Grew(_) => io::ErrorKind::FileTooLarge,
    };
    io::Error::new(kind, r)
}

/// `64 GiB`, `256 MiB`, `1.5 KiB`, `12 bytes`.
pub fn show_size(bytes: u64) -> String {
    let units = [(GIB, "GiB"), (MIB, "MiB"), (1 << 10, "KiB")];
    for (unit, name) in units {
        if bytes >= unit {
            let v = bytes as f64 / unit as f64;
            return if bytes.is_multiple_of(unit) {
                format!("{} {name}", bytes / unit)
            } else {
                format!("{v:.1} {name}")
            };
        }
    }
    format!("{bytes} bytes")
}

/// What is at `path` when it exists and is not a regular file (following symlinks; a
/// `stat`, which never blocks). `None` for a regular file and for a path with nothing
/// there.
pub fn not_regular(path: &Path) -> Option<Kind> {
    std::fs::metadata(path)
        .ok()
        .and_then(|m| Kind::of(m.file_type()))
}

/// Refuses `path` unless it is a regular file, without opening it: for files handed to
/// another program (a video to ffmpeg).
pub fn check_regular(path: &Path) -> io::Result<()> {
    let meta = std::fs::metadata(path)?;
    match Kind::of(meta.file_type()) {
        None => Ok(()),
        Some(kind) => Err(refused(Refused::NotRegular(kind))),
    }
}

/// A regular file, open for reading, at most `limit` long when it was opened.
#[derive(Debug)]
pub struct Regular {
    file: File,
    len: u64,
    limit: Limit,
}

impl Regular {
    /// Its length when it was opened.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether it was empty when it was opened.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The open file, for callers that write too (the audit file).
    pub fn into_file(self) -> File {
        self.file
    }

    /// A reader of the file that fails once it would read past the limit (a file that
    /// grows while it is read).
    pub fn into_reader(self) -> Bounded<File> {
        Bounded::new(self.file, self.limit)
    }

    /// Reads the whole file.
    pub fn read_all(self) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::with_capacity(usize::try_from(self.len).unwrap_or(0));
        self.into_reader().read_to_end(&mut bytes)?;
        Ok(bytes)
    }
}

/// Opens `path` for reading: see [`open_with`].
pub fn open(path: &Path, limit: Limit) -> io::Result<Regular> {
    open_with(OpenOptions::new().read(true), path, limit)
}

/// Opens `path` with `options` (with `O_NONBLOCK` and `O_NOCTTY` added on Unix, so that
/// no open blocks and no terminal is taken over), then refuses it unless the open handle
/// is a regular file of at most `limit` bytes. `O_NONBLOCK` is cleared again before the
/// file is handed back. A path that cannot be opened because of what it is (a directory
/// opened for writing) is refused the same way.
pub fn open_with(options: &OpenOptions, path: &Path, limit: Limit) -> io::Result<Regular> {
    open_flagged(options, path, limit, false)
}

/// [`open_with`] for a file frameaudit may create (an audit file): never through a symbolic
/// link at the path (`O_NOFOLLOW`), which is refused with where it leads, so a link planted
/// in a shared dataset cannot have frameaudit create or write a file elsewhere.
pub fn open_no_follow(options: &OpenOptions, path: &Path, limit: Limit) -> io::Result<Regular> {
    open_flagged(options, path, limit, true)
}

fn open_flagged(
    options: &OpenOptions,
    path: &Path,
    limit: Limit,
    no_follow: bool,
) -> io::Result<Regular> {
    let mut options = options.clone();
    #[cfg(unix)]
    {
        use rustix::fs::OFlags;
        use std::os::unix::fs::OpenOptionsExt;
        let mut flags = OFlags::NONBLOCK | OFlags::NOCTTY;
        if no_follow {
            flags |= OFlags::NOFOLLOW;
        }
        options.custom_flags(flags.bits() as i32);
    }
    if no_follow {
        #[cfg(not(unix))]
        refuse_link(path)?;
    }
    let file = match options.open(path) {
        Ok(f) => f,
        Err(e) => {
            if no_follow {
                refuse_link(path)?;
            }
            return Err(match not_regular(path) {
                Some(kind) => refused(Refused::NotRegular(kind)),
                None => e,
            });
        }
    };
    let meta = file.metadata()?;
    if let Some(kind) = Kind::of(meta.file_type()) {
        return Err(refused(Refused::NotRegular(kind)));
    }
    if meta.len() > limit.bytes {
        return Err(refused(Refused::TooLarge {
            len: meta.len(),
            limit,
        }));
    }
    #[cfg(unix)]
    {
        use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
        let flags = fcntl_getfl(&file)?;
        if flags.contains(OFlags::NONBLOCK) {
            fcntl_setfl(&file, flags - OFlags::NONBLOCK)?;
        }
    }
    Ok(Regular {
        file,
        len: meta.len(),
        limit,
    })
}

pub(crate) fn is_link(p: &Path) -> bool {
    p.symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink())
}

/// The error for a symbolic link met on the way to a write: its path and where it leads.
pub(crate) fn link_refused(link: &Path) -> io::Error {
    let target = std::fs::read_link(link)
        .map(|t| crate::core::text::sanitize(&t.display().to_string()).into_owned())
        .unwrap_or_else(|_| "?".into());
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is a symbolic link (to {target}): refused, frameaudit does not write through links (one in a shared dataset could send its files anywhere)",
            crate::core::text::sanitize(&link.display().to_string())
        ),
    )
}

/// Refuses a symbolic link at `path` (frameaudit never creates or replaces a file through
/// one, `core::fswrite`), naming where it leads; a path with nothing at it, or
/// anything but a link, passes.
pub fn refuse_link(path: &Path) -> io::Result<()> {
    if is_link(path) {
        return Err(link_refused(path));
    }
    Ok(())
}

/// Reads the whole regular file at `path` (see [`open`]).
pub fn read(path: &Path, limit: Limit) -> io::Result<Vec<u8>> {
    open(path, limit)?.read_all()
}

/// Reads the whole regular file at `path` as UTF-8 text (see [`open`]).
pub fn read_to_string(path: &Path, limit: Limit) -> io::Result<String> {
    String::from_utf8(read(path, limit)?).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// A reader that fails rather than read more than its limit.
#[derive(Debug)]
pub struct Bounded<R> {
    inner: R,
    left: u64,
    limit: Limit,
}

impl<R: Read> Bounded<R> {
    /// At most `limit.bytes` from `inner`.
    pub fn new(inner: R, limit: Limit) -> Self {
        Bounded {
            inner,
            left: limit.bytes,
            limit,
        }
    }
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            // At the limit: anything more is an error, the end of the file is not.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(refused(Refused::Grew(self.limit))),
            };
        }
        let max = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..max])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// Seeking moves the bound with the position, counted from the start of `inner` (the
/// image decoder looks at the first bytes, then reads the file from its start again).
impl<R: Read + Seek> Seek for Bounded<R> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let at = self.inner.seek(pos)?;
        self.left = self.limit.bytes.saturating_sub(at);
        Ok(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY: Limit = Limit {
        bytes: 8,
        what: "a test file",
    };

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(show_size(64 * GIB), "64 GiB");
        assert_eq!(show_size(256 * MIB), "256 MiB");
        assert_eq!(show_size(1536), "1.5 KiB");
        assert_eq!(show_size(12), "12 bytes");
    }

    #[test]
    fn regular_files_are_read_within_the_limit() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("f");
        std::fs::write(&p, b"12345678").expect("write");
        assert_eq!(read(&p, TINY).expect("read"), b"12345678");
        std::fs::write(&p, b"123456789").expect("write");
        let e = read(&p, TINY).expect_err("too large");
        assert_eq!(
            e.to_string(),
            "it is 9 bytes, more than the 8 bytes frameaudit reads of a test file"
        );
    }

    #[test]
    fn a_growing_file_stops_at_the_limit() {
        let mut r = Bounded::new(&b"0123456789"[..], TINY);
        let mut out = Vec::new();
        let e = r.read_to_end(&mut out).expect_err("grew");
        assert!(e.to_string().contains("grew past the 8 bytes"), "{e}");
        let mut r = Bounded::new(&b"01234567"[..], TINY);
        out.clear();
        r.read_to_end(&mut out).expect("exactly the limit");
        assert_eq!(out.len(), 8);
    }

    #[test]
    fn directories_are_refused_by_what_they_are() {
        let dir = tempfile::tempdir().expect("tempdir");
        let e = read(dir.path(), TINY).expect_err("a directory");
        assert!(
            e.to_string()
                .starts_with("it is a directory, not a regular file"),
            "{e}"
        );
        let e = open_with(OpenOptions::new().read(true).append(true), dir.path(), TINY)
            .expect_err("a directory");
        assert!(e.to_string().contains("a directory"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_pipes_are_refused_without_blocking() {
        let e = read(Path::new("/dev/zero"), TINY).expect_err("a device");
        assert!(e.to_string().contains("a character device"), "{e}");
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success());
        if !made {
            eprintln!("note: no mkfifo; the FIFO case is not checked");
            return;
        }
        // Without O_NONBLOCK this open would wait for a writer forever.
        let e = read(&fifo, TINY).expect_err("a FIFO");
        assert!(e.to_string().contains("a named pipe (FIFO)"), "{e}");
        let e = open_with(
            OpenOptions::new().read(true).append(true).create(true),
            &fifo,
            TINY,
        )
        .expect_err("a FIFO");
        assert!(e.to_string().contains("a named pipe (FIFO)"), "{e}");
        assert_eq!(not_regular(&fifo), Some(Kind::Fifo));
        assert!(check_regular(&fifo).is_err());
    }
}
