//! Redaction: secrets set anywhere never appear in the printed configuration or in `Debug`.

use super::support::{PRODUCTION_ENV, sources, write_production_files};
use crate::load;

#[test]
fn redacted_toml_hides_every_secret() {
    let dir = tempfile::tempdir().unwrap();
    write_production_files(dir.path());
    let mut env = PRODUCTION_ENV.to_vec();
    env.extend([
        (
            "MIGRATION_DATABASE_URL",
            "postgres://owner:migration-secret-value@db.internal/svc?sslmode=require",
        ),
        (
            "LISTEN_DATABASE_URL",
            "postgres://svc:listen-secret-value@db.internal/svc?sslmode=require",
        ),
    ]);
    let config = load(&sources(dir.path(), &env)).unwrap().config;
    let printed = config.redacted_toml();
    let debug = format!("{config:?}");
    for secret in [
        "captcha-secret-value",
        "smtp-secret-value",
        "metrics-secret-value",
        "migration-secret-value",
        "listen-secret-value",
        "db-password",
    ] {
        assert!(
            !printed.contains(secret),
            "{secret} leaked into redacted_toml:\n{printed}"
        );
        assert!(!debug.contains(secret), "{secret} leaked into Debug");
    }
    assert!(printed.contains("secret_key = \"<redacted>\""), "{printed}");
    assert!(
        printed.contains("metrics_bearer_token = \"<redacted>\""),
        "{printed}"
    );
    assert!(printed.contains("password = \"<redacted>\""), "{printed}");
    assert!(
        printed.contains("postgres://svc:<redacted>@db.internal:5432/svc?sslmode=require"),
        "{printed}"
    );
    assert!(
        printed.contains("postgres://owner:<redacted>@db.internal/svc?sslmode=require"),
        "{printed}"
    );
    // The values themselves are intact for the code that uses them.
    let captcha = config
        .captcha
        .secret_key
        .as_ref()
        .map(|s| s.expose_secret());
    assert_eq!(captcha, Some("captcha-secret-value"));
}

#[test]
fn redacted_toml_shows_the_effective_configuration() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("svc.toml"),
        "[email.smtp]\nusername = \"svc-mailer\"\npassword = \"smtp-secret-value\"\n",
    )
    .unwrap();
    let config = load(&sources(dir.path(), &[("SVC_SERVER__PORT", "9123")]))
        .unwrap()
        .config;
    let printed = config.redacted_toml();
    assert!(printed.contains("port = 9123"), "{printed}");
    assert!(printed.contains("[email.smtp]"), "{printed}");
    assert!(printed.contains("username = \"svc-mailer\""), "{printed}");
    assert!(!printed.contains("smtp-secret-value"), "{printed}");
    // It is valid TOML that the loader accepts again (secrets aside).
    let reparsed: toml::Table = toml::from_str(&printed).unwrap();
    assert!(reparsed.contains_key("server"));
}
