// A host built on the TypeScript MCP SDK signing in to Switchboard with OAuth,
// headlessly: the SDK's own OAuth client (an OAuthClientProvider driven by
// its StreamableHTTPClientTransport and auth()) does discovery (RFC 9728,
// then RFC 8414), dynamic client registration (RFC 7591), the authorization
// request with PKCE S256 and the token request; this script only plays the
// user's browser, following redirects, keeping cookies and submitting the
// forms it is shown (the facade's consent, the identity provider's login).
// Then it lists the tools and calls one with the access token it got.
//
//	MCP_URL=http://127.0.0.1:8080/mcp MCP_SDK=<node_modules>/@modelcontextprotocol/sdk \
//	LOGIN_USERNAME=... LOGIN_PASSWORD=... TOOL=memory_get_or_create TOOL_ARGS='{"thread_id":"t1"}' \
//	node scripts/oauth/client.mjs
//
// It prints one JSON object: the tools listed, the call's result, the
// authorization server's requests in order, and the flow's time in
// milliseconds, from the first request to the tool's answer. Run by
// shared/launch's TestTheTypeScriptSDKSignsInWithOAuth, which starts the
// provider and the server.
import { randomBytes } from 'node:crypto';

const env = (name) => {
	const v = process.env[name];
	if (!v) throw new Error(`${name} is required`);
	return v;
};
const mcpUrl = new URL(env('MCP_URL'));
const sdk = env('MCP_SDK');
const { Client } = await import(`${sdk}/dist/esm/client/index.js`);
const { StreamableHTTPClientTransport } = await import(`${sdk}/dist/esm/client/streamableHttp.js`);
const { UnauthorizedError } = await import(`${sdk}/dist/esm/client/auth.js`);

// Nothing listens here: the browser stops when sent to it, as a native
// host's loopback listener would take the code.
const redirectUri = 'http://127.0.0.1:1/callback';
const credentials = { username: env('LOGIN_USERNAME'), password: env('LOGIN_PASSWORD') };

// The OAuth requests the SDK makes, in order, and the time of each MCP
// request on the wire (the rest of a call's time is the SDK's own).
const seen = [];
const mcpRequests = [];
const recordingFetch = async (input, init) => {
	const u = new URL(input instanceof Request ? input.url : input);
	if (u.pathname !== mcpUrl.pathname) {
		seen.push(`${init?.method ?? 'GET'} ${u.pathname}`);
		return fetch(input, init);
	}
	const t0 = performance.now();
	const res = await fetch(input, init);
	let method = '';
	try {
		method = JSON.parse(init?.body ?? '{}').method ?? '';
	} catch {}
	mcpRequests.push(`${init?.method ?? 'GET'} ${method} ${res.status} ${(performance.now() - t0).toFixed(1)} ms`);
	return res;
};

// browse plays the user's browser from the authorization URL to the
// redirect to redirectUri, and returns that redirect's query and the
// requests it made, each with its time.
async function browse(start) {
	const jar = new Map(); // host -> cookie name -> value
	let url = new URL(start);
	let init = { method: 'GET' };
	const trail = [];
	for (let step = 0; step < 20; step++) {
		const headers = new Headers(init.headers);
		const cookies = jar.get(url.host);
		if (cookies?.size) headers.set('cookie', [...cookies].map(([k, v]) => `${k}=${v}`).join('; '));
		const t0 = performance.now();
		const res = await fetch(url, { ...init, headers, redirect: 'manual' });
		trail.push(`${init.method} ${url.origin}${url.pathname} ${res.status} ${(performance.now() - t0).toFixed(1)} ms`);
		for (const c of res.headers.getSetCookie()) {
			const [pair] = c.split(';');
			const i = pair.indexOf('=');
			if (!jar.has(url.host)) jar.set(url.host, new Map());
			jar.get(url.host).set(pair.slice(0, i).trim(), pair.slice(i + 1).trim());
		}
		const location = res.headers.get('location');
		if (res.status >= 300 && res.status < 400 && location) {
			await res.body?.cancel();
			const next = new URL(location, url);
			if (next.href.startsWith(redirectUri)) return { query: next.searchParams, trail };
			url = next;
			init = { method: 'GET' };
			continue;
		}
		const page = await res.text();
		const form = /<form\b[^>]*>([\s\S]*?)<\/form>/i.exec(page);
		if (res.status !== 200 || !form) throw new Error(`the browser stopped at ${url} (${res.status}): ${page.slice(0, 300)}`);
		// A form that answers a form with itself refused what was sent (a wrong password).
		if (init.method === 'POST' && trail.at(-2)?.startsWith(`POST ${url.origin}${url.pathname} `)) {
			throw new Error(`${url} refused the form twice: ${page.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').slice(0, 300)}`);
		}
		const attr = (tag, name) => new RegExp(`\\b${name}="([^"]*)"`, 'i').exec(tag)?.[1];
		const unescape = (s) => s.replace(/&#34;|&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
		const body = new URLSearchParams();
		for (const [tag] of form[1].matchAll(/<input\b[^>]*>/gi)) {
			const name = attr(tag, 'name');
			if (!name) continue;
			body.set(name, credentials[name] ?? unescape(attr(tag, 'value') ?? ''));
		}
		// The submit button: Allow on a consent page, else the first one.
		const buttons = [...form[1].matchAll(/<button\b[^>]*>/gi)].map(([tag]) => tag).filter((tag) => attr(tag, 'name'));
		const button = buttons.find((tag) => attr(tag, 'value') === 'allow') ?? buttons[0];
		if (button) body.set(attr(button, 'name'), attr(button, 'value') ?? '');
		url = new URL(unescape(attr(form[0], 'action') ?? url.href), url);
		init = { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } };
	}
	throw new Error(`the browser followed 20 pages without reaching the host:\n${trail.join('\n')}`);
}

