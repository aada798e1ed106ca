//! Fuzzy search over the queue, off the UI thread. Each keystroke sends a request; the
//! worker keeps only the newest, abandons a scan as soon as a newer request arrives, and
//! searches only the previous matches when the query just grew (a longer query can only
//! match fewer rows). Typing therefore never waits on matching.
//!
//! A query is space-separated terms; a row matches when every term matches one of its
//! fields (fuzzily, smart case), in any order. Rows where every term is a whole field come
//! first, then rows where every term is inside a field, then the fuzzy rest, each in queue
//! order: `clip04` lists `clip04-q1` before `clip02-q4`, which it matches only fuzzily.

use std::sync::Arc;

use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;

pub use super::haystacks::FIELD_SEP;
use super::haystacks::Haystacks;
use super::latest::Latest;

/// What to search: the rows' texts, the query, and optionally the rows to search within.
#[derive(Clone)]
pub struct SearchRequest {
    /// Which request this is: a newer one has a larger number.
    pub generation: u64,
    /// Space-separated terms.
    pub query: String,
    /// The rows' texts.
    pub haystacks: Arc<Haystacks>,
    /// Earlier matches to narrow down (when the query extends the one they answer).
    pub within: Option<Arc<Vec<u32>>>,
}

/// The rows matching a query, in queue order (search filters the queue; it keeps its
/// ranking). A partial result holds the first matches of a scan still running.
#[derive(Debug, Clone)]
pub struct SearchResult {
    /// The generation of the request answered.
    pub generation: u64,
    /// The query answered.
    pub query: String,
    /// The matching rows, in queue order.
    pub matches: Arc<Vec<u32>>,
    /// The scan ended (else these are its first matches).
    pub complete: bool,
}

/// Whether every term of `query` matches some field of `text`.
fn matches(matcher: &SkimMatcherV2, text: &str, query: &str) -> bool {
    query.split_whitespace().all(|term| {
        text.split(FIELD_SEP).any(|field| {
            may_match(field, term) != Some(false) && matcher.fuzzy_match(field, term).is_some()
        })
    })
}

/// How closely a matching row answers `query`: 0 when every term is one of its fields, 1
/// when every term is inside one of them, 2 otherwise (same smart case as the matcher).
fn tier(text: &str, query: &str) -> u8 {
    let mut worst = 0;
    for term in query.split_whitespace() {
        let sensitive = term.chars().any(char::is_uppercase);
        let fold = |x: &str| {
            if sensitive {
                x.to_string()
            } else {
                x.to_lowercase()
            }
        };
        let t = fold(term);
        let best = text
            .split(FIELD_SEP)
            .map(|field| {
                let f = fold(field.trim());
                if f == t {
                    0
                } else if f.contains(&t) {
                    1
                } else {
                    2
                }
            })
            .min()
            .unwrap_or(2);
        worst = worst.max(best);
        if worst == 2 {
            break;
        }
    }
    worst
}

/// Matches enough to fill a screen: sent as soon as found, before the scan ends.
pub const FIRST_PAGE: usize = 200;

/// Whether `query`'s characters occur in `text` in order: necessary for a fuzzy match, and
/// much cheaper to test, so most non-matching rows never reach the scorer. `None` when the
/// query is not ASCII (then only the scorer decides).
fn may_match(text: &str, query: &str) -> Option<bool> {
    if !query.is_ascii() {
        return None;
    }
    // Smart case, as the matcher: case-sensitive only when the query has a capital.
    let sensitive = query.bytes().any(|b| b.is_ascii_uppercase());
    let mut q = query.bytes().filter(|b| *b != b' ').peekable();
    for b in text.bytes() {
        let Some(&want) = q.peek() else { break };
        let same = if sensitive {
            b == want
        } else {
            b.eq_ignore_ascii_case(&want)
        };
        if same {
            q.next();
        }
    }
    Some(q.peek().is_none())
}

