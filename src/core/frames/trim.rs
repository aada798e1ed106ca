//! The decode cache's size limit: the frames ffmpeg decodes are kept as JPEG files under
//! `<root>/.frameaudit-cache/frames/`, full size, a few hundred kB each at 1080p, so a day
//! of auditing long videos would fill a shared disk. The cache is held to
//! `FRAMEAUDIT_FRAME_CACHE` (default 4 GiB, [`LIMIT`]): past it, the frames shown least
//! recently go first (a frame read from the cache has its access time set to now; its
//! modification time stays that of the decode, which tells a stale frame from a fresh one),
//! down to [`KEEP_SHARE`] of the limit, and a frame written or read in the last [`GRACE`]
//! never goes (a frame another frameaudit on the same dataset has just decoded, and is
//! about to read).
//!
//! The dataset is untrusted: the walk goes through directory handles opened without
//! following links, from the dataset directory down (`.frameaudit-cache`, `frames`, the
//! videos' folders), and removes only regular files named `<digits>.jpg` inside them. A
//! link anywhere on the way is neither followed nor removed, so no file outside the cache
//! is ever touched, whatever is planted or swapped in meanwhile.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// The limit: `FRAMEAUDIT_FRAME_CACHE`, a size (`4G`, `500M`, `750k`, bytes without a
/// unit) or `off` for none; 4 GiB without it, about 15 000 frames of a 1080p video.
pub const LIMIT: crate::core::limit::SizeLimit = crate::core::limit::SizeLimit {
    var: "FRAMEAUDIT_FRAME_CACHE",
    default: 4 << 30,
};

/// A trim leaves the cache at this share of the limit, so that it does not run again
/// after every decode.
pub const KEEP_SHARE: f64 = 0.8;

/// A frame written or read this recently is never removed.
pub const GRACE: Duration = Duration::from_secs(60);

/// How deep the videos' folders go below `frames/` (a video's name may hold `/`).
const MAX_DEPTH: usize = 16;

/// One decoded frame of the cache.
#[derive(Debug, Clone)]
struct Cached {
    /// Its folder's path below `frames/`, one name per level.
    dir: Vec<std::ffi::CString>,
    name: std::ffi::CString,
    size: u64,
    /// When it was last written or read, the later.
    used: SystemTime,
}

/// What a trim found and did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Trimmed {
    /// The frames' bytes before.
    pub before: u64,
    /// The frames' bytes after.
    pub after: u64,
    /// How many frames were removed.
    pub removed: usize,
}

/// The cache's running size for one session (a frame store and its copies): measured by a
/// walk the first time, then added to as frames are decoded, and measured again whenever
/// the added part passes an eighth of the limit (another frameaudit may be filling the
/// same cache) or the total passes the limit (and then trimmed).
#[derive(Debug)]
pub(crate) struct Budget {
    /// The dataset directory, whose `.frameaudit-cache/frames` is held to the limit;
    /// `None`: a store without one, nothing to hold.
    root: Option<PathBuf>,
    limit: Option<u64>,
    state: Mutex<Tally>,
}

#[derive(Debug, Default)]
struct Tally {
    /// The size the last walk found, `None` before the first.
    measured: Option<u64>,
    /// Bytes decoded since.
    added: u64,
}

impl Default for Budget {
    fn default() -> Self {
        Budget::new(None, None)
    }
}

impl Budget {
    pub(crate) fn new(root: Option<PathBuf>, limit: Option<u64>) -> Budget {
        Budget {
            root,
            limit,
            state: Mutex::new(Tally::default()),
        }
    }

    /// Counts `bytes` just written into the cache, and trims it when it is past the limit.
    pub(crate) fn written(&self, bytes: u64) -> Option<Trimmed> {
        let (root, limit) = (self.root.as_deref()?, self.limit?);
        let mut t = self.state.lock().unwrap_or_else(|e| e.into_inner());
        t.added = t.added.saturating_add(bytes);
        let due = match t.measured {
            None => true,
            Some(m) => m.saturating_add(t.added) > limit || t.added > limit / 8,
        };
        if !due {
            return None;
        }
        let now = SystemTime::now();
        let done = trim(root, limit, now);
        t.measured = Some(done.after);
        t.added = 0;
        Some(done)
    }
}

