// Package localfs is the [store.Blobs] backend for a laptop: one file per
// object under a root folder, no server. It has S3's semantics (only-if-absent
// puts, byte ranges, listing in key order with a cursor) so code that runs
// here runs on S3.
//
//	blobs := localfs.New(filepath.Join(dataDir, "blobs"))
//	defer blobs.Close()
//	info, err := blobs.Put(ctx, "t/"+tenant+"/resumes/"+id, pdf, &store.PutOptions{ContentType: "application/pdf", IfAbsent: true})
//	if errors.Is(err, store.ErrConditionFailed) {
//		// an object is already there
//	}
//	rc, info, err := blobs.Get(ctx, info.Key, &store.GetOptions{Offset: 0, Length: 512})
//
// # Layout
//
// Every key segment but the last is a folder; the last is a file named after
// it with a "~" appended, so the keys "a/b" and "a/b/c" can both exist (the
// file "a/b~" and the folder "a/b"). Each segment is escaped so that it is a
// safe file name on case-insensitive and Unicode-normalising file systems
// (macOS): lower-case ASCII letters, digits, '-', '_' and '.' stand for
// themselves, an upper-case letter is written '!' and its lower-case form (as
// the Go module cache does), and every other byte is written %xx. An escaped
// segment may be at most [MaxSegmentBytes] bytes, a file name's limit; keys
// with longer segments are refused with [store.ErrInvalid], the one way this
// backend is stricter than S3.
//
// A file holds one line of JSON (content type, ETag, modification time, size)
// followed by the object's bytes, so content and metadata change together in
// one rename. A put writes a temporary file in the root's "~tmp" folder,
// syncs it, and renames it over the object (or, for an only-if-absent put,
// hard-links it to the object's name, which fails if the name is taken: atomic
// between goroutines and between processes). Names containing "~" other than
// objects are never listed.
//
// # Plain files
//
// A key that no object holds may still be read, by Get and Head, from a plain
// file at the key's own path under the root (unescaped, no "~"): a file put
// there by hand, the local counterpart of uploading it to a bucket, so that
// tools taking an object key can read a file on the laptop. [Blobs.Where]
// names that path. Plain files are never listed or deleted, and keys with a
// "~" have none.
package localfs

import (
	"bufio"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/store"
)

var (
	_ store.Blobs   = (*Blobs)(nil)
	_ store.Locator = (*Blobs)(nil)
)

// MaxSegmentBytes bounds one escaped key segment: a file name of at most 255
// bytes (Linux's and macOS's limit) less the "~" that marks an object.
const MaxSegmentBytes = 254

const (
	tmpDir       = "~tmp"
	objectSuffix = "~"
	// maxHeaderBytes bounds the metadata line at the start of an object file.
	maxHeaderBytes = 8 << 10
	// staleTemp is the age after which Init removes a temporary file that a
	// crashed writer left behind.
	staleTemp = time.Hour
	// mkdirAttempts bounds the retries of a put racing a delete that prunes
	// the folder the put is writing into.
	mkdirAttempts = 10
)

// Blobs is a [store.Blobs] in a folder. Its methods are safe for use by
// multiple goroutines, and several processes may share one folder.
type Blobs struct {
	dir string

	mu     sync.Mutex
	root   *os.Root
	closed bool
}

// New returns a Blobs that keeps its objects under dir. It does no I/O: the
// folder is created and opened by [Blobs.Init], on first use.
func New(dir string) *Blobs {
	return &Blobs{dir: dir}
}

// Init creates the folder if needed, opens it, and removes temporary files
// that crashed writers left behind. Every method calls it; it does its work
// once, and again only after a failure.
func (b *Blobs) Init(ctx context.Context) error {
	_, err := b.init(ctx)
	return err
}

func (b *Blobs) init(ctx context.Context) (*os.Root, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, fmt.Errorf("localfs: %s: closed", b.dir)
	}
	if b.root != nil {
		return b.root, nil
	}
	if err := os.MkdirAll(b.dir, 0o700); err != nil {
		return nil, fmt.Errorf("localfs: init %s: %w", b.dir, err)
	}
	root, err := os.OpenRoot(b.dir)
	if err != nil {
		return nil, fmt.Errorf("localfs: init %s: %w", b.dir, err)
	}
	if err := root.Mkdir(tmpDir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		root.Close()
		return nil, fmt.Errorf("localfs: init %s: %w", b.dir, err)
	}
	sweepTemps(root)
	b.root = root
	return root, nil
}

