//! The page settings (docs/brand.md) on the in-memory model and on DynamoDB (moto): set,
//! served in the public page document, refused with `invalid_page` (nothing written) when a
//! colour pair is below WCAG AA or a link is not https, cleared, and audited.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::ev;
use http::StatusCode;
use vwr_core::ApiError;
use vwr_core::time::ManualClock;
use vwr_tier1::memory::MemoryStore;
use vwr_tier1::model::PageSettings;
use vwr_tier1::store::PositionStore;

const T0: u64 = 1_800_000_000;

fn settings(json: &str) -> PageSettings {
    serde_json::from_str(json).unwrap()
}

#[tokio::test]
async fn page_settings_are_checked_stored_served_and_audited() {
    let stores: Vec<(&str, Arc<dyn PositionStore>)> = vec![
        ("memory", Arc::new(MemoryStore::new())),
        ("dynamodb", Arc::new(common::dynamo_store("page").await)),
    ];
    for (name, store) in stores {
        let svc = common::service(store, Arc::new(ManualClock::new(T0)));
        let e1 = ev("e1");
        svc.activate(&e1, Default::default(), "ops").await.unwrap();
        let blank = svc.public_page(&e1).await.unwrap();
        assert_eq!(
            serde_json::to_value(&blank).unwrap(),
            serde_json::json!({"eventId": "e1", "updatedAt": T0}),
            "{name}"
        );

        let good = settings(
            r##"{"title": {"en": "Summer tour", "ja": "サマーツアー", "zh-Hant": "夏季巡演"},
                 "message": {"en": "Tickets go on sale at 8 pm."},
                 "logoUrl": "https://cdn.example.com/logo.svg",
                 "colors": {"accent": "#0b5fff", "background": "#ffffff", "text": "#1a1a1a"},
                 "links": {"help": "https://example.com/help"},
                 "languages": ["ja", "en", "zh-Hant"], "defaultLanguage": "ja"}"##,
        );
        svc.set_page(&e1, Some(good.clone()), "brand").await.unwrap();
        let doc = serde_json::to_value(svc.public_page(&e1).await.unwrap()).unwrap();
        assert_eq!(doc["title"]["ja"], "サマーツアー", "{name}");
        assert_eq!(doc["colors"]["accent"], "#0b5fff", "{name}");
        assert_eq!(doc["defaultLanguage"], "ja", "{name}");

        // Refused, nothing written: low contrast (text, accent), a non-https link.
        let before = svc.audit(&e1).await.unwrap().len();
        for bad in [
            r##"{"colors": {"accent": "#0b5fff", "background": "#ffffff", "text": "#999999"}}"##,
            r##"{"colors": {"accent": "#ffee00", "background": "#ffffff", "text": "#000000"}}"##,
            r##"{"logoUrl": "http://cdn.example.com/logo.svg"}"##,
            r##"{"title": {"fr": "Tournée"}}"##,
        ] {
            let e = ApiError::from(svc.set_page(&e1, Some(settings(bad)), "brand").await.unwrap_err());
            assert_eq!(
                (e.status, e.code.as_str()),
                (StatusCode::BAD_REQUEST, "invalid_page"),
                "{name}: {bad}"
            );
        }
        assert_eq!(svc.audit(&e1).await.unwrap().len(), before, "{name}");
        assert_eq!(svc.public_page(&e1).await.unwrap().page, good, "{name}: unchanged");

        svc.set_page(&e1, None, "brand").await.unwrap();
        assert_eq!(svc.public_page(&e1).await.unwrap().page, PageSettings::default(), "{name}");
        let audit = svc.audit(&e1).await.unwrap();
        let actions: Vec<&str> = audit.iter().map(|a| a.action.as_str()).collect();
        assert_eq!(actions, ["activate", "page", "page"], "{name}");
        assert_eq!(audit[1].after["page"]["colors"]["text"], "#1a1a1a", "{name}");
        assert!(audit[2].after["page"].is_null(), "{name}");
        let e = ApiError::from(svc.public_page(&ev("nope")).await.unwrap_err());
        assert_eq!(e.status, StatusCode::NOT_FOUND);
    }
}
