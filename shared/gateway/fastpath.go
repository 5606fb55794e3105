package gateway

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/approvalpage"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/rawjson"
)

// The tools/call fast path answers the request hosts make most, a lone
// tools/call POSTed to /mcp, without the go-sdk's per-request machinery (a
// session, a JSON-RPC connection and goroutines, and about eleven decodes
// into 32 KiB buffers each), and passes the function's result through with
// one validating copy instead of decoding and encoding it four times.
//
// It answers exactly as the go-sdk would, byte for byte (framed with a
// Content-Length rather than in chunks), and only what it can prove it
// answers the same way: a well-formed tools/call of a public tool, in a
// protocol version the go-sdk serves, with the headers that version
// requires matching the body, whose function answers with a result in
// lambdafn's form or fails. Any other request, valid or not (batches, other
// methods, notifications, unknown tools, unusual JSON, a header out of
// place), goes to the go-sdk untouched, which then answers or refuses it as
// it always has; any other result goes to the go-sdk with the request,
// which answers it with the function's response in hand (see handOff).
// fastpath_test.go sends the same requests both ways and compares the
// answers.
//
// The checks in front of /mcp (Origin, body limit, authentication) run
// before it, as before the go-sdk; the deadline a function is awaited under
// is the same (see await).

// Headers and values of the Streamable HTTP transport, as the go-sdk names them.
const (
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
	headerLastEventID     = "Last-Event-ID"
	// sessionlessVersion is the first protocol version without sessions,
	// where each request describes its client in _meta (SEP-2575).
	sessionlessVersion = "2026-07-28"
	// defaultVersion is the version the go-sdk assumes when a request names none.
	defaultVersion = "2025-03-26"
)

// Keys of a sessionless request's _meta.
const (
	metaProgressToken      = "progressToken"
	metaProtocolVersion    = mcp.MetaKeyProtocolVersion
	metaClientCapabilities = mcp.MetaKeyClientCapabilities
	metaClientInfo         = mcp.MetaKeyClientInfo
	//lint:ignore SA1019 logging (deprecated by SEP-2577) is still what clients of protocols before 2026-07-28 use
	metaLogLevel = mcp.MetaKeyLogLevel
)

// fastPath is the tools/call fast path in front of the go-sdk's handler.
type fastPath struct {
	g    *Gateway
	next http.Handler
	// tools are the tools the go-sdk server has: the catalog's public ones.
	tools map[string]*catalog.Tool
	// versions are the protocol versions answered here; "" stands for a
	// request without a version header.
	versions map[string]bool
	// serverInfo is the JSON of the server's implementation, which the
	// go-sdk adds to the _meta of every sessionless result.
	serverInfo []byte
}

// fastPathOn is false when MCPGODEBUG changes how the go-sdk behaves, in
// which case every request goes to it. Tests turn it off to compare the two.
var fastPathOn = os.Getenv("MCPGODEBUG") == ""

// fastCalls returns next (the go-sdk's Streamable HTTP handler) behind the
// tools/call fast path.
func (g *Gateway) fastCalls(next http.Handler) http.Handler {
	if !fastPathOn {
		return next
	}
	f := &fastPath{g: g, next: next, tools: map[string]*catalog.Tool{}, versions: map[string]bool{}}
	for _, t := range g.opts.Catalog.Tools() {
		// settings_update is the go-sdk's: profilesMiddleware then forgets
		// the threads' settings it cached (profiles.go).
		if t.Visibility == catalog.Public && t.Name != settingsUpdateTool {
			f.tools[t.Name] = t
		}
	}
	supported := mcp.SupportedProtocolVersions()
	for _, v := range []string{"2024-11-05", defaultVersion, "2025-06-18", "2025-11-25", sessionlessVersion} {
		if slices.Contains(supported, v) {
			f.versions[v] = true
		}
	}
	f.versions[""] = f.versions[defaultVersion]
	var err error
	if f.serverInfo, err = json.Marshal(&implementation); err != nil {
		panic(err) // strings only
	}
	return f
}

