//! `vwr loadtest` under faults against the real `vwr dev` binary: a run ended by
//! `--max-seconds` reports the visitors still in line as `unfinished`, not `lost`; visitors keep
//! their tickets through a burst of 403s on `check` (a WAF's and API Gateway's, injected by the
//! front proxy); a Redis fault drops requests (Redis stopped), and a paused Redis is told apart
//! (docs/performance.md#load-testing).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use vwr_loadtest::Report;

const KEY: &str = "loadtest-faults-admin-key-0123456789ab";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_ended_by_max_seconds_reports_the_visitors_still_in_line_as_unfinished() {
    let server = common::start_dev("loadtest-unfinished", KEY, &[]).await;
    // 300 visitors at once, 10 let through per second, 6 s: most are still in line at the end.
    let opts = common::load_options(&[
        "--base-url",
        &server.base,
        "--admin-key",
        KEY,
        "--visitors",
        "300",
        "--batch-size",
        "10",
        "--threshold",
        "300",
        "--dwell-seconds",
        "0.2",
        "--max-seconds",
        "6",
    ]);
    let report = vwr_loadtest::run(opts).await.unwrap();
    let s = &report.safety;
    assert_eq!(s.lost, 0, "nobody was lost, they were still in line: {s:?} {:?}", report.flow);
    let (done, unfinished) = (report.flow.done, report.flow.unfinished);
    assert!(unfinished > 200, "{:?}", report.flow);
    assert_eq!(done + unfinished, 300, "everyone got through or was still on the way: {:?}", report.flow);
    assert_eq!(report.flow.joined, 300);
    assert!(s.clean(), "unfinished is no safety counter: {s:?}");
    assert_eq!(s.places_lost_to_faults, 0, "{s:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn visitors_keep_their_tickets_through_a_burst_of_403s_on_check() {
    let server = common::start_dev("loadtest-check403", KEY, &[]).await;
    // 100 visitors over 2 s, 20 let through per second; every `check` from 1 s to 6 s answered
    // with a WAF's or API Gateway's 403.
    let opts = common::load_options(&[
        "--base-url",
        &server.base,
        "--admin-key",
        KEY,
        "--visitors",
        "100",
        "--arrival",
        "uniform",
        "--arrival-seconds",
        "2",
        "--batch-size",
        "20",
        "--threshold",
        "100",
        "--dwell-seconds",
        "0.3",
        "--max-seconds",
        "120",
        "--fault",
        "check403@1+5",
    ]);
    let report = vwr_loadtest::run(opts).await.unwrap();
    let fault = &report.faults[0];
    assert_eq!(fault.kind, "check403", "{fault:?}");
    let forbidden = fault.responses.unwrap();
    assert!(forbidden > 0, "the proxy answered 403s: {fault:?}");
    assert!(
        report.degraded.transient_refusals >= forbidden,
        "every 403 was taken as no verdict: {:?}",
        report.degraded
    );
    assert!(report.safety.clean(), "safety: {:?} {:?}", report.safety, report.places_lost);
    assert_eq!(report.safety.places_lost_to_faults, 0, "{:?}", report.places_lost);
    assert!(report.places_lost.verdicts.is_empty(), "no ticket was refused");
    assert_eq!(report.flow.done, 100, "everyone got through with their first ticket: {:?}", report.flow);
    // One `assign` each: nobody joined again.
    assert_eq!(report.costs.calls.assign, 100, "{:?}", report.costs);
}

/// A private Redis (AOF on) on a free port, in its own directory; shut down on drop.
struct Redis {
    port: u16,
    dir: PathBuf,
    start: String,
}

impl Redis {
    fn start(name: &str) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dir = std::env::temp_dir().join(format!("vwr-test-{name}-{}-{}", std::process::id(), port));
        std::fs::create_dir_all(&dir).unwrap();
        let start = format!(
            "redis-server --port {port} --bind 127.0.0.1 --save '' --appendonly yes --dir {d} --pidfile {d}/redis.pid --logfile {d}/redis.log --daemonize yes",
            d = dir.display()
        );
        let ok = Command::new("sh").arg("-c").arg(&start).status().expect("redis-server is needed").success();
        assert!(ok, "redis-server did not start");
        let redis = Self { port, dir, start };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !redis.ping() {
            assert!(Instant::now() < deadline, "redis-server did not answer");
            std::thread::sleep(Duration::from_millis(50));
        }
        redis
    }

    fn ping(&self) -> bool {
        Command::new("redis-cli")
            .args(["-p", &self.port.to_string(), "ping"])
            .output()
            .is_ok_and(|o| o.stdout.starts_with(b"PONG"))
    }

    fn pidfile(&self) -> String {
        Path::new(&self.dir).join("redis.pid").display().to_string()
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = Command::new("sh")
            .arg("-c")
            .arg(format!("kill -CONT $(cat {}) 2>/dev/null", self.pidfile()))
            .status();
        let _ = Command::new("redis-cli").args(["-p", &self.port.to_string(), "shutdown", "nosave"]).output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// 60 visitors through `vwr dev` on `redis`, with a 4-s Redis fault at 2 s made by `stop` and
/// `start`.
async fn run_with_redis_fault(name: &str, redis: &Redis, stop: &str, start: &str) -> Report {
    let url = format!("redis://127.0.0.1:{}", redis.port);
    let server = common::start_dev(name, KEY, &[("VWR_REDIS_URL", &url)]).await;
    let opts = common::load_options(&[
        "--base-url",
        &server.base,
        "--admin-key",
        KEY,
        "--visitors",
        "60",
        "--arrival",
        "uniform",
        "--arrival-seconds",
        "2",
        "--batch-size",
        "20",
        "--threshold",
        "100",
        "--dwell-seconds",
        "3",
        "--max-seconds",
        "120",
        "--fault",
        "redis@2+4",
        "--redis-stop-cmd",
        stop,
        "--redis-start-cmd",
        start,
    ]);
    vwr_loadtest::run(opts).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_fault_drops_requests_and_a_paused_redis_is_told_apart() {
    // Stopped: connections refused, vwr answers 503 at once.
    let redis = Redis::start("loadtest-redis-stop");
    let stop = format!("redis-cli -p {} shutdown", redis.port);
    let report = run_with_redis_fault("loadtest-redis-stop", &redis, &stop, &redis.start.clone()).await;
    let fault = &report.faults[0];
    assert_eq!((fault.injected, fault.recovered), (true, true), "{fault:?}");
    assert_eq!(fault.effect.as_deref(), Some("dropped"), "{fault:?}");
    assert!(fault.observed.as_ref().unwrap().refused > 0, "{fault:?}");
    assert!(report.degraded.responses_503 > 0, "the visitors saw the outage");
    assert!(report.safety.clean(), "a 4-s outage: {:?} {:?}", report.safety, report.places_lost);
    assert_eq!(report.flow.done, 60, "{:?}", report.flow);
    drop(redis);

    // Paused (SIGSTOP): connections taken and never answered; vwr's Redis timeout runs out.
    let redis = Redis::start("loadtest-redis-pause");
    let (stop, start) =
        (format!("kill -STOP $(cat {})", redis.pidfile()), format!("kill -CONT $(cat {})", redis.pidfile()));
    let report = run_with_redis_fault("loadtest-redis-pause", &redis, &stop, &start).await;
    let fault = &report.faults[0];
    assert_eq!(fault.effect.as_deref(), Some("paused"), "{fault:?}");
}
