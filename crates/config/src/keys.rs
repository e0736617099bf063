//! The key tree: every configuration key with its doc comment, example and kind, derived from the
//! JSON schema of [`Config`] (schemars carries the `///` docs) in declaration order (serde's field
//! list). The loader uses it to name unknown keys and list the valid ones; the example generator
//! walks it to write `svc.example.toml`.

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;

use figment::value::{Dict, Value as FigValue};
use schemars::JsonSchema;
use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde_json::{Map, Value};

use crate::model::{
    AdaptiveMfaConfig, ApiKeysConfig, AuthConfig, CaptchaConfig, ChallengeConfig, CibaConfig,
    Config, DatabaseConfig, DelegationConfig, DeploymentConfig, DeviceAuthorizationConfig,
    DpopConfig, DynamicRegistrationConfig, EmailConfig, EndpointThrottle, EnterpriseSsoConfig,
    GenericOauthConfig, HibpConfig, JwtConfig, KmsConfig, LogDelivery, LogoutConfig,
    MemcachedConfig, OidcConfig, OpenApiConfig, PasskeyConfig, PoolOverride, RecoveryConfig,
    RedisConfig, ScimConfig, SecurityConfig, ServerConfig, SmtpConfig, SocialConfig,
    SoftwareStatementIssuer, TenantConfig, TlsConfig, TwoFactorConfig, VerifiedDomainsConfig,
    WebhooksConfig,
};

/// One key (or section) of the configuration.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub(crate) name: String,
    pub(crate) doc: Option<String>,
    pub(crate) example: Option<Value>,
    pub(crate) kind: Kind,
}

/// What a key holds.
#[derive(Clone, Debug)]
pub(crate) enum Kind {
    /// A typed table with these keys.
    Section(Vec<Node>),
    /// A single value.
    Leaf(Leaf),
}

/// The shape of a single value, enough to decide how an environment string is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Leaf {
    Text,
    Number,
    Bool,
    List,
    Other,
}

/// The keys of [`Config`], top level first.
pub(crate) fn key_tree() -> Vec<Node> {
    let schema = schemars::schema_for!(Config);
    let root = schema.as_value();
    let defs = root.get("$defs").and_then(Value::as_object);
    let orders = field_orders();
    children(root, "Config", defs, &orders)
}

/// The node at a dotted path, if that key exists.
#[cfg(test)]
pub(crate) fn find<'a>(nodes: &'a [Node], dotted: &str) -> Option<&'a Node> {
    let mut current = nodes;
    let mut found = None;
    for segment in dotted.split('.') {
        let node = current.iter().find(|n| n.name == segment)?;
        current = match &node.kind {
            Kind::Section(children) => children,
            _ => &[],
        };
        found = Some(node);
    }
    found
}

/// The key names of a section, for "valid keys" hints.
pub(crate) fn names(nodes: &[Node]) -> Vec<String> {
    nodes.iter().map(|n| n.name.clone()).collect()
}

/// How a section is named in messages: `[server.tls]`, or "the top level".
pub(crate) fn section_label(prefix: &str) -> String {
    if prefix.is_empty() {
        "the top level".to_owned()
    } else {
        format!("[{prefix}]")
    }
}

/// Where a key path lands in the tree.
pub(crate) enum Lookup<'a> {
    /// A declared key.
    Node(&'a Node),
    /// Segment `at` names no key; `valid` lists the keys of its section.
    Unknown { at: usize, valid: Vec<String> },
    /// Segment `at` is a value, so it cannot have sub-keys.
    NotATable { at: usize },
}

/// Follows `path` (already lowercased segments) through the tree.
pub(crate) fn lookup<'a>(nodes: &'a [Node], path: &[String]) -> Lookup<'a> {
    let mut current = nodes;
    for (at, segment) in path.iter().enumerate() {
        let Some(node) = current.iter().find(|n| &n.name == segment) else {
            return Lookup::Unknown {
                at,
                valid: names(current),
            };
        };
        if at + 1 == path.len() {
            return Lookup::Node(node);
        }
        match &node.kind {
            Kind::Section(children) => current = children,
            Kind::Leaf(_) => return Lookup::NotATable { at },
        }
    }
    // Only an empty path gets here, and the environment never produces one.
    Lookup::Unknown {
        at: 0,
        valid: names(nodes),
    }
}

/// A key in the input that the model does not have.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct UnknownKey {
    pub(crate) key: String,
    pub(crate) section: String,
    pub(crate) valid: Vec<String>,
}

/// Removes keys the model does not have from `dict` (so the remaining values can still be
/// type-checked) and returns them, depth first.
pub(crate) fn prune_unknown(dict: &mut Dict, nodes: &[Node], prefix: &str) -> Vec<UnknownKey> {
    let mut unknown = Vec::new();
    let keys: Vec<String> = dict.keys().cloned().collect();
    for key in keys {
        let dotted = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match nodes.iter().find(|n| n.name == key) {
            None => {
                dict.remove(&key);
                unknown.push(UnknownKey {
                    key: dotted,
                    section: section_label(prefix),
                    valid: names(nodes),
                });
            }
            Some(Node {
                kind: Kind::Section(children),
                ..
            }) => {
                if let Some(FigValue::Dict(_, inner)) = dict.get_mut(&key) {
                    unknown.extend(prune_unknown(inner, children, &dotted));
                }
            }
            Some(_) => {}
        }
    }
    unknown
}

