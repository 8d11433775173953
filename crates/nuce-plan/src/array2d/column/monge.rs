//! The concave (Monge) least-weight-subsequence layer that every column DP
//! is built from (module docs, "Beyond \[BBLRR01\]": Hirschberg–Larmore
//! \[HiLa87\], Galil–Giancarlo \[GG89\]).

/// One layer of the concave (Monge) 1D/1D dynamic program
/// `F(q) = min_{1 ≤ a < q} h(a, F) + w(a, q)` for `q = 1..=n`, where `h(a, F)`
/// may read `F[..=a]` (Hirschberg–Larmore monotone candidate queue with
/// binary search, `O(n log n)`).
///
/// Requires `w` to satisfy the quadrangle inequality, so that a later
/// candidate `b > a` that beats `a` at some `q` beats it at every `q' > q`.
/// Candidates with `h = ∞` are skipped. Returns `F` and the argmin `a` of each `q`.
pub(crate) fn monge_layer(
    n: usize,
    h: impl Fn(usize, &[f64]) -> f64,
    w: impl Fn(usize, usize) -> f64,
) -> (Vec<f64>, Vec<usize>) {
    let mut f = vec![f64::INFINITY; n + 1];
    let mut arg = vec![0usize; n + 1];
    let mut hv = vec![f64::INFINITY; n + 1];
    // Deque of (candidate a, first q where it is best), as a Vec plus head.
    let mut queue: Vec<(usize, usize)> = Vec::with_capacity(n);
    let mut head = 0usize;
    let val = |hv: &[f64], a: usize, q: usize| hv[a] + w(a, q);
    for q in 1..=n {
        // Candidate a = q − 1 becomes usable now (F[..q] known).
        let b = q - 1;
        if b >= 1 {
            hv[b] = h(b, &f);
            if hv[b].is_finite() {
                loop {
                    if queue.len() == head {
                        queue.push((b, q));
                        break;
                    }
                    let (a, start) = queue[queue.len() - 1];
                    let s = start.max(q);
                    if val(&hv, b, s) <= val(&hv, a, s) {
                        queue.pop();
                        continue;
                    }
                    // Smallest x in (s, n] where b beats a, if any.
                    let (mut lo, mut hi) = (s + 1, n + 1);
                    while lo < hi {
                        let mid = lo + (hi - lo) / 2;
                        if val(&hv, b, mid) <= val(&hv, a, mid) {
                            hi = mid;
                        } else {
                            lo = mid + 1;
                        }
                    }
                    if lo <= n {
                        queue.push((b, lo));
                    }
                    break;
                }
            }
        }
        while queue.len() > head + 1 && queue[head + 1].1 <= q {
            head += 1;
        }
        if let Some(&(a, _)) = queue.get(head) {
            f[q] = val(&hv, a, q);
            arg[q] = a;
        }
    }
    (f, arg)
}
