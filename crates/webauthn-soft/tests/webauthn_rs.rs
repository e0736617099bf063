//! Self-validation of the soft authenticator against webauthn-rs 0.6.2 playing the relying
//! party: the JSON it answers parses as webauthn-rs-proto's `RegisterPublicKeyCredential` /
//! `PublicKeyCredential` and passes (or, with a hostile knob, fails) the ceremonies the way a
//! real browser and authenticator would. Also pins what webauthn-rs accepts as origins.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail loudly

use serde_json::{Value, json};
use svc_webauthn_soft::{CounterMode, SoftAuthenticator, b64url, from_b64url};
use webauthn_rs::prelude::*;

const RP_ID: &str = "localhost";
const ORIGIN: &str = "http://localhost:8080";

fn alice() -> Uuid {
    Uuid::from_u128(0xa11ce)
}

fn bob() -> Uuid {
    Uuid::from_u128(0xb0b)
}

fn relying_party(rp_id: &str, origin: &str) -> WebauthnBuilder<'static> {
    // The builder borrows both; tests are short-lived, so leaking a few strings is fine.
    let rp_id: &'static str = Box::leak(rp_id.to_owned().into_boxed_str());
    let origin: &'static Url = Box::leak(Box::new(Url::parse(origin).unwrap()));
    WebauthnBuilder::new(rp_id, origin).unwrap().rp_name("svc")
}

fn webauthn() -> Webauthn {
    relying_party(RP_ID, ORIGIN).build().unwrap()
}

/// The creation options as our server sends them for a passkey: resident key required.
fn passkey_options(ccr: &CreationChallengeResponse) -> Value {
    let mut options = serde_json::to_value(ccr).unwrap();
    let selection = &mut options["publicKey"]["authenticatorSelection"];
    selection["residentKey"] = json!("required");
    selection["requireResidentKey"] = json!(true);
    // Still what a browser (and webauthn-rs-proto) reads as creation options.
    let _: CreationChallengeResponse = serde_json::from_value(options.clone()).unwrap();
    options
}

fn parse_registration(response: Value) -> RegisterPublicKeyCredential {
    serde_json::from_value(response).unwrap()
}

fn parse_assertion(response: Value) -> PublicKeyCredential {
    serde_json::from_value(response).unwrap()
}

/// Registers `auth` as a passkey of `user` at `origin`.
fn try_register_passkey(
    wa: &Webauthn,
    auth: &mut SoftAuthenticator,
    user: Uuid,
    origin: &str,
) -> WebauthnResult<Passkey> {
    let (ccr, state) = wa
        .start_passkey_registration(user, "alice", "Alice", None)
        .unwrap();
    let response = auth.register(&passkey_options(&ccr), origin);
    wa.finish_passkey_registration(&parse_registration(response), &state)
}

fn register_passkey(wa: &Webauthn, auth: &mut SoftAuthenticator) -> Passkey {
    try_register_passkey(wa, auth, alice(), ORIGIN).unwrap()
}

/// A passkey authentication with allowCredentials naming `passkey`.
fn try_authenticate(
    wa: &Webauthn,
    auth: &mut SoftAuthenticator,
    passkey: &Passkey,
    origin: &str,
) -> WebauthnResult<AuthenticationResult> {
    let (rcr, state) = wa
        .start_passkey_authentication(std::slice::from_ref(passkey))
        .unwrap();
    let response = auth.assert(&serde_json::to_value(&rcr).unwrap(), origin);
    wa.finish_passkey_authentication(&parse_assertion(response), &state)
}

/// A discoverable sign-in (empty allowCredentials) finished against `passkey`.
fn try_discoverable(
    wa: &Webauthn,
    auth: &mut SoftAuthenticator,
    passkey: &Passkey,
) -> WebauthnResult<AuthenticationResult> {
    let (rcr, state) = wa.start_discoverable_authentication().unwrap();
    let credential = parse_assertion(auth.assert(&serde_json::to_value(&rcr).unwrap(), ORIGIN));
    wa.finish_discoverable_authentication_v2(&credential, state, passkey)
}

/// The flags a `Passkey` was stored with: no public accessor, but it serialises.
fn stored(passkey: &Passkey, field: &str) -> Value {
    serde_json::to_value(passkey).unwrap()["cred"][field].clone()
}

