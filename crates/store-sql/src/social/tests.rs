//! Unit tests of the social sign-in repository: statements, row forms and decoding.

use super::*;
use crate::users::tests::{AT, TENANT, USER, assert_twins, check};

const INTERACTION: &str = "int_01jd0000000000000000000000";

#[test]
fn each_dialect_binds_as_many_values_as_it_has_placeholders() {
    assert_twins(&[
        (INSERT_ATTEMPT, 1),
        (TAKE_ATTEMPT, 0),
        (INSERT_PENDING, 1),
        (SELECT_PENDING, 0),
        (TAKE_PENDING, 0),
    ]);
}

#[test]
fn the_takes_name_tenant_and_expiry_in_one_statement() {
    for sql in [TAKE_ATTEMPT.sqlite, TAKE_ATTEMPT.postgres] {
        assert!(sql.starts_with("UPDATE "), "{sql}");
        for condition in [
            "tenant_id = $1",
            "hash = $2",
            "used_at IS NULL",
            "RETURNING",
        ] {
            assert!(sql.contains(condition), "{condition}: {sql}");
        }
    }
    assert!(TAKE_ATTEMPT.sqlite.contains("expires_at_ns > $4"));
    assert!(TAKE_ATTEMPT.postgres.contains("expires_at > $4"));
    for sql in [TAKE_PENDING.sqlite, TAKE_PENDING.postgres] {
        assert!(sql.starts_with("DELETE "), "{sql}");
        for condition in ["tenant_id = $1", "hash = $2", "RETURNING"] {
            assert!(sql.contains(condition), "{condition}: {sql}");
        }
    }
    assert!(TAKE_PENDING.sqlite.contains("expires_at_ns > $3"));
    assert!(TAKE_PENDING.postgres.contains("expires_at > $3"));
}

#[test]
fn the_upsert_writes_what_is_read_and_replaces_all_but_the_key_and_created_at() {
    let (_, rest) = SELECT_PROVIDER.split_once("SELECT ").unwrap();
    let (read, _) = rest.split_once(" FROM ").unwrap();
    let (_, rest) = PUT_PROVIDER.split_once('(').unwrap();
    let (written, _) = rest.split_once(')').unwrap();
    assert_eq!(read, written, "the same columns in the same order");
    let (_, update) = PUT_PROVIDER.split_once("DO UPDATE SET").unwrap();
    for column in read.split(", ") {
        let replaced = update.contains(&format!("{column} = excluded.{column}"));
        let kept = ["tenant_id", "slug", "created_at"].contains(&column);
        assert_eq!(replaced, !kept, "{column}");
    }
}

fn provider_row() -> ProviderRow {
    ProviderRow {
        tenant_id: TENANT.into(),
        slug: "google".into(),
        preset: "google".into(),
        display_name: "Google".into(),
        protocol: "oidc".into(),
        issuer: Some("https://accounts.google.com".into()),
        authorization_endpoint: "https://accounts.google.com/o/oauth2/v2/auth".into(),
        token_endpoint: "https://oauth2.googleapis.com/token".into(),
        jwks_uri: Some("https://www.googleapis.com/oauth2/v3/certs".into()),
        userinfo_endpoint: None,
        emails_endpoint: None,
        iss_parameter: true,
        client_id: "svc".into(),
        token_endpoint_auth_method: "client_secret_basic".into(),
        sealed_secret: vec![0, 7, 0xff],
        apple_team_id: None,
        apple_key_id: None,
        scopes: r#"["openid","email","profile"]"#.into(),
        form_post: false,
        enabled: true,
        created_at: AT,
        updated_at: AT,
    }
}

