package tenant

import (
	"strings"
	"testing"
)

func TestOwnBlobKeyAcceptsOnlyKeysInsideTheCallersPrefix(t *testing.T) {
	c := Caller{Tenant: "acme"}
	tests := []struct {
		key string
		ok  bool
	}{
		{"tenants/acme/resumes/cv.pdf", true},
		{"tenants/acme/documents/kb/guide.md", true},
		{"tenants/acme/", false},
		{"tenants/acme", false},
		{"tenants/other/resumes/cv.pdf", false},
		{"tenants/acmecorp/resumes/cv.pdf", false},
		{"tenants/acme/../other/cv.pdf", false},
		{"tenants/acme/resumes/../../other/cv.pdf", false},
		{"tenants/acme/./cv.pdf", false},
		{"tenants/acme//cv.pdf", false},
		{"tenants/acme/a\\..\\b", false},
		{"tenants/acme/resumes/cv..md", false},
		{"tenants/acme/..hidden/cv.md", false},
		{"tenants/acme/resumes/cv.md..", false},
		{"tenants/acme/.well-known/cv.md", true},
		{"/tenants/acme/cv.pdf", false},
		{"resumes/cv.pdf", false},
	}
	for _, tt := range tests {
		if err := OwnBlobKey(c, tt.key); (err == nil) != tt.ok {
			t.Errorf("OwnBlobKey(%q) = %v, want ok=%v", tt.key, err, tt.ok)
		}
	}
}

func TestValidatePrincipalRefusesWhatATerminalOrAnAuditLogWouldMisshow(t *testing.T) {
	tests := []struct {
		name      string
		principal string
		ok        bool
	}{
		{"a plain name is accepted", "alice", true},
		{"a bot name with punctuation is accepted", "ci-bot@example.com", true},
		{"words separated by spaces are accepted", "Zoë Müller (ops)", true},
		{"letters of any script are accepted", "山田太郎", true},
		{"an emoji is accepted", "robot 🤖", true},
		{"the longest principal is accepted", strings.Repeat("é", MaxPrincipalRunes), true},
		{"an empty principal is refused", "", false},
		{"a principal one character too long is refused", strings.Repeat("é", MaxPrincipalRunes+1), false},
		{"a newline is refused", "two\nlines", false},
		{"a NUL byte is refused", "a\x00b", false},
		{"a tab is refused", "a\tb", false},
		{"an ANSI escape sequence is refused", "alice\x1b[2J\x1b[31m", false},
		{"DEL is refused", "alice\x7f", false},
		{"a C1 control (CSI) is refused", "alice\u009b31m", false},
		{"a right-to-left override is refused", "alice\u202egnp.exe", false},
		{"a zero-width space is refused", "ali\u200bce", false},
		{"a byte-order mark is refused", "\ufeffalice", false},
		{"a line separator is refused", "a\u2028b", false},
		{"a no-break space is refused", "a\u00a0b", false},
		{"a private-use character is refused", "a\ue000", false},
		{"invalid UTF-8 is refused", "a\xffb", false},
		{"a leading space is refused", " alice", false},
		{"a trailing space is refused", "alice ", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := ValidatePrincipal(tt.principal); (err == nil) != tt.ok {
				t.Errorf("ValidatePrincipal(%q) = %v, want ok=%v", tt.principal, err, tt.ok)
			}
		})
	}
}