// The SDK's OAuthClientProvider, kept in memory: one session of one host.
class HeadlessHost {
	client = undefined;
	saved = undefined;
	verifier = undefined;
	expectedState = undefined;
	code = undefined;
	browserSteps = [];
	get redirectUrl() {
		return redirectUri;
	}
	get clientMetadata() {
		return {
			client_name: 'TypeScript SDK host', redirect_uris: [redirectUri], grant_types: ['authorization_code', 'refresh_token'],
			response_types: ['code'], token_endpoint_auth_method: 'none',
		};
	}
	state() {
		this.expectedState = randomBytes(16).toString('base64url');
		return this.expectedState;
	}
	clientInformation() {
		return this.client;
	}
	saveClientInformation(info) {
		this.client = info;
	}
	tokens() {
		return this.saved;
	}
	saveTokens(tokens) {
		this.saved = tokens;
	}
	saveCodeVerifier(v) {
		this.verifier = v;
	}
	codeVerifier() {
		return this.verifier;
	}
	async redirectToAuthorization(authorizationUrl) {
		const { query: q, trail } = await browse(authorizationUrl);
		this.browserSteps = trail;
		if (q.get('error')) throw new Error(`authorization refused: ${q.get('error')}: ${q.get('error_description')}`);
		if (q.get('state') !== this.expectedState) throw new Error('the authorization response carries another state');
		// RFC 9207: the response names the server that issued the code.
		if (q.get('iss') !== mcpUrl.origin) throw new Error(`the authorization response names issuer ${q.get('iss')}, not ${mcpUrl.origin}`);
		this.code = q.get('code');
	}
}

const started = performance.now();
// Each phase's end, in milliseconds from the start.
const phases = {};
const mark = (name) => (phases[name] = Math.round((performance.now() - started) * 10) / 10);
const host = new HeadlessHost();
const open = () => new StreamableHTTPClientTransport(mcpUrl, { authProvider: host, fetch: recordingFetch });
let transport = open();
let client = new Client({ name: 'ts-sdk-oauth-host', version: '1.0.0' });
try {
	await client.connect(transport);
	throw new Error('connected without signing in');
} catch (e) {
	if (!(e instanceof UnauthorizedError) || !host.code) throw e;
}
mark('authorized');
await transport.finishAuth(host.code);
mark('token');
transport = open();
client = new Client({ name: 'ts-sdk-oauth-host', version: '1.0.0' });
await client.connect(transport);
mark('initialized');
const { tools } = await client.listTools();
mark('listed');
const result = await client.callTool({ name: env('TOOL'), arguments: JSON.parse(process.env.TOOL_ARGS || '{}') });
const flowMs = performance.now() - started;
mark('called');
await client.close();
console.log(JSON.stringify({
	tools: tools.map((t) => t.name), result, oauthRequests: seen, browserSteps: host.browserSteps, mcpRequests, phases, flowMs: Math.round(flowMs * 10) / 10,
	client: { id: host.client?.client_id, registered: !!host.client?.client_id_issued_at || !!host.client?.client_id },
	scope: host.saved?.scope, tokenType: host.saved?.token_type, hasRefreshToken: !!host.saved?.refresh_token,
}));
