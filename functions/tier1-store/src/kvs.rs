//! The CloudFront KeyValueStore of the edge verifier: where tier 1 publishes the active
//! events (`vwr_tier1::edge_sync`).

use async_trait::async_trait;
use vwr_tier1::edge_sync::{CONFIG_KEY, EdgeConfigStore, EdgeSyncError};

/// The CloudFront KeyValueStore of the edge verifier.
#[derive(Debug, Clone)]
pub struct KvsEdgeConfig {
    client: aws_sdk_cloudfrontkeyvaluestore::Client,
    arn: String,
}

impl KvsEdgeConfig {
    pub fn new(sdk: &aws_config::SdkConfig, arn: impl Into<String>) -> Self {
        Self { client: aws_sdk_cloudfrontkeyvaluestore::Client::new(sdk), arn: arn.into() }
    }
}

fn unavailable(op: &str, e: impl std::fmt::Display) -> EdgeSyncError {
    EdgeSyncError::Unavailable(format!("{op}: {e}"))
}

#[async_trait]
impl EdgeConfigStore for KvsEdgeConfig {
    async fn get(&self) -> Result<(String, String), EdgeSyncError> {
        let d = self.client.describe_key_value_store().kvs_arn(&self.arn).send().await.map_err(|e| {
            unavailable(
                "DescribeKeyValueStore",
                aws_sdk_cloudfrontkeyvaluestore::error::DisplayErrorContext(e),
            )
        })?;
        let version = d.e_tag().to_owned();
        let v = self.client.get_key().kvs_arn(&self.arn).key(CONFIG_KEY).send().await.map_err(|e| {
            unavailable("GetKey", aws_sdk_cloudfrontkeyvaluestore::error::DisplayErrorContext(e))
        })?;
        Ok((v.value().to_owned(), version))
    }

    async fn put(&self, value: &str, version: &str) -> Result<bool, EdgeSyncError> {
        match self
            .client
            .put_key()
            .kvs_arn(&self.arn)
            .key(CONFIG_KEY)
            .value(value)
            .if_match(version)
            .send()
            .await
        {
            Ok(_) => Ok(true),
            Err(e) => {
                use aws_sdk_cloudfrontkeyvaluestore::error::ProvideErrorMetadata;
                let code = e.code().unwrap_or_default().to_owned();
                if code == "ConflictException"
                    || code == "ValidationException" && e.message().unwrap_or_default().contains("ETag")
                {
                    Ok(false)
                } else {
                    Err(unavailable("PutKey", aws_sdk_cloudfrontkeyvaluestore::error::DisplayErrorContext(e)))
                }
            }
        }
    }
}
