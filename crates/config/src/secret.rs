//! Secret-bearing values: [`Secret`], [`DatabaseUrl`] and [`SecretUrl`].
//!
//! Their `Debug` and `Serialize` never reveal the secret, so `{:?}`, logs and `config check`
//! output are safe by construction; code that needs the value calls an explicit method.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use secrecy::{ExposeSecret, SecretString};
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What every redacted value prints as.
pub const REDACTED: &str = "<redacted>";

/// A secret string (password, token, API key). `Debug` and `Serialize` print `<redacted>`.
#[derive(Clone)]
pub struct Secret(SecretString);

impl Secret {
    /// Wraps a secret value.
    #[must_use]
    pub fn new(value: impl Into<String>) -> Self {
        Self(SecretString::from(value.into()))
    }

    /// The secret itself; call only where the value is used, never to log it.
    #[must_use]
    pub fn expose_secret(&self) -> &str {
        self.0.expose_secret()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(REDACTED)
    }
}

struct SecretVisitor;

impl Visitor<'_> for SecretVisitor {
    type Value = Secret;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Secret, E> {
        Ok(Secret::new(v))
    }

    // A TOML `password = 12345` is almost always meant as text; accepting it also keeps the
    // value out of the "found unsigned int `12345`" error a rejection would print.
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Secret, E> {
        Ok(Secret::new(v.to_string()))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Secret, E> {
        Ok(Secret::new(v.to_string()))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Secret, E> {
        Ok(Secret::new(v.to_string()))
    }

    // Floats lose their spelling (`1e3` becomes `1000`), so reject them without echoing the value.
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Secret, E> {
        Err(E::custom(
            "expected a string, found a number (quote the secret in TOML)",
        ))
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(SecretVisitor)
    }
}

impl JsonSchema for Secret {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "Secret".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "writeOnly": true })
    }
}

/// Replaces the password of a URL (userinfo and `password`/`sslpassword` query parameters) with
/// `<redacted>`, keeping the rest so an operator can still tell which server is meant.
#[must_use]
pub fn redact_url(raw: &str) -> String {
    let (main, query) = match raw.split_once('?') {
        Some((main, query)) => (main, Some(query)),
        None => (raw, None),
    };
    let mut out = match main.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
            match authority.rsplit_once('@') {
                Some((userinfo, host)) => match userinfo.split_once(':') {
                    Some((user, _)) => format!("{scheme}://{user}:{REDACTED}@{host}{path}"),
                    None => main.to_owned(),
                },
                None => main.to_owned(),
            }
        }
        None => main.to_owned(),
    };
    if let Some(query) = query {
        out.push('?');
        let params: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, _)) if is_password_param(k) => format!("{k}={REDACTED}"),
                _ => pair.to_owned(),
            })
            .collect();
        out.push_str(&params.join("&"));
    }
    out
}

fn is_password_param(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name == "password" || name == "sslpassword" || name == "pass"
}

/// A database connection URL (`postgres://…`, `postgresql://…` or `sqlite:…`). `Debug` and
/// `Serialize` redact the password.
#[derive(Clone, PartialEq, Eq)]
pub struct DatabaseUrl(String);

impl DatabaseUrl {
    /// Parses and checks the scheme. The error never contains the URL (it may hold a password).
    pub fn parse(raw: &str) -> Result<Self, String> {
        let raw = raw.trim();
        if raw.is_empty() {
            return Err("the database URL is empty".to_owned());
        }
        let parsed = url::Url::parse(raw)
            .map_err(|e| format!("not a valid database URL ({e}); value not shown"))?;
        match parsed.scheme() {
            "postgres" | "postgresql" | "sqlite" => Ok(Self(raw.to_owned())),
            other => Err(format!(
                "unsupported database URL scheme `{other}`; use postgres://… or sqlite:…"
            )),
        }
    }

    /// The full URL, password included; hand it to the driver, never to a log.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is an embedded SQLite database.
    #[must_use]
    pub fn is_sqlite(&self) -> bool {
        self.scheme().eq_ignore_ascii_case("sqlite")
    }

    /// Whether this is a PostgreSQL server.
    #[must_use]
    pub fn is_postgres(&self) -> bool {
        let scheme = self.scheme();
        scheme.eq_ignore_ascii_case("postgres") || scheme.eq_ignore_ascii_case("postgresql")
    }

    /// The `sslmode` query parameter, if the URL has one.
    #[must_use]
    pub fn sslmode(&self) -> Option<String> {
        let parsed = url::Url::parse(&self.0).ok()?;
        parsed
            .query_pairs()
            .find(|(k, _)| k == "sslmode")
            .map(|(_, v)| v.into_owned())
    }

