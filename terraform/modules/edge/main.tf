# The edge: one CloudFront distribution in front of the operator's site, the waiting page (S3,
# private, Origin Access Control), the tier-1 API (/vwr-api/*, prefix removed), the tier-2 API
# (/api/queue/*) and, optionally, the protected-API gate; the edge verifier (CloudFront Function
# with a KeyValueStore, or Lambda@Edge) on the site's behaviors.

locals {
  cf_function = var.verifier == "cloudfront-function"
  lambda_edge = var.verifier == "lambda-edge"

  # The verifier's configuration (edge/README.md, "Configuration").
  edge_config = {
    events        = var.gated_events
    rules         = [for r in var.protected_rules : { pathPrefix = r.path_prefix, eventSegment = r.event_segment }]
    cookiePrefix  = var.tier1_settings.cookie_prefix
    issuer        = var.tier1_settings.token_issuer
    audience      = var.tier1_settings.token_audience
    failMode      = var.keys_fail_mode
    leewaySeconds = 30
  }
  edge_config_json = jsonencode(local.edge_config)

  cached_methods = ["GET", "HEAD"]

  # Managed policies.
  caching_disabled              = "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"
  all_viewer_except_host_header = "b689b0a8-53d0-40ab-baf2-68738e2966ac"

  content_types = {
    html = "text/html; charset=utf-8"
    js   = "text/javascript; charset=utf-8"
    css  = "text/css; charset=utf-8"
    json = "application/json"
    svg  = "image/svg+xml"
    png  = "image/png"
    ico  = "image/x-icon"
    txt  = "text/plain; charset=utf-8"
  }
  static_files = fileset("${var.dist_dir}/static", "vwr/**")
}

# ---------------------------------------------------------------------------------------------
# Waiting page bucket (private; CloudFront reads it through Origin Access Control): the waiting
# page under vwr/, the booking page under vwr/queue/ (static/README.md, static/queue/README.md),
# the console under vwr-console/ (console.tf)

resource "aws_s3_bucket" "static" {
  #checkov:skip=CKV_AWS_18:Requests are logged by CloudFront (var.access_log_bucket_domain); the bucket is only read through it.
  #checkov:skip=CKV_AWS_144:A public static page rebuilt by scripts/package.sh; cross-region replication buys nothing.
  #checkov:skip=CKV_AWS_145:Public content; SSE-S3 suffices and OAC reads SSE-KMS objects only with an extra key policy.
  #checkov:skip=CKV2_AWS_62:No consumer of object events.
  bucket_prefix = "${var.name}-waiting-page-"
  force_destroy = true
  tags          = var.tags
}

resource "aws_s3_bucket_ownership_controls" "static" {
  bucket = aws_s3_bucket.static.id
  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

resource "aws_s3_bucket_public_access_block" "static" {
  bucket                  = aws_s3_bucket.static.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_server_side_encryption_configuration" "static" {
  bucket = aws_s3_bucket.static.id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm = "AES256"
    }
  }
}

resource "aws_s3_bucket_versioning" "static" {
  bucket = aws_s3_bucket.static.id
  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_lifecycle_configuration" "static" {
  bucket = aws_s3_bucket.static.id

  rule {
    id     = "old-versions"
    status = "Enabled"
    filter {}
    noncurrent_version_expiration {
      noncurrent_days = 30
    }
    abort_incomplete_multipart_upload {
      days_after_initiation = 1
    }
  }

  depends_on = [aws_s3_bucket_versioning.static]
}

resource "aws_s3_object" "static" {
  for_each      = local.static_files
  bucket        = aws_s3_bucket.static.id
  key           = each.value
  source        = "${var.dist_dir}/static/${each.value}"
  etag          = filemd5("${var.dist_dir}/static/${each.value}")
  content_type  = lookup(local.content_types, reverse(split(".", each.value))[0], "application/octet-stream")
  cache_control = endswith(each.value, ".html") ? "public, max-age=${var.waiting_page_max_age}" : "public, max-age=${var.waiting_page_max_age * 5}"
}

resource "aws_cloudfront_origin_access_control" "static" {
  name                              = "${var.name}-waiting-page"
  description                       = "vwr waiting page bucket"
  origin_access_control_origin_type = "s3"
  signing_behavior                  = "always"
  signing_protocol                  = "sigv4"
}

