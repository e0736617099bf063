//! What follows an attempt: success, a retry after the schedule's delay (±10 % jitter, later
//! when the receiver asked with `Retry-After`), or exhaustion (CONTRACTS.md "Webhooks": 5 s,
//! 5 min, 30 min, 2 h, 5 h, 10 h, 10 h by default).

use std::time::Duration;
use svc_domain::Rng;
use svc_store::AttemptNext;
use time::OffsetDateTime;

/// The longest wait a receiver's `Retry-After` can impose: a day, so a hostile or broken answer
/// cannot park a delivery for years.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(86_400);

/// How one attempt ended, as far as the schedule cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// 2xx: the receiver accepted the delivery.
    Accepted {
        /// The status.
        status: u16,
    },
    /// Any other answer (3xx included: redirects are never followed).
    Rejected {
        /// The status.
        status: u16,
        /// The receiver's `Retry-After`, on 429 and 503.
        retry_after: Option<Duration>,
    },
    /// 410 Gone: the receiver wants no more deliveries; the subscription is switched off.
    Gone,
    /// No answer: refused target, connection failure or timeout.
    Failed {
        /// What happened, for the delivery history (never a secret or a URL).
        error: String,
    },
}

impl Outcome {
    /// The HTTP status, when the receiver answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Accepted { status } | Self::Rejected { status, .. } => Some(*status),
            Self::Gone => Some(410),
            Self::Failed { .. } => None,
        }
    }

    /// The line the history shows, when the attempt did not succeed.
    pub fn error(&self) -> Option<String> {
        match self {
            Self::Accepted { .. } => None,
            Self::Rejected { status, .. } if (300..400).contains(status) => Some(format!(
                "receiver answered {status}; redirects are not followed"
            )),
            Self::Rejected { status, .. } => Some(format!("receiver answered {status}")),
            Self::Gone => {
                Some("receiver answered 410 Gone; the subscription was switched off".into())
            }
            Self::Failed { error } => Some(error.clone()),
        }
    }
}

/// The retry schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    delays: Vec<Duration>,
}

impl RetryPolicy {
    /// A schedule of delays before the 2nd, 3rd, … attempt.
    pub fn new(delays: Vec<Duration>) -> Self {
        Self { delays }
    }

    /// Attempts a delivery gets before it is exhausted.
    pub fn max_attempts(&self) -> u32 {
        u32::try_from(self.delays.len())
            .unwrap_or(u32::MAX)
            .saturating_add(1)
    }

    /// What follows attempt `number` (1-based) ending with `outcome` at `now`.
    pub fn next(
        &self,
        outcome: &Outcome,
        number: u32,
        now: OffsetDateTime,
        rng: &dyn Rng,
    ) -> AttemptNext {
        let retry_after = match outcome {
            Outcome::Accepted { .. } => return AttemptNext::Succeeded,
            Outcome::Gone => return AttemptNext::Exhausted,
            Outcome::Rejected { retry_after, .. } => *retry_after,
            Outcome::Failed { .. } => None,
        };
        let index = usize::try_from(number.saturating_sub(1)).unwrap_or(usize::MAX);
        let Some(base) = self.delays.get(index) else {
            return AttemptNext::Exhausted;
        };
        let mut delay = jitter(*base, rng);
        // "Retry-After on 429/503 is honoured when it is later" (CONTRACTS.md).
        if let Some(asked) = retry_after {
            delay = delay.max(asked.min(MAX_RETRY_AFTER));
        }
        AttemptNext::RetryAt(now + delay)
    }
}

/// `base` scaled by a factor drawn uniformly from [0.9, 1.1], so retries of many deliveries
/// that failed together do not return together.
fn jitter(base: Duration, rng: &dyn Rng) -> Duration {
    let unit = (rng.next_u128() >> 64) as u64 as f64 / u64::MAX as f64;
    base.mul_f64(0.9 + 0.2 * unit)
}

