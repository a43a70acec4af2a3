import { describe, expect, it } from "vitest";
import { REDACTED, redactedJson, redactText, redactValue } from "../../src/runs/index.ts";

/** What both serialisations of evidence write for `value`: the parsed copy and the one-pass line. */
function bothWays(value: unknown): unknown[] {
  return [redactValue(value).value, JSON.parse(redactedJson(value)!)];
}

describe("a map under a secret store's name: every value in it is a secret, judged as one", () => {
  it("secrets: and credentials: maps, nested maps too (Helm values, app configs)", () => {
    const value = {
      secrets: { db: "p4ssw0rd-Very!", redis: "Xq7vR2mK9pL4wN8t", mode: "strict", placeholder: "${DB_PASSWORD}" },
      credentials: { aws: { id: "AKIA-not-quite", secret: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", region: "eu" }, github: "q9Zt4Lw8Nc2Vb6Xm7Rk1" },
      image: { tag: "1.4.2" },
    };
    const expected = {
      secrets: { db: REDACTED, redis: REDACTED, mode: "strict", placeholder: "${DB_PASSWORD}" },
      credentials: { aws: { id: REDACTED, secret: REDACTED, region: "eu" }, github: REDACTED },
      image: { tag: "1.4.2" },
    };
    for (const written of bothWays(value)) expect(written).toEqual(expected);
  });

  it("a Kubernetes Secret's data (base64) and stringData, whatever the keys are called", () => {
    const secret = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "app-env", namespace: "prod", labels: { app: "api" } },
      type: "Opaque",
      data: { "db-url": "cG9zdGdyZXM6Ly9hcHA6aHVudGVyMkBkYi9hcHA=", ".dockerconfigjson": "eyJhdXRocyI6e319", user: "YWRtaW4=" },
      stringData: { DATABASE_URL: "postgres://app@db/app?sslmode=require", config: "mode=live-7Hk2x" },
    };
    const expected = {
      ...secret,
      data: { "db-url": REDACTED, ".dockerconfigjson": REDACTED, user: REDACTED },
      stringData: { DATABASE_URL: REDACTED, config: REDACTED },
    };
    for (const written of bothWays(secret)) expect(written).toEqual(expected);
    // A ConfigMap's data is configuration, not secret.
    const configMap = { ...secret, kind: "ConfigMap", stringData: undefined, data: { "db-url": "cG9zdGdyZXM6Ly9hcHA6aHVudGVyMkBkYi9hcHA=", LOG_LEVEL: "info" } };
    for (const written of bothWays(configMap)) expect(written).toEqual(JSON.parse(JSON.stringify(configMap)));
  });

  it("keeps what only names or declares secrets: Compose's secrets (files, env names), GitHub Actions' declarations and references", () => {
    const compose = {
      services: { api: { image: "acme/api:1.4.2", secrets: ["db_password", { source: "api_token", target: "token" }] } },
      secrets: { db_password: { file: "./secrets/db_password.txt" }, api_token: { environment: "API_TOKEN" }, legacy: { external: true, name: "prod_legacy_pw" } },
    };
    for (const written of bothWays(compose)) expect(written).toEqual(compose);
    const workflow = {
      on: { workflow_call: { secrets: { deploy_token: { required: true, description: "The token that deploys to prod 2024" } } } },
      jobs: { deploy: { uses: "./.github/workflows/deploy.yml", secrets: { deploy_token: "${{ secrets.DEPLOY_TOKEN }}" } }, other: { secrets: "inherit" } },
    };
    for (const written of bothWays(workflow)) expect(written).toEqual(workflow);
  });

  it("keeps a Kubernetes Secret's name under existingSecret (Helm charts), and still redacts the password beside it", () => {
    const values = { auth: { existingSecret: "db-creds-2", existingPasswordSecret: "pg-creds-7", password: "Hunter2-xyz" }, envFromSecret: "app-env-5" };
    for (const written of bothWays(values)) expect(written).toEqual({ ...values, auth: { ...values.auth, password: REDACTED } });
  });
});