// ServeHTTP implements [http.Handler].
func (f *fastPath) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	version, ok := f.accepts(r)
	if !ok {
		f.next.ServeHTTP(w, r)
		return
	}
	body, err := readRequestBody(r.Body, r.ContentLength, f.g.maxBody)
	if err != nil {
		// The go-sdk reads the same bytes and the same error, and answers it.
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
		f.next.ServeHTTP(w, r)
		return
	}
	call, ok := f.parse(r, version, body)
	if !ok {
		r.Body = io.NopCloser(bytes.NewReader(body))
		f.next.ServeHTTP(w, r)
		return
	}
	f.serve(w, r, body, call)
}

// accepts returns the protocol version of a request whose HTTP side the
// go-sdk would accept as the fast path handles it, checked as the go-sdk's
// StreamableHTTPHandler does.
func (f *fastPath) accepts(r *http.Request) (string, bool) {
	if r.Method != http.MethodPost || len(r.Header.Values(headerLastEventID)) > 0 {
		return "", false
	}
	// DNS rebinding protection, as the go-sdk applies it on loopback.
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil {
		if isLoopback(local.String()) && !isLoopback(r.Host) {
			return "", false
		}
	}
	version := r.Header.Get(headerProtocolVersion)
	if !f.versions[version] {
		return "", false
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return "", false
		}
	}
	if jsonOK, streamOK := streamableAccepts(r.Header.Values("Accept")); !jsonOK || !streamOK {
		return "", false
	}
	if version == "" {
		version = defaultVersion
	}
	return version, true
}

