# The migration step (docs/deploy.md, "Migrations"): a Cloud Run job running the container image's
# migrate entry (dist/container/migrate.js) against Cloud SQL through the connector. It is executed
# by the operator after `terraform apply` and before the new functions take traffic:
#   gcloud run jobs execute quire-migrate --region REGION --wait
# Terraform creates the job but does not run it: an apply has no step that runs after the image
# changes and before traffic moves, and a failed migration must stop the rollout where the
# operator sees it, not leave a half-applied plan.

locals {
  # Only what functions/migrate.ts reads: where the database is, who logs in, and whom it grants.
  migrate_env = {
    LOG_FORMAT             = "json"
    GOOGLE_CLOUD_PROJECT   = var.project_id
    SVC_CLOUD_SQL_INSTANCE = google_sql_database_instance.quire.connection_name
    SVC_CLOUD_SQL_IP_TYPE  = var.db_ip_type
    # The built-in user that owns the schema (database.tf); its password is the one secret.
    SVC_DB_USER = google_sql_user.migrator.name
    SVC_DB_NAME = google_sql_database.quire.name
    # After migrating, the job grants the functions' IAM user DML on every table and the SSE
    # service's its reads and the relay's and retention's writes (shared/db/grants.ts).
    SVC_DB_APP_USERS    = google_sql_user.functions.name
    SVC_DB_STREAM_USERS = google_sql_user.events.name
  }

  migrate_secrets = {
    SVC_DB_PASSWORD = google_secret_manager_secret.db_migrator_password.secret_id
  }
}

resource "google_cloud_run_v2_job" "migrate" {
  name                = "quire-migrate"
  location            = var.region
  deletion_protection = false

  template {
    # One task: node-pg-migrate's advisory lock would serialize more anyway.
    task_count  = 1
    parallelism = 1

    template {
      # Its own identity: a Cloud SQL client that may read the migrator's password, nothing more.
      service_account = google_service_account.migrate.email
      timeout         = "${var.migrate_settings.timeout_seconds}s"
      # A failed migration is rolled back; retrying it unchanged would fail the same way.
      max_retries = 0

      # The private path to Cloud SQL (network.tf): Direct VPC egress for private ranges only.
      dynamic "vpc_access" {
        for_each = local.private_db ? [var.subnetwork] : []
        content {
          egress = "PRIVATE_RANGES_ONLY"
          network_interfaces {
            network    = var.network
            subnetwork = vpc_access.value
          }
        }
      }

      containers {
        image   = var.container_image
        command = ["node", "migrate.js"]

        dynamic "env" {
          for_each = local.migrate_env
          content {
            name  = env.key
            value = env.value
          }
        }

        dynamic "env" {
          for_each = local.migrate_secrets
          content {
            name = env.key
            value_source {
              secret_key_ref {
                secret  = env.value
                version = "latest"
              }
            }
          }
        }

        resources {
          limits = {
            cpu    = "1"
            memory = var.migrate_settings.memory
          }
        }
      }
    }
  }

  depends_on = [
    google_project_service.apis,
    google_project_iam_member.migrate_sql_client,
    google_secret_manager_secret_iam_member.migrate,
    google_secret_manager_secret_version.db_migrator_password,
  ]
}
