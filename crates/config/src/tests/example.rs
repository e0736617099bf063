//! The checked-in `svc.example.toml`: generated, current, and a valid configuration.

use std::path::PathBuf;

use super::support::sources;
use crate::keys::{self, Kind, Node};
use crate::unavailable::{self, UNAVAILABLE};
use crate::{example_toml, load};

fn example_path() -> PathBuf {
    let manifest_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let workspace = manifest_dir.ancestors().nth(2).unwrap_or(&manifest_dir);
    workspace.join("svc.example.toml")
}

#[test]
fn example_file_is_up_to_date() {
    let generated = example_toml();
    let path = example_path();
    if std::env::var_os("UPDATE_EXAMPLE").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == generated,
        "{} is stale; regenerate it with: UPDATE_EXAMPLE=1 cargo test -p svc-config",
        path.display()
    );
}

#[test]
fn example_file_loads_and_validates() {
    let dir = tempfile::tempdir().unwrap();
    let mut sources = sources(dir.path(), &[]);
    sources.explicit_file = Some(example_path());
    let loaded = match load(&sources) {
        Ok(loaded) => loaded,
        Err(errors) => panic!("svc.example.toml must load:\n{errors}"),
    };
    assert!(loaded.warnings.is_empty());
    assert!(!loaded.config.is_production());
}

#[test]
fn example_documents_every_key() {
    fn walk(nodes: &[Node], prefix: &str, text: &str) {
        for node in nodes {
            let path = format!("{prefix}{}", node.name);
            if unavailable::is_listed(&path) {
                // Checked by `example_names_every_refused_section_and_key_in_its_header_only`.
                continue;
            }
            match &node.kind {
                Kind::Section(children) => {
                    let header = format!("[{path}]\n");
                    let all_listed = children
                        .iter()
                        .all(|c| unavailable::is_listed(&format!("{path}.{}", c.name)));
                    if all_listed {
                        assert!(!text.contains(&header), "{path} has no available key");
                        continue;
                    }
                    assert!(text.contains(&header), "no section header for {path}");
                    walk(children, &format!("{path}."), text);
                }
                Kind::Leaf(_) => {
                    let key = format!("\n{} = ", node.name);
                    let commented = format!("\n# {} = ", node.name);
                    assert!(
                        text.contains(&key) || text.contains(&commented),
                        "{path} not written"
                    );
                    let env = format!("SVC_{}", path.replace('.', "__").to_uppercase());
                    assert!(text.contains(&env), "{env} not mentioned");
                }
            }
        }
    }
    walk(&keys::key_tree(), "", &example_toml());
}

#[test]
fn example_names_every_refused_section_and_key_in_its_header_only() {
    let text = example_toml();
    let header: String = text
        .lines()
        .take_while(|l| l.starts_with('#'))
        .collect::<Vec<_>>()
        .join(" ");
    for entry in UNAVAILABLE {
        assert!(
            header.contains(&entry.label()),
            "{} missing from the header",
            entry.key
        );
        let env = format!("SVC_{}", entry.key.replace('.', "__").to_uppercase());
        assert!(!text.contains(&env), "{env} documented as a setting");
    }
}

fn is_commented_setting(rest: &str) -> bool {
    let header = rest.starts_with('[') && rest.ends_with(']') && !rest.contains(' ');
    let key = rest.split_once(" = ").is_some_and(|(key, _)| {
        !key.is_empty()
            && key
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    });
    header || key
}

#[test]
fn commented_examples_are_type_correct() {
    // An operator may uncomment any example; with all of them uncommented at once the file must
    // still parse and type-check (validation rules may object to the combination, which is fine).
    let uncommented: String = example_toml()
        .lines()
        .map(|line| match line.strip_prefix("# ") {
            Some(rest) if is_commented_setting(rest) => rest.to_owned(),
            _ => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("svc.toml"), &uncommented).unwrap();
    match load(&sources(dir.path(), &[])) {
        Ok(loaded) => assert!(loaded.config.kms.is_some()),
        Err(errors) => {
            for error in errors.errors() {
                assert!(
                    matches!(error, crate::ConfigError::Rule { .. }),
                    "not a validation finding: {error}"
                );
            }
        }
    }
}
