package approvalpage_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/switchboard-dev/switchboard/shared/approvalpage"
	"github.com/switchboard-dev/switchboard/shared/connector"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// ChromiumEnv names the Chromium the browser test drives; without it the
// test looks for chromium on the PATH, and skips when there is none.
const ChromiumEnv = "SWITCHBOARD_CHROMIUM"

func chromium(t *testing.T) string {
	if p := os.Getenv(ChromiumEnv); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium: install Debian's chromium (scripts/test does) or set " + ChromiumEnv)
	return ""
}

// browser starts a headless Chromium and returns a context of its first tab.
func browser(t *testing.T) context.Context {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox, // CI runs as root
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelBrowser := chromedp.NewContext(ctx)
	t.Cleanup(cancelBrowser)
	return ctx
}

// withKeyOf makes every request of a tab carry c's key, as /mcp requests do.
func withKeyOf(c tenant.Caller) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		_, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Authorization": bearer(c)}})
		return err
	})
}

// TestInChromiumUnderAStage approves on the page served under a path prefix
// its server takes off, as a REST API's stage is (/v1/approvals/<id>, over
// HTTP as the local stand-in serves it): the browser posts the form to that
// page and sends the form's cookie with it.
func TestInChromiumUnderAStage(t *testing.T) {
	ctx := browser(t)
	e := newEnv(t)
	mux := http.NewServeMux()
	mux.Handle(approvalpage.Prefix, e.page)
	srv := httptest.NewServer(http.StripPrefix("/v1", mux))
	t.Cleanup(srv.Close)
	id := e.ask(t, e.alice, "10 EUR")
	if err := chromedp.Do(ctx, withKeyOf(e.alice), chromedp.Navigate(srv.URL+"/v1"+connector.ApprovalURL(id)),
		chromedp.Click(chromedp.CSS("#approve")), chromedp.WaitNotPresent(chromedp.CSS("#approve"))); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("h1")))
	if err != nil || title != "Approved" || e.status(t, id) != connector.ApprovalGranted {
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		t.Fatalf("after Approve: title %q (%v), stored %s; the page says:\n%s", title, err, e.status(t, id), body)
	}
}

// TestInChromium opens an approval's page in two tabs of a real browser,
// with the caller's bearer key, approves in one and approves again in the
// other: the first click grants the approval, the second is refused, and
// the call then runs once.
func TestInChromium(t *testing.T) {
	ctx := browser(t)
	e := newEnv(t)
	mux := http.NewServeMux()
	mux.Handle(approvalpage.Prefix, e.page)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	id := e.ask(t, e.alice, `<b>10 EUR</b>`)
	page := srv.URL + connector.ApprovalURL(id)
	withKey := withKeyOf(e.alice)
	text := func(ctx context.Context, sel string) string {
		t.Helper()
		rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		s, err := chromedp.Run(rctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
			t.Fatalf("reading %s: %v; the page says:\n%s", sel, err, body)
		}
		return s
	}

	if err := chromedp.Do(ctx, withKey, chromedp.Navigate(page)); err != nil {
		t.Fatal(err)
	}
	// The style sheet applies: the policy's hash is the style's.
	maxWidth, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.body).maxWidth`))
	if err != nil {
		t.Fatal(err)
	}
	if tool, args := text(ctx, "#tool"), text(ctx, "#arguments"); tool != "charge" || !strings.Contains(args, `"amount": "<b>10 EUR</b>"`) || maxWidth != "672px" {
		t.Fatalf("the page shows tool %q, arguments %q, body max-width %q", tool, args, maxWidth)
	}

	second, cancel := chromedp.NewContext(ctx) // another tab of the same browser, cookies shared
	defer cancel()
	if err := chromedp.Do(second, withKey, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#approve"))); err != nil {
		t.Fatal(err)
	}

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#approve")), chromedp.WaitNotPresent(chromedp.CSS("#approve"))); err != nil {
		t.Fatal(err)
	}
	if title, status := text(ctx, "h1"), text(ctx, "#status"); title != "Approved" || status != connector.ApprovalGranted || e.status(t, id) != connector.ApprovalGranted {
		t.Fatalf("after Approve: title %q, status %q, stored %s", title, status, e.status(t, id))
	}

	if err := chromedp.Do(second, chromedp.Click(chromedp.CSS("#approve")), chromedp.WaitNotPresent(chromedp.CSS("#approve"))); err != nil {
		t.Fatal(err)
	}
	if again := text(second, "h1"); again != "Already decided" {
		t.Fatalf("the second click shows %q, want Already decided", again)
	}

	if res, err := e.retry(e.alice, `<b>10 EUR</b>`, id); err != nil || res.IsError {
		t.Fatalf("retry = %+v, %v", res, err)
	}
	if n := e.charges.Load(); n != 1 {
		t.Fatalf("the upstream ran %d times, want once", n)
	}
}
