//! The relying party: the one module that talks to `webauthn-rs` (passkeys and security keys) (WebAuthn Level 3 ceremony
//! checks, COSE keys, signature counters). Everything else in the engine sees JSON options to
//! send, opaque state strings to keep server-side, and small verdicts.
//!
//! A [`RelyingParty`] is built per request from the tenant's issuer: the RP ID is the issuer's
//! host (CONTRACTS.md: one RP per tenant host; changing it would orphan every passkey), the
//! allowed origin the issuer itself, plus `[passkey].origins` in single-tenant deployments.
//! User verification is always required; passkey registration asks for a discoverable
//! credential (`residentKey: required`) so sign-in needs no name first.

use crate::error::AuthnError;
use svc_domain::UserId;
use webauthn_rs::prelude::{
    CreationChallengeResponse, CredentialID, DiscoverableAuthentication, Passkey as WaPasskey,
    PasskeyRegistration, PublicKeyCredential, RegisterPublicKeyCredential, SecurityKey,
    SecurityKeyAuthentication, SecurityKeyRegistration, Url, Uuid, Webauthn, WebauthnBuilder,
    WebauthnError,
};
use webauthn_rs_proto::ResidentKeyRequirement;

/// Deployment-wide relying-party settings from `[passkey]`.
#[derive(Debug, Clone, Default)]
pub struct RpSettings {
    /// The RP ID to use instead of the issuer's host (single-tenant deployments only).
    pub rp_id: Option<String>,
    /// Origins accepted besides the issuer (single-tenant deployments only).
    pub extra_origins: Vec<String>,
}

/// Why a browser's answer was refused. Only the engine sees the difference; people see one
/// message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Unparseable, wrong origin, RP ID, challenge, signature, user verification…
    Invalid(String),
    /// The signature counter did not move forward: a cloned authenticator (WebAuthn §6.1.1).
    CounterRegressed,
}

/// A credential the registration ceremony proved.
pub(crate) struct Registered {
    pub(crate) credential_id: Vec<u8>,
    pub(crate) credential: String,
    pub(crate) backup_eligible: bool,
}

/// A passkey that answered a sign-in: its credential with the new counter.
pub(crate) struct Used {
    pub(crate) credential: String,
    pub(crate) backup_eligible: bool,
}

/// The WebAuthn user handle of a person: their id's 128 bits (no personal data, stable, and
/// different in every tenant since ids are).
pub(crate) fn user_handle(user: &UserId) -> Uuid {
    Uuid::from_u128(user.to_u128())
}

/// The WebAuthn relying party of one tenant issuer.
pub(crate) struct RelyingParty {
    webauthn: Webauthn,
}

impl RelyingParty {
    /// The relying party for `issuer` (`scheme://host[:port]`), shown to people as `name`.
    pub(crate) fn for_issuer(
        settings: &RpSettings,
        issuer: &str,
        name: &str,
    ) -> Result<Self, AuthnError> {
        let origin = Url::parse(issuer)
            .map_err(|e| AuthnError::Internal(format!("issuer {issuer} is not a URL: {e}")))?;
        let host = origin
            .host_str()
            .ok_or_else(|| AuthnError::Internal(format!("issuer {issuer} has no host")))?
            .to_owned();
        let rp_id = settings.rp_id.clone().unwrap_or(host);
        let mut builder = WebauthnBuilder::new(&rp_id, &origin)
            .map_err(|e| AuthnError::Internal(format!("relying party {rp_id}: {e}")))?
            .rp_name(name);
        for extra in &settings.extra_origins {
            let url = Url::parse(extra)
                .map_err(|e| AuthnError::Internal(format!("passkey origin {extra}: {e}")))?;
            builder = builder.append_allowed_origin(&url);
        }
        let webauthn = builder
            .build()
            .map_err(|e| AuthnError::Internal(format!("relying party {rp_id}: {e}")))?;
        Ok(Self { webauthn })
    }

    /// Options for registering a discoverable, user-verified passkey for `user`, excluding the
    /// credentials they already have; and the state to keep.
    pub(crate) fn start_registration(
        &self,
        user: &UserId,
        user_name: &str,
        display_name: &str,
        existing: &[Vec<u8>],
    ) -> Result<(serde_json::Value, String), AuthnError> {
        let exclude: Vec<CredentialID> = existing.to_vec();
        let (mut options, state) = self
            .webauthn
            .start_passkey_registration(
                user_handle(user),
                user_name,
                display_name,
                (!exclude.is_empty()).then_some(exclude),
            )
            .map_err(internal)?;
        require_resident_key(&mut options);
        Ok((to_json(&options)?, to_state(&state)?))
    }