data "aws_iam_policy_document" "static" {
  statement {
    sid       = "CloudFrontReadsWaitingPage"
    actions   = ["s3:GetObject"]
    resources = ["${aws_s3_bucket.static.arn}/vwr/*", "${aws_s3_bucket.static.arn}/vwr-console/*"]
    principals {
      type        = "Service"
      identifiers = ["cloudfront.amazonaws.com"]
    }
    condition {
      test     = "StringEquals"
      variable = "AWS:SourceArn"
      values   = [aws_cloudfront_distribution.this.arn]
    }
  }
  statement {
    sid       = "TlsOnly"
    effect    = "Deny"
    actions   = ["s3:*"]
    resources = [aws_s3_bucket.static.arn, "${aws_s3_bucket.static.arn}/*"]
    principals {
      type        = "*"
      identifiers = ["*"]
    }
    condition {
      test     = "Bool"
      variable = "aws:SecureTransport"
      values   = ["false"]
    }
  }
}

resource "aws_s3_bucket_policy" "static" {
  bucket     = aws_s3_bucket.static.id
  policy     = data.aws_iam_policy_document.static.json
  depends_on = [aws_s3_bucket_public_access_block.static]
}

# ---------------------------------------------------------------------------------------------
# CloudFront Functions

resource "aws_cloudfront_function" "waiting_page_rewrite" {
  name    = "${var.name}-waiting-page-rewrite"
  runtime = "cloudfront-js-2.0"
  comment = "vwr: /vwr/{eventId} -> /vwr/index.html, /vwr/queue/{eventId} -> /vwr/queue/index.html"
  publish = true
  code    = file("${var.dist_dir}/edge/waiting-page-rewrite.js")
}

resource "aws_cloudfront_function" "strip_prefix" {
  name    = "${var.name}-strip-vwr-api"
  runtime = "cloudfront-js-2.0"
  comment = "vwr: /vwr-api/... -> /... for the tier-1 API"
  publish = true
  code    = file("${path.module}/functions/strip-prefix.js")
}

resource "aws_cloudfront_key_value_store" "this" {
  count   = local.cf_function ? 1 : 0
  name    = "${var.name}-edge"
  comment = "vwr edge verifier: config and keys (edge/README.md)"
}

locals {
  kvs_arn = local.cf_function ? aws_cloudfront_key_value_store.this[0].arn : null
  # The store id is the last part of its ARN (…:key-value-store/<id>).
  kvs_id = local.cf_function ? element(split("/", aws_cloudfront_key_value_store.this[0].arn), 1) : null
  verifier_code = local.cf_function ? replace(replace(
    file("${var.dist_dir}/edge/cloudfront-function.js"),
  "__VWR_KVS_ID__", local.kvs_id), "__VWR_FAIL_MODE__", var.fail_mode) : null
}

resource "aws_cloudfrontkeyvaluestore_key" "config" {
  count               = local.cf_function ? 1 : 0
  key_value_store_arn = local.kvs_arn
  key                 = "config"
  value               = local.edge_config_json

  lifecycle {
    # Terraform seeds the entry; afterwards its `events` list belongs to the tier-1 admin API and
    # advancer (VWR_EDGE_KVS_ARN), which rewrite it on every change. Reapplying the seed would
    # ungate active events. Other fields: see terraform/README.md, "Edge configuration".
    ignore_changes = [value]

    precondition {
      condition     = length(local.edge_config_json) <= 1024
      error_message = "The edge configuration exceeds the 1 KB KeyValueStore value limit: fewer or shorter gated_events (edge/README.md)."
    }
  }
}

resource "aws_cloudfrontkeyvaluestore_key" "keys" {
  count               = local.cf_function ? 1 : 0
  key_value_store_arn = local.kvs_arn
  key                 = "keys"
  value               = var.tier1_edge_keys_text

  lifecycle {
    precondition {
      condition     = length(var.tier1_edge_keys_text) <= 1024
      error_message = "The tier-1 edge keys exceed the 1 KB KeyValueStore value limit: fewer key ids."
    }
  }
}

