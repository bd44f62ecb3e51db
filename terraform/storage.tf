# Buckets (function sources, large file content, CI logs) and Secret Manager secrets.

resource "google_storage_bucket" "sources" {
  name                        = "${var.project_id}-quire-sources"
  location                    = var.region
  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  force_destroy               = !var.deletion_protection

  # Old bundles are kept a while for rollbacks, then dropped.
  lifecycle_rule {
    condition {
      age = 30
    }
    action {
      type = "Delete"
    }
  }
}

resource "google_storage_bucket" "blobs" {
  name                        = "${var.project_id}-quire-blobs"
  location                    = var.region
  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  force_destroy               = !var.deletion_protection
}

resource "google_storage_bucket" "ci_logs" {
  name                        = "${var.project_id}-quire-ci-logs"
  location                    = var.region
  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  force_destroy               = !var.deletion_protection
}

# Secret values are added outside terraform (docs/deploy.md), so they never sit in its state:
#   printf %s "$VALUE" | gcloud secrets versions add SECRET --data-file=-
resource "google_secret_manager_secret" "ci_webhook" {
  secret_id = "quire-ci-webhook-secret"
  replication {
    auto {}
  }
  depends_on = [google_project_service.apis]
}

resource "google_secret_manager_secret" "archive_signing" {
  secret_id = "quire-archive-signing-key"
  replication {
    auto {}
  }
  depends_on = [google_project_service.apis]
}

# The OAuth client secret of browser sign-in (OIDC_CLIENT_SECRET, read by `/auth/callback`).
resource "google_secret_manager_secret" "oidc_client" {
  secret_id = "quire-oidc-client-secret"
  replication {
    auto {}
  }
  depends_on = [google_project_service.apis]
}

# The static worker token (SVC_CI_WORKER_TOKEN), mounted only with ci_static_worker_token.
resource "google_secret_manager_secret" "ci_worker_token" {
  secret_id = "quire-ci-worker-token"
  replication {
    auto {}
  }
  depends_on = [google_project_service.apis]
}

# The GKE cluster's CA, mounted as a file into the scheduler (SVC_CI_K8S_CA_FILE). Public data, so
# terraform writes its value (the other secrets' values are added by hand).
resource "google_secret_manager_secret" "ci_k8s_ca" {
  secret_id = "quire-ci-k8s-ca"
  replication {
    auto {}
  }
  depends_on = [google_project_service.apis]
}

resource "google_secret_manager_secret_version" "ci_k8s_ca" {
  count       = var.ci_k8s_ca_pem != "" ? 1 : 0
  secret      = google_secret_manager_secret.ci_k8s_ca.id
  secret_data = var.ci_k8s_ca_pem
}
