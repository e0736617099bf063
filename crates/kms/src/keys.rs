//! Key files: the X25519 static keys of both ends, the master key, their one-line text format, and
//! the helpers that read and write them.
//!
//! Every file is one line, `svc-kms:<kind>:<base64 of 32 bytes>`, where `<kind>` is one of
//! `server-private`, `server-public`, `client-private`, `client-public` or `master`. The kind is
//! part of the file so that handing the runtime `kms-client.pub` where `kms-server.pub` belongs is
//! reported as exactly that, instead of surfacing later as a failed handshake. Private keys and the
//! master key must not be readable by group or others (mode 0600 or stricter); reading refuses
//! them otherwise, naming the `chmod` that fixes it.

use crate::envelope::MasterKey;
use crate::error::KmsError;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use std::fmt;
use std::io::{Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// Length in bytes of every key this crate handles (X25519 keys and the master key).
pub const KEY_LEN: usize = 32;

/// Setting name under which the runtime configures the daemon's public key.
pub const SERVER_PUBLIC_KEY_SETTING: &str = "kms.server_public_key_path";
/// Setting name under which the runtime configures its own private key.
pub const CLIENT_PRIVATE_KEY_SETTING: &str = "kms.client_private_key_path";

/// A key file is a few dozen bytes; anything much larger is the wrong file.
const MAX_KEY_FILE_LEN: u64 = 1024;

/// Which key a file holds. Decides the tag on its line, its conventional file name and whether it
/// is secret (written 0600, refused when group- or world-readable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyKind {
    ServerPrivate,
    ServerPublic,
    ClientPrivate,
    ClientPublic,
    Master,
}

impl KeyKind {
    const ALL: [KeyKind; 5] = [
        KeyKind::ServerPrivate,
        KeyKind::ServerPublic,
        KeyKind::ClientPrivate,
        KeyKind::ClientPublic,
        KeyKind::Master,
    ];

    fn tag(self) -> &'static str {
        match self {
            Self::ServerPrivate => "svc-kms:server-private",
            Self::ServerPublic => "svc-kms:server-public",
            Self::ClientPrivate => "svc-kms:client-private",
            Self::ClientPublic => "svc-kms:client-public",
            Self::Master => "svc-kms:master",
        }
    }

    /// The name `svc-kms keygen` gives the file.
    pub(crate) fn file_name(self) -> &'static str {
        match self {
            Self::ServerPrivate => "kms-server.key",
            Self::ServerPublic => "kms-server.pub",
            Self::ClientPrivate => "kms-client.key",
            Self::ClientPublic => "kms-client.pub",
            Self::Master => "kms-master.key",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Self::ServerPrivate => "the KMS server's private key",
            Self::ServerPublic => "the KMS server's public key",
            Self::ClientPrivate => "the KMS client's private key",
            Self::ClientPublic => "the KMS client's public key",
            Self::Master => "the KMS master key",
        }
    }

    pub(crate) fn is_secret(self) -> bool {
        matches!(
            self,
            Self::ServerPrivate | Self::ClientPrivate | Self::Master
        )
    }
}

/// An X25519 public key (one end's static identity in the Noise KK handshake). Not secret.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PublicKey([u8; KEY_LEN]);

impl PublicKey {
    /// Wraps raw key bytes.
    pub fn from_bytes(bytes: [u8; KEY_LEN]) -> Self {
        Self(bytes)
    }

    /// The raw key bytes.
    pub fn as_bytes(&self) -> &[u8; KEY_LEN] {
        &self.0
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({})", BASE64.encode(self.0))
    }
}

/// An X25519 private key. Zeroed on drop; `Debug` never shows it.
#[derive(Clone)]
pub struct PrivateKey(Zeroizing<[u8; KEY_LEN]>);

impl PrivateKey {
    /// Wraps raw key bytes (taken by value so the caller's copy can be the only other one).
    pub fn from_bytes(bytes: [u8; KEY_LEN]) -> Self {
        Self(Zeroizing::new(bytes))
    }

    /// The raw key bytes, for the Noise handshake.
    pub(crate) fn expose(&self) -> &[u8; KEY_LEN] {
        &self.0
    }
}

impl fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PrivateKey(redacted)")
    }
}

/// Reads the daemon's public key as the runtime configures it (`kms.server_public_key_path`,
/// normally a copy of `kms-server.pub`).
pub fn read_server_public_key(path: impl AsRef<Path>) -> Result<PublicKey, KmsError> {
    read_key(
        KeyKind::ServerPublic,
        SERVER_PUBLIC_KEY_SETTING,
        path.as_ref(),
    )
    .map(|bytes| PublicKey(*bytes))
}

