/**
 * A seller as the dashboard API sees one: registers over HTTP, keeps the session cookie
 * and CSRF token, and creates stores, staff and API keys through the real routes.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';

export interface Seller {
  baseUrl: string;
  email: string;
  password: string;
  userId: string;
  cookie: string;
  csrfToken: string;
}

/** A documentation-range address (RFC 5737) per call: each test client its own rate-limit window. */
export function clientIp(): string {
  const bytes = randomBytes(2);
  return `203.0.${bytes[0]}.${bytes[1]}`;
}

export function uniqueEmail(prefix = 'seller'): string {
  return `${prefix}-${randomBytes(5).toString('hex')}@example.test`;
}

export function sessionCookieFrom(response: Response): string {
  const cookie = response.headers.getSetCookie().find((value) => value.startsWith('svc_session='));
  expect(cookie, 'a svc_session cookie').toBeDefined();
  return cookie!.split(';')[0]!;
}

export async function registerSeller(baseUrl: string, email = uniqueEmail()): Promise<Seller> {
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const response = await fetch(`${baseUrl}/api/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp() },
    body: JSON.stringify({ email, password }),
  });
  expect(response.status).toBe(201);
  const body = await response.json();
  return {
    baseUrl,
    email,
    password,
    userId: body.user.id,
    cookie: sessionCookieFrom(response),
    csrfToken: body.csrfToken,
  };
}

/** A dashboard call with the session cookie and, for unsafe methods, the CSRF token. */
export function dashboard(seller: Seller, method: string, path: string, body?: unknown): Promise<Response> {
  return dashboardInMode(seller, 'live', method, path, body);
}

/** A dashboard call in one mode: `test` sends `X-Svc-Mode: test`, as the dashboard's Test mode toggle does. */
export function dashboardInMode(
  seller: Seller,
  mode: 'live' | 'test',
  method: string,
  path: string,
  body?: unknown,
): Promise<Response> {
  const headers: Record<string, string> = { cookie: seller.cookie };
  if (mode === 'test') headers['x-svc-mode'] = 'test';
  if (method !== 'GET') headers['x-csrf-token'] = seller.csrfToken;
  if (body !== undefined) headers['content-type'] = 'application/json';
  return fetch(`${seller.baseUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

export async function createStoreFor(seller: Seller, name = 'Shop'): Promise<{ id: string; subdomain: string }> {
  const subdomain = `shop-${randomBytes(5).toString('hex')}`;
  const response = await dashboard(seller, 'POST', '/api/dashboard/stores', { name, subdomain });
  expect(response.status).toBe(201);
  return response.json();
}

export async function createKeyFor(
  seller: Seller,
  opts: { scopes: string[]; storeIds: string[]; expiresAt?: string; mode?: 'live' | 'test' },
): Promise<{ key: string; id: string }> {
  const response = await dashboard(seller, 'POST', '/api/dashboard/api-keys', { name: 'test key', ...opts });
  expect(response.status).toBe(201);
  const body = await response.json();
  return { key: body.key, id: body.apiKey.id };
}

export async function addStaff(owner: Seller, storeId: string, staff: Seller, permissions: string[]): Promise<string> {
  const response = await dashboard(owner, 'POST', `/api/dashboard/stores/${storeId}/members`, {
    email: staff.email,
    permissions,
  });
  expect(response.status).toBe(201);
  return (await response.json()).id;
}

export function merchantGet(baseUrl: string, key: string | undefined, path: string): Promise<Response> {
  return fetch(`${baseUrl}/api/merchant/v1${path}`, {
    headers: { accept: 'application/json', ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) },
  });
}
