//! Loading: defaults, file and environment layering, shortcuts, and the one-line errors for
//! unknown keys, wrong types and malformed TOML.

use std::path::PathBuf;

use super::support::{errors_of, load_with, sources};
use crate::{DatabaseTopology, LogSink, RuntimePlane, load};

#[test]
fn defaults_load_and_validate_outside_production() {
    let loaded = load_with(None, &[]).unwrap();
    assert_eq!(loaded.file, None);
    assert!(loaded.warnings.is_empty());
    let config = loaded.config;
    assert!(!config.is_production());
    assert_eq!(config.server.host, "127.0.0.1");
    assert_eq!(config.server.port, 8080);
    assert_eq!(config.deployment.runtime_plane, RuntimePlane::All);
    assert_eq!(config.jwt.access_token_lifetime_human_secs, 900);
}

#[test]
fn env_beats_file_beats_defaults() {
    let toml = "[server]\nport = 9000\nhost = \"localhost\"\n[database]\nmax_connections = 20\n";
    let loaded = load_with(Some(toml), &[("SVC_SERVER__PORT", "9100")]).unwrap();
    assert!(loaded.file.is_some_and(|f| f.ends_with("svc.toml")));
    let config = loaded.config;
    assert_eq!(config.server.port, 9100, "env wins over the file");
    assert_eq!(config.server.host, "localhost", "file wins over defaults");
    assert_eq!(config.database.max_connections, 20);
    assert_eq!(
        config.server.request_timeout_secs, 30,
        "defaults fill the rest"
    );
}

#[test]
fn svc_config_file_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("custom.toml"), "[server]\nport = 7000\n").unwrap();
    std::fs::write(dir.path().join("svc.toml"), "[server]\nport = 1\n").unwrap();
    let loaded = load(&sources(dir.path(), &[("SVC_CONFIG_FILE", "custom.toml")])).unwrap();
    assert_eq!(loaded.config.server.port, 7000);
    assert_eq!(loaded.file, Some(dir.path().join("custom.toml")));

    let mut explicit = sources(dir.path(), &[]);
    explicit.explicit_file = Some(PathBuf::from("missing.toml"));
    let error = load(&explicit).unwrap_err().to_string();
    assert!(
        error.contains("missing.toml") && error.contains("--config"),
        "{error}"
    );
}

#[test]
fn env_strings_become_numbers_and_bools() {
    let config = load_with(
        None,
        &[
            ("SVC_DATABASE__MAX_CONNECTIONS", "25"),
            ("SVC_DATABASE__TEST_BEFORE_ACQUIRE", "false"),
            ("SVC_SERVER__ENDPOINT_THROTTLE__ENABLED", "true"),
            ("SVC_DEPLOYMENT__DATABASE_TOPOLOGY", "split_by_plane"),
            ("SVC_EMAIL__LOG__SINK", "file:mail.jsonl"),
        ],
    )
    .unwrap()
    .config;
    assert_eq!(config.database.max_connections, 25);
    assert!(!config.database.test_before_acquire);
    assert!(config.server.endpoint_throttle.enabled);
    assert_eq!(
        config.deployment.database_topology,
        DatabaseTopology::SplitByPlane
    );
    assert!(
        matches!(&config.email.log.sink, LogSink::File(p) if p.is_absolute() && p.ends_with("mail.jsonl")),
        "{:?}",
        config.email.log.sink
    );
}

#[test]
fn json_arrays_from_env() {
    let config = load_with(
        None,
        &[
            (
                "SVC_SERVER__ALLOWED_HOSTS",
                r#"["auth.localhost", "*.auth.test"]"#,
            ),
            (
                "SVC_SERVER__TRUSTED_PROXIES",
                r#"["10.0.0.0/8", "192.168.1.1"]"#,
            ),
        ],
    )
    .unwrap()
    .config;
    assert_eq!(
        config.server.allowed_hosts,
        ["auth.localhost", "*.auth.test"]
    );
    let proxies: Vec<String> = config
        .server
        .trusted_proxies
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(proxies, ["10.0.0.0/8", "192.168.1.1/32"]);
}

