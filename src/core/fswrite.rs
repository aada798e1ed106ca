//! Writing the files frameaudit creates, so that whatever a path holds, a write lands where it
//! was meant to: a file is never created or replaced through a symbolic link (a link planted in
//! a shared dataset would send it anywhere the user can write), directories inside a dataset
//! are made without following any link, and an output is replaced by renaming a finished
//! temporary file over it, except a device or a pipe, which is written in place and never
//! renamed over. Temporary files are named after their output and held locked while they are
//! written, so the next write of that output clears the ones a killed process left behind.
//!
//! The checks are made on the paths as they are when frameaudit writes: they stop links that
//! are there beforehand, which is how a shared dataset would carry them.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

use crate::core::fsread;
pub use crate::core::fsread::refuse_link;

/// What an output path that is a symbolic link may lead to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Nothing: a link is refused. For every file frameaudit places inside a dataset.
    Refuse,
    /// A character device or a pipe, written in place (`-o /dev/stdout` when standard output
    /// is a terminal or a pipe). A link to anything else is refused. For paths the user typed.
    ToStreams,
}

/// The name every temporary file of an output ends with, after its random part.
const TEMP_SUFFIX: &str = ".frameaudit-tmp";

/// A temporary file older than this whose lock is free was left by a process that died.
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(2);

/// The longest part of an output's name kept in its temporary file's name, in bytes, so that
/// the temporary name stays within the 255 bytes of a file name.
const NAME_IN_TEMP: usize = 160;

fn refused(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

fn show(p: &Path) -> String {
    crate::core::text::sanitize(&p.display().to_string()).into_owned()
}

/// Creates the directory `dir`, below the directory `root`, with any missing between them,
/// following no symbolic link below `root`: a link there (or a file where a directory is due)
/// is refused with its name. `root` itself is the user's and may be reached through links;
/// it is created when missing. `dir` must be `root` or lie below it.
pub fn create_dir_below(root: &Path, dir: &Path) -> io::Result<()> {
    let rel = dir.strip_prefix(root).map_err(|_| {
        refused(format!(
            "{} is not inside {}: frameaudit writes a dataset's files only inside it",
            show(dir),
            show(root)
        ))
    })?;
    if !root.as_os_str().is_empty() {
        std::fs::create_dir_all(root)?;
    }
    let mut at = root.to_path_buf();
    for part in rel.components() {
        match part {
            Component::Normal(p) => at.push(p),
            Component::CurDir => continue,
            _ => {
                return Err(refused(format!(
                    "{} climbs out of {}: frameaudit writes a dataset's files only inside it",
                    show(dir),
                    show(root)
                )));
            }
        }
        match at.symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => return Err(fsread::link_refused(&at)),
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(refused(format!(
                    "{} is a file where a directory is due",
                    show(&at)
                )));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => match std::fs::create_dir(&at) {
                Ok(()) => {}
                // Made by someone else meanwhile: taken only if it is a directory.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    if !at.symlink_metadata().is_ok_and(|m| m.is_dir()) {
                        return Err(fsread::link_refused(&at));
                    }
                }
                Err(e) => return Err(e),
            },
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Opens `path` with `options` but never through a symbolic link at the path itself
/// (`O_NOFOLLOW` on Unix, so a link put there between a check and the open is refused too).
/// The error for a link names it and where it leads.
pub fn open_no_follow(options: &OpenOptions, path: &Path) -> io::Result<File> {
    let mut options = options.clone();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    }
    #[cfg(not(unix))]
    fsread::refuse_link(path)?;
    match options.open(path) {
        Ok(f) => Ok(f),
        Err(e) if fsread::is_link(path) => {
            let _ = e;
            Err(fsread::link_refused(path))
        }
        Err(e) => Err(e),
    }
}

/// How an output's path is to be written.
enum Target {
    /// Absent or a regular file: a temporary file renamed over it.
    Replace,
    /// A character device or a pipe: written in place.
    InPlace,
}

/// Decides how `path` is written, or why it is not.
fn target(path: &Path, links: Links) -> io::Result<Target> {
    let meta = match path.symlink_metadata() {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Target::Replace),
        Err(e) => return Err(e),
    };
    let meta = if meta.file_type().is_symlink() {
        let through = std::fs::metadata(path).ok();
        match (links, through) {
            (Links::ToStreams, Some(m)) if is_stream(&m.file_type()) => m,
            _ => return Err(fsread::link_refused(path)),
        }
    } else {
        meta
    };
    let ft = meta.file_type();
    if ft.is_file() {
        return Ok(Target::Replace);
    }
    if is_stream(&ft) {
        return Ok(Target::InPlace);
    }
    let what = fsread::not_regular(path)
        .map(|k| k.to_string())
        .unwrap_or_else(|| "not a regular file".into());
    Err(refused(format!(
        "{} is {what}: frameaudit writes an output only as a regular file, or in place into a character device or a pipe",
        show(path)
    )))
}