// isLoopback is the go-sdk's test of a loopback address or host.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// streamableAccepts is the go-sdk's reading of the Accept header.
func streamableAccepts(values []string) (jsonOK, streamOK bool) {
	for _, value := range values {
		for raw := range strings.SplitSeq(value, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// readRequestBody reads a request body of the declared length (-1 if
// unknown). The body is already limited; limit only sizes the buffer.
func readRequestBody(body io.Reader, length, limit int64) ([]byte, error) {
	if length < 0 || length > limit {
		length = 0
	}
	// A buffer one byte longer than declared sees the end of a body as long
	// as declared in one read, with no room to spare.
	b := make([]byte, length+1)
	n, err := io.ReadFull(body, b)
	switch {
	case err == io.ErrUnexpectedEOF || err == io.EOF:
		return b[:n], nil
	case err != nil:
		return b[:n], err
	}
	buf := bytes.NewBuffer(b)
	_, err = buf.ReadFrom(body)
	return buf.Bytes(), err
}

// errReader fails every read with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// toolCall is a tools/call request the fast path answers.
type toolCall struct {
	version string // of the protocol
	id      []byte // the JSON-RPC id, as the request wrote it
	tool    *catalog.Tool
	// proxied is the name of the connector's tool called, if it is one
	// (connectors.go): tool is then connector_call's entry.
	proxied string
	args    []byte // the arguments, as the request wrote them; nil if none
	token   []byte // the progress token, as the request wrote it; nil if none
	// logLevel is the least level of log messages the client gets.
	logLevel string
	// caps are the client's capabilities, on 2026-07-28 and later: the
	// parts of them that say what it can be asked.
	caps *mcp.ClientCapabilities
}

// parse reads a tools/call request and the headers its version requires.
func (f *fastPath) parse(r *http.Request, version string, body []byte) (toolCall, bool) {
	sessionless := version >= sessionlessVersion
	// Before 2026-07-28 the go-sdk's stateless sessions log at info.
	call := toolCall{version: version, logLevel: "info"}
	var name, metaVersion []byte
	var rpc, method, params bool
	if sessionless {
		call.logLevel = "" // none unless _meta asks
	}
	s := &rawjson.Scanner{Data: body}
	meta := func(key []byte) bool {
		s.NoNumbers = true // the go-sdk decodes _meta into float64s
		defer func() { s.NoNumbers = false }()
		switch k := string(key); {
		case k == metaProgressToken:
			call.token = tokenOf(s)
			return call.token != nil
		case !sessionless:
			return false // another key the go-sdk would read, or not
		case k == metaProtocolVersion:
			v, ok := s.PlainString()
			metaVersion = v
			return ok
		case k == metaClientCapabilities:
			call.caps = clientCapabilities(s)
			return call.caps != nil
		case k == metaClientInfo:
			return clientInfo(s)
		case k == metaLogLevel:
			v, ok := s.PlainString()
			call.logLevel = string(v)
			return ok
		}
		return false
	}
	param := func(key []byte) bool {
		switch string(key) {
		case "name":
			var ok bool
			name, ok = s.PlainString()
			return ok
		case "arguments":
			if s.Peek() == 'n' { // null: the go-sdk and the envelope see no arguments differently
				return false
			}
			start := s.Pos
			if !s.Value() {
				return false
			}
			call.args = body[start:s.Pos]
			return true
		case "_meta":
			return s.Object(meta)
		}
		return false // inputResponses, requestState, task, ...: the go-sdk's
	}
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "jsonrpc":
			v, ok := s.PlainString()
			rpc = ok && string(v) == "2.0"
			return rpc
		case "id":
			call.id = tokenOf(s)
			return call.id != nil
		case "method":
			v, ok := s.PlainString()
			method = ok && string(v) == "tools/call"
			return method
		case "params":
			params = true
			return s.Object(param)
		}
		return false
	})
	if !ok || !rpc || !method || !params || call.id == nil || name == nil || !s.AtEnd() {
		return call, false
	}
	if call.tool, ok = f.tools[string(name)]; !ok {
		if call.tool, ok = f.g.proxiedTool(string(name)); !ok {
			return call, false // the go-sdk answers unknown tools
		}
		call.proxied = string(name)
	}
	if sessionless {
		// The checks of the go-sdk's servePOST, validateMcpHeaders and
		// validateRequestMeta for a sessionless request.
		h := r.Header
		if string(metaVersion) != version || call.caps == nil || h.Get(headerMethod) != "tools/call" || h.Get(headerName) != string(name) {
			return call, false
		}
	}
	return call, true
}

// tokenOf reads a JSON-RPC id or a progress token that the go-sdk writes
// back as the request wrote it: a plain string or a safe integer.
func tokenOf(s *rawjson.Scanner) []byte {
	if s.Peek() == '"' {
		start := s.Pos
		if _, ok := s.PlainString(); ok {
			return s.Data[start:s.Pos]
		}
		return nil
	}
	n, ok := s.Number()
	if !ok || !rawjson.IsSafeInt(n) {
		return nil
	}
	return n
}

// clientCapabilities reads _meta's client capabilities, accepting only what
// the go-sdk certainly decodes: objects where it expects objects, no numbers.
// It returns what they say the client can be asked (the capabilities the
// go-sdk decodes, but for listChanged and the experimental ones), or nil.
func clientCapabilities(s *rawjson.Scanner) *mcp.ClientCapabilities {
	caps := &mcp.ClientCapabilities{}
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "roots":
			//lint:ignore SA1019 roots (deprecated by SEP-2577) remain an input request clients may answer during their deprecation window
			caps.RootsV2 = &mcp.RootCapabilities{}
			return s.Object(func(key []byte) bool {
				if string(key) == "listChanged" {
					return s.Literal("true") || s.Literal("false")
				}
				return s.Value()
			})
		case "sampling":
			//lint:ignore SA1019 sampling (deprecated by SEP-2577) remains an input request clients may answer during its deprecation window
			caps.Sampling = &mcp.SamplingCapabilities{}
			return s.Object(func([]byte) bool { return s.Peek() == '{' && s.Value() })
		case "elicitation":
			caps.Elicitation = &mcp.ElicitationCapabilities{}
			return s.Object(func(key []byte) bool {
				switch string(key) {
				case "form":
					caps.Elicitation.Form = &mcp.FormElicitationCapabilities{}
				case "url":
					caps.Elicitation.URL = &mcp.URLElicitationCapabilities{}
				}
				return s.Peek() == '{' && s.Value()
			})
		case "experimental", "extensions":
			return s.Peek() == '{' && s.Value()
		}
		return s.Value() // a capability the go-sdk ignores
	})
	if !ok {
		return nil
	}
	return caps
}

