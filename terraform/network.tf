# The private path to Cloud SQL (var.db_ip_type = "PRIVATE", for projects whose org policy forbids
# public IPs): the instance gets an address in var.network through private service access (a
# reserved range peered with Google's service network), the functions reach the VPC through a
# Serverless VPC Access connector (google_cloudfunctions2_function offers no Direct VPC egress),
# and the SSE service and the migration job through Direct VPC egress on var.subnetwork. With
# "PUBLIC" none of this exists.

locals {
  private_db  = var.db_ip_type == "PRIVATE"
  vpc_network = "projects/${var.project_id}/global/networks/${var.network}"
}

resource "google_compute_global_address" "sql_private_range" {
  count         = local.private_db ? 1 : 0
  name          = "quire-sql-private-range"
  purpose       = "VPC_PEERING"
  address_type  = "INTERNAL"
  prefix_length = 16
  network       = local.vpc_network
  depends_on    = [google_project_service.apis]
}

resource "google_service_networking_connection" "sql" {
  count                   = local.private_db ? 1 : 0
  network                 = local.vpc_network
  service                 = "servicenetworking.googleapis.com"
  reserved_peering_ranges = [google_compute_global_address.sql_private_range[0].name]
}

resource "google_vpc_access_connector" "functions" {
  count         = local.private_db ? 1 : 0
  name          = "quire-functions"
  region        = var.region
  network       = var.network
  ip_cidr_range = var.vpc_connector_cidr
  min_instances = 2
  max_instances = 3
  depends_on    = [google_project_service.apis]
}
