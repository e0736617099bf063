//! Layered loading: built-in defaults, then the TOML file, then the environment (which wins),
//! merged with figment, then validated. Sections and keys this version does not have
//! ([`crate::unavailable`]) are refused from every source before anything else is read.
//!
//! The environment is passed in ([`Sources`]); only [`Sources::from_process`] reads the real one,
//! so every other path through this crate is hermetic. Every failure becomes one line naming the
//! key and where the value came from; figment's raw error dump never reaches the operator.

use std::path::{Path, PathBuf};

use figment::error::Kind as FigKind;
use figment::value::{Dict, Map, Value};
use figment::{Figment, Metadata, Profile, Provider};

use crate::env::{self, EnvLayer};
use crate::error::{ConfigError, ConfigErrors};
use crate::keys;
use crate::model::Config;
use crate::unavailable;

/// File looked up in the working directory when no file is named.
pub const DEFAULT_FILE_NAME: &str = "svc.toml";

/// Everything the loader reads.
#[derive(Clone, Default)]
pub struct Sources {
    /// The file named on the command line (`--config`); relative paths are taken from `cwd`.
    pub explicit_file: Option<PathBuf>,
    /// The working directory: where `svc.toml` is looked up, relative paths are anchored and the
    /// embedded database lives.
    pub cwd: PathBuf,
    /// The environment variables, as (name, value) pairs.
    pub env: Vec<(String, String)>,
}

// The environment holds secrets, so Debug lists variable names only.
impl std::fmt::Debug for Sources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.env.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("Sources")
            .field("explicit_file", &self.explicit_file)
            .field("cwd", &self.cwd)
            .field("env", &names)
            .finish()
    }
}

impl Sources {
    /// The real process: current directory and environment (variables that are not UTF-8 are
    /// skipped; none of ours can be).
    pub fn from_process(explicit_file: Option<PathBuf>) -> std::io::Result<Self> {
        Ok(Self {
            explicit_file,
            cwd: std::env::current_dir()?,
            env: std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                .collect(),
        })
    }

    fn var(&self, name: &str) -> Option<&str> {
        self.env
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A loaded and validated configuration.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The effective configuration.
    pub config: Config,
    /// The file that was read, if any.
    pub file: Option<PathBuf>,
    /// Non-fatal findings to print at startup (development escape hatches, ignored settings).
    pub warnings: Vec<String>,
}

/// Loads defaults → file → environment, then validates; every problem is reported at once.
pub fn load(sources: &Sources) -> Result<Loaded, ConfigErrors> {
    let tree = keys::key_tree();
    let mut errors = Vec::new();

    let file = match choose_file(sources) {
        Ok(file) => file,
        Err(error) => {
            errors.push(error);
            None
        }
    };
    let file_layer = file
        .as_deref()
        .and_then(|path| match read_file(path, &tree) {
            Ok((layer, problems)) => {
                errors.extend(problems);
                Some(layer)
            }
            Err(error) => {
                errors.push(error);
                None
            }
        });
    let env_layer = EnvLayer::collect(&sources.env, &tree, &mut errors);
    let config = extract(file_layer, env_layer, &mut errors);
    let Some(config) = config.filter(|_| errors.is_empty()) else {
        return Err(ConfigErrors(errors));
    };

    let mut config = config.with_working_dir(&sources.cwd);
    config.anchor_paths();
    let warnings = config.validate()?;
    Ok(Loaded {
        config,
        file,
        warnings,
    })
}

/// Upper bound on type errors collected in one load; each costs one more extraction.
const MAX_VALUE_ERRORS: usize = 64;

/// Extracts the configuration. Serde stops at the first bad value, so each reported value is
/// removed from its layer and extraction repeats, collecting every type error in one run.
fn extract(
    mut file: Option<FileLayer>,
    mut env: EnvLayer,
    errors: &mut Vec<ConfigError>,
) -> Option<Config> {
    for _ in 0..MAX_VALUE_ERRORS {
        let mut figment = Figment::new();
        if let Some(layer) = &file {
            figment = figment.merge(layer);
        }
        if !env.is_empty() {
            figment = figment.merge(&env);
        }
        let failure = match figment.extract_lossy::<Config>() {
            Ok(config) => return Some(config),
            Err(failure) => failure,
        };
        let mut removed = false;
        for error in failure {
            let path = error.path.clone();
            errors.push(describe(error));
            let from_file = file
                .as_mut()
                .is_some_and(|layer| env::remove_path(&mut layer.dict, &path));
            removed |= from_file | env.remove(&path);
        }
        if !removed {
            return None;
        }
    }
    None
}

fn choose_file(sources: &Sources) -> Result<Option<PathBuf>, ConfigError> {
    let named = match (&sources.explicit_file, sources.var(env::CONFIG_FILE_VAR)) {
        (Some(path), _) => Some((path.clone(), "--config")),
        (None, Some(path)) if !path.trim().is_empty() => {
            Some((PathBuf::from(path.trim()), env::CONFIG_FILE_VAR))
        }
        _ => None,
    };
    match named {
        Some((path, origin)) => {
            let path = sources.cwd.join(path);
            if path.is_file() {
                Ok(Some(path))
            } else {
                let problem = if path.exists() {
                    "is not a file"
                } else {
                    "does not exist"
                };
                Err(ConfigError::File {
                    path,
                    origin: format!("from {origin}"),
                    problem: problem.to_owned(),
                })
            }
        }
        None => {
            let default = sources.cwd.join(DEFAULT_FILE_NAME);
            Ok(default.is_file().then_some(default))
        }
    }
}

/// The TOML file as a figment provider whose metadata carries the path.
struct FileLayer {
    path: PathBuf,
    dict: Dict,
}

impl Provider for FileLayer {
    fn metadata(&self) -> Metadata {
        Metadata::from("configuration file", self.path.as_path())
    }

