/**
 * CRC32C (Castagnoli), which Cloud KMS uses to protect requests and responses in transit
 * (https://cloud.google.com/kms/docs/data-integrity-guidelines). Bit by bit, without a table: the
 * inputs are a 32-byte digest and a 256-byte signature, so speed does not matter.
 */
const POLYNOMIAL = 0x82f63b78; // reversed

/** The CRC32C of `data` as an unsigned 32-bit number. */
export function crc32c(data: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of data) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? POLYNOMIAL ^ (crc >>> 1) : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}
