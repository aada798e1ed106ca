//! A saved copy of a loaded response matrix, so a large dataset opens without parsing its
//! cells again (docs/cache.md).
//!
//! After a large file of cells has been read and checked, the finished matrix is written
//! to the user's cache directory. The next load of the same files reads it back instead,
//! when every file is as it was: same path, size, inode, modification and change times,
//! and the same bytes at its start and end. Anything else (a file changed, added or
//! removed; a cache written by another version; a cache cut short or damaged) and the
//! cache is ignored and the cells are read as usual. A cache is never the only copy of
//! anything: deleting it costs one slow start.
//!
//! Only loads without problems are saved: a load with warnings is read from its files every
//! time, so that its warnings are always those of the files.
//!
//! The caches together are held to [`LIMIT`]: after one is written, those used longest ago
//! are removed until the rest fit.

use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::core::column::{Floats, Ids, Lines};
use crate::core::load::CellFormat;
use crate::core::matrix::{
    Config, InputStats, Interner, Item, ItemIndex, RepColumns, ResponseMatrix, Task, starts_of,
};

/// Files of cells smaller than this in all are read from the files: they load fast anyway.
const MIN_BYTES: u64 = 64 << 20;
/// A file changed less than this long before it was read may change again within the
/// file system's clock tick without its times showing it: it is not cached.
const SETTLED: Duration = Duration::from_secs(2);
const MAGIC: &[u8; 8] = b"FAMATRIX";
/// The layout of the file; bumped with any change of what is written.
const LAYOUT: u32 = 7;
/// Bytes read at each end of a file for its stamp.
const SAMPLE: u64 = 64 << 10;

/// The limit of all the caches in the cache directory together: `FRAMEAUDIT_CACHE_LIMIT`,
/// a size (`4G`, `500M`...) or `off`; 4 GiB without it, the caches of about 20 datasets of
/// ten million cells.
pub const LIMIT: crate::core::limit::SizeLimit = crate::core::limit::SizeLimit {
    var: "FRAMEAUDIT_CACHE_LIMIT",
    default: 4 << 30,
};

static DISABLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Turns caching off for the rest of the process (`--no-cache`, benchmarks of parsing).
pub fn disable() {
    DISABLED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Where caches go: `FRAMEAUDIT_CACHE_DIR`, else `$XDG_CACHE_HOME/frameaudit` when that
/// is an absolute path, else `~/.cache/frameaudit`; `None` when caching is off
/// (`--no-cache`, or `FRAMEAUDIT_CACHE` set to `0` or `off`).
pub fn cache_dir() -> Option<PathBuf> {
    if DISABLED.load(std::sync::atomic::Ordering::Relaxed)
        || std::env::var("FRAMEAUDIT_CACHE").is_ok_and(|v| switch(&v) == Some(false))
    {
        return None;
    }
    cache_dir_from(|k| std::env::var_os(k))
}

/// [`cache_dir`] with the environment as a lookup, so that its fallbacks can be tested
/// without changing the process's variables.
fn cache_dir_from(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let nonempty = |k: &str| var(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = nonempty("FRAMEAUDIT_CACHE_DIR") {
        return Some(dir);
    }
    // The XDG base directory spec: a relative path there is invalid and is ignored, as if
    // unset (it would put the cache under whatever the working directory is).
    nonempty("XDG_CACHE_HOME")
        .filter(|d| d.is_absolute())
        .or_else(|| nonempty("HOME").map(|h| h.join(".cache")))
        .map(|d| d.join("frameaudit"))
}

/// Why a cache variable of the environment is not read as set, for each such variable:
/// `FRAMEAUDIT_CACHE` that is not a switch, `FRAMEAUDIT_CACHE_MIN_BYTES` or
/// `FRAMEAUDIT_CACHE_LIMIT` that is not a size.
pub fn problems() -> Vec<String> {
    problems_from(|k| std::env::var(k).ok())
}

/// [`problems`] with the environment as a lookup.
fn problems_from(var: impl Fn(&str) -> Option<String>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(v) = var("FRAMEAUDIT_CACHE")
        && switch(&v).is_none()
    {
        out.push(format!(
            "FRAMEAUDIT_CACHE={v:?} is not off, 0, on or 1: caching stays on"
        ));
    }
    if let Some(v) = var(MIN.var)
        && !matches!(MIN.parse(&v), Ok(Some(_)))
    {
        out.push(format!(
            "{}={v:?} is not a size such as 64M or 1G: inputs of {} MiB or more are cached",
            MIN.var,
            MIN_BYTES >> 20
        ));
    }
    out.extend(var(LIMIT.var).and_then(|v| LIMIT.problem_of(&v)));
    out
}

/// `FRAMEAUDIT_CACHE` as a switch: off (`0`, `off`), on (`1`, `on`, empty), in any case;
/// `None` for anything else.
fn switch(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "0" | "off" => Some(false),
        "" | "1" | "on" => Some(true),
        _ => None,
    }
}

/// The smallest input cached, as the variable gives it: a size (`64M`, bytes without a
/// unit); 64 MiB without one.
const MIN: crate::core::limit::SizeLimit = crate::core::limit::SizeLimit {
    var: "FRAMEAUDIT_CACHE_MIN_BYTES",
    default: MIN_BYTES,
};

/// The smallest input cached: `FRAMEAUDIT_CACHE_MIN_BYTES`, else 64 MiB.
fn min_bytes() -> u64 {
    std::env::var(MIN.var)
        .ok()
        .and_then(|v| MIN.parse(&v).ok().flatten())
        .unwrap_or(MIN_BYTES)
}

/// What is known of one input file when it is read.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    path: Vec<u8>,
    len: u64,
    ino: u64,
    dev: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    /// A hash of the first and last [`SAMPLE`] bytes.
    sample: u64,
}

