//! `svc-kms keygen`: creates the two static key pairs and the master key in one directory, and
//! says which file goes to which host.
//!
//! Nothing is overwritten by default: a key pair that already exists (both files) is kept, so
//! running keygen again is harmless; a pair with only one file present is an error, since
//! completing it would mean replacing the other. `--force` replaces both key pairs. The master key
//! is created only when absent and is never replaced, not even with `--force`: everything wrapped
//! under it would become unrecoverable. (To rotate, move it aside, generate a new one, and start
//! the daemon with the old one as `--retired-master-key`.)

use crate::envelope::MasterKey;
use crate::keys::{Existing, KEY_LEN, KeyKind, write_key_file};
use crate::wire::NOISE_PARAMS;
use std::fmt;
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// What happened to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It did not exist and was written.
    Created,
    /// It existed and was replaced (`--force`).
    Replaced,
    /// It existed and was left alone.
    Kept,
}

/// One file of a keygen run.
#[derive(Debug, Clone)]
pub struct KeygenFile {
    /// Its path.
    pub path: PathBuf,
    /// What happened to it.
    pub outcome: Outcome,
    /// Which side needs it and under which setting or flag.
    pub used_by: &'static str,
}

/// The result of [`keygen`]; its `Display` is what `svc-kms keygen` prints.
#[derive(Debug, Clone)]
pub struct KeygenReport {
    /// The directory written to.
    pub dir: PathBuf,
    /// Every file, in a fixed order: server key pair, client key pair, master key.
    pub files: Vec<KeygenFile>,
}

/// Why keygen stopped. Files written before the failure stay; a re-run completes the set.
#[derive(Debug, thiserror::Error)]
pub enum KeygenError {
    /// A key pair is half present.
    #[error(
        "{} exists but {} does not; refusing to replace it (pass --force to generate a new pair)",
        present.display(),
        missing.display()
    )]
    HalfPair {
        /// The file that exists.
        present: PathBuf,
        /// The file that is missing.
        missing: PathBuf,
    },
    /// The directory or a file could not be created.
    #[error("{}: {detail}", path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// What went wrong.
        detail: String,
    },
    /// The operating system's random source failed.
    #[error("cannot generate keys: {0}")]
    Random(String),
}

const USED_BY: [(KeyKind, &str); 5] = [
    (
        KeyKind::ServerPrivate,
        "daemon:  svc-kms serve --server-key",
    ),
    (KeyKind::ServerPublic, "runtime: kms.server_public_key_path"),
    (
        KeyKind::ClientPrivate,
        "runtime: kms.client_private_key_path",
    ),
    (
        KeyKind::ClientPublic,
        "daemon:  svc-kms serve --client-public-key",
    ),
    (
        KeyKind::Master,
        "daemon:  svc-kms serve --master-key (back it up)",
    ),
];

/// Creates `dir` (mode 0700) if needed, then the key pairs and master key as described in the
/// module documentation.
pub fn keygen(dir: &Path, force: bool) -> Result<KeygenReport, KeygenError> {
    let io_error = |path: &Path, e: io::Error| KeygenError::Io {
        path: path.to_path_buf(),
        detail: e.to_string(),
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| io_error(dir, e))?;
    let mut files = Vec::new();
    for (private, public) in [
        (KeyKind::ServerPrivate, KeyKind::ServerPublic),
        (KeyKind::ClientPrivate, KeyKind::ClientPublic),
    ] {
        let private_path = dir.join(private.file_name());
        let public_path = dir.join(public.file_name());
        let (has_private, has_public) = (exists(&private_path)?, exists(&public_path)?);
        let outcome = match (has_private, has_public, force) {
            (false, false, _) => Outcome::Created,
            (_, _, true) => Outcome::Replaced,
            (true, true, false) => Outcome::Kept,
            (true, false, false) => {
                return Err(KeygenError::HalfPair {
                    present: private_path,
                    missing: public_path,
                });
            }
            (false, true, false) => {
                return Err(KeygenError::HalfPair {
                    present: public_path,
                    missing: private_path,
                });
            }
        };
        if outcome != Outcome::Kept {
            let existing = if outcome == Outcome::Created {
                Existing::Refuse
            } else {
                Existing::Replace
            };
            let (secret, public_key) = generate_keypair()?;
            // Public half first: should writing the private half fail, the pair is left with only
            // a public file, which a re-run reports instead of silently pairing it with a new key.
            write_key_file(dir, public, &public_key, existing)
                .map_err(|e| io_error(&public_path, e))?;
            write_key_file(dir, private, &secret, existing)
                .map_err(|e| io_error(&private_path, e))?;
        }
        for (kind, path) in [(private, private_path), (public, public_path)] {
            files.push(KeygenFile {
                path,
                outcome,
                used_by: used_by(kind),
            });
        }
    }
    let master_path = dir.join(KeyKind::Master.file_name());
    let outcome = if exists(&master_path)? {
        Outcome::Kept
    } else {
        let master = MasterKey::generate().map_err(|e| KeygenError::Random(e.to_string()))?;
        write_key_file(dir, KeyKind::Master, master.expose(), Existing::Refuse)
            .map_err(|e| io_error(&master_path, e))?;
        Outcome::Created
    };
    files.push(KeygenFile {
        path: master_path,
        outcome,
        used_by: used_by(KeyKind::Master),
    });
    Ok(KeygenReport {
        dir: dir.to_path_buf(),
        files,
    })
}

