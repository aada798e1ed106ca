//! A background worker on which the newest request wins: requests wait in a slot of one,
//! so a request made while another waits replaces it, and the job running can ask whether
//! a newer one came in (to stop a long scan early). The audit screens run searches,
//! bootstrap intervals and the building of researcher views on such workers, so that the
//! screen never waits and never works on a question nobody asks any more.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, PoisonError};

/// What the job running may ask: whether a newer request came in since it started.
#[derive(Debug, Clone)]
pub struct Superseded {
    newest: Arc<AtomicU64>,
    mine: u64,
}

impl Superseded {
    /// A newer request is waiting (or running): this job's answer is no longer wanted.
    pub fn now(&self) -> bool {
        self.newest.load(Ordering::Relaxed) > self.mine
    }
}

/// A worker thread that runs the newest request it was given.
pub struct Latest<R> {
    /// The request waiting, if any (a newer one replaces it).
    slot: Arc<Mutex<Option<(u64, R)>>>,
    /// Wakes the thread: one message per request.
    wake: Sender<()>,
    /// Number of the newest request.
    newest: Arc<AtomicU64>,
}

impl<R: Send + 'static> Latest<R> {
    /// Starts a thread named `name` that runs `job` on each request it takes; a request
    /// replaced before it started never runs. Fails only when the system cannot start a
    /// thread.
    pub fn spawn(
        name: &str,
        mut job: impl FnMut(R, &Superseded) + Send + 'static,
    ) -> std::io::Result<Latest<R>> {
        let slot: Arc<Mutex<Option<(u64, R)>>> = Arc::new(Mutex::new(None));
        let newest = Arc::new(AtomicU64::new(0));
        let (wake, woken): (Sender<()>, Receiver<()>) = channel();
        let (taken, seen) = (slot.clone(), newest.clone());
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                while woken.recv().is_ok() {
                    let next = taken.lock().unwrap_or_else(PoisonError::into_inner).take();
                    // Several wakes for one request left in the slot: the first takes it.
                    let Some((mine, req)) = next else { continue };
                    let superseded = Superseded {
                        newest: seen.clone(),
                        mine,
                    };
                    job(req, &superseded);
                }
            })?;
        Ok(Latest { slot, wake, newest })
    }

    /// Asks for `req`; a request still waiting is dropped, and the one running learns it is
    /// superseded.
    pub fn request(&self, req: R) {
        let n = self.newest.fetch_add(1, Ordering::Relaxed) + 1;
        *self.slot.lock().unwrap_or_else(PoisonError::into_inner) = Some((n, req));
        // A stopped worker only means no answers; the screens stay usable without them.
        let _ = self.wake.send(());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;
    use std::time::Duration;

    #[test]
    fn a_request_waiting_is_replaced_and_the_running_one_learns_it() {
        let (started_tx, started) = channel();
        let (go_tx, go) = channel::<()>();
        let (done_tx, done) = channel();
        let w = Latest::spawn("test-latest", move |n: u32, s: &Superseded| {
            started_tx.send(n).expect("test alive");
            if n == 1 {
                // Hold the first job until the test has queued two more.
                go.recv().expect("test alive");
            }
            done_tx.send((n, s.now())).expect("test alive");
        })
        .expect("thread");
        w.request(1);
        assert_eq!(started.recv_timeout(Duration::from_secs(5)), Ok(1));
        w.request(2);
        w.request(3);
        go_tx.send(()).expect("worker alive");
        assert_eq!(
            done.recv_timeout(Duration::from_secs(5)),
            Ok((1, true)),
            "the running job sees it was superseded"
        );
        assert_eq!(
            done.recv_timeout(Duration::from_secs(5)),
            Ok((3, false)),
            "2 was replaced before it started; 3 is the newest"
        );
        assert!(
            done.recv_timeout(Duration::from_millis(200)).is_err(),
            "2 never runs"
        );
    }
}
