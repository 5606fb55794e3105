package career_test

import (
	"archive/zip"
	"bytes"
	"flag"
	"fmt"
	"html"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/document/documenttest"
)

var update = flag.Bool("update", false, "rewrite the generated resume fixtures in testdata")

// The DOCX and PDF resumes under testdata are built by the functions below,
// as a word processor would write them, and checked against what they build:
// go test ./shared/career -run TestResumeFixturesAreBuiltByTheirGenerators -update
// rewrites them.
func TestResumeFixturesAreBuiltByTheirGenerators(t *testing.T) {
	for name, build := range map[string]func() ([]byte, error){
		"priya-raman.docx": buildResumeDOCX,
		"lee-chen.pdf":     buildResumePDF,
	} {
		t.Run(name, func(t *testing.T) {
			want, err := build()
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := os.WriteFile("testdata/"+name, want, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := readFixture(t, name); !bytes.Equal(got, want) {
				t.Errorf("testdata/%s is not what its generator builds; run with -update", name)
			}
		})
	}
}

// A paragraph of a DOCX resume: its style ("Title", or "" for plain text)
// and whether it is a bulleted list item.
type docxPara struct {
	style  string
	bullet bool
	text   string
}

// priyaRaman is the DOCX resume: a Title style name, and then, as many
// resumes are written, section headings typed in capitals rather than styled
// as headings, and bulleted lists.
var priyaRaman = []docxPara{
	{style: "Title", text: "Priya Raman"},
	{text: "Data engineer in Manchester who builds streaming analytics platforms."},
	{text: "EXPERIENCE"},
	{text: "Staff Data Engineer, Fabrikam (2019-2025)"},
	{bullet: true, text: "Designed the event pipeline that loads 5 TB a day into BigQuery with exactly-once delivery."},
	{bullet: true, text: "Cut the nightly batch from six hours to forty minutes by moving it to Apache Beam."},
	{text: "Data Engineer, Tailspin Toys (2015-2019)"},
	{bullet: true, text: "Built the sales forecasting models in Python & scikit-learn."},
	{text: "SKILLS"},
	{bullet: true, text: "Python, SQL, Apache Beam, BigQuery, Airflow"},
	{bullet: true, text: "Coaching analysts in data modelling"},
	{text: "EDUCATION"},
	{text: "MSc Statistics, University of Manchester"},
}

// buildResumeDOCX writes priyaRaman as a minimal .docx: stored (not deflated)
// entries with a fixed time, so the bytes never vary.
func buildResumeDOCX() ([]byte, error) {
	var body strings.Builder
	for _, p := range priyaRaman {
		body.WriteString("<w:p>")
		switch {
		case p.style != "":
			fmt.Fprintf(&body, `<w:pPr><w:pStyle w:val="%s"/></w:pPr>`, p.style)
		case p.bullet:
			body.WriteString(`<w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr>`)
		}
		fmt.Fprintf(&body, "<w:r><w:t>%s</w:t></w:r></w:p>", html.EscapeString(p.text))
	}
	parts := []struct{ name, content string }{
		{"[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="xml" ContentType="application/xml"/>` +
			`<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`},
		{"word/document.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` +
			`<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` +
			body.String() + `<w:sectPr/></w:body></w:document>`},
	}
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for _, p := range parts {
		fw, err := w.CreateHeader(&zip.FileHeader{Name: p.name, Method: zip.Store, Modified: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			return nil, err
		}
		if _, err := fw.Write([]byte(p.content)); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// A line of a PDF resume: its font size, the gap above it (points) and its
// text, in WinAnsiEncoding (\x95 is a bullet).
type pdfLine struct {
	size, gap float64
	text      string
}

// leeChen is the PDF resume, laid out as a resume template would: a large
// name, section headings a size above the body, bullets drawn as "•".
var leeChen = []pdfLine{
	{20, 0, "Lee Chen"},
	{10, 16, "Site reliability engineer, Toronto"},
	{13, 24, "Experience"},
	{10, 18, "Site Reliability Engineer, Adatum (2020-2025)"},
	{10, 14, "\x95 Automated failover of the Postgres fleet, cutting recovery time from 40 to 4 minutes."},
	{10, 14, "\x95 Ran the on-call rotation for 12 teams and wrote its runbooks."},
	{10, 22, "Systems Administrator, Litware (2016-2020)"},
	{10, 14, "\x95 Moved 200 servers into Terraform-managed AWS accounts."},
	{13, 24, "Skills"},
	{10, 18, "\x95 Kubernetes, Terraform, Prometheus, Go, Bash"},
	{13, 24, "Interests"},
	{10, 18, "\x95 Climbing and open data meetups"},
}

// buildResumePDF writes leeChen as a one-page PDF with a Helvetica font and
// an uncompressed content stream.
func buildResumePDF() ([]byte, error) {
	var content strings.Builder
	y := 760.0
	for _, l := range leeChen {
		y -= l.gap
		text := strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(l.text)
		fmt.Fprintf(&content, "BT /F1 %g Tf 72 %g Td (%s) Tj ET\n", l.size, y, text)
	}
	return documenttest.PDF([]string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R /Resources << /Font << /F1 4 0 R >> >> >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", content.Len(), content.String()),
	}, "/Root 1 0 R"), nil
}
