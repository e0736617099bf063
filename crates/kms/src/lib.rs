//! svc-kms: the key-management daemon of svc and the client the runtime uses to talk to it.
//!
//! The daemon holds a 256-bit master key on its own disk and never reveals it. The runtime asks it,
//! over a Unix socket, to wrap data keys (envelope encryption: signing keys are stored in the
//! database only encrypted under a data key, and the data key only wrapped by this daemon) and to
//! unwrap them again. Both ends authenticate with static X25519 keys in a Noise
//! `Noise_KK_25519_ChaChaPoly_BLAKE2s` handshake ([`NOISE_PARAMS`], [`PROLOGUE`]); every request and
//! response then travels as one Noise transport message, so replayed, reordered or modified frames
//! fail to decrypt and end the connection.
//!
//! - [`KmsClient`]: what the runtime uses (`ping`, `wrap`, `unwrap`), with [`KmsError`].
//! - [`read_server_public_key`] and [`read_client_private_key`]: validate the runtime's key files
//!   at startup.
//! - [`Server`] / [`ServerConfig`]: the daemon, also usable in-process (tests of other crates).
//! - [`keygen()`]: what `svc-kms keygen` does.
//! - [`Keyring`]: the wrapped-key format and the master keys.
//!
//! This crate depends on no other svc crate.

pub mod cli;
mod client;
mod envelope;
mod error;
mod keygen;
mod keys;
pub mod logging;
mod message;
mod server;
mod wire;

pub use client::{DEFAULT_TIMEOUT, KmsClient};
pub use envelope::{
    FORMAT_V1, Keyring, MAX_CIPHERTEXT_LEN, MAX_CONTEXT_LEN, MAX_PLAINTEXT_LEN, MasterKey,
    MasterKeyId, WrapError,
};
pub use error::KmsError;
pub use keygen::{KeygenError, KeygenFile, KeygenReport, Outcome, keygen};
pub use keys::{
    CLIENT_PRIVATE_KEY_SETTING, KEY_LEN, PrivateKey, PublicKey, SERVER_PUBLIC_KEY_SETTING,
    read_client_private_key, read_client_public_key, read_master_key, read_server_private_key,
    read_server_public_key,
};
pub use server::{ServeError, Server, ServerConfig};
pub use wire::{MAX_FRAME_LEN, NOISE_PARAMS, PROLOGUE};
