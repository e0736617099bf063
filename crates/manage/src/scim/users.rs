//! The SCIM User resource type (RFC 7644 §3.2–§3.6) over the tenant's people: list, read,
//! create, replace, PATCH and delete, each within the caller's reach (the tenant, or one
//! organization's members).
//!
//! Rules beyond the users use cases' own (which every write goes through, in one transaction):
//! - `userName` is unique among the tenant's people that are not removed, ignoring case
//!   (`uniqueness`, 409); a person created elsewhere has their email as `userName`.
//! - A person needs an email address: the primary (else first) of `emails`, else a `userName`
//!   that is one. Without `emails`, a replace keeps the address the person has.
//! - `active: false` suspends (ending sessions and refresh tokens at once); `active: true`
//!   reactivates. DELETE removes the person (deprovisioning: sessions, refresh tokens, links,
//!   memberships and roles end in the same transaction) and frees their `userName`.
//! - An organization's token changes (PUT, PATCH) only people it owns alone: members of its
//!   organization and of no other, holding no tenant role; anyone else is 403 (an
//!   organization's directory must not rewrite a tenant administrator's address). Its DELETE of
//!   such a person only ends their membership of its organization.
//! - `If-Match` (RFC 7644 §3.14) must name the current `meta.version`, else 412.
//! - `id` is the server's: a replace naming another `id` is `mutability`.

use super::filter;
use super::groups;
use super::patch;
use super::resource::{self, Projection, UserInput, changed_at, read_input, represent};
use super::{ScimCaller, ScimError, ScimSettings};
use crate::users::{self as people, NewUser, UserChange, check_email, check_name};
use crate::{ManageContext, PendingMail, Precondition, RequestMeta, Revision};
use serde_json::{Value, json};
use svc_domain::{Email, Membership, ORG_MEMBER, RoleKey, Tenant, UserId, UserStatus};
use svc_store::{
    ScimAttr, ScimFilter, ScimGroupReads, ScimOp, ScimReads, ScimSort, ScimUser, ScimValue,
    StoreError,
};
use time::{Duration, OffsetDateTime};

/// A resource as answered: its representation (before any projection), `meta.version` and
/// `meta.location`.
#[derive(Debug, Clone, PartialEq)]
pub struct Represented {
    /// The User resource.
    pub resource: Value,
    /// The weak entity tag (`ETag`).
    pub version: String,
    /// Its URL (`Location`).
    pub location: String,
}

fn answer(person: &ScimUser, base: &str) -> Represented {
    Represented {
        resource: represent(person, base),
        version: resource::version_tag(resource::revision(person)),
        location: format!("{base}/Users/{}", person.user.id),
    }
}

/// [`answer`] with the person's read-only `groups` (of the caller's scope), read within `tx`.
async fn answer_with_groups<T: ScimGroupReads + Send + ?Sized>(
    tx: &mut T,
    caller: &ScimCaller,
    person: &ScimUser,
    base: &str,
) -> Result<Represented, ScimError> {
    let mut answered = answer(person, base);
    let mut slot = [(person.user.id.clone(), &mut answered.resource)];
    groups::with_groups(tx, caller, base, &mut slot).await?;
    Ok(answered)
}

/// The precondition of `If-Match` values (RFC 7232 §3.1, RFC 7644 §3.14): `*`, or a list of
/// tags, weak (`W/"…"`, as `meta.version` is written) or strong; a tag that is not ours matches
/// nothing.
pub fn if_match<'a>(values: impl IntoIterator<Item = &'a str>) -> Precondition {
    let mut tags = Vec::new();
    let mut any = false;
    for value in values {
        for tag in value.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            if tag == "*" {
                return Precondition::Exists;
            }
            any = true;
            let strong = tag.strip_prefix("W/").unwrap_or(tag);
            tags.push(Revision::parse_etag(strong));
        }
    }
    if any {
        Precondition::OneOf(tags)
    } else {
        Precondition::None
    }
}

fn check(precondition: &Precondition, person: &ScimUser) -> Result<(), ScimError> {
    if precondition.holds_for(resource::revision(person)) {
        Ok(())
    } else {
        Err(ScimError::PreconditionFailed)
    }
}

