package gateway_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/career"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// TestTheLargestArgumentsASchemaAllowsReachTheTool sends each tool that takes
// a document inline its largest arguments (each inline field at the schema's
// maxLength, every other field at its own) through the MCP client: the call
// must reach the tool, never a 413. (vector_document_ingest takes content
// when given both it and content_base64.)
func TestTheLargestArgumentsASchemaAllowsReachTheTool(t *testing.T) {
	h := newHarness(t, nil)
	cs := h.connect(t, "", nil)
	mustCall(t, cs, "vector_store_create", map[string]any{"alias": "big"})
	metadata := map[string]any{}
	for i := range vector.MaxMetadataKeys {
		key := fmt.Sprintf("k%02d", i) + strings.Repeat("k", vector.MaxMetadataKeyBytes-3)
		metadata[key] = strings.Repeat("v", vector.MaxMetadataValue)
	}
	// Text of many short lines: a resume of that many statements is refused
	// by the domain, which is the point: the tool, not the gateway, says so.
	lines := "EXPERIENCE\n" + strings.Repeat("- Shipped the billing service to production\n", career.MaxInlineResumeBytes/44+1)
	doc := func(fields ...string) map[string]any {
		args := map[string]any{
			"store": "big", "doc_id": strings.Repeat("d", vector.MaxDocIDBytes), "file_name": strings.Repeat("f", vector.MaxDocIDBytes-4) + ".txt",
			"metadata": metadata,
		}
		for _, f := range fields {
			args[f] = lines[:vector.MaxInlineBytes]
			if f == "content_base64" {
				args[f] = base64.StdEncoding.EncodeToString([]byte(lines[:vector.MaxInlineBytes]))
			}
		}
		return args
	}
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		wantText   string
	}{
		{"BothInlineDocumentFields", "vector_document_ingest", doc("content", "content_base64"), "give the document exactly one way"},
		{"TheLargestBinaryDocument", "vector_document_ingest", doc("content_base64"), `"status":"added"`},
		{"TheLargestResume", "ingest_resume", map[string]any{
			"file_name":      strings.Repeat("r", 251) + ".txt",
			"content_base64": base64.StdEncoding.EncodeToString([]byte(lines[:career.MaxInlineResumeBytes])),
			"persist":        false, "trace_id": strings.Repeat("0", 32),
		}, fmt.Sprintf("more than %d", career.MaxResumeAtoms)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := json.Marshal(tc.args)
			tool, _ := catalog.Default().Tool(tc.tool)
			if int64(len(b)) < tool.RequestBytes()/3 {
				t.Fatalf("arguments of %d bytes are not near the limit %d: the test is not testing it", len(b), tool.RequestBytes())
			}
			res := call(t, cs, tc.tool, tc.args)
			got := text(res)
			if !strings.Contains(got, tc.wantText) {
				t.Errorf("%d bytes of arguments answered %.300s; want %q", len(b), got, tc.wantText)
			}
		})
	}
}

// TestTheBodyLimitFollowsTheTool sends bodies of exactly a limit, which pass,
// and one byte more, which get a 413 whose JSON-RPC error gives the limit,
// with the length declared and without.
func TestTheBodyLimitFollowsTheTool(t *testing.T) {
	h := newHarness(t, nil)
	cs := h.connect(t, "", nil)
	mustCall(t, cs, "vector_store_create", map[string]any{"alias": "docs"})
	// body returns a tools/call of tool with args, padded with whitespace
	// between tokens to n bytes.
	body := func(tool, args string, n int64) string {
		head := `{"jsonrpc":"2.0","id":7,"method":"tools/call",`
		tail := `"params":{"name":"` + tool + `","arguments":` + args + `}}`
		return head + strings.Repeat(" ", int(n)-len(head)-len(tail)) + tail
	}
	ingest := `{"store":"docs","file_name":"a.txt","content":"Alpha beta gamma."}`
	resume := `{"file_name":"a.txt","content_base64":"` + base64.StdEncoding.EncodeToString([]byte("SKILLS\n- Go\n")) + `","persist":false}`
	message := `{"conversation_id":"limits","role":"user","content":"hi"}`
	for _, tc := range []struct {
		name, tool, args string
		limit            int64
		wantTool         string // named in the 413
		wantID           any
	}{
		{"AnInlineDocument", "vector_document_ingest", ingest, catalog.IngestRequestBytes, "vector_document_ingest", 7.0},
		// The largest limit of all: a longer body is refused before it is read.
		{"AnInlineResume", "ingest_resume", resume, catalog.MaxRequestBytes, "", nil},
		{"AnyOtherTool", "memory_add_message", message, catalog.DefaultRequestBytes, "", 7.0},
	} {
		for _, chunked := range []bool{false, true} {
			send := func(n int64) rawResponse {
				r := rawReq(http.MethodPost, h.url+"/mcp", body(tc.tool, tc.args, n))
				if chunked {
					r.Body, r.ContentLength = io.NopCloser(strings.NewReader(body(tc.tool, tc.args, n))), -1
				}
				return do(t, r)
			}
			t.Run(fmt.Sprintf("%s/Chunked=%v", tc.name, chunked), func(t *testing.T) {
				if at := send(tc.limit); at.status != http.StatusOK || len(at.messages) == 0 || at.messages[0]["result"] == nil {
					t.Errorf("a body of exactly %d bytes got %d %.300s; want a result", tc.limit, at.status, at.body)
				}
				over := send(tc.limit + 1)
				want := fmt.Sprintf("request body is %d bytes, more than the %d bytes this server accepts", tc.limit+1, tc.limit)
				if chunked && tc.wantID == nil {
					want = fmt.Sprintf("request body is more than the %d bytes this server accepts", tc.limit)
				}
				if tc.wantTool != "" {
					want += " for a call of " + tc.wantTool
				}
				var e struct {
					ID    any `json:"id"`
					Error struct {
						Code    int    `json:"code"`
						Message string `json:"message"`
						Data    struct {
							Limit int64 `json:"limit"`
						} `json:"data"`
					} `json:"error"`
				}
				if err := json.Unmarshal([]byte(over.body), &e); err != nil || over.status != http.StatusRequestEntityTooLarge ||
					e.Error.Code != -32600 || e.Error.Message != want || e.Error.Data.Limit != tc.limit || e.ID != tc.wantID {
					t.Errorf("a body of %d bytes got %d %.300s; want 413 with id %v and %q", tc.limit+1, over.status, over.body, tc.wantID, want)
				}
			})
		}
	}
	t.Run("ADeclaredLengthOverEveryLimitIsRefusedUnread", func(t *testing.T) {
		max := catalog.Default().MaxRequestBytes()
		r := rawReq(http.MethodPost, h.url+"/mcp", "")
		r.ContentLength = max + 1
		r.Body = io.NopCloser(io.LimitReader(neverEnding('x'), max+1))
		resp := do(t, r)
		if resp.status != http.StatusRequestEntityTooLarge || !strings.Contains(resp.body, fmt.Sprintf("more than the %d bytes", max)) {
			t.Errorf("got %d %.300s", resp.status, resp.body)
		}
	})
}

type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}
