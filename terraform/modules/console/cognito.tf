# The default sign-in: a Cognito user pool for the sale-night team (nobody signs up: an admin
# adds each person and puts them in one of the role groups, docs/console.md), its sign-in pages
# on a Cognito domain, and the console's public app client (authorization code with PKCE, no
# secret: the console is a page in a browser and could not keep one).

locals {
  # The role groups (docs/console.md): the functions map them to roles, the highest wins.
  # Precedence picks the group Cognito names first for a person in several.
  groups = {
    "vwr-admin"    = { precedence = 1, description = "vwr console: admin (everything)" }
    "vwr-operator" = { precedence = 2, description = "vwr console: operator (pause, resume, message, outflow, threshold, health hold, passes)" }
    "vwr-viewer"   = { precedence = 3, description = "vwr console: viewer (reads everything)" }
  }
}

resource "aws_cognito_user_pool" "this" {
  count = local.cognito ? 1 : 0
  name  = "${var.name}-console"
  # Threat protection (risk-based challenges, compromised-password checks) needs the Plus plan.
  user_pool_tier      = var.threat_protection == "OFF" ? "ESSENTIALS" : "PLUS"
  deletion_protection = var.deletion_protection ? "ACTIVE" : "INACTIVE"

  username_attributes      = ["email"]
  auto_verified_attributes = ["email"]
  username_configuration {
    case_sensitive = false
  }

  # MFA is required (an authenticator app, set up at the first sign-in): a person in these
  # groups can pause, close or reshape a sale and issue passes, so a leaked or guessed password
  # alone must not be enough. TOTP only: SMS needs an SNS role and costs per message.
  mfa_configuration = "ON"
  software_token_mfa_configuration {
    enabled = true
  }

  password_policy {
    minimum_length                   = 14
    require_lowercase                = true
    require_uppercase                = true
    require_numbers                  = true
    require_symbols                  = true
    password_history_size            = 5
    temporary_password_validity_days = 3
  }

  # Only an admin adds people (aws cognito-idp admin-create-user): no self sign-up.
  admin_create_user_config {
    allow_admin_create_user_only = true
  }

  account_recovery_setting {
    recovery_mechanism {
      name     = "verified_email"
      priority = 1
    }
  }

  # The email is the name the audit shows: a new one counts only once verified.
  user_attribute_update_settings {
    attributes_require_verification_before_update = ["email"]
  }

  dynamic "user_pool_add_ons" {
    for_each = var.threat_protection == "OFF" ? [] : [var.threat_protection]
    content {
      advanced_security_mode = user_pool_add_ons.value
    }
  }

  tags = var.tags
}

resource "aws_cognito_user_group" "role" {
  for_each     = local.cognito ? local.groups : {}
  name         = each.key
  description  = each.value.description
  precedence   = each.value.precedence
  user_pool_id = aws_cognito_user_pool.this[0].id
}

resource "aws_cognito_user_pool_domain" "this" {
  count        = local.cognito ? 1 : 0
  domain       = local.domain_prefix
  user_pool_id = aws_cognito_user_pool.this[0].id
}

resource "aws_cognito_user_pool_client" "console" {
  count        = local.cognito ? 1 : 0
  name         = "${var.name}-console"
  user_pool_id = aws_cognito_user_pool.this[0].id

  # A public client: no secret, the authorization code flow only (Cognito takes PKCE's
  # code_challenge from a public client; the console always sends one), the console's URLs as
  # the only redirects.
  generate_secret                      = false
  allowed_oauth_flows_user_pool_client = true
  allowed_oauth_flows                  = ["code"]
  allowed_oauth_scopes                 = local.scopes
  supported_identity_providers         = ["COGNITO"]
  callback_urls                        = local.console_urls
  logout_urls                          = local.console_urls
  # The sign-in pages (SRP) and refreshing; no password ever sent to an API in clear.
  explicit_auth_flows = ["ALLOW_USER_SRP_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"]

  prevent_user_existence_errors = "ENABLED"
  enable_token_revocation       = true
  # An hour per token, a sale night (12 h) per sign-in.
  access_token_validity  = 60
  id_token_validity      = 60
  refresh_token_validity = 12
  token_validity_units {
    access_token  = "minutes"
    id_token      = "minutes"
    refresh_token = "hours"
  }
}
