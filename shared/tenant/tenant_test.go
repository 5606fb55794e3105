package tenant

import "testing"

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