impl Stamp {
    fn of(path: &Path) -> io::Result<Stamp> {
        let canon = std::fs::canonicalize(path)?;
        let meta = std::fs::metadata(&canon)?;
        if !meta.is_file() {
            return Err(io::Error::other("not a regular file"));
        }
        #[cfg(unix)]
        let (ino, dev, mtime, ctime) = {
            use std::os::unix::fs::MetadataExt;
            (
                meta.ino(),
                meta.dev(),
                (meta.mtime(), meta.mtime_nsec()),
                (meta.ctime(), meta.ctime_nsec()),
            )
        };
        #[cfg(not(unix))]
        let (ino, dev, mtime, ctime) = {
            let t = meta
                .modified()?
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default();
            let t = (t.as_secs() as i64, i64::from(t.subsec_nanos()));
            (0, 0, t, t)
        };
        Ok(Stamp {
            path: canon.as_os_str().as_encoded_bytes().to_vec(),
            len: meta.len(),
            ino,
            dev,
            mtime,
            ctime,
            sample: sample_hash(&canon, meta.len())?,
        })
    }

    /// The later of the modification and change times.
    fn changed(&self) -> SystemTime {
        let t = self.mtime.max(self.ctime);
        let secs = Duration::from_secs(t.0.max(0) as u64) + Duration::from_nanos(t.1.max(0) as u64);
        SystemTime::UNIX_EPOCH + secs
    }
}

fn sample_hash(path: &Path, len: u64) -> io::Result<u64> {
    use std::io::{Seek, SeekFrom};
    let mut f = std::fs::File::open(path)?;
    let mut h = Checksum::default();
    let mut buf = vec![0u8; SAMPLE.min(len) as usize];
    f.read_exact(&mut buf)?;
    h.add(&buf);
    if len > SAMPLE {
        f.seek(SeekFrom::Start(len - SAMPLE))?;
        f.read_exact(&mut buf)?;
        h.add(&buf);
    }
    h.add(&len.to_le_bytes());
    Ok(h.0)
}

/// A fast 64-bit hash of the bytes written, to tell a damaged cache from a good one.
#[derive(Default)]
struct Checksum(u64);