/// A character device (a terminal, `/dev/null`) or a pipe: what is written in place.
fn is_stream(ft: &std::fs::FileType) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        ft.is_char_device() || ft.is_fifo()
    }
    #[cfg(not(unix))]
    {
        let _ = ft;
        false
    }
}

/// Writes the output `path` with `write`: a regular file (or none) is replaced whole by a
/// temporary file renamed over it once written and synced, so a reader never sees half of
/// it; a character device or a pipe is written in place, never renamed over; anything else,
/// and a symbolic link except as `links` allows, is refused before anything is written.
pub fn write_output(
    path: &Path,
    links: Links,
    write: impl FnOnce(&mut (dyn Write + Send)) -> io::Result<()>,
) -> io::Result<()> {
    match target(path, links)? {
        Target::InPlace => {
            let mut options = OpenOptions::new();
            options.write(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                options.custom_flags(rustix::fs::OFlags::NOCTTY.bits() as i32);
            }
            let file = options.open(path)?;
            // Checked on the open file: what was renamed in meanwhile is not written over.
            if !is_stream(&file.metadata()?.file_type()) {
                return Err(refused(format!(
                    "{} changed while it was opened: not written",
                    show(path)
                )));
            }
            let mut w = io::BufWriter::new(file);
            write(&mut w)?;
            w.flush()
        }
        Target::Replace => {
            let mut tmp = temp_for(path)?;
            {
                let mut w = io::BufWriter::new(tmp.as_file_mut());
                write(&mut w)?;
                w.flush()?;
            }
            tmp.as_file().sync_all()?;
            persist(tmp, path, links)
        }
    }
}

/// Renames a temporary file of [`temp_for`] over `path`, after checking `path` again: a
/// link put there meanwhile is refused, as [`write_output`] refuses it. The directory is
/// synced, so the new name is durable.
pub fn persist(tmp: tempfile::NamedTempFile, path: &Path, links: Links) -> io::Result<()> {
    if let Target::InPlace = target(path, links)? {
        return Err(refused(format!(
            "{} became a device or a pipe while it was written: not renamed over",
            show(path)
        )));
    }
    tmp.persist(path).map_err(|e| e.error)?;
    sync_dir(parent_of(path))
}

fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Syncs a directory, so a rename or a new file in it is durable (a no-op off Unix).
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// The start of the names of `path`'s temporary files: `.NAME.` in its directory.
fn temp_prefix(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut cut = name.len().min(NAME_IN_TEMP);
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(".{}.", &name[..cut])
}

/// A temporary file beside `path`, to be renamed over it: named `.NAME.XXXXXX.frameaudit-tmp`,
/// readable by others as a file the user creates is (0644 less the umask, not the 0600 of a
/// private temporary file, so datasets and audits written this way can be shared), and held
/// under an exclusive lock until closed. Temporary files of the same output that no process
/// holds any more (left by a crash or `kill -9`) are removed first.
pub fn temp_for(path: &Path) -> io::Result<tempfile::NamedTempFile> {
    temp_with_mode(path, 0o644)
}

/// [`temp_for`], readable by the user only (0600): for the matrix cache in the user's own
/// cache directory, a copy of data that may not be theirs to share.
pub fn private_temp_for(path: &Path) -> io::Result<tempfile::NamedTempFile> {
    temp_with_mode(path, 0o600)
}

fn temp_with_mode(path: &Path, mode: u32) -> io::Result<tempfile::NamedTempFile> {
    let dir = parent_of(path);
    let prefix = temp_prefix(path);
    clear_stale(dir, &prefix);
    let mut b = tempfile::Builder::new();
    b.prefix(&prefix).suffix(TEMP_SUFFIX).rand_bytes(6);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(mode));
    }
    #[cfg(not(unix))]
    let _ = mode;
    // Said of the output's folder: the temporary file's name means nothing to the user
    // (tempfile puts it in its errors).
    let tmp = b.tempfile_in(dir).map_err(|e| {
        let reason = e.raw_os_error().map_or_else(
            || e.kind().to_string(),
            |n| io::Error::from_raw_os_error(n).to_string(),
        );
        let shown = if dir.as_os_str().is_empty() {
            ".".to_string()
        } else {
            show(dir)
        };
        let text = if e.kind() == io::ErrorKind::NotFound {
            format!("the folder {shown} does not exist")
        } else {
            format!("cannot create a file in the folder {shown}: {reason}")
        };
        io::Error::new(e.kind(), text)
    })?;
    // Best effort: a file system without locks still gets its temporary file.
    let _ = tmp.as_file().try_lock();
    Ok(tmp)
}

