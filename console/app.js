// docindex console: a single page over the same /v1 API the client and CLI use. The API key lives
// in sessionStorage only (this tab); every request is same-origin. No framework, no build step:
// the DOM is built with textContent and createElement, never from HTML strings of API data.
import { el, toast } from './notices.js';

const KEY_STORAGE = 'docindex.apiKey';
const PAGE_SIZE = 25;
const POLL_MS = 1500;
const UPLOAD_CONCURRENCY = 3;
const SVG_NS = 'http://www.w3.org/2000/svg';

const state = {
  key: null,
  /** Documents shown in the table, newest first. */
  docs: [],
  cursor: null,
  pollTimer: null,
  /** The document the dialog shows, or null. */
  open: null,
  /** Counts queries sent: only the answer to the latest one is shown. */
  querySeq: 0,
  /** The partition the picker chose ('' for every partition the key may see). */
  partition: '',
};

const $ = (id) => document.getElementById(id);

// ---------------------------------------------------------------------------------------------
// API access

class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail ?? `The server answered ${status}.`);
    this.status = status;
    this.code = problem?.code ?? 'error';
    this.problem = problem;
  }
}

async function api(method, path, { json, form, idempotent = false, key = state.key } = {}) {
  const headers = { authorization: `Bearer ${key}`, accept: 'application/json' };
  if (json !== undefined) headers['content-type'] = 'application/json';
  // One key per operation, reused if it is retried, so a retry never queues a document twice.
  if (idempotent) headers['idempotency-key'] = newId();
  for (let attempt = 0; ; attempt++) {
    let response;
    try {
      response = await fetch(path, {
        method,
        headers,
        body: json !== undefined ? JSON.stringify(json) : form,
        cache: 'no-store',
        credentials: 'omit',
      });
    } catch {
      throw new ApiError(0, { code: 'network_error', detail: 'The server could not be reached.' });
    }
    if (response.ok) return response.status === 204 ? null : response.json();
    const retryAfter = Number(response.headers.get('retry-after'));
    if ((response.status === 429 || response.status === 503) && attempt < 2 && retryAfter <= 10) {
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, retryAfter) * 1000));
      continue;
    }
    const problem = await response.json().catch(() => null);
    const error = new ApiError(response.status, problem);
    if (response.status === 401 && key === state.key && state.key !== null) {
      signOut('Your API key was refused (it may have been revoked). Enter another.');
    }
    throw error;
  }
}

function newId() {
  if (globalThis.crypto?.randomUUID) return crypto.randomUUID();
  // randomUUID needs a secure context; getRandomValues does not.
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// ---------------------------------------------------------------------------------------------
// Signing in and out

async function signIn(key, { silent = false } = {}) {
  const submit = $('signin-submit');
  submit.disabled = true;
  $('signin-error').textContent = '';
  try {
    // The organisation's name is for the header; without it (a key lacking `read`), the id.
    const [usage, org] = await Promise.all([
      api('GET', '/v1/usage', { key }),
      api('GET', '/v1/org', { key }).catch(() => null),
    ]);
    state.key = key;
    sessionStorage.setItem(KEY_STORAGE, key);
    $('session-org').textContent = `${org?.name ?? usage.org_id} · ${key.slice(0, 8)}…`;
    $('session-org').title =
      `Organisation ${usage.org_id}${org ? `, key ${org.key.key_id} (${org.key.scopes.join(', ')})` : ''}`;
    $('signin').hidden = true;
    $('session').hidden = false;
    $('dashboard').hidden = false;
    renderUsage(usage);
    await loadProviders();
    await loadPartitions();
    await loadDocuments({ reset: true });
    loadWebhooks();
    loadEvaluations();
    loadSources();
    $('main').focus();
  } catch (error) {
    sessionStorage.removeItem(KEY_STORAGE);
    if (!silent) {
      $('signin-error').textContent =
        error.status === 401 ? 'That key was not accepted. Check it and try again.' : error.message;
      $('api-key').focus();
    }
  } finally {
    submit.disabled = false;
  }
}

function signOut(message) {
  state.key = null;
  state.docs = [];
  state.cursor = null;
  state.partition = '';
  clearTimeout(state.pollTimer);
  sessionStorage.removeItem(KEY_STORAGE);
  $('dashboard').hidden = true;
  $('session').hidden = true;
  $('signin').hidden = false;
  $('api-key').value = '';
  $('signin-error').textContent = message ?? '';
  state.querySeq += 1; // an answer still on its way is not shown
  $('results').replaceChildren();
  $('results-summary').textContent = '';
  $('api-key').focus();
}

// ---------------------------------------------------------------------------------------------
// Usage chart

/**
 * What the server's providers allow, from /readyz (which names the providers queries call): the
 * rerank toggle shows when it has a reranker, and semantic and hybrid search can be chosen only
 * when it has an embedding provider. Unknown (no answer): every mode stays on offer, and a
 * refusal from the server says why (showQueryError).
 */
async function loadProviders() {
  try {
    const response = await fetch('/readyz', { cache: 'no-store', credentials: 'omit' });
    const providers = (await response.json())?.providers;
    $('rerank-toggle').hidden = !providers?.rerank;
    if (providers) offerModes(Boolean(providers.embeddings));
  } catch {
    $('rerank-toggle').hidden = true;
  }
}

/** Semantic and hybrid stay in the list without an embedding provider, but cannot be chosen, saying why. */
function offerModes(semantic) {
  const select = $('mode-input');
  for (const option of select.options) {
    option.dataset.label ??= option.textContent;
    if (option.value === '') {
      option.textContent = `Default (${semantic ? 'hybrid' : 'keyword'})`;
    } else if (option.dataset.needs === 'embeddings') {
      option.disabled = !semantic;
      option.textContent = semantic
        ? option.dataset.label
        : `${option.dataset.label} (needs an embedding provider)`;
    }
  }
  if (select.selectedOptions[0]?.disabled) select.value = '';
}

async function loadUsage() {
  const only = state.partition ? `?partition=${encodeURIComponent(state.partition)}` : '';
  try {
    renderUsage(await api('GET', `/v1/usage${only}`));
  } catch (error) {
    if (error.status !== 401) toast(`Could not load usage: ${error.message}`, { error: true });
  }
}

function renderUsage(usage) {
  const days = [...usage.daily].reverse(); // oldest first: newest on the right
  const today = usage.daily[0]?.count ?? 0;
  $('stat-total').textContent = formatNumber(usage.total_queries);
  $('stat-today').textContent = formatNumber(today);
  $('stat-rate').textContent = formatNumber(usage.rate_limit_rpm);
  if (days.length > 0) {
    $('usage-range').textContent = `${formatDay(days[0].date)} – ${formatDay(days.at(-1).date)} (UTC)`;
  }
  drawChart($('usage-chart'), days);
  $('usage-chart-desc').textContent =
    `Bar chart of queries per day for the last ${usage.period_days} days, oldest on the left: ` +
    `${usage.total_queries} in total, ${today} today.`;
}

function drawChart(svg, days) {
  const width = 720;
  const height = 200;
  const margin = { top: 18, right: 6, bottom: 24, left: 44 };
  const plotW = width - margin.left - margin.right;
  const plotH = height - margin.top - margin.bottom;
  const max = Math.max(0, ...days.map((d) => d.count));
  const step = niceStep(Math.max(max, 4) / 4);
  const top = Math.max(step * 4, Math.ceil(max / step) * step);
  const y = (value) => margin.top + plotH - (value / top) * plotH;
  const slot = plotW / Math.max(days.length, 1);
  const barW = Math.max(4, slot * 0.62);

  const nodes = [];
  for (let tick = 0; tick <= top; tick += step) {
    nodes.push(
      svgEl('line', { class: 'grid', x1: margin.left, x2: width - margin.right, y1: y(tick), y2: y(tick) }),
    );
    const label = svgEl('text', {
      class: 'axis-label',
      x: margin.left - 8,
      y: y(tick) + 4,
      'text-anchor': 'end',
    });
    label.textContent = formatNumber(tick);
    nodes.push(label);
  }
  const labelled = new Set();
  const nonZero = days.filter((d) => d.count > 0);
  if (nonZero.length <= 12) for (const d of nonZero) labelled.add(d.date);
  else labelled.add(days.reduce((a, b) => (b.count > a.count ? b : a)).date);
  days.forEach((day, index) => {
    const isToday = index === days.length - 1;
    if (isToday && day.count > 0) labelled.add(day.date);
    const x = margin.left + index * slot + (slot - barW) / 2;
    const barH = day.count === 0 ? 2 : Math.max(3, (day.count / top) * plotH);
    const group = svgEl('g', { class: 'bar-group' });
    const title = svgEl('title');
    title.textContent = `${formatDay(day.date)}: ${day.count} ${day.count === 1 ? 'query' : 'queries'}`;
    group.append(title);
    group.append(
      svgEl('rect', {
        class: `bar${isToday ? ' today' : ''}${day.count === 0 ? ' zero' : ''}`,
        x,
        y: margin.top + plotH - barH,
        width: barW,
        height: barH,
        rx: Math.min(3, barW / 3),
        'data-date': day.date,
        'data-count': day.count,
      }),
    );
    if (labelled.has(day.date)) {
      const value = svgEl('text', { class: 'bar-value', x: x + barW / 2, y: margin.top + plotH - barH - 5 });
      value.textContent = formatNumber(day.count);
      group.append(value);
    }
    nodes.push(group);
    if (index % 7 === 0 || isToday) {
      if (!isToday && index > days.length - 5) return; // keep clear of the "Today" label
      const label = svgEl('text', {
        class: 'axis-label',
        x: x + barW / 2,
        y: height - 6,
        'text-anchor': isToday ? 'end' : 'middle',
      });
      if (isToday) label.setAttribute('x', String(x + barW));
      label.textContent = isToday ? 'Today' : formatDay(day.date);
      nodes.push(label);
    }
  });
  svg.replaceChildren(...nodes);
}

function niceStep(raw) {
  const power = 10 ** Math.floor(Math.log10(Math.max(raw, 1)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * power >= raw) return Math.max(1, m * power);
  return 10 * power;
}

function svgEl(name, attributes = {}) {
  const el = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attributes)) el.setAttribute(key, String(value));
  return el;
}