fn used_by(kind: KeyKind) -> &'static str {
    USED_BY
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or("", |(_, used_by)| used_by)
}

fn exists(path: &Path) -> Result<bool, KeygenError> {
    // symlink_metadata: a dangling symlink still counts as "there", never as free to write.
    match std::fs::symlink_metadata(path) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(KeygenError::Io {
            path: path.to_path_buf(),
            detail: e.to_string(),
        }),
    }
}

/// A fresh X25519 key pair from snow's resolver (the same code that will use it).
fn generate_keypair() -> Result<(Zeroizing<[u8; KEY_LEN]>, [u8; KEY_LEN]), KeygenError> {
    let random = |e: snow::Error| KeygenError::Random(e.to_string());
    let params: snow::params::NoiseParams = NOISE_PARAMS.parse().map_err(random)?;
    let pair = snow::Builder::new(params)
        .generate_keypair()
        .map_err(random)?;
    let private = Zeroizing::new(pair.private);
    let mut secret = Zeroizing::new([0u8; KEY_LEN]);
    let mut public = [0u8; KEY_LEN];
    if private.len() != KEY_LEN || pair.public.len() != KEY_LEN {
        return Err(KeygenError::Random(
            "the key generator returned keys of an unexpected length".to_owned(),
        ));
    }
    secret.copy_from_slice(&private);
    public.copy_from_slice(&pair.public);
    Ok((secret, public))
}

impl fmt::Display for KeygenReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "svc-kms keygen: {}", self.dir.display())?;
        for file in &self.files {
            let outcome = match file.outcome {
                Outcome::Created => "created ",
                Outcome::Replaced => "replaced",
                Outcome::Kept => "kept    ",
            };
            let name = file
                .path
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            writeln!(f, "  {outcome} {name:<16} -> {}", file.used_by)?;
        }
        writeln!(
            f,
            "Copy kms-server.pub and kms-client.key to the runtime host. Keep kms-server.key, \
             kms-client.pub and kms-master.key on the KMS host only; losing kms-master.key makes \
             every wrapped key unrecoverable."
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn creates_everything_with_the_right_modes() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("keys");
        let report = keygen(&dir, false).unwrap();
        assert_eq!(mode(&dir), 0o700);
        let names: Vec<_> = report
            .files
            .iter()
            .map(|f| (f.path.file_name().unwrap().to_str().unwrap(), f.outcome))
            .collect();
        assert_eq!(
            names,
            [
                ("kms-server.key", Outcome::Created),
                ("kms-server.pub", Outcome::Created),
                ("kms-client.key", Outcome::Created),
                ("kms-client.pub", Outcome::Created),
                ("kms-master.key", Outcome::Created),
            ]
        );
        for secret in ["kms-server.key", "kms-client.key", "kms-master.key"] {
            assert_eq!(mode(&dir.join(secret)), 0o600, "{secret}");
        }
        let text = report.to_string();
        assert!(
            text.contains("kms-server.pub   -> runtime: kms.server_public_key_path"),
            "{text}"
        );
        assert!(text.contains("kms-client.pub   -> daemon:  svc-kms serve --client-public-key"));
    }

    #[test]
    fn rerun_keeps_force_replaces_pairs_but_never_the_master_key() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        keygen(dir, false).unwrap();
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
        let before: Vec<String> = ["kms-server.key", "kms-client.pub", "kms-master.key"]
            .iter()
            .map(|n| read(n))
            .collect();
        let again = keygen(dir, false).unwrap();
        assert!(again.files.iter().all(|f| f.outcome == Outcome::Kept));
        assert_eq!(read("kms-server.key"), before[0]);
        let forced = keygen(dir, true).unwrap();
        assert_eq!(forced.files[0].outcome, Outcome::Replaced);
        assert_eq!(forced.files[4].outcome, Outcome::Kept);
        assert_ne!(read("kms-server.key"), before[0]);
        assert_ne!(read("kms-client.pub"), before[1]);
        assert_eq!(read("kms-master.key"), before[2]);
        assert_eq!(mode(&dir.join("kms-server.key")), 0o600);
    }

    #[test]
    fn a_half_pair_is_refused_without_force() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        keygen(dir, false).unwrap();
        std::fs::remove_file(dir.join("kms-client.pub")).unwrap();
        let client_key = std::fs::read_to_string(dir.join("kms-client.key")).unwrap();
        let err = keygen(dir, false).unwrap_err();
        assert!(matches!(err, KeygenError::HalfPair { .. }));
        assert!(err.to_string().contains("pass --force"), "{err}");
        assert_eq!(
            std::fs::read_to_string(dir.join("kms-client.key")).unwrap(),
            client_key
        );
        keygen(dir, true).unwrap();
        assert!(dir.join("kms-client.pub").exists());
    }
}