/// Removes the temporary files named `prefix…frameaudit-tmp` in `dir` that no process holds
/// (their lock is free) and that were last written a while ago.
fn clear_stale(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(middle) = name
            .strip_prefix(prefix)
            .and_then(|r| r.strip_suffix(TEMP_SUFFIX))
        else {
            continue;
        };
        if middle.len() != 6 || middle.contains('.') {
            continue;
        }
        let p: PathBuf = e.path();
        let Ok(meta) = p.symlink_metadata() else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let old = meta
            .modified()
            .ok()
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age >= STALE_AFTER);
        if !old {
            continue;
        }
        let Ok(f) = open_no_follow(OpenOptions::new().read(true), &p) else {
            continue;
        };
        if f.try_lock().is_ok() {
            let _ = std::fs::remove_file(&p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    /// An output into a folder that is not there names the folder, not the temporary file.
    #[test]
    fn an_output_in_a_missing_folder_names_the_folder() {
        let dir = tempfile::tempdir().expect("tmp");
        let out = dir.path().join("none/x.jsonl");
        let e = write_output(&out, Links::Refuse, |w| w.write_all(b"x")).expect_err("no folder");
        let text = e.to_string();
        assert_eq!(
            text,
            format!(
                "the folder {} does not exist",
                dir.path().join("none").display()
            )
        );
        assert!(!text.contains(TEMP_SUFFIX), "{text}");
    }

    #[test]
    fn a_link_is_never_written_through() {
        let tmp = tempfile::tempdir().expect("tmp");
        let victim = tmp.path().join("victim");
        std::fs::write(&victim, "precious").expect("write");
        let link = tmp.path().join("out.json");
        std::os::unix::fs::symlink(&victim, &link).expect("link");
        let dangling = tmp.path().join("dangling.json");
        std::os::unix::fs::symlink(tmp.path().join("nowhere"), &dangling).expect("link");
        for links in [Links::Refuse, Links::ToStreams] {
            for p in [&link, &dangling] {
                let e = write_output(p, links, |w| w.write_all(b"x")).expect_err("refused");
                assert!(e.to_string().contains("symbolic link"), "{e}");
            }
        }
        let e = open_no_follow(OpenOptions::new().append(true).create(true), &dangling)
            .expect_err("refused");
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&victim).expect("read"), "precious");
        assert!(!tmp.path().join("nowhere").exists());
    }

    #[cfg(unix)]
    #[test]
    fn directories_below_the_root_are_made_without_following_links() {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = tmp.path().join("ds");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&outside).expect("mkdir");
        create_dir_below(&root, &root.join("audits/a")).expect("made");
        assert!(root.join("audits/a").is_dir());
        std::os::unix::fs::symlink(&outside, root.join("plans")).expect("link");
        let e = create_dir_below(&root, &root.join("plans/x")).expect_err("refused");
        assert!(e.to_string().contains("plans is a symbolic link"), "{e}");
        assert!(!outside.join("x").exists());
        std::fs::write(root.join("file"), "").expect("write");
        assert!(create_dir_below(&root, &root.join("file/x")).is_err());
        assert!(create_dir_below(&root, &outside).is_err());
        assert!(create_dir_below(&root, &root.join("../outside")).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_pipe_is_written_in_place_and_stays_a_pipe() {
        use std::io::Read;
        let tmp = tempfile::tempdir().expect("tmp");
        let fifo = tmp.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .expect("mkfifo");
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut s = String::new();
                File::open(&fifo)
                    .expect("open")
                    .read_to_string(&mut s)
                    .expect("read");
                s
            })
        };
        write_output(&fifo, Links::Refuse, |w| w.write_all(b"through the pipe")).expect("wrote");
        assert_eq!(reader.join().expect("reader"), "through the pipe");
        use std::os::unix::fs::FileTypeExt;
        assert!(
            fifo.symlink_metadata()
                .expect("there")
                .file_type()
                .is_fifo()
        );
    }

    #[test]
    fn a_stale_temporary_file_is_cleared_and_a_held_one_kept() {
        let tmp = tempfile::tempdir().expect("tmp");
        let out = tmp.path().join("report.json");
        let stale = tmp.path().join(".report.json.abcdef.frameaudit-tmp");
        let other = tmp.path().join(".other.json.abcdef.frameaudit-tmp");
        for p in [&stale, &other] {
            std::fs::write(p, "half").expect("write");
            let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
            File::options()
                .write(true)
                .open(p)
                .and_then(|f| f.set_modified(old))
                .expect("age");
        }
        // One held by a live writer is left alone.
        let held = temp_for(&out).expect("temp");
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        held.as_file().set_modified(old).expect("age");
        write_output(&out, Links::Refuse, |w| w.write_all(b"{}")).expect("wrote");
        assert!(!stale.exists(), "the stale temporary file is cleared");
        assert!(other.exists(), "another output's is not");
        assert!(held.path().exists(), "a held one is not");
        assert_eq!(std::fs::read_to_string(&out).expect("read"), "{}");
        let name = held
            .path()
            .file_name()
            .and_then(|n| n.to_str())
            .expect("name")
            .to_string();
        assert!(
            name.starts_with(".report.json.") && name.ends_with(TEMP_SUFFIX),
            "{name}"
        );
    }

    #[test]
    fn a_long_name_keeps_its_temporary_name_short() {
        let tmp = tempfile::tempdir().expect("tmp");
        let out = tmp.path().join(format!("{}.json", "é".repeat(120)));
        write_output(&out, Links::Refuse, |w| w.write_all(b"1")).expect("wrote");
        assert_eq!(std::fs::read_to_string(&out).expect("read"), "1");
    }
}
