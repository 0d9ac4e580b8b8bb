//! The CloudFront KeyValueStore of the edge verifier: where tier 1 publishes the active
//! events (`vwr_tier1::edge_sync`).

use async_trait::async_trait;
use vwr_tier1::edge_sync::{CONFIG_KEY, EdgeConfigStore, EdgeSyncError, REVOKED_KEY};

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

impl KvsEdgeConfig {
    /// Entry `key` (`None` while it does not exist) and the store's ETag.
    async fn get_entry(&self, key: &str) -> Result<(Option<String>, String), EdgeSyncError> {
        use aws_sdk_cloudfrontkeyvaluestore::error::ProvideErrorMetadata;
        let d = self.client.describe_key_value_store().kvs_arn(&self.arn).send().await.map_err(|e| {
            unavailable(
                "DescribeKeyValueStore",
                aws_sdk_cloudfrontkeyvaluestore::error::DisplayErrorContext(e),
            )
        })?;
        let version = d.e_tag().to_owned();
        match self.client.get_key().kvs_arn(&self.arn).key(key).send().await {
            Ok(v) => Ok((Some(v.value().to_owned()), version)),
            Err(e) if e.code() == Some("ResourceNotFoundException") => Ok((None, version)),
            Err(e) => {
                Err(unavailable("GetKey", aws_sdk_cloudfrontkeyvaluestore::error::DisplayErrorContext(e)))
            }
        }
    }

    /// Writes entry `key` against the store's ETag `version`; `Ok(false)` on a conflict.
    async fn put_entry(&self, key: &str, value: &str, version: &str) -> Result<bool, EdgeSyncError> {
        match self.client.put_key().kvs_arn(&self.arn).key(key).value(value).if_match(version).send().await {
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

#[async_trait]
impl EdgeConfigStore for KvsEdgeConfig {
    async fn get(&self) -> Result<(String, String), EdgeSyncError> {
        match self.get_entry(CONFIG_KEY).await? {
            (Some(v), version) => Ok((v, version)),
            (None, _) => {
                Err(EdgeSyncError::BadConfig(format!("no `{CONFIG_KEY}` entry in the KeyValueStore")))
            }
        }
    }

    async fn put(&self, value: &str, version: &str) -> Result<bool, EdgeSyncError> {
        self.put_entry(CONFIG_KEY, value, version).await
    }

    async fn get_revoked(&self) -> Result<(Option<String>, String), EdgeSyncError> {
        self.get_entry(REVOKED_KEY).await
    }

    async fn put_revoked(&self, value: &str, version: &str) -> Result<bool, EdgeSyncError> {
        self.put_entry(REVOKED_KEY, value, version).await
    }
}