#[test]
fn provider_rows_decode_each_protocol_and_client_authentication() {
    let oidc = provider_row().decode().unwrap();
    assert_eq!(oidc.scopes, ["openid", "email", "profile"], "in order");
    assert!(matches!(oidc.protocol, SocialProtocol::Oidc(ref m) if m.iss_parameter));
    let github = ProviderRow {
        slug: "github".into(),
        preset: "github".into(),
        protocol: "oauth2".into(),
        issuer: None,
        jwks_uri: None,
        userinfo_endpoint: Some("https://api.github.com/user".into()),
        emails_endpoint: Some("https://api.github.com/user/emails".into()),
        iss_parameter: false,
        token_endpoint_auth_method: "client_secret_post".into(),
        scopes: "[]".into(),
        ..provider_row()
    }
    .decode()
    .unwrap();
    assert!(
        github.scopes.is_empty(),
        "an OAuth 2.0 provider may ask for none"
    );
    assert_eq!(
        github.protocol.token_endpoint(),
        "https://oauth2.googleapis.com/token"
    );
    assert!(matches!(
        github.protocol,
        SocialProtocol::OAuth2(ProfileEndpoints {
            emails_endpoint: Some(_),
            ..
        })
    ));
    assert_eq!(
        github.client_auth,
        SocialClientAuth::SecretPost {
            sealed_secret: vec![0, 7, 0xff]
        }
    );
    let apple = ProviderRow {
        token_endpoint_auth_method: "apple_client_secret_jwt".into(),
        apple_team_id: Some("TEAM123456".into()),
        apple_key_id: Some("KEY1234567".into()),
        ..provider_row()
    }
    .decode()
    .unwrap();
    assert_eq!(
        apple.client_auth,
        SocialClientAuth::AppleJwt {
            team_id: "TEAM123456".into(),
            key_id: "KEY1234567".into(),
            sealed_key: vec![0, 7, 0xff],
        }
    );
}

#[test]
fn social_rows_name_each_bad_column() {
    check(
        provider_row(),
        ProviderRow::decode,
        &[
            ("social_providers.tenant_id", |r| r.tenant_id = USER.into()),
            ("social_providers.slug", |r| r.slug = "Google".into()),
            ("social_providers.preset", |r| r.preset = "facebook".into()),
            ("social_providers.scopes", |r| r.scopes = "openid".into()),
            ("social_providers.protocol", |r| r.protocol = "saml".into()),
            ("social_providers.protocol", |r| r.jwks_uri = None),
            ("social_providers.protocol", |r| {
                r.emails_endpoint = Some("https://x.example/emails".into());
            }),
            ("social_providers.protocol", |r| {
                r.protocol = "oauth2".into()
            }),
            ("social_providers.sealed_secret", |r| {
                r.sealed_secret = Vec::new();
            }),
            ("social_providers.token_endpoint_auth_method", |r| {
                r.token_endpoint_auth_method = "private_key_jwt".into();
            }),
            ("social_providers.token_endpoint_auth_method", |r| {
                r.token_endpoint_auth_method = "apple_client_secret_jwt".into();
            }),
            ("social_providers.token_endpoint_auth_method", |r| {
                r.apple_key_id = Some("KEY1234567".into());
            }),
        ],
    );
    let attempt = AttemptRow {
        hash: vec![7; 32],
        tenant_id: TENANT.into(),
        provider: "google".into(),
        interaction_id: Some(INTERACTION.into()),
        link_for: Some(USER.into()),
        created_at: AT,
        expires_at: AT,
        used_at: None,
    };
    check(
        attempt,
        AttemptRow::decode,
        &[
            ("social_attempts.hash", |r| r.hash = vec![7; 31]),
            ("social_attempts.tenant_id", |r| r.tenant_id = USER.into()),
            ("social_attempts.provider", |r| r.provider = "-x".into()),
            ("social_attempts.interaction_id", |r| {
                r.interaction_id = Some(USER.into());
            }),
            ("social_attempts.link_for", |r| {
                r.link_for = Some(TENANT.into());
            }),
        ],
    );
    let link = LinkRow {
        tenant_id: TENANT.into(),
        provider: "github".into(),
        subject: "583231".into(),
        user_id: USER.into(),
        email: Some("ada@example.com".into()),
        created_at: AT,
    };
    check(
        link,
        LinkRow::decode,
        &[
            ("social_links.tenant_id", |r| r.tenant_id = USER.into()),
            ("social_links.provider", |r| r.provider = String::new()),
            ("social_links.user_id", |r| r.user_id = TENANT.into()),
        ],
    );
    let pending = PendingRow {
        hash: vec![7; 32],
        tenant_id: TENANT.into(),
        provider: "github".into(),
        subject: "583231".into(),
        user_id: USER.into(),
        email: "ada@example.com".into(),
        interaction_id: None,
        created_at: AT,
        expires_at: AT,
    };
    check(
        pending,
        PendingRow::decode,
        &[
            ("pending_social_links.hash", |r| r.hash = Vec::new()),
            ("pending_social_links.tenant_id", |r| {
                r.tenant_id = USER.into();
            }),
            ("pending_social_links.provider", |r| {
                r.provider = "GitHub".into();
            }),
            ("pending_social_links.user_id", |r| {
                r.user_id = TENANT.into()
            }),
            ("pending_social_links.interaction_id", |r| {
                r.interaction_id = Some(USER.into());
            }),
        ],
    );
}
