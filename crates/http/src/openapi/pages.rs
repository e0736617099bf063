//! What the API reference serves: `/openapi.json`, Swagger UI at `/` (its files vendored into
//! the binary by `utoipa-swagger-ui`'s `vendored` feature and served from `/api-docs/`), and a
//! page per problem type at `/problems/{type}`.
//!
//! The UI page loads nothing from elsewhere: its CSP allows scripts, styles, images and
//! requests from this origin only, and Swagger UI's online validator badge is switched off.

use crate::Problem;
use crate::error::{PROBLEM_TYPES, ProblemType};
use axum::Router;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, X_FRAME_OPTIONS};
use http::{HeaderValue, StatusCode};
use std::fmt::Write as _;
use std::sync::Arc;
use utoipa_swagger_ui::Config;

/// Where the UI's files are served from.
const ASSETS: &str = "/api-docs";

/// The UI's page and assets: same-origin only; inline styles because Swagger UI sets them.
const UI_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
                      img-src 'self' data:; font-src 'self' data:; connect-src 'self'; \
                      base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Pages of the problem types: no scripts at all.
const PAGE_CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; \
                        form-action 'none'; frame-ancestors 'none'";

#[derive(Clone)]
struct Docs {
    json: Arc<str>,
    ui: Arc<Config<'static>>,
}

/// The routes of the API reference for a rendered `document` (the JSON of
/// [`super::document`]).
pub fn router(document: &utoipa::openapi::OpenApi) -> Router {
    let json = document
        .to_json()
        .unwrap_or_else(|_| String::from("{}"))
        .into();
    let ui = Config::new(["/openapi.json"])
        .validator_url("none")
        .try_it_out_enabled(true)
        .persist_authorization(false);
    Router::new()
        .route("/openapi.json", get(openapi_json))
        .route("/", get(ui_page))
        .route("/api-docs/{file}", get(ui_asset))
        .route("/problems", get(problem_index))
        .route("/problems/{slug}", get(problem_page))
        .with_state(Docs {
            json,
            ui: Arc::new(ui),
        })
}

async fn openapi_json(State(docs): State<Docs>) -> Response {
    let mut response = docs.json.to_string().into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

fn html(body: String, csp: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(csp));
    headers.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

async fn ui_page() -> Response {
    let page = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>svc API reference</title>\n\
         <link rel=\"stylesheet\" href=\"{ASSETS}/swagger-ui.css\">\n\
         <link rel=\"stylesheet\" href=\"{ASSETS}/index.css\">\n\
         <link rel=\"icon\" type=\"image/png\" href=\"{ASSETS}/favicon-32x32.png\" sizes=\"32x32\">\n\
         </head>\n<body>\n<div id=\"swagger-ui\"></div>\n\
         <script src=\"{ASSETS}/swagger-ui-bundle.js\"></script>\n\
         <script src=\"{ASSETS}/swagger-ui-standalone-preset.js\"></script>\n\
         <script src=\"{ASSETS}/swagger-initializer.js\"></script>\n\
         </body>\n</html>\n"
    );
    html(page, UI_CSP)
}

async fn ui_asset(State(docs): State<Docs>, Path(file): Path<String>) -> Response {
    match utoipa_swagger_ui::serve(&file, Arc::clone(&docs.ui)) {
        Ok(Some(asset)) if file != "index.html" => {
            let mut response = asset.bytes.into_owned().into_response();
            let headers = response.headers_mut();
            if let Ok(value) = HeaderValue::from_str(&asset.content_type) {
                headers.insert(CONTENT_TYPE, value);
            }
            if asset.gzpipped {
                headers.insert(
                    http::header::CONTENT_ENCODING,
                    HeaderValue::from_static("gzip"),
                );
            }
            headers.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(UI_CSP));
            headers.insert(
                CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=3600"),
            );
            response
        }
        Ok(_) => Problem::not_found("no resource matches the request path").into_response(),
        Err(_) => Problem::server_error().into_response(),
    }
}

/// Escapes text for HTML (the catalogue is ours, but a page never trusts its inputs).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const PAGE_STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:42rem;margin:2rem auto;\
                          padding:0 1rem;line-height:1.5}code{background:#f3f3f3;padding:0 .2em}";

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{}</title>\n<style>{PAGE_STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        escape(title)
    )
}

