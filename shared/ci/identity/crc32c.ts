/**
 * CRC32C (Castagnoli), which Cloud KMS uses to protect requests and responses in transit
 * (https://cloud.google.com/kms/docs/data-integrity-guidelines). Table-driven; the inputs are a
 * 32-byte digest and a 256-byte signature, so speed does not matter.
 */
const TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** The CRC32C of `data` as an unsigned 32-bit number. */
export function crc32c(data: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of data) crc = TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