// sweepTemps removes temporary files older than [staleTemp]: a live writer's
// is seconds old, whichever process it runs in.
func sweepTemps(root *os.Root) {
	f, err := root.Open(tmpDir)
	if err != nil {
		return
	}
	ents, _ := f.ReadDir(-1)
	f.Close()
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleTemp {
			root.Remove(path.Join(tmpDir, e.Name()))
		}
	}
}

// Close releases the folder. The Blobs is unusable afterwards.
func (b *Blobs) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	if b.root == nil {
		return nil
	}
	err := b.root.Close()
	b.root = nil
	return err
}

// header is the metadata line at the start of an object file.
type header struct {
	V           int       `json:"v"`
	ContentType string    `json:"content_type"`
	ETag        string    `json:"etag"`
	Modified    time.Time `json:"modified"`
	Size        int64     `json:"size"`
}

// Put implements the [store.Blobs] interface.
func (b *Blobs) Put(ctx context.Context, key string, data []byte, opts *store.PutOptions) (store.BlobInfo, error) {
	var o store.PutOptions
	if opts != nil {
		o = *opts
	}
	dir, file, err := objectPath(key)
	if err != nil {
		return store.BlobInfo{}, err
	}
	ct, err := store.ValidateContentType(o.ContentType)
	if err != nil {
		return store.BlobInfo{}, err
	}
	root, err := b.init(ctx)
	if err != nil {
		return store.BlobInfo{}, err
	}
	// The ETag is the hex MD5 of the content, as S3's is for an object put in
	// one request without KMS encryption, so one object has one ETag on both backends.
	sum := md5.Sum(data)
	h := header{V: 1, ContentType: ct, ETag: hex.EncodeToString(sum[:]), Modified: time.Now().UTC(), Size: int64(len(data))}
	tmp, err := writeTemp(root, h, data)
	if err != nil {
		return store.BlobInfo{}, fmt.Errorf("localfs: put object %s: %w", key, err)
	}
	defer root.Remove(tmp) // after a link, the temporary name is left; after a rename, this fails harmlessly

	name := path.Join(dir, file)
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return store.BlobInfo{}, err
		}
		created, err := mkdirs(root, dir)
		if err == nil {
			if o.IfAbsent {
				err = root.Link(tmp, name)
			} else {
				err = root.Rename(tmp, name)
			}
		}
		switch {
		case err == nil:
			// Make the new name, and any folder made for it, durable.
			for _, d := range append(created, dir) {
				syncDir(root, d)
			}
			return h.info(key), nil
		case o.IfAbsent && errors.Is(err, fs.ErrExist):
			return store.BlobInfo{}, fmt.Errorf("localfs: put object %s: %w", key, store.ErrConditionFailed)
		case errors.Is(err, fs.ErrNotExist) && attempt < mkdirAttempts:
			// A delete pruned a folder between our mkdir and our rename; make it again.
			continue
		}
		return store.BlobInfo{}, fmt.Errorf("localfs: put object %s: %w", key, err)
	}
}

// writeTemp writes h and data to a new file in the temporary folder, syncs
// and closes it, and returns its name.
func writeTemp(root *os.Root, h header, data []byte) (string, error) {
	line, err := json.Marshal(h)
	if err != nil {
		return "", err
	}
	var rnd [12]byte
	rand.Read(rnd[:])
	name := path.Join(tmpDir, hex.EncodeToString(rnd[:]))
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	w := bufio.NewWriter(f)
	w.Write(line)
	w.WriteByte('\n')
	w.Write(data)
	err = w.Flush()
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		root.Remove(name)
		return "", err
	}
	return name, nil
}

