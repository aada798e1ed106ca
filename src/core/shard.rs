//! Splitting the audit queue among annotators: `--shard i/n [--overlap f]`.
//!
//! Every unit (model, benchmark, item) is placed by hashes of its key alone, so a split
//! is the same on every run and machine and does not depend on the order or the size of
//! the queue:
//! - the **overlap**: a unit whose overlap hash, as a fraction of 2^64, is below `f` is
//!   given to every shard (the items annotators share, for agreement);
//! - the others go to one shard by rendezvous hashing: the shard `j` (1..=n) with the
//!   highest hash of (unit, j). Going from n to n + 1 annotators moves only the units the
//!   new shard wins (about 1 in n + 1), and none between the old shards.
//!
//! The hash is SHA-256 over the key's parts, each followed by a NUL byte, which no
//! identifier holds; its first eight bytes, big-endian.

use sha2::{Digest, Sha256};

/// The most shards a queue is cut into. Placing a unit hashes it once per shard (about
/// 0.14 µs a hash), so the count costs time on every unit of the queue: at 1000 shards a
/// queue of 10 000 units takes 1.4 s to split, and a billion would never finish. No team
/// of annotators comes near a thousand.
pub const MAX_SHARDS: u32 = 1000;

/// One annotator's share of the queue.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shard {
    /// 1-based.
    pub index: u32,
    /// How many shards the queue is cut into.
    pub count: u32,
    /// Share of the units given to every shard, in [0, 1].
    pub overlap: f64,
}

impl Shard {
    /// Parses `i/n` (1 <= i <= n <= [`MAX_SHARDS`]) with an overlap share in [0, 1].
    pub fn parse(spec: &str, overlap: f64) -> Result<Shard, String> {
        let bad = || format!("expected i/n with 1 <= i <= n <= {MAX_SHARDS}, such as 2/5");
        let (i, n) = spec.split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || count == 0 || index > count || count > MAX_SHARDS {
            return Err(bad());
        }
        Ok(Shard {
            index,
            count,
            overlap: Self::overlap(overlap)?,
        })
    }

    /// Checks an overlap share: in [0, 1].
    pub fn overlap(share: f64) -> Result<f64, String> {
        if (0.0..=1.0).contains(&share) {
            Ok(share)
        } else {
            Err("expected a share between 0 and 1, such as 0.2".into())
        }
    }

    /// Whether the unit is in every shard.
    pub fn is_shared(&self, model: &str, benchmark: &str, item: &str) -> bool {
        let h = hash(&[
            b"overlap",
            model.as_bytes(),
            benchmark.as_bytes(),
            item.as_bytes(),
        ]);
        // The share of 2^64 below which a hash falls; f = 1 takes every unit.
        (h as f64) < self.overlap * 18_446_744_073_709_551_616.0
    }

    /// The shard (1..=n) a unit outside the overlap goes to.
    pub fn owner(count: u32, model: &str, benchmark: &str, item: &str) -> u32 {
        (1..=count)
            .max_by_key(|j| {
                (
                    hash(&[
                        b"shard",
                        &j.to_be_bytes(),
                        model.as_bytes(),
                        benchmark.as_bytes(),
                        item.as_bytes(),
                    ]),
                    *j,
                )
            })
            .unwrap_or(1)
    }

    /// Whether this shard holds the unit.
    pub fn holds(&self, model: &str, benchmark: &str, item: &str) -> bool {
        self.is_shared(model, benchmark, item)
            || Self::owner(self.count, model, benchmark, item) == self.index
    }

    /// How the queue header names the shard: `shard 2/5 (+20% shared)`.
    pub fn label(&self) -> String {
        if self.overlap > 0.0 {
            format!(
                "shard {}/{} (+{}% shared)",
                self.index,
                self.count,
                (self.overlap * 100.0).round()
            )
        } else {
            format!("shard {}/{}", self.index, self.count)
        }
    }
}

fn hash(parts: &[&[u8]]) -> u64 {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
        h.update([0u8]);
    }
    let d = h.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&d[..8]);
    u64::from_be_bytes(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(n: usize) -> Vec<(String, String, String)> {
        (0..n)
            .map(|i| (format!("m{}", i % 3), "b".to_string(), format!("q{i}")))
            .collect()
    }

    #[test]
    fn shards_are_disjoint_but_for_the_overlap_and_cover_everything() {
        let us = units(3000);
        let n = 4;
        let shards: Vec<Shard> = (1..=n)
            .map(|i| Shard::parse(&format!("{i}/{n}"), 0.2).expect("shard"))
            .collect();
        let mut shared = 0;
        for (m, b, i) in &us {
            let holders = shards.iter().filter(|s| s.holds(m, b, i)).count();
            if shards[0].is_shared(m, b, i) {
                shared += 1;
                assert_eq!(holders, n as usize);
            } else {
                assert_eq!(holders, 1);
            }
        }
        // About 20% shared, and the rest split about evenly.
        assert!((500..700).contains(&shared), "{shared}");
        for s in &shards {
            let own = us
                .iter()
                .filter(|(m, b, i)| s.holds(m, b, i) && !s.is_shared(m, b, i))
                .count();
            assert!((500..700).contains(&own), "{own}");
        }
    }

    #[test]
    fn adding_an_annotator_moves_units_only_to_the_new_shard() {
        let us = units(3000);
        let mut moved = 0;
        for (m, b, i) in &us {
            let before = Shard::owner(3, m, b, i);
            let after = Shard::owner(4, m, b, i);
            if before != after {
                assert_eq!(after, 4);
                moved += 1;
            }
        }
        assert!((600..900).contains(&moved), "{moved}");
    }

    #[test]
    fn placement_is_fixed_and_specs_are_checked() {
        // Fixed values (computed with Python's hashlib): a change of the hash would
        // reshuffle every project's shards.
        assert_eq!(hash(&[b"a"]), 0xffe9_aaea_a2a2_d504);
        assert_eq!(Shard::owner(3, "llava", "videomme", "001-1"), 3);
        assert_eq!(Shard::owner(5, "llava", "videomme", "001-1"), 3);
        // Its overlap hash is 0.888 of 2^64: shared from an overlap of 0.89 up.
        assert!(
            !Shard::parse("1/5", 0.88)
                .expect("ok")
                .is_shared("llava", "videomme", "001-1")
        );
        assert!(
            Shard::parse("1/5", 0.89)
                .expect("ok")
                .is_shared("llava", "videomme", "001-1")
        );
        assert!(Shard::parse("0/3", 0.0).is_err());
        assert!(Shard::parse("4/3", 0.0).is_err());
        assert!(Shard::parse("x", 0.0).is_err());
        assert!(Shard::parse("1/3", 1.5).is_err());
        assert_eq!(
            Shard::parse("2/5", 0.2).expect("ok").label(),
            "shard 2/5 (+20% shared)"
        );
        let all = Shard::parse("1/2", 1.0).expect("ok");
        assert!(all.holds("m", "b", "anything"));
    }
}
