# Per-client limits at the edge (docs/abuse.md; terraform/README.md, "WAF"): a WAF web ACL on the
# distribution, unless the operator brings their own (var.web_acl_id) or turns it off
# (var.waf_enabled). Scope CLOUDFRONT, so it lives in us-east-1 (provider aws.us_east_1, like the
# Lambda@Edge verifier).
#
# WAF inspects the request as the viewer sent it, before any CloudFront Function: the paths below
# carry the /vwr-api prefix that strip-prefix removes afterwards. It sees the viewer's own IP
# address (no X-Forwarded-For to trust), so "per IP" means per client address as CloudFront sees
# it: one household, office or carrier-grade NAT is one address.

locals {
  # The distribution (main.tf) gets the operator's web ACL, else this one, else none.
  create_waf = var.waf_enabled && var.web_acl_id == null

  # The rate-based rules count over 60 s (the shortest WAF window), so the limits are per minute.
  waf_window_seconds = 60

  # The per-IP rate rules (rate-<key>): what each counts (paths starting with `path`; only
  # `method` requests where one is given) and its limit per minute.
  waf_rate_rules = {
    # Joining the line: POST /vwr-api/vwr/assign/{eventId}.
    assign = { priority = 10, path = "/vwr-api/vwr/assign/", method = "POST", limit = var.waf_assign_limit_per_minute }
    # Redeeming a ticket: GET /vwr-api/vwr/check/{eventId}/{requestId}.
    check = { priority = 11, path = "/vwr-api/vwr/check/", method = null, limit = var.waf_check_limit_per_minute }
    # Tier 2: every /api/queue/* request (check, status, heartbeat, leave, JWKS), any method.
    queue = { priority = 12, path = "/api/queue/", method = null, limit = var.waf_queue_limit_per_minute }
  }

  # Cookies and the vwr token headers never reach the WAF logs: a ticket, its request secret or an
  # entry token read from a log would let someone take a visitor's place.
  waf_redacted_headers = ["cookie", "authorization", "x-vwr-token", "x-vwr-request-secret", "x-vwr-enqueue-token", "x-queue-entry-token"]
}

