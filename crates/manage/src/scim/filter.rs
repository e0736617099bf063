//! The SCIM filter (RFC 7644 §3.4.2.2) of `GET /Users?filter=…`: parsed by `scim_v2` (the full
//! grammar, with its own depth and term bounds), then mapped through an allow-list of User
//! attributes onto the store's [`ScimFilter`], whose values the backends bind as parameters.
//!
//! Rules:
//! - At most [`MAX_FILTER_CHARS`] characters; deeper or longer filters are refused by the
//!   parser (`scim_v2::filter::MAX_FILTER_DEPTH`, `MAX_FILTER_TERMS`). Each is `invalidFilter`.
//! - Attribute names compare case-insensitively and may carry the core User schema URN
//!   (RFC 7644 §3.10); any other attribute, or an operator the attribute's type does not
//!   support (`active co …`, `emails gt …`), is `invalidFilter`, never an empty result.
//! - `emails[…]` filters the one address a person has, which is `type: "work"` and primary: so
//!   `type` and `primary` tests inside the brackets are constants.
//! - `meta.created` / `meta.lastModified` take RFC 3339 date-times (`eq ne gt ge lt le pr`),
//!   compared to the millisecond.

use super::ScimError;
use scim_v2::filter::{AttrExp, AttrPath, CompValue, CompareOp, Filter, ValFilter};
use svc_store::{ScimAttr, ScimFilter, ScimOp, ScimValue};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Longest filter accepted, in characters.
pub const MAX_FILTER_CHARS: usize = 4096;

/// The core User schema URN, which may prefix attribute names.
pub(crate) const USER_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:User";

