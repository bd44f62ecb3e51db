import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import tls from "node:tls";

/**
 * A local stand-in for Cloud SQL, speaking the protocols `@google-cloud/cloud-sql-connector` uses,
 * so the connector runs unchanged against it:
 *
 * - the Cloud SQL Admin API (the connector's `sqlAdminAPIEndpoint` = `adminUrl`):
 *   `GET sql/v1beta4/projects/P/instances/I/connectSettings` answers the region, the instance's
 *   IP address and the server CA certificate; `POST …/instances/I:generateEphemeralCert` signs the
 *   client's public key with that CA and records the OAuth access token sent for IAM login;
 * - a GCE metadata server (GCE_METADATA_HOST = `metadataHost`), where google-auth-library gets
 *   its access token on Cloud Run: the same token endpoint and `Metadata-Flavor` headers;
 * - the instance: a TLS 1.3 listener on port 3307 (the connector's fixed port) of a loopback
 *   address of its own, which requires a client certificate signed by the CA and then forwards
 *   the bytes to a real PostgreSQL server, answering its password request for an IAM login (see
 *   FakeBackend); a built-in user's connection (a certificate asked for without a token) sends
 *   its own password, as with Cloud SQL.
 *
 * Certificates come from the `openssl` command line (Node cannot issue X.509 certificates).
 */
export interface CloudSqlFake {
  /** `project:region:instance`. */
  instance: string;
  adminUrl: string;
  metadataHost: string;
  /** The OAuth access token the metadata server hands out. */
  accessToken: string;
  /** Every generateEphemeralCert request: its bearer token, and the access token in its body. */
  certRequests: { authorization: string | undefined; accessToken: unknown }[];
  /** Subjects of the client certificates of the TLS connections the instance accepted. */
  connections: string[];
  close(): Promise<void>;
}

const PROJECT = "quire-test";
const REGION = "europe-west1";
const INSTANCE = "quire-db";
const INSTANCE_PORT = 3307;

/** A tiny CA in a temporary directory, driving `openssl`. */
function certificateAuthority() {
  const dir = mkdtempSync(path.join(tmpdir(), "cloud-sql-fake-"));
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync("openssl", args, { stdio: ["ignore", "pipe", "pipe"] });
  openssl(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    file("ca.key"),
    "-out",
    file("ca.crt"),
    "-subj",
    "/CN=Fake Cloud SQL Server CA",
    "-days",
    "2",
  );
  let serial = 0;
  /** A certificate for `subject` on the given public key (PEM), or on a new key pair. */
  const issue = (subject: string, publicKeyPem?: string) => {
    const name = `c${++serial}`;
    if (publicKeyPem === undefined) {
      openssl(
        "genpkey",
        "-algorithm",
        "RSA",
        "-pkeyopt",
        "rsa_keygen_bits:2048",
        "-out",
        file(`${name}.key`),
      );
      openssl("pkey", "-in", file(`${name}.key`), "-pubout", "-out", file(`${name}.pub`));
    } else writeFileSync(file(`${name}.pub`), publicKeyPem);
    openssl(
      "x509",
      "-new",
      "-force_pubkey",
      file(`${name}.pub`),
      "-subj",
      subject,
      "-CA",
      file("ca.crt"),
      "-CAkey",
      file("ca.key"),
      "-days",
      "1",
      "-out",
      file(`${name}.crt`),
    );
    const cert = readFileSync(file(`${name}.crt`), "utf8");
    return { cert, key: publicKeyPem === undefined ? readFileSync(file(`${name}.key`), "utf8") : "" };
  };
  return {
    caCert: readFileSync(file("ca.crt"), "utf8"),
    issue,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

const expiryOf = (pem: string) => new Date(new crypto.X509Certificate(pem).validTo).toISOString();

/** Listens on port 3307 of some 127.x.y.z, trying other addresses while one is taken (parallel runs). */
async function listenOnOwnLoopback(server: net.Server): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const ip = `127.${1 + Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${2 + Math.floor(Math.random() * 250)}`;
    try {
      server.listen(INSTANCE_PORT, ip);
      await once(server, "listening");
      return ip;
    } catch (err) {
      if (attempt > 20 || (err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
    }
  }
}

/**
 * The PostgreSQL server behind the instance, and the password of the IAM user there: Cloud SQL
 * logs an IAM user in on the strength of the token its client certificate was issued for, with
 * no password from the client; the fake answers the server's password request in its place.
 */
export interface FakeBackend {
  host: string;
  port: number;
  login: { user: string; password: string };
}

/** `accessToken`: the one the metadata server hands out (another fake may expect the same one). */
export async function startCloudSqlFake(
  postgres: FakeBackend,
  opts: { accessToken?: string } = {},
): Promise<CloudSqlFake> {
  const ca = certificateAuthority();
  const serverCert = ca.issue(`/CN=${PROJECT}:${INSTANCE}`);
  const connections: string[] = [];
  /** Each open connection's teardown: both sockets of a client and its upstream. */
  const open = new Set<() => void>();
  const instance = tls.createServer(
    {
      ca: ca.caCert,
      cert: serverCert.cert,
      key: serverCert.key,
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: "TLSv1.3",
    },
    (client) => {
      const subject = String(client.getPeerCertificate().subject?.CN ?? "");
      connections.push(subject);
      const upstream = net.connect(postgres.port, postgres.host);
      client.pipe(upstream);
      // A built-in user's certificate carries no token: that client answers with its own password.
      if (subject === "iam-login") answerPasswordRequest(upstream, client, postgres.login);
      else upstream.pipe(client);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        open.delete(drop);
      };
      open.add(drop);
      client.on("error", drop);
      upstream.on("error", drop);
      client.on("close", drop);
      upstream.on("close", drop);
    },
  );
  const ip = await listenOnOwnLoopback(instance);

  const accessToken = opts.accessToken ?? `ya29.fake-${Math.random().toString(36).slice(2)}`;
  const certRequests: CloudSqlFake["certRequests"] = [];
  const base = `/sql/v1beta4/projects/${PROJECT}/instances/${INSTANCE}`;
  const api = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : {};
    const url = new URL(req.url ?? "/", "http://fake").pathname.replace(/\/+/g, "/");
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(value));
    };
    const authorized = req.headers.authorization === `Bearer ${accessToken}`;
    if (url.startsWith("/computeMetadata/v1/")) return metadata(url, req, res, accessToken);
    if (!authorized) return json(401, { error: { code: 401, message: "missing or bad access token" } });
    if (req.method === "GET" && url === `${base}/connectSettings`)
      return json(200, {
        kind: "sql#connectSettings",
        region: REGION,
        databaseVersion: "POSTGRES_15",
        backendType: "SECOND_GEN",
        // Public and private: the connector dials the one SVC_CLOUD_SQL_IP_TYPE names.
        ipAddresses: [
          { type: "PRIMARY", ipAddress: ip },
          { type: "PRIVATE", ipAddress: ip },
        ],
        serverCaCert: { kind: "sql#sslCert", cert: ca.caCert, expirationTime: expiryOf(ca.caCert) },
      });
    if (req.method === "POST" && url === `${base}:generateEphemeralCert`) {
      certRequests.push({ authorization: req.headers.authorization, accessToken: body.access_token });
      const { cert } = ca.issue(
        `/CN=${String(body.access_token ? "iam-login" : "cert-login")}`,
        String(body.public_key),
      );
      return json(200, { ephemeralCert: { kind: "sql#sslCert", cert, expirationTime: expiryOf(cert) } });
    }
    json(404, { error: { code: 404, message: `no ${req.method} ${url}` } });
  });
  api.listen(0, "127.0.0.1");
  await once(api, "listening");
  const apiAddress = `127.0.0.1:${(api.address() as AddressInfo).port}`;

  return {
    instance: `${PROJECT}:${REGION}:${INSTANCE}`,
    adminUrl: `http://${apiAddress}/`,
    metadataHost: apiAddress,
    accessToken,
    certRequests,
    connections,
    async close() {
      // A function's pool keeps its connections for the life of its instance, as deployed; the
      // fake's instance going away ends them, instead of waiting for their idle timeout (30 s).
      for (const drop of [...open]) drop();
      await Promise.all([new Promise((r) => instance.close(r)), new Promise((r) => api.close(r))]);
      ca.remove();
    },
  };
}