fn by_id(id: &UserId) -> ScimFilter {
    ScimFilter::Compare(
        ScimAttr::Id,
        ScimOp::Eq,
        ScimValue::Str(id.as_str().to_owned()),
    )
}

/// The person `id` within the caller's reach, or [`ScimError::NotFound`].
async fn visible<T: ScimReads + Send + ?Sized>(
    tx: &mut T,
    caller: &ScimCaller,
    id: &str,
) -> Result<ScimUser, ScimError> {
    let id = UserId::parse(id).map_err(|_| ScimError::NotFound)?;
    let page = tx
        .scim_users(
            &caller.tenant,
            caller.organization.as_ref(),
            Some(&by_id(&id)),
            None,
            0,
            1,
        )
        .await?;
    page.users.into_iter().next().ok_or(ScimError::NotFound)
}

/// Rule: no other person of the tenant holds `user_name` (ignoring case).
async fn name_free<T: ScimReads + Send + ?Sized>(
    tx: &mut T,
    caller: &ScimCaller,
    user_name: &str,
    except: Option<&UserId>,
) -> Result<(), ScimError> {
    let same = ScimFilter::Compare(
        ScimAttr::UserName,
        ScimOp::Eq,
        ScimValue::Str(user_name.to_owned()),
    );
    let page = tx
        .scim_users(&caller.tenant, None, Some(&same), None, 0, 2)
        .await?;
    if page.users.iter().any(|p| Some(&p.user.id) != except) {
        return Err(taken());
    }
    Ok(())
}

/// Whether `person` is the caller's alone: always for a tenant's token; for an organization's,
/// when they belong to no other organization and hold no tenant role. A person other
/// organizations (or the tenant's administrators) also rely on is not one directory's to change:
/// an organization's directory changing a tenant administrator's address would take over the
/// tenant.
async fn owned(
    tx: &mut dyn svc_store::WriteTx,
    caller: &ScimCaller,
    person: &ScimUser,
) -> Result<bool, ScimError> {
    let Some(org) = &caller.organization else {
        return Ok(true);
    };
    let id = &person.user.id;
    let elsewhere = tx
        .memberships_of_user(&caller.tenant, id)
        .await?
        .iter()
        .any(|m| &m.organization_id != org);
    Ok(!elsewhere && tx.user_roles(&caller.tenant, id).await?.is_empty())
}

fn not_owned() -> ScimError {
    ScimError::Forbidden(
        "this person also belongs to another organization or holds tenant roles; an \
         organization's directory cannot change them"
            .into(),
    )
}

fn taken() -> ScimError {
    ScimError::Uniqueness("userName is already taken by another person".into())
}

/// A profile write, with a taken `userName` read as [`ScimError::Uniqueness`].
async fn save_profile(
    tx: &mut dyn svc_store::WriteTx,
    tenant: &Tenant,
    profile: &svc_domain::ScimProfile,
) -> Result<(), ScimError> {
    match tx.set_scim_profile(&tenant.id, profile).await {
        Err(StoreError::Conflict { constraint }) if constraint == "scim_users_user_name_key" => {
            Err(taken())
        }
        other => Ok(other?),
    }
}

/// A time after `read` (the version read) no earlier than `now`, so every write is a new
/// version.
pub(super) fn after(read: OffsetDateTime, now: OffsetDateTime) -> OffsetDateTime {
    if now > read {
        now
    } else {
        read + Duration::microseconds(1)
    }
}