resource "aws_cloudfront_function" "verifier" {
  count                        = local.cf_function ? 1 : 0
  name                         = "${var.name}-edge-verifier"
  runtime                      = "cloudfront-js-2.0"
  comment                      = "vwr edge verifier (tier-1 token)"
  publish                      = true
  code                         = local.verifier_code
  key_value_store_associations = [local.kvs_arn]

  lifecycle {
    precondition {
      condition     = length(local.verifier_code) <= 10240
      error_message = "The CloudFront Function exceeds 10 KB."
    }
  }
}

# ---------------------------------------------------------------------------------------------
# Distribution

resource "aws_cloudfront_distribution" "this" {
  #checkov:skip=CKV_AWS_86:Standard logs need an ACL-enabled bucket: var.access_log_bucket_domain.
  #checkov:skip=CKV_AWS_310:The origins are regional API Gateway and S3 endpoints; there is no second origin to fail over to.
  #checkov:skip=CKV_AWS_305:The default behavior is the operator's site, which serves its own root.
  #checkov:skip=CKV_AWS_374:No geo restriction: a sale is open to whoever the operator's site serves.
  #checkov:skip=CKV_AWS_174:TLS 1.2_2021 is used with var.acm_certificate_arn; the default *.cloudfront.net certificate cannot set a minimum.
  #checkov:skip=CKV2_AWS_42:A custom certificate is used when var.acm_certificate_arn is given.
  #checkov:skip=CKV2_AWS_32:Every behaviour has one of this module's response headers policies, named in behaviours.json and looked up in local.response_headers_policy_ids, which checkov does not follow from a calling module; tests/infra/contract.py checks it.
  enabled         = true
  is_ipv6_enabled = true
  http_version    = "http2and3"
  comment         = "vwr waiting room in front of ${var.site_origin_domain}"
  price_class     = var.price_class
  aliases         = var.aliases
  # The operator's web ACL (var.web_acl_id), else the module's (waf.tf, var.waf_enabled), else
  # none. Spelled out here, not through a local, so that static analysis sees which is attached.
  web_acl_id = var.web_acl_id != null ? var.web_acl_id : (local.create_waf ? aws_wafv2_web_acl.this[0].arn : null)

  origin {
    origin_id   = "site"
    domain_name = var.site_origin_domain
    # Proves to the origin that the request came through this distribution (a viewer's own
    # header of that name is replaced). terraform/README.md, "Locking origins to CloudFront".
    custom_header {
      name  = "x-vwr-origin-secret"
      value = var.origin_secret
    }
    custom_origin_config {
      http_port              = 80
      https_port             = 443
      origin_protocol_policy = var.site_origin_protocol
      origin_ssl_protocols   = ["TLSv1.2"]
    }
  }

  origin {
    origin_id                = "waiting-page"
    domain_name              = aws_s3_bucket.static.bucket_regional_domain_name
    origin_access_control_id = aws_cloudfront_origin_access_control.static.id
    # S3 ignores it (OAC and the bucket policy lock the bucket); sent so that every origin does.
    custom_header {
      name  = "x-vwr-origin-secret"
      value = var.origin_secret
    }
  }

  origin {
    origin_id   = "tier1-api"
    domain_name = var.tier1_api_domain
    custom_header {
      name  = "x-vwr-origin-secret"
      value = var.origin_secret
    }
    custom_origin_config {
      http_port              = 80
      https_port             = 443
      origin_protocol_policy = "https-only"
      origin_ssl_protocols   = ["TLSv1.2"]
    }
  }

  dynamic "origin" {
    for_each = var.tier2_api_domain == null ? [] : [var.tier2_api_domain]
    content {
      origin_id   = "tier2-api"
      domain_name = origin.value
      custom_header {
        name  = "x-vwr-origin-secret"
        value = var.origin_secret
      }
      custom_origin_config {
        http_port              = 80
        https_port             = 443
        origin_protocol_policy = "https-only"
        origin_ssl_protocols   = ["TLSv1.2"]
      }
    }
  }

  dynamic "origin" {
    for_each = var.protected_api_domain == null ? [] : [var.protected_api_domain]
    content {
      origin_id   = "protected-api"
      domain_name = origin.value
      origin_path = "/${var.protected_api_stage}"
      custom_header {
        name  = "x-vwr-origin-secret"
        value = var.origin_secret
      }
      custom_origin_config {
        http_port              = 80
        https_port             = 443
        origin_protocol_policy = "https-only"
        origin_ssl_protocols   = ["TLSv1.2"]
      }
    }
  }

  # The cache behaviours are behaviours.json's, in its order (the default, then the ordered ones
  # whose origin this distribution has), their names turned into ids by the maps below the
  # distribution. The two blocks read each behaviour alike; only the ordered ones have a pattern.
  # The verifier, which deletes the viewer's own x-vwr-* headers (docs/invariants.md#25), runs
  # on the site's and the protected APIs' behaviours, never where the origin reads such headers
  # (the waiting page, /vwr-api/*, /api/queue/*; tests/infra/contract.py checks both).
  dynamic "default_cache_behavior" {
    for_each = [local.behaviours.default]
    iterator = b
    content {
      target_origin_id           = b.value.origin
      viewer_protocol_policy     = b.value.viewerProtocolPolicy
      allowed_methods            = b.value.allowedMethods
      cached_methods             = local.cached_methods
      cache_policy_id            = local.cache_policy_ids[b.value.cachePolicy]
      origin_request_policy_id   = local.origin_request_policy_ids[b.value.originRequestPolicy]
      response_headers_policy_id = local.response_headers_policy_ids[b.value.responseHeadersPolicy]
      compress                   = true

      dynamic "function_association" {
        for_each = local.viewer_request_functions[b.value.viewerRequest]
        content {
          event_type   = "viewer-request"
          function_arn = function_association.value
        }
      }

      dynamic "lambda_function_association" {
        for_each = local.viewer_request_lambdas[b.value.viewerRequest]
        content {
          event_type   = "viewer-request"
          lambda_arn   = lambda_function_association.value
          include_body = false
        }
      }
    }
  }

  dynamic "ordered_cache_behavior" {
    for_each = [for b in local.behaviours.ordered : b if contains(local.origin_ids, b.origin)]
    iterator = b
    content {
      path_pattern               = b.value.pathPattern
      target_origin_id           = b.value.origin
      viewer_protocol_policy     = b.value.viewerProtocolPolicy
      allowed_methods            = b.value.allowedMethods
      cached_methods             = local.cached_methods
      cache_policy_id            = local.cache_policy_ids[b.value.cachePolicy]
      origin_request_policy_id   = local.origin_request_policy_ids[b.value.originRequestPolicy]
      response_headers_policy_id = local.response_headers_policy_ids[b.value.responseHeadersPolicy]
      compress                   = true

      dynamic "function_association" {
        for_each = local.viewer_request_functions[b.value.viewerRequest]
        content {
          event_type   = "viewer-request"
          function_arn = function_association.value
        }
      }

      dynamic "lambda_function_association" {
        for_each = local.viewer_request_lambdas[b.value.viewerRequest]
        content {
          event_type   = "viewer-request"
          lambda_arn   = lambda_function_association.value
          include_body = false
        }
      }
    }
  }

  # A 404 (say the status document of an event activated a moment ago) is cached 1 s like the
  # document itself, not CloudFront's default 10 s (docs/lifecycle.md#the-public-status-document).
  custom_error_response {
    error_code            = 404
    error_caching_min_ttl = 1
  }

  restrictions {
    geo_restriction {
      restriction_type = "none"
    }
  }

  # With the default *.cloudfront.net certificate CloudFront always accepts TLSv1 (the minimum
  # cannot be set): use a custom domain (acm_certificate_arn) in production.
  viewer_certificate {
    cloudfront_default_certificate = var.acm_certificate_arn == null
    acm_certificate_arn            = var.acm_certificate_arn
    ssl_support_method             = var.acm_certificate_arn == null ? null : "sni-only"
    minimum_protocol_version       = var.acm_certificate_arn == null ? "TLSv1" : "TLSv1.2_2021"
  }

  dynamic "logging_config" {
    for_each = var.access_log_bucket_domain == null ? [] : [var.access_log_bucket_domain]
    content {
      bucket          = logging_config.value
      prefix          = "${var.name}/"
      include_cookies = false
    }
  }

  tags = var.tags

  # The verifier answers 503 until its KeyValueStore entries exist: write them first.
  depends_on = [aws_cloudfrontkeyvaluestore_key.config, aws_cloudfrontkeyvaluestore_key.keys]
}