#[test]
fn numeric_looking_strings_stay_strings() {
    let config = load_with(
        None,
        &[
            ("SVC_EMAIL__SMTP__PASSWORD", "12345"),
            ("SVC_CAPTCHA__SECRET_KEY", "000123"),
            ("SVC_EMAIL__SMTP__USERNAME", "007"),
            ("SVC_TENANT__DEFAULT_TENANT_SLUG", "2024"),
        ],
    )
    .unwrap()
    .config;
    let password = config
        .email
        .smtp
        .password
        .as_ref()
        .map(|s| s.expose_secret());
    assert_eq!(password, Some("12345"));
    let captcha = config
        .captcha
        .secret_key
        .as_ref()
        .map(|s| s.expose_secret());
    assert_eq!(captcha, Some("000123"), "leading zeros survive");
    assert_eq!(config.email.smtp.username.as_deref(), Some("007"));
    assert_eq!(config.tenant.default_tenant_slug.as_deref(), Some("2024"));
}

#[test]
fn database_shortcuts_map_to_their_keys() {
    let config = load_with(
        None,
        &[
            ("DATABASE_URL", "postgres://base/db"),
            ("DATABASE_IDENTITY_URL", "postgres://identity/db"),
            ("DATABASE_AUTH_URL", "postgres://auth/db"),
            ("DATABASE_CONTROL_URL", "postgres://control/db"),
            ("DATABASE_ASYNC_URL", "postgres://async/db"),
            ("MIGRATION_DATABASE_URL", "postgres://migrate/db"),
            ("LISTEN_DATABASE_URL", "postgres://listen/db"),
            ("SVC_DEPLOYMENT__DATABASE_TOPOLOGY", "split_by_plane"),
        ],
    )
    .unwrap()
    .config;
    let db = &config.database;
    let url = |u: &Option<crate::DatabaseUrl>| u.as_ref().map(|u| u.as_str().to_owned());
    assert_eq!(url(&db.url).as_deref(), Some("postgres://base/db"));
    assert_eq!(
        url(&db.identity_url).as_deref(),
        Some("postgres://identity/db")
    );
    assert_eq!(url(&db.auth_url).as_deref(), Some("postgres://auth/db"));
    assert_eq!(
        url(&db.control_url).as_deref(),
        Some("postgres://control/db")
    );
    assert_eq!(url(&db.async_url).as_deref(), Some("postgres://async/db"));
    assert_eq!(
        url(&db.migration_url).as_deref(),
        Some("postgres://migrate/db")
    );
    assert_eq!(url(&db.listen_url).as_deref(), Some("postgres://listen/db"));
}

#[test]
fn svc_database_url_beats_database_url() {
    let config = load_with(
        Some("[database]\nurl = \"postgres://file/db\"\n"),
        &[
            ("DATABASE_URL", "postgres://shortcut/db"),
            ("SVC_DATABASE__URL", "postgres://nested/db"),
        ],
    )
    .unwrap()
    .config;
    assert_eq!(
        config.database.url.as_ref().map(crate::DatabaseUrl::as_str),
        Some("postgres://nested/db")
    );
    let config = load_with(
        Some("[database]\nurl = \"postgres://file/db\"\n"),
        &[("DATABASE_URL", "postgres://shortcut/db")],
    )
    .unwrap()
    .config;
    assert_eq!(
        config.database.url.as_ref().map(crate::DatabaseUrl::as_str),
        Some("postgres://shortcut/db"),
        "the shortcut is environment, so it beats the file"
    );
}

#[test]
fn runtime_plane_shortcut() {
    let config = load_with(None, &[("SVC_RUNTIME_PLANE", "control")])
        .unwrap()
        .config;
    assert_eq!(config.deployment.runtime_plane, RuntimePlane::Control);
}

