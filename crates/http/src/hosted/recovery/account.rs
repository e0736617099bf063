//! `/auth/account/recovery`: a signed-in person's guardians (name one, remove one), how many
//! must approve, and the recovery of their account in progress, which they can cancel here.
//!
//! One form endpoint takes every change, told apart by its `action` button (`add`, `remove`,
//! `cancel`), like the two-step page. Guardians can hand the account to someone else, so the
//! engine refuses changes from a session without the person's second factor
//! (`StepUpRequired`): the person steps up first. The page is its own template because it
//! carries a form per guardian besides the add and cancel forms.

use super::settings;
use crate::error::page::{self as error, Refusal};
use crate::hosted::csrf::{self, CsrfToken};
use crate::hosted::form::{self, Fields};
use crate::hosted::strings::RecoveryStrings;
use crate::hosted::view::{Chrome, html};
use crate::hosted::{Ctx, HostedState, see_other};
use askama::Template;
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use http::StatusCode;
use svc_authn::{AuthnError, RecoveryOverview};
use svc_domain::{GuardianId, Session, User};

const PATH: &str = "/auth/account/recovery";

/// The signed-in person, or the page to show instead (404 when recovery is off, the sign-in
/// page when nobody is signed in).
async fn person(state: &HostedState, ctx: &Ctx) -> Result<(Session, User), Response> {
    settings(state, ctx)?;
    match ctx.signed_in(&state.authn).await? {
        Some(found) => Ok(found),
        None => Err(see_other("/auth/sign-in")),
    }
}

/// One guardian on the page.
struct GuardianRow {
    id: String,
    email: String,
}

/// The add form's address field: what was typed and why it was refused.
struct AddField {
    value: String,
    error: Option<&'static str>,
}

/// The guardians page.
#[derive(Template)]
#[template(path = "hosted/recovery.html")]
struct RecoveryView<'a> {
    chrome: &'a Chrome,
    title: &'a str,
    r: &'static RecoveryStrings,
    notice: Option<&'static str>,
    alert: Option<&'static str>,
    csrf: &'a str,
    needed: u32,
    guardians: Vec<GuardianRow>,
    /// The add form, unless the person named as many guardians as they may.
    add: Option<AddField>,
    /// A recovery is in progress (the cancel form is shown).
    open: bool,
    factor_due: bool,
}

/// `GET /auth/account/recovery[?done=added|removed|cancelled]`.
pub(crate) async fn page(
    State(state): State<HostedState>,
    ctx: Ctx,
    RawQuery(query): RawQuery,
) -> Response {
    let (_, user) = match person(&state, &ctx).await {
        Ok(found) => found,
        Err(page) => return page,
    };
    let r = ctx.s().recovery;
    let notice = match Fields::from_query(query.as_deref()).get("done") {
        Some("added") => Some(r.added),
        Some("removed") => Some(r.removed),
        Some("cancelled") => Some(r.cancelled),
        _ => None,
    };
    overview(&state, &ctx, &user, notice, ("", None)).await
}

/// The page; `typed` is the add form's address and the refusal that sent it back, if any.
async fn overview(
    state: &HostedState,
    ctx: &Ctx,
    user: &User,
    notice: Option<&'static str>,
    typed: (&str, Option<&Refusal>),
) -> Response {
    let (typed, refusal) = typed;
    let overview: RecoveryOverview = match state
        .authn
        .recovery_overview(&ctx.current.tenant, user)
        .await
    {
        Ok(overview) => overview,
        Err(e) => return error::fatal(ctx, e),
    };
    let s = ctx.s();
    let csrf = CsrfToken::for_page(&ctx.headers, ctx.cookies, state.rng.as_ref());
    let room = overview.guardians.len() < usize::try_from(overview.max_guardians).unwrap_or(0);
    let email_error = refusal.and_then(|r| r.on("email"));
    // Without the add form (no room left), its field's message becomes the page's alert.
    let alert = refusal
        .and_then(Refusal::alert)
        .or(email_error.filter(|_| !room));
    let view = RecoveryView {
        chrome: &ctx.chrome,
        title: s.recovery.account_title,
        r: s.recovery,
        notice,
        alert,
        csrf: csrf.value(),
        needed: overview.approvals_required,
        guardians: overview
            .guardians
            .iter()
            .map(|g| GuardianRow {
                id: g.id.as_str().to_owned(),
                email: g.email.as_str().to_owned(),
            })
            .collect(),
        add: room.then(|| AddField {
            value: typed.to_owned(),
            error: email_error,
        }),
        open: overview.open.is_some(),
        factor_due: overview.factor_due,
    };
    let mut response = html(StatusCode::OK, view.render());
    csrf.attach(&mut response, ctx.cookies);
    match refusal {
        Some(refusal) => refusal.finish(response),
        None => response,
    }
}