    /// Checks a registration answer against its state.
    pub(crate) fn finish_registration(
        &self,
        answer: &str,
        state: &str,
    ) -> Result<Registered, Refusal> {
        let answer: RegisterPublicKeyCredential = parse(answer)?;
        let state: PasskeyRegistration =
            serde_json::from_str(state).map_err(|e| Refusal::Invalid(e.to_string()))?;
        let passkey = self
            .webauthn
            .finish_passkey_registration(&answer, &state)
            .map_err(refusal)?;
        let credential =
            serde_json::to_string(&passkey).map_err(|e| Refusal::Invalid(e.to_string()))?;
        Ok(Registered {
            credential_id: passkey.cred_id().to_vec(),
            backup_eligible: backup_eligible(&credential),
            credential,
        })
    }

    /// Options for a sign-in with any passkey of this RP (discoverable: the authenticator
    /// offers the person's passkeys, by autofill where the browser supports it); and the state
    /// to keep.
    pub(crate) fn start_sign_in(&self) -> Result<(serde_json::Value, String), AuthnError> {
        let (options, state) = self
            .webauthn
            .start_discoverable_authentication()
            .map_err(internal)?;
        Ok((to_json(&options)?, to_state(&state)?))
    }

    /// The person (user handle) and credential id a sign-in answer names, before anything is
    /// verified: only to find the passkey to verify it with.
    pub(crate) fn identify(&self, answer: &str) -> Result<(u128, Vec<u8>), Refusal> {
        let answer: PublicKeyCredential = parse(answer)?;
        let (handle, credential) = self
            .webauthn
            .identify_discoverable_authentication(&answer)
            .map_err(refusal)?;
        Ok((handle.as_u128(), credential.to_vec()))
    }

    /// Verifies a sign-in answer with the stored passkey `credential`: origin, RP ID,
    /// challenge, user verification, signature, and a counter that moved forward.
    pub(crate) fn finish_sign_in(
        &self,
        answer: &str,
        state: &str,
        credential: &str,
    ) -> Result<Used, Refusal> {
        let answer: PublicKeyCredential = parse(answer)?;
        let state: DiscoverableAuthentication =
            serde_json::from_str(state).map_err(|e| Refusal::Invalid(e.to_string()))?;
        let mut passkey: WaPasskey =
            serde_json::from_str(credential).map_err(|e| Refusal::Invalid(e.to_string()))?;
        let result = self
            .webauthn
            .finish_discoverable_authentication_v2(&answer, state, &passkey)
            .map_err(refusal)?;
        if !result.user_verified() {
            return Err(Refusal::Invalid("user verification missing".into()));
        }
        passkey.update_credential(&result);
        let credential =
            serde_json::to_string(&passkey).map_err(|e| Refusal::Invalid(e.to_string()))?;
        Ok(Used {
            backup_eligible: backup_eligible(&credential),
            credential,
        })
    }
}

/// A security key that answered a second step: which one, its credential with the new counter,
/// and whether the person verified on it (a PIN or biometric).
pub(crate) struct KeyUsed {
    pub(crate) credential_id: Vec<u8>,
    pub(crate) credential: String,
    pub(crate) user_verified: bool,
}

impl RelyingParty {
    /// Options for registering a security key (a second factor after the password) for
    /// `user`, excluding the keys they have; and the state to keep.
    pub(crate) fn start_key_registration(
        &self,
        user: &UserId,
        user_name: &str,
        display_name: &str,
        existing: &[Vec<u8>],
    ) -> Result<(serde_json::Value, String), AuthnError> {
        let exclude: Vec<CredentialID> = existing.to_vec();
        let (options, state) = self
            .webauthn
            .start_securitykey_registration(
                user_handle(user),
                user_name,
                display_name,
                (!exclude.is_empty()).then_some(exclude),
                None,
                None,
            )
            .map_err(internal)?;
        Ok((to_json(&options)?, to_state(&state)?))
    }

