import { spawn, type ChildProcess } from 'node:child_process';

/** A real server process (`src/main.ts <role>`), for tests that need more than one. */
export interface ServerProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * `compiled`: run `dist/src/main.js` (after `npm run build`) instead of the sources under tsx.
 * `nodeArgs`: options for node itself, before the entry (e.g. `--cpu-prof` for a bench).
 * `startTimeoutMs`: how long it may take to print its banner. @defaultValue 60000
 */
export async function startServerProcess(
  role: 'web' | 'worker' | 'all',
  env: Record<string, string>,
  options: { compiled?: boolean; nodeArgs?: string[]; startTimeoutMs?: number } = {},
): Promise<ServerProcess> {
  const entry = [
    ...(options.nodeArgs ?? []),
    ...(options.compiled ? ['dist/src/main.js', role] : ['--import', 'tsx', 'src/main.ts', role]),
  ];
  const child = spawn(process.execPath, entry, {
    // A fresh REDIS_PREFIX unless the test shares one: Redis outlives test runs.
    env: {
      ...process.env,
      PORT: '0',
      LOG_LEVEL: 'warn',
      REDIS_PREFIX: `p${Math.random().toString(36).slice(2, 10)}`,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (out += String(d)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server did not start:\n${out}`)),
      options.startTimeoutMs ?? 60_000,
    );
    const check = () => {
      const m = /Open (http:\/\/[^/\s]+)\//.exec(out);
      if (m || (role === 'worker' && out.includes('Worker is running'))) {
        clearTimeout(timer);
        resolve(m ? m[1]! : '');
      }
    };
    child.stdout!.on('data', check);
    void exited.then(() => reject(new Error(`server exited:\n${out}`)));
  });
  return {
    url,
    child,
    output: () => out,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** What a person gets from signing up in the console of a running server: session and first key. */
export interface HttpSignup {
  cookie: string;
  csrf: string;
  key: string;
  keyId: string;
  workspaceId: string;
}

/** Signs up through `POST /api/console/signup` of a server over HTTP and reveals the first key. */
export async function signUpOverHttp(baseUrl: string, plan: 'free' | 'trial' = 'trial'): Promise<HttpSignup> {
  const signup = await fetch(`${baseUrl}/api/console/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      email: `u${Date.now()}${Math.random().toString(36).slice(2, 6)}@example.com`,
      password: 'correct horse battery staple',
      workspaceName: 'Acme Security',
      plan,
    }),
  });
  if (signup.status !== 201) throw new Error(`signup failed: ${signup.status} ${await signup.text()}`);
  const cookie = signup.headers.get('set-cookie')!.split(';')[0]!;
  const body = (await signup.json()) as { revealUrl: string; csrfToken: string; workspace: { id: string } };
  const reveal = (await (
    await fetch(`${baseUrl}/api/console${body.revealUrl}`, { headers: { cookie } })
  ).json()) as { key: string; keyId: string };
  return {
    cookie,
    csrf: body.csrfToken,
    key: reveal.key,
    keyId: reveal.keyId,
    workspaceId: body.workspace.id,
  };
}
