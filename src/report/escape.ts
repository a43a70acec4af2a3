const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/**
 * Text for an HTML element or a quoted attribute. Everything a run wrote (descriptions, answers,
 * errors) passes through here: a run's text never becomes markup or script. Control characters
 * other than newline and tab are dropped, so a terminal escape shows as nothing, not as noise.
 */
export function html(value: unknown): string {
  return String(value)
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "")
    .replace(/[&<>"']/g, (char) => ENTITIES[char]!);
}

/** An element ID for a run: run IDs are lowercase alphanumerics and underscores already. */
export const anchor = (runId: string): string => `run-${runId.replace(/[^a-z0-9_]/g, "")}`;
