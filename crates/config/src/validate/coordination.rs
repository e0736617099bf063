//! `deployment.coordination_backend`, `[redis]` and `[memcached]`: a backend is chosen with what
//! it needs, and neither section is set where nothing reads it (a setting that does nothing
//! would let an operator believe instances share their throttles).

use crate::model::{Config, CoordinationBackend};
use crate::validate::Report;

/// The chosen backend is built and configured; `[redis].url` only with the Redis backend and
/// `[memcached].url` only with the Memcached one.
pub(super) fn coordination_backend_is_complete(config: &Config, report: &mut Report) {
    let backend = config.deployment.coordination_backend;
    let redis = &config.redis;
    if backend != CoordinationBackend::Redis && redis.url.is_some() {
        report.error(
            "redis.url",
            format!(
                "redis.url is set but deployment.coordination_backend = \"{}\" never reads it: \
                 set deployment.coordination_backend = \"redis\" to coordinate through Redis, \
                 or remove [redis]",
                backend.as_str()
            ),
        );
    }
    if backend != CoordinationBackend::Memcached && config.memcached.url.is_some() {
        report.error(
            "memcached.url",
            format!(
                "memcached.url is set but deployment.coordination_backend = \"{}\" never reads \
                 it: set deployment.coordination_backend = \"memcached\" to coordinate through \
                 Memcached, or remove [memcached]",
                backend.as_str()
            ),
        );
    }
    match backend {
        CoordinationBackend::Postgres => {}
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
        CoordinationBackend::Memcached => match config.memcached.address() {
            None => report.error(
                "memcached.url",
                "deployment.coordination_backend = \"memcached\" needs memcached.url (e.g. \
                 \"memcache://127.0.0.1:11211\", or SVC_MEMCACHED__URL)",
            ),
            Some(Err(why)) => report.error("memcached.url", why),
            Some(Ok(_)) => {}
        },
    }
    for (key, prefix) in [
        ("redis.key_prefix", &redis.key_prefix),
        ("memcached.key_prefix", &config.memcached.key_prefix),
    ] {
        if !is_plain_prefix(prefix) {
            report.error(
                key,
                format!("{key} must be 1 to 64 letters, digits, ':', '_', '-' or '.'"),
            );
        }
    }
}

/// Short and plain: keys stay within Memcached's 250 bytes and free of spaces and control
/// characters, and a prefix cannot be mistaken for part of a key.
fn is_plain_prefix(prefix: &str) -> bool {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, ':' | '_' | '-' | '.');
    !prefix.is_empty() && prefix.len() <= 64 && prefix.chars().all(allowed)
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
        assert!(messages(&config)[0].contains("needs memcached.url"));
    }

    #[test]
    fn memcached_gets_a_plain_url_and_is_never_set_where_nothing_reads_it() {
        let mut config = Config::default();
        config.memcached.url = Some("memcache://127.0.0.1:11211".into());
        let found = messages(&config);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("memcached.url")
                && found[0].contains("\"postgres\" never reads it"),
            "{found:?}"
        );

        config.deployment.coordination_backend = CoordinationBackend::Redis;
        config.redis.url = Some(SecretUrl::parse("redis://127.0.0.1:6379/0").unwrap());
        let found = messages(&config);
        assert!(
            found.len() == 1 && found[0].contains("\"redis\" never reads it"),
            "{found:?}"
        );

        config.deployment.coordination_backend = CoordinationBackend::Memcached;
        let found = messages(&config);
        assert!(
            found.len() == 1 && found[0].starts_with("redis.url"),
            "[redis] is refused with the Memcached backend: {found:?}"
        );
        config.redis.url = None;
        assert!(messages(&config).is_empty(), "{:?}", messages(&config));

        for bad in ["127.0.0.1:11211", "memcache://u:pw@127.0.0.1:11211"] {
            config.memcached.url = Some(bad.into());
            let found = messages(&config);
            assert!(
                found.len() == 1 && found[0].contains("must be memcache://host[:port]"),
                "{bad}: {found:?}"
            );
        }
        config.memcached.url = None;
        assert!(messages(&config)[0].contains("needs memcached.url"));
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
            config.redis.key_prefix = "svc:".to_owned();
            config.memcached.key_prefix = prefix.to_owned();
            let found = messages(&config);
            assert_eq!(found.is_empty(), ok, "{prefix:?}");
            assert!(
                found.iter().all(|m| m.starts_with("memcached.key_prefix")),
                "{found:?}"
            );
            config.memcached.key_prefix = "svc:".to_owned();
        }
    }
}