impl Checksum {
    fn add(&mut self, bytes: &[u8]) {
        let mut h = self.0;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes(c.try_into().unwrap_or_default());
            h = (h.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
        for &b in chunks.remainder() {
            h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
        self.0 = h;
    }
}

/// The files a load reads, with their stamps, and the cache that belongs to them.
#[derive(Debug)]
pub struct Inputs {
    files: Vec<PathBuf>,
    stamps: Vec<Stamp>,
    format: u8,
    settled: Duration,
    path: PathBuf,
}

impl Inputs {
    /// The cache of these files read in this format, when caching applies: a cache
    /// directory is set and the files are large enough.
    pub fn new(files: &[PathBuf], format: Option<CellFormat>) -> Option<Inputs> {
        Inputs::in_dir(&cache_dir()?, min_bytes(), SETTLED, files, format)
    }

    /// The cache of these files in `dir`, if they hold `min_bytes` or more; a file is
    /// cached only once it has not changed for `settled`.
    pub fn in_dir(
        dir: &Path,
        min_bytes: u64,
        settled: Duration,
        files: &[PathBuf],
        format: Option<CellFormat>,
    ) -> Option<Inputs> {
        let stamps: Vec<Stamp> = files
            .iter()
            .map(|f| Stamp::of(f))
            .collect::<io::Result<_>>()
            .ok()?;
        if stamps.iter().map(|s| s.len).sum::<u64>() < min_bytes {
            return None;
        }
        let format = match format {
            None => 0,
            Some(CellFormat::Cells) => 1,
            Some(CellFormat::PerItemCsv) => 2,
            Some(CellFormat::Parquet) => 3,
        };
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update([format]);
        for s in &stamps {
            h.update((s.path.len() as u64).to_le_bytes());
            h.update(&s.path);
        }
        let name: String = h.finalize()[..12]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Some(Inputs {
            files: files.to_vec(),
            stamps,
            format,
            settled,
            path: dir.join(format!("{name}.matrix")),
        })
    }

    /// The cache file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The matrix saved for these files, if there is one and it is theirs and whole.
    pub fn load(&self) -> Option<ResponseMatrix> {
        let file = crate::core::fsread::open(&self.path, CACHE).ok()?;
        let mut r = Reader {
            inner: BufReader::with_capacity(1 << 20, file.into_file()),
            sum: Checksum::default(),
        };
        let mut magic = [0u8; 8];
        r.bytes_into(&mut magic).ok()?;
        if &magic != MAGIC || r.u32().ok()? != LAYOUT || r.str().ok()? != env!("CARGO_PKG_VERSION")
        {
            return None;
        }
        if r.u8().ok()? != self.format || read_stamps(&mut r).ok()? != self.stamps {
            return None;
        }
        let m = read_matrix(&mut r).ok()?;
        let sum = r.sum.0;
        let stored = r.u64().ok()?;
        if stored != sum {
            return None;
        }
        let file = r.inner.into_inner();
        // The replicates' checks and index beside the cells' checks: at ten million
        // replicates they take as long (docs/cache.md).
        let (cells_ok, starts) = std::thread::scope(|s| {
            let reps = s.spawn(|| {
                let r = &m.replicates;
                // The index is built only from cells sorted and in range: none is a
                // damaged cache.
                replicates_valid(&m)
                    .then(|| starts_of(&r.cells.cell, m.n_cells()))
                    .filter(|starts| !starts.is_empty() || r.cells.is_empty())
            });
            (valid(&m), reps.join().ok().flatten())
        });
        let mut m = m;
        m.replicates.starts = starts.filter(|_| cells_ok)?;
        // Read now: the last to go when the caches pass their limit. Best effort.
        let now = std::fs::FileTimes::new().set_accessed(SystemTime::now());
        let _ = file.set_times(now);
        Some(m)
    }

    /// Saves `m` as the matrix of these files, when they have not changed since they were
    /// stamped and had settled by then ([`Stored::Unsettled`] otherwise). An error is a
    /// cache that could not be written (a folder that cannot be made or written, a full
    /// disk): the caller may say so, as the next start reads the files again.
    pub fn store(&self, m: &ResponseMatrix) -> io::Result<Stored> {
        let now = SystemTime::now();
        let settled = self.stamps.iter().all(|s| {
            now.duration_since(s.changed())
                .is_ok_and(|age| age >= self.settled)
        });
        if !settled {
            return Ok(Stored::Unsettled("an input changed a moment ago"));
        }
        // An input that cannot be stamped again went away or changed under the read: the
        // cache folder is not to blame.
        let Ok(again) = self
            .files
            .iter()
            .map(|f| Stamp::of(f))
            .collect::<io::Result<Vec<Stamp>>>()
        else {
            return Ok(Stored::Unsettled("an input went away while it was read"));
        };
        if again != self.stamps {
            return Ok(Stored::Unsettled("an input changed while it was read"));
        }
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let tmp = crate::core::fswrite::private_temp_for(&self.path)?;
        let mut w = Writer {
            inner: BufWriter::with_capacity(1 << 20, tmp.as_file()),
            sum: Checksum::default(),
        };
        w.bytes(MAGIC)?;
        w.u32(LAYOUT)?;
        w.str(env!("CARGO_PKG_VERSION"))?;
        w.u8(self.format)?;
        write_stamps(&mut w, &self.stamps)?;
        write_matrix(&mut w, m)?;
        let sum = w.sum.0;
        w.u64(sum)?;
        w.inner.flush()?;
        drop(w);
        tmp.as_file().sync_all()?;
        tmp.persist(&self.path).map_err(|e| e.error)?;
        if let Some(limit) = LIMIT.from_env() {
            prune(dir, limit, &self.path);
        }
        Ok(Stored::Written)
    }
}

/// What [`Inputs::store`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    /// The cache was written.
    Written,
    /// Nothing was written, as an input changed too lately to trust its stamps (why).
    Unsettled(&'static str),
}

/// Removes the caches in `dir` used longest ago (the later of their writing and their
/// last read) until those left hold at most `limit` bytes; never `keep`, the one just
/// written. Only regular files named as caches (`<hash>.matrix`) are counted and
/// removed, so a file of the user's or a link put there is left alone. Best effort: a
/// file that cannot be read or removed is passed over. Returns how many were removed.
pub fn prune(dir: &Path, limit: u64, keep: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut caches: Vec<(SystemTime, u64, PathBuf)> = entries
        .flatten()
        .filter(|e| is_cache_name(&e.file_name()))
        .filter_map(|e| {
            // The entry's own metadata: a link is not followed, and is not a file.
            let meta = e.metadata().ok().filter(std::fs::Metadata::is_file)?;
            let used = meta.modified().ok()?.max(meta.accessed().ok()?);
            Some((used, meta.len(), e.path()))
        })
        .collect();
    let mut total: u64 = caches.iter().map(|c| c.1).sum();
    caches.sort();
    let mut removed = 0;
    for (_, len, path) in caches {
        if total <= limit {
            break;
        }
        if path == keep {
            continue;
        }
        if std::fs::remove_file(&path).is_ok() {
            total -= len;
            removed += 1;
        }
    }
    removed
}

/// Whether `name` is a cache file's: 24 hex digits and `.matrix`.
fn is_cache_name(name: &std::ffi::OsStr) -> bool {
    name.to_str()
        .and_then(|n| n.strip_suffix(".matrix"))
        .is_some_and(|h| h.len() == 24 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A cache file is read whole into the matrix it holds.
const CACHE: crate::core::fsread::Limit = crate::core::fsread::Limit {
    bytes: 64 << 30,
    what: "a matrix cache",
};

struct Writer<W: Write> {
    inner: W,
    sum: Checksum,
}

impl<W: Write> Writer<W> {
    fn bytes(&mut self, b: &[u8]) -> io::Result<()> {
        self.sum.add(b);
        self.inner.write_all(b)
    }
    fn u8(&mut self, x: u8) -> io::Result<()> {
        self.bytes(&[x])
    }
    fn u32(&mut self, x: u32) -> io::Result<()> {
        self.bytes(&x.to_le_bytes())
    }
    fn u64(&mut self, x: u64) -> io::Result<()> {
        self.bytes(&x.to_le_bytes())
    }
    fn len(&mut self, n: usize) -> io::Result<()> {
        self.u64(n as u64)
    }
    fn str(&mut self, s: &str) -> io::Result<()> {
        self.blob(s.as_bytes())
    }
    fn blob(&mut self, b: &[u8]) -> io::Result<()> {
        self.len(b.len())?;
        self.bytes(b)
    }
    /// Fixed-width little-endian values, written in blocks.
    fn array<const N: usize, T: Copy>(
        &mut self,
        v: &[T],
        to: impl Fn(T) -> [u8; N],
    ) -> io::Result<()> {
        self.len(v.len())?;
        let mut buf = Vec::with_capacity(64 << 10);
        for chunk in v.chunks((64 << 10) / N) {
            buf.clear();
            chunk.iter().for_each(|&x| buf.extend_from_slice(&to(x)));
            self.bytes(&buf)?;
        }
        Ok(())
    }
    /// Rows of `N` numbers, as their numbers one after another.
    /// Written as [`Writer::array`] writes their numbers, in the same blocks (the checksum
    /// sees the same pieces), but never copied whole.
    fn rows<const N: usize>(
        &mut self,
        rows: impl ExactSizeIterator<Item = [u32; N]>,
    ) -> io::Result<()> {
        const BLOCK: usize = 64 << 10;
        self.len(rows.len() * N)?;
        let mut buf = Vec::with_capacity(BLOCK + 4 * N);
        for row in rows {
            row.iter()
                .for_each(|x| buf.extend_from_slice(&x.to_le_bytes()));
            if buf.len() >= BLOCK {
                self.bytes(&buf[..BLOCK])?;
                buf.drain(..BLOCK);
            }
        }
        if buf.is_empty() {
            return Ok(());
        }
        self.bytes(&buf)
    }
    fn strs<'a>(&mut self, names: impl ExactSizeIterator<Item = &'a str>) -> io::Result<()> {
        self.len(names.len())?;
        for n in names {
            self.str(n)?;
        }
        Ok(())
    }
}

struct Reader<R: Read> {
    inner: R,
    sum: Checksum,
}

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

impl<R: Read> Reader<R> {
    fn bytes_into(&mut self, buf: &mut [u8]) -> io::Result<()> {
        self.inner.read_exact(buf)?;
        self.sum.add(buf);
        Ok(())
    }
    fn u8(&mut self) -> io::Result<u8> {
        let mut b = [0u8; 1];
        self.bytes_into(&mut b)?;
        Ok(b[0])
    }
    fn u32(&mut self) -> io::Result<u32> {
        let mut b = [0u8; 4];
        self.bytes_into(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }
    fn u64(&mut self) -> io::Result<u64> {
        let mut b = [0u8; 8];
        self.inner.read_exact(&mut b)?;
        // The trailing checksum is read with this too: it is added only when it is data.
        Ok(u64::from_le_bytes(b))
    }
    fn counted_u64(&mut self) -> io::Result<u64> {
        let mut b = [0u8; 8];
        self.bytes_into(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }
    /// A length, refused past `max` (no allocation is sized by a damaged length).
    fn len(&mut self, max: u64) -> io::Result<usize> {
        let n = self.counted_u64()?;
        if n > max {
            return Err(bad("length out of range"));
        }
        Ok(n as usize)
    }
    fn blob(&mut self) -> io::Result<Vec<u8>> {
        let n = self.len(1 << 32)?;
        // Read in steps, so that a damaged length fails at the end of the file rather than
        // allocating it first.
        let mut v = Vec::with_capacity(n.min(1 << 20));
        while v.len() < n {
            let at = v.len();
            let k = (n - at).min(1 << 20);
            v.resize(at + k, 0);
            self.bytes_into(&mut v[at..])?;
        }
        Ok(v)
    }
    fn str(&mut self) -> io::Result<String> {
        String::from_utf8(self.blob()?).map_err(|_| bad("text is not UTF-8"))
    }
    fn array<const N: usize, T>(&mut self, from: impl Fn([u8; N]) -> T) -> io::Result<Vec<T>> {
        let n = self.len(1 << 40)?;
        let mut v = Vec::new();
        let mut chunk = vec![0u8; (64 << 10) / N * N];
        let mut left = n;
        while left > 0 {
            let k = left.min(chunk.len() / N);
            self.bytes_into(&mut chunk[..k * N])?;
            if v.is_empty() {
                // Grow to the length once the data is there, not before.
                v.reserve_exact(n);
            }
            v.extend(
                chunk[..k * N]
                    .chunks_exact(N)
                    .map(|c| from(c.try_into().unwrap_or([0; N]))),
            );
            left -= k;
        }
        Ok(v)
    }
    /// Rows written by [`Writer::rows`].
    fn rows<const N: usize>(&mut self) -> io::Result<Vec<[u32; N]>> {
        let flat = self.array(u32::from_le_bytes)?;
        if flat.len() % N != 0 {
            return Err(bad("rows cut short"));
        }
        Ok(flat
            .chunks_exact(N)
            .map(|c| std::array::from_fn(|i| c[i]))
            .collect())
    }
    fn strs(&mut self) -> io::Result<Vec<Box<str>>> {
        let n = self.len(1 << 32)?;
        (0..n)
            .map(|_| self.str().map(String::into_boxed_str))
            .collect()
    }
}

fn write_stamps<W: Write>(w: &mut Writer<W>, stamps: &[Stamp]) -> io::Result<()> {
    w.len(stamps.len())?;
    for s in stamps {
        w.blob(&s.path)?;
        for x in [s.len, s.ino, s.dev, s.sample] {
            w.u64(x)?;
        }
        for (a, b) in [s.mtime, s.ctime] {
            w.u64(a as u64)?;
            w.u64(b as u64)?;
        }
    }
    Ok(())
}

fn read_stamps<R: Read>(r: &mut Reader<R>) -> io::Result<Vec<Stamp>> {
    let n = r.len(1 << 20)?;
    (0..n)
        .map(|_| {
            let path = r.blob()?;
            let [len, ino, dev, sample] = [(); 4].map(|_| r.counted_u64());
            let [ma, mb, ca, cb] = [(); 4].map(|_| r.counted_u64());
            Ok(Stamp {
                path,
                len: len?,
                ino: ino?,
                dev: dev?,
                sample: sample?,
                mtime: (ma? as i64, mb? as i64),
                ctime: (ca? as i64, cb? as i64),
            })
        })
        .collect()
}

fn write_ids<W: Write>(w: &mut Writer<W>, ids: &Ids) -> io::Result<()> {
    match ids {
        Ids::U8(v) => {
            w.u8(1)?;
            w.blob(v)
        }
        Ids::U16(v) => {
            w.u8(2)?;
            w.array(v, u16::to_le_bytes)
        }
        Ids::U32(v) => {
            w.u8(4)?;
            w.array(v, u32::to_le_bytes)
        }
    }
}

fn read_ids<R: Read>(r: &mut Reader<R>) -> io::Result<Ids> {
    Ok(match r.u8()? {
        1 => Ids::U8(r.blob()?),
        2 => Ids::U16(r.array(u16::from_le_bytes)?),
        4 => Ids::U32(r.array(u32::from_le_bytes)?),
        _ => return Err(bad("id width")),
    })
}

fn write_floats<W: Write>(w: &mut Writer<W>, f: &Floats) -> io::Result<()> {
    let (codes, table, raw) = f.parts();
    write_ids(w, codes)?;
    w.array(table, f64::to_le_bytes)?;
    match raw {
        Some(v) => {
            w.u8(1)?;
            w.array(v, f64::to_le_bytes)
        }
        None => w.u8(0),
    }
}

fn read_floats<R: Read>(r: &mut Reader<R>) -> io::Result<Floats> {
    let codes = read_ids(r)?;
    let table = r.array(f64::from_le_bytes)?;
    let raw = match r.u8()? {
        0 => None,
        1 => Some(r.array(f64::from_le_bytes)?),
        _ => return Err(bad("float column")),
    };
    Floats::from_parts(codes, table, raw).ok_or_else(|| bad("float codes"))
}

fn write_lines<W: Write>(w: &mut Writer<W>, l: &Lines) -> io::Result<()> {
    match l.parts() {
        Ok((runs, len)) => {
            w.u8(0)?;
            w.u32(len)?;
            w.rows(runs.into_iter())
        }
        Err(plain) => {
            w.u8(1)?;
            w.array(plain, u32::to_le_bytes)
        }
    }
}

fn read_lines<R: Read>(r: &mut Reader<R>) -> io::Result<Lines> {
    match r.u8()? {
        0 => {
            let len = r.u32()?;
            let runs: Vec<[u32; 4]> = r.rows()?;
            Lines::from_runs(&runs, len).ok_or_else(|| bad("line runs"))
        }
        1 => Ok(Lines::Plain(r.array(u32::from_le_bytes)?)),
        _ => Err(bad("line column")),
    }
}

fn write_interner<W: Write>(w: &mut Writer<W>, i: &Interner) -> io::Result<()> {
    w.strs(i.names_slice().iter().map(|s| &**s))
}

fn read_interner<R: Read>(r: &mut Reader<R>) -> io::Result<Interner> {
    Interner::from_names(r.strs()?).ok_or_else(|| bad("repeated name"))
}

fn write_matrix<W: Write>(w: &mut Writer<W>, m: &ResponseMatrix) -> io::Result<()> {
    for i in [&m.protocols, &m.models, &m.benchmarks] {
        write_interner(w, i)?;
    }
    w.blob(&m.bench_task.iter().map(|&t| t as u8).collect::<Vec<u8>>())?;
    w.len(m.items.len())?;
    for it in &m.items {
        w.u32(it.benchmark)?;
        w.str(&it.id)?;
    }
    w.rows(m.bench_items.iter().map(|r| [r.start, r.end]))?;
    w.len(m.configs.len())?;
    for c in &m.configs {
        w.u32(c.protocol)?;
        w.str(&c.name)?;
        w.u64(c.frames)?;
        w.u64(c.budget.to_bits())?;
        w.u64(c.pixels.map_or(0, |p| p.saturating_add(1)))?;
    }
    write_interner(w, &m.texts)?;
    let s = &m.stats;
    for x in [
        s.records,
        s.cells_valid,
        s.cells_invalid,
        s.zero_frame_cells,
    ] {
        w.u64(x)?;
    }
    w.len(m.files.len())?;
    for f in &m.files {
        w.blob(f.as_os_str().as_encoded_bytes())?;
    }
    for ids in m.id_columns() {
        write_ids(w, ids)?;
    }
    write_floats(w, &m.cell_value)?;
    write_floats(w, &m.cell_confidence)?;
    write_lines(w, &m.cell_line)?;
    w.rows(m.frame_spans.iter().map(|&(c, s, l)| [c, s, l]))?;
    w.array(&m.frame_pool, u64::to_le_bytes)?;
    w.rows(m.blind.iter().map(|&((p, mo, it), t)| [p, mo, it, t]))?;
    w.array(&m.order, u32::to_le_bytes)?;
    w.array(&m.group_start, |x: usize| (x as u64).to_le_bytes())?;
    // Replicates and the clusters cells give (docs/measures.md §16); the videos of
    // items.jsonl are not the cells' and are read again with it.
    let r = &m.replicates;
    write_interner(w, &r.names)?;
    write_replicate_cells(w, &r.cells)?;
    w.u64(r.read)?;
    w.u64(r.orphaned)?;
    w.array(&r.nuisances, u32::to_le_bytes)?;
    w.array(&r.item_cluster, u32::to_le_bytes)?;
    w.rows(
        r.frame_spans
            .iter()
            .map(|&((file, line), start, len)| [file, line, start, len]),
    )?;
    w.array(&r.frame_pool, u64::to_le_bytes)
}

fn read_matrix<R: Read>(r: &mut Reader<R>) -> io::Result<ResponseMatrix> {
    let mut m = ResponseMatrix {
        protocols: read_interner(r)?,
        models: read_interner(r)?,
        benchmarks: read_interner(r)?,
        ..Default::default()
    };
    m.bench_task = r
        .blob()?
        .into_iter()
        .map(|t| match t {
            0 => Ok(Task::Mcq),
            1 => Ok(Task::Open),
            _ => Err(bad("task")),
        })
        .collect::<io::Result<_>>()?;
    let n_items = r.len(1 << 32)?;
    m.items = (0..n_items)
        .map(|_| {
            Ok(Item {
                benchmark: r.u32()?,
                id: r.str()?.into_boxed_str(),
            })
        })
        .collect::<io::Result<_>>()?;
    m.item_index = ItemIndex::default();
    for i in 0..m.items.len() as u32 {
        let it = &m.items[i as usize];
        if m.item_index.find(&m.items, it.benchmark, &it.id).is_some() {
            return Err(bad("repeated item"));
        }
        m.item_index.insert(&m.items, i);
    }
    m.bench_items = r.rows()?.into_iter().map(|[a, b]| a..b).collect();
    let n_configs = r.len(1 << 32)?;
    m.configs = (0..n_configs)
        .map(|_| {
            Ok(Config {
                protocol: r.u32()?,
                name: r.str()?.into_boxed_str(),
                frames: r.counted_u64()?,
                budget: f64::from_bits(r.counted_u64()?),
                pixels: r.counted_u64()?.checked_sub(1),
            })
        })
        .collect::<io::Result<_>>()?;
    m.texts = read_interner(r)?;
    let [a, b, c, d] = [(); 4].map(|_| r.counted_u64());
    m.stats = InputStats {
        records: a?,
        cells_valid: b?,
        cells_invalid: c?,
        zero_frame_cells: d?,
    };
    let n_files = r.len(1 << 24)?;
    m.files = (0..n_files)
        .map(|_| {
            let b = r.blob()?;
            // Written from the path's bytes: a name that is not UTF-8 leaves the cache
            // unread (the files are read instead).
            let s = String::from_utf8(b).map_err(|_| bad("file name"))?;
            Ok(Arc::from(Path::new(&s)))
        })
        .collect::<io::Result<_>>()?;
    for ids in m.id_columns_mut() {
        *ids = read_ids(r)?;
    }
    m.cell_value = read_floats(r)?;
    m.cell_confidence = read_floats(r)?;
    m.cell_line = read_lines(r)?;
    m.frame_spans = r.rows()?.into_iter().map(|[c, s, l]| (c, s, l)).collect();
    m.frame_pool = r.array(u64::from_le_bytes)?;
    let blind: Vec<[u32; 4]> = r.rows()?;
    m.blind = blind
        .into_iter()
        .map(|[p, mo, it, t]| ((p, mo, it), t))
        .collect();
    m.order = r.array(u32::from_le_bytes)?;
    m.group_start = r
        .array(u64::from_le_bytes)?
        .into_iter()
        .map(|x| x as usize)
        .collect();
    let names = read_interner(r)?;
    let cells = read_replicate_cells(r)?;
    m.replicates = crate::core::matrix::Replicates {
        names,
        cells,
        read: r.counted_u64()?,
        orphaned: r.counted_u64()?,
        nuisances: r.array(u32::from_le_bytes)?,
        item_cluster: r.array(u32::from_le_bytes)?,
        starts: Vec::new(),
        video_cluster: Vec::new(),
        frame_spans: r
            .rows()?
            .into_iter()
            .map(|[file, line, start, len]| ((file, line), start, len))
            .collect(),
        frame_pool: r.array(u64::from_le_bytes)?,
    };
    Ok(m)
}

/// The replicates as columns, each in the narrowest width that holds it: their cells and
/// lines as steps from the replicate before (they are sorted by cell, and their lines
/// mostly rise by one or two), so that a million replicates take a few bytes each, not 28,
/// and are read back in a few passes without a copy of each row.
fn write_replicate_cells<W: Write>(w: &mut Writer<W>, cells: &RepColumns) -> io::Result<()> {
    let steps = |of: &[u32]| -> Ids {
        let mut last = 0u32;
        of.iter()
            .map(|&x| {
                let step = x.wrapping_sub(last);
                last = x;
                step
            })
            .collect()
    };
    write_ids(w, &steps(&cells.cell))?;
    write_ids(w, &steps(&cells.line))?;
    for ids in [&cells.replicate, &cells.nuisance, &cells.file] {
        write_ids(w, ids)?;
    }
    write_floats(w, &cells.value)
}

/// Replicates written by [`write_replicate_cells`]: the columns as read, the cells and
/// lines summed back from their steps, each on a thread of its own while the next columns
/// are read.
fn read_replicate_cells<R: Read>(r: &mut Reader<R>) -> io::Result<RepColumns> {
    fn sums(steps: Ids) -> Vec<u32> {
        let mut out = Vec::with_capacity(steps.len());
        let mut at = 0u32;
        steps.for_each_chunk(|steps| {
            out.extend(steps.iter().map(|&step| {
                at = at.wrapping_add(step);
                at
            }))
        });
        out
    }
    std::thread::scope(|s| {
        let cell = read_ids(r)?;
        let cell = s.spawn(move || sums(cell));
        let line = read_ids(r)?;
        let line = s.spawn(move || sums(line));
        let [replicates, nuisances, files] = [(); 3].map(|_| read_ids(r));
        let names = [replicates?, nuisances?, files?];
        let value = read_floats(r)?;
        let joined = |h: std::thread::ScopedJoinHandle<'_, Vec<u32>>| {
            h.join().map_err(|_| bad("replicate columns"))
        };
        let (cell, line) = (joined(cell)?, joined(line)?);
        RepColumns::from_parts(cell, value, names, line).ok_or_else(|| bad("replicate columns"))
    })
}

/// Whether every id of a loaded matrix points where it may, so that a damaged cache that
/// passed its checksum still cannot send a lookup out of bounds; the replicates apart
/// ([`replicates_valid`]).
fn valid(m: &ResponseMatrix) -> bool {
    let n = m.n_cells();
    let (n_items, n_configs, n_texts) = (m.items.len(), m.configs.len(), m.texts.len());
    let below = |ids: &Ids, max: usize| ids.len() == n && ids.iter().all(|i| (i as usize) < max);
    let text = |ids: &Ids| {
        ids.len() == n
            && ids
                .iter()
                .all(|i| i == crate::core::matrix::NO_TEXT || (i as usize) < n_texts)
    };
    let groups = m.protocols.len() * m.models.len();
    let mut seen = vec![false; n];
    let order_ok = m.order.len() == n
        && m.order.iter().all(|&c| {
            let c = c as usize;
            c < n && !std::mem::replace(&mut seen[c], true)
        });
    order_ok
        && below(&m.cell_item, n_items)
        && below(&m.cell_model, m.models.len())
        && below(&m.cell_config, n_configs)
        && below(&m.cell_file, m.files.len().max(1))
        && [
            &m.cell_pred,
            &m.cell_pred_norm,
            &m.cell_gold,
            &m.cell_source_tag,
            &m.cell_protocol_note,
        ]
        .into_iter()
        .all(text)
        && m.cell_value.len() == n
        && m.cell_confidence.len() == n
        && m.cell_line.len() == n
        && m.bench_task.len() == m.benchmarks.len()
        && m.items
            .iter()
            .all(|it| (it.benchmark as usize) < m.benchmarks.len())
        && m.bench_items.len() == m.benchmarks.len()
        && m.bench_items
            .iter()
            .all(|r| r.start <= r.end && r.end as usize <= n_items)
        && m.configs
            .iter()
            .all(|c| (c.protocol as usize) < m.protocols.len())
        && m.group_start.len() == groups + 1
        && m.group_start.first() == Some(&0)
        && m.group_start.windows(2).all(|w| w[0] <= w[1])
        && m.group_start.last() == Some(&n)
        && m.frame_spans.iter().all(|&(c, s, l)| {
            (c as usize) < n && (s as usize).saturating_add(l as usize) <= m.frame_pool.len()
        })
        && m.blind.windows(2).all(|w| w[0].0 < w[1].0)
        && m.blind.iter().all(|&((p, mo, it), t)| {
            (p as usize) < m.protocols.len()
                && (mo as usize) < m.models.len()
                && (it as usize) < n_items
                && (t as usize) < n_texts
        })
}

/// [`valid`] for the replicates: names and files that exist,
/// one cluster per item or none.
fn replicates_valid(m: &ResponseMatrix) -> bool {
    let r = &m.replicates;
    let name = |i: u32| (i as usize) < r.names.len();
    let c = &r.cells;
    // The cells' order and range are checked as their index is built (`starts_of`).
    c.replicate.iter().all(name)
        && c.nuisance.iter().all(name)
        && c.file.iter().all(|f| (f as usize) < m.files.len().max(1))
        && r.nuisances.iter().all(|&n| name(n))
        && (r.item_cluster.is_empty() || r.item_cluster.len() == m.items.len())
        && r.item_cluster
            .iter()
            .all(|&c| c == crate::core::matrix::NO_TEXT || name(c))
        && r.frame_spans.windows(2).all(|w| w[0].0 < w[1].0)
        && r.frame_spans
            .iter()
            .all(|&(_, start, len)| start as usize + len as usize <= r.frame_pool.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(vars: &[(&str, &str)]) -> Option<PathBuf> {
        cache_dir_from(|k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.into()))
    }

    /// Issue 37, item 16: a relative `XDG_CACHE_HOME` is ignored, as the XDG spec says;
    /// it put the cache under the working directory.
    #[test]
    fn a_relative_xdg_cache_home_is_ignored() {
        let home = [("HOME", "/home/a")];
        assert_eq!(dir(&home), Some("/home/a/.cache/frameaudit".into()));
        let xdg = [("XDG_CACHE_HOME", "/var/c"), home[0]];
        assert_eq!(dir(&xdg), Some("/var/c/frameaudit".into()));
        for rel in ["cache", "./c", "../c", ""] {
            let vars = [("XDG_CACHE_HOME", rel), home[0]];
            assert_eq!(dir(&vars), dir(&home), "{rel:?}: as when unset");
            assert_eq!(dir(&[("XDG_CACHE_HOME", rel)]), None, "{rel:?} and no HOME");
        }
        let own = [
            ("FRAMEAUDIT_CACHE_DIR", "mine"),
            ("XDG_CACHE_HOME", "/var/c"),
        ];
        assert_eq!(
            dir(&own),
            Some("mine".into()),
            "frameaudit's own variable first"
        );
    }

    #[test]
    fn variables_not_read_as_set_are_said() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(name, _)| *name == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert!(problems_from(env(&[("FRAMEAUDIT_CACHE", "off")])).is_empty());
        assert!(problems_from(env(&[("FRAMEAUDIT_CACHE", "1")])).is_empty());
        assert!(problems_from(env(&[("FRAMEAUDIT_CACHE", "OFF")])).is_empty());
        assert_eq!(switch(" Off "), Some(false));
        assert_eq!(switch("ON"), Some(true));
        assert!(problems_from(env(&[("FRAMEAUDIT_CACHE_MIN_BYTES", "10MB")])).is_empty());
        assert_eq!(MIN.parse("10MB"), Ok(Some(10 << 20)));
        let said = problems_from(env(&[
            ("FRAMEAUDIT_CACHE", "maybe"),
            ("FRAMEAUDIT_CACHE_MIN_BYTES", "lots"),
            ("FRAMEAUDIT_CACHE_LIMIT", "lots"),
        ]));
        assert_eq!(said.len(), 3, "{said:?}");
        assert_eq!(
            said[0],
            "FRAMEAUDIT_CACHE=\"maybe\" is not off, 0, on or 1: caching stays on"
        );
        assert!(
            said[1].starts_with("FRAMEAUDIT_CACHE_MIN_BYTES=\"lots\" is not a size"),
            "{said:?}"
        );
        assert!(said[2].contains("FRAMEAUDIT_CACHE_LIMIT"), "{said:?}");
    }
}
