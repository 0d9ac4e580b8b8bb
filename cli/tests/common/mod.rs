//! `vwr dev` as a child process for the load-test tests: a free port, in-memory stores, a
//! known admin key, its own state directory (removed on drop).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use http::Method;
use vwr_cli::client::{Auth, HttpClient};
use vwr_cli::loadtest::LoadOptions;

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

/// Starts `vwr dev` (named `name` in its state directory) with admin key `key` and the extra
/// environment `env`; answers once `/healthz` does.
pub async fn start_dev(name: &str, key: &str, env: &[(&str, &str)]) -> Server {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let dir = std::env::temp_dir().join(format!(
        "vwr-test-{name}-{}-{}",
        std::process::id(),
        vwr_core::time::now_millis()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vwr"));
    cmd.args(["dev", "--addr", &format!("127.0.0.1:{port}"), "--store", "memory"])
        .env("VWR_DEV_DIR", &dir)
        .env("VWR_ADMIN_KEY", key)
        .env("RUST_LOG", "warn")
        .env_remove("AWS_ENDPOINT_URL")
        .env_remove("VWR_REDIS_URL")
        .env_remove("VWR_NOTICE_QUEUE_URL")
        .env_remove("VWR_ADDR")
        .env_remove("VWR_TIER1_KEYS")
        .env_remove("VWR_ENQUEUE_JWKS")
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
