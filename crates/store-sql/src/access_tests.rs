//! Unit tests of `access.rs`'s row forms: each decodes, and names the column it cannot read.

use super::*;
use crate::users::tests::{AT, TENANT, USER, assert_twins, check};

const RESOURCE: &str = "res_01jd0000000000000000000000";

#[test]
fn resource_rows_decode_and_name_each_bad_column() {
    let resource = ResourceRow {
        id: RESOURCE.into(),
        tenant_id: TENANT.into(),
        identifier: "https://api.example.com/billing".into(),
        name: "Billing \"API\" ü".into(),
        created_at: AT,
        updated_at: AT,
        permissions: vec![
            ("billing:export".into(), "Export ü".into()),
            ("billing:read".into(), String::new()),
        ],
    };
    let decoded = resource.clone().decode().unwrap();
    assert_eq!(
        decoded
            .permissions
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>(),
        ["billing:export", "billing:read"]
    );
    check(
        resource,
        ResourceRow::decode,
        &[
            ("api_resources.id", |r| r.id = USER.into()),
            ("api_resources.tenant_id", |r| r.tenant_id = RESOURCE.into()),
            ("api_resource_permissions.name", |r| {
                r.permissions[1].0 = "openid".into();
            }),
        ],
    );
}

#[test]
fn role_and_grant_rows_decode_and_name_each_bad_column() {
    let role = RoleRow {
        tenant_id: TENANT.into(),
        role_key: "billing.viewer".into(),
        kind: "organization".into(),
        description: "Reads \"invoices\"".into(),
        created_at: AT,
        updated_at: AT,
    };
    assert_eq!(role.clone().decode().unwrap().kind, RoleKind::Organization);
    check(
        role,
        RoleRow::decode,
        &[
            ("roles.tenant_id", |r| r.tenant_id = USER.into()),
            ("roles.role_key", |r| r.role_key = "Billing".into()),
            ("roles.kind", |r| r.kind = "global".into()),
        ],
    );
    let grant = GrantRow {
        role_key: "owner".into(),
        resource_id: RESOURCE.into(),
        permission: "billing:read".into(),
    };
    check(
        grant,
        GrantRow::decode,
        &[
            ("role_permissions.role_key", |r| r.role_key = String::new()),
            ("role_permissions.resource_id", |r| {
                r.resource_id = TENANT.into();
            }),
            ("role_permissions.permission", |r| {
                r.permission = "billing".into();
            }),
        ],
    );
}

#[test]
fn both_dialects_bind_the_same_values() {
    assert_twins(&[
        (DELETE_OTHER_PERMISSIONS, 0),
        (SELECT_GRANTS, 0),
        (DELETE_OTHER_GRANTS, 0),
        (HOLDERS, 0),
        (DELETE_OTHER_APPLICATION_ROLES, 0),
    ]);
}

#[test]
fn conflicts_get_the_names_postgresql_reports() {
    let named = |constraint: &str| match resource_conflict(StoreError::Conflict {
        constraint: constraint.to_owned(),
    }) {
        StoreError::Conflict { constraint } => Some(constraint),
        _ => None,
    };
    assert_eq!(
        named(IDENTIFIER_KEY_BY_COLUMNS).as_deref(),
        Some(IDENTIFIER_KEY)
    );
    assert_eq!(
        named(naming::UNNAMED_FOREIGN_KEY).as_deref(),
        Some(RESOURCE_TENANT_FKEY)
    );
    assert_eq!(
        named("api_resources_pkey").as_deref(),
        Some("api_resources_pkey")
    );
}
