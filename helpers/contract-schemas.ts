// Generated from src/contract/script-schemas.ts by npm run build:types. Do not edit: the contract is
// the source, and a test fails when this file differs from what it derives.
import type { SchemaObject } from "./types.ts";

/** agent()'s options: external_delegate's input without background, description optional. */
export const AGENT_OPTIONS_SCHEMA: SchemaObject = {
  "type": "object",
  "description": "Options of agent(): external_delegate's input without background, and description optional (default: derived from the prompt). Exactly one of role or subagent_type; harness only with role. Any other field is request_invalid.",
  "properties": {
    "role": {
      "description": "A Flow role: worker, explorer, reviewer, or one from role files.",
      "type": "string"
    },
    "harness": {
      "description": "Who runs the child: pi (default, in-process), claude (Claude Code CLI), codex (Codex CLI), replay (answers from a recorded cassette, no model call) or stub (a value generated from outputSchema, no model call).",
      "type": "string"
    },
    "description": {
      "minLength": 1,
      "maxLength": 200,
      "description": "A short label for the run (3-10 words).",
      "type": "string"
    },
    "prompt": {
      "minLength": 1,
      "description": "The child's task, self-contained unless context asks for history.",
      "type": "string"
    },
    "context": {
      "description": "What the child sees of the parent conversation. The pending tool call is never part of it.",
      "anyOf": [
        {
          "description": "The child sees only its prompt.",
          "type": "object",
          "required": [
            "mode"
          ],
          "properties": {
            "mode": {
              "const": "none",
              "type": "string"
            }
          }
        },
        {
          "description": "The child sees the parent's last N turns, frozen when the call started.",
          "type": "object",
          "required": [
            "mode",
            "turns"
          ],
          "properties": {
            "mode": {
              "const": "recent",
              "type": "string"
            },
            "turns": {
              "minimum": 1,
              "description": "How many of the parent's latest turns the child sees.",
              "type": "integer"
            }
          }
        },
        {
          "description": "The child sees the parent's whole branch, frozen when the call started.",
          "type": "object",
          "required": [
            "mode"
          ],
          "properties": {
            "mode": {
              "const": "full",
              "type": "string"
            }
          }
        }
      ]
    },
    "model": {
      "description": "provider/model-id for the child; default: the parent's model.",
      "type": "string"
    },
    "outputSchema": {
      "description": "A JSON Schema the child's final answer must satisfy; the answer is then parsed JSON.",
      "type": "object",
      "patternProperties": {
        "^(.*)$": {}
      }
    },
    "timeoutMs": {
      "minimum": 1000,
      "description": "Wall-time limit for the child, in milliseconds.",
      "type": "integer"
    },
    "cwd": {
      "description": "Working directory for the child; default: the session's.",
      "type": "string"
    },
    "isolated": {
      "description": "true: the child loads no extension or MCP server of the user or the project, only the tools pi-flow gives it. Default false.",
      "type": "boolean"
    },
    "isolation": {
      "description": "worktree: the child works in its own git worktree of your tree (uncommitted files included); its changes wait for external_runs apply (for /flow apply <runId> in a session not saved to a file).",
      "const": "worktree",
      "type": "string"
    },
    "maxTurns": {
      "minimum": 1,
      "description": "Most model turns the child may take; the next one stops it and the run fails, naming the quota.",
      "type": "integer"
    },
    "maxToolCalls": {
      "minimum": 1,
      "description": "Most tool calls the child may start; the next one is refused, stops it, and the run fails.",
      "type": "integer"
    },
    "resume": {
      "description": "A settled agent run of this session to continue, with its whole conversation and on its harness: the prompt is its next message. Wait for a live run to settle (a running pi child takes steers).",
      "type": "string"
    },
    "subagent_type": {
      "description": "A Pi agent definition (markdown with frontmatter); always the pi harness.",
      "type": "string"
    }
  },
  "required": [
    "prompt"
  ],
  "additionalProperties": false,
  "oneOf": [
    {
      "properties": {
        "role": {
          "description": "A Flow role: worker, explorer, reviewer, or one from role files.",
          "type": "string"
        },
        "subagent_type": false
      },
      "required": [
        "role"
      ]
    },
    {
      "properties": {
        "subagent_type": {
          "description": "A Pi agent definition (markdown with frontmatter); always the pi harness.",
          "type": "string"
        },
        "role": false,
        "harness": false
      },
      "required": [
        "subagent_type"
      ]
    }
  ]
};

/** The part of the contract's run view that readFinal() reads. */
export const RUN_VIEW_SCHEMA: SchemaObject = {
  "description": "The part of a run view (receipt.data.run) readFinal() reads.",
  "type": "object",
  "required": [
    "runId",
    "output"
  ],
  "properties": {
    "runId": {
      "type": "string"
    },
    "output": {
      "type": "object",
      "required": [
        "finalAvailable",
        "delivery"
      ],
      "properties": {
        "delivery": {
          "description": "inline: the value is here. reference: page refs.final. none: no canonical result.",
          "anyOf": [
            {
              "const": "inline",
              "type": "string"
            },
            {
              "const": "reference",
              "type": "string"
            },
            {
              "const": "none",
              "type": "string"
            }
          ]
        },
        "value": {
          "description": "The canonical result, when delivery is inline."
        },
        "finalAvailable": {
          "description": "A complete canonical result exists.",
          "type": "boolean"
        }
      }
    },
    "refs": {
      "description": "Ready-to-call external_runs arguments for this run. Absent in a session not saved to a file, where external_runs cannot answer.",
      "type": "object",
      "properties": {
        "final": {
          "description": "Arguments for external_runs that inspect this run's final view.",
          "type": "object",
          "required": [
            "action",
            "runIds",
            "view"
          ],
          "properties": {
            "action": {
              "const": "inspect",
              "type": "string"
            },
            "runIds": {
              "minItems": 1,
              "maxItems": 1,
              "type": "array",
              "items": {
                "type": "string"
              }
            },
            "view": {
              "const": "final",
              "type": "string"
            }
          }
        }
      }
    }
  }
};
