//! Creating the table: the shape Terraform's `modules/tier1` declares (the contract test
//! compares them), for `vwr bootstrap`, `vwr dev` on an emulator and the tests.

use std::time::Duration;

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType, Projection,
    ProjectionType, ScalarAttributeType, TableStatus, TimeToLiveSpecification,
};
use vwr_tier1::model::StoreError;

use super::items::ACTIVE_INDEX;
use super::{DynamoStore, unavailable};

impl DynamoStore {
    /// Creates the table, its index and TTL if missing, and waits until it is active.
    /// Safe to run again on an existing table.
    pub async fn ensure_table(&self) -> Result<(), StoreError> {
        match self.client.describe_table().table_name(&self.table).send().await {
            Ok(_) => {}
            Err(e) if e.code() == Some("ResourceNotFoundException") => {
                let attr = |name: &str| {
                    AttributeDefinition::builder()
                        .attribute_name(name)
                        .attribute_type(ScalarAttributeType::S)
                        .build()
                        .map_err(|e| StoreError::Corrupt(e.to_string()))
                };
                let key = |name: &str, kt: KeyType| {
                    KeySchemaElement::builder()
                        .attribute_name(name)
                        .key_type(kt)
                        .build()
                        .map_err(|e| StoreError::Corrupt(e.to_string()))
                };
                let gsi = GlobalSecondaryIndex::builder()
                    .index_name(ACTIVE_INDEX)
                    .key_schema(key("gsi1pk", KeyType::Hash)?)
                    .key_schema(key("gsi1sk", KeyType::Range)?)
                    .projection(Projection::builder().projection_type(ProjectionType::All).build())
                    .build()
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?;
                let created = self
                    .client
                    .create_table()
                    .table_name(&self.table)
                    .billing_mode(BillingMode::PayPerRequest)
                    .attribute_definitions(attr("pk")?)
                    .attribute_definitions(attr("sk")?)
                    .attribute_definitions(attr("gsi1pk")?)
                    .attribute_definitions(attr("gsi1sk")?)
                    .key_schema(key("pk", KeyType::Hash)?)
                    .key_schema(key("sk", KeyType::Range)?)
                    .global_secondary_indexes(gsi)
                    .send()
                    .await;
                match created {
                    Ok(_) => tracing::info!(event = "tier1.table_created", table = %self.table),
                    Err(e) if e.code() == Some("ResourceInUseException") => {}
                    Err(e) => return Err(unavailable("CreateTable", e)),
                }
            }
            Err(e) => return Err(unavailable("DescribeTable", e)),
        }
        for _ in 0..120 {
            let d = self.client.describe_table().table_name(&self.table).send().await;
            let d = d.map_err(|e| unavailable("DescribeTable", e))?;
            if d.table().and_then(|t| t.table_status()) == Some(&TableStatus::Active) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        let ttl = self.client.describe_time_to_live().table_name(&self.table).send().await;
        let enabled = ttl
            .ok()
            .and_then(|t| t.time_to_live_description().and_then(|d| d.attribute_name().map(str::to_owned)))
            .is_some_and(|a| a == "expiresAt");
        if !enabled {
            let spec = TimeToLiveSpecification::builder()
                .attribute_name("expiresAt")
                .enabled(true)
                .build()
                .map_err(|e| StoreError::Corrupt(e.to_string()))?;
            if let Err(e) = self
                .client
                .update_time_to_live()
                .table_name(&self.table)
                .time_to_live_specification(spec)
                .send()
                .await
            {
                // TTL only tidies old redemptions; a failure here is worth a warning, not a stop.
                tracing::warn!(event = "tier1.ttl_not_enabled", table = %self.table, error = %unavailable("UpdateTimeToLive", e));
            }
        }
        Ok(())
    }
}
