import type { ChildRequest } from "../types.ts";

/**
 * Whether the child may have the MCP servers of its CLI's settings: not an untrusted or isolated
 * child, nor a read-only one whose tools name no MCP tool (`mcp__…`). A CLI's read-only mode does
 * not stop a tool the user's settings pre-approve, and whether an MCP tool writes is only its
 * server's word.
 */
export function startsMcpServers(request: ChildRequest, readOnly: boolean): boolean {
  const namesMcpTool = (request.profile.tools ?? []).some((tool) => tool.startsWith("mcp__"));
  return request.loading.projectTrusted && !request.loading.isolated && (!readOnly || namesMcpTool);
}
