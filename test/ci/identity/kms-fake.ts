import {
  constants,
  createCipheriv,
  createDecipheriv,
  generateKeyPairSync,
  type KeyObject,
  privateEncrypt,
  randomBytes,
  sign,
} from "node:crypto";
import { createRequire } from "node:module";
import path from "node:path";
import {
  type GrpcObject,
  loadPackageDefinition,
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServiceClientConstructor,
  type sendUnaryData,
  status,
} from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { crc32c } from "../../../shared/ci/identity/crc32c.ts";

/**
 * A Cloud KMS stand-in for tests: a gRPC server built from the protos @google-cloud/kms ships,
 * implementing AsymmetricSign and GetPublicKey with real RSA 2048 keys (node:crypto), one per key
 * version it was given (an Ed25519 key, EC_SIGN_ED25519, for a version whose CryptoKey name ends in
 * `ed25519`: it signs the request's `data`, not a digest), and Encrypt and Decrypt with an AES-256-GCM key made for each CryptoKey
 * name at its first use (its ciphertext: nonce, tag, then the encrypted bytes). Plaintext, on
 * 127.0.0.1.
 */
interface SignRequest {
  name: string;
  digest?: { sha256?: Buffer };
  digestCrc32c?: { value?: string };
  data?: Buffer;
  dataCrc32c?: { value?: string };
}

/** A version of an EC_SIGN_ED25519 key (see the header). */
const isEd25519 = (version: string) => /ed25519\/cryptoKeyVersions\/[^/]+$/.test(version);

interface CryptRequest {
  name: string;
  plaintext?: Buffer;
  ciphertext?: Buffer;
  additionalAuthenticatedData?: Buffer;
  plaintextCrc32c?: { value?: string };
  additionalAuthenticatedDataCrc32c?: { value?: string };
}

const flipFirst = (b: Buffer) => Buffer.concat([Buffer.from([b[0]! ^ 0xff]), b.subarray(1)]);

export interface FakeKms {
  /** `host:port`, for kmsClient(endpoint). */
  endpoint: string;
  /** Flip a byte of each signature after its CRC32C was computed, as a corrupted transfer would. */
  corruptSignatures: boolean;
  /** Name this version in sign answers instead of the one asked for. */
  answerAsVersion: string | undefined;
  /** The public key of a version, to verify signatures independently of the client. */
  publicKey(version: string): KeyObject;
  /** How many AsymmetricSign calls arrived. */
  signCalls: number;
  /** The CryptoKey names Encrypt and Decrypt were called with, in order. */
  cryptoCalls: { method: "Encrypt" | "Decrypt"; name: string }[];
  close(): Promise<void>;
}

// DigestInfo prefix of SHA-256 (RFC 8017, 9.2): PKCS#1 v1.5 signing of a precomputed digest.
const SHA256_DIGEST_INFO = Buffer.from("3031300d060960864801650304020105000420", "hex");

/** The package root of a module resolved from `from` (its main file lies under `<root>/build/`). */
function packageRoot(from: string, name: string): string {
  const main = createRequire(from).resolve(name);
  return main.slice(0, main.lastIndexOf(`${path.sep}build${path.sep}`));
}

/** KMS's own protos, and the google/api ones they import (from the google-gax that KMS uses). */
function protoDirs(): string[] {
  const kms = packageRoot(import.meta.url, "@google-cloud/kms");
  const gax = packageRoot(path.join(kms, "package.json"), "google-gax");
  return [path.join(kms, "build", "protos"), path.join(gax, "build", "protos")];
}

