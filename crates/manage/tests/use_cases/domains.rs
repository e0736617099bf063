//! Domain use cases: claim, list, read, change, verify (DNS TXT and HTTPS, through a scripted
//! probe) and remove an organization's domain claims. Each write leaves its audit entry and its
//! `org.domain.*` event; every refusal writes nothing (but a failed verification's
//! `last_checked_at`); another organization's or tenant's claim reads as absent. The main
//! scenarios run on SQLite and PostgreSQL.

use crate::support::{Harness, client_actor, harness, meta, pg_harness};
use async_trait::async_trait;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use svc_domain::{DomainStatus, Organization, TenantId, VerifiedDomain};
use svc_manage::audit::action;
use svc_manage::control_plane::CreatedTenant;
use svc_manage::domains::{
    self, DomainPatch, DomainProbe, MAX_DOMAINS_PER_ORGANIZATION, MethodSchema, NewDomain,
    ProbeError, VerifyDomain,
};
use svc_manage::organizations::{self as orgs, NewOrganization};
use svc_manage::{ManageError, Precondition, Revision};

const NONE: Precondition = Precondition::None;

/// What the outside world publishes, as the tests script it.
#[derive(Default)]
struct Scripted {
    txt: Mutex<HashMap<String, Result<Vec<String>, ProbeError>>>,
    files: Mutex<HashMap<String, Result<String, ProbeError>>>,
    https_off: bool,
}

impl Scripted {
    fn publish_txt(&self, name: &str, values: &[&str]) {
        self.txt.lock().unwrap().insert(
            name.to_owned(),
            Ok(values.iter().map(|v| (*v).to_owned()).collect()),
        );
    }
    fn fail_txt(&self, name: &str, e: ProbeError) {
        self.txt.lock().unwrap().insert(name.to_owned(), Err(e));
    }
    fn serve(&self, domain: &str, body: Result<String, ProbeError>) {
        self.files.lock().unwrap().insert(domain.to_owned(), body);
    }
}

#[async_trait]
impl DomainProbe for Scripted {
    async fn txt_records(&self, name: &str) -> Result<Vec<String>, ProbeError> {
        self.txt
            .lock()
            .unwrap()
            .get(name)
            .cloned()
            .unwrap_or(Err(ProbeError::NotFound))
    }
    async fn well_known(&self, domain: &str) -> Result<String, ProbeError> {
        self.files
            .lock()
            .unwrap()
            .get(domain)
            .cloned()
            .unwrap_or(Err(ProbeError::NotFound))
    }
    fn https_enabled(&self) -> bool {
        !self.https_off
    }
}

/// The harness with a scripted probe.
fn with_probe(mut h: Harness, probe: Arc<Scripted>) -> Harness {
    h.ctx = h.ctx.with_domain_probe(probe);
    h
}

async fn on_both<Fut: Future<Output = ()>>(scenario: impl Fn(Harness, Arc<Scripted>) -> Fut) {
    let probe = Arc::new(Scripted::default());
    scenario(with_probe(harness().await, probe.clone()), probe).await;
    let probe = Arc::new(Scripted::default());
    scenario(with_probe(pg_harness().await, probe.clone()), probe).await;
}

async fn org(h: &Harness, t: &CreatedTenant, slug: &str) -> Organization {
    let input = NewOrganization {
        name: slug.to_uppercase(),
        slug: slug.to_owned(),
        metadata: None,
    };
    orgs::create(&h.ctx, &t.tenant.id, &client_actor(t), &meta(), input)
        .await
        .unwrap()
}

fn claim_of(name: &str) -> NewDomain {
    NewDomain {
        name: name.to_owned(),
        ..NewDomain::default()
    }
}

async fn claim(
    h: &Harness,
    t: &CreatedTenant,
    o: &Organization,
    input: NewDomain,
) -> Result<VerifiedDomain, ManageError> {
    domains::add(
        &h.ctx,
        &t.tenant.id,
        (&client_actor(t), &meta()),
        &svc_manage::Reach::Tenant,
        &o.id,
        input,
    )
    .await
}

