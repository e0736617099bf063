//! A DNS server on the loopback for the verified-domain tests: it answers UDP queries from a
//! table the test edits while the app runs (TXT and A records per name), NXDOMAIN for names it
//! does not know, and SERVFAIL for names marked failing. The service is pointed at it with
//! `verified_domains.dns_servers`, so verification goes through the real resolver and the real
//! wire format, without the network.

use hickory_resolver::proto::op::{Message, MessageType, OpCode, ResponseCode};
use hickory_resolver::proto::rr::rdata::{A, TXT};
use hickory_resolver::proto::rr::{RData, Record, RecordType};
use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use tokio::net::UdpSocket;

/// What one name holds.
#[derive(Debug, Clone, Default)]
struct Entry {
    txt: Vec<String>,
    a: Vec<Ipv4Addr>,
    servfail: bool,
}

/// The running server and its table; it stops when dropped.
pub(crate) struct LocalDns {
    /// Where it listens (`127.0.0.1:<port>`).
    pub(crate) addr: SocketAddr,
    table: Arc<Mutex<HashMap<String, Entry>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for LocalDns {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The table's key for `name`: lowercase, without the trailing dot.
fn key(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

impl LocalDns {
    /// Starts the server on an ephemeral loopback port.
    pub(crate) async fn start() -> Self {
        let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let addr = socket.local_addr().unwrap();
        let table: Arc<Mutex<HashMap<String, Entry>>> = Arc::default();
        let served = table.clone();
        let task = tokio::spawn(async move {
            let mut buf = vec![0u8; 4096];
            loop {
                let Ok((len, peer)) = socket.recv_from(&mut buf).await else {
                    continue;
                };
                let Some(answer) = answer(&served, &buf[..len]) else {
                    continue;
                };
                let _ = socket.send_to(&answer, peer).await;
            }
        });
        Self { addr, table, task }
    }

    /// The value of `verified_domains.dns_servers` naming this server.
    pub(crate) fn servers_setting(&self) -> String {
        format!("[\"{}\"]", self.addr)
    }

    /// Replaces the TXT records of `name`.
    pub(crate) fn set_txt(&self, name: &str, values: &[&str]) {
        let mut table = self.table.lock().unwrap();
        let entry = table.entry(key(name)).or_default();
        entry.txt = values.iter().map(|v| (*v).to_owned()).collect();
        entry.servfail = false;
    }

    /// Replaces the A records of `name`.
    pub(crate) fn set_a(&self, name: &str, addrs: &[Ipv4Addr]) {
        self.table.lock().unwrap().entry(key(name)).or_default().a = addrs.to_vec();
    }

    /// Makes every query of `name` fail with SERVFAIL.
    pub(crate) fn fail(&self, name: &str) {
        self.table
            .lock()
            .unwrap()
            .entry(key(name))
            .or_default()
            .servfail = true;
    }
}

/// The wire answer to the query in `packet`, or `None` for something that is not one.
fn answer(table: &Mutex<HashMap<String, Entry>>, packet: &[u8]) -> Option<Vec<u8>> {
    let query = Message::from_vec(packet).ok()?;
    if query.metadata.message_type != MessageType::Query {
        return None;
    }
    let mut response = Message::new(query.metadata.id, MessageType::Response, OpCode::Query);
    response.metadata.recursion_desired = query.metadata.recursion_desired;
    response.metadata.recursion_available = true;
    response.metadata.authoritative = true;
    let Some(question) = query.queries.first().cloned() else {
        response.metadata.response_code = ResponseCode::FormErr;
        return response.to_vec().ok();
    };
    response.add_query(question.clone());
    let name = question.name().clone();
    let entry = table.lock().unwrap().get(&key(&name.to_ascii())).cloned();
    match entry {
        None => response.metadata.response_code = ResponseCode::NXDomain,
        Some(entry) if entry.servfail => {
            response.metadata.response_code = ResponseCode::ServFail;
        }
        Some(entry) => match question.query_type() {
            RecordType::TXT => {
                for value in &entry.txt {
                    let data = RData::TXT(TXT::new(vec![value.clone()]));
                    response.add_answer(Record::from_rdata(name.clone(), 60, data));
                }
            }
            RecordType::A => {
                for ip in &entry.a {
                    response.add_answer(Record::from_rdata(name.clone(), 60, RData::A(A(*ip))));
                }
            }
            // Nothing of that type: NOERROR with no answer.
            _ => {}
        },
    }
    response.to_vec().ok()
}