// clientInfo reads _meta's client implementation, accepting only what the
// go-sdk certainly decodes.
func clientInfo(s *rawjson.Scanner) bool {
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "name", "title", "description", "version", "websiteUrl":
			_, _, ok := s.String()
			return ok
		case "icons":
			return false
		}
		return s.Value()
	})
}

// serve calls the tool and answers the call.
func (f *fastPath) serve(w http.ResponseWriter, r *http.Request, body []byte, call toolCall) {
	g, t := f.g, call.tool
	// The request's own context: the go-sdk's ends with the request too
	// (withRequestEnd), and keeps its values.
	ctx := r.Context()
	extra := &mcp.RequestExtra{TokenInfo: auth.TokenInfoFromContext(r.Context())}
	caller, err := g.caller(extra)
	if err != nil || !allows(extra, t) || !keyProfile(extra.TokenInfo).Allows(cmp.Or(call.proxied, t.Name), t.Group) { // the go-sdk refuses it
		r.Body = io.NopCloser(bytes.NewReader(body))
		f.next.ServeHTTP(w, r)
		return
	}
	args, name := call.args, t.Name
	if call.proxied != "" {
		// A token limited by scopes is callProxied's to check.
		if _, limited := accessOf(extra.TokenInfo); limited {
			r.Body = io.NopCloser(bytes.NewReader(body))
			f.next.ServeHTTP(w, r)
			return
		}
		name = call.proxied
		if args, err = (proxiedCall{Name: name, Arguments: call.args, Progress: call.token != nil}).encode(); err != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
			f.next.ServeHTTP(w, r)
			return
		}
		call.tool = shownAs(t, name) // what its failures name; t is what it calls
	}
	env := &invoke.Request{
		Method: invoke.MethodCallTool, Tool: t.Name, Arguments: args,
		Caller: caller, RequestID: newID(), TraceID: traceID(r.Header), ProtocolVersion: call.version,
		Profile: heldTo(t, keyProfile(extra.TokenInfo)), // a call naming a thread never comes here
	}
	// What a client on 2026-07-28 can be asked, as callTool tells the
	// function (with neither answers nor a request state: a call that
	// carries them is the go-sdk's).
	b := elicit.Binding{Caller: caller, Method: invoke.MethodCallTool, Name: name, Arguments: call.args}
	if env.Input, err = g.openRound(call.version, call.caps, nil, "", b); err != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		f.next.ServeHTTP(w, r)
		return
	}
	start := time.Now()
	var live *liveNotes // the notifications written as they arrive, for a streamed answer
	if call.token != nil && t.Progress {
		live = &liveNotes{f: f, call: call, w: w}
	}
	resp, raw, err := f.invoke(ctx, t.Function, env, live)
	buf := answerBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= maxPooledAnswer { // a rare large answer does not stay held
			answerBuffers.Put(buf)
		}
	}()
	answered := false
	if err == nil && raw != nil {
		// Most answers are read from the function's payload in one pass;
		// the rest after decoding it as the invoker would have.
		if answered = !linksApproval(call, raw) && f.appendPayload(buf, call, raw); answered {
			releasePayload(raw) // copied into the answer
		} else {
			buf.Reset()
			resp, err = invoke.DecodeResponse(t.Function, raw)
		}
	}
	if !answered {
		// A function that asks the client for input is answered by callTool,
		// which seals the request state; a proxied call's result that links
		// the approval page by callProxied, which makes the link absolute.
		if err == nil && (resp.InputRequired != nil || linksApproval(call, resp.Result)) {
			f.handOff(live.writer(w), r, body, env, t, resp, err)
			return
		}
		if err == nil {
			f.appendNotifications(buf, call, resp.Notifications)
		}
		if !f.appendResponse(buf, call, env, resp, err) {
			f.handOff(live.writer(w), r, body, env, t, resp, err)
			return
		}
	}
	if g.log.Enabled(ctx, slog.LevelInfo) {
		g.log.InfoContext(ctx, "tools/call", "tool", t.Name, "tenant", caller.Tenant, "trace_id", env.TraceID,
			"request_id", env.RequestID, "duration_ms", time.Since(start).Milliseconds(), "error", errString(err))
	}
	if !live.begun() {
		h := w.Header()
		h["Cache-Control"], h["Content-Type"], h["Connection"] = noCache, eventStream, keepAlive
		// The go-sdk writes each event as it comes, as a chunk; the whole
		// answer is in hand here, so it goes out with its length, in one
		// write fewer.
		h.Set("Content-Length", strconv.Itoa(buf.Len()))
	}
	writeWhole(w, r, buf.Bytes())
}

