/**
 * The memory of the built `repos` function, as bounds that test/deploy/repos-memory.test.ts checks
 * on the bundle and test/fast/deploy/terraform.test.ts fits into terraform's memory and request
 * concurrency (docs/deploy.md, "Memory of the repos function").
 */

/** Peak RSS (VmHWM) of a started instance after a small commit and read: measured 103 MiB. */
export const REPOS_STARTED_MIB = 128;
/**
 * What one request of a 30 MiB commit body and the read of its file add to that peak, with three
 * such requests at once: measured 119-133 MiB a request (150-161 MiB while Quire parsed the body a
 * second time). The Functions Framework alone takes about 120 MiB of a 30 MiB JSON body: the raw
 * bytes, their text and the parsed JSON, all read before Quire's handler runs.
 */
export const REPOS_COMMIT_MIB = 145;
/** The body size REPOS_COMMIT_MIB was measured with. */
export const MEASURED_BODY_MIB = 30;
/** The largest body a request can carry: Cloud Run's request limit, and SVC_MAX_BODY_BYTES' default. */
export const WORST_BODY_MIB = 32;
