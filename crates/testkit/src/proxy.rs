//! A TCP relay on loopback that can be cut (every open connection dropped, new ones refused)
//! and restored, to show how the service behaves when its database disappears and returns.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// A relay from a loopback port to `upstream`.
pub struct FaultyProxy {
    addr: SocketAddr,
    up: Arc<AtomicBool>,
    generation: watch::Sender<u64>,
}

impl FaultyProxy {
    /// Starts relaying to `upstream` (e.g. `127.0.0.1:5432`).
    pub async fn start(upstream: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().expect("proxy addr");
        let up = Arc::new(AtomicBool::new(true));
        let (generation, _) = watch::channel(0u64);
        let accept_up = up.clone();
        let accept_gen = generation.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if !accept_up.load(Ordering::SeqCst) {
                    drop(client); // refused while cut
                    continue;
                }
                let mut cut = accept_gen.subscribe();
                tokio::spawn(async move {
                    let Ok(mut server) = TcpStream::connect(upstream).await else {
                        return;
                    };
                    let mut client = client;
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = cut.changed() => {} // dropping both sockets severs the session
                    }
                });
            }
        });
        Self {
            addr,
            up,
            generation,
        }
    }

    /// The address to connect to instead of the upstream.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Drops every relayed connection and refuses new ones.
    pub fn cut(&self) {
        self.up.store(false, Ordering::SeqCst);
        self.generation.send_modify(|g| *g += 1);
    }

    /// Accepts and relays connections again.
    pub fn restore(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}
