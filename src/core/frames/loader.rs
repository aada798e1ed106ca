//! The background frame loader: locates, decodes and scales frames off the caller's
//! thread (the TUI draws while ffmpeg runs), and keeps the scaled images in a bounded LRU
//! cache. Requests are served newest first, because the frame the user looks at now
//! matters more than the one scrolled past; prefetches fill idle time and give way to any
//! new request. Frames of raw videos that need ffmpeg go to a thread of their own, which
//! decodes all those waiting for one video in one batch, so image files never wait
//! behind a video decode.

use std::collections::{HashSet, VecDeque};
use std::num::NonZeroUsize;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use image::RgbImage;
use lru::LruCache;

use super::{FrameStore, Located, Wanted, decode, decode_video, load_image};

/// At most this many requests wait; older ones are dropped (the user has moved on).
const MAX_QUEUED: usize = 512;

/// At most this many frames of one video are decoded in one batch (a screenful of
/// thumbnails is 8 to 64).
const MAX_BATCH: usize = 64;

/// How long the video thread waits, once a frame is handed to it, before it starts: the
/// other frames of the same screen are still being located, and one ffmpeg batch for all
/// of them is much cheaper than two.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(15);

/// One frame at one size: what the loader is asked for and caches.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FrameKey {
    /// The video, as the items name it.
    pub video: String,
    /// The frame index in the video.
    pub index: u64,
    /// (i, N): the frame is the i-th (0-based) of the N frames a configuration sampled;
    /// needed by layouts that name files by position (VLMEvalKit).
    pub position: Option<(usize, usize)>,
    /// The longer side of the scaled image, in pixels.
    pub max_side: u32,
    /// The box (width, height, in pixels) the image is then fitted to, filling it with
    /// the aspect ratio kept: the slot on screen, so that a frame arrives at the size it is
    /// drawn at. `None` keeps the scaled image.
    pub fit: Option<(u32, u32)>,
    /// Where the harness saved this frame as it gave it to the model (VLMEvalKit's frame
    /// files), relative to the dataset; looked at first.
    pub saved: Option<String>,
}

impl FrameKey {
    /// The cache key: the position only says where to look, not what the frame is, so
    /// the same frame sampled by two configurations is decoded once.
    fn cache_key(&self) -> CacheKey {
        (self.video.clone(), self.index, self.max_side, self.fit)
    }
}

type CacheKey = (String, u64, u32, Option<(u32, u32)>);

/// A finished load.
type Loaded = Arc<Result<RgbImage, String>>;

struct Entry {
    result: Loaded,
    /// Whether the load had no position: its failure may then be a file only a position
    /// can name, so it does not answer a request that has one.
    without_position: bool,
}

impl Entry {
    fn answers(&self, key: &FrameKey) -> bool {
        !(self.result.is_err() && self.without_position && key.position.is_some())
    }
}

struct State {
    cache: LruCache<CacheKey, Entry>,
    /// Newest first.
    requests: VecDeque<FrameKey>,
    /// In the order given.
    prefetch: VecDeque<FrameKey>,
    /// The cache keys of both queues, for the duplicate check.
    queued: HashSet<CacheKey>,
    /// Keys being decoded now, or waiting for the video thread.
    in_flight: HashSet<CacheKey>,
    /// Frames of raw videos for the video thread, located: (key, located, whether it is a
    /// prefetch). Requests go to the front, prefetches to the back.
    video: VecDeque<(FrameKey, Located, bool)>,
    shutdown: bool,
    /// Why there is no worker thread, if it could not be started.
    broken: Option<String>,
}

impl State {
    fn cached(&mut self, key: &FrameKey) -> Option<Loaded> {
        self.cache
            .get(&key.cache_key())
            .filter(|e| e.answers(key))
            .map(|e| e.result.clone())
    }

    /// Whether `ck` is waiting or being loaded.
    fn pending(&self, ck: &CacheKey) -> bool {
        self.queued.contains(ck) || self.in_flight.contains(ck)
    }

    /// Drops every prefetch, also those waiting for the video thread.
    fn clear_prefetch(&mut self) {
        for key in self.prefetch.drain(..) {
            self.queued.remove(&key.cache_key());
        }
        let in_flight = &mut self.in_flight;
        self.video.retain(|(key, _, prefetch)| {
            if *prefetch {
                in_flight.remove(&key.cache_key());
            }
            !prefetch
        });
    }
}

/// Decoding threads.
const WORKERS: usize = 2;

struct Shared {
    state: Mutex<State>,
    /// Wakes the workers and the video thread; always notified to all, since a wake-up
    /// taken by a thread with nothing to do would be lost.
    wake: Condvar,
}

