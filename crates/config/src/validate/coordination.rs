//! `deployment.coordination_backend` and `[redis]`: a backend is chosen with what it needs, and
//! `[redis]` is never set where nothing reads it (a setting that does nothing would let an
//! operator believe instances share their throttles).

use crate::model::{Config, CoordinationBackend};
use crate::validate::Report;

/// The chosen backend is built and configured; `[redis].url` only with the Redis backend.
pub(super) fn coordination_backend_is_complete(config: &Config, report: &mut Report) {
    let redis = &config.redis;
    match config.deployment.coordination_backend {
        CoordinationBackend::Postgres => {
            if redis.url.is_some() {
                report.error(
                    "redis.url",
                    "redis.url is set but deployment.coordination_backend = \"postgres\" never \
                     reads it: set deployment.coordination_backend = \"redis\" to coordinate \
                     through Redis, or remove [redis]",
                );
            }
        }
        CoordinationBackend::Redis => {
            if redis.url.is_none() {
                report.error(
                    "redis.url",
                    "deployment.coordination_backend = \"redis\" needs redis.url (e.g. \
                     \"redis://127.0.0.1:6379/0\", or SVC_REDIS__URL)",
                );
            }
            if let Some(url) = &redis.url
                && !matches!(
                    url::Url::parse(url.as_str())
                        .map(|u| u.scheme().to_owned())
                        .as_deref(),
                    Ok("redis" | "rediss")
                )
            {
                report.error(
                    "redis.url",
                    format!(
                        "redis.url = \"{}\" must be a redis:// or rediss:// URL",
                        url.redacted()
                    ),
                );
            }
        }
        CoordinationBackend::Memcached => report.error(
            "deployment.coordination_backend",
            "deployment.coordination_backend = \"memcached\" is not available in this version \
             (the Memcached coordination backend is not built yet): use \"postgres\" or \"redis\"",
        ),
    }
    let prefix = &redis.key_prefix;
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, ':' | '_' | '-' | '.');
    if prefix.is_empty() || prefix.len() > 64 || !prefix.chars().all(allowed) {
        report.error(
            "redis.key_prefix",
            "redis.key_prefix must be 1 to 64 letters, digits, ':', '_', '-' or '.'",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SecretUrl;
    use crate::validate::run;

    fn messages(config: &Config) -> Vec<String> {
        run(coordination_backend_is_complete, config)
            .errors
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn each_backend_gets_what_it_needs_and_nothing_it_ignores() {
        let mut config = Config::default();
        assert!(messages(&config).is_empty(), "postgres needs nothing");

        config.redis.url = Some(SecretUrl::parse("redis://:pw@127.0.0.1:6379/0").unwrap());
        let found = messages(&config);
        assert!(found[0].contains("never reads it"), "{found:?}");

        config.deployment.coordination_backend = CoordinationBackend::Redis;
        assert!(messages(&config).is_empty(), "{:?}", messages(&config));

        config.redis.url = Some(SecretUrl::parse("http://:pw@127.0.0.1:6379/0").unwrap());
        let found = messages(&config);
        assert!(found[0].contains("redis:// or rediss://"), "{found:?}");
        assert!(
            !found[0].contains("pw"),
            "the password is never shown: {found:?}"
        );

        config.redis.url = None;
        assert!(messages(&config)[0].contains("needs redis.url"));

        config.deployment.coordination_backend = CoordinationBackend::Memcached;
        assert!(messages(&config)[0].contains("not available in this version"));
    }

    #[test]
    fn key_prefixes_are_short_and_plain() {
        let mut config = Config::default();
        for (prefix, ok) in [
            ("svc:", true),
            ("prod.eu-1:svc_", true),
            ("", false),
            ("has space", false),
            ("new\nline", false),
            (&"x".repeat(65), false),
        ] {
            config.redis.key_prefix = prefix.to_owned();
            assert_eq!(messages(&config).is_empty(), ok, "{prefix:?}");
        }
    }
}