// mkdirs creates dir and any missing parents, returning the folders whose
// entries it changed, so that the caller can sync them.
func mkdirs(root *os.Root, dir string) ([]string, error) {
	if dir == "." {
		return nil, nil
	}
	if fi, err := root.Stat(dir); err == nil && fi.IsDir() {
		return nil, nil
	}
	var changed []string
	parent := "."
	for _, seg := range strings.Split(dir, "/") {
		d := path.Join(parent, seg)
		switch err := root.Mkdir(d, 0o700); {
		case err == nil:
			changed = append(changed, parent)
		case !errors.Is(err, fs.ErrExist):
			return changed, err
		}
		parent = d
	}
	return changed, nil
}

func syncDir(root *os.Root, dir string) {
	if f, err := root.Open(dir); err == nil {
		f.Sync()
		f.Close()
	}
}

// Get implements the [store.Blobs] interface. A range is cut at the end of
// the object; one that starts at or past the end reads nothing.
func (b *Blobs) Get(ctx context.Context, key string, opts *store.GetOptions) (io.ReadCloser, store.BlobInfo, error) {
	var o store.GetOptions
	if opts != nil {
		o = *opts
	}
	if o.Offset < 0 || o.Length < 0 {
		return nil, store.BlobInfo{}, fmt.Errorf("%w: byte range offset %d, length %d: both must be >= 0", store.ErrInvalid, o.Offset, o.Length)
	}
	f, h, off, err := b.open(ctx, key, "get")
	if err != nil {
		return nil, store.BlobInfo{}, err
	}
	start := min(o.Offset, h.Size)
	n := h.Size - start
	if o.Length > 0 && o.Length < n {
		n = o.Length
	}
	return &section{SectionReader: io.NewSectionReader(f, off+start, n), f: f}, h.info(key), nil
}

// section reads a byte range of an object file, which stays readable, as it
// was, even if a put replaces the object meanwhile.
type section struct {
	*io.SectionReader
	f *os.File
}

func (s *section) Close() error { return s.f.Close() }

// Head implements the [store.Blobs] interface.
func (b *Blobs) Head(ctx context.Context, key string) (store.BlobInfo, error) {
	f, h, _, err := b.open(ctx, key, "head")
	if err != nil {
		return store.BlobInfo{}, err
	}
	f.Close()
	return h.info(key), nil
}

// open opens the object file for key and reads its header, returning the
// offset at which the content begins.
func (b *Blobs) open(ctx context.Context, key, op string) (*os.File, header, int64, error) {
	dir, file, err := objectPath(key)
	if err != nil {
		return nil, header{}, 0, err
	}
	root, err := b.init(ctx)
	if err != nil {
		return nil, header{}, 0, err
	}
	f, h, off, err := openObject(root, path.Join(dir, file))
	if gone(err) {
		off = 0
		f, h, err = openPlain(root, key)
	}
	switch {
	case gone(err):
		return nil, header{}, 0, fmt.Errorf("localfs: %s object %s: %w", op, key, store.ErrNotFound)
	case err != nil:
		return nil, header{}, 0, fmt.Errorf("localfs: %s object %s: %w", op, key, err)
	}
	return f, h, off, nil
}

// openPlain opens the plain file at key's own path, describing it as an
// object: its ETag, like an object's, is the hex MD5 of its content.
func openPlain(root *os.Root, key string) (*os.File, header, error) {
	if strings.Contains(key, objectSuffix) {
		return nil, header{}, fs.ErrNotExist // an object file's or the temporary folder's name
	}
	f, err := root.Open(key)
	if err != nil {
		return nil, header{}, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fs.ErrNotExist
	}
	sum := md5.New()
	if err == nil {
		_, err = io.Copy(sum, f)
	}
	if err != nil {
		f.Close()
		return nil, header{}, err
	}
	return f, header{V: 1, ContentType: "application/octet-stream", ETag: hex.EncodeToString(sum.Sum(nil)), Modified: fi.ModTime().UTC(), Size: fi.Size()}, nil
}

// Where returns the path of the plain file that Get and Head read for key
// when no object holds it (see the package doc).
func (b *Blobs) Where(key string) string {
	dir, err := filepath.Abs(b.dir)
	if err != nil {
		dir = b.dir
	}
	return filepath.Join(dir, filepath.FromSlash(key))
}

func openObject(root *os.Root, name string) (*os.File, header, int64, error) {
	f, err := root.Open(name)
	if err != nil {
		return nil, header{}, 0, err
	}
	h, off, err := readHeader(f)
	if err != nil {
		f.Close()
		return nil, header{}, 0, err
	}
	return f, h, off, nil
}