impl Shared {
    /// The state, also after a panic elsewhere: it stays consistent between statements.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Loads frames on a background thread with a cache of scaled images. No method blocks
/// on a decode: they only take a short lock.
pub struct FrameLoader {
    shared: Arc<Shared>,
    ffmpeg: bool,
    /// The store's decoding session, closed when the loader is dropped.
    session: Arc<super::decode::Session>,
}

impl FrameLoader {
    /// Starts the loader thread. `capacity` bounds the cache (in images, at least 1);
    /// `notify` is called on the loader thread each time a result lands, so a UI can
    /// redraw.
    pub fn new(
        store: FrameStore,
        capacity: usize,
        notify: impl Fn() + Send + Sync + 'static,
    ) -> FrameLoader {
        let ffmpeg = store.ffmpeg();
        let session = store.session();
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                cache: LruCache::new(NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN)),
                requests: VecDeque::new(),
                prefetch: VecDeque::new(),
                queued: HashSet::new(),
                in_flight: HashSet::new(),
                video: VecDeque::new(),
                shutdown: false,
                broken: None,
            }),
            wake: Condvar::new(),
        });
        // Two decoders: a screenful of thumbnails arrives in about half the time.
        let notify: Arc<dyn Fn() + Send + Sync> = Arc::new(notify);
        for n in 0..WORKERS {
            let (worker, store, notify) = (Arc::clone(&shared), store.clone(), Arc::clone(&notify));
            let spawned = std::thread::Builder::new()
                .name(format!("frameaudit-frames-{n}"))
                .spawn(move || work(&worker, &store, &*notify));
            if let Err(e) = spawned {
                shared.lock().broken = Some(format!("cannot start the frame loader: {e}"));
            }
        }
        let (worker, notify) = (Arc::clone(&shared), Arc::clone(&notify));
        let spawned = std::thread::Builder::new()
            .name("frameaudit-video".into())
            .spawn(move || work_video(&worker, &*notify));
        if let Err(e) = spawned {
            shared.lock().broken = Some(format!("cannot start the video decoder: {e}"));
        }
        FrameLoader {
            shared,
            ffmpeg,
            session,
        }
    }

    /// Whether frames of raw videos can be decoded (the store found ffmpeg).
    pub fn ffmpeg(&self) -> bool {
        self.ffmpeg
    }

    /// Asks for a frame. Returns at once: a cached key needs nothing, a pending one is
    /// not queued twice (only moved to the front), and a new one goes before every
    /// earlier request and drops all prefetches.
    pub fn request(&self, key: FrameKey) {
        let mut st = self.shared.lock();
        if st.cached(&key).is_some() {
            return;
        }
        if let Some(why) = st.broken.clone() {
            st.cache.put(
                key.cache_key(),
                Entry {
                    result: Arc::new(Err(why)),
                    without_position: false,
                },
            );
            return;
        }
        let ck = key.cache_key();
        if let Some(at) = st.video.iter().position(|(k, ..)| k.cache_key() == ck) {
            // Waiting for the video thread: now a request, first in line.
            if let Some(mut entry) = st.video.remove(at) {
                entry.2 = false;
                st.video.push_front(entry);
            }
            return;
        }
        if st.in_flight.contains(&ck) {
            return;
        }
        if st.queued.contains(&ck) {
            // Already asked for: newest first means it moves to the front.
            if let Some(at) = st.requests.iter().position(|k| k.cache_key() == ck) {
                if let Some(k) = st.requests.remove(at) {
                    st.requests.push_front(k);
                }
                return;
            }
            if let Some(at) = st.prefetch.iter().position(|k| k.cache_key() == ck) {
                st.prefetch.remove(at);
            }
            st.queued.remove(&ck);
        }
        st.clear_prefetch();
        st.queued.insert(ck);
        st.requests.push_front(key);
        while st.requests.len() > MAX_QUEUED {
            if let Some(old) = st.requests.pop_back() {
                st.queued.remove(&old.cache_key());
            }
        }
        drop(st);
        self.shared.wake.notify_all();
    }

    /// The result for `key`: `None` while it is pending (or was never requested).
    pub fn get(&self, key: &FrameKey) -> Option<Arc<Result<RgbImage, String>>> {
        self.shared.lock().cached(key)
    }

    /// Whether `key` is waiting or being loaded.
    pub fn is_pending(&self, key: &FrameKey) -> bool {
        self.shared.lock().pending(&key.cache_key())
    }

    /// Loads `keys` in order when there is nothing requested, replacing earlier
    /// prefetches. Keys cached or pending are skipped; any new request drops them all.
    pub fn prefetch(&self, keys: Vec<FrameKey>) {
        let mut st = self.shared.lock();
        if st.broken.is_some() {
            return;
        }
        st.clear_prefetch();
        for key in keys {
            let ck = key.cache_key();
            if st.pending(&ck) || st.cached(&key).is_some() {
                continue;
            }
            st.queued.insert(ck);
            st.prefetch.push_back(key);
        }
        let any = !st.prefetch.is_empty();
        drop(st);
        if any {
            self.shared.wake.notify_all();
        }
    }
}

