import type { DeliveryCase } from '../types.js';
import type { TargetResult } from './target-result.js';

/** An external issue: its id on the target (Jira key, GitHub number) and its web address. */
export interface ExternalIssue {
  externalId: string;
  url: string;
}

/**
 * What a delivery needs of an issue tracker (Jira Cloud, GitHub Issues). Every call returns a
 * result and never throws; `marker` is the link's idempotency marker the issue carries (a Jira
 * label, a hidden line in a GitHub body) so `find` can recover an issue created before a crash.
 */
export interface IssueAdapter {
  find(marker: string): Promise<TargetResult<{ issue: ExternalIssue | null }>>;
  create(c: DeliveryCase, marker: string): Promise<TargetResult<{ issue: ExternalIssue }>>;
  update(c: DeliveryCase, externalId: string, marker: string): Promise<TargetResult<object>>;
  /** Closes (`closed`) or reopens (`open`) the issue; `c.status` picks GitHub's state reason. */
  setState(c: DeliveryCase, externalId: string, state: 'open' | 'closed'): Promise<TargetResult<object>>;
}
