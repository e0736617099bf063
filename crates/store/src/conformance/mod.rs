//! The conformance suite: behaviour every [`Store`](crate::Store) backend must show against a real
//! database. Each backend's `tests/conformance.rs` runs all of it through [`conformance_suite!`],
//! so SQLite and PostgreSQL are held to the same contract by the same code.

#![allow(clippy::expect_used, clippy::panic, clippy::unwrap_used)] // a test suite fails loudly

mod access;
mod agents;
mod api_keys;
mod applications;
mod audit;
mod backchannel;
mod delegations;
mod device;
mod domains;
mod factors;
mod grants;
mod integrity;
mod invitations;
mod login_history;
mod logout;
mod migrations;
mod organizations;
mod passkeys;
mod policies;
mod pushed;
mod recovery;
mod registration;
mod scim;
mod scim_groups;
mod signing_keys;
mod social;
mod sso;
mod tenants;
mod user_roles;
mod users;
mod webhooks;
mod write_once;

pub use access::*;
pub use agents::*;
pub use api_keys::*;
pub use applications::*;
pub use audit::*;
pub use backchannel::*;
pub use delegations::*;
pub use device::*;
pub use domains::*;
pub use factors::*;
pub use grants::*;
pub use integrity::*;
pub use invitations::*;
pub use login_history::*;
pub use logout::*;
pub use migrations::*;
pub use organizations::*;
pub use passkeys::*;
pub use policies::*;
pub use pushed::*;
pub use recovery::*;
pub use registration::*;
pub use scim::*;
pub use scim_groups::*;
pub use signing_keys::*;
pub use social::*;
pub use sso::*;
pub use tenants::*;
pub use user_roles::*;
pub use users::*;
pub use webhooks::*;
pub use write_once::*;

use crate::StoreError;
use svc_domain::{
    Clock, ManualClock, PairwiseSecret, SeededRandom, Tenant, TenantId, TenantSlug, TenantStatus,
};
use time::{Duration, OffsetDateTime};

/// A write refused by a CHECK constraint: both backends report it as [`StoreError::Corrupt`] (a
/// bug in what was written, never a conflict), naming the constraint in the message.
fn assert_refused_by_check<T: std::fmt::Debug>(result: Result<T, StoreError>, constraint: &str) {
    match result {
        Err(StoreError::Corrupt(message)) => assert!(
            message.contains(constraint),
            "{constraint}: the message names the rule: {message}"
        ),
        other => panic!("{constraint}: expected the schema to refuse it, got {other:?}"),
    }
}

/// A tenant fixture with timestamps at whole microseconds (PostgreSQL's precision), so a round
/// trip compares equal on every backend. Odd seeds allow sign-up; the pairwise secret is derived
/// from the seed, so two fixtures never share one.
pub fn tenant_fixture(slug: &str, seed: u64) -> Tenant {
    let at = OffsetDateTime::UNIX_EPOCH
        + Duration::days(20_000)
        + Duration::microseconds(seed as i64 * 1_001);
    let clock = ManualClock::new(at);
    Tenant {
        id: TenantId::generate(&clock, &SeededRandom::new(seed)),
        slug: TenantSlug::parse(slug).unwrap_or_else(|e| panic!("fixture slug {slug}: {e}")),
        display_name: format!("Tenant {slug}"),
        status: TenantStatus::Active,
        signup_enabled: seed % 2 == 1,
        mfa_policy: svc_domain::MfaPolicy::Default,
        pairwise_secret: PairwiseSecret::generate(&SeededRandom::new(seed ^ 0x5eed)),
        created_at: clock.now(),
        updated_at: clock.now(),
    }
}