#[test]
fn passkey_registration_then_discoverable_sign_in() {
    let wa = webauthn();
    let mut auth = SoftAuthenticator::from_seed(1);
    let (ccr, reg_state) = wa
        .start_passkey_registration(alice(), "alice", "Alice", None)
        .unwrap();
    let options = passkey_options(&ccr);
    assert_eq!(options["publicKey"]["rp"]["id"], RP_ID);
    assert_eq!(
        options["publicKey"]["user"]["id"],
        b64url(alice().as_bytes())
    );

    let response = auth.register(&options, ORIGIN);
    let mut passkey = wa
        .finish_passkey_registration(&parse_registration(response), &reg_state)
        .unwrap();
    assert_eq!(passkey.cred_id().as_slice(), auth.credential_id().unwrap());
    assert_eq!(auth.user_handle(), Some(alice().as_bytes().as_slice()));
    assert_eq!(stored(&passkey, "backup_eligible"), json!(false));
    assert_eq!(stored(&passkey, "user_verified"), json!(true));
    assert_eq!(stored(&passkey, "counter"), json!(0));

    let (rcr, auth_state) = wa.start_discoverable_authentication().unwrap();
    let options = serde_json::to_value(&rcr).unwrap();
    assert_eq!(options["mediation"], "conditional");
    assert_eq!(options["publicKey"]["allowCredentials"], json!([]));
    assert_eq!(options["publicKey"]["rpId"], RP_ID);

    let credential = parse_assertion(auth.assert(&options, ORIGIN));
    let (user, cred_id) = wa
        .identify_discoverable_authentication(&credential)
        .unwrap();
    assert_eq!(user, alice());
    assert_eq!(cred_id, passkey.cred_id().as_slice());

    let result = wa
        .finish_discoverable_authentication_v2(&credential, auth_state, &passkey)
        .unwrap();
    assert!(result.user_verified());
    assert!(!result.backup_eligible());
    assert_eq!(result.counter(), 1);
    assert!(result.needs_update());
    assert_eq!(passkey.update_credential(&result), Some(true));
    assert_eq!(stored(&passkey, "counter"), json!(1));
    assert_eq!(passkey.update_credential(&result), Some(false));

    // And again: the counter moves on.
    let result = try_discoverable(&wa, &mut auth, &passkey).unwrap();
    assert_eq!(result.counter(), 2);
    assert_eq!(passkey.update_credential(&result), Some(true));
}

#[test]
fn non_discoverable_passkey_authentication() {
    let wa = webauthn();
    let mut auth = SoftAuthenticator::from_seed(2);
    // Without the resident-key edit too: webauthn-rs cannot tell and does not ask.
    let (ccr, state) = wa
        .start_passkey_registration(alice(), "alice", "Alice", None)
        .unwrap();
    let options = serde_json::to_value(&ccr).unwrap();
    assert_eq!(
        options["publicKey"]["authenticatorSelection"]["requireResidentKey"],
        json!(false)
    );
    let passkey = wa
        .finish_passkey_registration(&parse_registration(auth.register(&options, ORIGIN)), &state)
        .unwrap();

    let (rcr, state) = wa
        .start_passkey_authentication(std::slice::from_ref(&passkey))
        .unwrap();
    let options = serde_json::to_value(&rcr).unwrap();
    assert_eq!(
        options["publicKey"]["allowCredentials"][0]["id"],
        b64url(auth.credential_id().unwrap())
    );
    assert_eq!(options["publicKey"]["userVerification"], "required");
    assert!(options.get("mediation").is_none());
    let credential = parse_assertion(auth.assert(&options, ORIGIN));
    let result = wa
        .finish_passkey_authentication(&credential, &state)
        .unwrap();
    assert!(result.user_verified());
    assert_eq!(result.cred_id(), passkey.cred_id());
    assert_eq!(result.counter(), 1);
}

