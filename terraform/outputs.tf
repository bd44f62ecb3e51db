output "api_url" {
  description = "The API's base URL (through the load balancer)."
  value       = local.public_url
}

output "issuer_url" {
  description = "The job-token issuer (SVC_OIDC_ISSUER_URL): its discovery document is at /.well-known/openid-configuration."
  value       = local.public_url
}

output "lb_ip_address" {
  description = "The load balancer's global address: point the domain's A record here."
  value       = google_compute_global_address.api.address
}

output "database_connection_name" {
  description = "The Cloud SQL instance's connection name (PROJECT:REGION:INSTANCE)."
  value       = google_sql_database_instance.quire.connection_name
}

output "job_signing_key" {
  description = "The KMS key that signs job tokens."
  value       = google_kms_crypto_key.jobs.id
}

output "ci_worker" {
  description = "What the worker's Kubernetes manifests (worker/deploy/) need: the scheduler URL (SVC_CI_SCHEDULER_URL), the namespace and token audience, and the Google identity the RBAC of scheduler-rbac.yaml names as its User."
  value = {
    scheduler_url      = local.public_url
    namespace          = var.ci_k8s_namespace
    audience           = var.ci_k8s_audience
    scheduler_identity = google_service_account.functions.email
  }
}
