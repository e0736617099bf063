//! Port of SCIM 2.0 provisioning: the SCIM bearer tokens of a tenant (or of one organization),
//! the SCIM attributes a person has beyond their user record ([`ScimProfile`]), and the one
//! query a SCIM `GET /Users` needs: a page of the tenant's people matching a [`ScimFilter`].
//!
//! [`ScimFilter`] is the filter of RFC 7644 §3.4.2.2 reduced to what the store can answer: the
//! caller (the SCIM use cases) has already parsed the wire filter and mapped every attribute
//! path through its allow-list onto a [`ScimAttr`]; a backend renders it with bound parameters
//! only, never by splicing values into SQL.

use crate::StoreError;
use async_trait::async_trait;
use svc_domain::{
    OrganizationId, ScimProfile, ScimToken, ScimTokenId, SecretHash, TenantId, User, UserId,
};
use time::OffsetDateTime;

/// Attributes of a person a SCIM filter may test, each a column (or expression) of the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScimAttr {
    /// `id`: the user id.
    Id,
    /// `userName`: the profile's, else the email address.
    UserName,
    /// `externalId`.
    ExternalId,
    /// `emails.value` (and `emails` itself): the email address.
    Email,
    /// `displayName`: the full name.
    DisplayName,
    /// `name.givenName`.
    GivenName,
    /// `name.familyName`.
    FamilyName,
    /// `active` (boolean): not suspended.
    Active,
    /// `meta.created` (a time): when the person was created.
    Created,
    /// `meta.lastModified` (a time): the later of the record's and the SCIM attributes' last
    /// change.
    LastModified,
}

/// Comparison operators of RFC 7644 §3.4.2.2 (`pr` is [`ScimFilter::Present`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScimOp {
    /// `eq`
    Eq,
    /// `ne`
    Ne,
    /// `co`: contains.
    Co,
    /// `sw`: starts with.
    Sw,
    /// `ew`: ends with.
    Ew,
    /// `gt`
    Gt,
    /// `ge`
    Ge,
    /// `lt`
    Lt,
    /// `le`
    Le,
}

/// A comparison value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ScimValue {
    /// A string, compared case-insensitively (every string attribute here is `caseExact:
    /// false`, except `id` and `externalId`, whose values are case-folded the same on both sides).
    Str(String),
    /// A boolean (only for [`ScimAttr::Active`]).
    Bool(bool),
    /// An instant (only for [`ScimAttr::Created`] and [`ScimAttr::LastModified`]), compared to
    /// the millisecond on both backends.
    Time(OffsetDateTime),
}

/// A filter over resources, already checked against the attribute allow-list: over people
/// ([`ScimAttr`], the default) or groups ([`crate::ScimGroupAttr`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ScimFilter<A = ScimAttr> {
    /// Always true or always false (e.g. `emails[type eq "work"]`: every address is `work`).
    Const(bool),
    /// `attr pr`: the attribute has a value.
    Present(A),
    /// `attr op value`.
    Compare(A, ScimOp, ScimValue),
    /// `not (f)`.
    Not(Box<ScimFilter<A>>),
    /// Every one holds.
    And(Vec<ScimFilter<A>>),
    /// At least one holds.
    Or(Vec<ScimFilter<A>>),
}

/// The order of a listing (RFC 7644 §3.4.2.3): by `attr`, resources without a value last when
/// ascending and first when descending, ties (and everything without a sort) in id order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScimSort<A = ScimAttr> {
    /// The attribute sorted by: strings case-insensitively (byte order of the lowercased
    /// text, the same on every backend) unless `caseExact`, times to the millisecond.
    pub attr: A,
    /// `sortOrder=descending`.
    pub descending: bool,
}

/// A person as SCIM shows them: their record and their SCIM attributes, if any were written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScimUser {
    /// The user record.
    pub user: User,
    /// Their `userName` / `externalId`, when a directory wrote them.
    pub profile: Option<ScimProfile>,
}

/// One page of a SCIM listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScimPage {
    /// How many people match in all.
    pub total: u64,
    /// The page, in the order asked.
    pub users: Vec<ScimUser>,
}

/// Reads of SCIM state.
#[async_trait]
pub trait ScimReads {
    /// The unrevoked SCIM token of `tenant` whose SHA-256 is `hash`. The hash is the lookup key:
    /// a SHA-256 of 256 random bits reveals nothing by how fast an index finds it.
    async fn scim_token_by_hash(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
    ) -> Result<Option<ScimToken>, StoreError>;

    /// Every SCIM token of `tenant`, revoked ones included, in id order.
    async fn scim_tokens(&mut self, tenant: &TenantId) -> Result<Vec<ScimToken>, StoreError>;

    /// The SCIM attributes of `user` of `tenant`, if any were written.
    async fn scim_profile(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<Option<ScimProfile>, StoreError>;

    /// The people of `tenant` that are not removed, members of `organization` when given,
    /// matching `filter` when given: how many in all, and `limit` of them in `sort` order (id
    /// order without one) past the first `offset`.
    #[allow(clippy::too_many_arguments)] // the query's parameters, each distinct
    async fn scim_users(
        &mut self,
        tenant: &TenantId,
        organization: Option<&OrganizationId>,
        filter: Option<&ScimFilter>,
        sort: Option<&ScimSort>,
        offset: u64,
        limit: u32,
    ) -> Result<ScimPage, StoreError>;
}

/// Writes of SCIM state.
#[async_trait]
pub trait ScimWrites {
    /// Stores a SCIM token. [`StoreError::Conflict`] naming `scim_tokens_tenant_id_fkey` when
    /// the tenant (or `scim_tokens_organization_fkey` when the organization) does not exist.
    async fn insert_scim_token(&mut self, token: &ScimToken) -> Result<(), StoreError>;

    /// Revokes the token `id` of `tenant` at `now`; whether it existed unrevoked.
    async fn revoke_scim_token(
        &mut self,
        tenant: &TenantId,
        id: &ScimTokenId,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError>;

    /// Writes the SCIM attributes of a person of `tenant` (an upsert).
    /// [`StoreError::Conflict`] naming `scim_users_user_name_key` when another person of the
    /// tenant holds the `userName` (compared case-insensitively), or `scim_users_user_fkey`
    /// when the person does not exist.
    async fn set_scim_profile(
        &mut self,
        tenant: &TenantId,
        profile: &ScimProfile,
    ) -> Result<(), StoreError>;

    /// Forgets the SCIM attributes of `user` (a removed person frees their `userName`);
    /// whether there were any.
    async fn delete_scim_profile(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<bool, StoreError>;
}
