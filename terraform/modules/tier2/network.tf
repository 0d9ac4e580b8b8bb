# Security groups and VPC endpoints: the tier-2 functions reach Redis, SQS, Secrets Manager and
# DynamoDB without a NAT gateway. (Lambda ships its logs itself: no CloudWatch Logs endpoint is
# needed for them.)

data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

data "aws_vpc" "this" {
  id = var.vpc_id
}

resource "aws_security_group" "functions" {
  #checkov:skip=CKV2_AWS_5:Attached to the tier-2 API and worker functions through module "lambda" (vpc_security_group_ids).
  name        = "${var.name}-tier2-functions"
  description = "vwr tier-2 API and worker functions"
  vpc_id      = var.vpc_id
  tags        = var.tags
}

resource "aws_security_group" "redis" {
  name        = "${var.name}-tier2-redis"
  description = "vwr tier-2 Redis (ElastiCache Serverless)"
  vpc_id      = var.vpc_id
  tags        = var.tags
}

resource "aws_vpc_security_group_ingress_rule" "redis_from_functions" {
  security_group_id            = aws_security_group.redis.id
  description                  = "Redis (6379) and its reader endpoint (6380) from the tier-2 functions"
  ip_protocol                  = "tcp"
  from_port                    = 6379
  to_port                      = 6380
  referenced_security_group_id = aws_security_group.functions.id
}

resource "aws_vpc_security_group_egress_rule" "functions_to_redis" {
  security_group_id            = aws_security_group.functions.id
  description                  = "Redis"
  ip_protocol                  = "tcp"
  from_port                    = 6379
  to_port                      = 6380
  referenced_security_group_id = aws_security_group.redis.id
}

resource "aws_vpc_security_group_egress_rule" "functions_to_endpoints" {
  count                        = var.create_vpc_endpoints ? 1 : 0
  security_group_id            = aws_security_group.functions.id
  description                  = "HTTPS to the SQS and Secrets Manager interface endpoints"
  ip_protocol                  = "tcp"
  from_port                    = 443
  to_port                      = 443
  referenced_security_group_id = aws_security_group.endpoints[0].id
}

resource "aws_vpc_security_group_egress_rule" "functions_to_dynamodb" {
  count             = var.create_vpc_endpoints ? 1 : 0
  security_group_id = aws_security_group.functions.id
  description       = "HTTPS to DynamoDB through the gateway endpoint"
  ip_protocol       = "tcp"
  from_port         = 443
  to_port           = 443
  prefix_list_id    = aws_vpc_endpoint.dynamodb[0].prefix_list_id
}

resource "aws_vpc_security_group_egress_rule" "functions_extra" {
  for_each          = toset(var.extra_https_egress_cidrs)
  security_group_id = aws_security_group.functions.id
  description       = "HTTPS (NAT or existing endpoints)"
  ip_protocol       = "tcp"
  from_port         = 443
  to_port           = 443
  cidr_ipv4         = each.value
}

resource "aws_security_group" "endpoints" {
  count       = var.create_vpc_endpoints ? 1 : 0
  name        = "${var.name}-tier2-endpoints"
  description = "vwr tier-2 interface endpoints (SQS, Secrets Manager)"
  vpc_id      = var.vpc_id
  tags        = var.tags
}

resource "aws_vpc_security_group_ingress_rule" "endpoints_from_functions" {
  count                        = var.create_vpc_endpoints ? 1 : 0
  security_group_id            = aws_security_group.endpoints[0].id
  description                  = "HTTPS from the tier-2 functions"
  ip_protocol                  = "tcp"
  from_port                    = 443
  to_port                      = 443
  referenced_security_group_id = aws_security_group.functions.id
}

# Endpoint policies: callers of this account only (a data perimeter that does not break other
# workloads of the account sharing the VPC).
data "aws_iam_policy_document" "endpoint" {
  for_each = toset(["sqs", "secretsmanager", "dynamodb"])
  statement {
    actions   = ["${each.key}:*"]
    resources = ["*"]
    principals {
      type        = "AWS"
      identifiers = ["*"]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:PrincipalAccount"
      values   = [data.aws_caller_identity.current.account_id]
    }
  }
}

resource "aws_vpc_endpoint" "interface" {
  for_each            = var.create_vpc_endpoints ? toset(["sqs", "secretsmanager"]) : toset([])
  vpc_id              = var.vpc_id
  service_name        = "com.amazonaws.${data.aws_region.current.name}.${each.key}"
  vpc_endpoint_type   = "Interface"
  subnet_ids          = var.subnet_ids
  security_group_ids  = [aws_security_group.endpoints[0].id]
  private_dns_enabled = true
  policy              = data.aws_iam_policy_document.endpoint[each.key].json
  tags                = merge(var.tags, { Name = "${var.name}-${each.key}" })
}

resource "aws_vpc_endpoint" "dynamodb" {
  count             = var.create_vpc_endpoints ? 1 : 0
  vpc_id            = var.vpc_id
  service_name      = "com.amazonaws.${data.aws_region.current.name}.dynamodb"
  vpc_endpoint_type = "Gateway"
  route_table_ids   = var.route_table_ids
  policy            = data.aws_iam_policy_document.endpoint["dynamodb"].json
  tags              = merge(var.tags, { Name = "${var.name}-dynamodb" })

  lifecycle {
    precondition {
      condition     = length(var.route_table_ids) > 0
      error_message = "route_table_ids is required when create_vpc_endpoints is true (the DynamoDB gateway endpoint attaches to them)."
    }
  }
}
