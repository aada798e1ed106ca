//! The exact tests of docs/measures.md §16.3: McNemar's two-sided test of an edge's flips,
//! Fisher's one-sided test of its negative flips against the noise floor's, and the
//! Benjamini–Hochberg q-values of a family of them.
//!
//! Tails are sums of binomial or hypergeometric terms. Each term is formed from its
//! neighbour by their ratio, relative to the distribution's mode (taken as 1), so no
//! factorial is ever formed: terms lie in (0, 1], nothing overflows at any n, and a p-value
//! is a ratio of two such sums, accurate to a few ulps per term.

/// Terms below this, relative to the mode's, are left out of the sums (their sum is far
/// below the 1e-9 the report is held to, even over millions of them).
const NEGLIGIBLE: f64 = 1e-300;

/// The sums of a unimodal distribution's terms over `lo..=hi` below `cut` and from `cut`
/// on, each term relative to the term at `mode`; `ratio(x)` is `term(x + 1) / term(x)`.
fn split_sums(lo: u64, hi: u64, mode: u64, cut: u64, ratio: impl Fn(u64) -> f64) -> (f64, f64) {
    let (mut below, mut above) = (0.0f64, 0.0f64);
    let mut add = |x: u64, t: f64| {
        if x < cut {
            below += t;
        } else {
            above += t;
        }
    };
    add(mode, 1.0);
    let mut t = 1.0;
    let mut x = mode;
    while x < hi {
        t *= ratio(x);
        x += 1;
        if t < NEGLIGIBLE {
            break;
        }
        add(x, t);
    }
    let (mut t, mut x) = (1.0, mode);
    while x > lo {
        x -= 1;
        t /= ratio(x);
        if t < NEGLIGIBLE {
            break;
        }
        add(x, t);
    }
    (below, above)
}

/// McNemar's exact two-sided test of an edge with `b` flips one way and `c` the other:
/// `min(1, 2 · P(X ≤ min(b, c)))` for `X ~ Binomial(b + c, 1/2)`; 1 without flips.
pub fn mcnemar_p(b: u64, c: u64) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let small = b.min(c);
    let ratio = |x: u64| (n - x) as f64 / (x + 1) as f64;
    let (below, above) = split_sums(0, n, n / 2, small + 1, ratio);
    (2.0 * below / (below + above)).min(1.0)
}

/// Fisher's exact one-sided test of an edge's `b` negative flips among `n` items against
/// the floor's `neg` among `pairs`: `P(X ≥ b)` for the top-left cell `X` of the table
/// `[[b, n − b], [neg, pairs − neg]]` with its margins fixed (hypergeometric). `None`
/// without floor pairs.
pub fn fisher_greater_p(b: u64, n: u64, neg: u64, pairs: u64) -> Option<f64> {
    if pairs == 0 {
        return None;
    }
    let k = b + neg;
    let lo = k.saturating_sub(pairs);
    let hi = n.min(k);
    if b <= lo {
        return Some(1.0);
    }
    // The mode of the hypergeometric distribution, inside the support.
    let mode = ((k as u128 + 1) * (n as u128 + 1) / (n as u128 + pairs as u128 + 2)) as u64;
    let mode = mode.clamp(lo, hi);
    let ratio =
        |x: u64| ((n - x) as f64 * (k - x) as f64) / ((x + 1) as f64 * (pairs + x + 1 - k) as f64);
    let (below, above) = split_sums(lo, hi, mode, b, ratio);
    Some(above / (below + above))
}