/// Stops the threads after the frame they are on, without waiting for them, and kills
/// the ffmpeg or ffprobe runs under way (the store's session is closed: its copies decode
/// nothing more), so that none outlives the loader.
impl Drop for FrameLoader {
    fn drop(&mut self) {
        self.session.close();
        let mut st = self.shared.lock();
        st.shutdown = true;
        st.requests.clear();
        st.prefetch.clear();
        st.queued.clear();
        st.video.clear();
        drop(st);
        self.shared.wake.notify_all();
    }
}

/// The loader thread: takes the newest request (else the next prefetch), loads it without
/// holding the lock, caches the result and calls `notify`.
fn work(shared: &Shared, store: &FrameStore, notify: &dyn Fn()) {
    loop {
        let (key, prefetched) = {
            let mut st = shared.lock();
            loop {
                if st.shutdown {
                    return;
                }
                if let Some(k) = st.requests.pop_front() {
                    break (k, false);
                }
                if let Some(k) = st.prefetch.pop_front() {
                    break (k, true);
                }
                st = shared.wake.wait(st).unwrap_or_else(|e| e.into_inner());
            }
        };
        let ck = key.cache_key();
        let base = {
            let mut st = shared.lock();
            st.queued.remove(&ck);
            st.in_flight.insert(ck.clone());
            // The frame decoded already at its size (a prefetch, another slot): only fitted.
            key.fit.and_then(|_| {
                st.cached(&FrameKey {
                    fit: None,
                    ..key.clone()
                })
            })
        };
        if let Some(base) = base {
            let result = catch_unwind(AssertUnwindSafe(|| (*base).clone()))
                .unwrap_or_else(|_| Err(internal(&key)));
            finish(shared, &key, result);
            notify();
            continue;
        }
        let located = key
            .saved
            .as_deref()
            .and_then(|f| store.locate_saved(f))
            .unwrap_or_else(|| store.locate(&key.video, key.index, key.position));
        // This thread never runs ffmpeg, so image files never wait behind a decode: a
        // raw-video frame that must be decoded (not cached, or its cache file damaged)
        // goes to the video thread, and stays in flight meanwhile so it is not queued
        // twice. A video that timed out earlier is answered at once.
        let result = catch_unwind(AssertUnwindSafe(|| {
            if let Located::Video {
                video,
                cached,
                tools: Some(tools),
                ..
            } = &located
            {
                if let Some(why) = tools.timed_out(video) {
                    return Some(Err(why));
                }
                if decode::cache_is_fresh(cached, video) {
                    match load_image(&located, key.max_side, false) {
                        Ok(img) => return Some(Ok(img)),
                        // Decoded anew on the video thread.
                        Err(_) => {
                            let _ = std::fs::remove_file(cached);
                        }
                    }
                }
                return None;
            }
            Some(load_image(&located, key.max_side, false))
        }))
        .unwrap_or_else(|_| Some(Err(internal(&key))));
        let Some(result) = result else {
            let mut st = shared.lock();
            if !st.shutdown {
                let entry = (key.clone(), located.clone(), prefetched);
                if prefetched {
                    st.video.push_back(entry);
                } else {
                    st.video.push_front(entry);
                }
            }
            drop(st);
            shared.wake.notify_all();
            continue;
        };
        finish(shared, &key, result);
        notify();
    }
}

fn internal(key: &FrameKey) -> String {
    format!(
        "frame {} of {} could not be decoded (internal error)",
        key.index, key.video
    )
}

/// Caches the result of `key` and takes it out of flight.
fn finish(shared: &Shared, key: &FrameKey, result: Result<RgbImage, String>) {
    // Fitted here, on the loader's thread, not on the screen's; the frame at its decoded
    // size is kept too, so that another slot (a resize, a prefetch) only fits it again.
    let (result, base) = match key.fit {
        Some((w, h)) => {
            let fitted = result
                .as_ref()
                .map(|img| super::decode::fit_within(img, w, h))
                .map_err(Clone::clone);
            (fitted, Some(result))
        }
        None => (result, None),
    };
    let ck = key.cache_key();
    let mut st = shared.lock();
    if let Some(base) = base {
        let bk = FrameKey {
            fit: None,
            ..key.clone()
        };
        if st.cached(&bk).is_none() {
            st.cache.put(
                bk.cache_key(),
                Entry {
                    result: Arc::new(base),
                    without_position: key.position.is_none(),
                },
            );
        }
    }
    st.in_flight.remove(&ck);
    st.cache.put(
        ck,
        Entry {
            result: Arc::new(result),
            without_position: key.position.is_none(),
        },
    );
}

