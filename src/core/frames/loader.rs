//! The background frame loader: locates, decodes and scales frames off the caller's
//! thread (the TUI draws while ffmpeg runs), and keeps the scaled images in a bounded LRU
//! cache. Requests are served newest first, because the frame the user looks at now
//! matters more than the one scrolled past; prefetches fill idle time and give way to any
//! new request.

use std::collections::{HashSet, VecDeque};
use std::num::NonZeroUsize;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use image::RgbImage;
use lru::LruCache;

use super::{FrameStore, load_image};

/// At most this many requests wait; older ones are dropped (the user has moved on).
const MAX_QUEUED: usize = 512;

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
}

impl FrameKey {
    /// The cache key: the position only says where to look, not what the frame is, so
    /// the same frame sampled by two configurations is decoded once.
    fn cache_key(&self) -> CacheKey {
        (self.video.clone(), self.index, self.max_side)
    }
}

type CacheKey = (String, u64, u32);

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
    /// Keys being decoded now (one per worker at most).
    in_flight: HashSet<CacheKey>,
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

    /// Drops every prefetch.
    fn clear_prefetch(&mut self) {
        for key in self.prefetch.drain(..) {
            self.queued.remove(&key.cache_key());
        }
    }
}

/// Decoding threads.
const WORKERS: usize = 2;

struct Shared {
    state: Mutex<State>,
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
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                cache: LruCache::new(NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN)),
                requests: VecDeque::new(),
                prefetch: VecDeque::new(),
                queued: HashSet::new(),
                in_flight: HashSet::new(),
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
        FrameLoader { shared, ffmpeg }
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
        self.shared.wake.notify_one();
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
            self.shared.wake.notify_one();
        }
    }
}

/// Stops the thread after the frame it is on; does not wait for it.
impl Drop for FrameLoader {
    fn drop(&mut self) {
        let mut st = self.shared.lock();
        st.shutdown = true;
        st.requests.clear();
        st.prefetch.clear();
        st.queued.clear();
        drop(st);
        self.shared.wake.notify_all();
    }
}

/// The loader thread: takes the newest request (else the next prefetch), loads it without
/// holding the lock, caches the result and calls `notify`.
fn work(shared: &Shared, store: &FrameStore, notify: &dyn Fn()) {
    loop {
        let key = {
            let mut st = shared.lock();
            loop {
                if st.shutdown {
                    return;
                }
                if let Some(k) = st.requests.pop_front().or_else(|| st.prefetch.pop_front()) {
                    break k;
                }
                st = shared.wake.wait(st).unwrap_or_else(|e| e.into_inner());
            }
        };
        let ck = key.cache_key();
        {
            let mut st = shared.lock();
            st.queued.remove(&ck);
            st.in_flight.insert(ck.clone());
        }
        let result = catch_unwind(AssertUnwindSafe(|| {
            let located = store.locate(&key.video, key.index, key.position);
            load_image(&located, key.max_side, store.ffmpeg())
        }))
        .unwrap_or_else(|_| {
            Err(format!(
                "frame {} of {} could not be decoded (internal error)",
                key.index, key.video
            ))
        });
        {
            let mut st = shared.lock();
            st.in_flight.remove(&ck);
            st.cache.put(
                ck,
                Entry {
                    result: Arc::new(result),
                    without_position: key.position.is_none(),
                },
            );
        }
        notify();
    }
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
            shutdown: false,
            broken: None,
        };
        st.clear_prefetch();
        assert!(st.prefetch.is_empty() && st.queued.is_empty());
    }
}