// ---------------------------------------------------------------------------------------------
// Documents table

// ---------------------------------------------------------------------------------------------
// Partitions: the picker restricts the documents list, the search and the usage to one partition,
// and new documents go into it.

/** The partition fields of an ingest or a query: none when the picker shows every partition. */
const partitionField = () => (state.partition ? { partition: state.partition } : {});
const partitionsField = () => (state.partition ? { partitions: [state.partition] } : {});

async function loadPartitions() {
  try {
    const { partitions } = await api('GET', '/v1/partitions');
    const picker = $('partition-input');
    const names = partitions.map((p) => p.name);
    // A chosen partition stays on offer while it is chosen, even with no document left in it.
    if (state.partition && !names.includes(state.partition)) names.push(state.partition);
    const options = names.sort().map((name) => {
      const known = partitions.find((p) => p.name === name);
      const option = el('option', {
        text: known ? `${name} (${formatNumber(known.documents)})` : name,
      });
      option.value = name;
      return option;
    });
    const all = el('option', { text: 'All partitions' });
    all.value = '';
    picker.replaceChildren(all, ...options);
    picker.value = state.partition;
  } catch (error) {
    if (error.status !== 401) toast(`Could not load partitions: ${error.message}`, { error: true });
  }
}

function choosePartition() {
  state.partition = $('partition-input').value;
  loadDocuments({ reset: true });
  loadUsage();
  searchAgain();
}

async function loadDocuments({ reset = false } = {}) {
  const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (!reset && state.cursor) params.set('cursor', state.cursor);
  if (state.partition) params.set('partitions', state.partition);
  try {
    const page = await api('GET', `/v1/documents?${params}`);
    state.docs = reset ? page.documents : mergeDocs(state.docs, page.documents);
    state.cursor = page.next_cursor;
    renderDocuments();
    schedulePoll();
  } catch (error) {
    if (error.status !== 401) toast(`Could not load documents: ${error.message}`, { error: true });
  }
}

function mergeDocs(existing, incoming) {
  const byId = new Map(existing.map((doc) => [doc.id, doc]));
  const added = [];
  for (const doc of incoming) {
    if (byId.has(doc.id)) byId.set(doc.id, doc);
    else added.push(doc);
  }
  return [...existing.map((doc) => byId.get(doc.id)), ...added];
}

/** Puts freshly ingested documents at the top of the table. */
async function showNewDocuments(ids) {
  const page = await api('GET', `/v1/documents?limit=100&ids=${ids.join(',')}`);
  const fresh = new Set(page.documents.map((doc) => doc.id));
  state.docs = [...page.documents, ...state.docs.filter((doc) => !fresh.has(doc.id))];
  renderDocuments();
  schedulePoll();
  loadPartitions(); // a first document may have opened a partition
}

