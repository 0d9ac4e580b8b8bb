//! The origin secret from Secrets Manager (moto): a rotation is picked up by the first request
//! with the new value, and the previous value is still accepted while CloudFront deploys the new
//! header (terraform/README.md, "Rotation").
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use aws_sdk_secretsmanager::config::{Credentials, Region};
use vwr_core::config::Env;

async fn sdk() -> aws_config::SdkConfig {
    let endpoint =
        std::env::var("VWR_TEST_AWS_ENDPOINT").or_else(|_| std::env::var("AWS_ENDPOINT_URL")).expect(
            "these tests need an AWS emulator: run tests/run.sh, or start `moto_server -p 5000` and set \
         VWR_TEST_AWS_ENDPOINT=http://127.0.0.1:5000",
        );
    aws_config::defaults(aws_config::BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("test", "test", None, None, "vwr-tests"))
        .endpoint_url(endpoint)
        .load()
        .await
}

#[tokio::test]
async fn a_rotated_origin_secret_is_accepted_at_once_and_the_previous_one_meanwhile() {
    let sdk = sdk().await;
    let client = aws_sdk_secretsmanager::Client::new(&sdk);
    let name = format!("vwr-test-origin-{}-{}", std::process::id(), vwr_core::time::now_millis());
    let (old, new, bogus) = ("o".repeat(40), "n".repeat(40), "b".repeat(40));
    client.create_secret().name(&name).secret_string(&old).send().await.unwrap();

    let env = Env::from_pairs([("VWR_ORIGIN_SECRET_ID", name.as_str())]);
    let secret = vwr_lambda::secrets::origin_secret(&env, &sdk).await.unwrap().unwrap();
    assert_eq!(vwr_lambda::secrets::origin_values(&client, &name).await.unwrap(), vec![old.clone()]);
    assert!(secret.accepts(Some(old.as_bytes())).await);

    // Rotation: a new current version; the old one becomes AWSPREVIOUS.
    client.put_secret_value().secret_id(&name).secret_string(&new).send().await.unwrap();
    assert_eq!(
        vwr_lambda::secrets::origin_values(&client, &name).await.unwrap(),
        vec![new.clone(), old.clone()]
    );
    let secret = secret.with_min_interval(std::time::Duration::ZERO);
    assert!(secret.accepts(Some(new.as_bytes())).await, "the new header passes at once (one reload)");
    assert!(secret.accepts(Some(old.as_bytes())).await, "edges still sending the old header pass");
    assert!(!secret.accepts(Some(bogus.as_bytes())).await);
    assert!(!secret.accepts(None).await);
}
