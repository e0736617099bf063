//! Request throttling (`server.endpoint_throttle`): a token bucket per key (client id, client
//! address). In one process it is the GCRA of the `governor` crate, whose keys age out so a scan
//! of random client ids cannot grow memory without bound. With a shared counter
//! ([`SharedCounter`], the coordination backend) every instance draws from the same bucket, so
//! N instances admit the configured rate, not N times it; while the counter cannot be reached the
//! throttle follows its [`Outage`] rule.

use async_trait::async_trait;
use governor::clock::{Clock as _, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A token bucket kept outside the process, shared by every instance.
#[async_trait]
pub trait SharedCounter: Send + Sync {
    /// Takes one token from `key`'s bucket (`per_second` sustained, `burst` at once): `Ok(None)`
    /// when admitted, `Ok(Some(wait))` when refused, `Err` when the counter cannot be reached
    /// (the reason, for the logs).
    async fn take(
        &self,
        key: &str,
        per_second: u32,
        burst: u32,
    ) -> Result<Option<Duration>, String>;
}

/// What the throttle does while its shared counter cannot be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outage {
    /// Count in this process only (fail open: the rate is enforced per instance meanwhile).
    CountLocally,
    /// Refuse, asking the caller to retry in a second (fail closed).
    Refuse,
}

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
    settings: ThrottleSettings,
    shared: Option<(Arc<dyn SharedCounter>, Outage)>,
    /// Whether the shared counter answered last time: an outage is logged when it starts and
    /// when it ends, not on every request it lasts (this is the token endpoint's hot path).
    reachable: AtomicBool,
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
            settings,
            shared: None,
            reachable: AtomicBool::new(true),
        }
    }

    /// The same throttle counting in `counter`, shared by every instance, and following
    /// `outage` while the counter cannot be reached.
    #[must_use]
    pub fn shared(mut self, counter: Arc<dyn SharedCounter>, outage: Outage) -> Self {
        self.shared = Some((counter, outage));
        self
    }

    /// Admits a request for `key`, or says how long to wait.
    pub async fn check(&self, key: &str) -> Result<(), Duration> {
        if self.limiter.is_none() {
            return Ok(());
        }
        let Some((counter, outage)) = &self.shared else {
            return self.check_locally(key);
        };
        let ThrottleSettings {
            requests_per_second,
            burst,
            ..
        } = self.settings;
        match counter.take(key, requests_per_second, burst.max(1)).await {
            Ok(answer) => {
                if !self.reachable.swap(true, Ordering::Relaxed) {
                    tracing::info!("the shared throttle answers again");
                }
                answer.map_or(Ok(()), Err)
            }
            Err(reason) => {
                if self.reachable.swap(false, Ordering::Relaxed) {
                    tracing::warn!(%reason, ?outage, "the shared throttle cannot be reached");
                }
                match outage {
                    Outage::CountLocally => self.check_locally(key),
                    Outage::Refuse => Err(Duration::from_secs(1)),
                }
            }
        }
    }

    fn check_locally(&self, key: &str) -> Result<(), Duration> {
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

    #[tokio::test]
    async fn a_burst_is_admitted_then_refused_per_key_and_disabled_admits_all() {
        let throttle = Throttle::new(ThrottleSettings {
            enabled: true,
            requests_per_second: 1,
            burst: 3,
        });
        for _ in 0..3 {
            assert!(throttle.check("client:a").await.is_ok());
        }
        let wait = throttle.check("client:a").await.unwrap_err();
        assert!(
            wait > Duration::ZERO && wait <= Duration::from_secs(1),
            "{wait:?}"
        );
        assert!(
            throttle.check("client:b").await.is_ok(),
            "keys are independent"
        );
        let open = Throttle::new(ThrottleSettings {
            enabled: false,
            requests_per_second: 1,
            burst: 1,
        });
        for _ in 0..100 {
            assert!(open.check("x").await.is_ok());
        }
    }

    /// A counter that is never reachable, or always refuses.
    struct Fixed(Result<Option<Duration>, String>);

    #[async_trait]
    impl SharedCounter for Fixed {
        async fn take(&self, _: &str, _: u32, _: u32) -> Result<Option<Duration>, String> {
            self.0.clone()
        }
    }

    fn one_per_second_burst_two() -> Throttle {
        Throttle::new(ThrottleSettings {
            enabled: true,
            requests_per_second: 1,
            burst: 2,
        })
    }

    #[tokio::test]
    async fn a_shared_counter_decides_and_its_outage_follows_the_rule() {
        let refusing = one_per_second_burst_two().shared(
            Arc::new(Fixed(Ok(Some(Duration::from_millis(700))))),
            Outage::CountLocally,
        );
        assert_eq!(
            refusing.check("k").await,
            Err(Duration::from_millis(700)),
            "the shared bucket's answer wins over an empty local one"
        );
        let open = one_per_second_burst_two()
            .shared(Arc::new(Fixed(Err("down".into()))), Outage::CountLocally);
        assert!(open.check("k").await.is_ok());
        assert!(open.check("k").await.is_ok());
        assert!(open.check("k").await.is_err(), "counted locally meanwhile");
        let closed =
            one_per_second_burst_two().shared(Arc::new(Fixed(Err("down".into()))), Outage::Refuse);
        assert_eq!(closed.check("k").await, Err(Duration::from_secs(1)));
        let disabled = Throttle::new(ThrottleSettings {
            enabled: false,
            requests_per_second: 1,
            burst: 1,
        })
        .shared(Arc::new(Fixed(Err("down".into()))), Outage::Refuse);
        assert!(disabled.check("k").await.is_ok(), "off means off");
    }
}
