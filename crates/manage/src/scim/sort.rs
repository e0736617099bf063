//! Sorting of SCIM listings (RFC 7644 §3.4.2.3): `sortBy` names an attribute path,
//! `sortOrder` is `ascending` (the default) or `descending`, compared case-insensitively.
//!
//! Sortable here: for Users `id`, `userName`, `externalId`, `displayName`, `name.givenName`,
//! `name.familyName`, `emails` / `emails.value` (the one address), `active`, `meta.created`,
//! `meta.lastModified`; for Groups `id`, `displayName`, `externalId`, `meta.created`,
//! `meta.lastModified`. The order is the store's (the same on every backend: see
//! `svc_store::ScimSort`).
//!
//! RFC 7644 defines no error of its own for a `sortBy` the provider cannot sort by; §3.12's
//! `invalidValue` ("not compatible with the operation or attribute type") is the one that
//! fits, and answering 400 rather than silently ignoring it tells a client its order is not
//! the one it asked for. An unknown `sortOrder` is `invalidValue` too; `sortOrder` without
//! `sortBy` changes nothing (RFC 7644 §3.4.2.3 applies it to `sortBy`).

use super::ScimError;
use super::filter::USER_SCHEMA;
use super::group_filter::GROUP_SCHEMA;
use svc_store::{ScimAttr, ScimGroupAttr, ScimSort};

/// Longest `sortBy` read, in characters (an attribute path).
const MAX_SORT_BY_CHARS: usize = 256;

/// The sort of a Users listing, if one was asked for.
pub fn users(
    sort_by: Option<&str>,
    sort_order: Option<&str>,
) -> Result<Option<ScimSort<ScimAttr>>, ScimError> {
    sort(sort_by, sort_order, USER_SCHEMA, |path| {
        Some(match path {
            "id" => ScimAttr::Id,
            "username" => ScimAttr::UserName,
            "externalid" => ScimAttr::ExternalId,
            "displayname" => ScimAttr::DisplayName,
            "name.givenname" => ScimAttr::GivenName,
            "name.familyname" => ScimAttr::FamilyName,
            "emails" | "emails.value" => ScimAttr::Email,
            "active" => ScimAttr::Active,
            "meta.created" => ScimAttr::Created,
            "meta.lastmodified" => ScimAttr::LastModified,
            _ => return None,
        })
    })
}

/// The sort of a Groups listing, if one was asked for.
pub fn groups(
    sort_by: Option<&str>,
    sort_order: Option<&str>,
) -> Result<Option<ScimSort<ScimGroupAttr>>, ScimError> {
    sort(sort_by, sort_order, GROUP_SCHEMA, |path| {
        Some(match path {
            "id" => ScimGroupAttr::Id,
            "displayname" => ScimGroupAttr::DisplayName,
            "externalid" => ScimGroupAttr::ExternalId,
            "meta.created" => ScimGroupAttr::Created,
            "meta.lastmodified" => ScimGroupAttr::LastModified,
            _ => return None,
        })
    })
}

fn sort<A>(
    sort_by: Option<&str>,
    sort_order: Option<&str>,
    schema: &str,
    attribute: impl Fn(&str) -> Option<A>,
) -> Result<Option<ScimSort<A>>, ScimError> {
    let descending = match sort_order.map(str::trim).filter(|o| !o.is_empty()) {
        None => false,
        Some(o) if o.eq_ignore_ascii_case("ascending") => false,
        Some(o) if o.eq_ignore_ascii_case("descending") => true,
        Some(_) => {
            return Err(ScimError::InvalidValue(
                "sortOrder is ascending or descending".into(),
            ));
        }
    };
    let Some(raw) = sort_by.map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    let refused = || {
        let shown: String = raw.chars().take(64).collect();
        ScimError::InvalidValue(format!("cannot sort by {shown:?}"))
    };
    if raw.chars().count() > MAX_SORT_BY_CHARS {
        return Err(refused());
    }
    let lowered = raw.to_ascii_lowercase();
    let prefix = format!("{}:", schema.to_ascii_lowercase());
    let path = lowered.strip_prefix(&prefix).unwrap_or(&lowered);
    let attr = attribute(path).ok_or_else(refused)?;
    Ok(Some(ScimSort { attr, descending }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_orders_are_read_case_insensitively() {
        assert_eq!(
            users(Some("name.FamilyName"), Some("Descending")).ok(),
            Some(Some(ScimSort {
                attr: ScimAttr::FamilyName,
                descending: true
            }))
        );
        assert_eq!(
            users(
                Some("urn:ietf:params:scim:schemas:core:2.0:User:userName"),
                None
            )
            .ok(),
            Some(Some(ScimSort {
                attr: ScimAttr::UserName,
                descending: false
            }))
        );
        assert_eq!(users(None, Some("descending")).ok(), Some(None));
        assert_eq!(
            groups(Some("meta.created"), Some("ascending")).ok(),
            Some(Some(ScimSort {
                attr: ScimGroupAttr::Created,
                descending: false
            }))
        );
    }

    #[test]
    fn junk_is_invalid_value() {
        for (by, order) in [
            (Some("password"), None),
            (Some("members"), None),
            (Some("userName"), Some("up")),
            (Some("x".repeat(10_000).as_str()), None),
            (Some("name.familyName'; DROP TABLE users; --"), None),
        ] {
            assert!(
                matches!(users(by, order), Err(ScimError::InvalidValue(_))),
                "{by:?} {order:?}"
            );
        }
        assert!(matches!(
            groups(Some("userName"), None),
            Err(ScimError::InvalidValue(_))
        ));
    }
}
