import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { FastifyInstance } from 'fastify';
import { hashPassword } from '../../src/domain/workspaces/password.js';
import type { Role } from '../../src/domain/workspaces/roles.js';

/** A signed-in console member: the cookie and CSRF token of their session. */
export interface MemberSession {
  userId: string;
  email: string;
  password: string;
  cookie: string;
  csrf: string;
}

/** Signs in through `POST /api/console/login`. */
export async function logIn(
  app: FastifyInstance,
  email: string,
  password: string,
): Promise<{ cookie: string; csrf: string; workspaceId: string }> {
  const res = await app.inject({ method: 'POST', url: '/api/console/login', payload: { email, password } });
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.statusCode} ${res.body}`);
  const body = res.json() as { csrfToken: string; workspaceId: string };
  return {
    cookie: String(res.headers['set-cookie']).split(';')[0]!,
    csrf: body.csrfToken,
    workspaceId: body.workspaceId,
  };
}

/**
 * A person put straight into a workspace's tables with `role`, then signed in: the state an
 * accepted invitation leaves, for tests of what each role may do (the invitation tests go the
 * whole way through the API).
 */
export async function seedMember(
  app: FastifyInstance,
  databaseUrl: string,
  workspaceId: string,
  role: Role,
): Promise<MemberSession> {
  const userId = randomUUID();
  const email = `${role}-${userId.slice(0, 8)}@example.com`;
  const password = 'another horse battery staple';
  const client = new pg.Client(databaseUrl);
  await client.connect();
  try {
    await client.query('INSERT INTO console_users (id, email, password_hash) VALUES ($1, $2, $3)', [
      userId,
      email,
      await hashPassword(password),
    ]);
    await client.query('INSERT INTO memberships (user_id, workspace_id, role) VALUES ($1, $2, $3)', [
      userId,
      workspaceId,
      role,
    ]);
  } finally {
    await client.end();
  }
  const { cookie, csrf } = await logIn(app, email, password);
  return { userId, email, password, cookie, csrf };
}