const isPending = (doc) => doc.status === 'queued' || doc.status === 'processing';

function schedulePoll() {
  clearTimeout(state.pollTimer);
  const pending = state.docs.filter(isPending);
  $('documents-note').textContent = pending.length > 0 ? `Processing ${pending.length}… refreshing` : '';
  if (pending.length === 0 || state.key === null) return;
  state.pollTimer = setTimeout(pollPending, POLL_MS);
}

async function pollPending() {
  const pending = state.docs.filter(isPending).slice(0, 100);
  if (pending.length === 0) return;
  try {
    const page = await api('GET', `/v1/documents?limit=100&ids=${pending.map((doc) => doc.id).join(',')}`);
    const latest = new Map(page.documents.map((doc) => [doc.id, doc]));
    state.docs = state.docs.flatMap((doc) => {
      if (!pending.includes(doc)) return [doc];
      const next = latest.get(doc.id);
      if (!next) return []; // deleted elsewhere
      if (next.status === 'failed' && doc.status !== 'failed') {
        toast(`${documentName(next)} failed: ${next.error?.message ?? 'unknown error'}`, { error: true });
      }
      return [next];
    });
    renderDocuments();
  } catch (error) {
    if (error.status === 401) return;
  }
  schedulePoll();
}

function renderDocuments() {
  const rows = state.docs.map(documentRow);
  $('documents-body').replaceChildren(...rows);
  $('documents-empty').hidden = state.docs.length > 0;
  $('documents-table').hidden = state.docs.length === 0;
  $('documents-more').hidden = !state.cursor;
}

function documentRow(doc) {
  const tr = document.createElement('tr');
  tr.dataset.id = doc.id;
  tr.dataset.status = doc.status;
  // The whole row opens the document (click, or Enter once focused); its buttons do their own thing.
  tr.className = 'doc-row';
  tr.tabIndex = 0;
  tr.addEventListener('click', (event) => {
    if (!event.target.closest('button, a')) openDocument(doc);
  });
  tr.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && event.target === tr) {
      event.preventDefault();
      openDocument(doc);
    }
  });

  const nameCell = el('td');
  nameCell.append(el('div', { class: 'doc-name', text: documentName(doc) }));
  const idLine = el('div', { class: 'doc-id', text: doc.id });
  const partition = el('span', { class: 'doc-partition', text: doc.partition });
  partition.title = 'Partition';
  idLine.append(partition);
  if (doc.access) {
    // Only these principals (and requests acting for none) see it: the list is in the title.
    const access = el('span', {
      class: 'doc-access',
      text: doc.access.length === 1 ? '1 principal' : `${doc.access.length} principals`,
    });
    access.title = `Access list: ${doc.access.join(', ')}`;
    idLine.append(access);
  }
  nameCell.append(idLine);
  const chips = Object.entries(doc.metadata).filter(([key]) => key !== 'title');
  if (chips.length > 0) {
    const list = el('div', { class: 'chips' });
    for (const [key, value] of chips.slice(0, 4))
      list.append(el('span', { class: 'chip', text: `${key}: ${value}` }));
    if (chips.length > 4) list.append(el('span', { class: 'chip', text: `+${chips.length - 4}` }));
    nameCell.append(list);
  }

  const statusCell = el('td', { class: 'status-cell' });
  statusCell.append(el('span', { class: `badge badge-${doc.status}`, text: doc.status }));
  if (doc.error) {
    const failure = el('div', { class: 'failure' });
    failure.append(el('code', { text: doc.error.code }), document.createTextNode(` ${doc.error.message}`));
    statusCell.append(failure);
  }

  const chunks = el('td', {
    class: 'num',
    text: doc.chunk_count === null ? '–' : formatNumber(doc.chunk_count),
  });
  const size = el('td', {
    class: 'num',
    text: doc.source.bytes === null ? '–' : formatBytes(doc.source.bytes),
  });
  if (doc.token_count !== null) size.title = `${formatNumber(doc.token_count)} tokens`;
  const added = el('td', { class: 'muted', text: relativeTime(doc.created_at) });
  added.title = doc.created_at;

  const actions = el('td', { class: 'num actions' });
  // A failed file or URL can be extracted again from its original (a text has nothing more to give).
  if (doc.status === 'failed' && doc.source.type !== 'text') {
    const again = el('button', { class: 'button button-quiet', text: 'Reprocess' });
    again.type = 'button';
    again.title = 'Extract the original again, as a new version';
    again.setAttribute('aria-label', `Reprocess ${documentName(doc)}`);
    again.addEventListener('click', () => reprocessDocument(doc, again));
    actions.append(again);
  }
  const open = el('button', { class: 'button button-quiet', text: 'Open' });
  open.type = 'button';
  open.setAttribute('aria-label', `Open ${documentName(doc)}`);
  open.addEventListener('click', () => openDocument(doc));
  actions.append(open);
  const remove = el('button', { class: 'button button-quiet button-danger', text: 'Delete' });
  remove.type = 'button';
  remove.setAttribute('aria-label', `Delete ${documentName(doc)}`);
  remove.addEventListener('click', () => deleteDocument(doc));
  actions.append(remove);

  tr.append(nameCell, statusCell, chunks, size, added, actions);
  return tr;
}

