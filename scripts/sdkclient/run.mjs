// Drives an MCP endpoint with the TypeScript SDK's client
// (@modelcontextprotocol/sdk, pinned by scripts/lib/node's lock; MCP_SDK
// names its folder) over Streamable HTTP, as a host built on it would, and
// checks the answers: tools/list; a conversation stored and read back
// (memory_get_or_create, memory_add_message, memory_get_context); a vector
// store filled (vector_store_create, vector_document_ingest) and asked
// (rag_basic, which runs the RAG pipeline: Step Functions on the stack);
// and, given the stack's S3 endpoint, a document uploaded to the bucket and
// indexed by the S3 notification's indexer (vector_document_list).
//
// Usage: MCP_SDK=.../node_modules/@modelcontextprotocol/sdk node run.mjs MCP_URL
//          [--key API_KEY] [--s3 S3_URL --bucket BUCKET --tenant TENANT]
// Prints one line per check and a last line starting with "sdkclient: ".
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { key: { type: 'string' }, s3: { type: 'string' }, bucket: { type: 'string' }, tenant: { type: 'string' } },
});
const [url] = positionals;
if (!url || !process.env.MCP_SDK) {
  console.error('usage: MCP_SDK=DIR node run.mjs MCP_URL [--key KEY] [--s3 URL --bucket BUCKET --tenant TENANT]');
  process.exit(2);
}
const sdk = (p) => import(pathToFileURL(`${process.env.MCP_SDK}/dist/esm/${p}`).href);
const { Client } = await sdk('client/index.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');

const headers = values.key ? { Authorization: `Bearer ${values.key}` } : {};
const client = new Client({ name: 'switchboard-sdkclient', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
const server = client.getServerVersion();
console.log(`connected to ${server?.name} ${server?.version} (protocol ${client.transport?.protocolVersion ?? 'negotiated'})`);

function check(what, ok, got) {
  if (!ok) {
    console.error(`sdkclient: ${what}: unexpected answer:\n${JSON.stringify(got, null, 2)}`);
    process.exit(1);
  }
}

async function call(name, args) {
  const res = await client.callTool({ name, arguments: args });
  check(`${name} ${JSON.stringify(args)}`, !res.isError && res.structuredContent, res);
  return res.structuredContent;
}

const { tools } = await client.listTools();
const names = new Set(tools.map((t) => t.name));
for (const want of ['memory_get_or_create', 'memory_add_message', 'memory_get_context', 'vector_store_create', 'vector_document_ingest', 'rag_basic']) {
  check(`tools/list has ${want}`, names.has(want), [...names]);
}
console.log(`tools/list: ${tools.length} tools`);

const run = `sdk${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
const conversation = `conv_${run}`;
let out = await call('memory_get_or_create', { conversation_id: conversation });
check('memory_get_or_create created', out.created === true, out);
out = await call('memory_add_message', { conversation_id: conversation, role: 'user', content: 'How often should I rotate API keys?' });
check('memory_add_message seq', out.seq === 1, out);
out = await call('memory_get_context', { conversation_id: conversation });
check('memory_get_context has the message', JSON.stringify(out).includes('How often should I rotate API keys?'), out);
console.log(`memory: conversation ${conversation} stored and read back`);

const store = `kb${run}`.slice(0, 40);
await call('vector_store_create', { alias: store, description: 'API key practice' });
out = await call('vector_document_ingest', {
  store,
  doc_id: 'api-keys',
  file_name: 'api-keys.md',
  content: '# API keys\n\nRotate the API keys of a service every 90 days, and at once when a key may have leaked.',
});
out = await call('rag_basic', { query: 'How often should API keys be rotated?', stores: [store] });
check('rag_basic retrieved the document', out.retrieved_documents?.some((d) => d.doc_id === 'api-keys'), out);
check('rag_basic graded', out.metadata?.graded === true, out);
console.log(`rag_basic: answered from ${out.retrieved_documents.length} document(s) in ${out.metadata.execution_time_ms} ms: ${JSON.stringify(out.answer).slice(0, 80)}`);

if (values.s3) {
  const key = `tenants/${values.tenant}/documents/${store}/uploaded.md`;
  const put = await fetch(`${values.s3}/${values.bucket}/${key}`, { method: 'PUT', body: '# Uploaded\n\nThis document reached the store through the bucket.' });
  check(`PUT ${key}`, put.ok, { status: put.status, body: await put.text() });
  let listed;
  for (let i = 0; i < 100; i++) {
    listed = await call('vector_document_list', { store });
    if (listed.documents.some((d) => d.doc_id === 'uploaded.md')) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  check('the S3 notification indexed uploaded.md', listed.documents.some((d) => d.doc_id === 'uploaded.md'), listed);
  console.log(`s3: ${key} uploaded and indexed by the bucket's notification`);
}

await client.close();
console.log(`sdkclient: ${url}: tools/list, memory, vector store, rag_basic${values.s3 ? ', S3 notification indexing' : ''}`);
