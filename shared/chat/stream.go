package chat

import (
	"context"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/provider"
)

// MaxDeltas bounds the pieces an answer is streamed in: a longer answer's
// pieces hold more of it each.
const MaxDeltas = 512

// reservedDeltas are the pieces a model's streamed text leaves for the end
// of the turn: the rest of the text held back, and an answer composed by
// code (the friendly error after a failure mid-stream).
const reservedDeltas = 2

// deltas streams a turn's answer to [Options.Deltas]: a model's text as it
// is written ([deltas.write]), or an answer composed whole ([deltas.whole]),
// in at most [MaxDeltas] pieces for the whole turn. Written text is sent
// delta by delta while half the pieces remain, then held until a piece is
// long enough, the length growing fourfold each time the pieces left halve,
// so that any answer fits in the bound and a short one streams as written.
type deltas struct {
	ctx     context.Context
	send    func(ctx context.Context, done, total float64, delta string)
	sent    int // pieces sent
	bytes   int // bytes sent
	pending strings.Builder
	// gap is due before the next text: a reply that called tools after
	// writing text, or a failure after some of the answer, ends a paragraph.
	gap bool
	// live is true when the pieces reach the client as they are sent.
	live bool
}

func (s *Service) deltas(ctx context.Context) *deltas {
	if s.opts.Deltas == nil {
		return nil
	}
	return &deltas{ctx: ctx, send: s.opts.Deltas, live: s.opts.Streaming == nil || s.opts.Streaming(ctx)}
}

// streamer is the generator's [provider.Streamer] when the turn streams its
// answer to a client as it is made.
func (t *turn) streamer(gen provider.Generator) (provider.Streamer, bool) {
	if t.live == nil || !t.live.live {
		return nil, false
	}
	return provider.StreamerOf(gen)
}

// write adds a piece of the model's text, sending what is held when it is
// long enough.
func (d *deltas) write(text string) {
	if text == "" {
		return
	}
	if d.gap && d.bytes+d.pending.Len() > 0 {
		d.pending.WriteString("\n\n")
	}
	d.gap = false
	d.pending.WriteString(text)
	if d.pending.Len() >= d.threshold() {
		d.flush()
	}
}

// threshold is how long held text must be to go out as a piece now.
func (d *deltas) threshold() int {
	budget := MaxDeltas - reservedDeltas
	left := budget - d.sent
	if left <= 0 {
		return int(^uint(0) >> 1)
	}
	n := 1
	for r := left; r < budget/2 && n < provider.MaxStreamBytes; r *= 2 {
		n = max(n*4, 16)
	}
	return n
}

// flush sends the text held, if any.
func (d *deltas) flush() {
	if d.pending.Len() == 0 {
		return
	}
	piece := d.pending.String()
	d.pending.Reset()
	d.bytes += len(piece)
	d.sent++
	d.send(d.ctx, float64(d.bytes), 0, piece)
}

// whole sends an answer composed whole in pieces of whole words (each with
// the spaces before it), within the pieces left, after any text written.
func (d *deltas) whole(answer string) {
	d.flush()
	if answer == "" {
		return
	}
	if d.bytes > 0 {
		answer = "\n\n" + answer
	}
	words := wordPieces(answer)
	left := max(MaxDeltas-d.sent, 1)
	per := (len(words) + left - 1) / left
	total, done := d.bytes+len(answer), d.bytes
	for i := 0; i < len(words); i += per {
		piece := strings.Join(words[i:min(i+per, len(words))], "")
		done += len(piece)
		d.sent++
		d.send(d.ctx, float64(done), float64(total), piece)
	}
	d.bytes = done
}

// wordPieces splits text into words, each with the white space before it,
// so that the pieces joined are text.
func wordPieces(text string) []string {
	var out []string
	start, inWord := 0, false
	for i, r := range text {
		space := r == ' ' || r == '\n' || r == '\t' || r == '\r'
		if space && inWord {
			out = append(out, text[start:i])
			start = i
		}
		inWord = !space
	}
	return append(out, text[start:])
}