    fn data(&self) -> Result<Map<Profile, Dict>, figment::Error> {
        let mut map = Map::new();
        map.insert(Profile::Default, self.dict.clone());
        Ok(map)
    }
}

/// Reads the TOML file. Refused and unknown keys are taken out and returned as problems, so the
/// rest is still type-checked in the same run.
fn read_file(
    path: &Path,
    tree: &[keys::Node],
) -> Result<(FileLayer, Vec<ConfigError>), ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::File {
        path: path.to_owned(),
        origin: "configuration file".to_owned(),
        problem: format!("cannot be read: {e}"),
    })?;
    let table: toml::Table = toml::from_str(&text).map_err(|e| {
        let (line, column) = e
            .span()
            .map_or((1, 1), |span| line_and_column(&text, span.start));
        ConfigError::Syntax {
            path: path.to_owned(),
            line,
            column,
            message: e.message().trim().replace('\n', "; "),
        }
    })?;
    let mut dict: Dict = table
        .into_iter()
        .map(|(k, v)| (k, toml_to_value(v)))
        .collect();
    // Refused sections first: most have no key in the model and would otherwise read as
    // unknown, which hides that the specification names them.
    let origin = format!("set in file {}", path.display());
    let mut problems: Vec<ConfigError> = unavailable::strip(&mut dict, &[])
        .into_iter()
        .map(|entry| entry.refusal(origin.clone()))
        .collect();
    problems.extend(
        keys::prune_unknown(&mut dict, tree, "")
            .into_iter()
            .map(|u| ConfigError::UnknownKey {
                key: u.key,
                path: path.to_owned(),
                section: u.section,
                valid: u.valid,
            }),
    );
    Ok((
        FileLayer {
            path: path.to_owned(),
            dict,
        },
        problems,
    ))
}

fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit_once('\n')
        .map_or(before, |(_, last)| last)
        .chars()
        .count()
        + 1;
    (line, column)
}

