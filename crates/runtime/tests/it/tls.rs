//! `server.transport = tls_h2_only`, exercised with real TLS clients and a certificate made for
//! the test: HTTP/2 over TLS works, an HTTP/1.1-only client is refused, bad files are named.

use svc_testkit::{Backend, TestApp, tls};

fn tls_env(fixture: &tls::TlsFixture) -> Vec<(String, String)> {
    vec![
        ("SVC_SERVER__TRANSPORT".into(), "tls_h2_only".into()),
        (
            "SVC_SERVER__TLS__CERT_PEM_PATH".into(),
            fixture.cert_path.display().to_string(),
        ),
        (
            "SVC_SERVER__TLS__KEY_PEM_PATH".into(),
            fixture.key_path.display().to_string(),
        ),
    ]
}

fn client(fixture: &tls::TlsFixture, http1_only: bool) -> reqwest::Client {
    let mut builder = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(fixture.ca_pem.as_bytes()).unwrap());
    if http1_only {
        builder = builder.http1_only();
    }
    builder.build().unwrap()
}

#[tokio::test]
async fn tls_h2_only_serves_http2_and_refuses_http1_clients() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = tls::generate(dir.path());
    let env = tls_env(&fixture);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let app = TestApp::spawn_with(Backend::Sqlite, &env).await;
    assert!(app.url.starts_with("https://"), "{}", app.url);
    let port = app.url.rsplit(':').next().unwrap().to_owned();
    let url = format!("https://localhost:{port}/health/ready");

    let h2 = client(&fixture, false)
        .get(&url)
        .send()
        .await
        .expect("HTTP/2 over TLS");
    assert_eq!(h2.version(), reqwest::Version::HTTP_2);
    assert_eq!(h2.status(), 200);
    assert_eq!(h2.text().await.unwrap(), r#"{"status":"ok"}"#);

    let h1 = client(&fixture, true).get(&url).send().await;
    assert!(
        h1.is_err(),
        "an HTTP/1.1-only client must be refused, got {h1:?}"
    );

    let plain = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{port}/health/ready"))
        .send()
        .await;
    assert!(
        plain.map(|r| !r.status().is_success()).unwrap_or(true),
        "plain HTTP must not be served"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn unusable_tls_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = tls::generate(dir.path());
    std::fs::write(&fixture.key_path, "not a key").unwrap();
    let env = tls_env(&fixture);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let error = TestApp::try_spawn_with(Backend::Sqlite, &env)
        .await
        .err()
        .expect("a bad key must stop the start");
    assert!(
        error.contains("server.tls.key_pem_path") && error.contains("server.key"),
        "{error}"
    );

    let missing = dir.path().join("absent.pem").display().to_string();
    let error = TestApp::try_spawn_with(
        Backend::Sqlite,
        &[env[0], ("SVC_SERVER__TLS__CERT_PEM_PATH", &missing), env[2]],
    )
    .await
    .err()
    .expect("a missing certificate must stop the start");
    assert!(
        error.contains("server.tls.cert_pem_path") && error.contains("absent.pem"),
        "{error}"
    );
}
