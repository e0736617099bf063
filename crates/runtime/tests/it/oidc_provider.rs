//! node `oidc-provider` (panva's certified OpenID Provider, `interop/sso/provider.mjs`) as a
//! real upstream for the interop tests of enterprise SSO (`interop_sso`) and social sign-in
//! (`interop_social`): one confidential client, one account, on a free loopback port.

use crate::interop::repo_root;
use serde_json::Value;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

/// The account oidc-provider signs in.
pub(crate) struct OpAccount {
    /// Its id (the `sub`).
    pub(crate) account: &'static str,
    /// Its address (verified).
    pub(crate) email: &'static str,
    /// Its name.
    pub(crate) name: &'static str,
}

/// `node interop/sso/provider.mjs` on a free port, killed when dropped; its issuer.
pub(crate) struct OidcProvider {
    child: tokio::process::Child,
    pub(crate) issuer: String,
    log: tempfile::NamedTempFile,
}

impl OidcProvider {
    /// Its one client, `client` (id, secret), redirecting to `callback`, and its one account.
    pub(crate) async fn start(callback: &str, client: (&str, &str), who: &OpAccount) -> Self {
        let log = tempfile::NamedTempFile::new().unwrap();
        let mut child = tokio::process::Command::new("node")
            .arg(repo_root().join("interop/sso/provider.mjs"))
            .current_dir(repo_root().join("interop"))
            .env("OP_CLIENT_ID", client.0)
            .env("OP_CLIENT_SECRET", client.1)
            .env("OP_REDIRECT_URI", callback)
            .env("OP_ACCOUNT_ID", who.account)
            .env("OP_EMAIL", who.email)
            .env("OP_NAME", who.name)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log.reopen().unwrap())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("could not start node interop/sso/provider.mjs: {e}"));
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        // Node starts it in about a second; the bound only stops a hang.
        let line = match tokio::time::timeout(Duration::from_secs(90), lines.next_line()).await {
            Ok(line) => line.unwrap(),
            Err(_) => panic!(
                "oidc-provider did not start within 90 s; its log:\n{}",
                std::fs::read_to_string(log.path()).unwrap_or_default()
            ),
        };
        let ready: Value = line
            .as_deref()
            .and_then(|l| serde_json::from_str(l).ok())
            .unwrap_or_else(|| {
                panic!(
                    "oidc-provider printed {line:?}; its log:\n{}",
                    std::fs::read_to_string(log.path()).unwrap_or_default()
                )
            });
        assert_eq!(ready["ready"], true, "{ready}");
        // Keep its stdout open (and drained): a closed pipe would kill it on the next write.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let issuer = ready["issuer"].as_str().unwrap().to_owned();
        assert!(issuer.starts_with("http://127.0.0.1:"), "{issuer}");
        Self { child, issuer, log }
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap_or_default()
    }

    pub(crate) async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}
