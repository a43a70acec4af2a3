import { FlowError } from "../contract/errors.ts";
import { shownUrl } from "./settings.ts";

/** The DBOS SDK, loaded only when the dbos backend is chosen: the local default never pays for it. */
export type DbosSdk = typeof import("@dbos-inc/dbos-sdk");

export async function loadDbos(): Promise<DbosSdk> {
  try {
    return await import("@dbos-inc/dbos-sdk");
  } catch (error) {
    throw new FlowError(
      "configuration_invalid",
      `The dbos backend needs the optional dependency @dbos-inc/dbos-sdk, which is not installed (${(error as Error).message}); npm install @dbos-inc/dbos-sdk, or use the local backend.`,
    );
  }
}

/** Why a database could not be used, in words that quote no password. */
export function unusableDatabase(url: string, error: unknown): FlowError {
  const reason = error instanceof Error ? error.message : String(error);
  return new FlowError("configuration_invalid", `The dbos backend cannot use the database ${shownUrl(url)}: ${reason.replaceAll(url, shownUrl(url))} (see docs/scale.md).`);
}

const MIGRATION_ATTEMPTS = 5;

/**
 * Creates or migrates DBOS's schema. Two processes migrating a fresh database at once can race
 * ("tuple concurrently updated"); the loser tries again, and finds the work done.
 */
export async function migrate(sdk: DbosSdk, url: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await sdk.DBOS.migrate(url);
      return;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const refused = typeof code === "string" && ["ECONNREFUSED", "ENOTFOUND", "28P01", "28000", "3D000", "EAI_AGAIN"].includes(code);
      if (refused || attempt >= MIGRATION_ATTEMPTS) throw unusableDatabase(url, error);
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}