/// Reads the runtime's private key (`kms.client_private_key_path`, normally `kms-client.key`).
/// Refuses a file readable by group or others.
pub fn read_client_private_key(path: impl AsRef<Path>) -> Result<PrivateKey, KmsError> {
    read_key(
        KeyKind::ClientPrivate,
        CLIENT_PRIVATE_KEY_SETTING,
        path.as_ref(),
    )
    .map(PrivateKey)
}

/// Reads the daemon's private key (`kms-server.key`); `key` names the setting or flag that
/// pointed at it, for the error message. Refuses a file readable by group or others.
pub fn read_server_private_key(
    key: &'static str,
    path: impl AsRef<Path>,
) -> Result<PrivateKey, KmsError> {
    read_key(KeyKind::ServerPrivate, key, path.as_ref()).map(PrivateKey)
}

/// Reads the runtime's public key as the daemon expects it (`kms-client.pub`).
pub fn read_client_public_key(
    key: &'static str,
    path: impl AsRef<Path>,
) -> Result<PublicKey, KmsError> {
    read_key(KeyKind::ClientPublic, key, path.as_ref()).map(|bytes| PublicKey(*bytes))
}

/// Reads a master key file (`kms-master.key`). Refuses a file readable by group or others.
pub fn read_master_key(key: &'static str, path: impl AsRef<Path>) -> Result<MasterKey, KmsError> {
    read_key(KeyKind::Master, key, path.as_ref()).map(|bytes| MasterKey::from_bytes(*bytes))
}

fn read_key(
    kind: KeyKind,
    key: &'static str,
    path: &Path,
) -> Result<Zeroizing<[u8; KEY_LEN]>, KmsError> {
    let fail = |detail: String| KmsError::KeyFile {
        key,
        path: path.to_path_buf(),
        detail,
    };
    let mut file = std::fs::File::open(path).map_err(|e| fail(format!("cannot be opened: {e}")))?;
    let meta = file
        .metadata()
        .map_err(|e| fail(format!("cannot be inspected: {e}")))?;
    if !meta.is_file() {
        return Err(fail(format!(
            "is not a regular file; expected {} as written by `svc-kms keygen`",
            kind.file_name()
        )));
    }
    // Check before reading: a secret that others can read may already be compromised, and the
    // operator should fix the mode rather than have the service quietly accept it.
    let mode = meta.permissions().mode() & 0o777;
    if kind.is_secret() && mode & 0o077 != 0 {
        return Err(fail(format!(
            "holds a secret but is readable by group or others (mode {mode:04o}); run `chmod 600 {}`",
            path.display()
        )));
    }
    if meta.len() > MAX_KEY_FILE_LEN {
        return Err(fail(format!(
            "is {} bytes, far too large for a key file; expected {} as written by `svc-kms keygen`",
            meta.len(),
            kind.file_name()
        )));
    }
    let mut text = Zeroizing::new(String::with_capacity(128));
    file.read_to_string(&mut text)
        .map_err(|e| fail(format!("cannot be read as text: {e}")))?;
    parse_key_line(kind, &text).map_err(fail)
}

/// Parses one key line; the error is the detail of a [`KmsError::KeyFile`].
fn parse_key_line(kind: KeyKind, text: &str) -> Result<Zeroizing<[u8; KEY_LEN]>, String> {
    let line = text.trim();
    let expected = format!(
        "expected one line `{}:<base64>` as written by `svc-kms keygen`",
        kind.tag()
    );
    let Some((tag, encoded)) = line.rsplit_once(':') else {
        return Err(format!("is not an svc-kms key file; {expected}"));
    };
    if tag != kind.tag() {
        return Err(match KeyKind::ALL.into_iter().find(|k| k.tag() == tag) {
            Some(other) => format!(
                "holds {}, but {} is needed (is this {} instead of {}?)",
                other.description(),
                kind.description(),
                other.file_name(),
                kind.file_name()
            ),
            None => format!("is not an svc-kms key file; {expected}"),
        });
    }
    let decoded = Zeroizing::new(
        BASE64
            .decode(encoded)
            .map_err(|_| format!("the key is not valid base64; {expected}"))?,
    );
    let mut key = Zeroizing::new([0u8; KEY_LEN]);
    if decoded.len() != KEY_LEN {
        return Err(format!(
            "the key is {} bytes; expected {KEY_LEN}",
            decoded.len()
        ));
    }
    key.copy_from_slice(&decoded);
    Ok(key)
}

/// How [`write_key_file`] treats an existing file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Existing {
    /// Fail with `AlreadyExists`.
    Refuse,
    /// Atomically replace it (write a temporary file beside it, then rename).
    Replace,
}

