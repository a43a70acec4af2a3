import { redactText } from "./index.ts";

/**
 * A URL as a message may quote it (`flow help`, `/flow doctor`, errors): its password and every
 * query value shown as `***` (libpq takes `?password=`, an endpoint may carry a token), and the rest
 * redacted as text.
 */
export function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    for (const key of new Set(parsed.searchParams.keys())) parsed.searchParams.set(key, "***");
    return redactText(parsed.toString()).text;
  } catch {
    return "(not a URL)";
  }
}
