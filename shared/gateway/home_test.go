package gateway_test

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/gateway"
)

// page is what a browser would show of the home page: its text, and the
// elements and attributes that could load something from elsewhere.
type page struct {
	text    string
	loaders []string
}

// parsePage parses the home page as XML, which it is written to be (every
// element closed, entities escaped), so that a strict parser proves it well
// formed. No HTML parser is in the standard library.
func parsePage(t *testing.T, body string) page {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(body))
	dec.Strict = true
	var p page
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the page is not well formed: %v\n%s", err, body)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if slices.Contains([]string{"script", "link", "img", "iframe", "object", "embed"}, tok.Name.Local) {
				p.loaders = append(p.loaders, tok.Name.Local)
			}
			for _, a := range tok.Attr {
				if a.Name.Local == "src" || (a.Name.Local == "href" && tok.Name.Local != "a") {
					p.loaders = append(p.loaders, tok.Name.Local+" "+a.Name.Local)
				}
			}
		case xml.CharData:
			text.Write(tok)
		}
	}
	p.text = text.String()
	return p
}

func TestTheHomePageSaysWhatThisIsAndHowToConnect(t *testing.T) {
	for _, tc := range []struct {
		name        string
		anonymous   bool
		host        string
		wantText    []string
		notWantText []string
	}{
		{"WithoutKeys", true, "", []string{
			"Model Context Protocol server", "/mcp (Streamable HTTP", "requests act for tenant local",
			"claude mcp add --transport http switchboard http://127.0.0.1",
			"npx @modelcontextprotocol/inspector@" + gateway.InspectorVersion + " --cli http://127.0.0.1",
			"memory: 10 tools", "operations: 1 tool\n",
		}, []string{"SWITCHBOARD_KEY"}},
		{"WithKeysRequired", false, "", []string{
			"Requests need an API key: Authorization: Bearer <key>",
			`--method tools/list --header "Authorization: Bearer $SWITCHBOARD_KEY"`,
		}, []string{"tenant local"}},
		// Go's server refuses a Host with < or "; & and ' are allowed, and must be escaped.
		{"WithAHostHeaderToEscape", true, `evil&x'y`, []string{`http://evil&x'y/mcp`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(o *gateway.Options) {
				if !tc.anonymous {
					o.Anonymous = nil
				}
			})
			req, _ := http.NewRequest(http.MethodGet, h.url+"/", nil)
			if tc.host != "" {
				req.Host = tc.host
			}
			resp := do(t, req)
			if resp.status != http.StatusOK || !strings.HasPrefix(resp.header.Get("Content-Type"), "text/html") {
				t.Fatalf("GET / = %d %s", resp.status, resp.header.Get("Content-Type"))
			}
			p := parsePage(t, resp.body)
			for _, w := range tc.wantText {
				if !strings.Contains(p.text, w) {
					t.Errorf("the page's text lacks %q:\n%s", w, p.text)
				}
			}
			for _, w := range tc.notWantText {
				if strings.Contains(p.text, w) {
					t.Errorf("the page's text has %q:\n%s", w, p.text)
				}
			}
			if len(p.loaders) > 0 {
				t.Errorf("the page loads from elsewhere: %v", p.loaders)
			}
		})
	}
	h := newHarness(t, nil)
	if resp := do(t, rawReq(http.MethodGet, h.url+"/nowhere", "")); resp.status != http.StatusNotFound {
		t.Errorf("GET /nowhere = %d, want 404", resp.status)
	}
}

// TestTheInstructionsDescribeEveryFamily checks the instructions a host gets
// at initialize: they name a tool of every family, and every tool they name
// exists.
func TestTheInstructionsDescribeEveryFamily(t *testing.T) {
	h := newHarness(t, nil)
	cs := h.connect(t, "", nil)
	ins := cs.InitializeResult().Instructions
	cat := catalog.Default()
	named := map[string]bool{}
	for _, name := range regexp.MustCompile(`\b[a-z]+(?:[_-][a-z]+)*\b`).FindAllString(ins, -1) {
		if name == "_meta" || name == gateway.ToolSearchName {
			continue
		}
		tool, ok := cat.Tool(name)
		if !strings.ContainsAny(name, "_-") { // a plain word names a tool only if one is so named (chat)
			if ok && tool.Visibility == catalog.Public {
				named[tool.Family] = true
			}
			continue
		}
		if !ok || tool.Visibility != catalog.Public {
			t.Errorf("the instructions name %q, which is no tool a host can call", name)
			continue
		}
		named[tool.Family] = true
	}
	for _, tool := range cat.Tools() {
		if tool.Visibility == catalog.Public && !named[tool.Family] {
			t.Errorf("the instructions name no tool of the %s family:\n%s", tool.Family, ins)
			named[tool.Family] = true
		}
	}
}

// TestTheHintsRunThePinnedInspector keeps the Inspector version the hints
// name equal to the one scripts/lib/node pins, which the tests drive.
func TestTheHintsRunThePinnedInspector(t *testing.T) {
	b, err := os.ReadFile("../../scripts/lib/node/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	if got := pkg.Dependencies["@modelcontextprotocol/inspector"]; got != gateway.InspectorVersion {
		t.Errorf("scripts/lib/node pins the Inspector at %s; the hints name %s", got, gateway.InspectorVersion)
	}
}