describe("a YAML block map under a secret store's name, in text", () => {
  const R = REDACTED;
  it("has every value redacted as one stored under the name: secrets:, credentials: and their nested maps, a Kubernetes Secret's data and stringData", () => {
    const helm = "image:\n  tag: 1.4.2\nsecrets:\n  db: p4ssw0rd-Very!\n  mode: strict\n  redis: \"Xq7vR2mK9pL4wN8t\"   # rotated\ncredentials:\n  aws:\n    id: AKIA-not-quite-7\n    region: eu\nreplicas: 2\n";
    expect(redactText(helm).text).toBe(`image:\n  tag: 1.4.2\nsecrets:\n  db: ${R}\n  mode: strict\n  redis: "${R}"   # rotated\ncredentials:\n  aws:\n    id: ${R}\n    region: eu\nreplicas: 2\n`);
    const manifest = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-env\ntype: Opaque\ndata:\n  db-url: cG9zdGdyZXM6Ly9hcHA6aHVudGVyMkBkYi9hcHA=\n  user: YWRtaW4=\nstringData:\n  config: live\n  tls.crt: |\n    not: a field\n";
    expect(redactText(manifest).text).toBe(`apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-env\ntype: Opaque\ndata:\n  db-url: ${R}\n  user: ${R}\nstringData:\n  config: ${R}\n  tls.crt: |\n    not: a field\n`);
    // Inside a JSON string (a tool call writing the file), with escaped line breaks.
    const written = JSON.stringify({ path: "k8s/secret.yaml", content: manifest });
    const back = (JSON.parse(redactText(written).text) as { content: string }).content;
    expect(back).toBe(redactText(manifest).text);
  });

  it("keeps a ConfigMap's data, Compose's secrets (files, environment names) and GitHub Actions' declarations and references", () => {
    for (const text of [
      "apiVersion: v1\nkind: ConfigMap\ndata:\n  db-host: db.internal\n  LOG_LEVEL: info-2\n---\nkind: Secret\ntype: Opaque\n",
      "services:\n  api:\n    secrets:\n      - db_password\n      - source: db_password_v2\n        target: db_password\n        mode: 0440\nsecrets:\n  db_password:\n    file: ./secrets/db_password.txt\n  api_token:\n    environment: API_TOKEN\n  legacy:\n    external: true\n    name: prod_legacy_pw\n",
      "on:\n  workflow_call:\n    secrets:\n      deploy_token:\n        required: true\n        description: The token that deploys to prod 2024\njobs:\n  deploy:\n    secrets:\n      deploy_token: ${{ secrets.DEPLOY_TOKEN }}\n",
    ]) {
      expect(redactText(text).text).toBe(text);
    }
  });
});

describe("a JSON object under a secret store's name, in text (kubectl get secret -o json, a config read as text)", () => {
  const R = REDACTED;
  it("has every string value redacted as one stored under the name, and the JSON stays valid", () => {
    const kubectl = JSON.stringify(
      { apiVersion: "v1", data: { "db-url": "cG9zdGdyZXM6Ly9hcHA6aHVudGVyMkBkYi9hcHA=", user: "YWRtaW4=" }, kind: "Secret", metadata: { name: "app-env", namespace: "prod" }, type: "Opaque" },
      null,
      4,
    );
    const out = redactText(kubectl).text;
    expect(JSON.parse(out)).toEqual({ apiVersion: "v1", data: { "db-url": R, user: R }, kind: "Secret", metadata: { name: "app-env", namespace: "prod" }, type: "Opaque" });
    const config = '{"image": {"tag": "1.4.2"}, "secrets": {"db": "p4ssw0rd-Very!", "mode": "strict", "hosts": ["a", {"b": 1}], "aws": {"id": "AKIA-not-quite-7"}}, "replicas": 2}';
    expect(JSON.parse(redactText(config).text)).toEqual({ image: { tag: "1.4.2" }, secrets: { db: R, mode: "strict", hosts: ["a", { b: 1 }], aws: { id: R } }, replicas: 2 });
    // Escaped inside a tool result.
    const result = JSON.stringify({ stdout: kubectl, exitCode: 0 });
    expect(JSON.parse((JSON.parse(redactText(result).text) as { stdout: string }).stdout)).toMatchObject({ data: { "db-url": R, user: R } });
  });

  it("keeps a ConfigMap's data, Compose's secret files and GitHub Actions' declarations", () => {
    for (const text of [
      JSON.stringify({ apiVersion: "v1", data: { "db-host": "db-7.internal", LOG_LEVEL: "info-2" }, kind: "ConfigMap" }, null, 2),
      JSON.stringify({ secrets: { db_password: { file: "./secrets/db_password.txt" }, api_token: { environment: "API_TOKEN" } } }),
      JSON.stringify({ secrets: { deploy_token: { required: true, description: "The token that deploys to prod 2024" } } }),
    ]) {
      expect(redactText(text).text).toBe(text);
    }
  });
});

