package document

// The parts of built.docx: what Word writes that LibreOffice's fixture does
// not show. Style ids are localised (German "berschrift1"), so headings are
// found through styles.xml.
const (
	testDOCXCore   = `<dc:title>Metadata title</dc:title>`
	testDOCXStyles = `<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/></w:style>` +
		`<w:style w:type="paragraph" w:styleId="berschrift1"><w:name w:val="heading 1"/><w:pPr><w:outlineLvl w:val="0"/></w:pPr></w:style>` +
		`<w:style w:type="paragraph" w:styleId="Custom3"><w:name w:val="My Section"/><w:pPr><w:outlineLvl w:val="2"/></w:pPr></w:style>` +
		`<w:style w:type="paragraph" w:styleId="Aufzhlungszeichen"><w:name w:val="List Bullet"/></w:style>`
	testDOCXBody = `<w:body>` +
		`<w:p><w:pPr><w:pStyle w:val="Title"/></w:pPr><w:r><w:t>Built document</w:t></w:r></w:p>` +
		`<w:p><w:pPr><w:tabs><w:tab w:val="left" w:pos="709"/></w:tabs></w:pPr>` +
		`<w:r><w:t xml:space="preserve">Name:</w:t></w:r><w:r><w:tab/><w:t>Ada</w:t><w:br/><w:t>Second line</w:t></w:r>` +
		`<w:del><w:r><w:delText>deleted words</w:delText></w:r></w:del>` +
		`<w:r><w:t xml:space="preserve"> and a </w:t></w:r><w:hyperlink r:id="rId1"><w:r><w:t>link</w:t></w:r></w:hyperlink><w:r><w:t>.</w:t></w:r></w:p>` +
		`<w:p><w:pPr><w:pStyle w:val="berschrift1"/></w:pPr><w:r><w:t>Experience</w:t></w:r></w:p>` +
		`<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="3"/></w:numPr></w:pPr><w:r><w:t>Built search</w:t></w:r></w:p>` +
		`<w:p><w:pPr><w:numPr><w:ilvl w:val="1"/><w:numId w:val="3"/></w:numPr></w:pPr><w:r><w:t>in Go</w:t></w:r></w:p>` +
		`<w:p><w:pPr><w:pStyle w:val="Aufzhlungszeichen"/></w:pPr><w:r><w:t>Styled bullet</w:t></w:r></w:p>` +
		`<w:p><w:pPr><w:pStyle w:val="Aufzhlungszeichen"/><w:numPr><w:numId w:val="0"/></w:numPr></w:pPr><w:r><w:t>Numbering removed</w:t></w:r></w:p>` +
		`<w:p><w:pPr><w:pStyle w:val="Custom3"/></w:pPr><w:r><w:t>Outline level three</w:t></w:r></w:p>` +
		`<w:p><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wps:txbx><w:txbxContent>` +
		`<w:p><w:r><w:t>Text box content</w:t></w:r></w:p></w:txbxContent></wps:txbx></w:drawing></mc:Choice>` +
		`<mc:Fallback><w:pict><w:txbxContent><w:p><w:r><w:t>Text box content</w:t></w:r></w:p></w:txbxContent></w:pict></mc:Fallback>` +
		`</mc:AlternateContent></w:r><w:r><w:t>Paragraph around a text box.</w:t></w:r></w:p>` +
		`<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Skill</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Level</w:t></w:r></w:p></w:tc></w:tr>` +
		`<w:tr><w:tc><w:p><w:r><w:t>Go | Rust</w:t></w:r></w:p><w:p><w:r><w:t>and C</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>expert</w:t></w:r></w:p></w:tc></w:tr>` +
		`<w:tr><w:tc><w:p><w:r><w:t>Short row</w:t></w:r></w:p></w:tc></w:tr></w:tbl>` +
		`<w:p><w:r><w:t>日本語の段落です。</w:t></w:r></w:p>` +
		`<w:sectPr/></w:body>`
)
