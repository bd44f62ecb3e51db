# Cloud SQL for PostgreSQL with IAM database authentication: the functions' and the SSE service's
# service accounts are database users without passwords. One built-in user, the migrator, owns the
# schema: Cloud SQL gives IAM users no privileges, and on PostgreSQL 15+ PUBLIC may not create in
# schema `public`, so only a built-in user (a member of cloudsqlsuperuser, the database's owner)
# can create the tables and grant the IAM users their rights (docs/deploy.md, "Migrations").

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

    # PUBLIC: a public IP, reached only through the connector (no authorized networks). PRIVATE:
    # no public IP; an address in the VPC through private service access (network.tf).
    ip_configuration {
      ipv4_enabled    = var.db_ip_type == "PUBLIC"
      private_network = local.private_db ? local.vpc_network : null
      ssl_mode        = "ENCRYPTED_ONLY"
    }
  }

  depends_on = [google_project_service.apis, google_service_networking_connection.sql]
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

# The migrator's password: generated in each run but sent only on create and when
# db_migrator_password_version changes (write-only arguments, Terraform >= 1.11), to the user and
# to Secret Manager in the same apply; it is never stored in the state.
ephemeral "random_password" "db_migrator" {
  length  = 32
  special = false
}

resource "google_sql_user" "migrator" {
  name                = "quire_migrator"
  instance            = google_sql_database_instance.quire.name
  type                = "BUILT_IN"
  password_wo         = ephemeral.random_password.db_migrator.result
  password_wo_version = var.db_migrator_password_version
}

resource "google_secret_manager_secret" "db_migrator_password" {
  secret_id = "quire-db-migrator-password"
  replication {
    auto {}
  }
  depends_on = [google_project_service.apis]
}

resource "google_secret_manager_secret_version" "db_migrator_password" {
  secret                 = google_secret_manager_secret.db_migrator_password.id
  secret_data_wo         = ephemeral.random_password.db_migrator.result
  secret_data_wo_version = var.db_migrator_password_version
}