#[test]
fn bad_runtime_plane_lists_the_allowed_values() {
    let errors = errors_of(None, &[("SVC_RUNTIME_PLANE", "foo")]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    let error = &errors[0];
    assert!(error.contains("deployment.runtime_plane"), "{error}");
    assert!(error.contains("SVC_RUNTIME_PLANE"), "{error}");
    assert!(error.contains("\"foo\""), "{error}");
    assert!(error.contains("auth|control|async|all"), "{error}");
}

#[test]
fn plane_all_refused_when_all_in_one_is_off() {
    let errors = errors_of(
        None,
        &[("SVC_DEPLOYMENT__ALLOW_ALL_IN_ONE_RUNTIME_PLANE", "false")],
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("SVC_RUNTIME_PLANE"));
    assert!(errors[0].contains("deployment.allow_all_in_one_runtime_plane"));
    let loaded = load_with(
        None,
        &[
            ("SVC_DEPLOYMENT__ALLOW_ALL_IN_ONE_RUNTIME_PLANE", "false"),
            ("SVC_RUNTIME_PLANE", "async"),
        ],
    );
    assert!(loaded.is_ok());
}

#[test]
fn unknown_key_in_file_names_key_file_and_valid_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("svc.toml");
    std::fs::write(&path, "[server]\nprot = 8080\n[serverr]\nport = 1\n").unwrap();
    let errors = load(&sources(dir.path(), &[])).unwrap_err();
    let text: Vec<String> = errors.errors().iter().map(ToString::to_string).collect();
    assert_eq!(text.len(), 2, "{text:?}");
    let file = path.display().to_string();
    let prot = text.iter().find(|t| t.contains("`server.prot`")).unwrap();
    assert!(prot.contains(&file), "{prot}");
    assert!(
        prot.contains("valid keys in [server]: host, port, transport"),
        "{prot}"
    );
    let section = text.iter().find(|t| t.contains("`serverr`")).unwrap();
    assert!(
        section.contains("valid keys in the top level: deployment, server"),
        "{section}"
    );
}

#[test]
fn unknown_svc_variable_is_named() {
    let errors = errors_of(None, &[("SVC_SERVER__PROT", "8080"), ("SVC_FOO", "1")]);
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors
            .iter()
            .any(|e| e.contains("SVC_SERVER__PROT") && e.contains("server.prot"))
    );
    assert!(errors.iter().any(|e| e.contains("SVC_FOO")));
}

#[test]
fn wrong_type_from_env_names_key_type_and_variable() {
    let errors = errors_of(None, &[("SVC_SERVER__PORT", "eighty")]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    let error = &errors[0];
    assert!(error.contains("server.port"), "{error}");
    assert!(error.contains("u16"), "{error}");
    assert!(
        error.contains("environment variable SVC_SERVER__PORT"),
        "{error}"
    );
    assert!(!error.contains('\n'));
}

#[test]
fn wrong_type_in_file_names_key_type_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("svc.toml");
    std::fs::write(&path, "[server]\nallowed_hosts = \"auth.example.com\"\n").unwrap();
    let errors = load(&sources(dir.path(), &[])).unwrap_err();
    assert_eq!(errors.errors().len(), 1, "{errors}");
    let error = errors.to_string();
    assert!(error.contains("server.allowed_hosts"), "{error}");
    assert!(error.contains("expected a sequence"), "{error}");
    assert!(
        error.contains(&format!("file {}", path.display())),
        "{error}"
    );
}

#[test]
fn out_of_range_port_names_the_source() {
    let errors = errors_of(Some("[server]\nport = 70000\n"), &[]);
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].contains("server.port") && errors[0].contains("svc.toml"),
        "{}",
        errors[0]
    );
}

#[test]
fn bad_database_url_does_not_echo_the_password() {
    let errors = errors_of(None, &[("DATABASE_URL", "mysql://u:hunter2@db/x")]);
    assert_eq!(errors.len(), 1);
    assert!(errors[0].contains("database.url") && errors[0].contains("DATABASE_URL"));
    assert!(!errors[0].contains("hunter2"), "{}", errors[0]);
}

