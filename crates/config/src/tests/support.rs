//! Helpers shared by the tests: hermetic [`Sources`] and a complete production configuration.

use std::path::Path;

use crate::{Config, ConfigErrors, Loaded, Sources, load};

/// Sources rooted at `dir` with the given variables and no explicit file.
pub(crate) fn sources(dir: &Path, env: &[(&str, &str)]) -> Sources {
    Sources {
        explicit_file: None,
        cwd: dir.to_owned(),
        env: env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    }
}

/// Loads from a fresh directory holding `svc.toml` = `toml` (if any) with `env`.
pub(crate) fn load_with(toml: Option<&str>, env: &[(&str, &str)]) -> Result<Loaded, ConfigErrors> {
    let dir = tempfile::tempdir().unwrap();
    if let Some(toml) = toml {
        std::fs::write(dir.path().join("svc.toml"), toml).unwrap();
    }
    load(&sources(dir.path(), env))
}

/// Loads expecting failure and returns the messages, one per problem.
pub(crate) fn errors_of(toml: Option<&str>, env: &[(&str, &str)]) -> Vec<String> {
    match load_with(toml, env) {
        Ok(loaded) => panic!("expected errors, loaded {:?}", loaded.config),
        Err(errors) => errors.errors().iter().map(ToString::to_string).collect(),
    }
}

/// A production `svc.toml` satisfying every rule; certificate and KMS files live in the same
/// directory (relative paths). Secrets come from [`PRODUCTION_ENV`].
pub(crate) const PRODUCTION_TOML: &str = r#"
[deployment]
runtime_plane = "all"

[server]
host = "0.0.0.0"
port = 8443
transport = "tls_h2_only"
base_domain = "auth.example.com"
allowed_hosts = ["auth.example.com", "*.auth.example.com"]
trusted_proxies = ["10.0.0.0/8", "192.168.10.5"]

[server.tls]
cert_pem_path = "cert.pem"
key_pem_path = "key.pem"

[database]
url = "postgres://svc:db-password@db.internal:5432/svc?sslmode=require"

[kms]
socket_path = "/run/svc-kms/kms.sock"
server_public_key_path = "/etc/svc/kms/server.pub"
client_private_key_path = "/etc/svc/kms/client.key"

[email]
provider = "smtp"
from = "no-reply@example.com"

[email.smtp]
host = "smtp.example.com"
username = "svc"

[captcha]
enabled = true
provider = "turnstile"
site_key = "0x4AAAAAAA-site-key"

[hibp]
enabled = true

[oidc]
issuer_url = "https://auth.example.com"

[security]
production = true
"#;

/// The secrets of the production configuration, as an operator would inject them.
pub(crate) const PRODUCTION_ENV: &[(&str, &str)] = &[
    ("SVC_CAPTCHA__SECRET_KEY", "captcha-secret-value"),
    ("SVC_EMAIL__SMTP__PASSWORD", "smtp-secret-value"),
    ("SVC_SERVER__METRICS_BEARER_TOKEN", "metrics-secret-value"),
];

/// Writes [`PRODUCTION_TOML`] and its certificate files into `dir`.
pub(crate) fn write_production_files(dir: &Path) {
    std::fs::write(dir.join("svc.toml"), PRODUCTION_TOML).unwrap();
    std::fs::write(dir.join("cert.pem"), "-----BEGIN CERTIFICATE-----\n").unwrap();
    std::fs::write(dir.join("key.pem"), "-----BEGIN PRIVATE KEY-----\n").unwrap();
}

/// A loaded, fully valid production configuration rooted at `dir`.
pub(crate) fn production_config(dir: &Path) -> Config {
    write_production_files(dir);
    match load(&sources(dir, PRODUCTION_ENV)) {
        Ok(loaded) => loaded.config,
        Err(errors) => panic!("the production fixture must be valid:\n{errors}"),
    }
}