fn children(
    schema: &Value,
    type_name: &str,
    defs: Option<&Map<String, Value>>,
    orders: &[(Cow<'static, str>, &'static [&'static str])],
) -> Vec<Node> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let order: Vec<&str> = match orders.iter().find(|(name, _)| name == type_name) {
        Some((_, fields)) => fields.to_vec(),
        // Unregistered types still work, alphabetically; a test keeps the registry complete.
        None => properties.keys().map(String::as_str).collect(),
    };
    order
        .into_iter()
        .filter_map(|name| {
            let prop = properties.get(name)?;
            let (resolved, def_name) = strip_null(prop, defs);
            let doc = prop
                .get("description")
                .or_else(|| resolved.get("description"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            let example = prop
                .get("examples")
                .and_then(Value::as_array)
                .and_then(|e| e.first())
                .cloned();
            let kind = if resolved.get("properties").is_some() {
                Kind::Section(children(resolved, def_name.unwrap_or(""), defs, orders))
            } else {
                classify(resolved, defs)
            };
            Some(Node {
                name: name.to_owned(),
                doc,
                example,
                kind,
            })
        })
        .collect()
}

fn deref<'a>(
    schema: &'a Value,
    defs: Option<&'a Map<String, Value>>,
) -> (&'a Value, Option<&'a str>) {
    if let Some(name) = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        && let Some(def) = defs.and_then(|d| d.get(name))
    {
        let (inner, inner_name) = deref(def, defs);
        return (inner, inner_name.or(Some(name)));
    }
    (schema, None)
}

fn is_null(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
}

/// Follows `$ref` and drops the `null` alternative that `Option<T>` adds.
fn strip_null<'a>(
    schema: &'a Value,
    defs: Option<&'a Map<String, Value>>,
) -> (&'a Value, Option<&'a str>) {
    let (schema, name) = deref(schema, defs);
    for key in ["anyOf", "oneOf"] {
        if let Some(alternatives) = schema.get(key).and_then(Value::as_array) {
            let non_null: Vec<&Value> = alternatives.iter().filter(|a| !is_null(a)).collect();
            if let [only] = non_null.as_slice()
                && non_null.len() < alternatives.len()
            {
                let (inner, inner_name) = strip_null(only, defs);
                return (inner, inner_name.or(name));
            }
        }
    }
    (schema, name)
}

fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect(),
        _ => Vec::new(),
    }
}

fn is_text(schema: &Value, defs: Option<&Map<String, Value>>) -> bool {
    let (schema, _) = strip_null(schema, defs);
    if types(schema) == ["string"] {
        return true;
    }
    ["anyOf", "oneOf"].iter().any(|key| {
        schema
            .get(*key)
            .and_then(Value::as_array)
            .is_some_and(|alts| !alts.is_empty() && alts.iter().all(|a| is_text(a, defs)))
    })
}

fn classify(schema: &Value, defs: Option<&Map<String, Value>>) -> Kind {
    if is_text(schema, defs) {
        return Kind::Leaf(Leaf::Text);
    }
    match types(schema).as_slice() {
        ["array"] => Kind::Leaf(Leaf::List),
        ["integer"] | ["number"] => Kind::Leaf(Leaf::Number),
        ["boolean"] => Kind::Leaf(Leaf::Bool),
        _ => Kind::Leaf(Leaf::Other),
    }
}

/// Field lists in declaration order for every struct in the model, keyed by schema name. JSON
/// schema objects are unordered, so the order comes from serde's own field list.
fn field_orders() -> Vec<(Cow<'static, str>, &'static [&'static str])> {
    macro_rules! orders {
        ($($t:ty),* $(,)?) => {
            vec![$((<$t as JsonSchema>::schema_name(), fields_of::<$t>())),*]
        };
    }
    orders![
        Config,
        DeploymentConfig,
        ServerConfig,
        TlsConfig,
        EndpointThrottle,
        DatabaseConfig,
        PoolOverride,
        KmsConfig,
        RedisConfig,
        MemcachedConfig,
        AuthConfig,
        EmailConfig,
        SmtpConfig,
        LogDelivery,
        CaptchaConfig,
        HibpConfig,
        TwoFactorConfig,
        AdaptiveMfaConfig,
        RecoveryConfig,
        PasskeyConfig,
        EnterpriseSsoConfig,
        SocialConfig,
        GenericOauthConfig,
        JwtConfig,
        OidcConfig,
        SecurityConfig,
        OpenApiConfig,
        TenantConfig,
        WebhooksConfig,
        VerifiedDomainsConfig,
        DeviceAuthorizationConfig,
        DynamicRegistrationConfig,
        SoftwareStatementIssuer,
        CibaConfig,
        LogoutConfig,
        DpopConfig,
        DelegationConfig,
        ScimConfig,
        ApiKeysConfig,
        ChallengeConfig,
    ]
}

/// The serde field names of struct `T`, captured by asking it to deserialize from a probe that
/// records the list and stops.
fn fields_of<T: DeserializeOwned>() -> &'static [&'static str] {
    let captured = Cell::new(None);
    let _stopped = T::deserialize(FieldProbe(&captured));
    captured.get().unwrap_or(&[])
}