/// Holds `<root>/.frameaudit-cache/frames` to `limit` bytes of frames: when it holds more,
/// removes the frames used longest before `now` (never within [`GRACE`] of it) until
/// it holds at most [`KEEP_SHARE`] of the limit. Nothing is done where the cache folders
/// are not real folders of the dataset (a link on the way), nor without them.
pub fn trim(root: &Path, limit: u64, now: SystemTime) -> Trimmed {
    imp::trim(root, limit, now)
}

/// Sets a cached frame's access time to now, so that a trim keeps the frames shown lately;
/// the file itself, never what a link there leads to. Errors are ignored (a read-only
/// dataset keeps the times it has).
pub fn touch(cached: &Path) {
    imp::touch(cached);
}

/// The frames to remove from `files` so that at most `keep` bytes stay, oldest first,
/// none used after `newest`.
fn choose(mut files: Vec<Cached>, keep: u64, newest: SystemTime) -> Vec<Cached> {
    let total: u64 = files.iter().map(|f| f.size).sum();
    files.sort_by(|a, b| a.used.cmp(&b.used).then(a.name.cmp(&b.name)));
    let mut left = total;
    files
        .into_iter()
        .take_while(|f| f.used <= newest)
        .take_while(|f| {
            let go = left > keep;
            left = left.saturating_sub(f.size);
            go
        })
        .collect()
}

/// Whether `name` is a decoded frame's file name, `<digits>.jpg`.
fn is_frame_name(name: &[u8]) -> bool {
    name.strip_suffix(b".jpg")
        .is_some_and(|d| !d.is_empty() && d.iter().all(u8::is_ascii_digit))
}

#[cfg(unix)]
mod imp {
    use std::ffi::{CStr, CString};
    use std::os::fd::OwnedFd;
    use std::path::Path;
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use rustix::fs::{AtFlags, CWD, Dir, FileType, Mode, OFlags, Timespec, Timestamps};

    use super::{Cached, GRACE, KEEP_SHARE, MAX_DEPTH, Trimmed, choose, is_frame_name};
    use crate::core::frames::CACHE_DIR;