#[test]
fn security_key_registration_and_authentication() {
    let wa = webauthn();
    let mut auth = SoftAuthenticator::from_seed(3);
    let (ccr, state) = wa
        .start_securitykey_registration(bob(), "bob", "Bob", None, None, None)
        .unwrap();
    let options = serde_json::to_value(&ccr).unwrap();
    assert_eq!(
        options["publicKey"]["authenticatorSelection"]["userVerification"],
        "preferred"
    );
    let mut key = wa
        .finish_securitykey_registration(
            &parse_registration(auth.register(&options, ORIGIN)),
            &state,
        )
        .unwrap();
    assert_eq!(key.cred_id().as_slice(), auth.credential_id().unwrap());

    let (rcr, state) = wa
        .start_securitykey_authentication(std::slice::from_ref(&key))
        .unwrap();
    let credential = parse_assertion(auth.assert(&serde_json::to_value(&rcr).unwrap(), ORIGIN));
    let result = wa
        .finish_securitykey_authentication(&credential, &state)
        .unwrap();
    assert_eq!(result.counter(), 1);
    assert_eq!(key.update_credential(&result), Some(true));

    // Registered with UV, the "preferred" policy then insists on UV.
    auth.set_user_verified(false);
    let (rcr, state) = wa
        .start_securitykey_authentication(std::slice::from_ref(&key))
        .unwrap();
    let credential = parse_assertion(auth.assert(&serde_json::to_value(&rcr).unwrap(), ORIGIN));
    let err = wa
        .finish_securitykey_authentication(&credential, &state)
        .unwrap_err();
    assert!(matches!(err, WebauthnError::UserNotVerified), "{err:?}");

    // A key registered without UV authenticates without UV.
    let mut presence_only = SoftAuthenticator::from_seed(33).with_user_verified(false);
    let (ccr, state) = wa
        .start_securitykey_registration(bob(), "bob", "Bob", None, None, None)
        .unwrap();
    let key = wa
        .finish_securitykey_registration(
            &parse_registration(
                presence_only.register(&serde_json::to_value(&ccr).unwrap(), ORIGIN),
            ),
            &state,
        )
        .unwrap();
    let (rcr, state) = wa
        .start_securitykey_authentication(std::slice::from_ref(&key))
        .unwrap();
    let credential =
        parse_assertion(presence_only.assert(&serde_json::to_value(&rcr).unwrap(), ORIGIN));
    let result = wa
        .finish_securitykey_authentication(&credential, &state)
        .unwrap();
    assert!(!result.user_verified());
}

#[test]
fn a_wrong_origin_is_refused() {
    let wa = webauthn();
    let mut auth = SoftAuthenticator::from_seed(4);
    let err =
        try_register_passkey(&wa, &mut auth, alice(), "http://evil.example:8080").unwrap_err();
    assert!(matches!(err, WebauthnError::InvalidRPOrigin), "{err:?}");

    let passkey = register_passkey(&wa, &mut auth);
    let err = try_authenticate(&wa, &mut auth, &passkey, "http://evil.example:8080").unwrap_err();
    assert!(matches!(err, WebauthnError::InvalidRPOrigin), "{err:?}");
}

#[test]
fn a_wrong_rp_id_is_refused() {
    let wa = webauthn();
    let mut auth = SoftAuthenticator::from_seed(5).with_rp_id_override("evil.example");
    let err = try_register_passkey(&wa, &mut auth, alice(), ORIGIN).unwrap_err();
    assert!(matches!(err, WebauthnError::InvalidRPIDHash), "{err:?}");

    auth.set_rp_id_override(None);
    let passkey = register_passkey(&wa, &mut auth);
    auth.set_rp_id_override(Some("evil.example"));
    let err = try_authenticate(&wa, &mut auth, &passkey, ORIGIN).unwrap_err();
    assert!(matches!(err, WebauthnError::InvalidRPIDHash), "{err:?}");
}

#[test]
fn another_challenge_is_refused() {
    let wa = webauthn();
    let mut auth = SoftAuthenticator::from_seed(6).with_challenge_override(&[7; 32]);
    let err = try_register_passkey(&wa, &mut auth, alice(), ORIGIN).unwrap_err();
    assert!(matches!(err, WebauthnError::MismatchedChallenge), "{err:?}");

    auth.set_challenge_override(None);
    let passkey = register_passkey(&wa, &mut auth);
    auth.set_challenge_override(Some(&[7; 32]));
    let err = try_authenticate(&wa, &mut auth, &passkey, ORIGIN).unwrap_err();
    assert!(matches!(err, WebauthnError::MismatchedChallenge), "{err:?}");

    // A replayed answer (the challenge of an earlier ceremony) is another challenge too.
    auth.set_challenge_override(None);
    let (old, _) = wa
        .start_passkey_authentication(std::slice::from_ref(&passkey))
        .unwrap();
    let replay = auth.assert(&serde_json::to_value(&old).unwrap(), ORIGIN);
    let (_, state) = wa
        .start_passkey_authentication(std::slice::from_ref(&passkey))
        .unwrap();
    let err = wa
        .finish_passkey_authentication(&parse_assertion(replay), &state)
        .unwrap_err();
    assert!(matches!(err, WebauthnError::MismatchedChallenge), "{err:?}");
}

