//! Request throttling (`server.endpoint_throttle`): a token bucket per key (client id, client
//! address) using the GCRA of the `governor` crate. Keys age out so a scan of random client ids
//! cannot grow memory without bound.

use governor::clock::{Clock as _, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use std::num::NonZeroU32;
use std::time::Duration;

/// Throttle settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThrottleSettings {
    /// Whether throttling is on.
    pub enabled: bool,
    /// Sustained requests per second per key.
    pub requests_per_second: u32,
    /// Requests allowed at once above the sustained rate.
    pub burst: u32,
}

/// A keyed limiter; a disabled one admits everything.
pub struct Throttle {
    limiter: Option<DefaultKeyedRateLimiter<String>>,
    clock: DefaultClock,
}

impl std::fmt::Debug for Throttle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Throttle")
            .field("enabled", &self.limiter.is_some())
            .finish()
    }
}

impl Throttle {
    /// A throttle from settings (disabled when `enabled` is false or a rate is zero).
    pub fn new(settings: ThrottleSettings) -> Self {
        let limiter = match (
            settings.enabled,
            NonZeroU32::new(settings.requests_per_second),
        ) {
            (true, Some(rate)) => {
                let burst = NonZeroU32::new(settings.burst).unwrap_or(rate);
                Some(RateLimiter::keyed(
                    Quota::per_second(rate).allow_burst(burst),
                ))
            }
            _ => None,
        };
        Self {
            limiter,
            clock: DefaultClock::default(),
        }
    }

    /// Admits a request for `key`, or says how long to wait.
    pub fn check(&self, key: &str) -> Result<(), Duration> {
        let Some(limiter) = &self.limiter else {
            return Ok(());
        };
        if limiter.len() > 100_000 {
            limiter.retain_recent();
        }
        limiter
            .check_key(&key.to_owned())
            .map_err(|not_until| not_until.wait_time_from(self.clock.now()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_is_admitted_then_refused_per_key_and_disabled_admits_all() {
        let throttle = Throttle::new(ThrottleSettings {
            enabled: true,
            requests_per_second: 1,
            burst: 3,
        });
        for _ in 0..3 {
            assert!(throttle.check("client:a").is_ok());
        }
        let wait = throttle.check("client:a").unwrap_err();
        assert!(
            wait > Duration::ZERO && wait <= Duration::from_secs(1),
            "{wait:?}"
        );
        assert!(throttle.check("client:b").is_ok(), "keys are independent");
        let open = Throttle::new(ThrottleSettings {
            enabled: false,
            requests_per_second: 1,
            burst: 1,
        });
        for _ in 0..100 {
            assert!(open.check("x").is_ok());
        }
    }
}
