//! The environment layer: `SVC_*` variables (`__` between nested keys) and the documented
//! shortcuts (`DATABASE_URL`, `SVC_RUNTIME_PLANE`, …), as a figment provider whose metadata
//! names the variable behind each key, so type errors say `SVC_SERVER__PORT` rather than a path.
//!
//! Values are kept as strings (figment's lossy extraction turns "8080" into a port and "true"
//! into a bool), so a numeric-looking password stays text. Lists and tables are JSON.

use std::sync::Arc;

use figment::value::{Dict, Map, Value};
use figment::{Error, Metadata, Profile, Provider};

use crate::error::ConfigError;
use crate::keys::{self, Kind, Leaf, Lookup, Node};
use crate::unavailable;

/// The variable that points at the configuration file; it is not a configuration key.
pub(crate) const CONFIG_FILE_VAR: &str = "SVC_CONFIG_FILE";

/// Name of the provider, used to recognise environment errors.
pub(crate) const PROVIDER_NAME: &str = "environment";

const PREFIX: &str = "SVC_";

/// `SVC_` variables that belong to tests (`SVC_TEST_DATABASE_URL` in CI) and builds
/// (`SVC_BUILD_COMMIT`) rather than to the configuration; they are ignored, not refused.
pub(crate) const RESERVED_PREFIXES: &[&str] = &["SVC_TEST_", "SVC_BUILD_"];

/// Variables outside the `SVC_` scheme that set one key. A nested `SVC_` variable for the same
/// key wins over its shortcut. `MAINTENANCE_DATABASE_URL` names a key this version refuses
/// ([`crate::unavailable`]); it stays here so that setting it is refused, not silently ignored.
const SHORTCUTS: &[(&str, &str)] = &[
    ("DATABASE_URL", "database.url"),
    ("DATABASE_IDENTITY_URL", "database.identity_url"),
    ("DATABASE_AUTH_URL", "database.auth_url"),
    ("DATABASE_CONTROL_URL", "database.control_url"),
    ("DATABASE_ASYNC_URL", "database.async_url"),
    ("MIGRATION_DATABASE_URL", "database.migration_url"),
    ("LISTEN_DATABASE_URL", "database.listen_url"),
    ("MAINTENANCE_DATABASE_URL", "database.maintenance_url"),
    ("SVC_RUNTIME_PLANE", "deployment.runtime_plane"),
];

struct Entry {
    var: String,
    path: Vec<String>,
    value: Value,
    shortcut: bool,
}

/// The environment, reduced to the variables that set configuration keys.
#[derive(Clone)]
pub(crate) struct EnvLayer {
    dict: Dict,
    origins: Arc<Vec<(Vec<String>, String)>>,
}

impl EnvLayer {
    /// Reads `env`, reporting variables that map to no key or hold malformed JSON.
    pub(crate) fn collect(
        env: &[(String, String)],
        tree: &[Node],
        errors: &mut Vec<ConfigError>,
    ) -> Self {
        let mut entries: Vec<Entry> = Vec::new();
        for (var, raw) in env {
            if moved_to_kms(var) {
                errors.push(ConfigError::MovedToKms { var: var.clone() });
                continue;
            }
            let (path, shortcut) = match map_name(var) {
                Mapped::Ignore => continue,
                Mapped::Malformed(message) => {
                    errors.push(env_error(var, message));
                    continue;
                }
                Mapped::Path(path, shortcut) => (path, shortcut),
            };
            if let Some(entry) = unavailable::governing(&path) {
                // A variable naming the accepted value states what this version does anyway.
                let value = Value::from(raw.clone());
                if !unavailable::accepted_at(entry, &path, &value) {
                    errors.push(entry.refusal(format!("set by environment variable {var}")));
                }
                continue;
            }
            match to_value(var, raw, &path, tree, errors) {
                Ok(value) => entries.push(Entry {
                    var: var.clone(),
                    path,
                    value,
                    shortcut,
                }),
                Err(error) => errors.push(error),
            }
        }

        // A shortcut yields to the nested variable for the same key.
        let nested: Vec<Vec<String>> = entries
            .iter()
            .filter(|e| !e.shortcut)
            .map(|e| e.path.clone())
            .collect();
        entries.retain(|e| !e.shortcut || !nested.contains(&e.path));
        // Shallow first, so `SVC_SERVER__PORT` refines a whole-section `SVC_SERVER={…}`.
        entries.sort_by(|a, b| (a.path.len(), &a.var).cmp(&(b.path.len(), &b.var)));

        let mut dict = Dict::new();
        let mut origins = Vec::new();
        for entry in entries {
            insert(&mut dict, &entry.path, entry.value);
            origins.push((entry.path, entry.var));
        }
        Self {
            dict,
            origins: Arc::new(origins),
        }
    }

