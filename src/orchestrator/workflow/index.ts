// The workflow wing's front door: finding and checking a workflow script, launching it with its
// children, resuming it (resume/), and what its authors type-check against.
export { projectDeclarations, type RegisteredToolSchema } from "./authoring-types.ts";
export { readCatalog, type Catalog, type RoleInfo, type SavedWorkflowInfo } from "./catalog.ts";
export { checkArgs, listSavedWorkflows, metaPosition, parseSelected, selectWorkflow, SHIPPED_WORKFLOWS_DIR, workflowDirs, type SelectedWorkflow } from "./sources.ts";
export { HANDLED_CHILD_FAILURES, startWorkflow, type StartedWorkflow, type WorkflowLaunch, type WorkflowProgress } from "./start.ts";
export { bindWorkflowTools, callingWorkflowRun, FLOW_ALWAYS_TOOLS, inheritedParentTools, inheritedSharedResources, inheritedSnapshot, MAX_WORKFLOW_DEPTH, nextWorkflowPlace, workflowToolNames, workflowToolSchemas } from "./tools.ts";
export { claimResume, type ResumeClaim } from "./resume/claims.ts";
export { prepareResume } from "./resume/source.ts";
export { launchWorkflow, type AlreadySucceeded, type WorkflowEnvironment, type WorkflowRequest } from "./launch.ts";
export { checkWorkflowSource, literalProblems, requestedTools } from "./script-check.ts";
export { knownNames, literalTargetProblems, type KnownNames } from "./named-targets.ts";
export { formatProblem, type Problem } from "./problem.ts";