/// Writes one key file: 0600 for secrets, 0644 otherwise, synced to disk before returning.
pub(crate) fn write_key_file(
    dir: &Path,
    kind: KeyKind,
    key: &[u8; KEY_LEN],
    existing: Existing,
) -> std::io::Result<PathBuf> {
    let path = dir.join(kind.file_name());
    let line = Zeroizing::new(format!("{}:{}\n", kind.tag(), BASE64.encode(key)));
    let mode = if kind.is_secret() { 0o600 } else { 0o644 };
    let target = match existing {
        Existing::Refuse => path.clone(),
        Existing::Replace => dir.join(format!(".{}.tmp", kind.file_name())),
    };
    if existing == Existing::Replace {
        // A leftover from an interrupted run; it is ours to discard.
        match std::fs::remove_file(&target) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    // `create_new` with the final mode: the secret is never, even briefly, in a file that others
    // can open.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(&target)?;
    file.write_all(line.as_bytes())?;
    file.sync_all()?;
    drop(file);
    if existing == Existing::Replace {
        std::fs::rename(&target, &path)?;
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_keys_read_back_with_the_right_modes() {
        let dir = tempfile::tempdir().unwrap();
        let key = [7u8; KEY_LEN];
        let private =
            write_key_file(dir.path(), KeyKind::ClientPrivate, &key, Existing::Refuse).unwrap();
        let public =
            write_key_file(dir.path(), KeyKind::ServerPublic, &key, Existing::Refuse).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&private), 0o600);
        assert_eq!(mode(&public) & 0o600, 0o600);
        assert_eq!(*read_client_private_key(&private).unwrap().expose(), key);
        assert_eq!(*read_server_public_key(&public).unwrap().as_bytes(), key);
        let text = std::fs::read_to_string(&public).unwrap();
        assert!(text.starts_with("svc-kms:server-public:") && text.ends_with('\n'));
        assert_eq!(text.lines().count(), 1);
    }

    #[test]
    fn refuse_keeps_an_existing_file_and_replace_swaps_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_key_file(dir.path(), KeyKind::Master, &[1; 32], Existing::Refuse).unwrap();
        let err =
            write_key_file(dir.path(), KeyKind::Master, &[2; 32], Existing::Refuse).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
        let before = read_master_key("--master-key", &path).unwrap();
        assert_eq!(before.id(), MasterKey::from_bytes([1; 32]).id());
        write_key_file(dir.path(), KeyKind::Master, &[2; 32], Existing::Replace).unwrap();
        let after = read_master_key("--master-key", &path).unwrap();
        assert_eq!(after.id(), MasterKey::from_bytes([2; 32]).id());
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn a_swapped_file_is_named_as_such() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_key_file(
            dir.path(),
            KeyKind::ClientPublic,
            &[3; 32],
            Existing::Refuse,
        )
        .unwrap();
        let err = read_server_public_key(&path).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "kms.server_public_key_path ({}): holds the KMS client's public key, but the KMS \
                 server's public key is needed (is this kms-client.pub instead of kms-server.pub?)",
                path.display()
            )
        );
    }

    #[test]
    fn a_group_readable_secret_is_refused_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_key_file(
            dir.path(),
            KeyKind::ClientPrivate,
            &[4; 32],
            Existing::Refuse,
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let err = read_client_private_key(&path).unwrap_err();
        let KmsError::KeyFile { key, detail, .. } = &err else {
            panic!("unexpected {err:?}");
        };
        assert_eq!(*key, CLIENT_PRIVATE_KEY_SETTING);
        assert!(detail.contains("mode 0640"), "{detail}");
        assert!(
            detail.contains(&format!("chmod 600 {}", path.display())),
            "{detail}"
        );
    }

    #[test]
    fn malformed_files_name_the_expected_format() {
        for (text, needle) in [
            ("", "is not an svc-kms key file"),
            ("hello", "is not an svc-kms key file"),
            ("ssh-ed25519:AAAA", "is not an svc-kms key file"),
            ("svc-kms:server-public:!!!", "not valid base64"),
            (
                "svc-kms:server-public:AAAA",
                "the key is 3 bytes; expected 32",
            ),
        ] {
            let err = parse_key_line(KeyKind::ServerPublic, text).unwrap_err();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
        let line = format!("  svc-kms:server-public:{}  \n\n", BASE64.encode([9u8; 32]));
        assert_eq!(
            *parse_key_line(KeyKind::ServerPublic, &line).unwrap(),
            [9u8; 32]
        );
    }

    #[test]
    fn a_missing_file_names_setting_and_path() {
        let err = read_client_private_key("/nonexistent/kms-client.key").unwrap_err();
        assert!(
            err.to_string().starts_with(
                "kms.client_private_key_path (/nonexistent/kms-client.key): cannot be opened:"
            ),
            "{err}"
        );
    }

    #[test]
    fn private_key_debug_is_redacted() {
        let key = PrivateKey::from_bytes([0xAB; 32]);
        assert_eq!(format!("{key:?}"), "PrivateKey(redacted)");
    }
}