resource "aws_wafv2_web_acl" "this" {
  count       = local.create_waf ? 1 : 0
  provider    = aws.us_east_1
  name        = "${var.name}-edge"
  description = "vwr: AWS managed IP reputation and known bad inputs, per-IP rate limits on assign, check and /api/queue/*"
  scope       = "CLOUDFRONT"
  tags        = var.tags

  default_action {
    allow {}
  }

  # Answer of the rate-based rules: a 429 the waiting page already backs off on (it waits for
  # Retry-After, ±20 %), with the API's error shape.
  custom_response_body {
    key          = "rate-limited"
    content_type = "APPLICATION_JSON"
    content = jsonencode({
      error   = "rate_limited"
      message = "Too many requests from your network address. Wait a minute and try again."
    })
  }

  # --- AWS managed rule groups (no charge beyond the rule's own) -------------------------------

  # Addresses Amazon threat intelligence knows for bots, scanners and DDoS sources.
  rule {
    name     = "aws-ip-reputation"
    priority = 0

    override_action {
      none {}
    }

    statement {
      managed_rule_group_statement {
        vendor_name = "AWS"
        name        = "AWSManagedRulesAmazonIpReputationList"
      }
    }

    visibility_config {
      cloudwatch_metrics_enabled = true
      metric_name                = "${var.name}-aws-ip-reputation"
      sampled_requests_enabled   = true
    }
  }

  # Request patterns known to be malicious (Log4j / Java deserialization RCE, exploitable paths,
  # localhost Host headers, PROPFIND).
  rule {
    name     = "aws-known-bad-inputs"
    priority = 1

    override_action {
      none {}
    }

    statement {
      managed_rule_group_statement {
        vendor_name = "AWS"
        name        = "AWSManagedRulesKnownBadInputsRuleSet"
      }
    }

    visibility_config {
      cloudwatch_metrics_enabled = true
      metric_name                = "${var.name}-aws-known-bad-inputs"
      sampled_requests_enabled   = true
    }
  }

  # VPNs, proxies, Tor exit nodes and hosting providers: off by default, since real buyers use
  # VPNs and privacy relays too.
  dynamic "rule" {
    for_each = var.waf_block_anonymous_ips ? [1] : []
    content {
      name     = "aws-anonymous-ip"
      priority = 2

      override_action {
        none {}
      }

      statement {
        managed_rule_group_statement {
          vendor_name = "AWS"
          name        = "AWSManagedRulesAnonymousIpList"
        }
      }

      visibility_config {
        cloudwatch_metrics_enabled = true
        metric_name                = "${var.name}-aws-anonymous-ip"
        sampled_requests_enabled   = true
      }
    }
  }

  # --- Per-IP rate limits ---------------------------------------------------------------------
  # One rule per entry of local.waf_rate_rules, named rate-<key>. Each counts, per client IP, the
  # requests its scope-down statement matches over the last minute; while a client is above the
  # limit its matching requests get the 429 (or are only counted: var.waf_rate_limit_action).
  # The path is URL-decoded and normalised first, so /vwr-api/vwr/%61ssign/… or
  # /vwr-api/vwr/./assign/… are counted too.
  dynamic "rule" {
    for_each = local.waf_rate_rules
    content {
      name     = "rate-${rule.key}"
      priority = rule.value.priority

      action {
        dynamic "block" {
          for_each = var.waf_rate_limit_action == "block" ? [1] : []
          content {
            custom_response {
              response_code            = 429
              custom_response_body_key = "rate-limited"
              response_header {
                name  = "Retry-After"
                value = tostring(local.waf_window_seconds)
              }
            }
          }
        }
        dynamic "count" {
          for_each = var.waf_rate_limit_action == "count" ? [1] : []
          content {}
        }
      }

      statement {
        rate_based_statement {
          aggregate_key_type    = "IP"
          limit                 = rule.value.limit
          evaluation_window_sec = local.waf_window_seconds

          scope_down_statement {
            # Any method: the path alone.
            dynamic "byte_match_statement" {
              for_each = rule.value.method == null ? [rule.value.path] : []
              content {
                search_string         = byte_match_statement.value
                positional_constraint = "STARTS_WITH"
                field_to_match {
                  uri_path {}
                }
                text_transformation {
                  priority = 0
                  type     = "URL_DECODE"
                }
                text_transformation {
                  priority = 1
                  type     = "NORMALIZE_PATH"
                }
              }
            }
            # One method: the path and the method.
            dynamic "and_statement" {
              for_each = rule.value.method == null ? [] : [rule.value.method]
              content {
                statement {
                  byte_match_statement {
                    search_string         = rule.value.path
                    positional_constraint = "STARTS_WITH"
                    field_to_match {
                      uri_path {}
                    }
                    text_transformation {
                      priority = 0
                      type     = "URL_DECODE"
                    }
                    text_transformation {
                      priority = 1
                      type     = "NORMALIZE_PATH"
                    }
                  }
                }
                statement {
                  byte_match_statement {
                    search_string         = and_statement.value
                    positional_constraint = "EXACTLY"
                    field_to_match {
                      method {}
                    }
                    text_transformation {
                      priority = 0
                      type     = "NONE"
                    }
                  }
                }
              }
            }
          }
        }
      }

      visibility_config {
        cloudwatch_metrics_enabled = true
        metric_name                = "${var.name}-rate-${rule.key}"
        sampled_requests_enabled   = true
      }
    }
  }

  visibility_config {
    cloudwatch_metrics_enabled = true
    metric_name                = "${var.name}-edge"
    sampled_requests_enabled   = true
  }
}

# Optional logs of what the web ACL blocked or counted (allowed requests are dropped: a sale is
# millions of them).
resource "aws_wafv2_web_acl_logging_configuration" "this" {
  count                   = local.create_waf && var.waf_log_destination_arn != null ? 1 : 0
  provider                = aws.us_east_1
  resource_arn            = aws_wafv2_web_acl.this[0].arn
  log_destination_configs = [var.waf_log_destination_arn]

  dynamic "redacted_fields" {
    for_each = local.waf_redacted_headers
    content {
      single_header {
        name = redacted_fields.value
      }
    }
  }

  logging_filter {
    default_behavior = "DROP"

    filter {
      behavior    = "KEEP"
      requirement = "MEETS_ANY"
      condition {
        action_condition {
          action = "BLOCK"
        }
      }
      condition {
        action_condition {
          action = "COUNT"
        }
      }
    }
  }
}