// linksApproval reports whether payload, a proxied call's answer, may link
// the approval page, whose link callProxied completes.
func linksApproval(call toolCall, payload []byte) bool {
	return call.proxied != "" && bytes.Contains(payload, []byte(approvalpage.Prefix))
}

// The headers of an SSE answer, as the go-sdk sets them. Shared by every
// answer: their capacity is their length, so that adding to one copies it.
var (
	noCache     = []string{"no-cache, no-transform"}[:1:1]
	eventStream = []string{"text/event-stream"}[:1:1]
	keepAlive   = []string{"keep-alive"}[:1:1]
)

// invoke calls a function as [Gateway.invoke] does (admitted within the
// caller's limits first), under ctx, which ends with the request: for its payload as the function wrote it if the invoker
// can give it (raw), else its response. With live (not nil) and an invoker
// that can stream, it asks for a streamed answer and writes each
// notification to the client as it arrives.
func (f *fastPath) invoke(ctx context.Context, function string, env *invoke.Request, live *liveNotes) (*invoke.Response, []byte, error) {
	ri, ok := f.g.opts.Invoker.(invoke.RawInvoker)
	if !ok {
		resp, err := f.g.invoke(ctx, function, env)
		return resp, nil, err
	}
	release, refused := f.g.admit(ctx, function, env)
	if refused != nil {
		return refused, nil, nil
	}
	defer release()
	raw, err := await(ctx, func(ctx context.Context) ([]byte, error) {
		if si, ok := ri.(invoke.StreamInvoker); ok && live != nil {
			return si.InvokeStream(ctx, function, env, live.note)
		}
		return ri.InvokeRaw(ctx, function, env)
	})
	return nil, raw, err
}

// liveNotes writes a call's notifications to its client as they arrive,
// as the go-sdk relays them (see appendNotifications): the first that the
// client gets begins the SSE answer, which then goes on without a length.
type liveNotes struct {
	f       *fastPath
	call    toolCall
	w       http.ResponseWriter
	buf     bytes.Buffer
	started bool
}

// note writes n, if the client gets it, and flushes it.
func (l *liveNotes) note(n invoke.Notification) {
	l.buf.Reset()
	l.f.appendNotifications(&l.buf, l.call, []invoke.Notification{n})
	if l.buf.Len() == 0 {
		return
	}
	if !l.started {
		l.started = true
		h := l.w.Header()
		h["Cache-Control"], h["Content-Type"], h["Connection"] = noCache, eventStream, keepAlive
	}
	l.w.Write(l.buf.Bytes())
	http.NewResponseController(l.w).Flush()
}

