import { describe, expect, it } from "vitest";
import { REDACTED, redactText } from "../../src/runs/index.ts";

const b64 = (text: string) => Buffer.from(text).toString("base64");

describe("base64 of a JSON document holding a secret", () => {
  it("goes whole: a Kubernetes docker-registry secret, a base64'd config.json, escaped or not", () => {
    const compact = b64(JSON.stringify({ auths: { "ghcr.io": { username: "bot", password: "Pa55w0rd-ghcr", auth: b64("bot:Pa55w0rd-ghcr") } } }));
    const pretty = b64(JSON.stringify({ auths: { "registry.internal": { auth: b64("ci:hunter2-pass") } } }, null, 2));
    const settings = b64(JSON.stringify({ service: "billing", apiKey: "9f8e7d6c5b4a39281706f5e4" }));
    expect(redactText(`data:\n  .dockerconfigjson: ${compact}\ntype: kubernetes.io/dockerconfigjson`).text).toBe(`data:\n  .dockerconfigjson: ${REDACTED}\ntype: kubernetes.io/dockerconfigjson`);
    expect(redactText(`{"data":{"config.json":"${pretty}"}}`).text).toBe(`{"data":{"config.json":"${REDACTED}"}}`);
    expect(redactText(`echo ${settings} | base64 -d > settings.json`).text).toBe(`echo ${REDACTED} | base64 -d > settings.json`);
    const escaped = JSON.stringify({ command: `kubectl apply -f - <<< '{"data":{".dockerconfigjson":"${compact}"}}'` });
    expect(redactText(escaped).text).not.toContain(compact.slice(8, 40));
  });

  it("stays when the document holds no secret, and other base64 stays as it is", () => {
    for (const text of [
      `.dockerconfigjson: ${b64(JSON.stringify({ auths: { "ghcr.io": {} } }))}`,
      `config: ${b64(JSON.stringify({ replicas: 3, image: "ghcr.io/acme/api:1.4.2", env: { LOG_LEVEL: "debug" } }))}`,
      `token eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9 is only a JWT's header`,
      `data: ${b64("plain notes, nothing secret in them at all")}`,
    ]) {
      expect(redactText(text), text).toEqual({ text, changed: false });
    }
  });
});