    /// The URL with its password replaced by `<redacted>`.
    #[must_use]
    pub fn redacted(&self) -> String {
        redact_url(&self.0)
    }

    fn scheme(&self) -> &str {
        self.0.split_once(':').map_or("", |(scheme, _)| scheme)
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DatabaseUrl({})", self.redacted())
    }
}

impl Serialize for DatabaseUrl {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.redacted())
    }
}

impl<'de> Deserialize<'de> for DatabaseUrl {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        Self::parse(&raw).map_err(de::Error::custom)
    }
}

impl JsonSchema for DatabaseUrl {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "DatabaseUrl".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "format": "uri", "writeOnly": true })
    }
}

/// Any other URL that may carry a password (the Redis URL). `Debug` and `Serialize` redact it.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretUrl(String);

impl SecretUrl {
    /// Parses the URL. The error never contains the URL.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let raw = raw.trim();
        url::Url::parse(raw).map_err(|e| format!("not a valid URL ({e}); value not shown"))?;
        Ok(Self(raw.to_owned()))
    }

    /// The full URL, password included.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The URL with its password replaced by `<redacted>`.
    #[must_use]
    pub fn redacted(&self) -> String {
        redact_url(&self.0)
    }
}

impl fmt::Debug for SecretUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretUrl({})", self.redacted())
    }
}

impl Serialize for SecretUrl {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.redacted())
    }
}

impl<'de> Deserialize<'de> for SecretUrl {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        Self::parse(&raw).map_err(de::Error::custom)
    }
}

impl JsonSchema for SecretUrl {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "SecretUrl".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "format": "uri", "writeOnly": true })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_debug_and_serialize_redact() {
        let secret = Secret::new("hunter2");
        assert_eq!(format!("{secret:?}"), REDACTED);
        assert_eq!(
            serde_json::to_string(&secret).unwrap(),
            format!("\"{REDACTED}\"")
        );
        assert_eq!(secret.expose_secret(), "hunter2");
    }

    #[test]
    fn secret_accepts_numbers_as_text() {
        let secret: Secret = serde_json::from_str("12345").unwrap();
        assert_eq!(secret.expose_secret(), "12345");
        let err = serde_json::from_str::<Secret>("1.5")
            .unwrap_err()
            .to_string();
        assert!(!err.contains("1.5"), "{err}");
    }

    #[test]
    fn url_password_is_redacted() {
        assert_eq!(
            redact_url("postgres://svc:s3cret@db:5432/svc?sslmode=require"),
            "postgres://svc:<redacted>@db:5432/svc?sslmode=require"
        );
        assert_eq!(
            redact_url("postgres://db/svc?user=svc&password=s3cret"),
            "postgres://db/svc?user=svc&password=<redacted>"
        );
        assert_eq!(
            redact_url("redis://:pw@cache:6379/0"),
            "redis://:<redacted>@cache:6379/0"
        );
        assert_eq!(redact_url("sqlite:data/svc.db"), "sqlite:data/svc.db");
        assert_eq!(redact_url("postgres://svc@db/x"), "postgres://svc@db/x");
    }

    #[test]
    fn database_url_parses_and_inspects() {
        let url = DatabaseUrl::parse("postgres://u:p@db/svc?sslmode=verify-full").unwrap();
        assert!(url.is_postgres() && !url.is_sqlite());
        assert_eq!(url.sslmode().as_deref(), Some("verify-full"));
        assert_eq!(url.as_str(), "postgres://u:p@db/svc?sslmode=verify-full");
        assert!(!format!("{url:?}").contains(":p@"));
        assert!(DatabaseUrl::parse("sqlite::memory:").unwrap().is_sqlite());
        assert_eq!(DatabaseUrl::parse("sqlite:x.db").unwrap().sslmode(), None);
        let err = DatabaseUrl::parse("mysql://u:topsecret@db/x").unwrap_err();
        assert!(err.contains("mysql") && !err.contains("topsecret"), "{err}");
        assert!(DatabaseUrl::parse("not a url").is_err());
    }

    #[test]
    fn secret_url_redacts() {
        let url = SecretUrl::parse("redis://u:pw@cache:6379").unwrap();
        assert_eq!(url.as_str(), "redis://u:pw@cache:6379");
        assert_eq!(
            serde_json::to_string(&url).unwrap(),
            "\"redis://u:<redacted>@cache:6379\""
        );
    }
}