fn toml_to_value(value: toml::Value) -> Value {
    match value {
        toml::Value::String(s) => Value::from(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(f) => Value::from(f),
        toml::Value::Boolean(b) => Value::from(b),
        toml::Value::Datetime(d) => Value::from(d.to_string()),
        toml::Value::Array(items) => {
            Value::from(items.into_iter().map(toml_to_value).collect::<Vec<_>>())
        }
        toml::Value::Table(table) => Value::from(
            table
                .into_iter()
                .map(|(k, v)| (k, toml_to_value(v)))
                .collect::<Dict>(),
        ),
    }
}

/// One figment error as one line: key, origin and what was expected.
fn describe(error: figment::Error) -> ConfigError {
    let mut key = error.path.join(".");
    let origin = match &error.metadata {
        Some(meta) if meta.name == env::PROVIDER_NAME => {
            format!(
                "environment variable {}",
                meta.interpolate(&Profile::Default, &error.path)
            )
        }
        Some(Metadata {
            source: Some(source),
            ..
        }) => match source.file_path() {
            Some(path) => format!("file {}", path.display()),
            None => source.to_string(),
        },
        Some(meta) => meta.name.to_string(),
        None => "built-in defaults".to_owned(),
    };
    let message = match &error.kind {
        FigKind::InvalidType(actual, expected) => format!("expected {expected}, found {actual}"),
        FigKind::InvalidValue(actual, expected) => format!("expected {expected}, found {actual}"),
        FigKind::InvalidLength(len, expected) => format!("expected {expected}, found {len} items"),
        FigKind::UnknownVariant(found, allowed) => {
            format!(
                "unknown value \"{found}\"; allowed values: {}",
                allowed.join("|")
            )
        }
        FigKind::UnknownField(field, allowed) => {
            key = join_key(&key, field);
            format!("unknown key; valid keys: {}", allowed.join(", "))
        }
        FigKind::MissingField(field) => {
            let section = key.clone();
            key = join_key(&key, field);
            format!(
                "the key is missing, and [{section}] requires it whenever the section is present"
            )
        }
        FigKind::Message(message) => message.clone(),
        other => other.to_string(),
    };
    ConfigError::Value {
        key: if key.is_empty() {
            "<root>".to_owned()
        } else {
            key
        },
        origin,
        message,
    }
}

fn join_key(prefix: &str, field: &str) -> String {
    if prefix.is_empty() {
        field.to_owned()
    } else {
        format!("{prefix}.{field}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_debug_hides_values() {
        let sources = Sources {
            env: vec![("SVC_EMAIL__SMTP__PASSWORD".into(), "hunter2".into())],
            ..Sources::default()
        };
        let debug = format!("{sources:?}");
        assert!(debug.contains("SVC_EMAIL__SMTP__PASSWORD") && !debug.contains("hunter2"));
    }

    #[test]
    fn line_and_column_are_one_based() {
        assert_eq!(line_and_column("a = 1\nbb = x", 11), (2, 6));
        assert_eq!(line_and_column("x", 0), (1, 1));
    }

    #[test]
    fn explicit_file_beats_svc_config_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.toml"), "").unwrap();
        let sources = Sources {
            explicit_file: Some("a.toml".into()),
            cwd: dir.path().to_owned(),
            env: vec![("SVC_CONFIG_FILE".into(), "b.toml".into())],
        };
        assert_eq!(
            choose_file(&sources).unwrap(),
            Some(dir.path().join("a.toml"))
        );
    }

    #[test]
    fn missing_named_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let sources = Sources {
            explicit_file: None,
            cwd: dir.path().to_owned(),
            env: vec![("SVC_CONFIG_FILE".into(), "nope.toml".into())],
        };
        let error = choose_file(&sources).unwrap_err().to_string();
        assert!(error.contains("nope.toml"), "{error}");
        assert!(
            error.contains("SVC_CONFIG_FILE") && error.contains("does not exist"),
            "{error}"
        );
    }

    #[test]
    fn svc_toml_in_cwd_is_optional() {
        let dir = tempfile::tempdir().unwrap();
        let sources = Sources {
            cwd: dir.path().to_owned(),
            ..Sources::default()
        };
        assert_eq!(choose_file(&sources).unwrap(), None);
        std::fs::write(dir.path().join("svc.toml"), "").unwrap();
        assert_eq!(
            choose_file(&sources).unwrap(),
            Some(dir.path().join("svc.toml"))
        );
    }
}