export async function startFakeKms(versions: string[]): Promise<FakeKms> {
  const definition = loadSync("google/cloud/kms/v1/service.proto", {
    includeDirs: protoDirs(),
    keepCase: false,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const kmsV1 = (
    ((loadPackageDefinition(definition)["google"] as GrpcObject)["cloud"] as GrpcObject)["kms"] as GrpcObject
  )["v1"] as GrpcObject;
  const service = (kmsV1["KeyManagementService"] as ServiceClientConstructor).service;
  const keys = new Map(
    versions.map((v) => [
      v,
      isEd25519(v) ? generateKeyPairSync("ed25519") : generateKeyPairSync("rsa", { modulusLength: 2048 }),
    ]),
  );
  const symmetricKeys = new Map<string, Buffer>();
  const symmetricKey = (name: string) => {
    const key = symmetricKeys.get(name) ?? randomBytes(32);
    symmetricKeys.set(name, key);
    return key;
  };
  const fake = {
    endpoint: "",
    signCalls: 0,
    cryptoCalls: [] as FakeKms["cryptoCalls"],
    corruptSignatures: false,
    answerAsVersion: undefined as string | undefined,
    publicKey: (v: string) => keys.get(v)!.publicKey,
    close: async () => {},
  };
  // Ed25519 signs the data itself (KMS takes `data` and `data_crc32c` for it).
  const signEd25519 = (request: SignRequest, privateKey: KeyObject) => {
    const data = request.data ?? Buffer.alloc(0);
    const sent = request.dataCrc32c?.value;
    const signature = sign(null, data, privateKey);
    if (fake.corruptSignatures) signature[0]! ^= 0xff;
    return {
      signature,
      name: fake.answerAsVersion ?? request.name,
      verifiedDataCrc32c: sent !== undefined && Number(sent) === crc32c(data),
      signatureCrc32c: { value: String(crc32c(fake.corruptSignatures ? flipFirst(signature) : signature)) },
    };
  };
  const server = new Server();
  server.addService(service, {
    AsymmetricSign(call: ServerUnaryCall<SignRequest, unknown>, done: sendUnaryData<unknown>) {
      fake.signCalls++;
      const pair = keys.get(call.request.name);
      if (!pair) return done({ code: status.NOT_FOUND, details: `no key version ${call.request.name}` });
      if (isEd25519(call.request.name)) return done(null, signEd25519(call.request, pair.privateKey));
      const digest = call.request.digest?.sha256;
      if (digest?.length !== 32)
        return done({ code: status.INVALID_ARGUMENT, details: "digest.sha256 must be 32 bytes" });
      const signature = privateEncrypt(
        { key: pair.privateKey, padding: constants.RSA_PKCS1_PADDING },
        Buffer.concat([SHA256_DIGEST_INFO, digest]),
      );
      const sent = call.request.digestCrc32c?.value;
      if (sent !== undefined && Number(sent) !== crc32c(digest))
        return done({ code: status.INVALID_ARGUMENT, details: "digest_crc32c does not match digest" });
      if (fake.corruptSignatures) signature[0]! ^= 0xff;
      done(null, {
        signature,
        name: fake.answerAsVersion ?? call.request.name,
        verifiedDigestCrc32c: sent !== undefined,
        // The checksum of the signature as KMS computed it, before any corruption in transit.
        signatureCrc32c: { value: String(crc32c(fake.corruptSignatures ? flipFirst(signature) : signature)) },
      });
    },
    Encrypt(call: ServerUnaryCall<CryptRequest, unknown>, done: sendUnaryData<unknown>) {
      const { name, plaintext, additionalAuthenticatedData: aad } = call.request;
      fake.cryptoCalls.push({ method: "Encrypt", name });
      const nonce = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", symmetricKey(name), nonce).setAAD(aad ?? Buffer.alloc(0));
      const sealed = Buffer.concat([cipher.update(plaintext ?? Buffer.alloc(0)), cipher.final()]);
      const ciphertext = Buffer.concat([nonce, cipher.getAuthTag(), sealed]);
      done(null, {
        name: `${name}/cryptoKeyVersions/1`,
        ciphertext,
        ciphertextCrc32c: { value: String(crc32c(ciphertext)) },
        verifiedPlaintextCrc32c: Boolean(call.request.plaintextCrc32c),
        verifiedAdditionalAuthenticatedDataCrc32c: Boolean(call.request.additionalAuthenticatedDataCrc32c),
      });
    },
    Decrypt(call: ServerUnaryCall<CryptRequest, unknown>, done: sendUnaryData<unknown>) {
      const { name, ciphertext, additionalAuthenticatedData: aad } = call.request;
      fake.cryptoCalls.push({ method: "Decrypt", name });
      const bytes = ciphertext ?? Buffer.alloc(0);
      try {
        const decipher = createDecipheriv("aes-256-gcm", symmetricKey(name), bytes.subarray(0, 12));
        decipher.setAAD(aad ?? Buffer.alloc(0)).setAuthTag(bytes.subarray(12, 28));
        const plaintext = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]);
        done(null, { plaintext, plaintextCrc32c: { value: String(crc32c(plaintext)) } });
      } catch {
        done({ code: status.INVALID_ARGUMENT, details: "Decryption failed: the ciphertext is invalid." });
      }
    },
    GetPublicKey(call: ServerUnaryCall<{ name: string }, unknown>, done: sendUnaryData<unknown>) {
      const pair = keys.get(call.request.name);
      if (!pair) return done({ code: status.NOT_FOUND, details: `no key version ${call.request.name}` });
      const pem = pair.publicKey.export({ format: "pem", type: "spki" }).toString();
      const algorithm = isEd25519(call.request.name) ? "EC_SIGN_ED25519" : "RSA_SIGN_PKCS1_2048_SHA256";
      done(null, { pem, algorithm, name: call.request.name });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  fake.endpoint = `127.0.0.1:${port}`;
  fake.close = () => new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  return fake;
}