async fn verify(
    h: &Harness,
    t: &CreatedTenant,
    d: &VerifiedDomain,
    method: Option<MethodSchema>,
) -> Result<VerifiedDomain, ManageError> {
    domains::verify(
        &h.ctx,
        &t.tenant.id,
        &client_actor(t),
        &meta(),
        &d.organization_id,
        &d.id,
        VerifyDomain { method },
    )
    .await
}

async fn read(h: &Harness, t: &CreatedTenant, d: &VerifiedDomain) -> VerifiedDomain {
    domains::get(&h.ctx, &t.tenant.id, &d.organization_id, &d.id)
        .await
        .unwrap()
}

/// `(type, data)` of every `org.domain.*` event of `tenant`, oldest first.
async fn domain_events(h: &Harness, tenant: &TenantId) -> Vec<(String, Value)> {
    let mut tx = h.ctx.store.read().await.unwrap();
    let events = tx.events(tenant, None, 1000).await.unwrap();
    tx.finish().await.unwrap();
    events
        .into_iter()
        .filter(|e| e.event_type.as_str().starts_with("org.domain."))
        .map(|e| {
            let body: Value = serde_json::from_str(&e.body).unwrap();
            (e.event_type.as_str().to_owned(), body["data"].clone())
        })
        .collect()
}

/// `(field, message)` of a 400.
fn invalid(err: ManageError) -> (String, String) {
    match err {
        ManageError::Invalid { field, message } => (field, message),
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[tokio::test]
async fn a_claim_is_proven_by_its_own_txt_record_only() {
    on_both(|h, probe| async move {
        let t = h.tenant("acme").await;
        let globex = org(&h, &t, "globex").await;
        let hooli = org(&h, &t, "hooli").await;
        let d = claim(&h, &t, &globex, claim_of("Acme.Example"))
            .await
            .unwrap();
        assert_eq!(d.name.as_str(), "acme.example");
        assert_eq!(d.status, DomainStatus::Pending);
        assert_eq!(d.auto_join_roles.len(), 1, "member by default");
        assert!(!d.auto_join);
        assert_eq!(d.token.len(), 32);
        assert_eq!(
            read(&h, &t, &d).await,
            d,
            "what add returns is what is stored"
        );
        let theirs = claim(&h, &t, &hooli, claim_of("acme.example"))
            .await
            .unwrap();
        assert_ne!(theirs.token, d.token, "each claim has its own token");
        let record = "_svc-verification.acme.example";

        // Nothing published: a 400 naming the method and saying what to publish.
        let (field, message) = invalid(verify(&h, &t, &d, None).await.unwrap_err());
        assert_eq!(field, "dns_txt");
        assert!(
            message.contains(record) && message.contains(&d.proof()),
            "{message}"
        );
        let after = read(&h, &t, &d).await;
        assert_eq!(after.status, DomainStatus::Pending);
        assert!(after.last_checked_at.is_some(), "the attempt is recorded");

        // Another organization's value (and an unrelated one): refused without echoing them.
        probe.publish_txt(record, &[&theirs.proof(), "v=spf1 -all"]);
        let (field, message) = invalid(verify(&h, &t, &d, None).await.unwrap_err());
        assert_eq!(field, "dns_txt");
        assert!(
            message.contains("2 found") && message.contains(&d.proof()),
            "{message}"
        );
        assert!(
            !message.contains(&theirs.token),
            "never another claim's token: {message}"
        );
        assert_eq!(read(&h, &t, &d).await.status, DomainStatus::Pending);

        // A stale value: the token of an earlier claim of the same name, since removed.
        let earlier = claim(&h, &t, &globex, claim_of("old.example"))
            .await
            .unwrap();
        domains::remove(
            &h.ctx,
            &t.tenant.id,
            &client_actor(&t),
            &meta(),
            &globex.id,
            &earlier.id,
            &NONE,
        )
        .await
        .unwrap();
        let again = claim(&h, &t, &globex, claim_of("old.example"))
            .await
            .unwrap();
        probe.publish_txt("_svc-verification.old.example", &[&earlier.proof()]);
        assert_eq!(
            invalid(verify(&h, &t, &again, None).await.unwrap_err()).0,
            "dns_txt"
        );

        // DNS failures are refusals too, never server errors.
        probe.fail_txt(
            record,
            ProbeError::Failed("the DNS server answered SERVFAIL".into()),
        );
        let (_, message) = invalid(verify(&h, &t, &d, None).await.unwrap_err());
        assert!(message.contains("SERVFAIL"), "{message}");

        // Its own value, among others and with spaces around it: verified.
        probe.publish_txt(record, &[&theirs.proof(), &format!(" {} ", d.proof())]);
        let verified = verify(&h, &t, &d, Some(MethodSchema::DnsTxt))
            .await
            .unwrap();
        assert_eq!(verified.status, DomainStatus::Verified);
        assert!(verified.verified_at.is_some());
        assert_eq!(read(&h, &t, &d).await, verified);
        assert_eq!(
            verify(&h, &t, &d, None).await.unwrap(),
            verified,
            "verifying a verified claim changes nothing"
        );

        // The other organization, now publishing its own value, cannot verify the name.
        probe.publish_txt(record, &[&theirs.proof()]);
        assert!(matches!(
            verify(&h, &t, &theirs, None).await,
            Err(ManageError::Conflict(m)) if m.contains("another organization")
        ));
        assert_eq!(read(&h, &t, &theirs).await.status, DomainStatus::Pending);

        // Found by name for auto-join and home-realm discovery, in this tenant only.
        let mut tx = h.ctx.store.read().await.unwrap();
        let holder = tx
            .verified_domain_by_name(&t.tenant.id, &d.name)
            .await
            .unwrap()
            .unwrap();
        tx.finish().await.unwrap();
        assert_eq!(holder.organization_id, globex.id);

        // Once removed, the other organization verifies it.
        domains::remove(
            &h.ctx,
            &t.tenant.id,
            &client_actor(&t),
            &meta(),
            &globex.id,
            &d.id,
            &NONE,
        )
        .await
        .unwrap();
        assert_eq!(
            verify(&h, &t, &theirs, None).await.unwrap().status,
            DomainStatus::Verified
        );

        let events = domain_events(&h, &t.tenant.id).await;
        let kinds: Vec<&str> = events.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "org.domain.added",
                "org.domain.added",
                "org.domain.added",
                "org.domain.removed",
                "org.domain.added",
                "org.domain.verified",
                "org.domain.removed",
                "org.domain.verified",
            ]
        );
        let (_, data) = &events[5];
        assert_eq!(data["domain_id"], d.id.as_str());
        assert_eq!(data["organization_id"], globex.id.as_str());
        assert_eq!(data["name"], "acme.example");
        assert_eq!(data["status"], "verified");
        assert!(data["actor"].as_str().unwrap().starts_with("client:app_"));
        let audit: Vec<String> = h
            .audit(&t.tenant.id)
            .await
            .into_iter()
            .map(|e| e.action)
            .filter(|a| a.starts_with("organization.domain"))
            .collect();
        assert_eq!(
            audit
                .iter()
                .filter(|a| *a == action::ORGANIZATION_DOMAIN_VERIFIED)
                .count(),
            2
        );
    })
    .await;
}