#[test]
fn user_verification_off_fails_passkey_ceremonies() {
    let wa = webauthn();
    let mut auth = SoftAuthenticator::from_seed(7).with_user_verified(false);
    let err = try_register_passkey(&wa, &mut auth, alice(), ORIGIN).unwrap_err();
    assert!(matches!(err, WebauthnError::UserNotVerified), "{err:?}");

    auth.set_user_verified(true);
    let passkey = register_passkey(&wa, &mut auth);
    auth.set_user_verified(false);
    let err = try_authenticate(&wa, &mut auth, &passkey, ORIGIN).unwrap_err();
    assert!(matches!(err, WebauthnError::UserNotVerified), "{err:?}");
    let err = try_discoverable(&wa, &mut auth, &passkey).unwrap_err();
    assert!(matches!(err, WebauthnError::UserNotVerified), "{err:?}");
}

#[test]
fn a_counter_going_back_is_a_possible_compromise() {
    let wa = webauthn();
    let mut original = SoftAuthenticator::from_seed(8);
    let mut passkey = register_passkey(&wa, &mut original);
    let mut clone = original.clone();

    for expected in 1..=2 {
        let result = try_authenticate(&wa, &mut original, &passkey, ORIGIN).unwrap();
        assert_eq!(result.counter(), expected);
        assert_eq!(passkey.update_credential(&result), Some(true));
    }
    assert_eq!(stored(&passkey, "counter"), json!(2));

    // The clone still holds 0: its next assertion says 1, below the 2 the server stored.
    let err = try_authenticate(&wa, &mut clone, &passkey, ORIGIN).unwrap_err();
    assert!(
        matches!(err, WebauthnError::CredentialPossibleCompromise),
        "{err:?}"
    );
    // Equal is refused too: the clone is at 1 now, its next assertion says 2.
    let err = try_authenticate(&wa, &mut clone, &passkey, ORIGIN).unwrap_err();
    assert!(
        matches!(err, WebauthnError::CredentialPossibleCompromise),
        "{err:?}"
    );
    // The same with an explicit counter, and through the discoverable path.
    original.set_counter(0);
    let err = try_discoverable(&wa, &mut original, &passkey).unwrap_err();
    assert!(
        matches!(err, WebauthnError::CredentialPossibleCompromise),
        "{err:?}"
    );
    original.set_counter(10);
    assert_eq!(
        try_authenticate(&wa, &mut original, &passkey, ORIGIN)
            .unwrap()
            .counter(),
        11
    );

    // A zero counter (synchronised passkeys) is never checked, while the stored one is 0.
    let mut synced = SoftAuthenticator::from_seed(80).with_counter_mode(CounterMode::Zero);
    let mut passkey = register_passkey(&wa, &mut synced);
    for _ in 0..3 {
        let result = try_authenticate(&wa, &mut synced, &passkey, ORIGIN).unwrap();
        assert_eq!(result.counter(), 0);
        assert!(!result.needs_update());
        assert_eq!(passkey.update_credential(&result), Some(false));
    }
}

#[test]
fn another_users_handle_is_what_identify_returns() {
    let wa = webauthn();
    let mut auth = SoftAuthenticator::from_seed(9);
    let passkey = register_passkey(&wa, &mut auth);
    auth.set_user_handle_override(Some(bob().as_bytes()));

    let (rcr, state) = wa.start_discoverable_authentication().unwrap();
    let credential = parse_assertion(auth.assert(&serde_json::to_value(&rcr).unwrap(), ORIGIN));
    let (user, cred_id) = wa
        .identify_discoverable_authentication(&credential)
        .unwrap();
    assert_eq!(user, bob());
    assert_eq!(cred_id, passkey.cred_id().as_slice());
    // webauthn-rs does not tie the user handle to the credential: finishing against alice's
    // passkey succeeds. The server must look the credential up under the identified user (and
    // so not find alice's credential for bob).
    let result = wa.finish_discoverable_authentication_v2(&credential, state, &passkey);
    assert!(result.is_ok(), "{result:?}");

    // A user handle that is not a UUID cannot be identified at all.
    auth.set_user_handle_override(Some(b"not-a-uuid"));
    let (rcr, _) = wa.start_discoverable_authentication().unwrap();
    let credential = parse_assertion(auth.assert(&serde_json::to_value(&rcr).unwrap(), ORIGIN));
    let err = wa
        .identify_discoverable_authentication(&credential)
        .unwrap_err();
    assert!(matches!(err, WebauthnError::InvalidUserUniqueId), "{err:?}");
}

