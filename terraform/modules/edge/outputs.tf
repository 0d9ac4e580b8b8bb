output "distribution_id" {
  description = "CloudFront distribution id (invalidations: aws cloudfront create-invalidation --paths '/vwr/*')."
  value       = aws_cloudfront_distribution.this.id
}

output "distribution_arn" {
  description = "CloudFront distribution ARN."
  value       = aws_cloudfront_distribution.this.arn
}

output "distribution_domain" {
  description = "Domain name of the distribution (point the site's DNS here, or use it directly)."
  value       = aws_cloudfront_distribution.this.domain_name
}

output "web_acl_arn" {
  description = "WAF web ACL attached to the distribution: the module's (waf_enabled), the operator's (web_acl_id), or null."
  value       = aws_cloudfront_distribution.this.web_acl_id
}

output "waiting_page_bucket" {
  description = "Bucket holding the waiting page under vwr/."
  value       = aws_s3_bucket.static.id
}

output "kvs_arn" {
  description = "KeyValueStore of the CloudFront Function verifier (config, keys); null with Lambda@Edge."
  value       = local.kvs_arn
}

output "verifier_function" {
  description = "Name of the verifier (CloudFront Function or Lambda@Edge function)."
  value       = local.cf_function ? aws_cloudfront_function.verifier[0].name : aws_lambda_function.lambda_edge[0].function_name
}

output "config" {
  description = "The verifier configuration written to the edge (without keys)."
  value       = local.edge_config
}