#[tokio::test]
async fn the_https_method_reads_the_well_known_file_when_offered() {
    let probe = Arc::new(Scripted::default());
    let h = with_probe(harness().await, probe.clone());
    let t = h.tenant("acme").await;
    let o = org(&h, &t, "globex").await;
    let d = claim(&h, &t, &o, claim_of("acme.example")).await.unwrap();
    let https = Some(MethodSchema::Https);
    let (field, message) = invalid(verify(&h, &t, &d, https).await.unwrap_err());
    assert_eq!(field, "https");
    assert!(
        message.contains("https://acme.example/.well-known/svc-domain-verification.txt"),
        "{message}"
    );
    probe.serve(
        "acme.example",
        Err(ProbeError::Refused(
            "target refused: internal address".into(),
        )),
    );
    let (_, message) = invalid(verify(&h, &t, &d, https).await.unwrap_err());
    assert!(message.contains("internal address"), "{message}");
    probe.serve(
        "acme.example",
        Ok("svc-domain-verification=somebody-else".into()),
    );
    assert_eq!(
        invalid(verify(&h, &t, &d, https).await.unwrap_err()).0,
        "https"
    );
    probe.serve("acme.example", Ok(format!("{}\n", d.proof())));
    assert_eq!(
        verify(&h, &t, &d, https).await.unwrap().status,
        DomainStatus::Verified
    );

    // Switched off: refused naming `method`, before anything is looked up.
    let off = Arc::new(Scripted {
        https_off: true,
        ..Scripted::default()
    });
    let h = with_probe(harness().await, off);
    let t = h.tenant("acme").await;
    let o = org(&h, &t, "globex").await;
    let d = claim(&h, &t, &o, claim_of("acme.example")).await.unwrap();
    assert_eq!(
        invalid(verify(&h, &t, &d, https).await.unwrap_err()).0,
        "method"
    );
    assert_eq!(read(&h, &t, &d).await.last_checked_at, None);
}

