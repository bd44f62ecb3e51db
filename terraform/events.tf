# Event fan-out: every instance publishes committed events to the topic (SVC_EVENT_FANOUT=pubsub);
# the long-lived SSE service subscribes and streams them to clients (functions/groups.ts `events`).

resource "google_pubsub_topic" "events" {
  name                       = "quire-events"
  message_retention_duration = "86400s"
  depends_on                 = [google_project_service.apis]
}

resource "google_cloud_run_v2_service" "events" {
  name                = "quire-events"
  location            = var.region
  ingress             = "INGRESS_TRAFFIC_INTERNAL_LOAD_BALANCER"
  deletion_protection = false

  template {
    service_account = google_service_account.events.email
    # A stream holds its request open: up to an hour, then the client resumes with Last-Event-ID.
    timeout                          = "${var.sse_settings.timeout_seconds}s"
    max_instance_request_concurrency = 1000

    scaling {
      min_instance_count = 1
      max_instance_count = var.sse_settings.max_instances
    }

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
      image = var.container_image

      dynamic "env" {
        # The same settings as the functions, as the SSE service's own database user. No secrets:
        # the streams use none of them (functions/sse/context.ts).
        for_each = merge(local.common_env, { SVC_DB_IAM_USER = google_sql_user.events.name })
        content {
          name  = env.key
          value = env.value
        }
      }

      resources {
        limits = {
          cpu    = "1"
          memory = var.sse_settings.memory
        }
        # The relay and the retention sweep work between requests (docs/deploy.md).
        cpu_idle = false
      }
    }
  }

  depends_on = [google_project_service.apis]
}

resource "google_cloud_run_v2_service_iam_member" "events_public" {
  name     = google_cloud_run_v2_service.events.name
  location = var.region
  role     = "roles/run.invoker"
  member   = "allUsers"
}
