//! `vwr loadtest --bots` against the real `vwr dev` binary with every defence on
//! (docs/abuse.md): a proof of work, enqueue tokens signed with a key made here, the request
//! secret. The bots obtain nothing beyond their one account's place; the visitors all get
//! through.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use vwr_cli::loadtest;
use vwr_core::EcKeyring;

const KEY: &str = "loadtest-bots-admin-key-0123456789abcd";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_obtain_nothing_with_the_defences_on() {
    let site = EcKeyring::generate("site-test").unwrap();
    let jwks = serde_json::to_string(&site.jwks()).unwrap();
    let server = common::start_dev("loadtest-bots", KEY, &[("VWR_ENQUEUE_JWKS", &jwks)]).await;
    let site_key = site.to_text();
    let opts = common::load_options(&[
        "--base-url",
        &server.base,
        "--admin-key",
        KEY,
        "--visitors",
        "120",
        "--arrival",
        "uniform",
        "--arrival-seconds",
        "2",
        "--batch-size",
        "20",
        "--threshold",
        "200",
        "--dwell-seconds",
        "0.3",
        "--max-seconds",
        "90",
        "--bots",
        "8",
        "--bot-places",
        "5",
        "--pow-difficulty",
        "8",
        "--enqueue-key",
        &site_key,
    ]);
    let (report, clean) = loadtest::run(opts).await.unwrap();
    assert!(clean, "safety: {}", report["safety"]);
    assert_eq!(report["flow"]["done"], 120, "every visitor got through: {}", report["flow"]);
    let b = &report["bots"];
    assert_eq!(b["count"], 8, "{b}");
    assert_eq!(b["defences"]["enqueueTokenRequired"], true, "{b}");
    let k = &b["kinds"];
    // One account joining five times, solving every proof: its one place, nothing more.
    assert_eq!(k["multi-place"]["placesObtained"], 2, "one place per bot account: {k}");
    assert_eq!(k["multi-place"]["extraPlaces"], 0, "{k}");
    // Without a proof of work: nothing at all.
    assert_eq!(k["no-pow"]["placesObtained"], 0, "{k}");
    assert_eq!(k["no-pow"]["refused"]["challenge_required"], 10, "{k}");
    // Tickets of admitted visitors, without their secret: refused every time.
    assert_eq!(k["stolen-ticket"]["admissionsObtained"], 0, "{k}");
    let stolen = k["stolen-ticket"]["attempts"].as_u64().unwrap();
    assert!(stolen > 0, "the thieves found tickets to try: {k}");
    assert_eq!(k["stolen-ticket"]["refused"]["proof_required"], stolen, "{k}");
    // A copied cookie shares its owner's place or slot in tier 2; never a slot of its own.
    assert!(k["shared-cookie"]["attempts"].as_u64().unwrap() > 0, "{k}");
    assert_eq!(k["shared-cookie"]["extraSlots"], 0, "{k}");
    // The bots' requests are not the visitors' costs: each visitor joined twice (asked for a
    // proof, then with it).
    assert_eq!(report["costs"]["calls"]["assign"], 240, "{}", report["costs"]);
}
