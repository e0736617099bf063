//! Sections and keys this version does not have: each one, set in the file or by an environment
//! variable, stops the load with exactly one line naming it and saying it is not available in
//! this version; the values that state what this version does still load.

use super::support::{PRODUCTION_ENV, errors_of, load_with, sources, write_production_files};
use crate::unavailable::UNAVAILABLE;
use crate::{ConfigError, load};

/// One refused entry: a file that sets it and a variable that sets it, each with a value this
/// version does not accept.
struct Case {
    key: &'static str,
    toml: &'static str,
    var: &'static str,
    value: &'static str,
}

const fn case(
    key: &'static str,
    toml: &'static str,
    var: &'static str,
    value: &'static str,
) -> Case {
    Case {
        key,
        toml,
        var,
        value,
    }
}

/// A value that must never be echoed back: refusal lines name keys, not values.
const SECRET: &str = "s3cret-value";

const CASES: &[Case] = &[
    case(
        "sms",
        "[sms]\nenabled = true\ncode_length = 6\n",
        "SVC_SMS__ENABLED",
        "true",
    ),
    case(
        "email_otp",
        "[email_otp]\nenabled = true\n",
        "SVC_EMAIL_OTP__ENABLED",
        "true",
    ),
    case(
        "magic_link",
        "[magic_link]\nenabled = true\nlifetime_secs = 600\n",
        "SVC_MAGIC_LINK__LIFETIME_SECS",
        "600",
    ),
    case(
        "anonymous",
        "[anonymous]\nenabled = true\n",
        "SVC_ANONYMOUS__ENABLED",
        "true",
    ),
    case(
        "siwe",
        "[siwe]\nenabled = true\n",
        "SVC_SIWE__ENABLED",
        "true",
    ),
    case(
        "session_cookie",
        "[session_cookie]\nname = \"sid\"\n",
        "SVC_SESSION_COOKIE__NAME",
        "sid",
    ),
    case(
        "refresh_family_cache",
        "[refresh_family_cache]\nenabled = true\n",
        "SVC_REFRESH_FAMILY_CACHE",
        r#"{"enabled": true}"#,
    ),
    case(
        "jwt.refresh_token_lifetime_agent_secs",
        "[jwt]\nrefresh_token_lifetime_agent_secs = 86400\n",
        "SVC_JWT__REFRESH_TOKEN_LIFETIME_AGENT_SECS",
        "86400",
    ),
    case(
        "admin",
        "[admin]\nenabled = true\n",
        "SVC_ADMIN__ENABLED",
        "true",
    ),
    case(
        "access_control",
        "[access_control]\ndefault_policy = \"deny\"\n",
        "SVC_ACCESS_CONTROL__DEFAULT_POLICY",
        "deny",
    ),
    case(
        "organizations",
        "[organizations]\nenabled = true\n",
        "SVC_ORGANIZATIONS__ENABLED",
        "true",
    ),
    case(
        "invitations",
        "[invitations]\nlifetime_days = 7\n",
        "SVC_INVITATIONS__LIFETIME_DAYS",
        "7",
    ),
    case(
        "vault",
        "[vault]\nenabled = true\nbearer_token = \"s3cret-value\"\n",
        "SVC_VAULT__BEARER_TOKEN",
        SECRET,
    ),
    case(
        "billing",
        "[billing]\nprovider = \"stripe\"\n",
        "SVC_BILLING__PROVIDER",
        "stripe",
    ),
    case(
        "commerce",
        "[commerce]\nenabled = true\n",
        "SVC_COMMERCE__ENABLED",
        "true",
    ),
    case(
        "wallet",
        "[wallet]\nenabled = true\n",
        "SVC_WALLET__ENABLED",
        "true",
    ),
    case(
        "chains",
        "[[chains]]\nname = \"mainnet\"\nchain_id = 1\n",
        "SVC_CHAINS",
        r#"[{"name": "mainnet", "chain_id": 1}]"#,
    ),
    case(
        "user_self_service",
        "[user_self_service]\nenabled = true\n",
        "SVC_USER_SELF_SERVICE__ENABLED",
        "true",
    ),
    case(
        "i18n",
        "[i18n]\ndefault_locale = \"fr\"\n",
        "SVC_I18N__DEFAULT_LOCALE",
        "fr",
    ),
    case(
        "server.identity_app_origin",
        "[server]\nidentity_app_origin = \"http://id.localhost:3000\"\n",
        "SVC_SERVER__IDENTITY_APP_ORIGIN",
        "http://id.localhost:3000",
    ),
    case(
        "server.dashboard_app_origin",
        "[server]\ndashboard_app_origin = \"http://dashboard.localhost:3000\"\n",
        "SVC_SERVER__DASHBOARD_APP_ORIGIN",
        "http://dashboard.localhost:3000",
    ),
    case(
        "oauth_proxy.enabled",
        "[oauth_proxy]\nenabled = true\n",
        "SVC_OAUTH_PROXY__ENABLED",
        "yes",
    ),
    case(
        "deployment.embedded_chain_monitor",
        "[deployment]\nembedded_chain_monitor = true\n",
        "SVC_DEPLOYMENT__EMBEDDED_CHAIN_MONITOR",
        "true",
    ),
    case(
        "database.maintenance_url",
        "[database]\nmaintenance_url = \"postgres://maint:s3cret-value@db.internal/svc\"\n",
        "MAINTENANCE_DATABASE_URL",
        "postgres://maint:s3cret-value@db.internal/svc",
    ),
    case(
        "phone",
        "[phone]\nprovider = \"log\"\n",
        "SVC_PHONE__PROVIDER",
        "disabled",
    ),
    case(
        "proxy",
        "[proxy]\nurl = \"http://proxy.internal:3128\"\n",
        "SVC_PROXY__URL",
        "http://proxy.internal:3128",
    ),
    case(
        "telemetry",
        "[telemetry]\notlp_endpoint = \"http://otel.internal:4317\"\n",
        "SVC_TELEMETRY__OTLP_ENDPOINT",
        "http://otel.internal:4317",
    ),
];

