//! Applications that act in an organization (`organization_usage: require`, issue 17 item 3):
//! a request naming none is completed in the person's only organization without asking, sent
//! to the hosted picker when they have several (`interaction_required` under `prompt=none`),
//! and refused when they have none; the picker lists only the person's active organizations,
//! refuses a pick that is not theirs with the `organization` parameter's words, and continues
//! the same request, whose tokens then carry the organization picked.

use super::flow::*;
use super::organizations::{claims, organization};
use crate::authorize::{AuthorizeOutcome, OrganizationPrompt};
use svc_domain::{OrgStatus, OrganizationUsage, Origin};

async fn requiring() -> Flow {
    Flow::build(super::support::Fixture::new().await, true, |app| {
        app.organization_usage = OrganizationUsage::Require;
    })
    .await
}

#[tokio::test]
async fn a_person_in_no_organization_is_refused_and_in_one_is_never_asked() {
    let flow = requiring().await;
    let refused = query(&flow.authorize(&[]).await);
    assert_eq!(refused["error"], "access_denied");
    assert!(
        refused["error_description"].contains("organization"),
        "{refused:?}"
    );

    // Another person's organization, and a suspended one of theirs, do not count.
    organization(&flow, "others", false).await;
    let mut suspended = organization(&flow, "dormant", true).await;
    let mut tx = flow.fx.store.write().await.unwrap();
    let read = suspended.updated_at;
    suspended.status = OrgStatus::Suspended;
    suspended.updated_at = read + time::Duration::seconds(1);
    let applied = tx
        .update_organization_if_unchanged(&suspended, read)
        .await
        .unwrap();
    assert_eq!(applied, svc_store::UpdateOutcome::Applied);
    tx.commit().await.unwrap();
    assert_eq!(query(&flow.authorize(&[]).await)["error"], "access_denied");

    let only = organization(&flow, "acme", true).await;
    let code = query(&flow.authorize(&[]).await)["code"].clone();
    let tokens = flow.redeem(&code, VERIFIER).await.unwrap();
    assert_eq!(claims(&tokens.access_token)["org_id"], only.id.as_str());
}

#[tokio::test]
async fn several_organizations_are_picked_on_the_hosted_page() {
    let flow = requiring().await;
    let zeta = organization(&flow, "zeta", true).await;
    let acme = organization(&flow, "acme", true).await;
    let stranger = organization(&flow, "stranger", false).await;

    assert_eq!(
        query(&flow.authorize(&[("prompt", "none")]).await)["error"],
        "interaction_required"
    );
    let outcome = flow.authorize(&[]).await;
    let AuthorizeOutcome::SelectOrganization { interaction } = outcome else {
        panic!("expected the picker, got {outcome:?}");
    };
    let prompt: OrganizationPrompt = flow
        .authorize
        .organization_prompt(&flow.fx.tenant, &interaction, Some(&flow.session))
        .await
        .unwrap();
    let listed: Vec<&str> = prompt.organizations.iter().map(|o| o.id.as_str()).collect();
    assert_eq!(
        listed,
        [acme.id.as_str(), zeta.id.as_str()],
        "theirs, by name"
    );
    assert_eq!(prompt.client_name, flow.app.name);
    // Nobody signed in: sign in first.
    let anonymous = flow
        .authorize
        .organization_prompt(&flow.fx.tenant, &interaction, None)
        .await
        .unwrap_err();
    assert!(
        matches!(anonymous, AuthorizeOutcome::Login { .. }),
        "{anonymous:?}"
    );

    // A forged pick (not theirs) is the parameter's refusal, and ends the request.
    let forged = flow
        .authorize
        .choose_organization(
            &flow.fx.tenant,
            &flow.fx.issuer,
            &interaction,
            (Some(&flow.session), Origin::Unknown),
            stranger.id.as_str(),
        )
        .await;
    assert_eq!(query(&forged)["error"], "access_denied");
    let again = flow
        .authorize
        .organization_prompt(&flow.fx.tenant, &interaction, Some(&flow.session))
        .await;
    assert!(again.is_err(), "the refused request is gone");

    let AuthorizeOutcome::SelectOrganization { interaction } = flow.authorize(&[]).await else {
        panic!("expected the picker");
    };
    let picked = flow
        .authorize
        .choose_organization(
            &flow.fx.tenant,
            &flow.fx.issuer,
            &interaction,
            (Some(&flow.session), Origin::Unknown),
            zeta.id.as_str(),
        )
        .await;
    let answer = query(&picked);
    assert_eq!(answer["state"], "st-1");
    let tokens = flow.redeem(&answer["code"], VERIFIER).await.unwrap();
    assert_eq!(claims(&tokens.access_token)["org_id"], zeta.id.as_str());
    assert_eq!(claims(&tokens.access_token)["org_slug"], "zeta");
    // The old interaction id was replaced: it leads nowhere.
    let stale = flow
        .authorize
        .organization_prompt(&flow.fx.tenant, &interaction, Some(&flow.session))
        .await;
    assert!(stale.is_err());

    // Naming one in the request skips the page.
    let named = query(&flow.authorize(&[("organization", "acme")]).await);
    let tokens = flow.redeem(&named["code"], VERIFIER).await.unwrap();
    assert_eq!(claims(&tokens.access_token)["org_id"], acme.id.as_str());
}