#[tokio::test]
async fn claims_are_scoped_to_their_organization_and_tenant() {
    on_both(|h, _probe| async move {
        let acme = h.tenant("acme").await;
        let other = h.tenant("other").await;
        let globex = org(&h, &acme, "globex").await;
        let hooli = org(&h, &acme, "hooli").await;
        let theirs = org(&h, &other, "globex").await;
        let d = claim(&h, &acme, &globex, claim_of("acme.example"))
            .await
            .unwrap();
        let t = &acme.tenant.id;
        let actor = client_actor(&acme);

        // Another organization of the tenant, or another tenant: not found, for every use case.
        for (tenant, o) in [
            (t, &hooli.id),
            (&other.tenant.id, &globex.id),
            (&other.tenant.id, &theirs.id),
        ] {
            assert!(matches!(
                domains::get(&h.ctx, tenant, o, &d.id).await,
                Err(ManageError::NotFound)
            ));
            let patch = DomainPatch {
                auto_join: Some(true),
                ..DomainPatch::default()
            };
            assert!(matches!(
                domains::update(
                    &h.ctx,
                    tenant,
                    (&actor, &meta()),
                    &svc_manage::Reach::Tenant,
                    o,
                    &d.id,
                    patch,
                    &NONE
                )
                .await,
                Err(ManageError::NotFound)
            ));
            assert!(matches!(
                domains::verify(
                    &h.ctx,
                    tenant,
                    &actor,
                    &meta(),
                    o,
                    &d.id,
                    VerifyDomain::default()
                )
                .await,
                Err(ManageError::NotFound)
            ));
            assert!(matches!(
                domains::remove(&h.ctx, tenant, &actor, &meta(), o, &d.id, &NONE).await,
                Err(ManageError::NotFound)
            ));
        }
        assert!(
            domains::list(&h.ctx, t, &hooli.id)
                .await
                .unwrap()
                .is_empty()
        );
        assert!(matches!(
            domains::list(&h.ctx, &other.tenant.id, &globex.id).await,
            Err(ManageError::NotFound)
        ));
        assert!(matches!(
            claim(&h, &other, &globex, claim_of("x.example")).await,
            Err(ManageError::NotFound)
        ));
        assert_eq!(
            domains::list(&h.ctx, t, &globex.id).await.unwrap(),
            vec![read(&h, &acme, &d).await]
        );
        assert!(domain_events(&h, &other.tenant.id).await.is_empty());

        // Deleting the organization deletes its claims.
        orgs::delete(&h.ctx, t, &actor, &meta(), &globex.id, &NONE)
            .await
            .unwrap();
        let mut tx = h.ctx.store.read().await.unwrap();
        assert!(
            tx.domains_of_organization(t, &globex.id)
                .await
                .unwrap()
                .is_empty()
        );
        tx.finish().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn names_roles_and_limits_are_checked_and_refusals_write_nothing() {
    let h = with_probe(harness().await, Arc::new(Scripted::default()));
    let t = h.tenant("acme").await;
    let o = org(&h, &t, "globex").await;
    let audit_before = h.audit(&t.tenant.id).await.len();
    for bad in [
        "",
        "localhost",
        "10.0.0.1",
        "acme_eu.example",
        "acme.example.",
        "co.uk",
    ] {
        let (field, _) = invalid(claim(&h, &t, &o, claim_of(bad)).await.unwrap_err());
        assert_eq!(field, "name", "{bad:?}");
    }
    for roles in [vec![], vec!["tenant_admin"], vec!["no-such-role"]] {
        let input = NewDomain {
            auto_join_roles: Some(roles.iter().map(|r| (*r).to_owned()).collect()),
            ..claim_of("acme.example")
        };
        let (field, _) = invalid(claim(&h, &t, &o, input).await.unwrap_err());
        assert_eq!(field, "auto_join_roles", "{roles:?}");
    }
    assert_eq!(
        h.audit(&t.tenant.id).await.len(),
        audit_before,
        "refusals write nothing"
    );

    let first = claim(&h, &t, &o, claim_of("bücher.example")).await.unwrap();
    assert_eq!(first.name.as_str(), "xn--bcher-kva.example");
    assert!(matches!(
        claim(&h, &t, &o, claim_of("XN--BCHER-KVA.example")).await,
        Err(ManageError::Conflict(m)) if m.contains("already claims")
    ));
    for i in 1..MAX_DOMAINS_PER_ORGANIZATION {
        claim(&h, &t, &o, claim_of(&format!("d{i}.example")))
            .await
            .unwrap();
    }
    assert!(matches!(
        claim(&h, &t, &o, claim_of("one-too-many.example")).await,
        Err(ManageError::Conflict(m)) if m.contains("50")
    ));

    // A store failure leaves nothing behind.
    let other = org(&h, &t, "hooli").await;
    h.store.fail_on(Some("insert_domain"));
    assert!(matches!(
        claim(&h, &t, &other, claim_of("acme.example")).await,
        Err(ManageError::Unavailable(_))
    ));
    h.store.fail_on(Some("insert_event"));
    assert!(
        claim(&h, &t, &other, claim_of("acme.example"))
            .await
            .is_err()
    );
    h.store.fail_on(None);
    assert!(
        domains::list(&h.ctx, &t.tenant.id, &other.id)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn auto_join_settings_change_at_the_revision_read() {
    on_both(|h, _probe| async move {
        let t = h.tenant("acme").await;
        let o = org(&h, &t, "globex").await;
        let actor = client_actor(&t);
        let d = claim(&h, &t, &o, claim_of("acme.example")).await.unwrap();
        let patch = DomainPatch {
            auto_join: Some(true),
            auto_join_roles: Some(vec!["admin".into(), "member".into()]),
        };
        let stale = Precondition::OneOf(vec![Some(Revision::of(
            d.updated_at - time::Duration::seconds(1),
        ))]);
        assert!(matches!(
            domains::update(
                &h.ctx,
                &t.tenant.id,
                (&actor, &meta()),
                &svc_manage::Reach::Tenant,
                &o.id,
                &d.id,
                patch.clone(),
                &stale
            )
            .await,
            Err(ManageError::PreconditionFailed)
        ));
        let current = Precondition::OneOf(vec![Some(Revision::of(d.updated_at))]);
        let changed = domains::update(
            &h.ctx,
            &t.tenant.id,
            (&actor, &meta()),
            &svc_manage::Reach::Tenant,
            &o.id,
            &d.id,
            patch.clone(),
            &current,
        )
        .await
        .unwrap();
        assert!(changed.auto_join);
        assert_eq!(changed.auto_join_roles.len(), 2);
        assert!(changed.updated_at > d.updated_at);
        assert_eq!(read(&h, &t, &d).await, changed);
        let same = domains::update(
            &h.ctx,
            &t.tenant.id,
            (&actor, &meta()),
            &svc_manage::Reach::Tenant,
            &o.id,
            &d.id,
            patch,
            &NONE,
        )
        .await
        .unwrap();
        assert_eq!(same, changed, "the same settings again write nothing");
        let stale_delete = Precondition::OneOf(vec![Some(Revision::of(d.updated_at))]);
        assert!(matches!(
            domains::remove(
                &h.ctx,
                &t.tenant.id,
                &actor,
                &meta(),
                &o.id,
                &d.id,
                &stale_delete
            )
            .await,
            Err(ManageError::PreconditionFailed)
        ));
        let audit: Vec<String> = h
            .audit(&t.tenant.id)
            .await
            .into_iter()
            .map(|e| e.action)
            .collect();
        assert_eq!(
            audit
                .iter()
                .filter(|a| *a == action::ORGANIZATION_DOMAIN_UPDATED)
                .count(),
            1
        );
    })
    .await;
}
