//! `vwr loadtest --bots` against the real `vwr dev` binary with every defence on
//! (docs/abuse.md): a proof of work, enqueue tokens signed with a key made here, the request
//! secret. The bots obtain nothing beyond their one account's place; the visitors all get
//! through.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

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
    let report = vwr_loadtest::run(opts).await.unwrap();
    assert!(report.safety.clean(), "safety: {:?}", report.safety);
    assert_eq!(report.flow.done, 120, "every visitor got through: {:?}", report.flow);
    let b = report.bots.as_ref().unwrap();
    assert_eq!(b.count, 8, "{b:?}");
    assert!(b.defences.enqueue_token_required, "{b:?}");
    let k = &b.kinds;
    // One account joining five times, solving every proof: its one place, nothing more.
    assert_eq!(k["multi-place"].places_obtained, Some(2), "one place per bot account: {k:?}");
    assert_eq!(k["multi-place"].extra_places, Some(0), "{k:?}");
    // Without a proof of work: nothing at all.
    assert_eq!(k["no-pow"].places_obtained, Some(0), "{k:?}");
    assert_eq!(k["no-pow"].refused.get("challenge_required"), Some(&10), "{k:?}");
    // Tickets of admitted visitors, without their secret: refused every time.
    assert_eq!(k["stolen-ticket"].admissions_obtained, Some(0), "{k:?}");
    let stolen = k["stolen-ticket"].attempts;
    assert!(stolen > 0, "the thieves found tickets to try: {k:?}");
    assert_eq!(k["stolen-ticket"].refused.get("proof_required"), Some(&stolen), "{k:?}");
    // A copied cookie shares its owner's place or slot in tier 2; never a slot of its own.
    assert!(k["shared-cookie"].attempts > 0, "{k:?}");
    assert_eq!(k["shared-cookie"].extra_slots, Some(0), "{k:?}");
    // The bots' requests are not the visitors' costs: each visitor joined twice (asked for a
    // proof, then with it).
    assert_eq!(report.costs.calls.assign, 240, "{:?}", report.costs);
}
