//! Serving a router on a bound socket, over plain HTTP (HTTP/1.1 and h2c) or TLS with HTTP/2
//! only, and draining it within `server.shutdown_deadline_secs` when asked to stop.

use crate::RuntimeError;
use axum::Router;
use axum_server::Handle;
use axum_server::tls_rustls::RustlsConfig;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;

/// Binds the listening socket up front so a busy port is a startup error, and so port 0 works.
pub(crate) fn bind(host: &str, port: u16) -> Result<TcpListener, RuntimeError> {
    let addr = format!("{host}:{port}");
    let display = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        addr.clone()
    };
    let target = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        addr
    };
    let listener = TcpListener::bind(&target).map_err(|source| RuntimeError::Bind {
        addr: display.clone(),
        source,
    })?;
    listener
        .set_nonblocking(true)
        .map_err(|source| RuntimeError::Bind {
            addr: display,
            source,
        })?;
    Ok(listener)
}

/// Serves `router` until `handle` is told to shut down. `tls` selects `tls_h2_only`.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    tls: Option<Arc<rustls::ServerConfig>>,
    handle: Handle<SocketAddr>,
) -> Result<(), RuntimeError> {
    let service = router.into_make_service_with_connect_info::<SocketAddr>();
    match tls {
        None => axum_server::from_tcp(listener)
            .map_err(RuntimeError::Serve)?
            .handle(handle)
            .serve(service)
            .await
            .map_err(RuntimeError::Serve),
        Some(config) => {
            let server = axum_server::from_tcp_rustls(listener, RustlsConfig::from_config(config))
                .map_err(RuntimeError::Serve)?
                // ALPN already offers only h2; refusing HTTP/1.1 here too covers clients that send
                // no ALPN extension at all.
                .http2_only()
                .handle(handle);
            server.serve(service).await.map_err(RuntimeError::Serve)
        }
    }
}

/// Asks the server to stop accepting, lets in-flight requests finish for up to `deadline`, then
/// closes what remains.
pub(crate) fn drain(handle: &Handle<SocketAddr>, deadline: Duration) {
    handle.graceful_shutdown(Some(deadline));
}