#[test]
fn a_tampered_signature_is_refused() {
    let wa = webauthn();
    let mut auth = SoftAuthenticator::from_seed(10);
    let passkey = register_passkey(&wa, &mut auth);
    let (rcr, state) = wa
        .start_passkey_authentication(std::slice::from_ref(&passkey))
        .unwrap();
    let mut response = auth.assert(&serde_json::to_value(&rcr).unwrap(), ORIGIN);
    let signature = &mut response["response"]["signature"];
    let mut bytes = from_b64url(signature.as_str().unwrap()).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x01;
    *signature = json!(b64url(&bytes));
    let err = wa
        .finish_passkey_authentication(&parse_assertion(response), &state)
        .unwrap_err();
    assert!(
        matches!(err, WebauthnError::AuthenticationFailure),
        "{err:?}"
    );

    // Tampered authenticator data (another counter) breaks the signature as well.
    let (rcr, state) = wa
        .start_passkey_authentication(std::slice::from_ref(&passkey))
        .unwrap();
    let mut response = auth.assert(&serde_json::to_value(&rcr).unwrap(), ORIGIN);
    let data = &mut response["response"]["authenticatorData"];
    let mut bytes = from_b64url(data.as_str().unwrap()).unwrap();
    bytes[36] = bytes[36].wrapping_add(100);
    *data = json!(b64url(&bytes));
    let err = wa
        .finish_passkey_authentication(&parse_assertion(response), &state)
        .unwrap_err();
    assert!(
        matches!(err, WebauthnError::AuthenticationFailure),
        "{err:?}"
    );
}

#[test]
fn backup_eligibility_round_trips() {
    let wa = webauthn();
    let mut auth = SoftAuthenticator::from_seed(11)
        .with_backup_eligible(true)
        .with_backup_state(true)
        .with_counter_mode(CounterMode::Zero);
    let mut passkey = register_passkey(&wa, &mut auth);
    assert_eq!(stored(&passkey, "backup_eligible"), json!(true));
    assert_eq!(stored(&passkey, "backup_state"), json!(true));

    let result = try_discoverable(&wa, &mut auth, &passkey).unwrap();
    assert!(result.backup_eligible());
    assert!(result.backup_state());
    assert!(!result.needs_update());

    // The backup state may change (needs_update tells), eligibility may not go away.
    auth.set_backup_state(false);
    let result = try_authenticate(&wa, &mut auth, &passkey, ORIGIN).unwrap();
    assert!(result.needs_update());
    assert_eq!(passkey.update_credential(&result), Some(true));
    assert_eq!(stored(&passkey, "backup_state"), json!(false));
    auth.set_backup_eligible(false);
    let err = try_authenticate(&wa, &mut auth, &passkey, ORIGIN).unwrap_err();
    assert!(
        matches!(err, WebauthnError::CredentialBackupEligibilityInconsistent),
        "{err:?}"
    );
}

#[test]
fn backup_flags_webauthn_rs_refuses_or_upgrades() {
    let wa = webauthn();
    // "Backed up" without "eligible" is refused at registration.
    let mut auth = SoftAuthenticator::from_seed(12).with_backup_state(true);
    let err = try_register_passkey(&wa, &mut auth, alice(), ORIGIN).unwrap_err();
    assert!(
        matches!(err, WebauthnError::CredentialMayNotBeHardwareBound),
        "{err:?}"
    );

    // A hardware-bound passkey that turns eligible: upgraded on passkey authentication…
    let mut auth = SoftAuthenticator::from_seed(13);
    let mut passkey = register_passkey(&wa, &mut auth);
    auth.set_backup_eligible(true);
    // …but not on discoverable authentication.
    let err = try_discoverable(&wa, &mut auth, &passkey).unwrap_err();
    assert!(
        matches!(err, WebauthnError::CredentialBackupEligibilityInconsistent),
        "{err:?}"
    );
    let result = try_authenticate(&wa, &mut auth, &passkey, ORIGIN).unwrap();
    assert!(result.backup_eligible());
    assert!(result.needs_update());
    assert_eq!(passkey.update_credential(&result), Some(true));
    assert_eq!(stored(&passkey, "backup_eligible"), json!(true));
    try_discoverable(&wa, &mut auth, &passkey).unwrap();
}