/// Rows of `req` matching its query: whole-field hits, then substring hits, then fuzzy
/// ones, each in queue order; `None` if `cancelled` said stop before the end. `first_page`
/// receives the first [`FIRST_PAGE`] matches found, in queue order, as soon as they are.
pub fn search(
    req: &SearchRequest,
    cancelled: &dyn Fn() -> bool,
    first_page: &mut dyn FnMut(&[u32]),
) -> Option<Vec<u32>> {
    let matcher = SkimMatcherV2::default().smart_case();
    let mut hits: Vec<u32> = Vec::new();
    let mut tiers: Vec<u8> = Vec::new();
    let mut paged = false;
    let all: Vec<u32>;
    let mut buf = String::new();
    let rows: &[u32] = match &req.within {
        Some(rows) => rows,
        None => {
            all = (0..req.haystacks.len() as u32).collect();
            &all
        }
    };
    for (n, &i) in rows.iter().enumerate() {
        if n.is_multiple_of(2048) && cancelled() {
            return None;
        }
        let text = req.haystacks.text(i as usize, &mut buf);
        if matches(&matcher, text, &req.query) {
            hits.push(i);
            tiers.push(tier(text, &req.query));
            if !paged && hits.len() == FIRST_PAGE {
                paged = true;
                first_page(&hits);
            }
        }
    }
    // Stable: within a tier, the order scanned (the queue's, or the earlier result's).
    let mut ranked: Vec<(u8, u32)> = tiers.into_iter().zip(hits).collect();
    ranked.sort_by_key(|&(t, _)| t);
    Some(ranked.into_iter().map(|(_, i)| i).collect())
}

