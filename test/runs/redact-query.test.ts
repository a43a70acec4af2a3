import { describe, expect, it } from "vitest";
import { redactedJson, redactText, redactValue, shownUrl } from "../../src/runs/index.ts";

// Built from pieces so the source file itself does not look like it leaks credentials.
const random = (n: number) => "Xq7vR2mK9pL4wN8tZ3bF6hJ1cD5gS0aY".repeat(4).slice(0, n);

describe("a URL's query parameters that carry a credential", () => {
  it("go when long and random: ?key= (Google Maps, YouTube), &auth= (Firebase), ?code= (an OAuth code), X-Amz-Credential, X-Amz-Security-Token, ?access_token=", () => {
    const key = random(39);
    const cases = [
      [`https://maps.googleapis.com/maps/api/geocode/json?address=paris&key=${key}`, key],
      [`GET https://www.googleapis.com/youtube/v3/videos?key=${random(32)}&part=snippet`, random(32)],
      [`https://acme-default-rtdb.firebaseio.com/users.json?auth=${random(40)}`, random(40)],
      [`https://app.example.com/callback?code=${random(20)}&state=xyz`, random(20)],
      [`https://graph.example.com/me?fields=id&access_token=${random(32)}`, random(32)],
      [`https://b.s3.amazonaws.com/k?X-Amz-Credential=ASIAQ${random(15).toUpperCase()}%2F20260101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Security-Token=IQoJb3JpZ2luX2Vj${random(60)}%2F&X-Amz-Expires=900`, `IQoJb3JpZ2luX2Vj${random(60)}`],
      [`<a href="https://api.example.com/v1/feed?page=2&amp;key=${random(24)}">feed</a>`, random(24)],
    ] as const;
    for (const [text, secret] of cases) {
      const out = redactText(text).text;
      expect(out, text).not.toContain(secret.slice(0, 12));
      expect(out, text).toContain("[REDACTED]");
      expect(out).toContain("https://");
    }
    expect(redactText(cases[0][0]).text).toBe("https://maps.googleapis.com/maps/api/geocode/json?address=paris&key=[REDACTED]");
    expect(redactText(cases[3][0]).text).toBe("https://app.example.com/callback?code=[REDACTED]&state=xyz");
  });

  it("stay when short or plain: ?key=name, ?page=2, a key that is a word or a path, a numeric code", () => {
    for (const text of [
      "https://example.com/search?key=name&page=2",
      "https://example.com/settings?key=user-settings-page&auth=required",
      "https://api.example.com/v1/objects?key=reports/2024/summary.pdf",
      "https://example.com/verify?code=123456&lang=en",
      "https://example.com/errors?code=ERR_CONNECTION_REFUSED",
      "https://example.com/a?sig=abc&key=ab12",
    ]) {
      expect(redactText(text).text).toBe(text);
    }
  });
});

describe("a URL as pi-flow quotes it (shownUrl: /flow doctor, backend labels, errors)", () => {
  it("hides a user name that may be a token (https://<token>@host, <token>:x-oauth-basic), as it hides the password", () => {
    const token = random(32).toLowerCase();
    expect(shownUrl(`https://${token}@otel.example.com/v1/traces`)).toBe("https://***@otel.example.com/v1/traces");
    expect(shownUrl(`https://${random(14)}:x-oauth-basic@github.com/acme/api.git`)).toBe("https://***:***@github.com/acme/api.git");
  });

  it("keeps a user name that reads as one (postgres://app_user:…, oauth2, deploy)", () => {
    expect(shownUrl("postgres://app_user:pw@db.internal:5432/app")).toBe("postgres://app_user:***@db.internal:5432/app");
    expect(shownUrl("https://oauth2:abc@gitlab.com/acme/api.git")).toBe("https://oauth2:***@gitlab.com/acme/api.git");
    expect(shownUrl("postgres://deploy@db/app?sslmode=require")).toBe("postgres://deploy@db/app?sslmode=***");
  });
});

describe("a session id under a generic name (sid, session, session_id)", () => {
  it("goes from a structured value as from text, and a UUID, a word or a number under the name stays", () => {
    const session = random(28);
    const value = { session, sid: random(20), session_id: "4b1c2a7e-9f3d-4c8b-a1e2-5d6f7a8b9c0d", state: { session: "main", sid: 3 }, sessionId: random(32) };
    const expected = { session: "[REDACTED]", sid: "[REDACTED]", session_id: "4b1c2a7e-9f3d-4c8b-a1e2-5d6f7a8b9c0d", state: { session: "main", sid: 3 }, sessionId: random(32) };
    expect(redactValue(value).value).toEqual(expected);
    expect(JSON.parse(redactedJson(value)!)).toEqual(expected);
    expect(redactText(`curl -b 'sid=${session}' https://app.example.com/me`).text).toBe("curl -b 'sid=[REDACTED]' https://app.example.com/me");
  });

  it("goes from an X-Session-Id header and from a Netscape cookie file's session cookie; a preference cookie stays", () => {
    const session = random(24);
    expect(redactText(`X-Session-Id: ${session}`).text).toBe("X-Session-Id: [REDACTED]");
    const jar = `# Netscape HTTP Cookie File\n.example.com\tTRUE\t/\tFALSE\t1767225600\tlang\ten-GB\n#HttpOnly_app.example.com\tFALSE\t/\tTRUE\t0\t_app_session\t${session}\n`;
    const kept = jar.replace(session, "[REDACTED]");
    expect(redactText(jar).text).toBe(kept);
    expect(redactText(JSON.stringify({ stdout: jar })).text).toBe(JSON.stringify({ stdout: kept }));
  });
});
