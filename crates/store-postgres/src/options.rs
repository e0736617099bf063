//! Turning a PostgreSQL URL and [`PoolSettings`] into sqlx connect and pool options, enforcing
//! `require_ssl` on its own (not only in configuration validation) and never echoing the URL's
//! password in an error.

use crate::error::config_error;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions, PgSslMode};
use std::str::FromStr;
use std::time::Duration;
use svc_store::{PoolSettings, StoreError};

/// Connection options for `url`, with the per-connection settings of `settings` applied.
pub(crate) fn connect_options(
    url: &str,
    settings: &PoolSettings,
) -> Result<PgConnectOptions, StoreError> {
    // Parsed here first so each problem gets a precise message; url's errors never quote input.
    let parsed =
        url::Url::parse(url).map_err(|e| config_error(format!("invalid PostgreSQL URL: {e}")))?;
    let password = parsed.password().map(ToOwned::to_owned);
    let redact = |message: String| redact(message, password.as_deref());
    if !matches!(parsed.scheme(), "postgres" | "postgresql") {
        return Err(config_error(redact(format!(
            "invalid PostgreSQL URL: the scheme must be postgres:// or postgresql://, not {}://",
            parsed.scheme()
        ))));
    }
    let sslmode = parsed
        .query_pairs()
        .filter(|(key, _)| key == "sslmode" || key == "ssl-mode")
        .map(|(_, value)| value.to_ascii_lowercase())
        .last();
    if settings.require_ssl
        && let Some(mode) = sslmode.as_deref()
        && matches!(mode, "disable" | "allow" | "prefer")
    {
        return Err(config_error(redact(format!(
            "database.require_ssl is set but the PostgreSQL URL says sslmode={mode}, which allows \
             an unencrypted connection; use sslmode=require, verify-ca or verify-full"
        ))));
    }

    let mut options = PgConnectOptions::from_str(url).map_err(|e| {
        // sqlx nests its "error with configuration: " prefix; once is enough.
        let reason = e.to_string().replace("error with configuration: ", "");
        config_error(redact(format!("invalid PostgreSQL URL: {reason}")))
    })?;
    if settings.require_ssl && sslmode.is_none() {
        // Set explicitly so neither sqlx's default (prefer) nor PGSSLMODE can downgrade it.
        options = options.ssl_mode(PgSslMode::Require);
    }
    if options.get_application_name().is_none() {
        // Names the service's sessions in pg_stat_activity.
        options = options.application_name("svc");
    }
    Ok(options
        .statement_cache_capacity(settings.statement_cache_capacity)
        // Startup parameters, so every connection the pool ever opens has them from the start,
        // with no SET that a reset could lose. `0` disables, overriding any server default.
        .options([
            ("statement_timeout", timeout_ms(settings.statement_timeout)),
            (
                "idle_in_transaction_session_timeout",
                timeout_ms(settings.idle_in_transaction_timeout),
            ),
        ]))
}

/// Pool options for `settings`.
pub(crate) fn pool_options(settings: &PoolSettings) -> PgPoolOptions {
    // sqlx panics on a zero-sized pool or min > max; configuration validation should prevent
    // both, but a store must not bring the process down over them.
    let max = settings.max_connections.max(1);
    PgPoolOptions::new()
        .max_connections(max)
        .min_connections(settings.min_connections.min(max))
        .acquire_timeout(settings.connect_timeout)
        .idle_timeout(settings.idle_timeout)
        .max_lifetime(settings.max_lifetime)
        .test_before_acquire(settings.test_before_acquire)
}

/// A timeout as PostgreSQL milliseconds; `None` is `0` (no cap). A non-zero duration below one
/// millisecond rounds up rather than silently becoming "no cap".
fn timeout_ms(timeout: Option<Duration>) -> u128 {
    match timeout {
        None => 0,
        Some(d) if d.is_zero() => 0,
        Some(d) => d.as_millis().max(1),
    }
}

/// Removes the password (as written and percent-decoded) from a message, in case a parser
/// quoted it.
fn redact(message: String, password: Option<&str>) -> String {
    let Some(password) = password.filter(|p| !p.is_empty()) else {
        return message;
    };
    let decoded = percent_decode(password);
    let mut message = message.replace(password, "***");
    if !decoded.is_empty() {
        message = message.replace(&decoded, "***");
    }
    message
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes.get(i), bytes.get(i + 1), bytes.get(i + 2)) {
            (Some(b'%'), Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                let value = hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0);
                out.push(u8::try_from(value).unwrap_or(b'?'));
                i += 3;
            }
            (Some(&b), _, _) => {
                out.push(b);
                i += 1;
            }
            _ => break,
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_milliseconds_and_none_disables() {
        assert_eq!(timeout_ms(None), 0);
        assert_eq!(timeout_ms(Some(Duration::ZERO)), 0);
        assert_eq!(timeout_ms(Some(Duration::from_micros(10))), 1);
        assert_eq!(timeout_ms(Some(Duration::from_secs(30))), 30_000);
    }

    #[test]
    fn redaction_covers_encoded_and_decoded_passwords() {
        let msg = "bad p%40ss and p@ss".to_owned();
        assert_eq!(redact(msg, Some("p%40ss")), "bad *** and ***");
    }
}