/// Parses and maps a filter.
pub fn parse(raw: &str) -> Result<ScimFilter, ScimError> {
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

fn map(filter: &Filter) -> Result<ScimFilter, ScimError> {
    Ok(match filter {
        Filter::Attr(exp) => attr_exp(exp, None)?,
        Filter::ValuePath(vp) => {
            let (attr, sub) = name_of(&vp.attr)?;
            if attr != "emails" || sub.is_some() {
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

/// A filter inside `emails[…]`.
fn val_filter(filter: &ValFilter) -> Result<ScimFilter, ScimError> {
    Ok(match filter {
        ValFilter::Attr(exp) => attr_exp(exp, Some("emails"))?,
        ValFilter::Not(inner) => ScimFilter::Not(Box::new(val_filter(inner)?)),
        ValFilter::And(items) => ScimFilter::And(
            items
                .as_slice()
                .iter()
                .map(val_filter)
                .collect::<Result<_, _>>()?,
        ),
        ValFilter::Or(items) => ScimFilter::Or(
            items
                .as_slice()
                .iter()
                .map(val_filter)
                .collect::<Result<_, _>>()?,
        ),
    })
}

fn unsupported(path: &str) -> ScimError {
    ScimError::InvalidFilter(format!("{path:?} is not an attribute a filter can test"))
}

/// The attribute name and sub-attribute, lowercased, without the core schema URN.
fn name_of(path: &AttrPath) -> Result<(String, Option<String>), ScimError> {
    if let Some(uri) = &path.uri
        && !uri.eq_ignore_ascii_case(USER_SCHEMA)
    {
        return Err(unsupported(&path.to_string()));
    }
    Ok((
        path.name.to_ascii_lowercase(),
        path.sub_attr.as_ref().map(|s| s.to_ascii_lowercase()),
    ))
}

/// What an attribute path names: a column, or (inside `emails[…]`) a constant sub-attribute.
enum Target {
    Column(ScimAttr),
    /// `emails.type`: always `work`.
    EmailType,
    /// `emails.primary`: always true.
    EmailPrimary,
}

fn target(path: &AttrPath, within: Option<&str>) -> Result<Target, ScimError> {
    let (name, sub) = name_of(path)?;
    let (name, sub) = match within {
        // Inside `emails[…]` a name is a sub-attribute of `emails`.
        Some(parent) if sub.is_none() => (parent.to_owned(), Some(name)),
        Some(_) => return Err(unsupported(&path.to_string())),
        None => (name, sub),
    };
    Ok(Target::Column(match (name.as_str(), sub.as_deref()) {
        ("id", None) => ScimAttr::Id,
        ("username", None) => ScimAttr::UserName,
        ("externalid", None) => ScimAttr::ExternalId,
        ("displayname", None) => ScimAttr::DisplayName,
        ("active", None) => ScimAttr::Active,
        ("name", Some("givenname")) => ScimAttr::GivenName,
        ("name", Some("familyname")) => ScimAttr::FamilyName,
        ("emails", None | Some("value")) => ScimAttr::Email,
        ("emails", Some("type")) => return Ok(Target::EmailType),
        ("emails", Some("primary")) => return Ok(Target::EmailPrimary),
        ("meta", Some("created")) => ScimAttr::Created,
        ("meta", Some("lastmodified")) => ScimAttr::LastModified,
        _ => return Err(unsupported(&path.to_string())),
    }))
}

pub(super) fn op(op: &CompareOp) -> ScimOp {
    match op {
        CompareOp::Eq => ScimOp::Eq,
        CompareOp::Ne => ScimOp::Ne,
        CompareOp::Co => ScimOp::Co,
        CompareOp::Sw => ScimOp::Sw,
        CompareOp::Ew => ScimOp::Ew,
        CompareOp::Gt => ScimOp::Gt,
        CompareOp::Ge => ScimOp::Ge,
        CompareOp::Lt => ScimOp::Lt,
        CompareOp::Le => ScimOp::Le,
    }
}

fn attr_exp(exp: &AttrExp, within: Option<&str>) -> Result<ScimFilter, ScimError> {
    let (path, operator, value) = match exp {
        AttrExp::Present(path) => {
            return Ok(match target(path, within)? {
                Target::Column(attr) => ScimFilter::Present(attr),
                Target::EmailType | Target::EmailPrimary => ScimFilter::Const(true),
            });
        }
        AttrExp::Comparison(path, operator, value) => (path, operator, value),
    };
    let invalid =
        || ScimError::InvalidFilter(format!("{path} cannot be compared with {operator} {value}"));
    match (target(path, within)?, value) {
        (Target::Column(ScimAttr::Active), CompValue::True | CompValue::False) => {
            let wanted = matches!(value, CompValue::True);
            match operator {
                CompareOp::Eq | CompareOp::Ne => Ok(ScimFilter::Compare(
                    ScimAttr::Active,
                    op(operator),
                    ScimValue::Bool(wanted),
                )),
                _ => Err(invalid()),
            }
        }
        (Target::Column(ScimAttr::Active), _) => Err(invalid()),
        (
            Target::Column(attr @ (ScimAttr::Created | ScimAttr::LastModified)),
            CompValue::Str(text),
        ) => {
            let at = OffsetDateTime::parse(text, &Rfc3339).map_err(|_| {
                ScimError::InvalidFilter(format!("{path}: {text:?} is not an RFC 3339 date-time"))
            })?;
            match operator {
                CompareOp::Co | CompareOp::Sw | CompareOp::Ew => Err(invalid()),
                _ => Ok(ScimFilter::Compare(attr, op(operator), ScimValue::Time(at))),
            }
        }
        (Target::Column(ScimAttr::Created | ScimAttr::LastModified), _) => Err(invalid()),
        (Target::Column(attr), CompValue::Str(text)) => Ok(ScimFilter::Compare(
            attr,
            op(operator),
            ScimValue::Str(text.clone()),
        )),
        // `attr eq null` is "absent" (RFC 7644 §3.4.2.2 treats null as unassigned).
        (Target::Column(attr), CompValue::Null) => match operator {
            CompareOp::Eq => Ok(ScimFilter::Not(Box::new(ScimFilter::Present(attr)))),
            CompareOp::Ne => Ok(ScimFilter::Present(attr)),
            _ => Err(invalid()),
        },
        (Target::Column(_), _) => Err(invalid()),
        (Target::EmailType, CompValue::Str(text)) => {
            constant(operator, "work", &text.to_ascii_lowercase()).ok_or_else(invalid)
        }
        (Target::EmailPrimary, CompValue::True | CompValue::False) => {
            let is_true = matches!(value, CompValue::True);
            match operator {
                CompareOp::Eq => Ok(ScimFilter::Const(is_true)),
                CompareOp::Ne => Ok(ScimFilter::Const(!is_true)),
                _ => Err(invalid()),
            }
        }
        (Target::EmailType | Target::EmailPrimary, _) => Err(invalid()),
    }
}

/// A string comparison against a known constant, decided here.
fn constant(operator: &CompareOp, actual: &str, wanted: &str) -> Option<ScimFilter> {
    let holds = match operator {
        CompareOp::Eq => actual == wanted,
        CompareOp::Ne => actual != wanted,
        CompareOp::Co => actual.contains(wanted),
        CompareOp::Sw => actual.starts_with(wanted),
        CompareOp::Ew => actual.ends_with(wanted),
        CompareOp::Gt => actual > wanted,
        CompareOp::Ge => actual >= wanted,
        CompareOp::Lt => actual < wanted,
        CompareOp::Le => actual <= wanted,
    };
    Some(ScimFilter::Const(holds))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(raw: &str) -> ScimFilter {
        parse(raw).unwrap_or_else(|e| panic!("{raw}: {e:?}"))
    }

    fn refused(raw: &str) {
        assert!(
            matches!(parse(raw), Err(ScimError::InvalidFilter(_))),
            "{raw} should be invalidFilter"
        );
    }

    fn s(attr: ScimAttr, op: ScimOp, v: &str) -> ScimFilter {
        ScimFilter::Compare(attr, op, ScimValue::Str(v.into()))
    }

    #[test]
    fn the_probe_directories_send_maps_to_user_name() {
        assert_eq!(
            ok(r#"userName eq "Ada@Example.com""#),
            s(ScimAttr::UserName, ScimOp::Eq, "Ada@Example.com")
        );
        assert_eq!(
            ok(r#"urn:ietf:params:scim:schemas:core:2.0:User:USERNAME eq "a""#),
            s(ScimAttr::UserName, ScimOp::Eq, "a")
        );
    }

    #[test]
    fn logic_grouping_and_value_paths_map() {
        assert_eq!(
            ok(r#"(name.givenName sw "A" or not (displayName pr)) and active eq false"#),
            ScimFilter::And(vec![
                ScimFilter::Or(vec![
                    s(ScimAttr::GivenName, ScimOp::Sw, "A"),
                    ScimFilter::Not(Box::new(ScimFilter::Present(ScimAttr::DisplayName))),
                ]),
                ScimFilter::Compare(ScimAttr::Active, ScimOp::Eq, ScimValue::Bool(false)),
            ])
        );
        assert_eq!(
            ok(r#"emails[type eq "work" and value co "@example.com"]"#),
            ScimFilter::And(vec![
                ScimFilter::Const(true),
                s(ScimAttr::Email, ScimOp::Co, "@example.com"),
            ])
        );
        assert_eq!(ok(r#"emails[type eq "home"]"#), ScimFilter::Const(false));
        assert_eq!(
            ok(r#"emails.value ew ".org""#),
            s(ScimAttr::Email, ScimOp::Ew, ".org")
        );
        assert_eq!(
            ok("externalId eq null"),
            ScimFilter::Not(Box::new(ScimFilter::Present(ScimAttr::ExternalId)))
        );
    }

    #[test]
    fn injection_stays_a_value() {
        assert_eq!(
            ok(r#"userName eq "x\" or 1=1""#),
            s(ScimAttr::UserName, ScimOp::Eq, "x\" or 1=1")
        );
        refused(r#"userName eq "x" or 1=1"#);
        refused(r#"userName eq 'x' OR '1'='1'"#);
    }

    #[test]
    fn unknown_attributes_types_and_bounds_are_invalid_filters() {
        for raw in [
            r#"password eq "x""#,
            r#"meta.created gt "yesterday""#,
            r#"meta.lastModified co "2020""#,
            r#"meta.version eq "x""#,
            r#"name.middleName eq "x""#,
            r#"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber eq "1""#,
            r#"active co "t""#,
            r#"active eq "true""#,
            r#"userName gt 3"#,
            r#"phoneNumbers[type eq "work"]"#,
            r#"emails[value.x eq "a"]"#,
            "",
            "userName",
        ] {
            refused(raw);
        }
        let deep = format!("{}userName pr{}", "(".repeat(10_000), ")".repeat(10_000));
        refused(&deep);
        let long = format!(r#"userName eq "{}""#, "a".repeat(MAX_FILTER_CHARS));
        refused(&long);
        let wide = vec![r#"userName eq "a""#; 2_000].join(" or ");
        refused(&wide);
    }

    /// Fuzz, bounded: 5000 random strings of filter tokens and hostile characters never panic
    /// the parser or the mapping; each is a filter or `invalidFilter`, never another error.
    #[test]
    fn random_input_is_a_filter_or_invalid_filter() {
        use svc_domain::Rng;
        const PIECES: [&str; 24] = [
            "userName",
            "emails",
            "[",
            "]",
            "(",
            ")",
            " ",
            "eq",
            "co",
            "pr",
            "and",
            "or",
            "not",
            "\"",
            "\\\"",
            "'",
            "name.givenName",
            "type",
            "value",
            "true",
            "null",
            "1",
            "%",
            "urn:ietf:params:scim:schemas:core:2.0:User:",
        ];
        let rng = svc_domain::SeededRandom::new(7);
        let pick = |n: usize| (rng.next_u128() % n as u128) as usize;
        let mut parsed = 0;
        for _ in 0..5_000 {
            let raw: String = if pick(4) == 0 {
                // Well-formed expressions, joined: some of the inputs parse.
                const EXPRESSIONS: [&str; 4] = [
                    r#"userName eq "a\"b""#,
                    r#"emails[type eq "work"]"#,
                    "not (displayName pr)",
                    r#"active eq false"#,
                ];
                let joiner = [" and ", " or "][pick(2)];
                (0..=pick(3))
                    .map(|_| EXPRESSIONS[pick(EXPRESSIONS.len())])
                    .collect::<Vec<_>>()
                    .join(joiner)
            } else {
                (0..pick(16)).map(|_| PIECES[pick(PIECES.len())]).collect()
            };
            match parse(&raw) {
                Ok(_) => parsed += 1,
                Err(ScimError::InvalidFilter(_)) => {}
                Err(other) => panic!("{raw:?}: {other:?}"),
            }
        }
        assert!(parsed > 0, "the generator never produced a valid filter");
    }
}
