package catalog

// Request size limits. A deployed call crosses API Gateway and two Lambda
// invocations: the HTTP API hands the gateway function an event holding the
// body (base64-encoded when its content type is not text, so 4/3 of it), and
// the gateway passes the arguments on to the tool's function byte for byte.
// Both invocations are synchronous, so both are bound by Lambda's payload
// limit, which is tighter than the HTTP API's. Locally the same limits hold,
// so that what works on a laptop works deployed.
const (
	// HTTPAPIPayloadBytes is what an API Gateway HTTP API accepts (10 MB).
	HTTPAPIPayloadBytes = 10_000_000
	// LambdaPayloadBytes is Lambda's limit on a synchronous invocation's
	// payload (6 MB; read as decimal megabytes, the smaller reading).
	LambdaPayloadBytes = 6_000_000
	// EventOverheadBytes is what an API Gateway event adds around the body:
	// headers (at most 10 KiB on an HTTP API), the request context.
	EventOverheadBytes = 64 << 10
	// MaxRequestBytes is the largest request body the deployed gateway
	// function can receive: base64-encoded, plus the event around it, it
	// still fits [LambdaPayloadBytes]. No tool's limit may exceed it.
	MaxRequestBytes = (LambdaPayloadBytes - EventOverheadBytes) / 4 * 3
	// DefaultRequestBytes is the request body limit of everything but the
	// tools that set [Tool.MaxRequestBytes]: initialize, lists, reads, and
	// calls of tools with small arguments.
	DefaultRequestBytes = 1 << 20
	// EnvelopeBytes is what a tools/call request adds around a tool's
	// arguments: the JSON-RPC members, the tool's name, _meta.
	EnvelopeBytes = 64 << 10
)

// IngestRequestBytes is vector_document_ingest's request limit: content (1
// MiB) and content_base64 (1 MiB decoded, 1.4 MB) together, as its schema
// allows, with room for text's JSON escapes.
const IngestRequestBytes = 3 << 20

// RequestBytes is the largest request body a call of t may have:
// [Tool.MaxRequestBytes] if set, else [DefaultRequestBytes].
func (t *Tool) RequestBytes() int64 {
	if t.MaxRequestBytes > 0 {
		return t.MaxRequestBytes
	}
	return DefaultRequestBytes
}

// RequestBytesFor is the request body limit of a tool whose arguments may
// take argBytes bytes of JSON.
func RequestBytesFor(argBytes int64) int64 { return argBytes + EnvelopeBytes }

// MaxRequestBytes returns the largest request body any of c's tools accepts,
// and at least [DefaultRequestBytes].
func (c *Catalog) MaxRequestBytes() int64 {
	n := int64(DefaultRequestBytes)
	for _, t := range c.tools {
		n = max(n, t.RequestBytes())
	}
	return n
}
