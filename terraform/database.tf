# Cloud SQL for PostgreSQL with IAM database authentication: the functions' and the SSE service's
# service accounts are database users; no passwords exist.

resource "google_sql_database_instance" "quire" {
  name                = "quire"
  region              = var.region
  database_version    = "POSTGRES_16"
  deletion_protection = var.deletion_protection

  settings {
    tier              = var.db_tier
    availability_type = "REGIONAL"
    disk_autoresize   = true

    database_flags {
      name  = "cloudsql.iam_authentication"
      value = "on"
    }
    # The connection budget: the pools of all instances must fit (test/fast/deploy/terraform.test.ts).
    database_flags {
      name  = "max_connections"
      value = tostring(var.db_max_connections)
    }

    backup_configuration {
      enabled                        = true
      point_in_time_recovery_enabled = true
    }

    ip_configuration {
      ipv4_enabled = true
      ssl_mode     = "ENCRYPTED_ONLY"
    }
  }

  depends_on = [google_project_service.apis]
}

resource "google_sql_database" "quire" {
  name     = "quire"
  instance = google_sql_database_instance.quire.name
}

# An IAM service account's database user name is its email without `.gserviceaccount.com`.
resource "google_sql_user" "functions" {
  name     = trimsuffix(google_service_account.functions.email, ".gserviceaccount.com")
  instance = google_sql_database_instance.quire.name
  type     = "CLOUD_IAM_SERVICE_ACCOUNT"
}

resource "google_sql_user" "events" {
  name     = trimsuffix(google_service_account.events.email, ".gserviceaccount.com")
  instance = google_sql_database_instance.quire.name
  type     = "CLOUD_IAM_SERVICE_ACCOUNT"
}