/// A page of the people within the caller's reach matching `filter`, in `sort` order (id
/// order without one) (RFC 7644 §3.4.2), each with their `groups`:
/// `start_index` 1-based (below 1 reads as 1), `count` capped at `settings.max_results`
/// (negative reads as 0: only `totalResults`). Answers a ListResponse with each resource
/// projected.
#[allow(clippy::too_many_arguments)] // the query's parameters, each distinct
pub async fn list(
    ctx: &ManageContext,
    settings: &ScimSettings,
    caller: &ScimCaller,
    base: &str,
    filter: Option<&str>,
    sort: Option<&ScimSort>,
    start_index: Option<i64>,
    count: Option<i64>,
    projection: &Projection,
) -> Result<Value, ScimError> {
    let filter = filter
        .filter(|f| !f.trim().is_empty())
        .map(filter::parse)
        .transpose()?;
    let start = start_index.unwrap_or(1).max(1);
    let max = i64::from(settings.max_results);
    let count = count.unwrap_or(max).clamp(0, max);
    let mut tx = ctx.store.read().await?;
    let page = tx
        .scim_users(
            &caller.tenant,
            caller.organization.as_ref(),
            filter.as_ref(),
            sort,
            u64::try_from(start - 1).unwrap_or(0),
            u32::try_from(count).unwrap_or(0),
        )
        .await?;
    let mut represented: Vec<(UserId, Value)> = page
        .users
        .iter()
        .map(|p| (p.user.id.clone(), represent(p, base)))
        .collect();
    let mut slots: Vec<(UserId, &mut Value)> = represented
        .iter_mut()
        .map(|(id, v)| (id.clone(), v))
        .collect();
    groups::with_groups(tx.as_mut(), caller, base, &mut slots).await?;
    tx.finish().await?;
    let resources: Vec<Value> = represented
        .into_iter()
        .map(|(_, v)| projection.apply(v))
        .collect();
    Ok(json!({
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
        "totalResults": page.total,
        "startIndex": start,
        "itemsPerPage": resources.len(),
        "Resources": resources,
    }))
}

/// The person `id` within the caller's reach.
///
/// Errors: [`ScimError::NotFound`].
pub async fn get(
    ctx: &ManageContext,
    caller: &ScimCaller,
    base: &str,
    id: &str,
) -> Result<Represented, ScimError> {
    let mut tx = ctx.store.read().await?;
    let person = visible(tx.as_mut(), caller, id).await?;
    let answered = answer_with_groups(tx.as_mut(), caller, &person, base).await?;
    tx.finish().await?;
    Ok(answered)
}

/// Creates a person from a User resource (pre-provisioned: they claim the account through a
/// password reset), a member of the caller's organization if it has one; `active: false`
/// creates them suspended.
///
/// Errors: [`ScimError::InvalidSyntax`], [`ScimError::InvalidValue`],
/// [`ScimError::Mutability`] (a password) for the body; [`ScimError::Uniqueness`] for a taken
/// `userName` or email address.
pub async fn create(
    ctx: &ManageContext,
    tenant: &Tenant,
    issuer: &str,
    caller: &ScimCaller,
    meta: &RequestMeta,
    body: &Value,
) -> Result<Represented, ScimError> {
    let input = read_input(body)?;
    let email = match &input.email {
        Some(email) => email.clone(),
        None if Email::parse(&input.user_name).is_ok() => input.user_name.clone(),
        None => {
            return Err(ScimError::InvalidValue(
                "a person needs an email address: give emails, or a userName that is one".into(),
            ));
        }
    };
    let new = NewUser {
        email,
        name: input.display_name.clone(),
        given_name: input.given_name.clone(),
        family_name: input.family_name.clone(),
        ..NewUser::default()
    };
    let (user, _) = people::prepare_new(ctx, tenant, new).await?;
    let actor = caller.actor();
    let mut tx = ctx.store.write().await?;
    name_free(tx.as_mut(), caller, &input.user_name, None).await?;
    people::create_in(tx.as_mut(), ctx, tenant, issuer, &actor, meta, &user, false).await?;
    let profile = svc_domain::ScimProfile {
        user_id: user.id.clone(),
        user_name: input.user_name.clone(),
        external_id: input.external_id.clone(),
        enterprise: input.enterprise.clone(),
        updated_at: user.created_at,
    };
    save_profile(tx.as_mut(), tenant, &profile).await?;
    if let Some(org) = &caller.organization {
        let membership = Membership {
            tenant_id: tenant.id.clone(),
            organization_id: org.clone(),
            user_id: user.id.clone(),
            roles: [RoleKey::parse(ORG_MEMBER).map_err(|_| {
                ScimError::Manage(crate::ManageError::Dependency("member role".into()))
            })?]
            .into_iter()
            .collect(),
            created_at: user.created_at,
            updated_at: user.created_at,
        };
        crate::organizations::insert_membership_in(tx.as_mut(), ctx, (&actor, meta), &membership)
            .await?;
    }
    if input.active == Some(false) {
        people::suspend_in(
            tx.as_mut(),
            ctx,
            &tenant.id,
            &actor,
            meta,
            &user.id,
            &Precondition::None,
        )
        .await?;
    }
    let person = visible(tx.as_mut(), caller, user.id.as_str()).await?;
    let answered = answer_with_groups(tx.as_mut(), caller, &person, &base(issuer)).await?;
    tx.commit().await?;
    Ok(answered)
}

