# The console (docs/console.md) under /vwr-console/ on the site's distribution: its files, from
# dist/static/vwr-console/ (scripts/package.sh copies static/console there, whatever files it
# holds), in the waiting page's bucket, and config.json, written here (var.console_config_json:
# the console API's URL and the sign-in settings). The behaviour (behaviours.json) runs no verifier:
# the console signs its people in itself and the console API checks every call.

locals {
  # config.json is Terraform's, whatever the packaged files hold.
  console_files = setsubtract(fileset("${var.dist_dir}/static", "vwr-console/**"), ["vwr-console/config.json"])

  console_csp = join("; ", [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    join(" ", concat(["connect-src 'self'"], var.console_connect_origins)),
    "object-src 'none'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ])
}

# No-cache everywhere: a browser revalidates (ETag) and an apply shows at once.
resource "aws_s3_object" "console" {
  for_each      = local.console_files
  bucket        = aws_s3_bucket.static.id
  key           = each.value
  source        = "${var.dist_dir}/static/${each.value}"
  etag          = filemd5("${var.dist_dir}/static/${each.value}")
  content_type  = lookup(local.content_types, reverse(split(".", each.value))[0], "application/octet-stream")
  cache_control = "no-cache"
}

# /vwr-console/ itself (the URL people open, and the sign-in's redirect): S3 serves the object
# whose key is the path, so the index page is stored under "vwr-console/" too.
resource "aws_s3_object" "console_index" {
  for_each      = contains(local.console_files, "vwr-console/index.html") ? toset(["vwr-console/"]) : toset([])
  bucket        = aws_s3_bucket.static.id
  key           = each.value
  source        = "${var.dist_dir}/static/vwr-console/index.html"
  etag          = filemd5("${var.dist_dir}/static/vwr-console/index.html")
  content_type  = local.content_types["html"]
  cache_control = "no-cache"
}

resource "aws_s3_object" "console_config" {
  bucket        = aws_s3_bucket.static.id
  key           = "vwr-console/config.json"
  content       = var.console_config_json
  content_type  = local.content_types["json"]
  cache_control = "no-cache"
}

# The console's headers: its scripts and styles from the site only, calls to the site, the
# console API and the issuer only (var.console_connect_origins), never framed (it holds
# controls of the sale), and no Referer (the sign-in's code is in the URL it returns to).
resource "aws_cloudfront_response_headers_policy" "console" {
  #checkov:skip=CKV_AWS_259:includeSubDomains and preload commit the operator's whole domain (and browsers' preload lists): their decision, not this module's.
  name    = "${var.name}-console-headers"
  comment = "vwr console: CSP and security headers"

  security_headers_config {
    content_security_policy {
      content_security_policy = local.console_csp
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
      referrer_policy = "no-referrer"
      override        = true
    }
  }
}
