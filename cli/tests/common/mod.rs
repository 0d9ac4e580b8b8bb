//! `vwr dev` as a child process for the tests that drive the real binary: a free port, its own
//! state directory (removed on drop), in-memory stores and a known admin key unless told
//! otherwise; and a tier-1 service assembled as `vwr dev`'s, for tests that need one in process.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use http::Method;
use vwr_core::HmacKeyring;
use vwr_core::config::Env;
use vwr_core::time::Clock;
use vwr_core::token::Tier1Tokens;
use vwr_loadtest::LoadOptions;
use vwr_loadtest::client::{Auth, HttpClient};
use vwr_tier1::config::Tier1Config;
use vwr_tier1::memory::MemoryStore;
use vwr_tier1::{Tier1Clients, Tier1Service};

pub struct Server {
    child: Child,
    pub base: String,
    pub dir: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Starts `vwr dev ARGS…` (named `name` in its state directory) on a free port, with an
/// environment scrubbed of what would reach beyond the test (an AWS endpoint, Redis, SQS,
/// keys, an admin key) and then `env`; answers once `/healthz` does.
pub async fn start(name: &str, args: &[&str], env: &[(&str, &str)]) -> Server {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let dir = std::env::temp_dir().join(format!(
        "vwr-test-{name}-{}-{}",
        std::process::id(),
        vwr_core::time::now_millis()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vwr"));
    cmd.args(["dev", "--addr", &format!("127.0.0.1:{port}")])
        .args(args)
        .env("VWR_DEV_DIR", &dir)
        .env("RUST_LOG", "warn")
        .env_remove("AWS_ENDPOINT_URL")
        .env_remove("VWR_ADMIN_KEY")
        .env_remove("VWR_REDIS_URL")
        .env_remove("VWR_NOTICE_QUEUE_URL")
        .env_remove("VWR_ADDR")
        .env_remove("VWR_TIER1_KEYS")
        .env_remove("VWR_ENQUEUE_JWKS")
        .env_remove("VWR_TICKET_TTL_SECONDS")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd.spawn().unwrap();
    let server = Server { child, base: format!("http://127.0.0.1:{port}"), dir };
    let client = HttpClient::new(Duration::from_secs(2)).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(r) = client.send(Method::GET, &format!("{}/healthz", server.base), None, &Auth::None).await
            && r.status.is_success()
        {
            return server;
        }
        assert!(Instant::now() < deadline, "vwr dev did not start");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// [`start`] on the in-memory stores with the admin key `key` and the extra environment `env`.
pub async fn start_dev(name: &str, key: &str, env: &[(&str, &str)]) -> Server {
    let mut all = vec![("VWR_ADMIN_KEY", key)];
    all.extend_from_slice(env);
    start(name, &["--store", "memory"], &all).await
}

/// A tier-1 service on the in-memory store with `clock` and no cache, assembled as `vwr dev`
/// assembles its own (from the configuration it reads).
pub fn memory_tier1(clock: Arc<dyn Clock>) -> Tier1Service {
    let tokens = Tier1Tokens::new(HmacKeyring::generate("t1").unwrap(), "vwr", "vwr-edge");
    let keys = tokens.ring().to_text();
    let env = Env::from_pairs([("VWR_TIER1_KEYS", keys.as_str()), ("VWR_CACHE_TTL_MS", "0")]);
    let cfg = Tier1Config::from_env(&env).unwrap();
    vwr_tier1::assemble(&cfg, tokens, Tier1Clients::new(Arc::new(MemoryStore::new()), clock))
}

#[derive(Parser)]
struct Args {
    #[command(flatten)]
    opts: LoadOptions,
}

/// The options of `vwr loadtest ARGS…`.
pub fn load_options(args: &[&str]) -> LoadOptions {
    let mut argv = vec!["loadtest"];
    argv.extend_from_slice(args);
    Args::try_parse_from(argv).unwrap().opts
}
