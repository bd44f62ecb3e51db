/**
 * The memory of the built `repos` function, as bounds that test/deploy/repos-memory.test.ts checks
 * on the bundle and test/fast/deploy/terraform.test.ts fits into terraform's memory and request
 * concurrency (docs/deploy.md, "Memory of the repos function").
 */

/** Peak RSS (VmHWM) of a started instance after a small commit and read: measured 96-97 MiB. */
export const REPOS_STARTED_MIB = 128;
/**
 * What one request of a 30 MiB commit body and the read of its file add to that peak, with three
 * such requests at once: measured 59 MiB a request since the contents are decoded in the body's own
 * bytes (shared/http/large-json.ts), 84-85 MiB since a large JSON body is read before the
 * Functions Framework's parsers and parsed from its bytes (functions/large-bodies.ts); 119-133 MiB
 * while the framework held it as bytes, text and parsed JSON, 150-161 MiB while Quire parsed it a
 * second time. The bound fails a build in which the framework parses large bodies again.
 */
export const REPOS_COMMIT_MIB = 110;
/** The body size REPOS_COMMIT_MIB was measured with. */
export const MEASURED_BODY_MIB = 30;
/** The largest body a request can carry: Cloud Run's request limit, and SVC_MAX_BODY_BYTES' default. */
export const WORST_BODY_MIB = 32;