# The behaviours (behaviours.json) and the ids their names stand for. The file lives in this
# module, not beside the code that also reads it (`vwr dev`: cli/src/dev/behaviours.rs; the local
# proxies: edge/local/behaviours.mjs), so that the module is whole by itself: a git source brings
# the repository, and a copy of this directory alone still plans.
locals {
  behaviours = jsondecode(file("${path.module}/behaviours.json"))

  # The distribution's origins: an ordered behaviour is made only where its origin is.
  origin_ids = concat(
    ["site", "waiting-page", "tier1-api"],
    var.tier2_api_domain == null ? [] : ["tier2-api"],
    var.protected_api_domain == null ? [] : ["protected-api"],
  )

  cache_policy_ids = {
    "site"         = var.site_cache_policy_id
    "api-1s"       = aws_cloudfront_cache_policy.api_one_second.id
    "document-1s"  = aws_cloudfront_cache_policy.status.id
    "document-60s" = aws_cloudfront_cache_policy.page.id
    "waiting-page" = aws_cloudfront_cache_policy.waiting_page.id
    "disabled"     = local.caching_disabled
  }

  # "none": no origin request policy (CloudFront forwards what the cache key holds).
  origin_request_policy_ids = {
    "site"               = var.site_origin_request_policy_id
    "forward-nothing"    = aws_cloudfront_origin_request_policy.status.id
    "forward-all-viewer" = local.all_viewer_except_host_header
    "none"               = null
  }

  response_headers_policy_ids = {
    "security"     = aws_cloudfront_response_headers_policy.security.id
    "waiting-page" = aws_cloudfront_response_headers_policy.waiting_page.id
    "console"      = aws_cloudfront_response_headers_policy.console.id
  }

  # The viewer-request function of each name, as the function_association and
  # lambda_function_association blocks each want it: the verifier is one or the other
  # (var.verifier).
  viewer_request_functions = {
    "none"                 = []
    "strip-prefix"         = [aws_cloudfront_function.strip_prefix.arn]
    "waiting-page-rewrite" = [aws_cloudfront_function.waiting_page_rewrite.arn]
    "verifier"             = local.cf_function ? [aws_cloudfront_function.verifier[0].arn] : []
  }
  viewer_request_lambdas = {
    "none"                 = []
    "strip-prefix"         = []
    "waiting-page-rewrite" = []
    "verifier"             = local.lambda_edge ? [aws_lambda_function.lambda_edge[0].qualified_arn] : []
  }
}