/** The document dialog: its metadata to edit and, once ready, the chunks it was indexed as. */
async function openDocument(doc) {
  state.open = doc;
  $('dialog-title').textContent = documentName(doc);
  $('dialog-id').textContent =
    `${doc.id} · version ${doc.version}` +
    (doc.pending_version ? ` · version ${doc.pending_version.version} ${doc.pending_version.status}` : '');
  $('dialog-access').textContent = doc.access
    ? `Access list: ${doc.access.join(', ')}. Requests acting for other principals do not see it.`
    : `No access list: every key that may see the partition ${doc.partition} sees it.`;
  $('metadata-input').value = JSON.stringify(doc.metadata, null, 2);
  $('metadata-error').textContent = '';
  $('chunk-list').replaceChildren();
  $('document-dialog').showModal();
  if (doc.status !== 'ready') {
    $('chunks-note').textContent = `No chunks to show: the document is ${doc.status}.`;
    return;
  }
  $('chunks-note').textContent = 'Loading…';
  try {
    const items = [];
    let cursor = null;
    // At most 500 chunks: enough to see what was indexed without loading a book into the page.
    do {
      const query = `limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = await api('GET', `/v1/documents/${encodeURIComponent(doc.id)}/chunks?${query}`);
      for (const chunk of page.chunks) {
        const item = el('li');
        const pages =
          chunk.page_start === null
            ? ''
            : chunk.page_start === chunk.page_end
              ? ` · page ${chunk.page_start}`
              : ` · pages ${chunk.page_start}–${chunk.page_end}`;
        item.append(
          el('span', {
            class: 'chunk-meta',
            text: `chunk ${chunk.index} · ${chunk.token_count} tokens${pages}`,
          }),
        );
        item.append(document.createTextNode(chunk.text));
        items.push(item);
      }
      cursor = page.next_cursor;
    } while (cursor && items.length < 500);
    if (state.open !== doc) return;
    $('chunk-list').replaceChildren(...items);
    $('chunks-note').textContent =
      `${items.length}${cursor ? '+' : ''} ${items.length === 1 ? 'chunk' : 'chunks'}`;
  } catch (error) {
    $('chunks-note').textContent = `Could not load the chunks: ${error.message}`;
  }
}

async function saveMetadata(event) {
  event.preventDefault();
  const doc = state.open;
  if (!doc) return;
  let wanted;
  try {
    wanted = JSON.parse($('metadata-input').value || '{}');
  } catch {
    $('metadata-error').textContent = 'That is not valid JSON.';
    return;
  }
  if (typeof wanted !== 'object' || wanted === null || Array.isArray(wanted)) {
    $('metadata-error').textContent = 'Metadata is a JSON object, such as {"team": "hr"}.';
    return;
  }
  // A key left out is removed (null), the others set: the PATCH merge of the API.
  const patch = { ...wanted };
  for (const key of Object.keys(doc.metadata)) if (!(key in wanted)) patch[key] = null;
  try {
    const updated = await api('PATCH', `/v1/documents/${encodeURIComponent(doc.id)}`, {
      json: { metadata: patch },
    });
    state.docs = state.docs.map((d) => (d.id === updated.id ? updated : d));
    state.open = updated;
    renderDocuments();
    $('metadata-error').textContent = '';
    toast(`Saved the metadata of ${documentName(updated)}`);
  } catch (error) {
    $('metadata-error').textContent = error.message;
  }
}

async function reprocessDocument(doc, button) {
  button.disabled = true;
  try {
    await api('POST', `/v1/documents/${encodeURIComponent(doc.id)}/reprocess`, {
      json: {},
      idempotent: true,
    });
    toast(`Reprocessing ${documentName(doc)}`);
    await refreshDocuments([doc.id]);
  } catch (error) {
    button.disabled = false;
    toast(`Could not reprocess ${documentName(doc)}: ${error.message}`, { error: true });
  }
}

/** Reloads these documents where they are in the table, and polls them while they are pending. */
async function refreshDocuments(ids) {
  const page = await api('GET', `/v1/documents?limit=100&ids=${ids.join(',')}`);
  const latest = new Map(page.documents.map((doc) => [doc.id, doc]));
  state.docs = state.docs.map((doc) => latest.get(doc.id) ?? doc);
  renderDocuments();
  schedulePoll();
}

async function deleteDocument(doc) {
  if (!window.confirm(`Delete “${documentName(doc)}”? Its chunks stop matching queries at once.`)) return;
  try {
    await api('DELETE', `/v1/documents/${encodeURIComponent(doc.id)}`);
    state.docs = state.docs.filter((d) => d.id !== doc.id);
    renderDocuments();
    toast(`Deleted ${documentName(doc)}`);
  } catch (error) {
    toast(`Could not delete: ${error.message}`, { error: true });
  }
}

function documentName(doc) {
  return (
    doc.source.filename ??
    doc.source.url ??
    doc.metadata.filename ??
    doc.metadata.title ??
    (doc.source.type === 'text' ? 'Text document' : doc.id)
  );
}

// ---------------------------------------------------------------------------------------------
// Adding documents

async function uploadFiles(files) {
  if (files.length === 0) return;
  toast(files.length === 1 ? `Uploading ${files[0].name}…` : `Uploading ${files.length} files…`);
  const queue = [...files];
  const ids = [];
  const lanes = Array.from({ length: Math.min(UPLOAD_CONCURRENCY, queue.length) }, async () => {
    while (queue.length > 0) {
      const file = queue.shift();
      const form = new FormData();
      form.append('file', file, file.name);
      if (state.partition) form.append('partition', state.partition);
      try {
        const ack = await api('POST', '/v1/ingest/file', { form, idempotent: true });
        ids.push(...ack.document_ids);
      } catch (error) {
        toast(`${file.name}: ${error.message}`, { error: true });
      }
    }
  });
  await Promise.all(lanes);
  if (ids.length > 0) {
    toast(`Queued ${ids.length} ${ids.length === 1 ? 'file' : 'files'} for processing`);
    await showNewDocuments(ids);
  }
}

async function ingestUrl(event) {
  event.preventDefault();
  const input = $('url-input');
  const url = input.value.trim();
  if (!url) return input.focus();
  await submitting(event.currentTarget, async () => {
    const ack = await api('POST', '/v1/ingest/url', {
      json: { url, ...partitionField() },
      idempotent: true,
    });
    input.value = '';
    toast('URL queued: the server is downloading it');
    await showNewDocuments(ack.document_ids);
  });
}

async function ingestText(event) {
  event.preventDefault();
  const text = $('text-input').value;
  const title = $('text-title').value.trim();
  if (!text.trim()) return $('text-input').focus();
  await submitting(event.currentTarget, async () => {
    const doc = title ? { text, metadata: { title } } : { text };
    const ack = await api('POST', '/v1/ingest', {
      json: { documents: [doc], ...partitionField() },
      idempotent: true,
    });
    $('text-input').value = '';
    $('text-title').value = '';
    toast('Text queued for processing');
    await showNewDocuments(ack.document_ids);
  });
}

/** Runs a form's work with its button disabled; a failure is written in the form (else a notice). */
async function submitting(form, work) {
  const button = form.querySelector('button[type="submit"]');
  const problem = form.querySelector('.field-error');
  button.disabled = true;
  if (problem) problem.textContent = '';
  try {
    await work();
  } catch (error) {
    if (problem) problem.textContent = error.message;
    else toast(error.message, { error: true });
  } finally {
    button.disabled = false;
  }
}

function setUpDropzone() {
  const zone = $('dropzone');
  const input = $('file-input');
  input.addEventListener('change', () => {
    uploadFiles([...input.files]);
    input.value = '';
  });
  let depth = 0;
  zone.addEventListener('dragenter', (event) => {
    event.preventDefault();
    depth += 1;
    zone.classList.add('dragging');
  });
  zone.addEventListener('dragover', (event) => {
    event.preventDefault();
    event.dataTransfer.dropEffect = 'copy';
  });
  zone.addEventListener('dragleave', () => {
    depth = Math.max(0, depth - 1);
    if (depth === 0) zone.classList.remove('dragging');
  });
  zone.addEventListener('drop', (event) => {
    event.preventDefault();
    depth = 0;
    zone.classList.remove('dragging');
    uploadFiles([...event.dataTransfer.files]);
  });
  // A file dropped beside the zone must not make the browser navigate away to it.
  for (const type of ['dragover', 'drop']) window.addEventListener(type, (event) => event.preventDefault());
}

function setUpTabs() {
  const tabs = [...document.querySelectorAll('[role="tab"]')];
  const select = (tab, focus) => {
    for (const other of tabs) {
      const selected = other === tab;
      other.setAttribute('aria-selected', String(selected));
      other.tabIndex = selected ? 0 : -1;
      $(other.getAttribute('aria-controls')).hidden = !selected;
    }
    if (focus) tab.focus();
  };
  tabs.forEach((tab, index) => {
    tab.addEventListener('click', () => select(tab, false));
    tab.addEventListener('keydown', (event) => {
      const moves = { ArrowRight: 1, ArrowLeft: -1, Home: -index, End: tabs.length - 1 - index };
      if (!(event.key in moves)) return;
      event.preventDefault();
      select(tabs[(index + moves[event.key] + tabs.length) % tabs.length], true);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Search

/**
 * Sends the query with the chosen mode, top k and rerank setting. What is on screen always answers
 * what the form shows: the results of an earlier query are dimmed while a new one is on its way,
 * only the latest answer is drawn, and a refused query clears them and says why.
 */
async function runQuery(event) {
  event?.preventDefault();
  const query = $('query-input').value.trim();
  if (!query) return $('query-input').focus();
  const seq = ++state.querySeq;
  const current = () => seq === state.querySeq;
  const topK = Number($('topk-input').value);
  // No mode sent: the server's default (hybrid with an embedding provider, else keyword).
  const mode = $('mode-input').value;
  // The toggle shows only when the server has a reranker (its /readyz lists one).
  const rerank = $('rerank-toggle').hidden ? {} : { rerank: $('rerank-input').checked };
  $('results').classList.add('stale');
  $('results').setAttribute('aria-busy', 'true');
  if (!$('results').hasChildNodes()) {
    $('results-summary').classList.remove('error-text');
    $('results-summary').textContent = 'Searching…';
  }
  try {
    const answer = await api('POST', '/v1/query', {
      json: { query, top_k: topK, ...(mode ? { mode } : {}), ...rerank, ...partitionsField() },
    });
    if (!current()) return;
    await renderResults(query, answer.results, answer, current);
    loadUsage(); // the query counts towards today's usage
  } catch (error) {
    if (current()) showQueryError(error);
  } finally {
    if (current()) {
      $('results').classList.remove('stale');
      $('results').removeAttribute('aria-busy');
    }
  }
}

function showQueryError(error) {
  // The server has no embedding provider after all: offer only what it can answer from now on.
  if (error.code === 'semantic_search_unavailable') offerModes(false);
  $('results').replaceChildren();
  $('results-summary').classList.add('error-text');
  $('results-summary').textContent = `No results: ${error.message}`;
}

/** A search setting changed while results are shown: search again, so they match the form. */
function searchAgain() {
  if ($('query-input').value.trim() && $('results-summary').textContent) runQuery();
}

async function renderResults(query, results, answer, current) {
  const names = new Map(state.docs.map((doc) => [doc.id, documentName(doc)]));
  const unknown = [...new Set(results.map((hit) => hit.document_id))].filter((id) => !names.has(id));
  if (unknown.length > 0) {
    try {
      const page = await api('GET', `/v1/documents?limit=100&ids=${unknown.slice(0, 100).join(',')}`);
      for (const doc of page.documents) names.set(doc.id, documentName(doc));
    } catch {
      // Names are a nicety; the ids still say where each chunk comes from.
    }
    if (!current()) return;
  }
  $('results-summary').classList.remove('error-text');
  const how = answer.mode ? ` (${answer.mode} search)` : '';
  const reasons = answer.degraded_reasons ?? (answer.degraded ? ['embeddings_unavailable'] : []);
  let fallback = '';
  if (reasons.includes('embeddings_unavailable')) {
    fallback += ' The embedding provider is unavailable: keyword results only.';
  }
  if (reasons.includes('rerank_unavailable'))
    fallback += ' The reranker is unavailable: results not reranked.';
  $('results-summary').textContent =
    (results.length === 0
      ? `No chunk matches that query${how}.`
      : `${results.length} ${results.length === 1 ? 'chunk' : 'chunks'}, best first${how}.`) + fallback;
  const terms = query
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((term) => term.length > 1);
  const items = results.map((hit, index) => {
    const li = el('li', { class: 'result' });
    li.dataset.documentId = hit.document_id;
    li.append(el('div', { class: 'result-rank', text: String(index + 1) }));
    const body = el('div');
    const head = el('div', { class: 'result-head' });
    head.append(el('span', { class: 'result-doc', text: names.get(hit.document_id) ?? hit.document_id }));
    const where = [];
    if (hit.page_start !== null) {
      where.push(
        hit.page_end !== null && hit.page_end !== hit.page_start
          ? `pages ${hit.page_start}–${hit.page_end}`
          : `page ${hit.page_start}`,
      );
    }
    where.push(`chunk ${hit.chunk_index}`);
    head.append(el('span', { class: 'result-meta', text: where.join(' · ') }));
    const score = el('span', { class: 'result-score', text: `score ${hit.score.toFixed(2)}` });
    // Hybrid scores are small fused ranks; what each list said is in the tooltip.
    if (hit.scores) {
      const parts = [];
      // The keyword score is BM25 as a share of the most the query could score (0–1).
      if (hit.scores.keyword !== null) parts.push(`keyword (BM25 share) ${hit.scores.keyword.toFixed(3)}`);
      if (hit.scores.semantic !== null) parts.push(`semantic (cosine) ${hit.scores.semantic.toFixed(3)}`);
      const reranked = hit.scores.rerank !== null && hit.scores.rerank !== undefined;
      if (reranked) parts.push(`rerank ${hit.scores.rerank.toFixed(3)}`);
      score.title = parts.join(' · ');
      if (reranked) score.textContent = `rerank ${hit.score.toFixed(3)}`;
      else if (answer.mode === 'hybrid') score.textContent = `score ${hit.score.toFixed(4)}`;
    }
    head.append(score);
    // Extracted text keeps the source's line breaks; only paragraph breaks help the reader.
    const readable = hit.text
      .replace(/[ \t]*\n[ \t]*\n\s*/g, '\u2029')
      .replace(/\s+/g, ' ')
      .replaceAll('\u2029', '\n\n')
      .trim();
    const text = el('p', { class: 'result-text' });
    text.id = `result-text-${index}`;
    text.append(...highlight(readable, terms));
    body.append(head, text);
    if (readable.length > 360) {
      text.classList.add('clamped');
      const more = el('button', { class: 'button button-quiet result-more', text: 'Show the whole chunk' });
      more.type = 'button';
      more.setAttribute('aria-controls', text.id);
      more.setAttribute('aria-expanded', 'false');
      more.addEventListener('click', () => {
        const expanded = text.classList.toggle('clamped') === false;
        more.setAttribute('aria-expanded', String(expanded));
        more.textContent = expanded ? 'Show less' : 'Show the whole chunk';
      });
      body.append(more);
    }
    li.append(body);
    return li;
  });
  $('results').replaceChildren(...items);
}

function highlight(text, terms) {
  if (terms.length === 0) return [document.createTextNode(text)];
  const pattern = new RegExp(
    `(${terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`,
    'giu',
  );
  return text.split(pattern).map((part, index) => {
    if (index % 2 === 0) return document.createTextNode(part);
    return el('mark', { text: part });
  });
}

// ---------------------------------------------------------------------------------------------
// Small helpers

const numberFormat = new Intl.NumberFormat();
const formatNumber = (n) => numberFormat.format(n);

function formatBytes(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

function formatDay(isoDate) {
  return new Date(`${isoDate}T00:00:00Z`).toLocaleDateString(undefined, {
    month: 'short',
    day: 'numeric',
    timeZone: 'UTC',
  });
}

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
function relativeTime(iso) {
  const seconds = (Date.parse(iso) - Date.now()) / 1000;
  if (Math.abs(seconds) < 45) return 'just now';
  for (const [unit, size] of [
    ['minute', 60],
    ['hour', 3600],
    ['day', 86400],
  ]) {
    const next = unit === 'minute' ? 3600 : unit === 'hour' ? 86400 : 7 * 86400;
    if (Math.abs(seconds) < next) return relative.format(Math.round(seconds / size), unit);
  }
  return new Date(iso).toLocaleDateString();
}

// ---------------------------------------------------------------------------------------------
// Sources: each with its type, schedule and newest run; "Runs" shows a source's run history with
// per-item errors, "Sync now" queues a run (POST /v1/sources/{id}/sync)

const runCounts = (run) =>
  `${formatNumber(run.added)} · ${formatNumber(run.updated)} · ${formatNumber(run.deleted)} · ${formatNumber(run.unchanged)} · ${formatNumber(run.failed)}`;

const runBadge = (status) =>
  status === 'completed' ? 'ready' : status === 'running' ? 'processing' : status;

async function loadSources() {
  try {
    const { sources } = await api('GET', '/v1/sources');
    const runs = await Promise.all(
      sources.map((source) =>
        api('GET', `/v1/sources/${encodeURIComponent(source.id)}/runs?limit=1`)
          .then((answer) => answer.runs[0] ?? null)
          .catch(() => null),
      ),
    );
    renderSources(sources, runs);
  } catch (error) {
    if (error.status === 403) {
      $('sources-empty').textContent =
        'This key may not see sources (scope `sources`, on a key not limited to partitions).';
      $('sources-empty').hidden = false;
    } else if (error.status !== 401) toast(`Could not load sources: ${error.message}`, { error: true });
  }
}

function renderSources(sources, lastRuns) {
  const rows = sources.map((source, i) => {
    const row = el('tr');
    row.dataset.sourceId = source.id;
    const name = el('td');
    name.append(el('div', { class: 'doc-name', text: source.name }));
    name.append(el('div', { class: 'doc-id', text: source.id }));
    const run = lastRuns[i];
    const last = el('td', { class: 'source-last-run' });
    if (run) {
      last.append(el('span', { class: `badge badge-${runBadge(run.status)}`, text: run.status }));
      last.append(el('span', { class: 'num source-counts', text: ` ${runCounts(run)}` }));
    } else {
      last.append(el('span', { class: 'muted', text: 'never run' }));
    }
    const actions = el('td', { class: 'actions' });
    const history = el('button', { class: 'button button-quiet', text: 'Runs' });
    history.type = 'button';
    history.addEventListener('click', () => showSourceRuns(source));
    const sync = el('button', { class: 'button button-secondary', text: 'Sync now' });
    sync.type = 'button';
    sync.addEventListener('click', () => syncSource(source, sync));
    actions.append(history, sync);
    row.append(name, el('td', { text: source.type }), el('td', { text: source.schedule }), last, actions);
    return row;
  });
  $('sources-body').replaceChildren(...rows);
  $('sources-table').hidden = sources.length === 0;
  $('sources-empty').textContent =
    'No sources yet: `docindex sources add s3 …` or `docindex sources add web …` adds one.';
  $('sources-empty').hidden = sources.length > 0;
}

async function showSourceRuns(source) {
  try {
    const { runs } = await api('GET', `/v1/sources/${encodeURIComponent(source.id)}/runs?limit=20`);
    $('source-runs-title').textContent = `Runs of ${source.name}`;
    const items = runs.map((run) => {
      const item = el('li', { class: 'source-run' });
      item.dataset.runId = run.run_id;
      const head = el('div');
      head.append(el('span', { class: `badge badge-${runBadge(run.status)}`, text: run.status }));
      const when = run.started_at ? relativeTime(run.started_at) : 'queued';
      head.append(el('span', { class: 'muted small', text: ` ${run.run_id} · ${when}` }));
      head.append(
        el('div', {
          class: 'num source-counts',
          text: `added · updated · deleted · unchanged · failed: ${runCounts(run)}`,
        }),
      );
      item.append(head);
      if (run.errors.length > 0) {
        const errors = el('ul', { class: 'source-run-errors' });
        for (const error of run.errors) {
          errors.append(el('li', { text: `${error.item ?? 'the run'}: ${error.code}, ${error.message}` }));
        }
        item.append(errors);
      }
      return item;
    });
    if (items.length === 0) items.push(el('li', { class: 'muted', text: 'No runs yet.' }));
    $('source-runs-list').replaceChildren(...items);
    $('source-runs').hidden = false;
  } catch (error) {
    if (error.status !== 401) toast(`Could not load the runs: ${error.message}`, { error: true });
  }
}

async function syncSource(source, button) {
  button.disabled = true;
  try {
    const { run_id: runId } = await api('POST', `/v1/sources/${encodeURIComponent(source.id)}/sync`);
    toast(`Run ${runId} queued for ${source.name}.`);
    await loadSources();
    await showSourceRuns(source);
  } catch (error) {
    if (error.status !== 401) toast(`Could not start a run: ${error.message}`, { error: true });
  } finally {
    button.disabled = false;
  }
}

// ---------------------------------------------------------------------------------------------
// Evaluations: the newest ones, each run's figures side by side (started with `docindex eval`
// or POST /v1/evaluations), and one evaluation's queries run by run: which got worse

async function loadEvaluations() {
  try {
    renderEvaluations((await api('GET', '/v1/evaluations?limit=20')).evaluations);
  } catch (error) {
    if (error.status === 403) {
      $('evaluations-empty').textContent = 'This key may not run evaluations (scope `query`).';
      $('evaluations-empty').hidden = false;
    } else if (error.status !== 401) toast(`Could not load evaluations: ${error.message}`, { error: true });
  }
}

const figure = (value) => (value === null ? '–' : value.toFixed(4));

/** A change of nDCG@10 from the first run, signed: `+0.1250`, `−0.5000`, `±0` when none. */
function change(delta) {
  if (Math.abs(delta) < 0.00005) return '±0';
  return `${delta > 0 ? '+' : '−'}${Math.abs(delta).toFixed(4)}`;
}

/** Where a run ranked a query's relevant documents: `leave:1 vpn:–`. */
function ranksText(ranks) {
  return ranks.map((r) => `${r.external_id ?? r.document_id.slice(0, 8)}:${r.rank ?? '–'}`).join(' ');
}

/**
 * One evaluation's queries, one column per run: each run's nDCG@10 and ranks, and its change from
 * the first run. The queries that got worse in some run come first, the largest drop first.
 */
async function showEvaluationQueries(id) {
  let evaluation;
  try {
    evaluation = await api('GET', `/v1/evaluations/${encodeURIComponent(id)}`);
  } catch (error) {
    if (error.status !== 401) toast(`Could not load the evaluation: ${error.message}`, { error: true });
    return;
  }
  const runs = evaluation.runs;
  const perRun = runs.map((run) => new Map((run.queries ?? []).map((q) => [q.index, q])));
  const rows = evaluation.queries
    .filter((q) => q.evaluated)
    .map((q) => {
      const outcomes = perRun.map((byIndex) => byIndex.get(q.index) ?? null);
      const first = outcomes[0]?.ndcg_at_10 ?? 0;
      const deltas = outcomes.map((o) => (o === null ? 0 : o.ndcg_at_10 - first));
      return { query: q.query, outcomes, deltas, worst: Math.min(0, ...deltas.slice(1)) };
    })
    .sort((a, b) => a.worst - b.worst);
  const head = el('tr');
  head.append(el('th', { text: 'Query' }));
  runs.forEach((run, i) => {
    const th = el('th', { class: 'num', text: `R${i + 1} ${run.mode}${run.rerank ? ' + rerank' : ''}` });
    th.scope = 'col';
    head.append(th);
  });
  const body = rows.map((r) => {
    const row = el('tr', { class: r.worst < -0.00005 ? 'eval-worse' : '' });
    row.append(el('td', { class: 'eval-query', text: r.query }));
    r.outcomes.forEach((o, i) => {
      const cell = el('td', { class: 'num eval-cell' });
      cell.append(el('div', { text: o === null ? '–' : o.ndcg_at_10.toFixed(4) }));
      if (i > 0 && o !== null) {
        const delta = r.deltas[i];
        cell.append(
          el('div', {
            class: `small ${delta < -0.00005 ? 'eval-down' : delta > 0.00005 ? 'eval-up' : 'muted'}`,
            text: change(delta),
          }),
        );
      }
      if (o !== null) cell.append(el('div', { class: 'muted small', text: ranksText(o.ranks) }));
      row.append(cell);
    });
    return row;
  });
  const worse = rows.filter((r) => r.worst < -0.00005).length;
  $('evaluation-detail-title').textContent = `Runs compared: ${evaluation.name ?? evaluation.id}`;
  const queries = `${formatNumber(rows.length)} evaluated ${rows.length === 1 ? 'query' : 'queries'}`;
  $('evaluation-detail-note').textContent =
    runs.length < 2
      ? `${queries}, one run.`
      : `${queries}; ${formatNumber(worse)} worse than in R1 in a later run (listed first).`;
  $('evaluation-detail-head').replaceChildren(head);
  $('evaluation-detail-body').replaceChildren(...body);
  $('evaluation-detail').hidden = false;
}

function renderEvaluations(evaluations) {
  const rows = evaluations.map((evaluation) => {
    const row = el('tr');
    const name = el('td');
    name.append(el('div', { class: 'doc-name', text: evaluation.name ?? evaluation.id }));
    name.append(
      el('div', { class: 'doc-id', text: `${evaluation.id} · ${relativeTime(evaluation.created_at)}` }),
    );
    const badge =
      evaluation.status === 'done'
        ? 'ready'
        : evaluation.status === 'running'
          ? 'processing'
          : evaluation.status;
    const status = el('td');
    status.append(el('span', { class: `badge badge-${badge}`, text: evaluation.status }));
    if (evaluation.error) status.append(el('div', { class: 'muted small', text: evaluation.error.message }));
    const queries = el('td', {
      class: 'num',
      text:
        evaluation.queries_evaluated === null
          ? formatNumber(evaluation.query_count)
          : `${formatNumber(evaluation.queries_evaluated)} / ${formatNumber(evaluation.query_count)}`,
    });
    const runs = el('ol', { class: 'eval-runs' });
    evaluation.runs.forEach((run, i) => {
      const settings = `${run.mode}${run.rerank ? ' + rerank' : ''}${run.semantic_weight === null ? '' : ` w=${run.semantic_weight}`}`;
      const p95 = run.latency_ms?.p95;
      runs.append(
        el('li', {
          text: `R${i + 1} ${settings}: ${figure(run.ndcg_at_10)} · ${figure(run.recall_at_k)} · ${figure(run.mrr_at_10)} · ${p95 == null ? '–' : `${p95.toFixed(1)} ms`}`,
        }),
      );
    });
    const runsCell = el('td', { class: 'eval-runs-cell' });
    runsCell.append(runs);
    if (evaluation.status === 'done') {
      const open = el('button', { class: 'button button-quiet', text: 'Compare runs' });
      open.type = 'button';
      open.setAttribute('aria-label', `Compare runs: ${evaluation.name ?? evaluation.id}`);
      open.addEventListener('click', () => showEvaluationQueries(evaluation.id));
      name.append(open);
    }
    row.append(name, status, queries, runsCell);
    return row;
  });
  $('evaluations-body').replaceChildren(...rows);
  $('evaluations-table').hidden = evaluations.length === 0;
  $('evaluations-empty').textContent = 'No evaluations yet: `docindex eval FILE` runs one.';
  $('evaluations-empty').hidden = evaluations.length > 0;
}

// ---------------------------------------------------------------------------------------------
// Webhooks: endpoints, their secret (shown once), a test event and the delivery log

async function loadWebhooks() {
  try {
    renderWebhooks((await api('GET', '/v1/webhooks')).webhooks);
  } catch (error) {
    // A key without the webhooks scope simply has no panel content.
    if (error.status === 403) {
      $('webhooks-empty').textContent = 'This key may not manage webhooks (scope `webhooks`).';
      $('webhooks-empty').hidden = false;
    } else if (error.status !== 401) toast(`Could not load webhooks: ${error.message}`, { error: true });
  }
}

function renderWebhooks(hooks) {
  const rows = hooks.map((hook) => {
    const row = el('tr');
    const url = el('td', { text: hook.url });
    const events = el('td', { text: hook.events.length === 4 ? 'all' : hook.events.join(', ') });
    const stateText = hook.enabled ? 'enabled' : `disabled (${hook.disabled_reason})`;
    const stateCell = el('td');
    stateCell.append(
      el('span', { class: `badge badge-${hook.enabled ? 'ready' : 'failed'}`, text: stateText }),
    );
    const actions = el('td', { class: 'actions' });
    const test = el('button', { class: 'button button-quiet', text: 'Send test' });
    test.type = 'button';
    test.addEventListener('click', () => testWebhook(hook));
    const log = el('button', { class: 'button button-quiet', text: 'Deliveries' });
    log.type = 'button';
    log.addEventListener('click', () => showDeliveries(hook));
    const remove = el('button', { class: 'button button-quiet', text: 'Delete' });
    remove.type = 'button';
    remove.setAttribute('aria-label', `Delete webhook ${hook.url}`);
    remove.addEventListener('click', () => deleteWebhook(hook));
    actions.append(test, log, remove);
    row.append(url, events, stateCell, actions);
    return row;
  });
  $('webhooks-body').replaceChildren(...rows);
  $('webhooks-table').hidden = hooks.length === 0;
  $('webhooks-empty').textContent = 'No endpoints yet.';
  $('webhooks-empty').hidden = hooks.length > 0;
}

async function createWebhook(event) {
  event.preventDefault();
  const url = $('webhook-url').value.trim();
  await submitting(event.currentTarget, async () => {
    const created = await api('POST', '/v1/webhooks', { json: { url } });
    $('webhook-url').value = '';
    const note = $('webhook-secret');
    note.textContent = `Signing secret for ${created.url} (shown only now, keep it): ${created.secret}`;
    note.hidden = false;
    await loadWebhooks();
  });
}

async function testWebhook(hook) {
  try {
    const { message_id } = await api('POST', `/v1/webhooks/${encodeURIComponent(hook.id)}/test`);
    toast(`Test event ${message_id} queued for ${hook.url}`);
  } catch (error) {
    toast(`Could not send a test event: ${error.message}`, { error: true });
  }
}

async function showDeliveries(hook) {
  try {
    const log = await api('GET', `/v1/webhooks/${encodeURIComponent(hook.id)}/deliveries?limit=20`);
    const items = log.deliveries.map((d) =>
      el('li', {
        class: 'result',
        text: `${relativeTime(d.created_at)} · ${d.event_type} · attempt ${d.attempt} · ${d.status_code ?? 'no answer'} · ${d.duration_ms} ms · ${d.outcome}${d.error ? ` · ${d.error}` : ''}`,
      }),
    );
    if (items.length === 0) items.push(el('li', { class: 'muted', text: 'No delivery attempts yet.' }));
    items.push(el('li', { class: 'muted small', text: `${hook.url}: ${log.pending} message(s) waiting` }));
    $('webhook-deliveries').replaceChildren(...items);
  } catch (error) {
    toast(`Could not load deliveries: ${error.message}`, { error: true });
  }
}

async function deleteWebhook(hook) {
  if (!confirm(`Delete the webhook endpoint ${hook.url}? Waiting events are dropped.`)) return;
  try {
    await api('DELETE', `/v1/webhooks/${encodeURIComponent(hook.id)}`);
    $('webhook-deliveries').replaceChildren();
    await loadWebhooks();
  } catch (error) {
    toast(`Could not delete the endpoint: ${error.message}`, { error: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Start

function start() {
  setUpTabs();
  setUpDropzone();
  $('signin-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const key = $('api-key').value.trim();
    if (!key) {
      $('signin-error').textContent = 'Enter an API key.';
      return $('api-key').focus();
    }
    signIn(key);
  });
  $('sign-out').addEventListener('click', () => signOut());
  $('panel-url').addEventListener('submit', ingestUrl);
  $('panel-text').addEventListener('submit', ingestText);
  $('search-form').addEventListener('submit', runQuery);
  for (const setting of ['mode-input', 'topk-input', 'rerank-input']) {
    $(setting).addEventListener('change', searchAgain);
  }
  $('documents-refresh').addEventListener('click', () => {
    loadPartitions();
    loadDocuments({ reset: true });
    loadUsage();
  });
  $('partition-input').addEventListener('change', choosePartition);
  $('documents-more').addEventListener('click', () => loadDocuments());
  $('evaluations-refresh').addEventListener('click', () => loadEvaluations());
  $('sources-refresh').addEventListener('click', () => loadSources());
  $('evaluation-detail-close').addEventListener('click', () => {
    $('evaluation-detail').hidden = true;
  });
  $('webhook-form').addEventListener('submit', createWebhook);
  $('metadata-form').addEventListener('submit', saveMetadata);
  $('dialog-close').addEventListener('click', () => $('document-dialog').close());
  $('document-dialog').addEventListener('close', () => {
    state.open = null;
  });
  const saved = sessionStorage.getItem(KEY_STORAGE);
  if (saved) signIn(saved, { silent: true });
  else $('api-key').focus();
}

start();
