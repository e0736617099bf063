//! The SCIM filter (RFC 7644 §3.4.2.2) of `GET /Groups?filter=…`: parsed by `scim_v2` like the
//! Users filter (same length, depth and term bounds), then mapped through the allow-list of
//! Group attributes onto the store's [`ScimFilter<ScimGroupAttr>`].
//!
//! Rules:
//! - Attributes: `id`, `displayName`, `externalId`, `members` / `members.value` (a member's
//!   id; holds when it holds for one member), `meta.created`, `meta.lastModified`; names compare
//!   case-insensitively and may carry the core Group schema URN. `members[value eq "…"]` is
//!   accepted (what Entra ID and Okta send to check a membership). Anything else, or an
//!   operator the attribute's type does not support, is `invalidFilter`.

use super::ScimError;
use super::filter::{MAX_FILTER_CHARS, op};
use scim_v2::filter::{AttrExp, AttrPath, CompValue, CompareOp, Filter, ValFilter};
use svc_store::{ScimFilter, ScimGroupAttr, ScimValue};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// The core Group schema URN (RFC 7643 §8.7.1), which may prefix attribute names.
pub(crate) const GROUP_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:Group";

type GroupFilter = ScimFilter<ScimGroupAttr>;

/// Parses and maps a Groups filter.
pub fn parse(raw: &str) -> Result<GroupFilter, ScimError> {
    if raw.chars().count() > MAX_FILTER_CHARS {
        return Err(ScimError::InvalidFilter(format!(
            "a filter is at most {MAX_FILTER_CHARS} characters"
        )));
    }
    let parsed: Filter = raw
        .parse()
        .map_err(|e| ScimError::InvalidFilter(format!("not a SCIM filter: {e}")))?;
    map(&parsed)
}

fn unsupported(path: &str) -> ScimError {
    ScimError::InvalidFilter(format!(
        "{path:?} is not a Group attribute a filter can test"
    ))
}

fn map(filter: &Filter) -> Result<GroupFilter, ScimError> {
    Ok(match filter {
        Filter::Attr(exp) => attr_exp(exp, false)?,
        Filter::ValuePath(vp) => {
            let (name, sub) = name_of(&vp.attr)?;
            if name != "members" || sub.is_some() {
                return Err(unsupported(&vp.attr.to_string()));
            }
            val_filter(&vp.filter)?
        }
        Filter::Not(inner) => ScimFilter::Not(Box::new(map(inner)?)),
        Filter::And(items) => {
            ScimFilter::And(items.as_slice().iter().map(map).collect::<Result<_, _>>()?)
        }
        Filter::Or(items) => {
            ScimFilter::Or(items.as_slice().iter().map(map).collect::<Result<_, _>>()?)
        }
    })
}

/// A filter inside `members[…]`.
fn val_filter(filter: &ValFilter) -> Result<GroupFilter, ScimError> {
    let all = |items: &[ValFilter]| -> Result<Vec<GroupFilter>, ScimError> {
        items.iter().map(val_filter).collect()
    };
    Ok(match filter {
        ValFilter::Attr(exp) => attr_exp(exp, true)?,
        ValFilter::Not(inner) => ScimFilter::Not(Box::new(val_filter(inner)?)),
        ValFilter::And(items) => ScimFilter::And(all(items.as_slice())?),
        ValFilter::Or(items) => ScimFilter::Or(all(items.as_slice())?),
    })
}

/// The attribute name and sub-attribute, lowercased, without the core Group schema URN.
fn name_of(path: &AttrPath) -> Result<(String, Option<String>), ScimError> {
    if let Some(uri) = &path.uri
        && !uri.eq_ignore_ascii_case(GROUP_SCHEMA)
    {
        return Err(unsupported(&path.to_string()));
    }
    Ok((
        path.name.to_ascii_lowercase(),
        path.sub_attr.as_ref().map(|s| s.to_ascii_lowercase()),
    ))
}

