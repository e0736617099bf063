//! Constrained value types used by the model: [`LogSink`] and [`ProxyNetwork`]. Each parses from
//! the string form an operator writes and prints back the same form, so the effective
//! configuration reads like the file that produced it.

use std::borrow::Cow;
use std::fmt;
use std::net::IpAddr;
use std::path::PathBuf;
use std::str::FromStr;

use ipnet::IpNet;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer, de};

/// Where the `log` delivery provider writes messages: `stdout`, `stderr` or `file:<path>`
/// (JSON Lines, appended, full message bodies: development only).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum LogSink {
    /// Standard output.
    #[default]
    Stdout,
    /// Standard error.
    Stderr,
    /// Append JSON Lines to this file.
    File(PathBuf),
}

impl FromStr for LogSink {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "stdout" => Ok(Self::Stdout),
            "stderr" => Ok(Self::Stderr),
            other => match other.strip_prefix("file:") {
                Some(path) if !path.trim().is_empty() => Ok(Self::File(PathBuf::from(path.trim()))),
                _ => Err(format!(
                    "unknown log sink \"{other}\"; allowed values: stdout|stderr|file:<path>"
                )),
            },
        }
    }
}

impl fmt::Display for LogSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Stdout => f.write_str("stdout"),
            Self::Stderr => f.write_str("stderr"),
            Self::File(path) => write!(f, "file:{}", path.display()),
        }
    }
}

impl Serialize for LogSink {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for LogSink {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        raw.parse().map_err(de::Error::custom)
    }
}

impl JsonSchema for LogSink {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "LogSink".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "pattern": "^(stdout|stderr|file:.+)$" })
    }
}

/// A network whose `X-Forwarded-*` headers are trusted: CIDR (`10.0.0.0/8`) or a bare address
/// (taken as `/32` or `/128`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProxyNetwork(IpNet);

impl ProxyNetwork {
    /// The network.
    #[must_use]
    pub fn net(&self) -> IpNet {
        self.0
    }

    /// Whether `addr` (a peer address) belongs to this network.
    #[must_use]
    pub fn contains(&self, addr: &IpAddr) -> bool {
        self.0.contains(addr)
    }
}

impl FromStr for ProxyNetwork {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if let Ok(net) = s.parse::<IpNet>() {
            return Ok(Self(net));
        }
        s.parse::<IpAddr>()
            .map(|addr| Self(IpNet::from(addr)))
            .map_err(|_| {
                format!("\"{s}\" is not an IP network; write a CIDR like 10.0.0.0/8 or an address")
            })
    }
}

impl fmt::Display for ProxyNetwork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for ProxyNetwork {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ProxyNetwork {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        raw.parse().map_err(de::Error::custom)
    }
}

impl JsonSchema for ProxyNetwork {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "ProxyNetwork".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_sink_round_trips() {
        assert_eq!("stdout".parse::<LogSink>().unwrap(), LogSink::Stdout);
        assert_eq!("stderr".parse::<LogSink>().unwrap(), LogSink::Stderr);
        let file: LogSink = "file:/tmp/sms.jsonl".parse().unwrap();
        assert_eq!(file, LogSink::File(PathBuf::from("/tmp/sms.jsonl")));
        assert_eq!(file.to_string(), "file:/tmp/sms.jsonl");
        let err = "syslog".parse::<LogSink>().unwrap_err();
        assert!(err.contains("stdout|stderr|file:<path>"), "{err}");
        assert!("file:".parse::<LogSink>().is_err());
    }

    #[test]
    fn proxy_network_accepts_bare_addresses() {
        let v4: ProxyNetwork = "10.1.2.3".parse().unwrap();
        assert_eq!(v4.to_string(), "10.1.2.3/32");
        let v6: ProxyNetwork = "::1".parse().unwrap();
        assert_eq!(v6.to_string(), "::1/128");
        let net: ProxyNetwork = "10.0.0.0/8".parse().unwrap();
        assert!(net.contains(&"10.9.9.9".parse().unwrap()));
        assert!("10.0.0.0/40".parse::<ProxyNetwork>().is_err());
        assert!("proxy.example".parse::<ProxyNetwork>().is_err());
    }
}