describe("a YAML flow map under a secret store's name, in text (`secrets: {db: …}`)", () => {
  const R = REDACTED;
  it("has every value redacted as one stored under the name, bare or quoted, nested maps too; the map's shape stays", () => {
    expect(redactText("secrets: {db: hunter2, api: 'Xq7vR2mK9pL4wN8t', mode: strict, replicas: 3}\nimage: {tag: 1.4.2}").text).toBe(
      `secrets: {db: ${R}, api: '${R}', mode: strict, replicas: 3}\nimage: {tag: 1.4.2}`,
    );
    // A field with a secret name of its own goes too; a short user name stays.
    expect(redactText("credentials: {user: app, password: b7dk3k-Q, aws: {id: AKIA-not-quite-7, region: eu}}").text).toBe(
      `credentials: {user: app, password: ${R}, aws: {id: ${R}, region: eu}}`,
    );
    // The block map's bare short value with a digit, as the flow map's.
    expect(redactText("secrets:\n  db: hunter2\n  mode: strict\n").text).toBe(`secrets:\n  db: ${R}\n  mode: strict\n`);
    // Inside a JSON string (a tool call writing the file).
    const written = JSON.stringify({ path: "values.yaml", content: "secrets: {db: hunter2, api: \"Xq7vR2mK9pL4wN8t\"}\n" });
    expect((JSON.parse(redactText(written).text) as { content: string }).content).toBe(`secrets: {db: ${R}, api: "${R}"}\n`);
  });

  it("keeps code that builds such a map, and maps that only declare secrets", () => {
    for (const text of [
      "const config = { secrets: { db: process.env.DB_URL, api: getApiKey(), other: apiKey, n: 3 } };",
      // TypeScript: a type literal's members, a generic type annotation.
      "interface Config { credentials: { user: string; password: string }; secrets: { db: string } }",
      "const secrets: Record<string, string> = {}; let tokens: Map<string, Token>; const apiKey: Promise<string> = load();",
      "secrets: {db_password: {file: ./secrets/db_password.txt}, api_token: {environment: API_TOKEN}}",
      "tokens: {max: 4096, used: 1234}",
      "secrets: {}",
    ]) {
      expect(redactText(text).text, text).toBe(text);
    }
  });
});

describe("Helm's --set under a secret store's path, and Docker's env and build args", () => {
  const R = REDACTED;
  it("are redacted, each pair of a comma-separated list judged alone", () => {
    expect(redactText("helm install api ./chart --set secrets.db=hunter2").text).toBe(`helm install api ./chart --set secrets.db=${R}`);
    expect(redactText("helm upgrade api ./chart --set image.tag=1.4.2,secrets.db=hunter2,secrets.mode=strict --set-string credentials.aws.id=AKIA-not-7").text).toBe(
      `helm upgrade api ./chart --set image.tag=1.4.2,secrets.db=${R},secrets.mode=strict --set-string credentials.aws.id=${R}`,
    );
    expect(redactText('helm install x --set "secret.value=Xq7vR2mK9pL4" --set=secrets[0].value=x9Kd83kdZ').text).toBe(`helm install x --set "secret.value=${R}" --set=secrets[0].value=${R}`);
    // A path ending at a secret name, and Docker's env and build args, as KEY=value.
    expect(redactText("helm install x --set-string auth.password=hunter2 --set global.apiKey=abcdEF12345678").text).toBe(`helm install x --set-string auth.password=${R} --set global.apiKey=${R}`);
    expect(redactText("docker run -e DB_PASSWORD=hunter2 --env API_TOKEN=tok-9f8e7d6c img && docker build --build-arg NPM_TOKEN=npm_abc123def456 .").text).toBe(
      `docker run -e DB_PASSWORD=${R} --env API_TOKEN=${R} img && docker build --build-arg NPM_TOKEN=${R} .`,
    );
  });

  it("keep what only configures a store: its switches, counts and names", () => {
    for (const text of [
      "helm install x --set image.tag=1.4.2,replicaCount=3 --set secrets.create=true --set secrets.name=db-creds --set-string tokens.max=4096",
      "helm install x --set secrets.db=${DB_PASSWORD} --set secret.annotations.team=core",
    ]) {
      expect(redactText(text).text, text).toBe(text);
    }
  });
});

describe("kubectl create secret's literals", () => {
  it("are redacted whatever their key is called; a ConfigMap's literals and placeholders stay", () => {
    const R = REDACTED;
    expect(redactText("kubectl create secret generic api-env --from-literal=db-url=postgres-7Hk2x9 --from-literal config='mode=live;k=9f8e7d' -n prod").text).toBe(
      `kubectl create secret generic api-env --from-literal=db-url=${R} --from-literal config='${R}' -n prod`,
    );
    for (const text of [
      "kubectl create configmap app --from-literal=db-host=db-7.internal --from-literal=LOG_LEVEL=info",
      'kubectl create secret generic api --from-literal=db-url="$DATABASE_URL" --from-literal=region=${REGION}',
    ]) {
      expect(redactText(text).text).toBe(text);
    }
  });
});