/// The SCIM base URL of a tenant's issuer.
pub fn base(issuer: &str) -> String {
    format!("{}/scim/v2", issuer.trim_end_matches('/'))
}

/// Replaces the person `id` with a User resource (RFC 7644 §3.5.1).
///
/// Errors: as [`create`]; [`ScimError::NotFound`]; [`ScimError::PreconditionFailed`];
/// [`ScimError::Mutability`] for another `id`; [`ScimError::Conflict`] for a removed person.
#[allow(clippy::too_many_arguments)] // the request's facts, each distinct
pub async fn replace(
    ctx: &ManageContext,
    tenant: &Tenant,
    issuer: &str,
    caller: &ScimCaller,
    meta: &RequestMeta,
    id: &str,
    body: &Value,
    precondition: &Precondition,
) -> Result<Represented, ScimError> {
    let input = read_input(body)?;
    if input.id.as_deref().is_some_and(|given| given != id) {
        return Err(ScimError::Mutability("id cannot be changed".into()));
    }
    let mut tx = ctx.store.write().await?;
    let person = visible(tx.as_mut(), caller, id).await?;
    check(precondition, &person)?;
    let (person, mail) = overwrite(
        tx.as_mut(),
        ctx,
        tenant,
        issuer,
        caller,
        meta,
        person,
        input,
    )
    .await?;
    let answered = answer_with_groups(tx.as_mut(), caller, &person, &base(issuer)).await?;
    tx.commit().await?;
    if let Some(mail) = mail {
        mail.send();
    }
    Ok(answered)
}

/// Applies a PATCH (RFC 7644 §3.5.2) to the person `id`: the operations change the current
/// resource, which is then written as by [`replace`].
///
/// Errors: as [`replace`]; [`ScimError::InvalidPath`], [`ScimError::NoTarget`] for the
/// operations.
#[allow(clippy::too_many_arguments)] // the request's facts, each distinct
pub async fn patch(
    ctx: &ManageContext,
    tenant: &Tenant,
    issuer: &str,
    caller: &ScimCaller,
    meta: &RequestMeta,
    id: &str,
    body: &Value,
    precondition: &Precondition,
) -> Result<Represented, ScimError> {
    let operations = patch::read(body)?;
    let mut tx = ctx.store.write().await?;
    let person = visible(tx.as_mut(), caller, id).await?;
    check(precondition, &person)?;
    if !owned(tx.as_mut(), caller, &person).await? {
        return Err(not_owned());
    }
    let Value::Object(mut doc) = represent(&person, "") else {
        return Err(ScimError::InvalidSyntax("unexpected resource".into()));
    };
    doc.remove("meta");
    patch::apply(&mut doc, &operations)?;
    let input = read_input(&Value::Object(doc))?;
    let (person, mail) = overwrite(
        tx.as_mut(),
        ctx,
        tenant,
        issuer,
        caller,
        meta,
        person,
        input,
    )
    .await?;
    let answered = answer_with_groups(tx.as_mut(), caller, &person, &base(issuer)).await?;
    tx.commit().await?;
    if let Some(mail) = mail {
        mail.send();
    }
    Ok(answered)
}

/// A name field as the users use cases take it: `None` clears.
fn name_field(field: &str, value: Option<&str>) -> Result<Option<Option<String>>, ScimError> {
    Ok(Some(check_name(field, value)?))
}

