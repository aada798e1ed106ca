//! The background frame loader: locates, decodes and scales frames off the caller's
//! thread (the TUI draws while ffmpeg runs), and keeps the scaled images in a bounded LRU
//! cache. Requests are served newest first, because the frame the user looks at now
//! matters more than the one scrolled past; prefetches (the items the user opens next)
//! fill idle time behind every request, and a new list of them replaces the old. Frames of
//! raw videos that need ffmpeg go to a thread of their own, which decodes all the requests
//! waiting for one video in one batch (prefetches a few at a time, so that a request never
//! waits long behind them), so image files never wait behind a video decode.

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

/// At most this many prefetched frames are decoded in one batch: one GOP for each of the
/// two ffmpeg runs of a batch, so that a request made meanwhile (the annotator jumped
/// elsewhere) waits for one short decode at most, not for a whole item's.
const PREFETCH_BATCH: usize = 2;

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
    /// The cache keys of the last list given to [`FrameLoader::prefetch`], so that the
    /// same list given again changes nothing.
    prefetch_given: Vec<CacheKey>,
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
    /// Nothing cached or waiting; a cache of `capacity` images (at least 1).
    fn new(capacity: usize) -> State {
        State {
            cache: LruCache::new(NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN)),
            requests: VecDeque::new(),
            prefetch: VecDeque::new(),
            prefetch_given: Vec::new(),
            queued: HashSet::new(),
            in_flight: HashSet::new(),
            video: VecDeque::new(),
            shutdown: false,
            broken: None,
        }
    }

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

    /// [`FrameLoader::request`]; true when there is new work to wake the threads for.
    fn request(&mut self, key: FrameKey) -> bool {
        if self.cached(&key).is_some() {
            return false;
        }
        if let Some(why) = self.broken.clone() {
            self.cache.put(
                key.cache_key(),
                Entry {
                    result: Arc::new(Err(why)),
                    without_position: false,
                },
            );
            return false;
        }
        let ck = key.cache_key();
        if let Some(at) = self.video.iter().position(|(k, ..)| k.cache_key() == ck) {
            // Waiting for the video thread: now a request, first in line.
            if let Some(mut entry) = self.video.remove(at) {
                entry.2 = false;
                self.video.push_front(entry);
            }
            return false;
        }
        if self.in_flight.contains(&ck) {
            return false;
        }
        if self.queued.contains(&ck) {
            // Already asked for: newest first means it moves to the front.
            if let Some(at) = self.requests.iter().position(|k| k.cache_key() == ck) {
                if let Some(k) = self.requests.remove(at) {
                    self.requests.push_front(k);
                }
                return false;
            }
            if let Some(at) = self.prefetch.iter().position(|k| k.cache_key() == ck) {
                self.prefetch.remove(at);
            }
            self.queued.remove(&ck);
        }
        self.queued.insert(ck);
        self.requests.push_front(key);
        while self.requests.len() > MAX_QUEUED {
            if let Some(old) = self.requests.pop_back() {
                self.queued.remove(&old.cache_key());
            }
        }
        true
    }

    /// [`FrameLoader::prefetch`]; true when there is new work to wake the threads for.
    fn set_prefetch(&mut self, keys: Vec<FrameKey>) -> bool {
        if self.broken.is_some() {
            return false;
        }
        let given: Vec<CacheKey> = keys.iter().map(FrameKey::cache_key).collect();
        if given == self.prefetch_given {
            return false;
        }
        self.clear_prefetch();
        self.prefetch_given = given;
        for key in keys {
            let ck = key.cache_key();
            if self.pending(&ck) || self.cached(&key).is_some() {
                continue;
            }
            self.queued.insert(ck);
            self.prefetch.push_back(key);
        }
        !self.prefetch.is_empty()
    }

    /// The next key to load, the newest request else the next prefetch (and whether it is
    /// a prefetch), taken off its queue and put in flight in one step: a request for it
    /// made between the two would find it in neither and queue it a second time.
    fn take(&mut self) -> Option<(FrameKey, bool)> {
        let taken = match self.requests.pop_front() {
            Some(k) => (k, false),
            None => (self.prefetch.pop_front()?, true),
        };
        let ck = taken.0.cache_key();
        self.queued.remove(&ck);
        self.in_flight.insert(ck);
        Some(taken)
    }

    /// Drops every prefetch, also those waiting for the video thread.
    fn clear_prefetch(&mut self) {
        self.prefetch_given.clear();
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
            state: Mutex::new(State::new(capacity)),
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
    /// earlier request and every prefetch (which wait behind it, not dropped: the list of
    /// prefetches is the caller's to replace).
    pub fn request(&self, key: FrameKey) {
        if self.shared.lock().request(key) {
            self.shared.wake.notify_all();
        }
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
    /// prefetches: those not loaded yet that `keys` does not hold are dropped (the user
    /// moved elsewhere), also those waiting for the video thread. Keys cached or pending
    /// are skipped; the same list given again changes nothing.
    pub fn prefetch(&self, keys: Vec<FrameKey>) {
        if self.shared.lock().set_prefetch(keys) {
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
        let (key, prefetched, base) = {
            let mut st = shared.lock();
            let (key, prefetched) = loop {
                if st.shutdown {
                    return;
                }
                if let Some(taken) = st.take() {
                    break taken;
                }
                st = shared.wake.wait(st).unwrap_or_else(|e| e.into_inner());
            };
            // The frame decoded already at its size (a prefetch, another slot): only fitted.
            let base = key.fit.and_then(|_| {
                st.cached(&FrameKey {
                    fit: None,
                    ..key.clone()
                })
            });
            (key, prefetched, base)
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
        let (batch, prefetch) = take_batch(&mut shared.lock().video);
        if batch.is_empty() {
            continue;
        }
        let decoded = catch_unwind(AssertUnwindSafe(|| decode_batch(&batch, prefetch)))
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

/// The video thread's next batch, taken out of `waiting` (frames of raw videos, each with
/// whether it is a prefetch): the first frame and the others of its video of the same
/// kind. Requests of that video come all together (up to [`MAX_BATCH`]), without the
/// prefetches, whose decode would hold them back; prefetches come [`PREFETCH_BATCH`] at a
/// time, in the order given, so that a request waits little behind them. Says whether the
/// batch is of prefetches.
fn take_batch(
    waiting: &mut VecDeque<(FrameKey, Located, bool)>,
) -> (Vec<(FrameKey, Located)>, bool) {
    let Some((video, prefetch)) = waiting.front().map(|(k, _, p)| (k.video.clone(), *p)) else {
        return (Vec::new(), false);
    };
    let most = if prefetch { PREFETCH_BATCH } else { MAX_BATCH };
    let mut batch = Vec::new();
    let mut rest = VecDeque::new();
    while let Some((key, located, p)) = waiting.pop_front() {
        if key.video == video && p == prefetch && batch.len() < most {
            batch.push((key, located));
        } else {
            rest.push_back((key, located, p));
        }
    }
    *waiting = rest;
    (batch, prefetch)
}

/// Decodes the frames of `batch` (all of one video) that are not cached yet, at a low
/// priority when they are `prefetch`es; one result per frame.
fn decode_batch(batch: &[(FrameKey, Located)], prefetch: bool) -> Vec<Result<(), String>> {
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
        let tools = if prefetch {
            tools.clone().in_background()
        } else {
            tools.clone()
        };
        for (i, r) in at
            .into_iter()
            .zip(decode_video(&tools, video, frame_index, &wanted))
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
    fn clearing_drops_every_prefetch() {
        let mut st = State::new(1);
        assert!(st.set_prefetch(vec![key("a", 1, None)]));
        st.clear_prefetch();
        assert!(st.prefetch.is_empty() && st.queued.is_empty());
    }

    fn waiting(st: &State) -> Vec<u64> {
        st.prefetch.iter().map(|k| k.index).collect()
    }

    #[test]
    fn a_request_goes_first_and_leaves_the_prefetches_behind_it() {
        let mut st = State::new(8);
        assert!(st.set_prefetch(vec![key("next", 1, None), key("next", 2, None)]));
        assert!(st.request(key("now", 9, None)));
        assert_eq!(st.requests.front().map(|k| k.index), Some(9));
        assert_eq!(waiting(&st), [1, 2]);
        // A request for a prefetched frame takes it out of the prefetches.
        assert!(st.request(key("next", 2, None)));
        assert_eq!(waiting(&st), [1]);
        let requests: Vec<u64> = st.requests.iter().map(|k| k.index).collect();
        assert_eq!(requests, [2, 9]);
    }

    #[test]
    fn a_key_taken_by_a_worker_is_not_queued_again() {
        let mut st = State::new(8);
        assert!(st.request(key("v", 1, None)));
        let (taken, prefetched) = st.take().expect("one waits");
        assert_eq!((taken.index, prefetched), (1, false));
        // The same frame asked for again while it decodes: one load, one result.
        assert!(!st.request(key("v", 1, None)));
        assert!(st.requests.is_empty() && st.queued.is_empty());
        assert!(st.pending(&key("v", 1, None).cache_key()));
        assert!(st.take().is_none());
    }

    #[test]
    fn a_new_prefetch_list_replaces_the_old_one_and_the_same_list_changes_nothing() {
        let mut st = State::new(8);
        let list = |ix: &[u64]| ix.iter().map(|&i| key("v", i, None)).collect::<Vec<_>>();
        assert!(st.set_prefetch(list(&[1, 2, 3])));
        // The worker took frame 1: in flight, not queued.
        let (taken, prefetched) = st.take().expect("one waits");
        assert_eq!((taken.index, prefetched), (1, true));
        assert!(!st.set_prefetch(list(&[1, 2, 3])), "the same list again");
        assert_eq!(waiting(&st), [2, 3]);
        // The annotator jumped: the rows ahead are others.
        assert!(st.set_prefetch(list(&[7, 2, 1])));
        assert_eq!(waiting(&st), [7, 2], "1 is being loaded already");
        assert!(!st.queued.contains(&key("v", 3, None).cache_key()));
        // Frames waiting for the video thread are dropped with their list too.
        let located = Located::Missing(String::new());
        st.video
            .push_back((key("v", 8, None), located.clone(), true));
        st.video.push_back((key("v", 6, None), located, false));
        st.in_flight.insert(key("v", 8, None).cache_key());
        assert!(!st.set_prefetch(Vec::new()));
        assert!(st.prefetch.is_empty());
        let video: Vec<u64> = st.video.iter().map(|(k, ..)| k.index).collect();
        assert_eq!(video, [6], "the request stays");
        assert!(!st.pending(&key("v", 8, None).cache_key()));
    }

    #[test]
    fn the_video_thread_takes_requests_together_and_prefetches_a_few_at_a_time() {
        let located = Located::Missing(String::new());
        let entry = |v: &str, i: u64, prefetch: bool| (key(v, i, None), located.clone(), prefetch);
        let mut waiting = VecDeque::from([
            entry("a", 1, false),
            entry("b", 2, false),
            entry("a", 3, true),
            entry("a", 4, false),
            entry("a", 5, true),
            entry("a", 6, true),
            entry("a", 7, true),
        ]);
        let mut batches = Vec::new();
        loop {
            let (batch, prefetch) = take_batch(&mut waiting);
            if batch.is_empty() {
                break;
            }
            assert_eq!(prefetch, batch[0].0.index == 3 || batch[0].0.index == 6);
            let videos: Vec<&str> = batch.iter().map(|(k, _)| k.video.as_str()).collect();
            assert!(videos.iter().all(|v| *v == videos[0]), "{videos:?}");
            batches.push(batch.iter().map(|(k, _)| k.index).collect::<Vec<u64>>());
        }
        assert_eq!(batches, [vec![1, 4], vec![2], vec![3, 5], vec![6, 7]]);
    }
}
