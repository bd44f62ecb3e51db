import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../shared/config.ts";

const emulatorUrl = (value: string) => loadConfig({ STORAGE_EMULATOR_HOST: value }).STORAGE_EMULATOR_HOST;

describe("STORAGE_EMULATOR_HOST", () => {
  it("is unset when absent or blank, so the client talks to Google", () => {
    expect(loadConfig({}).STORAGE_EMULATOR_HOST).toBeUndefined();
    expect(emulatorUrl("  ")).toBeUndefined();
  });

  for (const [given, url] of [
    ["localhost:4443", "http://localhost:4443"],
    ["http://127.0.0.1:4443", "http://127.0.0.1:4443"],
    ["http://127.0.0.1:4443/", "http://127.0.0.1:4443"],
    ["http://127.0.0.1:4443/storage/v1", "http://127.0.0.1:4443"],
    ["https://gcs.internal", "https://gcs.internal"],
  ] as const) {
    it(`reads "${given}" as the base URL ${url}`, () => {
      expect(emulatorUrl(given)).toBe(url);
    });
  }

  for (const bad of ["ftp://host:21", "http://", "http://exa mple:1"]) {
    it(`refuses "${bad}" at start, naming the variable`, () => {
      expect(() => emulatorUrl(bad)).toThrow(ConfigError);
      expect(() => emulatorUrl(bad)).toThrow(/STORAGE_EMULATOR_HOST/);
    });
  }
});
