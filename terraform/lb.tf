# The global external Application Load Balancer: one serverless NEG and backend service per public
# function and one for the SSE service, and the URL map of docs/routing.md (checked route by route
# against the route tables in test/fast/deploy/routing.test.ts).

resource "google_compute_global_address" "api" {
  name       = "quire-api"
  depends_on = [google_project_service.apis]
}

resource "google_compute_managed_ssl_certificate" "api" {
  name = "quire-api"
  managed {
    domains = [var.domain]
  }
}

resource "google_compute_region_network_endpoint_group" "function" {
  for_each              = local.public_functions
  name                  = "quire-${lower(each.key)}"
  region                = var.region
  network_endpoint_type = "SERVERLESS"
  cloud_function {
    function = google_cloudfunctions2_function.fn[each.key].name
  }
}

resource "google_compute_backend_service" "function" {
  for_each              = local.public_functions
  name                  = "quire-${lower(each.key)}"
  load_balancing_scheme = "EXTERNAL_MANAGED"
  protocol              = "HTTPS"
  backend {
    group = google_compute_region_network_endpoint_group.function[each.key].id
  }
}

resource "google_compute_region_network_endpoint_group" "events" {
  name                  = "quire-events"
  region                = var.region
  network_endpoint_type = "SERVERLESS"
  cloud_run {
    service = google_cloud_run_v2_service.events.name
  }
}

resource "google_compute_backend_service" "events" {
  name                  = "quire-events"
  load_balancing_scheme = "EXTERNAL_MANAGED"
  protocol              = "HTTPS"
  # An SSE stream is one long response: the backend timeout of serverless NEGs does not apply,
  # the service's own request timeout (events.tf) ends it.
  backend {
    group = google_compute_region_network_endpoint_group.events.id
  }
}

# Route rules are tried in priority order (lowest first); the first whose match rule matches wins.
# A URL map cannot see past `/repos/` (repo names hold slashes), so all of `/repos/**` is one
# function, and the streams are told apart by their Accept header (docs/routing.md).
resource "google_compute_url_map" "api" {
  name            = "quire-api"
  default_service = google_compute_backend_service.function["meta"].id

  host_rule {
    hosts        = ["*"]
    path_matcher = "quire"
  }

  path_matcher {
    name            = "quire"
    default_service = google_compute_backend_service.function["meta"].id

    # The SSE streams: `/events` always, `/repos/**/-/events` when the client asks for a stream.
    route_rules {
      priority = 10
      service  = google_compute_backend_service.events.id
      match_rules {
        full_path_match = "/events"
      }
      match_rules {
        prefix_match = "/repos/"
        header_matches {
          header_name  = "Accept"
          prefix_match = "text/event-stream"
        }
      }
    }

    route_rules {
      priority = 20
      service  = google_compute_backend_service.function["repos"].id
      match_rules {
        full_path_match = "/repos"
      }
      match_rules {
        prefix_match = "/repos/"
      }
    }

    route_rules {
      priority = 30
      service  = google_compute_backend_service.function["orgs"].id
      match_rules {
        full_path_match = "/orgs"
      }
      match_rules {
        prefix_match = "/orgs/"
      }
    }

    route_rules {
      priority = 40
      service  = google_compute_backend_service.function["subscriptions"].id
      match_rules {
        full_path_match = "/subscriptions"
      }
      match_rules {
        prefix_match = "/subscriptions/"
      }
    }

    route_rules {
      priority = 50
      service  = google_compute_backend_service.function["scheduler"].id
      match_rules {
        full_path_match = "/claim"
      }
      match_rules {
        full_path_match = "/webhook"
      }
      match_rules {
        path_template_match = "/jobs/{id}/**"
      }
      match_rules {
        path_template_match = "/run/**"
      }
    }

    route_rules {
      priority = 60
      service  = google_compute_backend_service.function["identity"].id
      match_rules {
        full_path_match = "/ci/token"
      }
      match_rules {
        full_path_match = "/auth/cli"
      }
      match_rules {
        prefix_match = "/.well-known/"
      }
    }

    # Browser sign-in (docs/sessions.md) and the web interface (docs/web.md): `/`, `/ui`, `/ui/**`.
    route_rules {
      priority = 65
      service  = google_compute_backend_service.function["web"].id
      match_rules {
        full_path_match = "/"
      }
      match_rules {
        full_path_match = "/ui"
      }
      match_rules {
        prefix_match = "/ui/"
      }
      match_rules {
        full_path_match = "/auth/login"
      }
      match_rules {
        full_path_match = "/auth/callback"
      }
      match_rules {
        full_path_match = "/auth/logout"
      }
    }

    route_rules {
      priority = 70
      service  = google_compute_backend_service.function["meta"].id
      match_rules {
        full_path_match = "/healthz"
      }
      match_rules {
        full_path_match = "/openapi.json"
      }
    }
  }
}

resource "google_compute_target_https_proxy" "api" {
  name             = "quire-api"
  url_map          = google_compute_url_map.api.id
  ssl_certificates = [google_compute_managed_ssl_certificate.api.id]
}

resource "google_compute_global_forwarding_rule" "api" {
  name                  = "quire-api"
  target                = google_compute_target_https_proxy.api.id
  ip_address            = google_compute_global_address.api.id
  port_range            = "443"
  load_balancing_scheme = "EXTERNAL_MANAGED"
}

# Plain HTTP on port 80 of the same address answers only a redirect to HTTPS (301 for GET/HEAD,
# 308 for other methods, so a client does not resend a body over plain HTTP by accident).
resource "google_compute_url_map" "http_redirect" {
  name = "quire-http-redirect"
  default_url_redirect {
    https_redirect         = true
    redirect_response_code = "MOVED_PERMANENTLY_DEFAULT"
    strip_query            = false
  }
}

resource "google_compute_target_http_proxy" "http_redirect" {
  name    = "quire-http-redirect"
  url_map = google_compute_url_map.http_redirect.id
}

resource "google_compute_global_forwarding_rule" "http_redirect" {
  name                  = "quire-http-redirect"
  target                = google_compute_target_http_proxy.http_redirect.id
  ip_address            = google_compute_global_address.api.id
  port_range            = "80"
  load_balancing_scheme = "EXTERNAL_MANAGED"
}