/// The video thread: takes the first waiting raw-video frame and every other one of the
/// same video (up to [`MAX_BATCH`]), decodes those not cached yet in one batch, then
/// loads and scales each and calls `notify` for each.
fn work_video(shared: &Shared, notify: &dyn Fn()) {
    loop {
        {
            let mut st = shared.lock();
            while st.video.is_empty() && !st.shutdown {
                st = shared.wake.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            if st.shutdown {
                return;
            }
        }
        std::thread::sleep(SETTLE);
        let batch: Vec<(FrameKey, Located)> = {
            let mut st = shared.lock();
            let Some(first) = st.video.front().map(|(k, ..)| k.video.clone()) else {
                continue;
            };
            let mut batch = Vec::new();
            let mut rest = VecDeque::new();
            while let Some((key, located, prefetch)) = st.video.pop_front() {
                if key.video == first && batch.len() < MAX_BATCH {
                    batch.push((key, located));
                } else {
                    rest.push_back((key, located, prefetch));
                }
            }
            st.video = rest;
            batch
        };
        let decoded = catch_unwind(AssertUnwindSafe(|| decode_batch(&batch)))
            .unwrap_or_else(|_| batch.iter().map(|(k, _)| Err(internal(k))).collect());
        for ((key, located), outcome) in batch.iter().zip(decoded) {
            let result = outcome.and_then(|()| {
                catch_unwind(AssertUnwindSafe(|| {
                    // Decoded (or cached) by now: this only reads the cache file.
                    load_image(located, key.max_side, false)
                }))
                .unwrap_or_else(|_| Err(internal(key)))
            });
            finish(shared, key, result);
            notify();
        }
    }
}

/// Decodes the frames of `batch` (all of one video) that are not cached yet; one result
/// per frame.
fn decode_batch(batch: &[(FrameKey, Located)]) -> Vec<Result<(), String>> {
    let mut results: Vec<Result<(), String>> = vec![Ok(()); batch.len()];
    let mut wanted = Vec::new();
    let mut at = Vec::new();
    let mut target = None;
    for (i, (_, located)) in batch.iter().enumerate() {
        if let Located::Video {
            video,
            cached,
            index,
            frame_index,
            tools: Some(tools),
        } = located
            && !decode::cache_is_fresh(cached, video)
        {
            target.get_or_insert((video, frame_index, tools));
            wanted.push(Wanted {
                index: *index,
                cached: cached.clone(),
            });
            at.push(i);
        }
    }
    if let Some((video, frame_index, tools)) = target {
        for (i, r) in at
            .into_iter()
            .zip(decode_video(tools, video, frame_index, &wanted))
        {
            results[i] = r;
        }
    }
    results
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::dataset::DatasetMeta;
    use std::sync::mpsc;
    use std::time::Duration;

    fn key(video: &str, index: u64, position: Option<(usize, usize)>) -> FrameKey {
        FrameKey {
            video: video.into(),
            index,
            position,
            max_side: 64,
            fit: None,
            saved: None,
        }
    }

    #[test]
    fn failures_without_position_do_not_answer_positional_requests() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().to_path_buf();
        let store = FrameStore::from_parts(Some(root.clone()), &DatasetMeta::default(), &[])
            .with_ffmpeg(None);
        let (tx, rx) = mpsc::channel();
        let loader = FrameLoader::new(store, 8, move || {
            let _ = tx.send(());
        });
        loader.request(key("v", 5, None));
        rx.recv_timeout(Duration::from_secs(10)).expect("notified");
        assert!(loader.get(&key("v", 5, None)).is_some_and(|r| r.is_err()));
        // Only the VLMEvalKit name exists; a request with a position must look again.
        let frames = root.join("frames/v");
        std::fs::create_dir_all(&frames).expect("mkdir");
        image::RgbImage::new(4, 4)
            .save(frames.join("frame-2-of-3.jpg"))
            .expect("save");
        assert!(loader.get(&key("v", 5, Some((1, 3)))).is_none());
        loader.request(key("v", 5, Some((1, 3))));
        rx.recv_timeout(Duration::from_secs(10)).expect("notified");
        let r = loader.get(&key("v", 5, Some((1, 3)))).expect("loaded");
        assert!(r.is_ok(), "{r:?}");
    }

    #[test]
    fn a_new_request_drops_prefetches() {
        let mut st = State {
            cache: LruCache::new(NonZeroUsize::MIN),
            requests: VecDeque::new(),
            prefetch: VecDeque::from([key("a", 1, None)]),
            queued: HashSet::from([key("a", 1, None).cache_key()]),
            in_flight: HashSet::new(),
            video: VecDeque::new(),
            shutdown: false,
            broken: None,
        };
        st.clear_prefetch();
        assert!(st.prefetch.is_empty() && st.queued.is_empty());
    }
}
