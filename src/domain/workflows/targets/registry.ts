import { github } from './github/index.js';
import { jira } from './jira/index.js';
import { slack } from './slack/index.js';
import type { TargetKind } from './target-kind.js';
import { webhook } from './webhook/index.js';

/**
 * Every kind of workflow target, one line each; every other list of kinds (the types below, the
 * request and response schemas, the console's, the default rate limits, the database's CHECK,
 * which a test compares with this) derives from it. A new target is a folder beside these and a
 * line here.
 */
export const TARGETS = { jira, github, webhook, slack } as const;

export type WorkflowKind = keyof typeof TARGETS;

/** The kinds in the registry's order. */
export const WORKFLOW_KINDS = Object.keys(TARGETS) as readonly WorkflowKind[];

type ConfigOf<K> = K extends TargetKind<string, infer T, { kind: string }> ? T : never;
type InputOf<K> = K extends TargetKind<string, { kind: string }, infer I> ? I : never;

/** A target as stored on a workflow (no credential), one of the registry's kinds. */
export type WorkflowTarget = { [K in WorkflowKind]: ConfigOf<(typeof TARGETS)[K]> }[WorkflowKind];

/** A target as a create request gives it, the credential in clear. */
export type TargetInput = { [K in WorkflowKind]: InputOf<(typeof TARGETS)[K]> }[WorkflowKind];

/** Any kind's entry, seen through the shape they share (the config and input of that kind). */
export type AnyTargetKind = TargetKind<WorkflowKind, WorkflowTarget, TargetInput>;

/** The registry's entry for `kind`. */
export function targetKind(kind: WorkflowKind): AnyTargetKind {
  return TARGETS[kind] as unknown as AnyTargetKind;
}