/// The character positions of `text` that match the terms of `query`, for highlighting.
pub fn match_positions(text: &str, query: &str) -> Vec<usize> {
    let matcher = SkimMatcherV2::default().smart_case();
    let mut out: Vec<usize> = query
        .split_whitespace()
        .filter_map(|term| matcher.fuzzy_indices(text, term))
        .flat_map(|(_, idx)| idx)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// A background search thread ([`Latest`]: the newest query wins).
pub struct Searcher {
    worker: Latest<SearchRequest>,
}

impl Searcher {
    /// Starts the worker; `reply` is called on the worker thread with each finished result.
    /// Fails only when the system cannot start a thread.
    pub fn spawn(reply: impl Fn(SearchResult) + Send + 'static) -> std::io::Result<Searcher> {
        let worker = Latest::spawn("frameaudit-search", move |req: SearchRequest, s| {
            let cancelled = || s.now();
            let mut page = |m: &[u32]| {
                reply(SearchResult {
                    generation: req.generation,
                    query: req.query.clone(),
                    matches: Arc::new(m.to_vec()),
                    complete: false,
                })
            };
            if let Some(matches) = search(&req, &cancelled, &mut page) {
                reply(SearchResult {
                    generation: req.generation,
                    query: req.query.clone(),
                    matches: Arc::new(matches),
                    complete: true,
                });
            }
        })?;
        Ok(Searcher { worker })
    }

    /// Asks for a search; any older request still running is abandoned.
    pub fn request(&self, req: SearchRequest) {
        self.worker.request(req);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(query: &str, hay: &[&str], within: Option<Vec<u32>>) -> SearchRequest {
        SearchRequest {
            generation: 1,
            query: query.into(),
            haystacks: Arc::new(Haystacks::plain(hay)),
            within: within.map(Arc::new),
        }
    }

    fn run(r: &SearchRequest) -> Option<Vec<u32>> {
        search(r, &|| false, &mut |_| {})
    }

    #[test]
    fn matches_in_queue_order_and_narrows() {
        let hay = [
            "clip01-q1 what colour",
            "clip02-q3 which shape",
            "clip10-q1 colour of square",
        ];
        let all = run(&req("colour", &hay, None)).expect("done");
        assert_eq!(all, vec![0, 2], "queue order");
        let narrowed = run(&req("colour sq", &hay, Some(all))).expect("done");
        assert_eq!(narrowed, vec![2]);
        assert_eq!(
            search(&req("colour", &hay, None), &|| true, &mut |_| {}),
            None,
            "a cancelled scan returns nothing"
        );
        assert_eq!(match_positions("clip01-q1", "c1"), vec![0, 5]);
        // Smart case: a capital makes the match case-sensitive.
        assert_eq!(
            run(&req("Colour", &hay, None)).expect("done"),
            Vec::<u32>::new()
        );
    }

    /// Whole-field and substring hits come before fuzzy ones (`clip04` is inside
    /// `clip04-q1`, only a subsequence of `clip02-q4`), each in queue order.
    #[test]
    fn whole_and_substring_hits_come_before_fuzzy_ones() {
        let row = |id: &str, model: &str| format!("{id}{FIELD_SEP}{model}{FIELD_SEP}");
        let hay = [
            row("clip02-q4", "orbit-2b"),
            row("clip04-q1", "lumen-7b"),
            row("clip04", "orbit-2b"),
            row("clip04-q2", "orbit-2b"),
            row("clip00-q4", "orbit-2b"),
        ];
        let hay: Vec<&str> = hay.iter().map(String::as_str).collect();
        assert_eq!(
            run(&req("clip04", &hay, None)).expect("done"),
            vec![2, 1, 3, 0, 4]
        );
        assert_eq!(
            run(&req("orbit clip04", &hay, None)).expect("done"),
            vec![2, 3, 0, 4]
        );
        // Narrowing an earlier result ranks again.
        let within = Some(vec![0, 3]);
        assert_eq!(run(&req("clip04", &hay, within)).expect("done"), vec![3, 0]);
    }

    #[test]
    fn every_term_matches_in_any_order_and_any_field() {
        let row = |id: &str, q: &str| {
            format!("{id}{FIELD_SEP}lumen-7b{FIELD_SEP}clips{FIELD_SEP}{q}{FIELD_SEP}")
        };
        let hay = [
            row("clip04-q1", "what does the camera orbit"),
            row("clip04-q2", "which colour"),
            row("clip05-q1", "the camera orbit"),
        ];
        let hay: Vec<&str> = hay.iter().map(String::as_str).collect();
        let hits = |q: &str| run(&req(q, &hay, None)).expect("done");
        assert_eq!(hits("clip04 orbit"), vec![0]);
        assert_eq!(hits("orbit clip04"), vec![0], "any order");
        assert_eq!(hits("  orbit   clip04 "), vec![0], "extra spaces");
        assert_eq!(hits("orbit lumen"), vec![0, 2], "any field");
        assert_eq!(hits("clip04 zebra"), Vec::<u32>::new(), "every term");
        // A term matches within one field: "7bc" would need lumen-7b then clips.
        assert_eq!(hits("7bc"), Vec::<u32>::new());
        assert_eq!(match_positions("clip04-q1", "q1 c"), vec![0, 7, 8]);
    }

    #[test]
    fn the_first_page_comes_before_the_end() {
        let hay: Vec<String> = (0..5000).map(|i| format!("row {i}")).collect();
        let hay: Vec<&str> = hay.iter().map(String::as_str).collect();
        let mut pages = Vec::new();
        let all = search(&req("row", &hay, None), &|| false, &mut |m| {
            pages.push(m.len())
        })
        .expect("done");
        assert_eq!(all.len(), 5000);
        assert_eq!(pages, vec![FIRST_PAGE]);
    }

    #[test]
    fn the_prefilter_never_rejects_a_match() {
        let texts = [
            "Where Does THIS clip-take place?",
            "a b c",
            "ünïcode text",
            "x_y z",
        ];
        let queries = [
            "wdt", "WDT", "w t p", "abc", "cba", "ünï", "xyz", "x z", "THIS", "this",
        ];
        let matcher = SkimMatcherV2::default().smart_case();
        for t in texts {
            for q in queries {
                if matcher.fuzzy_match(t, q).is_some() {
                    assert_ne!(may_match(t, q), Some(false), "{t:?} / {q:?}");
                }
            }
        }
        assert_eq!(may_match("abc", "cba"), Some(false));
    }

    #[test]
    fn worker_answers_and_drops_stale_requests() {
        let (tx, rx) = std::sync::mpsc::channel();
        let s = Searcher::spawn(move |r| {
            let _ = tx.send(r);
        })
        .expect("search thread");
        let texts: Vec<String> = (0..50_000)
            .map(|i| format!("item-{i} question {i}"))
            .collect();
        let hay = Arc::new(Haystacks::plain(&texts));
        for (g, q) in [(1, "item-4"), (2, "item-42"), (3, "item-4242")] {
            s.request(SearchRequest {
                generation: g,
                query: q.into(),
                haystacks: hay.clone(),
                within: None,
            });
        }
        // The last answer is the complete one for the newest query.
        let mut last = None;
        while let Ok(r) = rx.recv_timeout(std::time::Duration::from_secs(5)) {
            let done = r.generation == 3 && r.complete;
            last = Some(r);
            if done {
                break;
            }
        }
        let last = last.expect("a result");
        assert_eq!(
            (last.generation, last.query.as_str(), last.complete),
            (3, "item-4242", true)
        );
        assert!(last.matches.contains(&4242));
    }
}