/// `POST /auth/account/recovery`: one change, named by `action`.
pub(crate) async fn submit(State(state): State<HostedState>, ctx: Ctx, body: Body) -> Response {
    let fields = match form::read(&ctx.headers, body, true).await {
        Ok(fields) => fields,
        Err(e) => return error::form(&ctx, e),
    };
    if !csrf::verify(&ctx.headers, ctx.cookies, fields.get("csrf")) {
        return error::csrf(&ctx);
    }
    let (session, user) = match person(&state, &ctx).await {
        Ok(found) => found,
        Err(page) => return page,
    };
    let tenant = &ctx.current.tenant;
    let email = fields.get("email").unwrap_or_default();
    let outcome = match fields.get("action") {
        Some("add") => state
            .authn
            .add_guardian(tenant, (&session, &user), email, &ctx.client)
            .await
            .map(|_| "added"),
        Some("remove") => {
            match fields
                .get("guardian")
                .and_then(|g| GuardianId::parse(g).ok())
            {
                Some(id) => state
                    .authn
                    .remove_guardian(tenant, (&session, &user), &id, &ctx.client)
                    .await
                    .map(|()| "removed"),
                // Not an id of ours: no guardian of this person either.
                None => Err(AuthnError::UnknownGuardian),
            }
        }
        Some("cancel") => state
            .authn
            .cancel_own_recovery(tenant, (&session, &user), &ctx.client)
            .await
            .map(|()| "cancelled"),
        // A form we did not render.
        _ => return error::form(&ctx, form::FormError::Malformed),
    };
    let refusal = match outcome {
        Ok(done) => return see_other(&format!("{PATH}?done={done}")),
        // Changing guardians on an aal1 session: prove the second factor, then come back.
        Err(AuthnError::StepUpRequired) => return see_other("/auth/second-factor"),
        // Here "invalid link" means nothing is in progress any more (it ended, or another tab
        // cancelled it): the page says so rather than talk about a link.
        Err(AuthnError::InvalidLink) => Refusal {
            status: StatusCode::BAD_REQUEST,
            message: ctx.s().recovery.nothing_to_cancel,
            field: None,
            retry_after: None,
        },
        Err(e) => match error::refusal(&ctx, e) {
            Ok(refusal) => refusal,
            Err(page) => return page,
        },
    };
    overview(&state, &ctx, &user, None, (email, Some(&refusal))).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosted::strings::EN;
    use http_body_util::BodyExt;

    async fn body(response: Response) -> String {
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    fn render(chrome: &Chrome, add: Option<AddField>, open: bool, factor_due: bool) -> Response {
        let view = RecoveryView {
            chrome,
            title: EN.recovery.account_title,
            r: EN.recovery,
            notice: Some(EN.recovery.added),
            alert: None,
            csrf: "tok",
            needed: 2,
            guardians: vec![
                GuardianRow {
                    id: "gdn_1".into(),
                    email: "bob@example.com".into(),
                },
                GuardianRow {
                    id: "gdn_2".into(),
                    email: "<script>@example.com".into(),
                },
            ],
            add,
            open,
            factor_due,
        };
        html(StatusCode::OK, view.render())
    }

    #[tokio::test]
    async fn each_guardian_has_a_remove_form_and_nothing_reflected_is_markup() {
        let chrome = Chrome::new(&EN, "Acme");
        let add = AddField {
            value: "\"><img src=x>".into(),
            error: None,
        };
        let html = body(render(&chrome, Some(add), false, false)).await;
        for id in ["gdn_1", "gdn_2"] {
            assert!(
                html.contains(&format!(
                    "<input type=\"hidden\" name=\"guardian\" value=\"{id}\">"
                )),
                "{html}"
            );
        }
        assert_eq!(html.matches("name=\"action\" value=\"remove\"").count(), 2);
        assert_eq!(
            html.matches("<input type=\"hidden\" name=\"csrf\" value=\"tok\">")
                .count(),
            3
        );
        assert!(html.contains("bob@example.com"), "{html}");
        assert!(html.contains("2 of your guardians must approve"), "{html}");
        assert!(html.contains("name=\"action\" value=\"add\""), "{html}");
        assert!(html.contains("<label for=\"email\">"), "{html}");
        assert!(html.contains(EN.recovery.added), "{html}");
        assert!(
            !html.contains("<script>") && !html.contains("<img"),
            "{html}"
        );
        assert!(
            !html.contains("value=\"cancel\""),
            "nothing in progress: {html}"
        );
        assert!(!html.contains("/auth/account/two-factor"), "{html}");
    }

    #[tokio::test]
    async fn no_room_hides_the_add_form_and_a_refused_address_marks_its_field() {
        let chrome = Chrome::new(&EN, "Acme");
        let full = body(render(&chrome, None, true, true)).await;
        assert!(!full.contains("value=\"add\""), "{full}");
        assert!(full.contains(EN.recovery.max_reached), "{full}");
        assert!(full.contains("name=\"action\" value=\"cancel\""), "{full}");
        assert!(full.contains(EN.recovery.in_progress), "{full}");
        assert!(full.contains("href=\"/auth/account/two-factor\""), "{full}");
        let refused = AddField {
            value: "ada@example.com".into(),
            error: Some("a guardian is someone else"),
        };
        let html = body(render(&chrome, Some(refused), false, false)).await;
        assert!(
            html.contains("aria-invalid=\"true\" aria-describedby=\"email-error email-hint\""),
            "{html}"
        );
        assert!(
            html.contains("<p id=\"email-error\" class=\"error\" role=\"alert\">a guardian is someone else</p>"),
            "{html}"
        );
        assert!(html.contains("value=\"ada@example.com\""), "{html}");
    }
}