async fn problem_index() -> Response {
    let mut list = String::from("<h1>Problem types</h1>\n<ul>\n");
    for t in PROBLEM_TYPES {
        let _ = writeln!(
            list,
            "<li><a href=\"/problems/{}\"><code>{}</code></a> {}</li>",
            escape(&t.slug()),
            escape(t.code),
            escape(t.title)
        );
    }
    list.push_str("</ul>\n<p><a href=\"/\">API reference</a></p>\n");
    html(page("Problem types", &list), PAGE_CSP)
}

async fn problem_page(Path(slug): Path<String>) -> Response {
    let Some(t) = ProblemType::by_slug(&slug) else {
        return Problem::not_found("no such problem type").into_response();
    };
    let statuses = t
        .statuses
        .iter()
        .map(|s| {
            StatusCode::from_u16(*s)
                .map(|s| s.to_string())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(", ");
    let body = format!(
        "<h1>{}</h1>\n<p><code>error: \"{}\"</code> · HTTP {}</p>\n<p>{}</p>\n\
         <p><a href=\"/problems\">All problem types</a> · <a href=\"/\">API reference</a></p>\n",
        escape(t.title),
        escape(t.code),
        escape(&statuses),
        escape(t.guidance)
    );
    html(page(t.title, &body), PAGE_CSP)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::{Body, to_bytes};
    use http::Request;
    use tower::ServiceExt;

    async fn get(path: &str) -> (StatusCode, http::HeaderMap, String) {
        let app = router(&super::super::document());
        let res = app
            .oneshot(Request::get(path).body(Body::empty()).unwrap())
            .await
            .unwrap();
        let (parts, body) = res.into_parts();
        let bytes = to_bytes(body, 8 << 20).await.unwrap();
        (
            parts.status,
            parts.headers,
            String::from_utf8_lossy(&bytes).into_owned(),
        )
    }

    #[tokio::test]
    async fn serves_the_document_the_ui_and_its_assets_from_this_origin_only() {
        let (status, headers, body) = get("/openapi.json").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(headers[CONTENT_TYPE], "application/json");
        let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert!(
            doc["openapi"].as_str().unwrap().starts_with("3.1"),
            "{}",
            doc["openapi"]
        );

        let (status, headers, body) = get("/").await;
        assert_eq!(status, StatusCode::OK);
        assert!(
            headers[CONTENT_SECURITY_POLICY]
                .to_str()
                .unwrap()
                .contains("script-src 'self'")
        );
        assert!(
            !body.contains("http://") && !body.contains("https://"),
            "{body}"
        );

        let (status, _, init) = get("/api-docs/swagger-initializer.js").await;
        assert_eq!(status, StatusCode::OK);
        assert!(init.contains("/openapi.json"), "{init}");
        assert!(init.contains("\"validatorUrl\": \"none\""), "{init}");
        let (status, headers, _) = get("/api-docs/swagger-ui-bundle.js").await;
        assert_eq!(status, StatusCode::OK);
        assert!(
            headers[CONTENT_TYPE]
                .to_str()
                .unwrap()
                .contains("javascript")
        );
        for missing in [
            "/api-docs/index.html",
            "/api-docs/nope.js",
            "/api-docs/..%2Fetc",
        ] {
            assert_eq!(get(missing).await.0, StatusCode::NOT_FOUND, "{missing}");
        }
    }

    #[tokio::test]
    async fn every_problem_type_has_a_page_and_unknown_ones_do_not() {
        for t in PROBLEM_TYPES {
            let (status, headers, body) = get(&format!("/problems/{}", t.slug())).await;
            assert_eq!(status, StatusCode::OK, "{}", t.code);
            assert_eq!(headers[CONTENT_SECURITY_POLICY], PAGE_CSP);
            assert!(
                body.contains(t.code) && body.contains(&escape(t.title)),
                "{body}"
            );
        }
        let (_, _, index) = get("/problems").await;
        assert_eq!(index.matches("<li>").count(), PROBLEM_TYPES.len());
        assert_eq!(get("/problems/no-such").await.0, StatusCode::NOT_FOUND);
        assert_eq!(get("/problems/%3Cscript%3E").await.0, StatusCode::NOT_FOUND);
    }
}