/// What webauthn-rs 0.6.2 requires of origins, pinned.
#[test]
fn origin_rules_of_webauthn_rs() {
    let register = |wa: &Webauthn, origin: &str| {
        try_register_passkey(wa, &mut SoftAuthenticator::from_seed(14), alice(), origin)
    };
    let refused =
        |result: WebauthnResult<Passkey>| matches!(result, Err(WebauthnError::InvalidRPOrigin));

    // http is fine (no secure-context check) and localhost is a domain.
    let wa = webauthn();
    assert!(register(&wa, "http://localhost:8080").is_ok());
    // The trailing slash does not matter (origins compare as URL origins).
    assert!(register(&wa, "http://localhost:8080/").is_ok());
    // Port, scheme and host must match by default.
    assert!(refused(register(&wa, "http://localhost:9090")));
    assert!(refused(register(&wa, "http://localhost")));
    assert!(refused(register(&wa, "https://localhost:8080")));
    assert!(refused(register(&wa, "http://acme.localhost:8080")));

    // allow_any_port: any port, same scheme and host.
    let wa = relying_party(RP_ID, ORIGIN)
        .allow_any_port(true)
        .build()
        .unwrap();
    assert!(register(&wa, "http://localhost:9090").is_ok());
    assert!(register(&wa, "http://localhost").is_ok());
    assert!(refused(register(&wa, "https://localhost:8080")));

    // allow_subdomains: subdomains of the configured origin's host, same port.
    let wa = relying_party(RP_ID, ORIGIN)
        .allow_subdomains(true)
        .build()
        .unwrap();
    assert!(register(&wa, "http://acme.localhost:8080").is_ok());
    assert!(register(&wa, "http://a.b.localhost:8080").is_ok());
    assert!(refused(register(&wa, "http://acme.localhost:9090")));
    assert!(refused(register(&wa, "http://evillocalhost:8080")));

    // A tenant subdomain as the configured origin, with the parent or itself as RP ID.
    for rp_id in ["localhost", "acme.localhost"] {
        let wa = relying_party(rp_id, "http://acme.localhost:8080")
            .build()
            .unwrap();
        let (ccr, state) = wa
            .start_passkey_registration(alice(), "alice", "Alice", None)
            .unwrap();
        let mut auth = SoftAuthenticator::from_seed(15);
        let options = passkey_options(&ccr);
        assert_eq!(options["publicKey"]["rp"]["id"], rp_id);
        let response = auth.register(&options, "http://acme.localhost:8080");
        wa.finish_passkey_registration(&parse_registration(response), &state)
            .unwrap();
        assert!(refused(register(&wa, "http://localhost:8080")));
    }

    // The builder wants the RP ID to be the origin's host or a parent of it, and a domain.
    assert!(
        WebauthnBuilder::new(
            "localhost",
            &Url::parse("http://acme.localhost:8080").unwrap()
        )
        .is_ok()
    );
    for (rp_id, origin) in [
        ("acme.localhost", "http://localhost:8080"),
        ("other.localhost", "http://acme.localhost:8080"),
        ("127.0.0.1", "http://127.0.0.1:8080"),
        ("localhost", "http://127.0.0.1:8080"),
    ] {
        let err = WebauthnBuilder::new(rp_id, &Url::parse(origin).unwrap()).unwrap_err();
        assert!(
            matches!(err, WebauthnError::Configuration),
            "{rp_id} {origin}: {err:?}"
        );
    }

    // Extra origins are taken as they are: the RP ID is not checked against them at all.
    let wa = relying_party(RP_ID, ORIGIN)
        .append_allowed_origin(&Url::parse("https://elsewhere.example").unwrap())
        .build()
        .unwrap();
    assert!(register(&wa, "https://elsewhere.example").is_ok());
}
