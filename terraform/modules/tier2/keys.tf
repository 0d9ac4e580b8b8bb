# Entry-token keys (ES256 on P-256). The private keys go to Secrets Manager as base64 of their
# PKCS#8 DER (the PEM body); the public JWKS is derived here so the authorizer never needs the
# private keys.

resource "tls_private_key" "entry" {
  for_each    = toset(var.key_ids)
  algorithm   = "ECDSA"
  ecdsa_curve = "P256"
}

locals {
  # PEM body = standard base64 of the DER; the functions accept it, the url-safe form is tidier.
  entry_pkcs8 = {
    for k in var.key_ids : k => replace(replace(replace(replace(replace(replace(
      tls_private_key.entry[k].private_key_pem_pkcs8,
      "-----BEGIN PRIVATE KEY-----", ""), "-----END PRIVATE KEY-----", ""), "\n", ""),
    "+", "-"), "/", "_"), "=", "")
  }

  # A P-256 SubjectPublicKeyInfo is 91 bytes: a 26-byte header, 0x04, x (32 bytes), y (32 bytes).
  # Terraform strings are Unicode, so the DER is decoded as ISO-8859-1 (one character per byte),
  # cut with a regex (which counts characters, not grapheme clusters) and re-encoded.
  entry_spki = {
    for k in var.key_ids : k => textdecodebase64(replace(replace(replace(
      tls_private_key.entry[k].public_key_pem,
      "-----BEGIN PUBLIC KEY-----", ""), "-----END PUBLIC KEY-----", ""), "\n", ""),
    "ISO-8859-1")
  }
  entry_xy = {
    for k in var.key_ids : k => [
      for part in regex("^[\\x00-\\xff]{26}\\x04([\\x00-\\xff]{32})([\\x00-\\xff]{32})$", local.entry_spki[k]) :
      replace(replace(replace(textencodebase64(part, "ISO-8859-1"), "+", "-"), "/", "_"), "=", "")
    ]
  }
  jwks = jsonencode({
    keys = [for k in var.key_ids : {
      kty = "EC"
      crv = "P-256"
      kid = k
      alg = "ES256"
      use = "sig"
      x   = local.entry_xy[k][0]
      y   = local.entry_xy[k][1]
    }]
  })
  keys_revision = sha256(join(",", concat(var.tier1_key_ids, ["/"], var.key_ids)))
}

resource "aws_secretsmanager_secret" "entry_keys" {
  #checkov:skip=CKV2_AWS_57:Rotation is driven by var.key_ids (append, then promote, then drop), not a rotation Lambda.
  #checkov:skip=CKV_AWS_149:The AWS managed key is used unless var.kms_key_arn is given.
  name                    = "${var.name}/tier2-keys"
  description             = "vwr entry-token ES256 keys: {\"signingKid\":…,\"keys\":{kid: base64url(PKCS#8 DER)}} (VWR_TIER2_KEYS_SECRET_ID)"
  kms_key_id              = var.kms_key_arn
  recovery_window_in_days = 7
  tags                    = var.tags
}

resource "aws_secretsmanager_secret_version" "entry_keys" {
  secret_id = aws_secretsmanager_secret.entry_keys.id
  secret_string = jsonencode({
    signingKid = var.key_ids[0]
    keys       = local.entry_pkcs8
  })
}

# The derived tier-1 keys (docs/tokens.md#place-proofs): the edge keys, to verify callers' tier-1
# tokens and renew those of visitors tier 2 holds, and the place-proof keys, without which a
# token takes no place in the line. Never the tier-1 master keys: they stay with tier 1.
resource "aws_secretsmanager_secret" "tier1_link" {
  #checkov:skip=CKV2_AWS_57:Derived from the tier-1 keys; it changes when they rotate (var.tier1_key_ids), not by a rotation Lambda.
  #checkov:skip=CKV_AWS_149:The AWS managed key is used unless var.kms_key_arn is given.
  name                    = "${var.name}/tier1-link"
  description             = "vwr: derived tier-1 keys for tier 2, {\"signingKid\":…,\"edge\":{kid: key},\"place\":{kid: key}} (VWR_TIER1_LINK_SECRET_ID)"
  kms_key_id              = var.kms_key_arn
  recovery_window_in_days = 7
  tags                    = var.tags
}

resource "aws_secretsmanager_secret_version" "tier1_link" {
  secret_id     = aws_secretsmanager_secret.tier1_link.id
  secret_string = var.tier1_link_keys
}