struct FieldProbe<'a>(&'a Cell<Option<&'static [&'static str]>>);

#[derive(Debug)]
struct ProbeStop;

impl fmt::Display for ProbeStop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("field probe stop")
    }
}

impl std::error::Error for ProbeStop {}

impl de::Error for ProbeStop {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Self
    }
}

impl<'de> Deserializer<'de> for FieldProbe<'_> {
    type Error = ProbeStop;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, ProbeStop> {
        Err(ProbeStop)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, ProbeStop> {
        self.0.set(Some(fields));
        Err(ProbeStop)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sections(nodes: &[Node], prefix: &str, out: &mut Vec<String>) {
        for node in nodes {
            if let Kind::Section(children) = &node.kind {
                let path = if prefix.is_empty() {
                    node.name.clone()
                } else {
                    format!("{prefix}.{}", node.name)
                };
                out.push(path.clone());
                sections(children, &path, out);
            }
        }
    }

    #[test]
    fn tree_follows_declaration_order() {
        let tree = key_tree();
        let top = names(&tree);
        assert_eq!(&top[..3], ["deployment", "server", "database"]);
        let server = find(&tree, "server").unwrap();
        let Kind::Section(keys) = &server.kind else {
            panic!("server is a section")
        };
        assert_eq!(&names(keys)[..3], ["host", "port", "transport"]);
    }

    #[test]
    fn every_section_has_a_registered_field_order() {
        let orders = field_orders();
        let schema = schemars::schema_for!(Config);
        let defs = schema.get("$defs").and_then(Value::as_object).unwrap();
        for (name, def) in defs {
            if def.get("properties").is_some() {
                assert!(
                    orders.iter().any(|(n, _)| n == name),
                    "register {name} in keys::field_orders"
                );
            }
        }
    }

    #[test]
    fn kinds_are_classified() {
        let tree = key_tree();
        let kind = |key: &str| find(&tree, key).map(|n| n.kind.clone());
        assert!(matches!(
            kind("server.port"),
            Some(Kind::Leaf(Leaf::Number))
        ));
        assert!(matches!(kind("server.host"), Some(Kind::Leaf(Leaf::Text))));
        assert!(matches!(
            kind("email.smtp.password"),
            Some(Kind::Leaf(Leaf::Text))
        ));
        assert!(matches!(
            kind("deployment.runtime_plane"),
            Some(Kind::Leaf(Leaf::Text))
        ));
        assert!(matches!(kind("database.url"), Some(Kind::Leaf(Leaf::Text))));
        assert!(matches!(
            kind("server.allowed_hosts"),
            Some(Kind::Leaf(Leaf::List))
        ));
        assert!(matches!(
            kind("security.production"),
            Some(Kind::Leaf(Leaf::Bool))
        ));
        assert!(matches!(kind("kms"), Some(Kind::Section(_))));
        assert!(
            kind("vault").is_none(),
            "refused sections are not in the model"
        );
        let mut all = Vec::new();
        sections(&tree, "", &mut all);
        for expected in [
            "server.tls",
            "server.endpoint_throttle",
            "database.auth_pool",
            "email.smtp",
            "email.log",
        ] {
            assert!(
                all.iter().any(|s| s == expected),
                "missing section {expected}"
            );
        }
    }

    #[test]
    fn every_key_is_documented() {
        fn walk(nodes: &[Node], prefix: &str) {
            for node in nodes {
                let path = format!("{prefix}{}", node.name);
                assert!(
                    node.doc.as_deref().is_some_and(|d| !d.trim().is_empty()),
                    "{path} has no doc comment"
                );
                if let Kind::Section(children) = &node.kind {
                    walk(children, &format!("{path}."));
                }
            }
        }
        walk(&key_tree(), "");
    }

    #[test]
    fn lookup_reports_where_a_path_goes_wrong() {
        let tree = key_tree();
        let path = |s: &str| s.split('.').map(str::to_owned).collect::<Vec<_>>();
        assert!(matches!(
            lookup(&tree, &path("server.port")),
            Lookup::Node(_)
        ));
        assert!(matches!(
            lookup(&tree, &path("vault.upstream.bearer_token")),
            Lookup::Unknown { at: 0, .. }
        ));
        match lookup(&tree, &path("server.prot")) {
            Lookup::Unknown { at, valid } => {
                assert_eq!(at, 1);
                assert!(valid.contains(&"port".to_owned()));
            }
            _ => panic!("server.prot should be unknown"),
        }
        assert!(matches!(
            lookup(&tree, &path("server.port.x")),
            Lookup::NotATable { at: 1 }
        ));
    }
}
