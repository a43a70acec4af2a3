import { redactText } from "./index.ts";
import { looksRandom } from "./rule.ts";

/**
 * A user name as a URL shows it: a short name (`app_user`, `postgres`, `x-access-token`). Anything
 * longer or random-looking may be the credential itself: GitHub and many APIs take a token as the
 * user name (`https://<token>@host`, `https://<token>:x-oauth-basic@host`).
 */
const SHOWN_USER = /^[A-Za-z][A-Za-z0-9_.-]{0,19}$/;
const isShownUser = (user: string): boolean => SHOWN_USER.test(user) && !(user.length >= 12 && looksRandom(user));

/**
 * A URL as a message may quote it (`flow help`, `/flow doctor`, errors): its password, a user name
 * that may be a token, and every query value shown as `***` (libpq takes `?password=`, an endpoint
 * may carry a token), and the rest redacted as text.
 */
export function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username !== "" && !isShownUser(decodeURIComponent(parsed.username))) parsed.username = "***";
    if (parsed.password !== "") parsed.password = "***";
    for (const key of new Set(parsed.searchParams.keys())) parsed.searchParams.set(key, "***");
    return redactText(parsed.toString()).text;
  } catch {
    return "(not a URL)";
  }
}