    /// Opens the folder `name` of `dir` without following a link.
    fn open_dir(dir: impl std::os::fd::AsFd, name: &CStr) -> Option<OwnedFd> {
        rustix::fs::openat(
            dir,
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .ok()
    }

    /// The dataset's `.frameaudit-cache/frames`, both real folders.
    fn frames_dir(root: &Path) -> Option<OwnedFd> {
        let root = rustix::fs::open(
            root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .ok()?;
        let cache = open_dir(&root, &CString::new(CACHE_DIR).ok()?)?;
        open_dir(&cache, c"frames")
    }

    /// Every decoded frame below `dir` (at `path` below `frames/`).
    fn walk(dir: &OwnedFd, path: &mut Vec<CString>, out: &mut Vec<Cached>) {
        let Ok(mut entries) = Dir::read_from(dir) else {
            return;
        };
        while let Some(Ok(e)) = entries.read() {
            let name = e.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            let Ok(st) = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) else {
                continue;
            };
            match FileType::from_raw_mode(st.st_mode) {
                FileType::Directory if path.len() < MAX_DEPTH => {
                    if let Some(sub) = open_dir(dir, name) {
                        path.push(name.to_owned());
                        walk(&sub, path, out);
                        path.pop();
                    }
                }
                FileType::RegularFile if is_frame_name(name.to_bytes()) => {
                    let used = time(st.st_mtime, st.st_mtime_nsec)
                        .max(time(st.st_atime, st.st_atime_nsec));
                    out.push(Cached {
                        dir: path.clone(),
                        name: name.to_owned(),
                        size: u64::try_from(st.st_size).unwrap_or(0),
                        used,
                    });
                }
                _ => {}
            }
        }
    }

    /// A file time as `stat` gives it (the field types differ between systems).
    fn time(secs: impl TryInto<u64>, nanos: impl TryInto<u32>) -> SystemTime {
        UNIX_EPOCH + Duration::new(secs.try_into().unwrap_or(0), nanos.try_into().unwrap_or(0))
    }

    pub(super) fn trim(root: &Path, limit: u64, now: SystemTime) -> Trimmed {
        let Some(frames) = frames_dir(root) else {
            return Trimmed::default();
        };
        let mut files = Vec::new();
        walk(&frames, &mut Vec::new(), &mut files);
        let before: u64 = files.iter().map(|f| f.size).sum();
        if before <= limit {
            return Trimmed {
                before,
                after: before,
                removed: 0,
            };
        }
        let keep = (limit as f64 * KEEP_SHARE) as u64;
        let newest = now.checked_sub(GRACE).unwrap_or(UNIX_EPOCH);
        let mut gone = choose(files, keep, newest);
        // By folder, each opened once (again without following a link: the walk's
        // handles are closed, and a folder may have been swapped meanwhile).
        gone.sort_by(|a, b| a.dir.cmp(&b.dir));
        let (mut removed, mut freed) = (0usize, 0u64);
        for group in gone.chunk_by(|a, b| a.dir == b.dir) {
            let mut dir = match rustix::io::dup(&frames) {
                Ok(d) => d,
                Err(_) => continue,
            };
            let mut reached = true;
            for part in &group[0].dir {
                match open_dir(&dir, part) {
                    Some(sub) => dir = sub,
                    None => {
                        reached = false;
                        break;
                    }
                }
            }
            if !reached {
                continue;
            }
            for f in group {
                // Still a regular file (not a link put in its place).
                let regular = rustix::fs::statat(&dir, &f.name, AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile);
                if regular && rustix::fs::unlinkat(&dir, &f.name, AtFlags::empty()).is_ok() {
                    removed += 1;
                    freed += f.size;
                }
            }
        }
        Trimmed {
            before,
            after: before - freed,
            removed,
        }
    }

    pub(super) fn touch(cached: &Path) {
        let omit = Timespec {
            tv_sec: 0,
            tv_nsec: rustix::fs::UTIME_OMIT,
        };
        let now = Timespec {
            tv_sec: 0,
            tv_nsec: rustix::fs::UTIME_NOW,
        };
        let times = Timestamps {
            last_access: now,
            last_modification: omit,
        };
        let _ = rustix::fs::utimensat(CWD, cached, &times, AtFlags::SYMLINK_NOFOLLOW);
    }
}

#[cfg(not(unix))]
mod imp {
    use std::path::Path;
    use std::time::SystemTime;

    use super::Trimmed;

    pub(super) fn trim(_root: &Path, _limit: u64, _now: SystemTime) -> Trimmed {
        Trimmed::default()
    }

    pub(super) fn touch(_cached: &Path) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_names_are_digits_dot_jpg() {
        assert!(is_frame_name(b"0.jpg"));
        assert!(is_frame_name(b"001234.jpg"));
        assert!(!is_frame_name(b".jpg"));
        assert!(!is_frame_name(b".decode-abc.jpg"));
        assert!(!is_frame_name(b"1.png"));
        assert!(!is_frame_name(b"notes.txt"));
    }

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    fn cached(name: &str, size: u64, secs: u64) -> Cached {
        Cached {
            dir: Vec::new(),
            name: std::ffi::CString::new(name).expect("name"),
            size,
            used: at(secs),
        }
    }

    #[test]
    fn the_oldest_go_first_until_the_rest_fits() {
        let files = vec![
            cached("3.jpg", 100, 30),
            cached("1.jpg", 100, 10),
            cached("4.jpg", 100, 40),
            cached("2.jpg", 100, 20),
        ];
        let names = |v: Vec<Cached>| -> Vec<String> {
            v.iter()
                .map(|f| f.name.to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(
            names(choose(files.clone(), 250, at(100))),
            ["1.jpg", "2.jpg"]
        );
        assert_eq!(
            names(choose(files.clone(), 400, at(100))),
            Vec::<String>::new()
        );
        // None newer than `newest`, even when the rest does not fit.
        assert_eq!(names(choose(files.clone(), 0, at(25))), ["1.jpg", "2.jpg"]);
    }
}