// begun reports whether the answer has begun (l may be nil).
func (l *liveNotes) begun() bool { return l != nil && l.started }

// writer returns w for the go-sdk to answer on after l (may be nil): w
// itself if the answer has not begun, else w without its header, so that
// what the go-sdk writes goes on the same SSE answer.
func (l *liveNotes) writer(w http.ResponseWriter) http.ResponseWriter {
	if !l.begun() {
		return w
	}
	return &continued{ResponseWriter: w, header: http.Header{}}
}

// continued is the ResponseWriter of an answer whose header is sent: the
// header the go-sdk sets is dropped, its body follows.
type continued struct {
	http.ResponseWriter
	header http.Header
}

func (c *continued) Header() http.Header { return c.header }

func (c *continued) WriteHeader(int) {}

// Flush implements [http.Flusher].
func (c *continued) Flush() { http.NewResponseController(c.ResponseWriter).Flush() }

// Unwrap gives http.ResponseController the writer c wraps.
func (c *continued) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// appendPayload appends the answer to a call whose function answered
// payload, {"result":…} with no notifications or error, its result in
// lambdafn's form: the result is transcoded (see [transcodeToolResult])
// straight from the payload, which is read once. It reports false for
// anything else.
func (f *fastPath) appendPayload(buf *bytes.Buffer, call toolCall, payload []byte) bool {
	result, ok := bytes.CutPrefix(payload, []byte(`{"result":`))
	return ok && appendEvent(buf, func(buf *bytes.Buffer) bool {
		appendResponseStart(buf, call)
		out, n, ok := transcodeToolResult(buf.AvailableBuffer(), result, call.version >= sessionlessVersion, f.serverInfo)
		if !ok || string(result[n:]) != "}" {
			return false
		}
		buf.Write(out)
		buf.WriteByte('}')
		return true
	})
}

// appendResponseStart appends the start of the JSON-RPC response to call,
// up to its result.
func appendResponseStart(buf *bytes.Buffer, call toolCall) {
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(call.id)
	buf.WriteString(`,"result":`)
}

// releasePayload is [invoke.ReleasePayload]; tests make it poison the
// payload, so that any use after it shows in the answer.
var releasePayload = invoke.ReleasePayload

// answerBuffers hold answers while they are written.
var answerBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledAnswer is the largest answer buffer kept for reuse.
const maxPooledAnswer = 1 << 20

// appendEvent appends an SSE event holding one JSON-RPC message, as the
// go-sdk frames it.
func appendEvent(buf *bytes.Buffer, message func(*bytes.Buffer) bool) bool {
	buf.WriteString("event: message\ndata: ")
	if !message(buf) {
		return false
	}
	buf.WriteString("\n\n")
	return true
}

// appendNotifications appends the notifications the function produced that
// the client gets, as the go-sdk relays them (tools.go's relay): progress
// when the client sent a progress token, log messages at or above the level
// it asked for.
func (f *fastPath) appendNotifications(buf *bytes.Buffer, call toolCall, notes []invoke.Notification) {
	for _, n := range notes {
		var method string
		var params any
		switch {
		case n.Progress != nil && call.token != nil:
			method = "notifications/progress"
			params = &mcp.ProgressNotificationParams{ProgressToken: json.RawMessage(call.token), Progress: *n.Progress, Total: n.Total, Message: n.Message}
		case n.Level != "":
			if call.logLevel == "" || mcpLevel(n.Level) < mcpLevel(call.logLevel) {
				continue
			}
			method = "notifications/message"
			//lint:ignore SA1019 logging (deprecated by SEP-2577) is still what clients of protocols before 2026-07-28 use
			params = &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(n.Level), Logger: n.Logger, Data: n.Data}
		default:
			continue
		}
		mark := buf.Len()
		ok := appendEvent(buf, func(buf *bytes.Buffer) bool {
			buf.WriteString(`{"jsonrpc":"2.0","method":"` + method + `","params":`)
			enc := json.NewEncoder(buf)
			enc.SetEscapeHTML(false) // as the go-sdk's jsonrpc2 encodes params
			if enc.Encode(params) != nil {
				return false
			}
			buf.Truncate(buf.Len() - 1) // Encode's newline
			buf.WriteByte('}')
			return true
		})
		if !ok {
			buf.Truncate(mark)
			f.g.log.WarnContext(context.Background(), "relaying a notification failed", "tool", call.tool.Name)
		}
	}
}