    /// Checks a security-key registration answer against its state: the key's credential id
    /// and serialised credential.
    pub(crate) fn finish_key_registration(
        &self,
        answer: &str,
        state: &str,
    ) -> Result<(Vec<u8>, String), Refusal> {
        let answer: RegisterPublicKeyCredential = parse(answer)?;
        let state: SecurityKeyRegistration =
            serde_json::from_str(state).map_err(|e| Refusal::Invalid(e.to_string()))?;
        let key = self
            .webauthn
            .finish_securitykey_registration(&answer, &state)
            .map_err(refusal)?;
        let credential =
            serde_json::to_string(&key).map_err(|e| Refusal::Invalid(e.to_string()))?;
        Ok((key.cred_id().to_vec(), credential))
    }

    /// The credential id an answer names (unverified: only to say which key it claims).
    pub(crate) fn answer_credential_id(answer: &str) -> Option<Vec<u8>> {
        serde_json::from_str::<PublicKeyCredential>(answer)
            .ok()
            .map(|a| a.get_credential_id().to_vec())
    }

    /// The credential id of a serialised security key.
    pub(crate) fn key_credential_id(credential: &str) -> Option<Vec<u8>> {
        serde_json::from_str::<SecurityKey>(credential)
            .ok()
            .map(|k| k.cred_id().to_vec())
    }

    /// Options for proving one of `keys` (serialised security keys); and the state to keep.
    pub(crate) fn start_key_authentication(
        &self,
        keys: &[String],
    ) -> Result<(serde_json::Value, String), AuthnError> {
        let keys = keys
            .iter()
            .map(|k| serde_json::from_str::<SecurityKey>(k))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| AuthnError::Internal(format!("a stored security key: {e}")))?;
        let (options, state) = self
            .webauthn
            .start_securitykey_authentication(&keys)
            .map_err(internal)?;
        Ok((to_json(&options)?, to_state(&state)?))
    }

    /// Verifies a second-step answer against its state and the person's `keys`: which key
    /// answered, with its counter moved on.
    pub(crate) fn finish_key_authentication(
        &self,
        answer: &str,
        state: &str,
        keys: &[String],
    ) -> Result<KeyUsed, Refusal> {
        let answer: PublicKeyCredential = parse(answer)?;
        let state: SecurityKeyAuthentication =
            serde_json::from_str(state).map_err(|e| Refusal::Invalid(e.to_string()))?;
        let result = self
            .webauthn
            .finish_securitykey_authentication(&answer, &state)
            .map_err(refusal)?;
        let mut key = keys
            .iter()
            .filter_map(|k| serde_json::from_str::<SecurityKey>(k).ok())
            .find(|k| k.cred_id() == result.cred_id())
            .ok_or_else(|| Refusal::Invalid("no such key of this person".into()))?;
        key.update_credential(&result);
        let credential =
            serde_json::to_string(&key).map_err(|e| Refusal::Invalid(e.to_string()))?;
        Ok(KeyUsed {
            credential_id: key.cred_id().to_vec(),
            credential,
            user_verified: result.user_verified(),
        })
    }
}

/// Passkeys must be discoverable so sign-in starts without a name (WebAuthn L3 §5.4.6:
/// `residentKey: required`); the library asks for `discouraged` and does not check it back.
fn require_resident_key(options: &mut CreationChallengeResponse) {
    if let Some(selection) = options.public_key.authenticator_selection.as_mut() {
        selection.resident_key = Some(ResidentKeyRequirement::Required);
        selection.require_resident_key = true;
    }
}

/// Whether a serialised credential is backup eligible (a synced passkey).
fn backup_eligible(credential: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(credential)
        .ok()
        .and_then(|v| v["cred"]["backup_eligible"].as_bool())
        .unwrap_or(false)
}

fn parse<T: serde::de::DeserializeOwned>(answer: &str) -> Result<T, Refusal> {
    serde_json::from_str(answer).map_err(|e| Refusal::Invalid(format!("answer: {e}")))
}

fn refusal(error: WebauthnError) -> Refusal {
    match error {
        WebauthnError::CredentialPossibleCompromise => Refusal::CounterRegressed,
        other => Refusal::Invalid(other.to_string()),
    }
}

fn internal(error: WebauthnError) -> AuthnError {
    AuthnError::Internal(format!("webauthn: {error}"))
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<serde_json::Value, AuthnError> {
    serde_json::to_value(value).map_err(|e| AuthnError::Internal(format!("webauthn options: {e}")))
}

fn to_state<T: serde::Serialize>(value: &T) -> Result<String, AuthnError> {
    serde_json::to_string(value).map_err(|e| AuthnError::Internal(format!("webauthn state: {e}")))
}