/// Benjamini–Hochberg q-values of a family, in the order of `ps`; `None` entries are not
/// members. Members are ranked by `(p, key)` ascending (docs/measures.md §16.3 orders by
/// model, then edge), and `q_(r) = min over s ≥ r of min(1, p_(s) · m / s)`.
pub fn bh_q<K: Ord>(ps: &[(Option<f64>, K)]) -> Vec<Option<f64>> {
    let mut members: Vec<usize> = (0..ps.len()).filter(|&i| ps[i].0.is_some()).collect();
    let p = |i: usize| ps[i].0.unwrap_or(f64::NAN);
    members.sort_by(|&a, &b| p(a).total_cmp(&p(b)).then_with(|| ps[a].1.cmp(&ps[b].1)));
    let m = members.len() as f64;
    let mut q = vec![None; ps.len()];
    let mut running = f64::INFINITY;
    for (r, &i) in members.iter().enumerate().rev() {
        let s = (r + 1) as f64;
        running = running.min((p(i) * m / s).min(1.0));
        q[i] = Some(running);
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() <= 1e-12, "{a} != {b}");
    }

    /// Reference values from Python: the sums over exact integers (`math.comb`,
    /// `fractions.Fraction`), and scipy 1.17.1's `scipy.stats.binomtest(min(b, c), b + c,
    /// 0.5).pvalue`, which agrees to 1e-15 where both were computed.
    #[test]
    fn mcnemar_matches_exact_sums() {
        assert_eq!(mcnemar_p(0, 0), 1.0);
        assert_eq!(mcnemar_p(1, 0), 1.0);
        assert_eq!(mcnemar_p(7, 7), 1.0);
        close(mcnemar_p(3, 10), 0.09228515625);
        close(mcnemar_p(10, 3), 0.09228515625);
        close(mcnemar_p(0, 25), 5.960464477539063e-08);
        close(mcnemar_p(40, 60), 0.05688793364098079);
        close(mcnemar_p(1000, 1100), 0.030720707864242296);
        close(mcnemar_p(5000, 4800), 0.04440414879984629);
        // 2^200900 and C(200900, 100000) are far past any float; exact integers.
        close(mcnemar_p(100_000, 100_900), 0.04488614846147909);
    }

    /// Reference values from Python's exact integers (`math.comb`, `fractions.Fraction`)
    /// and scipy 1.17.1's `scipy.stats.fisher_exact([[b, n - b], [neg, pairs - neg]],
    /// alternative="greater").pvalue`; the first two are the worked example's (§16.3).
    #[test]
    fn fisher_matches_exact_sums() {
        close(fisher_greater_p(1, 4, 1, 12).expect("p"), 0.45);
        close(
            fisher_greater_p(1, 4, 1, 11).expect("p"),
            0.4761904761904762,
        );
        assert_eq!(fisher_greater_p(0, 4, 2, 11), Some(1.0));
        assert_eq!(fisher_greater_p(0, 50, 0, 60), Some(1.0));
        assert_eq!(fisher_greater_p(3, 10, 10, 10), Some(1.0));
        assert_eq!(fisher_greater_p(3, 10, 1, 0), None);
        close(
            fisher_greater_p(5, 20, 3, 40).expect("p"),
            0.07294519247145427,
        );
        close(
            fisher_greater_p(30, 100, 10, 200).expect("p"),
            7.617345913971935e-09,
        );
        close(
            fisher_greater_p(250, 1000, 120, 1000).expect("p"),
            3.380245732365261e-14,
        );
        close(
            fisher_greater_p(100, 100, 0, 5).expect("p"),
            1.035618589378534e-08,
        );
        // C(40000, 9000) is about 10^9000: exact integers.
        let p = fisher_greater_p(5000, 20_000, 4000, 20_000).expect("p");
        assert!((p - 2.5075516864935436e-33).abs() <= 1e-45, "{p}");
    }

    /// Against a direct evaluation of the definitions with exact binomial coefficients
    /// (u128) on every small case: the ratios lose nothing that matters.
    #[test]
    fn small_cases_equal_the_definitions() {
        fn choose(n: u64, k: u64) -> u128 {
            if k > n {
                return 0;
            }
            (0..k).fold(1u128, |c, i| c * u128::from(n - i) / u128::from(i + 1))
        }
        for b in 0..30u64 {
            for c in 0..30u64 {
                let n = b + c;
                let want = if n == 0 {
                    1.0
                } else {
                    let s: u128 = (0..=b.min(c)).map(|x| choose(n, x)).sum();
                    (2.0 * s as f64 / 2f64.powi(n as i32)).min(1.0)
                };
                assert!((mcnemar_p(b, c) - want).abs() < 1e-13, "{b} {c}");
            }
        }
        for n in 1..14u64 {
            for b in 0..=n {
                for pairs in 1..14u64 {
                    for neg in 0..=pairs {
                        let k = b + neg;
                        let all = choose(n + pairs, k);
                        let tail: u128 = (b..=n.min(k))
                            .map(|x| choose(n, x) * choose(pairs, k - x))
                            .sum();
                        let want = tail as f64 / all as f64;
                        let got = fisher_greater_p(b, n, neg, pairs).expect("p");
                        assert!((got - want).abs() < 1e-13, "{b} {n} {neg} {pairs}");
                    }
                }
            }
        }
    }

    /// The worked example's family of §16.3: p = (1, 0.45, 0.476...), q as its report.
    #[test]
    fn bh_ranks_by_p_then_key_and_takes_the_running_minimum() {
        let q = bh_q(&[
            (Some(1.0), 0),
            (Some(0.45), 1),
            (Some(0.47619047619047616), 2),
        ]);
        assert_eq!(
            q,
            [
                Some(1.0),
                Some(0.7142857142857142),
                Some(0.7142857142857142)
            ]
        );
        let q = bh_q(&[(None, 0), (Some(0.01), 1), (Some(0.04), 2), (Some(0.03), 3)]);
        assert_eq!(q[0], None);
        close(q[1].expect("q"), 0.03);
        close(q[2].expect("q"), 0.04);
        close(q[3].expect("q"), 0.04);
        // Equal p-values: ranked by key, the later rank's bound carried down.
        let q = bh_q(&[(Some(0.02), "b"), (Some(0.02), "a")]);
        assert_eq!(q, [Some(0.02), Some(0.02)]);
    }
}