/// Runs every conformance check as its own `#[tokio::test]`. `$make` is an async expression
/// producing a fresh, migrated `Arc<dyn Store>` on an empty database for each test.
#[macro_export]
macro_rules! conformance_suite {
    ($make:expr) => {
        $crate::conformance_suite!(@tests $make;
            ping_answers,
            migrations_are_current_after_migrate,
            migrate_is_idempotent,
            tenant_round_trips,
            tenant_slug_is_unique,
            tenant_id_is_unique,
            uncommitted_write_is_rolled_back,
            committed_write_is_visible_to_new_readers,
            read_once_sees_each_committed_state,
            update_tenant_changes_mutable_fields_only,
            update_of_missing_tenant_is_not_found,
            tenant_updates_carrying_a_stale_revision_change_nothing,
            list_tenants_paginates_in_id_order,
            concurrent_distinct_inserts_all_succeed,
            concurrent_same_slug_inserts_admit_exactly_one,
            pool_status_reports_configured_maximum,
            signing_keys_round_trip_per_tenant,
            one_active_and_one_next_key_per_algorithm,
            transitions_are_optimistic_and_atomic,
            delete_signing_key_is_scoped,
            racing_key_creators_admit_exactly_one,
            application_round_trips,
            application_minimum_acr_round_trips_and_is_checked,
            applications_are_isolated_per_tenant,
            application_conflicts_name_the_constraint,
            metadata_document_applications_are_found_by_url_per_tenant,
            list_applications_paginates_in_id_order,
            update_application_changes_mutable_fields_only,
            update_application_refuses_a_stale_revision,
            racing_application_updates_lose_nothing,
            delete_application_is_scoped,
            operator_tokens_are_found_by_hash,
            audit_log_lists_newest_first_with_filters_and_cursor,
            uncommitted_audit_entry_is_rolled_back,
            delete_tenant_keeps_audit_entries,
            idempotency_keys_claim_complete_replay_and_expire,
            assertion_ids_are_single_use_per_client,
            proof_ids_are_single_use_per_key,
            agent_challenges_are_single_use_per_agent,
            purge_expired_counts_and_keeps_live_rows,
            racing_claims_admit_exactly_one,
            write_once_admits_one_racer_and_needs_no_commit,
            user_round_trips,
            user_email_is_unique_among_users_not_removed,
            list_users_filters_and_paginates,
            users_are_isolated_per_tenant,
            user_updates_apply_only_at_the_revision_read,
            sessions_round_trip_revoke_and_list_live,
            login_history_pages_per_user_both_ways,
            login_history_keeps_every_method_and_result,
            login_history_purge_keeps_what_is_younger_than_the_retention,
            second_factors_round_trip_per_user_and_tenant,
            second_factor_confirmation_happens_once_for_its_owner,
            totp_steps_only_move_forward,
            second_factor_deletes_are_scoped,
            backup_codes_are_replaced_and_work_once,
            factor_challenges_are_single_use_and_expire,
            racing_second_factor_uses_admit_exactly_one,
            factor_writes_for_an_unknown_tenant_name_the_foreign_key,
            factor_data_key_is_stored_once_and_kept,
            factor_data_keys_refuse_unknown_purposes_and_bad_lengths,
            racing_factor_data_key_inserts_admit_exactly_one,
            known_devices_round_trip_per_user_and_tenant,
            known_devices_are_stored_once_and_touched,
            device_trust_is_set_cleared_and_forgotten_per_user,
            signed_in_from_needs_a_successful_sign_in_from_that_address,
            passkeys_round_trip_per_user_and_tenant,
            passkey_credential_ids_are_unique_per_tenant,
            passkey_writes_are_scoped_to_their_owner_and_tenant,
            passkeys_and_ceremonies_refuse_what_the_schema_forbids,
            webauthn_ceremonies_are_taken_once_for_their_purpose,
            racing_ceremony_takes_admit_exactly_one,
            security_key_factor_secrets_are_replaced_in_their_tenant,
            passkey_sign_ins_are_recorded_in_login_history,
            spent_and_expired_ceremonies_are_purged,
            recovery_guardians_round_trip_and_are_unique_per_user,
            recovery_guardian_deletes_are_scoped_and_keep_approvals,
            one_recovery_request_per_user_is_open,
            recovery_requests_are_found_by_secret_cancel_token_and_id,
            recovery_approvals_are_spent_once_before_expiry,
            recovery_transitions_apply_only_from_the_expected_status,
            racing_recovery_writes_admit_exactly_one,
            recovery_factor_due_is_read_and_cleared_per_user,
            recovery_requests_refuse_what_the_schema_forbids,
            closed_recoveries_are_purged_keeping_open_and_owing_ones,
            recovery_records_go_with_their_tenant,
            agents_round_trip_per_tenant,
            agents_are_checked_by_the_schema,
            list_agents_paginates_both_ways,
            agent_updates_apply_only_at_the_revision_read,
            agents_go_with_their_tenant,
            delegations_round_trip_and_list_per_person,
            delegations_are_revoked_by_their_person_once,
            delegations_go_with_their_tenant,
            organizations_round_trip_by_id_and_slug,
            organization_slugs_are_unique_per_tenant,
            list_organizations_paginates_both_ways,
            organization_updates_apply_only_at_the_revision_read,
            deleting_an_organization_deletes_its_memberships,
            memberships_round_trip_and_are_unique_per_organization,
            members_page_by_user_and_memberships_span_organizations,
            organizations_go_with_their_tenant,
            invitations_round_trip_by_id_token_and_target,
            one_pending_invitation_per_address_and_target,
            invitation_acceptance_happens_once_before_the_deadline,
            racing_invitation_acceptances_admit_exactly_one,
            invitation_updates_apply_only_at_the_revision_read,
            list_invitations_filters_by_organization_and_state,
            invitations_go_with_their_organization_and_tenant,
            domains_round_trip_and_are_claimed_once_per_organization,
            one_verified_claim_per_name_and_tenant,
            domain_updates_and_deletes_are_scoped_and_conditional,
            sso_connections_round_trip_and_are_replaced_keeping_their_creation,
            sso_attempts_are_taken_once_by_their_tenant_before_expiry,
            spent_and_expired_sso_attempts_are_purged,
            sso_links_are_unique_per_subject_and_go_with_their_connection,
            social_providers_round_trip_and_are_replaced_keeping_their_creation,
            deleting_a_social_provider_deletes_its_links_attempts_and_pending_links,
            social_attempts_are_taken_once_by_their_tenant_before_expiry,
            spent_and_expired_social_attempts_and_pending_links_are_purged,
            social_links_are_unique_per_subject_and_one_per_provider_per_person,
            pending_social_links_are_read_while_live_and_taken_once,
            user_roles_round_trip_and_are_replaced_as_a_set,
            user_roles_are_scoped_to_their_tenant,
            user_roles_go_with_their_tenant,
            api_resources_round_trip_and_identifiers_are_unique_per_tenant,
            access_policies_round_trip_and_names_are_unique_per_tenant,
            access_policy_updates_apply_only_at_the_revision_read,
            list_api_resources_paginates_both_ways,
            api_resource_updates_apply_only_at_the_revision_read,
            deleting_an_api_resource_deletes_its_grants,
            roles_round_trip_and_update_at_the_revision_read,
            role_grants_are_replaced_as_a_set_of_defined_permissions,
            deleting_a_role_deletes_its_grants,
            role_holders_count_people_memberships_and_applications,
            application_roles_are_replaced_as_a_set,
            access_model_goes_with_its_tenant,
            user_tokens_are_single_use,
            counters_count_in_fixed_windows,
            interactions_expire_and_are_scoped,
            consents_upsert_and_map_subjects_back,
            codes_redeem_once_and_remember_what_they_issued,
            refresh_tokens_rotate_once_then_report_reuse,
            refresh_family_revocation_keeps_the_first_reason,
            access_token_revocations_are_per_tenant,
            committed_revocations_reach_the_revocation_set,
            purge_expired_grants_removes_dead_rows_and_keeps_live_ones,
            a_bounded_purge_works_a_backlog_off_in_rounds,
            pushed_requests_are_taken_once_by_their_client_before_expiry,
            racing_pushed_request_takes_admit_exactly_one,
            expired_pushed_requests_are_purged,
            ending_sessions_writes_logout_notices_claimed_with_a_lease,
            logout_records_follow_their_application_not_their_session,
            expired_sessions_get_their_notices_once,
            device_authorizations_are_found_while_pending_and_decided_once,
            device_polls_enforce_and_grow_the_interval,
            racing_device_polls_admit_one_on_time,
            expired_device_authorizations_are_purged,
            registration_policies_default_to_disabled_and_are_per_tenant,
            metadata_document_acceptance_is_per_tenant_and_beside_the_policy,
            statement_issuers_are_per_tenant_and_replaced_whole,
            registration_tokens_belong_to_one_application_and_go_with_it,
            initial_access_tokens_spend_their_uses_until_expiry,
            scim_tokens_are_found_by_hash_in_their_tenant_until_revoked,
            api_keys_are_found_by_hash_in_their_tenant_and_counted_while_live,
            api_keys_for_an_api_keep_their_subject_and_go_with_the_api,
            subject_keys_list_and_count_and_the_policy_round_trips,
            agents_are_found_by_their_owner,
            scim_user_names_are_unique_per_tenant_ignoring_case,
            scim_listing_filters_pages_and_scopes,
            scim_groups_are_scoped_unique_and_keep_their_members,
            scim_group_roles_reach_members_and_go_with_the_group,
            organization_group_roles_stay_in_their_organization,
            scim_sorting_is_the_same_on_every_backend,
            backchannel_requests_are_listed_and_decided_by_their_person_only,
            backchannel_polls_enforce_and_grow_the_interval,
            expired_backchannel_requests_are_purged,
            agent_backchannel_requests_are_taken_once_approved,
            racing_code_redemptions_admit_exactly_one,
            racing_refresh_rotations_admit_exactly_one,
            writes_for_an_unknown_tenant_name_the_foreign_key,
            webhooks_round_trip_and_are_isolated_per_tenant,
            outbox_events_wait_for_the_relay_and_roll_back_with_their_change,
            deliveries_are_leased_fenced_retried_and_recorded,
            expired_leases_are_reported_and_inactive_subscriptions_wait,
            queue_stats_and_history_purge,
            racing_delivery_claims_lease_each_delivery_once,
            webhook_writes_carrying_a_stale_revision_change_nothing,
        );
    };
    (@tests $make:expr; $($check:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $check() {
                let store: std::sync::Arc<dyn $crate::Store> = $make.await;
                $crate::conformance::$check(store.clone()).await;
                store.close().await;
            }
        )*
    };
}
