// example:typed-error
const bad = await tools.external_delegate({
  description: "Invalid role check",
  prompt: "Inspect /repo read-only.",
  role: "nonexistent_role",
  harness: "claude",
});
if (!bad.ok) {
  return { stage: "delegate", code: bad.error.code, hasRun: bad.data.run !== null };
}