    /// Whether any variable set a key.
    pub(crate) fn is_empty(&self) -> bool {
        self.dict.is_empty()
    }

    /// Drops the value at `path` (after reporting it) so the rest can still be checked.
    pub(crate) fn remove(&mut self, path: &[String]) -> bool {
        remove_path(&mut self.dict, path)
    }
}

/// Removes the value at `path` from `dict`; a path into an array removes the whole array.
/// Returns whether anything was removed.
pub(crate) fn remove_path(dict: &mut Dict, path: &[String]) -> bool {
    match path {
        [] => false,
        [last] => dict.remove(last).is_some(),
        [first, rest @ ..] => match dict.get_mut(first) {
            Some(Value::Dict(_, inner)) => remove_path(inner, rest),
            Some(_) => dict.remove(first).is_some(),
            None => false,
        },
    }
}

impl Provider for EnvLayer {
    fn metadata(&self) -> Metadata {
        let origins = Arc::clone(&self.origins);
        Metadata::named(PROVIDER_NAME)
            .interpolater(move |_: &Profile, keys: &[&str]| variable_for(&origins, keys))
    }

    fn data(&self) -> Result<Map<Profile, Dict>, Error> {
        let mut map = Map::new();
        map.insert(Profile::Default, self.dict.clone());
        Ok(map)
    }
}

/// The variable that set `keys`: the one whose path is the longest prefix of `keys`, or, for an
/// error about a whole table, every variable inside it.
fn variable_for(origins: &[(Vec<String>, String)], keys: &[&str]) -> String {
    let covering = origins
        .iter()
        .filter(|(path, _)| path.len() <= keys.len() && path.iter().zip(keys).all(|(p, k)| p == k))
        .max_by_key(|(path, _)| path.len());
    if let Some((_, var)) = covering {
        return var.clone();
    }
    let inside: Vec<&str> = origins
        .iter()
        .filter(|(path, _)| path.iter().zip(keys).all(|(p, k)| p == k))
        .map(|(_, var)| var.as_str())
        .collect();
    if inside.is_empty() {
        format!("{PREFIX}{}", keys.join("__").to_uppercase())
    } else {
        inside.join(", ")
    }
}

enum Mapped {
    Ignore,
    Malformed(String),
    Path(Vec<String>, bool),
}

fn map_name(var: &str) -> Mapped {
    if var == CONFIG_FILE_VAR || RESERVED_PREFIXES.iter().any(|p| var.starts_with(p)) {
        return Mapped::Ignore;
    }
    if let Some((_, key)) = SHORTCUTS.iter().find(|(name, _)| *name == var) {
        return Mapped::Path(key.split('.').map(str::to_owned).collect(), true);
    }
    let Some(rest) = var.strip_prefix(PREFIX) else {
        return Mapped::Ignore;
    };
    let path: Vec<String> = rest.split("__").map(str::to_ascii_lowercase).collect();
    if path.iter().any(String::is_empty) {
        return Mapped::Malformed(
            "malformed name: use SVC_ then key names separated by `__`, e.g. SVC_SERVER__PORT"
                .to_owned(),
        );
    }
    Mapped::Path(path, false)
}

/// Variables that once carried key material or a master secret. Those secrets now live only in
/// svc-kms (wrapped data keys, a master key that never leaves the daemon), so a deployment that
/// still sets one is refused rather than silently ignoring a secret someone believes is in use.
pub const MOVED_TO_KMS: &[&str] = &[
    "SVC_MASTER_KEY",
    "SVC_MASTER_SECRET",
    "SVC_ENCRYPTION_KEY",
    "SVC_DATA_ENCRYPTION_KEY",
    "SVC_SIGNING_KEY",
    "SVC_SIGNING_KEY_PEM",
    "SVC_JWT__SIGNING_KEY",
    "SVC_JWT__PRIVATE_KEY",
    "SVC_JWT__PRIVATE_KEY_PEM",
    "SVC_JWT__SECRET",
    "SVC_JWT__HMAC_SECRET",
    "SVC_JWKS",
    "SVC_JWT__JWKS",
    "SVC_KMS__MASTER_KEY",
    "SVC_TOTP__ENCRYPTION_KEY",
    "SVC_VAULT__MASTER_KEY",
];

/// Name endings that mark key material whatever the section (`SVC_X__PRIVATE_KEY`,
/// `SVC_X__MASTER_KEY`, ...). Paths to key files (`..._KEY_PATH`) are configuration, not secrets.
const MOVED_TO_KMS_SUFFIXES: &[&str] = &[
    "_PRIVATE_KEY",
    "_PRIVATE_KEY_PEM",
    "_MASTER_KEY",
    "_MASTER_SECRET",
    "_SIGNING_KEY",
    "_ENCRYPTION_KEY",
];

