//! Configuration this version does not have: the sections and keys the specification names for
//! features that are not built yet. Each is refused at load, from the file and from the
//! environment alike, with one line naming it and saying it is not available in this version,
//! because accepting a setting that does nothing lets an operator believe a feature is on.
//!
//! [`UNAVAILABLE`] is the one place that says what is refused. Its entries are absent from the
//! model. An entry may accept the one value that states what this version does (a switch that
//! can only be off), so a configuration that spells it out still loads. The example generator leaves every entry out of `svc.example.toml` and lists
//! them in its header. When a feature lands, its entry goes and its typed section comes in.

use figment::value::{Dict, Value};

use crate::error::ConfigError;

/// What a refused key still accepts: the value that describes this version's behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Accepts {
    /// Nothing: any value, and any key inside the section, is refused.
    Nothing,
    /// `false`, in any spelling the loader reads as false (`false`, `0`, `no`, `off`).
    False,
}

/// How an entry is written in TOML, for the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// A table: `[vault]`.
    Section,
    /// An array of tables: `[[chains]]`.
    Tables,
    /// A key inside a section: `oauth_proxy.enabled`.
    Key,
}

/// One refused section or key.
#[derive(Debug)]
pub(crate) struct Unavailable {
    /// The dotted key: `vault`, `oauth_proxy.enabled`.
    pub(crate) key: &'static str,
    shape: Shape,
    /// What the section or key would configure and what this version does instead; the middle
    /// of the refusal line.
    reason: &'static str,
    accepts: Accepts,
}

const fn section(key: &'static str, reason: &'static str) -> Unavailable {
    Unavailable {
        key,
        shape: Shape::Section,
        reason,
        accepts: Accepts::Nothing,
    }
}

const fn tables(key: &'static str, reason: &'static str) -> Unavailable {
    Unavailable {
        key,
        shape: Shape::Tables,
        reason,
        accepts: Accepts::Nothing,
    }
}

const fn key(key: &'static str, accepts: Accepts, reason: &'static str) -> Unavailable {
    Unavailable {
        key,
        shape: Shape::Key,
        reason,
        accepts,
    }
}

/// Every section and key that is refused in this version. No entry lies inside another, so one
/// setting meets at most one entry.
pub(crate) const UNAVAILABLE: &[Unavailable] = &[
    // Sign-in methods and factors.
    section("sms", "SMS one-time codes are not built yet"),
    section("email_otp", "email one-time codes are not built yet"),
    section(
        "magic_link",
        "magic sign-in links are not built yet (the mailed verification, password-reset and \
         invitation links need no settings)",
    ),
    section("anonymous", "anonymous users are not built yet"),
    section("siwe", "Sign-In with Ethereum is not built yet"),
    // Protocol features.
    section(
        "session_cookie",
        "the session cookie has fixed attributes (host-only, HttpOnly, SameSite=Lax, Secure with \
         the __Host- prefix on https) and no settings yet",
    ),
    section(
        "refresh_family_cache",
        "the refresh-token family cache is not built yet (refresh families are read from the \
         database)",
    ),
    key(
        "jwt.refresh_token_lifetime_agent_secs",
        Accepts::Nothing,
        "no agent receives a refresh token in this version (client_credentials never does)",
    ),
    // Tenant features and APIs.
    section("admin", "admin routes are not built yet"),
    section(
        "access_control",
        "access-control policies are per tenant, through /api/v1/policies, and have no \
         deployment settings yet",
    ),
    section(
        "organizations",
        "organizations are per tenant, through /api/v1/organizations, and have no deployment \
         settings yet",
    ),
    section(
        "invitations",
        "invitations work with built-in settings and have no settings of their own yet",
    ),
    section("vault", "the credential vault is not built yet"),
    section("billing", "billing is not built yet"),
    section("commerce", "commerce is not built yet"),
    section("wallet", "wallets are not built yet"),
    tables("chains", "blockchain integration is not built yet"),
    section(
        "user_self_service",
        "user self-service has no settings yet (the account pages under /auth/account need none)",
    ),
    section(
        "i18n",
        "the hosted pages are in English only and have no localisation settings yet",
    ),
    key(
        "server.identity_app_origin",
        Accepts::Nothing,
        "there is no identity web app to point at yet (the hosted pages are served under /auth)",
    ),
    key(
        "server.dashboard_app_origin",
        Accepts::Nothing,
        "there is no dashboard web app to point at yet",
    ),
    key(
        "oauth_proxy.enabled",
        Accepts::False,
        "the development OAuth proxy is not built yet",
    ),
    // Infrastructure.
    key(
        "deployment.embedded_chain_monitor",
        Accepts::False,
        "there is no chain monitor (blockchain integration is not built yet)",
    ),
    key(
        "database.maintenance_url",
        Accepts::Nothing,
        "no maintenance job opens a database connection of its own yet (migrations use \
         database.migration_url)",
    ),
    section(
        "phone",
        "nothing sends SMS yet, so there is no SMS provider to choose",
    ),
    section("proxy", "outgoing requests cannot go through a proxy yet"),
    section(
        "telemetry",
        "trace and metric export is not built yet (Prometheus metrics are served at /metrics)",
    ),
];

