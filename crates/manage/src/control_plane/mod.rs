//! Control-plane use cases (`/api/v1/control-plane/*`, operator tokens): tenants, each born with
//! its management application, and the operator tokens that authenticate the control plane.
//!
//! Tenant writes are audited with the tenant's id as both the audit tenant and the target, so a
//! tenant's own audit log shows what the operators did to it (entries outlive a deleted tenant).

mod authenticate_operator;
mod create_operator_token;
mod create_tenant;
mod delete_tenant;
mod get_tenant;
mod list_tenants;
mod management_credentials;
mod reactivate_tenant;
mod rules;
mod suspend_tenant;
mod update_tenant;
mod view;

pub use authenticate_operator::authenticate_operator;
pub use create_operator_token::{OPERATOR_TOKEN_PREFIX, create_operator_token};
pub use create_tenant::{CreatedTenant, NewTenant, create_tenant};
pub use delete_tenant::delete_tenant;
pub use get_tenant::get_tenant;
pub use list_tenants::list_tenants;
pub use management_credentials::issue_management_credentials;
pub use reactivate_tenant::reactivate_tenant;
pub use suspend_tenant::suspend_tenant;
pub use update_tenant::{TenantPatch, update_tenant};
pub use view::{
    CreatedTenantView, ManagementApplicationView, ManagementCredentialsView, MfaPolicyView,
    TenantState, TenantView,
};
