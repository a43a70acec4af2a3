import { getAgentDir } from "@earendil-works/pi-coding-agent";
import { needsTrustDecision, resolveProjectTrust, TRUST_HINT, UNTRUSTED_LEFT_OUT } from "../trust/project-trust.ts";
/**
 * The project's trust for this `flow` command, as `pi -p` decides it (project-trust.ts). When the
 * project is untrusted and holds files that wait on it, one line on stderr says what is left out
 * and how to trust it.
 */
export function commandProjectTrust(override: boolean | undefined, cwd: string, command: string): boolean {
  const needed = needsTrustDecision(cwd);
  const trusted = resolveProjectTrust(cwd, getAgentDir(), override, needed);
  if (!trusted && needed) {
    process.stderr.write(`flow ${command}: this project is not trusted, so ${UNTRUSTED_LEFT_OUT}; ${TRUST_HINT}.\n`);
  }
  return trusted;
}
