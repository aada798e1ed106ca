//! Fuzzy search over the queue, off the UI thread. Each keystroke sends a request; the
//! worker keeps only the newest, abandons a scan as soon as a newer request arrives, and
//! searches only the previous matches when the query just grew (a longer query can only
//! match fewer rows). Typing therefore never waits on matching.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};

use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;

/// What to search: the rows' texts, the query, and optionally the rows to search within.
#[derive(Clone)]
pub struct SearchRequest {
    pub generation: u64,
    pub query: String,
    pub haystacks: Arc<Vec<String>>,
    /// Earlier matches to narrow down (when the query extends the one they answer).
    pub within: Option<Arc<Vec<u32>>>,
}

/// The rows matching a query, best first.
#[derive(Debug, Clone)]
pub struct SearchResult {
    pub generation: u64,
    pub query: String,
    pub matches: Arc<Vec<u32>>,
}

/// Rows of `req` matching its query, best score first, ties in queue order; `None` if
/// `cancelled` said stop before the end.
pub fn search(req: &SearchRequest, cancelled: &dyn Fn() -> bool) -> Option<Vec<u32>> {
    let matcher = SkimMatcherV2::default().smart_case();
    let mut hits: Vec<(i64, u32)> = Vec::new();
    let mut scan = |i: u32, n: usize| -> bool {
        if n.is_multiple_of(4096) && cancelled() {
            return false;
        }
        if let Some(score) = matcher.fuzzy_match(&req.haystacks[i as usize], &req.query) {
            hits.push((score, i));
        }
        true
    };
    match &req.within {
        Some(rows) => {
            for (n, &i) in rows.iter().enumerate() {
                if !scan(i, n) {
                    return None;
                }
            }
        }
        None => {
            for i in 0..req.haystacks.len() {
                if !scan(i as u32, i) {
                    return None;
                }
            }
        }
    }
    hits.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    Some(hits.into_iter().map(|(_, i)| i).collect())
}

/// The character positions of `text` that match `query`, for highlighting.
pub fn match_positions(text: &str, query: &str) -> Vec<usize> {
    if query.is_empty() {
        return Vec::new();
    }
    SkimMatcherV2::default()
        .smart_case()
        .fuzzy_indices(text, query)
        .map(|(_, idx)| idx)
        .unwrap_or_default()
}

/// A background search thread.
pub struct Searcher {
    tx: Sender<SearchRequest>,
    latest: Arc<AtomicU64>,
}

impl Searcher {
    /// Starts the worker; `reply` is called on the worker thread with each finished result.
    pub fn spawn(reply: impl Fn(SearchResult) + Send + 'static) -> Searcher {
        let (tx, rx): (Sender<SearchRequest>, Receiver<SearchRequest>) = channel();
        let latest = Arc::new(AtomicU64::new(0));
        let seen = latest.clone();
        std::thread::Builder::new()
            .name("frameaudit-search".into())
            .spawn(move || {
                while let Ok(mut req) = rx.recv() {
                    // Only the newest request matters.
                    while let Ok(newer) = rx.try_recv() {
                        req = newer;
                    }
                    let cancelled = || seen.load(Ordering::Relaxed) > req.generation;
                    if let Some(matches) = search(&req, &cancelled) {
                        reply(SearchResult {
                            generation: req.generation,
                            query: req.query.clone(),
                            matches: Arc::new(matches),
                        });
                    }
                }
            })
            .ok();
        Searcher { tx, latest }
    }

    pub fn request(&self, req: SearchRequest) {
        self.latest.store(req.generation, Ordering::Relaxed);
        // A closed worker only means no results; the queue stays usable unfiltered.
        let _ = self.tx.send(req);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(query: &str, hay: &[&str], within: Option<Vec<u32>>) -> SearchRequest {
        SearchRequest {
            generation: 1,
            query: query.into(),
            haystacks: Arc::new(hay.iter().map(|s| s.to_string()).collect()),
            within: within.map(Arc::new),
        }
    }

    #[test]
    fn matches_best_first_and_narrows() {
        let hay = [
            "clip01-q1 what colour",
            "clip02-q3 which shape",
            "clip10-q1 colour of square",
        ];
        let all = search(&req("colour", &hay, None), &|| false).expect("done");
        assert_eq!(all.len(), 2);
        assert!(all.contains(&0) && all.contains(&2));
        let narrowed = search(&req("colour sq", &hay, Some(all)), &|| false).expect("done");
        assert_eq!(narrowed, vec![2]);
        assert_eq!(
            search(&req("colour", &hay, None), &|| true),
            None,
            "a cancelled scan returns nothing"
        );
        assert_eq!(match_positions("clip01-q1", "c1"), vec![0, 5]);
    }

    #[test]
    fn worker_answers_and_drops_stale_requests() {
        let (tx, rx) = channel();
        let s = Searcher::spawn(move |r| {
            let _ = tx.send(r);
        });
        let hay: Arc<Vec<String>> = Arc::new(
            (0..50_000)
                .map(|i| format!("item-{i} question {i}"))
                .collect(),
        );
        for (g, q) in [(1, "item-4"), (2, "item-42"), (3, "item-4242")] {
            s.request(SearchRequest {
                generation: g,
                query: q.into(),
                haystacks: hay.clone(),
                within: None,
            });
        }
        // The last answer is for the newest query; no answer comes after it.
        let mut last = None;
        while let Ok(r) = rx.recv_timeout(std::time::Duration::from_secs(5)) {
            let done = r.generation == 3;
            last = Some(r);
            if done {
                break;
            }
        }
        let last = last.expect("a result");
        assert_eq!((last.generation, last.query.as_str()), (3, "item-4242"));
        assert_eq!(last.matches.first(), Some(&4242));
    }
}
