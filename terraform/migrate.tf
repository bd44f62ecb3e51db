# The migration step (docs/deploy.md, "Migrations"): a Cloud Run job running the container image's
# migrate entry (dist/container/migrate.js) against Cloud SQL through the connector. It is executed
# by the operator after `terraform apply` and before the new functions take traffic:
#   gcloud run jobs execute quire-migrate --region REGION --wait
# Terraform creates the job but does not run it: an apply has no step that runs after the image
# changes and before traffic moves, and a failed migration must stop the rollout where the
# operator sees it, not leave a half-applied plan.

locals {
  # Only what functions/migrate.ts reads: where the database is and who logs in.
  migrate_env = {
    LOG_FORMAT             = "json"
    GOOGLE_CLOUD_PROJECT   = var.project_id
    SVC_CLOUD_SQL_INSTANCE = google_sql_database_instance.quire.connection_name
    SVC_CLOUD_SQL_IP_TYPE  = "PUBLIC"
    # The functions' database user: the schema's owner, so the tables it creates are the
    # functions' own (docs/deploy.md, "Cloud SQL").
    SVC_DB_IAM_USER = google_sql_user.functions.name
    SVC_DB_NAME     = google_sql_database.quire.name
    # The SSE service logs in as its own user: after migrating, the job grants it read access and
    # the relay's and retention's writes (shared/db/grants.ts).
    SVC_DB_STREAM_USERS = google_sql_user.events.name
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
      # The functions' identity (Cloud SQL client and instance user): the job needs nothing more.
      service_account = google_service_account.functions.email
      timeout         = "600s"
      # A failed migration is rolled back; retrying it unchanged would fail the same way.
      max_retries = 0

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

        resources {
          limits = {
            cpu    = "1"
            memory = "512Mi"
          }
        }
      }
    }
  }

  depends_on = [google_project_service.apis, google_project_iam_member.db]
}