/// Parses `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP-date, relative to `now`.
pub fn parse_retry_after(value: &str, now: std::time::SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_domain::SeededRandom;

    fn contract() -> RetryPolicy {
        RetryPolicy::new(
            [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000]
                .into_iter()
                .map(Duration::from_secs)
                .collect(),
        )
    }

    fn failed() -> Outcome {
        Outcome::Failed {
            error: "connection refused".into(),
        }
    }

    #[test]
    fn the_contract_schedule_gives_eight_attempts_over_about_28_hours_with_jitter() {
        let policy = contract();
        assert_eq!(policy.max_attempts(), 8);
        let now = OffsetDateTime::UNIX_EPOCH;
        let mut total = time::Duration::ZERO;
        for (number, base) in (1..=7).zip([5, 300, 1_800, 7_200, 18_000, 36_000, 36_000]) {
            let AttemptNext::RetryAt(at) =
                policy.next(&failed(), number, now, &SeededRandom::new(number.into()))
            else {
                panic!("attempt {number} should be retried");
            };
            let delay = (at - now).as_seconds_f64();
            let base = f64::from(base);
            assert!(
                delay >= base * 0.9 && delay <= base * 1.1,
                "attempt {number}: {delay}"
            );
            total += at - now;
        }
        let hours = total.as_seconds_f64() / 3600.0;
        assert!((24.0..33.0).contains(&hours), "{hours} h");
        assert_eq!(
            policy.next(&failed(), 8, now, &SeededRandom::new(1)),
            AttemptNext::Exhausted
        );
    }

    #[test]
    fn jitter_spreads_retries() {
        let policy = contract();
        let now = OffsetDateTime::UNIX_EPOCH;
        let times: std::collections::HashSet<_> = (0..50)
            .map(|seed| policy.next(&failed(), 2, now, &SeededRandom::new(seed)))
            .collect();
        assert!(
            times.len() > 40,
            "only {} distinct retry times",
            times.len()
        );
    }

    #[test]
    fn success_gone_and_retry_after_decide_as_the_contract_says() {
        let policy = contract();
        let now = OffsetDateTime::UNIX_EPOCH;
        let rng = SeededRandom::new(3);
        assert_eq!(
            policy.next(&Outcome::Accepted { status: 204 }, 1, now, &rng),
            AttemptNext::Succeeded
        );
        assert_eq!(
            policy.next(&Outcome::Gone, 1, now, &rng),
            AttemptNext::Exhausted
        );
        let later = Outcome::Rejected {
            status: 429,
            retry_after: Some(Duration::from_secs(120)),
        };
        assert_eq!(
            policy.next(&later, 1, now, &rng),
            AttemptNext::RetryAt(now + Duration::from_secs(120))
        );
        let sooner = Outcome::Rejected {
            status: 503,
            retry_after: Some(Duration::from_secs(1)),
        };
        let AttemptNext::RetryAt(at) = policy.next(&sooner, 2, now, &rng) else {
            panic!("retry")
        };
        assert!(
            at - now >= time::Duration::seconds(270),
            "the schedule wins when later"
        );
        let hostile = Outcome::Rejected {
            status: 429,
            retry_after: Some(Duration::from_secs(10_000_000)),
        };
        assert_eq!(
            policy.next(&hostile, 1, now, &rng),
            AttemptNext::RetryAt(now + MAX_RETRY_AFTER)
        );
    }

    #[test]
    fn retry_after_is_read_as_seconds_or_an_http_date() {
        let now = std::time::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        assert_eq!(
            parse_retry_after("120", now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::ZERO));
        let date = httpdate::fmt_http_date(now + Duration::from_secs(90));
        assert_eq!(parse_retry_after(&date, now), Some(Duration::from_secs(90)));
        let past = httpdate::fmt_http_date(now - Duration::from_secs(90));
        assert_eq!(parse_retry_after(&past, now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-5", now), None);
    }

    #[test]
    fn errors_for_the_history_say_what_happened() {
        assert_eq!(Outcome::Accepted { status: 200 }.error(), None);
        assert_eq!(
            Outcome::Rejected {
                status: 302,
                retry_after: None
            }
            .error()
            .unwrap(),
            "receiver answered 302; redirects are not followed"
        );
        assert_eq!(Outcome::Gone.status(), Some(410));
        assert_eq!(failed().status(), None);
    }
}