// mcpLevels orders the MCP logging levels as the go-sdk does; it takes any
// other level for debug.
var mcpLevels = map[string]slog.Level{
	"debug": mcp.LevelDebug, "info": mcp.LevelInfo, "notice": mcp.LevelNotice, "warning": mcp.LevelWarning,
	"error": mcp.LevelError, "critical": mcp.LevelCritical, "alert": mcp.LevelAlert, "emergency": mcp.LevelEmergency,
}

func mcpLevel(l string) slog.Level {
	if v, ok := mcpLevels[l]; ok {
		return v
	}
	return mcp.LevelDebug
}

// appendResponse appends the JSON-RPC response to the call: the tool's
// result, or a tool error when the function failed, as callTool returns
// them and the go-sdk writes them. It reports false for a result not in
// lambdafn's form (content other than text, a result asking the client for
// input, one that does not decode): the go-sdk answers those, with the
// function's response in hand, so that callTool's handling of them stays
// in one place.
func (f *fastPath) appendResponse(buf *bytes.Buffer, call toolCall, env *invoke.Request, resp *invoke.Response, err error) bool {
	sessionless := call.version >= sessionlessVersion
	return appendEvent(buf, func(buf *bytes.Buffer) bool {
		appendResponseStart(buf, call)
		if err == nil {
			out, n, ok := transcodeToolResult(buf.AvailableBuffer(), resp.Result, sessionless, f.serverInfo)
			if !ok || n != len(resp.Result) {
				return false
			}
			buf.Write(out)
			buf.WriteByte('}')
			return true
		}
		b, merr := encodeToolResult(functionFailure(call.tool, env, err), sessionless)
		if merr != nil {
			return false
		}
		buf.Write(b)
		buf.WriteByte('}')
		return true
	})
}

// encodeToolResult encodes a tool result as the go-sdk's server does after
// the tool handler returns it: content never null, and on sessionless
// requests the result type and the server's implementation in _meta.
func encodeToolResult(res *mcp.CallToolResult, sessionless bool) ([]byte, error) {
	if res.Content == nil {
		res.Content = []mcp.Content{}
	}
	if sessionless {
		if _, ok := res.Meta[mcp.MetaKeyServerInfo]; !ok {
			meta := mcp.Meta{mcp.MetaKeyServerInfo: &implementation}
			for k, v := range res.Meta {
				meta[k] = v
			}
			res.Meta = meta
		}
	}
	b, err := json.Marshal(res)
	if err != nil || !sessionless {
		return b, err
	}
	// resultType follows every field of a result that asks for no input.
	return append(b[:len(b)-1], `,"resultType":"complete"}`...), nil
}

// prefetchedCall is a tools/call the fast path has sent to its function and
// hands to the go-sdk to answer, with the function's response.
type prefetchedCall struct {
	function           string
	requestID, traceID string
	resp               *invoke.Response
	err                error
	taken              atomic.Bool
}

type prefetchedKey struct{}