func readHeader(f *os.File) (header, int64, error) {
	var h header
	line, err := bufio.NewReaderSize(io.LimitReader(f, maxHeaderBytes), 512).ReadBytes('\n')
	if err != nil {
		return h, 0, fmt.Errorf("corrupt object file %s: no metadata line", f.Name())
	}
	fi, err := f.Stat()
	if err != nil {
		return h, 0, err
	}
	off := int64(len(line))
	if err := json.Unmarshal(line, &h); err != nil || h.V != 1 || h.Size != fi.Size()-off {
		return h, 0, fmt.Errorf("corrupt object file %s: bad metadata line", f.Name())
	}
	return h, off, nil
}

func (h header) info(key string) store.BlobInfo {
	return store.BlobInfo{Key: key, Size: h.Size, ETag: h.ETag, ContentType: h.ContentType, Modified: h.Modified}
}

// Delete implements the [store.Blobs] interface. It also removes the folders
// the object leaves empty.
func (b *Blobs) Delete(ctx context.Context, key string) error {
	dir, file, err := objectPath(key)
	if err != nil {
		return err
	}
	root, err := b.init(ctx)
	if err != nil {
		return err
	}
	switch err := root.Remove(path.Join(dir, file)); {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("localfs: delete object %s: %w", key, err)
	}
	syncDir(root, dir)
	// Prune empty folders, deepest first; the first that is not empty (or
	// that a concurrent put is filling) stops it. A put that loses its
	// folder this way makes it again.
	for d := dir; d != "."; d = path.Dir(d) {
		if root.Remove(d) != nil {
			break
		}
	}
	return nil
}

// List implements the [store.Blobs] interface. It walks only the folders
// that can hold keys with the prefix and after the cursor, in key order.
// The BlobInfos it returns have no ContentType, as S3's listing has none.
func (b *Blobs) List(ctx context.Context, prefix string, opts *store.ListOptions) (store.BlobPage, error) {
	limit, after, err := store.ValidateList(prefix, opts)
	if err != nil {
		return store.BlobPage{}, err
	}
	root, err := b.init(ctx)
	if err != nil {
		return store.BlobPage{}, err
	}
	// Start in the deepest folder the prefix names whole: "a/b/c" starts in
	// folder a/b and looks there for names beginning with "c".
	base := prefix[:strings.LastIndexByte(prefix, '/')+1]
	dir := "."
	if base != "" {
		var segs []string
		for _, seg := range strings.Split(base[:len(base)-1], "/") {
			enc := escape(seg)
			if seg == "" || seg == "." || seg == ".." || len(enc) > MaxSegmentBytes {
				return store.BlobPage{}, nil // no key has such a segment
			}
			segs = append(segs, enc)
		}
		dir = path.Join(segs...)
	}
	w := walker{ctx: ctx, root: root, prefix: prefix, after: after, want: limit + 1}
	if err := w.walk(dir, base); err != nil {
		return store.BlobPage{}, fmt.Errorf("localfs: list %q: %w", prefix, err)
	}
	page := store.BlobPage{Blobs: w.found}
	if len(page.Blobs) > limit {
		page.Blobs = page.Blobs[:limit]
		page.Next = store.EncodeCursor(page.Blobs[limit-1].Key)
	}
	return page, nil
}

// walker collects up to want objects whose keys begin with prefix and sort
// after after, in byte order of their keys.
type walker struct {
	ctx    context.Context
	root   *os.Root
	prefix string
	after  string
	want   int
	found  []store.BlobInfo
}

type entry struct {
	// sortKey is the object's key, or for a folder the key prefix that every
	// key under it shares (ending in "/"). Because no key under folder "b"
	// sorts between "b/" and any sibling name, ordering a folder by its
	// sortKey and walking into it in place yields every key in byte order.
	sortKey string
	name    string
	dir     bool
}

