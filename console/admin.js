// docindex admin page: organisations and their API keys over the admin API (/admin/v1). The admin
// token lives in sessionStorage only (this tab); every request is same-origin. The DOM is built
// with textContent and createElement, never from HTML strings of API data.
import { el, toast } from './notices.js';

const TOKEN_STORAGE = 'docindex.adminToken';
const PAGE_SIZE = 50;

const state = { token: null, cursor: null, org: null };
const $ = (id) => document.getElementById(id);

class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail ?? `The server answered ${status}.`);
    this.status = status;
    this.code = problem?.code ?? 'error';
  }
}

async function api(method, path, { json, token = state.token } = {}) {
  const headers = { authorization: `Bearer ${token}`, accept: 'application/json' };
  if (json !== undefined) headers['content-type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: json === undefined ? undefined : JSON.stringify(json),
      cache: 'no-store',
      credentials: 'omit',
    });
  } catch {
    throw new ApiError(0, { detail: 'The server could not be reached.' });
  }
  if (response.ok) return response.status === 204 ? null : response.json();
  const problem = await response.json().catch(() => null);
  if (response.status === 401 && token === state.token && state.token !== null) {
    signOut('The admin token was refused. Enter it again.');
  }
  if (response.status === 404 && problem?.code === 'route_not_found') {
    throw new ApiError(404, { detail: 'The admin API is off on this server (ADMIN_TOKEN is not set).' });
  }
  throw new ApiError(response.status, problem);
}

const formatDate = (iso) => (iso ? new Date(iso).toLocaleString() : '—');
const formatNumber = (n) => new Intl.NumberFormat().format(n);

// ---------------------------------------------------------------------------------------------
// Signing in and out

async function signIn(token, { silent = false } = {}) {
  try {
    await api('GET', '/admin/v1/orgs?limit=1', { token });
  } catch (error) {
    if (!silent)
      $('signin-error').textContent = error.status === 401 ? 'That admin token was refused.' : error.message;
    sessionStorage.removeItem(TOKEN_STORAGE);
    return;
  }
  state.token = token;
  sessionStorage.setItem(TOKEN_STORAGE, token);
  $('signin').hidden = true;
  $('dashboard').hidden = false;
  $('session').hidden = false;
  $('admin-token').value = '';
  $('signin-error').textContent = '';
  await loadOrgs();
}

function signOut(message) {
  state.token = null;
  state.org = null;
  sessionStorage.removeItem(TOKEN_STORAGE);
  $('dashboard').hidden = true;
  $('session').hidden = true;
  $('signin').hidden = false;
  $('org-panel').hidden = true;
  $('orgs-body').replaceChildren();
  $('keys-body').replaceChildren();
  $('issued').hidden = true;
  $('signin-error').textContent = message ?? '';
}

// ---------------------------------------------------------------------------------------------
// Organisations

async function loadOrgs({ more = false } = {}) {
  const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (more && state.cursor) query.set('cursor', state.cursor);
  const page = await api('GET', `/admin/v1/orgs?${query}`);
  if (!more) $('orgs-body').replaceChildren();
  for (const org of page.orgs) $('orgs-body').append(orgRow(org));
  state.cursor = page.next_cursor;
  $('orgs-more').hidden = !page.next_cursor;
}

function orgRow(org) {
  const row = el('tr');
  row.dataset.orgId = org.org_id;
  const name = el('td');
  name.append(
    el('div', { text: org.name }),
    el('div', { class: 'muted small input-mono', text: org.org_id }),
  );
  const open = el('button', { class: 'button button-quiet', text: 'Manage' });
  open.type = 'button';
  open.addEventListener('click', () => openOrg(org).catch(reportError));
  const actions = el('td');
  actions.append(open);
  row.append(
    name,
    el('td', { class: 'num', text: formatNumber(org.usage.total_queries) }),
    el('td', { class: 'num', text: formatNumber(org.rate_limit_rpm) }),
    el('td', { text: formatDate(org.created_at) }),
    actions,
  );
  return row;
}

async function openOrg(org) {
  state.org = org;
  $('org-panel').hidden = false;
  $('org-title').textContent = org.name;
  $('org-id').textContent = org.org_id;
  $('rpm-input').value = String(org.rate_limit_rpm);
  $('purge-confirm').value = '';
  $('purge-submit').disabled = true;
  $('purge-receipt').hidden = true;
  await loadKeys();
  $('org-panel').scrollIntoView({ behavior: 'smooth', block: 'start' });
}