impl Unavailable {
    fn path(&self) -> impl Iterator<Item = &'static str> {
        self.key.split('.')
    }

    fn depth(&self) -> usize {
        self.path().count()
    }

    /// How the entry is written in TOML: `[vault]`, `[[chains]]`, `oauth_proxy.enabled`.
    pub(crate) fn label(&self) -> String {
        match self.shape {
            Shape::Section => format!("[{}]", self.key),
            Shape::Tables => format!("[[{}]]", self.key),
            Shape::Key => self.key.to_owned(),
        }
    }

    /// The label, with the accepted value when there is one (for the example's header).
    pub(crate) fn summary(&self) -> String {
        match self.accepts {
            Accepts::Nothing => self.label(),
            Accepts::False => format!("{} other than false", self.label()),
        }
    }

    /// Whether `value` is the one this version accepts.
    fn is_accepted(&self, value: &Value) -> bool {
        match self.accepts {
            Accepts::Nothing => false,
            Accepts::False => value.to_bool_lossy() == Some(false),
        }
    }

    /// The refusal line for a value set by `origin` (`set in file /etc/svc.toml`, `set by
    /// environment variable SVC_SOCIAL__GOOGLE`). The value itself is never echoed: it may be a
    /// secret.
    pub(crate) fn refusal(&self, origin: String) -> ConfigError {
        let fix = match (self.shape, self.accepts) {
            (Shape::Section | Shape::Tables, _) => "remove the section".to_owned(),
            (Shape::Key, Accepts::Nothing) => "remove the key".to_owned(),
            (Shape::Key, Accepts::False) => "remove the key or set it to false".to_owned(),
        };
        ConfigError::Unavailable {
            key: self.key.to_owned(),
            label: self.label(),
            origin,
            reason: self.reason.to_owned(),
            fix,
        }
    }
}

/// Whether the dotted `key` is on the list (the example generator leaves it out).
pub(crate) fn is_listed(key: &str) -> bool {
    UNAVAILABLE.iter().any(|e| e.key == key)
}

/// The entry a setting at `path` falls under: the entry itself, or a refused section holding it.
pub(crate) fn governing(path: &[String]) -> Option<&'static Unavailable> {
    UNAVAILABLE.iter().find(|entry| {
        entry.depth() <= path.len() && entry.path().zip(path).all(|(e, p)| e == p.as_str())
    })
}

/// Whether a single value set at exactly `path` is the one its entry accepts (an environment
/// variable naming the key itself).
pub(crate) fn accepted_at(entry: &Unavailable, path: &[String], value: &Value) -> bool {
    entry.depth() == path.len() && entry.is_accepted(value)
}

/// Removes every listed key below `prefix` from `dict`, the table found at `prefix` (empty for
/// the whole file), and returns the entries whose value was not the accepted one. Accepted
/// values go too: each equals the model's default, or has no key in the model at all. A table
/// left empty by the removal goes with it, since an empty section means its defaults.
pub(crate) fn strip(dict: &mut Dict, prefix: &[String]) -> Vec<&'static Unavailable> {
    let mut refused = Vec::new();
    for entry in UNAVAILABLE {
        let path: Vec<&str> = entry.path().collect();
        let below = path.len() > prefix.len() && path.iter().zip(prefix).all(|(e, p)| e == p);
        if !below {
            continue;
        }
        if let Some(value) = take(dict, &path[prefix.len()..])
            && !entry.is_accepted(&value)
        {
            refused.push(entry);
        }
    }
    refused
}