// handOff lets the go-sdk answer a call the fast path has already sent to
// its function: the go-sdk reads the request again and, when its tool
// handler invokes the function, gets resp and err (see [takePrefetched]).
func (f *fastPath) handOff(w http.ResponseWriter, r *http.Request, body []byte, env *invoke.Request, t *catalog.Tool, resp *invoke.Response, err error) {
	p := &prefetchedCall{function: t.Function, requestID: env.RequestID, traceID: env.TraceID, resp: resp, err: err}
	r = r.WithContext(context.WithValue(r.Context(), prefetchedKey{}, p))
	r.Body = io.NopCloser(bytes.NewReader(body))
	f.next.ServeHTTP(w, r)
	if !p.taken.Load() {
		f.g.log.ErrorContext(r.Context(), "the go-sdk answered a tools/call without the response of the function the fast path invoked",
			"tool", t.Name, "request_id", env.RequestID, "trace_id", env.TraceID)
	}
}

// takePrefetched returns, once, what the fast path got for a call of
// function that it handed to the go-sdk (resp and err), giving env the
// call's ids.
func takePrefetched(ctx context.Context, function string, env *invoke.Request) (*prefetchedCall, bool) {
	p, ok := ctx.Value(prefetchedKey{}).(*prefetchedCall)
	if !ok || p.function != function || !p.taken.CompareAndSwap(false, true) {
		return nil, false
	}
	env.RequestID, env.TraceID = p.requestID, p.traceID
	return p, true
}

// transcodeToolResult appends to dst the result the go-sdk writes for a
// function's result in the form lambdafn writes it:
//
//	{"_meta":{"switchboard.dev/trace_id":"…"},"content":[{"type":"text","text":"…"}],"structuredContent":…}
//	{"_meta":{"switchboard.dev/trace_id":"…"},"content":[{"type":"text","text":"…"}],"isError":true}
//
// The go-sdk decodes such a result and encodes it again with HTML escaping
// (sessionless: with its implementation in _meta and the result type), so
// the two differ only in escapes of <, > and & and those additions. It
// returns the length of the result it read (result may go on), or false
// for anything else.
func transcodeToolResult(dst, result []byte, sessionless bool, serverInfo []byte) ([]byte, int, bool) {
	const (
		metaOpen    = `{"_meta":{"` + invoke.TraceMetaKey + `":`
		contentOpen = `},"content":[{"type":"text","text":`
		contentEnd  = `}]`
		structured  = `,"structuredContent":`
		isError     = `,"isError":true`
	)
	rest, ok := bytes.CutPrefix(result, []byte(metaOpen))
	if !ok {
		return dst, 0, false
	}
	s := &rawjson.Scanner{Data: rest}
	trace, ok := s.PlainString()
	if !ok {
		return dst, 0, false
	}
	rest = rest[s.Pos:]
	dst = append(dst, `{"_meta":{`...)
	if sessionless {
		dst = append(dst, `"`+mcp.MetaKeyServerInfo+`":`...)
		dst = append(dst, serverInfo...)
		dst = append(dst, ',')
	}
	dst = append(dst, `"`+invoke.TraceMetaKey+`":"`...)
	dst = append(dst, trace...)
	dst = append(dst, '"')
	if rest, ok = bytes.CutPrefix(rest, []byte(contentOpen)); !ok {
		return dst, 0, false
	}
	dst = append(dst, contentOpen...)
	var n int
	if dst, n = transcodeCanonicalString(dst, rest); n == 0 {
		return dst, 0, false
	}
	if rest, ok = bytes.CutPrefix(rest[n:], []byte(contentEnd)); !ok {
		return dst, 0, false
	}
	dst = append(dst, contentEnd...)
	if after, ok := bytes.CutPrefix(rest, []byte(structured)); ok {
		dst = append(dst, structured...)
		if dst, n = transcodeCompact(dst, after); n == 0 {
			return dst, 0, false
		}
		rest = after[n:]
	}
	if after, ok := bytes.CutPrefix(rest, []byte(isError)); ok {
		dst = append(dst, isError...)
		rest = after
	}
	if len(rest) == 0 || rest[0] != '}' {
		return dst, 0, false
	}
	if sessionless {
		dst = append(dst, `,"resultType":"complete"`...)
	}
	return append(dst, '}'), len(result) - len(rest) + 1, true
}