// walk visits dir, whose keys all begin with base.
func (w *walker) walk(dir, base string) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	f, err := w.root.Open(dir)
	if gone(err) {
		return nil
	}
	if err != nil {
		return err
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil && !gone(err) {
		return err
	}
	var kids []entry
	for _, e := range ents {
		name := e.Name()
		switch {
		case e.IsDir():
			seg, ok := unescape(name)
			if !ok {
				continue // the temporary folder, or not ours
			}
			k := base + seg + "/"
			inPrefix := strings.HasPrefix(k, w.prefix) || strings.HasPrefix(w.prefix, k)
			beforeCursor := w.after != "" && k <= w.after && !strings.HasPrefix(w.after, k)
			if inPrefix && !beforeCursor {
				kids = append(kids, entry{sortKey: k, name: name, dir: true})
			}
		case e.Type().IsRegular() && strings.HasSuffix(name, objectSuffix):
			seg, ok := unescape(strings.TrimSuffix(name, objectSuffix))
			if !ok {
				continue
			}
			k := base + seg
			if strings.HasPrefix(k, w.prefix) && k > w.after {
				kids = append(kids, entry{sortKey: k, name: name})
			}
		}
	}
	slices.SortFunc(kids, func(a, b entry) int { return strings.Compare(a.sortKey, b.sortKey) })
	for _, k := range kids {
		if len(w.found) == w.want {
			return nil
		}
		name := path.Join(dir, k.name)
		if k.dir {
			if err := w.walk(name, k.sortKey); err != nil {
				return err
			}
			continue
		}
		f, h, _, err := openObject(w.root, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted since we read the folder
		}
		if err != nil {
			return err
		}
		f.Close()
		info := h.info(k.sortKey)
		info.ContentType = ""
		w.found = append(w.found, info)
	}
	return nil
}

// gone reports whether err says a folder is not there (any more): a
// concurrent delete may prune it as we read it, and a prefix may name a
// folder that does not exist or is a file someone else left.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// objectPath returns the folder and file name that hold key, relative to
// the root. Escaping leaves no "/" in a name and never yields "." or "..",
// and the object file name ends in "~", so the path names a file beneath the
// root; [os.Root] refuses anything else (a symbolic link out of it) as well.
func objectPath(key string) (dir, file string, err error) {
	if err := store.ValidateBlobKey(key); err != nil {
		return "", "", err
	}
	segs := strings.Split(key, "/")
	for i, seg := range segs {
		segs[i] = escape(seg)
		if len(segs[i]) > MaxSegmentBytes {
			return "", "", fmt.Errorf("%w: object key %q has a segment longer than a local file name allows (%d bytes escaped, at most %d)", store.ErrInvalid, key, len(segs[i]), MaxSegmentBytes)
		}
	}
	last := len(segs) - 1
	return path.Join(append([]string{"."}, segs[:last]...)...), segs[last] + objectSuffix, nil
}

// escape turns one key segment into a file name that means the same on every
// file system: see the package doc.
func escape(seg string) string {
	var sb strings.Builder
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
			sb.WriteByte(c)
		case 'A' <= c && c <= 'Z':
			sb.WriteByte('!')
			sb.WriteByte(c - 'A' + 'a')
		default:
			const digits = "0123456789abcdef"
			sb.WriteByte('%')
			sb.WriteByte(digits[c>>4])
			sb.WriteByte(digits[c&0xf])
		}
	}
	return sb.String()
}

// unescape reverses [escape]. It reports false for a name escape would not
// have written, such as the temporary folder or a file someone else put there.
func unescape(name string) (string, bool) {
	var out []byte
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
			out = append(out, c)
		case c == '!' && i+1 < len(name) && 'a' <= name[i+1] && name[i+1] <= 'z':
			out = append(out, name[i+1]-'a'+'A')
			i++
		case c == '%' && i+2 < len(name):
			v, err := hex.DecodeString(name[i+1 : i+3])
			if err != nil || strings.ToLower(name[i+1:i+3]) != name[i+1:i+3] {
				return "", false
			}
			out = append(out, v[0])
			i += 2
		default:
			return "", false
		}
	}
	s := string(out)
	switch {
	case s == "", s == ".", s == "..", strings.ContainsAny(s, "/\\\x00"), !utf8.ValidString(s), escape(s) != name:
		return "", false // not a segment of a valid key, or not how escape writes it
	}
	return s, true
}