# Security headers for every response: HSTS always (the distribution is HTTPS-only); the others
# only where the origin did not set its own.
resource "aws_cloudfront_response_headers_policy" "security" {
  #checkov:skip=CKV_AWS_259:includeSubDomains and preload commit the operator's whole domain (and browsers' preload lists): their decision, not this module's.
  name    = "${var.name}-security-headers"
  comment = "vwr: security headers, origin values win"

  security_headers_config {
    strict_transport_security {
      access_control_max_age_sec = 31536000
      include_subdomains         = false
      override                   = true
    }
    content_type_options {
      override = false
    }
    frame_options {
      frame_option = "SAMEORIGIN"
      override     = false
    }
    referrer_policy {
      referrer_policy = "strict-origin-when-cross-origin"
      override        = false
    }
  }
}

# The waiting page and the booking page (S3, no headers of their own): a strict
# Content-Security-Policy — each page is one HTML file, its script and the one stylesheet,
# calling /vwr-api, /api/queue and the protected APIs on the same origin — and every other
# header set here, whatever S3 answers.
resource "aws_cloudfront_response_headers_policy" "waiting_page" {
  #checkov:skip=CKV_AWS_259:includeSubDomains and preload commit the operator's whole domain (and browsers' preload lists): their decision, not this module's.
  name    = "${var.name}-waiting-page-headers"
  comment = "vwr waiting page: CSP and security headers"

  security_headers_config {
    content_security_policy {
      content_security_policy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
      override                = true
    }
    strict_transport_security {
      access_control_max_age_sec = 31536000
      include_subdomains         = false
      override                   = true
    }
    content_type_options {
      override = true
    }
    frame_options {
      frame_option = "DENY"
      override     = true
    }
    referrer_policy {
      referrer_policy = "same-origin"
      override        = true
    }
  }
}