fn label(key: &str) -> String {
    UNAVAILABLE
        .iter()
        .find(|e| e.key == key)
        .map(|e| e.label())
        .unwrap_or_else(|| panic!("{key} is not on the list"))
}

/// The single refusal of a load that must fail with exactly one problem.
fn the_refusal(errors: &[ConfigError], case: &Case) -> String {
    assert_eq!(errors.len(), 1, "{}: {errors:#?}", case.key);
    let ConfigError::Unavailable { key, .. } = &errors[0] else {
        panic!("{}: not a refusal: {}", case.key, errors[0]);
    };
    assert_eq!(key, case.key);
    let line = errors[0].to_string();
    assert!(
        line.starts_with(&format!(
            "{} is not available in this version (set ",
            label(case.key)
        )),
        "{line}"
    );
    assert!(!line.contains('\n'), "one line: {line}");
    assert!(
        !line.contains(SECRET),
        "a refusal never echoes a value: {line}"
    );
    line
}

#[test]
fn every_refused_entry_has_a_case() {
    let cases: Vec<&str> = CASES.iter().map(|c| c.key).collect();
    let listed: Vec<&str> = UNAVAILABLE.iter().map(|e| e.key).collect();
    assert_eq!(cases, listed, "one case per entry, in the list's order");
}

#[test]
fn each_refused_entry_set_in_the_file_is_named_with_the_file() {
    for case in CASES {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("svc.toml");
        std::fs::write(&path, case.toml).unwrap();
        let errors = load(&sources(dir.path(), &[])).unwrap_err();
        let line = the_refusal(errors.errors(), case);
        assert!(
            line.contains(&format!("(set in file {})", path.display())),
            "{line}"
        );
    }
}

#[test]
fn each_refused_entry_set_by_a_variable_is_named_with_the_variable() {
    for case in CASES {
        let errors = load_with(None, &[(case.var, case.value)]).unwrap_err();
        let line = the_refusal(errors.errors(), case);
        assert!(
            line.contains(&format!("(set by environment variable {})", case.var)),
            "{line}"
        );
    }
}

#[test]
fn every_refusal_from_every_source_is_reported_in_one_run() {
    let env: Vec<(&str, &str)> = CASES.iter().map(|c| (c.var, c.value)).collect();
    let errors = errors_of(Some("[vault]\nenabled = true\n[server]\nprot = 1\n"), &env);
    assert_eq!(errors.len(), CASES.len() + 2, "{errors:#?}");
    for case in CASES {
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with(&label(case.key)) && e.contains(case.var)),
            "{} not named: {errors:#?}",
            case.key
        );
    }
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("[vault]") && e.contains("svc.toml"))
    );
    assert!(errors.iter().any(|e| e.contains("`server.prot`")));
}

#[test]
fn values_that_state_what_this_version_does_still_load() {
    let toml = "[openapi]\nenabled = false\n[oauth_proxy]\nenabled = false\n\
                [deployment]\ncoordination_backend = \"postgres\"\nembedded_chain_monitor = false\n\
                runtime_plane = \"auth\"\n";
    let loaded = match load_with(Some(toml), &[]) {
        Ok(loaded) => loaded,
        Err(errors) => panic!("{errors}"),
    };
    assert!(!loaded.config.openapi.enabled);
    assert_eq!(
        loaded.config.deployment.runtime_plane,
        crate::RuntimePlane::Auth,
        "the rest of the section still applies"
    );
    let env = [
        ("SVC_OPENAPI__ENABLED", "false"),
        ("SVC_OAUTH_PROXY__ENABLED", "off"),
        ("SVC_DEPLOYMENT__COORDINATION_BACKEND", "postgres"),
        ("SVC_DEPLOYMENT__EMBEDDED_CHAIN_MONITOR", "0"),
    ];
    if let Err(errors) = load_with(None, &env) {
        panic!("{errors}");
    }
}

#[test]
fn a_section_given_whole_by_a_variable_loses_only_its_refused_keys() {
    let errors = errors_of(
        None,
        &[(
            "SVC_DEPLOYMENT",
            r#"{"coordination_backend": "postgres", "embedded_chain_monitor": true, "runtime_plane": "auth"}"#,
        )],
    );
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(
        errors[0].starts_with(
            "deployment.embedded_chain_monitor is not available in this version (set by \
             environment variable SVC_DEPLOYMENT)"
        ),
        "{}",
        errors[0]
    );
    assert!(
        errors[0].ends_with("remove the key or set it to false"),
        "{}",
        errors[0]
    );
    let loaded = load_with(
        None,
        &[
            ("SVC_OPENAPI", r#"{"enabled": false}"#),
            ("SVC_RUNTIME_PLANE", "control"),
        ],
    );
    assert!(loaded.is_ok(), "{:?}", loaded.err());
}

#[test]
fn production_cannot_turn_on_what_does_not_exist() {
    let dir = tempfile::tempdir().unwrap();
    write_production_files(dir.path());
    let mut env = PRODUCTION_ENV.to_vec();
    env.extend([("SVC_OAUTH_PROXY__ENABLED", "true")]);
    let errors = load(&sources(dir.path(), &env)).unwrap_err();
    assert_eq!(errors.errors().len(), 1, "{errors}");
    assert!(errors.contains("oauth_proxy.enabled is not available in this version"));
}
