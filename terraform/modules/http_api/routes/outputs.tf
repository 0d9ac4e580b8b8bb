output "throttles" {
  description = "The routes' own throttles, route key → {rate, burst} (for the stage's route settings; routes without one are left out). Known once the routes exist."
  value       = { for k, r in var.routes : aws_apigatewayv2_route.this[k].route_key => r.throttle if r.throttle != null }
}
