//! The raw Argon2id rate of svc's default `[auth]` parameters: the physical limit of password
//! sign-in on this machine. Each hash allocates its memory, as svc's verification does
//! (`argon2::PasswordVerifier` on the stored PHC string).

use crate::stats::Tally;
use anyhow::anyhow;
use argon2::{Algorithm, Argon2, Params, Version};
use std::time::{Duration, Instant};
use svc_config::AuthConfig;

/// svc's defaults, read from its configuration model.
fn defaults() -> AuthConfig {
    AuthConfig::default()
}

pub(crate) fn print_defaults() {
    let auth = defaults();
    println!("memory_kib={}", auth.argon2_memory_kib);
    println!("iterations={}", auth.argon2_iterations);
    println!("parallelism={}", auth.argon2_parallelism);
    println!("max_concurrent={}", auth.argon2_max_concurrent);
}

/// Hashes on `threads` threads for `seconds`; counts the hashes finished within the window.
pub(crate) fn run(threads: usize, seconds: f64) -> anyhow::Result<Tally> {
    let auth = defaults();
    let params = Params::new(
        auth.argon2_memory_kib,
        auth.argon2_iterations,
        auth.argon2_parallelism,
        Some(32),
    )
    .map_err(|e| anyhow!("argon2 parameters: {e}"))?;
    eprintln!(
        "argon2id m={} KiB t={} p={} on {} thread(s) for {seconds} s",
        params.m_cost(),
        params.t_cost(),
        params.p_cost(),
        threads.max(1)
    );
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(seconds);
    let handles: Vec<_> = (0..threads.max(1))
        .map(|_| {
            let params = params.clone();
            std::thread::spawn(move || -> anyhow::Result<Tally> {
                let argon = Argon2::new(Algorithm::Argon2id, Version::V0x13, params);
                let mut tally = Tally::default();
                let mut out = [0u8; 32];
                while Instant::now() < deadline {
                    let salt: [u8; 16] = rand::random();
                    let t0 = Instant::now();
                    argon
                        .hash_password_into(b"correct horse battery staple", &salt, &mut out)
                        .map_err(|e| anyhow!("argon2: {e}"))?;
                    let done = Instant::now();
                    if done <= deadline {
                        tally.record(done - t0);
                    }
                }
                Ok(tally)
            })
        })
        .collect();
    let mut total = Tally::default();
    for handle in handles {
        let tally = handle
            .join()
            .map_err(|_| anyhow!("an argon2 thread panicked"))??;
        total.merge(tally);
    }
    total.elapsed = deadline - start;
    Ok(total)
}
