//! A TCP relay on loopback that can be cut (every open connection dropped, new ones refused)
//! and restored, to show how the service behaves when its database disappears and returns; or
//! stalled (connections stay open, bytes are held in both directions) and resumed, a network
//! partition that no error reports.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// A relay from a loopback port to `upstream`.
pub struct FaultyProxy {
    addr: SocketAddr,
    up: Arc<AtomicBool>,
    generation: watch::Sender<u64>,
    stalled: watch::Sender<bool>,
}

impl FaultyProxy {
    /// Starts relaying to `upstream` (e.g. `127.0.0.1:5432`).
    pub async fn start(upstream: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().expect("proxy addr");
        let up = Arc::new(AtomicBool::new(true));
        let (generation, _) = watch::channel(0u64);
        let (stalled, _) = watch::channel(false);
        let accept_up = up.clone();
        let accept_gen = generation.clone();
        let accept_stalled = stalled.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if !accept_up.load(Ordering::SeqCst) {
                    drop(client); // refused while cut
                    continue;
                }
                let mut cut = accept_gen.subscribe();
                let (up_stall, down_stall) =
                    (accept_stalled.subscribe(), accept_stalled.subscribe());
                tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(upstream).await else {
                        return;
                    };
                    let (client_read, client_write) = client.into_split();
                    let (server_read, server_write) = server.into_split();
                    tokio::select! {
                        () = pump(client_read, server_write, up_stall) => {}
                        () = pump(server_read, client_write, down_stall) => {}
                        _ = cut.changed() => {} // dropping both sockets severs the session
                    }
                });
            }
        });
        Self {
            addr,
            up,
            generation,
            stalled,
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

    /// Holds every byte in both directions, keeping the connections open: nobody is told.
    pub fn stall(&self) {
        self.stalled.send_replace(true);
    }

    /// Relays again, delivering what was held.
    pub fn resume(&self) {
        self.stalled.send_replace(false);
    }
}

/// Copies `from` to `to` until either ends, holding bytes while `stalled` says so.
async fn pump(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, mut stalled: watch::Receiver<bool>) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        if stalled.wait_for(|s| !*s).await.is_err() {
            return;
        }
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        // Bytes read just as the stall began are held with the rest.
        if stalled.wait_for(|s| !*s).await.is_err() || to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}