fn take(dict: &mut Dict, path: &[&str]) -> Option<Value> {
    match path {
        [] => None,
        [last] => dict.remove(*last),
        [first, rest @ ..] => {
            let Some(Value::Dict(_, inner)) = dict.get_mut(*first) else {
                return None;
            };
            let taken = take(inner, rest);
            if taken.is_some() && inner.is_empty() {
                dict.remove(*first);
            }
            taken
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{self, Kind};

    fn dict(toml: &str) -> Dict {
        let table: toml::Table = toml::from_str(toml).unwrap();
        match Value::serialize(table).unwrap() {
            Value::Dict(_, dict) => dict,
            other => panic!("not a table: {other:?}"),
        }
    }

    #[test]
    fn no_entry_lies_inside_another_and_keys_are_unique() {
        for (i, a) in UNAVAILABLE.iter().enumerate() {
            for b in &UNAVAILABLE[i + 1..] {
                assert_ne!(a.key, b.key);
                let (a_path, b_path): (Vec<_>, Vec<_>) = (a.path().collect(), b.path().collect());
                assert!(
                    !b_path.starts_with(&a_path) && !a_path.starts_with(&b_path),
                    "{} and {} overlap",
                    a.key,
                    b.key
                );
            }
        }
    }

    #[test]
    fn entries_are_out_of_the_model_except_keys_whose_default_is_the_accepted_value() {
        let tree = keys::key_tree();
        let defaults = toml::Value::try_from(crate::Config::default()).unwrap();
        for entry in UNAVAILABLE {
            let Some(node) = keys::find(&tree, entry.key) else {
                continue;
            };
            assert!(
                matches!(node.kind, Kind::Leaf(_)) && entry.accepts != Accepts::Nothing,
                "{} is refused but still a section or key of the model",
                entry.key
            );
            let default = entry
                .path()
                .try_fold(&defaults, |value, segment| value.get(segment))
                .unwrap_or_else(|| panic!("{} has no default", entry.key));
            assert!(
                entry.is_accepted(&Value::serialize(default).unwrap()),
                "{}: the model's default must be the accepted value",
                entry.key
            );
        }
    }

    #[test]
    fn strip_refuses_values_other_than_the_accepted_one_and_drops_emptied_tables() {
        let mut input = dict(
            "[vault.upstream]\nbearer_token = \"x\"\n[oauth_proxy]\nenabled = false\n\
             [deployment]\nembedded_chain_monitor = \"on\"\nruntime_plane = \"auth\"\n\
             [[chains]]\nname = \"a\"\n",
        );
        let refused: Vec<&str> = strip(&mut input, &[]).iter().map(|e| e.key).collect();
        assert_eq!(
            refused,
            ["vault", "chains", "deployment.embedded_chain_monitor"]
        );
        let left: Vec<&String> = input.keys().collect();
        assert_eq!(left, ["deployment"], "oauth_proxy emptied and dropped");
        let deployment = input["deployment"].as_dict().unwrap();
        assert_eq!(deployment.keys().collect::<Vec<_>>(), ["runtime_plane"]);
    }

    #[test]
    fn strip_works_on_a_section_given_as_a_whole() {
        let mut section = dict("embedded_chain_monitor = \"on\"\n");
        let prefix = ["deployment".to_owned()];
        let refused: Vec<&str> = strip(&mut section, &prefix).iter().map(|e| e.key).collect();
        assert_eq!(refused, ["deployment.embedded_chain_monitor"]);
        assert!(section.is_empty());
        let mut accepted = dict("embedded_chain_monitor = false\n");
        assert!(strip(&mut accepted, &prefix).is_empty());
        assert!(accepted.is_empty(), "the accepted value is dropped too");
    }

    #[test]
    fn governing_finds_the_entry_at_or_above_a_path() {
        let path = |s: &str| s.split('.').map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(
            governing(&path("vault.upstream.bearer_token")).map(|e| e.key),
            Some("vault")
        );
        assert_eq!(
            governing(&path("oauth_proxy.enabled")).map(|e| e.key),
            Some("oauth_proxy.enabled")
        );
        assert!(
            governing(&path("oauth_proxy")).is_none(),
            "a whole section is checked inside"
        );
        assert!(governing(&path("server.port")).is_none());
        let entry = governing(&path("oauth_proxy.enabled")).unwrap();
        assert!(accepted_at(
            entry,
            &path("oauth_proxy.enabled"),
            &Value::from("off")
        ));
        assert!(!accepted_at(
            entry,
            &path("oauth_proxy.enabled"),
            &Value::from("true")
        ));
    }

    #[test]
    fn refusals_are_one_line_naming_the_entry_and_the_fix() {
        for entry in UNAVAILABLE {
            let line = entry
                .refusal("set in file /etc/svc.toml".to_owned())
                .to_string();
            assert!(!line.contains('\n'), "{line}");
            assert!(
                line.starts_with(&format!(
                    "{} is not available in this version (set in file /etc/svc.toml): ",
                    entry.label()
                )),
                "{line}"
            );
            assert!(line.contains("; remove the "), "{line}");
        }
    }
}