/// The attribute an attribute path names (inside `members[…]`, a sub-attribute of `members`).
pub(crate) fn target(path: &AttrPath, within_members: bool) -> Result<ScimGroupAttr, ScimError> {
    let (name, sub) = name_of(path)?;
    let (name, sub) = match (within_members, sub) {
        (true, None) => ("members".to_owned(), Some(name)),
        (true, Some(_)) => return Err(unsupported(&path.to_string())),
        (false, sub) => (name, sub),
    };
    Ok(match (name.as_str(), sub.as_deref()) {
        ("id", None) => ScimGroupAttr::Id,
        ("displayname", None) => ScimGroupAttr::DisplayName,
        ("externalid", None) => ScimGroupAttr::ExternalId,
        ("members", None | Some("value")) => ScimGroupAttr::Member,
        ("meta", Some("created")) => ScimGroupAttr::Created,
        ("meta", Some("lastmodified")) => ScimGroupAttr::LastModified,
        _ => return Err(unsupported(&path.to_string())),
    })
}

fn attr_exp(exp: &AttrExp, within_members: bool) -> Result<GroupFilter, ScimError> {
    let (path, operator, value) = match exp {
        AttrExp::Present(path) => return Ok(ScimFilter::Present(target(path, within_members)?)),
        AttrExp::Comparison(path, operator, value) => (path, operator, value),
    };
    let invalid =
        || ScimError::InvalidFilter(format!("{path} cannot be compared with {operator} {value}"));
    let attr = target(path, within_members)?;
    match (attr, value) {
        (ScimGroupAttr::Created | ScimGroupAttr::LastModified, CompValue::Str(text)) => {
            let at = OffsetDateTime::parse(text, &Rfc3339).map_err(|_| {
                ScimError::InvalidFilter(format!("{path}: {text:?} is not an RFC 3339 date-time"))
            })?;
            match operator {
                CompareOp::Co | CompareOp::Sw | CompareOp::Ew => Err(invalid()),
                _ => Ok(ScimFilter::Compare(attr, op(operator), ScimValue::Time(at))),
            }
        }
        (ScimGroupAttr::Created | ScimGroupAttr::LastModified, _) => Err(invalid()),
        (attr, CompValue::Str(text)) => Ok(ScimFilter::Compare(
            attr,
            op(operator),
            ScimValue::Str(text.clone()),
        )),
        (attr, CompValue::Null) => match operator {
            CompareOp::Eq => Ok(ScimFilter::Not(Box::new(ScimFilter::Present(attr)))),
            CompareOp::Ne => Ok(ScimFilter::Present(attr)),
            _ => Err(invalid()),
        },
        _ => Err(invalid()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_store::ScimOp;

    fn ok(raw: &str) -> GroupFilter {
        parse(raw).unwrap_or_else(|e| panic!("{raw}: {e:?}"))
    }

    #[test]
    fn what_directories_send_maps() {
        assert_eq!(
            ok(r#"displayName eq "Sales""#),
            ScimFilter::Compare(
                ScimGroupAttr::DisplayName,
                ScimOp::Eq,
                ScimValue::Str("Sales".into())
            )
        );
        let member = ScimFilter::Compare(
            ScimGroupAttr::Member,
            ScimOp::Eq,
            ScimValue::Str("usr_1".into()),
        );
        assert_eq!(ok(r#"members[value eq "usr_1"]"#), member);
        assert_eq!(ok(r#"members.value eq "usr_1""#), member);
        assert_eq!(
            ok(r#"id eq "g" and urn:ietf:params:scim:schemas:core:2.0:Group:externalId pr"#),
            ScimFilter::And(vec![
                ScimFilter::Compare(ScimGroupAttr::Id, ScimOp::Eq, ScimValue::Str("g".into())),
                ScimFilter::Present(ScimGroupAttr::ExternalId),
            ])
        );
    }

    #[test]
    fn user_attributes_types_and_bounds_are_invalid_filters() {
        for raw in [
            r#"userName eq "x""#,
            r#"members.display eq "x""#,
            r#"members[type eq "User"]"#,
            r#"meta.created gt "soon""#,
            r#"displayName gt true"#,
            r#"urn:ietf:params:scim:schemas:core:2.0:User:displayName eq "x""#,
        ] {
            assert!(
                matches!(parse(raw), Err(ScimError::InvalidFilter(_))),
                "{raw} should be invalidFilter"
            );
        }
        let deep = format!("{}displayName pr{}", "(".repeat(10_000), ")".repeat(10_000));
        assert!(matches!(parse(&deep), Err(ScimError::InvalidFilter(_))));
    }
}