/// Whether `var` is a secret variable that now belongs in svc-kms.
pub(crate) fn moved_to_kms(var: &str) -> bool {
    var.starts_with("SVC_")
        && (MOVED_TO_KMS.contains(&var)
            || MOVED_TO_KMS_SUFFIXES
                .iter()
                .any(|suffix| var.ends_with(suffix)))
}

fn env_error(var: &str, message: String) -> ConfigError {
    ConfigError::Env {
        var: var.to_owned(),
        message,
    }
}

/// Checks the path against the model and turns the raw string into a figment value. A section
/// given as a whole (JSON) loses the keys this version refuses, each refusal going to `refused`.
fn to_value(
    var: &str,
    raw: &str,
    path: &[String],
    tree: &[Node],
    refused: &mut Vec<ConfigError>,
) -> Result<Value, ConfigError> {
    let dotted = path.join(".");
    let node = match keys::lookup(tree, path) {
        Lookup::Node(node) => node,
        Lookup::Unknown { at, valid } => {
            let section = keys::section_label(&path[..at].join("."));
            return Err(env_error(
                var,
                format!(
                    "maps to no configuration key (`{dotted}`); valid keys in {section}: {}",
                    valid.join(", ")
                ),
            ));
        }
        Lookup::NotATable { at } => {
            return Err(env_error(
                var,
                format!(
                    "maps to no configuration key (`{dotted}`): `{}` is a value, not a table",
                    path[..=at].join(".")
                ),
            ));
        }
    };
    // Text keys take the value literally, even if it happens to start with `[` or `{`.
    if matches!(node.kind, Kind::Leaf(Leaf::Text)) {
        return Ok(Value::from(raw.to_owned()));
    }
    let trimmed = raw.trim_start();
    if !(trimmed.starts_with('[') || trimmed.starts_with('{')) {
        return Ok(Value::from(raw.to_owned()));
    }
    let json: serde_json::Value = serde_json::from_str(raw).map_err(|e| {
        env_error(
            var,
            format!(
                "starts with `[` or `{{` but is not valid JSON ({e}); lists and tables are JSON"
            ),
        )
    })?;
    let mut value = Value::serialize(&json)
        .map_err(|e| env_error(var, format!("cannot use this JSON value: {e}")))?;
    if let (Kind::Section(children), Value::Dict(_, dict)) = (&node.kind, &mut value) {
        refused.extend(
            unavailable::strip(dict, path)
                .into_iter()
                .map(|entry| entry.refusal(format!("set by environment variable {var}"))),
        );
        let unknown = keys::prune_unknown(dict, children, &dotted);
        if let Some(first) = unknown.first() {
            return Err(env_error(
                var,
                format!(
                    "sets unknown key `{}`; valid keys in {}: {}",
                    first.key,
                    first.section,
                    first.valid.join(", ")
                ),
            ));
        }
    }
    Ok(value)
}

fn insert(dict: &mut Dict, path: &[String], value: Value) {
    match path {
        [] => {}
        [last] => merge_into(dict, last, value),
        [first, rest @ ..] => {
            let slot = dict
                .entry(first.clone())
                .or_insert_with(|| Value::from(Dict::new()));
            if !matches!(slot, Value::Dict(..)) {
                *slot = Value::from(Dict::new());
            }
            if let Value::Dict(_, inner) = slot {
                insert(inner, rest, value);
            }
        }
    }
}