/// Writes `input` over `person` within `tx`: record (through the users use case), SCIM
/// attributes, then `active`. Returns the person as now stored.
#[allow(clippy::too_many_arguments)] // the request's facts, each distinct
async fn overwrite(
    tx: &mut dyn svc_store::WriteTx,
    ctx: &ManageContext,
    tenant: &Tenant,
    issuer: &str,
    caller: &ScimCaller,
    meta: &RequestMeta,
    person: ScimUser,
    input: UserInput,
) -> Result<(ScimUser, Option<PendingMail>), ScimError> {
    let actor = caller.actor();
    let id = person.user.id.clone();
    if !resource::user_name(&person).eq_ignore_ascii_case(&input.user_name) {
        name_free(tx, caller, &input.user_name, Some(&id)).await?;
    }
    let change = UserChange {
        email: input.email.as_deref().map(check_email).transpose()?,
        name: name_field("name", input.display_name.as_deref())?,
        given_name: name_field("given_name", input.given_name.as_deref())?,
        family_name: name_field("family_name", input.family_name.as_deref())?,
        ..UserChange::default()
    };
    let (user, mail) = people::update_in(
        tx,
        ctx,
        tenant,
        issuer,
        &actor,
        meta,
        &id,
        change,
        &Precondition::None,
    )
    .await?;
    let unchanged = person.profile.as_ref().is_some_and(|p| {
        p.user_name == input.user_name
            && p.external_id == input.external_id
            && p.enterprise == input.enterprise
    });
    if !unchanged {
        let profile = svc_domain::ScimProfile {
            user_id: id.clone(),
            user_name: input.user_name.clone(),
            external_id: input.external_id.clone(),
            enterprise: input.enterprise.clone(),
            updated_at: after(changed_at(&person).max(user.updated_at), ctx.now()),
        };
        save_profile(tx, tenant, &profile).await?;
    }
    match (input.active, user.status) {
        (Some(false), status) if status != UserStatus::Suspended => {
            people::suspend_in(tx, ctx, &tenant.id, &actor, meta, &id, &Precondition::None).await?;
        }
        (Some(true), UserStatus::Suspended) => {
            people::reactivate_in(tx, ctx, &tenant.id, &actor, meta, &id, &Precondition::None)
                .await?;
        }
        _ => {}
    }
    let person = visible(tx, caller, id.as_str()).await?;
    Ok((person, mail))
}

/// Deprovisions the person `id` (RFC 7644 §3.6): removed, with their sessions, refresh tokens,
/// links, memberships and roles ended in the same transaction; their `userName` is freed. An
/// organization's token deprovisioning a person it does not own alone (another organization's
/// member too, or a holder of tenant roles) only ends their membership of its organization:
/// one directory never removes what others still rely on.
///
/// Errors: [`ScimError::NotFound`]; [`ScimError::PreconditionFailed`].
pub async fn delete(
    ctx: &ManageContext,
    caller: &ScimCaller,
    meta: &RequestMeta,
    id: &str,
    precondition: &Precondition,
) -> Result<(), ScimError> {
    let actor = caller.actor();
    let mut tx = ctx.store.write().await?;
    let person = visible(tx.as_mut(), caller, id).await?;
    check(precondition, &person)?;
    if let Some(org) = &caller.organization
        && !owned(tx.as_mut(), caller, &person).await?
    {
        // Others still rely on this person: this directory only lets go of them.
        let memberships = tx
            .memberships_of_user(&caller.tenant, &person.user.id)
            .await?;
        if let Some(own) = memberships.iter().find(|m| &m.organization_id == org) {
            crate::organizations::remove_membership_in(tx.as_mut(), ctx, (&actor, meta), own)
                .await?;
        }
        tx.commit().await?;
        return Ok(());
    }
    people::remove_in(
        tx.as_mut(),
        ctx,
        &caller.tenant,
        &actor,
        meta,
        &person.user.id,
        &Precondition::None,
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_match_reads_weak_and_strong_tags_and_star() {
        let r = Revision::of(OffsetDateTime::UNIX_EPOCH + Duration::seconds(5));
        let weak = resource::version_tag(r);
        assert!(if_match([weak.as_str()]).holds_for(r));
        assert!(if_match([r.etag().as_str()]).holds_for(r));
        assert_eq!(if_match(["*"]), Precondition::Exists);
        assert_eq!(if_match(Vec::<&str>::new()), Precondition::None);
        assert!(!if_match(["W/\"nope\""]).holds_for(r));
        let other = Revision::of(OffsetDateTime::UNIX_EPOCH);
        assert!(!if_match([resource::version_tag(other).as_str()]).holds_for(r));
    }
}
