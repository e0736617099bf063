//! `svc.example.toml`, generated from the model: the key tree (with the `///` docs that schemars
//! carries) gives sections, keys and comments, `Config::default()` gives the values. Keys without
//! a default are written commented out with an example value. Nothing on the not-available list
//! ([`crate::unavailable`]) is written as a setting: the header names those entries as refused, so
//! the file shows only what works.
//!
//! A test in this crate fails when the checked-in file differs from [`example_toml`], so the
//! reference cannot drift from the code.

use std::fmt::Write as _;

use crate::keys::{self, Kind, Leaf, Node};
use crate::model::Config;
use crate::unavailable::{self, UNAVAILABLE};

const HEADER: &str = "\
# svc configuration reference.
#
# GENERATED from the svc-config types; do not edit by hand. Regenerate with:
#   UPDATE_EXAMPLE=1 cargo test -p svc-config
#
# Load order: built-in defaults, then this file (svc.toml in the working directory, the path in
# SVC_CONFIG_FILE, or --config), then environment variables, which win. Environment names are
# SVC_ plus the key path with `__` between levels (SVC_SERVER__PORT=8080). List values are JSON
# arrays (SVC_SERVER__ALLOWED_HOSTS='[\"auth.example.com\"]'); every other value is taken literally
# and converted to the key's type. Shortcuts: DATABASE_URL, DATABASE_IDENTITY_URL,
# DATABASE_AUTH_URL, DATABASE_CONTROL_URL, DATABASE_ASYNC_URL, MIGRATION_DATABASE_URL,
# LISTEN_DATABASE_URL and SVC_RUNTIME_PLANE. Any other SVC_ variable must name a key below, except SVC_CONFIG_FILE and the
# reserved SVC_TEST_* and SVC_BUILD_* names, which are ignored.
#
# Every value below is the built-in default; commented-out keys have no default.
";

/// Width of the generated comment paragraphs, `# ` included.
const WIDTH: usize = 100;

/// The reference configuration file, generated from the model and its defaults.
#[must_use]
pub fn example_toml() -> String {
    let tree = available(keys::key_tree(), "");
    let defaults = toml::Table::try_from(Config::default()).unwrap_or_default();
    let mut out = String::from(HEADER);
    write_unavailable(&mut out);
    for node in &tree {
        let path = node.name.as_str();
        match &node.kind {
            Kind::Section(children) => {
                let section_defaults = defaults.get(path).and_then(toml::Value::as_table);
                write_section(&mut out, path, node, children, section_defaults);
            }
            Kind::Leaf(_) => write_key(&mut out, path, node, defaults.get(path), false),
        }
    }
    out
}

/// The tree without the keys on the not-available list, and without sections they leave empty.
fn available(nodes: Vec<Node>, prefix: &str) -> Vec<Node> {
    nodes
        .into_iter()
        .filter_map(|mut node| {
            let path = format!("{prefix}{}", node.name);
            if unavailable::is_listed(&path) {
                return None;
            }
            if let Kind::Section(children) = node.kind {
                let children = available(children, &format!("{path}."));
                if children.is_empty() {
                    return None;
                }
                node.kind = Kind::Section(children);
            }
            Some(node)
        })
        .collect()
}

/// The header paragraph naming every refused section and key, so an operator who looks for one
/// the specification mentions learns it is deliberately absent.
fn write_unavailable(out: &mut String) {
    let names: Vec<String> = UNAVAILABLE.iter().map(|e| e.summary()).collect();
    let text = format!(
        "Not available in this version, and refused at start with a line naming them: {}.",
        names.join(", ")
    );
    out.push_str("#\n");
    let mut line = String::from("#");
    for word in text.split(' ') {
        if line.len() + 1 + word.len() > WIDTH && line.len() > 1 {
            let _ = writeln!(out, "{line}");
            line = String::from("#");
        }
        line.push(' ');
        line.push_str(word);
    }
    let _ = writeln!(out, "{line}");
}

