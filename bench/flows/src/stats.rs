//! Per-worker tallies and the one summary line run.sh parses.

use std::time::Duration;

/// What one worker (or all of them, merged) did during the measured window.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// Latency of every completed iteration, in microseconds.
    pub(crate) latencies_us: Vec<u64>,
    /// Iterations that failed on an unexpected answer.
    pub(crate) non2xx: u64,
    /// Iterations that failed on a transport error or a timeout.
    pub(crate) sockerr: u64,
    /// Length of the measured window.
    pub(crate) elapsed: Duration,
}

impl Tally {
    pub(crate) fn record(&mut self, took: Duration) {
        self.latencies_us
            .push(u64::try_from(took.as_micros()).unwrap_or(u64::MAX));
    }

    pub(crate) fn merge(&mut self, other: Tally) {
        self.latencies_us.extend(other.latencies_us);
        self.non2xx += other.non2xx;
        self.sockerr += other.sockerr;
    }

    /// Prints the `BENCH …` line of `bench/lib/wrk.lua`.
    pub(crate) fn print(mut self) {
        self.latencies_us.sort_unstable();
        let n = self.latencies_us.len();
        let pct = |p: usize| -> u64 {
            if n == 0 {
                return 0;
            }
            // Nearest rank.
            let rank = (p * n).div_ceil(100).clamp(1, n);
            self.latencies_us.get(rank - 1).copied().unwrap_or(0)
        };
        println!(
            "BENCH requests={} duration_us={} p50_us={} p99_us={} max_us={} non2xx={} sockerr={}",
            n,
            self.elapsed.as_micros(),
            pct(50),
            pct(99),
            self.latencies_us.last().copied().unwrap_or(0),
            self.non2xx,
            self.sockerr
        );
    }
}
