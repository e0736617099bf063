//! What a caller sends to create or change a tenant user, and the rules of each field. Unknown
//! fields are refused, so a misspelt field is an error rather than silently ignored. Passwords
//! are never shown by `Debug`.

use crate::ManageError;
use serde::{Deserialize, Deserializer};
use std::fmt;
use svc_domain::Email;
use utoipa::ToSchema;

/// Longest name accepted (`name`, `given_name`, `family_name`), in characters.
pub const MAX_NAME_CHARS: usize = 200;

/// Body of `POST /api/v1/tenant-users`.
///
/// With `password` the user is `active`; with `invite: true` the user is `invited` and mailed an
/// invitation; with neither the user is `pre_provisioned` (they claim the account through a
/// password reset). Both at once is refused.
#[derive(Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "email": "ada@example.com",
    "name": "Ada Lovelace",
    "given_name": "Ada",
    "family_name": "Lovelace",
    "invite": true
}))]
pub struct NewUser {
    /// Sign-in address (`local@domain`, at most 254 characters; stored trimmed and
    /// lowercased). Unique among the tenant's users that are not removed.
    #[schema(format = Email, max_length = 254, example = "ada@example.com")]
    pub email: String,
    /// Full name (1 to 200 characters after trimming, no control characters).
    #[serde(default)]
    #[schema(max_length = 200, example = "Ada Lovelace")]
    pub name: Option<String>,
    /// Given name (same rule as `name`).
    #[serde(default)]
    #[schema(max_length = 200, example = "Ada")]
    pub given_name: Option<String>,
    /// Family name (same rule as `name`).
    #[serde(default)]
    #[schema(max_length = 200, example = "Lovelace")]
    pub family_name: Option<String>,
    /// Whether the address is known to be the person's (default false).
    #[serde(default)]
    pub email_verified: Option<bool>,
    /// Initial password: the user is `active`. The tenant's password policy and the
    /// breached-password check apply. Never shown again.
    #[serde(default)]
    #[schema(format = Password, write_only)]
    pub password: Option<String>,
    /// `true`: the user is `invited` and mailed an invitation link instead of being given a
    /// password (not together with `password`).
    #[serde(default)]
    pub invite: Option<bool>,
}

impl fmt::Debug for NewUser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NewUser")
            .field("email", &self.email)
            .field("name", &self.name)
            .field("given_name", &self.given_name)
            .field("family_name", &self.family_name)
            .field("email_verified", &self.email_verified)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("invite", &self.invite)
            .finish()
    }
}

/// Body of `PATCH /api/v1/tenant-users/{id}`: absent fields stay as they are; `null` clears a
/// name.
#[derive(Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"name": "Ada King", "family_name": null}))]
pub struct UserPatch {
    /// New sign-in address; unless `email_verified` is given too, it starts unverified, and
    /// every link mailed to the old address stops working (an invited user is invited again at
    /// the new one).
    #[serde(default)]
    #[schema(format = Email, max_length = 254, example = "ada.king@example.com")]
    pub email: Option<String>,
    /// New full name, or `null` to clear it.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, max_length = 200, example = "Ada King")]
    pub name: Option<Option<String>>,
    /// New given name, or `null` to clear it.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, max_length = 200)]
    pub given_name: Option<Option<String>>,
    /// New family name, or `null` to clear it.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, max_length = 200)]
    pub family_name: Option<Option<String>>,
    /// New verification flag.
    #[serde(default)]
    pub email_verified: Option<bool>,
    /// New password (policy and breach check apply); ends the user's sessions and refresh
    /// tokens, and activates an invited or pre-provisioned user.
    #[serde(default)]
    #[schema(format = Password, write_only)]
    pub password: Option<String>,
}

impl fmt::Debug for UserPatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserPatch")
            .field("email", &self.email)
            .field("name", &self.name)
            .field("given_name", &self.given_name)
            .field("family_name", &self.family_name)
            .field("email_verified", &self.email_verified)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl UserPatch {
    /// Whether the patch changes nothing at all.
    pub fn is_empty(&self) -> bool {
        self.email.is_none()
            && self.name.is_none()
            && self.given_name.is_none()
            && self.family_name.is_none()
            && self.email_verified.is_none()
            && self.password.is_none()
    }
}

/// A field that is present (even as `null`) deserialises to `Some(value)`; `serde(default)`
/// leaves an absent one `None`.
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// Rule: an address is `local@domain`, at most 254 characters; stored trimmed and lowercased.
pub(crate) fn check_email(raw: &str) -> Result<Email, ManageError> {
    Email::parse(raw).map_err(|e| ManageError::invalid("email", e.to_string()))
}

/// Rule: a name is 1 to 200 characters after trimming, without control characters.
pub(crate) fn check_name(field: &str, raw: Option<&str>) -> Result<Option<String>, ManageError> {
    let Some(raw) = raw else { return Ok(None) };
    let name = raw.trim();
    let len = name.chars().count();
    if !(1..=MAX_NAME_CHARS).contains(&len) || name.chars().any(char::is_control) {
        return Err(ManageError::invalid(
            field,
            format!("{field} must be 1 to {MAX_NAME_CHARS} characters, without control characters"),
        ));
    }
    Ok(Some(name.to_owned()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn a_patch_tells_absent_from_null() {
        let patch: UserPatch = serde_json::from_value(json!({"name": null})).unwrap();
        assert_eq!(patch.name, Some(None));
        assert_eq!(patch.given_name, None);
        assert!(!patch.is_empty());
        let patch: UserPatch = serde_json::from_value(json!({"name": "Ada"})).unwrap();
        assert_eq!(patch.name, Some(Some("Ada".to_owned())));
        assert!(
            serde_json::from_value::<UserPatch>(json!({}))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn unknown_fields_are_refused_and_passwords_are_not_shown() {
        let err = serde_json::from_value::<NewUser>(json!({"email": "a@b.c", "role": "admin"}));
        assert!(
            err.unwrap_err()
                .to_string()
                .contains("unknown field `role`")
        );
        let user: NewUser =
            serde_json::from_value(json!({"email": "a@b.c", "password": "hunter2-secret"}))
                .unwrap();
        assert!(!format!("{user:?}").contains("hunter2"));
        let patch: UserPatch =
            serde_json::from_value(json!({"password": "hunter2-secret"})).unwrap();
        assert!(!format!("{patch:?}").contains("hunter2"));
    }

    #[test]
    fn names_are_trimmed_and_bounded() {
        assert_eq!(
            check_name("name", Some("  Ada ")).unwrap(),
            Some("Ada".to_owned())
        );
        assert_eq!(check_name("name", None).unwrap(), None);
        for bad in ["", "   ", "a\u{0}b", &"x".repeat(201)] {
            let err = check_name("given_name", Some(bad)).unwrap_err();
            assert!(
                matches!(&err, ManageError::Invalid { field, .. } if field == "given_name"),
                "{bad:?}"
            );
        }
        assert!(check_email("not-an-address").is_err());
        assert_eq!(
            check_email(" Ada@Example.com").unwrap().as_str(),
            "ada@example.com"
        );
    }
}