fn write_comment(out: &mut String, text: &str) {
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            out.push_str("#\n");
        } else {
            let _ = writeln!(out, "# {line}");
        }
    }
}

fn env_name(path: &str) -> String {
    format!("SVC_{}", path.replace('.', "__").to_uppercase())
}

/// A section absent from the defaults (an optional one such as `[kms]`) is written entirely
/// commented out.
fn write_section(
    out: &mut String,
    path: &str,
    node: &Node,
    children: &[Node],
    defaults: Option<&toml::Table>,
) {
    let commented = defaults.is_none();
    out.push('\n');
    if let Some(doc) = &node.doc {
        write_comment(out, doc);
    }
    let _ = writeln!(out, "{}[{path}]", if commented { "# " } else { "" });
    for child in children
        .iter()
        .filter(|c| !matches!(c.kind, Kind::Section(_)))
    {
        let value = defaults.and_then(|d| d.get(&child.name));
        write_key(
            out,
            &format!("{path}.{}", child.name),
            child,
            value,
            commented,
        );
    }
    for child in children {
        if let Kind::Section(grandchildren) = &child.kind {
            let child_defaults = defaults
                .and_then(|d| d.get(&child.name))
                .and_then(toml::Value::as_table);
            write_section(
                out,
                &format!("{path}.{}", child.name),
                child,
                grandchildren,
                child_defaults,
            );
        }
    }
}

fn write_key(
    out: &mut String,
    path: &str,
    node: &Node,
    default: Option<&toml::Value>,
    commented: bool,
) {
    out.push('\n');
    if let Some(doc) = &node.doc {
        write_comment(out, doc);
    }
    let _ = writeln!(out, "# Environment: {}", env_name(path));
    match default {
        Some(value) if !commented => {
            let _ = writeln!(out, "{} = {value}", node.name);
        }
        _ => {
            let _ = writeln!(out, "# {} = {}", node.name, placeholder(node));
        }
    }
}

fn placeholder(node: &Node) -> String {
    if let Some(example) = node
        .example
        .as_ref()
        .and_then(|e| toml::Value::try_from(e).ok())
    {
        return example.to_string();
    }
    match node.kind {
        Kind::Leaf(Leaf::Number) => "0".to_owned(),
        Kind::Leaf(Leaf::Bool) => "false".to_owned(),
        Kind::Leaf(Leaf::List) => "[]".to_owned(),
        _ => "\"...\"".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_written_as_values_and_optional_keys_commented() {
        let text = example_toml();
        assert!(text.contains("\n[server]\n"));
        assert!(text.contains("\nhost = \"127.0.0.1\"\n"));
        assert!(text.contains("\nport = 8080\n"));
        assert!(text.contains("# Environment: SVC_SERVER__PORT\n"));
        assert!(text.contains("\n# base_domain = \"auth.example.com\"\n"));
        assert!(text.contains("\n[server.tls]\n"));
        assert!(text.contains("\n# [kms]\n"));
        assert!(text.contains("\n# socket_path = \"/run/svc-kms/kms.sock\"\n"));
        assert!(
            !text.contains("[vault]\n"),
            "refused sections are no settings"
        );
        assert!(
            !text.contains("\n[oauth_proxy]\n"),
            "a key that only accepts false is left out"
        );
        assert!(
            text.contains("\n[openapi]\n"),
            "the API reference switch works and is written"
        );
        assert!(
            text.contains(" [vault],"),
            "the header names the refused sections"
        );
        // The header is wrapped: read it as one line, wherever the list breaks.
        let unwrapped = text.replace("\n# ", " ");
        assert!(unwrapped.contains("oauth_proxy.enabled other than false"));
        assert!(!unwrapped.contains("openapi.enabled other than false"));
        assert!(text.contains("fail_mode = \"fail-closed\""));
        assert!(text.contains("default_algorithm = \"ES256\""));
    }
}