fn merge_into(dict: &mut Dict, key: &str, value: Value) {
    match (dict.get_mut(key), value) {
        (Some(Value::Dict(_, existing)), Value::Dict(_, incoming)) => {
            for (k, v) in incoming {
                merge_into(existing, &k, v);
            }
        }
        (_, value) => {
            dict.insert(key.to_owned(), value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(vars: &[(&str, &str)]) -> (EnvLayer, Vec<ConfigError>) {
        let env: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let mut errors = Vec::new();
        let layer = EnvLayer::collect(&env, &keys::key_tree(), &mut errors);
        (layer, errors)
    }

    fn get<'a>(layer: &'a EnvLayer, dotted: &str) -> Option<&'a Value> {
        let mut parts = dotted.split('.');
        let mut value = layer.dict.get(parts.next()?)?;
        for part in parts {
            value = value.as_dict()?.get(part)?;
        }
        Some(value)
    }

    #[test]
    fn key_material_variables_are_refused_as_moved_to_kms() {
        for var in [
            "SVC_MASTER_KEY",
            "SVC_JWT__PRIVATE_KEY",
            "SVC_WEBHOOKS__SIGNING_KEY",
            "SVC_FOO__ENCRYPTION_KEY",
        ] {
            let (_, errors) = collect(&[(var, "c2VjcmV0")]);
            assert_eq!(errors.len(), 1, "{var}: {errors:?}");
            let text = errors[0].to_string();
            assert!(
                text.starts_with(&format!("{var} moved to svc-kms:")),
                "{text}"
            );
            assert!(text.contains(
                "provision it through the key-management service and delete the variable"
            ));
            assert!(
                !text.contains("c2VjcmV0"),
                "the secret itself is never echoed"
            );
        }
        let (_, errors) = collect(&[(
            "SVC_KMS__CLIENT_PRIVATE_KEY_PATH",
            "/etc/svc/kms-client.key",
        )]);
        assert!(
            errors.is_empty(),
            "a path to a key file is configuration: {errors:?}"
        );
    }

    #[test]
    fn nested_names_split_on_double_underscore() {
        let (layer, errors) = collect(&[("SVC_SERVER__PORT", "9000"), ("PATH", "/bin")]);
        assert!(errors.is_empty());
        assert_eq!(
            get(&layer, "server.port").and_then(Value::as_str),
            Some("9000")
        );
        assert_eq!(
            variable_for(&layer.origins, &["server", "port"]),
            "SVC_SERVER__PORT"
        );
    }

    #[test]
    fn text_keys_are_never_parsed_as_json() {
        let (layer, errors) = collect(&[("SVC_EMAIL__SMTP__PASSWORD", "[not json")]);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            get(&layer, "email.smtp.password").and_then(Value::as_str),
            Some("[not json")
        );
    }

    #[test]
    fn lists_are_json_arrays() {
        let (layer, errors) =
            collect(&[("SVC_SERVER__ALLOWED_HOSTS", r#"["a.example","b.example"]"#)]);
        assert!(errors.is_empty());
        let list = get(&layer, "server.allowed_hosts")
            .and_then(Value::as_array)
            .unwrap();
        assert_eq!(list.len(), 2);
    }

    #[test]
    fn bad_json_names_the_variable() {
        let (_, errors) = collect(&[("SVC_SERVER__ALLOWED_HOSTS", "[a.example")]);
        assert_eq!(errors.len(), 1);
        assert!(errors[0].to_string().contains("SVC_SERVER__ALLOWED_HOSTS"));
        assert!(errors[0].to_string().contains("not valid JSON"));
    }

    #[test]
    fn nested_variable_beats_its_shortcut() {
        let (layer, _) = collect(&[
            ("DATABASE_URL", "postgres://short/db"),
            ("SVC_DATABASE__URL", "postgres://nested/db"),
        ]);
        assert_eq!(
            get(&layer, "database.url").and_then(Value::as_str),
            Some("postgres://nested/db")
        );
        assert_eq!(
            variable_for(&layer.origins, &["database", "url"]),
            "SVC_DATABASE__URL"
        );
    }

    #[test]
    fn unknown_and_malformed_names_are_errors() {
        let (layer, errors) = collect(&[
            ("SVC_SERVER__PROT", "1"),
            ("SVC_SERVER____PORT", "1"),
            ("SVC_SERVER__PORT__X", "1"),
            ("SVC_CONFIG_FILE", "x.toml"),
            ("SVC_TEST_DATABASE_URL", "postgres://ci/db"),
            ("SVC_BUILD_COMMIT", "abc123"),
        ]);
        assert!(layer.is_empty());
        let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(text.len(), 3, "{text:?}");
        assert!(text[0].contains("SVC_SERVER__PROT") && text[0].contains("server.prot"));
        assert!(text[0].contains("valid keys in [server]") && text[0].contains("port"));
        assert!(text[1].contains("malformed name"));
        assert!(text[2].contains("is a value, not a table"));
    }

    #[test]
    fn json_tables_are_checked_for_unknown_keys() {
        let (_, errors) = collect(&[("SVC_SERVER__TLS", r#"{"cert": "x"}"#)]);
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].to_string().contains("server.tls.cert"),
            "{}",
            errors[0]
        );
    }

    #[test]
    fn section_variable_is_refined_by_deeper_ones() {
        let (layer, errors) = collect(&[
            ("SVC_SERVER__PORT", "9000"),
            ("SVC_SERVER", r#"{"port": 1, "host": "localhost"}"#),
        ]);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            get(&layer, "server.port").and_then(Value::as_str),
            Some("9000")
        );
        assert_eq!(
            get(&layer, "server.host").and_then(Value::as_str),
            Some("localhost")
        );
    }
}