# Honors the origin's Cache-Control up to 1 s; nothing cached without it (default 0). Keyed on
# the path only: no cacheable tier-1 answer depends on cookies or query strings (the routes
# that read the cookie or x-vwr-token are release, a POST, which CloudFront never caches, and
# check, whose answers are no-store; the behaviour's origin request policy forwards them).
resource "aws_cloudfront_cache_policy" "api_one_second" {
  name        = "${var.name}-api-1s"
  comment     = "vwr: origin-directed caching, at most 1 s"
  min_ttl     = 0
  default_ttl = 0
  max_ttl     = 1

  parameters_in_cache_key_and_forwarded_to_origin {
    enable_accept_encoding_brotli = true
    enable_accept_encoding_gzip   = true
    cookies_config {
      cookie_behavior = "none"
    }
    headers_config {
      header_behavior = "none"
    }
    query_strings_config {
      query_string_behavior = "none"
    }
  }
}

# The public status document (/vwr-api/vwr/status/*) and tier 2's line document
# (/api/queue/line/*): the same for every visitor, so cached 1 s
# (the origin's `Cache-Control: public, max-age=1`; 1 s too if it said nothing), keyed on the
# path only: no cookies, query strings or headers (Accept-Encoding is normalised by the
# gzip/brotli settings).
resource "aws_cloudfront_cache_policy" "status" {
  name        = "${var.name}-status-1s"
  comment     = "vwr: public status document, 1 s, keyed on the path"
  min_ttl     = 0
  default_ttl = 1
  max_ttl     = 1

  parameters_in_cache_key_and_forwarded_to_origin {
    enable_accept_encoding_brotli = true
    enable_accept_encoding_gzip   = true
    cookies_config {
      cookie_behavior = "none"
    }
    headers_config {
      header_behavior = "none"
    }
    query_strings_config {
      query_string_behavior = "none"
    }
  }
}

# The page document (/vwr-api/vwr/page/*): the origin's `Cache-Control: public, max-age=60`,
# keyed on the path only, like the status document.
resource "aws_cloudfront_cache_policy" "page" {
  name        = "${var.name}-page-60s"
  comment     = "vwr: the page document, 60 s, keyed on the path"
  min_ttl     = 0
  default_ttl = 60
  max_ttl     = 60

  parameters_in_cache_key_and_forwarded_to_origin {
    enable_accept_encoding_brotli = true
    enable_accept_encoding_gzip   = true
    cookies_config {
      cookie_behavior = "none"
    }
    headers_config {
      header_behavior = "none"
    }
    query_strings_config {
      query_string_behavior = "none"
    }
  }
}

# Forwards nothing of the viewer's request beyond the cache key (the path), so no viewer can make
# the origin answer differently from what the cache holds. The origin custom header
# (x-vwr-origin-secret) is not a viewer header: CloudFront adds it to every origin request.
resource "aws_cloudfront_origin_request_policy" "status" {
  name    = "${var.name}-status"
  comment = "vwr: public status document, nothing from the viewer"

  cookies_config {
    cookie_behavior = "none"
  }
  headers_config {
    header_behavior = "none"
  }
  query_strings_config {
    query_string_behavior = "none"
  }
}

# The waiting page and its assets: the object's Cache-Control (set on upload) decides, bounded.
resource "aws_cloudfront_cache_policy" "waiting_page" {
  name        = "${var.name}-waiting-page"
  comment     = "vwr waiting page: one copy for every event and visitor"
  min_ttl     = 0
  default_ttl = var.waiting_page_max_age
  max_ttl     = 3600

  parameters_in_cache_key_and_forwarded_to_origin {
    enable_accept_encoding_brotli = true
    enable_accept_encoding_gzip   = true
    cookies_config {
      cookie_behavior = "none"
    }
    headers_config {
      header_behavior = "none"
    }
    query_strings_config {
      query_string_behavior = "none"
    }
  }
}