#[test]
fn malformed_toml_names_file_line_and_problem() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("svc.toml");
    std::fs::write(&path, "[server]\nport = 8080\nhost = \n").unwrap();
    let errors = load(&sources(dir.path(), &[])).unwrap_err();
    assert_eq!(errors.errors().len(), 1);
    let error = errors.to_string();
    assert!(error.starts_with(&path.display().to_string()), "{error}");
    assert!(error.contains("line 3"), "{error}");
    assert!(error.contains("invalid TOML"), "{error}");
    assert!(!error.contains('\n'), "one line: {error}");
}

#[test]
fn incomplete_kms_section_names_the_missing_key() {
    let errors = errors_of(Some("[kms]\nsocket_path = \"/run/kms.sock\"\n"), &[]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("kms.server_public_key_path")
            || errors[0].contains("kms.client_private_key_path"),
        "{}",
        errors[0]
    );
}

#[test]
fn jwt_range_from_env_names_key_and_range() {
    let errors = errors_of(None, &[("SVC_JWT__ACCESS_TOKEN_LIFETIME_HUMAN_SECS", "10")]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("jwt.access_token_lifetime_human_secs = 10 is out of range 60..=86400"),
        "{}",
        errors[0]
    );
}

#[test]
fn refresh_shorter_than_access_is_refused_at_load() {
    let errors = errors_of(
        Some(
            "[jwt]\naccess_token_lifetime_human_secs = 7200\nrefresh_token_lifetime_human_secs = 3600\n",
        ),
        &[],
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("jwt.refresh_token_lifetime_human_secs = 3600"));
}

#[test]
fn public_bind_without_production_and_the_escape_hatch() {
    let errors = errors_of(None, &[("SVC_SERVER__HOST", "0.0.0.0")]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("security.production must be true"));
    assert!(errors[0].contains("server.host"));

    let loaded = load_with(
        None,
        &[
            ("SVC_SERVER__HOST", "0.0.0.0"),
            ("SVC_SECURITY__ALLOW_PUBLIC_WITHOUT_PRODUCTION", "true"),
        ],
    )
    .unwrap();
    assert_eq!(loaded.warnings.len(), 1);
    assert!(loaded.warnings[0].starts_with("DEVELOPMENT ONLY:"));
}

#[test]
fn relative_paths_are_anchored_to_the_working_dir() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cert.pem"), "x").unwrap();
    std::fs::write(dir.path().join("key.pem"), "x").unwrap();
    std::fs::write(
        dir.path().join("svc.toml"),
        "[server]\ntransport = \"tls_h2_only\"\n[server.tls]\ncert_pem_path = \"cert.pem\"\nkey_pem_path = \"key.pem\"\n",
    )
    .unwrap();
    let config = load(&sources(dir.path(), &[])).unwrap().config;
    assert_eq!(
        config.server.tls.cert_pem_path,
        Some(dir.path().join("cert.pem"))
    );
    assert_eq!(config.working_dir(), dir.path());
}

#[test]
fn missing_tls_files_name_key_and_path() {
    let errors = errors_of(
        Some(
            "[server]\ntransport = \"tls_h2_only\"\n[server.tls]\ncert_pem_path = \"/nonexistent/cert.pem\"\n",
        ),
        &[],
    );
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].contains("server.tls.key_pem_path is required"));
    assert!(errors[1].contains("server.tls.cert_pem_path = /nonexistent/cert.pem cannot be read"));
}

#[test]
fn every_type_error_is_reported_in_one_run() {
    let errors = errors_of(
        Some(
            "[server]\nport = \"x\"\ntrusted_proxies = [\"nope\"]\n[kms]\nsocket_path = \"/run/kms.sock\"\n",
        ),
        &[
            ("SVC_RUNTIME_PLANE", "foo"),
            ("SVC_DATABASE__MAX_CONNECTIONS", "many"),
        ],
    );
    assert_eq!(errors.len(), 5, "{errors:#?}");
    for key in [
        "server.port",
        "server.trusted_proxies",
        "kms.",
        "deployment.runtime_plane",
        "database.max_connections",
    ] {
        assert!(
            errors.iter().any(|e| e.contains(key)),
            "{key} missing: {errors:#?}"
        );
    }
}