/** The GCE metadata server's answers google-auth-library asks for. */
function metadata(url: string, req: http.IncomingMessage, res: http.ServerResponse, accessToken: string) {
  const headers = { "metadata-flavor": "Google" };
  if (req.headers["metadata-flavor"] !== "Google") {
    res.writeHead(403, headers);
    return res.end("Missing Metadata-Flavor: Google");
  }
  const answers: Record<string, [string, string]> = {
    "/computeMetadata/v1/instance/service-accounts/default/token": [
      "application/json",
      JSON.stringify({ access_token: accessToken, expires_in: 3599, token_type: "Bearer" }),
    ],
    "/computeMetadata/v1/project/project-id": ["application/text", PROJECT],
    "/computeMetadata/v1/universe/universe-domain": ["application/text", "googleapis.com"],
  };
  const answer = answers[url];
  if (!answer) {
    res.writeHead(404, headers);
    return res.end();
  }
  res.writeHead(200, { ...headers, "content-type": answer[0] });
  res.end(answer[1]);
}

/**
 * Relays the server's messages to the client, except a password request (cleartext or MD5), which
 * it answers itself; from AuthenticationOk on, the bytes flow through untouched. SCRAM is not
 * spoken: use a server whose local connections use `password` or `md5` (the embedded test cluster).
 */
function answerPasswordRequest(server: net.Socket, client: tls.TLSSocket, login: FakeBackend["login"]) {
  let pending = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 5) {
      const length = pending.readInt32BE(1);
      if (pending.length < 1 + length) return;
      const message = pending.subarray(0, 1 + length);
      pending = pending.subarray(1 + length);
      const auth = message[0] === 0x52 ? message.readInt32BE(5) : undefined; // 'R'
      if (auth === 3) server.write(passwordMessage(login.password));
      else if (auth === 5) {
        const inner = md5hex(login.password + login.user);
        server.write(
          passwordMessage(`md5${md5hex(Buffer.concat([Buffer.from(inner), message.subarray(9, 13)]))}`),
        );
      } else if (auth !== undefined && auth !== 0) {
        client.destroy(new Error(`the fake cannot answer PostgreSQL authentication request ${auth}`));
        return;
      } else {
        client.write(message);
        if (auth === 0 || message[0] === 0x45) {
          // AuthenticationOk (or an error): the rest is the client's business.
          server.off("data", onData);
          if (pending.length) client.write(pending);
          server.pipe(client);
          return;
        }
      }
    }
  };
  server.on("data", onData);
}

function passwordMessage(password: string): Buffer {
  const body = Buffer.from(`${password}\0`);
  const header = Buffer.alloc(5);
  header.write("p", 0);
  header.writeInt32BE(4 + body.length, 1);
  return Buffer.concat([header, body]);
}

const md5hex = (data: string | Buffer) => crypto.createHash("md5").update(data).digest("hex");
