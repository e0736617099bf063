//! `POST /.search` at the SCIM root (RFC 7644 §3.4.3): one query over every resource type,
//! Users then Groups, paged as one list (`totalResults` is the sum).
//!
//! The filter and `sortBy` apply to each resource type on its own: a type whose attributes
//! cannot express them matches nothing (a root search for `userName eq "…"` finds people and
//! no group); when neither type can, the Users error is the answer (`invalidFilter`,
//! `invalidValue`). Each type's part is sorted as asked; the parts are not merged.

use super::{Projection, ScimCaller, ScimError, ScimSettings};
use super::{filter, group_filter, groups, sort, users};
use crate::ManageContext;
use serde_json::{Value, json};

/// The query of a root search, as read from a SearchRequest.
#[derive(Debug, Clone, Copy)]
pub struct RootQuery<'a> {
    /// `filter`.
    pub filter: Option<&'a str>,
    /// `sortBy`.
    pub sort_by: Option<&'a str>,
    /// `sortOrder`.
    pub sort_order: Option<&'a str>,
    /// `startIndex` (1-based; below 1 reads as 1).
    pub start_index: Option<i64>,
    /// `count` (capped at `max_results`).
    pub count: Option<i64>,
}

/// Whether a resource type can read the query: `Ok(())`, or the error it gives.
fn readable<F, S>(raw: Option<&str>, parse: F, sorted: S) -> Result<(), ScimError>
where
    F: Fn(&str) -> Result<(), ScimError>,
    S: Fn() -> Result<(), ScimError>,
{
    if let Some(f) = raw.filter(|f| !f.trim().is_empty()) {
        parse(f)?;
    }
    sorted()
}

fn total(page: &Value) -> i64 {
    page["totalResults"].as_i64().unwrap_or(0)
}

fn resources(page: Value) -> Vec<Value> {
    match page {
        Value::Object(mut o) => match o.remove("Resources") {
            Some(Value::Array(items)) => items,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// Searches Users and Groups within the caller's reach.
///
/// Errors: the Users error when neither type can read the filter or sort.
pub async fn search_all(
    ctx: &ManageContext,
    settings: &ScimSettings,
    caller: &ScimCaller,
    base: &str,
    query: RootQuery<'_>,
    projection: &Projection,
) -> Result<Value, ScimError> {
    let user_sort = sort::users(query.sort_by, query.sort_order);
    let group_sort = sort::groups(query.sort_by, query.sort_order);
    let for_users = readable(
        query.filter,
        |f| filter::parse(f).map(drop),
        || user_sort.as_ref().map(drop).map_err(clone_error),
    );
    let for_groups = readable(
        query.filter,
        |f| group_filter::parse(f).map(drop),
        || group_sort.as_ref().map(drop).map_err(clone_error),
    );
    if let (Err(e), Err(_)) = (&for_users, &for_groups) {
        return Err(clone_error(e));
    }
    let user_sort = user_sort.ok().flatten();
    let group_sort = group_sort.ok().flatten();
    let start = query.start_index.unwrap_or(1).max(1);
    let max = i64::from(settings.max_results);
    let count = query.count.unwrap_or(max).clamp(0, max);
    let offset = start - 1;
    let list_users = |start: i64, count: i64| {
        users::list(
            ctx,
            settings,
            caller,
            base,
            query.filter,
            user_sort.as_ref(),
            Some(start),
            Some(count),
            projection,
        )
    };
    let list_groups = |start: i64, count: i64| {
        groups::list(
            ctx,
            settings,
            caller,
            base,
            query.filter,
            group_sort.as_ref(),
            Some(start),
            Some(count),
            projection,
        )
    };
    let user_total = if for_users.is_ok() {
        total(&list_users(1, 0).await?)
    } else {
        0
    };
    let group_total = if for_groups.is_ok() {
        total(&list_groups(1, 0).await?)
    } else {
        0
    };
    let mut items = Vec::new();
    if for_users.is_ok() && offset < user_total && count > 0 {
        items.extend(resources(
            list_users(offset + 1, count.min(user_total - offset)).await?,
        ));
    }
    let remaining = count - i64::try_from(items.len()).unwrap_or(count);
    if for_groups.is_ok() && remaining > 0 {
        let group_offset = (offset - user_total).max(0);
        if group_offset < group_total {
            items.extend(resources(list_groups(group_offset + 1, remaining).await?));
        }
    }
    Ok(json!({
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
        "totalResults": user_total + group_total,
        "startIndex": start,
        "itemsPerPage": items.len(),
        "Resources": items,
    }))
}

/// A copy of a client error (the query errors are the only ones cloned here).
fn clone_error(e: &ScimError) -> ScimError {
    match e {
        ScimError::InvalidFilter(m) => ScimError::InvalidFilter(m.clone()),
        ScimError::InvalidValue(m) => ScimError::InvalidValue(m.clone()),
        other => ScimError::InvalidValue(other.to_string()),
    }
}