async function loadKeys() {
  const { keys } = await api('GET', `/admin/v1/orgs/${encodeURIComponent(state.org.org_id)}/keys`);
  const now = Date.now();
  $('keys-body').replaceChildren(
    ...keys.map((key) => {
      const row = el('tr');
      const expired = key.expires_at !== null && Date.parse(key.expires_at) <= now;
      const status = key.revoked_at ? 'revoked' : expired ? 'expired' : 'active';
      const actions = el('td');
      if (status === 'active') {
        const revoke = el('button', { class: 'button button-danger', text: 'Revoke' });
        revoke.type = 'button';
        revoke.addEventListener('click', () => revokeKey(key).catch(reportError));
        actions.append(revoke);
      }
      row.append(
        el('td', { class: 'input-mono', text: `${key.prefix}…` }),
        el('td', { text: key.scopes.join(', ') }),
        el('td', { text: key.expires_at ? formatDate(key.expires_at) : 'never' }),
        el('td', { text: formatDate(key.created_at) }),
        el('td', { text: status }),
        actions,
      );
      return row;
    }),
  );
}

async function revokeKey(key) {
  if (!window.confirm(`Revoke key ${key.prefix}…? Requests with it fail from now on.`)) return;
  await api('DELETE', `/admin/v1/keys/${encodeURIComponent(key.key_id)}`);
  toast('Key revoked.');
  await loadKeys();
}

function showIssued(lines) {
  $('issued-text').textContent = lines.join('\n');
  $('issued').hidden = false;
}

function reportError(error) {
  toast(error.message, { error: true });
}

// ---------------------------------------------------------------------------------------------
// Wiring

$('signin-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const token = $('admin-token').value.trim();
  if (token) signIn(token);
});
$('sign-out').addEventListener('click', () => signOut());
$('orgs-refresh').addEventListener('click', () => loadOrgs().catch(reportError));
$('orgs-more').addEventListener('click', () => loadOrgs({ more: true }).catch(reportError));

$('create-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const name = $('org-name').value.trim();
  const rpm = $('org-rpm').value;
  try {
    const created = await api('POST', '/admin/v1/orgs', {
      json: { name, ...(rpm ? { rate_limit_rpm: Number(rpm) } : {}) },
    });
    showIssued([`org_id:  ${created.org_id}`, `key_id:  ${created.key_id}`, `api_key: ${created.api_key}`]);
    $('create-form').reset();
    await loadOrgs();
  } catch (error) {
    reportError(error);
  }
});

$('rpm-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  try {
    state.org = await api('PATCH', `/admin/v1/orgs/${encodeURIComponent(state.org.org_id)}`, {
      json: { rate_limit_rpm: Number($('rpm-input').value) },
    });
    toast(`Rate limit set to ${formatNumber(state.org.rate_limit_rpm)} requests per minute.`);
    await loadOrgs();
  } catch (error) {
    reportError(error);
  }
});

$('key-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const scopes = [...document.querySelectorAll('input[name="scope"]:checked')].map((box) => box.value);
  if (scopes.length === 0) return toast('Choose at least one scope.', { error: true });
  const expires = $('key-expires').value;
  try {
    const issued = await api('POST', `/admin/v1/orgs/${encodeURIComponent(state.org.org_id)}/keys`, {
      json: { scopes, ...(expires ? { expires_at: new Date(expires).toISOString() } : {}) },
    });
    showIssued([
      `org_id:  ${state.org.org_id}`,
      `key_id:  ${issued.key_id}`,
      `api_key: ${issued.api_key}`,
      `scopes:  ${issued.scopes.join(',')}`,
      `expires: ${issued.expires_at ?? 'never'}`,
    ]);
    $('issued').scrollIntoView({ behavior: 'smooth', block: 'start' });
    await loadKeys();
  } catch (error) {
    reportError(error);
  }
});

$('purge-confirm').addEventListener('input', () => {
  $('purge-submit').disabled = $('purge-confirm').value !== state.org?.name;
});

$('purge-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  if ($('purge-confirm').value !== state.org?.name) return;
  try {
    const receipt = await api('DELETE', `/admin/v1/orgs/${encodeURIComponent(state.org.org_id)}`);
    $('purge-receipt').textContent = JSON.stringify(receipt, null, 2);
    $('purge-receipt').hidden = false;
    $('purge-submit').disabled = true;
    $('keys-body').replaceChildren();
    toast(`${state.org.name} purged.`);
    state.org = null;
    await loadOrgs();
  } catch (error) {
    reportError(error);
  }
});

const saved = sessionStorage.getItem(TOKEN_STORAGE);
if (saved) signIn(saved, { silent: true });
